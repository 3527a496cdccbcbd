#!/usr/bin/env bash
# The parallel HDF5 writer (src/par/h5_parallel.c), driven by build/tests/mpi/h5_parallel_check
# (tests/mpi/h5_parallel_check.c) under mpirun:
# - 1, 2 and 4 ranks (uneven splits, a rank with no rows, slices in reverse rank order) give the
#   same datasets and attributes (h5diff), and the same dataset properties, chunk sizes and
#   compressed sizes (h5dump -p with file offsets removed);
# - tools/tally_h5.py reads every value back as written (Python recomputes each row from its
#   index), the blob + offsets string layout comes back as str columns in file order, the big
#   columns are chunked and deflated, and the tables equal those of the serial writer;
# - an unwritable path, tables that differ between ranks and overlapping slices give every rank
#   the same error, a non-zero exit and no hang, and leave no file behind.
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
        "label": np.array([LABELS[i % 3] for i in r], dtype=object)})

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
    assert list(g) == ["text.bytes", "text.offsets", "id", "value", "x", "label.bytes",
                       "label.offsets"], list(g)
    for ds in g.values():
        assert ds.compression == "gzip" and ds.chunks, f"{ds.name} is not chunked + deflated"
    assert g["x"].attrs["doc"] == "a float64 with NaN and inf"
    assert g["text.offsets"].attrs["doc"] == "a string of varying length"
    assert "doc" not in g["label.bytes"].attrs  # empty docs are not written
    assert f["/data/small/id"].chunks is None   # small datasets stay contiguous
print("values ok")
EOF

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

echo "e2e h5 parallel: 1, 2 and 4 ranks identical, values read back, errors agreed"
