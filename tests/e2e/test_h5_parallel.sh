#!/usr/bin/env bash
# The parallel HDF5 writer (src/par/h5p_*.c), driven by build/tests/mpi/h5_parallel_check
# (tests/mpi/h5_parallel_check.c) under mpirun:
# - 1, 2 and 4 ranks (uneven splits, a rank with no rows, slices in reverse rank order) give the
#   same datasets and attributes (h5diff), and the same dataset properties, chunk sizes and
#   compressed sizes (h5dump -p with file offsets removed);
# - tools/tally_h5.py reads every value back as written (Python recomputes each row from its
#   index), the blob + offsets string layout comes back as str columns in file order, the big
#   columns are chunked and deflated (by libdeflate, through tally's compress2; h5py inflates
#   them with zlib), and the tables equal those of the serial writer;
# - an unwritable path, tables that differ between ranks and overlapping slices give every rank
#   the same error, a non-zero exit and no hang, and leave no file behind;
# - windowed writes (write_rows, h5_parallel_check --matrix): tables of 0, 1, 5, 4097, 70000 and
#   200000 rows written window by window (windows of 1, 7, 4096, 65536 rows and the default) on
#   1, 2 and 4 ranks hold exactly what write_slice writes for the same rows: h5diff finds no
#   difference, and h5py sees the same datasets in the same order with the same dtypes, shapes,
#   chunking, filters, docs, stored chunks (offset, compressed size, filter mask) and bit-equal
#   values; the serial writer's write_rows matches its write_table; a fill that misbehaves on
#   one rank gives every rank the same error and leaves no file.
. "$(dirname "$0")/common.sh"
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
need_python
PROG="${TALLY_H5P_CHECK:-$(dirname "$TALLY_BIN")/tests/mpi/h5_parallel_check}"
[ -x "$PROG" ] || fail "test program not built: $PROG"

for n in 1 2 4; do
  extra=()
  [ $n = 1 ] && extra=(--serial "$WORK/serial.h5")
  timeout 120 mpirun -n $n --oversubscribe "$PROG" "$WORK/p$n.h5" "${extra[@]}" \
    > "$WORK/o$n.txt" 2>&1 || { cat "$WORK/o$n.txt"; fail "mpirun -n $n failed"; }
  [ -f "$WORK/p$n.h5" ] || fail "no output file on $n ranks"
  grep -q '^deflate: libdeflate ' "$WORK/o$n.txt" || { cat "$WORK/o$n.txt"; fail "the chunks were not deflated by libdeflate"; }
  [ ! -e "$WORK/p$n.h5.part" ] || fail "part file left behind on $n ranks"
  h5dump -p "$WORK/p$n.h5" | tail -n +2 | grep -v '^ *OFFSET ' > "$WORK/d$n.txt"
done
for n in 2 4; do
  h5diff "$WORK/p1.h5" "$WORK/p$n.h5" > "$WORK/h5diff.txt" 2>&1 \
    || { head -40 "$WORK/h5diff.txt"; fail "datasets differ between 1 and $n ranks"; }
  cmp -s "$WORK/d1.txt" "$WORK/d$n.txt" || { diff "$WORK/d1.txt" "$WORK/d$n.txt" | head -20;
    fail "dataset properties or storage differ between 1 and $n ranks"; }
done

"$PY" - "$TALLY_SRC/tools" "$WORK" <<'EOF' || fail "values read back differ from those written"
import math, sys
import h5py
import numpy as np
import pandas as pd
sys.path.insert(0, sys.argv[1])
import tally_h5
work = sys.argv[2]

PIECES = ["", "a", "héllo", "日本語", "emoji 😀", "tab\there", 'quote"back\\slash']
LABELS = ["", "L1", "λ"]

def x(i):
    if i == 0: return -0.0
    if i % 17 == 3: return math.nan
    if i % 101 == 7: return math.inf
    if i % 101 == 8: return -math.inf
    return i * 3 / 16 - 50

