/* cluster_ci.c - many headline CIs with the same (B, seed): tl_cluster_ci's bounds, bit for bit,
 * with each cluster count's draws made once (tally/boot.h, tl_ccis).
 *
 * Why: a summary asks tl_cluster_ci for thousands of rows (MT-Bench-101: parser x model x policy
 * x group, 3,840 rows on a 20-model job with four parsers), and every call drew B x m Philox
 * indices again and summed them with a branch per cluster: 60% of such a run. The counts of
 * resample r depend only on (seed, r, m), so from the second row with the same m they are kept
 * and not drawn again (a count asked for once keeps nothing: its B x m bytes would be waste).
 *
 * Same bits as tl_cluster_ci:
 *  - the ratio of resample r is sum_k w[k] * num[k] / sum_k w[k] * den[k], each sum in cluster
 *    order k, one rounding per multiply (the count converted to double exactly) and per add,
 *    never fused (no FMA in the kernels: the AVX2 one has no FMA target, and GCC's attribute or
 *    clang's pragma turns contraction off for the portable one);
 *  - tl_cluster_ci skips a cluster whose count is 0; here it adds 0 * num[k] = +0.0, which
 *    leaves a partial sum unchanged: every sum starts at +0.0 and only grows (+0.0 + +0.0 is
 *    +0.0). That needs num and den finite and >= 0: a row with anything else goes to
 *    tl_cluster_ci itself;
 *  - the same quantiles (tl_quantile_sorted's order statistics and expression, the two order
 *    statistics found by selection instead of a sort).
 * The kernels add 8 resamples side by side (one sum per resample, each in cluster order), over
 * counts kept as bytes: [block of 8 resamples][cluster][8]. A count over 255 (possible only for
 * m > 255, and about as likely as a Poisson(1) variable reaching 256) marks its block, which is
 * then computed by the plain loop. tests/unit/test_cluster_ci.c checks every bound against
 * tl_cluster_ci on both kernels. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tally/boot.h"
#include "tally/stats.h"
#include "tally/str.h"
#include "tally/workshare.h"
#include "boot_int.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define CC_X86 1
#include <immintrin.h>
#endif

#if defined(__clang__)
#pragma clang fp contract(off)
#define CC_PORTABLE_ATTR
#elif defined(__GNUC__)
#define CC_PORTABLE_ATTR __attribute__((optimize("fp-contract=off")))
#else
#define CC_PORTABLE_ATTR
#endif

enum { RB = 8 }; /* resamples per block */

typedef struct {
  uint32_t m;
  uint8_t *cb;    /* [nblk][m][RB] counts, lanes past B zero */
  uint8_t *plain; /* [nblk] 1: a count of the block is over 255 */
} cc_draws;

struct tl_ccis {
  uint32_t B;
  uint64_t seed;
  cc_draws *d;
  int nd, capd;
  size_t bytes, cap_bytes;
  int32_t count_max; /* the largest count kept as a byte (255; less in tests) */
  int simd;
  int32_t *w;    /* [wcap] one resample's counts */
  uint32_t wcap;
  uint8_t *blk;  /* [wcap][RB] one block's counts, for a row whose draws are not kept */
  uint32_t *once; /* cluster counts seen by one row so far, their draws not kept */
  int nonce, caponce;
  double *buf;   /* [bcap] compacted num, den, then B values */
  size_t bcap;
};

static int cc_cpu_avx2(void) {
#ifdef CC_X86
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") ? 1 : 0;
#else
  return 0;
#endif
}

tl_ccis *tl_ccis_new(uint32_t B, uint64_t seed) {
  tl_ccis *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->B = B;
  s->seed = seed;
  s->cap_bytes = TL_CCIS_CACHE;
  s->count_max = 255;
  s->simd = cc_cpu_avx2();
  return s;
}

void tl_ccis_limits(tl_ccis *s, size_t cache_bytes, unsigned count_max, int simd) {
  s->cap_bytes = cache_bytes;
  s->count_max = count_max < 1 ? 1 : count_max > 255 ? 255 : (int32_t)count_max;
  s->simd = simd && cc_cpu_avx2();
}

void tl_ccis_free(tl_ccis *s) {
  if (!s) return;
  for (int i = 0; i < s->nd; i++) free(s->d[i].cb), free(s->d[i].plain);
  free(s->d);
  free(s->w);
  free(s->blk);
  free(s->once);
  free(s->buf);
  free(s);
}

