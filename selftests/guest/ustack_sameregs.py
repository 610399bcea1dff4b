#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ustack_sameregs.py [--nr NR] TRACE MAPS PROG PID - the user stacks of a
run of kernel entries with identical user registers.

TRACE is an instance's `trace` file in which raw_syscalls:sys_exit is a
source event, options/stackmap and options/stackmap_user are on (and
options/userstacktrace where the kernel records user stacks), and PROG
(selftests/guest/ustack/sameregs.c, process PID) made its getppid calls:
N from sr_loop's one syscall instruction, then one from sr_tail. MAPS
holds PROG's own /proc/self/maps lines (its output). --nr NR: getppid's
number (110 x86-64, 173 arm64).

For each getppid sys_exit of PID, in trace order: our id record
(stack_id_user with a cookie, or a plain stack_id: no user stack, "none"),
the user_stack record of that cookie, and the kernel's <user stack trace>
right after the event, if any.

Prints key=value lines for the shell test:
  events       getppid events of PID
  stacked      events with a user stack (a cookie and its user_stack record)
  prefix       how many events in a row, from the first, have one
  none         events with a plain stack_id record (no cookie)
  orphan       events with a cookie but no user_stack record for it
  tail         1 if the last event (sr_tail's) has a user stack
  walked       stacked events whose record says reason 0 (walked)
  func_wrong   stacked events whose frame 0 is not in sr_loop (sr_tail for
               the last) or frame 1 not in main
  compared     stacked events with the kernel's user stack too
  mismatch     compared events whose stacks differ where both print
  frames       frames compared (in PROG)
  example      up to 3 wrong events, for the diagnostics
"""
import sys

from ustack_trace import (UserStacks, ints, kv, prog_functions,
                          prog_mapper, records)


def main():
    args = sys.argv[1:]
    nr = 110
    if args[:1] == ['--nr']:
        nr, args = int(args[1]), args[2:]
    trace, maps_file, prog, pid = args
    nr_prefix = 'NR %d ' % nr
    k2file = prog_mapper(maps_file, prog)

    func_of = prog_functions(prog)
    us = UserStacks()
    ours = {}          # cookie -> (frames as (path, off), reason)
    events = []        # [kernel addresses, cookie or None, id record seen]
    want = None        # what the next lines of PID are
    for p, ev, rest, addrs in records(trace):
        if us.take(ev, rest):
            if ev == 'user_stack' and us.cookie:
                ours[us.cookie] = (us.named(), us.fields.get('reason'))
            continue
        if p != pid:
            continue
        if ev == 'sys_exit' and rest.startswith(nr_prefix):
            events.append([[], None, False])
            want = 'any'
        elif ev == '<user stack trace>':
            # the kernel's stack of the event (before our id record), or
            # the one it adds after our own records (ignored)
            if want == 'any' and not events[-1][0]:
                events[-1][0] = addrs
        elif ev in ('stack_id', 'stack_id_user', 'stack_fallback') and want == 'any':
            c = ints(kv(rest).get('cookie', '{}')) if ev != 'stack_id' else []
            events[-1][1] = c[0] if c else None
            events[-1][2] = True
            want = None

    n = len(events)
    stacked = none = orphan = walked = func_wrong = 0
    compared = mismatch = frames = prefix = 0
    in_prefix = True
    examples = []
    for i, (kst, c, seen) in enumerate(events):
        has = c is not None and c in ours
        if c is None and seen:
            none += 1
        if c is not None and c not in ours:
            orphan += 1
        in_prefix = in_prefix and has
        prefix += in_prefix
        if not has:
            continue
        stacked += 1
        o, reason = ours[c]
        walked += reason == '0'
        want_fn = 'sr_tail' if i == n - 1 else 'sr_loop'
        f0 = func_of(o[0][1]) if o and o[0][0] == prog else None
        f1 = func_of(o[1][1] - 1) if len(o) > 1 and o[1][0] == prog else None
        if (f0, f1) != (want_fn, 'main'):
            func_wrong += 1
            if len(examples) < 3:
                examples.append('event %d cookie %#x: frames in %s, %s; want %s, main'
                                % (i, c, f0, f1, want_fn))
        if not kst:
            continue
        compared += 1
        bad = False
        for j, addr in enumerate(kst):
            kf = k2file(addr)
            if kf is None or j >= len(o):
                continue
            frames += 1
            bad = bad or kf != o[j]
        if bad:
            mismatch += 1
            if len(examples) < 3:
                examples.append('event %d cookie %#x kernel %s ours %s' % (
                    i, c, [k2file(a) for a in kst[:3]], o[:3]))
    tail = int(bool(events) and events[-1][1] is not None and events[-1][1] in ours)
    for k, v in (('events', n), ('stacked', stacked), ('prefix', prefix),
                 ('none', none), ('orphan', orphan), ('tail', tail),
                 ('walked', walked), ('func_wrong', func_wrong),
                 ('compared', compared), ('mismatch', mismatch),
                 ('frames', frames)):
        print('%s=%d' % (k, v))
    for e in examples:
        print('example=%s' % e)


if __name__ == '__main__':
    main()