def value(i):
    if i == 1: return -2**63
    if i == 2: return 2**63 - 1
    return ((i * 7919) % 1000003 - 500000) * 1000000007

def rows(n):
    r = range(n)
    return pd.DataFrame({
        "text": np.array([PIECES[i % 7] + "#" * (i % 13) + (str(i) if i % 5 else "") for i in r], dtype=object),
        "id": np.arange(n, dtype=np.int64),
        "value": np.array([value(i) for i in r], dtype=np.int64),
        "x": np.array([x(i) for i in r], dtype=np.float64),
        "label": np.array([LABELS[i % 3] for i in r], dtype=object),
        "tag": np.array(["w" * 300 if i == 4100 else f"t{i % 5}" for i in r], dtype=object)})

def same(got, want, what):
    assert list(got.columns) == list(want.columns), f"{what}: columns {list(got.columns)}"
    assert len(got) == len(want), f"{what}: {len(got)} rows, want {len(want)}"
    for c in want.columns:
        g, w = got[c].to_numpy(), want[c].to_numpy()
        assert g.dtype == w.dtype, f"{what}.{c}: dtype {g.dtype}, want {w.dtype}"
        if w.dtype == np.float64:  # bit patterns (-0.0 stays -0.0), NaN as NaN
            ok = (np.isnan(g) & np.isnan(w)) | (g.view(np.int64) == w.view(np.int64))
        else:
            ok = g == w
        bad = np.flatnonzero(~ok)
        assert not len(bad), f"{what}.{c}: row {bad[0]}: {g[bad[0]]!r}, want {w[bad[0]]!r}"

want = {
    "/data/rows": rows(70000),
    "/data/small": rows(10),
    "/data/empty": pd.DataFrame({"name": np.array([], dtype=object), "v": np.array([], dtype=np.float64)}),
    "/metrics/summary": pd.DataFrame({
        "name": np.array(["alpha", "β", "", "gamma γ", "delta"], dtype=object),
        "n": np.array([i * i - 3 for i in range(5)], dtype=np.int64),
        "mean": np.array([math.nan if i == 2 else i / 4 for i in range(5)])}),
}
for name in ["p1", "p2", "p4", "serial"]:
    path = f"{work}/{name}.h5"
    assert tally_h5.tables(path) == sorted(want), f"{name}: tables {tally_h5.tables(path)}"
    assert tally_h5.attrs(path) == {"job_name": "h5 parallel check ✓", "n_rows": 70000}, \
        f"{name}: attrs {tally_h5.attrs(path)}"
    for table, df in want.items():
        same(tally_h5.read_table(path, table), df, f"{name}:{table}")

with h5py.File(f"{work}/p4.h5", "r") as f:
    g = f["/data/rows"]
    # a text column is bytes + offsets; a short-string column is fixed-length, as wide as its
    # longest value in bytes (λ: 2), unless that passes 256 bytes (tag: row 4100's 300)
    assert list(g) == ["text.bytes", "text.offsets", "id", "value", "x", "label", "tag.bytes",
                       "tag.offsets"], list(g)
    for ds in g.values():
        assert ds.compression == "gzip" and ds.chunks, f"{ds.name} is not chunked + deflated"
    assert g["x"].attrs["doc"] == "a float64 with NaN and inf"
    assert g["text.offsets"].attrs["doc"] == "a string of varying length"
    assert "doc" not in g["label"].attrs  # empty docs are not written
    assert g["label"].dtype == np.dtype("S2"), g["label"].dtype
    assert h5py.check_string_dtype(g["label"].dtype).encoding == "utf-8"
    assert list(g["label"].asstr()[:4]) == ["", "L1", "λ", ""]  # h5py alone reads it
    assert list(pd.DataFrame({"label": g["label"][:3]})["label"]) == [b"", b"L1", "λ".encode()]
    s = f["/data/small"]
    assert list(s) == ["text.bytes", "text.offsets", "id", "value", "x", "label", "tag"], list(s)
    assert s["tag"].dtype == np.dtype("S2") and s["id"].chunks is None  # small: contiguous
    m = f["/metrics/summary"]
    assert m["name"].dtype == np.dtype("S8"), m["name"].dtype  # "gamma γ": 8 bytes
