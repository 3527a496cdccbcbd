/* mtb_compare.c - MT-Bench-101 model comparisons with their paired bootstrap CIs (mtb_compare.h).
 *
 * Same bits as the plain loop (module.c before issue 34: for every pair, policy, group and
 * resample, tl_boot_counts then one pass over the group's dialogues computing pref with exp):
 *  - pref, 1 - pref and the win/loss/tie class of a dialogue are the same expressions, computed
 *    once per (pair, policy) instead of once per resample;
 *  - the soft sum of resample r is sum_j c[r][j] * q[j] in dialogue order j, one rounding per
 *    multiply and per add as before. Dialogues with count 0 or without both scores add
 *    c * 0 = +0.0 instead of being skipped, which leaves every partial sum (>= +0.0) unchanged.
 *    The kernels add 8 resamples side by side (one sum per resample, each in the order j), and
 *    never fuse a multiply with an add (no FMA target; the build is ISO C, -ffp-contract=off);
 *  - the counts W, L, T, N are exact integers in any order: one double sum of c[r][j] * k[j] with
 *    k[j] = 0 (missing) or 1 + base (2 [win] + [tie]) gives N + base (2W + T) exactly (every term
 *    and partial sum is an integer below 2^53: base is a power of two > 2m, m < 2^24), and
 *    W + T/2 = (2W + T) / 2 exactly, the same double as before;
 *    When base^4 <= 2^53 (m < 4096) one sum carries both policies' codes (kern_avx2_one);
 *  - quantiles: tl_quantile_sorted's positions and expression on the same order statistics,
 *    read from the nearer end by a bounded heap instead of a full sort (equal values have
 *    equal bits here).
 * tests/unit/test_mtb_compare.c checks every value against the plain loop, bit for bit, on both
 * kernels, with small bounds on the kept counts and on the byte counts. */
#include "mtb_compare.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tally/boot.h"
#include "tally/str.h"
#include "tally/workshare.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define CMP_X86 1
#include <immintrin.h>

/* The soft sums must never fuse a multiply with its add, whatever the compiler's default: GCC
 * takes the attribute, clang the pragma (it ignores GCC's `optimize`). */
#if defined(__clang__)
#pragma clang fp contract(off)
#define NO_CONTRACT
#define NO_CONTRACT_SEP
#else
#define NO_CONTRACT optimize("fp-contract=off")
#define NO_CONTRACT_SEP ,
#endif
#endif

enum { RB = 8 };                    /* resamples per block (one AVX2 kernel call) */
enum { K_WIN = 0, K_LOSS = 1, K_TIE = 2, K_MISS = 3 };
#define KERNEL_MAX_M ((size_t)1 << 24) /* larger groups: the plain loop (codes stay below 2^53) */

struct tl_mtb_cmp {
  size_t n;
  int ng;
  size_t **gidx, *gm; /* [ng] copies of the groups */
  int *gsz;           /* [ng] slot of the group's size in sz */
  size_t *sz;         /* [nsz] distinct group sizes > 0 */
  int nsz;
  uint64_t B, seed;
  double level;
  size_t cache_cap;
  unsigned count_max;
  int simd;
  size_t nblk, kept;  /* ceil(B / RB) blocks; blocks [0, kept) are kept for every size */
  uint8_t **cnt;      /* [nsz]: [kept][m][RB] counts, lane k = resample block * RB + k */
  uint8_t **wide;     /* [nsz]: [kept] 1 = the block has a count > count_max (plain loop) */
  bool drawn;
  size_t maxm;
  int nslot;          /* pairs computed together (each block of counts read once for all) */
  struct slot {       /* per-pair work */
    double *qd[2];    /* [n] 1 - pref per dialogue and policy (0 when missing) */
    uint8_t *kd[2];   /* [n] class K_* */
    double *q[2], *k[2]; /* [maxm] the group's q and integer codes, in position order */
    double *ck;       /* [maxm] both codes in one (kern_avx2_one) */
    uint8_t *same;    /* [maxm] 1 where q[1] has q[0]'s bits */
    double *vals;     /* [4][B]: win rate, soft win rate of policy 0, then of policy 1 */
  } sl[TL_MTB_CMP_BATCH];
  uint8_t *scratch;   /* [maxm][RB] a block drawn for this batch only */
  int32_t *w;         /* [maxm] */
  double *heap;       /* [B + 2] quantile scratch */
};
typedef struct slot slot;

