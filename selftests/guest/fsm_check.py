#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
"""fsm_check.py - checks of saved ftrace_stackmap outputs (selftests/guest).

Python starts slowly in the TCG guest (the host file system over 9p): the
shell tests save files while they run and call this once at the end with
every check on stdin, one per line:

    LABEL CHECK ARG...

Each check prints "ok - LABEL: what" or "not ok - LABEL: what # why" lines
(unnumbered; lib.sh numbers them) and "# ..." comments. Checks:

  bin BIN                   FSMB v4 structure; nr_stacks = entries that
                            follow; ref_symbol_addr = kallsyms "schedule"
  symcheck MAP BIN [KSYMS]  each address of BIN resolves in /proc/kallsyms
                            (or KSYMS, a copy saved while the module was
                            loaded) to the symbol MAP (stack_map) prints
  order TRACE NAME[=ID]...  per CPU, each id record (stack_id, stack_id_user,
                            stack_fallback) comes right after a source
                            record (event NAME); each source record is
                            followed by one; stack_def follows an id record
  selfcontained TRACE       every stack_id used has its stack_def in TRACE
  resetorder TRACE          no record of a generation precedes the
                            stack_reset record that opens it
  tracestack TRACE MAP BIN MODE [GEN]
                            the " => " lines under each stack_id record of
                            a tracefs trace: MODE sym (names), offset
                            (+off/size), addr (" <address>") or raw (bare
                            addresses); frames equal the map's (MAP, BIN)
                            for ids of generation GEN (the map's), a
                            "reset since" marker for other generations
  ustacklines TRACE MAP STAT
                            the " => path+0xoffset" lines under each
                            user_stack record equal the map's frames of its
                            ustack_id (STAT: user_generation)
  consistent STAT BIN MAP TRACE [one] [full] [nofull]
                            stat vs binary export vs text vs trace (see
                            cmd_consistent); "one": a single recording since
                            the map was empty; "full": the map overflowed
  tracefmt TRACE MIN        TRACE (trace or trace-cmd report) holds >= MIN
                            stack_id records, all parsed, flags and ips agree
  kaddr BIN shown|hidden [REF]
                            kernel addresses shown (flag HIDDEN clear, every
                            ip and ref_symbol_addr non-zero) or hidden (flag
                            set, all of them 0; with REF, a read of the same
                            map that showed them: same ids, hits and depths)
  dump BIN                  print the binary file (for humans)

TRACE is the text of a tracefs "trace" file or of "trace-cmd report".
"""
import bisect
import os
import re
import sys

# The FSMB reader and the TAP helpers are shared with the user-stack checks.
from fsmb import Bad, Check
import fsmb

# Record format 2 (abi.h): one id record per source event (stack_id,
# stack_id_user or stack_fallback), stack_def after a first use, stack_reset.
F_TRUNCATED, F_NEW, F_REDEF = 4, 16, 32
NONE_ID = 0xFFFFFFFF
REASON_NESTED = 7   # abi.h FSM_SID_REASON_NESTED
INDEX_BITS, GEN_MASK = 20, 0xFFF
ID_EVENTS = ("stack_id", "stack_id_user", "stack_fallback")
OUR_EVENTS = ID_EVENTS + ("stack_def", "stack_reset")

LINE = fsmb.LINE        # one trace line (tracefs "trace" or trace-cmd report)
# arrays print as {0x1,0x2} (kernel) or as trace-cmd shows them
ARR = r"(\{[^}]*\}|\[[^\]]*\]|\S*)"
RX = {
    "stack_id": re.compile(r"stack_id=(\d+) gen=(\d+) index=(\d+)$"),
    "stack_id_user": re.compile(r"stack_id=(\d+) gen=(\d+) index=(\d+) "
                                r"cookie=0x([0-9a-f]+)$"),
    "stack_def": re.compile(r"stack_id=(\d+) gen=(\d+) index=(\d+) "
                            r"flags=0x([0-9a-f]+) ips=(.*)$"),
    "stack_fallback": re.compile(r"stack_id=(\d+) flags=0x([0-9a-f]+) "
                                 r"reason=(\d+) cookie=" + ARR + r" ips=(.*)$"),
    "stack_reset": re.compile(r"stack_id=(\d+) generation=(\d+) gen=(\d+)$"),
}