/* s->w and s->blk hold m clusters. 0, or -1 out of memory. */
static int work_for(tl_ccis *s, uint32_t m) {
  if (m <= s->wcap) return 0;
  int32_t *w = realloc(s->w, (size_t)m * sizeof *w);
  if (w) s->w = w;
  uint8_t *blk = w ? realloc(s->blk, (size_t)m * RB) : NULL;
  if (blk) s->blk = blk;
  if (!w || !blk) return -1;
  s->wcap = m;
  return 0;
}

/* The counts of resamples r0 .. r0 + nl (nl <= RB) of m clusters into blk[m][RB] (lanes past nl
 * zero). Returns 1 when a count is over count_max (the block is then computed by the plain
 * loop and its bytes are not read), else 0. */
static int fill_block(tl_ccis *s, uint32_t m, uint32_t r0, uint32_t nl, uint8_t *blk) {
  int plain = 0;
  if (nl < RB) memset(blk, 0, (size_t)m * RB);
  for (uint32_t l = 0; l < nl; l++) {
    tl_boot_counts(s->seed, r0 + l, m, s->w);
    for (uint32_t k = 0; k < m; k++) {
      const int32_t c = s->w[k];
      plain |= c > s->count_max;
      blk[(size_t)k * RB + l] = (uint8_t)c;
    }
  }
  return plain;
}

/* The kept counts of m clusters, or NULL: not kept (yet). A cluster count is kept from the
 * second row that asks for it (a summary asks for a few counts many times; a count asked for
 * once is not worth its B x m bytes: on 214,354 questions that is 214 MB), while the kept bytes
 * stay under the bound. NULL also when out of memory (the row is then streamed, as it is the
 * first time). */
static const cc_draws *draws_for(tl_ccis *s, uint32_t m) {
  for (int i = 0; i < s->nd; i++)
    if (s->d[i].m == m) return &s->d[i];
  int seen = 0;
  for (int i = 0; i < s->nonce && !seen; i++) seen = s->once[i] == m;
  if (!seen) {
    if (s->nonce == s->caponce) {
      int nc = s->caponce ? 2 * s->caponce : 16;
      uint32_t *no = realloc(s->once, (size_t)nc * sizeof *no);
      if (!no) return NULL;
      s->once = no;
      s->caponce = nc;
    }
    s->once[s->nonce++] = m;
    return NULL;
  }
  const size_t nblk = ((size_t)s->B + RB - 1) / RB;
  if ((size_t)m > (SIZE_MAX / RB) / nblk) return NULL;
  const size_t bytes = nblk * m * RB;
  if (bytes > s->cap_bytes || s->bytes > s->cap_bytes - bytes || work_for(s, m)) return NULL;
  if (s->nd == s->capd) {
    int nc = s->capd ? 2 * s->capd : 16;
    cc_draws *nd = realloc(s->d, (size_t)nc * sizeof *nd);
    if (!nd) return NULL;
    s->d = nd;
    s->capd = nc;
  }
  uint8_t *cb = malloc(bytes), *plain = malloc(nblk);
  if (!cb || !plain) {
    free(cb), free(plain);
    return NULL;
  }
  for (size_t bl = 0; bl < nblk; bl++) {
    const uint32_t r0 = (uint32_t)(bl * RB), nl = s->B - r0 < RB ? s->B - r0 : RB;
    plain[bl] = (uint8_t)fill_block(s, m, r0, nl, cb + bl * m * RB);
  }
  s->d[s->nd] = (cc_draws){m, cb, plain};
  s->bytes += bytes;
  return &s->d[s->nd++];
}

/* sums[0..RB) += x * num[k], sums[RB..2 RB) += x * den[k], in k order, per lane. */
CC_PORTABLE_ATTR static void kern_plain(uint32_t m, const uint8_t *cb, const double *num, const double *den,
                                        double *sums) {
  double sn[RB] = {0}, sd[RB] = {0};
  for (uint32_t k = 0; k < m; k++)
    for (int l = 0; l < RB; l++) {
      const double x = (double)cb[(size_t)k * RB + l];
      const double pn = x * num[k], pd = x * den[k];
      sn[l] = sn[l] + pn;
      sd[l] = sd[l] + pd;
    }
  memcpy(sums, sn, sizeof sn);
  memcpy(sums + RB, sd, sizeof sd);
}

