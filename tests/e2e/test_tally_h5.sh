#!/usr/bin/env bash
# tools/tally_h5.py's decoders against a decoding of every value on its own, on a file written
# here with h5py in the parallel writer's layout: fixed-length UTF-8 columns of widths 1 to 236
# (repeated values, empty values, non-ASCII), read once as they are and once with the key mix
# disabled (every pair of values that differ before their last word then share a key: the
# row-by-row check must catch it and fall back), and a bytes + offsets text column read with
# windows of 1, 7 and 64 bytes over 5-byte chunks (values longer than a window, empty values,
# multi-byte characters across window edges) and with the default window; and the chunk reader
# (chunks read with os.pread, inflated on threads) against h5py on deflated and shuffled
# datasets of several element sizes, ranges and windows.
. "$(dirname "$0")/common.sh"
need_python
"$PY" - "$WORK/t.h5" "$TALLY_SRC/tools" <<'PY'
import random, sys
import h5py, numpy as np
sys.path.insert(0, sys.argv[2])
import tally_h5

rnd = random.Random(7)
words = ["", "a", "ok", "no_answer", "naïve", "über-lange Antwort", "答案是 C", "x" * 40,
         "The answer is B because the tree is north of the lake.", "é" * 118]
n = 3000
fixed = {}
for w in (1, 2, 8, 9, 21, 236):
    vals = [rnd.choice([v for v in words if len(v.encode()) <= w]) for _ in range(n)]
    fixed["s%d" % w] = vals
uniq = ["id-%05d-%s" % (i, "ü" * (i % 3)) for i in range(n)]  # all distinct
fixed["ids"] = uniq
texts = [rnd.choice(words) * rnd.randint(0, 3) for _ in range(n)]
with h5py.File(sys.argv[1], "w") as f:
    g = f.create_group("t")
    for name, vals in fixed.items():
        enc = [v.encode() for v in vals]
        g.create_dataset(name, data=np.array(enc, dtype="S%d" % max(1, max(map(len, enc)))))
    blob = b"".join(t.encode() for t in texts)
    offs = np.cumsum([0] + [len(t.encode()) for t in texts[:-1]]).astype(np.int64)
    g.create_dataset("txt.bytes", data=np.frombuffer(blob, np.uint8), chunks=(5,))
    g.create_dataset("txt.offsets", data=offs)
    g.create_dataset("num", data=np.arange(n))

def check(label):
    df = tally_h5.read_table(sys.argv[1], "/t")
    for name, vals in fixed.items():
        assert list(df[name]) == vals, (label, name)
    assert list(df["txt"]) == texts, (label, "txt")
    assert list(df["num"]) == list(range(n)), label

check("default")
for w in (1, 7, 64):
    tally_h5._WINDOW = w
    check("window %d" % w)
tally_h5._WINDOW = 8 << 20
tally_h5._MIX = np.uint64(0)  # key = last word only: collisions everywhere
called = []
each = tally_h5._decode_each
tally_h5._decode_each = lambda a: called.append(a.dtype.itemsize) or each(a)
check("colliding keys")
assert 236 in called, called  # the row check fell back where keys collided
tally_h5._decode_each = each
tally_h5._MIX = np.uint64(0x9E3779B97F4A7C15)

# Chunks read with os.pread and inflated on threads (tally_h5._Chunks) give what h5py gives:
# deflate alone and after shuffle, 1-, 4- and 8-byte elements, fixed-length strings, a last
# chunk cut short, one chunk, chunks of one element; and text blobs through it in windows.
import os
path2 = sys.argv[1] + ".chunks.h5"
ref = {}
with h5py.File(path2, "w") as f:
    g = f.create_group("c")
    for name, data, chunk, shuffle in [
            ("i64", np.arange(10007, dtype=np.int64) * 7919 - 5, 1000, True),
            ("f64", np.linspace(-1, 1, 3001) ** 3, 512, True),
            ("i32", np.arange(999, dtype=np.int32), 999, True),
            ("u8", np.frombuffer(bytes(range(256)) * 41, np.uint8), 1024, False),
            ("s21", np.array([("r%05d" % (i * 37 % 9973)).encode() * (i % 4) for i in range(5000)], dtype="S21"), 700, False),
            ("one", np.arange(5, dtype=np.int64), 1, True)]:
        g.create_dataset(name, data=data, chunks=(chunk,), compression="gzip", shuffle=shuffle)
        ref[name] = data
    blob = b"".join(t.encode() for t in texts)
    offs = np.cumsum([0] + [len(t.encode()) for t in texts[:-1]]).astype(np.int64)
    d = f.create_group("d")  # a table: a text column and a number column of n rows
    d.create_dataset("txt.bytes", data=np.frombuffer(blob, np.uint8), chunks=(333,), compression="gzip")
    d.create_dataset("txt.offsets", data=offs, chunks=(128,), compression="gzip", shuffle=True)
    d.create_dataset("k", data=np.arange(n) * 3, chunks=(1000,), compression="gzip", shuffle=True)
with h5py.File(path2, "r") as f:
    fd = os.open(path2, os.O_RDONLY)
    for name, data in ref.items():
        ds = f["c"][name]
        assert tally_h5._Chunks.plan(ds, fd) is not None, name  # not h5py's read
        got = tally_h5._read_all(ds, fd)
        assert got.dtype == ds.dtype and got.tobytes() == ds[()].tobytes() == data.tobytes(), name
        for lo, hi in [(0, 1), (3, min(1500, ds.shape[0])), (ds.shape[0] - 1, ds.shape[0])]:
            dest = np.zeros((hi - lo) * ds.dtype.itemsize + 3, np.uint8)
            tally_h5._Chunks.plan(ds, fd).read(lo, hi, dest, 3)
            assert dest[3:].tobytes() == ds[lo:hi].tobytes(), (name, lo, hi)
    os.close(fd)
for w in (1, 500, 8 << 20):
    tally_h5._WINDOW = w
    df = tally_h5.read_table(path2, "/d")
    assert list(df["txt"]) == texts, ("chunked txt, window", w)
    assert df["k"].tolist() == [3 * i for i in range(n)], ("chunked k, window", w)
tally_h5._WINDOW = 8 << 20
print("tally_h5 decoders: ok")
PY
