/* agree.c - agreement statistics between rating columns with bootstrap CIs, proportion
 * intervals, multiple-comparison adjustments and the paired MDE (tally/agree.h). Formulas and
 * their sources: docs/STATISTICS.md, section "Agreement". Every sum runs in a fixed index order,
 * so the same data give the same bits on any rank count. */
#define _POSIX_C_SOURCE 200809L
#include "tally/agree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tally/boot.h"

static const char *const AG_NAMES[TL_AG__N] = {"raw", "raw_no_ties", "kappa", "kappa_linear",
                                               "kappa_quadratic", "scott_pi", "alpha"};
const char *tl_agree_stat_name(tl_agree_stat s) { return (unsigned)s < TL_AG__N ? AG_NAMES[s] : "?"; }

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorted distinct values of v[0..n) into out (capacity cap); returns their number, or cap + 1
 * when there are more than cap. tmp: [n] scratch. */
static size_t distinct(const double *v, size_t n, double *tmp, double *out, size_t cap) {
  memcpy(tmp, v, n * sizeof *tmp);
  qsort(tmp, n, sizeof *tmp, cmp_dbl);
  size_t V = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || tmp[i] != tmp[i - 1]) {
      if (V == cap) return cap + 1;
      out[V++] = tmp[i];
    }
  return V;
}

static uint32_t cat_of(const double *cats, size_t V, double v) {
  const double *hit = bsearch(&v, cats, V, sizeof *cats, cmp_dbl);
  return (uint32_t)(hit - cats);
}

void tl_agree_release(tl_agree_data *d) {
  free(d->cats);
  free(d->a);
  free(d->b);
  memset(d, 0, sizeof *d);
}

