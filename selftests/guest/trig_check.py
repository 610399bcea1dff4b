#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
"""trig_check.py - checks of the stackmap trigger (stackmap_trigger.sh).

Reads check lines on stdin, like fsm_check.py ("LABEL CHECK ARG..."):

  pairs DIR SRC KSYMS [stacktrace] [filter=FIELD=VALUE] [user] [alone]
      DIR holds the per-CPU trace files (cpuN) of one instance. On each
      CPU, every record of event SRC is followed, before the next SRC
      record, by exactly one stack id record (stack_id, stack_id_user or
      stack_fallback) - or none when filter= is given and the SRC record's
      FIELD is not VALUE. "Followed" counts the records of the SRC
      record's context only: an interrupt's records may come in between
      ("Pairing" below). With "stacktrace", it is also followed by exactly
      one kernel "<stack trace>" (options/sym-offset on), and our stack,
      symbolized with KSYMS (a copy of /proc/kallsyms taken while the
      module was loaded), equals it once the tracing frames are trimmed
      from the top of both. With "user", the id records are stack_id_user
      with a non-zero cookie. With "alone" (SRC is the only event with a
      stackmap trigger in DIR), every id record in DIR is one of those
      that follow a SRC record: none follows another record (a trigger
      fired for a record that was discarded, review M1). With
      "missing=N", up to N SRC records may have no id record (hits the
      trigger found no verdict for: trigger_no_verdict, e.g. a uprobe task
      preempted between the companion and the post trigger); never more
      than one. With "cut", the last record of a CPU file may lack its
      id record, or with "stacktrace" the kernel's stack (its id records
      are still counted, not compared), when nothing of its context
      follows it: tracing_on=0 came between the record and the rest of
      its triggers' records (counted and printed).
  count DIR SRC N
      exactly N stack id records in DIR, and more than N SRC records.
  orphans DIR SRC [maynone]
      on each CPU, every stack id record is the only one after a SRC
      record (only records of ours or the kernel's stacktrace between):
      none follows another record or another id record (an id record for
      a SRC record that went nowhere, which the reader would pair with an
      earlier record: review s8 F1); and some id records exist (not
      required with "maynone").

Pairing. A trigger writes its records in the context of the record that
fired it, right after it; an interrupt (softirq, hardirq, NMI) on that CPU
may come in between and write records of its own, all before the
interrupted context goes on (interrupts nest: the last one to come is the
first to end). The irq-info column of each record (options/irq-info, on by
default) names its context: the third flag is '.' (task), 's' (softirq),
'h'/'H' (hardirq) or 'z'/'Z' (NMI), levels 0 to 3. On a CPU:
  - a record of level L means the contexts above L have returned: the SRC
    records still waiting there (levels > L) get nothing more;
  - a SRC record of level L waits for the records of its context: this
    module's and the stacktrace trigger's records of level L and of its
    task (pid) go to it;
  - any other record of level L, or a record of level L of another task
    (the task was switched out), ends the wait of level L: an id record
    after it is not that SRC record's (it has no SRC record: an orphan).
Records of a higher level in between are skipped, whatever their pid
(an interrupt's records carry the interrupted task's pid) and event; an
id record of a higher level is the interrupt's own, never the waiting SRC
record's. Without the irq-info column every record is of level 0: nothing
is skipped. A record written with preemption enabled through
trace_event_buffer_reserve() (6.1: a uprobe event, and the stacktrace
trigger's record after it) has a context taken one below zero
(tracing_gen_ctx_dec(): the borrow sets every flag): its preempt-depth
and migrate-disable columns read "ff", its other flags are meaningless,
and its level is 0 (a task; nothing else runs preemptible).
The same preemption also moves the kernel's own stack: a uprobe hit whose
task is switched out after its record is committed runs the stacktrace
trigger only when the task runs again, so its "<stack trace>" (with
the uprobe handler on top) may come after a record the switch wrote with
the task's pid (a synthetic event fed by sched_switch; if the switch came
from the uprobe record's own commit, that record's stack has the uprobe
handler too, deeper, under __schedule). A group with more than one kernel
stack drops those with the uprobe handler on top when one without it is
left (counted and printed); our id records are never moved that way.
"""
import bisect
import glob
import os
import re
import sys

