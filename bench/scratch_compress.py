#!/usr/bin/python3
"""What compressing a run's scratch would save and cost (issue 34 item 3): a journal file and a
spilled-rows file (keep them with TALLY_TEST_PAUSE=write, see scratch_compress.sh) cut into the
blocks a writer would compress one by one (a journal: the lines of one engine poll, i.e. one
flushed batch, independent frames so a kill loses at most the last; the spill: BLOCK bytes of
rows, as the rows are before tally compresses them: the file's frames are undone first), each compressed with zstd levels 1 and 3 and libdeflate levels 1 and 6 through ctypes
(the libraries tally links), in one process: the bytes out and the CPU seconds to compress and to
decompress, per unit.

usage: scratch_compress.py UNITS JOURNAL_FILE SPILL_FILE [LINES_PER_BATCH [SPILL_BLOCK]]
"""
import ctypes
import ctypes.util
import sys
import time

zstd = ctypes.CDLL(ctypes.util.find_library("zstd"))
zstd.ZSTD_compressBound.restype = ctypes.c_size_t
zstd.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
zstd.ZSTD_compress.restype = ctypes.c_size_t
zstd.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
zstd.ZSTD_decompress.restype = ctypes.c_size_t
zstd.ZSTD_decompress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
dfl = ctypes.CDLL(ctypes.util.find_library("deflate"))
dfl.libdeflate_alloc_compressor.restype = ctypes.c_void_p
dfl.libdeflate_alloc_compressor.argtypes = [ctypes.c_int]
dfl.libdeflate_deflate_compress.restype = ctypes.c_size_t
dfl.libdeflate_deflate_compress.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                            ctypes.c_size_t]
dfl.libdeflate_alloc_decompressor.restype = ctypes.c_void_p
dfl.libdeflate_deflate_decompress.restype = ctypes.c_int
dfl.libdeflate_deflate_decompress.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                              ctypes.c_size_t, ctypes.c_void_p]


def unframe(data):
    """A spill file as tally writes it (src/par/run/spill.c: uint32 compressed bytes, uint32 raw
    bytes, a zstd frame, zeros to a multiple of 64 bytes) -> the raw rows."""
    out, at = [], 0
    while at + 8 <= len(data):
        zn, rn = int.from_bytes(data[at:at + 4], "little"), int.from_bytes(data[at + 4:at + 8], "little")
        buf = ctypes.create_string_buffer(rn)
        got = zstd.ZSTD_decompress(buf, rn, data[at + 8:at + 8 + zn], zn)
        assert got == rn, "not a tally spill file"
        out.append(buf.raw)
        at += (8 + zn + 63) // 64 * 64
    return b"".join(out)


def blocks_of_lines(data, per):
    lines = data.split(b"\n")
    return [b"\n".join(lines[i:i + per]) + b"\n" for i in range(0, len(lines), per)]


def blocks_of_bytes(data, n):
    return [data[i:i + n] for i in range(0, len(data), n)]


def run(name, blocks, units):
    raw = sum(len(b) for b in blocks)
    print("%-8s %-10s %10.1f B/unit" % (name, "raw", raw / units))
    cap = max(len(b) for b in blocks) * 2 + 1024
    out = ctypes.create_string_buffer(cap)
    back = ctypes.create_string_buffer(cap)
    for lib, level in (("zstd", 1), ("zstd", 3), ("deflate", 1), ("deflate", 6)):
        comp = []
        t0 = time.process_time()
        if lib == "zstd":
            for b in blocks:
                n = zstd.ZSTD_compress(out, cap, b, len(b), level)
                comp.append(out.raw[:n])
        else:
            c = dfl.libdeflate_alloc_compressor(level)
            for b in blocks:
                n = dfl.libdeflate_deflate_compress(c, b, len(b), out, cap)
                comp.append(out.raw[:n])
        tc = time.process_time() - t0
        t0 = time.process_time()
        if lib == "zstd":
            for c, b in zip(comp, blocks):
                assert zstd.ZSTD_decompress(back, cap, c, len(c)) == len(b)
        else:
            d = dfl.libdeflate_alloc_decompressor()
            got = ctypes.c_size_t()
            for c, b in zip(comp, blocks):
                assert dfl.libdeflate_deflate_decompress(d, c, len(c), back, cap, ctypes.byref(got)) == 0
        td = time.process_time() - t0
        tot = sum(len(c) for c in comp)
        print("%-8s %-10s %10.1f B/unit  ratio %5.2f  compress %6.2f us/unit  decompress %6.2f us/unit" %
              (name, "%s-%d" % (lib, level), tot / units, raw / tot, 1e6 * tc / units, 1e6 * td / units))


def main():
    units = int(sys.argv[1])
    per = int(sys.argv[4]) if len(sys.argv) > 4 else 256
    sblock = int(sys.argv[5]) if len(sys.argv) > 5 else 65536
    run("journal", blocks_of_lines(open(sys.argv[2], "rb").read(), per), units)
    run("spill", blocks_of_bytes(unframe(open(sys.argv[3], "rb").read()), sblock), units)


main()
