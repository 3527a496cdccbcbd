/* boot.c - paired bootstrap correlation studies (see include/tally/boot.h and docs/STATISTICS.md,
 * "Bootstrap engine").
 *
 * One idea carries everything: a weighted sample of (x, y) pairs is fully described by the
 * weights of its distinct (x level, y level) CELLS. tl_suff is computed from a cell table sorted
 * by (x level, y level) in O(cells * log Ly) (suff_from_cells), so
 *   - tl_suff_fast: cell weights from item weights (one O(n) pass), then the cell sweep;
 *   - a study: a resample's n draws are counted in ONE pass into the cell tables of all metrics
 *     (small metrics through a joint table over the small metrics only, wide ones in uint8), the
 *     human marginal and the y half of tl_suff are shared, and a wide metric (a continuous or
 *     clipped score, any ties, up to 8 human levels) is swept in one AVX2 pass (suff_x_gen):
 *     O(n + cells) per resample;
 *   - the jackknife: leaving item i out only decrements the weight of its cell, so items of one
 *     cell share one value, and all cells' values come from one sweep in closed form
 *     (jack_suff_closed);
 *   - the permutation test: a permuted metric takes, per item, one of two precomputed cells.
 * All statistics are int64 integers, so every path gives the same tl_suff as the literal
 * definition (tl_suff_reference) and therefore bit-identical statistics; the Philox draws have a
 * scalar and an AVX2 implementation with the same integer arithmetic (chosen at run time). */
#include "tally/boot.h"

#include <Random123/philox.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "boot_int.h"
#include "tally/stats.h"
#include "tally/str.h"
#include "tally/workshare.h"

/* ---------------------------------------------------------------------------------------------
 * Resampling
 *
 * Two implementations of the same Philox4x32-10 blocks: the scalar one (Random123's
 * philox4x32, the very code tl_k_index in tally/boot_kernel.h and the CUDA kernels run) and an
 * AVX2 one that computes 8 blocks at once with the same 32-bit multiplies, xors and key bumps
 * (Random123 philox.h: round = mulhilo(M0, c0), mulhilo(M1, c2) -> {hi1^c1^k0, lo1, hi0^c3^k1,
 * lo0}; the key is bumped by (W0, W1) before rounds 2..10). Integer arithmetic only, so the two
 * give the same words (tests/unit/test_boot.c pins them over many seeds, resamples and
 * counters). The AVX2 code is compiled for that target function by function and chosen at run
 * time (__builtin_cpu_supports), so the build needs no -mavx2 and runs on any x86-64.
 * ------------------------------------------------------------------------------------------- */

#if defined(__x86_64__) && defined(__GNUC__)
#define BOOT_X86 1
#include <immintrin.h>
#define AVX2_FN __attribute__((target("avx2")))
#define AVX2_INLINE __attribute__((target("avx2"), always_inline)) static inline
#endif

/* 1 when the AVX2 paths may run here. */
static int boot_cpu_avx2(void) {
#ifdef BOOT_X86
  return __builtin_cpu_supports("avx2") ? 1 : 0;
#else
  return 0;
#endif
}

int tl_boot_have_avx2(void) { return boot_cpu_avx2(); }

/* floor(u * n / 2^64) for n < 2^32 without 128-bit arithmetic: with u = uh 2^32 + ul,
 * u n = (uh n) 2^32 + ul n, and floor((uh n + floor(ul n / 2^32)) / 2^32) is the same integer
 * (uh n + (ul n >> 32) < 2^64, no overflow). Equal to ((unsigned __int128)u * n) >> 64 (tested);
 * on CUDA: __umul64hi(u, n). The AVX2 draw below computes the same two products per index. */
static inline uint32_t mulhi_u64_u32(uint64_t u, uint32_t n) {
  uint64_t p1 = (u >> 32) * (uint64_t)n;
  uint64_t p0 = (u & 0xffffffffu) * (uint64_t)n;
  return (uint32_t)((p1 + (p0 >> 32)) >> 32);
}

/* Philox4x32-10, key {seed lo, seed hi}, counter {c0, r lo, r hi, stream}. */
static inline philox4x32_ctr_t boot_block(uint64_t seed, uint64_t r, uint32_t c0, uint32_t stream) {
  philox4x32_ctr_t c = {{c0, (uint32_t)r, (uint32_t)(r >> 32), stream}};
  philox4x32_key_t k = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
  return philox4x32(c, k);
}

/* u = word[2h] | word[2h+1] << 32 with h = j & 1 (words 0,1 for even j, 2,3 for odd j). */
uint32_t tl_boot_index(uint64_t seed, uint64_t r, uint32_t j, uint32_t n, uint32_t stream) {
  return tl_k_index(seed, r, j, n, stream); /* the definition shared with the CUDA kernels */
}

/* Indices j in [j0, j1) of resample r into idx[0 .. j1 - j0), scalar (one block per two). */
static void draw_scalar(uint64_t seed, uint64_t r, uint32_t n, uint32_t stream, uint32_t j0,
                        uint32_t j1, uint32_t *idx) {
  uint32_t j = j0;
  if (j < j1 && (j & 1u)) { /* odd start: the second half of block j / 2 */
    philox4x32_ctr_t o = boot_block(seed, r, j >> 1, stream);
    *idx++ = mulhi_u64_u32((uint64_t)o.v[2] | ((uint64_t)o.v[3] << 32), n);
    j++;
  }
  for (; j + 1 < j1; j += 2) {
    philox4x32_ctr_t o = boot_block(seed, r, j >> 1, stream);
    *idx++ = mulhi_u64_u32((uint64_t)o.v[0] | ((uint64_t)o.v[1] << 32), n);
    *idx++ = mulhi_u64_u32((uint64_t)o.v[2] | ((uint64_t)o.v[3] << 32), n);
  }
  if (j < j1) {
    philox4x32_ctr_t o = boot_block(seed, r, j >> 1, stream);
    *idx = mulhi_u64_u32((uint64_t)o.v[0] | ((uint64_t)o.v[1] << 32), n);
  }
}

#ifdef BOOT_X86
/* lo, hi = the low and high 32 bits of a[l] * m for the 8 lanes l (mul_epu32 multiplies the
 * even lanes; the odd ones are shifted down first). */
#define MULHILO8(a, mv, lo, hi)                                                \
  do {                                                                         \
    __m256i pe_ = _mm256_mul_epu32((a), (mv));                                 \
    __m256i po_ = _mm256_mul_epu32(_mm256_srli_epi64((a), 32), (mv));          \
    (lo) = _mm256_blend_epi32(pe_, _mm256_slli_epi64(po_, 32), 0xAA);          \
    (hi) = _mm256_blend_epi32(_mm256_srli_epi64(pe_, 32), po_, 0xAA);          \
  } while (0)

/* Philox4x32-10 on 8 counters at once: x[w] holds word w of the 8 counters (structure of
 * arrays); on return word w of the 8 outputs. */
AVX2_INLINE void philox8_avx2(__m256i x[4], uint32_t k0, uint32_t k1) {
  const __m256i m0 = _mm256_set1_epi64x(PHILOX_M4x32_0), m1 = _mm256_set1_epi64x(PHILOX_M4x32_1);
  const __m256i w0 = _mm256_set1_epi32((int)PHILOX_W32_0), w1 = _mm256_set1_epi32((int)PHILOX_W32_1);
  __m256i K0 = _mm256_set1_epi32((int)k0), K1 = _mm256_set1_epi32((int)k1);
  __m256i x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
#pragma GCC unroll 10
  for (int rd = 0; rd < 10; rd++) {
    if (rd) {
      K0 = _mm256_add_epi32(K0, w0);
      K1 = _mm256_add_epi32(K1, w1);
    }
    __m256i lo0, hi0, lo1, hi1;
    MULHILO8(x0, m0, lo0, hi0);
    MULHILO8(x2, m1, lo1, hi1);
    x0 = _mm256_xor_si256(_mm256_xor_si256(hi1, x1), K0);
    x1 = lo1;
    x2 = _mm256_xor_si256(_mm256_xor_si256(hi0, x3), K1);
    x3 = lo0;
  }
  x[0] = x0;
  x[1] = x1;
  x[2] = x2;
  x[3] = x3;
}

/* Blocks c0 .. c0 + 8 nb8 - 1 (mod 2^32) of (seed, r, stream), as out[4 b + w]. */
AVX2_FN static void blocks_avx2(uint64_t seed, uint64_t r, uint32_t stream, uint32_t c0,
                                uint32_t nb8, uint32_t *out) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (uint32_t b = 0; b < nb8; b++) {
    __m256i x[4] = {_mm256_add_epi32(_mm256_set1_epi32((int)(c0 + 8u * b)), lane),
                    _mm256_set1_epi32((int)(uint32_t)r), _mm256_set1_epi32((int)(uint32_t)(r >> 32)),
                    _mm256_set1_epi32((int)stream)};
    philox8_avx2(x, (uint32_t)seed, (uint32_t)(seed >> 32));
    /* 4 x 8 transpose to blocks in order: (w0 w1 w2 w3) of block 0, block 1, ... */
    __m256i t0 = _mm256_unpacklo_epi32(x[0], x[1]), t1 = _mm256_unpackhi_epi32(x[0], x[1]);
    __m256i t2 = _mm256_unpacklo_epi32(x[2], x[3]), t3 = _mm256_unpackhi_epi32(x[2], x[3]);
    __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    __m256i *o = (__m256i *)(out + 32u * b);
    _mm256_storeu_si256(o + 0, _mm256_permute2x128_si256(u0, u1, 0x20));
    _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(u2, u3, 0x20));
    _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(u0, u1, 0x31));
    _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(u2, u3, 0x31));
  }
}

/* Philox4x32-10 on 2 x 4 counters in "split" form: each 64-bit lane holds one counter word in
 * its low 32 bits (the high bits are don't-care), so that _mm256_mul_epu32, which multiplies the
 * low halves, gives lo and hi of a round's product in one instruction with no shuffles:
 *   p0 = x0 * M0, p1 = x2 * M1;  x0' = (p1 >> 32) ^ x1 ^ k0;  x1' = p1;  x2' = (p0 >> 32) ^ x3 ^ k1;
 *   x3' = p0  (low halves: Random123's round). a0, b0: word 0 of the two groups; words 1..3 are
 * the same in every lane (c1, c2, c3: the draws of one resample), so the first round's
 * mulhilo(M1, c2) is done once, in scalar. On return a[w], b[w] hold output word w. */
AVX2_INLINE void philox_split8_avx2(__m256i a[4], __m256i b[4], uint32_t c1, uint32_t c2, uint32_t c3,
                                    uint32_t k0, uint32_t k1) {
  const __m256i m0 = _mm256_set1_epi64x(PHILOX_M4x32_0), m1 = _mm256_set1_epi64x(PHILOX_M4x32_1);
  const __m256i w0 = _mm256_set1_epi64x(PHILOX_W32_0), w1 = _mm256_set1_epi64x(PHILOX_W32_1);
  __m256i K0 = _mm256_set1_epi64x(k0), K1 = _mm256_set1_epi64x(k1);
  const uint64_t p1 = (uint64_t)PHILOX_M4x32_1 * c2; /* round 1, lane-independent */
  const __m256i r1x0 = _mm256_set1_epi64x((uint32_t)(p1 >> 32) ^ c1 ^ k0);
  const __m256i r1x1 = _mm256_set1_epi64x((uint32_t)p1), c3k1 = _mm256_set1_epi64x(c3 ^ k1);
  __m256i pa = _mm256_mul_epu32(a[0], m0), pb = _mm256_mul_epu32(b[0], m0);
  __m256i a0 = r1x0, a1 = r1x1, a2 = _mm256_xor_si256(_mm256_srli_epi64(pa, 32), c3k1), a3 = pa;
  __m256i b0 = r1x0, b1 = r1x1, b2 = _mm256_xor_si256(_mm256_srli_epi64(pb, 32), c3k1), b3 = pb;
#pragma GCC unroll 9
  for (int rd = 1; rd < 10; rd++) {
    K0 = _mm256_add_epi32(K0, w0); /* 32-bit lanes: the low halves wrap mod 2^32, the high stay 0 */
    K1 = _mm256_add_epi32(K1, w1);
    __m256i pa0 = _mm256_mul_epu32(a0, m0), pa2 = _mm256_mul_epu32(a2, m1);
    __m256i pb0 = _mm256_mul_epu32(b0, m0), pb2 = _mm256_mul_epu32(b2, m1);
    a0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(pa2, 32), a1), K0);
    b0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(pb2, 32), b1), K0);
    a1 = pa2;
    b1 = pb2;
    a2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(pa0, 32), a3), K1);
    b2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(pb0, 32), b3), K1);
    a3 = pa0;
    b3 = pb0;
  }
  a[0] = a0; a[1] = a1; a[2] = a2; a[3] = a3;
  b[0] = b0; b[1] = b1; b[2] = b2; b[3] = b3;
}

/* The 8 indices of 4 blocks in split form, in order: with t = hi n + (lo n >> 32) (mulhi_u64_u32's
 * two products; lo, hi = the words of u, in the low halves), index = t >> 32, i.e. the high half
 * of t: words (0,1) give index 2m of lane m, (2,3) index 2m + 1, and one blend puts them in
 * place. */
AVX2_INLINE __m256i mapidx_split_avx2(const __m256i x[4], __m256i nv) {
  __m256i te = _mm256_add_epi64(_mm256_mul_epu32(x[1], nv), _mm256_srli_epi64(_mm256_mul_epu32(x[0], nv), 32));
  __m256i to = _mm256_add_epi64(_mm256_mul_epu32(x[3], nv), _mm256_srli_epi64(_mm256_mul_epu32(x[2], nv), 32));
  return _mm256_blend_epi32(_mm256_srli_epi64(te, 32), to, 0xAA);
}

/* Indices j0 .. j0 + 16 nb8 - 1 (j0 even) of resample r into idx[], 16 per iteration (two groups
 * of 4 blocks in split form). */
AVX2_FN static void draw_avx2(uint64_t seed, uint64_t r, uint32_t n, uint32_t stream, uint32_t j0,
                              uint32_t nb8, uint32_t *idx) {
  const __m256i lane = _mm256_setr_epi64x(0, 1, 2, 3), four = _mm256_set1_epi64x(4);
  const __m256i nv = _mm256_set1_epi64x((long long)n);
  const uint32_t c1 = (uint32_t)r, c2 = (uint32_t)(r >> 32), k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (uint32_t b = 0; b < nb8; b++) {
    __m256i x[4], y[4];
    /* counters j0/2 + 8b + 0..7; only their low 32 bits matter (they wrap like uint32_t) */
    x[0] = _mm256_add_epi64(_mm256_set1_epi64x((uint32_t)((j0 >> 1) + 8u * b)), lane);
    y[0] = _mm256_add_epi64(x[0], four);
    philox_split8_avx2(x, y, c1, c2, stream, k0, k1);
    _mm256_storeu_si256((__m256i *)(idx + 16u * b), mapidx_split_avx2(x, nv));
    _mm256_storeu_si256((__m256i *)(idx + 16u * b + 8), mapidx_split_avx2(y, nv));
  }
}
#endif

/* Indices j in [j0, j1) of resample r into idx[0 .. j1 - j0): AVX2 for whole groups of 16 from
 * an even j, the scalar code for the rest. simd = 0 forces the scalar code. */
static void draw_range(uint64_t seed, uint64_t r, uint32_t n, uint32_t stream, uint32_t j0,
                       uint32_t j1, uint32_t *idx, int simd) {
#ifdef BOOT_X86
  if (simd && j0 < j1) {
    uint32_t head = j0 & 1u;
    if (head) draw_scalar(seed, r, n, stream, j0, j0 + 1, idx);
    uint32_t a = j0 + head, nb8 = (j1 - a) / 16;
    if (nb8) draw_avx2(seed, r, n, stream, a, nb8, idx + head);
    a += 16 * nb8;
    if (a < j1) draw_scalar(seed, r, n, stream, a, j1, idx + (a - j0));
    return;
  }
#endif
  (void)simd;
  draw_scalar(seed, r, n, stream, j0, j1, idx);
}