def array_items(text):
    """Elements of a printed array: "{0x1,0x2}", "[1 2]" or "1 2"."""
    arr = text.strip().strip("{}[]")
    return [int(x, 0) for x in re.split(r"[,\s]+", arr) if x]


def read_bin(path):
    """The kernel part of stack_map_bin: (header dict, [(id, hits, ips)])."""
    hdr, kstacks, _, _ = fsmb.read_bin(path)
    return hdr, kstacks


_ksyms = {}


def kallsyms(path="/proc/kallsyms"):
    """Text symbols of PATH: (sorted addresses, [set of names per address])."""
    if path not in _ksyms:
        syms = []
        for line in open(path):
            parts = line.split()
            if len(parts) < 3 or parts[1] not in "tTwW":
                continue
            a = int(parts[0], 16)
            if a:
                syms.append((a, parts[2]))
        syms.sort()
        # several names can share an address (aliases): keep them all
        addrs, names = [], []
        for a, n in syms:
            if addrs and addrs[-1] == a:
                names[-1].add(n)
            else:
                addrs.append(a)
                names.append({n})
        if not addrs:
            raise Bad("%s: no symbol with an address (read as root?)" % path)
        _ksyms[path] = (addrs, names)
    return _ksyms[path]


def parse_stack_map(path):
    stacks, cur = {}, None
    hdr = re.compile(r"^stack_id (\d+) \[gen (\d+), index (\d+), "
                     r"hits (\d+), depth (\d+)\]$")
    frame = re.compile(r"^  \[(\d+)\] (\S+)")
    for line in open(path):
        line = line.rstrip("\n")
        m = hdr.match(line)
        if m:
            # keyed by index, as stack_map_bin and the records' index=
            sid, gen, cur = int(m.group(1)), int(m.group(2)), int(m.group(3))
            if sid != (gen & 4095) << 20 | cur:
                raise Bad("stack_map: id %d is not gen %d, index %d"
                          % (sid, gen, cur))
            stacks[cur] = (int(m.group(5)), [])
            continue
        m = frame.match(line)
        if m and cur is not None:
            stacks[cur][1].append(m.group(2))
            continue
        if line.startswith(("ustack_id ", "file ")):
            break       # user stacks and the file table follow the kernel's
        raise Bad("stack_map: unexpected line %r" % line)
    return stacks


def records(path):
    """(cpu, event, rest) of each record line, in file order."""
    out = []
    for line in open(path, errors="replace"):
        if line.startswith("#"):
            continue
        m = LINE.match(line)
        if m:
            out.append((int(m.group("cpu")),
                        m.group("event").split(":")[-1], m.group("rest")))
    return out


def sid_fields(ev, rest):
    """The fields of one of our records (ev: its event name)."""
    m = RX[ev].match(rest)
    if not m:
        raise Bad("cannot parse %s record %r" % (ev, rest))
    g = m.groups()
    f = dict(ev=ev, id=int(g[0]), flags=0, reason=0, cookie=0, nips=0)
    if ev == "stack_reset":
        f["generation"] = int(g[1])
        if int(g[2]) != int(g[1]) & GEN_MASK:
            raise Bad("gen is not generation & 0xfff in %r" % rest)
        return f
    if ev == "stack_fallback":
        f["flags"], f["reason"] = int(g[1], 16), int(g[2])
        cookie = array_items(g[3])
        if len(cookie) > 1:
            raise Bad("more than one cookie in %r" % rest)
        f["cookie"] = cookie[0] if cookie else 0
        f["nips"] = len(array_items(g[4]))
        return f
    if (int(g[1]) != f["id"] >> INDEX_BITS or
            int(g[2]) != f["id"] & ((1 << INDEX_BITS) - 1)):
        raise Bad("gen/index do not match stack_id in %r" % rest)
    f["gen"], f["index"] = int(g[1]), int(g[2])
    if ev == "stack_id_user":
        f["cookie"] = int(g[3], 16)
    elif ev == "stack_def":
        f["flags"] = int(g[3], 16)
        f["nips"] = len(array_items(g[4]))
    return f


def our_records(path):
    """(cpu, fields) of each of our records, in file order."""
    for cpu, ev, rest in records(path):
        if ev in OUR_EVENTS:
            yield cpu, sid_fields(ev, rest)


