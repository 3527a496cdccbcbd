/* test_boot.c - the bootstrap engine (tally/boot.h): exact sufficient statistics against the
 * literal definitions, resampling invariance, the explicit index path against tl_spearman /
 * tl_kendall and scipy, the interval arithmetic, comparisons, and row-order invariance; the
 * AVX2 Philox draws and the one-pass sweep against the scalar code, the closed-form jackknife
 * against the O(cells^2) one, and every resampling layout against tl_suff_fast (section 6). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <unistd.h>

#include <Random123/philox.h>

#include "testutil.h"
#include "boot_int.h"
#include "tally/boot.h"
#include "tally/stats.h"

/* ---- helpers ---- */

static uint64_t rnd(uint64_t *st) { /* splitmix64 */
  uint64_t z = (*st += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double rnd01(uint64_t *st) { return (double)(rnd(st) >> 11) * 0x1.0p-53; }

/* kind 0: L in [2,5] levels; 1: continuous; 2: continuous rounded to 1/8 (some ties); 3: constant */
static void gen_values(double *v, uint32_t n, int kind, uint64_t *st) {
  uint32_t L = 2 + (uint32_t)(rnd(st) % 4);
  for (uint32_t i = 0; i < n; i++) {
    switch (kind) {
      case 0: v[i] = (double)(rnd(st) % L) * 0.25; break;
      case 1: v[i] = rnd01(st) * 2.0 - 1.0; break;
      case 2: v[i] = round(rnd01(st) * 8.0) / 8.0; break;
      default: v[i] = 0.5; break;
    }
  }
}

/* kind 0: bootstrap counts; 1: random 0..3; 2: all ones; 3: mostly zero */
static void gen_weights(int32_t *w, uint32_t n, int kind, uint64_t *st) {
  if (kind == 0) {
    tl_boot_counts(rnd(st), rnd(st) % 1000, n, w);
    return;
  }
  for (uint32_t i = 0; i < n; i++)
    w[i] = kind == 1 ? (int32_t)(rnd(st) % 4) : kind == 2 ? 1 : (rnd(st) % 5 == 0 ? (int32_t)(rnd(st) % 3) : 0);
}

static void assert_close(double got, double want, double tol, const char *what) {
  if (isnan(want) || isnan(got)) {
    if (!(isnan(want) && isnan(got))) fail_msg("%s: got %.17g, want %.17g", what, got, want);
    return;
  }
  if (!(fabs(got - want) <= tol)) fail_msg("%s: got %.17g, want %.17g (|d| = %.3g)", what, got, want, fabs(got - want));
}

static int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static tl_suff fast_suff(const double *x, const double *y, const int32_t *w, uint32_t n) {
  tl_dense dx, dy;
  tl_pair p;
  assert_int_equal(tl_dense_init(&dx, x, n), TL_OK);
  assert_int_equal(tl_dense_init(&dy, y, n), TL_OK);
  assert_int_equal(tl_pair_init(&p, &dx, &dy), TL_OK);
  tl_suff_ws *ws = tl_suff_ws_new(&p);
  assert_non_null(ws);
  tl_suff s;
  tl_suff_fast(&p, w, ws, &s);
  tl_suff_ws_free(ws);
  tl_pair_release(&p);
  tl_dense_release(&dx);
  tl_dense_release(&dy);
  return s;
}

static char *read_all(FILE *f, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  char *b = malloc(cap);
  assert_non_null(b);
  size_t got;
  while ((got = fread(b + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n - 1 == 0) {
      cap *= 2;
      b = realloc(b, cap);
      assert_non_null(b);
    }
  }
  b[n] = 0;
  if (len) *len = n;
  return b;
}

static double *json_doubles(const cJSON *arr, uint32_t *n) {
  *n = (uint32_t)cJSON_GetArraySize(arr);
  double *v = malloc((size_t)(*n ? *n : 1) * sizeof *v);
  assert_non_null(v);
  uint32_t i = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, arr) v[i++] = cJSON_IsNumber(e) ? e->valuedouble : NAN;
  return v;
}

static cJSON *load_vectors(void) {
  const char *path = tu_shared_path("stats/scipy_vectors.json");
  if (!path) return NULL;
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  char *text = read_all(f, NULL);
  fclose(f);
  /* Python writes NaN, which cJSON does not parse: rewrite it as null */
  size_t n = strlen(text), cnt = 0;
  for (const char *p = text; (p = strstr(p, "NaN")) != NULL; p += 3) cnt++;
  char *fixed = malloc(n + cnt + 1), *o = fixed;
  assert_non_null(fixed);
  for (const char *p = text; *p;) {
    if (strncmp(p, "NaN", 3) == 0) {
      memcpy(o, "null", 4);
      o += 4;
      p += 3;
    } else {
      *o++ = *p++;
    }
  }
  *o = 0;
  free(text);
  cJSON *j = cJSON_Parse(fixed);
  free(fixed);
  assert_non_null(j);
  return j;
}

/* ---- 0. the index draw ---- */

static void test_index_draw(void **state) {
  (void)state;
  static const struct {
    uint64_t seed, r;
    uint32_t n;
  } T[] = {{0, 0, 1}, {1, 2, 2}, {42, 7, 200}, {0xdeadbeefcafef00dull, 1ull << 40, 22050},
           {123, 99, 0xffffffffu}, {5, 5, 3}};
  for (size_t t = 0; t < sizeof T / sizeof T[0]; t++)
    for (uint32_t j = 0; j < 64; j++)
      for (uint32_t stream = 0; stream < 2; stream++) {
        /* the documented definition, with 128-bit arithmetic */
        philox4x32_ctr_t c = {{j / 2, (uint32_t)T[t].r, (uint32_t)(T[t].r >> 32), stream}};
        philox4x32_key_t k = {{(uint32_t)T[t].seed, (uint32_t)(T[t].seed >> 32)}};
        philox4x32_ctr_t o = philox4x32(c, k);
        uint64_t u = (uint64_t)o.v[2 * (j & 1)] | ((uint64_t)o.v[2 * (j & 1) + 1] << 32);
        __extension__ unsigned __int128 prod = (unsigned __int128)u * T[t].n;
        uint32_t want = (uint32_t)(prod >> 64);
        assert_int_equal(tl_boot_index(T[t].seed, T[t].r, j, T[t].n, stream), want);
        assert_true(want < T[t].n);
        if (stream == 1 && j < 16) { /* the permutation swap bits */
          philox4x32_ctr_t c4 = {{j / 4, (uint32_t)T[t].r, (uint32_t)(T[t].r >> 32), 1}};
          assert_int_equal(tl_boot_perm_swap(T[t].seed, T[t].r, j), (int)(philox4x32(c4, k).v[j % 4] & 1));
        }
      }
  /* counts: sum n, equal to the per-j draws, reproducible, differ across r; uniform (chi^2) */
  enum { N = 1001, R = 400 };
  int32_t w[N], w2[N];
  double expect = (double)R, chi = 0;
  static int64_t tot[N];
  memset(tot, 0, sizeof tot);
  for (uint64_t r = 0; r < R; r++) {
    tl_boot_counts(77, r, N, w);
    int64_t sum = 0;
    int32_t check[N];
    memset(check, 0, sizeof check);
    for (uint32_t j = 0; j < N; j++) check[tl_boot_index(77, r, j, N, 0)]++;
    for (uint32_t i = 0; i < N; i++) {
      sum += w[i];
      tot[i] += w[i];
    }
    assert_int_equal(sum, N);
    assert_memory_equal(w, check, sizeof w);
    tl_boot_counts(77, r, N, w2);
    assert_memory_equal(w, w2, sizeof w);
    tl_boot_counts(77, r + 1, N, w2);
    assert_memory_not_equal(w, w2, sizeof w);
    tl_boot_counts(78, r, N, w2);
    assert_memory_not_equal(w, w2, sizeof w);
  }
  for (uint32_t i = 0; i < N; i++) chi += ((double)tot[i] - expect) * ((double)tot[i] - expect) / expect;
  /* chi^2 with 1000 df: mean 1000, sd ~ 45; a biased draw (e.g. modulo of 16 bits) is far off */
  assert_true(chi > 800 && chi < 1200);
}

/* ---- 1. tl_suff_fast == tl_suff_reference, and the statistics vs stats.h ---- */

static void test_suff_exact(void **state) {
  (void)state;
  uint64_t st = 12345;
  double *x = malloc(300 * sizeof *x), *y = malloc(300 * sizeof *y);
  double *ex = malloc(1200 * sizeof *ex), *ey = malloc(1200 * sizeof *ey);
  int32_t *w = malloc(300 * sizeof *w);
  int ncases = 0, nnan = 0;
  double maxerr = 0;
  for (int c = 0; c < 600; c++) {
    uint32_t n = c < 12 ? (uint32_t)c + 1 : 1 + (uint32_t)(rnd(&st) % 300);
    int kx = (int)(rnd(&st) % 3), ky = (int)(rnd(&st) % 3), kw = (int)(rnd(&st) % 4);
    if (c % 50 == 7) ky = 3; /* constant human score */
    gen_values(x, n, kx, &st);
    gen_values(y, n, ky, &st);
    gen_weights(w, n, kw, &st);
    tl_suff f = fast_suff(x, y, w, n), r;
    tl_suff_reference(x, y, w, n, &r);
    if (memcmp(&f, &r, sizeof f) != 0)
      fail_msg("case %d (n %u, kinds %d %d %d): fast N %lld sab %lld saa %lld sbb %lld xt %lld yt %lld nt %lld dis %lld"
               " mx %lld my %lld; ref N %lld sab %lld saa %lld sbb %lld xt %lld yt %lld nt %lld dis %lld mx %lld my %lld",
               c, n, kx, ky, kw, (long long)f.N, (long long)f.sab, (long long)f.saa, (long long)f.sbb,
               (long long)f.xtie, (long long)f.ytie, (long long)f.ntie, (long long)f.dis, (long long)f.mx,
               (long long)f.my, (long long)r.N, (long long)r.sab, (long long)r.saa, (long long)r.sbb,
               (long long)r.xtie, (long long)r.ytie, (long long)r.ntie, (long long)r.dis, (long long)r.mx,
               (long long)r.my);
    /* the expanded sample through the stats.h reference */
    size_t N = 0;
    for (uint32_t i = 0; i < n; i++)
      for (int32_t k = 0; k < w[i]; k++) {
        ex[N] = x[i];
        ey[N] = y[i];
        N++;
      }
    assert_int_equal(N, f.N);
    if (N == 0) continue;
    tl_spearman_res sp = tl_spearman(ex, ey, N);
    tl_kendall_res kd = tl_kendall(ex, ey, N);
    double got[3] = {tl_suff_spearman(&f), tl_suff_kendall_b(&f), tl_suff_kendall_c(&f)};
    double want[3] = {sp.rho, kd.tau_b, kd.tau_c};
    for (int k = 0; k < 3; k++) {
      char what[64];
      snprintf(what, sizeof what, "case %d stat %d", c, k);
      assert_close(got[k], want[k], 1e-12, what);
      if (!isnan(want[k]) && fabs(got[k] - want[k]) > maxerr) maxerr = fabs(got[k] - want[k]);
      nnan += isnan(got[k]);
    }
    assert_int_equal(kd.dis, f.dis);
    assert_int_equal(kd.ntie, f.ntie);
    ncases++;
  }
  print_message("suff: %d weighted cases exact; max |stat - stats.h| = %.3g; %d NaN statistics\n",
                ncases, maxerr, nnan);
  assert_true(nnan > 0); /* the undefined cases were exercised */
  free(x);
  free(y);
  free(ex);
  free(ey);
  free(w);
}

static void test_suff_scipy_vectors(void **state) {
  (void)state;
  TU_NEED_SHARED(path, "stats/scipy_vectors.json");
  (void)path;
  cJSON *j = load_vectors();
  const cJSON *c;
  double maxerr = 0;
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "cases")) {
    uint32_t n, ny;
    double *x = json_doubles(cJSON_GetObjectItem(c, "x"), &n), *y = json_doubles(cJSON_GetObjectItem(c, "y"), &ny);
    assert_int_equal(n, ny);
    int32_t *w = malloc(n * sizeof *w);
    for (uint32_t i = 0; i < n; i++) w[i] = 1;
    tl_suff s = fast_suff(x, y, w, n);
    const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
    static const char *keys[3] = {"spearman_rho", "kendall_tau_b", "kendall_tau_c"};
    double got[3] = {tl_suff_spearman(&s), tl_suff_kendall_b(&s), tl_suff_kendall_c(&s)};
    for (int k = 0; k < 3; k++) {
      const cJSON *v = cJSON_GetObjectItem(c, keys[k]);
      double want = cJSON_IsNumber(v) ? v->valuedouble : NAN;
      char what[128];
      snprintf(what, sizeof what, "%s %s", name, keys[k]);
      assert_close(got[k], want, 1e-12, what);
      if (!isnan(want) && fabs(got[k] - want) > maxerr) maxerr = fabs(got[k] - want);
    }
    free(x);
    free(y);
    free(w);
  }
  print_message("scipy_vectors cases: max |err| = %.3g\n", maxerr);
  cJSON_Delete(j);
}

