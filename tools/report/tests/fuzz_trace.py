#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fuzz_trace.py - stackmap-report (an ASan+UBSan build) on corrupted copies
of real recordings: every run must end with exit 0 or with exit 1 and a
"stackmap-report: " message; a sanitizer report, a signal, another exit
status or a hang (timeout) is a failure.

  fuzz_trace.py SR DIR [--seed N] [--runs N] [--jobs N] [--keep DIR]

DIR holds trace.dat files with stackmap records. None is checked in: the
guest suite tools_filters.sh leaves its recording there when vm-run runs
with --out (scripts/check: build/guest-out/<guest>/; the stage 'fuzz'
runs this after the guests). Without a recording: exit 77 (skipped).

Each recording is used as recorded (zstd-compressed trace.dat v7) and as
`trace-cmd convert --compression none` makes it, so that corruption reaches
the event data pages; their offsets come from `trace-cmd dump --flyrecord`.
Mutations, from a seeded random generator (the seed is printed; a failing
input is kept with --keep):
  - truncation at offsets all over the file and inside the data pages
  - 1 to 8 bit flips anywhere, or only in the data pages
  - runs of random bytes in the data pages (page headers included)
Leaks that libtracecmd makes on its own failure paths are suppressed for
the mutants (lsan-libtracecmd.supp), not for the unmodified recordings.
The commands alternate between folded, report, stats and pprof.
"""
import argparse
import concurrent.futures
import glob
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

BAD = re.compile(r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|"
                 r"runtime error:|SUMMARY: |Segmentation fault|core dumped")
TIMEOUT = 60
CMDS = [["folded"], ["report"], ["stats", "--top", "0"], ["pprof", "-o", os.devnull]]


def data_ranges(path):
    """(offset, size) of every CPU's data of every buffer (trace-cmd dump)"""
    p = subprocess.run(["trace-cmd", "dump", "-i", path, "--flyrecord"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    out = []
    for line in p.stdout.splitlines():
        m = re.match(r"^\s+(?:\d+\s+)?(\d+)\s+(\d+)\s+\[(?:id, )?(?:data )?offset", line)
        if m and int(m.group(2)) > 0:
            out.append((int(m.group(1)), int(m.group(2))))
    return out


def mutants(data, ranges, rnd, n):
    """n (name, bytes) corrupted copies of data"""
    size = len(data)
    pages = [(o, s) for o, s in ranges if o + s <= size]

    def in_pages():
        o, s = rnd.choice(pages)
        return o + rnd.randrange(s)

    out = []
    for i in range(n):
        kind = i % 4
        if kind == 0:	# truncation
            if pages and i % 8 == 0:
                at = in_pages()
            else:
                at = rnd.randrange(size)
            out.append(("truncate@%d" % at, data[:at]))
            continue
        b = bytearray(data)
        if kind == 3 and pages:	# random bytes in a data page
            o, s = rnd.choice(pages)
            page = o + (rnd.randrange(s) & ~4095)
            start = page + (0 if rnd.random() < 0.3 else rnd.randrange(4096))
            ln = rnd.randint(1, 512)
            for j in range(start, min(start + ln, o + s)):
                b[j] = rnd.randrange(256)
            out.append(("random@%d+%d" % (start, ln), bytes(b)))
            continue
        flips = []
        for _ in range(rnd.randint(1, 8)):	# bit flips
            at = in_pages() if kind == 2 and pages else rnd.randrange(size)
            bit = rnd.randrange(8)
            b[at] ^= 1 << bit
            flips.append("%d.%d" % (at, bit))
        out.append(("flip@" + ",".join(flips), bytes(b)))
    return out


SUPP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lsan-libtracecmd.supp")


def run(sr, cmd, path, supp=True):
    env = dict(os.environ)
    # allocator_may_return_null: a corrupted count makes libtracecmd ask
    # for gigabytes (tracecmd_load_chunks_info); glibc's calloc returns
    # NULL then, and so must ASan's. Our own allocations throw bad_alloc,
    # uncaught: still a failure (a signal).
    env["ASAN_OPTIONS"] = ("detect_leaks=1:abort_on_error=0:exitcode=99:"
                           "allocator_may_return_null=1")
    env["LSAN_OPTIONS"] = "suppressions=%s:print_suppressions=0" % SUPP if supp else ""
    env["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1:exitcode=98"
    try:
        p = subprocess.run([sr] + cmd + ["-i", path], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return "hang (more than %d s)" % TIMEOUT
    err = p.stderr.decode("utf-8", "replace")
    if BAD.search(err):
        return "sanitizer: " + BAD.search(err).group(0) + "\n" + err[-3000:]
    if p.returncode == 0:
        return None
    if p.returncode == 1 and "stackmap-report: " in err:
        return None
    return "exit %d: %s" % (p.returncode, err[-1500:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sr")
    ap.add_argument("dir")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("SMR_FUZZ_SEED", "1")))
    ap.add_argument("--runs", type=int, default=int(os.environ.get("SMR_FUZZ_RUNS", "48")))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--keep", default=os.environ.get("SMR_FUZZ_KEEP", ""))
    a = ap.parse_args()
    traces = sorted(glob.glob(os.path.join(a.dir, "**", "*.dat"), recursive=True))
    if not traces:
        print("fuzz_trace: no recording in %s (a guest run of tools_filters with "
              "vm-run --out makes one): skipped" % a.dir)
        return 77
    if not shutil.which("trace-cmd"):
        print("fuzz_trace: trace-cmd not installed: skipped")
        return 77
    rnd = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix="smr-fuzz.")
    jobs, fails, n = [], 0, 0
    try:
        inputs = []
        for t in traces:
            plain = os.path.join(tmp, "plain-%d.dat" % len(inputs))
            c = subprocess.run(["trace-cmd", "convert", "--compression", "none",
                                "-i", t, "-o", plain], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            inputs.append(t)
            if c.returncode == 0:
                inputs.append(plain)
            else:
                print("# trace-cmd convert failed on %s: compressed copy only" % t)
        for t in inputs:
            why = run(a.sr, ["folded"], t, supp=False)
            if why:
                print("not ok - %s unmodified: %s" % (t, why))
                return 1
            with open(t, "rb") as f:
                data = f.read()
            ranges = data_ranges(t)
            print("# %s: %d bytes, %d data ranges, seed %d, %d mutants"
                  % (t, len(data), len(ranges), a.seed, a.runs))
            for name, blob in mutants(data, ranges, rnd, a.runs):
                path = os.path.join(tmp, "m%d.dat" % len(jobs))
                with open(path, "wb") as f:
                    f.write(blob)
                jobs.append((os.path.basename(t), name, CMDS[len(jobs) % len(CMDS)], path))
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            res = ex.map(lambda j: run(a.sr, j[2], j[3]), jobs)
            for (src, name, cmd, path), why in zip(jobs, res):
                n += 1
                if why is None:
                    os.unlink(path)
                    continue
                fails += 1
                print("not ok - %s %s (%s): %s" % (src, name, cmd[0], why))
                if a.keep:
                    os.makedirs(a.keep, exist_ok=True)
                    shutil.copy(path, os.path.join(a.keep, "%s-%s.dat" % (src, name[:60])))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%s - %d corrupted recordings: exit 0, or 1 with a message; %d failed"
          % ("not ok" if fails else "ok", n, fails))
    return 1 if fails else 0


sys.exit(main())