int tl_boot_philox_blocks(uint64_t seed, uint64_t r, uint32_t stream, uint32_t c0, uint32_t nb,
                          uint32_t *out, int impl) {
  int simd = impl == TL_BOOT_IMPL_AUTO ? boot_cpu_avx2() : impl == TL_BOOT_IMPL_AVX2;
  if (impl == TL_BOOT_IMPL_AVX2 && !boot_cpu_avx2()) return -1;
  uint32_t b = 0;
#ifdef BOOT_X86
  if (simd && nb >= 8) {
    blocks_avx2(seed, r, stream, c0, nb / 8, out);
    b = nb / 8 * 8;
  }
#endif
  for (; b < nb; b++) {
    philox4x32_ctr_t o = boot_block(seed, r, c0 + b, stream);
    memcpy(out + 4 * (size_t)b, o.v, sizeof o.v);
  }
  return 0;
}

int tl_boot_draw_range(uint64_t seed, uint64_t r, uint32_t n, uint32_t stream, uint32_t j0,
                       uint32_t j1, uint32_t *idx, int impl) {
  if (impl == TL_BOOT_IMPL_AVX2 && !boot_cpu_avx2()) return -1;
  draw_range(seed, r, n, stream, j0, j1, idx, impl == TL_BOOT_IMPL_AUTO ? boot_cpu_avx2() : impl == TL_BOOT_IMPL_AVX2);
  return 0;
}

void tl_boot_counts(uint64_t seed, uint64_t r, uint32_t n, int32_t *w) {
  memset(w, 0, (size_t)n * sizeof *w);
  uint32_t buf[1024];
  const int simd = boot_cpu_avx2();
  for (uint32_t j0 = 0; j0 < n; j0 += 1024) {
    uint32_t j1 = n - j0 < 1024 ? n : j0 + 1024;
    draw_range(seed, r, n, 0, j0, j1, buf, simd);
    for (uint32_t t = 0; t < j1 - j0; t++) w[buf[t]]++;
  }
}

int tl_boot_perm_swap(uint64_t seed, uint64_t r, uint32_t i) {
  philox4x32_ctr_t o = boot_block(seed, r, i >> 2, 1);
  return (int)(o.v[i & 3u] & 1u);
}

/* swap[0..n) of permutation r (same bits as tl_boot_perm_swap: bit 0 of word i % 4 of block
 * i / 4), from blocks of 256 items. */
static void perm_swaps(uint64_t seed, uint64_t r, uint32_t n, uint8_t *swap, int simd) {
  uint32_t words[256];
  for (uint32_t i = 0; i < n; i += 256) {
    uint32_t m = n - i < 256 ? n - i : 256;
    tl_boot_philox_blocks(seed, r, 1, i >> 2, (m + 3) / 4, words,
                          simd ? TL_BOOT_IMPL_AUTO : TL_BOOT_IMPL_SCALAR);
    for (uint32_t t = 0; t < m; t++) swap[i + t] = (uint8_t)(words[t] & 1u);
  }
}

/* ---------------------------------------------------------------------------------------------
 * Dense ranks, (x, y) order, cell tables
 * ------------------------------------------------------------------------------------------- */

typedef struct {
  double v;
  uint32_t i;
} val_idx;

static int cmp_val_idx(const void *pa, const void *pb) {
  const val_idx *a = pa, *b = pb;
  if (a->v < b->v) return -1;
  if (a->v > b->v) return 1;
  return (a->i > b->i) - (a->i < b->i);
}

/* Dense levels of x[0..n) (equal doubles share a level; -0.0 == 0.0). x must be NaN-free. */
static int dense_levels(const double *x, uint32_t n, uint32_t *level, uint32_t *nlevels) {
  val_idx *vi = malloc((size_t)(n ? n : 1) * sizeof *vi);
  if (!vi) return -1;
  for (uint32_t i = 0; i < n; i++) vi[i] = (val_idx){x[i], i};
  if (n > 1) qsort(vi, n, sizeof *vi, cmp_val_idx);
  uint32_t L = 0;
  for (uint32_t k = 0; k < n; k++) {
    if (k > 0 && vi[k].v != vi[k - 1].v) L++;
    level[vi[k].i] = L;
  }
  *nlevels = n ? L + 1 : 0;
  free(vi);
  return 0;
}

tl_status tl_dense_init(tl_dense *d, const double *x, uint32_t n) {
  memset(d, 0, sizeof *d);
  for (uint32_t i = 0; i < n; i++)
    if (isnan(x[i])) return TL_EINPUT;
  d->level = malloc((size_t)(n ? n : 1) * sizeof *d->level);
  if (!d->level) return TL_ENOMEM;
  if (dense_levels(x, n, d->level, &d->nlevels) != 0) {
    free(d->level);
    d->level = NULL;
    return TL_ENOMEM;
  }
  d->n = n;
  return TL_OK;
}

void tl_dense_release(tl_dense *d) {
  if (!d) return;
  free(d->level);
  memset(d, 0, sizeof *d);
}

/* order[0..m) = 0..m-1 sorted by (xl, yl), ties by index: two stable counting sorts. */
static int order_by_xy(const uint32_t *xl, const uint32_t *yl, uint32_t m, uint32_t Lx,
                       uint32_t Ly, uint32_t *order) {
  uint32_t L = (Lx > Ly ? Lx : Ly) + 1;
  uint32_t *cnt = malloc((size_t)L * sizeof *cnt);
  uint32_t *tmp = malloc((size_t)(m ? m : 1) * sizeof *tmp);
  if (!cnt || !tmp) {
    free(cnt);
    free(tmp);
    return -1;
  }
  memset(cnt, 0, (size_t)L * sizeof *cnt);
  for (uint32_t i = 0; i < m; i++) cnt[yl[i] + 1]++;
  for (uint32_t l = 1; l < L; l++) cnt[l] += cnt[l - 1];
  for (uint32_t i = 0; i < m; i++) tmp[cnt[yl[i]]++] = i;
  memset(cnt, 0, (size_t)L * sizeof *cnt);
  for (uint32_t i = 0; i < m; i++) cnt[xl[i] + 1]++;
  for (uint32_t l = 1; l < L; l++) cnt[l] += cnt[l - 1];
  for (uint32_t k = 0; k < m; k++) order[cnt[xl[tmp[k]]]++] = tmp[k];
  free(cnt);
  free(tmp);
  return 0;
}

tl_status tl_pair_init(tl_pair *p, const tl_dense *x, const tl_dense *y) {
  memset(p, 0, sizeof *p);
  if (x->n != y->n) return TL_EINPUT;
  p->order = malloc((size_t)(x->n ? x->n : 1) * sizeof *p->order);
  if (!p->order) return TL_ENOMEM;
  if (order_by_xy(x->level, y->level, x->n, x->nlevels, y->nlevels, p->order) != 0) {
    free(p->order);
    p->order = NULL;
    return TL_ENOMEM;
  }
  p->x = x;
  p->y = y;
  return TL_OK;
}

void tl_pair_release(tl_pair *p) {
  if (!p) return;
  free(p->order);
  memset(p, 0, sizeof *p);
}

/* The distinct (x level, y level) cells of a sample, sorted by (x, y). */
typedef struct {
  uint32_t ncells, Ly;
  uint32_t *xl, *yl; /* [ncells] */
} cells;

static void cells_release(cells *c) {
  free(c->xl);
  free(c->yl);
  memset(c, 0, sizeof *c);
}

/* Cells of m entries (xl[i], yl[i]) given their (x, y) order; id[i] = cell of entry i. */
static int cells_from_order(const uint32_t *xl, const uint32_t *yl, const uint32_t *order,
                            uint32_t m, uint32_t Ly, cells *c, uint32_t *id) {
  memset(c, 0, sizeof *c);
  c->Ly = Ly;
  c->xl = malloc((size_t)(m ? m : 1) * sizeof *c->xl);
  c->yl = malloc((size_t)(m ? m : 1) * sizeof *c->yl);
  if (!c->xl || !c->yl) {
    cells_release(c);
    return -1;
  }
  uint32_t nc = 0;
  for (uint32_t k = 0; k < m; k++) {
    uint32_t i = order[k];
    if (nc == 0 || xl[i] != c->xl[nc - 1] || yl[i] != c->yl[nc - 1]) {
      c->xl[nc] = xl[i];
      c->yl[nc] = yl[i];
      nc++;
    }
    id[i] = nc - 1;
  }
  c->ncells = nc;
  return 0;
}

/* Cells of m entries (unordered). */
static int cells_build(const uint32_t *xl, const uint32_t *yl, uint32_t m, uint32_t Lx, uint32_t Ly,
                       cells *c, uint32_t *id) {
  uint32_t *order = malloc((size_t)(m ? m : 1) * sizeof *order);
  if (!order) return -1;
  int rc = order_by_xy(xl, yl, m, Lx, Ly, order);
  if (rc == 0) rc = cells_from_order(xl, yl, order, m, Ly, c, id);
  free(order);
  return rc;
}

/* Scratch of suff_from_cells: [Ly] y marginals, [Ly] doubled y ranks, [Ly + 1] Fenwick tree. */
typedef struct {
  int64_t *wy, *by, *fen;
} cell_scratch;

static int scratch_init(cell_scratch *s, uint32_t Ly) {
  s->wy = malloc((size_t)(Ly + 1) * sizeof *s->wy);
  s->by = malloc((size_t)(Ly + 1) * sizeof *s->by);
  s->fen = malloc((size_t)(Ly + 1) * sizeof *s->fen);
  return (s->wy && s->by && s->fen) ? 0 : -1;
}

static void scratch_release(cell_scratch *s) {
  free(s->wy);
  free(s->by);
  free(s->fen);
  memset(s, 0, sizeof *s);
}

/* The y half of tl_suff: from the y-level weights wy[0..Ly) of the sample, the doubled average
 * ranks by[l] = 2 C_l + W_l + 1 (C_l = weight below level l) and N, sbb, ytie, my. Every metric
 * of a study shares it (all are paired with the same human score). */
static void suff_y_part(const int64_t *wy, uint32_t Ly, int64_t *by, tl_suff *o) {
  int64_t N = 0, sbb = 0, ytie = 0, my = 0;
  for (uint32_t l = 0; l < Ly; l++) {
    int64_t W = wy[l], b = 2 * N + W + 1;
    by[l] = b;
    sbb += W * b * b;
    ytie += W * (W - 1) / 2;
    my += W > 0;
    N += W;
  }
  o->N = N;
  o->sbb = sbb;
  o->n0 = N * (N - 1) / 2;
  o->ytie = ytie;
  o->my = my;
}

/* The x half of tl_suff of the weighted sample whose cell k has weight cw[k] >= 0 (cells sorted
 * by (x, y)), given the doubled y ranks by[] of the same sample. One sweep over the x groups in
 * ascending order:
 *   sab += a_x * sum_{cells of x} W b_y;  saa += W_x a_x^2;  xtie += C(W_x, 2);  ntie += C(W, 2);
 *   dis += W * #(earlier items with y > y of the cell) (Fenwick tree fen[0..Ly] over the y levels;
 *   the group is inserted after it is processed, so pairs tied in x are not counted: scipy
 *   _kendall_dis), with a_x = 2 C_x + W_x + 1. O(cells log Ly). */
static void suff_x_part(const cells *c, const int32_t *cw, const int64_t *by, int64_t *fen, tl_suff *o) {
  const uint32_t Ly = c->Ly, nc = c->ncells;
  memset(fen, 0, (size_t)(Ly + 1) * sizeof *fen);
  int64_t cum = 0, sab = 0, saa = 0, xtie = 0, ntie = 0, dis = 0, mx = 0;
  uint32_t k = 0;
  while (k < nc) {
    const uint32_t x = c->xl[k];
    uint32_t k1 = k;
    int64_t Wx = 0, swb = 0;
    for (; k1 < nc && c->xl[k1] == x; k1++) {
      int64_t W = cw[k1];
      if (W == 0) continue;
      uint32_t yl = c->yl[k1];
      Wx += W;
      swb += W * by[yl];
      ntie += W * (W - 1) / 2;
      int64_t le = 0; /* earlier items with y level <= yl */
      for (uint32_t t = yl + 1; t > 0; t -= t & (0u - t)) le += fen[t];
      dis += W * (cum - le);
    }
    if (Wx > 0) {
      int64_t a = 2 * cum + Wx + 1;
      sab += a * swb;
      saa += Wx * a * a;
      xtie += Wx * (Wx - 1) / 2;
      mx++;
      for (uint32_t q = k; q < k1; q++) {
        int64_t W = cw[q];
        if (W == 0) continue;
        for (uint32_t t = c->yl[q] + 1; t <= Ly; t += t & (0u - t)) fen[t] += W;
      }
      cum += Wx;
    }
    k = k1;
  }
  o->sab = sab;
  o->saa = saa;
  o->xtie = xtie;
  o->ntie = ntie;
  o->dis = dis;
  o->mx = mx;
}

/* tl_suff of the weighted sample whose cell k has weight cw[k] >= 0 (cells sorted by (x, y)).
 * Doubled average rank of a level with weight W and weight C below it: 2C + W + 1 (the average
 * of the 1-based positions C+1 .. C+W, times 2). */
static void suff_from_cells(const cells *c, const int32_t *cw, cell_scratch *sc, tl_suff *o) {
  memset(sc->wy, 0, (size_t)c->Ly * sizeof *sc->wy);
  for (uint32_t k = 0; k < c->ncells; k++) sc->wy[c->yl[k]] += cw[k];
  suff_y_part(sc->wy, c->Ly, sc->by, o);
  suff_x_part(c, cw, sc->by, sc->fen, o);
}

/* ---- the fused one-pass sweep of a wide metric (any ties, up to GEN_MAX_LY human levels) ----
 *
 * The cells of a metric, sorted by (x level, y level), are swept once, 8 at a time, as if each
 * cell were its own x level ("virtual groups"); the few true x groups that hold several cells
 * (a value shared by several human levels: the 0.0 and 1.0 of a clipped score, a sparse tie)
 * are then corrected exactly in scalar code. With W the cell weight, C the weight of the cells
 * before it (exclusive prefix) and y its human level, the pass accumulates
 *   SA[l] = sum over level-l cells of W (2C + W + 1)   (doubled x ranks under virtual groups)
 *   dis   = sum W G,  G = weight of earlier cells with a higher y level
 *   S2, S3 = sum w^2, sum w^3 of the low bytes w of the weights, nz = cells with W > 0.
 * dis is already exact: within a true x group the cells ascend in y, so no pair tied in x is
 * counted, and every pair with x_i < x_j, y_i > y_j is (scipy _kendall_dis). For a true group g
 * with cells c (weights W_c, E_c = weight of the group's cells before c, Wg = sum W_c) the doubled
 * x rank of its items is 2 C_g + Wg + 1 instead of 2 (C_g + E_c) + W_c + 1, so
 *   SA[y_c] += W_c (Wg - 2 E_c - W_c),   S3x = S3 + Wg^3 - sum W_c^3,   S2x = S2 + Wg^2 - sum W_c^2,
 *   mx = nz - #(nonzero cells of g) + (Wg > 0),
 * and then (the formulas of suff_x_part, summed in closed form):
 *   sab = sum_l b_l SA[l];  saa = sum_sq_ranks(N, S3x);  xtie = (S2x - N) / 2;  ntie = (S2 - N) / 2.
 * A weight that wrapped its uint8 count (256 or more draws of one cell) arrives as w + 256 h
 * (h from the spill counter, see count_pass): the pass reads h where the metric has a wrapped
 * cell, and S2, S3 get W^2 - w^2, W^3 - w^3 for each wrapped cell. All integers: equal to
 * suff_x_part's (test_gen_sweep, test_study_shapes). */
#define GEN_MAX_LY 8u

/* sum of the doubled ranks squared of N items whose tie groups have sum W^3 = s3 (sum W = N):
 * the untied sum 4 (1^2 + ... + N^2) = 4 N (N+1) (2N+1) / 6 less (W^3 - W) / 3 per group, the
 * 4 x the squared deviations of positions C+1..C+W from their mean (W (W^2-1) / 12 each).
 * Exact in int64 for N <= 10^6 (N (N+1) (2N+1) <= 2.000003e18). */