/* ---- study fixtures ---- */

typedef struct {
  uint32_t n;
  int M;
  double *h, *m[4];
  const double *mp[4];
} fixture;

/* The paired_bootstrap_demo of scipy_vectors.json (human, metric1, metric2) as a fixture. */
static void demo_fixture(fixture *f, const cJSON *d) {
  memset(f, 0, sizeof *f);
  f->M = 2;
  f->h = json_doubles(cJSON_GetObjectItem(d, "human"), &f->n);
  f->m[0] = json_doubles(cJSON_GetObjectItem(d, "metric1"), &f->n);
  f->m[1] = json_doubles(cJSON_GetObjectItem(d, "metric2"), &f->n);
  f->mp[0] = f->m[0];
  f->mp[1] = f->m[1];
}

static void fixture_make(fixture *f, uint32_t n, int M, uint64_t seed, int continuous) {
  uint64_t st = seed;
  f->n = n;
  f->M = M;
  f->h = malloc(n * sizeof *f->h);
  for (uint32_t i = 0; i < n; i++) f->h[i] = (double)(rnd(&st) % 3) * 0.5;
  for (int k = 0; k < M; k++) {
    f->m[k] = malloc(n * sizeof *f->m[k]);
    for (uint32_t i = 0; i < n; i++) {
      double noise = rnd01(&st);
      double v = f->h[i] + (0.3 + 0.3 * k) * (noise - 0.5) * 2;
      f->m[k][i] = continuous && k % 2 ? v : round(v * 4) / 4; /* <= ~5 levels or continuous */
    }
    f->mp[k] = f->m[k];
  }
}

static void fixture_free(fixture *f) {
  free(f->h);
  for (int k = 0; k < f->M; k++) free(f->m[k]);
}

static tl_study *study_of(const fixture *f, uint64_t seed, uint64_t B, const uint32_t *indices) {
  tl_study_in in = {0};
  in.n = f->n;
  in.human = f->h;
  in.nmetrics = f->M;
  in.metric = f->mp;
  in.nstats = 2;
  in.stats[0] = TL_STAT_SPEARMAN;
  in.stats[1] = TL_STAT_KENDALL_B;
  in.seed = seed;
  in.B = B;
  in.indices = indices;
  tl_study *s = NULL;
  tl_err err;
  if (tl_study_new(&in, &s, &err) != TL_OK) fail_msg("%s", err.msg);
  return s;
}

/* ---- 2. resampling invariance ---- */

static void test_resample_invariance(void **state) {
  (void)state;
  for (int cont = 0; cont < 2; cont++) {
    fixture f;
    fixture_make(&f, 157, 3, 99 + cont, cont);
    const uint64_t B = 60;
    const size_t K = 6;
    tl_study *s = study_of(&f, 2024, B, NULL);
    double *all = malloc(B * K * sizeof *all), *chunk = malloc(B * K * sizeof *chunk);
    assert_int_equal(tl_study_resamples(s, 0, B, all), TL_OK);
    static const uint64_t cuts[][3] = {{0, 7, 60}, {0, 1, 60}, {0, 59, 60}, {0, 30, 60}};
    for (size_t c = 0; c < 4; c++) {
      memset(chunk, 0, B * K * sizeof *chunk);
      assert_int_equal(tl_study_resamples(s, cuts[c][0], cuts[c][1], chunk), TL_OK);
      assert_int_equal(tl_study_resamples(s, cuts[c][1], cuts[c][2], chunk + cuts[c][1] * K), TL_OK);
      assert_memory_equal(all, chunk, B * K * sizeof *all);
    }
    /* each resample value equals tl_suff_fast on tl_boot_counts (bitwise) */
    tl_dense dh, dm[3];
    tl_pair p[3];
    tl_suff_ws *ws[3];
    assert_int_equal(tl_dense_init(&dh, f.h, f.n), TL_OK);
    for (int k = 0; k < 3; k++) {
      assert_int_equal(tl_dense_init(&dm[k], f.m[k], f.n), TL_OK);
      assert_int_equal(tl_pair_init(&p[k], &dm[k], &dh), TL_OK);
      ws[k] = tl_suff_ws_new(&p[k]);
    }
    int32_t *w = malloc(f.n * sizeof *w);
    int differ = 0;
    for (uint64_t r = 0; r < B; r++) {
      tl_boot_counts(2024, r, f.n, w);
      for (int k = 0; k < 3; k++) {
        tl_suff sf;
        tl_suff_fast(&p[k], w, ws[k], &sf);
        assert_true(same_double(all[r * K + 2 * k], tl_suff_spearman(&sf)));
        assert_true(same_double(all[r * K + 2 * k + 1], tl_suff_kendall_b(&sf)));
      }
      if (r > 0 && !same_double(all[r * K], all[(r - 1) * K])) differ++;
    }
    assert_true(differ > (int)B / 2);
    /* the full data */
    double full[6];
    tl_study_full(s, full);
    for (uint32_t i = 0; i < f.n; i++) w[i] = 1;
    for (int k = 0; k < 3; k++) {
      tl_suff sf;
      tl_suff_fast(&p[k], w, ws[k], &sf);
      assert_true(same_double(full[2 * k], tl_suff_spearman(&sf)));
      tl_suff_ws_free(ws[k]);
      tl_pair_release(&p[k]);
      tl_dense_release(&dm[k]);
    }
    tl_dense_release(&dh);
    /* a different seed gives different values; out-of-range requests are refused */
    tl_study *s2 = study_of(&f, 2025, B, NULL);
    assert_int_equal(tl_study_resamples(s2, 0, B, chunk), TL_OK);
    assert_memory_not_equal(all, chunk, B * K * sizeof *all);
    assert_int_equal(tl_study_resamples(s2, 5, 4, chunk), TL_EINPUT);
    assert_int_equal(tl_study_resamples(s2, 0, B + 1, chunk), TL_EINPUT);
    tl_study_free(s2);
    free(w);
    free(all);
    free(chunk);
    tl_study_free(s);
    fixture_free(&f);
  }
}

/* ---- 3. explicit index matrix ---- */

