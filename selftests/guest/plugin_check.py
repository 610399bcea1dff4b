#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
"""plugin_check.py PLUGIN.txt REPORT.txt [INSTANCE...]

Compares `trace-cmd report` output made with plugin_stackmap.so (PLUGIN.txt)
with `stackmap-report report` on the same trace.dat (REPORT.txt), frame by
frame. INSTANCE: the -B instance names of the recording (lines of their
buffers start with "NAME: " in both outputs).

From PLUGIN.txt alone it computes, per buffer, which stack ids have had
their stack_def printed before each id record (a stack_reset of generation
G drops the definitions whose 12 generation bits are G's). Then, per
(buffer, CPU), the id records of both outputs are paired in order (the
source event of an id record is the record before it on its CPU, the
kernel's own kernel_stack records left out) and:
  - an id defined before: the plugin's frames equal stackmap-report's;
  - an id not defined yet: the plugin prints exactly
    "[stack_id N: defined later]";
  - a stack_id_user record: the user_stack record of its cookie (same
    buffer) shows the same user frames as stackmap-report, unless it says
    "[ustack_id N: defined later]"; without such a record stackmap-report
    says "[user stack not in the trace: ...]".
Prints TAP-like "ok - ..." / "not ok - ..." lines; exit 1 on a failure.
"""
import re
import sys

OURS = {"stack_id", "stack_id_user", "stack_fallback", "stack_def",
        "stack_reset", "user_stack", "file_map"}
IDS = {"stack_id", "stack_id_user", "stack_fallback"}
REC = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+"
                 r"(?:\S+\s+)?(?P<ts>\d+\.\d+):\s+(?P<ev>[\w]+):\s?(?P<info>.*)$")
LATER = re.compile(r"^\[stack_id (\d+): defined later\]$")
ULATER = re.compile(r"^\[ustack_id (\d+): defined later\]$")

fails = 0


def ok(cond, msg):
    global fails
    print(("ok - " if cond else "not ok - ") + msg)
    if not cond:
        fails += 1


def split_inst(line, insts):
    s = line.lstrip(" ")
    for i in insts:
        if s.startswith(i + ": "):
            return i, s[len(i) + 2:]
    return "", s


def field(info, name):
    m = re.search(r"\b" + name + r"=(\S+)", info)
    return m.group(1) if m else None


def parse_plugin(path, insts):
    """records: list of dicts (inst, cpu, ts, ev, info, frames)"""
    recs = []
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith(" => "):
            if recs:
                recs[-1]["frames"].append(line[4:])
            continue
        inst, rest = split_inst(line, insts)
        m = REC.match(rest)
        if not m:
            continue
        recs.append(dict(inst=inst, cpu=int(m["cpu"]), ts=m["ts"], ev=m["ev"],
                         info=m["info"], frames=[]))
    return recs


def shared_ids(recs):
    """ids defined in two buffers with different stacks"""
    d = {}
    for r in recs:
        if r["ev"] == "stack_def":
            d.setdefault(r["inst"], {})[field(r["info"], "stack_id")] = field(r["info"], "ips")
    n = 0
    bufs = sorted(d)
    for i, a in enumerate(bufs):
        for b in bufs[i + 1:]:
            n += sum(1 for k in d[a] if k in d[b] and d[a][k] != d[b][k])
    return n


def plugin_samples(recs):
    """per (inst, cpu): [(source ts, id rec, expected_later)], user stacks"""
    defs = {}          # inst -> set of stack_id
    last = {}          # (inst, cpu) -> source ts or None
    out = {}
    ustacks = {}       # (inst, cookie) -> frames
    for r in recs:
        key = (r["inst"], r["cpu"])
        ev = r["ev"]
        if ev == "user_stack" and "cookie=" in r["info"]:
            ustacks.setdefault((r["inst"], int(field(r["info"], "cookie"), 16)),
                               r["frames"])
            continue
        if ev == "kernel_stack":
            continue
        if ev not in OURS:
            last[key] = r["ts"]
            continue
        d = defs.setdefault(r["inst"], set())
        if ev == "stack_def":
            d.add(int(field(r["info"], "stack_id")))
        elif ev == "stack_reset":
            g = int(field(r["info"], "generation")) & 0xfff
            d.difference_update({i for i in d if (i >> 20) == g})
        elif ev in IDS:
            later = ev != "stack_fallback" and int(field(r["info"], "stack_id")) not in d
            out.setdefault(key, []).append((last.get(key), r, later))
            last[key] = None
    return out, ustacks


