"""Run-time references for tally's agreement table (tests/e2e/test_agree_sklearn.sh).
  make DIR    writes DIR/ratings.csv: random rating pairs from numpy (a 1-3 scale, a 1-10 scale,
              preferences as A/tie/B text, a 0/0.5/1 scale), some cells empty, and three raters
              of one 1-5 scale (for the multi-rater alpha); and DIR/metric column for the study
  check DIR   compares DIR/a.h5 (/stats/correlate/agreement, /stats/correlate/confusion) with
              scikit-learn's cohen_kappa_score and confusion_matrix, and with the published
              formulas in numpy (raw agreement, MT-Bench's without ties, Scott's pi,
              Krippendorff's alpha from the coincidence matrix, Wilson), and scipy's beta.ppf
              (Jeffreys): |got - want| <= 1e-12 (Jeffreys: 1e-9, a bisection on betainc)
"""
import sys

import numpy as np
from scipy import stats
from sklearn.metrics import cohen_kappa_score, confusion_matrix

sys.path.insert(0, sys.argv[3] if len(sys.argv) > 3 else "tools")
import tally_h5  # noqa: E402

cmd, d = sys.argv[1], sys.argv[2]
N = 400
PAIRS = [("j3", "h3"), ("j10", "h10"), ("pa", "pb"), ("jh", "hh"), ("r1", "r2"), ("r1", "r3"), ("r2", "r3")]
SCALE = sys.argv[4] if len(sys.argv) > 4 else "nominal"


def make():
    rng = np.random.default_rng(2024)
    cols = {}
    h3 = rng.integers(1, 4, N)
    cols["h3"], cols["j3"] = h3, np.clip(h3 + rng.integers(-1, 2, N), 1, 3)
    h10 = rng.integers(1, 11, N)
    cols["h10"], cols["j10"] = h10, np.clip(h10 + rng.integers(-2, 3, N), 1, 10)
    pa = rng.integers(-1, 2, N)
    pb = np.where(rng.random(N) < 0.6, pa, rng.integers(-1, 2, N))
    cols["pa"], cols["pb"] = pa, pb
    hh = rng.integers(0, 3, N) / 2
    cols["hh"], cols["jh"] = hh, np.where(rng.random(N) < 0.5, hh, rng.integers(0, 3, N) / 2)
    base = rng.integers(1, 6, N)
    for r in ("r1", "r2", "r3"):
        cols[r] = np.clip(base + rng.integers(-1, 2, N), 1, 5)
    txt = {k: [repr(float(v)) if k in ("hh", "jh") else str(int(v)) for v in cols[k]] for k in cols}
    txt["pa"] = [{-1: "A", 0: "tie", 1: "B"}[int(v)] for v in pa]
    txt["pb"] = [{-1: "model_a", 0: "TIE", 1: "model_b"}[int(v)] for v in pb]
    for k in ("j3", "h10", "r2", "r3"):  # missing cells
        for i in rng.choice(N, 15, replace=False):
            txt[k][i] = ""
    metric = rng.random(N)
    with open(d + "/ratings.csv", "w") as f:
        f.write("id,q,metric," + ",".join(txt) + "\n")
        for i in range(N):
            f.write(f"{i},{i // 4},{metric[i]!r}," + ",".join(txt[k][i] for k in txt) + "\n")


def parse(s):
    s = str(s)
    m = {"a": -1.0, "model_a": -1.0, "tie": 0.0, "b": 1.0, "model_b": 1.0}
    if s.lower() in m:
        return m[s.lower()]
    return float(s) if s else np.nan


def alpha_ref(votes, scale):
    """Krippendorff 2011: coincidences o_ck (pairs within a unit weighted 1/(m_u - 1)),
    alpha = 1 - (n - 1) sum o d2 / sum n_c n_k d2, over the values present."""
    vals = np.unique(votes[~np.isnan(votes)])
    V = len(vals)
    o = np.zeros((V, V))
    for row in votes:
        r = row[~np.isnan(row)]
        if len(r) < 2:
            continue
        ix = np.searchsorted(vals, r)
        for a in range(len(r)):
            for b in range(len(r)):
                if a != b:
                    o[ix[a], ix[b]] += 1 / (len(r) - 1)
    nc = o.sum(1)
    n = nc.sum()
    d2 = np.zeros((V, V))
    for c in range(V):
        for k in range(V):
            if scale == "nominal":
                d2[c, k] = c != k
            elif scale == "interval":
                d2[c, k] = (vals[c] - vals[k]) ** 2
            else:
                lo, hi = min(c, k), max(c, k)
                d2[c, k] = (nc[lo:hi + 1].sum() - (nc[c] + nc[k]) / 2) ** 2 if c != k else 0
    return 1 - (n - 1) * (o * d2).sum() / (np.outer(nc, nc) * d2).sum()


def close(got, want, what, tol=1e-12):
    if np.isnan(want) and np.isnan(got):
        return
    if not abs(got - want) <= tol * max(1.0, abs(want)):
        sys.exit(f"FAIL: {what}: tally {got!r}, reference {want!r}")