static void check_indices(const fixture *f, const uint32_t *idx, uint64_t B, const double *scipy_vals) {
  tl_study *s = study_of(f, 1, B, idx);
  const size_t K = (size_t)f->M * 2;
  double *vals = malloc(B * K * sizeof *vals);
  assert_int_equal(tl_study_resamples(s, 0, B, vals), TL_OK);
  double *rh = malloc(f->n * sizeof *rh), *rm = malloc(f->n * sizeof *rm);
  double maxerr = 0, maxerr_scipy = 0;
  for (uint64_t r = 0; r < B; r++)
    for (int k = 0; k < f->M; k++) {
      for (uint32_t j = 0; j < f->n; j++) {
        rh[j] = f->h[idx[r * f->n + j]];
        rm[j] = f->m[k][idx[r * f->n + j]];
      }
      double want[2] = {tl_spearman(rm, rh, f->n).rho, tl_kendall(rm, rh, f->n).tau_b};
      for (int t = 0; t < 2; t++) {
        double got = vals[r * K + (size_t)k * 2 + t];
        assert_close(got, want[t], 1e-12, "indices vs stats.h");
        if (!isnan(got)) maxerr = fmax(maxerr, fabs(got - want[t]));
        if (scipy_vals) {
          double sv = scipy_vals[(r * f->M + k) * 2 + t];
          assert_close(got, sv, 1e-12, "indices vs scipy");
          if (!isnan(got)) maxerr_scipy = fmax(maxerr_scipy, fabs(got - sv));
        }
      }
    }
  print_message("indices: B %llu, max |err| vs stats.h %.3g%s", (unsigned long long)B, maxerr,
                scipy_vals ? "" : "\n");
  if (scipy_vals) print_message(", vs scipy %.3g\n", maxerr_scipy);
  free(rh);
  free(rm);
  free(vals);
  tl_study_free(s);
}

static const char *PY_INDICES =
    "import json, sys\n"
    "import numpy as np, scipy.stats as ss\n"
    "d = json.loads(open(sys.argv[1]).read().replace('NaN', 'null'))['paired_bootstrap_demo']\n"
    "h = np.array(d['human']); ms = [np.array(d['metric1']), np.array(d['metric2'])]\n"
    "idx = np.vstack([np.array(d['index_rows_first3']), np.random.default_rng(7).integers(0, len(h), (50, len(h)))])\n"
    "vals = []\n"
    "for row in idx:\n"
    "    for m in ms:\n"
    "        vals.append(float(ss.spearmanr(m[row], h[row])[0]))\n"
    "        vals.append(float(ss.kendalltau(m[row], h[row])[0]))\n"
    "print(json.dumps({'idx': idx.tolist(), 'vals': [None if v != v else v for v in vals]}))\n";

static void test_indices(void **state) {
  (void)state;
  /* random index matrices, tie-heavy and continuous, tiny n (constant resamples) included */
  static const struct {
    uint32_t n;
    int cont;
  } T[] = {{3, 0}, {8, 0}, {60, 0}, {60, 1}, {250, 1}};
  uint64_t st = 5;
  for (size_t t = 0; t < sizeof T / sizeof T[0]; t++) {
    fixture f;
    fixture_make(&f, T[t].n, 2, 31 + t, T[t].cont);
    const uint64_t B = 40;
    uint32_t *idx = malloc(B * T[t].n * sizeof *idx);
    for (uint64_t q = 0; q < B * T[t].n; q++) idx[q] = (uint32_t)(rnd(&st) % T[t].n);
    check_indices(&f, idx, B, NULL);
    idx[3] = T[t].n; /* out of range: refused */
    tl_study_in in = {.n = T[t].n, .human = f.h, .nmetrics = 2, .metric = f.mp, .nstats = 1, .B = B, .indices = idx};
    tl_study *s = NULL;
    tl_err err;
    assert_int_equal(tl_study_new(&in, &s, &err), TL_EINPUT);
    assert_non_null(strstr(err.msg, "index matrix"));
    free(idx);
    fixture_free(&f);
  }
  /* scipy on a numpy index matrix (the demo's first 3 rows + 50 more) */
  TU_NEED_SHARED(path, "stats/scipy_vectors.json");
  if (access("/usr/bin/python3", X_OK) != 0) {
    print_message("skipped scipy part: no /usr/bin/python3\n");
    return;
  }
  char script[] = "/tmp/tally-boot-py-XXXXXX";
  int fd = mkstemp(script);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, PY_INDICES, strlen(PY_INDICES)), (ssize_t)strlen(PY_INDICES));
  close(fd);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s '%s' 2>/dev/null", script, path);
  FILE *pf = popen(cmd, "r");
  assert_non_null(pf);
  char *out = read_all(pf, NULL);
  int rc = pclose(pf);
  unlink(script);
  if (rc != 0 || !*out) {
    print_message("skipped scipy part: /usr/bin/python3 lacks numpy/scipy\n");
    free(out);
    return;
  }
  cJSON *j = cJSON_Parse(out);
  free(out);
  assert_non_null(j);
  cJSON *demo = load_vectors();
  const cJSON *d = cJSON_GetObjectItem(demo, "paired_bootstrap_demo");
  fixture f;
  demo_fixture(&f, d);
  const cJSON *rows = cJSON_GetObjectItem(j, "idx"), *row;
  uint64_t B = (uint64_t)cJSON_GetArraySize(rows);
  uint32_t *idx = malloc(B * f.n * sizeof *idx), q = 0;
  cJSON_ArrayForEach(row, rows) {
    const cJSON *e;
    cJSON_ArrayForEach(e, row) idx[q++] = (uint32_t)e->valueint;
  }
  assert_int_equal(q, B * f.n);
  /* the first three rows are the demo's own */
  const cJSON *first3 = cJSON_GetObjectItem(d, "index_rows_first3");
  assert_int_equal(cJSON_GetArrayItem(cJSON_GetArrayItem(first3, 2), 5)->valueint, idx[2 * f.n + 5]);
  uint32_t nv;
  double *sv = json_doubles(cJSON_GetObjectItem(j, "vals"), &nv);
  assert_int_equal(nv, B * 4);
  check_indices(&f, idx, B, sv);
  free(sv);
  free(idx);
  fixture_free(&f);
  cJSON_Delete(j);
  cJSON_Delete(demo);
}

/* ---- 4. summaries ---- */

static void test_interval_math(void **state) {
  (void)state;
  /* numpy.percentile (linear) on [-1, 0.3, 2.5, 7, 7, 11] at q * 100 (numpy divides by 100) */
  const double xs[] = {-1.0, 0.3, 2.5, 7.0, 7.0, 11.0};
  static const double Q[][2] = {{0, -1.0},     {0.025, -0.8375}, {0.25, 0.8500000000000001},
                                {0.5, 4.75},   {0.625, 7.0},     {0.975, 10.5},
                                {1.0, 11.0},   {(100.0 / 3.0) / 100.0, 1.7666666666666673}};
  for (size_t i = 0; i < sizeof Q / sizeof Q[0]; i++)
    assert_close(tl_quantile_sorted(xs, 6, Q[i][0]), Q[i][1], 0, "quantile");
  assert_true(isnan(tl_quantile_sorted(xs, 0, 0.5)));
  assert_close(tl_quantile_sorted(xs, 1, 0.7), -1.0, 0, "quantile n=1");

  /* hand-checked BCa (scipy 1.10.1 _bca_interval arithmetic, values from numpy/scipy):
   * v = 1..10, theta_hat = 4.5: (4 + 4) / 20 = 0.4, z0 = ndtri(0.4);
   * jackknife {1, 2, 4}: U = 2 (7/3 - theta_i), a = 1/6 (sum U^3/27) / (sum U^2/9)^1.5 */
  double v[10];
  for (int i = 0; i < 10; i++) v[i] = i + 1;
  double z0 = tl_boot_bca_z0(v, 10, 4.5);
  assert_close(z0, -0.2533471031357997, 1e-14, "z0");
  const double ti[3] = {1, 2, 4};
  double a = tl_boot_bca_accel(ti, 3);
  assert_close(a, -0.03673889284811708, 1e-15, "acceleration");
  double lo, hi;
  tl_boot_bca_ci(v, 10, z0, a, 0.90, &lo, &hi);
  assert_close(lo, 1.0980965784625034, 1e-12, "bca lo");
  assert_close(hi, 8.720189337997022, 1e-12, "bca hi");
  /* z0 = 0 and a = 0: the percentile interval, exactly */
  double plo, phi;
  for (double level = 0.5; level < 1; level += 0.07) {
    tl_boot_bca_ci(v, 10, 0.0, 0.0, level, &lo, &hi);
    tl_boot_percentile_ci(v, 10, level, &plo, &phi);
    assert_close(lo, plo, 1e-15, "bca(0,0) lo");
    assert_close(hi, phi, 1e-15, "bca(0,0) hi");
  }
  /* degenerate: all jackknife values equal, or every resample below theta_hat -> NaN */
  const double flat[3] = {2, 2, 2};
  assert_true(isnan(tl_boot_bca_accel(flat, 3)));
  assert_true(isinf(tl_boot_bca_z0(v, 10, 100.0)));
  tl_boot_bca_ci(v, 10, tl_boot_bca_z0(v, 10, 100.0), 0.0, 0.95, &lo, &hi);
  assert_true(isnan(lo) && isnan(hi));
}