tl_status tl_agree_prepare(const double *x, const double *y, uint32_t n, tl_agree_data *d, tl_err *err) {
  memset(d, 0, sizeof *d);
  d->tie = -1;
  if (n == 0) return tl_err_set(err, TL_EINPUT, "no item has both ratings");
  if (n > TL_BOOT_MAX_N) return tl_err_set(err, TL_EINPUT, "%u items, at most %d", n, TL_BOOT_MAX_N);
  for (uint32_t i = 0; i < n; i++)
    if (!isfinite(x[i]) || !isfinite(y[i])) return tl_err_set(err, TL_EINPUT, "item %u has a non-finite rating", i);
  double *both = malloc(2 * (size_t)n * sizeof *both), *tmp = malloc(2 * (size_t)n * sizeof *tmp);
  d->cats = malloc((TL_AGREE_MAX_CATS + 1) * sizeof *d->cats);
  d->a = malloc((size_t)n * sizeof *d->a);
  d->b = malloc((size_t)n * sizeof *d->b);
  if (!both || !tmp || !d->cats || !d->a || !d->b) {
    free(both); free(tmp); tl_agree_release(d);
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  memcpy(both, x, n * sizeof *both);
  memcpy(both + n, y, n * sizeof *both);
  size_t V = distinct(both, 2 * (size_t)n, tmp, d->cats, TL_AGREE_MAX_CATS);
  free(both);
  free(tmp);
  if (V > TL_AGREE_MAX_CATS) {
    tl_agree_release(d);
    return tl_err_set(err, TL_EINPUT, "more than %d distinct values: agreement needs rating columns (a scale)",
                      TL_AGREE_MAX_CATS);
  }
  d->V = V;
  d->n = n;
  for (uint32_t i = 0; i < n; i++) {
    d->a[i] = cat_of(d->cats, V, x[i]);
    d->b[i] = cat_of(d->cats, V, y[i]);
  }
  int pref = 1;
  for (size_t c = 0; c < V; c++) pref &= d->cats[c] == -1 || d->cats[c] == 0 || d->cats[c] == 1;
  if (pref)
    for (size_t c = 0; c < V; c++)
      if (d->cats[c] == 0) d->tie = (int)c;
  return TL_OK;
}

/* Cohen's kappa with disagreement weights W_ij = |i - j|^power (power 0: 1 off the diagonal):
 * kappa = 1 - sum W O / sum W E, E = outer(row sums, column sums) / N (scikit-learn's
 * cohen_kappa_score; Cohen 1960, 1968). */
static double kappa_w(const double *C, size_t V, const double *row, const double *col, double N, int power) {
  double num = 0, den = 0;
  for (size_t i = 0; i < V; i++)
    for (size_t j = 0; j < V; j++) {
      if (i == j) continue;
      double d = i > j ? (double)(i - j) : (double)(j - i);
      double w = power == 0 ? 1 : power == 1 ? d : d * d;
      num += w * C[i * V + j];
      den += w * row[i] * col[j] / N;
    }
  if (!(N > 0) || !(den > 0)) return NAN;
  return 1 - num / den;
}

void tl_agree_stats(const double *C, size_t V, const double *cats, int tie, tl_kripp_metric m,
                    double out[TL_AG__N]) {
  double row[TL_AGREE_MAX_CATS] = {0}, col[TL_AGREE_MAX_CATS] = {0}, o[TL_AGREE_MAX_CATS * TL_AGREE_MAX_CATS];
  for (int s = 0; s < TL_AG__N; s++) out[s] = NAN;
  if (V == 0 || V > TL_AGREE_MAX_CATS) return;
  double N = 0, diag = 0, nt = 0, nt_diag = 0;
  for (size_t i = 0; i < V; i++)
    for (size_t j = 0; j < V; j++) {
      double c = C[i * V + j];
      row[i] += c;
      col[j] += c;
      N += c;
      if (i == j) diag += c;
      if (tie >= 0 && (int)i != tie && (int)j != tie) {
        nt += c;
        if (i == j) nt_diag += c;
      }
      o[i * V + j] = C[i * V + j] + C[j * V + i]; /* coincidences of two coders: o = C + C^T */
    }
  if (!(N > 0)) return;
  out[TL_AG_RAW] = diag / N;
  if (tie >= 0 && nt > 0) out[TL_AG_RAW_NO_TIES] = nt_diag / nt;
  out[TL_AG_KAPPA] = kappa_w(C, V, row, col, N, 0);
  out[TL_AG_KAPPA_LINEAR] = kappa_w(C, V, row, col, N, 1);
  out[TL_AG_KAPPA_QUAD] = kappa_w(C, V, row, col, N, 2);
  /* Scott (1955): pi = (p_o - p_e) / (1 - p_e), p_e = sum_c ((row_c + col_c) / 2N)^2 */
  double pe = 0;
  for (size_t c = 0; c < V; c++) pe += ((row[c] + col[c]) / (2 * N)) * ((row[c] + col[c]) / (2 * N));
  if (pe < 1) out[TL_AG_SCOTT_PI] = (diag / N - pe) / (1 - pe);
  out[TL_AG_ALPHA] = tl_kripp_alpha(o, V, 1.0, m, cats);
}

void tl_agree_res_release(tl_agree_res *r) {
  free(r->confusion);
  r->confusion = NULL;
}

/* Fills ci from the full-data value and the B resample values v (v is sorted in place). */
static void summarize(double est, double *v, uint64_t B, double level, tl_agree_ci *ci) {
  ci->estimate = est;
  ci->se = ci->ci_lo = ci->ci_hi = NAN;
  size_t k = 0;
  for (uint64_t r = 0; r < B; r++)
    if (!isnan(v[r])) v[k++] = v[r];
  ci->n_undefined = (int64_t)(B - k);
  if (k == 0) return;
  if (k >= 2) {
    double ss;
    tl_mean_ss(v, k, &ss);
    ci->se = sqrt(ss / (double)(k - 1));
  }
  tl_sort_f64(v, k);
  ci->ci_lo = tl_quantile_sorted(v, k, (1 - level) / 2);
  ci->ci_hi = tl_quantile_sorted(v, k, (1 + level) / 2);
}

/* Item weights of resample r: the counts of the items, or of their clusters. wc: [ncl] scratch. */
static void draw(uint64_t seed, uint64_t r, uint32_t n, const uint32_t *cluster, uint32_t ncl, int32_t *wc,
                 int32_t *w) {
  if (!cluster) {
    tl_boot_counts(seed, r, n, w);
    return;
  }
  tl_boot_counts(seed, r, ncl, wc);
  for (uint32_t i = 0; i < n; i++) w[i] = wc[cluster[i]];
}

static tl_status check_clusters(const uint32_t *cluster, uint32_t n, uint32_t ncl, double level, tl_err *err) {
  if (!(level > 0 && level < 1)) return tl_err_set(err, TL_EINPUT, "CI level %g is not in (0, 1)", level);
  if (!cluster) return TL_OK;
  if (ncl == 0 || ncl > TL_BOOT_MAX_N) return tl_err_set(err, TL_EINPUT, "%u clusters", ncl);
  for (uint32_t i = 0; i < n; i++)
    if (cluster[i] >= ncl) return tl_err_set(err, TL_EINPUT, "item %u: cluster %u out of [0, %u)", i, cluster[i], ncl);
  return TL_OK;
}

/* The proportion counts and their intervals. */
static void proportions(const tl_agree_data *d, double level, tl_agree_res *out) {
  const size_t V = d->V;
  for (size_t i = 0; i < V; i++)
    for (size_t j = 0; j < V; j++) {
      int64_t c = out->confusion[i * V + j];
      out->n += c;
      if (i == j) out->agree += c;
      if (d->tie >= 0 && (int)i != d->tie && (int)j != d->tie) {
        out->n_nt += c;
        if (i == j) out->agree_nt += c;
      }
    }
  tl_wilson(out->agree, out->n, level, &out->wilson_lo, &out->wilson_hi);
  tl_jeffreys(out->agree, out->n, level, &out->jeffreys_lo, &out->jeffreys_hi);
  tl_wilson(out->agree_nt, out->n_nt, level, &out->wilson_nt_lo, &out->wilson_nt_hi);
  tl_jeffreys(out->agree_nt, out->n_nt, level, &out->jeffreys_nt_lo, &out->jeffreys_nt_hi);
}

tl_status tl_agree_boot(const tl_agree_data *d, const uint32_t *cluster, uint32_t ncl, tl_kripp_metric m,
                        uint64_t B, uint64_t seed, double level, tl_agree_res *out, tl_err *err) {
  memset(out, 0, sizeof *out);
  tl_status st = check_clusters(cluster, d->n, ncl, level, err);
  if (st) return st;
  const size_t V = d->V, n = d->n;
  out->confusion = calloc(V * V, sizeof *out->confusion);
  double *C = calloc(V * V, sizeof *C);
  double *vals = B ? malloc((size_t)B * TL_AG__N * sizeof *vals) : NULL;
  int32_t *w = malloc(n * sizeof *w), *wc = malloc((cluster ? ncl : 1) * sizeof *wc);
  double *col = B ? malloc((size_t)B * sizeof *col) : NULL;
  if (!out->confusion || !C || (B && (!vals || !col)) || !w || !wc) {
    st = tl_err_set(err, TL_ENOMEM, "out of memory (%llu resamples)", (unsigned long long)B);
    goto done;
  }
  for (size_t i = 0; i < n; i++) out->confusion[d->a[i] * V + d->b[i]]++;
  for (size_t q = 0; q < V * V; q++) C[q] = (double)out->confusion[q];
  double full[TL_AG__N];
  tl_agree_stats(C, V, d->cats, d->tie, m, full);
  for (uint64_t r = 0; r < B; r++) {
    draw(seed, r, d->n, cluster, ncl, wc, w);
    memset(C, 0, V * V * sizeof *C);
    for (size_t i = 0; i < n; i++) C[d->a[i] * V + d->b[i]] += w[i];
    tl_agree_stats(C, V, d->cats, d->tie, m, vals + r * TL_AG__N);
  }
  for (int s = 0; s < TL_AG__N; s++) {
    for (uint64_t r = 0; r < B; r++) col[r] = vals[r * TL_AG__N + (uint64_t)s];
    summarize(full[s], col, B, level, &out->s[s]);
  }
  proportions(d, level, out);
done:
  free(C); free(vals); free(w); free(wc); free(col);
  if (st) tl_agree_res_release(out);
  return st;
}

/* alpha of k coders with item weights w (NULL = 1): the weighted coincidence matrix (pairs
 * within item u weighted w_u / (m_u - 1)) passed to tl_kripp_alpha. ix: [n * k] category index,
 * -1 missing. */
static double alpha_weighted(const int *ix, uint32_t n, uint32_t k, const int32_t *w, size_t V,
                             const double *cats, tl_kripp_metric m, double *o) {
  memset(o, 0, V * V * sizeof *o);
  for (uint32_t u = 0; u < n; u++) {
    const int *r = ix + (size_t)u * k;
    uint32_t mu = 0;
    for (uint32_t j = 0; j < k; j++) mu += r[j] >= 0;
    if (mu < 2 || (w && w[u] == 0)) continue;
    double wu = (w ? (double)w[u] : 1.0) / (double)(mu - 1);
    for (uint32_t a = 0; a < k; a++)
      for (uint32_t b = 0; b < k; b++)
        if (a != b && r[a] >= 0 && r[b] >= 0) o[(size_t)r[a] * V + (size_t)r[b]] += wu;
  }
  return tl_kripp_alpha(o, V, 1.0, m, cats);
}

tl_status tl_agree_alpha_coders(const double *votes, uint32_t n, uint32_t k, const uint32_t *cluster,
                                uint32_t ncl, tl_kripp_metric m, uint64_t B, uint64_t seed, double level,
                                tl_agree_ci *out, tl_err *err) {
  memset(out, 0, sizeof *out);
  tl_status st = check_clusters(cluster, n, ncl, level, err);
  if (st) return st;
  if (n == 0 || k < 2 || n > TL_BOOT_MAX_N || (size_t)n * k / k != n)
    return tl_err_set(err, TL_EINPUT, "%u items x %u coders", n, k);
  size_t nk = (size_t)n * k, nv = 0;
  double *present = malloc(nk * sizeof *present), *tmp = malloc(nk * sizeof *tmp);
  double cats[TL_AGREE_MAX_CATS + 1];
  int *ix = malloc(nk * sizeof *ix);
  double *o = malloc(TL_AGREE_MAX_CATS * TL_AGREE_MAX_CATS * sizeof *o);
  int32_t *w = malloc((size_t)n * sizeof *w), *wc = malloc((cluster ? ncl : 1) * sizeof *wc);
  double *vals = malloc((B ? B : 1) * sizeof *vals);
  if (!present || !tmp || !ix || !o || !w || !wc || !vals) {
    st = tl_err_set(err, TL_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < nk; i++) {
    if (isnan(votes[i])) continue;
    if (!isfinite(votes[i])) { st = tl_err_set(err, TL_EINPUT, "item %zu: a non-finite rating", i / k); goto done; }
    present[nv++] = votes[i];
  }
  size_t V = distinct(present, nv, tmp, cats, TL_AGREE_MAX_CATS);
  if (V > TL_AGREE_MAX_CATS) {
    st = tl_err_set(err, TL_EINPUT, "more than %d distinct values: agreement needs rating columns", TL_AGREE_MAX_CATS);
    goto done;
  }
  for (size_t i = 0; i < nk; i++) ix[i] = isnan(votes[i]) ? -1 : (int)cat_of(cats, V, votes[i]);
  double est = V ? alpha_weighted(ix, n, k, NULL, V, cats, m, o) : NAN;
  for (uint64_t r = 0; r < B; r++) {
    draw(seed, r, n, cluster, ncl, wc, w);
    vals[r] = V ? alpha_weighted(ix, n, k, w, V, cats, m, o) : NAN;
  }
  summarize(est, vals, B, level, out);
done:
  free(present); free(tmp); free(ix); free(o); free(w); free(wc); free(vals);
  return st;
}

/* ---- proportions ---- */

void tl_wilson(int64_t k, int64_t n, double level, double *lo, double *hi) {
  *lo = *hi = NAN;
  if (n <= 0 || k < 0 || k > n || !(level > 0 && level < 1)) return;
  /* Brown, Cai & DasGupta (2001) eq. 4: center (k + z^2/2) / (n + z^2),
   * half-width z sqrt(n) / (n + z^2) * sqrt(p(1-p) + z^2 / (4n)), p = k / n */
  double z = tl_norm_ppf((1 + level) / 2), nn = (double)n, p = (double)k / nn, z2 = z * z;
  double c = ((double)k + z2 / 2) / (nn + z2);
  double h = z * sqrt(nn) / (nn + z2) * sqrt(p * (1 - p) + z2 / (4 * nn));
  *lo = k == 0 ? 0 : c - h;
  *hi = k == n ? 1 : c + h;
}

void tl_wilson_p(double p, double n, double level, double *lo, double *hi) {
  *lo = *hi = NAN;
  if (!(n > 0) || !(p >= 0 && p <= 1) || !(level > 0 && level < 1)) return;
  /* the same expression with k = p n (Brown, Cai & DasGupta 2001 eq. 4) */
  double z = tl_norm_ppf((1 + level) / 2), z2 = z * z, k = p * n;
  double c = (k + z2 / 2) / (n + z2);
  double h = z * sqrt(n) / (n + z2) * sqrt(p * (1 - p) + z2 / (4 * n));
  *lo = p == 0 ? 0 : c - h;
  *hi = p == 1 ? 1 : c + h;
}

double tl_beta_ppf(double p, double a, double b) {
  if (!(p >= 0 && p <= 1) || !(a > 0) || !(b > 0)) return NAN;
  if (p == 0) return 0;
  if (p == 1) return 1;
  double lo = 0, hi = 1;
  for (int it = 0; it < 200; it++) { /* stops when the midpoint no longer moves */
    double mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    if (tl_betainc(a, b, mid) < p) lo = mid;
    else hi = mid;
  }
  return lo + (hi - lo) / 2;
}

void tl_jeffreys(int64_t k, int64_t n, double level, double *lo, double *hi) {
  *lo = *hi = NAN;
  if (n <= 0 || k < 0 || k > n || !(level > 0 && level < 1)) return;
  double a = (double)k + 0.5, b = (double)(n - k) + 0.5;
  *lo = k == 0 ? 0 : tl_beta_ppf((1 - level) / 2, a, b);
  *hi = k == n ? 1 : tl_beta_ppf((1 + level) / 2, a, b);
}

/* ---- multiple comparisons ---- */

typedef struct {
  double p;
  size_t i;
} p_at;

static int cmp_p_at(const void *x, const void *y) {
  const p_at *a = x, *b = y;
  if (a->p != b->p) return (a->p > b->p) - (a->p < b->p);
  return (a->i > b->i) - (a->i < b->i); /* stable: ties keep their input order */
}

/* The non-NaN p-values sorted ascending into *out (malloc'd); returns m, or (size_t)-1 when out
 * of memory. */
static size_t sorted_p(const double *p, size_t n, p_at **out) {
  *out = malloc((n ? n : 1) * sizeof **out);
  if (!*out) return (size_t)-1;
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (!isnan(p[i])) (*out)[m++] = (p_at){p[i], i};
  qsort(*out, m, sizeof **out, cmp_p_at);
  return m;
}

void tl_p_holm(const double *p, size_t n, double *adj) {
  p_at *s;
  size_t m = sorted_p(p, n, &s);
  for (size_t i = 0; i < n; i++) adj[i] = NAN;
  if (m == (size_t)-1) return;
  /* Holm (1979): adj_(j) = max_{l <= j} min(1, (m - l + 1) p_(l)), j 1-based */
  double run = 0;
  for (size_t j = 0; j < m; j++) {
    double v = (double)(m - j) * s[j].p;
    if (v > 1) v = 1;
    if (v > run) run = v;
    adj[s[j].i] = run;
  }
  free(s);
}

void tl_p_bh(const double *p, size_t n, double *adj) {
  p_at *s;
  size_t m = sorted_p(p, n, &s);
  for (size_t i = 0; i < n; i++) adj[i] = NAN;
  if (m == (size_t)-1) return;
  /* Benjamini & Hochberg (1995): adj_(j) = min_{l >= j} min(1, m p_(l) / l), l 1-based */
  double run = 1;
  for (size_t j = m; j-- > 0;) {
    double v = (double)m * s[j].p / (double)(j + 1);
    if (v < run) run = v;
    adj[s[j].i] = run;
  }
  free(s);
}

/* ---- power ---- */

double tl_mde_from_se(double se, double alpha, double power) {
  if (!(alpha > 0 && alpha < 1) || !(power > 0 && power < 1) || !(se >= 0)) return NAN;
  return (tl_norm_ppf(1 - alpha / 2) + tl_norm_ppf(power)) * se;
}

double tl_mde_paired(const double *diff, size_t n, double alpha, double power) {
  if (n < 2) return NAN;
  double ss;
  tl_mean_ss(diff, n, &ss);
  return tl_mde_from_se(sqrt(ss / (double)(n - 1)) / sqrt((double)n), alpha, power);
}