def trace_counts(path):
    """records: id records that are requests (stack_id, stack_id_user and
    stack_fallback but reason nested); inline: stack_def records."""
    c = dict(records=0, inline=0, fallback=0, truncated=0, reset=0,
             plain=0, bad=0, nested=0, cookies=0)
    for cpu, f in our_records(path):
        ev = f["ev"]
        if ev == "stack_reset":
            c["reset"] += 1
            if f["id"] != NONE_ID:
                c["bad"] += 1
            continue
        if ev == "stack_def":
            c["inline"] += 1
            if f["flags"] & F_TRUNCATED:
                c["truncated"] += 1
            if not f["nips"] or f["flags"] & ~(F_TRUNCATED | F_NEW | F_REDEF):
                c["bad"] += 1
            continue
        if f["cookie"]:
            c["cookies"] += 1
        if ev == "stack_fallback":
            if f["id"] != NONE_ID or f["flags"] & ~F_TRUNCATED:
                c["bad"] += 1
            if f["reason"] == REASON_NESTED:
                # no buffer for the stack: no ips; not a request (stat
                # nested_dropped, not records/fallbacks)
                c["nested"] += 1
                if f["nips"]:
                    c["bad"] += 1
                continue
            c["records"] += 1
            c["fallback"] += 1
            if not f["reason"] or not f["nips"]:
                c["bad"] += 1
            if f["flags"] & F_TRUNCATED:
                c["truncated"] += 1
            continue
        c["records"] += 1
        c["plain"] += 1
    return c


def read_stat(path):
    st = {}
    for line in open(path):
        k, _, v = line.rstrip("\n").partition(": ")
        st[k] = v
    return st


# ---- checks ----

def cmd_bin(c, path):
    try:
        hdr, stacks = read_bin(path)
    except Bad as e:
        return c.ok("stack_map_bin well formed", False, str(e))
    c.ok("stack_map_bin well formed (nr_stacks entries, user stacks, "
         "file table, nothing after it)", True)
    c.eq("bin version", hdr["version"], 4)
    ids = [s[0] for s in stacks]
    c.ok("bin ids strictly increasing", ids == sorted(set(ids)))
    addrs, names = kallsyms()
    i = bisect.bisect_left(addrs, hdr["ref_symbol_addr"])
    c.ok("bin ref_symbol_addr is schedule in /proc/kallsyms",
         i < len(addrs) and addrs[i] == hdr["ref_symbol_addr"] and
         "schedule" in names[i], "0x%x" % hdr["ref_symbol_addr"])


def nameless_ranges(sysmod="/sys/module"):
    """[(start, end)] of module memory that holds code the kernel's symbol
    lookup names nothing in: each module's PLT veneers and ftrace
    trampoline (.plt, .text.ftrace_trampoline: arm64), from .plt up to
    .text. An interrupted PC there (an IRQ while a module calls the kernel
    through a veneer, frequent on arm64 6.12 whose modules sit beyond
    branch range) prints as a bare address in %pS and in the kernel's own
    stacktrace alike."""
    out = []
    try:
        mods = os.listdir(sysmod)
    except OSError:
        return out
    for m in mods:
        sec = {}
        for name in (".plt", ".text.ftrace_trampoline", ".text"):
            try:
                with open(os.path.join(sysmod, m, "sections", name)) as f:
                    sec[name] = int(f.read().strip(), 16)
            except (OSError, ValueError):
                pass
        start = min((sec[n] for n in (".plt", ".text.ftrace_trampoline")
                     if n in sec), default=None)
        if start is not None and ".text" in sec and sec[".text"] > start:
            out.append((start, sec[".text"]))
    return out