/* 0: no AVX2; 1: AVX2; 2: AVX2 and FMA. */
static int cpu_avx2(void) {
#ifdef CMP_X86
  return __builtin_cpu_supports("avx2") ? 1 + (__builtin_cpu_supports("fma") ? 1 : 0) : 0;
#else
  return 0;
#endif
}

void tl_mtb_cmp_free(tl_mtb_cmp *c) {
  if (!c) return;
  for (int g = 0; c->gidx && g < c->ng; g++) free(c->gidx[g]);
  for (int s = 0; s < c->nsz; s++) {
    if (c->cnt) free(c->cnt[s]);
    if (c->wide) free(c->wide[s]);
  }
  for (int i = 0; i < TL_MTB_CMP_BATCH; i++) {
    slot *S = &c->sl[i];
    for (int p = 0; p < 2; p++) {
      free(S->qd[p]);
      free(S->kd[p]);
      free(S->q[p]);
      free(S->k[p]);
    }
    free(S->ck);
    free(S->same);
    free(S->vals);
  }
  free(c->gidx);
  free(c->gm);
  free(c->gsz);
  free(c->sz);
  free(c->cnt);
  free(c->wide);
  free(c->scratch);
  free(c->w);
  free(c->heap);
  free(c);
}

tl_mtb_cmp *tl_mtb_cmp_new(size_t n, int ngroups, const size_t *const *gidx, const size_t *gm, uint64_t B,
                           uint64_t seed, double level) {
  tl_mtb_cmp *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->n = n;
  c->ng = ngroups;
  c->B = B;
  c->seed = seed;
  c->level = level;
  c->cache_cap = TL_MTB_CMP_CACHE;
  c->count_max = 255;
  c->simd = cpu_avx2();
  c->nblk = (size_t)((B + RB - 1) / RB);
  size_t ng = ngroups > 0 ? (size_t)ngroups : 1;
  c->gidx = calloc(ng, sizeof *c->gidx);
  c->gm = calloc(ng, sizeof *c->gm);
  c->gsz = calloc(ng, sizeof *c->gsz);
  c->sz = calloc(ng, sizeof *c->sz);
  if (!c->gidx || !c->gm || !c->gsz || !c->sz) goto oom;
  for (int g = 0; g < ngroups; g++) {
    size_t m = gm[g];
    c->gm[g] = m;
    if (!(c->gidx[g] = malloc((m ? m : 1) * sizeof **c->gidx))) goto oom;
    if (m) memcpy(c->gidx[g], gidx[g], m * sizeof **c->gidx);
    if (m > c->maxm) c->maxm = m;
    int s = 0;
    while (s < c->nsz && c->sz[s] != m) s++;
    if (m && s == c->nsz) c->sz[c->nsz++] = m;
    c->gsz[g] = m ? s : -1;
  }
  size_t mm = c->maxm ? c->maxm : 1, nn = n ? n : 1;
  c->nslot = B <= 1000000 ? TL_MTB_CMP_BATCH : 1; /* the values of a batch: 4 B doubles a pair */
  for (int i = 0; i < c->nslot; i++) {
    slot *S = &c->sl[i];
    for (int p = 0; p < 2; p++)
      if (!(S->qd[p] = malloc(nn * sizeof *S->qd[p])) || !(S->kd[p] = malloc(nn)) ||
          !(S->q[p] = malloc(mm * sizeof *S->q[p])) || !(S->k[p] = malloc(mm * sizeof *S->k[p])))
        goto oom;
    if (!(S->ck = malloc(mm * sizeof *S->ck)) || !(S->same = malloc(mm)) ||
        !(S->vals = malloc((B ? 4 * B : 1) * sizeof *S->vals)))
      goto oom;
  }
  c->scratch = malloc(mm * RB);
  c->w = malloc(mm * sizeof *c->w);
  c->heap = malloc((size_t)(B + 2) * sizeof *c->heap);
  c->cnt = calloc((size_t)(c->nsz ? c->nsz : 1), sizeof *c->cnt);
  c->wide = calloc((size_t)(c->nsz ? c->nsz : 1), sizeof *c->wide);
  if (!c->scratch || !c->w || !c->heap || !c->cnt || !c->wide) goto oom;
  return c;
oom:
  tl_mtb_cmp_free(c);
  return NULL;
}

void tl_mtb_cmp_limits(tl_mtb_cmp *c, size_t cache_bytes, unsigned count_max) {
  c->cache_cap = cache_bytes;
  c->count_max = count_max < 1 ? 1 : count_max > 255 ? 255 : count_max;
}

