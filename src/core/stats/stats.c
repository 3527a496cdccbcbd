/* stats.c - CPU reference statistics (include/tally/stats.h), matching scipy 1.10.1.
 *
 * Every function is reentrant: no global mutable state, no lgamma() (it writes signgam), scratch
 * memory is malloc'd per call and freed before returning. An allocation failure gives NaN results
 * (the same as an undefined statistic), never a crash. Inputs never contain NaN (callers check).
 *
 * Where scipy's result depends on the order of floating-point operations, the same order is used
 * (numpy's pairwise summation, numpy.corrcoef's scaling, scipy's tau-b division order), so most
 * results agree with scipy to the last bit or a few ulps. The formulas, their sources and the
 * measured accuracy are in docs/STATISTICS.md, section "Reference statistics". */
#include "tally/stats.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TL_PI 3.14159265358979323846264338327950288
#define TL_SQRT1_2 0.70710678118654752440084436210484904
#define TL_LN_SQRT_2PI 0.91893853320467274178032973640561764 /* log(sqrt(2 pi)) */

/* ------------------------------------------------------------------------------------------ */
/* numpy-compatible summation                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* The summands of a reduction, produced on the fly so no temporary array is needed:
 * SUM_X: x[i];  SUM_DIFF: x[i] - y[i];  SUM_SQDEV: (x[i] - m)^2;  SUM_SQDEV_DIFF: (x[i]-y[i]-m)^2;
 * SUM_PROD_NORM: ((x[i] - m) / s) * ((y[i] - m2) / s2). */
typedef enum { SUM_X, SUM_DIFF, SUM_SQDEV, SUM_SQDEV_DIFF, SUM_PROD_NORM } sum_kind;
typedef struct {
  sum_kind kind;
  const double *x, *y;
  double m, s, m2, s2;
} sum_src;

static inline double sum_elem(const sum_src *s, size_t i) {
  double d;
  switch (s->kind) {
  case SUM_X: return s->x[i];
  case SUM_DIFF: return s->x[i] - s->y[i];
  case SUM_SQDEV: d = s->x[i] - s->m; return d * d;
  case SUM_SQDEV_DIFF: d = (s->x[i] - s->y[i]) - s->m; return d * d;
  case SUM_PROD_NORM: return ((s->x[i] - s->m) / s->s) * ((s->y[i] - s->m2) / s->s2);
  }
  return NAN;
}

/* numpy's pairwise_sum (numpy/core/src/umath/loops_utils.h.src): below 8 terms a plain loop,
 * up to 128 terms eight interleaved accumulators, above that a split at a multiple of 8. */
static double pw_sum(const sum_src *s, size_t i0, size_t n) {
  if (n < 8) {
    double res = 0.0;
    for (size_t i = 0; i < n; i++) res += sum_elem(s, i0 + i);
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (size_t j = 0; j < 8; j++) r[j] = sum_elem(s, i0 + j);
    size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (size_t j = 0; j < 8; j++) r[j] += sum_elem(s, i0 + i + j);
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++) res += sum_elem(s, i0 + i);
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pw_sum(s, i0, n2) + pw_sum(s, i0 + n2, n - n2);
}

/* np.add.reduce on a contiguous float64 array: pairwise sums of 8192-element buffers (numpy's
 * default ufunc buffer size), accumulated left to right. Verified bit-exact against np.sum. */
static double np_sum(const sum_src *s, size_t n) {
  double res = 0.0;
  for (size_t i0 = 0; i0 < n; i0 += 8192) res += pw_sum(s, i0, n - i0 < 8192 ? n - i0 : 8192);
  return res;
}

static double np_mean(const double *x, size_t n) {
  sum_src s = {SUM_X, x, NULL, 0, 0, 0, 0};
  return np_sum(&s, n) / (double)n;
}

/* ------------------------------------------------------------------------------------------ */
/* distributions                                                                               */
/* ------------------------------------------------------------------------------------------ */

/* cephes ndtr (scipy.special.ndtr, used by scipy.stats.norm.cdf/sf): erf near 0, erfc outside. */
double tl_norm_cdf(double z) {
  if (isnan(z)) return NAN;
  double x = z * TL_SQRT1_2, ax = fabs(x);
  if (ax < TL_SQRT1_2) return 0.5 + 0.5 * erf(x);
  double y = 0.5 * erfc(ax);
  return x > 0 ? 1.0 - y : y;
}

/* scipy.stats.norm.sf(z) = ndtr(-z): relative accuracy in the upper tail (erfc). */
double tl_norm_sf(double z) { return tl_norm_cdf(-z); }

/* Lower-tail quantile for p in (0, 0.5]: P. J. Acklam's rational approximation (relative error
 * < 1.15e-9; coefficients from his published note "An algorithm for computing the inverse normal
 * cumulative distribution function"), then one Halley step on Phi(x) = p. */
