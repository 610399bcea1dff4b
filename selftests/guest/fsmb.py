#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
"""fsmb.py - user stacks in ftrace_stackmap outputs (selftests/guest).

A reader of stack_map_bin version 4 (include/ftrace_stackmap/abi.h), of
the user-stack part of stack_map, and of user_stack records in a trace,
plus the checks of ustack_dedup.sh. Prints "ok - LABEL: what" or
"not ok - LABEL: what # why" lines (lib.sh numbers them) and "# ..." lines.

  fsmb.py dump BIN
  fsmb.py binmap LABEL BIN MAP STAT      bin v4 parses and agrees with the
                                        text and the counters
  fsmb.py dedup LABEL TRACE PROG PID [PID2] [reinline]
      in TRACE, the chain of PROG run by PID has one ustack id for its
      syscall chain, frames inline only on its first record (and frames
      resolve, via the file_map records and addr2line, to that chain);
      PID2 (another process) has another id; "reinline": TRACE is a new
      recording of ids known before: the first record of each id is inline
  fsmb.py mapchain LABEL MAP PROG ID    stack_map's ustack ID resolves to
                                        the chain (addr2line)
  fsmb.py idof LABEL TRACE PID          prints "gen id" of PID's syscall chain
  fsmb.py headers LABEL                 the stack_map header parser reads
                                        every flag word (ia32, aarch32,
                                        truncated, unreliable)
"""
import re
import struct
import subprocess
import sys

FSMB_MAGIC = 0x464D5342
HDR3 = struct.Struct("<8IQ64s")
HDR4_TAIL = struct.Struct("<6I")
ENT = struct.Struct("<4I")
UENT = struct.Struct("<3IHBBQ")
FILE = struct.Struct("<QIHBB")
OFF_MASK = (1 << 56) - 1
UFR_ANON, UFR_VDSO, UFR_NOVMA, UFR_SPECIAL = 1 << 56, 1 << 57, 1 << 58, 1 << 59
USF_IA32, USF_LATE, USF_TRUNC = 0x1, 0x2, 0x4
USF_UNRELIABLE = 0x80
# stack_map's name of a compat (USF_IA32) stack: FSM_UST_ARCH_COMPAT_NAME on
# x86-64 and arm64 kernels (src/kernel/compat/ustack_arch.h)
COMPAT_NAMES = ("ia32", "aarch32")
# header flags (FSMB_F_*); HIDDEN: kernel ips and ref_symbol_addr are 0
F_KERNEL, F_PARTIAL, F_USER, F_HIDDEN = 0x1, 0x2, 0x4, 0x8
USF_INLINE, USF_FALLBACK, USF_NEW, USF_RESET = 0x8, 0x10, 0x20, 0x40
# a definition written again (redefine_pct): cookie 0, with USF_INLINE
USF_REDEF = 0x100
ID_NONE = 0xFFFFFFFF
CHAIN = ["ustack_f6", "ustack_f5", "ustack_f4", "ustack_f3", "ustack_f2",
         "ustack_f1", "main"]

LINE = re.compile(r"^\s*(?P<task>.+?)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?"
                  r"\[(?P<cpu>\d+)\]\s+(?:\S+\s+)?(?P<ts>\d+\.\d+):\s+"
                  r"(?P<event>[\w:]+):\s+(?P<rest>.*)$")
UST = re.compile(r"cookie=0x([0-9a-f]+) ustack_id=(\d+) gen=(\d+) inst=(\d+) "
                 r"flags=0x([0-9a-f]+) reason=(\d+) stop=(\d+) "
                 r"id_reason=(\d+) nr=(\d+) frames=\{(.*)\}$")
FMAP = re.compile(r"file_id=0x([0-9a-f]+) inst=\d+ path=(.*) build_id=(.*)$")


class Bad(Exception):
    pass