void tl_mtb_cmp_use_simd(tl_mtb_cmp *c, int on) { c->simd = on ? cpu_avx2() : 0; }

/* Counts of block b (resamples b RB .. b RB + RB - 1, lanes past B zero) for group size m into
 * dst[m][RB]. 1 when a count exceeds count_max (dst is then incomplete). */
static int draw_block(tl_mtb_cmp *c, size_t m, size_t b, uint8_t *dst) {
  memset(dst, 0, m * RB);
  for (unsigned l = 0; l < RB; l++) {
    uint64_t r = (uint64_t)b * RB + l;
    if (r >= c->B) break;
    tl_boot_counts(c->seed, r, (uint32_t)m, c->w);
    for (size_t j = 0; j < m; j++) {
      if ((unsigned)c->w[j] > c->count_max) return 1;
      dst[j * RB + l] = (uint8_t)c->w[j];
    }
  }
  return 0;
}

/* The kept counts: as many leading blocks as cache_cap allows, for every distinct size. */
static tl_status draw_kept(tl_mtb_cmp *c) {
  size_t per = 0;
  for (int s = 0; s < c->nsz; s++) per += c->sz[s] * RB;
  c->kept = per ? c->cache_cap / per : 0;
  if (c->kept > c->nblk) c->kept = c->nblk;
  for (int s = 0; s < c->nsz && c->kept; s++) {
    size_t m = c->sz[s];
    if (m >= KERNEL_MAX_M) continue; /* the plain loop: never read */
    c->cnt[s] = malloc(c->kept * m * RB);
    c->wide[s] = malloc(c->kept);
    if (!c->cnt[s] || !c->wide[s]) return TL_ENOMEM;
    for (size_t b = 0; b < c->kept; b++) c->wide[s][b] = (uint8_t)draw_block(c, m, b, c->cnt[s] + b * m * RB);
  }
  c->drawn = true;
  return TL_OK;
}

/* The plain loop over group g under policy p with counts w[m] (NULL: 1 each): module.c's
 * win_rates before issue 34 with pref read from qd/kd (the same doubles). cnt[4] = W L T missing
 * when w is NULL. */
static void rates_plain(const tl_mtb_cmp *c, const slot *S, int p, int g, const int32_t *w, double *wr,
                        double *sw, int64_t *cnt) {
  double W = 0, L = 0, T = 0, soft = 0, N = 0;
  int64_t miss = 0;
  const size_t *idx = c->gidx[g];
  for (size_t j = 0; j < c->gm[g]; j++) {
    size_t i = idx[j];
    double cj = w ? w[j] : 1;
    if (cj == 0) continue;
    int k = S->kd[p][i];
    if (k == K_MISS) {
      miss++;
      continue;
    }
    if (k == K_WIN) W += cj;
    else if (k == K_LOSS) L += cj;
    else T += cj;
    soft += cj * S->qd[p][i];
    N += cj;
  }
  *wr = N > 0 ? (W + 0.5 * T) / N : NAN;
  *sw = N > 0 ? soft / N : NAN;
  if (cnt) {
    cnt[0] = (int64_t)W;
    cnt[1] = (int64_t)L;
    cnt[2] = (int64_t)T;
    cnt[3] = miss;
  }
}

/* Kernels: out[4][RB] = soft sum and code sum of policy 0, then of policy 1, for the RB
 * resamples of block cb[m][RB]; each lane sums in position order j, multiply then add. */
__attribute__((NO_CONTRACT)) static void kern_c(
    size_t m, const uint8_t *cb, const double *q0, const double *k0, const double *q1, const double *k1,
    double *out) {
  double s0[RB] = {0}, a0[RB] = {0}, s1[RB] = {0}, a1[RB] = {0};
  for (size_t j = 0; j < m; j++) {
    const uint8_t *cr = cb + j * RB;
    for (int l = 0; l < RB; l++) {
      double x = cr[l];
      s0[l] += x * q0[j];
      a0[l] += x * k0[j];
      s1[l] += x * q1[j];
      a1[l] += x * k1[j];
    }
  }
  memcpy(out, s0, sizeof s0);
  memcpy(out + RB, a0, sizeof a0);
  memcpy(out + 2 * RB, s1, sizeof s1);
  memcpy(out + 3 * RB, a1, sizeof a1);
}

