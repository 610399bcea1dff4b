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
  order TRACE NAME=ID...    per CPU, each stack_id record comes right after
                            a source record (event NAME, id ID) and names it
                            in src=; each source record is followed by one
  selfcontained TRACE       every (gen, stack_id) used without its
                            stack has it inline somewhere in TRACE
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
import re
import sys

# The FSMB reader and the TAP helpers are shared with the user-stack checks.
from fsmb import Bad, Check
import fsmb

F_INLINE, F_FALLBACK, F_TRUNCATED, F_RESET, F_NEW = 1, 2, 4, 8, 16
NONE_ID = 0xFFFFFFFF
REASON_NESTED = 7   # abi.h FSM_SID_REASON_NESTED

LINE = fsmb.LINE        # one trace line (tracefs "trace" or trace-cmd report)
# gen is the low 8 bits of the generation; arrays print as {0x1,0x2}
# (kernel) or as trace-cmd shows them
SID = re.compile(r"stack_id=(\d+) gen=(\d+) src=(\d+) "
                 r"flags=0x([0-9a-f]+) reason=(\d+) "
                 r"cookie=(\{[^}]*\}|\[[^\]]*\]|\S*) ips=(.*)$")


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
    hdr = re.compile(r"^stack_id (\d+) \[hits (\d+), depth (\d+)\]$")
    frame = re.compile(r"^  \[(\d+)\] (\S+)")
    for line in open(path):
        line = line.rstrip("\n")
        m = hdr.match(line)
        if m:
            cur = int(m.group(1))
            stacks[cur] = (int(m.group(3)), [])
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


def sid_fields(rest):
    m = SID.match(rest)
    if not m:
        raise Bad("cannot parse stack_id record %r" % rest)
    # the kernel prints {0x1,0x2}, trace-cmd report "1 2" (decimal)
    ips = array_items(m.group(7))
    cookie = array_items(m.group(6))
    if len(cookie) > 1:
        raise Bad("more than one cookie in %r" % rest)
    flags = int(m.group(4), 16)
    if int(m.group(5)) != flags >> 5:
        raise Bad("reason is not flags >> 5 in %r" % rest)
    return dict(id=int(m.group(1)), gen=int(m.group(2)),
                src=int(m.group(3)), flags=flags & 0x1F,
                reason=int(m.group(5)),
                cookie=cookie[0] if cookie else 0, nips=len(ips))


def trace_counts(path):
    c = dict(records=0, inline=0, fallback=0, truncated=0, reset=0,
             plain=0, bad=0, nested=0)
    for cpu, ev, rest in records(path):
        if ev != "stack_id":
            continue
        f = sid_fields(rest)
        if f["flags"] & F_RESET:
            c["reset"] += 1
            continue
        if f["reason"] == REASON_NESTED:
            # no buffer for the stack: FALLBACK, id NONE, no ips; not a
            # request (stat nested_dropped, not records/fallbacks)
            c["nested"] += 1
            if f["flags"] != F_FALLBACK or f["id"] != NONE_ID or f["nips"]:
                c["bad"] += 1
            continue
        c["records"] += 1
        if f["flags"] & F_INLINE:
            c["inline"] += 1
        if f["flags"] & F_FALLBACK:
            c["fallback"] += 1
            if f["id"] != NONE_ID or not f["reason"]:
                c["bad"] += 1
        if f["flags"] & F_TRUNCATED:
            c["truncated"] += 1
        carries = f["flags"] & (F_INLINE | F_FALLBACK)
        if not carries:
            c["plain"] += 1
        if bool(carries) != bool(f["nips"]):
            c["bad"] += 1
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


def cmd_symcheck(c, text, binf, ksyms="/proc/kallsyms"):
    try:
        stacks = parse_stack_map(text)
        hdr, bstacks = read_bin(binf)
    except Bad as e:
        return c.ok("stack_map symbols = kallsyms", False, str(e))
    addrs, names = kallsyms(ksyms)
    bad, checked = [], 0
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
            if i < 0 or fr.split("+")[0] not in names[i]:
                bad.append("0x%x: kallsyms %s, stack_map %s" %
                           (ip, "/".join(sorted(names[i])) if i >= 0
                            else "-", fr))
            checked += 1
    c.diag("%d stacks, %d frames checked" % (len(bstacks), checked))
    c.ok("stack_map addresses resolve in kallsyms to its symbols",
         not bad and checked > 0, "; ".join(bad[:3]) or "nothing checked")


def cmd_order(c, path, *pairs):
    src = {}
    for p in pairs:
        name, _, num = p.partition("=")
        src[name] = int(num)
    percpu = {}
    try:
        for cpu, ev, rest in records(path):
            if ev == "stack_id":
                f = sid_fields(rest)
                kind = "reset" if f["flags"] & F_RESET else "sid"
                percpu.setdefault(cpu, []).append((kind, f["src"]))
            elif ev in src:
                percpu.setdefault(cpu, []).append(("src", src[ev]))
            else:
                percpu.setdefault(cpu, []).append(("other", ev))
    except Bad as e:
        return c.ok("stack_id records follow their source events", False,
                    str(e))
    good, bad, orphans, msgs = 0, 0, 0, []
    for cpu, seq in percpu.items():
        sids = [i for i, r in enumerate(seq) if r[0] == "sid"]
        if not sids:
            continue
        first, last = sids[0], sids[-1]
        for i in sids:
            if i == 0:
                continue    # older records of this CPU were overwritten
            prev = seq[i - 1]
            if prev[0] == "src" and prev[1] == seq[i][1]:
                good += 1
            else:
                bad += 1
                msgs.append("cpu %d: stack_id src=%d after %s" %
                            (cpu, seq[i][1], prev))
        # Sources recorded while ours was enabled (between our first and
        # last record on this CPU) must each be followed by a stack_id.
        for i in range(max(first - 1, 0), last):
            if seq[i][0] == "src" and seq[i + 1][0] != "sid":
                orphans += 1
                msgs.append("cpu %d: source %s then %s" %
                            (cpu, seq[i], seq[i + 1]))
    c.diag("%d source/stack_id pairs" % good)
    c.ok("each stack_id record right after its source event (same CPU)",
         not bad and good > 0, "; ".join(msgs[:3]) or "no pair")
    c.ok("each source event followed by its stack_id record", not orphans,
         "; ".join(msgs[:3]))


def cmd_selfcontained(c, path):
    inline, plain = set(), []
    try:
        for cpu, ev, rest in records(path):
            if ev != "stack_id":
                continue
            f = sid_fields(rest)
            if f["flags"] & (F_RESET | F_FALLBACK):
                continue
            key = (f["gen"], f["id"])
            if f["flags"] & F_INLINE:
                inline.add(key)
            else:
                plain.append(key)
    except Bad as e:
        return c.ok("trace self-contained", False, str(e))
    missing = sorted(set(k for k in plain if k not in inline))
    c.ok("trace self-contained: every id used has its stack inline",
         not missing and (plain or inline),
         "no inline stack for (gen, id) %s" % missing[:3])


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
        c.eq("one inline emit per id in one recording", n("inline_emits"),
             ent)
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
    c.ok("at least %s stack_id records" % minimum,
         tc["records"] >= int(minimum), "%d" % tc["records"])
    c.eq("stack_id records: flags agree with ips", tc["bad"], 0)


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
            selfcontained=cmd_selfcontained, consistent=cmd_consistent,
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