static inline int64_t sum_sq_ranks(int64_t N, int64_t s3) {
  return 4 * (N * (N + 1) * (2 * N + 1) / 6) - (s3 - N) / 3;
}

typedef struct {
  int64_t SA[GEN_MAX_LY], sab0, dis, S2, S3, nz; /* sab0: sum b_y W (2C + W + 1) where the pass
                                                    weighs by b itself (SA then 0) */
} gen_sums;

/* The multi-cell x groups of a cell table: grp[2 g], grp[2 g + 1] = first and one-past-last cell
 * of group g (only groups of 2 or more cells). Returns the count; grp NULL: count only. */
static uint32_t gen_groups(const cells *c, uint32_t *grp) {
  uint32_t ng = 0;
  for (uint32_t k = 0; k < c->ncells;) {
    uint32_t k1 = k + 1;
    while (k1 < c->ncells && c->xl[k1] == c->xl[k]) k1++;
    if (k1 - k > 1) {
      if (grp) {
        grp[2 * ng] = k;
        grp[2 * ng + 1] = k1;
      }
      ng++;
    }
    k = k1;
  }
  return ng;
}

/* The x half of tl_suff from the pass sums g, corrected for the multi-cell groups grp[ng] and the
 * wrapped cells wrap[nwrap] (cell indices into w8 / hi, each with hi > 0). w8, hi: the cell
 * weights W = w8 + 256 hi (hi NULL: all 0); yl: the cells' y levels; by: doubled y ranks. */
static void gen_finish(gen_sums *g, const uint8_t *w8, const uint16_t *hi, const uint32_t *yl,
                       const uint32_t *grp, uint32_t ng, const uint32_t *wrap, uint32_t nwrap,
                       uint32_t Ly, const int64_t *by, int64_t N, tl_suff *o) {
  for (uint32_t t = 0; t < nwrap; t++) {
    const int64_t w = w8[wrap[t]], W = w + 256 * (int64_t)hi[wrap[t]];
    g->S2 += W * W - w * w;
    g->S3 += W * W * W - w * w * w;
  }
  int64_t S2x = g->S2, S3x = g->S3, mx = g->nz;
  for (uint32_t t = 0; t < ng; t++) {
    int64_t Wg = 0, E = 0, s2 = 0, s3 = 0, nzg = 0;
    for (uint32_t q = grp[2 * t]; q < grp[2 * t + 1]; q++) Wg += w8[q] + 256 * (int64_t)(hi ? hi[q] : 0);
    for (uint32_t q = grp[2 * t]; q < grp[2 * t + 1]; q++) {
      const int64_t W = w8[q] + 256 * (int64_t)(hi ? hi[q] : 0);
      g->SA[yl[q]] += W * (Wg - 2 * E - W);
      E += W;
      s2 += W * W;
      s3 += W * W * W;
      nzg += W > 0;
    }
    S2x += Wg * Wg - s2;
    S3x += Wg * Wg * Wg - s3;
    mx += (Wg > 0) - nzg;
  }
  int64_t sab = g->sab0;
  for (uint32_t l = 0; l < Ly; l++) sab += by[l] * g->SA[l];
  o->sab = sab;
  o->saa = sum_sq_ranks(N, S3x);
  o->xtie = (S2x - N) / 2;
  o->ntie = (g->S2 - N) / 2;
  o->dis = g->dis;
  o->mx = mx;
}

#ifdef BOOT_X86
/* Inclusive prefix sums of the 8 int32 lanes. */
AVX2_INLINE __m256i prefix8_avx2(__m256i x) {
  x = _mm256_add_epi32(x, _mm256_slli_si256(x, 4));
  x = _mm256_add_epi32(x, _mm256_slli_si256(x, 8));
  __m256i t = _mm256_shuffle_epi32(x, 0xFF); /* lane 3 | lane 7, broadcast in each half */
  return _mm256_add_epi32(x, _mm256_permute2x128_si256(t, t, 0x08)); /* [0 | lane 3] */
}

/* sum over the 8 lanes of a[l] * b[l], 32 x 32 -> 64 bits (a, b >= 0), as 4 int64 lanes. */
AVX2_INLINE __m256i mul64_avx2(__m256i a, __m256i b) {
  return _mm256_add_epi64(_mm256_mul_epu32(a, b),
                          _mm256_mul_epu32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32)));
}

AVX2_INLINE int64_t hsum64_avx2(__m256i v) {
  int64_t t[4];
  _mm256_storeu_si256((__m256i *)t, v);
  return t[0] + t[1] + t[2] + t[3];
}

/* The pass (see above) over ncp cells (a multiple of 8; padding cells have weight 0): w8 the low
 * bytes of the weights, hi their high parts (NULL: none wrapped), y the y levels (< LY), by32 the
 * doubled y ranks (< 2N + 2 <= 2^21; [8], 0 past LY). With BT the pass accumulates sab0 = sum
 * (W b_y) (2C + W + 1) itself (one product instead of LY), which needs W b_y < 2^32 in int32:
 * true without HI (W <= 255, b < 2^21) and with HI when N (2N + 1) < 2^32; else (BT = 0) it keeps
 * SA per level. Lanes stay exact: weights and prefix sums <= N < 2^31 in int32, 2C + W + 1 <
 * 2^32, products by mul_epu32 into int64 lanes, w^2 <= 255^2. HI, BT and LY are constants in
 * each instance. */
AVX2_INLINE void gen_pass_avx2(const uint8_t *w8, const uint16_t *hi, const uint8_t *y, const int32_t *by32,
                               uint32_t ncp, uint32_t LY, int HI, int BT, gen_sums *o) {
  const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1), last = _mm256_set1_epi32(7);
  const __m256i byv = _mm256_loadu_si256((const __m256i *)by32);
  __m256i carry[GEN_MAX_LY], sa[GEN_MAX_LY], cC = zero, dis = zero, s2 = zero, s3 = zero, nzv = zero, sabv = zero;
#pragma GCC unroll 8
  for (uint32_t l = 0; l < GEN_MAX_LY; l++) carry[l] = sa[l] = zero;
  for (uint32_t q = 0; q < ncp; q += 8) {
    const __m256i lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(w8 + q)));
    __m256i W = lo;
    if (HI) W = _mm256_add_epi32(lo, _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(hi + q))), 8));
    const __m256i yv = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(y + q)));
    const __m256i pc = prefix8_avx2(W);
    const __m256i C = _mm256_add_epi32(_mm256_sub_epi32(pc, W), cC);
    cC = _mm256_add_epi32(cC, _mm256_permutevar8x32_epi32(pc, last));
    const __m256i A = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(C, C), W), one);
    __m256i G = zero;
    if (BT) sabv = _mm256_add_epi64(sabv, mul64_avx2(_mm256_mullo_epi32(W, _mm256_permutevar8x32_epi32(byv, yv)), A));
#pragma GCC unroll 8
    for (uint32_t l = 0; l < LY; l++) {
      const __m256i wl = _mm256_and_si256(W, _mm256_cmpeq_epi32(yv, _mm256_set1_epi32((int)l)));
      if (!BT) sa[l] = _mm256_add_epi64(sa[l], mul64_avx2(wl, A));
      if (l == 0) continue;
      const __m256i p = prefix8_avx2(wl);
      const __m256i E = _mm256_add_epi32(_mm256_sub_epi32(p, wl), carry[l]);
      carry[l] = _mm256_add_epi32(carry[l], _mm256_permutevar8x32_epi32(p, last));
      G = _mm256_add_epi32(G, _mm256_and_si256(E, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)l), yv)));
    }
    dis = _mm256_add_epi64(dis, mul64_avx2(W, G));
    const __m256i sq = _mm256_mullo_epi32(lo, lo); /* <= 255^2 */
    s2 = _mm256_add_epi64(s2, _mm256_add_epi64(_mm256_and_si256(sq, _mm256_set1_epi64x(0xffffffff)), _mm256_srli_epi64(sq, 32)));
    s3 = _mm256_add_epi64(s3, mul64_avx2(sq, lo));
    nzv = _mm256_sub_epi32(nzv, _mm256_cmpgt_epi32(W, zero));
  }
  int32_t nzl[8];
  _mm256_storeu_si256((__m256i *)nzl, nzv);
  o->nz = 0;
  for (int l = 0; l < 8; l++) o->nz += nzl[l];
  for (uint32_t l = 0; l < GEN_MAX_LY; l++) o->SA[l] = !BT && l < LY ? hsum64_avx2(sa[l]) : 0;
  o->sab0 = BT ? hsum64_avx2(sabv) : 0;
  o->dis = hsum64_avx2(dis);
  o->S2 = hsum64_avx2(s2);
  o->S3 = hsum64_avx2(s3);
}

#define GEN_LY(L)                                                                                   \
  AVX2_FN static void gen_pass_ly##L(const uint8_t *w8, const uint16_t *hi, const uint8_t *y,       \
                                     const int32_t *by32, uint32_t ncp, int bt, gen_sums *o) {      \
    if (!hi) gen_pass_avx2(w8, NULL, y, by32, ncp, L, 0, 1, o);                                     \
    else if (bt) gen_pass_avx2(w8, hi, y, by32, ncp, L, 1, 1, o);                                   \
    else gen_pass_avx2(w8, hi, y, by32, ncp, L, 1, 0, o);                                           \
  }
GEN_LY(1)
GEN_LY(2)
GEN_LY(3)
GEN_LY(4)
GEN_LY(5)
GEN_LY(6)
GEN_LY(7)
GEN_LY(8)
#undef GEN_LY
#endif

/* The x half of tl_suff of a cell table (cells sorted by (x, y), see above) by the AVX2 pass: w8
 * and y padded to ncp = a multiple of 8 cells with weight 0; hi NULL or [ncp] (wrap[nwrap] its
 * nonzero cells); grp[ng] the multi-cell x groups. 0 when it does not apply (no AVX2 build, Ly
 * outside [1, GEN_MAX_LY], N >= 2^31), and the caller takes suff_x_part. */
static int suff_x_gen(const uint8_t *w8, const uint16_t *hi, const uint8_t *y, const uint32_t *yl,
                      uint32_t ncp, const uint32_t *grp, uint32_t ng, const uint32_t *wrap, uint32_t nwrap,
                      uint32_t Ly, const int64_t *by, int64_t N, tl_suff *o) {
#ifdef BOOT_X86
  if (N >= ((int64_t)1 << 31) || Ly < 1 || Ly > GEN_MAX_LY) return 0;
  static void (*const pass[GEN_MAX_LY])(const uint8_t *, const uint16_t *, const uint8_t *, const int32_t *,
                                        uint32_t, int, gen_sums *) = {
      gen_pass_ly1, gen_pass_ly2, gen_pass_ly3, gen_pass_ly4, gen_pass_ly5, gen_pass_ly6, gen_pass_ly7, gen_pass_ly8};
  gen_sums g;
  int32_t by32[8] = {0};
  for (uint32_t l = 0; l < Ly; l++) by32[l] = (int32_t)by[l];
  pass[Ly - 1](w8, nwrap ? hi : NULL, y, by32, ncp, N * (2 * N + 1) < ((int64_t)1 << 32), &g);
  gen_finish(&g, w8, nwrap ? hi : NULL, yl, grp, ng, wrap, nwrap, Ly, by, N, o);
  return 1;
#else
  (void)w8; (void)hi; (void)y; (void)yl; (void)ncp; (void)grp; (void)ng; (void)wrap; (void)nwrap;
  (void)Ly; (void)by; (void)N; (void)o;
  return 0;
#endif
}


/* ---------------------------------------------------------------------------------------------
 * tl_suff: fast path, reference, statistics
 * ------------------------------------------------------------------------------------------- */

struct tl_suff_ws {
  uint32_t n;
  cells c;
  uint32_t *cellid; /* [n] cell of item i */
  int32_t *cw;      /* [ncells] */
  cell_scratch sc;
};

void tl_suff_ws_free(tl_suff_ws *ws) {
  if (!ws) return;
  cells_release(&ws->c);
  free(ws->cellid);
  free(ws->cw);
  scratch_release(&ws->sc);
  free(ws);
}

tl_suff_ws *tl_suff_ws_new(const tl_pair *p) {
  tl_suff_ws *ws = calloc(1, sizeof *ws);
  if (!ws) return NULL;
  uint32_t n = p->x->n;
  ws->n = n;
  ws->cellid = malloc((size_t)(n ? n : 1) * sizeof *ws->cellid);
  if (!ws->cellid ||
      cells_from_order(p->x->level, p->y->level, p->order, n, p->y->nlevels, &ws->c, ws->cellid) != 0 ||
      scratch_init(&ws->sc, p->y->nlevels) != 0 ||
      !(ws->cw = malloc((size_t)(ws->c.ncells + 1) * sizeof *ws->cw))) {
    tl_suff_ws_free(ws);
    return NULL;
  }
  return ws;
}

void tl_suff_fast(const tl_pair *p, const int32_t *w, tl_suff_ws *ws, tl_suff *out) {
  (void)p; /* the cells were taken from p when ws was made */
  memset(ws->cw, 0, (size_t)ws->c.ncells * sizeof *ws->cw);
  for (uint32_t i = 0; i < ws->n; i++)
    if (w[i] > 0) ws->cw[ws->cellid[i]] += w[i];
  suff_from_cells(&ws->c, ws->cw, &ws->sc, out);
}

/* Doubled average ranks of v[0..N) by sorting (tests only). */
static void doubled_ranks_sorted(const double *v, int64_t N, int64_t *rk) {
  val_idx *vi = malloc((size_t)(N ? N : 1) * sizeof *vi);
  if (!vi) abort(); /* test-only path */
  for (int64_t i = 0; i < N; i++) vi[i] = (val_idx){v[i], (uint32_t)i};
  if (N > 1) qsort(vi, (size_t)N, sizeof *vi, cmp_val_idx);
  for (int64_t s = 0; s < N;) {
    int64_t e = s + 1;
    while (e < N && vi[e].v == vi[s].v) e++;
    for (int64_t t = s; t < e; t++) rk[vi[t].i] = 2 * s + (e - s) + 1;
    s = e;
  }
  free(vi);
}

void tl_suff_reference(const double *x, const double *y, const int32_t *w, uint32_t n, tl_suff *out) {
  int64_t N = 0;
  for (uint32_t i = 0; i < n; i++) N += w[i] > 0 ? w[i] : 0;
  double *ex = malloc((size_t)(N ? N : 1) * sizeof *ex), *ey = malloc((size_t)(N ? N : 1) * sizeof *ey);
  int64_t *ra = malloc((size_t)(N ? N : 1) * sizeof *ra), *rb = malloc((size_t)(N ? N : 1) * sizeof *rb);
  if (!ex || !ey || !ra || !rb) abort(); /* test-only path */
  int64_t t = 0;
  for (uint32_t i = 0; i < n; i++)
    for (int32_t c = 0; c < w[i]; c++) {
      ex[t] = x[i];
      ey[t] = y[i];
      t++;
    }
  doubled_ranks_sorted(ex, N, ra);
  doubled_ranks_sorted(ey, N, rb);
  memset(out, 0, sizeof *out);
  out->N = N;
  out->n0 = N * (N - 1) / 2;
  for (int64_t i = 0; i < N; i++) {
    out->sab += ra[i] * rb[i];
    out->saa += ra[i] * ra[i];
    out->sbb += rb[i] * rb[i];
    int fx = 1, fy = 1; /* first occurrence of its value */
    for (int64_t j = 0; j < i; j++) {
      fx &= ex[j] != ex[i];
      fy &= ey[j] != ey[i];
    }
    out->mx += fx;
    out->my += fy;
    for (int64_t j = i + 1; j < N; j++) {
      int tx = ex[i] == ex[j], ty = ey[i] == ey[j];
      out->xtie += tx;
      out->ytie += ty;
      out->ntie += tx && ty;
      out->dis += (ex[i] < ex[j] && ey[i] > ey[j]) || (ex[i] > ex[j] && ey[i] < ey[j]);
    }
  }
  free(ex);
  free(ey);
  free(ra);
  free(rb);
}


/* Pearson r of the doubled ranks (the factor 4 cancels): with c = N (N+1)^2 (sum a = N (N+1)),
 * num = sab - c, dx = saa - c, dy = sbb - c; rho = (double)num / sqrt((double)dx * (double)dy),
 * clipped to [-1, 1]; NaN when dx or dy is 0 (a constant variable, N < 2). */
