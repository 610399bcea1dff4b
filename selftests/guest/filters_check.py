#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
"""filters_check.py - stackmap-report's filters and its pprof output against
expectations computed here from `trace-cmd report` text (tools_filters.sh).
Prints "ok - what" / "not ok - what # why" lines.

  filters_check.py filters SR TRACE.dat REPORT.txt COMM[,COMM...] [quick]
      runs `SR folded` with --pid, --comm, --since/--until, --event,
      --instance (alone and combined) and compares each total with the
      number of id records of REPORT.txt that pass the same filter
  filters_check.py pprof REPORT.txt FOLDED PROFILE.txt
      PROFILE.txt is `protoc --decode=perftools.profiles.Profile` of the
      gunzipped pprof output: the sample values add up to the id records
      of REPORT.txt, and the stacks (comm label; function names outermost
      first, kernel-mapping frames suffixed _[k]) are the lines of FOLDED
"""
import re
import subprocess
import sys

# "[INST: ]COMM-PID [CPU] SECONDS: EVENT:" (trace-cmd report, no -l)
LINE = re.compile(r"^(?:(\w+): +)?\s*(.*?)-(\d+)\s+\[(\d+)\]\s+(\d+\.\d+):\s+(\w+):")
IDS = {"stack_id", "stack_id_user", "stack_fallback"}
# never a source: our other records, the kernel's own stack records
NOSRC = IDS | {"stack_def", "stack_reset", "user_stack", "file_map",
               "kernel_stack"}

fails = 0


def ok(what, cond, why=""):
    global fails
    if cond:
        print("ok - %s" % what)
    else:
        fails += 1
        print("not ok - %s # %s" % (what, why))


def id_records(report):
    """the id records: dicts inst, comm, pid, cpu, us (microseconds), src"""
    last, out = {}, []
    for line in open(report, errors="replace"):
        m = LINE.match(line)
        if not m:
            continue
        inst, comm, pid, cpu, sec, ev = m.groups()
        inst = inst or ""
        key = (inst, int(cpu))
        if ev not in IDS:
            if ev not in NOSRC:
                last[key] = ev
            continue
        a, b = sec.split(".")
        out.append({"inst": inst, "comm": comm.strip(), "pid": int(pid),
                    "us": int(a) * 1000000 + int(b.ljust(6, "0")[:6]),
                    "src": last.pop(key, None)})
    return out