class Check:
    def __init__(self, label):
        self.label = label
        self.failed = 0

    def ok(self, what, cond, why=""):
        if cond:
            print("ok - %s: %s" % (self.label, what))
        else:
            self.failed += 1
            print("not ok - %s: %s # %s" % (self.label, what, why))
        return cond

    def eq(self, what, got, want):
        return self.ok(what, got == want, "got %r, want %r" % (got, want))

    def diag(self, msg):
        print("# %s: %s" % (self.label, msg))


# ---- stack_map_bin ----

def read_bin(path):
    """Parse FSMB v4: (header dict, kernel stacks, user stacks, files)."""
    data = open(path, "rb").read()
    if len(data) < HDR3.size:
        raise Bad("%d bytes, shorter than the v3 header" % len(data))
    (magic, version, nr, hsize, gen, bits, flags, maxd, ref,
     inst) = HDR3.unpack_from(data, 0)
    if magic != FSMB_MAGIC:
        raise Bad("magic 0x%08x" % magic)
    if version < 4 or hsize < HDR3.size + HDR4_TAIL.size:
        raise Bad("version %d header_size %d" % (version, hsize))
    unr, ugen, ubits, umax, uesize, res = HDR4_TAIL.unpack_from(data, HDR3.size)
    if uesize < UENT.size or res:
        raise Bad("ustack_entry_size %d reserved %d" % (uesize, res))
    hdr = dict(version=version, nr_stacks=nr, generation=gen, bits=bits,
               flags=flags, hidden=bool(flags & F_HIDDEN),
               max_depth=maxd, ref_symbol_addr=ref,
               instance=inst.rstrip(b"\0").decode(), nr_ustacks=unr,
               ugeneration=ugen, ubits=ubits, umax_frames=umax)
    off = hsize
    kstacks = []
    for _ in range(nr):
        if off + ENT.size > len(data):
            raise Bad("truncated kernel entry at %d" % off)
        sid, n, hits, r = ENT.unpack_from(data, off)
        off += ENT.size
        if n == 0 or n > maxd or r:
            raise Bad("kernel entry %d: nr=%d reserved=%d" % (sid, n, r))
        if off + 8 * n > len(data):
            raise Bad("truncated ips of kernel entry %d" % sid)
        kstacks.append((sid, hits, list(struct.unpack_from("<%dQ" % n, data, off))))
        off += 8 * n
    ustacks = {}
    for _ in range(unr):
        if off + uesize > len(data):
            raise Bad("truncated user entry at %d" % off)
        uid, n, hits, uflags, stop, r, mm = UENT.unpack_from(data, off)
        off += uesize
        if n == 0 or n > umax or r:
            raise Bad("user entry %d: nr=%d reserved=%d" % (uid, n, r))
        if off + 16 * n > len(data):
            raise Bad("truncated frames of user entry %d" % uid)
        w = struct.unpack_from("<%dQ" % (2 * n), data, off)
        off += 16 * n
        if uid in ustacks:
            raise Bad("user entry %d twice" % uid)
        ustacks[uid] = dict(hits=hits, flags=uflags, stop=stop, mm=mm,
                            frames=[(w[2 * i], w[2 * i + 1]) for i in range(n)])
    files = {}
    while True:
        if off + FILE.size > len(data):
            raise Bad("file table not terminated (offset %d)" % off)
        fid, size, plen, blen, r = FILE.unpack_from(data, off)
        if fid == 0:
            if size != FILE.size:
                raise Bad("end record size %d" % size)
            off += size
            break
        if size % 8 or size < FILE.size + plen + blen or off + size > len(data) \
                or plen < 1 or r:
            raise Bad("file record at %d: size %d path_len %d bid_len %d"
                      % (off, size, plen, blen))
        p = data[off + FILE.size:off + FILE.size + plen]
        if p[-1:] != b"\0":
            raise Bad("file %016x: path not NUL-terminated" % fid)
        b = data[off + FILE.size + plen:off + FILE.size + plen + blen]
        files[fid] = (p[:-1].decode(errors="replace"), b.hex())
        off += size
    if off != len(data):
        raise Bad("%d bytes after the file table" % (len(data) - off))
    return hdr, kstacks, ustacks, files


# ---- stack_map text ----

