#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ustack_frameless.py TRACE MAPS PROG PID INO - the fstat events of
selftests/guest/ustack/frameless.c (process PID), ours against the kernel's.

TRACE: an instance's `trace` with raw_syscalls:sys_enter as a source,
options/stackmap, options/stackmap_user and options/userstacktrace on.
MAPS: PROG's /proc/self/maps lines. INO: the inode number fstat() wrote
where the walk on the way out reads a "return address".

Prints key=value lines:
  events         fstat (NR 5) events of PID
  kernel_stale   events whose kernel stack (read at the event) has the stale
                 return address into fl_caller as frame 1
  ours           events with a user_stack record of their cookie
  ours_ip_only   ... whose stack is the ip alone, in fl_fstat
  ours_not_code  ... whose walk stopped with not_code (stop=10)
  ours_ino       ... that print INO, or any frame in no mapping, as a frame
  ours_flagged   ... flagged unreliable (0x80)
  example        the first event's two stacks
"""
import sys

from ustack_trace import (OFF_MASK, UserStacks, ints, kv, prog_functions,
                          prog_mapper, records)

NOVMA = 1 << 58
STOP_NOT_CODE = 10


def main():
    trace, maps_file, prog, pid, ino = sys.argv[1:6]
    ino = int(ino)
    k2file, func = prog_mapper(maps_file, prog), prog_functions(prog)

    def kfunc(addr):
        kf = k2file(addr)
        return func(kf[1]) if kf else None

    us, ours = UserStacks(), {}
    events, want = [], None
    for p, ev, rest, addrs in records(trace):
        if us.take(ev, rest):
            if ev == 'user_stack':
                ours[us.cookie] = (us.frames, int(us.fields['stop']),
                                   int(us.fields['flags'], 0))
            continue
        if p != pid:
            continue
        if ev == 'sys_enter' and rest.startswith('NR 5 '):
            events.append([[], None])
            want = 'kstack'
        elif ev == '<user stack trace>':
            # not the one the kernel adds after our own records
            if want == 'kstack':
                events[-1][0] = addrs
                want = 'stack_id'
        elif ev in ('stack_id', 'stack_id_user', 'stack_fallback') and want == 'stack_id':
            c = ints(kv(rest).get('cookie', '{}'))
            events[-1][1] = c[0] if c else None
            want = None

    stale = n_ours = ip_only = not_code = bad = flagged = 0
    example = None
    for kst, c in events:
        if len(kst) >= 2 and kfunc(kst[0]) == 'fl_fstat' and kfunc(kst[1] - 1) == 'fl_caller':
            stale += 1
        o = ours.get(c) if c else None
        if o is None:
            continue
        fr, stop, flags = o
        n_ours += 1
        pairs = [(fr[i], fr[i + 1]) for i in range(0, len(fr) - 1, 2)]
        if len(pairs) == 1 and us.paths.get(pairs[0][0]) == prog and \
                func(pairs[0][1] & OFF_MASK) == 'fl_fstat':
            ip_only += 1
        not_code += stop == STOP_NOT_CODE
        flagged += bool(flags & 0x80)
        if any((w & NOVMA) or (w & OFF_MASK) == ino for _, w in pairs[1:]):
            bad += 1
        if example is None:
            example = 'kernel %s ours %s stop %d' % (
                [kfunc(a) or hex(a) for a in kst[:3]],
                [(us.paths.get(f, hex(f)), hex(w)) for f, w in pairs], stop)
    print('events=%d' % len(events))
    print('kernel_stale=%d' % stale)
    print('ours=%d' % n_ours)
    print('ours_ip_only=%d' % ip_only)
    print('ours_not_code=%d' % not_code)
    print('ours_ino=%d' % bad)
    print('ours_flagged=%d' % flagged)
    if example:
        print('example=%s' % example)


if __name__ == '__main__':
    main()
