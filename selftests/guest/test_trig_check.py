#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""test_trig_check.py - trig_check.py's "pairs" on synthetic traces.

Each test writes the per-CPU trace files of one instance, as the kernel
prints them (irq-info on: the flags column, whose third character is the
context), and runs the check. A source record's id record (and the kernel
stacktrace trigger's "<stack trace>") may be separated from it by the
records of an interrupt on that CPU; an id record must still go to the
record it was written for, or the check fails.

Run by the core stage of scripts/check (ctest, selftests/core), or alone:
  python3 selftests/guest/test_trig_check.py -v
"""
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trig_check  # noqa: E402  (after the path)
from fsmb import Check  # noqa: E402

KSYMS = """\
ffffffff81000000 T do_sys_openat2
ffffffff81000100 T __x64_sys_openat
ffffffff81000200 T do_syscall_64
ffffffff81000300 T try_to_wake_up
ffffffff81000400 T __schedule
ffffffff81000500 T uprobe_dispatcher
"""
# the stack of the fsmkp source records: ours (stack_def) and the kernel's
STACK_IPS = "{0xffffffff81000010,0xffffffff81000110,0xffffffff81000210}"
KSTACK = [" => do_sys_openat2+0x10/0x100",
          " => __x64_sys_openat+0x10/0x100",
          " => do_syscall_64+0x10/0x100"]

TASK, SOFTIRQ, HARDIRQ, NMI = "d..1.", "..s1.", "d.h2.", "d.Z3."
UPROBE = "DNZff"


def rec(ev, rest="", ctx=TASK, pid=100, comm="bash", ts=[0]):
    """One trace line (a record header) of CPU 1, in the kernel's format."""
    ts[0] += 1
    flags = (ctx + " ") if ctx else ""
    head = "%16s-%-7d [001] %s%6d.%06d: " % (comm, pid, flags, 100, ts[0])
    if ev == "<stack trace>":
        return [head + ev] + KSTACK
    return [head + "%s: %s" % (ev, rest)]


def src(ctx=TASK, **kw):
    return rec("fsmkp", "(do_sys_openat2+0x4/0x100)", ctx, **kw)


def sid(ctx=TASK, n=1048577, **kw):
    return rec("stack_id", "stack_id=%d gen=1 index=%d" % (n, n & 0xfffff),
               ctx, **kw)


def sdef(ctx=TASK, n=1048577, **kw):
    return rec("stack_def", "stack_id=%d gen=1 index=%d flags=0x0 ips=%s"
               % (n, n & 0xfffff, STACK_IPS), ctx, **kw)


def sdef_short(flags, ctx=TASK, n=1048577, **kw):
    """A stack_def of the first two frames of KSTACK only."""
    return rec("stack_def", "stack_id=%d gen=1 index=%d flags=0x%x ips=%s"
               % (n, n & 0xfffff, flags,
                  "{0xffffffff81000010,0xffffffff81000110}"), ctx, **kw)


def wakeup(ctx=HARDIRQ, **kw):
    return rec("sched_wakeup", "comm=kworker/1:1 pid=30 prio=120 "
               "target_cpu=001", ctx, **kw)


def switch(**kw):
    return rec("sched_switch", "prev_comm=bash prev_pid=100 prev_prio=120 "
               "prev_state=R+ ==> next_comm=sh next_pid=200 next_prio=120",
               TASK, **kw)