#ifdef CMP_X86
__attribute__((target("avx2") NO_CONTRACT_SEP NO_CONTRACT)) static void kern_avx2(
    size_t m, const uint8_t *cb, const double *q0, const double *k0, const double *q1, const double *k1,
    double *out) {
  __m256d s0a = _mm256_setzero_pd(), s0b = s0a, a0a = s0a, a0b = s0a, s1a = s0a, s1b = s0a, a1a = s0a, a1b = s0a;
  for (size_t j = 0; j < m; j++) {
    __m128i b8 = _mm_loadl_epi64((const __m128i *)(const void *)(cb + j * RB));
    __m256d xa = _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(b8));
    __m256d xb = _mm256_cvtepi32_pd(_mm_cvtepu8_epi32(_mm_srli_si128(b8, 4)));
    __m256d v = _mm256_broadcast_sd(q0 + j);
    s0a = _mm256_add_pd(s0a, _mm256_mul_pd(xa, v));
    s0b = _mm256_add_pd(s0b, _mm256_mul_pd(xb, v));
    v = _mm256_broadcast_sd(k0 + j);
    a0a = _mm256_add_pd(a0a, _mm256_mul_pd(xa, v));
    a0b = _mm256_add_pd(a0b, _mm256_mul_pd(xb, v));
    v = _mm256_broadcast_sd(q1 + j);
    s1a = _mm256_add_pd(s1a, _mm256_mul_pd(xa, v));
    s1b = _mm256_add_pd(s1b, _mm256_mul_pd(xb, v));
    v = _mm256_broadcast_sd(k1 + j);
    a1a = _mm256_add_pd(a1a, _mm256_mul_pd(xa, v));
    a1b = _mm256_add_pd(a1b, _mm256_mul_pd(xb, v));
  }
  _mm256_storeu_pd(out, s0a);
  _mm256_storeu_pd(out + 4, s0b);
  _mm256_storeu_pd(out + 8, a0a);
  _mm256_storeu_pd(out + 12, a0b);
  _mm256_storeu_pd(out + 16, s1a);
  _mm256_storeu_pd(out + 20, s1b);
  _mm256_storeu_pd(out + 24, a1a);
  _mm256_storeu_pd(out + 28, a1b);
}

/* The same sums with the work of the common case cut (groups with b^4 <= 2^53, b = the code
 * base): one code sum for both policies, ck[j] = k0[j] + b^2 k1[j] (every digit below b, so the
 * sum is exact and splits into the two), and where q1[j] has q0[j]'s bits (same[j]: the dialogue
 * has both scores under both policies, or neither) the product x q0[j] is added to both soft
 * sums - the same product the plain loop computes for each. out[4][RB] as kern_avx2, with
 * out[1] = the code sum and out[3] = 0 (resample_group splits it). */
/* The code sums use FMA: their products and sums are exact integers, so fusing changes no bit;
 * the soft sums are never fused (optimize("fp-contract=off") whatever the build's flags). */
__attribute__((target("avx2,fma") NO_CONTRACT_SEP NO_CONTRACT)) static void kern_avx2_one(
    size_t m, const uint8_t *cb, const double *q0, const double *q1, const uint8_t *same, const double *ck,
    double *out) {
  __m256d s0a = _mm256_setzero_pd(), s0b = s0a, s1a = s0a, s1b = s0a, ca = s0a, cbb = s0a;
  for (size_t j = 0; j < m; j++) {
    __m256i c8 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(cb + j * RB)));
    __m256d xa = _mm256_cvtepi32_pd(_mm256_castsi256_si128(c8));
    __m256d xb = _mm256_cvtepi32_pd(_mm256_extracti128_si256(c8, 1));
    __m256d v = _mm256_broadcast_sd(q0 + j);
    __m256d ta = _mm256_mul_pd(xa, v), tb = _mm256_mul_pd(xb, v);
    s0a = _mm256_add_pd(s0a, ta);
    s0b = _mm256_add_pd(s0b, tb);
    if (!same[j]) {
      v = _mm256_broadcast_sd(q1 + j);
      ta = _mm256_mul_pd(xa, v);
      tb = _mm256_mul_pd(xb, v);
    }
    s1a = _mm256_add_pd(s1a, ta);
    s1b = _mm256_add_pd(s1b, tb);
    v = _mm256_broadcast_sd(ck + j);
    ca = _mm256_fmadd_pd(xa, v, ca);
    cbb = _mm256_fmadd_pd(xb, v, cbb);
  }
  __m256d z = _mm256_setzero_pd();
  _mm256_storeu_pd(out, s0a);
  _mm256_storeu_pd(out + 4, s0b);
  _mm256_storeu_pd(out + 8, ca);
  _mm256_storeu_pd(out + 12, cbb);
  _mm256_storeu_pd(out + 16, s1a);
  _mm256_storeu_pd(out + 20, s1b);
  _mm256_storeu_pd(out + 24, z);
  _mm256_storeu_pd(out + 28, z);
}
#endif

