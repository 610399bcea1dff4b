#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""recordings_check.py STACKMAP_REPORT DIR

Checks on a real recording (the first */*.dat under DIR: build/guest-out,
left by the guest suites) that need no guest:

several inputs
 - a copy whose stored uname names another host (the node name patched in
   place) is host 2: `folded -i A -i B` = folded A added to folded B,
   `-i DIR` = `-i A -i B`; `--by-host` starts every stack with the host
   (uname node name; a trace without one: its file name); `stats`
   records add up; `report` heads each input's section '# host'.
 - (ids that collide with other stacks in two traces: the guest suite
   tools_report.sh, which records both)

a real pprof client: go tool pprof (Debian's golang-go), offline
 - `-raw` and `-traces` sample totals = the folded total;
 - the stacks of `-traces` (comm label + functions, outermost first) =
   the folded lines (kernel frames without '_[k]'); its top stack is ours;
 - `-proto A.pb.gz B.pb.gz` merges the two hosts' profiles: `-tags` of the
   merge has host labels fsm-vm and the other one, with each file's total.

Exit 0 passed, 1 a check failed, 77 no recording in DIR (skipped).
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

failed = 0


def check(ok, what):
    global failed
    print(('ok - ' if ok else 'not ok - ') + what)
    if not ok:
        failed += 1
    return ok


def sh(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if p.returncode != 0:
        print('# %s: exit %d: %s' % (' '.join(cmd), p.returncode,
                                     p.stderr.decode('utf-8', 'replace')[-1000:]))
    return p.returncode, p.stdout.decode('utf-8', 'replace')


def folded_map(text):
    out = {}
    for line in text.splitlines():
        if line.strip():
            k, n = line.rsplit(' ', 1)
            out[k] = out.get(k, 0) + int(n)
    return out


def add(*maps):
    out = {}
    for m in maps:
        for k, n in m.items():
            out[k] = out.get(k, 0) + n
    return out


def pprof_traces(text):
    """the -traces entries: [(labels, count, frames innermost first)]"""
    entries = []
    for block in text.split('-----------+')[1:]:
        labels, count, frames = {}, None, []
        for line in block.splitlines()[1:]:
            m = re.match(r'^\s*(\S+):\s+(.*)$', line)
            if count is None and m and not re.match(r'^\d', m.group(1)):
                labels[m.group(1)] = m.group(2)
                continue
            m = re.match(r'^\s+(\d+)\s+(.*)$', line)
            if count is None and m:
                count = int(m.group(1))
                frames.append(m.group(2).strip())
            elif count is not None and line.strip():
                frames.append(line.strip())
        if count is not None:
            entries.append((labels, count, frames))
    return entries


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    sr, d = sys.argv[1], sys.argv[2]
    recs = sorted(glob.glob(os.path.join(d, '*', '*.dat')))
    if not recs:
        print('# no recording in %s/*/*.dat (the guest suites leave them): skipped' % d)
        return 77
    rec = recs[0]
    print('# recording: %s' % rec)
    tmp = tempfile.mkdtemp(prefix='recs-')
    a = os.path.join(tmp, 'multi', 'a.dat')
    b = os.path.join(tmp, 'multi', 'b.dat')
    os.makedirs(os.path.dirname(a))
    shutil.copy(rec, a)

    rc, un = sh(['trace-cmd', 'dump', '--options', a])
    m = re.search(r'Option UNAME.*\n\s*(\S+) (\S+) ', un)
    host = m.group(2) if m else None
    data = open(a, 'rb').read()
    other = None
    if check(host and data.count(('%s %s ' % (m.group(1), host)).encode()) == 1,
             'the recording stores its uname once, uncompressed (host %s)' % host):
        other = ('x' + host[1:]) if host[0] != 'x' else ('y' + host[1:])
        old = ('%s %s ' % (m.group(1), host)).encode()
        with open(b, 'wb') as fh:
            fh.write(data.replace(old, ('%s %s ' % (m.group(1), other)).encode()))
    else:
        shutil.copy(rec, b)

    rc, fa = sh([sr, 'folded', '-i', a])
    fa = folded_map(fa)
    rc2, fb = sh([sr, 'folded', '-i', b])
    fb = folded_map(fb)
    total = sum(fa.values())
    check(rc == 0 and rc2 == 0 and total > 0 and fa == fb,
          'folded of each: exit 0, %d records, the same stacks' % total)
    rc, fab = sh([sr, 'folded', '-i', a, '-i', b])
    check(rc == 0 and folded_map(fab) == add(fa, fb), 'folded -i A -i B = folded A + folded B')
    rc, fdir = sh([sr, 'folded', '-i', os.path.dirname(a)])
    check(rc == 0 and folded_map(fdir) == add(fa, fb), 'folded -i DIR = folded -i A -i B')
    rc, fh_ = sh([sr, 'folded', '--by-host', '-i', a, '-i', b])
    want = add({host + ';' + k: n for k, n in fa.items()},
               {(other or host) + ';' + k: n for k, n in fb.items()})
    check(rc == 0 and folded_map(fh_) == want,
          'folded --by-host: each stack under its trace\'s host (%s, %s)' % (host, other))
    nouname = os.path.join(tmp, 'nouname.dat')
    if host:
        with open(nouname, 'wb') as fh:
            u = ('%s %s ' % (m.group(1), host)).encode()
            fh.write(data.replace(u, u[:len(m.group(1)) + 1] + b' ' * (len(host) + 1)))
        rc, fn = sh([sr, 'folded', '--by-host', '-i', nouname])
        check(rc == 0 and folded_map(fn) == {'nouname.dat;' + k: n for k, n in fa.items()},
              'a trace whose uname has no node name: host = its file name')
    rc, st = sh([sr, 'stats', '-i', a, '-i', b])
    check(rc == 0 and ('records: %d\n' % (2 * total)) in st, 'stats -i A -i B: records add up')
    rc, rep = sh([sr, 'report', '-i', a, '-i', b])
    heads = re.findall(r'^# host (\S+) \((.*)\)$', rep, re.M)
    check(rc == 0 and heads == [(host, a), (other or host, b)],
          'report -i A -i B: a section per input headed by its host')
    rc, _ = sh([sr, 'folded', '-i', a, '-i', b, '--map', a])
    check(rc == 1, '--map with several inputs: refused')

    # go tool pprof, offline, its cache in the build directory (ctest sets
    # GOCACHE, HOME, GOTOOLCHAIN=local, GOPROXY=off)
    go = shutil.which('go')
    if not check(go is not None, 'go found (golang-go, scripts/deps)'):
        return 1
    env = dict(os.environ)
    env.setdefault('GOCACHE', os.path.join(tmp, 'gocache'))
    env.update(GOTOOLCHAIN='local', GOPROXY='off', GOFLAGS='', GOTELEMETRY='off',
               PPROF_BINARY_PATH=os.path.join(tmp, 'none'), PPROF_TMPDIR=tmp)
    env.setdefault('HOME', tmp)
    pa, pb, pm = (os.path.join(tmp, n) for n in ('a.pb.gz', 'b.pb.gz', 'm.pb.gz'))
    check(sh([sr, 'pprof', '-i', a, '-o', pa])[0] == 0 and
          sh([sr, 'pprof', '-i', b, '-o', pb])[0] == 0, 'pprof of each: exit 0')

    def gp(*args):
        return sh([go, 'tool', 'pprof', '-symbolize=none'] + list(args), env=env)

    rc, raw = gp('-raw', pa)
    vals = [int(x) for x in re.findall(r'^\s+(\d+): ', raw.split('Samples:')[-1].split('Locations')[0], re.M)]
    check(rc == 0 and sum(vals) == total, 'go tool pprof -raw: samples add up to folded (%d)' % sum(vals))
    rc, tr = gp('-traces', pa)
    m = re.search(r'Total samples = (\d+)', tr)
    check(rc == 0 and m and int(m.group(1)) == total, 'go tool pprof -traces: total = folded')
    got = {}
    for labels, n, frames in pprof_traces(tr):
        k = ';'.join([labels.get('comm', '?')] + frames[::-1])
        got[k] = got.get(k, 0) + n
    want = {}
    for k, n in fa.items():
        k = ';'.join(f[:-4] if f.endswith('_[k]') else f for f in k.split(';'))
        want[k] = want.get(k, 0) + n
    diff = [k for k in set(got) | set(want) if got.get(k) != want.get(k)]
    for k in diff[:3]:
        print('# differs: %r: pprof %s folded %s' % (k[:200], got.get(k), want.get(k)))
    check(not diff, 'go tool pprof -traces: the stacks and counts of folded (%d stacks)' % len(want))
    top_p = max(got.items(), key=lambda kv: (kv[1], kv[0])) if got else None
    top_f = max(want.items(), key=lambda kv: (kv[1], kv[0])) if want else None
    check(top_p == top_f and top_p is not None, 'its top stack is ours (%s)' % (top_f and top_f[1]))

    p = subprocess.run([go, 'tool', 'pprof', '-symbolize=none', '-proto', pa, pb],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    with open(pm, 'wb') as fh:
        fh.write(p.stdout)
    check(p.returncode == 0 and len(p.stdout) > 0, 'go tool pprof -proto A B: merged')
    rc, tags = gp('-tags', pm)
    hosts = dict((h, float(n)) for n, h in
                 re.findall(r'^\s+([\d.]+) \([ \d.]+%\): (\S+)$',
                            tags.split(' host:')[-1].split('\n\n')[0], re.M))
    check(rc == 0 and hosts == {host: total, other: total} if other else hosts == {host: 2 * total},
          'the merge keeps the host labels with each file\'s total: %s' % hosts)
    rc, raw = gp('-raw', pm)
    vals = [int(x) for x in re.findall(r'^\s+(\d+): ', raw.split('Samples:')[-1].split('Locations')[0], re.M)]
    check(rc == 0 and sum(vals) == 2 * total, 'the merge\'s samples add up to both (%d)' % sum(vals))
    pab = os.path.join(tmp, 'ab.pb.gz')
    check(sh([sr, 'pprof', '-i', a, '-i', b, '-o', pab])[0] == 0, 'pprof -i A -i B: exit 0')
    rc, tags = gp('-tags', pab)
    hosts2 = dict((h, float(n)) for n, h in
                  re.findall(r'^\s+([\d.]+) \([ \d.]+%\): (\S+)$',
                             tags.split(' host:')[-1].split('\n\n')[0], re.M))
    check(rc == 0 and hosts2 == hosts, 'pprof -i A -i B: one profile with both hosts\' labels')
    print('# %d failed' % failed)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