from fsmb import Bad, Check

HEAD = re.compile(r"^\s*(?P<task>.+?)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?"
                  r"\[(?P<cpu>\d+)\]\s+(?:(?P<flags>\S+)\s+)?"
                  r"(?P<ts>\d+\.\d+):\s+(?P<rest>.*)$")
# the irq-info flags' third character (trace_print_lat_fmt) -> the level of
# the context a record was written in (see "Pairing")
LEVELS = {".": 0, "s": 1, "h": 2, "H": 2, "z": 3, "Z": 3}
ID_EVENTS = ("stack_id", "stack_id_user", "stack_fallback")
# records of this module and of the kernel's stacktrace: anything else
# (another event) of its context ends the records that follow a source
# record
OURS = ID_EVENTS + ("stack_def", "stack_reset", "user_stack", "file_map",
                    "<stack trace>")
MAXD = 64   # FSM_MAX_KERNEL_DEPTH

# Frames of the tracing machinery at the top of a trigger's stack: the
# trigger call, the commit, the event's probe, the tracepoint iterator,
# kprobe and syscall event handlers; and this module's own frames.
TRIM_NAMES = {
    "event_triggers_post_call", "trace_event_buffer_commit",
    "kprobe_trace_func", "__kprobe_trace_func", "kprobe_dispatcher",
    "kretprobe_dispatcher", "kprobe_ftrace_handler", "ftrace_syscall_enter",
    "ftrace_syscall_exit", "trace_sys_enter", "trace_sys_exit",
}
TRIM_PREFIX = ("trace_event_raw_event_", "__traceiter_", "perf_trace_",
               "__bpf_trace_")


BYNAME = {}  # symbol name -> its addresses (load_ksyms)
KSYMS = {}  # path -> load_ksyms' result: one parse per file and run


def load_ksyms(path):
    """The text symbols of a kallsyms copy, parsed once per run: a suite
    passes the same copy to each of its checks, and under TCG a parse
    of the debug kernel's (about 150,000 lines) costs seconds."""
    if path in KSYMS:
        return KSYMS[path]
    syms = []
    with open(path) as f:
        lines = f.readlines()
    for line in lines:
        p = line.split()
        if len(p) < 3 or p[1] not in "tTwW":
            continue
        a = int(p[0], 16)
        if a:
            syms.append((a, p[2], p[3] if len(p) > 3 else ""))
            BYNAME.setdefault(p[2], []).append(a)
    syms.sort()
    KSYMS[path] = ([s[0] for s in syms], syms)
    return KSYMS[path]


def same_frame(o, t):
    """Our frame (name+off, mod, ip) and the kernel's (name+off, mod, _):
    equal, or two names of one address (aliases: the kernel may print the
    other one, e.g. lru_add_drain / lru_add_and_bh_lrus_drain)."""
    if o[0] == t[0]:
        return True
    if t[0] == "0":
        # a return address of 0 (arm64: the frame after a kretprobe's
        # trampoline while its handler runs), which the kernel prints bare
        return o[2] == 0
    if t[0].startswith("0x"):
        # the kernel prints an address it cannot name (the ftrace
        # trampoline of a kprobe) as 0x...: compare it with our address
        return int(t[0], 16) == o[2]
    name, _, off = t[0].partition("+")
    try:
        off = int(off, 16) if off else 0
    except ValueError:
        return False
    return any(a + off == o[2] for a in BYNAME.get(name, ()))


def symbolize(ksyms, ip):
    addrs, syms = ksyms
    i = bisect.bisect_right(addrs, ip) - 1
    if i < 0:
        return "0x%x" % ip, ""
    a, name, mod = syms[i]
    return "%s+0x%x" % (name, ip - a), mod


def machinery(name):
    """A frame of the tracing machinery (TRIM_NAMES, TRIM_PREFIX)."""
    return name in TRIM_NAMES or name.startswith(TRIM_PREFIX)


def trim(frames):
    """frames: [(name+off, module, ip)]: drop the tracing frames on top."""
    i = 0
    while i < len(frames):
        name = frames[i][0].split("+")[0]
        if frames[i][1] == "[ftrace_stackmap]" or machinery(name):
            i += 1
            continue
        break
    return frames[i:]