def cmd_symcheck(c, text, binf, ksyms="/proc/kallsyms"):
    try:
        stacks = parse_stack_map(text)
        hdr, bstacks = read_bin(binf)
    except Bad as e:
        return c.ok("stack_map symbols = kallsyms", False, str(e))
    addrs, names = kallsyms(ksyms)
    nameless = nameless_ranges()
    bad, checked, bare = [], 0, 0
    for sid, hits, ips in bstacks:
        if sid not in stacks:
            bad.append("id %d missing from stack_map" % sid)
            continue
        depth, frames = stacks[sid]
        if depth != len(ips) or len(frames) != len(ips):
            bad.append("id %d depth %d/%d vs %d" %
                       (sid, depth, len(frames), len(ips)))
            continue
        for ip, fr in zip(ips, frames):
            i = bisect.bisect_right(addrs, ip) - 1
            if fr == "0x%x" % ip and (
                    any(a <= ip < b for a, b in nameless) or
                    (i >= 0 and any(n.startswith("$") for n in names[i]))):
                # the kernel names nothing there either: a module's PLT
                # or ftrace trampoline, or (arm64 6.12, which lists a
                # module's mapping symbols $x, $d) past the end of the
                # function at that address; %pS prints the bare address
                bare += 1
            elif i < 0 or fr.split("+")[0] not in names[i]:
                bad.append("0x%x: kallsyms %s, stack_map %s" %
                           (ip, "/".join(sorted(names[i])) if i >= 0
                            else "-", fr))
            checked += 1
    c.diag("%d stacks, %d frames checked (%d in a module's PLT or ftrace "
           "trampoline: bare addresses)" % (len(bstacks), checked, bare))
    c.ok("stack_map addresses resolve in kallsyms to its symbols",
         not bad and checked > 0, "; ".join(bad[:3]) or "nothing checked")


def cmd_order(c, path, *pairs):
    """NAME[=ID]...: the source events (the id is not in the records any
    more: the source of an id record is the record just before it)."""
    src = set(p.partition("=")[0] for p in pairs)
    percpu = {}
    try:
        for cpu, ev, rest in records(path):
            if ev in ID_EVENTS:
                sid_fields(ev, rest)
                kind = "id"
            elif ev in OUR_EVENTS:
                kind = ev
            elif ev in src:
                kind = "src"
            else:
                kind = "other"
            percpu.setdefault(cpu, []).append((kind, ev))
    except Bad as e:
        return c.ok("id records follow their source events", False, str(e))
    good, bad, orphans, defs, msgs = 0, 0, 0, 0, []
    for cpu, seq in percpu.items():
        ids = [i for i, r in enumerate(seq) if r[0] == "id"]
        if not ids:
            continue
        first, last = ids[0], ids[-1]
        for i in ids:
            if i == 0:
                continue    # older records of this CPU were overwritten
            prev = seq[i - 1]
            if prev[0] == "src":
                good += 1
            else:
                bad += 1
                msgs.append("cpu %d: %s after %s" % (cpu, seq[i][1], prev))
        # an id record's own stack_def, then any the module writes again
        # after it (REDEF, redefine_pct: the sweep's, of other ids)
        for i, r in enumerate(seq):
            if r[0] == "stack_def" and i and seq[i - 1][0] not in ("id", "stack_def"):
                defs += 1
                msgs.append("cpu %d: stack_def after %s" % (cpu, seq[i - 1]))
        # Sources recorded while ours was enabled (between our first and
        # last record on this CPU) must each be followed by an id record.
        for i in range(max(first - 1, 0), last):
            if seq[i][0] == "src" and seq[i + 1][0] != "id":
                orphans += 1
                msgs.append("cpu %d: source %s then %s" %
                            (cpu, seq[i], seq[i + 1]))
    c.diag("%d source/id record pairs" % good)
    c.ok("each id record right after a source event (same CPU)",
         not bad and good > 0, "; ".join(msgs[:3]) or "no pair")
    c.ok("each source event followed by its id record", not orphans,
         "; ".join(msgs[:3]))
    c.ok("each stack_def right after an id record (or its stack_defs)", not defs,
         "; ".join(msgs[:3]))


def cmd_selfcontained(c, path):
    """Every id of a stack_id(_user) record has a stack_def (same 32-bit id,
    generation bits included) somewhere in TRACE."""
    inline, plain = set(), []
    try:
        for cpu, f in our_records(path):
            if f["ev"] == "stack_def":
                inline.add(f["id"])
            elif f["ev"] in ("stack_id", "stack_id_user"):
                plain.append(f["id"])
    except Bad as e:
        return c.ok("trace self-contained", False, str(e))
    missing = sorted(set(k for k in plain if k not in inline))
    c.ok("trace self-contained: every id used has its stack_def",
         not missing and (plain or inline),
         "no stack_def for id %s" % missing[:3])


SID1 = re.compile(r"stack_id=(\d+) gen=(\d+) src=(\d+) flags=0x([0-9a-f]+) ")