static void test_summaries_nan_and_bca(void **state) {
  (void)state;
  /* tiny n: some resamples have a constant human score */
  const double h[5] = {0, 0, 0, 0, 1}, m1[5] = {0.1, 0.2, 0.3, 0.4, 0.9}, m2[5] = {0.5, 0.1, 0.2, 0.9, 0.3};
  const double *mp[2] = {m1, m2};
  tl_study_in in = {.n = 5, .human = h, .nmetrics = 2, .metric = mp, .nstats = 2,
                    .stats = {TL_STAT_SPEARMAN, TL_STAT_KENDALL_B}, .seed = 3, .B = 400};
  tl_study *s = NULL;
  assert_int_equal(tl_study_new(&in, &s, NULL), TL_OK);
  double *vals = malloc(400 * 4 * sizeof *vals);
  assert_int_equal(tl_study_resamples(s, 0, 400, vals), TL_OK);
  tl_boot_summary per[4];
  tl_boot_compare cmp[2];
  for (int method = 0; method < 2; method++) {
    assert_int_equal(tl_study_summarize(s, vals, 0.95, (tl_ci_method)method, per, cmp), TL_OK);
    for (int k = 0; k < 4; k++) {
      int64_t nn = 0;
      double sum = 0;
      for (int r = 0; r < 400; r++) {
        if (isnan(vals[r * 4 + k])) nn++;
        else sum += vals[r * 4 + k];
      }
      assert_true(nn > 0); /* P(constant human) = 1 - (1 - 0.8^5)... = 0.33 per resample */
      assert_int_equal(per[k].n_undefined, nn);
      assert_int_equal(per[k].n_defined + per[k].n_undefined, 400);
      assert_close(per[k].boot_mean, sum / (double)(400 - nn), 1e-12, "mean of defined");
    }
    /* the difference: resamples where both are defined */
    assert_int_equal(cmp[0].diff.n_defined, per[0].n_defined);
    assert_int_equal(cmp[0].a, 0);
    assert_int_equal(cmp[0].b, 1);
  }
  tl_study_free(s);
  free(vals);

  /* BCa of the study: recompute it from its parts (jackknife through tl_suff_fast, w_i = 0) */
  fixture f;
  fixture_make(&f, 90, 2, 17, 1);
  const uint64_t B = 300;
  s = study_of(&f, 11, B, NULL);
  vals = malloc(B * 4 * sizeof *vals);
  assert_int_equal(tl_study_resamples(s, 0, B, vals), TL_OK);
  assert_int_equal(tl_study_summarize(s, vals, 0.9, TL_CI_BCA, per, cmp), TL_OK);
  tl_dense dh, dm[2];
  tl_pair p[2];
  tl_suff_ws *ws[2];
  assert_int_equal(tl_dense_init(&dh, f.h, f.n), TL_OK);
  int32_t *w = malloc(f.n * sizeof *w);
  double *jk = malloc(2 * 2 * f.n * sizeof *jk), *sorted = malloc(B * sizeof *sorted), *jd = malloc(f.n * sizeof *jd);
  for (int k = 0; k < 2; k++) {
    assert_int_equal(tl_dense_init(&dm[k], f.m[k], f.n), TL_OK);
    assert_int_equal(tl_pair_init(&p[k], &dm[k], &dh), TL_OK);
    ws[k] = tl_suff_ws_new(&p[k]);
    for (uint32_t i = 0; i < f.n; i++) {
      for (uint32_t q = 0; q < f.n; q++) w[q] = q != i;
      tl_suff sf;
      tl_suff_fast(&p[k], w, ws[k], &sf);
      jk[(k * 2 + 0) * f.n + i] = tl_suff_spearman(&sf);
      jk[(k * 2 + 1) * f.n + i] = tl_suff_kendall_b(&sf);
    }
  }
  double full[4];
  tl_study_full(s, full);
  /* each interval from z0, the jackknife acceleration and the sorted values (insertion sort) */
  for (int k = 0; k < 5; k++) {
    const double *jv;
    double est;
    if (k < 4) {
      jv = jk + k * f.n;
      est = full[k];
      for (uint64_t r = 0; r < B; r++) sorted[r] = vals[r * 4 + k];
    } else { /* the spearman difference metric 0 - metric 1 */
      for (uint32_t i = 0; i < f.n; i++) jd[i] = jk[i] - jk[2 * f.n + i];
      jv = jd;
      est = full[0] - full[2];
      for (uint64_t r = 0; r < B; r++) sorted[r] = vals[r * 4] - vals[r * 4 + 2];
    }
    double z0 = tl_boot_bca_z0(sorted, B, est), acc = tl_boot_bca_accel(jv, f.n);
    for (uint64_t i = 1; i < B; i++)
      for (uint64_t t = i; t > 0 && sorted[t - 1] > sorted[t]; t--) {
        double tmp = sorted[t];
        sorted[t] = sorted[t - 1];
        sorted[t - 1] = tmp;
      }
    double lo, hi;
    tl_boot_bca_ci(sorted, B, z0, acc, 0.9, &lo, &hi);
    const tl_boot_summary *sm = k < 4 ? &per[k] : &cmp[0].diff;
    assert_true(isfinite(lo) && isfinite(hi) && lo < hi);
    assert_true(same_double(sm->ci_lo, lo));
    assert_true(same_double(sm->ci_hi, hi));
    assert_true(same_double(sm->estimate, est));
  }
  for (int k = 0; k < 2; k++) {
    tl_suff_ws_free(ws[k]);
    tl_pair_release(&p[k]);
    tl_dense_release(&dm[k]);
  }
  tl_dense_release(&dh);
  free(w);
  free(jk);
  free(jd);
  free(sorted);
  free(vals);
  tl_study_free(s);
  fixture_free(&f);
}

static void test_demo_comparison(void **state) {
  (void)state;
  TU_NEED_SHARED(path, "stats/scipy_vectors.json");
  (void)path;
  cJSON *j = load_vectors();
  const cJSON *d = cJSON_GetObjectItem(j, "paired_bootstrap_demo");
  fixture f;
  demo_fixture(&f, d);
  const uint64_t B = 5000;
  tl_study *s = study_of(&f, 20240601, B, NULL);
  double *vals = malloc(B * 4 * sizeof *vals);
  assert_int_equal(tl_study_resamples(s, 0, B, vals), TL_OK);
  tl_boot_summary per[4];
  tl_boot_compare cmp[2];
  assert_int_equal(tl_study_summarize(s, vals, 0.95, TL_CI_PERCENTILE, per, cmp), TL_OK);
  assert_close(per[0].estimate, cJSON_GetObjectItem(d, "rho1_full")->valuedouble, 1e-12, "rho1_full");
  assert_close(per[2].estimate, cJSON_GetObjectItem(d, "rho2_full")->valuedouble, 1e-12, "rho2_full");
  /* our draws are not numpy's: the bootstrap summaries agree only statistically */
  assert_close(per[0].boot_mean, cJSON_GetObjectItem(d, "rho1_boot_mean")->valuedouble, 0.005, "rho1 mean");
  const cJSON *ci1 = cJSON_GetObjectItem(d, "rho1_ci95_percentile_linear"), *dci = cJSON_GetObjectItem(d, "diff_ci95");
  assert_close(per[0].ci_lo, cJSON_GetArrayItem(ci1, 0)->valuedouble, 0.015, "rho1 ci lo");
  assert_close(per[0].ci_hi, cJSON_GetArrayItem(ci1, 1)->valuedouble, 0.015, "rho1 ci hi");
  const tl_boot_compare *c = &cmp[0]; /* spearman, metric1 vs metric2 */
  assert_int_equal(c->diff.n_defined, B);
  assert_close(c->diff.ci_lo, cJSON_GetArrayItem(dci, 0)->valuedouble, 0.015, "diff ci lo");
  assert_close(c->diff.ci_hi, cJSON_GetArrayItem(dci, 1)->valuedouble, 0.015, "diff ci hi");
  assert_true(c->diff.ci_lo < 0 && c->diff.ci_hi > 0); /* the CI contains 0 */
  /* p_boot by its definition */
  int64_t le = 0, ge = 0;
  for (uint64_t r = 0; r < B; r++) {
    double dd = vals[r * 4] - vals[r * 4 + 2];
    le += dd <= 0;
    ge += dd >= 0;
  }
  assert_close(c->p_boot, fmin(1.0, 2.0 * (double)(le < ge ? le : ge) / (double)B), 0, "p_boot");
  assert_true(c->p_boot > 0.5);
  assert_close((double)le / B, cJSON_GetObjectItem(d, "paired_bootstrap_p_one_sided_frac_r1_le_r2")->valuedouble,
               0.03, "share rho1* <= rho2*");
  /* COMPAT t-test: tiny p, t close to the demo's (same B, different draws) */
  assert_true(c->p_ttest_compat < 1e-50);
  assert_close(c->t_ttest_compat, cJSON_GetObjectItem(d, "ttest_rel_on_boot_samples_t")->valuedouble, 4.0, "compat t");
  /* Williams and the permutation test see no significant difference either */
  assert_true(c->p_williams > 0.2 && c->p_williams <= 1);
  assert_true(c->p_permutation > 0.2 && c->p_permutation <= 1);
  double r23 = tl_spearman(f.m[0], f.m[1], f.n).rho, tw;
  assert_close(c->p_williams, tl_williams_p(fabs(per[0].estimate), fabs(per[2].estimate), fabs(r23), f.n, &tw), 1e-12,
               "williams");
  assert_true(isnan(cmp[1].p_williams)); /* kendall_b */
  assert_true(cmp[1].p_permutation > 0.1);
  print_message("demo: diff CI [%.4f, %.4f], p_boot %.3f, compat t %.2f p %.3g, williams p %.3f, perm p %.3f\n",
                c->diff.ci_lo, c->diff.ci_hi, c->p_boot, c->t_ttest_compat, c->p_ttest_compat, c->p_williams,
                c->p_permutation);
  free(vals);
  tl_study_free(s);
  fixture_free(&f);
  cJSON_Delete(j);
}

