#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ustack_threads.py [--kernel] [--nr NR] TRACE MAPS PROG TIDS - the user
stacks of the late threads of selftests/guest/ustack/threads.c.

TRACE is an instance's `trace` file with raw_syscalls:sys_enter as a source
event, options/stackmap and options/stackmap_user on (and, with --kernel,
the kernel's options/userstacktrace); MAPS holds PROG's /proc/self/maps
lines, TIDS the late threads' tids, one per line. Each late thread made one
getppid (NR, 110 on x86-64, 173 on arm64) through thr_late_start ->
thr_late_a -> thr_late_b -> thr_sys.

For each getppid sys_enter of a late thread, in trace order:
  - ours: the cookie of the id record (stack_id_user, or stack_fallback)
    that follows it and the user_stack record of that cookie (frames
    inline, or from the first record of its ustack_id; paths from the
    file_map records);
  - with --kernel, the kernel's: the <user stack trace> entry right after
    the event, its addresses turned into (path, offset) through MAPS.

Prints key=value lines:
  late_threads  tids in TIDS
  events        getppid events of those threads
  cookies       events whose id record carries a cookie
  stacks        events with a user_stack record of their cookie with frames
  chain_ok      events whose stack starts with the known chain (in PROG)
  compared      events with both stacks (--kernel)
  frames        frames compared, those in PROG among the kernel's
  mismatch      events whose stacks differ in a frame both have
  example       up to 5 events that failed, for the diagnostics
"""
import sys

from ustack_trace import (UserStacks, ints, kv, prog_functions,
                          prog_mapper, records)

CHAIN = ['thr_sys', 'thr_late_b', 'thr_late_a', 'thr_late_start']


def main():
    args = sys.argv[1:]
    kernel, nr = False, 110
    while args and args[0].startswith('--'):
        if args[0] == '--kernel':
            kernel, args = True, args[1:]
        elif args[0] == '--nr':
            nr, args = int(args[1]), args[2:]
        else:
            sys.exit('ustack_threads.py: unknown option %s' % args[0])
    trace, maps_file, prog, tids_file = args
    tids = {ln.strip() for ln in open(tids_file) if ln.strip()}
    nr_prefix = 'NR %d ' % nr
    k2file = prog_mapper(maps_file, prog)

    func_of = prog_functions(prog)
    us, ours = UserStacks(), {}
    events = []        # [tid, kernel frames, cookie]
    want, last = {}, {}
    for p, ev, rest, addrs in records(trace):
        if us.take(ev, rest):
            if ev == 'user_stack':
                ours[us.cookie] = us.named()
            continue
        if p not in tids:
            continue
        st = want.get(p)
        if ev == 'sys_enter' and rest.startswith(nr_prefix):
            events.append([p, [], None])
            last[p] = events[-1]
            want[p] = 'kstack' if kernel else 'stack_id'
        elif ev == '<user stack trace>':
            # not the one the kernel adds after our own records
            if st == 'kstack':
                last[p][1] = addrs
                want[p] = 'stack_id'
        elif ev in ('stack_id', 'stack_id_user', 'stack_fallback') and st == 'stack_id':
            c = ints(kv(rest).get('cookie', '{}'))
            last[p][2] = c[0] if c else None
            want[p] = None

    cookies = stacks = chain_ok = compared = frames = mismatch = 0
    examples = []
    for tid, kst, c in events:
        o = ours.get(c) if c else None
        cookies += c is not None
        if not o:
            examples.append('tid %s cookie %s: no user stack of ours' % (tid, c))
            continue
        stacks += 1
        names = [func_of(off - (1 if i else 0)) if path == prog else path
                 for i, (path, off) in enumerate(o[:len(CHAIN)])]
        if names == CHAIN:
            chain_ok += 1
        else:
            examples.append('tid %s cookie %#x: %s' % (tid, c, names))
        if not kernel or not kst:
            continue
        compared += 1
        bad = False
        for j, addr in enumerate(kst):
            kf = k2file(addr)
            if kf is None or j >= len(o):
                continue
            frames += 1
            bad |= kf != o[j]
        if bad:
            mismatch += 1
            examples.append('tid %s cookie %#x: kernel %s ours %s' % (
                tid, c, [k2file(a) for a in kst[:5]], o[:5]))
    print('late_threads=%d' % len(tids))
    print('events=%d' % len(events))
    print('cookies=%d' % cookies)
    print('stacks=%d' % stacks)
    print('chain_ok=%d' % chain_ok)
    print('compared=%d' % compared)
    print('frames=%d' % frames)
    print('mismatch=%d' % mismatch)
    for e in examples[:5]:
        print('example=%s' % e)


if __name__ == '__main__':
    main()
