/* compare.c - paired comparison of two systems on the same items (tally/stats.h): McNemar's
 * exact test and the paired bootstrap of a mean difference over items. */
#include <math.h>
#include <stdlib.h>

#include "tally/boot.h"
#include "tally/stats.h"

double tl_mcnemar_exact_p(int64_t b, int64_t c) {
  if (b < 0 || c < 0) return NAN;
  const int64_t n = b + c, k = b < c ? b : c;
  if (n == 0) return 1.0;
  /* P(X <= k) for X ~ Binomial(n, 1/2) = I_{1/2}(n - k, k + 1) (the regularized incomplete beta);
   * k = n only when b = c = n / 2... never for k <= n/2 < n, so n - k >= 1 */
  double p = 2.0 * tl_betainc((double)(n - k), (double)(k + 1), 0.5);
  return p > 1.0 ? 1.0 : p;
}

tl_status tl_paired_boot(const double *a, const double *b, uint32_t n, uint64_t B, uint64_t seed, double level,
                         tl_paired_res *out) {
  out->n = n;
  out->mean_a = out->mean_b = out->diff = out->ci_lo = out->ci_hi = out->p_boot = NAN;
  if (n == 0 || n > TL_BOOT_MAX_N) return TL_EINPUT;
  double sa = 0, sb = 0;
  for (uint32_t i = 0; i < n; i++) {
    sa += a[i];
    sb += b[i];
  }
  out->mean_a = sa / n;
  out->mean_b = sb / n;
  out->diff = out->mean_a - out->mean_b;
  if (B == 0) return TL_OK;
  int32_t *w = malloc((size_t)n * sizeof *w);
  double *v = malloc((size_t)B * sizeof *v);
  if (!w || !v) {
    free(w);
    free(v);
    return TL_ENOMEM;
  }
  int64_t le = 0, ge = 0;
  for (uint64_t r = 0; r < B; r++) {
    tl_boot_counts(seed, r, n, w);
    double s = 0;
    for (uint32_t i = 0; i < n; i++) s += (double)w[i] * (a[i] - b[i]);
    v[r] = s / n;
    le += v[r] <= 0;
    ge += v[r] >= 0;
  }
  tl_sort_f64(v, (size_t)B);
  out->ci_lo = tl_quantile_sorted(v, (size_t)B, (1 - level) / 2);
  out->ci_hi = tl_quantile_sorted(v, (size_t)B, 1 - (1 - level) / 2);
  double p = 2.0 * (double)(le < ge ? le : ge) / (double)B;
  out->p_boot = p > 1 ? 1 : p;
  free(w);
  free(v);
  return TL_OK;
}