/* The permutation test: identical metrics give p = 1; a clearly better metric gives p small. */
static void test_permutation(void **state) {
  (void)state;
  uint64_t st = 8;
  const uint32_t n = 300;
  double *h = malloc(n * sizeof *h), *good = malloc(n * sizeof *good), *bad = malloc(n * sizeof *bad);
  for (uint32_t i = 0; i < n; i++) {
    h[i] = (double)(rnd(&st) % 3);
    good[i] = h[i] + 0.5 * rnd01(&st);
    bad[i] = rnd01(&st);
  }
  const double *mp[3] = {good, bad, good};
  tl_study_in in = {.n = n, .human = h, .nmetrics = 3, .metric = mp, .nstats = 2,
                    .stats = {TL_STAT_KENDALL_B, TL_STAT_SPEARMAN}, .seed = 1, .B = 500};
  tl_study *s = NULL;
  assert_int_equal(tl_study_new(&in, &s, NULL), TL_OK);
  double *vals = malloc(500 * 6 * sizeof *vals);
  assert_int_equal(tl_study_resamples(s, 0, 500, vals), TL_OK);
  tl_boot_summary per[6];
  tl_boot_compare cmp[6];
  assert_int_equal(tl_study_summarize(s, vals, 0.95, TL_CI_PERCENTILE, per, cmp), TL_OK);
  /* stat-major: kendall (0,1) (0,2) (1,2), then spearman (0,1) (0,2) (1,2) */
  static const int A[6] = {0, 0, 1, 0, 0, 1}, Bm[6] = {1, 2, 2, 1, 2, 2};
  for (int q = 0; q < 6; q++) {
    assert_int_equal(cmp[q].a, A[q]);
    assert_int_equal(cmp[q].b, Bm[q]);
  }
  assert_true(cmp[0].p_permutation < 0.01 && cmp[3].p_permutation < 0.01);
  assert_true(cmp[0].p_boot < 0.01 && cmp[3].p_williams < 0.01);
  assert_close(cmp[1].p_permutation, 1.0, 0, "identical metrics");
  assert_close(cmp[4].p_permutation, 1.0, 0, "identical metrics");
  assert_close(cmp[4].p_boot, 1.0, 0, "identical metrics p_boot");
  assert_true(isnan(cmp[0].p_williams) && !isnan(cmp[3].p_williams));
  free(vals);
  tl_study_free(s);
  free(h);
  free(good);
  free(bad);
}

/* ---- 5. row-order invariance ---- */

static void test_row_order(void **state) {
  (void)state;
  for (int cont = 0; cont < 2; cont++) {
    fixture f, g;
    fixture_make(&f, 211, 3, 400 + cont, cont);
    fixture_make(&g, 211, 3, 400 + cont, cont);
    uint64_t st = 77;
    for (uint32_t i = f.n - 1; i > 0; i--) { /* g = a permutation of f's rows */
      uint32_t j = (uint32_t)(rnd(&st) % (i + 1));
      double t = g.h[i];
      g.h[i] = g.h[j];
      g.h[j] = t;
      for (int k = 0; k < 3; k++) {
        t = g.m[k][i];
        g.m[k][i] = g.m[k][j];
        g.m[k][j] = t;
      }
    }
    const uint64_t B = 200;
    tl_study *sf = study_of(&f, 9, B, NULL), *sg = study_of(&g, 9, B, NULL);
    double ff[6], fg[6];
    tl_study_full(sf, ff);
    tl_study_full(sg, fg);
    assert_memory_equal(ff, fg, sizeof ff);
    double *vf = malloc(B * 6 * sizeof *vf), *vg = malloc(B * 6 * sizeof *vg);
    assert_int_equal(tl_study_resamples(sf, 0, B, vf), TL_OK);
    assert_int_equal(tl_study_resamples(sg, 0, B, vg), TL_OK);
    assert_memory_not_equal(vf, vg, B * 6 * sizeof *vf);
    for (int method = 0; method < 2; method++) {
      tl_boot_summary pf[6], pg[6];
      tl_boot_compare cf[6], cg[6];
      assert_int_equal(tl_study_summarize(sf, vf, 0.95, (tl_ci_method)method, pf, cf), TL_OK);
      assert_int_equal(tl_study_summarize(sg, vg, 0.95, (tl_ci_method)method, pg, cg), TL_OK);
      for (int k = 0; k < 6; k++) {
        assert_true(same_double(pf[k].estimate, pg[k].estimate));
        assert_true(same_double(cf[k].diff.estimate, cg[k].diff.estimate));
        assert_true(same_double(cf[k].p_williams, cg[k].p_williams));
        /* the bootstrap distributions agree statistically */
        assert_close(pf[k].se, pg[k].se, 0.3 * pf[k].se, "se");
        assert_close(pf[k].ci_lo, pg[k].ci_lo, 0.05, "ci lo");
      }
    }
    free(vf);
    free(vg);
    tl_study_free(sf);
    tl_study_free(sg);
    fixture_free(&f);
    fixture_free(&g);
  }
}

static void test_study_errors(void **state) {
  (void)state;
  const double h[3] = {0, 1, NAN}, m[3] = {1, 2, 3};
  const double *mp[1] = {m};
  const char *names[1] = {"acc"};
  tl_study_in in = {.n = 3, .human = h, .nmetrics = 1, .metric = mp, .names = names, .nstats = 1, .B = 10};
  tl_study *s = NULL;
  tl_err err;
  assert_int_equal(tl_study_new(&in, &s, &err), TL_EINPUT);
  assert_non_null(strstr(err.msg, "'human'"));
  assert_null(s);
  in.human = m;
  in.nstats = 2; /* spearman twice */
  assert_int_equal(tl_study_new(&in, &s, &err), TL_EINPUT);
  in.nstats = 1;
  in.n = 0;
  assert_int_equal(tl_study_new(&in, &s, &err), TL_EINPUT);
  in.n = 3;
  assert_int_equal(tl_study_new(&in, &s, &err), TL_OK);
  double v[10], full[1];
  tl_boot_summary per[1];
  assert_int_equal(tl_study_resamples(s, 0, 10, v), TL_OK);
  tl_study_full(s, full);
  assert_close(full[0], 1.0, 0, "rho(m, m)");
  assert_int_equal(tl_study_summarize(s, v, 1.5, TL_CI_PERCENTILE, per, NULL), TL_EINPUT);
  assert_int_equal(tl_study_summarize(s, v, 0.95, TL_CI_PERCENTILE, per, NULL), TL_OK);
  assert_string_equal(tl_stat_name(TL_STAT_KENDALL_B), "kendall_b");
  tl_study_free(s);
  assert_int_equal(tl_dense_init(&(tl_dense){0}, h, 3), TL_EINPUT);
}

/* ---- 6. the vectorized paths and closed forms against their scalar definitions ---- */

/* The AVX2 Philox blocks and index draws equal Random123's scalar philox4x32 (and so the CUDA
 * kernels, which compile tl_k_index) over a table of edge seeds, resample numbers, counters
 * (including counters that wrap past 2^32), block counts around the vector width, streams, and
 * index draws for edge n and every alignment of [j0, j1). */
static void test_philox_vector(void **state) {
  (void)state;
  static const uint64_t seeds[] = {0, 1, 0xffffffffull, 0x100000000ull, 0x123456789abcdef0ull,
                                   0xfffffffffffffffeull, 0xffffffffffffffffull, 20240601};
  static const uint64_t rs[] = {0, 1, 2, 4999, 0xffffffffull, 0x100000000ull, 0x8000000000000000ull,
                                0xffffffffffffffffull};
  static const uint32_t c0s[] = {0, 1, 7, 8, 1000, 11024, 0x7ffffffcu, 0xfffffff0u, 0xfffffffbu, 0xffffffffu};
  static const uint32_t nbs[] = {1, 7, 8, 9, 15, 16, 17, 24, 33, 64};
  const int avx2 = tl_boot_have_avx2();
  if (!avx2) print_message("this CPU has no AVX2: only the scalar path is checked\n");
  uint32_t want[4 * 64], got[4 * 64];
  size_t cases = 0;
  for (size_t a = 0; a < sizeof seeds / sizeof *seeds; a++)
    for (size_t b = 0; b < sizeof rs / sizeof *rs; b++)
      for (size_t c = 0; c < sizeof c0s / sizeof *c0s; c++)
        for (size_t d = 0; d < sizeof nbs / sizeof *nbs; d++)
          for (uint32_t stream = 0; stream < 2; stream++) {
            const uint32_t nb = nbs[d];
            philox4x32_key_t k = {{(uint32_t)seeds[a], (uint32_t)(seeds[a] >> 32)}};
            for (uint32_t q = 0; q < nb; q++) {
              philox4x32_ctr_t ct = {{c0s[c] + q, (uint32_t)rs[b], (uint32_t)(rs[b] >> 32), stream}};
              philox4x32_ctr_t o = philox4x32(ct, k);
              memcpy(want + 4 * q, o.v, sizeof o.v);
            }
            assert_int_equal(tl_boot_philox_blocks(seeds[a], rs[b], stream, c0s[c], nb, got, TL_BOOT_IMPL_SCALAR), 0);
            assert_memory_equal(got, want, 4 * nb * sizeof *got);
            if (avx2) {
              memset(got, 0, sizeof got);
              assert_int_equal(tl_boot_philox_blocks(seeds[a], rs[b], stream, c0s[c], nb, got, TL_BOOT_IMPL_AVX2), 0);
              assert_memory_equal(got, want, 4 * nb * sizeof *got);
            }
            cases++;
          }
  /* index draws: every j of [j0, j1) equals tl_boot_index; all alignments of j0 and j1 */
  static const uint32_t ns[] = {1, 2, 3, 15, 16, 17, 31, 32, 33, 1000, 22050, 1000000, 0x80000000u, 0xffffffffu};
  static const uint32_t js[][2] = {{0, 1}, {0, 16}, {0, 17}, {1, 2}, {1, 17}, {1, 40}, {3, 64}, {0, 100},
                                   {31, 97}, {64, 96}, {0, 1024}, {5, 1029}};
  uint32_t idx_s[1100], idx_v[1100];
  for (size_t a = 0; a < sizeof seeds / sizeof *seeds; a++)
    for (size_t b = 0; b < sizeof rs / sizeof *rs; b += 2)
      for (size_t q = 0; q < sizeof ns / sizeof *ns; q++)
        for (size_t t = 0; t < sizeof js / sizeof *js; t++) {
          const uint32_t n = ns[q], j0 = js[t][0], j1 = js[t][1];
          assert_int_equal(tl_boot_draw_range(seeds[a], rs[b], n, 0, j0, j1, idx_s, TL_BOOT_IMPL_SCALAR), 0);
          for (uint32_t j = j0; j < j1; j++) {
            if (idx_s[j - j0] != tl_boot_index(seeds[a], rs[b], j, n, 0))
              fail_msg("scalar draw seed %llu r %llu n %u j %u", (unsigned long long)seeds[a],
                       (unsigned long long)rs[b], n, j);
          }
          if (avx2) {
            assert_int_equal(tl_boot_draw_range(seeds[a], rs[b], n, 0, j0, j1, idx_v, TL_BOOT_IMPL_AVX2), 0);
            assert_memory_equal(idx_v, idx_s, (j1 - j0) * sizeof *idx_v);
          }
          cases++;
        }
  print_message("Philox: %zu (seed, r, counter, length) cases, scalar%s\n", cases, avx2 ? " and AVX2" : " only");
}

