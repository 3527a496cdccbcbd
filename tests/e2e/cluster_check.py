"""Python references of the cluster bootstrap and the system-level agreement (test_cluster_study.sh).

The draws are tally's: resample r of m clusters draws j -> tl_boot_index(seed, r, j, m, 0), i.e.
Philox4x32-10 (Random123: Salmon et al., SC'11) with key {seed lo, seed hi} and counter
{j / 2, r lo, r hi, 0}; words (0, 1) serve even j and (2, 3) odd j as u = w_lo | w_hi << 32, and
the index is floor(u * m / 2^64) (include/tally/boot.h). A row weighs its cluster's count; the
statistics are scipy's on the weighted sample expanded (np.repeat).

  study H5 STUDY SEED CI     checks /stats/STUDY (item level) against the reference: every
                             resample value, the estimates, the percentile CIs
  system H5 STUDY SEED CI SYSCOL
                             checks /stats/STUDY/system/summary: per-system means, Spearman and
                             Kendall over the systems, percentile CIs
  make DIR                   DIR/sys.csv: 5 systems x 40 questions, a human score and 2 metrics
"""
import sys

import numpy as np
from scipy import stats

M32 = 0xFFFFFFFF


def philox(c, k):
    c, k = list(c), list(k)
    for rnd in range(10):
        if rnd:
            k = [(k[0] + 0x9E3779B9) & M32, (k[1] + 0xBB67AE85) & M32]
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & M32, (p0 >> 32) ^ c[3] ^ k[1], p0 & M32]
    return c


def counts(seed, r, m):
    w = np.zeros(m, dtype=np.int64)
    key = [seed & M32, seed >> 32]
    for j in range(0, m, 2):
        o = philox([j >> 1, r & M32, r >> 32, 0], key)
        for h in range(2):
            if j + h < m:
                u = o[2 * h] | (o[2 * h + 1] << 32)
                w[(u * m) >> 64] += 1
    return w


def first_seen_ids(col):
    ids, out = {}, []
    for v in col:
        out.append(ids.setdefault(v, len(ids)))
    return np.array(out), len(ids)


def load(h5, study):
    """The study's params, its usable rows (every named column numeric) in table order, its
    human column and metrics. The table: /items/<bench> of the run, or the input CSV."""
    sys.path.insert(0, "tools")
    import pandas as pd
    import tally_h5
    par = tally_h5.read_table(h5, "/stats/%s/params" % study)
    src = par["input"].iloc[0]
    t = tally_h5.read_table(h5, src) if src.startswith("/items/") else pd.read_csv(src, dtype=str, keep_default_na=False)
    human = par["human"].iloc[0]
    metrics = par["metrics"].iloc[0].split(",")
    cols = [human] + metrics
    t = t.copy()
    for c in cols:
        t[c] = pd.to_numeric(t[c], errors="coerce").astype(float)
    t = t[np.isfinite(t[cols].to_numpy(dtype=float)).all(axis=1)].reset_index(drop=True)
    return par, t, human, metrics


def check_study(h5, study, seed, ci):
    sys.path.insert(0, "tools")
    import tally_h5
    par, t, human, metrics = load(h5, study)
    ccol = par["cluster"].iloc[0]
    assert ccol, "the study did not resample clusters"
    cl, m = first_seen_ids(t[ccol])
    assert int(par["clusters"].iloc[0]) == m, (int(par["clusters"].iloc[0]), m)
    B = int(par["resamples"].iloc[0])
    res = tally_h5.read_table(h5, "/stats/%s/resamples" % study)
    summ = tally_h5.read_table(h5, "/stats/%s/summary" % study)
    h = t[human].to_numpy(float)
    vals = {(mt, s): [] for mt in metrics for s in ("spearman", "kendall_b")}
    worst = 0.0
    for r in range(B):
        w = counts(seed, r, m)[cl]
        hh = np.repeat(h, w)
        for mt in metrics:
            x = np.repeat(t[mt].to_numpy(float), w)
            for s, f in (("spearman", stats.spearmanr), ("kendall_b", stats.kendalltau)):
                want = f(x, hh).statistic
                got = float(res[mt + ":" + s].iloc[r])
                assert (np.isnan(want) and np.isnan(got)) or abs(want - got) < 1e-12, (r, mt, s, want, got)
                if not np.isnan(want):
                    worst = max(worst, abs(want - got))
                vals[(mt, s)].append(want)
    a = (1 - ci) / 2
    for (mt, s), v in vals.items():
        v = np.array(v)
        v = v[~np.isnan(v)]
        row = summ[(summ.metric == mt) & (summ.statistic == s)]
        lo, hi = np.percentile(v, [100 * a, 100 * (1 - a)])
        est = (stats.spearmanr if s == "spearman" else stats.kendalltau)(t[mt].to_numpy(float), h).statistic
        assert abs(float(row.estimate.iloc[0]) - est) < 1e-12, (mt, s, est)
        assert abs(float(row.ci_lo.iloc[0]) - lo) < 1e-12 and abs(float(row.ci_hi.iloc[0]) - hi) < 1e-12, (mt, s, lo, hi)
    print("cluster bootstrap: %d resamples of %d clusters x %d values equal scipy's on the expanded sample "
          "(worst %.1e); percentile CIs equal numpy's" % (B, m, 2 * len(metrics), worst))