#ifdef CC_X86
/* kern_plain with AVX2 (no FMA in the target: every multiply and add rounds on its own). */
__attribute__((target("avx2"))) static void kern_avx2(uint32_t m, const uint8_t *cb, const double *num,
                                                      const double *den, double *sums) {
  __m256d na = _mm256_setzero_pd(), nb = na, da = na, db = na;
  for (uint32_t k = 0; k < m; k++) {
    __m128i b8 = _mm_loadl_epi64((const __m128i *)(const void *)(cb + (size_t)k * RB));
    __m256d xa = _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(b8));
    __m256d xb = _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(_mm_srli_si128(b8, 4)));
    __m256d v = _mm256_broadcast_sd(num + k);
    na = _mm256_add_pd(na, _mm256_mul_pd(xa, v));
    nb = _mm256_add_pd(nb, _mm256_mul_pd(xb, v));
    v = _mm256_broadcast_sd(den + k);
    da = _mm256_add_pd(da, _mm256_mul_pd(xa, v));
    db = _mm256_add_pd(db, _mm256_mul_pd(xb, v));
  }
  _mm256_storeu_pd(sums, na);
  _mm256_storeu_pd(sums + 4, nb);
  _mm256_storeu_pd(sums + 8, da);
  _mm256_storeu_pd(sums + 12, db);
}
#endif

/* Moves the k-th smallest of v[0..n) to v[k], the smaller ones before it and the larger ones
 * after it (quickselect, middle pivot: expected linear time). */
static void select_k(double *v, size_t n, size_t k) {
  size_t a = 0, b = n - 1;
  while (a < b) {
    const double p = v[a + (b - a) / 2];
    size_t i = a, j = b;
    while (i <= j) {
      while (v[i] < p) i++;
      while (v[j] > p) j--;
      if (i <= j) {
        const double t = v[i];
        v[i] = v[j], v[j] = t;
        i++;
        if (j == 0) break;
        j--;
      }
    }
    if (k <= j) b = j;
    else if (k >= i) a = i;
    else return;
  }
}

/* tl_quantile_sorted(sort(v), n, q) without the sort: the same two order statistics (found by
 * select_k; v is reordered) in the same expression. v holds no NaN and no -0.0 here (a ratio of
 * sums >= +0.0 over a sum > 0), so values that compare equal have the same bits and any order of
 * ties gives the sorted array's bits. */
static double quantile_select(double *v, size_t n, double q) {
  double vi = (double)(n - 1) * q;
  size_t i0 = vi >= (double)(n - 1) ? n - 1 : vi < 0 ? 0 : (size_t)floor(vi);
  select_k(v, n, i0);
  if (vi >= (double)(n - 1) || vi < 0) return v[i0];
  double b = v[i0 + 1]; /* the smallest of the larger part */
  for (size_t i = i0 + 2; i < n; i++)
    if (v[i] < b) b = v[i];
  double lo = floor(vi), g = vi - lo, a = v[i0], d = b - a;
  return g >= 0.5 ? b - d * (1.0 - g) : a + d * g;
}

/* tl_cluster_ci's loop for resample r (a block whose counts did not fit in bytes). */
static double ratio_plain(tl_ccis *s, uint32_t r, uint32_t m, const double *num, const double *den) {
  tl_boot_counts(s->seed, r, m, s->w);
  double sn = 0.0, sd = 0.0;
  for (uint32_t k = 0; k < m; k++)
    if (s->w[k]) sn += s->w[k] * num[k], sd += s->w[k] * den[k];
  return sn / sd;
}

/* The clusters of a row with a unit (den > 0): their count, and 1 when every kept value is
 * finite and >= 0 (else the row is tl_cluster_ci's). */
static uint32_t kept_clusters(const double *num, const double *den, uint32_t n, int *fits) {
  uint32_t m = 0;
  *fits = 1;
  for (uint32_t i = 0; i < n; i++)
    if (den[i] > 0) {
      m++;
      *fits &= isfinite(den[i]) && isfinite(num[i]) && num[i] >= 0.0;
    }
  return m;
}

/* s->buf grown to a row's 2 m cluster values and B resample values. TL_ENOMEM. */
static tl_status row_buf(tl_ccis *s, uint32_t m) {
  const size_t need = 2 * (size_t)m + s->B;
  if (need > s->bcap) {
    double *nb = realloc(s->buf, need * sizeof *nb);
    if (!nb) return TL_ENOMEM;
    s->buf = nb;
    s->bcap = need;
  }
  return TL_OK;
}

/* The resample values vals[r] of blocks [bl0, bl1) (8 resamples each) of a row of m >= 2 kept
 * clusters, every value finite and >= 0; s->buf holds their values (cn, cd) and the values of
 * the B resamples. *vals: that buffer's B values. */