def cmd_resetorder(c, path):
    """The trace file is in timestamp order: no record of a generation may
    come before the reset record that opens it. Also reads record format 1
    (RESET flag 0x8 in stack_id, 8 generation bits in gen=), so that the
    check shows the old order on the old module."""
    seq, resets = [], {}
    try:
        for cpu, ev, rest in records(path):
            if ev in ("stack_id", "stack_id_user") and SID1.match(rest):
                m = SID1.match(rest)
                if int(m.group(4), 16) & 8:
                    resets.setdefault(int(m.group(1)) & 0xFF, len(seq))
                    seq.append(("reset", int(m.group(1)) & 0xFF))
                else:
                    seq.append(("rec", int(m.group(2))))
                continue
            if ev not in OUR_EVENTS:
                continue
            f = sid_fields(ev, rest)
            if ev == "stack_reset":
                resets.setdefault(f["generation"] & GEN_MASK, len(seq))
                seq.append(("reset", f["generation"] & GEN_MASK))
            elif "gen" in f:
                seq.append(("rec", f["gen"]))
    except Bad as e:
        return c.ok("reset order", False, str(e))
    early = [(i, g) for i, (k, g) in enumerate(seq)
             if k == "rec" and g in resets and i < resets[g]]
    c.diag("%d resets, %d records with a generation" %
           (len(resets), sum(1 for k, _ in seq if k == "rec")))
    c.ok("resets in the trace", len(resets) > 0)
    c.ok("records of the new generations after them",
         any(k == "rec" and g in resets and i > resets[g]
             for i, (k, g) in enumerate(seq)))
    c.ok("no record of a generation before its reset record", not early,
         "%d early, first: generation bits %s at record %s" %
         (len(early), early[0][1] if early else "-",
          early[0][0] if early else "-"))


def cmd_consistent(c, statf, binf, mapf, tracef, *opts):
    st = read_stat(statf)
    try:
        hdr, bstacks = read_bin(binf)
        stacks = parse_stack_map(mapf)
        tc = trace_counts(tracef)
    except Bad as e:
        return c.ok("consistency", False, str(e))
    n = lambda k: int(st[k])   # noqa: E731
    ent = n("entries")
    c.ok("stat entries > 0", ent > 0, "0")
    c.eq("stat entries = bin nr_stacks", hdr["nr_stacks"], ent)
    c.eq("stat entries = stack_map stacks", len(stacks), ent)
    c.eq("bin generation = stat generation", hdr["generation"],
         n("generation"))
    c.eq("bin bits = stat bits", hdr["bits"], n("bits"))
    c.eq("requests = hits + inserts + drops", n("requests"),
         n("hits") + n("inserts") + n("drops"))
    drops = sum(int(v) for k, v in st.items() if k.startswith("drops_"))
    c.eq("drops = sum of drops per reason", drops, n("drops"))
    c.eq("records + records_lost = requests", n("records") +
         n("records_lost"), n("requests"))
    c.eq("trace records well formed (flags agree with ips)", tc["bad"], 0)
    if n("records_lost") == 0:
        c.eq("stat records = stack_id records in the trace", tc["records"],
             n("records"))
        c.eq("stat inline_emits = inline records in the trace",
             tc["inline"], n("inline_emits"))
        c.eq("stat fallbacks = fallback records in the trace",
             tc["fallback"], n("fallbacks"))
        c.eq("fallbacks = drops (each drop has a full-stack record)",
             n("fallbacks"), n("drops"))
        c.eq("stat nested_dropped = nested records in the trace",
             tc["nested"], n("nested_dropped"))
    else:
        c.diag("records_lost=%s: trace counts not compared" %
               st["records_lost"])
    if "one" in opts:
        # a definition written again (REDEF: the CPU's buffer may have
        # dropped the first) is an inline emit too, counted apart
        c.eq("one inline emit per id in one recording (and re-definitions)",
             n("inline_emits") - int(st.get("redefinitions", 0)), ent)
        c.eq("inserts = entries (one generation)", n("inserts"), ent)
    if "full" in opts:
        c.ok("map full: drops counted", n("drops") > 0, "drops=0")
        c.ok("map full: fallback records in the trace", tc["fallback"] > 0,
             "none")
        c.ok("map full: entries <= capacity", ent <= n("capacity"))
    if "nofull" in opts:
        c.eq("no drop", n("drops"), 0)
        c.eq("no fallback", n("fallbacks"), 0)
    # An entry's hits count every request that returned its id, the one
    # that created it included.
    hits = sum(h for _, h, _ in bstacks)
    if "one" in opts:
        c.eq("sum of bin hits = hits + inserts", hits,
             n("hits") + n("inserts"))
    else:
        c.ok("sum of bin hits <= hits + inserts",
             hits <= n("hits") + n("inserts"),
             "%d > %d" % (hits, n("hits") + n("inserts")))


