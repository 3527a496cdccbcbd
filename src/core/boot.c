/* boot.c - paired bootstrap correlation studies (see include/tally/boot.h and docs/STATISTICS.md,
 * "Bootstrap engine").
 *
 * One idea carries everything: a weighted sample of (x, y) pairs is fully described by the
 * weights of its distinct (x level, y level) CELLS. tl_suff is computed from a cell table sorted
 * by (x level, y level) in O(cells * log Ly) (suff_from_cells), so
 *   - tl_suff_fast: cell weights from item weights (one O(n) pass), then the cell sweep;
 *   - a study: the items are grouped once into JOINT cells over (human, metric_1..M); a resample
 *     adds its n draws into the joint table and each metric's cell table is a marginal of it
 *     (O(n + M * J) per resample, J <= n joint cells: J is tiny when the scores have few levels);
 *   - the jackknife: leaving item i out only decrements the weight of its cell, so items of one
 *     cell share one value (one evaluation per distinct cell);
 *   - the permutation test: a permuted metric takes, per item, one of two precomputed cells.
 * All counts are int64 integers, so every path gives the same tl_suff as the literal definition
 * (tl_suff_reference) and therefore bit-identical statistics. */
#include "tally/boot.h"

#include <Random123/philox.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "boot_int.h"
#include "tally/stats.h"

/* ---------------------------------------------------------------------------------------------
 * Resampling
 * ------------------------------------------------------------------------------------------- */

/* floor(u * n / 2^64) for n < 2^32 without 128-bit arithmetic: with u = uh 2^32 + ul,
 * u n = (uh n) 2^32 + ul n, and floor((uh n + floor(ul n / 2^32)) / 2^32) is the same integer
 * (uh n + (ul n >> 32) < 2^64, no overflow). Equal to ((unsigned __int128)u * n) >> 64 (tested);
 * on CUDA: __umul64hi(u, n). */
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

/* All n indices of resample r into idx[n] (one Philox block per two indices). */
static void boot_draw(uint64_t seed, uint64_t r, uint32_t n, uint32_t stream, uint32_t *idx) {
  uint32_t j = 0;
  for (; j + 1 < n; j += 2) {
    philox4x32_ctr_t o = boot_block(seed, r, j >> 1, stream);
    idx[j] = mulhi_u64_u32((uint64_t)o.v[0] | ((uint64_t)o.v[1] << 32), n);
    idx[j + 1] = mulhi_u64_u32((uint64_t)o.v[2] | ((uint64_t)o.v[3] << 32), n);
  }
  if (j < n) {
    philox4x32_ctr_t o = boot_block(seed, r, j >> 1, stream);
    idx[j] = mulhi_u64_u32((uint64_t)o.v[0] | ((uint64_t)o.v[1] << 32), n);
  }
}

void tl_boot_counts(uint64_t seed, uint64_t r, uint32_t n, int32_t *w) {
  memset(w, 0, (size_t)n * sizeof *w);
  uint32_t j = 0;
  for (; j + 1 < n; j += 2) {
    philox4x32_ctr_t o = boot_block(seed, r, j >> 1, 0);
    w[mulhi_u64_u32((uint64_t)o.v[0] | ((uint64_t)o.v[1] << 32), n)]++;
    w[mulhi_u64_u32((uint64_t)o.v[2] | ((uint64_t)o.v[3] << 32), n)]++;
  }
  if (j < n) {
    philox4x32_ctr_t o = boot_block(seed, r, j >> 1, 0);
    w[mulhi_u64_u32((uint64_t)o.v[0] | ((uint64_t)o.v[1] << 32), n)]++;
  }
}

int tl_boot_perm_swap(uint64_t seed, uint64_t r, uint32_t i) {
  philox4x32_ctr_t o = boot_block(seed, r, i >> 2, 1);
  return (int)(o.v[i & 3u] & 1u);
}