def parse_report(path, insts):
    """per (inst, cpu): [(source ts, kernel frames, user frames or None)]"""
    out = {}
    cur = None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith(" => "):
            if cur is not None:
                (cur[2] if cur[2] is not None else cur[1]).append(line[4:])
            continue
        if line.startswith(" <user stack trace>"):
            cur[2] = []
            continue
        if line.startswith(" <"):
            continue
        inst, rest = split_inst(line, insts)
        m = REC.match(rest)
        ts, cpu = (m["ts"], int(m["cpu"])) if m else (None, -1)
        cur = [ts, [], None]
        out.setdefault((inst, cpu), []).append(cur)
    return out


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    insts = sys.argv[3:]
    recs = parse_plugin(sys.argv[1], insts)
    psam, ustacks = plugin_samples(recs)
    rsam = parse_report(sys.argv[2], insts)
    n_same = n_later = n_user = n_ulater = n_umissing = 0
    bad = []
    for key in sorted(set(psam) | set(rsam), key=str):
        p = psam.get(key, [])
        r = rsam.get(key, [])
        if len(p) != len(r):
            bad.append("%s: %d id records in trace-cmd report, %d in stackmap-report"
                       % (key, len(p), len(r)))
            continue
        for (pts, rec, later), (rts, kf, uf) in zip(p, r):
            sid = field(rec["info"], "stack_id")
            where = "%s cpu %d %s (source %s)" % (key[0] or "top", key[1], rec["ts"], pts)
            if pts != rts:
                bad.append("%s: source %s in stackmap-report" % (where, rts))
                continue
            if later:
                if rec["frames"] != ["[stack_id %s: defined later]" % sid]:
                    bad.append("%s: id %s defined later, plugin shows %r"
                               % (where, sid, rec["frames"][:3]))
                n_later += 1
                continue
            if any(LATER.match(f) for f in rec["frames"]):
                bad.append("%s: id %s defined before, plugin says defined later"
                           % (where, sid))
                continue
            if rec["frames"] != kf:
                bad.append("%s: kernel frames differ: plugin %r, stackmap-report %r"
                           % (where, rec["frames"][:4], kf[:4]))
                continue
            n_same += 1
            if uf is None:
                continue
            c = field(rec["info"], "cookie")
            if c is None or c.startswith("{"):
                continue
            u = ustacks.get((key[0], int(c, 16)))
            if u is None:
                # no user_stack record for the cookie (the task did not
                # return to user space while recording): both must say so
                if not (len(uf) == 1 and uf[0].startswith("[user stack not in the trace")):
                    bad.append("%s: no user_stack record for cookie %s, stackmap-report"
                               " shows %r" % (where, c, uf[:3]))
                else:
                    n_umissing += 1
            elif len(u) == 1 and ULATER.match(u[0]):
                n_ulater += 1
            elif u != uf:
                bad.append("%s: user frames differ: plugin %r, stackmap-report %r"
                           % (where, u[:3], uf[:3]))
            else:
                n_user += 1
    for b in bad[:10]:
        print("# " + b)
    print("# %d kernel stacks equal, %d defined later, %d user stacks equal, "
          "%d user stacks defined later, %d user stacks not in the trace, %d mismatches"
          % (n_same, n_later, n_user, n_ulater, n_umissing, len(bad)))
    ok(not bad, "plugin frames = stackmap-report frames for every id record "
       "defined before it; 'defined later' exactly where not")
    ok(n_same > 0, "id records with frames compared (%d)" % n_same)
    ok(n_later > 0, "first uses shown as defined later (%d)" % n_later)
    if insts:
        n = shared_ids(recs)
        ok(n > 0, "ids that name different stacks in two buffers (%d)" % n)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
