#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
"""report_check.py - checks of stackmap-report outputs (tools_report.sh),
independent of the tool: one python start for all of them. Prints
"ok - LABEL: what" / "not ok - LABEL: what # why" lines.

  report_check.py ksyms LABEL REPORT [KALLSYMS]
      every kernel frame of `stackmap-report report --addr` (" => NAME+0xOFF
      <0xADDR>") is what /proc/kallsyms gives for ADDR
  report_check.py json LABEL DUMP.json BIN
      `dump --json` parses, and its stacks are those of fsmb.py's reader
Several checks may be given, separated by "--".
"""
import bisect
import json
import re
import sys

import fsm_check
import fsmb

FRAME = re.compile(r"^ => (\S+)\+0x([0-9a-f]+) <0x([0-9a-f]+)>$")


def cmd_ksyms(c, report, ksyms="/proc/kallsyms"):
    addrs, names = fsm_check.kallsyms(ksyms)
    n, bad = 0, []
    for line in open(report, errors="replace"):
        m = FRAME.match(line.rstrip("\n"))
        if not m:
            continue
        n += 1
        name, off, ip = m.group(1), int(m.group(2), 16), int(m.group(3), 16)
        i = bisect.bisect_right(addrs, ip) - 1
        if i < 0 or name not in names[i] or ip - addrs[i] != off:
            bad.append("%s+0x%x at 0x%x: kallsyms %s+0x%x" % (
                name, off, ip, sorted(names[i]) if i >= 0 else "-",
                ip - addrs[i] if i >= 0 else 0))
    c.ok("%d kernel frames checked (> 0)" % n, n > 0)
    c.ok("kernel frames = /proc/kallsyms lookups", not bad,
         "%d differ, e.g. %s" % (len(bad), bad[:3]))


def cmd_json(c, dump, binf):
    try:
        d = json.load(open(dump))
    except ValueError as e:
        c.ok("dump --json parses", False, str(e))
        return
    c.ok("dump --json parses", True)
    hdr, ks, us, files = fsmb.read_bin(binf)
    c.eq("json generation", d["generation"], hdr["generation"])
    got = [(k["index"], [int(f["ip"], 16) for f in k["frames"]])
           for k in d["kernel_stacks"]]
    c.eq("json kernel stacks = fsmb.py's", got, [(s, ips) for s, _, ips in ks])
    c.eq("json user stack ids = fsmb.py's",
         sorted(u["ustack_id"] for u in d["user_stacks"]), sorted(us))
    c.eq("json files = fsmb.py's",
         sorted((int(f["file_id"], 16), f["path"]) for f in d["files"]),
         sorted((k, v[0]) for k, v in files.items()))


def main(argv):
    rc = 0
    groups, cur = [], []
    for a in argv[1:]:
        if a == "--":
            groups.append(cur)
            cur = []
        else:
            cur.append(a)
    groups.append(cur)
    for g in groups:
        if len(g) < 2:
            continue
        c = fsmb.Check(g[1])
        try:
            {"ksyms": cmd_ksyms, "json": cmd_json}[g[0]](c, *g[2:])
        except (fsmb.Bad, OSError, KeyError, ValueError) as e:
            c.ok(g[0], False, "%s: %s" % (type(e).__name__, e))
        rc |= 1 if c.failed else 0
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