/* The statistic expressions are the shared TL_HD functions of tally/boot_kernel.h, so the CUDA
 * kernels evaluate the very same source lines. */
double tl_suff_spearman(const tl_suff *s) { return tl_k_spearman(s); }
double tl_suff_kendall_b(const tl_suff *s) { return tl_k_kendall_b(s); }
double tl_suff_kendall_c(const tl_suff *s) { return tl_k_kendall_c(s); }

static double stat_of(tl_stat st, const tl_suff *s) {
  return st == TL_STAT_SPEARMAN ? tl_suff_spearman(s) : tl_suff_kendall_b(s);
}

const char *tl_stat_name(tl_stat s) {
  switch (s) {
    case TL_STAT_SPEARMAN: return "spearman";
    case TL_STAT_KENDALL_B: return "kendall_b";
    default: return "?";
  }
}

/* ---------------------------------------------------------------------------------------------
 * Studies
 * ------------------------------------------------------------------------------------------- */

/* A prepared study.
 *
 * Resampling layout (what one resample costs: n draws, one counting pass, one sweep per metric):
 *  - SMALL metrics (at most STUDY_SMALL cells) are counted together in one JOINT table over
 *    (human, small metrics) when it has at most STUDY_JOINT cells; each small metric's cell
 *    weights are then the run sums of the joint weights in that metric's cell order (jord, jrun),
 *    about J additions per metric. Otherwise each small metric has its own table. int32 counts.
 *  - WIDE metrics (more cells, e.g. a continuous score) are counted each in its own table of
 *    uint8 counts (a continuous metric's table then fits in the L1 cache next to the others).
 *    A cell drawn 256 times or more wraps to 0 and spills: each wrap adds 1 to a uint16 side
 *    counter of the cell (study_ws.hi, with a list of the cells that spilled), so every resample
 *    draws its indices once, whatever the cell sizes. A wide metric with at most GEN_MAX_LY human
 *    levels is swept by the fused AVX2 pass (suff_x_gen: any ties, corrected per multi-cell x
 *    group); otherwise, or without AVX2, by the Fenwick sweep.
 *  - rec holds per item the count-array positions of its cells: first the small part (the joint
 *    cell, or one position per small metric) into cnt32, then one per wide metric into cnt8, so a
 *    draw costs one record load and a few increments. No metric is marginalised from a table
 *    over a wide metric it does not need.
 * Every path produces the same integer cell weights, so the values never depend on the layout. */
#define STUDY_SMALL 1024u  /* cells of a metric counted in int32 (and in the joint table) */
#define STUDY_JOINT 8192u  /* joint cells at most (32 KiB of int32 counts: four discrete metrics
                              of 5, 101, 3 and 2 levels against 3 human levels make ~4,900) */

struct tl_study {
  uint32_t n;
  int M, S;
  tl_stat st[TL_STAT__N];
  uint64_t seed, B;
  const uint32_t *indices; /* borrowed: [B][n] or NULL */
  tl_dense h;
  tl_dense *m;       /* [M] */
  double *z;         /* [M][n] z-scores (ddof = 0) for the permutation test */
  cells *c;          /* [M] cells of (metric k, human) */
  uint32_t *cellid;  /* [M][n] */
  uint32_t maxcells;
  /* resampling layout */
  uint8_t *wide;     /* [M] 1: counted in uint8 (more than STUDY_SMALL cells) */
  uint8_t *gen;      /* [M] 1: wide with <= GEN_MAX_LY human levels (the fused AVX2 pass) */
  uint32_t *grp;     /* multi-cell x groups of the gen metrics (gen_groups): metric k's are
                        grp[2 goff[k] ..), gn[k] of them */
  uint32_t *goff, *gn; /* [M] */
  uint32_t *pos;     /* [M] small, no joint: offset in cnt32; wide: offset in cnt8 */
  int RA, RB;        /* record entries into cnt32 (1 with the joint table, else #small) / cnt8 */
  int *rmet;         /* [RA + RB] metric of each record entry (-1: the joint table) */
  uint32_t C32, C8;  /* sizes of cnt32 / cnt8 (cnt8 padded to multiples of 32) */
  uint16_t *rec16;   /* [n][RA + RB] when C32 and C8 are <= 65536 */
  uint32_t *rec32;   /* otherwise */
  uint32_t J;        /* joint cells (0: no joint table) */
  uint32_t *jord;    /* [M][J] joint cells grouped by the cell of small metric k */
  uint32_t *jrun;    /* [M][maxsmall + 1] run starts in jord[k] per cell of metric k */
  uint32_t jrun_stride;
  uint8_t *ypad;     /* [C8] human level of each cnt8 cell of a gen metric (0 elsewhere) */
  int ysrc;          /* the metric with the fewest cells: the human marginal is summed from it */
  int simd;          /* AVX2 paths (the CPU has AVX2); tl_study_set_simd turns them off */
  /* cluster resampling (tl_study_in.cluster; NULL cl: items resampled) */
  uint32_t *cl;      /* [n] cluster of each item, owned copy */
  uint32_t mcl;      /* m clusters */
  uint32_t *cstart;  /* [m + 1] start of cluster c's items in citem */
  uint32_t *citem;   /* [n] items grouped by cluster, ascending within a cluster */
};

void tl_study_free(tl_study *s) {
  if (!s) return;
  tl_dense_release(&s->h);
  for (int k = 0; s->m && k < s->M; k++) tl_dense_release(&s->m[k]);
  for (int k = 0; s->c && k < s->M; k++) cells_release(&s->c[k]);
  free(s->m);
  free(s->z);
  free(s->c);
  free(s->cellid);
  free(s->wide);
  free(s->gen);
  free(s->grp);
  free(s->goff);
  free(s->gn);
  free(s->pos);
  free(s->rmet);
  free(s->rec16);
  free(s->rec32);
  free(s->jord);
  free(s->jrun);
  free(s->ypad);
  free(s->cl);
  free(s->cstart);
  free(s->citem);
  free(s);
}

void tl_study_set_simd(tl_study *s, int on) { s->simd = on && boot_cpu_avx2(); }

/* Joint cell id jid[i] of each item over the level tuple (human, small metrics), J = the number
 * of distinct tuples: stable counting sorts from the last key to the first, then runs of equal
 * tuples. */
static int joint_ids(const tl_study *s, uint32_t *jid, uint32_t *J) {
  const uint32_t n = s->n;
  uint32_t L = s->h.nlevels;
  for (int k = 0; k < s->M; k++)
    if (!s->wide[k] && s->m[k].nlevels > L) L = s->m[k].nlevels;
  uint32_t *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
  uint32_t *cnt = malloc((size_t)(L + 1) * sizeof *cnt);
  if (!a || !b || !cnt) {
    free(a);
    free(b);
    free(cnt);
    return -1;
  }
  for (uint32_t i = 0; i < n; i++) a[i] = i;
  for (int k = s->M; k >= 0; k--) {
    if (k > 0 && s->wide[k - 1]) continue;
    const uint32_t *lv = k == 0 ? s->h.level : s->m[k - 1].level;
    memset(cnt, 0, (size_t)(L + 1) * sizeof *cnt);
    for (uint32_t i = 0; i < n; i++) cnt[lv[i] + 1]++;
    for (uint32_t l = 1; l <= L; l++) cnt[l] += cnt[l - 1];
    for (uint32_t t = 0; t < n; t++) b[cnt[lv[a[t]]]++] = a[t];
    uint32_t *sw = a;
    a = b;
    b = sw;
  }
  uint32_t nj = 0;
  for (uint32_t t = 0; t < n; t++) {
    int same = t > 0 && s->h.level[a[t]] == s->h.level[a[t - 1]];
    for (int k = 0; same && k < s->M; k++)
      if (!s->wide[k]) same = s->m[k].level[a[t]] == s->m[k].level[a[t - 1]];
    if (!same) nj++;
    jid[a[t]] = nj - 1;
  }
  *J = nj;
  free(a);
  free(b);
  free(cnt);
  return 0;
}

/* The resampling layout (see struct tl_study) from the cells. */
static int study_layout(tl_study *s) {
  const uint32_t n = s->n;
  const int M = s->M;
  uint32_t *jid = NULL;
  int rc = -1, nsmall = 0;
  s->wide = calloc((size_t)M, 1);
  s->gen = calloc((size_t)M, 1);
  s->goff = calloc((size_t)M, sizeof *s->goff);
  s->gn = calloc((size_t)M, sizeof *s->gn);
  s->pos = calloc((size_t)M, sizeof *s->pos);
  s->rmet = malloc((size_t)(M + 1) * sizeof *s->rmet);
  if (!s->wide || !s->gen || !s->goff || !s->gn || !s->pos || !s->rmet) goto done;
  s->ysrc = 0;
  uint32_t maxsmall = 0;
  for (int k = 0; k < M; k++) {
    s->wide[k] = s->c[k].ncells > STUDY_SMALL;
    s->gen[k] = s->wide[k] && s->h.nlevels <= GEN_MAX_LY;
    if (s->c[k].ncells < s->c[s->ysrc].ncells) s->ysrc = k;
    if (!s->wide[k]) {
      nsmall++;
      if (s->c[k].ncells > maxsmall) maxsmall = s->c[k].ncells;
    }
  }
  /* the joint table of the small metrics, when it pays (two or more) and is small */
  if (nsmall >= 2) {
    jid = malloc((size_t)n * sizeof *jid);
    if (!jid || joint_ids(s, jid, &s->J) != 0) goto done;
    if (s->J > STUDY_JOINT) s->J = 0;
  }
  uint64_t c32 = 0, c8 = 0;
  s->RA = 0;
  if (s->J) {
    s->rmet[s->RA++] = -1;
    c32 = s->J;
  }
  for (int k = 0; k < M; k++)
    if (!s->wide[k] && !s->J) {
      s->rmet[s->RA++] = k;
      s->pos[k] = (uint32_t)c32;
      c32 += s->c[k].ncells;
    }
  s->RB = 0;
  for (int k = 0; k < M; k++)
    if (s->wide[k]) {
      s->rmet[s->RA + s->RB++] = k;
      s->pos[k] = (uint32_t)c8;
      c8 += ((uint64_t)s->c[k].ncells + 31) / 32 * 32;
    }
  if (c32 > 0xffffffffull || c8 > 0xffffffffull) goto done;
  s->C32 = (uint32_t)c32;
  s->C8 = (uint32_t)c8;
  s->ypad = calloc((size_t)c8 + 32, 1);
  if (!s->ypad) goto done;
  uint32_t ngrp = 0;
  for (int k = 0; k < M; k++)
    if (s->gen[k]) {
      for (uint32_t q = 0; q < s->c[k].ncells; q++) s->ypad[s->pos[k] + q] = (uint8_t)s->c[k].yl[q];
      s->goff[k] = ngrp;
      s->gn[k] = gen_groups(&s->c[k], NULL);
      ngrp += s->gn[k];
    }
  s->grp = malloc(((size_t)ngrp + 1) * 2 * sizeof *s->grp);
  if (!s->grp) goto done;
  for (int k = 0; k < M; k++)
    if (s->gen[k]) gen_groups(&s->c[k], s->grp + 2 * (size_t)s->goff[k]);
  /* joint cells grouped by each small metric's cell (a counting sort), with the run starts */
  if (s->J) {
    s->jrun_stride = maxsmall + 1;
    s->jord = malloc((size_t)M * s->J * sizeof *s->jord);
    s->jrun = calloc((size_t)M * s->jrun_stride, sizeof *s->jrun);
    uint32_t *jcell = malloc((size_t)s->J * sizeof *jcell);
    if (!s->jord || !s->jrun || !jcell) {
      free(jcell);
      goto done;
    }
    for (int k = 0; k < M; k++) {
      if (s->wide[k]) continue;
      const uint32_t *id = s->cellid + (size_t)k * n;
      for (uint32_t i = 0; i < n; i++) jcell[jid[i]] = id[i]; /* a joint cell is in one cell of k */
      uint32_t *run = s->jrun + (size_t)k * s->jrun_stride, *ord = s->jord + (size_t)k * s->J;
      for (uint32_t j = 0; j < s->J; j++) run[jcell[j] + 1]++;
      for (uint32_t q = 0; q < s->c[k].ncells; q++) run[q + 1] += run[q];
      for (uint32_t j = 0; j < s->J; j++) ord[run[jcell[j]]++] = j;
      for (uint32_t q = s->c[k].ncells; q > 0; q--) run[q] = run[q - 1]; /* back to the starts */
      run[0] = 0;
    }
    free(jcell);
  }
  /* the records */
  const int R = s->RA + s->RB;
  if (s->C32 <= 65536 && s->C8 <= 65536) {
    s->rec16 = malloc((size_t)n * R * sizeof *s->rec16);
    if (!s->rec16) goto done;
  } else {
    s->rec32 = malloc((size_t)n * R * sizeof *s->rec32);
    if (!s->rec32) goto done;
  }
  for (uint32_t i = 0; i < n; i++)
    for (int e = 0; e < R; e++) {
      const int k = s->rmet[e];
      uint32_t v = k < 0 ? jid[i] : s->pos[k] + s->cellid[(size_t)k * n + i];
      if (s->rec16) s->rec16[(size_t)i * R + e] = (uint16_t)v;
      else s->rec32[(size_t)i * R + e] = v;
    }
  rc = 0;
done:
  free(jid);
  return rc;
}

/* The cluster ids of a study: in [0, m), not with an index matrix, and the weighted sample of
 * any resample (at most m draws of the largest cluster) within TL_BOOT_MAX_N rows. */
static tl_status cluster_check(const tl_study_in *in, tl_err *err) {
  if (in->indices) return tl_err_set(err, TL_EINPUT, "a study resamples clusters or follows an index matrix, not both");
  const uint32_t m = in->nclusters;
  if (m == 0) return tl_err_set(err, TL_EINPUT, "cluster resampling with no cluster");
  uint32_t *size = calloc(m, sizeof *size);
  if (!size) return tl_err_set(err, TL_ENOMEM, "out of memory (clusters)");
  tl_status st = TL_OK;
  uint32_t big = 0;
  for (uint32_t i = 0; i < in->n && st == TL_OK; i++) {
    if (in->cluster[i] >= m) st = tl_err_set(err, TL_EINPUT, "item %u has cluster %u, outside [0, %u)", i, in->cluster[i], m);
    else if (++size[in->cluster[i]] > big) big = size[in->cluster[i]];
  }
  free(size);
  if (st == TL_OK && (uint64_t)big * m > TL_BOOT_MAX_N)
    st = tl_err_set(err, TL_EINPUT, "%u clusters with up to %u items each: a resample could hold more than %d rows",
                    m, big, TL_BOOT_MAX_N);
  return st;
}

/* The study's copy of the cluster ids and their items grouped by cluster (a counting sort). */
static int cluster_index(tl_study *s, const tl_study_in *in) {
  const uint32_t n = s->n, m = in->nclusters;
  s->mcl = m;
  s->cl = malloc((size_t)n * sizeof *s->cl);
  s->cstart = calloc((size_t)m + 1, sizeof *s->cstart);
  s->citem = malloc((size_t)n * sizeof *s->citem);
  if (!s->cl || !s->cstart || !s->citem) return -1;
  memcpy(s->cl, in->cluster, (size_t)n * sizeof *s->cl);
  for (uint32_t i = 0; i < n; i++) s->cstart[s->cl[i] + 1]++;
  for (uint32_t c = 0; c < m; c++) s->cstart[c + 1] += s->cstart[c];
  uint32_t *fill = malloc(((size_t)m + 1) * sizeof *fill);
  if (!fill) return -1;
  memcpy(fill, s->cstart, ((size_t)m + 1) * sizeof *fill);
  for (uint32_t i = 0; i < n; i++) s->citem[fill[s->cl[i]]++] = i;
  free(fill);
  return 0;
}

uint32_t tl_study_units(const tl_study *s) { return s->cl ? s->mcl : s->n; }
int tl_study_clustered(const tl_study *s) { return s->cl != NULL; }

