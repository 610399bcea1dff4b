#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""flamegraph_render.py STACKMAP_REPORT SAMPLE.folded

stackmap-report flamegraph's SVG in a real browser: headless Chromium
(Debian's chromium, scripts/deps) loads the SVG of SAMPLE.folded
 - a screenshot (PNG, decoded here with zlib) shows the frames: pixels of
   the task, user and kernel palettes over a minimum area each, and none
   of the search highlight;
 - with FILE.svg#search=REGEX the script runs the search on load: the
   screenshot shows highlighted pixels, the dumped DOM (--dump-dom) has
   data-matched = the records of the folded lines with a matching frame,
   and the "Matched:" line says so;
 - with #zoom=NAME: the zoomed frame spans the width, frames outside it
   are hidden;
 - the browser's console log (--enable-logging=stderr) has no "Uncaught"
   error (and has one for a broken script: the check works).
The screenshots are kept when $SMR_RENDER_OUT names a directory (ctest
sets it to build/tools*/render/): flame.png (the plain SVG), search.png
(with #search=).

flamegraph_render.py --svg FILE.svg [--folded FILE.folded] --png OUT.png

renders an SVG made elsewhere (make demo's build/demo/flame.svg) the same
way: the screenshot (kept as OUT.png) has pixels of the three palettes
over a minimum area each and no highlight, the console log no script
error; with --folded (the same stacks' folded file), #search= of the
first folded line's last frame highlights frames and data-matched = the
records of the folded lines with that frame.
Exit 0 passed, 1 a check failed, 77 chromium is not installed (unless
SMR_REQUIRE_RENDER=1, as scripts/check sets: then 1).
"""
import colorsys
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

failed = 0
WIDTH, HEIGHT = 1000, 700


def check(ok, what):
    global failed
    print(('ok - ' if ok else 'not ok - ') + what)
    if not ok:
        failed += 1
    return ok


def png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB/RGBA PNG"""
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('not a PNG')
    pos, idat, ihdr = 8, b'', None
    while pos < len(data):
        n, typ = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b'IHDR':
            ihdr = struct.unpack('>IIBBBBB', body)
        elif typ == b'IDAT':
            idat += body
        elif typ == b'IEND':
            break
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError('PNG depth %d type %d interlace %d: not decoded here'
                         % (depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        ft, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ft == 1:
                line[x] = (line[x] + a) & 255
            elif ft == 2:
                line[x] = (line[x] + b) & 255
            elif ft == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return w, h, rows


def classify(rows):
    """pixel counts per palette (the hue ranges of flamegraph.cpp)"""
    n = {'task': 0, 'user': 0, 'kernel': 0, 'match': 0}
    for row in rows:
        for r, g, b in row:
            if (r, g, b) == (0xe0, 0x40, 0xe0):
                n['match'] += 1
                continue
            h, l, s = colorsys.rgb_to_hls(r / 255, g / 255, b / 255)
            h *= 360
            if s < 0.35 or l > 0.85 or l < 0.2:
                continue	# background, text, borders, the gray root
            if 195 <= h <= 240:
                n['task'] += 1
            elif 80 <= h <= 150:
                n['user'] += 1
            elif h <= 45:
                n['kernel'] += 1
    return n


def chromium(binary, args, url, tmp, size=None):
    """run headless chromium (window WIDTH x HEIGHT, or size); (rc, stdout, stderr)"""
    prof = tempfile.mkdtemp(prefix='prof-', dir=tmp)
    cmd = [binary, '--headless=new', '--no-sandbox', '--disable-gpu',
           '--disable-background-networking', '--disable-component-update',
           '--disable-sync', '--no-first-run', '--user-data-dir=' + prof,
           '--enable-logging=stderr', '--v=0',
           '--window-size=%d,%d' % (size or (WIDTH, HEIGHT))] + args + [url]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180)
    err = p.stderr.decode('utf-8', 'replace')
    if p.returncode != 0:
        print('# chromium exit %d: %s' % (p.returncode, err[-2000:]))
    return p.returncode, p.stdout.decode('utf-8', 'replace'), err


def find_chromium():
    return shutil.which('chromium') or shutil.which('chromium-browser')


def read_folded(path):
    folded = {}
    for line in open(path, encoding='utf-8'):
        if line.strip():
            k, v = line.rstrip('\n').rsplit(' ', 1)
            folded[k] = folded.get(k, 0) + int(v)
    return folded


def keep(png, name):
    """copy a screenshot to $SMR_RENDER_OUT/name, if set"""
    d = os.environ.get('SMR_RENDER_OUT')
    if d and os.path.exists(png):
        os.makedirs(d, exist_ok=True)
        shutil.copyfile(png, os.path.join(d, name))
        print('# screenshot kept: %s' % os.path.join(d, name))


def render_svg(args):
    """--svg FILE [--folded F] --png OUT: render an SVG made elsewhere"""
    opts = dict(zip(args[0::2], args[1::2]))
    if len(args) % 2 or set(opts) - {'--svg', '--folded', '--png'} or \
            '--svg' not in opts or '--png' not in opts:
        print(__doc__)
        return 2
    binary = find_chromium()
    if not binary:
        print('# chromium not found (scripts/deps installs it)')
        return 1 if os.environ.get('SMR_REQUIRE_RENDER') == '1' else 77
    svg, out = os.path.abspath(opts['--svg']), os.path.abspath(opts['--png'])
    tmp = tempfile.mkdtemp(prefix='fgr-')
    url = 'file://' + svg
    # the window as large as the SVG (its width and height attributes)
    head = open(svg, encoding='utf-8', errors='replace').read(4096)
    m = re.search(r'<svg[^>]*\swidth="(\d+)"[^>]*\sheight="(\d+)"', head)
    size = (int(m.group(1)), int(m.group(2))) if m else None
    png = os.path.join(tmp, 'plain.png')
    rc, _, logs = chromium(binary, ['--screenshot=' + png], url, tmp, size)
    if check(rc == 0 and os.path.exists(png), 'headless chromium: screenshot of %s' % svg):
        shutil.copyfile(png, out)
        print('# screenshot: %s' % out)
        _, _, rows = png_pixels(png)
        n = classify(rows)
        print('# pixels: %s' % n)
        for k in ('task', 'user', 'kernel'):
            check(n[k] >= 500, '%s palette drawn (%d pixels >= 500)' % (k, n[k]))
        check(n['match'] == 0, 'no search highlight without a search')
    if '--folded' in opts:
        folded = read_folded(opts['--folded'])
        frame = next(iter(folded)).split(';')[-1] if folded else ''
        check(frame != '', 'the folded file has a stack')
        want = sum(n for k, n in folded.items() if frame in k.split(';'))
        regex = '^' + re.escape(frame) + '$'
        q = '#search=' + re.sub(r'[^A-Za-z0-9_]', lambda m: '%%%02X' % ord(m.group()), regex)
        rc, dom, err = chromium(binary, ['--dump-dom'], url + q, tmp, size)
        logs += err
        m = re.search(r'<svg[^>]*\sdata-matched="(\d+)"', dom)
        check(m and int(m.group(1)) == want,
              'search %s: data-matched = %d (folded lines with it)' % (regex, want))
    bad = [l for l in logs.splitlines() if 'Uncaught' in l or 'SyntaxError' in l]
    check(not bad, 'no script error in the console log' + (': ' + bad[0] if bad else ''))
    print('# %d failed' % failed)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == '--svg':
        return render_svg(sys.argv[1:])
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    sr, sample = sys.argv[1], sys.argv[2]
    binary = find_chromium()
    if not binary:
        print('# chromium not found (scripts/deps installs it)')
        return 1 if os.environ.get('SMR_REQUIRE_RENDER') == '1' else 77
    tmp = tempfile.mkdtemp(prefix='fgr-')
    svg = os.path.join(tmp, 'fg.svg')
    p = subprocess.run([sr, 'flamegraph', '--folded-input', sample, '--width', str(WIDTH),
                        '--minwidth', '0', '-o', svg])
    if not check(p.returncode == 0, 'flamegraph --folded-input: exit 0'):
        return 1
    url = 'file://' + svg
    folded = read_folded(sample)
    regex = r'^__schedule_\[k\]$|^main$'
    want = sum(n for k, n in folded.items() if any(re.search(regex, f) for f in k.split(';')))
    check(0 < want < sum(folded.values()), 'the search matches some stacks, not all (%d)' % want)

    logs = ''
    png = os.path.join(tmp, 'plain.png')
    rc, _, err = chromium(binary, ['--screenshot=' + png], url, tmp)
    logs += err
    if check(rc == 0 and os.path.exists(png), 'screenshot of the SVG'):
        keep(png, 'flame.png')
        _, _, rows = png_pixels(png)
        n = classify(rows)
        print('# pixels: %s' % n)
        for k in ('task', 'user', 'kernel'):
            check(n[k] >= 500, '%s palette drawn (%d pixels >= 500)' % (k, n[k]))
        check(n['match'] == 0, 'no search highlight without a search')

    png = os.path.join(tmp, 'search.png')
    q = '#search=' + re.sub(r'[^A-Za-z0-9_]', lambda m: '%%%02X' % ord(m.group()), regex)
    rc, _, err = chromium(binary, ['--screenshot=' + png], url + q, tmp)
    logs += err
    if check(rc == 0 and os.path.exists(png), 'screenshot with #search='):
        keep(png, 'search.png')
        _, _, rows = png_pixels(png)
        n = classify(rows)
        print('# pixels: %s' % n)
        check(n['match'] >= 200, 'the search highlights frames (%d pixels >= 200)' % n['match'])

    rc, dom, err = chromium(binary, ['--dump-dom'], url + q, tmp)
    logs += err
    m = re.search(r'<svg[^>]*\sdata-matched="(\d+)"', dom)
    check(m and int(m.group(1)) == want,
          'the search script ran: data-matched = %d (folded lines with a match)' % want)
    m = re.search(r'<text id="matched"[^>]*>([^<]*)<', dom)
    total = sum(folded.values())
    check(m and m.group(1) == 'Matched: %.2f%% (%d of %d)' % (100 * want / total, want, total),
          'the matched share is printed: %r' % (m.group(1) if m else None))

    rc, dom, err = chromium(binary, ['--dump-dom'], url + '#zoom=sleep', tmp)
    logs += err
    g = re.search(r'<g class="f" data-n="sleep"[^>]*>.*?<rect ([^>]*)>', dom)
    check(g and 'width="%d.00"' % (WIDTH - 20) in g.group(1),
          'zoom: the zoomed frame spans the width')
    hidden = len(re.findall(r'<g class="f"[^>]*style="display: none;"', dom))
    check(hidden > 0, 'zoom: frames outside it hidden (%d)' % hidden)

    bad = [l for l in logs.splitlines() if 'Uncaught' in l or 'SyntaxError' in l]
    check(not bad, 'no script error in the console log' + (': ' + bad[0] if bad else ''))
    # the console check itself: a broken script is caught
    broken = os.path.join(tmp, 'broken.svg')
    with open(broken, 'w') as fh:
        fh.write('<svg xmlns="http://www.w3.org/2000/svg"><script>nosuchFn();</script></svg>')
    _, _, err = chromium(binary, ['--dump-dom'], 'file://' + broken, tmp)
    check('Uncaught' in err, 'the console check sees a broken script\'s error')
    print('# %d failed' % failed)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