/* A random cell table: cells sorted by (x, y), distinct; one per x level when distinct_x.
 * Weights in [wmin, wmax]. Returns the number of cells. */
static uint32_t gen_cells(uint32_t Lx, uint32_t Ly, int distinct_x, int32_t wmin, int32_t wmax, uint64_t *st,
                          uint32_t *xl, uint32_t *yl, int32_t *cw) {
  uint32_t nc = 0;
  for (uint32_t x = 0; x < Lx; x++) {
    if (distinct_x) {
      xl[nc] = x;
      yl[nc] = (uint32_t)(rnd(st) % Ly);
      cw[nc] = wmin + (int32_t)(rnd(st) % (uint64_t)(wmax - wmin + 1));
      nc++;
      continue;
    }
    for (uint32_t y = 0; y < Ly; y++)
      if (rnd(st) % 3 != 0 || (y == Ly - 1 && (nc == 0 || xl[nc - 1] != x))) {
        xl[nc] = x;
        yl[nc] = y;
        cw[nc] = wmin + (int32_t)(rnd(st) % (uint64_t)(wmax - wmin + 1));
        nc++;
      }
  }
  return nc;
}

/* The closed-form jackknife (every leave-one-out tl_suff of a cell table from one sweep) equals
 * the O(cells^2) definition (one full sweep per cell with that cell's weight less one) in all
 * eleven integers, for tables with and without ties in x, one to 70 human levels, cells of
 * weight 1 (a level that disappears), large weights, and partial task ranges. */
static void test_jack_closed_form(void **state) {
  (void)state;
  static const struct {
    uint32_t Lx, Ly;
    int distinct_x;
    int32_t wmin, wmax;
  } T[] = {{1, 1, 0, 1, 1},   {1, 1, 0, 2, 5},    {2, 1, 0, 1, 3},   {1, 3, 0, 1, 2},   {5, 3, 0, 1, 4},
           {5, 3, 0, 1, 1},   {100, 3, 0, 1, 6},  {300, 3, 1, 1, 3}, {200, 2, 1, 1, 1}, {40, 7, 0, 1, 9},
           {30, 70, 0, 1, 2}, {500, 4, 1, 1, 40}, {8, 5, 0, 500, 3000}, {3, 3, 0, 1, 1},  {700, 1, 1, 1, 2}};
  uint64_t st = 4242;
  uint32_t *xl = malloc(4000 * sizeof *xl), *yl = malloc(4000 * sizeof *yl);
  int32_t *cw = malloc(4000 * sizeof *cw);
  tl_suff *a = malloc(4000 * sizeof *a), *b = malloc(4000 * sizeof *b);
  size_t checked = 0;
  for (size_t t = 0; t < sizeof T / sizeof *T; t++)
    for (int rep = 0; rep < 4; rep++) {
      uint32_t nc = gen_cells(T[t].Lx, T[t].Ly, T[t].distinct_x, T[t].wmin, T[t].wmax, &st, xl, yl, cw);
      assert_true(nc > 0 && nc <= 4000);
      memset(a, 0xa5, nc * sizeof *a);
      memset(b, 0x5a, nc * sizeof *b);
      assert_int_equal(tl_boot_jack_suff(xl, yl, cw, nc, T[t].Ly, 0, nc, 1, a), 0);
      assert_int_equal(tl_boot_jack_suff(xl, yl, cw, nc, T[t].Ly, 0, nc, 0, b), 0);
      for (uint32_t q = 0; q < nc; q++)
        if (memcmp(&a[q], &b[q], sizeof a[q]) != 0)
          fail_msg("table %zu rep %d cell %u of %u: closed form differs (sab %lld vs %lld, dis %lld vs %lld)", t, rep,
                   q, nc, (long long)a[q].sab, (long long)b[q].sab, (long long)a[q].dis, (long long)b[q].dis);
      /* a sub-range gives the same values */
      uint32_t q0 = nc / 3, q1 = nc - nc / 4;
      if (q0 < q1) {
        assert_int_equal(tl_boot_jack_suff(xl, yl, cw, nc, T[t].Ly, q0, q1, 1, a), 0);
        assert_memory_equal(a, b + q0, (q1 - q0) * sizeof *a);
      }
      checked += nc;
    }
  print_message("closed-form jackknife: %zu cells checked against the O(C^2) sweep\n", checked);
  free(xl);
  free(yl);
  free(cw);
  free(a);
  free(b);
}

/* The AVX2 one-pass sweep of a one-cell-per-x-level table (1..4 human levels, uint8 weights)
 * equals the Fenwick sweep in all eleven integers. */
static void test_distinct_sweep(void **state) {
  (void)state;
  if (!tl_boot_have_avx2()) {
    print_message("this CPU has no AVX2: the one-pass sweep is not used here\n");
    return;
  }
  static const uint32_t lens[] = {1, 2, 7, 8, 9, 31, 63, 64, 65, 1000, 4099, 22050};
  static const int32_t wmax[] = {0, 1, 3, 20, 255};
  uint32_t *xl = malloc(22050 * sizeof *xl), *yl = malloc(22050 * sizeof *yl);
  int32_t *cw = malloc(22050 * sizeof *cw);
  uint64_t st = 99;
  size_t cases = 0;
  for (uint32_t Ly = 1; Ly <= 4; Ly++)
    for (size_t a = 0; a < sizeof lens / sizeof *lens; a++)
      for (size_t b = 0; b < sizeof wmax / sizeof *wmax; b++) {
        if ((uint64_t)lens[a] * (uint64_t)wmax[b] > 2000000) continue; /* keeps N <= 10^6 (boot.h) */
        uint32_t nc = gen_cells(lens[a], Ly, 1, 0, wmax[b], &st, xl, yl, cw);
        if (b == 4 && nc > 3) cw[nc / 2] = 255; /* the largest weight */
        tl_suff s, v;
        memset(&v, 0x33, sizeof v);
        assert_int_equal(tl_boot_cells_suff(xl, yl, cw, nc, Ly, TL_BOOT_IMPL_SCALAR, &s), 0);
        assert_int_equal(tl_boot_cells_suff(xl, yl, cw, nc, Ly, TL_BOOT_IMPL_AVX2, &v), 0);
        if (memcmp(&s, &v, sizeof s) != 0)
          fail_msg("Ly %u, %u cells, weights <= %d: sab %lld/%lld saa %lld/%lld dis %lld/%lld", Ly, nc, wmax[b],
                   (long long)s.sab, (long long)v.sab, (long long)s.saa, (long long)v.saa, (long long)s.dis,
                   (long long)v.dis);
        cases++;
      }
  /* where it does not apply */
  uint32_t nc = gen_cells(100, 3, 0, 1, 2, &st, xl, yl, cw);
  tl_suff v;
  assert_int_equal(tl_boot_cells_suff(xl, yl, cw, nc, 3, TL_BOOT_IMPL_AVX2, &v), -1); /* ties in x */
  nc = gen_cells(100, 5, 1, 1, 2, &st, xl, yl, cw);
  assert_int_equal(tl_boot_cells_suff(xl, yl, cw, nc, 5, TL_BOOT_IMPL_AVX2, &v), -1); /* 5 levels */
  nc = gen_cells(100, 2, 1, 1, 2, &st, xl, yl, cw);
  cw[3] = 256;
  assert_int_equal(tl_boot_cells_suff(xl, yl, cw, nc, 2, TL_BOOT_IMPL_AVX2, &v), -1); /* > uint8 */
  print_message("one-pass sweep: %zu tables equal to the Fenwick sweep\n", cases);
  free(xl);
  free(yl);
  free(cw);
}

/* Counts of resample r from the shared index definition (tl_boot_index: the scalar code). */
static void counts_by_index(uint64_t seed, uint64_t r, uint32_t n, int32_t *w) {
  memset(w, 0, n * sizeof *w);
  for (uint32_t j = 0; j < n; j++) w[tl_boot_index(seed, r, j, n, 0)]++;
}

