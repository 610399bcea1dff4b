#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ustack_entry.py [--perf SCRIPT] [--nr NR] TRACE MAPS PROG PID - compare,
event by event, the user stacks of ftrace_stackmap with the kernel's own
(options/userstacktrace, or perf's callchains).

--nr NR: the getppid syscall number (110, x86-64; 173 on arm64).
--perf SCRIPT: the kernel's user stacks are the user part of the callchains
of `perf script -F tid,ip,dso` (perf record -g of the same getppid
sys_enter events of PID, in the same order), not <user stack trace>
entries (arm64 6.1 has no userstacktrace).

TRACE is an instance's `trace` file in which raw_syscalls:sys_enter is a
source event, options/stackmap, options/stackmap_user and
options/userstacktrace are on, and PROG (selftests/guest/ustack/entry.c,
process PID) made its getppid calls alternately from entry_caller_a and
entry_caller_b. MAPS holds PROG's own /proc/self/maps lines (its output).

For each getppid sys_enter of PID, in trace order:
  - the kernel's user stack: the <user stack trace> entry right after it;
  - ours: the cookie of the id record (stack_id_user, or stack_fallback)
    that follows it, and the
    user_stack record of that cookie (frames inline, or from the first
    record of its ustack_id; file paths from the file_map records).
Both are turned into (path, file offset): the kernel's addresses through
PROG's mappings, ours are (file id -> path, offset) already.

Prints key=value lines for the shell test:
  events         getppid events of PID
  cookies        events whose stack_id record carries a cookie
  distinct       distinct cookies among them (one kernel entry each)
  compared       events with both stacks
  frames         frames compared (in PROG, among the kernel's 8)
  mismatch       events whose stacks differ somewhere both print
  caller_wrong   events whose caller frame is not the expected a/b
  examples       up to 3 mismatching events, for the diagnostics
"""
import sys

from ustack_trace import (UserStacks, ints, kv, prog_functions,
                          prog_mapper, records)


def main():
    args = sys.argv[1:]
    perf_script, nr = None, 110
    while args and args[0].startswith('--'):
        if args[0] == '--perf':
            perf_script = args[1]
        elif args[0] == '--nr':
            nr = int(args[1])
        else:
            sys.exit('ustack_entry.py: unknown option %s' % args[0])
        args = args[2:]
    trace, maps_file, prog, pid = args[0], args[1], args[2], args[3]
    nr_prefix = 'NR %d ' % nr
    k2file = prog_mapper(maps_file, prog)

    func_of = prog_functions(prog)

    us = UserStacks()
    ours = {}          # cookie -> list of (path, off)
    events = []        # [kernel frames, cookie]
    want = {}          # per pid: what the next lines are
    mine = str(pid)

    for p, ev, rest, addrs in records(trace):
        if us.take(ev, rest):
            if ev == 'user_stack':
                ours[us.cookie] = us.named()
            continue
        if p != mine:
            continue
        st = want.get(p)
        if ev == 'sys_enter' and rest.startswith(nr_prefix):
            events.append([[], None])
            # with --perf there is no <user stack trace> entry
            want[p] = 'stack_id' if perf_script else 'kstack'
        elif ev == '<user stack trace>':
            # not the one the kernel adds after our own records
            if st == 'kstack':
                events[-1][0] = addrs
                want[p] = 'stack_id'
        elif ev in ('stack_id', 'stack_id_user', 'stack_fallback') and st == 'stack_id':
            c = ints(kv(rest).get('cookie', '{}'))
            events[-1][1] = c[0] if c else None
            want[p] = None

    if perf_script is not None:
        # perf script -F tid,ip,dso: a "TID" line per sample, then one
        # "ADDR (DSO)" line per callchain entry (kernel ones first), a
        # blank line between samples. perf prints a user address as the
        # offset in its file (map_ip(): ip - start + pgoff), so entries
        # are (path, file offset) like ours; PROG's only, as k2file()
        # gives for userstacktrace. Samples of PID only (perf's filter
        # keeps its getppid calls), in order, one per event.
        samples, cur = [], None
        for ln in open(perf_script, errors='replace'):
            f = ln.split()
            if not f:
                cur = None
                continue
            if cur is None:
                cur = [] if f[0] == mine else False
                if cur is not False:
                    samples.append(cur)
                continue
            if cur is not False and len(f) >= 2:
                dso = f[1].strip('()')
                cur.append((dso, int(f[0], 16)) if not dso.startswith('[') else None)
        print('kernel_samples=%d' % len(samples))
        for i, st in enumerate(samples[:len(events)]):
            # kernel frames (None) dropped: the user part, innermost first
            events[i][0] = [x for x in st if x is not None]

    cookies = [e[1] for e in events if e[1]]
    compared = frames = mismatch = caller_wrong = 0
    examples = []
    for i, (kst, c) in enumerate(events):
        expect = 'entry_caller_a' if i % 2 == 0 else 'entry_caller_b'
        o = ours.get(c) if c else None
        if o is None or not kst:
            continue
        compared += 1
        bad = False
        for j, addr in enumerate(kst):
            if isinstance(addr, tuple):   # --perf: (path, offset) already
                kf = addr if addr[0] == prog else None
            else:
                kf = k2file(addr)
            if kf is None or j >= len(o):
                continue
            frames += 1
            if kf != o[j]:
                bad = True
        if bad:
            mismatch += 1
            if len(examples) < 3:
                examples.append('event %d cookie %#x kernel %s ours %s' % (
                    i, c, [a if isinstance(a, tuple) else k2file(a) for a in kst[:3]], o[:3]))
        if len(o) < 2 or o[1][0] != prog or func_of(o[1][1] - 1) != expect:
            caller_wrong += 1
            if len(examples) < 3:
                examples.append('event %d cookie %#x: caller %s, want %s' % (
                    i, c, func_of(o[1][1] - 1) if len(o) > 1 else None, expect))
    print('events=%d' % len(events))
    print('cookies=%d' % len(cookies))
    print('distinct=%d' % len(set(cookies)))
    print('compared=%d' % compared)
    print('frames=%d' % frames)
    print('mismatch=%d' % mismatch)
    print('caller_wrong=%d' % caller_wrong)
    for e in examples:
        print('example=%s' % e)


if __name__ == '__main__':
    main()