/* The K smallest of sg * v[0..n) (sg = +1 or -1: the K largest of v, negated; exact),
 * 1 <= K <= n, as a sorted array h[K] (ascending; small K): one pass, an element below h[K-1]
 * goes in, h[K-1] drops out (ties leave the multiset of values the same). */
static void insert_k(const double *v, size_t n, double sg, size_t K, double *h) {
  for (size_t i = 0; i < K; i++) h[i] = INFINITY;
  for (size_t i = 0; i < n; i++) {
    double x = sg * v[i];
    if (!(x < h[K - 1])) continue;
    size_t j = K - 1; /* shift the larger ones up */
    while (j > 0 && h[j - 1] > x) {
      h[j] = h[j - 1];
      j--;
    }
    h[j] = x;
  }
}

/* The same for any K as a max-heap h[K]: returns the root (the K-th smallest), *second = the
 * (K-1)-th. */
static double heap_k(const double *v, size_t n, double sg, size_t K, double *h, double *second) {
  for (size_t i = 0; i < K; i++) { /* sift up */
    size_t c = i;
    double x = sg * v[i];
    while (c > 0 && h[(c - 1) / 2] < x) {
      h[c] = h[(c - 1) / 2];
      c = (c - 1) / 2;
    }
    h[c] = x;
  }
  for (size_t i = K; i < n; i++) {
    double x = sg * v[i];
    if (!(x < h[0])) continue;
    size_t c = 0;
    for (;;) { /* sift down from the root */
      size_t l = 2 * c + 1;
      if (l >= K) break;
      size_t m = l + 1 < K && h[l + 1] > h[l] ? l + 1 : l;
      if (!(h[m] > x)) break;
      h[c] = h[m];
      c = m;
    }
    h[c] = x;
  }
  *second = K >= 3 ? (h[1] > h[2] ? h[1] : h[2]) : K == 2 ? h[1] : h[0];
  return h[0];
}

/* The K-th smallest of sg * v[0..n) (returned) and the (K-1)-th (*second; the K-th when K = 1).
 * Hand-written: C has no partial sort. Small K (the usual CI levels) on many values: a threshold
 * p from 64 evenly spaced samples (their r-th smallest, r chosen so that about 2.5 K values lie
 * at or below it), the values <= p copied out without a branch, and their K smallest taken; when
 * fewer than K values are <= p (unlucky samples), all n values are scanned instead. Any K: a
 * heap. scratch: n + 2 doubles. */
static double smallest_k(const double *v, size_t n, double sg, size_t K, double *scratch, double *second) {
  if (K > 64) return heap_k(v, n, sg, K, scratch, second);
  double h[64];
  if (n >= 512) {
    double smp[64], hs[64];
    size_t st = n / 64, r = (64 * K * 5 / 2 + n - 1) / n;
    if (r < 2) r = 2;
    if (r <= 32) {
      for (size_t i = 0; i < 64; i++) smp[i] = v[i * st];
      insert_k(smp, 64, sg, r, hs);
      double p = hs[r - 1];
      size_t cnt = 0;
      for (size_t i = 0; i < n; i++) {
        double x = sg * v[i];
        scratch[cnt] = x;
        cnt += x <= p;
      }
      if (cnt >= K) {
        insert_k(scratch, cnt, 1.0, K, h);
        *second = K >= 2 ? h[K - 2] : h[0];
        return h[K - 1];
      }
    }
  }
  insert_k(v, n, sg, K, h);
  *second = K >= 2 ? h[K - 2] : h[0];
  return h[K - 1];
}

/* tl_quantile_sorted(sorted v, n, q) without sorting: the same positions and the same
 * expression (boot.c; numpy's linear method) on the same two order statistics, taken from the
 * nearer end of v[0..n) (no NaN) with smallest_k. Equal values have equal bits here (every value
 * is >= +0.0, none is -0.0), so the statistics are the sorted array's, bit for bit.
 * h: scratch of n + 2 doubles. */