tl_status tl_study_new(const tl_study_in *in, tl_study **out, tl_err *err) {
  *out = NULL;
  const uint32_t n = in->n;
  if (n == 0) return tl_err_set(err, TL_EINPUT, "bootstrap study has no items");
  if (n > TL_BOOT_MAX_N)
    return tl_err_set(err, TL_EINPUT, "bootstrap study has %u items (at most %d)", n, TL_BOOT_MAX_N);
  if (in->nmetrics < 1 || !in->metric || !in->human)
    return tl_err_set(err, TL_EINPUT, "bootstrap study needs a human score and at least one metric");
  if (in->nstats < 1 || in->nstats > TL_STAT__N)
    return tl_err_set(err, TL_EINPUT, "bootstrap study asks for %d statistics", in->nstats);
  for (int t = 0; t < in->nstats; t++) {
    if ((unsigned)in->stats[t] >= TL_STAT__N)
      return tl_err_set(err, TL_EINPUT, "unknown statistic %d", (int)in->stats[t]);
    for (int u = 0; u < t; u++)
      if (in->stats[u] == in->stats[t])
        return tl_err_set(err, TL_EINPUT, "statistic '%s' asked twice", tl_stat_name(in->stats[t]));
  }
  for (int k = -1; k < in->nmetrics; k++) {
    const double *v = k < 0 ? in->human : in->metric[k];
    for (uint32_t i = 0; i < n; i++)
      if (!isfinite(v[i]))
        return tl_err_set(err, TL_EINPUT, "'%s' has a non-finite value at item %u",
                          k < 0 ? "human" : (in->names && in->names[k] ? in->names[k] : "metric"), i);
  }
  tl_status cst = in->cluster ? cluster_check(in, err) : TL_OK;
  if (cst != TL_OK) return cst;
  if (in->indices)
    for (uint64_t q = 0; q < in->B * (uint64_t)n; q++)
      if (in->indices[q] >= n)
        return tl_err_set(err, TL_EINPUT, "index matrix entry [%llu][%llu] = %u is outside [0, %u)",
                          (unsigned long long)(q / n), (unsigned long long)(q % n), in->indices[q], n);

  tl_study *s = calloc(1, sizeof *s);
  if (!s) return tl_err_set(err, TL_ENOMEM, "out of memory (bootstrap study)");
  const int M = in->nmetrics;
  s->n = n;
  s->M = M;
  s->S = in->nstats;
  for (int t = 0; t < in->nstats; t++) s->st[t] = in->stats[t];
  s->seed = in->seed;
  s->B = in->B;
  s->indices = in->indices;
  s->simd = boot_cpu_avx2();
  s->m = calloc((size_t)M, sizeof *s->m);
  s->c = calloc((size_t)M, sizeof *s->c);
  s->z = malloc((size_t)M * n * sizeof *s->z);
  s->cellid = malloc((size_t)M * n * sizeof *s->cellid);
  if (!s->m || !s->c || !s->z || !s->cellid) goto oom;
  if (tl_dense_init(&s->h, in->human, n) != TL_OK) goto oom;
  for (int k = 0; k < M; k++) {
    if (tl_dense_init(&s->m[k], in->metric[k], n) != TL_OK) goto oom;
    if (cells_build(s->m[k].level, s->h.level, n, s->m[k].nlevels, s->h.nlevels, &s->c[k],
                    s->cellid + (size_t)k * n) != 0)
      goto oom;
    if (s->c[k].ncells > s->maxcells) s->maxcells = s->c[k].ncells;
    /* z-scores as numpy: (x - mean) / std, std = sqrt(mean((x - mean)^2)); constant -> 0 */
    const double *x = in->metric[k];
    double *z = s->z + (size_t)k * n, mean = 0, var = 0;
    for (uint32_t i = 0; i < n; i++) mean += x[i];
    mean /= n;
    for (uint32_t i = 0; i < n; i++) var += (x[i] - mean) * (x[i] - mean);
    double sd = sqrt(var / n);
    for (uint32_t i = 0; i < n; i++) z[i] = sd > 0 ? (x[i] - mean) / sd : 0.0;
  }
  if (study_layout(s) != 0) goto oom;
  if (in->cluster && cluster_index(s, in) != 0) goto oom;
  *out = s;
  return TL_OK;
oom:
  tl_study_free(s);
  return tl_err_set(err, TL_ENOMEM, "out of memory (bootstrap study of %u items)", n);
}

#define STUDY_CHUNK 1024 /* draws generated, then counted, at a time (4 KiB: stays in L1) */

/* Per-call workspace of the resample loop. */
typedef struct {
  uint32_t *idx;  /* [STUDY_CHUNK] */
  int32_t *cnt32; /* [C32] */
  uint8_t *cnt8;  /* [C8] */
  /* the spill of the uint8 counts: a cell drawn 256 times or more wraps its uint8 count to 0,
   * and each wrap adds 1 to hi[cell] (its true count is cnt8 + 256 hi); the cells whose hi is
   * nonzero are listed in wrap[0..nwrap), so that only they are read and cleared. A resample
   * makes n x RB uint8 increments (RB cells per drawn item), and a listed cell took 256 of them:
   * at most n RB / 256 cells are listed. No resample draws its indices twice. */
  uint16_t *hi;   /* [C8 + 32], zero outside the listed cells (n <= 10^6: hi < 2^16) */
  uint32_t *wrap; /* [n RB / 256 + 1] */
  uint32_t nwrap;
  uint32_t *mwrap; /* [n RB / 256 + 1] one metric's wrapped cells, relative to its table */
  int32_t *w32;   /* [maxcells] one metric's cell weights */
  int64_t *wy, *by, *fen; /* [Ly + 1] */
} study_ws;

static void study_ws_release(study_ws *w) {
  free(w->idx);
  free(w->cnt32);
  free(w->cnt8);
  free(w->hi);
  free(w->wrap);
  free(w->mwrap);
  free(w->w32);
  free(w->wy);
  free(w->by);
  free(w->fen);
}

static int study_ws_init(const tl_study *s, study_ws *w) {
  memset(w, 0, sizeof *w);
  const size_t L = (size_t)s->h.nlevels + 1, nw = (size_t)s->n * (size_t)(s->RB > 0 ? s->RB : 1) / 256 + 1;
  w->idx = malloc(STUDY_CHUNK * sizeof *w->idx);
  w->cnt32 = calloc((size_t)s->C32 + 1, sizeof *w->cnt32);
  w->cnt8 = calloc((size_t)s->C8 + 32, 1);
  w->hi = calloc((size_t)s->C8 + 32, sizeof *w->hi);
  w->wrap = malloc(nw * sizeof *w->wrap);
  w->mwrap = malloc(nw * sizeof *w->mwrap);
  w->w32 = malloc(((size_t)s->maxcells + 1) * sizeof *w->w32);
  w->wy = malloc(L * sizeof *w->wy);
  w->by = malloc(L * sizeof *w->by);
  w->fen = malloc(L * sizeof *w->fen);
  if (!w->idx || !w->cnt32 || !w->cnt8 || !w->hi || !w->wrap || !w->mwrap || !w->w32 || !w->wy || !w->by ||
      !w->fen) {
    study_ws_release(w);
    return -1;
  }
  return 0;
}

/* A uint8 count that wrapped (it was 255 and is now 0): one more 256 in the spill. Rare (a
 * cell's 256th, 512th, ... draw), so out of the counting loop's way. */
static __attribute__((noinline, cold)) void spill(study_ws *w, uint32_t q) {
  if (w->hi[q]++ == 0) w->wrap[w->nwrap++] = q;
}

/* The counting pass over the drawn items idx[0..m): per item one record of RA positions in
 * cnt32 and RB in cnt8, each incremented (a cnt8 count that wraps spills, see study_ws). The
 * common shapes are spelled out so that the record stays in registers; the order of the
 * increments does not matter. */
#define COUNT_CASE(T, A, B)                                                           \
  for (uint32_t j = 0; j < m; j++) {                                                  \
    const T *p = rc + (size_t)((A) + (B)) * idx[j];                                   \
    for (int e = 0; e < (A); e++) c32[p[e]]++;                                        \
    for (int e = 0; e < (B); e++)                                                     \
      if (__builtin_expect(++c8[p[(A) + e]] == 0, 0)) spill(w, p[(A) + e]);           \
  }
#define COUNT_PASS(T, FIELD)                                                          \
  do {                                                                                \
    const T *rc = s->FIELD;                                                           \
    switch (s->RA * 8 + s->RB) {                                                      \
      case 1 * 8 + 0: COUNT_CASE(T, 1, 0) break;                                      \
      case 1 * 8 + 1: COUNT_CASE(T, 1, 1) break;                                      \
      case 1 * 8 + 2: COUNT_CASE(T, 1, 2) break;                                      \
      case 0 * 8 + 1: COUNT_CASE(T, 0, 1) break;                                      \
      case 0 * 8 + 2: COUNT_CASE(T, 0, 2) break;                                      \
      case 2 * 8 + 0: COUNT_CASE(T, 2, 0) break;                                      \
      case 2 * 8 + 1: COUNT_CASE(T, 2, 1) break;                                      \
      case 3 * 8 + 0: COUNT_CASE(T, 3, 0) break;                                      \
      case 4 * 8 + 0: COUNT_CASE(T, 4, 0) break;                                      \
      default: {                                                                      \
        const int A = s->RA, B = s->RB;                                               \
        COUNT_CASE(T, A, B)                                                           \
      }                                                                               \
    }                                                                                 \
  } while (0)

static void count_pass(const tl_study *s, const uint32_t *idx, uint32_t m, study_ws *w) {
  int32_t *c32 = w->cnt32;
  uint8_t *c8 = w->cnt8;
  if (s->rec16) COUNT_PASS(uint16_t, rec16);
  else COUNT_PASS(uint32_t, rec32);
}
#undef COUNT_PASS
#undef COUNT_CASE

/* The wrapped cells of wide metric k, relative to its table, into w->mwrap; their count. */
static uint32_t metric_wraps(const tl_study *s, study_ws *w, int k) {
  const uint32_t p0 = s->pos[k], p1 = p0 + s->c[k].ncells;
  uint32_t nm = 0;
  for (uint32_t t = 0; t < w->nwrap; t++)
    if (w->wrap[t] >= p0 && w->wrap[t] < p1) w->mwrap[nm++] = w->wrap[t] - p0;
  return nm;
}

/* The cell weights of metric k from the counts, as int32 into w->w32 (small metrics: run sums
 * of the joint table, or a copy; wide metrics: widened from uint8, plus 256 x the spill). */
static const int32_t *metric_weights(const tl_study *s, study_ws *w, int k) {
  const uint32_t nc = s->c[k].ncells;
  int32_t *o = w->w32;
  if (s->wide[k]) {
    const uint8_t *t = w->cnt8 + s->pos[k];
    for (uint32_t q = 0; q < nc; q++) o[q] = t[q];
    const uint32_t nm = metric_wraps(s, w, k);
    for (uint32_t t2 = 0; t2 < nm; t2++) o[w->mwrap[t2]] += 256 * (int32_t)w->hi[s->pos[k] + w->mwrap[t2]];
  } else if (s->J) {
    const uint32_t *run = s->jrun + (size_t)k * s->jrun_stride, *ord = s->jord + (size_t)k * s->J;
    for (uint32_t q = 0; q < nc; q++) {
      int32_t sum = 0;
      for (uint32_t t = run[q]; t < run[q + 1]; t++) sum += w->cnt32[ord[t]];
      o[q] = sum;
    }
  } else {
    return w->cnt32 + s->pos[k];
  }
  return o;
}

/* Values of all (metric, stat) of the resample whose items are counted in w->cnt32 / w->cnt8
 * (+ the spill; N = n items). The human marginal is summed from the metric with the fewest
 * cells (every metric's cells have the same y marginal), and the y half of tl_suff is shared. */
static void study_eval(const tl_study *s, study_ws *w, double *out) {
  const uint32_t Ly = s->h.nlevels;
  const int y = s->ysrc;
  const int32_t *cy = metric_weights(s, w, y);
  memset(w->wy, 0, (size_t)Ly * sizeof *w->wy);
  for (uint32_t q = 0; q < s->c[y].ncells; q++) w->wy[s->c[y].yl[q]] += cy[q];
  tl_suff yh;
  suff_y_part(w->wy, Ly, w->by, &yh);
  for (int k = 0; k < s->M; k++) {
    tl_suff sf = yh;
    const uint32_t p = s->pos[k];
    if (!(s->simd && s->gen[k] &&
          suff_x_gen(w->cnt8 + p, w->hi + p, s->ypad + p, s->c[k].yl, (s->c[k].ncells + 7) / 8 * 8,
                     s->grp + 2 * (size_t)s->goff[k], s->gn[k], w->mwrap, metric_wraps(s, w, k), Ly, w->by,
                     yh.N, &sf)))
      suff_x_part(&s->c[k], metric_weights(s, w, k), w->by, w->fen, &sf);
    for (int t = 0; t < s->S; t++) out[k * s->S + t] = stat_of(s->st[t], &sf);
  }
  for (uint32_t t = 0; t < w->nwrap; t++) w->hi[w->wrap[t]] = 0;
  w->nwrap = 0;
}

/* Cluster resamples [r0, r1) (tl_study_in.cluster): resample r's cluster counts wc[m] from
 * tl_boot_counts(seed, r, m) (the item path's draws, over clusters), item i weighs wc[cl[i]],
 * and each metric's cell weights go through the general sweep (suff_from_cells). O(M (n +
 * cells)) per resample: the item path's joint tables and uint8 counts assume weights that sum
 * to n, which cluster weights do not. */
static tl_status cluster_resamples(const tl_study *s, uint64_t r0, uint64_t r1, double *out) {
  const uint32_t n = s->n;
  const size_t K = (size_t)s->M * s->S;
  int32_t *wc = malloc(((size_t)s->mcl + 1) * sizeof *wc), *cw = malloc(((size_t)s->maxcells + 1) * sizeof *cw);
  cell_scratch sc;
  int ok = wc && cw && scratch_init(&sc, s->h.nlevels) == 0;
  for (uint64_t r = r0; ok && r < r1; r++) {
    tl_boot_counts(s->seed, r, s->mcl, wc);
    for (int k = 0; k < s->M; k++) {
      const uint32_t *id = s->cellid + (size_t)k * n;
      memset(cw, 0, (size_t)s->c[k].ncells * sizeof *cw);
      for (uint32_t i = 0; i < n; i++) cw[id[i]] += wc[s->cl[i]];
      tl_suff sf;
      suff_from_cells(&s->c[k], cw, &sc, &sf);
      for (int t = 0; t < s->S; t++) out[(r - r0) * K + (size_t)k * s->S + (size_t)t] = stat_of(s->st[t], &sf);
    }
  }
  if (wc && cw) scratch_release(&sc);
  free(wc);
  free(cw);
  return ok ? TL_OK : TL_ENOMEM;
}

tl_status tl_study_resamples(const tl_study *s, uint64_t r0, uint64_t r1, double *out) {
  if (r0 > r1 || r1 > s->B) return TL_EINPUT;
  if (s->cl) return cluster_resamples(s, r0, r1, out);
  study_ws w;
  if (study_ws_init(s, &w) != 0) return TL_ENOMEM;
  const size_t K = (size_t)s->M * s->S;
  const uint32_t n = s->n;
  for (uint64_t r = r0; r < r1; r++) {
    memset(w.cnt32, 0, (size_t)s->C32 * sizeof *w.cnt32);
    memset(w.cnt8, 0, s->C8);
    if (s->indices) {
      count_pass(s, s->indices + r * n, n, &w);
    } else {
      for (uint32_t j0 = 0; j0 < n; j0 += STUDY_CHUNK) {
        uint32_t j1 = n - j0 < STUDY_CHUNK ? n : j0 + STUDY_CHUNK;
        draw_range(s->seed, r, n, 0, j0, j1, w.idx, s->simd);
        count_pass(s, w.idx, j1 - j0, &w);
      }
    }
    study_eval(s, &w, out + (r - r0) * K);
  }
  study_ws_release(&w);
  return TL_OK;
}

/* The cell sizes of metric k (the full data: every item once) into cw[ncells]. */
static void full_weights(const tl_study *s, int k, int32_t *cw) {
  const uint32_t *id = s->cellid + (size_t)k * s->n;
  memset(cw, 0, (size_t)s->c[k].ncells * sizeof *cw);
  for (uint32_t i = 0; i < s->n; i++) cw[id[i]]++;
}