print("values ok")
EOF

# Windowed writes. The (N, W) pairs of more than 600 windows are left out (one collective round
# per window: 4097 rows by windows of 1 is 4097 rounds); windows of 1 and 7 are still covered
# on up to 586 rounds, with chunks rewritten by every window.
for n in 1 2 4; do
  extra=(--max-windows 600)
  [ $n = 1 ] && extra+=(--serial "$WORK/ms.h5")
  timeout 300 mpirun -n $n --oversubscribe "$PROG" "$WORK/m$n.h5" --matrix "${extra[@]}" \
    > "$WORK/mo$n.txt" 2>&1 || { cat "$WORK/mo$n.txt"; fail "mpirun -n $n --matrix failed"; }
  [ -f "$WORK/m$n.h5" ] && [ ! -e "$WORK/m$n.h5.part" ] || fail "--matrix on $n ranks: no file"
done
want_skip="skip n4097 w1 skip n70000 w1 skip n70000 w7 skip n200000 w1 skip n200000 w7"
for n in 1 4; do
  [ "$(grep ^skip "$WORK/mo$n.txt" | tr '\n' ' ')" = "$want_skip " ] \
    || { cat "$WORK/mo$n.txt"; fail "--matrix on $n rank(s): unexpected pairs left out"; }
done
# h5diff -c: every pair compared; the only objects it may call not comparable are empty datasets
# (the h5py check below covers those).
pairs=0
for n in 1 2 4; do
  for g in $(h5ls "$WORK/m$n.h5" | awk '$1 != "ref" {print $1}'); do
    for t in $(h5ls "$WORK/m$n.h5/$g" | awk '{print $1}'); do
      for ref in "$WORK/m$n.h5" "$WORK/m1.h5"; do
        h5diff -c "$ref" "$WORK/m$n.h5" "/ref/$t" "/$g/$t" > "$WORK/h5diff.txt" 2>&1 \
          || { head -20 "$WORK/h5diff.txt"; fail "$n ranks: /$g/$t differs from /ref/$t of $ref"; }
        if grep -v 'is an empty dataset$' "$WORK/h5diff.txt" | grep -q .; then
          cat "$WORK/h5diff.txt"; fail "$n ranks: /$g/$t not comparable with /ref/$t of $ref"
        fi
        pairs=$((pairs + 1))
      done
    done
  done
done
# 5 windows x 6 sizes - 4 pairs left out = 26 groups on 1 rank, 25 on 2 and 4; each twice
[ $pairs = $(( (25 + 25 + 25) * 2 )) ] || fail "h5diff compared $pairs pairs, want 150"
for t in n0 n1 n5 n4097 n70000 n200000; do
  h5diff -c "$WORK/ms.h5" "$WORK/ms.h5" "/ref/$t" "/rows/$t" > "$WORK/h5diff.txt" 2>&1 \
    || { head -20 "$WORK/h5diff.txt"; fail "serial writer: /rows/$t differs from /ref/$t"; }
  if grep -v 'is an empty dataset$' "$WORK/h5diff.txt" | grep -q .; then
    cat "$WORK/h5diff.txt"; fail "serial writer: /rows/$t not comparable with /ref/$t"
  fi
done

"$PY" - "$TALLY_SRC/tools" "$WORK" <<'EOF' || fail "windowed writes differ from write_slice"
import sys
import h5py
sys.path.insert(0, sys.argv[1])
import tally_h5
work = sys.argv[2]

PIECES = ["", "a", "héllo", "日本語", "emoji 😀", "tab\there", 'quote"back\\slash']
LABELS = ["", "L1", "λ"]
SIZES = [0, 1, 5, 4097, 70000, 200000]

