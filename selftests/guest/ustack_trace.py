# SPDX-License-Identifier: GPL-2.0
"""What the user-stack checkers (ustack_entry.py, ustack_threads.py,
ustack_frameless.py, ustack_sameregs.py) read alike in a trace's text: its records, the
key=value fields of our records, and the frames a user_stack record stands
for (the first record of a ustack_id carries them, later ones the id only;
file paths from the file_map records)."""
import re
import subprocess

LINE = re.compile(r'^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[\d+\]\s+\S+\s+[\d.]+: '
                  r'(?P<ev>[a-z_]+|<user stack trace>):?\s?(?P<rest>.*)$')
UADDR = re.compile(r'^\s*=>\s+.*<([0-9a-f]+)>')
OFF_MASK = (1 << 56) - 1


def records(trace):
    """The records of a trace's text, in order, as (pid, ev, rest, addrs):
    addrs is the list of addresses of a <user stack trace> (the " => "
    lines that follow it), None for any other record."""
    ust = None
    with open(trace, errors='replace') as f:
        for ln in f:
            if ust is not None:
                m = UADDR.match(ln)
                if m:
                    ust[3].append(int(m.group(1), 16))
                    continue
                yield ust
                ust = None
            m = LINE.match(ln)
            if not m:
                continue
            r = (m.group('pid'), m.group('ev'), m.group('rest'), None)
            if r[1] == '<user stack trace>':
                ust = r[:3] + ([],)
                continue
            yield r
    if ust is not None:
        yield ust


def kv(s):
    return {m.group(1): m.group(2) for m in re.finditer(r'(\w+)=(\{[^}]*\}|\S+)', s)}


def ints(braced):
    body = braced.strip('{}').strip()
    return [int(x, 0) for x in re.split(r'[,\s]+', body) if x] if body else []


class UserStacks:
    """file_map and user_stack records, taken in trace order."""

    def __init__(self):
        self.paths = {}     # file id -> path
        self.by_id = {}     # (gen, ustack_id) -> frame words
        self.cookie = self.frames = self.fields = None

    def take(self, ev, rest):
        """True for a file_map or a user_stack record (taken); for a
        user_stack, .cookie, .fields and .frames (its id's words: file
        id, offset, ...) are then the record's. False for any other."""
        if ev == 'file_map':
            d = kv(rest)
            self.paths[int(d['file_id'], 0)] = \
                re.search(r'path=(.*?) build_id=', rest).group(1)
            return True
        if ev != 'user_stack':
            return False
        d = kv(rest)
        key = (d['gen'], d['ustack_id'])
        fr = ints(d.get('frames', '{}'))
        if fr:
            self.by_id[key] = fr
        else:
            fr = self.by_id.get(key, [])
        self.cookie, self.frames, self.fields = int(d['cookie'], 0), fr, d
        return True

    def named(self):
        """The record's frames as [(path, file offset)]."""
        fr = self.frames
        return [(self.paths.get(fr[i], 'file:%x' % fr[i]), fr[i + 1] & OFF_MASK)
                for i in range(0, len(fr) - 1, 2)]


def prog_functions(prog):
    """PROG's function at a file offset (None outside its text), from
    readelf's LOAD segments and nm."""
    segs, syms = [], []
    for ln in subprocess.run(['readelf', '-lW', prog], capture_output=True,
                             text=True, check=True).stdout.splitlines():
        f = ln.split()
        if f and f[0] == 'LOAD':
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
    for ln in subprocess.run(['nm', '-n', prog], capture_output=True,
                             text=True, check=True).stdout.splitlines():
        f = ln.split()
        if len(f) == 3 and f[1] in 'tT':
            syms.append((int(f[0], 16), f[2]))

    def func_of(off):
        for poff, vaddr, fsz in segs:
            if poff <= off < poff + fsz:
                va, name = off - poff + vaddr, None
                for a, n in syms:
                    if a > va:
                        break
                    name = n
                return name
        return None
    return func_of


def prog_mapper(maps_file, prog):
    """PROG's mappings in a copy of /proc/PID/maps: a function from a
    user address to (PROG, file offset), None outside them (the kernel's
    <user stack trace> lines give addresses, our frames file offsets)."""
    maps = []
    for ln in open(maps_file):
        f = ln.split()
        if len(f) >= 6 and f[5] == prog:
            lo, hi = (int(x, 16) for x in f[0].split('-'))
            maps.append((lo, hi, int(f[2], 16)))

    def k2file(addr):
        for lo, hi, pgoff in maps:
            if lo <= addr < hi:
                return (prog, addr - lo + pgoff)
        return None
    return k2file
