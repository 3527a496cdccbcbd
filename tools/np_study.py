#!/usr/bin/env python3
# The strong-user reference of bench/correlate_bench.sh: a vectorized numpy paired bootstrap of
# Spearman rho and Kendall tau-b on ANY shape of table (what a researcher fluent in numpy would
# write instead of a scipy loop). It generalises ../shared/bench/np_study.py (which reads four
# fixed columns and marginalises the joint table with a dense GEMM, impossible with two wide
# metrics): per chunk of R resamples one draw matrix idx (R x n, numpy's PCG64), then per metric
# ONE gather + np.bincount of its (x level, y level) cell ids gives its cell weights W (R x C);
# the statistics are the same vectorized formulas (doubled average ranks from cumulative weights,
# Kendall S from per-y-level exclusive prefix sums read at the start of each x group). Its draws
# are numpy's, so its values agree with tally's only statistically; --verify K checks them
# against scipy.stats on K resamples.
# usage: np_study.py table.csv B seed --human COL --metrics A,B,... [--chunk R] [--verify K]
import sys, time
import numpy as np


def arg(name, default=None):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


class Study:
    def __init__(self, h, ms):
        self.n = len(h)
        _, hl = np.unique(h, return_inverse=True)
        self.Ly = Ly = int(hl.max()) + 1
        self.metric = []
        for m in ms:
            _, xl = np.unique(m, return_inverse=True)
            code = xl.astype(np.int64) * Ly + hl
            ucode, cellof = np.unique(code, return_inverse=True)  # cells sorted by (x, y)
            C = len(ucode); ccx = ucode // Ly; ccy = ucode % Ly
            xchange = np.ones(C, bool); xchange[1:] = ccx[1:] != ccx[:-1]
            xstart = np.flatnonzero(xchange)
            gstart = np.repeat(xstart, np.diff(np.append(xstart, C)))
            Y = np.zeros((C, Ly)); Y[np.arange(C), ccy] = 1.0
            self.metric.append(dict(C=C, cell=cellof.astype(np.int32), cy=ccy, xstart=xstart,
                                    xidx=np.cumsum(xchange) - 1, gstart=gstart, Y=Y))

    def stats(self, W, m):
        """W: (R, C) float64 cell weights of metric m -> rho[R], tau_b[R]."""
        wx = np.add.reduceat(W, m["xstart"], axis=1)
        wy = W @ m["Y"]
        N = wy.sum(1)
        bx = 2 * np.cumsum(wx, 1) - wx + 1; by = 2 * np.cumsum(wy, 1) - wy + 1
        sab = ((W * bx[:, m["xidx"]]) @ m["Y"] * by).sum(1)
        saa = (wx * bx * bx).sum(1); sbb = (wy * by * by).sum(1)
        c = N * (N + 1) ** 2
        rho = (sab - c) / np.sqrt((saa - c) * (sbb - c))
        cy, gs = m["cy"], m["gstart"]
        below = np.zeros(W.shape); above = np.zeros(W.shape)
        for l in range(self.Ly):
            Wl = W * (cy == l)
            Eg = (np.cumsum(Wl, 1) - Wl)[:, gs]
            below += Eg * (cy > l); above += Eg * (cy < l)
        S = (W * (below - above)).sum(1)
        n0 = N * (N - 1) / 2
        xt = (wx * (wx - 1) / 2).sum(1); yt = (wy * (wy - 1) / 2).sum(1)
        return rho, S / np.sqrt((n0 - xt) * (n0 - yt))

    def run(self, B, seed, chunk=50, idx_hook=None):
        rng = np.random.default_rng(seed)
        out = np.empty((B, len(self.metric), 2))
        for s0 in range(0, B, chunk):
            R = min(chunk, B - s0)
            idx = rng.integers(0, self.n, size=(R, self.n), dtype=np.int32)
            if idx_hook is not None: idx_hook(s0, idx)
            off = (np.arange(R, dtype=np.int64))[:, None]
            for k, m in enumerate(self.metric):
                codes = m["cell"][idx] + off * m["C"]
                W = np.bincount(codes.ravel(), minlength=R * m["C"]).reshape(R, m["C"]).astype(np.float64)
                rho, tau = self.stats(W, m)
                out[s0:s0 + R, k, 0] = rho; out[s0:s0 + R, k, 1] = tau
        return out


if __name__ == "__main__":
    path, B, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    human, names = arg("--human", "human"), arg("--metrics").split(",")
    chunk = int(arg("--chunk", 50))
    t0 = time.perf_counter()
    x = np.genfromtxt(path, delimiter=",", names=True)
    h, ms = x[human], [x[m] for m in names]
    st = Study(h, ms)
    t1 = time.perf_counter()
    if "--verify" in sys.argv:
        from scipy import stats
        K = int(arg("--verify"))
        saved = {}
        def hook(s0, idx):
            for r in range(idx.shape[0]): saved[s0 + r] = idx[r].copy()
        out = st.run(K, seed, chunk=K, idx_hook=hook)
        md = 0.0
        for r in range(K):
            idx = saved[r]
            for k, m in enumerate(ms):
                rs = stats.spearmanr(m[idx], h[idx]).correlation
                kt = stats.kendalltau(m[idx], h[idx]).correlation
                md = max(md, abs(rs - out[r, k, 0]), abs(kt - out[r, k, 1]))
        print("max |np - scipy| over %d resamples x %d metrics x 2 stats = %.3g" % (K, len(ms), md))
        sys.exit(0 if md < 1e-9 else 1)
    out = st.run(B, seed, chunk)
    t2 = time.perf_counter()
    lo, hi = np.percentile(out, [2.5, 97.5], axis=0)
    d = out[:, :, None, :] - out[:, None, :, :]
    dlo, dhi = np.percentile(d, [2.5, 97.5], axis=0)
    t3 = time.perf_counter()
    print("numpy-vectorized: load+setup %.3f s, resampling %.3f s, summary %.3f s, B=%d, cells=%s"
          % (t1 - t0, t2 - t1, t3 - t2, B, "/".join(str(m["C"]) for m in st.metric)))
    for k, m in enumerate(names):
        print("  %-8s rho [%.4f, %.4f] se %.4f  tau [%.4f, %.4f] se %.4f" % (m, lo[k, 0], hi[k, 0], out[:, k, 0].std(ddof=1), lo[k, 1], hi[k, 1], out[:, k, 1].std(ddof=1)))