class Pairs(unittest.TestCase):
    def run_pairs(self, *records, opts=(), label="t"):
        """Runs "pairs DIR fsmkp KSYMS OPTS" on one CPU file made of
        RECORDS (each a list of lines); returns (failed, output)."""
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "kallsyms"), "w") as f:
                f.write(KSYMS)
            os.mkdir(os.path.join(d, "t"))
            with open(os.path.join(d, "t", "cpu1"), "w") as f:
                f.write("# tracer: nop\n#\n")
                for r in records:
                    f.write("\n".join(r) + "\n")
            with open(os.path.join(d, "t", "cpu0"), "w") as f:
                f.write("# tracer: nop\n#\n")
            c = Check(label)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                trig_check.cmd_pairs(c, os.path.join(d, "t"), "fsmkp",
                                     os.path.join(d, "kallsyms"), *opts)
            return c.failed, out.getvalue()

    def passes(self, *records, opts=()):
        failed, out = self.run_pairs(*records, opts=opts)
        self.assertEqual(failed, 0, out)
        self.assertNotIn("not ok", out)
        self.assertIn("ok - t: every fsmkp record has exactly", out)
        return out

    def fails(self, *records, opts=(), what="every fsmkp record has exactly"):
        failed, out = self.run_pairs(*records, opts=opts)
        self.assertGreater(failed, 0, out)
        self.assertTrue([ln for ln in out.splitlines()
                         if ln.startswith("not ok - t: ") and what in ln], out)
        return out

    # --- what must pass ---
    def test_adjacent(self):
        self.passes(src(), sid(), src(), sid(), opts=("alone",))

    def test_stacktrace_adjacent(self):
        self.passes(src(), sdef(), sid(), rec("<stack trace>"),
                    opts=("stacktrace",))

    def test_stray_uprobe_stack(self):
        # a preempted uprobe hit's "<stack trace>" comes after the source
        # record the switch wrote with its pid: not the source's
        up = rec("<stack trace>")
        up = up[:1] + [" => uprobe_dispatcher+0x10/0x100"] + up[1:]
        out = self.passes(src(), sid(), sdef(), rec("<stack trace>"), up,
                          opts=("stacktrace",))
        self.assertIn("1 stray stacks of preempted uprobe hits", out)
        # the switch came from the uprobe record's own commit: the source's
        # stack has uprobe_dispatcher too, under the frames of its own
        # (arm64-debug, CI): still the source's, the other one is stray
        own = rec("<stack trace>") + [" => __schedule+0x10/0x100",
                                      " => uprobe_dispatcher+0x10/0x100"]
        deep = rec("stack_def", "stack_id=1048577 gen=1 index=1 flags=0x0 "
                   "ips=%s,0xffffffff81000410,0xffffffff81000510}"
                   % STACK_IPS[:-1])
        out = self.passes(src(), sid(), deep, own, up, opts=("stacktrace",))
        self.assertIn("1 stray stacks of preempted uprobe hits", out)
        # two stacks neither of a uprobe: still one too many, and the
        # message names both (pid, level, first frames)
        out = self.fails(src(), sid(), sdef(), rec("<stack trace>"),
                         rec("<stack trace>"), opts=("stacktrace",))
        self.assertIn("2 kernel stacks (pid 100 level 0: do_sys_openat2+0x10"
                      "/0x100 __x64_sys_openat+0x10/0x100 do_syscall_64+0x10"
                      "/0x100; pid 100 level 0: do_sys_openat2", out)
        # only a uprobe's stack: nothing is left to compare, so it fails
        self.fails(src(), sid(), sdef(), up, up, opts=("stacktrace",))

    def test_interrupt_between_source_and_id(self):
        # the debug kernel's case: an interrupt's sched_wakeup (same pid:
        # an interrupt runs on the interrupted task) between the kprobe
        # record and its id record
        self.passes(src(), wakeup(), sid(), src(), sid(), opts=("alone",))

    def test_interrupt_idle_task(self):
        self.passes(src(pid=0, comm="<idle>"),
                    wakeup(pid=0, comm="<idle>"),
                    sid(pid=0, comm="<idle>"), opts=("alone",))

    def test_interrupts_of_each_kind_between(self):
        self.passes(src(), wakeup(SOFTIRQ), wakeup(HARDIRQ), wakeup(NMI),
                    wakeup(HARDIRQ), sid(), opts=("alone",))

    def test_truncated_prefix(self):
        # a stack cut at the capture depth (TRUNCATED) is a prefix of the
        # kernel's
        self.passes(src(), sdef_short(0x14), sid(), rec("<stack trace>"),
                    opts=("stacktrace",))

    def test_short_not_truncated_fails(self):
        # the same prefix without the flag is a wrong stack
        self.fails(src(), sdef_short(0x10), sid(), rec("<stack trace>"),
                   opts=("stacktrace",))

    def test_interrupt_separates_stacktrace(self):
        # the kernel's stacktrace trigger's record can be separated the
        # same way, before or after our id record
        self.passes(src(), wakeup(), sdef(), sid(), rec("<stack trace>"),
                    src(), sid(), wakeup(), rec("<stack trace>"),
                    opts=("stacktrace",))

    def test_nested_source_in_interrupt(self):
        # a source record in the interrupt has its own id record there;
        # the interrupted one's comes after the interrupt
        self.passes(src(), src(HARDIRQ), sid(HARDIRQ, n=1048578), sid(),
                    opts=("alone",))

    def test_uprobe_context_borrowed(self):
        # 6.1's uprobe records (preemptible: tracing_gen_ctx_dec() takes
        # the context one below zero) read "DNZff": a task, not an NMI
        self.passes(src(UPROBE), sid(), rec("<stack trace>", ctx=UPROBE),
                    sdef(), src(UPROBE), wakeup(), sid(),
                    rec("<stack trace>", ctx=UPROBE), opts=("stacktrace",))
        self.fails(src(UPROBE), switch(), sid(), opts=("alone",),
                   what="every id record follows")

    def test_cut_after_interrupt(self):
        # the window's end after an interrupt that came between
        self.passes(src(), sid(), src(), wakeup(), opts=("cut",))

    def test_cut_between_the_triggers(self):
        # tracing_on=0 between the two triggers' records of the last
        # source record, in either order
        self.passes(src(), sdef(), sid(), rec("<stack trace>"), src(), sid(),
                    opts=("stacktrace", "cut"))
        self.passes(src(), sdef(), sid(), rec("<stack trace>"), src(),
                    rec("<stack trace>"), opts=("stacktrace", "cut"))
        # ... but a cut group's id records are still counted
        self.fails(src(), sdef(), sid(), rec("<stack trace>"), src(), sid(),
                   sid(), opts=("stacktrace", "cut"), what="id records, want 1")

    def test_cut_between_id_and_def(self):
        # tracing_on=0 between a first use's id record and its stack_def
        # (the last group of the CPU file): its stack is not compared
        last = (src(), sid(n=1048578), rec("<stack trace>"))
        self.passes(src(), sdef(), sid(), rec("<stack trace>"), *last,
                    opts=("stacktrace", "cut"))
        self.fails(src(), sdef(), sid(), rec("<stack trace>"), *last,
                   opts=("stacktrace",))
        # only the last group may lack it
        self.fails(*last, src(), sdef(), sid(), rec("<stack trace>"),
                   opts=("stacktrace", "cut"))

    # --- what must fail ---
    def test_id_of_the_interrupt_is_not_the_sources(self):
        # the id record is in the interrupt: it was written for the
        # interrupt's record, not for the source record (wrong pairing)
        self.fails(src(), wakeup(), sid(HARDIRQ))

    def test_id_of_the_interrupt_is_an_orphan(self):
        self.fails(src(), wakeup(), sid(HARDIRQ), sid(), opts=("alone",),
                   what="every id record follows")

    def test_id_after_foreign_record_of_same_context(self):
        # the same context wrote another record: the id is that one's
        self.fails(src(), wakeup(TASK), sid())
        self.fails(src(), sid(), wakeup(TASK), sid(), opts=("alone",),
                   what="every id record follows")

    def test_id_after_context_switch(self):
        # another task wrote records between them (preemption): an id
        # record after that is not the source record's
        self.fails(src(), switch(), wakeup(TASK, pid=200, comm="sh"),
                   sid())
        self.fails(src(), sid(pid=200, comm="sh"))

    def test_missing_id(self):
        self.fails(src(), sid(), src())
        self.fails(src(), src(), sid())
        self.fails(src(), wakeup(), src(), sid())

    def test_id_without_source(self):
        self.fails(src(), sid(), wakeup(TASK), sid(), opts=("alone",),
                   what="every id record follows")
        self.fails(src(), sid(), sid(), what="every fsmkp record has exactly")

    def test_cut_is_only_at_the_end(self):
        self.fails(src(), wakeup(TASK), src(), sid(), opts=("cut",))
        self.fails(src(), sdef(), sid(), src(), sid(),
                   rec("<stack trace>"), opts=("stacktrace", "cut"),
                   what="kernel stacks")
        # without "cut" the window's end is a missing record
        self.fails(src(), sdef(), sid(), rec("<stack trace>"), src(), sid(),
                   opts=("stacktrace",), what="kernel stacks")

    def test_without_irq_info_no_guess(self):
        # no flags column: the context of a record is unknown, so a record
        # between a source and an id record is never skipped
        self.passes(src(ctx=""), sid(ctx=""), opts=("alone",))
        self.fails(src(ctx=""), wakeup(ctx=""), sid(ctx=""))