def cmd_tracefmt(c, path, minimum):
    try:
        tc = trace_counts(path)
    except Bad as e:
        return c.ok("stack_id records parse", False, str(e))
    c.ok("at least %s id records" % minimum,
         tc["records"] >= int(minimum), "%d" % tc["records"])
    c.eq("records well formed (flags, reasons and ips agree)", tc["bad"], 0)


RAWLINE = re.compile(r"^\d+ \d+ \d+ (\d+)$")


def trace_stacks(path, raw):
    """[(id, [text after " => "...])] of the stack_id(_user) records of a
    tracefs trace file (raw: the lines of options/raw)."""
    out, cur = [], None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith(" => "):
            if cur is not None:
                cur[1].append(line[4:])
            continue
        cur = None
        if raw:
            m = RAWLINE.match(line)
            if m:
                cur = (int(m.group(1)), [])
        else:
            m = LINE.match(line)
            if m and m.group("event") in ("stack_id", "stack_id_user"):
                cur = (sid_fields(m.group("event"), m.group("rest"))["id"],
                       [])
        if cur is not None:
            out.append(cur)
    return out


def cmd_tracestack(c, path, mapf, binf, mode, stale="nostale"):
    """stale: "stale" if records of an older generation must be there."""
    try:
        stacks = parse_stack_map(mapf)
        hdr, bstacks = read_bin(binf)
        recs = trace_stacks(path, mode == "raw")
    except Bad as e:
        return c.ok("trace stacks", False, str(e))
    bips = dict((i, ips) for i, _, ips in bstacks)
    gen = hdr["generation"] & GEN_MASK
    shown, markers, bad = 0, 0, []
    for sid, lines in recs:
        g, idx = sid >> INDEX_BITS, sid & ((1 << INDEX_BITS) - 1)
        if g != gen:
            if len(lines) == 1 and "reset since" in lines[0]:
                markers += 1
            else:
                bad.append("id %d (generation bits %d): %r" %
                           (sid, g, lines[:2]))
            continue
        if idx not in stacks or idx not in bips:
            bad.append("index %d not in the map" % idx)
            continue
        frames, ips = stacks[idx][1], bips[idx]
        if mode == "raw":
            want = ["%016x" % ip for ip in ips]
        elif mode == "offset":
            want = frames
        elif mode == "addr":
            want = ["%s <%016x>" % (f.split("+")[0], ip)
                    for f, ip in zip(frames, ips)]
        else:
            want = [f.split("+")[0] for f in frames]
        # %ps/%pS add " [module]" to module symbols; stack_map shows it
        # after a blank too (the MAP parser keeps the first word only)
        got = [re.sub(r" \[\S+\]( |$)", r"\1", x) for x in lines]
        if got != want:
            bad.append("id %d: %r, map %r" % (sid, got[:3], want[:3]))
        else:
            shown += 1
    c.diag("%d records: %d stacks shown, %d reset markers" %
           (len(recs), shown, markers))
    c.ok("trace (%s): stack lines under stack_id records" % mode, shown > 0,
         "none")
    c.ok("trace (%s): every stack equals the map's, or a reset marker" % mode,
         not bad, "%d bad: %s" % (len(bad), "; ".join(bad[:2])))
    if stale == "stale":
        c.ok("trace (%s): records of the old generation have the marker" %
             mode, markers > 0, "none")


def parse_user_map(path):
    """{ustack_id: [frame text]} of the user part of a stack_map file."""
    out, cur = {}, None
    hdr = re.compile(r"^ustack_id (\d+) \[")
    frame = re.compile(r"^  \[\d+\] (.*)$")
    for line in open(path):
        line = line.rstrip("\n")
        m = hdr.match(line)
        if m:
            cur = out.setdefault(int(m.group(1)), [])
            continue
        m = frame.match(line)
        if m and cur is not None:
            cur.append(m.group(1))
            continue
        cur = None
    return out


