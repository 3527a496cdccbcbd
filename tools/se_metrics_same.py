#!/usr/bin/python3
"""Compares the SpatialEval metric tables of a tally output with those of a reference made
before they were grouped by question mode (tools/make_reference.sh, tests/fixtures/reference):
the new per-seed rows of /metrics/spatialeval/<parser>, summed over the modes, must give every
reference row's integers (n, correct, each n_<status>) and its accuracy bit for bit, and the
mean over seeds of those accuracies the reference's across-seeds mean (to 1e-12: the order of
the sums differs). The overall rows (task "all") are not in the reference. The reference has no
engine errors, so its accuracy, correct / (n - n_engine_error), is correct / n as now.

usage: se_metrics_same.py REF.h5 OUT.h5     exit 0 when equal, 1 otherwise
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tally_h5  # noqa: E402


def table(f, path):
    t = tally_h5.read_table(f, path)
    return {c: list(t[c]) for c in t.columns}


def main(fr, fo):
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
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        sys.exit(2)
    try:
        sys.exit(main(sys.argv[1], sys.argv[2]))
    except (AssertionError, KeyError) as e:
        sys.stderr.write("se_metrics_same: differs: %r\n" % (e,))
        sys.exit(1)
