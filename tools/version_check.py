#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""version_check.py DKMS_CONF TOOL...

`TOOL --version` of each tool (stackmap-report, stackmap-ctl) prints
"NAME VERSION" with dkms.conf's PACKAGE_VERSION (the single source of the
version) and, when the sources are a git work tree, " (git DESCRIBE)"
where DESCRIBE starts with `git describe --always` of that tree (a
'-dirty' suffix may follow). Exit 0 passed, 1 failed.
"""
import os
import re
import subprocess
import sys


def main():
    conf, tools = sys.argv[1], sys.argv[2:]
    m = re.search(r'^PACKAGE_VERSION="?([^"\n]*)"?$', open(conf).read(), re.M)
    ver = m.group(1) if m else None
    src = os.path.dirname(os.path.abspath(conf))
    g = subprocess.run(['git', '-C', src, 'describe', '--always'],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    desc = g.stdout.decode().strip() if g.returncode == 0 else None
    failed = 0
    print('# dkms.conf: %s; git describe: %s' % (ver, desc))
    for t in tools:
        name = os.path.basename(t)
        p = subprocess.run([t, '--version'], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out = p.stdout.decode().rstrip('\n')
        want = re.escape('%s %s' % (name, ver))
        want += (r' \(git %s(-dirty)?\)' % re.escape(desc)) if desc else ''
        ok = ver and p.returncode == 0 and re.fullmatch(want, out) is not None
        print('%s - %s --version: %r' % ('ok' if ok else 'not ok', name, out))
        failed += not ok
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