/* swap[0..n) of permutation r (same bits as tl_boot_perm_swap, one block per 4 items). */
static void perm_swaps(uint64_t seed, uint64_t r, uint32_t n, uint8_t *swap) {
  for (uint32_t i = 0; i < n; i += 4) {
    philox4x32_ctr_t o = boot_block(seed, r, i >> 2, 1);
    for (uint32_t t = 0; t < 4 && i + t < n; t++) swap[i + t] = (uint8_t)(o.v[t] & 1u);
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

/* tl_suff of the weighted sample whose cell c has weight cw[c] >= 0 (cells sorted by (x, y)).
 * Doubled average rank of a level with weight W and weight C below it: 2C + W + 1 (the average
 * of the 1-based positions C+1 .. C+W, times 2). One sweep over the x groups in ascending order:
 *   sab += a_x * sum_{cells of x} W b_y;  saa += W_x a_x^2;  xtie += C(W_x, 2);  ntie += C(W, 2);
 *   dis += W * #(earlier items with y > y of the cell) (Fenwick tree over y levels; the group is
 *   inserted after it is processed, so pairs tied in x are not counted: scipy _kendall_dis). */
static void suff_from_cells(const cells *c, const int64_t *cw, cell_scratch *sc, tl_suff *o) {
  const uint32_t Ly = c->Ly, nc = c->ncells;
  int64_t *wy = sc->wy, *by = sc->by, *fen = sc->fen;
  memset(wy, 0, (size_t)Ly * sizeof *wy);
  memset(fen, 0, (size_t)(Ly + 1) * sizeof *fen);
  for (uint32_t k = 0; k < nc; k++) wy[c->yl[k]] += cw[k];
  int64_t N = 0, sbb = 0, ytie = 0, my = 0;
  for (uint32_t l = 0; l < Ly; l++) {
    int64_t W = wy[l], b = 2 * N + W + 1;
    by[l] = b;
    sbb += W * b * b;
    ytie += W * (W - 1) / 2;
    my += W > 0;
    N += W;
  }
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
  o->N = N;
  o->sab = sab;
  o->saa = saa;
  o->sbb = sbb;
  o->n0 = N * (N - 1) / 2;
  o->xtie = xtie;
  o->ytie = ytie;
  o->ntie = ntie;
  o->dis = dis;
  o->mx = mx;
  o->my = my;
}

/* ---------------------------------------------------------------------------------------------
 * tl_suff: fast path, reference, statistics
 * ------------------------------------------------------------------------------------------- */

struct tl_suff_ws {
  uint32_t n;
  cells c;
  uint32_t *cellid; /* [n] cell of item i */
  int64_t *cw;      /* [ncells] */
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
  uint32_t J;        /* joint cells over (human, metric_1..M) */
  uint32_t *jid;     /* [n] */
  uint32_t *jmap;    /* [M][J] joint cell -> cell of metric k */
  uint32_t maxcells;
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
  free(s->jid);
  free(s->jmap);
  free(s);
}

/* Joint cell id of each item over the level tuple (human, metric_0, ..., metric_{M-1}): stable
 * counting sorts from the last key to the first, then runs of equal tuples. */
static int joint_ids(tl_study *s) {
  const uint32_t n = s->n;
  uint32_t L = s->h.nlevels;
  for (int k = 0; k < s->M; k++) L = s->m[k].nlevels > L ? s->m[k].nlevels : L;
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
    const uint32_t *lv = k == 0 ? s->h.level : s->m[k - 1].level;
    memset(cnt, 0, (size_t)(L + 1) * sizeof *cnt);
    for (uint32_t i = 0; i < n; i++) cnt[lv[i] + 1]++;
    for (uint32_t l = 1; l <= L; l++) cnt[l] += cnt[l - 1];
    for (uint32_t t = 0; t < n; t++) b[cnt[lv[a[t]]]++] = a[t];
    uint32_t *sw = a;
    a = b;
    b = sw;
  }
  uint32_t J = 0;
  for (uint32_t t = 0; t < n; t++) {
    int same = t > 0 && s->h.level[a[t]] == s->h.level[a[t - 1]];
    for (int k = 0; same && k < s->M; k++) same = s->m[k].level[a[t]] == s->m[k].level[a[t - 1]];
    if (!same) J++;
    s->jid[a[t]] = J - 1;
  }
  s->J = J;
  free(a);
  free(b);
  free(cnt);
  return 0;
}

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
  s->m = calloc((size_t)M, sizeof *s->m);
  s->c = calloc((size_t)M, sizeof *s->c);
  s->z = malloc((size_t)M * n * sizeof *s->z);
  s->cellid = malloc((size_t)M * n * sizeof *s->cellid);
  s->jid = malloc((size_t)n * sizeof *s->jid);
  if (!s->m || !s->c || !s->z || !s->cellid || !s->jid) goto oom;
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
  if (joint_ids(s) != 0) goto oom;
  s->jmap = malloc((size_t)M * s->J * sizeof *s->jmap);
  if (!s->jmap) goto oom;
  for (int k = 0; k < M; k++)
    for (uint32_t i = 0; i < n; i++) s->jmap[(size_t)k * s->J + s->jid[i]] = s->cellid[(size_t)k * n + i];
  *out = s;
  return TL_OK;
oom:
  tl_study_free(s);
  return tl_err_set(err, TL_ENOMEM, "out of memory (bootstrap study of %u items)", n);
}