class Rec:
    """One record: event name, the text after it, the " => " lines of a
    "<stack trace>", its context's level and its pid."""
    __slots__ = ("ev", "rest", "stack", "level", "pid")

    def __init__(self, ev, rest, level, pid):
        self.ev, self.rest, self.stack = ev, rest, []
        self.level, self.pid = level, pid


def read_cpu(path):
    """Records of one per-CPU file: [Rec]."""
    out = []
    with open(path, errors="replace") as f:
        lines = f.readlines()
    for line in lines:
        line = line.rstrip("\n")
        if line.startswith("#") or not line:
            continue
        if line.startswith(" => "):
            if out:
                out[-1].stack.append(line[4:].strip())
            continue
        m = HEAD.match(line)
        if not m:
            continue
        rest = m.group("rest")
        flags = m.group("flags") or ""
        level = 0 if flags[3:5] == "ff" else LEVELS.get(flags[2:3], 0)
        pid = int(m.group("pid"))
        if rest.startswith("<stack trace>"):
            out.append(Rec("<stack trace>", "", level, pid))
            continue
        # "name: fields", or "sys_openat(dfd: ...)" for syscall events
        m = re.match(r"([\w:]+?)(?::\s|\(|$)", rest)
        ev = m.group(1) if m else rest.split()[0]
        out.append(Rec(ev.split(":")[-1], rest[len(ev):].lstrip(": "), level,
                       pid))
    return out


UPROBE_TOP = ("__uprobe_trace_func", "uprobe_trace_func", "uprobe_dispatcher")


def from_uprobe(k):
    """A "<stack trace>" record written by a uprobe's stacktrace trigger:
    its first frame below the tracing machinery is the uprobe handler's.
    A record the preempted hit's switch wrote has uprobe_dispatcher too,
    but deeper, under __schedule (preempt_schedule_notrace in the uprobe
    record's commit): that stack is the switch's own."""
    for x in k.stack:
        name = x.split("+")[0].split("/")[0]
        if machinery(name):
            continue
        return name in UPROBE_TOP
    return False


class Group:
    """A SRC record and the records of its context that go with it."""

    def __init__(self, r):
        self.rec = r
        self.ids, self.kst = [], []
        self.open = True    # still waiting (at the end: cut by the window)


def pair(recs, src):
    """The SRC records of one CPU's records as Groups (see "Pairing"), and
    the indices of the id records that went to one."""
    groups, owned = [], set()
    waiting = {}    # level -> the Group waiting there
    for j, r in enumerate(recs):
        for lv in [lv for lv in waiting if lv > r.level]:
            waiting.pop(lv).open = False
        g = waiting.get(r.level)
        if g and (r.ev not in OURS or r.pid != g.rec.pid):
            g.open = False
            del waiting[r.level]
            g = None
        if r.ev == src:
            waiting[r.level] = Group(r)
            groups.append(waiting[r.level])
        elif g and r.ev in ID_EVENTS:
            g.ids.append(r)
            owned.add(j)
        elif g and r.ev == "<stack trace>":
            g.kst.append(r)
    return groups, owned


def array(text):
    return [int(x, 0) for x in re.split(r"[,\s]+", text.strip("{}[] ")) if x]


def field(rest, name):
    m = re.search(r"(?:^|\s)%s=(\S+)" % re.escape(name), rest)
    return m.group(1) if m else None


def cpu_files(d):
    files = sorted(glob.glob(os.path.join(d, "cpu*")))
    if not files:
        raise Bad("no per-CPU files in %s" % d)
    return files


TRUNCATED = 0x4    # FSM_SID_F_TRUNCATED (stack_def and stack_fallback flags)


def truncated(rest):
    f = field(rest, "flags")
    return f is not None and int(f, 0) & TRUNCATED != 0


def defs_of(files):
    """stack_id -> (ips, truncated), from the stack_def records of all
    files."""
    defs = {}
    for f in files:
        for r in read_cpu(f):
            if r.ev == "stack_def":
                defs[int(field(r.rest, "stack_id"))] = (array(
                    r.rest.split("ips=", 1)[1]), truncated(r.rest))
    return defs