def folded_total(sr, dat, args):
    p = subprocess.run([sr, "folded", "-i", dat] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        return "exit %d: %s" % (p.returncode, p.stderr.strip()[-200:])
    return sum(int(l.rsplit(" ", 1)[1]) for l in p.stdout.splitlines() if l)


def check(sr, dat, recs, args, pred, what):
    want = sum(1 for r in recs if pred(r))
    got = folded_total(sr, dat, args)
    ok("%s: %s = %d id records of trace-cmd report" % (what, " ".join(args), want),
       got == want, "stackmap-report: %s" % got)
    return want


def cmd_filters(sr, dat, report, comms, quick=False):
    """comms: comma-separated comms to check one by one (each run of the
    tool costs seconds under TCG: a few chosen filters, not all). quick:
    one run per filter, combined (the debug kernel: the filters do not
    depend on the kernel, the full set runs on stock)"""
    recs = id_records(report)
    ok("id records in trace-cmd report (%d)" % len(recs), len(recs) > 0)
    if not recs:
        return
    # --pid: the task with the most records, then two pids
    by_pid = {}
    for r in recs:
        by_pid[r["pid"]] = by_pid.get(r["pid"], 0) + 1
    pids = sorted(by_pid, key=lambda p: -by_pid[p])
    ts = sorted({r["us"] for r in recs})
    if quick:
        gap = max(range(len(ts) - 1), key=lambda i: ts[i + 1] - ts[i])
        mid = (ts[gap] + ts[gap + 1]) / 2.0
        c = comms.split(",")[0]
        check(sr, dat, recs, ["--pid", str(pids[0]), "--since", "%.7f" % (mid / 1e6)],
              lambda r: r["pid"] == pids[0] and r["us"] >= mid, "--pid with --since")
        check(sr, dat, recs, ["--comm", c, "--event", "sys_enter", "--until",
                              "%.7f" % (mid / 1e6)],
              lambda r: r["comm"] == c and r["src"] == "sys_enter" and r["us"] <= mid,
              "--comm with --event and --until")
        return
    n = check(sr, dat, recs, ["--pid", str(pids[0])],
              lambda r: r["pid"] == pids[0], "--pid")
    ok("--pid selects a strict subset", 0 < n < len(recs) or len(pids) == 1)
    if len(pids) > 1:
        two = set(pids[:2])
        check(sr, dat, recs, ["--pid", str(pids[0]), "--pid", str(pids[1])],
              lambda r: r["pid"] in two, "--pid twice")
    # --comm: the given comms, and two at once
    comms = comms.split(",")
    for c in comms:
        n = check(sr, dat, recs, ["--comm", c], lambda r, c=c: r["comm"] == c, "--comm")
        ok("--comm %s: records found" % c, n > 0)
    if len(comms) > 1:
        check(sr, dat, recs, ["--comm", comms[0], "--comm", comms[1]],
              lambda r: r["comm"] in comms[:2], "--comm twice")
    # --since/--until: split times in the widest gaps between records, so
    # that the microseconds of trace-cmd report cannot round across them
    gaps = sorted(range(len(ts) - 1), key=lambda i: ts[i] - ts[i + 1])[:2]
    ok("two gaps between id records for the time filters", len(gaps) == 2)
    if len(gaps) == 2:
        lo, hi = sorted((ts[i] + ts[i + 1]) / 2.0 for i in gaps)
        s_lo, s_hi = "%.7f" % (lo / 1e6), "%.7f" % (hi / 1e6)
        a = check(sr, dat, recs, ["--since", s_lo], lambda r: r["us"] >= lo, "--since")
        b = check(sr, dat, recs, ["--until", s_lo], lambda r: r["us"] <= lo, "--until")
        ok("--since and --until split the records", a + b == len(recs) and a and b,
           "%d + %d != %d" % (a, b, len(recs)))
        check(sr, dat, recs, ["--since", s_lo, "--until", s_hi, "--pid", str(pids[0])],
              lambda r: lo <= r["us"] <= hi and r["pid"] == pids[0],
              "--since/--until window with --pid")
    # --event: the source is the record before the id record on its CPU
    srcs = sorted({r["src"] for r in recs if r["src"]})
    ok("two source events (%s)" % srcs, len(srcs) >= 2)
    for ev in srcs:
        check(sr, dat, recs, ["--event", ev], lambda r, ev=ev: r["src"] == ev, "--event")
    # --instance
    insts = sorted({r["inst"] for r in recs})
    ok("records of the top level and of an instance", len(insts) > 1, insts)
    for i in insts:
        check(sr, dat, recs, ["--instance", i or "top"],
              lambda r, i=i: r["inst"] == i, "--instance")
    check(sr, dat, recs, ["--instance", insts[-1], "--comm", comms[0], "--event",
                          "sys_enter"],
          lambda r: r["inst"] == insts[-1] and r["comm"] == comms[0] and
          r["src"] == "sys_enter", "--instance with --comm and --event")


def parse_text(path):
    """protoc's text format -> nested dicts of lists (fields repeat)"""
    root, stack = {}, []
    cur = root
    for raw in open(path):
        line = raw.strip()
        if not line:
            continue
        if line.endswith("{"):
            node = {}
            cur.setdefault(line[:-1].strip(), []).append(node)
            stack.append(cur)
            cur = node
        elif line == "}":
            cur = stack.pop()
        else:
            k, v = line.split(":", 1)
            v = v.strip()
            if v.startswith('"'):
                v = v[1:-1].encode("latin-1").decode("unicode_escape").encode(
                    "latin-1").decode("utf-8", "replace")
            else:
                v = int(v) if re.match(r"^-?\d+$", v) else v
            cur.setdefault(k, []).append(v)
    return root


def one(d, k, default=0):
    return d.get(k, [default])[0]


def cmd_pprof(report, folded, prof):
    recs = id_records(report)
    p = parse_text(prof)
    st = p.get("string_table", [])
    ok("string_table[0] is empty", st[:1] == [""], st[:1])
    s = lambda i: st[i] if 0 <= i < len(st) else "<bad %d>" % i
    stype = p.get("sample_type", [{}])
    ok("one sample type, events/count", len(stype) == 1 and
       (s(one(stype[0], "type")), s(one(stype[0], "unit"))) == ("events", "count"),
       stype)
    locs = {one(l, "id"): l for l in p.get("location", [])}
    funcs = {one(f, "id"): s(one(f, "name")) for f in p.get("function", [])}
    maps = {one(m, "id"): m for m in p.get("mapping", [])}
    kmap = [i for i, m in maps.items() if s(one(m, "filename")) == "[kernel]"]
    ok("a [kernel] mapping", len(kmap) == 1, kmap)
    umaps = [m for i, m in maps.items() if i not in kmap]
    ok("user mappings have file names and build-ids",
       umaps and all(s(one(m, "filename")).startswith("/") and s(one(m, "build_id"))
                     for m in umaps), len(umaps))
    got, total, bad = {}, 0, []
    for smp in p.get("sample", []):
        v = smp.get("value", [])
        total += sum(v)
        labels = {s(one(l, "key")): (s(one(l, "str")) if "str" in l else one(l, "num"))
                  for l in smp.get("label", [])}
        if not {"comm", "pid", "event"} <= set(labels):
            bad.append(labels)
        names = []
        for lid in smp.get("location_id", []):
            l = locs.get(lid)
            if l is None:
                bad.append("location %d" % lid)
                continue
            k = one(l, "mapping_id") in kmap
            for ln in l.get("line", []):
                names.append(funcs.get(one(ln, "function_id"), "<bad function>") +
                             ("_[k]" if k else ""))
        key = ";".join([labels.get("comm", "?")] + names[::-1])
        got[key] = got.get(key, 0) + sum(v)
    ok("samples have comm, pid, event labels and known locations", not bad, bad[:3])
    ok("sum of sample values (%d) = id records of trace-cmd report (%d)"
       % (total, len(recs)), total == len(recs) and total > 0)
    want = {}
    for line in open(folded, errors="replace"):
        k, n = line.rstrip("\n").rsplit(" ", 1)
        want[k] = want.get(k, 0) + int(n)
    diff = [k for k in set(got) | set(want) if got.get(k) != want.get(k)]
    ok("pprof stacks and counts = folded (%d stacks)" % len(want), not diff,
       "%d differ, e.g. %s" % (len(diff), [(k, got.get(k), want.get(k))
                                          for k in diff[:2]]))


def main():
    if len(sys.argv) in (6, 7) and sys.argv[1] == "filters":
        cmd_filters(*sys.argv[2:6], quick=sys.argv[6:] == ["quick"])
    elif len(sys.argv) == 5 and sys.argv[1] == "pprof":
        cmd_pprof(*sys.argv[2:])
    else:
        sys.exit(__doc__)
    sys.exit(1 if fails else 0)


main()
