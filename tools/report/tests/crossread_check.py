#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""crossread_check.py STACKMAP_REPORT DIR

A trace recorded on another machine, read here: every DIR/*/crossread/
left by the guest suite selftests/guest/tools_crossread.sh (the arm64
guests: the tools are built for this host and do not run there). Each
holds rec.dat (trace-cmd record -T of raw_syscalls:sys_enter and
sched:sched_switch with kernel and user stack ids, while chain.c ran),
sysroot/ (the user files at their paths on the recording machine) and
rec.txt (`trace-cmd report` as the recording machine printed it).

For each recording:
 - `stats --sysroot`: every kernel stack, user stack and file resolves
   from the trace alone;
 - the kernel as the oracle, event by event: each source record's kernel
   stack from `report --addr` equals the "<stack trace>" the kernel wrote
   after the same record (options/stacktrace, printed by this host's
   trace-cmd from the same file), addresses compared, tracing frames on
   top aside; every source record trace-cmd prints has its line in
   `report` (the recording's first and last records per CPU aside);
 - this host's `trace-cmd report` reads the same records as the
   recording machine's (same source records, same id records);
 - chain.c's user stacks resolve through --sysroot to main, ustack_f1 ..
   ustack_f6, ustack_sys; without --sysroot they do not (the recording
   machine's files are not this host's).

Exit 0 passed, 1 a check failed, 77 no recording in DIR (skipped).
"""
import glob
import os
import re
import subprocess
import sys

failed = 0
CHAIN = "main;ustack_f1;ustack_f2;ustack_f3;ustack_f4;ustack_f5;ustack_f6;ustack_sys"
SOURCES = ("sys_enter", "sched_switch")
# "  comm-PID  [CPU]  TS: event: ..." (trace-cmd report and stackmap-report)
HEAD = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+"
                  r"(?:\S+\s+)?(?P<ts>\d+\.\d+):\s+(?P<ev>[\w:]+):")


def check(ok, what):
    global failed
    print(("ok - " if ok else "not ok - ") + what)
    if not ok:
        failed += 1
    return ok


def diag(text):
    print("# " + text)


def sh(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        diag("%s: exit %d: %s" % (" ".join(cmd), p.returncode,
                                  p.stderr.decode("utf-8", "replace")[-600:]))
    return p.returncode, p.stdout.decode("utf-8", "replace")


def stat(text, key):
    m = re.search(r"^%s: (\d+)$" % re.escape(key), text, re.M)
    return int(m.group(1)) if m else None


def kernel_stacks(text):
    """trace-cmd report: {(cpu, ts, pid, event): [addr, ...]} for the source
    records, each with the kernel's "<stack trace>" written after it on its
    CPU (None if none came before the CPU's next source record); and
    the id record count."""
    out, last, nid = {}, {}, 0
    rec = None
    for line in text.splitlines():
        m = HEAD.match(line)
        if m:
            rec = None
            ev = m.group("ev").split(":")[-1]
            cpu = int(m.group("cpu"))
            if ev in ("stack_id", "stack_id_user", "stack_fallback"):
                nid += 1
            if ev in SOURCES:
                key = (cpu, m.group("ts"), int(m.group("pid")), ev)
                out[key] = None
                last[cpu] = key
            elif ev == "kernel_stack" or "<stack trace" in line:
                k = last.get(cpu)
                if k is not None and out[k] is None:
                    out[k] = []
                    rec = out[k]
                last[cpu] = None
            continue
        # "=> func (ffff...)" or "=> func+0x12/0x40 (ffff...)"
        m = re.match(r"^\s*=>\s+.*\(([0-9a-fA-F]+)\)\s*$", line)
        if m and rec is not None:
            rec.append(int(m.group(1), 16))
    return out, nid


def our_stacks(text):
    """stackmap-report report --addr: {(cpu, ts, pid, event): [addr, ...]}
    (kernel frames only), and the keys printed without a kernel stack."""
    out, nostack = {}, []
    rec = None
    user = False
    for line in text.splitlines():
        m = HEAD.match(line)
        if m:
            ev = m.group("ev").split(":")[-1]
            key = (int(m.group("cpu")), m.group("ts"), int(m.group("pid")), ev)
            out[key] = rec = []
            user = False
            continue
        if line.startswith(" <user stack trace>"):
            user = True
            continue
        m = re.match(r"^ => .* <0x([0-9a-f]+)>$", line)
        if m and rec is not None and not user:
            rec.append(int(m.group(1), 16))
    for k, v in out.items():
        if not v:
            nostack.append(k)
    return out, nostack


def same(ours, theirs):
    """The kernel's stack is ours without tracing frames on top (or the
    other way round: each side skips its own): one is a suffix of the
    other, outermost frames aligned, at least 2 frames in common."""
    n = min(len(ours), len(theirs))
    return n >= 2 and ours[len(ours) - n:] == theirs[len(theirs) - n:]


def one(sr, d):
    name = os.path.relpath(d, os.path.dirname(os.path.dirname(d)))
    dat = os.path.join(d, "rec.dat")
    sysroot = os.path.join(d, "sysroot")
    arch = open(os.path.join(d, "arch")).read().strip() \
        if os.path.exists(os.path.join(d, "arch")) else "?"
    diag("%s: recorded on %s, read on %s" % (name, arch, os.uname().machine))

    rc, st = sh([sr, "stats", "-i", dat, "--top", "0", "--sysroot", sysroot])
    check(rc == 0, "%s: stats exits 0" % name)
    n = stat(st, "records") or 0
    check(n > 0, "%s: stats counts id records (%d)" % (name, n))
    for k in ("unresolved", "user_unresolved", "file_unresolved"):
        check(stat(st, k) == 0, "%s: %s: %s (self-contained)"
              % (name, k, stat(st, k)))

    rc, tc = sh(["trace-cmd", "report", "-i", dat])
    check(rc == 0 and tc, "%s: this host's trace-cmd report reads it" % name)
    theirs, nid = kernel_stacks(tc)
    with open(os.path.join(d, "rec.txt"), errors="replace") as f:
        there, nid_there = kernel_stacks(f.read())
    check(set(theirs) == set(there) and nid == nid_there,
          "%s: the same source records (%d) and id records (%d) as on the "
          "recording machine (%d, %d)" % (name, len(theirs), nid, len(there),
                                          nid_there))
    check(nid == n, "%s: stats records = id records of trace-cmd report "
          "(%d, %d)" % (name, n, nid))

    rc, rep = sh([sr, "report", "-i", dat, "--addr", "--sysroot", sysroot])
    check(rc == 0, "%s: report --addr exits 0" % name)
    ours, nostack = our_stacks(rep)
    check(not nostack, "%s: every report line has a kernel stack (%d without)"
          % (name, len(nostack)))
    cmp = bad = 0
    first = None
    for key, ips in ours.items():
        k = theirs.get(key, "missing")
        if k == "missing" or k is None:
            bad += 1
            first = first or "%s: no such source record with a kernel stack " \
                "in trace-cmd report" % (key,)
            continue
        cmp += 1
        if not same(ips, k):
            bad += 1
            first = first or "%s: ours %s, the kernel's %s" % (
                key, [hex(x) for x in ips[-6:]], [hex(x) for x in k[-6:]])
    check(cmp > 0 and bad == 0,
          "%s: each record's kernel stack equals the kernel's own (%d "
          "compared, %d wrong%s)" % (name, cmp, bad,
                                     ", first: " + first if first else ""))
    # every source record the kernel wrote is in report, but at the ends
    # of a CPU's window (tracing off between a record and its id record)
    missing = [k for k in theirs if k not in ours]
    ends = set()
    for cpu in {k[0] for k in theirs}:
        keys = sorted((k for k in theirs if k[0] == cpu),
                      key=lambda k: float(k[1]))
        ends.update(keys[-2:])
    check(len([k for k in missing if k not in ends]) == 0,
          "%s: every source record has its line in report (%d of %d "
          "missing, %d at a CPU's end)" % (name, len(missing), len(theirs),
                                           len([k for k in missing
                                                if k in ends])))

    # chain64's records found by their frames, not by comm: the kernel's
    # comm cache may still give its pid the name of the trace-cmd that
    # forked it
    rc, fo = sh([sr, "folded", "-i", dat, "--sysroot", sysroot])
    got = sum(int(ln.rsplit(" ", 1)[1]) for ln in fo.splitlines()
              if CHAIN + ";" in ln)
    check(rc == 0 and got >= 20,
          "%s: chain64's user stacks resolve to %s through --sysroot "
          "(%d records)" % (name, CHAIN, got))
    rc, fo = sh([sr, "folded", "-i", dat])
    check(rc == 0 and "ustack_f1" not in fo,
          "%s: without --sysroot they do not (this host has not the files)"
          % name)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    sr, top = sys.argv[1], sys.argv[2]
    dirs = sorted(os.path.dirname(p) for p in
                  glob.glob(os.path.join(top, "*", "crossread", "rec.dat")))
    if not dirs:
        print("# no */crossread/rec.dat in %s: skipped" % top)
        return 77
    for d in dirs:
        one(sr, d)
    print("# %d recording(s), %d failed" % (len(dirs), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