/* Column generators for the layout cases. */
static void gen_column(double *v, uint32_t n, const double *h, int kind, uint64_t *st) {
  for (uint32_t i = 0; i < n; i++) {
    double e = rnd01(st) - 0.5;
    switch (kind) {
      case 0: v[i] = (double)(rnd(st) % 5) * 0.25; break;              /* 5 levels */
      case 1: v[i] = round((h[i] + e) * 100) / 100; break;              /* ~100 levels */
      case 2: v[i] = (double)(rnd(st) % 3); break;                      /* 3 levels */
      case 3: v[i] = h[i] + 1.5 * e; break;                             /* continuous */
      case 4: v[i] = round((h[i] + 2 * e) * 400) / 400; break;         /* many levels, ties across y */
      case 5: v[i] = (double)(rnd(st) % 40); break;                     /* 40 levels */
      case 6: v[i] = 0.5; break;                                         /* constant */
      default: v[i] = round(rnd01(st) * 3000); break;                    /* ~3000 levels */
    }
  }
}

/* Every resampling layout of a study (joint table or not, uint8 wide tables with or without the
 * one-pass sweep, 16- or 32-bit records, up to 6 metrics, 1 to thousands of human levels) gives
 * the values of tl_suff_fast on the counts of the shared index definition, bit for bit, with the
 * AVX2 paths on and off; the full-data values too. */
static void test_study_layouts(void **state) {
  (void)state;
  static const struct {
    uint32_t n;
    int hkind; /* 0: 3 levels, 1: 2 levels, 2: 4 levels, 3: constant, 4: continuous, 5: 1 level of 5 */
    int M;
    int kinds[6];
    uint64_t B;
  } T[] = {
      {3000, 0, 4, {0, 1, 2, 3}, 6},          /* the benchmark's shape: joint + one-pass wide */
      {3000, 0, 2, {4, 3}, 6},                /* wide with ties in x (Fenwick), wide distinct */
      {2500, 4, 3, {0, 2, 3}, 4},             /* continuous human: wide tables everywhere */
      {6000, 2, 3, {5, 5, 5}, 4},             /* small metrics, joint too large: own tables */
      {1500, 1, 1, {3}, 6},                   /* one wide metric, 2 human levels */
      {1500, 0, 1, {0}, 6},                   /* one small metric */
      {1300, 3, 2, {3, 0}, 4},                /* constant human: NaN values, Ly = 1 */
      {2000, 0, 6, {0, 1, 2, 3, 6, 7}, 4},    /* six metrics: the generic counting case */
      {70000, 0, 2, {3, 0}, 2},               /* more than 65536 wide cells: 32-bit records */
  };
  for (size_t t = 0; t < sizeof T / sizeof *T; t++) {
    const uint32_t n = T[t].n;
    const int M = T[t].M;
    uint64_t st = 1000 + t;
    double *h = malloc(n * sizeof *h), *m[6];
    const double *mp[6];
    for (uint32_t i = 0; i < n; i++) {
      int hk = T[t].hkind;
      h[i] = hk == 0 ? (double)(rnd(&st) % 3) / 2 : hk == 1 ? (double)(rnd(&st) % 2) : hk == 2 ? (double)(rnd(&st) % 4)
           : hk == 3 ? 1.0 : rnd01(&st);
    }
    for (int k = 0; k < M; k++) {
      m[k] = malloc(n * sizeof *m[k]);
      gen_column(m[k], n, h, T[t].kinds[k], &st);
      mp[k] = m[k];
    }
    const uint64_t B = T[t].B, K = (uint64_t)M * 2;
    tl_study_in in = {.n = n, .human = h, .nmetrics = M, .metric = mp, .nstats = 2,
                      .stats = {TL_STAT_SPEARMAN, TL_STAT_KENDALL_B}, .seed = 31 + t, .B = B};
    tl_study *s = NULL;
    assert_int_equal(tl_study_new(&in, &s, NULL), TL_OK);
    double *v1 = malloc(B * K * sizeof *v1), *v0 = malloc(B * K * sizeof *v0);
    assert_int_equal(tl_study_resamples(s, 0, B, v1), TL_OK);
    tl_study_set_simd(s, 0);
    assert_int_equal(tl_study_resamples(s, 0, B, v0), TL_OK);
    assert_memory_equal(v0, v1, B * K * sizeof *v0);
    /* against tl_suff_fast */
    tl_dense dh;
    assert_int_equal(tl_dense_init(&dh, h, n), TL_OK);
    int32_t *w = malloc(n * sizeof *w);
    double full[12];
    tl_study_full(s, full);
    for (int k = 0; k < M; k++) {
      tl_dense dm;
      tl_pair p;
      assert_int_equal(tl_dense_init(&dm, m[k], n), TL_OK);
      assert_int_equal(tl_pair_init(&p, &dm, &dh), TL_OK);
      tl_suff_ws *ws = tl_suff_ws_new(&p);
      tl_suff sf;
      for (uint64_t r = 0; r < B; r++) {
        counts_by_index(in.seed, r, n, w);
        tl_suff_fast(&p, w, ws, &sf);
        if (!same_double(v1[r * K + 2 * k], tl_suff_spearman(&sf)) || !same_double(v1[r * K + 2 * k + 1], tl_suff_kendall_b(&sf)))
          fail_msg("case %zu metric %d resample %llu: %.17g %.17g, want %.17g %.17g", t, k, (unsigned long long)r,
                   v1[r * K + 2 * k], v1[r * K + 2 * k + 1], tl_suff_spearman(&sf), tl_suff_kendall_b(&sf));
      }
      for (uint32_t i = 0; i < n; i++) w[i] = 1;
      tl_suff_fast(&p, w, ws, &sf);
      assert_true(same_double(full[2 * k], tl_suff_spearman(&sf)) && same_double(full[2 * k + 1], tl_suff_kendall_b(&sf)));
      tl_suff_ws_free(ws);
      tl_pair_release(&p);
      tl_dense_release(&dm);
    }
    tl_dense_release(&dh);
    /* the jackknife task values do not depend on how [0, T) is split (chunks of 65,536 cells
     * inside, ranges across metrics) */
    size_t nt = tl_study_jack_tasks(s), cut = nt / 3 + 1;
    double *ja = malloc(2 * nt * sizeof *ja), *jb = malloc(2 * nt * sizeof *jb);
    assert_int_equal(tl_study_jack_values(s, 0, nt, ja), TL_OK);
    assert_int_equal(tl_study_jack_values(s, 0, cut, jb), TL_OK);
    assert_int_equal(tl_study_jack_values(s, cut, nt, jb + 2 * cut), TL_OK);
    assert_memory_equal(ja, jb, 2 * nt * sizeof *ja);
    free(ja);
    free(jb);
    tl_study_free(s);
    free(w);
    free(v0);
    free(v1);
    free(h);
    for (int k = 0; k < M; k++) free(m[k]);
  }
}

/* uint8 counts that wrap (a cell drawn 256 times or more, possible with an explicit index
 * matrix): the table is recounted, and the values equal tl_suff_fast on the true counts. */
static void test_wide_wrap(void **state) {
  (void)state;
  const uint32_t n = 2000;
  const uint64_t B = 4;
  uint64_t st = 5;
  double *h = malloc(n * sizeof *h), *m0 = malloc(n * sizeof *m0), *m1 = malloc(n * sizeof *m1);
  for (uint32_t i = 0; i < n; i++) h[i] = (double)(rnd(&st) % 3);
  gen_column(m0, n, h, 3, &st); /* wide, one-pass sweep */
  gen_column(m1, n, h, 4, &st); /* wide, ties in x */
  uint32_t *idx = malloc(B * n * sizeof *idx);
  for (uint32_t j = 0; j < n; j++) {
    idx[j] = 0;                                   /* one item n times */
    idx[n + j] = j < 300 ? 17 : (uint32_t)(rnd(&st) % n); /* 300 times, then random */
    idx[2 * n + j] = (uint32_t)(rnd(&st) % n);    /* an ordinary resample */
    idx[3 * n + j] = j % 7;                       /* seven items, ~286 times each */
  }
  const double *mp[2] = {m0, m1};
  tl_study_in in = {.n = n, .human = h, .nmetrics = 2, .metric = mp, .nstats = 2,
                    .stats = {TL_STAT_SPEARMAN, TL_STAT_KENDALL_B}, .seed = 1, .B = B, .indices = idx};
  tl_study *s = NULL;
  assert_int_equal(tl_study_new(&in, &s, NULL), TL_OK);
  double v[4 * 4];
  assert_int_equal(tl_study_resamples(s, 0, B, v), TL_OK);
  tl_dense dh;
  assert_int_equal(tl_dense_init(&dh, h, n), TL_OK);
  int32_t *w = malloc(n * sizeof *w);
  for (int k = 0; k < 2; k++) {
    tl_dense dm;
    tl_pair p;
    assert_int_equal(tl_dense_init(&dm, mp[k], n), TL_OK);
    assert_int_equal(tl_pair_init(&p, &dm, &dh), TL_OK);
    tl_suff_ws *ws = tl_suff_ws_new(&p);
    for (uint64_t r = 0; r < B; r++) {
      memset(w, 0, n * sizeof *w);
      for (uint32_t j = 0; j < n; j++) w[idx[r * n + j]]++;
      tl_suff sf;
      tl_suff_fast(&p, w, ws, &sf);
      assert_true(same_double(v[r * 4 + 2 * k], tl_suff_spearman(&sf)));
      assert_true(same_double(v[r * 4 + 2 * k + 1], tl_suff_kendall_b(&sf)));
    }
    tl_suff_ws_free(ws);
    tl_pair_release(&p);
    tl_dense_release(&dm);
  }
  assert_true(isnan(v[0]) && isnan(v[1])); /* one item: a constant sample */
  assert_true(isfinite(v[4]) && isfinite(v[8]));
  tl_dense_release(&dh);
  tl_study_free(s);
  free(w);
  free(idx);
  free(h);
  free(m0);
  free(m1);
}