def header_flags(text):
    """The flag words after "stop N" in a ustack_id line (", aarch32,
    truncated, unreliable"): (compat, truncated, unreliable)."""
    words = [w.strip() for w in text.split(",") if w.strip()]
    unknown = [w for w in words
               if w not in COMPAT_NAMES + ("truncated", "unreliable")]
    if unknown:
        raise Bad("unknown ustack_id header words %s" % unknown)
    return (any(w in COMPAT_NAMES for w in words), "truncated" in words,
            "unreliable" in words)


def cmd_headers(c):
    """header_flags() on the lines stack_map prints on x86-64 and arm64."""
    cases = [("", (False, False, False)),
             (", ia32", (True, False, False)),
             (", aarch32", (True, False, False)),
             (", aarch32, unreliable", (True, False, True)),
             (", ia32, truncated", (True, True, False)),
             (", truncated, unreliable", (False, True, True))]
    for text, want in cases:
        c.eq("ustack_id header %r" % text, header_flags(text), want)
    try:
        header_flags(", thumb")
        c.ok("unknown header word refused", False, "accepted")
    except Bad:
        c.ok("unknown header word refused", True)


def read_map(path):
    """User stacks and files of stack_map: ({id: dict}, {fid: (path, bid)},
    number of kernel stacks)."""
    ust, files, nk, cur = {}, {}, 0, None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("stack_id "):
            nk += 1
            cur = None
        elif line.startswith("ustack_id "):
            m = re.match(r"ustack_id (\d+) \[gen (\d+), hits (\d+), "
                         r"depth (\d+), mm ([0-9a-f]+), stop (\d+)(.*)\]$",
                         line)
            if not m:
                raise Bad("bad line %r" % line)
            compat, trunc, unrel = header_flags(m.group(7))
            cur = dict(gen=int(m.group(2)), hits=int(m.group(3)),
                       depth=int(m.group(4)), mm=int(m.group(5), 16),
                       stop=int(m.group(6)),
                       compat=compat, truncated=trunc, unreliable=unrel,
                       frames=[])
            ust[int(m.group(1))] = cur
        elif line.startswith("file "):
            _, fid, bid, p = line.split(" ", 3)
            files[int(fid, 16)] = (p, "" if bid == "-" else bid)
            cur = None
        elif line.startswith("  [") and cur is not None:
            cur["frames"].append(line.split("] ", 1)[1])
    return ust, files, nk


def frame_text(fid, w, files):
    """How stack_map prints a frame, from the binary's words."""
    off = w & OFF_MASK
    if w & UFR_NOVMA:
        return "[novma] 0x%x" % off
    if w & UFR_ANON:
        return "[anon] 0x%x" % off
    if w & UFR_VDSO:
        return "[vdso]+0x%x" % off
    if w & UFR_SPECIAL:
        return "[special] 0x%x" % off
    if fid in files:
        return "%s+0x%x" % (files[fid][0], off)
    return "file:%016x+0x%x" % (fid, off)


def read_stat(path):
    st = {}
    for line in open(path):
        k, _, v = line.rstrip("\n").partition(": ")
        st[k] = v
    return st


# ---- traces ----

def read_trace(path):
    """user_stack records (dicts, trace order) and the file_map records."""
    recs, fmaps = [], []
    for line in open(path, errors="replace"):
        m = LINE.match(line.rstrip("\n"))
        if not m:
            continue
        ev = m.group("event").split(":")[-1]
        if ev == "user_stack":
            u = UST.match(m.group("rest"))
            if not u:
                raise Bad("unparsed user_stack: %r" % line)
            w = [int(x, 16) for x in u.group(10).split(",") if x]
            nr = int(u.group(9))
            if len(w) != 2 * nr:
                raise Bad("nr=%d but %d words: %r" % (nr, len(w), line))
            recs.append(dict(pid=int(m.group("pid")), task=m.group("task").strip(),
                             cookie=int(u.group(1), 16), id=int(u.group(2)),
                             gen=int(u.group(3)), flags=int(u.group(5), 16),
                             reason=int(u.group(6)), id_reason=int(u.group(8)),
                             frames=[(w[2 * i], w[2 * i + 1]) for i in range(nr)],
                             fmaps=len(fmaps)))
        elif ev == "file_map":
            f = FMAP.match(m.group("rest"))
            if f:
                fmaps.append((int(f.group(1), 16), f.group(2)))
    return recs, fmaps