static double quantile_sel(const double *v, size_t n, double q, double *h) {
  double vi = (double)(n - 1) * q, a, b, sec;
  if (vi >= (double)(n - 1)) return -smallest_k(v, n, -1.0, 1, h, &sec);
  if (vi < 0) return smallest_k(v, n, 1.0, 1, h, &sec);
  size_t i0 = (size_t)floor(vi); /* i0 <= n - 2: a = order statistic i0, b = i0 + 1 */
  if (i0 + 2 <= n - i0) {
    b = smallest_k(v, n, 1.0, i0 + 2, h, &sec);
    a = sec;
  } else {
    a = -smallest_k(v, n, -1.0, n - i0, h, &sec);
    b = -sec;
  }
  double lo = floor(vi), g = vi - lo, d = b - a;
  return g >= 0.5 ? b - d * (1.0 - g) : a + d * g;
}

/* Percentile CI of the defined values v[0..n) (compacted here): module.c's ci() before issue 34
 * (tl_sort_f64, then tl_quantile_sorted at (1 - level) / 2 and 1 - (1 - level) / 2), the same
 * bits without the sort. h: scratch of n + 2 doubles. */
static void ci(double *v, size_t n, double level, double *h, double *lo, double *hi) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (!isnan(v[i])) v[k++] = v[i];
  if (!k) {
    *lo = *hi = NAN;
    return;
  }
  *lo = quantile_sel(v, k, (1 - level) / 2, h);
  *hi = quantile_sel(v, k, 1 - (1 - level) / 2, h);
}

#ifdef CMP_X86
/* The scalar decode below, 4 lanes at a time, for a whole block: soft[RB] and code[RB] (N + base
 * (2W + T)) to the win rates wr[RB] and soft win rates sw[RB]. The same IEEE operations (floor,
 * multiplications by powers of two, one correctly rounded division each), so the same bits; NaN
 * is the same constant. */
__attribute__((target("avx2") NO_CONTRACT_SEP NO_CONTRACT)) static void decode_avx2(
    const double *soft, const double *code, double base, double ibase, double *wr, double *sw) {
  __m256d vb = _mm256_set1_pd(base), vib = _mm256_set1_pd(ibase), half = _mm256_set1_pd(0.5);
  __m256d z = _mm256_setzero_pd(), nan = _mm256_set1_pd(NAN);
  for (int l = 0; l < RB; l += 4) {
    __m256d cd = _mm256_loadu_pd(code + l);
    __m256d x2 = _mm256_floor_pd(_mm256_mul_pd(cd, vib));
    __m256d N = _mm256_sub_pd(cd, _mm256_mul_pd(x2, vb));
    __m256d ok = _mm256_cmp_pd(N, z, _CMP_GT_OQ);
    _mm256_storeu_pd(wr + l, _mm256_blendv_pd(nan, _mm256_div_pd(_mm256_mul_pd(x2, half), N), ok));
    _mm256_storeu_pd(sw + l, _mm256_blendv_pd(nan, _mm256_div_pd(_mm256_loadu_pd(soft + l), N), ok));
  }
}
#endif

/* One block's sums (out[4][RB], kern_c's layout) to the resample values of slot S. */
static void block_values(const tl_mtb_cmp *c, const slot *S, const double *out, double base, size_t r0,
                         size_t rn) {
  size_t B = (size_t)c->B;
  double ibase = 1 / base; /* a power of two: exact */
#ifdef CMP_X86
  if (c->simd && rn == RB) {
    for (int p = 0; p < 2; p++)
      decode_avx2(out + 2 * p * RB, out + (2 * p + 1) * RB, base, ibase, S->vals + (2 * p) * B + r0,
                  S->vals + (2 * p + 1) * B + r0);
    return;
  }
#endif
  for (int p = 0; p < 2; p++)
    for (size_t l = 0; l < rn; l++) {
      double code = out[(2 * p + 1) * RB + l], x2 = floor(code * ibase), N = code - x2 * base;
      S->vals[(2 * p) * B + r0 + l] = N > 0 ? (x2 * 0.5) / N : NAN;
      S->vals[(2 * p + 1) * B + r0 + l] = N > 0 ? out[2 * p * RB + l] / N : NAN;
    }
}

/* Resample values of group g (both policies) for the batch's np pairs into their slots' vals.
 * Each block of counts is read once for the batch (it stays in the L1 cache across its pairs). */
