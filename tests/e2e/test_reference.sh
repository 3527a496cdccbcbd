#!/usr/bin/env bash
# The run path scores exactly as it did at commit 11380a1, before it was rewritten: the demo job
# at 1, 2 and 4 ranks gives the /items and /metrics of tests/fixtures/reference/demo.h5 (made by
# tools/make_reference.sh; see its README.md). Run from the source root with a relative job path:
# /items `source` holds the answer file's path as the job resolves it.
#  - /items: every dataset of the reference, exactly (tools/h5_same.py); the columns added since
#    are allowed: n_engine_error (only zeros), mode and image (SpatialEval's question mode and
#    image, checked by e2e_test_se_vision).
#  - /metrics/spatialeval: the tables are grouped by question mode now (tqa, vqa), their
#    accuracies divide by n and their std has ddof 1 (issue 27), so their datasets differ from
#    the reference's; their per-seed rows summed over the modes must give the reference's
#    integers (n, correct, every n_<status>) and its accuracy, bit for bit, and the means over
#    seeds of those accuracies its mean (to 1e-12: the order of the sums differs).
. "$(dirname "$0")/common.sh"
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
PY="${TALLY_PYTHON:-/usr/bin/python3}"
"$PY" -c "import h5py, numpy" 2>/dev/null || { echo "skipped: no h5py/numpy for $PY"; exit 77; }
REF="$TALLY_SRC/tests/fixtures/reference/demo.h5"
[ -f "$REF" ] || fail "no $REF"
for n in 1 2 4; do
  (cd "$TALLY_SRC" && mpirun -n $n --oversubscribe "$TALLY_BIN" run jobs/demo.json --out "$WORK/r$n.h5" --quiet) \
    > /dev/null 2> "$WORK/e$n.txt" || { cat "$WORK/e$n.txt"; fail "mpirun -n $n failed"; }
  "$PY" "$TALLY_SRC/tools/h5_same.py" "$REF" "$WORK/r$n.h5" /items --allow n_engine_error --skip se --skip mode --skip image ||
    fail "/items at $n ranks differs from the reference"
  "$PY" - "$REF" "$WORK/r$n.h5" <<'PY' || fail "/metrics at $n ranks differs from the reference"
import os, sys
import numpy as np
sys.path.insert(0, os.environ["TALLY_SRC"] + "/tools")
import tally_h5

def table(f, path):
    t = tally_h5.read_table(f, path)
    return {c: list(t[c]) for c in t.columns}

if True:
    fr, fo = sys.argv[1], sys.argv[2]
    checked = 0
    for parser in ("strict", "pr3", "legacy"):
        ref, new = table(fr, "/metrics/spatialeval/" + parser), table(fo, "/metrics/spatialeval/" + parser)
        ints = [c for c in ref if c in ("n", "correct") or c.startswith("n_")]
        pooled = {}
        for i in range(len(new["n"])):
            if new["task"][i] == "all":
                continue
            key = (new["model"][i], new["prompt_variant"][i], new["task"][i], int(new["qid"][i]), int(new["seed"][i]))
            acc = pooled.setdefault(key, {c: 0 for c in ints})
            for c in ints:
                acc[c] += int(new[c][i])
        keys = [(ref["model"][i], ref["prompt_variant"][i], ref["task"][i], int(ref["qid"][i]), int(ref["seed"][i]))
                for i in range(len(ref["n"]))]
        assert sorted(keys) == sorted(pooled), (parser, set(keys) ^ set(pooled))
        per = {}
        for i, key in enumerate(keys):
            for c in ints:
                assert pooled[key][c] == int(ref[c][i]), (parser, key, c, pooled[key][c], ref[c][i])
            a = np.float64(pooled[key]["correct"]) / np.float64(pooled[key]["n"])
            assert a.tobytes() == np.float64(ref["accuracy"][i]).tobytes(), (parser, key, a, ref["accuracy"][i])
            per.setdefault(key[:4], []).append((key[4], a))
            checked += 1
        ra = table(fr, "/metrics/spatialeval/%s_across_seeds" % parser)
        for i in range(len(ra["mean"])):
            key = (ra["model"][i], ra["prompt_variant"][i], ra["task"][i], int(ra["qid"][i]))
            accs = [a for _, a in sorted(per[key])]
            assert len(accs) == ra["n_seeds"][i] and abs(np.mean(accs) - ra["mean"][i]) < 1e-12, (parser, key)
            checked += 1
    print("reference /metrics: %d rows equal over the modes" % checked)
PY
done
echo "e2e reference: /items and the /metrics counts at 1, 2 and 4 ranks identical to commit 11380a1"