def resolve(recs, fmaps):
    """Give every record its frames ("rframes"): inline ones, or those of
    the last inline record of its (gen, id) before it; and paths from the
    latest file_map record before it. Returns the number of unresolved."""
    known, unresolved = {}, 0
    for r in recs:
        key = (r["gen"], r["id"])
        if r["flags"] & (USF_INLINE | USF_FALLBACK):
            r["rframes"] = r["frames"]
            if r["id"] != ID_NONE:
                known[key] = r["frames"]
        elif r["id"] != ID_NONE:
            r["rframes"] = known.get(key)
            if r["rframes"] is None:
                unresolved += 1
        else:
            r["rframes"] = []
        paths = {}
        for fid, p in fmaps[:r["fmaps"]]:
            paths[fid] = p
        r["paths"] = [paths.get(fid) for fid, _ in (r["rframes"] or [])]
    return unresolved


_a2l = {}


def addr2line(prog, offs):
    key = (prog, tuple(offs))
    if key not in _a2l:
        out = subprocess.run(["addr2line", "-f", "-e", prog] +
                             ["0x%x" % o for o in offs],
                             stdout=subprocess.PIPE, universal_newlines=True).stdout
        _a2l[key] = out.splitlines()[0::2]
    return _a2l[key]


def chain_of(prog, frames, paths):
    """Function names of the 8 innermost frames if all are in prog."""
    if len(frames) < 8 or any(p != prog for p in paths[:8]):
        return None
    offs = [(w & OFF_MASK) - (1 if i else 0) for i, (_, w) in enumerate(frames[:8])]
    return addr2line(prog, offs)


def is_sys_chain(names):
    return names is not None and names[0] == "ustack_sys" and names[1:] == CHAIN


# ---- commands ----

def cmd_binmap(c, binf, mapf, statf):
    try:
        hdr, ks, us, files = read_bin(binf)
    except Bad as e:
        c.ok("stack_map_bin v4 parses", False, str(e))
        return
    c.ok("stack_map_bin v4 parses (%d kernel, %d user stacks, %d files)"
         % (len(ks), len(us), len(files)), True)
    c.eq("bin version", hdr["version"], 4)
    c.ok("bin flags USER", hdr["flags"] & 4, "flags 0x%x" % hdr["flags"])
    tust, tfiles, nk = read_map(mapf)
    st = read_stat(statf)
    c.ok("user stacks: bin (%d) vs stack_map (%d)" % (len(us), len(tust)),
         sorted(us) == sorted(tust),
         "only in bin %s, only in text %s" % (sorted(set(us) - set(tust))[:5],
                                              sorted(set(tust) - set(us))[:5]))
    c.eq("user_entries (stat) vs bin nr_ustacks", int(st["user_entries"]),
         hdr["nr_ustacks"])
    c.eq("user_generation (stat) vs bin", int(st["user_generation"]),
         hdr["ugeneration"])
    c.eq("kernel stacks: bin vs stack_map", len(ks), nk)
    c.ok("files: bin (%d) vs stack_map (%d)" % (len(files), len(tfiles)),
         files == tfiles, "differ: %s" % [
             (k, files.get(k), tfiles.get(k)) for k in set(files) | set(tfiles)
             if files.get(k) != tfiles.get(k)][:3])
    bad = []
    for uid, u in us.items():
        t = tust.get(uid)
        if t is None:
            continue
        want = [frame_text(fid, w, files) for fid, w in u["frames"]]
        if (t["frames"] != want or t["mm"] != u["mm"] or t["stop"] != u["stop"]
                or t["depth"] != len(u["frames"])
                or t["compat"] != bool(u["flags"] & USF_IA32)
                or t["truncated"] != bool(u["flags"] & USF_TRUNC)
                or t["unreliable"] != bool(u["flags"] & USF_UNRELIABLE)):
            bad.append(uid)
    c.ok("every user stack: text frames/mm/stop/flags = binary", not bad,
         "differ: %s, e.g. %s vs %s" % (bad[:5], bad and us[bad[0]],
                                        bad and tust[bad[0]]))
    unres = sum(1 for u in us.values() for fid, w in u["frames"]
                if not w & (UFR_ANON | UFR_VDSO | UFR_NOVMA | UFR_SPECIAL)
                and fid not in files)
    c.eq("file ids of user stacks all in the file table", unres, 0)
    hits = int(st["user_hits"])
    ins = int(st["user_inserts"])
    drops = int(st["user_drops"])
    c.ok("user_inserts - user_lost_races (%d) >= user_entries (%s)"
         % (ins - int(st["user_lost_races"]), st["user_entries"]),
         ins - int(st["user_lost_races"]) >= int(st["user_entries"]))
    c.eq("no user fallbacks / drops", (int(st["user_fallbacks"]), drops), (0, 0))
    delivered = int(st["user_stacks"]) - int(st["user_stacks_empty"])
    c.ok("id lookups (hits+inserts+drops=%d) between non-empty delivered (%d) "
         "and that + lost (%s)" % (hits + ins + drops, delivered, st["user_stacks_lost"]),
         delivered <= hits + ins + drops <= delivered + int(st["user_stacks_lost"]))
    c.ok("sum of per-stack hits (%d) <= user_hits + user_inserts"
         % sum(u["hits"] for u in us.values()),
         sum(u["hits"] for u in us.values()) <= hits + ins)