static void resample_group(tl_mtb_cmp *c, int g, int np) {
  size_t m = c->gm[g], B = (size_t)c->B;
  const size_t *idx = c->gidx[g];
  double base = 1; /* a power of two > 2m: the digits N <= m and 2W + T <= 2m fit below it */
  while (base <= 2.0 * (double)m) base *= 2;
  double b2 = base * base, ib2 = 1 / b2; /* powers of two: exact */
  int one = c->simd == 2 && b2 * b2 <= 9007199254740992.0; /* kern_avx2_one: b^4 <= 2^53 */
  for (int i = 0; i < np; i++) {
    slot *S = &c->sl[i];
    for (int p = 0; p < 2; p++)
      for (size_t j = 0; j < m; j++) {
        int k = S->kd[p][idx[j]];
        S->q[p][j] = k == K_MISS ? 0 : S->qd[p][idx[j]];
        S->k[p][j] = k == K_MISS ? 0 : 1 + base * (k == K_WIN ? 2 : k == K_TIE ? 1 : 0);
      }
    for (size_t j = 0; one && j < m; j++) {
      S->same[j] = !memcmp(&S->q[0][j], &S->q[1][j], sizeof(double));
      S->ck[j] = S->k[0][j] + b2 * S->k[1][j];
    }
  }
  int s = c->gsz[g];
  double out[4 * RB];
  for (size_t b = 0; b < c->nblk; b++) {
    const uint8_t *cb = NULL;
    if (m < KERNEL_MAX_M) {
      if (b < c->kept) cb = c->wide[s][b] ? NULL : c->cnt[s] + b * m * RB;
      else cb = draw_block(c, m, b, c->scratch) ? NULL : c->scratch;
    }
    size_t r0 = b * RB, rn = B - r0 < RB ? B - r0 : RB;
    if (!cb) { /* a count above count_max, or a huge group: the plain loop */
      for (size_t l = 0; l < rn; l++) {
        tl_boot_counts(c->seed, r0 + l, (uint32_t)m, c->w);
        for (int i = 0; i < np; i++)
          for (int p = 0; p < 2; p++)
            rates_plain(c, &c->sl[i], p, g, c->w, &c->sl[i].vals[(2 * p) * B + r0 + l],
                        &c->sl[i].vals[(2 * p + 1) * B + r0 + l], NULL);
      }
      continue;
    }
    for (int i = 0; i < np; i++) {
      const slot *S = &c->sl[i];
#ifdef CMP_X86
      if (one) {
        kern_avx2_one(m, cb, S->q[0], S->q[1], S->same, S->ck, out);
        for (int l = 0; l < RB; l++) { /* S = (N0 + b X0) + b^2 (N1 + b X1): split, exactly */
          double hi = floor(out[RB + l] * ib2);
          out[RB + l] -= hi * b2;
          out[3 * RB + l] = hi;
        }
      } else if (c->simd)
        kern_avx2(m, cb, S->q[0], S->k[0], S->q[1], S->k[1], out);
      else
#endif
        kern_c(m, cb, S->q[0], S->k[0], S->q[1], S->k[1], out);
      block_values(c, S, out, base, r0, rn);
    }
  }
}

/* pref, its class and 1 - pref of every dialogue of one pair, both policies, into slot S. */
static void pair_prefs(const tl_mtb_cmp *c, slot *S, const double *sa, const double *sb) {
  for (int p = 0; p < 2; p++)
    for (size_t i = 0; i < c->n; i++) {
      double a = sa[(size_t)p * c->n + i], b = sb[(size_t)p * c->n + i];
      if (isnan(a) || isnan(b)) {
        S->kd[p][i] = K_MISS;
        S->qd[p][i] = 0;
        continue;
      }
      /* the definition's expression, as module.c has always computed it */
      double pref = 1.0 / (1.0 + exp(-0.3 * (b - a)));
      S->kd[p][i] = pref < 0.5 ? K_WIN : pref > 0.5 ? K_LOSS : K_TIE;
      S->qd[p][i] = 1.0 - pref;
    }
}

int tl_mtb_cmp_batch(const tl_mtb_cmp *c) { return c->nslot; }

static tl_status cmp_pairs(tl_mtb_cmp *c, int np, const double *const *sa, const double *const *sb,
                           tl_mtb_cmp_res *const *res);

