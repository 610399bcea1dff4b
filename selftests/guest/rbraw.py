#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
"""rbraw.py - bytes that each event type takes in a ring buffer.

    rbraw.py TRACEDIR [OUT] [TRACEDIR OUT]...

(OUT: write there instead of stdout) reads (and so consumes) every TRACEDIR/per_cpu/cpu*/trace_pipe_raw without
blocking and parses the ring-buffer pages (kernel/trace/ring_buffer.c, 6.1:
a page is u64 time_stamp, u64 commit, then events; an event is a u32 header,
type_len in bits 0..4, then its data, whose first u16 is the trace event
type "common_type"). Prints one line per event type:

    type=ID count=N bytes=B min=M max=X

where B counts each event's header and data as the ring buffer stores them
(4-byte header, 4 more when the length is in array[0]), and the lines
    extend count=N bytes=B       time extends and absolute time stamps
    padding bytes=B              padding inside pages
"""
import errno
import glob
import os
import struct
import sys

PAD, EXTEND, STAMP = 29, 30, 31


def read_pages(path):
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    out = []
    try:
        while True:
            try:
                b = os.read(fd, 4096)
            except OSError as e:
                if e.errno in (errno.EAGAIN, errno.EINTR):
                    break
                raise
            if not b:
                break
            out.append(b)
    finally:
        os.close(fd)
    return out


def parse_page(page, acc):
    commit = struct.unpack_from("<Q", page, 8)[0] & 0xFFFFF
    off, end = 16, min(16 + commit, len(page))
    while off + 4 <= end:
        hdr = struct.unpack_from("<I", page, off)[0]
        tl, delta = hdr & 0x1F, hdr >> 5
        if tl == PAD:
            if delta == 0:
                acc["padding"] += end - off
                break
            n = struct.unpack_from("<I", page, off + 4)[0] + 4
            acc["padding"] += n
        elif tl in (EXTEND, STAMP):
            n = 8
            acc["extend"][0] += 1
            acc["extend"][1] += 8
        else:
            if tl:
                n, data = 4 + 4 * tl, off + 4
            else:
                n, data = struct.unpack_from("<I", page, off + 4)[0] + 4, off + 8
            typ = struct.unpack_from("<H", page, data)[0]
            c = acc["types"].setdefault(typ, [0, 0, n, n])
            c[0] += 1
            c[1] += n
            c[2] = min(c[2], n)
            c[3] = max(c[3], n)
        off += n


def one(tracedir, out):
    acc = dict(types={}, extend=[0, 0], padding=0)
    for path in sorted(glob.glob(tracedir + "/per_cpu/cpu*/trace_pipe_raw")):
        for page in read_pages(path):
            parse_page(page, acc)
    for typ, (cnt, b, lo, hi) in sorted(acc["types"].items()):
        out.write("type=%d count=%d bytes=%d min=%d max=%d\n" %
                  (typ, cnt, b, lo, hi))
    out.write("extend count=%d bytes=%d\n" % tuple(acc["extend"]))
    out.write("padding bytes=%d\n" % acc["padding"])


def main():
    args = sys.argv[1:]
    if len(args) == 1:
        one(args[0], sys.stdout)
        return
    for i in range(0, len(args) - 1, 2):
        with open(args[i + 1], "w") as out:
            one(args[i], out)


if __name__ == "__main__":
    main()