def props(ds):
    s = h5py.check_string_dtype(ds.dtype)
    p = dict(dtype=ds.dtype.str if s is None else (s.encoding, s.length), shape=ds.shape,
             chunks=ds.chunks, compression=ds.compression, compression_opts=ds.compression_opts,
             shuffle=ds.shuffle, fletcher32=ds.fletcher32, scaleoffset=ds.scaleoffset,
             attrs={k: ds.attrs[k] for k in ds.attrs}, storage=ds.id.get_storage_size())
    if ds.chunks:  # every chunk's offset, compressed size and filter mask
        info = [ds.id.get_chunk_info(i) for i in range(ds.id.get_num_chunks())]
        p["chunks_stored"] = sorted((c.chunk_offset, c.size, c.filter_mask) for c in info)
    return p

def values(ds):
    if h5py.check_string_dtype(ds.dtype) is not None:
        return list(ds.asstr()[()])
    return ds[()].tobytes()  # bit patterns: NaN and -0.0 compare as written

def same_group(ga, gb, what, serial=False):
    assert list(ga) == list(gb), f"{what}: datasets {list(gb)}, want {list(ga)}"
    for name in ga:
        a, b = ga[name], gb[name]
        pa, pb = props(a), props(b)
        if serial and h5py.check_string_dtype(a.dtype) is not None:
            # variable-length strings are stored as global-heap references, which depend on the
            # order the heap was filled in (row by row over all columns here): not the sizes
            for p in (pa, pb):
                p.pop("storage"), p.pop("chunks_stored", None)
        assert pa == pb, f"{what}/{name}: properties {pb}, want {pa}"
        assert values(a) == values(b), f"{what}/{name}: values differ"

checked = 0
with h5py.File(f"{work}/m1.h5", "r") as f1:
    for n in [1, 2, 4]:
        with h5py.File(f"{work}/m{n}.h5", "r") as f:
            for g in f:
                if g == "ref":
                    continue
                for t in f[g]:
                    same_group(f["ref"][t], f[g][t], f"{n} ranks: /{g}/{t} vs /ref/{t}")
                    same_group(f1["ref"][t], f[g][t], f"{n} ranks: /{g}/{t} vs 1 rank's /ref/{t}")
                    checked += 1
    # the reference holds the intended rows (on 2 and 4 ranks it equals 1 rank's, checked above)
    for size in SIZES:
        df = tally_h5.read_table(f"{work}/m1.h5", f"/ref/n{size}")
        assert list(df["id"]) == list(range(size)), size
        want = [PIECES[i % 7] + "#" * (i % 13) + (str(i) if i % 5 else "") for i in range(size)]
        assert list(df["text"]) == want, size
        assert list(df["label"]) == [LABELS[i % 3] for i in range(size)], size
        assert list(df["tag"]) == ["w" * 300 if i == 4100 else f"t{i % 5}" for i in range(size)], size
assert checked == 75, checked
with h5py.File(f"{work}/m1.h5", "r") as f:
    g = f["/wdefault/n200000"]
    assert list(g) == ["text.bytes", "text.offsets", "id", "value", "x", "label", "tag.bytes",
                       "tag.offsets"], list(g)
    assert g["id"].chunks == (16384,) and g["id"].compression == "gzip" and g["id"].shuffle
    # a blob's chunks are 1 MiB (the whole blob when it is smaller)
    assert g["text.bytes"].chunks == (min(g["text.bytes"].shape[0], 1 << 20),) and not g["text.bytes"].shuffle
    assert g["text.bytes"].shape[0] > 1 << 20, g["text.bytes"].shape
    assert g["label"].chunks == (16384,) and g["label"].compression == "gzip" and not g["label"].shuffle
    assert list(f["/w7/n4097"]) == ["text.bytes", "text.offsets", "id", "value", "x", "label", "tag"]
    assert g["x"].attrs["doc"] == "a float64 with NaN and inf" and "doc" not in g["label"].attrs
    assert f["/w7/n4097/id"].chunks == (4097,) and f["/w7/n5/id"].chunks is None