class Orphans(unittest.TestCase):
    """ "orphans DIR SRC": no id record without its own SRC record (review
    s8 F1: tracing turned on inside the kernel's probe)."""

    def run_orphans(self, *records):
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "t"))
            with open(os.path.join(d, "t", "cpu1"), "w") as f:
                f.write("# tracer: nop\n#\n")
                for r in records:
                    f.write("\n".join(r) + "\n")
            c = Check("o")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                trig_check.cmd_orphans(c, os.path.join(d, "t"), "fsmkp")
            return c.failed, out.getvalue()

    def test_own_ids(self):
        failed, out = self.run_orphans(src(), sid(), src(), wakeup(), sid())
        self.assertEqual(failed, 0, out)

    def test_second_id_after_one_source(self):
        # [SRC][id][id]: the second one's SRC record went nowhere
        failed, out = self.run_orphans(src(), sid(), sid(n=1048578))
        self.assertGreater(failed, 0, out)

    def test_id_after_another_record(self):
        failed, out = self.run_orphans(switch(), sid())
        self.assertGreater(failed, 0, out)

class SameFrame(unittest.TestCase):
    """same_frame(): our (name+off, module, ip) against the kernel's."""

    def test_zero_address(self):
        # arm64, a sched_switch in a kretprobe's handler: the frame after
        # __kretprobe_trampoline is 0, "0" in the kernel's stacktrace
        self.assertTrue(trig_check.same_frame(("0x0", "", 0), ("0", "", 0)))

    def test_zero_is_not_a_named_frame(self):
        self.assertFalse(trig_check.same_frame(
            ("el0_svc_common+0xf8", "", 0xffff800008012345), ("0", "", 0)))


if __name__ == "__main__":
    unittest.main()