def cmd_pairs(c, d, src, ksymf, *opts):
    st = "stacktrace" in opts
    user = "user" in opts
    alone = "alone" in opts
    nall = nown = 0
    orphans = []
    filt = [o[7:].split("=", 1) for o in opts if o.startswith("filter=")]
    missing = sum(int(o[8:]) for o in opts if o.startswith("missing="))
    cut = "cut" in opts
    nmiss = ncut = nstray = 0
    files = cpu_files(d)
    ksyms = load_ksyms(ksymf)
    defs = defs_of(files)
    nsrc = nid = ncmp = 0
    bad = []
    for f in files:
        recs = read_cpu(f)
        nall += sum(r.ev in ID_EVENTS for r in recs)
        groups, owned = pair(recs, src)
        nown += len(owned)
        for i, r in enumerate(recs):
            if alone and r.ev in ID_EVENTS and i not in owned and \
                    len(orphans) < 3:
                orphans.append("%s record %d: %s (level %d) after %s" % (
                    os.path.basename(f), i, r.ev, r.level,
                    ["%s/%d" % (x.ev, x.level)
                     for x in recs[max(0, i - 3):i]]))
        for g in groups:
            ids, kst = g.ids, g.kst
            nsrc += 1
            want = 1
            if filt and field(g.rec.rest, filt[0][0]) != filt[0][1]:
                want = 0
            # the window's end came between the record and the rest of
            # its triggers' records (stacktrace and stackmap run in
            # either order): only the last group of each context level of
            # a CPU file is open. Without its id record nothing is left
            # to check; without the kernel's stack, the id records still
            # are (their count, the cookie), only not compared.
            nokst = False
            if cut and g.open and want and not ids:
                ncut += 1
                continue
            if cut and g.open and st and not kst:
                ncut += 1
                nokst = True
            if want and not ids and nmiss < missing:
                nmiss += 1
                continue
            if len(ids) != want:
                bad.append("%s #%d: %d id records, want %d"
                           % (os.path.basename(f), nsrc, len(ids), want))
                continue
            if st and len(kst) > 1:
                own = [k for k in kst if not from_uprobe(k)]
                if own and len(own) < len(kst):
                    nstray += len(kst) - len(own)
                    kst = own
            if st and not nokst and len(kst) != 1:
                # each stack's pid, level and first frames: a rare
                # failure must name its cause in the one line CI keeps
                bad.append("%s #%d: %d kernel stacks (%s)"
                           % (os.path.basename(f), nsrc, len(kst), "; ".join(
                               "pid %d level %d: %s" % (
                                   k.pid, k.level, " ".join(
                                       x.split()[0] for x in k.stack[:6]))
                               for k in kst)))
                continue
            if not want:
                continue
            nid += 1
            ev, rest = ids[0].ev, ids[0].rest
            if user:
                ck = field(rest, "cookie")
                if ev != "stack_id_user" or not ck or int(ck, 16) == 0:
                    bad.append("#%d: not a stack_id_user with a cookie: %s %s"
                               % (nsrc, ev, rest))
                    continue
            if not st or nokst:
                continue
            if ev == "stack_fallback":
                ips = array(rest.split("ips=", 1)[1])
                trunc = truncated(rest)
            else:
                sid = int(field(rest, "stack_id"))
                if sid not in defs and cut and g.open:
                    # the window's end between a first use's id record
                    # and its stack_def (written right after it)
                    ncut += 1
                    continue
                if sid not in defs:
                    bad.append("#%d: id %d has no stack_def" % (nsrc, sid))
                    continue
                ips, trunc = defs[sid]
            ours = trim([symbolize(ksyms, ip) + (ip,) for ip in ips])
            theirs = trim([(re.sub(r"/0x[0-9a-f]+$", "", x.split()[0]),
                            "[%s]" % x.split("[", 1)[1] if "[" in x else "",
                            None)
                           for x in kst[0].stack])
            ok = len(ours) <= len(theirs) and \
                all(same_frame(o, t) for o, t in zip(ours, theirs)) and \
                (len(ours) == len(theirs) or len(ips) >= MAXD or trunc)
            ours = [o[0] for o in ours]
            theirs = [t[0] for t in theirs]
            if not ok:
                i = next((k for k, (o, t) in enumerate(zip(ours, theirs))
                          if o != t), min(len(ours), len(theirs)))
                bad.append("#%d: ours %s != stacktrace %s (lengths %d/%d "
                           "of %d ips%s; first difference at %d: %s / %s)"
                           % (nsrc, ours[:6], theirs[:6], len(ours),
                              len(theirs), len(ips),
                              ", truncated" if trunc else "", i,
                              ours[i:i + 3], theirs[i:i + 3]))
                continue
            ncmp += 1
    c.diag("%s: %d source records, %d with an id record, %d stacks compared"
           % (d, nsrc, nid, ncmp) +
           (", %d without one (of %d no-verdict hits)" % (nmiss, missing)
            if missing else "") +
           (", %d cut by the window's end" % ncut if ncut else "") +
           (", %d stray stacks of preempted uprobe hits" % nstray
            if nstray else ""))
    if filt:
        c.ok("the filter kept some records and refused others",
             0 < nid < nsrc, "%d of %d kept" % (nid, nsrc))
    for o in orphans:
        c.diag(o)
    if alone:
        c.eq("%s: every id record follows a %s record" % (d, src),
             nall - nown, 0)
    for b in bad[:5]:
        c.diag(b)
    c.ok("every %s record has exactly the id records it should" % src
         + (" and its stack equals stacktrace's" if st else ""),
         nsrc > 0 and nid > 0 and not bad,
         # the first wrong one goes into the "not ok" line itself, so that
         # a summary that keeps only failing lines (CI's) still shows it
         "%d of %d wrong, first: %s" % (len(bad), nsrc, bad[0][:400])
         if bad else "no records")