/* BCa of a study with a wide metric: the closed-form jackknife gives the intervals recomputed
 * from leave-one-out values by tl_suff_fast (item i weight 0), bit for bit. */
static void test_bca_wide(void **state) {
  (void)state;
  const uint32_t n = 1200;
  const uint64_t B = 200;
  uint64_t st = 12;
  double *h = malloc(n * sizeof *h), *m[3];
  for (uint32_t i = 0; i < n; i++) h[i] = (double)(rnd(&st) % 3) / 2;
  static const int kinds[3] = {3, 4, 0};
  const double *mp[3];
  for (int k = 0; k < 3; k++) {
    m[k] = malloc(n * sizeof *m[k]);
    gen_column(m[k], n, h, kinds[k], &st);
    mp[k] = m[k];
  }
  tl_study_in in = {.n = n, .human = h, .nmetrics = 3, .metric = mp, .nstats = 2,
                    .stats = {TL_STAT_SPEARMAN, TL_STAT_KENDALL_B}, .seed = 77, .B = B};
  tl_study *s = NULL;
  assert_int_equal(tl_study_new(&in, &s, NULL), TL_OK);
  double *vals = malloc(B * 6 * sizeof *vals), *sorted = malloc(B * sizeof *sorted);
  assert_int_equal(tl_study_resamples(s, 0, B, vals), TL_OK);
  tl_boot_summary per[6];
  tl_boot_compare cmp[6];
  assert_int_equal(tl_study_summarize(s, vals, 0.95, TL_CI_BCA, per, cmp), TL_OK);
  /* the jackknife values through tl_suff_fast, item by item */
  tl_dense dh;
  assert_int_equal(tl_dense_init(&dh, h, n), TL_OK);
  double *jk = malloc(6 * (size_t)n * sizeof *jk);
  int32_t *w = malloc(n * sizeof *w);
  for (int k = 0; k < 3; k++) {
    tl_dense dm;
    tl_pair p;
    assert_int_equal(tl_dense_init(&dm, m[k], n), TL_OK);
    assert_int_equal(tl_pair_init(&p, &dm, &dh), TL_OK);
    tl_suff_ws *ws = tl_suff_ws_new(&p);
    for (uint32_t i = 0; i < n; i++) {
      for (uint32_t q = 0; q < n; q++) w[q] = q != i;
      tl_suff sf;
      tl_suff_fast(&p, w, ws, &sf);
      jk[(size_t)(2 * k) * n + i] = tl_suff_spearman(&sf);
      jk[(size_t)(2 * k + 1) * n + i] = tl_suff_kendall_b(&sf);
    }
    tl_suff_ws_free(ws);
    tl_pair_release(&p);
    tl_dense_release(&dm);
  }
  double full[6];
  tl_study_full(s, full);
  for (int k = 0; k < 6; k++) {
    for (uint64_t r = 0; r < B; r++) sorted[r] = vals[r * 6 + k];
    double z0 = tl_boot_bca_z0(sorted, B, full[k]), acc = tl_boot_bca_accel(jk + (size_t)k * n, n);
    for (uint64_t i = 1; i < B; i++)
      for (uint64_t t = i; t > 0 && sorted[t - 1] > sorted[t]; t--) {
        double tmp = sorted[t];
        sorted[t] = sorted[t - 1];
        sorted[t - 1] = tmp;
      }
    double lo, hi;
    tl_boot_bca_ci(sorted, B, z0, acc, 0.95, &lo, &hi);
    assert_true(isfinite(lo) && isfinite(hi));
    assert_true(same_double(per[k].ci_lo, lo) && same_double(per[k].ci_hi, hi));
  }
  tl_dense_release(&dh);
  tl_study_free(s);
  free(w);
  free(jk);
  free(vals);
  free(sorted);
  free(h);
  for (int k = 0; k < 3; k++) free(m[k]);
}

/* tl_sort_f64 against glibc's qsort (a stable merge sort) with the summaries' old comparison:
 * the same bytes, for sizes on both sides of the insertion-sort cut and value sets that make
 * the radix passes skip (one exponent) or not (signs, magnitudes from 1e-300 to infinity), with
 * ties, -0.0 and +0.0 mixed in input order. */
static int cmp_f64_old(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

static void test_sort_f64(void **state) {
  (void)state;
  static const size_t N[] = {0, 1, 2, 31, 32, 33, 100, 1000, 5000};
  uint64_t x = 0x9E3779B97F4A7C15u;
  for (size_t ni = 0; ni < sizeof N / sizeof *N; ni++) {
    for (int kind = 0; kind < 4; kind++) {
      size_t n = N[ni];
      double *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
      for (size_t i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        double u = (double)(x >> 11) / 9007199254740992.0; /* [0, 1) */
        switch (kind) {
        case 0: a[i] = 0.5 + u / 4; break;                               /* one exponent */
        case 1: a[i] = (double)((x >> 3) % 7) / 6.0 - 0.5; break;         /* few values, ties */
        case 2: a[i] = (x & 1 ? -1 : 1) * ((x >> 1) % 5 == 0 ? 0.0 : u); break; /* +-0 */
        default: a[i] = (x & 1 ? -1 : 1) * ((x >> 9) % 17 == 0 ? INFINITY : ldexp(u, (int)((x >> 20) % 2000) - 1000));
        }
        b[i] = a[i];
      }
      tl_sort_f64(a, n);
      if (n) qsort(b, n, sizeof *b, cmp_f64_old);
      if (n) assert_memory_equal(a, b, n * sizeof *a);
      free(a);
      free(b);
    }
  }
}

/* tl_cluster_ci against the definition (draws by tl_boot_index, sums in draw order), the
 * dropped empty clusters, a constant ratio, and the NaN cases. */
static void test_cluster_ci(void **state) {
  (void)state;
  enum { N = 57, B = 400 };
  double num[N], den[N];
  for (int i = 0; i < N; i++) { /* an item with 3 seeds: 0..3 correct; every 7th has no unit */
    den[i] = i % 7 == 3 ? 0 : 3;
    num[i] = den[i] ? (double)((i * 5 + 1) % 4) : 0;
  }
  double lo, hi;
  assert_int_equal(tl_cluster_ci(num, den, N, B, 42, 0.95, &lo, &hi), TL_OK);
  double cn[N], cd[N], vals[B];
  uint32_t m = 0;
  for (int i = 0; i < N; i++)
    if (den[i] > 0) cn[m] = num[i], cd[m++] = den[i];
  for (uint32_t r = 0; r < B; r++) {
    double sn = 0, sd = 0;
    for (uint32_t j = 0; j < m; j++) {
      uint32_t k = tl_boot_index(42, r, j, m, 0);
      sn += cn[k], sd += cd[k];
    }
    vals[r] = sn / sd;
  }
  tl_sort_f64(vals, B);
  assert_true(fabs(lo - tl_quantile_sorted(vals, B, 0.025)) < 1e-12);
  assert_true(fabs(hi - tl_quantile_sorted(vals, B, 0.975)) < 1e-12);
  double est = 0, tot = 0;
  for (uint32_t k = 0; k < m; k++) est += cn[k], tot += cd[k];
  est /= tot;
  assert_true(lo < est && est < hi);
  double lo2, hi2; /* the empty clusters change nothing */
  assert_int_equal(tl_cluster_ci(cn, cd, m, B, 42, 0.95, &lo2, &hi2), TL_OK);
  assert_true(lo2 == lo && hi2 == hi);
  double one[N]; /* every item 2 of 3: the interval is the point */
  for (int i = 0; i < N; i++) one[i] = 2;
  assert_int_equal(tl_cluster_ci(one, cd, m, B, 7, 0.9, &lo, &hi), TL_OK);
  assert_true(fabs(lo - 2.0 / 3) < 1e-15 && fabs(hi - 2.0 / 3) < 1e-15);
  assert_int_equal(tl_cluster_ci(num, den, 1, B, 42, 0.95, &lo, &hi), TL_OK); /* one cluster */
  assert_true(isnan(lo) && isnan(hi));
  assert_int_equal(tl_cluster_ci(num, den, N, 1, 42, 0.95, &lo, &hi), TL_OK); /* one resample */
  assert_true(isnan(lo) && isnan(hi));
  assert_int_equal(tl_cluster_ci(num, den, N, B, 42, 1.0, &lo, &hi), TL_OK); /* bad level */
  assert_true(isnan(lo) && isnan(hi));
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sort_f64),
      cmocka_unit_test(test_index_draw),          cmocka_unit_test(test_suff_exact),
      cmocka_unit_test(test_resample_invariance), cmocka_unit_test(test_indices),
      cmocka_unit_test(test_interval_math),       cmocka_unit_test(test_summaries_nan_and_bca),
      cmocka_unit_test(test_permutation),         cmocka_unit_test(test_row_order),
      cmocka_unit_test(test_study_errors),        cmocka_unit_test(test_philox_vector),
      cmocka_unit_test(test_jack_closed_form),    cmocka_unit_test(test_distinct_sweep),
      cmocka_unit_test(test_study_layouts),       cmocka_unit_test(test_wide_wrap),
      cmocka_unit_test(test_bca_wide),            cmocka_unit_test(test_cluster_ci),
  };
  /* test_indices: its fixture part runs above, its scipy part here */
  const struct CMUnitTest shared[] = {
      cmocka_unit_test(test_suff_scipy_vectors),  cmocka_unit_test(test_indices),
      cmocka_unit_test(test_demo_comparison),
  };
  return TU_SHARED_GROUP(argc, argv, tests, shared, NULL, NULL);
}