/* Per-call workspace of the resample loop. */
typedef struct {
  uint32_t *idx; /* [n] */
  int64_t *jw;   /* [J] */
  int64_t *cw;   /* [maxcells] */
  cell_scratch sc;
} study_ws;

static void study_ws_release(study_ws *w) {
  free(w->idx);
  free(w->jw);
  free(w->cw);
  scratch_release(&w->sc);
}

static int study_ws_init(const tl_study *s, study_ws *w) {
  memset(w, 0, sizeof *w);
  w->idx = malloc((size_t)s->n * sizeof *w->idx);
  w->jw = malloc((size_t)s->J * sizeof *w->jw);
  w->cw = malloc((size_t)(s->maxcells + 1) * sizeof *w->cw);
  if (!w->idx || !w->jw || !w->cw || scratch_init(&w->sc, s->h.nlevels) != 0) {
    study_ws_release(w);
    return -1;
  }
  return 0;
}

/* Values of all (metric, stat) for the joint-cell weights in w->jw. */
static void study_eval(const tl_study *s, study_ws *w, double *out) {
  for (int k = 0; k < s->M; k++) {
    const uint32_t *map = s->jmap + (size_t)k * s->J;
    memset(w->cw, 0, (size_t)s->c[k].ncells * sizeof *w->cw);
    for (uint32_t j = 0; j < s->J; j++) w->cw[map[j]] += w->jw[j];
    tl_suff sf;
    suff_from_cells(&s->c[k], w->cw, &w->sc, &sf);
    for (int t = 0; t < s->S; t++) out[k * s->S + t] = stat_of(s->st[t], &sf);
  }
}

tl_status tl_study_resamples(const tl_study *s, uint64_t r0, uint64_t r1, double *out) {
  if (r0 > r1 || r1 > s->B) return TL_EINPUT;
  study_ws w;
  if (study_ws_init(s, &w) != 0) return TL_ENOMEM;
  const size_t K = (size_t)s->M * s->S;
  const uint32_t n = s->n;
  for (uint64_t r = r0; r < r1; r++) {
    const uint32_t *idx = w.idx;
    if (s->indices)
      idx = s->indices + r * n;
    else
      boot_draw(s->seed, r, n, 0, w.idx);
    memset(w.jw, 0, (size_t)s->J * sizeof *w.jw);
    for (uint32_t j = 0; j < n; j++) w.jw[s->jid[idx[j]]]++;
    study_eval(s, &w, out + (r - r0) * K);
  }
  study_ws_release(&w);
  return TL_OK;
}

void tl_study_full(const tl_study *s, double *out) {
  study_ws w;
  const size_t K = (size_t)s->M * s->S;
  if (study_ws_init(s, &w) != 0) {
    for (size_t k = 0; k < K; k++) out[k] = NAN;
    return;
  }
  memset(w.jw, 0, (size_t)s->J * sizeof *w.jw);
  for (uint32_t i = 0; i < s->n; i++) w.jw[s->jid[i]]++;
  study_eval(s, &w, out);
  study_ws_release(&w);
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

/* scipy passes q*100 to np.percentile, which divides by 100. */
static double pct_q(double q) { return (q * 100.0) / 100.0; }

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

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
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
  if (method == TL_CI_BCA) {
    double z0 = tl_boot_bca_z0(v, nd, estimate);
    double acc = tl_boot_bca_accel(jack, n);
    if (nd > 1) qsort(v, nd, sizeof *v, cmp_double);
    tl_boot_bca_ci(v, nd, z0, acc, level, &o->ci_lo, &o->ci_hi);
  } else {
    if (nd > 1) qsort(v, nd, sizeof *v, cmp_double);
    tl_boot_percentile_ci(v, nd, level, &o->ci_lo, &o->ci_hi);
  }
}

