# SPDX-License-Identifier: GPL-2.0
"""elfmut.py ELF PREFIX - mutated copies of a 64-bit ELF executable for
ustack_fileid.sh: the GNU build-id note (found through the program headers)
is damaged in ways that must give "no build-id" (or the right one), never
other bytes. Writes PREFIX<name> (mode 0755: they still run, the kernel's
ELF loader ignores PT_NOTE) and prints one name per line:

  desc_huge        n_descsz = 0xfffffffd (ALIGN(n_descsz, 4) wraps to 0)
  trunc_desc_huge  the same, and the PT_NOTE segment ends right after the
                   note's name: a parser that trusts the wrapped size reads
                   20 bytes past what it read of the file
  name_huge        n_namesz = 0xffffff00
  desc_24          n_descsz = 24 (longer than a SHA-1 build-id)
  desc_0           n_descsz = 0
  trunc            the PT_NOTE segment ends inside the descriptor
"""
import os
import struct
import sys


def find_note(b):
    """(phdr offset, segment offset, note offset) of the build-id note."""
    assert b[:4] == b"\x7fELF" and b[4] == 2 and b[5] == 1, "not ELF64 LE"
    phoff, = struct.unpack_from("<Q", b, 32)
    phentsize, phnum = struct.unpack_from("<HH", b, 54)
    for i in range(phnum):
        ph = phoff + i * phentsize
        p_type, = struct.unpack_from("<I", b, ph)
        if p_type != 4:
            continue
        off, = struct.unpack_from("<Q", b, ph + 8)
        filesz, = struct.unpack_from("<Q", b, ph + 32)
        align, = struct.unpack_from("<Q", b, ph + 48)
        a = 8 if align == 8 else 4
        pos = 0
        while pos + 12 <= filesz:
            n, d, t = struct.unpack_from("<III", b, off + pos)
            if t == 3 and n == 4 and b[off + pos + 12:off + pos + 16] == b"GNU\0":
                return ph, off, off + pos
            pos = (pos + 12 + n + a - 1) // a * a
            pos = (pos + d + a - 1) // a * a
    raise SystemExit("no build-id note")


def main():
    src, prefix = sys.argv[1], sys.argv[2]
    b = open(src, "rb").read()
    ph, seg, note = find_note(b)

    def put32(m, off, v):
        struct.pack_into("<I", m, off, v)

    def filesz(m, v):
        struct.pack_into("<QQ", m, ph + 32, v, v)  # p_filesz, p_memsz

    muts = {
        "desc_huge": lambda m: put32(m, note + 4, 0xfffffffd),
        "trunc_desc_huge": lambda m: (put32(m, note + 4, 0xfffffffd),
                                      filesz(m, note - seg + 16)),
        "name_huge": lambda m: put32(m, note, 0xffffff00),
        "desc_24": lambda m: put32(m, note + 4, 24),
        "desc_0": lambda m: put32(m, note + 4, 0),
        "trunc": lambda m: filesz(m, note - seg + 16 + 10),
    }
    for name, f in muts.items():
        m = bytearray(b)
        f(m)
        out = prefix + name
        with open(out, "wb") as o:
            o.write(m)
        os.chmod(out, 0o755)
        print(name)


main()
