/* boot_system.c - system-level agreement (boot.h, tl_sys_*): per system (model) the mean of
 * each metric and of the human score, Spearman and Kendall's tau-b of the metric means against
 * the human means over the systems, with a bootstrap over clusters (questions).
 *
 * Definitions (docs/STATISTICS.md, "System-level agreement"): with row weights w_i (1 on the
 * full data; the count of row i's cluster in resample r, from tl_boot_counts(seed, r, m)), the
 * mean of system s is sum_{i in s} w_i x_i / sum_{i in s} w_i, summed in row order (so the bits
 * do not depend on who computes them). Systems with no weight are left out of that resample.
 * rho and tau-b of the P present systems' means come from the exact integer sufficient
 * statistics of the study engine (tl_suff_reference over the P points, unit weights: O(P^2),
 * P = the number of systems, a handful), so ties between means count as ties. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "boot_int.h"
#include "tally/boot.h"

static tl_status sys_check(const tl_sys_in *in) {
  if (in->n == 0 || in->nmetrics < 1 || in->nsystems == 0 || in->nstats < 1 || in->nstats > TL_STAT__N)
    return TL_EINPUT;
  for (uint32_t i = 0; i < in->n; i++)
    if (in->system[i] >= in->nsystems || (in->cluster && in->cluster[i] >= in->nclusters)) return TL_EINPUT;
  return TL_OK;
}

/* Weighted sums per system: sum[v * S + s] for variable v (0 = human, k + 1 = metric k) and
 * den[s], with row weight w[i] (NULL: 1), in row order. */
static void sys_sums(const tl_sys_in *in, const int32_t *w, double *sum, double *den) {
  const uint32_t S = in->nsystems;
  memset(sum, 0, (size_t)(in->nmetrics + 1) * S * sizeof *sum);
  memset(den, 0, (size_t)S * sizeof *den);
  for (uint32_t i = 0; i < in->n; i++) {
    const double wi = w ? (double)w[i] : 1.0;
    if (wi == 0) continue;
    const uint32_t s = in->system[i];
    den[s] += wi;
    sum[s] += wi * in->human[i];
    for (int k = 0; k < in->nmetrics; k++) sum[(size_t)(k + 1) * S + s] += wi * in->metric[k][i];
  }
}

tl_status tl_sys_means(const tl_sys_in *in, double *means) {
  if (sys_check(in) != TL_OK) return TL_EINPUT;
  const uint32_t S = in->nsystems;
  double *den = malloc((size_t)S * sizeof *den);
  if (!den) return TL_ENOMEM;
  sys_sums(in, NULL, means, den);
  for (int v = 0; v <= in->nmetrics; v++)
    for (uint32_t s = 0; s < S; s++) means[(size_t)v * S + s] = den[s] > 0 ? means[(size_t)v * S + s] / den[s] : NAN;
  free(den);
  return TL_OK;
}

/* The K values of one weighting: x = the metric means, y = the human means of the present
 * systems (xs, ys, ones: [S] scratch). */
static void sys_eval(const tl_sys_in *in, const int32_t *w, double *sum, double *den, double *xs, double *ys,
                     int32_t *ones, double *out) {
  const uint32_t S = in->nsystems;
  sys_sums(in, w, sum, den);
  for (int k = 0; k < in->nmetrics; k++) {
    uint32_t P = 0;
    for (uint32_t s = 0; s < S; s++) {
      if (!(den[s] > 0)) continue;
      xs[P] = sum[(size_t)(k + 1) * S + s] / den[s];
      ys[P] = sum[s] / den[s];
      ones[P++] = 1;
    }
    tl_suff sf;
    if (P >= 2) tl_suff_reference(xs, ys, ones, P, &sf);
    for (int t = 0; t < in->nstats; t++) {
      double v = NAN;
      if (P >= 2) v = in->stats[t] == TL_STAT_SPEARMAN ? tl_suff_spearman(&sf) : tl_suff_kendall_b(&sf);
      out[(size_t)k * in->nstats + t] = v;
    }
  }
}

tl_status tl_sys_values(const tl_sys_in *in, double *full, uint64_t r0, uint64_t r1, double *out) {
  if (sys_check(in) != TL_OK || r0 > r1 || r1 > in->B) return TL_EINPUT;
  const uint32_t S = in->nsystems, n = in->n, m = in->cluster ? in->nclusters : n;
  const size_t K = (size_t)in->nmetrics * in->nstats;
  double *sum = malloc((size_t)(in->nmetrics + 1) * S * sizeof *sum), *den = malloc((size_t)S * sizeof *den);
  double *xs = malloc((size_t)S * sizeof *xs), *ys = malloc((size_t)S * sizeof *ys);
  int32_t *ones = malloc((size_t)S * sizeof *ones), *wc = malloc((size_t)m * sizeof *wc);
  int32_t *w = malloc((size_t)n * sizeof *w);
  tl_status st = TL_ENOMEM;
  if (!sum || !den || !xs || !ys || !ones || !wc || !w) goto done;
  if (full) sys_eval(in, NULL, sum, den, xs, ys, ones, full);
  for (uint64_t r = r0; out && r < r1; r++) {
    tl_boot_counts(in->seed, r, m, wc);
    for (uint32_t i = 0; i < n; i++) w[i] = wc[in->cluster ? in->cluster[i] : i];
    sys_eval(in, w, sum, den, xs, ys, ones, out + (r - r0) * K);
  }
  st = TL_OK;
done:
  free(sum);
  free(den);
  free(xs);
  free(ys);
  free(ones);
  free(wc);
  free(w);
  return st;
}

tl_status tl_sys_summarize(const tl_sys_in *in, const double *full, const double *vals, double level,
                           tl_boot_summary *per) {
  if (!(level > 0 && level < 1)) return TL_EINPUT;
  const size_t K = (size_t)in->nmetrics * in->nstats;
  const uint64_t B = in->B;
  double *v = malloc((size_t)(B ? B : 1) * sizeof *v);
  if (!v) return TL_ENOMEM;
  for (size_t k = 0; k < K; k++) {
    tl_boot_summary *o = &per[k];
    size_t nd = 0;
    for (uint64_t r = 0; r < B; r++)
      if (!isnan(vals[r * K + k])) v[nd++] = vals[r * K + k];
    o->estimate = full[k];
    o->n_defined = (int64_t)nd;
    o->n_undefined = (int64_t)(B - nd);
    o->boot_mean = o->se = o->ci_lo = o->ci_hi = NAN;
    if (nd == 0) continue;
    double mean = 0, ss = 0;
    for (size_t i = 0; i < nd; i++) mean += v[i];
    mean /= (double)nd;
    for (size_t i = 0; i < nd; i++) ss += (v[i] - mean) * (v[i] - mean);
    o->boot_mean = mean;
    if (nd > 1) o->se = sqrt(ss / (double)(nd - 1));
    tl_sort_f64(v, nd);
    tl_boot_percentile_ci(v, nd, level, &o->ci_lo, &o->ci_hi);
  }
  free(v);
  return TL_OK;
}