with h5py.File(f"{work}/ms.h5", "r") as f:
    for size in SIZES:
        same_group(f[f"/ref/n{size}"], f[f"/rows/n{size}"], f"serial /rows/n{size}", serial=True)
    assert f["/rows/n200000/text"].chunks == (65536,)
print(f"windowed ok: {checked} groups")
EOF

for kind in rows longer shorter null; do
  rc=0
  timeout 60 mpirun -n 4 --oversubscribe "$PROG" "$WORK/bf.h5" --matrix --sizes 70000 \
    --windows 4096 --bad-fill $kind > "$WORK/err.txt" 2>&1 || rc=$?
  [ $rc != 0 ] || fail "bad fill ($kind) accepted"
  [ $rc != 124 ] || fail "bad fill ($kind): hang"
  case $kind in
    rows) msg="fill gave 4095 rows of 6 columns for rows \[4096, 8192) of '/w4096/n70000'" ;;
    longer) msg="fill gave longer strings in column 'text' of '/w4096/n70000' when writing" ;;
    shorter) msg="fill gave shorter strings in '/w4096/n70000' when writing" ;;
    null) msg="fill gave no table for rows \[4096, 8192) of '/w4096/n70000'" ;;
  esac
  [ "$(grep -c "$msg" "$WORK/err.txt")" = 4 ] \
    || { cat "$WORK/err.txt"; fail "bad fill ($kind): not the same clear error on every rank"; }
  [ ! -e "$WORK/bf.h5" ] && [ ! -e "$WORK/bf.h5.part" ] \
    || fail "bad fill ($kind): a file was left behind"
done

# Errors: the same message on every rank, a non-zero exit, no hang, nothing left behind.
rc=0
timeout 60 mpirun -n 2 --oversubscribe "$PROG" /nonexistent/x.h5 > "$WORK/err.txt" 2>&1 || rc=$?
[ $rc != 0 ] || fail "unwritable path accepted"
[ $rc != 124 ] || fail "unwritable path: hang"
[ "$(grep -c "cannot create output '/nonexistent/x.h5.part': No such file or directory" "$WORK/err.txt")" = 2 ] \
  || { cat "$WORK/err.txt"; fail "unwritable path: not the same clear error on both ranks"; }

rc=0
timeout 60 mpirun -n 2 --oversubscribe "$PROG" "$WORK/mm.h5" --mismatch > "$WORK/err.txt" 2>&1 || rc=$?
[ $rc != 0 ] || fail "tables differing between ranks accepted"
[ $rc != 124 ] || fail "tables differing between ranks: hang"
[ "$(grep -c "the ranks passed different tables for '/data/rows'" "$WORK/err.txt")" = 2 ] \
  || { cat "$WORK/err.txt"; fail "mismatch: not the same clear error on both ranks"; }
[ ! -e "$WORK/mm.h5" ] && [ ! -e "$WORK/mm.h5.part" ] || fail "mismatch: a file was left behind"

rc=0
timeout 60 mpirun -n 4 --oversubscribe "$PROG" "$WORK/ov.h5" --overlap > "$WORK/err.txt" 2>&1 || rc=$?
[ $rc != 0 ] || fail "overlapping slices accepted"
[ $rc != 124 ] || fail "overlapping slices: hang"
[ "$(grep -c "slices of '/data/rows' do not cover \[0, 70000) exactly once" "$WORK/err.txt")" = 4 ] \
  || { cat "$WORK/err.txt"; fail "overlap: not the same clear error on every rank"; }
[ ! -e "$WORK/ov.h5" ] && [ ! -e "$WORK/ov.h5.part" ] || fail "overlap: a file was left behind"

echo "e2e h5 parallel: 1, 2 and 4 ranks identical, values read back, windowed writes" \
  "identical to write_slice, errors agreed"
