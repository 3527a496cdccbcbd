"""End-to-end checks of `tally correlate` against scipy, used by test_correlate.sh.
  make DIR            writes DIR/table.csv (two groups, tie-heavy and continuous metrics, one bad
                      row), DIR/idx.npy (B=40 resamples of group 'dataset=a'), DIR/a.csv
  check-indices DIR   compares DIR/idx.h5 (tally correlate --indices) with scipy per resample
  check-full DIR      compares full-data estimates in DIR/r1.h5 with scipy on each group
"""
import sys

import numpy as np
from scipy import stats

sys.path.insert(0, sys.argv[3] if len(sys.argv) > 3 else "tools")
import tally_h5  # noqa: E402

cmd, d = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(12345)


def make():
    rows = []
    for g, n in (("a", 300), ("b", 150)):
        h = rng.integers(0, 3, n) / 2.0
        vqa = np.choose(rng.integers(0, 5, n), [0, 0.3, 0.6, 0.9, 1.0])
        lave = np.clip(np.round(h * 2 + rng.normal(0, 0.8, n)), 0, 2) / 2
        cont = h + rng.normal(0, 0.6, n)
        for i in range(n):
            rows.append((g, h[i], vqa[i], lave[i], cont[i]))
    with open(d + "/table.csv", "w") as f:
        f.write("dataset,human,vqa_acc,lave,score\n")
        for i, r in enumerate(rows):
            f.write('%s,%r,%r,%r,%r\n' % r)
            if i == 10:
                f.write('a,0.5,"not a number",1,0.25\n')  # reported and excluded
    a = [r for r in rows if r[0] == "a"]
    with open(d + "/a.csv", "w") as f:
        f.write("human,vqa_acc,lave,score\n")
        for r in a:
            f.write("%r,%r,%r,%r\n" % r[1:])
    idx = rng.integers(0, len(a), (40, len(a)))
    np.save(d + "/idx.npy", idx.astype(np.int64))


def load_a():
    x = np.genfromtxt(d + "/a.csv", delimiter=",", names=True)
    return x


def check_indices():
    x = load_a()
    idx = np.load(d + "/idx.npy")
    res = tally_h5.read_table(d + "/idx.h5", "/stats/correlate/resamples")
    worst = 0.0
    for m in ("vqa_acc", "lave", "score"):
        for r in range(idx.shape[0]):
            hh, mm = x["human"][idx[r]], x[m][idx[r]]
            rho = stats.spearmanr(mm, hh).correlation
            tau = stats.kendalltau(mm, hh).correlation
            got_r = res[m + ":spearman"][r]
            got_t = res[m + ":kendall_b"][r]
            for want, got in ((rho, got_r), (tau, got_t)):
                if np.isnan(want):
                    assert np.isnan(got), (m, r, want, got)
                else:
                    worst = max(worst, abs(want - got))
    print("--indices vs scipy per resample: max abs diff %.3g over %d resamples x 3 metrics x 2 stats"
          % (worst, idx.shape[0]))
    assert worst <= 1e-12, worst


def check_full():
    summ = tally_h5.read_table(d + "/r1.h5", "/stats/correlate/summary")
    import csv
    groups = {}
    with open(d + "/table.csv") as f:
        for row in csv.DictReader(f):
            try:
                vals = [float(row[k]) for k in ("human", "vqa_acc", "lave", "score")]
            except ValueError:
                continue
            groups.setdefault("dataset=" + row["dataset"], []).append(vals)
    worst = 0.0
    for g, rows in groups.items():
        a = np.array(rows)
        for j, m in enumerate(("vqa_acc", "lave", "score")):
            rho = stats.spearmanr(a[:, j + 1], a[:, 0]).correlation
            tau = stats.kendalltau(a[:, j + 1], a[:, 0]).correlation
            for st, want in (("spearman", rho), ("kendall_b", tau)):
                sel = summ[(summ.group == g) & (summ.metric == m) & (summ.statistic == st)]
                assert len(sel) == 1, (g, m, st)
                worst = max(worst, abs(sel.estimate.iloc[0] - want))
                row = sel.iloc[0]
                assert row.ci_lo <= row.estimate <= row.ci_hi or row.ci_lo <= row.boot_mean <= row.ci_hi, row.to_dict()
                assert row.n_defined + row.n_undefined == 300, row.to_dict()
    print("full-data estimates vs scipy: max abs diff %.3g" % worst)
    assert worst <= 1e-12, worst
    assert sorted(set(summ.group)) == ["dataset=a", "dataset=b"]
    assert (summ[summ.group == "dataset=a"].n == 300).all()


{"make": make, "check-indices": check_indices, "check-full": check_full}[cmd]()