def sys_values(t, human, metrics, sysid, nsys, w):
    out = {}
    den = np.bincount(sysid, weights=w, minlength=nsys)
    ok = den > 0
    hm = np.bincount(sysid, weights=w * t[human].to_numpy(float), minlength=nsys)[ok] / den[ok]
    for mt in metrics:
        xm = np.bincount(sysid, weights=w * t[mt].to_numpy(float), minlength=nsys)[ok] / den[ok]
        out[(mt, "spearman")] = stats.spearmanr(xm, hm).statistic if ok.sum() >= 2 else np.nan
        out[(mt, "kendall_b")] = stats.kendalltau(xm, hm).statistic if ok.sum() >= 2 else np.nan
    return out


def check_system(h5, study, seed, ci, sys_col):
    sys.path.insert(0, "tools")
    import tally_h5
    par, t, human, metrics = load(h5, study)
    assert par["system"].iloc[0] == sys_col
    ccol = par["cluster"].iloc[0]
    cl, m = first_seen_ids(t[ccol]) if ccol else (np.arange(len(t)), len(t))
    sysid, nsys = first_seen_ids(t[sys_col])
    B = int(par["resamples"].iloc[0])
    summ = tally_h5.read_table(h5, "/stats/%s/system/summary" % study)
    full = sys_values(t, human, metrics, sysid, nsys, np.ones(len(t)))
    boot = {k: [] for k in full}
    for r in range(B):
        for k, v in sys_values(t, human, metrics, sysid, nsys, counts(seed, r, m)[cl].astype(float)).items():
            boot[k].append(v)
    a = (1 - ci) / 2
    for (mt, s), est in full.items():
        row = summ[(summ.metric == mt) & (summ.statistic == s)]
        assert len(row) == 1 and int(row.n.iloc[0]) == nsys, (mt, s)
        got = float(row.estimate.iloc[0])
        assert (np.isnan(est) and np.isnan(got)) or abs(got - est) < 1e-12, (mt, s, est, got)
        v = np.array(boot[(mt, s)])
        nd = int((~np.isnan(v)).sum())
        assert int(row.n_defined.iloc[0]) == nd, (mt, s, nd)
        lo, hi = np.percentile(v[~np.isnan(v)], [100 * a, 100 * (1 - a)])
        assert abs(float(row.ci_lo.iloc[0]) - lo) < 1e-12 and abs(float(row.ci_hi.iloc[0]) - hi) < 1e-12, (mt, s, lo, hi)
    print("system level: %d systems, %d resamples of %d clusters: estimates and CIs equal scipy/numpy" % (nsys, B, m))


def make(d):
    rng = np.random.default_rng(7)
    with open(d + "/sys.csv", "w") as f:
        f.write("q,model,human,m1,m2\n")
        skill = {"s%d" % k: 0.15 * k for k in range(5)}
        for q in range(40):
            diff = rng.normal()
            for s, sk in skill.items():
                hv = float(rng.normal(sk - diff, 0.5) > 0)
                f.write("%d,%s,%r,%r,%r\n" % (q, s, hv, round(sk - diff + rng.normal(0, 0.7), 3),
                                               float(rng.integers(0, 3)) / 2))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "make":
        make(sys.argv[2])
    elif cmd == "study":
        check_study(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))
    elif cmd == "system":
        check_system(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