def check():
    import csv
    with open(d + "/ratings.csv") as f:
        rows = list(csv.DictReader(f))
    col = {k: np.array([parse(r[k]) for r in rows]) for k in rows[0] if k not in ("id", "q", "metric")}
    ag = tally_h5.read_table(d + "/a.h5", "/stats/correlate/agreement")
    cf = tally_h5.read_table(d + "/a.h5", "/stats/correlate/confusion")
    z = stats.norm.ppf(0.975)
    checked = 0
    for a, b in PAIRS:
        ok = ~np.isnan(col[a]) & ~np.isnan(col[b])
        x, y = col[a][ok], col[b][ok]
        labels = np.unique(np.concatenate([x, y]))
        sub = ag[(ag.a == a) & (ag.b == b)].set_index("statistic")
        got = sub.estimate
        if int(sub.n.iloc[0]) != ok.sum() or int(sub.left_out.iloc[0]) != (~ok).sum():
            sys.exit(f"FAIL: {a} vs {b}: n {sub.n.iloc[0]} left_out {sub.left_out.iloc[0]}, want {ok.sum()}")
        # sklearn takes labels as given; the 0/0.5/1 scale as indices (weights are by index)
        xi, yi = np.searchsorted(labels, x), np.searchsorted(labels, y)
        for st, w in (("kappa", None), ("kappa_linear", "linear"), ("kappa_quadratic", "quadratic")):
            close(got[st], cohen_kappa_score(xi, yi, weights=w), f"{a} vs {b} {st} (sklearn)")
        cm = confusion_matrix(xi, yi, labels=np.arange(len(labels)))
        c = cf[(cf.a == a) & (cf.b == b)]
        if not np.array_equal(c["count"].to_numpy().reshape(len(labels), len(labels)), cm):
            sys.exit(f"FAIL: {a} vs {b}: confusion matrix differs from sklearn's")
        if not np.array_equal(c.a_value.to_numpy()[::len(labels)], labels):
            sys.exit(f"FAIL: {a} vs {b}: category values")
        po = np.mean(x == y)
        close(got["raw"], po, f"{a} vs {b} raw")
        pref = set(labels) <= {-1.0, 0.0, 1.0}
        nt = (x != 0) & (y != 0)
        close(got["raw_no_ties"], np.mean(x[nt] == y[nt]) if pref else np.nan, f"{a} vs {b} raw_no_ties")
        pe = sum(((np.sum(x == v) + np.sum(y == v)) / (2 * len(x))) ** 2 for v in labels)
        close(got["scott_pi"], (po - pe) / (1 - pe), f"{a} vs {b} scott_pi")
        close(got["alpha"], alpha_ref(np.stack([x, y], 1), SCALE), f"{a} vs {b} alpha ({SCALE})")
        k, n = int(np.sum(x == y)), len(x)
        cen, half = (k + z * z / 2) / (n + z * z), z * np.sqrt(n) / (n + z * z) * np.sqrt(po * (1 - po) + z * z / (4 * n))
        close(sub.wilson_lo["raw"], cen - half, f"{a} vs {b} wilson_lo")
        close(sub.wilson_hi["raw"], cen + half, f"{a} vs {b} wilson_hi")
        close(sub.jeffreys_lo["raw"], stats.beta.ppf(0.025, k + .5, n - k + .5), f"{a} vs {b} jeffreys_lo", 1e-9)
        close(sub.jeffreys_hi["raw"], stats.beta.ppf(0.975, k + .5, n - k + .5), f"{a} vs {b} jeffreys_hi", 1e-9)
        for st in sub.index:
            if not np.isnan(got[st]) and not sub.ci_lo[st] <= sub.ci_hi[st]:
                sys.exit(f"FAIL: {a} vs {b} {st}: CI [{sub.ci_lo[st]}, {sub.ci_hi[st]}]")
        checked += 1
    multi = ag[ag.a == "r1,r2,r3"]
    if len(multi) != 1:
        sys.exit("FAIL: no multi-rater alpha row")
    close(multi.estimate.iloc[0], alpha_ref(np.stack([col["r1"], col["r2"], col["r3"]], 1), SCALE), "alpha r1,r2,r3")
    print(f"agreement: {checked} pairs and the 3-rater alpha equal sklearn/numpy/scipy ({SCALE})")


def check_compare():
    """p_holm / p_bh of the compare table = Holm / BH of p_boot over each (group, statistic)
    family, by their published definitions (numpy); mde80 > 0 where delta has a spread."""
    cmp = tally_h5.read_table(d + "/c.h5", "/stats/correlate/compare")
    fams = 0
    for _, f in cmp.groupby(["group", "statistic"]):
        p = f.p_boot.to_numpy()
        m = len(p)
        o = np.argsort(p, kind="stable")
        holm = np.empty(m)
        holm[o] = np.minimum(1, np.maximum.accumulate((m - np.arange(m)) * p[o]))
        bh = np.empty(m)
        bh[o] = np.minimum(1, np.minimum.accumulate((m * p[o] / np.arange(1, m + 1))[::-1])[::-1])
        for got, want, what in ((f.p_holm, holm, "p_holm"), (f.p_bh, bh, "p_bh")):
            if not np.allclose(got.to_numpy(), want, rtol=0, atol=1e-15):
                sys.exit(f"FAIL: {what}: tally {got.to_numpy()}, reference {want}")
        if not (f.mde80 > 0).all():
            sys.exit(f"FAIL: mde80 {f.mde80.to_numpy()}")
        fams += 1
    if fams < 2 or len(cmp) < 6:
        sys.exit(f"FAIL: {fams} families, {len(cmp)} comparisons")
    print(f"compare: Holm and BH of {len(cmp)} comparisons in {fams} families equal the definitions")


{"make": make, "check": check, "check-compare": check_compare}[cmd]()