/* Jackknife tasks: one per (metric k, cell q of metric k), flattened metric-major; task t's
 * values are the statistics with one item of that cell left out (every item of a cell shares
 * them). */
size_t tl_study_jack_tasks(const tl_study *s) {
  size_t T = 0;
  for (int k = 0; k < s->M; k++) T += s->c[k].ncells;
  return T;
}

tl_status tl_study_jack_values(const tl_study *s, size_t t0, size_t t1, double *cv) {
  const uint32_t n = s->n;
  const int S = s->S;
  int64_t *cw = malloc((size_t)(s->maxcells + 1) * sizeof *cw);
  cell_scratch sc;
  int ok = cw && scratch_init(&sc, s->h.nlevels) == 0;
  size_t base = 0;
  for (int k = 0; ok && k < s->M && base < t1; k++) {
    const cells *c = &s->c[k];
    size_t end = base + c->ncells;
    if (end > t0) {
      const uint32_t *id = s->cellid + (size_t)k * n;
      memset(cw, 0, (size_t)c->ncells * sizeof *cw);
      for (uint32_t i = 0; i < n; i++) cw[id[i]]++;
      size_t q0 = t0 > base ? t0 - base : 0, q1 = (t1 < end ? t1 : end) - base;
      for (size_t q = q0; q < q1; q++) {
        tl_suff sf;
        cw[q]--;
        suff_from_cells(c, cw, &sc, &sf);
        cw[q]++;
        for (int t = 0; t < S; t++) cv[(base + q - t0) * (size_t)S + (size_t)t] = stat_of(s->st[t], &sf);
      }
    }
    base = end;
  }
  if (cw) scratch_release(&sc);
  free(cw);
  return ok ? TL_OK : TL_ENOMEM;
}

/* Expands all jackknife task values cv[T][S] to jack[(k*S + t) * n + i] (item i left out). */
static void jack_expand(const tl_study *s, const double *cv, double *jack) {
  const uint32_t n = s->n;
  const int S = s->S;
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
  int64_t *tot;      /* [ncells] */
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
static void perm_delta(const tl_study *s, const perm_pair *pp, const uint8_t *swap, int64_t *cwa,
                       int64_t *cwb, cell_scratch *sc, double *delta) {
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
    for (uint32_t q = 0; q < nc; q++) cwa[q] = (int64_t)t4[0][q] + t4[1][q] + t4[2][q] + t4[3][q];
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
  uint8_t *swap = malloc(n ? n : 1);
  double *obs = malloc((size_t)(P ? P : 1) * S * sizeof *obs);
  uint32_t maxc = 0;
  int npp = 0, rc = -1;
  int64_t *cwa = NULL, *cwb = NULL;
  cell_scratch sc = {0};
  memset(cnt, 0, (size_t)P * S * sizeof *cnt);
  if (!pp || !swap || !obs) goto done;
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
    perm_swaps(s->seed, r, n, swap);
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
  const size_t K = (size_t)M * S, n = s->n;
  const uint64_t B = s->B;
  tl_status st = TL_ENOMEM;
  double *full = malloc(K * sizeof *full);
  double *v = malloc((size_t)(B ? B : 1) * sizeof *v);
  double *va = malloc((size_t)(B ? B : 1) * sizeof *va), *vb = malloc((size_t)(B ? B : 1) * sizeof *vb);
  double *jack = method == TL_CI_BCA ? malloc(K * n * sizeof *jack) : NULL;
  double *jd = method == TL_CI_BCA ? malloc(n * sizeof *jd) : NULL;
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
    summarize_one(v, nd, B, full[k], jack ? jack + k * n : NULL, n, level, method, &per[k]);
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
          for (size_t i = 0; i < n; i++) jd[i] = jack[ka * n + i] - jack[kb * n + i];
        c->p_boot = nd ? fmin(1.0, 2.0 * (double)(le < ge ? le : ge) / (double)nd) : NAN;
        c->p_ttest_compat = tl_ttest_rel_p(va, vb, nd, &c->t_ttest_compat);
        summarize_one(v, nd, B, full[ka] - full[kb], jd, n, level, method, &c->diff);
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
