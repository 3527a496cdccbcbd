#!/usr/bin/env bash
# tools/tally_h5.py's decoders against a decoding of every value on its own, on a file written
# here with h5py in the parallel writer's layout: fixed-length UTF-8 columns of widths 1 to 236
# (repeated values, empty values, non-ASCII), read once as they are and once with the key mix
# disabled (every pair of values that differ before their last word then share a key: the
# row-by-row check must catch it and fall back), and a bytes + offsets text column read with
# windows of 1, 7 and 64 bytes over 5-byte chunks (values longer than a window, empty values,
# multi-byte characters across window edges) and with the default window.
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
print("tally_h5 decoders: ok")
PY