void tl_study_full(const tl_study *s, double *out) {
  const size_t K = (size_t)s->M * s->S;
  int32_t *cw = malloc(((size_t)s->maxcells + 1) * sizeof *cw);
  cell_scratch sc;
  if (!cw || scratch_init(&sc, s->h.nlevels) != 0) {
    for (size_t k = 0; k < K; k++) out[k] = NAN;
    if (cw) scratch_release(&sc);
    free(cw);
    return;
  }
  for (int k = 0; k < s->M; k++) {
    tl_suff sf;
    full_weights(s, k, cw);
    suff_from_cells(&s->c[k], cw, &sc, &sf);
    for (int t = 0; t < s->S; t++) out[k * s->S + t] = stat_of(s->st[t], &sf);
  }
  scratch_release(&sc);
  free(cw);
}

/* ---------------------------------------------------------------------------------------------
 * Summaries
 * ------------------------------------------------------------------------------------------- */

/* numpy.percentile(method='linear') on sorted data: virtual index (n-1) q, lerp as numpy's
 * _lerp (a + d t, or b - d (1 - t) when t >= 0.5); out-of-range indices clamp. */
double tl_quantile_sorted(const double *sorted, size_t n, double q) {
  if (n == 0 || isnan(q)) return NAN;
  double vi = (double)(n - 1) * q;
  if (vi >= (double)(n - 1)) return sorted[n - 1];
  if (vi < 0) return sorted[0];
  double lo = floor(vi);
  size_t i0 = (size_t)lo;
  double g = vi - lo, a = sorted[i0], b = sorted[i0 + 1], d = b - a;
  return g >= 0.5 ? b - d * (1.0 - g) : a + d * g;
}

/* Order key of a double: unsigned order of the keys is numeric order of the values, and -0.0
 * has +0.0's key (they compare equal). */