static tl_status ccis_blocks(tl_ccis *s, const double *num, const double *den, uint32_t n, uint32_t m, size_t bl0,
                             size_t bl1, double **vals_out) {
  const uint32_t B = s->B;
  const cc_draws *d = draws_for(s, m);
  if (!d && work_for(s, m)) return TL_ENOMEM; /* streamed: one block of counts at a time */
  if (row_buf(s, m)) return TL_ENOMEM;
  double *cn = s->buf, *cd = cn + m, *vals = cd + m;
  for (uint32_t i = 0, k = 0; i < n; i++)
    if (den[i] > 0) cn[k] = num[i], cd[k++] = den[i];
  for (size_t bl = bl0; bl < bl1; bl++) {
    const uint32_t r0 = (uint32_t)(bl * RB), nl = B - r0 < RB ? B - r0 : RB;
    const uint8_t *cb = d ? d->cb + bl * m * RB : s->blk;
    if (d ? d->plain[bl] : fill_block(s, m, r0, nl, s->blk)) {
      for (uint32_t l = 0; l < nl; l++) vals[r0 + l] = ratio_plain(s, r0 + l, m, cn, cd);
      continue;
    }
    double sums[2 * RB];
#ifdef CC_X86
    if (s->simd)
      kern_avx2(m, cb, cn, cd, sums);
    else
#endif
      kern_plain(m, cb, cn, cd, sums);
    for (uint32_t l = 0; l < nl; l++) vals[r0 + l] = sums[l] / sums[RB + l]; /* > 0: m >= 1 drawn */
  }
  *vals_out = vals;
  return TL_OK;
}

/* Under the ranks' work share (tally/workshare.h) a row of the fast path is split into as many
 * tasks as ranks, each a contiguous range of its blocks of 8 resamples whose values it returns:
 * the ranks compute a row's resamples side by side (one row can be most of a summary's work:
 * VQA's level "all"), and rank 0's replay puts the values together and takes the quantiles. A
 * row of tl_cluster_ci (a negative or infinite value) is one task, its two bounds. A row with no
 * CI (B < 2, a level outside (0, 1), fewer than 2 clusters with a unit) is no task. The bounds
 * are the same bits whoever computes which block. */
tl_status tl_ccis_row(tl_ccis *s, const double *num, const double *den, uint32_t n, double level, double *lo,
                      double *hi) {
  *lo = *hi = NAN;
  const uint32_t B = s->B;
  if (B < 2 || !(level > 0.0 && level < 1.0)) return TL_OK;
  int fits;
  const uint32_t m = kept_clusters(num, den, n, &fits);
  if (m < 2) return TL_OK;
  const tl_ws_mode mode = tl_ws_mode_now();
  const uint64_t key = mode == TL_WS_OFF ? 0 : tl_ci_row_key(n, s->B, s->seed, level, num, den, sizeof *num);
  if (!fits) {
    double res[2] = {NAN, NAN};
    int todo = tl_ws_task(TL_WS_CCIS, key, res, sizeof res);
    if (todo < 0) return (tl_status)-todo;
    if (todo == TL_WS_RUN) {
      tl_status st = tl_cluster_ci(num, den, n, B, s->seed, level, &res[0], &res[1]);
      if (!st) st = tl_ws_done(res, sizeof res);
      if (st) return st;
    }
    *lo = res[0];
    *hi = res[1];
    return TL_OK;
  }
  const size_t nblk = ((size_t)B + RB - 1) / RB;
  double *vals = NULL;
  if (mode == TL_WS_OFF) {
    tl_status st = ccis_blocks(s, num, den, n, m, 0, nblk, &vals);
    if (st) return st;
  } else {
    const size_t P = (size_t)tl_ws_parts() < nblk ? (size_t)tl_ws_parts() : nblk;
    int have = mode == TL_WS_REPLAY;
    if (have) { /* the buffer the parts are replayed into */
      if (row_buf(s, m)) return TL_ENOMEM;
      vals = s->buf + 2 * (size_t)m;
    }
    for (size_t j = 0; j < P; j++) {
      const size_t bl0 = nblk * j / P, bl1 = nblk * (j + 1) / P;
      const size_t r0 = bl0 * RB, r1 = bl1 * RB < B ? bl1 * RB : B;
      int todo = tl_ws_task(TL_WS_CCIS_PART, key ^ (j + 1), have ? vals + r0 : NULL, (r1 - r0) * sizeof *vals);
      if (todo < 0) return (tl_status)-todo;
      if (todo != TL_WS_RUN) continue; /* replayed into vals, or another rank's */
      double *v;
      tl_status st = ccis_blocks(s, num, den, n, m, bl0, bl1, &v);
      if (!st) st = tl_ws_done(v + r0, (r1 - r0) * sizeof *v);
      if (st) return st;
    }
    if (!have) return TL_OK; /* COMPUTE: the bounds are rank 0's, after the replay */
  }
  *lo = quantile_select(vals, B, pct_q((1.0 - level) / 2.0));
  *hi = quantile_select(vals, B, pct_q((1.0 + level) / 2.0));
  return TL_OK;
}