static double ppf_lower(double p) {
  static const double a[6] = {-3.969683028665376e+01, 2.209460984245205e+02,
                              -2.759285104469687e+02, 1.383577518672690e+02,
                              -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[5] = {-5.447609879822406e+01, 1.615858368580409e+02,
                              -1.556989798598866e+02, 6.680131188771972e+01,
                              -1.328068155288572e+01};
  static const double c[6] = {-7.784894002430293e-03, -3.223964580411365e-01,
                              -2.400758277161838e+00, -2.549671010050042e+00,
                              4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[4] = {7.784695709041462e-03, 3.224671290700398e-01,
                              2.445134137142996e+00, 3.754408661907416e+00};
  const double plow = 0.02425;
  double x;
  if (p < plow) {
    double q = sqrt(-2.0 * log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    if (p > 1e-280) {
      /* Halley step in relative form: u = (Phi(x) - p) / phi(x) = (Phi(x)/p - 1) p / phi(x),
       * p / phi(x) through logs. */
      double e = tl_norm_cdf(x) / p - 1.0;
      double u = e * exp(log(p) + 0.5 * x * x + TL_LN_SQRT_2PI);
      x = x - u / (1.0 + 0.5 * x * u);
    } else {
      /* x < -35.7, where Phi(x) nears the subnormal range: Newton on log Phi(x) = log p with
       * the asymptotic series Phi(x) = phi(x)/|x| (1 - 1/x^2 + 3/x^4 - ...) (A&S 26.2.12),
       * whose terms are below 1e-17 after eight at |x| > 35. */
      double lp = log(p);
      for (int it = 0; it < 2; it++) {
        double r = 1.0 / (x * x), term = 1.0, ser = 1.0;
        for (int k = 1; k <= 8; k++) {
          term *= -(2.0 * k - 1.0) * r;
          ser += term;
        }
        double lphi = -0.5 * x * x - log(-x) - TL_LN_SQRT_2PI + log(ser);
        x -= (lphi - lp) * ser / -x; /* f / f', f' = phi / Phi = |x| / ser */
      }
    }
  } else {
    double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
    /* Phi(x) - p written as erf(x/sqrt2)/2 - (p - 1/2): relative accuracy near the median. */
    double e = 0.5 * erf(x * TL_SQRT1_2) - q;
    double u = e * exp(0.5 * x * x + TL_LN_SQRT_2PI);
    x = x - u / (1.0 + 0.5 * x * u);
  }
  return x;
}

double tl_norm_ppf(double p) {
  if (isnan(p) || p < 0.0 || p > 1.0) return NAN;
  if (p == 0.0) return -INFINITY;
  if (p == 1.0) return INFINITY;
  if (p == 0.5) return 0.0;
  if (p < 0.5) return ppf_lower(p);
  return -ppf_lower(1.0 - p); /* 1 - p is exact for p >= 1/2 (Sterbenz) */
}

/* Stirling remainder delta(z) = lgamma(z) - [(z - 1/2) log z - z + log sqrt(2 pi)], z > 0:
 * the asymptotic series (Bernoulli numbers, Abramowitz & Stegun 6.1.41) for z >= 10, whose
 * truncation error there is below 1e-17; below 10 the recurrence
 * delta(z) = delta(z + 1) + (z + 1/2) log1p(1/z) - 1. Absolute error ~1e-16. */
static double stirling_delta(double z) {
  double acc = 0.0;
  while (z < 10.0) {
    acc += (z + 0.5) * log1p(1.0 / z) - 1.0;
    z += 1.0;
  }
  double r = 1.0 / z, r2 = r * r;
  double s = r * (1.0 / 12 + r2 * (-1.0 / 360 + r2 * (1.0 / 1260 + r2 * (-1.0 / 1680 +
             r2 * (1.0 / 1188 + r2 * (-691.0 / 360360 + r2 * (1.0 / 156 +
             r2 * (-3617.0 / 122400))))))));
  return acc + s;
}

/* a log(1 + u), from log1p(u) while |u| is moderate, else from the logarithm of the product
 * v = 1 + u, given directly as lv = log(v) (log x + log(c/a) at the call sites). */
static double a_log1p_or(double a, double u, double lv) {
  return fabs(u) < 0.5 ? a * log1p(u) : a * lv;
}

/* log( x^a y^b / B(a, b) ) with y = 1 - x. The smaller of x and y is taken as exact and the other
 * as 1 minus it: I_x(a, b) is well conditioned in the smaller variable only (a relative change
 * eps of x near 1 moves I by ~a eps relative). Written with Stirling's formula so the large terms
 * of lgamma cancel analytically (no lgamma(a) + lgamma(b) - lgamma(a+b) cancellation):
 *   a log(x c/a) + b log(y c/b) + 1/2 log(a b / c) - log sqrt(2 pi)
 *   + delta(c) - delta(a) - delta(b),
 * c = a + b, with x c / a = 1 + (x c - a)/a and y c / b = 1 + (a - x c)/b (the same idea as
 * DiDonato & Morris' brcomp, TOMS 708). */
static double log_beta_front(double a, double b, double x, double y) {
  double c = a + b, ta, tb;
  if (x <= y) {
    double w = x * c - a; /* x c - a */
    ta = a_log1p_or(a, w / a, log(x) + log(c / a));
    tb = a_log1p_or(b, -w / b, log1p(-x) + log(c / b));
  } else {
    double w = y * c - b; /* y c - b */
    ta = a_log1p_or(a, -w / a, log1p(-y) + log(c / a));
    tb = a_log1p_or(b, w / b, log(y) + log(c / b));
  }
  return ta + tb + 0.5 * log(a / c * b) - TL_LN_SQRT_2PI +
         (stirling_delta(c) - stirling_delta(a) - stirling_delta(b));
}

/* Continued fraction for I_x(a, b) a / (x^a y^b / B(a,b)) (Numerical Recipes 6.4, eq. 6.4.5),
 * evaluated with the modified Lentz method in long double: near the switch point the terms
 * 1 + d_k nearly cancel, and x (= 1 - y when y is the exact variable) needs the extra bits.
 * Converges in O(sqrt(max(a, b))) steps for x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, long double x) {
  const long double tiny = 1e-300L;
  long double qab = (long double)a + b, qap = (long double)a + 1, qam = (long double)a - 1;
  long double c = 1.0L, d = 1.0L - qab * x / qap;
  if (fabsl(d) < tiny) d = tiny;
  d = 1.0L / d;
  long double h = d;
  for (int m = 1; m <= 100000; m++) {
    long double m2 = 2.0L * m;
    long double aa = m * ((long double)b - m) * x / ((qam + m2) * ((long double)a + m2));
    d = 1.0L + aa * d;
    if (fabsl(d) < tiny) d = tiny;
    c = 1.0L + aa / c;
    if (fabsl(c) < tiny) c = tiny;
    d = 1.0L / d;
    h *= d * c;
    aa = -((long double)a + m) * (qab + m) * x / (((long double)a + m2) * (qap + m2));
    d = 1.0L + aa * d;
    if (fabsl(d) < tiny) d = tiny;
    c = 1.0L + aa / c;
    if (fabsl(c) < tiny) c = tiny;
    d = 1.0L / d;
    long double del = d * c;
    h *= del;
    if (fabsl(del - 1.0L) <= 2 * LDBL_EPSILON) break;
  }
  return (double)h;
}

/* I_x(a, b) with both x and y = 1 - x given; the smaller one is used as exact (see
 * log_beta_front), so callers that know y better than 1 - x (the t distribution:
 * y = t^2 / (df + t^2)) keep its accuracy. */
static double betainc_xy(double a, double b, double x, double y) {
  if (isnan(a) || isnan(b) || isnan(x) || isnan(y) || a <= 0 || b <= 0) return NAN;
  if (x <= 0.0) return 0.0;
  if (y <= 0.0) return 1.0;
  long double lx = x <= y ? (long double)x : 1.0L - y, ly = x <= y ? 1.0L - x : (long double)y;
  if (x < (a + 1.0) / (a + b + 2.0)) return exp(log_beta_front(a, b, x, y)) * beta_cf(a, b, lx) / a;
  return 1.0 - exp(log_beta_front(b, a, y, x)) * beta_cf(b, a, ly) / b;
}

double tl_betainc(double a, double b, double x) {
  if (isnan(x)) return NAN;
  if (x < 0.0 || x > 1.0) return NAN;
  return betainc_xy(a, b, x, 1.0 - x);
}

/* P(T > t) as scipy.special.stdtr(df, -t) (cdflib cumt): for t > 0 it is
 * 1/2 I_x(df/2, 1/2) with x = df / (df + t^2), y = t^2 / (df + t^2). */
double tl_t_sf(double t, double df) {
  if (isnan(t) || isnan(df) || df <= 0) return NAN;
  if (t == 0) return 0.5;
  if (isinf(t)) return t > 0 ? 0.0 : 1.0;
  if (isinf(df)) return tl_norm_sf(t);
  double at = fabs(t), x, y;
  if (at > 1e150) { /* t^2 would overflow */
    x = df / at / at;
    y = 1.0;
  } else {
    double tt = at * at, den = df + tt;
    x = df / den;
    y = tt / den;
  }
  double h = 0.5 * betainc_xy(0.5 * df, 0.5, x, y);
  return t > 0 ? h : 1.0 - h;
}

double tl_t_cdf(double t, double df) { return tl_t_sf(-t, df); }

/* scipy's two-sided t p-value: stdtr(df, -|t|) * 2. */
static double t_two_sided(double t, double df) { return tl_t_cdf(-fabs(t), df) * 2.0; }

/* ------------------------------------------------------------------------------------------ */
/* sorting                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Stable merge sort of the indices idx[0..n) by k1, then k2 (k2 may be NULL). tmp: n entries. */
static int key_less(const double *k1, const double *k2, size_t i, size_t j) {
  if (k1[i] < k1[j]) return 1;
  if (k1[i] > k1[j] || !k2) return 0;
  return k2[i] < k2[j];
}

static void msort_rec(const double *k1, const double *k2, size_t *idx, size_t *tmp, size_t n) {
  if (n <= 16) { /* insertion sort: stable */
    for (size_t i = 1; i < n; i++) {
      size_t v = idx[i], j = i;
      while (j > 0 && key_less(k1, k2, v, idx[j - 1])) {
        idx[j] = idx[j - 1];
        j--;
      }
      idx[j] = v;
    }
    return;
  }
  size_t h = n / 2;
  msort_rec(k1, k2, idx, tmp, h);
  msort_rec(k1, k2, idx + h, tmp, n - h);
  if (!key_less(k1, k2, idx[h], idx[h - 1])) return; /* already in order */
  memcpy(tmp, idx, h * sizeof *idx);
  size_t i = 0, j = h, o = 0;
  while (i < h && j < n) idx[o++] = key_less(k1, k2, idx[j], tmp[i]) ? idx[j++] : tmp[i++];
  while (i < h) idx[o++] = tmp[i++];
}

static void sort_idx(const double *k1, const double *k2, size_t *idx, size_t *tmp, size_t n) {
  for (size_t i = 0; i < n; i++) idx[i] = i;
  msort_rec(k1, k2, idx, tmp, n);
}

/* ------------------------------------------------------------------------------------------ */
/* ranks and correlations                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* Average ranks given the sorted order (spec 5.1): a run of c equal values at 0-based sorted
 * positions s..s+c-1 gets (2s + c + 1) / 2, exactly as scipy's
 * 0.5 * (count[k] + count[k-1] + 1). */
static void ranks_from_order(const double *x, const size_t *order, size_t n, double *ranks) {
  size_t s = 0;
  while (s < n) {
    size_t e = s + 1;
    while (e < n && x[order[e]] == x[order[s]]) e++;
    double r = 0.5 * (double)(2 * s + (e - s) + 1);
    for (size_t k = s; k < e; k++) ranks[order[k]] = r;
    s = e;
  }
}

void tl_rankdata_avg(const double *x, size_t n, double *ranks) {
  if (n == 0) return;
  size_t *idx = malloc(2 * n * sizeof *idx);
  if (!idx) {
    for (size_t i = 0; i < n; i++) ranks[i] = NAN;
    return;
  }
  sort_idx(x, NULL, idx, idx + n, n);
  ranks_from_order(x, idx, n, ranks);
  free(idx);
}

static int is_constant(const double *x, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (x[i] != x[0]) return 0;
  return 1;
}

static double sign(double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0; }

/* scipy.stats.pearsonr: NaN for n < 2 (scipy raises) or a constant input; n = 2 gives
 * sign(dx) * sign(dy); otherwise r = sum((x-mx)/|x-mx| * (y-my)/|y-my|), clipped to [-1, 1].
 * Means and sums use numpy's pairwise summation (scipy's norm and dot go through BLAS, whose
 * order is not reproducible; the difference is a few ulps). */
double tl_pearson(const double *x, const double *y, size_t n) {
  if (n < 2 || is_constant(x, n) || is_constant(y, n)) return NAN;
  if (n == 2) return sign(x[1] - x[0]) * sign(y[1] - y[0]);
  double mx = np_mean(x, n), my = np_mean(y, n);
  sum_src sx = {SUM_SQDEV, x, NULL, mx, 0, 0, 0}, sy = {SUM_SQDEV, y, NULL, my, 0, 0, 0};
  double nx = sqrt(np_sum(&sx, n)), ny = sqrt(np_sum(&sy, n));
  sum_src sp = {SUM_PROD_NORM, x, y, mx, nx, my, ny};
  double r = np_sum(&sp, n);
  return r > 1.0 ? 1.0 : r < -1.0 ? -1.0 : r;
}

/* scipy.stats.spearmanr (1.10.1): NaN for n <= 1 or a constant input; rho from np.corrcoef of the
 * average ranks: c = S / (n - 1) computed as S * (1 / (n - 1)), rho = c_xy / sd_y / sd_x, clipped.
 * The centred ranks are half-integers, so S_xx, S_yy, S_xy are accumulated exactly in int64 (as
 * 4 S); numpy's BLAS dot is exact on them too, so rho equals scipy's to the last bit.
 * p: t = rho sqrt(dof / ((rho + 1)(1 - rho))) clipped at 0, dof = n - 2, p = 2 stdtr(dof, -|t|)
 * (dof = 0 gives NaN; |rho| = 1 gives t = inf, p = 0). */
tl_spearman_res tl_spearman(const double *x, const double *y, size_t n) {
  tl_spearman_res res = {NAN, NAN};
  if (n <= 1 || is_constant(x, n) || is_constant(y, n)) return res;
  double *r = malloc(2 * n * sizeof *r);
  size_t *idx = malloc(2 * n * sizeof *idx);
  if (!r || !idx) {
    free(r);
    free(idx);
    return res;
  }
  double *rx = r, *ry = r + n;
  sort_idx(x, NULL, idx, idx + n, n);
  ranks_from_order(x, idx, n, rx);
  sort_idx(y, NULL, idx, idx + n, n);
  ranks_from_order(y, idx, n, ry);
  free(idx);
  double sxx, syy, sxy;
  if (n <= 2000000) { /* 4 S_xx <= n^3 / 3 < 2^63 */
    int64_t axx = 0, ayy = 0, axy = 0, np1 = (int64_t)n + 1;
    for (size_t i = 0; i < n; i++) {
      int64_t dx = (int64_t)(2.0 * rx[i]) - np1, dy = (int64_t)(2.0 * ry[i]) - np1;
      axx += dx * dx;
      ayy += dy * dy;
      axy += dx * dy;
    }
    sxx = (double)axx / 4.0;
    syy = (double)ayy / 4.0;
    sxy = (double)axy / 4.0;
  } else {
    long double axx = 0, ayy = 0, axy = 0, m = 0.5L * ((long double)n + 1);
    for (size_t i = 0; i < n; i++) {
      long double dx = rx[i] - m, dy = ry[i] - m;
      axx += dx * dx;
      ayy += dy * dy;
      axy += dx * dy;
    }
    sxx = (double)axx;
    syy = (double)ayy;
    sxy = (double)axy;
  }
  free(r);
  double f = 1.0 / (double)(n - 1);
  double rho = sxy * f / sqrt(syy * f) / sqrt(sxx * f);
  rho = rho > 1.0 ? 1.0 : rho < -1.0 ? -1.0 : rho;
  double dof = (double)n - 2.0;
  double q = dof / ((rho + 1.0) * (1.0 - rho));
  if (q < 0) q = 0; /* .clip(0); NaN stays NaN */
  double t = rho * sqrt(q);
  res.rho = rho;
  res.p = t_two_sided(t, dof);
  return res;
}

/* ---- Kendall ---- */

/* Exact two-sided p-value (scipy.stats._mstats_basic._kendall_p_exact, 1.10.1; Kendall 1970):
 * the number of permutations of n with at most c inversions, by the recurrence
 * new = [1, 1, 0, ...] (length c + 1); for j = 3..n: new = cumsum(new), then new[j:] -= new[:c+1-j]
 * (old values: numpy copies the overlapping operand), p = 2 sum(new) / n!. For n >= 171 (n!
 * overflows) every step divides by j and p = sum(new). Shortcuts: n <= 2 -> 1; c = 0 ->
 * 2/n! (0 for n >= 171); c = 1 -> 2/(n-1)! (0 for n >= 172); 4c = n(n-1) -> 1. Clipped to [0, 1].
 * Cost O(n c) time and O(c) memory; NaN for n <= 0, c outside [0, n(n-1)/2] or no memory. */
double tl_kendall_exact_p(int64_t n, int64_t c) {
  if (n <= 0) return NAN;
  int64_t n0 = n * (n - 1) / 2;
  if (c < 0 || c > n0) return NAN;
  if (n0 - c < c) c = n0 - c;
  double prob;
  if (n <= 2) {
    prob = 1.0;
  } else if (c == 0 || c == 1) {
    int64_t k = c == 0 ? n : n - 1; /* 2 / k! */
    if (k >= 171) {
      prob = 0.0;
    } else {
      long double f = 1.0L;
      for (int64_t j = 2; j <= k; j++) f *= (long double)j;
      prob = 2.0 / (double)f;
    }
  } else if (4 * c == n * (n - 1)) {
    prob = 1.0;
  } else {
    double *w = calloc((size_t)c + 1, sizeof *w);
    if (!w) return NAN;
    w[0] = w[1] = 1.0;
    int big = n >= 171;
    for (int64_t j = 3; j <= n; j++) {
      double acc = 0.0;
      for (int64_t k = 0; k <= c; k++) {
        acc += w[k];
        w[k] = big ? acc / (double)j : acc;
      }
      if (j <= c)
        for (int64_t k = c; k >= j; k--) w[k] -= w[k - j];
    }
    sum_src s = {SUM_X, w, NULL, 0, 0, 0, 0};
    double sum = np_sum(&s, (size_t)c + 1);
    free(w);
    if (big) {
      prob = sum;
    } else {
      long double f = 1.0L;
      for (int64_t j = 2; j <= n; j++) f *= (long double)j;
      prob = 2.0 * sum / (double)f;
    }
  }
  return prob < 0.0 ? 0.0 : prob > 1.0 ? 1.0 : prob;
}

/* Fenwick tree over 1-based ranks 1..m: tree[1..m]. */
static void fen_add(int64_t *tree, size_t m, size_t i) {
  for (; i <= m; i += i & (~i + 1)) tree[i]++;
}
static int64_t fen_prefix(const int64_t *tree, size_t i) {
  int64_t s = 0;
  for (; i > 0; i -= i & (~i + 1)) s += tree[i];
  return s;
}

/* Tie statistics of one run of length t: t(t-1)/2 pairs, t(t-1)(t-2) and t(t-1)(2t+5). */
static void tie_add(int64_t t, int64_t *pairs, long double *v0, long double *v1) {
  long double lt = (long double)t;
  *pairs += t * (t - 1) / 2;
  *v0 += lt * (lt - 1) * (lt - 2);
  *v1 += lt * (lt - 1) * (2 * lt + 5);
}

/* scipy.stats.kendalltau (1.10.1, _kendalltau with _kendall_dis). Steps (spec 5.3/5.4):
 * 1. y-sorted order -> dense ranks of y, y tie runs (ytie, y0, y1, my);
 * 2. (x, y)-sorted order -> x tie runs (xtie, x0, x1, mx), joint runs (ntie);
 * 3. sweep the blocks of equal x; before inserting a block, each member k adds
 *    (#inserted) - (#inserted with y rank <= rank(y_k)) to dis (Fenwick prefix count).
 * S = n0 - xtie - ytie + ntie - 2 dis; tau_b = S / sqrt(n0 - xtie) / sqrt(n0 - ytie) and
 * tau_c = 2S / (n^2 (m - 1) / m), both clipped to [-1, 1]; everything NaN when xtie = n0 or
 * ytie = n0 (a constant input, n <= 1). Asymptotic variance in long double (spec 5.3):
 * var = (m(2n+5) - x1 - y1)/18 + 2 xtie ytie/m + x0 y0/(9 m (n-2)), m = n(n-1); p = 2 Phi(-|z|),
 * z = S / sqrt(var); at n = 2 the last term is 0/0 in scipy, so p_asymptotic is NaN. */
tl_kendall_res tl_kendall(const double *x, const double *y, size_t n) {
  tl_kendall_res r;
  memset(&r, 0, sizeof r);
  r.tau_b = r.tau_c = r.p_asymptotic = r.p_auto = NAN;
  if (n < 2) {
    r.mx = r.my = (int64_t)n;
    return r;
  }
  size_t *idx = malloc(3 * n * sizeof *idx);
  size_t *yrank = malloc(n * sizeof *yrank);
  if (!idx || !yrank) {
    free(idx);
    free(yrank);
    return r;
  }
  size_t *tmp = idx + n, *oxy = idx + 2 * n;
  /* 1. dense ranks of y */
  int64_t ytie = 0, xtie = 0, ntie = 0, dis = 0;
  long double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  size_t my = 0, mx = 0;
  sort_idx(y, NULL, idx, tmp, n);
  for (size_t s = 0; s < n;) {
    size_t e = s + 1;
    while (e < n && y[idx[e]] == y[idx[s]]) e++;
    my++;
    for (size_t k = s; k < e; k++) yrank[idx[k]] = my;
    if (e - s > 1) tie_add((int64_t)(e - s), &ytie, &y0, &y1);
    s = e;
  }
  /* 2. (x, y) order: x runs and joint runs */
  sort_idx(x, y, oxy, tmp, n);
  for (size_t s = 0; s < n;) {
    size_t e = s + 1;
    while (e < n && yrank[oxy[e]] == yrank[oxy[s]] && x[oxy[e]] == x[oxy[s]]) e++;
    if (e - s > 1) ntie += (int64_t)(e - s) * (int64_t)(e - s - 1) / 2;
    s = e;
  }
  /* 3. Fenwick sweep over the x blocks (tree over the my dense y ranks) */
  int64_t *tree = calloc(my + 1, sizeof *tree);
  if (!tree) {
    free(idx);
    free(yrank);
    return r;
  }
  int64_t inserted = 0;
  for (size_t s = 0; s < n;) {
    size_t e = s + 1;
    while (e < n && x[oxy[e]] == x[oxy[s]]) e++;
    mx++;
    if (e - s > 1) tie_add((int64_t)(e - s), &xtie, &x0, &x1);
    for (size_t k = s; k < e; k++) dis += inserted - fen_prefix(tree, yrank[oxy[k]]);
    for (size_t k = s; k < e; k++) fen_add(tree, my, yrank[oxy[k]]);
    inserted += (int64_t)(e - s);
    s = e;
  }
  free(tree);
  free(idx);
  free(yrank);

  int64_t nn = (int64_t)n, n0 = nn * (nn - 1) / 2;
  r.n0 = n0;
  r.xtie = xtie;
  r.ytie = ytie;
  r.ntie = ntie;
  r.dis = dis;
  r.mx = (int64_t)mx;
  r.my = (int64_t)my;
  if (xtie == n0 || ytie == n0) return r;

  int64_t S = n0 - xtie - ytie + ntie - 2 * dis;
  double tb = (double)S / sqrt((double)(n0 - xtie)) / sqrt((double)(n0 - ytie));
  r.tau_b = tb > 1.0 ? 1.0 : tb < -1.0 ? -1.0 : tb;
  int64_t m = r.mx < r.my ? r.mx : r.my;
  double cden = (double)((long double)nn * (long double)nn * (long double)(m - 1) / (long double)m);
  double tc = (double)(2 * S) / cden;
  r.tau_c = tc > 1.0 ? 1.0 : tc < -1.0 ? -1.0 : tc;

  if (n > 2) {
    long double ln = (long double)n, lm = ln * (ln - 1);
    long double var = (lm * (2 * ln + 5) - x1 - y1) / 18 +
                      2.0L * (long double)xtie * (long double)ytie / lm +
                      x0 * y0 / (9 * lm * (ln - 2));
    double z = (double)((long double)S / sqrtl(var));
    r.p_asymptotic = 2.0 * tl_norm_sf(fabs(z));
  }
  int64_t cmin = dis < n0 - dis ? dis : n0 - dis;
  if (xtie == 0 && ytie == 0 && (n <= 33 || cmin <= 1)) {
    r.exact = 1;
    r.p_auto = tl_kendall_exact_p(nn, n0 - dis);
  } else {
    r.p_auto = r.p_asymptotic;
  }
  return r;
}

/* ------------------------------------------------------------------------------------------ */
/* comparing two metrics                                                                       */
/* ------------------------------------------------------------------------------------------ */

/* scipy.stats._stats_py._var(ddof=1): mean((v - mean(v))^2) * (n / (n - 1)), numpy sums. */
static double np_var1(sum_kind sq_kind, const double *a, const double *b, size_t n, double mean) {
  sum_src s = {sq_kind, a, b, mean, 0, 0, 0};
  double v = np_sum(&s, n) / (double)n;
  return v * ((double)n / (double)(n - 1));
}

/* scipy.stats.ttest_rel (two-sided): d = a - b, t = mean(d) / sqrt(var(d, ddof=1) / n),
 * df = n - 1, p = 2 stdtr(df, -|t|). n = 0 -> NaN; n = 1 or constant d -> NaN (0/0) or
 * t = +-inf, p = 0, as in scipy. */
double tl_ttest_rel_p(const double *a, const double *b, size_t n, double *t_out) {
  double t = NAN, p = NAN;
  if (n >= 2) {
    sum_src sd = {SUM_DIFF, a, b, 0, 0, 0, 0};
    double dm = np_sum(&sd, n) / (double)n;
    double v = np_var1(SUM_SQDEV_DIFF, a, b, n, dm);
    double denom = sqrt(v / (double)n);
    t = dm / denom;
    p = t_two_sided(t, (double)n - 1.0);
  }
  if (t_out) *t_out = t;
  return p;
}

/* scipy.stats.ttest_ind(equal_var=True), two-sided: df = na + nb - 2,
 * svar = ((na-1) va + (nb-1) vb) / df, t = (ma - mb) / sqrt(svar (1/na + 1/nb)).
 * NaN when na or nb is 0 or 1 (scipy: var with ddof=1 of one value is NaN). */
double tl_ttest_ind_p(const double *a, const double *b, size_t na, size_t nb, double *t_out) {
  double t = NAN, p = NAN;
  if (na >= 2 && nb >= 2) {
    double ma = np_mean(a, na), mb = np_mean(b, nb);
    double va = np_var1(SUM_SQDEV, a, NULL, na, ma), vb = np_var1(SUM_SQDEV, b, NULL, nb, mb);
    double df = (double)na + (double)nb - 2.0;
    double svar = (((double)na - 1) * va + ((double)nb - 1) * vb) / df;
    double denom = sqrt(svar * (1.0 / (double)na + 1.0 / (double)nb));
    t = (ma - mb) / denom;
    p = t_two_sided(t, df);
  }
  if (t_out) *t_out = t;
  return p;
}

/* Williams' test (Williams 1959; Steiger 1980 eq. 7) as R psych r.test(n, r12, r13, r23) and
 * nlpstats williams_test (alternative="two-sided", its default): with
 * det = 1 - r12^2 - r23^2 - r13^2 + 2 r12 r23 r13, av = (r12 + r13)/2, cube = (1 - r23)^3,
 * t = (r12 - r13) sqrt((n-1)(1+r23) / (2 (n-1)/(n-3) det + av^2 cube)), df = n - 3,
 * p = 2 P(T > |t|). NaN for n <= 3. The one-sided p-value WMT reports is p / 2 when t > 0. */
double tl_williams_p(double r12, double r13, double r23, size_t n, double *t_out) {
  double t = NAN, p = NAN;
  if (n > 3) {
    double dn = (double)n;
    double diff = r12 - r13;
    double det = 1 - r12 * r12 - r23 * r23 - r13 * r13 + 2 * r12 * r23 * r13;
    double av = (r12 + r13) / 2;
    double cube = pow(1 - r23, 3.0);
    t = diff * sqrt((dn - 1) * (1 + r23) / ((2 * (dn - 1) / (dn - 3)) * det + av * av * cube));
    p = tl_t_sf(fabs(t), dn - 3) * 2;
  }
  if (t_out) *t_out = t;
  return p;
}

/* Krippendorff's alpha (tally/stats.h): D_o and D_e over the coincidence matrix. The ordinal
 * distance uses the margins in unscaled units (n_g / scale); the scale cancels in the ratio of
 * sums otherwise, so only n - 1 needs it. */
static double kripp_d2(const double *nm, size_t c, size_t k, tl_kripp_metric m, const double *vals) {
  if (c == k) return 0;
  switch (m) {
  case TL_KRIPP_NOMINAL: return 1;
  case TL_KRIPP_INTERVAL: return (vals[c] - vals[k]) * (vals[c] - vals[k]);
  case TL_KRIPP_ORDINAL: {
    size_t lo = c < k ? c : k, hi = c < k ? k : c;
    double s = 0;
    for (size_t g = lo; g <= hi; g++) s += nm[g];
    s -= (nm[c] + nm[k]) / 2;
    return s * s;
  }
  }
  return NAN;
}

double tl_kripp_alpha(const double *o, size_t V, double scale, tl_kripp_metric m, const double *vals) {
  if (!o || V == 0 || !(scale > 0) || (m == TL_KRIPP_INTERVAL && !vals)) return NAN;
  double *nm = calloc(V, sizeof *nm);
  if (!nm) return NAN;
  double n = 0;
  for (size_t c = 0; c < V; c++) {
    for (size_t k = 0; k < V; k++) nm[c] += o[c * V + k];
    nm[c] /= scale;
    n += nm[c];
  }
  double dobs = 0, dexp = 0;
  for (size_t c = 0; c < V; c++)
    for (size_t k = 0; k < V; k++) {
      if (c == k) continue;
      double d2 = kripp_d2(nm, c, k, m, vals);
      dobs += o[c * V + k] / scale * d2;
      dexp += nm[c] * nm[k] * d2;
    }
  free(nm);
  if (!(n > 1) || !(dexp > 0)) return NAN;
  return 1 - (n - 1) * dobs / dexp;
}

static int cmp_int_asc(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

double tl_kripp_alpha_votes(const int *votes, size_t n_items, size_t n_coders, tl_kripp_metric m) {
  enum { MAX_VALUES = 4096 };
  if (n_items == 0 || n_coders == 0) return NAN;
  if (!votes || n_items > SIZE_MAX / n_coders / sizeof(int)) return NAN;
  const size_t total = n_items * n_coders;
  int *lv = malloc(total * sizeof *lv); /* the distinct values, ascending */
  if (!lv) return NAN;
  size_t V = 0;
  for (size_t i = 0; i < total; i++) {
    if (votes[i] < -1) {
      free(lv);
      return NAN;
    }
    if (votes[i] >= 0) lv[V++] = votes[i];
  }
  qsort(lv, V, sizeof *lv, cmp_int_asc);
  size_t d = 0;
  for (size_t i = 0; i < V; i++)
    if (d == 0 || lv[i] != lv[d - 1]) lv[d++] = lv[i];
  V = d;
  double alpha = NAN;
  double *o = V && V <= MAX_VALUES ? calloc(V * V, sizeof *o) : NULL;
  double *vals = o ? malloc(V * sizeof *vals) : NULL;
  size_t *ix = vals ? malloc(n_coders * sizeof *ix) : NULL;
  if (ix) {
    for (size_t c = 0; c < V; c++) vals[c] = lv[c];
    for (size_t u = 0; u < n_items; u++) {
      const int *row = votes + u * n_coders;
      size_t mu = 0;
      for (size_t j = 0; j < n_coders; j++)
        if (row[j] >= 0) {
          const int *hit = bsearch(&row[j], lv, V, sizeof *lv, cmp_int_asc);
          ix[mu++] = (size_t)(hit - lv);
        }
      if (mu < 2) continue;
      const double w = 1.0 / (double)(mu - 1);
      for (size_t a = 0; a < mu; a++)
        for (size_t b = 0; b < mu; b++)
          if (a != b) o[ix[a] * V + ix[b]] += w;
    }
    alpha = tl_kripp_alpha(o, V, 1.0, m, vals);
  }
  free(ix);
  free(vals);
  free(o);
  free(lv);
  return alpha;
}

double tl_mean_ss(const double *v, size_t k, double *ss) {
  double sum = 0, s = 0;
  for (size_t i = 0; i < k; i++) sum += v[i];
  const double mean = sum / (double)k;
  for (size_t i = 0; i < k; i++) s += (v[i] - mean) * (v[i] - mean);
  *ss = s;
  return mean;
}