def cmd_count(c, d, src, n):
    files = cpu_files(d)
    nsrc = nid = 0
    for f in files:
        for r in read_cpu(f):
            nsrc += r.ev == src
            nid += r.ev in ID_EVENTS
    c.ok("%s: %d source records > %s" % (d, nsrc, n), nsrc > int(n),
         "too few source records")
    c.eq("exactly %s stack id records" % n, nid, int(n))


def cmd_orphans(c, d, src, *opts):
    """An id record is an orphan (its SRC record went nowhere, and the
    reader would give it to an earlier record) when pair() gives it to no
    SRC record, or when its SRC record already had an id record of its
    kind before it: [SRC][id][id]. Records of interrupts in between are
    skipped as in pairs."""
    nid = nsrc = 0
    bad = []
    for f in cpu_files(d):
        recs = read_cpu(f)
        groups, owned = pair(recs, src)
        nsrc += len(groups)
        extra = set()
        for g in groups:
            seen = set()
            for r in g.ids:
                if r.ev in seen:
                    extra.add(id(r))
                seen.add(r.ev)
        for i, r in enumerate(recs):
            if r.ev not in ID_EVENTS:
                continue
            nid += 1
            if (i not in owned or id(r) in extra) and len(bad) < 5:
                bad.append("%s record %d: %s after %s" % (
                    os.path.basename(f), i, r.ev,
                    [x.ev for x in recs[max(0, i - 3):i]]))
    for b in bad:
        c.diag(b)
    c.diag("%s: %d %s records, %d id records" % (d, nsrc, src, nid))
    c.ok("%s: every id record follows its own %s record" % (d, src),
         (nid > 0 or "maynone" in opts) and not bad,
         "%d id records, %d orphans shown" % (nid, len(bad)))


CMDS = {"pairs": cmd_pairs, "count": cmd_count, "orphans": cmd_orphans}


def main():
    failed = 0
    for line in sys.stdin:
        w = line.split()
        if not w:
            continue
        c = Check(w[0])
        if len(w) < 2 or w[1] not in CMDS:
            c.ok("bad check line %r" % line.strip(), False)
        else:
            try:
                CMDS[w[1]](c, *w[2:])
            except Exception as e:  # a broken check fails, the others run
                c.ok(w[1], False, "%s: %s" % (type(e).__name__, e))
        failed += c.failed
        sys.stdout.flush()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