def sys_ids(recs, prog, pid):
    """(gen, id) of PID's records whose stack is the syscall chain. A
    re-definition (USF_REDEF) names no event: its pid is whichever task's
    delivery wrote it, not the stack's."""
    ids = {}
    for r in recs:
        if (r["pid"] != pid or r["id"] == ID_NONE or not r["rframes"] or
                r["flags"] & USF_REDEF):
            continue
        if is_sys_chain(chain_of(prog, r["rframes"], r["paths"])):
            ids.setdefault((r["gen"], r["id"]), []).append(r)
    return ids


def cmd_dedup(c, tracef, prog, pid, pid2=None, reinline=False):
    recs, fmaps = read_trace(tracef)
    unres = resolve(recs, fmaps)
    if unres:
        bad = [r for r in recs if r["id"] != ID_NONE and
               not r["flags"] & (USF_INLINE | USF_FALLBACK) and
               r.get("rframes") is None]
        inl = [(r["gen"], r["id"]) for r in recs if r["flags"] & USF_INLINE]
        c.diag("unresolved: %d of %d records (%d inline); first: %s; "
               "its (gen, id) inline later: %s; gens seen: %s"
               % (unres, len(recs), len(inl),
                  {k: bad[0][k] for k in ("pid", "gen", "id", "flags")},
                  (bad[0]["gen"], bad[0]["id"]) in inl,
                  sorted(set(r["gen"] for r in recs))))
    c.eq("every id-only user_stack record has an earlier inline record", unres, 0)
    fb = [r for r in recs if r["flags"] & USF_FALLBACK]
    c.eq("no fallback user_stack records", len(fb), 0)
    ids = sys_ids(recs, prog, pid)
    c.eq("pid %d: one ustack id for the syscall chain" % pid, len(ids), 1)
    if len(ids) != 1:
        c.diag("ids: %s" % sorted(ids))
        mine = [r for r in recs if r["pid"] == pid]
        c.diag("%d records of pid %d, pids seen: %s" % (
            len(mine), pid, sorted(set(r["pid"] for r in recs))[:20]))
        for r in [r for r in mine if r["rframes"]][:3]:
            c.diag("rec flags 0x%x paths %s names %s" % (
                r["flags"], r["paths"][:9],
                chain_of(prog, r["rframes"], r["paths"])))
        return None
    key, rs = next(iter(ids.items()))
    allr = [r for r in recs if (r["gen"], r["id"]) == key and not r["flags"] & USF_REDEF]
    redef = [r for r in recs if (r["gen"], r["id"]) == key and r["flags"] & USF_REDEF]
    if redef:
        c.diag("%d re-definitions of the id (redefine_pct)" % len(redef))
    c.ok("re-definitions carry no cookie and the id's frames",
         all(not r["cookie"] and r["frames"] == allr[0]["frames"] for r in redef), "")
    c.ok("pid %d: id %d used by %d records (>= 10)" % (pid, key[1], len(rs)),
         len(rs) >= 10)
    inl = [i for i, r in enumerate(allr) if r["flags"] & USF_INLINE]
    c.eq("frames inline exactly once, on the id's first record (re-definitions aside)",
         inl, [0])
    c.ok("later records carry no frames",
         all(not r["frames"] for r in allr[1:]), "")
    if reinline:
        c.ok("re-enabled recording: known id, not NEW, inline again",
             not allr[0]["flags"] & USF_NEW and allr[0]["flags"] & USF_INLINE,
             "flags 0x%x" % allr[0]["flags"])
    if pid2 is not None:
        ids2 = sys_ids(recs, prog, pid2)
        c.eq("pid %d (another mm): one id for the chain" % pid2, len(ids2), 1)
        if len(ids2) == 1:
            k2 = next(iter(ids2))
            c.ok("pid %d has another id than pid %d (%s vs %s)" % (pid2, pid, k2, key),
                 k2 != key)
    return key


