#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""flamegraph_svg.py STACKMAP_REPORT SAMPLE.folded [--recordings DIR | TRACE.dat...]

stackmap-report flamegraph's SVG, parsed (xml.etree) and checked against
folded stacks: every frame (its path rebuilt from the geometry: the parent
is the frame one level down whose range holds it) has the count of the
folded lines through that path, every rect's x and width are its start and
count scaled to the image, the palettes are the task (depth 1), kernel
('_[k]') and user hue ranges, names and the title survive XML escaping,
--reverse puts the root on top, --minwidth leaves narrow frames out, the
output is deterministic and a bad folded line is an error.

With TRACE.dat arguments, or --recordings DIR (ctest: build/guest-out,
its */*.dat), also `flamegraph -i TRACE` against `folded -i TRACE` with
the same filters. Exit 0: all passed, 1: a check failed, 77: --recordings
DIR has no recording (skipped).
"""
import colorsys
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

NS = '{http://www.w3.org/2000/svg}'
failed = 0


def check(ok, what):
    global failed
    print(('ok - ' if ok else 'not ok - ') + what)
    if not ok:
        failed += 1
    return ok


def parse_folded(text):
    out = {}
    for line in text.splitlines():
        if line.strip():
            stack, n = line.rsplit(' ', 1)
            out[stack] = out.get(stack, 0) + int(n)
    return out


def expected_paths(folded):
    """(frame, frame, ...) -> count, for every prefix of every stack; no
    frame at all for no stack (the SVG says "no records": a filter that
    matches nothing in a recording)"""
    if not folded:
        return {}
    exp = {(): sum(folded.values())}
    for stack, n in folded.items():
        fr = tuple(stack.split(';'))
        for d in range(1, len(fr) + 1):
            exp[fr[:d]] = exp.get(fr[:d], 0) + n
    return exp


def frames_of(svg_path):
    root = ET.parse(svg_path).getroot()
    frames = []
    for g in root.iter(NS + 'g'):
        if g.get('class') != 'f':
            continue
        r = g.find(NS + 'rect')
        frames.append({'n': g.get('data-n'), 'c': int(g.get('data-c')),
                       'd': int(g.get('data-d')), 'x': int(g.get('data-x')),
                       'rx': float(r.get('x')), 'rw': float(r.get('width')),
                       'ry': float(r.get('y')), 'fill': r.get('fill'),
                       'title': g.find(NS + 'title').text})
    return root, frames


def svg_paths(frames):
    """path -> frame, each frame's parent found by its range one level down"""
    by_depth = {}
    for f in frames:
        by_depth.setdefault(f['d'], []).append(f)
    paths = {}
    for d in sorted(by_depth):
        for f in by_depth[d]:
            if d == 0:
                f['path'] = ()
            else:
                ps = [p for p in by_depth.get(d - 1, [])
                      if p['x'] <= f['x'] and f['x'] + f['c'] <= p['x'] + p['c']]
                if len(ps) != 1:
                    f['path'] = None
                    continue
                if ps[0]['path'] is None:
                    f['path'] = None
                    continue
                f['path'] = ps[0]['path'] + (f['n'],)
            paths[f['path']] = f
    return paths


def hue(fill):
    r, g, b = (int(fill[i:i + 2], 16) / 255 for i in (1, 3, 5))
    h, _, s = colorsys.rgb_to_hls(r, g, b)
    return h * 360, s


def run(sr, args, **kw):
    return subprocess.run([sr] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          **kw)


def check_against(svg, folded, label, minwidth0=True):
    root, frames = frames_of(svg)
    exp = expected_paths(folded)
    paths = svg_paths(frames)
    total = exp.get((), 0)
    check(int(root.get('data-total')) == total, label + ': data-total = the folded total')
    check(all(f['path'] is not None for f in frames),
          label + ': every frame lies within exactly one parent')
    got = {p: f['c'] for p, f in paths.items()}
    if minwidth0:
        missing = [p for p in exp if p not in got]
        extra = [p for p in got if p not in exp]
        wrong = [p for p in exp if p in got and got[p] != exp[p]]
        check(not missing and not extra and not wrong and len(frames) == len(exp),
              label + ': frames and counts = the folded stacks (%d frames; %d missing, '
              '%d extra, %d wrong)' % (len(exp), len(missing), len(extra), len(wrong)))
    else:
        check(all(exp.get(p) == c for p, c in got.items()),
              label + ': the frames drawn have the folded counts')
    w = int(root.get('data-width'))
    pad = int(root.get('data-pad'))
    scale = (w - 2 * pad) / total if total else 0
    bad = [f for f in frames
           if abs(f['rw'] - f['c'] * scale) > 0.006 or abs(f['rx'] - pad - f['x'] * scale) > 0.006]
    check(not bad, label + ': rect widths and x = counts scaled to the width')
    return root, frames, paths


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    sr, sample = sys.argv[1], sys.argv[2]
    traces = sys.argv[3:]
    if traces[:1] == ['--recordings'] and len(traces) == 2:
        import glob
        traces = sorted(glob.glob(os.path.join(traces[1], '*', '*.dat')))
        if not traces:
            print('# no recording in %s/*/*.dat: skipped' % sys.argv[4])
            return 77
    tmp = tempfile.mkdtemp(prefix='fg-')
    folded = parse_folded(open(sample, encoding='utf-8').read())

    svg = os.path.join(tmp, 'a.svg')
    p = run(sr, ['flamegraph', '--folded-input', sample, '--minwidth', '0', '-o', svg])
    check(p.returncode == 0, 'flamegraph --folded-input: exit 0')
    root, frames, paths = check_against(svg, folded, 'sample')

    # palettes: root gray, depth 1 (comm) task blues, _[k] kernel reds,
    # other frames user greens; the same name, the same colour
    pal_ok = True
    colors = {}
    for f in frames:
        h, s = hue(f['fill'])
        if f['d'] == 0:
            ok = s < 0.05
        elif f['d'] == 1:
            ok = 195 <= h <= 240
        elif f['n'].endswith('_[k]'):
            ok = h <= 45
        else:
            ok = 80 <= h <= 150
        if not ok:
            print('# palette: %s depth %d fill %s hue %.0f' % (f['n'], f['d'], f['fill'], h))
        pal_ok &= ok
        pal_ok &= colors.setdefault((f['n'], f['d'] == 1), f['fill']) == f['fill']
    check(pal_ok, 'palettes: task, user, kernel hue ranges; one colour per name')
    kinds = {(f['d'] == 1, f['n'].endswith('_[k]')) for f in frames if f['d'] > 0}
    check(len(kinds) == 3, 'the sample has task, user and kernel frames')
    names = {f['n'] for f in frames}
    check('a&b<c>"q"' in names and 'caf\u00e9' in names and 'f\u00fcnf' in names,
          'names with XML special and non-ASCII characters survive')
    check(any(f['title'].startswith('all (%d records, 100.00%%)' % paths[()]['c'])
              for f in frames), 'the root title: count and share')

    p2 = run(sr, ['flamegraph', '--folded-input', sample, '--minwidth', '0'])
    check(p2.returncode == 0 and p2.stdout == open(svg, 'rb').read(),
          'deterministic: the same SVG again (standard output)')

    rsvg = os.path.join(tmp, 'r.svg')
    p = run(sr, ['flamegraph', '--folded-input', sample, '--minwidth', '0', '--reverse',
                 '--width', '800', '--title', 'T <&> "x"', '-o', rsvg])
    check(p.returncode == 0, '--reverse --width --title: exit 0')
    rroot, rframes, rpaths = check_against(rsvg, folded, 'reverse, width 800')
    check(int(rroot.get('width')) == 800, '--width 800: the image is 800 wide')
    ys = {f['d']: f['ry'] for f in rframes}
    check(all(ys[d] < ys[d + 1] for d in range(max(ys))), '--reverse: the root on top')
    ys = {f['d']: f['ry'] for f in frames}
    check(all(ys[d] > ys[d + 1] for d in range(max(ys))), 'default: the root at the bottom')
    title = [t for t in rroot.iter(NS + 'text') if t.get('id') == 'title']
    check(title and title[0].text == 'T <&> "x"', '--title: escaped and read back')

    msvg = os.path.join(tmp, 'm.svg')
    p = run(sr, ['flamegraph', '--folded-input', sample, '--minwidth', '5', '-o', msvg])
    _, mframes, _ = check_against(msvg, folded, '--minwidth 5', minwidth0=False)
    check(p.returncode == 0 and all(f['rw'] >= 5 for f in mframes if f['d'])
          and len(mframes) < len(frames), '--minwidth 5: narrower frames left out')

    bad = os.path.join(tmp, 'bad.folded')
    with open(bad, 'w') as fh:
        fh.write('a;b 3\nno count here\n')
    p = run(sr, ['flamegraph', '--folded-input', bad])
    check(p.returncode == 1 and b'bad.folded:2' in p.stderr, 'a bad folded line: exit 1, line named')
    p = run(sr, ['folded', '--width', '300'])
    check(p.returncode == 2, 'flamegraph options on another command: exit 2')
    p = run(sr, ['flamegraph', '--folded-input', sample, '--comm', 'x'])
    check(p.returncode == 2, '--folded-input with a filter: exit 2')

    p = run(sr, ['flamegraph', '--folded-input', os.devnull, '-o', os.path.join(tmp, 'e.svg')])
    if check(p.returncode == 0, 'flamegraph of no stack: exit 0'):
        check_against(os.path.join(tmp, 'e.svg'), {}, 'flamegraph of no stack')

    for t in traces:
        for filt in ([], ['--comm', 'chain64'], ['--event', 'sched_switch'], ['--by-host']):
            lab = os.path.basename(t) + (' ' + ' '.join(filt) if filt else '')
            fo = run(sr, ['folded', '-i', t] + filt)
            tsvg = os.path.join(tmp, 't.svg')
            fg = run(sr, ['flamegraph', '-i', t, '--minwidth', '0', '-o', tsvg] + filt)
            if not check(fo.returncode == 0 and fg.returncode == 0, lab + ': both exit 0'):
                continue
            check_against(tsvg, parse_folded(fo.stdout.decode('utf-8', 'replace')),
                          lab + ': flamegraph = folded')
    print('# %d failed' % failed)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