static uint64_t f64_key(double x) {
  uint64_t u;
  if (x == 0) x = 0.0;
  memcpy(&u, &x, sizeof u);
  return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

static int cmp_f64(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

/* LSD radix sort, 8 bits a pass; a pass whose digit is the same for every value is skipped (the
 * sign and exponent bytes of a resample's statistics mostly are). Stable, so values that compare
 * equal keep their order, as in glibc's qsort (a merge sort) with cmp_f64, which the summaries
 * used before: the same sorted bytes, -0.0 and +0.0 included, at about a tenth of the time for
 * B = 5,000. */
void tl_sort_f64(double *v, size_t n) {
  if (n < 2) return;
  if (n <= 32) { /* insertion sort: stable too */
    for (size_t i = 1; i < n; i++) {
      double x = v[i];
      size_t j = i;
      for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
      v[j] = x;
    }
    return;
  }
  uint64_t *k = malloc(2 * n * sizeof *k);
  double *t = malloc(n * sizeof *t);
  size_t(*cnt)[256] = calloc(8, sizeof *cnt);
  if (!k || !t || !cnt) { /* no memory: the same order, the slower way */
    free(k); free(t); free(cnt);
    qsort(v, n, sizeof *v, cmp_f64);
    return;
  }
  uint64_t *k2 = k + n;
  for (size_t i = 0; i < n; i++) {
    k[i] = f64_key(v[i]);
    for (int d = 0; d < 8; d++) cnt[d][(k[i] >> (8 * d)) & 255]++;
  }
  double *src = v, *dst = t;
  for (int d = 0; d < 8; d++) {
    size_t *c = cnt[d];
    if (c[(k[0] >> (8 * d)) & 255] == n) continue;
    size_t sum = 0;
    for (int b = 0; b < 256; b++) {
      size_t x = c[b];
      c[b] = sum;
      sum += x;
    }
    for (size_t i = 0; i < n; i++) {
      size_t at = c[(k[i] >> (8 * d)) & 255]++;
      k2[at] = k[i];
      dst[at] = src[i];
    }
    uint64_t *tk = k; k = k2; k2 = tk;
    double *tv = src; src = dst; dst = tv;
  }
  if (src != v) memcpy(v, src, n * sizeof *v);
  free(k < k2 ? k : k2); /* the block's start: the two halves swap on every pass */
  free(t);
  free(cnt);
}

/* pct_q (boot_int.h): scipy passes q*100 to np.percentile, which divides by 100. */
void tl_boot_percentile_ci(const double *sorted, size_t nd, double level, double *lo, double *hi) {
  double alpha = (1.0 - level) / 2.0;
  *lo = tl_quantile_sorted(sorted, nd, pct_q(alpha));
  *hi = tl_quantile_sorted(sorted, nd, pct_q(1.0 - alpha));
}

double tl_boot_bca_z0(const double *v, size_t nd, double theta_hat) {
  if (nd == 0 || isnan(theta_hat)) return NAN;
  size_t lt = 0, le = 0;
  for (size_t i = 0; i < nd; i++) {
    lt += v[i] < theta_hat;
    le += v[i] <= theta_hat;
  }
  return tl_norm_ppf((double)(lt + le) / (2.0 * (double)nd));
}

double tl_boot_bca_accel(const double *theta_i, size_t n) {
  if (n == 0) return NAN;
  double mean = 0;
  for (size_t i = 0; i < n; i++) mean += theta_i[i];
  mean /= (double)n;
  double s2 = 0, s3 = 0;
  for (size_t i = 0; i < n; i++) {
    double u = (double)(n - 1) * (mean - theta_i[i]);
    s2 += u * u;
    s3 += u * u * u;
  }
  double n2 = (double)((int64_t)n * (int64_t)n), n3 = (double)((int64_t)n * (int64_t)n * (int64_t)n);
  double num = s3 / n3, den = s2 / n2;
  return 1.0 / 6.0 * num / pow(den, 1.5);
}

void tl_boot_bca_ci(const double *sorted, size_t nd, double z0, double accel, double level,
                    double *lo, double *hi) {
  *lo = *hi = NAN;
  if (nd == 0 || !isfinite(z0) || !isfinite(accel)) return;
  double alpha = (1.0 - level) / 2.0;
  double za = tl_norm_ppf(alpha), z1a = -za;
  double num1 = z0 + za, num2 = z0 + z1a;
  double a1 = tl_norm_cdf(z0 + num1 / (1.0 - accel * num1));
  double a2 = tl_norm_cdf(z0 + num2 / (1.0 - accel * num2));
  if (!(a1 >= 0 && a1 <= 1) || !(a2 >= 0 && a2 <= 1)) return;
  *lo = tl_quantile_sorted(sorted, nd, pct_q(a1));
  *hi = tl_quantile_sorted(sorted, nd, pct_q(a2));
}

/* Summary of the defined values v[0..nd) (in resample order; sorted in place). jack: [n]
 * leave-one-out values for BCa (NULL for percentile). */
static void summarize_one(double *v, size_t nd, uint64_t B, double estimate, const double *jack,
                          size_t n, double level, tl_ci_method method, tl_boot_summary *o) {
  o->estimate = estimate;
  o->n_defined = (int64_t)nd;
  o->n_undefined = (int64_t)(B - nd);
  o->boot_mean = o->se = o->ci_lo = o->ci_hi = NAN;
  if (nd == 0) return;
  double mean = 0;
  for (size_t i = 0; i < nd; i++) mean += v[i];
  mean /= (double)nd;
  o->boot_mean = mean;
  if (nd > 1) {
    double ss = 0;
    for (size_t i = 0; i < nd; i++) ss += (v[i] - mean) * (v[i] - mean);
    o->se = sqrt(ss / (double)(nd - 1));
  }
  tl_sort_f64(v, nd); /* tl_boot_bca_z0 only counts, so it reads sorted values as well */
  if (method == TL_CI_BCA)
    tl_boot_bca_ci(v, nd, tl_boot_bca_z0(v, nd, estimate), tl_boot_bca_accel(jack, n), level,
                   &o->ci_lo, &o->ci_hi);
  else
    tl_boot_percentile_ci(v, nd, level, &o->ci_lo, &o->ci_hi);
}

/* Jackknife tasks: one per (metric k, cell q of metric k), flattened metric-major; task t's
 * values are the statistics with one item of that cell left out (every item of a cell shares
 * them). */
size_t tl_study_jack_tasks(const tl_study *s) {
  if (s->cl) return (size_t)s->M * s->mcl; /* (metric k, cluster c): k * m + c */
  size_t T = 0;
  for (int k = 0; k < s->M; k++) T += s->c[k].ncells;
  return T;
}

/* Leave-one-out sufficient statistics of every cell q in [q0, q1) in closed form: out[q - q0] =
 * tl_suff of the sample cw with ONE item of cell q removed (cw[q] >= 1 there), by exact integer
 * updates of the full sample's statistics F (the jackknife of BCa, Efron & Tibshirani ch. 14,
 * over cells: every item of a cell has the same leave-one-out value).
 *
 * Removing an item of cell q = (x level X, y level Y) from N items (W_X, V_Y: the weights of X
 * and Y; C_Y: the weight below Y; a_x, b_y: doubled ranks before the removal) lowers the doubled
 * rank of every item at X by 1 and above X by 2 (d_x = 0, 1, 2 for x <, =, > X), likewise d_y:
 *   N' = N - 1;  saa' = sum_sq_ranks(N', S3x - W_X^3 + (W_X - 1)^3), sbb' likewise with V_Y
 *   (S3x, S3y: sums of the cubed group weights);  xtie' = xtie - (W_X - 1), ytie' = ytie -
 *   (V_Y - 1), ntie' = ntie - (w_q - 1);  mx' = mx - [W_X = 1], my' = my - [V_Y = 1];
 *   dis' = dis - UL - LR, UL = #{x < X, y > Y}, LR = #{x > X, y < Y} (the pairs the item was
 *   discordant in);
 *   sab' = sum_c w_c (a - d_x)(b - d_y) - (a_X - 1)(b_Y - 1)
 *        = sab - T1 - T2 + T3 - (a_X - 1)(b_Y - 1), with
 *     T1 = sum_c w_c d_x b = GB_X + 2 sum_{x > X} GB_x   (GB_x = sum over the cells of x of w b),
 *     T2 = sum_c w_c a d_y = YA_Y + 2 sum_{y > Y} YA_y   (YA_y = sum over the cells of y of w a),
 *     T3 = sum_c w_c d_x d_y = w_q + 2 #{x = X, y > Y} + 2 #{x > X, y = Y} + 4 #{x > X, y > Y}.
 * The quadrant counts come from one Fenwick sweep over the x groups in ascending order (the
 * tree holds the items of the earlier groups by y level): with lt_le = #{x < X, y <= Y}, lt_lt =
 * #{x < X, y < Y}, L = the weight of the cells of X below Y and cum = #{x < X}:
 *   UL = cum - lt_le;  LR = C_Y - lt_lt - L;  #{x = X, y > Y} = W_X - L - w_q;
 *   #{x > X, y = Y} = V_Y - (lt_le - lt_lt) - w_q;  #{x > X, y > Y} = (N - C_Y - V_Y) - UL -
 *   #{x = X, y > Y}.
 * O(cells log Ly) for all cells together, against one O(cells) sweep per cell; every value is
 * the integer suff_from_cells gives on cw with cw[q] - 1 (tests/unit/test_boot.c checks all of
 * them), so the statistics are bit-identical. -1 when out of memory. */
static int jack_suff_closed(const cells *c, const int32_t *cw, uint32_t q0, uint32_t q1, tl_suff *out) {
  const uint32_t Ly = c->Ly, nc = c->ncells;
  const size_t L = (size_t)Ly + 1;
  int64_t *wy = calloc(L, sizeof *wy), *cy = calloc(L, sizeof *cy), *by = calloc(L, sizeof *by);
  int64_t *ya = calloc(L, sizeof *ya), *yagt = calloc(L, sizeof *yagt), *fen = calloc(L, sizeof *fen);
  int rc = -1;
  if (!wy || !cy || !by || !ya || !yagt || !fen) goto done;
  for (uint32_t k = 0; k < nc; k++) wy[c->yl[k]] += cw[k];
  tl_suff F;
  suff_y_part(wy, Ly, by, &F);
  suff_x_part(c, cw, by, fen, &F);
  const int64_t N = F.N, N1 = N - 1;
  int64_t S3y = 0, below = 0;
  for (uint32_t l = 0; l < Ly; l++) {
    cy[l] = below;
    below += wy[l];
    S3y += wy[l] * wy[l] * wy[l];
  }
  /* pass 1: S3x, GB total, YA */
  int64_t S3x = 0, GBtot = 0, cum = 0;
  for (uint32_t k = 0; k < nc;) {
    uint32_t k1 = k;
    int64_t Wx = 0;
    while (k1 < nc && c->xl[k1] == c->xl[k]) Wx += cw[k1++];
    const int64_t a = 2 * cum + Wx + 1;
    for (uint32_t q = k; q < k1; q++) {
      ya[c->yl[q]] += cw[q] * a;
      GBtot += cw[q] * by[c->yl[q]];
    }
    S3x += Wx * Wx * Wx;
    cum += Wx;
    k = k1;
  }
  for (uint32_t l = Ly; l-- > 0;) yagt[l] = l + 1 < Ly ? yagt[l + 1] + ya[l + 1] : 0;
  /* pass 2: the Fenwick sweep, per cell */
  memset(fen, 0, L * sizeof *fen);
  int64_t GBle = 0;
  cum = 0;
  for (uint32_t k = 0; k < nc && k < q1;) {
    uint32_t k1 = k;
    int64_t Wx = 0, gb = 0;
    for (; k1 < nc && c->xl[k1] == c->xl[k]; k1++) {
      Wx += cw[k1];
      gb += cw[k1] * by[c->yl[k1]];
    }
    GBle += gb;
    const int64_t a = 2 * cum + Wx + 1, T1 = gb + 2 * (GBtot - GBle);
    const int64_t s3x = S3x - Wx * Wx * Wx + (Wx - 1) * (Wx - 1) * (Wx - 1);
    int64_t Lq = 0;
    for (uint32_t q = k; q < k1; q++) {
      const int64_t w = cw[q];
      const uint32_t y = c->yl[q];
      if (q >= q0 && q < q1) {
        int64_t lt_le = 0, lt_lt = 0;
        for (uint32_t t = y + 1; t > 0; t -= t & (0u - t)) lt_le += fen[t];
        for (uint32_t t = y; t > 0; t -= t & (0u - t)) lt_lt += fen[t];
        const int64_t V = wy[y];
        const int64_t UL = cum - lt_le, LR = cy[y] - lt_lt - Lq;
        const int64_t Rq = Wx - Lq - w, Col = V - (lt_le - lt_lt) - w;
        const int64_t Qq = (N - cy[y] - V) - UL - Rq;
        const int64_t T2 = ya[y] + 2 * yagt[y], T3 = w + 2 * Rq + 2 * Col + 4 * Qq;
        tl_suff *o = out + (q - q0);
        o->N = N1;
        o->n0 = N1 * (N1 - 1) / 2;
        o->sab = F.sab - T1 - T2 + T3 - (a - 1) * (by[y] - 1);
        o->saa = sum_sq_ranks(N1, s3x);
        o->sbb = sum_sq_ranks(N1, S3y - V * V * V + (V - 1) * (V - 1) * (V - 1));
        o->xtie = F.xtie - (Wx - 1);
        o->ytie = F.ytie - (V - 1);
        o->ntie = F.ntie - (w - 1);
        o->dis = F.dis - UL - LR;
        o->mx = F.mx - (Wx == 1);
        o->my = F.my - (V == 1);
      }
      Lq += w;
    }
    for (uint32_t q = k; q < k1; q++)
      if (cw[q])
        for (uint32_t t = c->yl[q] + 1; t <= Ly; t += t & (0u - t)) fen[t] += cw[q];
    cum += Wx;
    k = k1;
  }
  rc = 0;
done:
  free(wy);
  free(cy);
  free(by);
  free(ya);
  free(yagt);
  free(fen);
  return rc;
}

#define JACK_CHUNK 65536u

/* The jackknife task values of [t0, t1): per metric, the leave-one-out statistics of its cells
 * in closed form (jack_suff_closed) from the full data's cell sizes. */
/* Leave-one-CLUSTER-out values of tasks [t0, t1) (task k * m + c: metric k without the items
 * of cluster c): the full data's cell weights with cluster c's items taken out, one exact sweep
 * per task (O(m (n + cells)) per metric in all; the closed form is for single items only). */
static tl_status cluster_jack_values(const tl_study *s, size_t t0, size_t t1, double *cv) {
  const int S = s->S;
  int32_t *cw = malloc(((size_t)s->maxcells + 1) * sizeof *cw);
  cell_scratch sc;
  int ok = cw && scratch_init(&sc, s->h.nlevels) == 0;
  int have = -1; /* the metric whose full weights cw holds */
  for (size_t t = t0; ok && t < t1; t++) {
    const int k = (int)(t / s->mcl);
    const uint32_t c = (uint32_t)(t % s->mcl), *id = s->cellid + (size_t)k * s->n;
    if (k != have) full_weights(s, k, cw);
    have = k;
    for (uint32_t q = s->cstart[c]; q < s->cstart[c + 1]; q++) cw[id[s->citem[q]]]--;
    tl_suff sf;
    suff_from_cells(&s->c[k], cw, &sc, &sf);
    for (uint32_t q = s->cstart[c]; q < s->cstart[c + 1]; q++) cw[id[s->citem[q]]]++;
    for (int u = 0; u < S; u++) cv[(t - t0) * (size_t)S + (size_t)u] = stat_of(s->st[u], &sf);
  }
  if (cw) scratch_release(&sc);
  free(cw);
  return ok ? TL_OK : TL_ENOMEM;
}

tl_status tl_study_jack_values(const tl_study *s, size_t t0, size_t t1, double *cv) {
  if (s->cl) return cluster_jack_values(s, t0, t1, cv);
  const int S = s->S;
  int32_t *cw = malloc(((size_t)s->maxcells + 1) * sizeof *cw);
  tl_suff *sf = NULL;
  tl_status st = TL_ENOMEM;
  if (!cw) goto done;
  size_t base = 0;
  for (int k = 0; k < s->M && base < t1; k++) {
    const cells *c = &s->c[k];
    size_t end = base + c->ncells;
    if (end > t0) {
      uint32_t q0 = (uint32_t)(t0 > base ? t0 - base : 0), q1 = (uint32_t)((t1 < end ? t1 : end) - base);
      full_weights(s, k, cw);
      if (!sf && !(sf = malloc(JACK_CHUNK * sizeof *sf))) goto done;
      /* in chunks of cells, so that the tl_suff buffer stays small (one sweep per chunk) */
      for (uint32_t a = q0; a < q1; a += JACK_CHUNK) {
        uint32_t b = q1 - a < JACK_CHUNK ? q1 : a + JACK_CHUNK;
        if (jack_suff_closed(c, cw, a, b, sf) != 0) goto done;
        for (uint32_t q = a; q < b; q++)
          for (int t = 0; t < S; t++) cv[(base + q - t0) * (size_t)S + (size_t)t] = stat_of(s->st[t], &sf[q - a]);
      }
    }
    base = end;
  }
  st = TL_OK;
done:
  free(cw);
  free(sf);
  return st;
}

/* ---- test entry points (boot_int.h) ---- */

int tl_boot_cells_suff(const uint32_t *xl, const uint32_t *yl, const int32_t *cw, uint32_t nc,
                       uint32_t Ly, int impl, tl_suff *out) {
  cells c = {nc, Ly, (uint32_t *)xl, (uint32_t *)yl};
  int64_t *wy = calloc((size_t)Ly + 1, sizeof *wy), *by = calloc((size_t)Ly + 1, sizeof *by);
  int64_t *fen = calloc((size_t)Ly + 1, sizeof *fen);
  uint32_t ncp = (nc + 7) / 8 * 8;
  uint8_t *pw = calloc((size_t)ncp + 8, 1);
  uint8_t *py = calloc((size_t)ncp + 8, 1);
  int rc = -1;
  if (!wy || !by || !fen || !pw || !py) goto done;
  for (uint32_t k = 0; k < nc; k++) wy[yl[k]] += cw[k];
  suff_y_part(wy, Ly, by, out);
  if (impl != TL_BOOT_IMPL_AVX2 && impl != TL_BOOT_IMPL_AVX2_GEN) {
    suff_x_part(&c, cw, by, fen, out);
    rc = 0;
    goto done;
  }
  if (!boot_cpu_avx2()) goto done;
  if (impl == TL_BOOT_IMPL_AVX2) { /* the old contract: one cell per x level, Ly <= 4, uint8 */
    if (Ly > 4) goto done;
    for (uint32_t k = 0; k < nc; k++)
      if ((k && xl[k] == xl[k - 1]) || cw[k] > 255) goto done;
  }
  /* the study's form: low bytes, the spill of the wrapped cells, the multi-cell x groups */
  uint16_t *ph = calloc((size_t)ncp + 8, sizeof *ph);
  uint32_t *wrap = calloc((size_t)nc + 1, sizeof *wrap), *grp = calloc(2 * ((size_t)nc + 1), sizeof *grp);
  uint32_t nwrap = 0;
  if (ph && wrap && grp) {
    for (uint32_t k = 0; k < nc; k++) {
      pw[k] = (uint8_t)(cw[k] & 255);
      ph[k] = (uint16_t)(cw[k] >> 8);
      if (ph[k]) wrap[nwrap++] = k;
      py[k] = (uint8_t)yl[k];
    }
    uint32_t ng = gen_groups(&c, grp);
    rc = suff_x_gen(pw, ph, py, yl, ncp, grp, ng, wrap, nwrap, Ly, by, out->N, out) ? 0 : -1;
  }
  free(ph);
  free(wrap);
  free(grp);
done:
  free(wy);
  free(by);
  free(fen);
  free(pw);
  free(py);
  return rc;
}

int tl_boot_jack_suff(const uint32_t *xl, const uint32_t *yl, const int32_t *cw, uint32_t nc,
                      uint32_t Ly, uint32_t q0, uint32_t q1, int closed, tl_suff *out) {
  cells c = {nc, Ly, (uint32_t *)xl, (uint32_t *)yl};
  if (closed) return jack_suff_closed(&c, cw, q0, q1, out);
  int32_t *w = malloc(((size_t)nc + 1) * sizeof *w);
  cell_scratch sc;
  int ok = w && scratch_init(&sc, Ly) == 0;
  if (ok) {
    memcpy(w, cw, (size_t)nc * sizeof *w);
    for (uint32_t q = q0; q < q1; q++) { /* the O(cells^2) definition: one sweep per cell */
      w[q]--;
      suff_from_cells(&c, w, &sc, &out[q - q0]);
      w[q]++;
    }
  }
  if (w) scratch_release(&sc);
  free(w);
  return ok ? 0 : -1;
}

/* Expands all jackknife task values cv[T][S] to jack[(k*S + t) * n + i] (item i left out). */
static void jack_expand(const tl_study *s, const double *cv, double *jack) {
  const uint32_t n = s->n;
  const int S = s->S;
  if (s->cl) { /* clusters: jack[(k*S + t) * m + c] (cluster c left out) */
    for (int k = 0; k < s->M; k++)
      for (int t = 0; t < S; t++)
        for (uint32_t c = 0; c < s->mcl; c++)
          jack[((size_t)k * S + t) * s->mcl + c] = cv[((size_t)k * s->mcl + c) * (size_t)S + (size_t)t];
    return;
  }
  size_t base = 0;
  for (int k = 0; k < s->M; k++) {
    const uint32_t *id = s->cellid + (size_t)k * n;
    for (int t = 0; t < S; t++)
      for (uint32_t i = 0; i < n; i++)
        jack[((size_t)k * S + t) * n + i] = cv[(base + id[i]) * (size_t)S + (size_t)t];
    base += s->c[k].ncells;
  }
}

/* The paired permutation test of one metric pair (a, b). Swapping z_a[i] and z_b[i] turns the
 * pair into (a', b'); a' takes, per item, the cell (level of z_a[i] or z_b[i], human level) in
 * one cell table over the levels of all 2n z-values. b' takes the other, so its cell weights are
 * the totals minus those of a'. */
typedef struct {
  cells c;
  uint32_t *ca, *cb; /* [n] cell of item i with z_a / z_b */
  int32_t *tot;      /* [ncells] */
} perm_pair;

static void perm_pair_release(perm_pair *pp) {
  cells_release(&pp->c);
  free(pp->ca);
  free(pp->cb);
  free(pp->tot);
}

static int perm_pair_init(const tl_study *s, int a, int b, perm_pair *pp) {
  const uint32_t n = s->n;
  memset(pp, 0, sizeof *pp);
  double *v = malloc((size_t)2 * n * sizeof *v);
  uint32_t *xl = malloc((size_t)2 * n * sizeof *xl), *yl = malloc((size_t)2 * n * sizeof *yl);
  uint32_t *id = malloc((size_t)2 * n * sizeof *id);
  pp->ca = malloc((size_t)n * sizeof *pp->ca);
  pp->cb = malloc((size_t)n * sizeof *pp->cb);
  int rc = -1;
  uint32_t L = 0;
  if (v && xl && yl && id && pp->ca && pp->cb) {
    memcpy(v, s->z + (size_t)a * n, (size_t)n * sizeof *v);
    memcpy(v + n, s->z + (size_t)b * n, (size_t)n * sizeof *v);
    memcpy(yl, s->h.level, (size_t)n * sizeof *yl);
    memcpy(yl + n, s->h.level, (size_t)n * sizeof *yl);
    if (dense_levels(v, 2 * n, xl, &L) == 0 && cells_build(xl, yl, 2 * n, L, s->h.nlevels, &pp->c, id) == 0) {
      memcpy(pp->ca, id, (size_t)n * sizeof *id);
      memcpy(pp->cb, id + n, (size_t)n * sizeof *id);
      pp->tot = calloc((size_t)pp->c.ncells + 1, sizeof *pp->tot);
      if (pp->tot) {
        for (uint32_t i = 0; i < 2 * n; i++) pp->tot[id[i]]++;
        rc = 0;
      }
    }
  }
  free(v);
  free(xl);
  free(yl);
  free(id);
  if (rc != 0) perm_pair_release(pp);
  return rc;
}

#define PERM_SMALL 256

/* delta[t] = stat_t(a', h) - stat_t(b', h) for the swap vector (NULL: no swaps). */
static void perm_delta(const tl_study *s, const perm_pair *pp, const uint8_t *swap, int32_t *cwa,
                       int32_t *cwb, cell_scratch *sc, double *delta) {
  const uint32_t n = s->n, nc = pp->c.ncells;
  if (swap && nc <= PERM_SMALL) {
    /* few cells: four interleaved count tables, so consecutive increments of one cell do not
     * wait on each other (the loop is the cost of the test) */
    uint32_t t4[4][PERM_SMALL];
    memset(t4, 0, sizeof t4);
    uint32_t i = 0;
    /* branch-free select (the swap bits are coin flips: a branch would mispredict half the time) */
#define PERM_CELL(i) (pp->ca[i] ^ ((pp->ca[i] ^ pp->cb[i]) & (0u - (uint32_t)swap[i])))
    for (; i + 4 <= n; i += 4)
      for (uint32_t u = 0; u < 4; u++) t4[u][PERM_CELL(i + u)]++;
    for (; i < n; i++) t4[0][PERM_CELL(i)]++;
    for (uint32_t q = 0; q < nc; q++) cwa[q] = (int32_t)(t4[0][q] + t4[1][q] + t4[2][q] + t4[3][q]);
  } else {
    memset(cwa, 0, (size_t)nc * sizeof *cwa);
    if (swap)
      for (uint32_t i = 0; i < n; i++) cwa[PERM_CELL(i)]++;
    else
      for (uint32_t i = 0; i < n; i++) cwa[pp->ca[i]]++;
  }
#undef PERM_CELL
  for (uint32_t q = 0; q < nc; q++) cwb[q] = pp->tot[q] - cwa[q];
  tl_suff fa, fb;
  suff_from_cells(&pp->c, cwa, sc, &fa);
  suff_from_cells(&pp->c, cwb, sc, &fb);
  for (int t = 0; t < s->S; t++) delta[t] = stat_of(s->st[t], &fa) - stat_of(s->st[t], &fb);
}

/* Permutation counts over permutations [r0, r1): cnt[pair * S + t] += #(|delta_perm| >=
 * |delta_obs|), pairs (a < b) in order, delta_obs from the unswapped standardized data (NaN
 * deltas never count). Permutation r swaps with Philox stream 1, so any split over ranks sums to
 * the same integers. */
tl_status tl_study_perm_counts(const tl_study *s, uint64_t r0, uint64_t r1, int64_t *cnt) {
  const int M = s->M, S = s->S, P = M * (M - 1) / 2;
  const uint32_t n = s->n;
  perm_pair *pp = calloc((size_t)(P ? P : 1), sizeof *pp);
  uint8_t *swap = malloc(n ? n : 1), *cswap = s->cl ? malloc((size_t)s->mcl + 1) : NULL;
  double *obs = malloc((size_t)(P ? P : 1) * S * sizeof *obs);
  uint32_t maxc = 0;
  int npp = 0, rc = -1;
  int32_t *cwa = NULL, *cwb = NULL;
  cell_scratch sc = {0};
  memset(cnt, 0, (size_t)P * S * sizeof *cnt);
  if (!pp || !swap || !obs || (s->cl && !cswap)) goto done;
  for (int a = 0; a < M; a++)
    for (int b = a + 1; b < M; b++) {
      if (perm_pair_init(s, a, b, &pp[npp]) != 0) goto done;
      if (pp[npp].c.ncells > maxc) maxc = pp[npp].c.ncells;
      npp++;
    }
  cwa = malloc((size_t)(maxc + 1) * sizeof *cwa);
  cwb = malloc((size_t)(maxc + 1) * sizeof *cwb);
  if (!cwa || !cwb || scratch_init(&sc, s->h.nlevels) != 0) goto done;
  for (int q = 0; q < P; q++) perm_delta(s, &pp[q], NULL, cwa, cwb, &sc, obs + (size_t)q * S);
  double d[TL_STAT__N];
  for (uint64_t r = r0; r < r1; r++) {
    if (s->cl) { /* one coin per cluster (its bits: perm_swaps over m), every row of it swapped */
      perm_swaps(s->seed, r, s->mcl, cswap, s->simd);
      for (uint32_t i = 0; i < n; i++) swap[i] = cswap[s->cl[i]];
    } else {
      perm_swaps(s->seed, r, n, swap, s->simd);
    }
    for (int q = 0; q < P; q++) {
      perm_delta(s, &pp[q], swap, cwa, cwb, &sc, d);
      for (int t = 0; t < S; t++) cnt[(size_t)q * S + t] += fabs(d[t]) >= fabs(obs[(size_t)q * S + t]);
    }
  }
  for (int q = 0; q < P * S; q++)
    if (isnan(obs[q])) cnt[q] = -1; /* undefined observed difference */
  rc = 0;
done:
  for (int q = 0; q < npp; q++) perm_pair_release(&pp[q]);
  free(pp);
  free(swap);
  free(cswap);
  free(obs);
  free(cwa);
  free(cwb);
  scratch_release(&sc);
  return rc ? TL_ENOMEM : TL_OK;
}

/* Spearman rho between metrics a and b on the full data (for Williams' r23). */
static double metric_metric_rho(const tl_study *s, int a, int b) {
  tl_pair p;
  double r = NAN;
  if (tl_pair_init(&p, &s->m[a], &s->m[b]) != TL_OK) return r;
  tl_suff_ws *ws = tl_suff_ws_new(&p);
  int32_t *w = malloc((size_t)s->n * sizeof *w);
  if (ws && w) {
    for (uint32_t i = 0; i < s->n; i++) w[i] = 1;
    tl_suff sf;
    tl_suff_fast(&p, w, ws, &sf);
    r = tl_suff_spearman(&sf);
  }
  free(w);
  tl_suff_ws_free(ws);
  tl_pair_release(&p);
  return r;
}

tl_status tl_study_summarize(const tl_study *s, const double *vals, double level,
                             tl_ci_method method, tl_boot_summary *per, tl_boot_compare *cmp) {
  return tl_study_summarize_with(s, vals, level, method, NULL, NULL, per, cmp);
}

tl_status tl_study_summarize_with(const tl_study *s, const double *vals, double level,
                                  tl_ci_method method, const double *jack_cells,
                                  const int64_t *perm_counts, tl_boot_summary *per,
                                  tl_boot_compare *cmp) {
  if (!(level > 0 && level < 1) || (method != TL_CI_PERCENTILE && method != TL_CI_BCA))
    return TL_EINPUT;
  const int M = s->M, S = s->S, P = M * (M - 1) / 2;
  /* n: the items (Williams' test); jn: the jackknife's units (items, or clusters) */
  const size_t K = (size_t)M * S, n = s->n, jn = tl_study_units(s);
  const uint64_t B = s->B;
  tl_status st = TL_ENOMEM;
  double *full = malloc(K * sizeof *full);
  double *v = malloc((size_t)(B ? B : 1) * sizeof *v);
  double *va = malloc((size_t)(B ? B : 1) * sizeof *va), *vb = malloc((size_t)(B ? B : 1) * sizeof *vb);
  double *jack = method == TL_CI_BCA ? malloc(K * jn * sizeof *jack) : NULL;
  double *jd = method == TL_CI_BCA ? malloc(jn * sizeof *jd) : NULL;
  double *pperm = malloc((size_t)(P ? P : 1) * S * sizeof *pperm);
  int64_t *pc = malloc((size_t)(P ? P : 1) * S * sizeof *pc);
  double *cv = NULL;
  if (!full || !v || !va || !vb || !pperm || !pc || (method == TL_CI_BCA && (!jack || !jd))) goto done;
  tl_study_full(s, full);
  if (jack) {
    if (!jack_cells) {
      size_t T = tl_study_jack_tasks(s);
      cv = malloc((T ? T : 1) * (size_t)S * sizeof *cv);
      if (!cv || tl_study_jack_values(s, 0, T, cv) != TL_OK) goto done;
      jack_cells = cv;
    }
    jack_expand(s, jack_cells, jack);
  }
  if (P > 0) {
    if (!perm_counts) {
      if (tl_study_perm_counts(s, 0, B, pc) != TL_OK) goto done;
      perm_counts = pc;
    }
    for (int q = 0; q < P * S; q++)
      pperm[q] = (B == 0 || perm_counts[q] < 0) ? NAN : (double)perm_counts[q] / (double)B;
  }

  for (size_t k = 0; k < K; k++) {
    size_t nd = 0;
    for (uint64_t r = 0; r < B; r++)
      if (!isnan(vals[r * K + k])) v[nd++] = vals[r * K + k];
    summarize_one(v, nd, B, full[k], jack ? jack + k * jn : NULL, jn, level, method, &per[k]);
  }

  int q = 0;
  for (int t = 0; t < S; t++) {
    int pair = 0;
    for (int a = 0; a < M; a++)
      for (int b = a + 1; b < M; b++, pair++, q++) {
        tl_boot_compare *c = &cmp[q];
        const size_t ka = (size_t)a * S + t, kb = (size_t)b * S + t;
        c->a = a;
        c->b = b;
        size_t nd = 0, le = 0, ge = 0;
        for (uint64_t r = 0; r < B; r++) {
          double x = vals[r * K + ka], y = vals[r * K + kb];
          if (isnan(x) || isnan(y)) continue;
          va[nd] = x;
          vb[nd] = y;
          v[nd] = x - y;
          le += v[nd] <= 0;
          ge += v[nd] >= 0;
          nd++;
        }
        if (jd)
          for (size_t i = 0; i < jn; i++) jd[i] = jack[ka * jn + i] - jack[kb * jn + i];
        c->p_boot = nd ? fmin(1.0, 2.0 * (double)(le < ge ? le : ge) / (double)nd) : NAN;
        c->p_ttest_compat = tl_ttest_rel_p(va, vb, nd, &c->t_ttest_compat);
        summarize_one(v, nd, B, full[ka] - full[kb], jd, jn, level, method, &c->diff);
        c->p_williams = c->t_williams = NAN;
        if (s->st[t] == TL_STAT_SPEARMAN) {
          double r23 = metric_metric_rho(s, a, b);
          c->p_williams = tl_williams_p(fabs(full[ka]), fabs(full[kb]), fabs(r23), n, &c->t_williams);
        }
        c->p_permutation = pperm[(size_t)pair * S + t];
      }
  }
  st = TL_OK;
done:
  free(full);
  free(v);
  free(va);
  free(vb);
  free(jack);
  free(jd);
  free(pperm);
  free(pc);
  free(cv);
  return st;
}

/* ---- headline CIs (boot.h): a ratio of sums with clusters resampled ---- */

tl_status tl_cluster_ci(const double *num, const double *den, uint32_t n, uint32_t B,
                        uint64_t seed, double level, double *lo, double *hi) {
  *lo = *hi = NAN;
  if (B < 2 || !(level > 0.0 && level < 1.0)) return TL_OK;
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++) m += den[i] > 0;
  if (m < 2) return TL_OK;
  double *cn = malloc((size_t)m * 2 * sizeof *cn), *vals = malloc((size_t)B * sizeof *vals);
  int32_t *w = malloc((size_t)m * sizeof *w);
  if (!cn || !vals || !w) {
    free(cn), free(vals), free(w);
    return TL_ENOMEM;
  }
  double *cd = cn + m;
  for (uint32_t i = 0, k = 0; i < n; i++)
    if (den[i] > 0) cn[k] = num[i], cd[k++] = den[i];
  for (uint32_t r = 0; r < B; r++) {
    tl_boot_counts(seed, r, m, w);
    double sn = 0.0, sd = 0.0;
    for (uint32_t k = 0; k < m; k++)
      if (w[k]) sn += w[k] * cn[k], sd += w[k] * cd[k];
    vals[r] = sn / sd; /* sd > 0: every drawn cluster has a unit */
  }
  tl_sort_f64(vals, B);
  *lo = tl_quantile_sorted(vals, B, pct_q((1.0 - level) / 2.0));
  *hi = tl_quantile_sorted(vals, B, pct_q((1.0 + level) / 2.0));
  free(cn), free(vals), free(w);
  return TL_OK;
}

/* ---- headline CIs of many rows: the draws of each cluster count made once ---- */

#define DRAWS_MAX_BYTES ((size_t)256 << 20)

struct tl_cluster_draws {
  uint32_t B;
  uint64_t seed;
  struct {
    uint32_t m;
    int32_t *w;  /* [B][m]: tl_boot_counts(seed, r, m), when a count is over 255; else NULL */
    uint8_t *w8; /* [B][m]: the same counts as bytes (a quarter of the memory traffic) */
  } *c;
  int n;
  size_t bytes;
  int32_t byte_max; /* the largest count kept as a byte: 255 (less in tests) */
};

tl_cluster_draws *tl_cluster_draws_new(uint32_t B, uint64_t seed) {
  tl_cluster_draws *d = calloc(1, sizeof *d);
  if (d) {
    d->B = B;
    d->seed = seed;
    d->byte_max = 255;
  }
  return d;
}

void tl_cluster_draws_byte_max(tl_cluster_draws *d, unsigned byte_max) {
  d->byte_max = byte_max < 1 ? 1 : byte_max > 255 ? 255 : (int32_t)byte_max;
}

void tl_cluster_draws_free(tl_cluster_draws *d) {
  if (!d) return;
  for (int i = 0; i < d->n; i++) free(d->c[i].w), free(d->c[i].w8);
  free(d->c);
  free(d);
}

/* The counts of every resample for m clusters (slot *k of d->c), drawn now if needed: as bytes,
 * or as int32 when a count is over 255 (possible only for m > 255). NULL when out of memory or
 * past the cap. */
static const void *draws_for(tl_cluster_draws *d, uint32_t m, int *wide) {
  for (int i = 0; i < d->n; i++)
    if (d->c[i].m == m) return *wide = d->c[i].w != NULL, d->c[i].w ? (const void *)d->c[i].w : d->c[i].w8;
  const size_t ncell = (size_t)d->B * m;
  if (ncell / m != d->B || ncell > SIZE_MAX / sizeof(int32_t) || d->bytes + ncell > DRAWS_MAX_BYTES) return NULL;
  void *nc = realloc(d->c, (size_t)(d->n + 1) * sizeof *d->c);
  if (!nc) return NULL;
  d->c = nc;
  int32_t *row = malloc((size_t)m * sizeof *row);
  uint8_t *w8 = malloc(ncell);
  int32_t *w = NULL;
  if (!row || !w8) {
    free(row), free(w8);
    return NULL;
  }
  for (uint32_t r = 0; r < d->B; r++) {
    tl_boot_counts(d->seed, r, m, row);
    if (!w) {
      uint32_t k = 0;
      while (k < m && row[k] <= d->byte_max) k++;
      if (k < m) { /* a count over 255: this m's counts are kept as int32 */
        if (d->bytes + 4 * ncell > DRAWS_MAX_BYTES || !(w = malloc(ncell * sizeof *w))) {
          free(row), free(w8);
          return NULL;
        }
        for (uint32_t q = 0; q < r; q++)
          for (uint32_t j = 0; j < m; j++) w[(size_t)q * m + j] = w8[(size_t)q * m + j];
        free(w8);
        w8 = NULL;
      }
    }
    if (w) memcpy(w + (size_t)r * m, row, (size_t)m * sizeof *row);
    else
      for (uint32_t k = 0; k < m; k++) w8[(size_t)r * m + k] = (uint8_t)row[k];
  }
  free(row);
  d->c[d->n].m = m;
  d->c[d->n].w = w;
  d->c[d->n].w8 = w8;
  d->n++;
  d->bytes += w ? 4 * ncell : ncell;
  *wide = w != NULL;
  return w ? (const void *)w : w8;
}

/* sum_k w8[k] * n32[k] (exact: the caller bounds it below 2^31), 8 clusters at a time with
 * AVX2 where the CPU has it. Integer sums: any order gives the same value. */
static int32_t dot_u8_i32(const uint8_t *w8, const int32_t *n32, uint32_t m);
#ifdef BOOT_X86
AVX2_FN static int32_t dot_u8_i32_avx2(const uint8_t *w8, const int32_t *n32, uint32_t m) {
  __m256i acc = _mm256_setzero_si256();
  uint32_t k = 0;
  for (; k + 8 <= m; k += 8) {
    __m256i w = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(w8 + k)));
    acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(w, _mm256_loadu_si256((const __m256i *)(const void *)(n32 + k))));
  }
  __m128i h = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xb1));
  int32_t sn = _mm_cvtsi128_si32(h);
  for (; k < m; k++) sn += (int32_t)w8[k] * n32[k];
  return sn;
}
#endif
static int32_t dot_u8_i32(const uint8_t *w8, const int32_t *n32, uint32_t m) {
#ifdef BOOT_X86
  if (boot_cpu_avx2()) return dot_u8_i32_avx2(w8, n32, m);
#endif
  int32_t sn = 0;
  for (uint32_t k = 0; k < m; k++) sn += (int32_t)w8[k] * n32[k];
  return sn;
}