/* A batch is a task of the ranks' work share (tally/workshare.h): computed by one rank, its
 * results (np x 2 ng tl_mtb_cmp_res, pair by pair) replayed on rank 0. Its key hashes every input
 * the results depend on (the scores, the groups' sizes, B, seed, level); another rank's batch
 * gets results with m = 0 and NaN values (its tables are thrown away). */
tl_status tl_mtb_cmp_pairs(tl_mtb_cmp *c, int np, const double *const *sa, const double *const *sb,
                           tl_mtb_cmp_res *const *res) {
  if (np < 1 || np > c->nslot) return TL_EINTERNAL;
  if (tl_ws_mode_now() == TL_WS_OFF) return cmp_pairs(c, np, sa, sb, res);
  const size_t per = 2 * (size_t)c->ng, len = (size_t)np * per * sizeof(tl_mtb_cmp_res);
  tl_mtb_cmp_res *all = malloc(len);
  uint64_t *h = malloc((2 * (size_t)np + 2) * sizeof *h);
  tl_status st = all && h ? TL_OK : TL_ENOMEM;
  if (!st) {
    uint64_t par[5] = {(uint64_t)np, c->n, c->B, c->seed, 0};
    memcpy(&par[4], &c->level, sizeof c->level);
    h[0] = tl_hash64(par, sizeof par);
    h[1] = tl_hash64(c->gm, (size_t)c->ng * sizeof *c->gm);
    for (int i = 0; i < np; i++) {
      h[2 + 2 * i] = tl_hash64(sa[i], 2 * c->n * sizeof **sa);
      h[3 + 2 * i] = tl_hash64(sb[i], 2 * c->n * sizeof **sb);
    }
    int todo = tl_ws_task(TL_WS_MTB_PAIRS, tl_hash64(h, (2 * (size_t)np + 2) * sizeof *h), all, len);
    if (todo < 0) st = (tl_status)-todo;
    else if (todo == TL_WS_RUN) {
      st = cmp_pairs(c, np, sa, sb, res);
      for (int i = 0; !st && i < np; i++) memcpy(all + (size_t)i * per, res[i], per * sizeof *all);
      if (!st) st = tl_ws_done(all, len);
    } else {
      for (int i = 0; i < np; i++)
        for (size_t k = 0; k < per; k++) {
          tl_mtb_cmp_res *o = &res[i][k];
          if (todo == TL_WS_HAVE) *o = all[(size_t)i * per + k];
          else *o = (tl_mtb_cmp_res){.wr = NAN, .sw = NAN, .wr_lo = NAN, .wr_hi = NAN, .sw_lo = NAN, .sw_hi = NAN};
        }
    }
  }
  free(all);
  free(h);
  return st;
}

static tl_status cmp_pairs(tl_mtb_cmp *c, int np, const double *const *sa, const double *const *sb,
                           tl_mtb_cmp_res *const *res) {
  if (c->B && !c->drawn && draw_kept(c)) return TL_ENOMEM;
  for (int i = 0; i < np; i++) pair_prefs(c, &c->sl[i], sa[i], sb[i]);
  size_t B = (size_t)c->B;
  for (int g = 0; g < c->ng; g++) {
    for (int i = 0; i < np; i++)
      for (int p = 0; p < 2; p++) {
        tl_mtb_cmp_res *o = &res[i][p * c->ng + g];
        int64_t cnt[4];
        o->m = c->gm[g];
        o->wr_lo = o->wr_hi = o->sw_lo = o->sw_hi = NAN;
        rates_plain(c, &c->sl[i], p, g, NULL, &o->wr, &o->sw, cnt);
        o->w = cnt[0];
        o->l = cnt[1];
        o->t = cnt[2];
        o->miss = cnt[3];
      }
    if (!c->gm[g] || !B) continue;
    resample_group(c, g, np);
    for (int i = 0; i < np; i++)
      for (int p = 0; p < 2; p++) {
        tl_mtb_cmp_res *o = &res[i][p * c->ng + g];
        double *v = c->sl[i].vals;
        ci(v + (2 * p) * B, B, c->level, c->heap, &o->wr_lo, &o->wr_hi);
        ci(v + (2 * p + 1) * B, B, c->level, c->heap, &o->sw_lo, &o->sw_hi);
      }
  }
  return TL_OK;
}

tl_status tl_mtb_cmp_pair(tl_mtb_cmp *c, const double *sa, const double *sb, tl_mtb_cmp_res *res) {
  return tl_mtb_cmp_pairs(c, 1, &sa, &sb, &res);
}