def cmd_ustacklines(c, path, mapf, statf):
    """The " => " lines under each user_stack record of a tracefs trace:
    the map's frames of its ustack_id (ids of the map's generation), a
    marker for another generation, nothing for an empty stack."""
    umap = parse_user_map(mapf)
    ugen = int(read_stat(statf)["user_generation"])
    recs, cur = [], None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith(" => "):
            if cur is not None:
                cur[1].append(line[4:])
            continue
        cur = None
        m = LINE.match(line)
        if m and m.group("event") == "user_stack":
            f = dict(re.findall(r"(\w+)=(\{[^}]*\}|\S+)", m.group("rest")))
            cur = (f, [])
            recs.append(cur)
    shown, marked, empty, bad = 0, 0, 0, []
    for f, lines in recs:
        uid, gen, nr = int(f["ustack_id"]), int(f["gen"]), int(f["nr"])
        inline = nr > 0
        if not inline and uid == NONE_ID:
            empty += 1
            if lines:
                bad.append("empty stack with lines %r" % lines[:2])
            continue
        if uid == NONE_ID:     # fallback: frames inline, no id
            ok = len(lines) == nr
        elif gen == ugen:
            ok = lines == umap.get(uid)
        elif inline:
            ok = len(lines) == nr
        else:
            ok = len(lines) == 1 and "reset since" in lines[0]
            marked += ok
        if ok:
            shown += 1
        else:
            bad.append("ustack_id %d gen %d: %r, map %r" %
                       (uid, gen, lines[:2], umap.get(uid, [])[:2]))
    c.diag("%d user_stack records: %d with their frames, %d markers, "
           "%d empty" % (len(recs), shown - marked, marked, empty))
    c.ok("trace: user frames under user_stack records", shown - marked > 0,
         "none")
    c.ok("trace: user frames equal the map's (path+0xoffset)", not bad,
         "%d bad: %s" % (len(bad), "; ".join(bad[:2])))


def cmd_kaddr(c, path, mode, ref=None):
    hdr, stacks = read_bin(path)
    ips = [ip for _, _, s in stacks for ip in s]
    c.ok("bin holds stacks", len(stacks) > 0)
    hidden = hdr["hidden"]
    if mode == "shown":
        c.ok("flag HIDDEN clear", not hidden, "flags 0x%x" % hdr["flags"])
        c.ok("ref_symbol_addr and every ip non-zero",
             hdr["ref_symbol_addr"] != 0 and all(ips),
             "ref 0x%x, %d zero ips" % (hdr["ref_symbol_addr"],
                                        ips.count(0)))
        return
    c.ok("flag HIDDEN set", hidden, "flags 0x%x" % hdr["flags"])
    c.eq("ref_symbol_addr hidden", hdr["ref_symbol_addr"], 0)
    c.ok("every ip hidden (0)", not any(ips),
         "%d of %d non-zero" % (len(ips) - ips.count(0), len(ips)))
    if ref:
        _, rstacks = read_bin(ref)
        c.eq("same ids, hits and depths as the read that shows addresses",
             [(i, h, len(s)) for i, h, s in stacks],
             [(i, h, len(s)) for i, h, s in rstacks])


def cmd_dump(c, path):
    hdr, stacks = read_bin(path)
    for k, v in hdr.items():
        print("%s=%s" % (k, v))
    for sid, hits, ips in stacks:
        print("stack_id %d hits %d: %s" %
              (sid, hits, " ".join("%x" % i for i in ips)))


CMDS = dict(bin=cmd_bin, symcheck=cmd_symcheck, order=cmd_order,
            selfcontained=cmd_selfcontained, resetorder=cmd_resetorder,
            tracestack=cmd_tracestack, ustacklines=cmd_ustacklines, consistent=cmd_consistent,
            tracefmt=cmd_tracefmt, kaddr=cmd_kaddr, dump=cmd_dump)


def main():
    failed = 0
    lines = sys.stdin if len(sys.argv) < 2 else [" ".join(sys.argv[1:])]
    for line in lines:
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if len(words) < 2 or words[1] not in CMDS:
            print("not ok - bad check line %r" % line.strip())
            failed += 1
            continue
        c = Check(words[0])
        try:
            CMDS[words[1]](c, *words[2:])
        except Exception as e:  # a broken check fails, the others still run
            c.ok(words[1], False, "%s: %s" % (type(e).__name__, e))
        failed += c.failed
        sys.stdout.flush()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