/* Counts as bytes or as int32 (draws_for), read the same way. */
#define W_AT(r, k) (w8 ? (int32_t)w8[(size_t)(r) * m + (k)] : w32[(size_t)(r) * m + (k)])

/* tl_cluster_ci_drawn's bounds of a row with m >= 2 clusters that hold a unit. */
static tl_status drawn_row(tl_cluster_draws *d, const int64_t *num, const int64_t *den, uint32_t n, uint32_t m,
                           double level, double *lo, double *hi) {
  int wide = 0;
  const void *wv = m == n ? draws_for(d, m, &wide) : NULL;
  if (!wv) { /* past the cap (or a cluster without units: not made here): the reference */
    double *dn = malloc((size_t)n * 2 * sizeof *dn);
    if (!dn) return TL_ENOMEM;
    for (uint32_t i = 0; i < n; i++) dn[i] = (double)num[i], dn[n + i] = (double)den[i];
    tl_status st = tl_cluster_ci(dn, dn + n, n, d->B, d->seed, level, lo, hi);
    free(dn);
    return st;
  }
  const uint8_t *w8 = wide ? NULL : wv;
  const int32_t *w32 = wide ? wv : NULL;
  /* Every cluster has the same den here (a model's seeds) and every resample draws m clusters,
   * so sum w*den = m * den; sum w*num fits in 32 bits when m * max(num) does (it does unless a
   * model has more than ~2^31 / m seeds), which lets the compiler vectorize it. The sums are
   * exact integers in any order, so bytes or int32 give the same values. */
  int same = 1, small = 1;
  for (uint32_t k = 0; k < m; k++) {
    same &= den[k] == den[0];
    small &= num[k] >= 0 && num[k] <= INT32_MAX / (int64_t)m;
  }
  double *vals = malloc((size_t)d->B * sizeof *vals);
  if (!vals) return TL_ENOMEM;
  int32_t *n32 = same && small ? malloc((size_t)m * sizeof *n32) : NULL;
  if (n32) {
    for (uint32_t k = 0; k < m; k++) n32[k] = (int32_t)num[k];
    const double sd = (double)((int64_t)m * den[0]);
    for (uint32_t r = 0; r < d->B; r++) {
      int32_t sn = 0;
      if (w8) {
        sn = dot_u8_i32(w8 + (size_t)r * m, n32, m);
      } else {
        const int32_t *wr = w32 + (size_t)r * m;
        for (uint32_t k = 0; k < m; k++) sn += wr[k] * n32[k];
      }
      vals[r] = (double)sn / sd;
    }
    free(n32);
  } else {
    for (uint32_t r = 0; r < d->B; r++) {
      int64_t sn = 0, sd = 0;
      for (uint32_t k = 0; k < m; k++) {
        sn += (int64_t)W_AT(r, k) * num[k];
        sd += (int64_t)W_AT(r, k) * den[k];
      }
      vals[r] = (double)sn / (double)sd;
    }
  }
  tl_sort_f64(vals, d->B);
  *lo = tl_quantile_sorted(vals, d->B, pct_q((1.0 - level) / 2.0)); /* as tl_cluster_ci */
  *hi = tl_quantile_sorted(vals, d->B, pct_q((1.0 + level) / 2.0));
  free(vals);
  return TL_OK;
}
#undef W_AT

uint64_t tl_ci_row_key(uint32_t n, uint32_t B, uint64_t seed, double level, const void *num, const void *den,
                       size_t elem) {
  uint64_t par[4] = {n, B, seed, 0}, h[4];
  memcpy(&par[3], &level, sizeof level);
  h[0] = tl_hash64(par, sizeof par);
  h[1] = tl_hash64(num, n * elem);
  h[2] = tl_hash64(den, n * elem);
  h[3] = 0;
  return tl_hash64(h, sizeof h);
}

/* A row is one task of the ranks' work share (tally/workshare.h), its two bounds: keyed by
 * (n, B, seed, level) and the row's counts, computed by the rank the task falls to (which draws
 * the counts of its own rows' m only) and replayed on rank 0. Outside the share it is computed
 * here. The bounds are the same bits on whichever rank. */
tl_status tl_cluster_ci_drawn(tl_cluster_draws *d, const int64_t *num, const int64_t *den, uint32_t n,
                              double level, double *lo, double *hi) {
  *lo = *hi = NAN;
  if (d->B < 2 || !(level > 0.0 && level < 1.0)) return TL_OK;
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; i++) m += den[i] > 0;
  if (m < 2) return TL_OK;
  const uint64_t key = tl_ws_mode_now() == TL_WS_OFF ? 0 : tl_ci_row_key(n, d->B, d->seed, level, num, den, sizeof *num);
  double res[2] = {NAN, NAN};
  int todo = tl_ws_task(TL_WS_DRAWN, key, res, sizeof res);
  if (todo < 0) return (tl_status)-todo;
  if (todo == TL_WS_RUN) {
    tl_status st = drawn_row(d, num, den, n, m, level, &res[0], &res[1]);
    if (!st) st = tl_ws_done(res, sizeof res);
    if (st) return st;
  }
  *lo = res[0]; /* TL_WS_SKIP: another rank's row, the placeholder NaN */
  *hi = res[1];
  return TL_OK;
}