def cmd_mapchain(c, mapf, prog, uid):
    ust, files, _ = read_map(mapf)
    u = ust.get(uid)
    if not c.ok("stack_map shows ustack_id %d" % uid, u is not None, "absent"):
        return
    offs, ok = [], True
    for i, f in enumerate(u["frames"][:8]):
        p, _, o = f.rpartition("+0x")
        if p != prog:
            ok = False
            break
        offs.append(int(o, 16) - (1 if i else 0))
    c.ok("ustack_id %d: 8 innermost frames are %s+0x..." % (uid, prog),
         ok and len(offs) == 8, "frames %s" % u["frames"][:8])
    if ok and len(offs) == 8:
        names = addr2line(prog, offs)
        c.ok("ustack_id %d resolves to the chain: %s" % (uid, " ".join(names)),
             is_sys_chain(names), "")
    c.ok("stack_map has file lines, %s among them" % prog,
         prog in [p for p, _ in files.values()], "files %s" % list(files.values())[:5])


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    try:
        if cmd == "dump":
            hdr, ks, us, files = read_bin(argv[2])
            print(hdr)
            for uid, u in sorted(us.items()):
                print("ustack %d %s" % (uid, u))
            for fid, f in sorted(files.items()):
                print("file %016x %s" % (fid, f))
            return 0
        c = Check(argv[2])
        if cmd == "binmap":
            cmd_binmap(c, argv[3], argv[4], argv[5])
        elif cmd == "dedup":
            rest = argv[6:]
            cmd_dedup(c, argv[3], argv[4], int(argv[5]),
                      int(rest[0]) if rest and rest[0].isdigit() else None,
                      "reinline" in rest)
        elif cmd == "mapchain":
            cmd_mapchain(c, argv[3], argv[4], int(argv[5]))
        elif cmd == "headers":
            cmd_headers(c)
        elif cmd == "idof":
            recs, fmaps = read_trace(argv[3])
            resolve(recs, fmaps)
            ids = sys_ids(recs, argv[4], int(argv[5]))
            for g, i in sorted(ids):
                print("%d %d" % (g, i))
            return 0
        else:
            print(__doc__)
            return 2
    except (Bad, OSError, KeyError, ValueError) as e:
        print("not ok - %s: %s # %s: %s" % (argv[2] if len(argv) > 2 else "?",
                                          cmd, type(e).__name__, e))
        return 1
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
