/* test_stats.c - the CPU reference statistics (include/tally/stats.h) against scipy 1.10.1:
 *  1. every case of ../shared/data/stats/scipy_vectors.json (ranks, Spearman, Kendall tau-b/c
 *     with both p-values, Pearson; NaN where the JSON has NaN) and the full-data rhos of its
 *     paired_bootstrap_demo;
 *  2. golden values made at test time by /usr/bin/python3 + scipy (skipped when absent): 240 random
 *     correlation cases (ties, no ties, n = 2..3000, constant inputs, exact branch, tiny p), the
 *     exact Kendall distribution (n <= 33 and n >= 171), t-tests, norm ppf/sf/cdf, t sf, betainc,
 *     Williams' test;
 *  3. properties without scipy: brute-force O(n^2) definitions of ranks and pair counts, row-order
 *     invariance, symmetry, rho(x, x) = 1, constant inputs and n = 0/1/2, closed forms of the t
 *     distribution for df = 1, 2, brute-force permutation counts for the exact Kendall p.
 * Tolerance against scipy: |got - want| <= 1e-12 (values: times max(1, |want|)) and, for
 * probabilities below 1e-3, relative error <= 1e-9. Max errors are printed. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "tally/stats.h"

#define TL_PI_TEST 3.14159265358979323846

/* ---- error bookkeeping ---- */

typedef struct {
  double max_abs, max_rel; /* max_rel over probabilities < 1e-3 */
  double min_p;            /* smallest positive expected probability seen */
  long n;
  char worst[160];
} errstat;

static int same_special(double got, double want) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
  if (isinf(want) || isinf(got)) return got == want;
  return -1; /* both finite */
}

/* |got - want| <= abs_tol, and for normal values below 1e-3 also |got - want| / |want| <=
 * rel_tol (a subnormal carries fewer than 52 bits, so it gets no relative check). */
static void chk_tol(errstat *e, double got, double want, const char *what, long id, double abs_tol,
                    double rel_tol) {
  e->n++;
  int s = same_special(got, want);
  if (s == 0) fail_msg("%s #%ld: got %.17g want %.17g", what, id, got, want);
  if (s == 1) return;
  double ae = fabs(got - want);
  if (ae > e->max_abs) {
    e->max_abs = ae;
    snprintf(e->worst, sizeof e->worst, "%s #%ld (got %.17g want %.17g)", what, id, got, want);
  }
  if (want > 0 && want < e->min_p) e->min_p = want;
  if (ae > abs_tol) fail_msg("%s #%ld: got %.17g want %.17g (abs err %.3g)", what, id, got, want, ae);
  if (fabs(want) >= DBL_MIN && fabs(want) < 1e-3) {
    double re = ae / fabs(want);
    if (re > e->max_rel) e->max_rel = re;
    if (re > rel_tol) fail_msg("%s #%ld: got %.17g want %.17g (rel err %.3g)", what, id, got, want, re);
  }
}

/* A probability (or other value in [0, 1]): abs <= 1e-12, rel <= 1e-9 below 1e-3. */
static void chk_p(errstat *e, double got, double want, const char *what, long id) {
  chk_tol(e, got, want, what, id, 1e-12, 1e-9);
}

/* A statistic of any size: |got - want| <= 1e-12 max(1, |want|). */
static void chk_v(errstat *e, double got, double want, const char *what, long id) {
  e->n++;
  int s = same_special(got, want);
  if (s == 0) fail_msg("%s #%ld: got %.17g want %.17g", what, id, got, want);
  if (s == 1) return;
  double ae = fabs(got - want), sc = fabs(want) > 1 ? fabs(want) : 1;
  if (ae / sc > e->max_abs) {
    e->max_abs = ae / sc;
    snprintf(e->worst, sizeof e->worst, "%s #%ld (got %.17g want %.17g)", what, id, got, want);
  }
  if (ae > 1e-12 * sc) fail_msg("%s #%ld: got %.17g want %.17g (err %.3g)", what, id, got, want, ae);
}

/* Against a high-precision (mpmath) value: abs <= 1e-14, relative <= 1e-11 for normal values
 * below 1e-3 (log-scale prefactors of tiny values lose ~|log p| eps, inherent in doubles). */
static double g_true_abs_tol = 1e-14;

static void chk_true(errstat *e, double got, double want, const char *what, long id) {
  chk_tol(e, got, want, what, id, g_true_abs_tol, 1e-11);
}

static void report(const char *name, const errstat *e) {
  print_message("  %-22s n=%-6ld max abs %.3g  max rel(p<1e-3) %.3g  min p %.3g  [%s]\n", name, e->n,
                e->max_abs, e->max_rel, e->min_p, e->worst);
}

static errstat es_new(void) {
  errstat e;
  memset(&e, 0, sizeof e);
  e.min_p = 1.0;
  return e;
}

/* ---- 1. scipy_vectors.json ---- */

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (n + 1 == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (buf) buf[n] = 0;
  if (len) *len = n;
  return buf;
}

/* Python's json writes NaN as a bare NaN token, which cJSON rejects: the tokens outside strings
 * become null (read back as NaN). */
static cJSON *parse_py_json(const char *text) {
  size_t n = strlen(text);
  char *out = malloc(n + n / 3 + 1), *o = out;
  int in_str = 0;
  for (const char *p = text; *p; p++) {
    if (in_str) {
      if (*p == '\\' && p[1]) *o++ = *p++;
      else if (*p == '"') in_str = 0;
    } else if (*p == '"') {
      in_str = 1;
    } else if (strncmp(p, "NaN", 3) == 0) {
      memcpy(o, "null", 4);
      o += 4;
      p += 2;
      continue;
    }
    *o++ = *p;
  }
  *o = 0;
  cJSON *j = cJSON_Parse(out);
  free(out);
  return j;
}

static double jnum(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!v) fail_msg("missing key %s", key);
  if (cJSON_IsNull(v)) return NAN;
  if (!cJSON_IsNumber(v)) fail_msg("key %s is not a number", key);
  return v->valuedouble;
}

static double *jarr(const cJSON *o, const char *key, size_t *n) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsArray(a)) fail_msg("missing array %s", key);
  size_t m = (size_t)cJSON_GetArraySize(a), i = 0;
  double *v = malloc((m ? m : 1) * sizeof *v);
  const cJSON *it;
  cJSON_ArrayForEach(it, a) v[i++] = cJSON_IsNull(it) ? NAN : it->valuedouble;
  *n = m;
  return v;
}

static void test_scipy_vectors(void **state) {
  (void)state;
  TU_NEED_SHARED(path, "stats/scipy_vectors.json");
  char *text = slurp(path, NULL);
  assert_non_null(text);
  cJSON *root = parse_py_json(text);
  free(text);
  assert_non_null(root);
  const cJSON *cases = cJSON_GetObjectItemCaseSensitive(root, "cases");
  assert_true(cJSON_IsArray(cases));
  errstat e = es_new();
  long id = 0, n_nan = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, cases) {
    size_t n, ny, nrx, nry;
    double *x = jarr(c, "x", &n), *y = jarr(c, "y", &ny);
    double *rx = jarr(c, "rank_x_average", &nrx), *ry = jarr(c, "rank_y_average", &nry);
    assert_int_equal(n, ny);
    assert_int_equal(n, nrx);
    assert_int_equal(n, nry);
    double *r = malloc(n * sizeof *r);
    tl_rankdata_avg(x, n, r);
    for (size_t i = 0; i < n; i++) assert_true(r[i] == rx[i]);
    tl_rankdata_avg(y, n, r);
    for (size_t i = 0; i < n; i++) assert_true(r[i] == ry[i]);
    tl_spearman_res s = tl_spearman(x, y, n);
    tl_kendall_res k = tl_kendall(x, y, n);
    double pr = tl_pearson(x, y, n);
    chk_v(&e, s.rho, jnum(c, "spearman_rho"), "spearman_rho", id);
    chk_p(&e, s.p, jnum(c, "spearman_p"), "spearman_p", id);
    chk_v(&e, k.tau_b, jnum(c, "kendall_tau_b"), "kendall_tau_b", id);
    chk_v(&e, k.tau_c, jnum(c, "kendall_tau_c"), "kendall_tau_c", id);
    chk_p(&e, k.p_asymptotic, jnum(c, "kendall_p_asymptotic"), "kendall_p_asymptotic", id);
    chk_p(&e, k.p_auto, jnum(c, "kendall_p_auto"), "kendall_p_auto", id);
    chk_v(&e, pr, jnum(c, "pearson_r"), "pearson_r", id);
    n_nan += isnan(jnum(c, "spearman_rho"));
    free(r);
    free(x);
    free(y);
    free(rx);
    free(ry);
    id++;
  }
  assert_true(id >= 8);
  assert_true(n_nan >= 1); /* the all_tied_y case: its NaNs must have been read as NaN */
  /* the scipy doc example (spec 5.3) went through the exact branch? n = 5 with ties: no. */
  const cJSON *demo = cJSON_GetObjectItemCaseSensitive(root, "paired_bootstrap_demo");
  assert_non_null(demo);
  size_t n, n1, n2;
  double *hum = jarr(demo, "human", &n), *m1 = jarr(demo, "metric1", &n1),
         *m2 = jarr(demo, "metric2", &n2);
  assert_int_equal(n, (size_t)jnum(demo, "n"));
  assert_int_equal(n, n1);
  assert_int_equal(n, n2);
  chk_v(&e, tl_spearman(hum, m1, n).rho, jnum(demo, "rho1_full"), "demo rho1_full", 0);
  chk_v(&e, tl_spearman(hum, m2, n).rho, jnum(demo, "rho2_full"), "demo rho2_full", 0);
  free(hum);
  free(m1);
  free(m2);
  cJSON_Delete(root);
  report("scipy_vectors.json", &e);
}

/* ---- 2. golden values from scipy at test time ---- */

/* The generator: deterministic (seeded) cases, one record per line, floats as float.hex()
 * (exact; strtod reads them). Exit 3 when numpy/scipy are missing. */
static const char *GEN_PY[] = {
"import sys, warnings",
"try:",
"    import numpy as np, scipy, scipy.stats as st, scipy.special as sp",
"    from scipy.stats._mstats_basic import _kendall_p_exact",
"except Exception:",
"    sys.exit(3)",
"if scipy.__version__ != '1.10.1': sys.stderr.write('note: scipy %s, not 1.10.1\\n' % scipy.__version__)",
"warnings.simplefilter('ignore')",
"try:",
"    import mpmath as mp; mp.mp.dps = 40",
"except Exception:",
"    mp = None",
"def tb(a, b, x):  # mpmath truth of I_x(a, b), or nan",
"    return float(mp.betainc(a, b, 0, x, regularized=True)) if mp else float('nan')",
"def tt(t, df):  # mpmath truth of P(T > t), or nan",
"    if not mp: return float('nan')",
"    v = mp.betainc(mp.mpf(df) / 2, mp.mpf(1) / 2, 0, mp.mpf(df) / (df + mp.mpf(t) ** 2), regularized=True) / 2",
"    return float(v if t > 0 else 1 - v)",
"rng = np.random.default_rng(20240531)",
"out = sys.stdout",
"def h(v): return float(v).hex()",
"def fl(a): return ' '.join(h(v) for v in a)",
"def corr(x, y):",
"    x = np.asarray(x, float); y = np.asarray(y, float); n = len(x)",
"    s = st.spearmanr(x, y); k = st.kendalltau(x, y); kc = st.kendalltau(x, y, variant='c')",
"    ka = st.kendalltau(x, y, method='asymptotic')",
"    pr = st.pearsonr(x, y)[0] if n >= 2 else float('nan')",
"    out.write('C %d %s %s %s %s %s\\n' % (n, fl(x), fl(y), fl(st.rankdata(x)), fl(st.rankdata(y)),",
"              fl([s[0], s[1], k[0], kc[0], ka[1], k[1], pr])))",
"for i in range(240):",
"    kind = i % 12",
"    if kind == 0:",
"        n = int(rng.integers(2, 12)); x = rng.integers(0, 3, n) / 2; y = rng.integers(0, 3, n) / 2",
"    elif kind == 1:",
"        n = int(rng.integers(2, 34)); x = rng.permutation(n) * 1.0",
"        y = x + rng.normal(0, rng.uniform(0.1, 20), n)",
"    elif kind == 2:",
"        n = int(rng.integers(34, 400)); x = np.sort(rng.normal(size=n)); y = x * 2 + 1",
"        if i % 3:",
"            j = int(rng.integers(0, n - 1)); y[j], y[j + 1] = y[j + 1], y[j]",
"        if i % 4 == 0: y = -y",
"    elif kind == 3:",
"        n = int(rng.integers(50, 3001)); x = rng.integers(0, 3, n) / 2",
"        y = np.clip(np.round((x + rng.normal(0, 0.4, n)) * 4) / 4, 0, 1)",
"    elif kind == 4:",
"        n = int(rng.integers(20, 3001)); x = rng.normal(size=n)",
"        y = x + rng.normal(size=n) * 10 ** rng.uniform(-1.5, 1)",
"    elif kind == 5:",
"        n = int(rng.integers(4, 500)); x = rng.integers(0, 2, n) * 1.0",
"        y = np.where(rng.random(n) < 0.7, x, 1 - x)",
"    elif kind == 6:",
"        n = int(rng.integers(10, 2000)); x = rng.normal(size=n)",
"        y = np.clip(np.round(x + rng.normal(0, 1, n)), -2, 2)",
"    elif kind == 7:",
"        n = int(rng.integers(2, 50)); x = rng.normal(size=n); y = np.full(n, 0.5)",
"        if i % 3 == 0: x, y = y, x",
"        if i % 5 == 0: x = np.full(n, 1.0)",
"    elif kind == 8:",
"        n = int(rng.integers(300, 3001)); x = rng.normal(size=n)",
"        y = x + rng.normal(size=n) * rng.uniform(0.25, 1.2)",
"    elif kind == 9:",
"        n = int(rng.integers(100, 3001)); x = np.round(rng.normal(size=n), 1)",
"        y = np.round(x + rng.normal(size=n), 1)",
"    elif kind == 10:",
"        n = int(rng.integers(2, 6)); x = rng.normal(size=n); y = rng.normal(size=n)",
"        if i % 2: y = x.copy()",
"    else:",
"        n = int(rng.integers(20, 200)); x = rng.integers(0, 3, n) / 2",
"        y = rng.integers(0, 5, n) / 4",
"    corr(x, y)",
"for n, c in [(1, 0), (2, 0), (2, 1), (3, 1), (3, 3), (4, 3), (5, 5), (20, 0), (20, 1), (33, 264),",
"             (34, 1), (170, 0), (170, 1), (171, 0), (171, 1), (172, 1), (300, 0), (300, 1)]:",
"    out.write('E %d %d %s\\n' % (n, c, h(_kendall_p_exact(n, c))))",
"for k in range(60):",
"    n = int(rng.integers(3, 34)); c = int(rng.integers(0, n * (n - 1) // 2 + 1))",
"    out.write('E %d %d %s\\n' % (n, c, h(_kendall_p_exact(n, c))))",
"for k in range(12):",
"    n = int(rng.integers(171, 260)); c = int(rng.integers(2, 3000))",
"    out.write('E %d %d %s\\n' % (n, c, h(_kendall_p_exact(n, c))))",
"for k in range(60):",
"    n = int(rng.choice([2, 3, 5, 30, 200, 1000, 5000])); a = rng.normal(size=n)",
"    b = a + rng.normal(size=n) * 10 ** rng.uniform(-3, 0) + rng.normal() * 10 ** rng.uniform(-3, 0)",
"    if k == 0: b = a.copy()",
"    if k == 1: b = a + 0.25",
"    r = st.ttest_rel(a, b)",
"    out.write('R %d %s %s %s\\n' % (n, fl(a), fl(b), fl([r[0], r[1]])))",
"    m = int(rng.integers(2, 6000)); b2 = rng.normal(size=m) * 1.1 + rng.uniform(-0.3, 0.3)",
"    r = st.ttest_ind(a, b2)",
"    out.write('I %d %d %s %s %s\\n' % (n, m, fl(a), fl(b2), fl([r[0], r[1]])))",
"ps = [10.0 ** -k for k in range(1, 309)] + list(rng.random(200)) + [0.5, 0.5 + 1e-12, 0.5 - 1e-12,",
"      0.02425, 0.97575, 1 - 1e-16, 5e-324, 1e-310]",
"ps += [1 - 10.0 ** -k for k in range(1, 16)]",
"for p in ps:",
"    out.write('Q %s %s\\n' % (h(p), h(st.norm.ppf(p))))",
"for k in range(400):",
"    df = float(rng.choice([1, 2, 3, 4, 7, 10, 30, 100, 998, 2998, 9998, 1e5])) if k % 4 else 10 ** rng.uniform(-0.5, 4.5)",
"    t = rng.normal() * 10 ** rng.uniform(-10, 2.5)",
"    out.write('T %s %s %s %s\\n' % (h(t), h(df), h(st.t.sf(t, df)), h(tt(t, df))))",
"for z in list(rng.normal(size=100) * 10) + [0.0, 1e-300, -40.0, 37.5, 38.4, 8.0, -8.0]:",
"    out.write('N %s %s %s\\n' % (h(z), h(st.norm.sf(z)), h(st.norm.cdf(z))))",
"for k in range(300):",
"    a = 10 ** rng.uniform(-1, 3.5); b = 10 ** rng.uniform(-1, 3.5) if k % 2 else 0.5",
"    x = rng.random() if k % 3 else rng.beta(a, b)",
"    out.write('B %s %s %s %s %s\\n' % (h(a), h(b), h(x), h(sp.betainc(a, b, x)), h(tb(a, b, x))))",
"for k in range(100):",
"    r12, r13, r23 = rng.random(3); n = int(rng.integers(4, 5000))",
"    diff = r12 - r13",
"    det = 1 - (r12**2) - (r23**2) - (r13**2) + (2 * r12 * r23 * r13)",
"    av = (r12 + r13) / 2",
"    cube = (1 - r23) ** 3",
"    t2 = diff * np.sqrt((n - 1) * (1 + r23) / ((2 * (n - 1) / (n - 3)) * det + av**2 * cube))",
"    out.write('W %s %s %s %d %s %s\\n' % (h(r12), h(r13), h(r23), n, h(t2), h(st.t.sf(abs(t2), n - 3) * 2)))",
NULL};

/* Runs the generator; returns the malloc'd output or NULL (python or scipy absent: the caller
 * skips). The interpreter: $TALLY_PYTHON, else /usr/bin/python3. */
static char *run_generator(void) {
  const char *py = getenv("TALLY_PYTHON");
  if (!py || !*py) py = "/usr/bin/python3";
  if (access(py, X_OK) != 0) return NULL;
  char script[] = "/tmp/tally-stats-gen-XXXXXX";
  int fd = mkstemp(script);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  for (size_t i = 0; GEN_PY[i]; i++) fprintf(f, "%s\n", GEN_PY[i]);
  fclose(f);
  char outp[] = "/tmp/tally-stats-gold-XXXXXX";
  int fo = mkstemp(outp);
  assert_true(fo >= 0);
  close(fo);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s' '%s' > '%s'", py, script, outp);
  int rc = system(cmd);
  unlink(script);
  char *text = NULL;
  if (rc == 0) {
    text = slurp(outp, NULL);
  } else if (!(WIFEXITED(rc) && WEXITSTATUS(rc) == 3)) {
    unlink(outp);
    fail_msg("the scipy generator failed (status %d)", rc);
  }
  unlink(outp);
  return text;
}

/* A cursor over whitespace-separated numbers (hex floats, nan, inf, integers). */
static double nx(char **p) {
  char *end;
  double v = strtod(*p, &end);
  if (end == *p) fail_msg("golden file: number expected at '%.20s'", *p);
  *p = end;
  return v;
}

static double *nxv(char **p, size_t n) {
  double *v = malloc((n ? n : 1) * sizeof *v);
  for (size_t i = 0; i < n; i++) v[i] = nx(p);
  return v;
}

static int free_state(void **state) {
  free(*state);
  *state = NULL;
  return 0;
}

static void test_scipy_golden(void **state) {
  char *text = run_generator();
  *state = text; /* freed by free_state, also when a check fails */
  if (!text) {
    TU_SKIP("skipped: no python with numpy/scipy ($TALLY_PYTHON or /usr/bin/python3)\n");
  }
  /* The betainc continued fraction runs in long double; where that is no wider than double (or
   * under valgrind, which computes x87 long double in 64 bits) it loses ~1.7e-14 near the
   * symmetry switch of I_x(a, 1/2) with large a: the mpmath bound is relaxed accordingly. */
  volatile long double one = 1.0L, tiny = 0x1p-60L;
  if (one + tiny == one) {
    g_true_abs_tol = 5e-14;
    print_message("  note: long double is not wider than double here: mpmath bound 5e-14\n");
  }
  errstat ec = es_new(), ep = es_new(), ek = es_new(), ex = es_new(), et = es_new(), eq = es_new(),
          ets = es_new(), en = es_new(), eb = es_new(), ew = es_new(), epr = es_new(),
          etr = es_new(), e_bs = es_new();
  long counts[128] = {0}, n_exact = 0, n_nan = 0, n_big = 0;
  double t_corr = 0;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char tag = line[0];
    char *p = line + 1;
    long id = counts[(int)tag]++;
    if (tag == 'C') {
      size_t n = (size_t)nx(&p);
      double *x = nxv(&p, n), *y = nxv(&p, n), *rx = nxv(&p, n), *ry = nxv(&p, n);
      double w[7];
      for (int i = 0; i < 7; i++) w[i] = nx(&p);
      double *r = malloc(n * sizeof *r);
      tl_rankdata_avg(x, n, r);
      for (size_t i = 0; i < n; i++)
        if (r[i] != rx[i]) fail_msg("rank x case %ld i=%zu: %g vs %g", id, i, r[i], rx[i]);
      tl_rankdata_avg(y, n, r);
      for (size_t i = 0; i < n; i++)
        if (r[i] != ry[i]) fail_msg("rank y case %ld i=%zu: %g vs %g", id, i, r[i], ry[i]);
      clock_t t0 = clock();
      tl_spearman_res s = tl_spearman(x, y, n);
      tl_kendall_res k = tl_kendall(x, y, n);
      t_corr += (double)(clock() - t0) / CLOCKS_PER_SEC;
      double pr = tl_pearson(x, y, n);
      chk_v(&ec, s.rho, w[0], "spearman_rho", id);
      chk_p(&ep, s.p, w[1], "spearman_p", id);
      chk_v(&ec, k.tau_b, w[2], "kendall_tau_b", id);
      chk_v(&ec, k.tau_c, w[3], "kendall_tau_c", id);
      chk_p(&ek, k.p_asymptotic, w[4], "kendall_p_asymptotic", id);
      chk_p(&ek, k.p_auto, w[5], "kendall_p_auto", id);
      chk_v(&epr, pr, w[6], "pearson_r", id);
      n_exact += k.exact;
      n_nan += isnan(w[0]);
      n_big += n >= 1000;
      free(r);
      free(x);
      free(y);
      free(rx);
      free(ry);
    } else if (tag == 'E') {
      int64_t n = (int64_t)nx(&p), c = (int64_t)nx(&p);
      chk_p(&ex, tl_kendall_exact_p(n, c), nx(&p), "kendall_exact_p", id);
    } else if (tag == 'R' || tag == 'I') {
      size_t na = (size_t)nx(&p), nb = tag == 'R' ? na : (size_t)nx(&p);
      double *a = nxv(&p, na), *b = nxv(&p, nb);
      double wt = nx(&p), wp = nx(&p), t;
      double got = tag == 'R' ? tl_ttest_rel_p(a, b, na, &t) : tl_ttest_ind_p(a, b, na, nb, &t);
      chk_v(&et, t, wt, tag == 'R' ? "ttest_rel t" : "ttest_ind t", id);
      chk_p(&et, got, wp, tag == 'R' ? "ttest_rel p" : "ttest_ind p", id);
      free(a);
      free(b);
    } else if (tag == 'Q') {
      double pp = nx(&p);
      chk_v(&eq, tl_norm_ppf(pp), nx(&p), "norm_ppf", id);
    } else if (tag == 'T') {
      double t = nx(&p), df = nx(&p);
      double got = tl_t_sf(t, df);
      chk_p(&ets, got, nx(&p), "t_sf", id);
      double tru = nx(&p);
      if (!isnan(tru)) chk_true(&etr, got, tru, "t_sf vs mpmath", id);
      chk_p(&ets, tl_t_cdf(-t, df), tl_t_sf(t, df), "t_cdf(-t) = t_sf(t)", id);
    } else if (tag == 'N') {
      double z = nx(&p), sf = nx(&p), cdf = nx(&p);
      chk_p(&en, tl_norm_sf(z), sf, "norm_sf", id);
      chk_p(&en, tl_norm_cdf(z), cdf, "norm_cdf", id);
    } else if (tag == 'B') {
      double a = nx(&p), b = nx(&p), x = nx(&p);
      double got = tl_betainc(a, b, x), want = nx(&p), tru = nx(&p);
      /* scipy.special.betainc is cephes incbet, off by up to ~1.3e-12 at a or b ~ 2000 here (the
       * mpmath value shows the error is scipy's): a looser bound against it */
      e_bs.n++;
      e_bs.max_abs = fmax(e_bs.max_abs, fabs(got - want));
      if (!(fabs(got - want) <= 5e-12)) fail_msg("betainc #%ld: got %.17g scipy %.17g", id, got, want);
      if (!isnan(tru)) chk_true(&eb, got, tru, "betainc vs mpmath", id);
    } else if (tag == 'W') {
      double r12 = nx(&p), r13 = nx(&p), r23 = nx(&p), t;
      size_t n = (size_t)nx(&p);
      double wt = nx(&p), wp = nx(&p);
      double got = tl_williams_p(r12, r13, r23, n, &t);
      chk_v(&ew, t, wt, "williams t", id);
      chk_p(&ew, got, wp, "williams p", id);
    } else {
      fail_msg("golden file: unknown record '%c'", tag);
    }
  }
  /* the generator covered what it claims */
  assert_int_equal(counts['C'], 240);
  assert_true(counts['E'] >= 90 && counts['R'] == 60 && counts['I'] == 60 && counts['Q'] > 500);
  assert_true(n_exact >= 30); /* exact branch: n <= 33 without ties, and dis <= 1 at n > 33 */
  assert_true(n_nan >= 20);   /* constant inputs */
  assert_true(n_big >= 20);
  assert_true(ep.min_p < 1e-250 && ek.min_p < 1e-250); /* tiny p-values were exercised */
  print_message("  scipy golden (%ld corr cases, %ld exact-branch, %ld NaN, %ld with n >= 1000; "
                "spearman+kendall CPU %.3f s):\n", counts['C'], n_exact, n_nan, n_big, t_corr);
  report("rho/tau_b/tau_c", &ec);
  report("pearson_r", &epr);
  report("spearman_p", &ep);
  report("kendall p (asym,auto)", &ek);
  report("kendall_exact_p", &ex);
  report("ttest rel/ind (t, p)", &et);
  report("norm_ppf", &eq);
  report("norm sf/cdf", &en);
  report("t sf/cdf", &ets);
  report("t sf vs mpmath", &etr);
  report("betainc vs scipy", &e_bs);
  report("betainc vs mpmath", &eb);
  if (etr.n == 0) print_message("  (mpmath absent: no high-precision reference for t sf / betainc)\n");
  report("williams (t, p)", &ew);
}

/* ---- 3. properties ---- */

/* splitmix64: a tiny deterministic generator for test data */
static uint64_t sm64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static double unif(uint64_t *s) { return (double)(sm64(s) >> 11) * 0x1p-53; }

/* x with `levels` distinct values (0 = continuous) */
static void fill(double *x, size_t n, int levels, uint64_t *s) {
  for (size_t i = 0; i < n; i++)
    x[i] = levels ? (double)(sm64(s) % (uint64_t)levels) / 2.0 : unif(s) * 10 - 5;
}

static void test_brute_force_counts(void **state) {
  (void)state;
  uint64_t seed = 7;
  static const struct {
    size_t n;
    int lx, ly;
  } C[] = {{2, 2, 2},  {3, 0, 0},   {5, 2, 3},   {17, 3, 5},   {40, 0, 3},  {64, 2, 2},
           {100, 3, 0}, {257, 0, 0}, {300, 5, 5}, {513, 1, 3}, {700, 3, 3}, {1000, 0, 2}};
  for (size_t c = 0; c < sizeof C / sizeof C[0]; c++) {
    size_t n = C[c].n;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *r = malloc(n * sizeof *r);
    fill(x, n, C[c].lx, &seed);
    fill(y, n, C[c].ly, &seed);
    /* ranks: #less + (#equal + 1) / 2 */
    tl_rankdata_avg(x, n, r);
    for (size_t i = 0; i < n; i++) {
      size_t lt = 0, eq = 0;
      for (size_t j = 0; j < n; j++) {
        lt += x[j] < x[i];
        eq += x[j] == x[i];
      }
      assert_true(r[i] == (double)lt + ((double)eq + 1) / 2);
    }
    /* pair counts by definition */
    int64_t dis = 0, xt = 0, yt = 0, nt = 0;
    for (size_t i = 0; i < n; i++)
      for (size_t j = i + 1; j < n; j++) {
        double dx = x[i] - x[j], dy = y[i] - y[j];
        dis += dx * dy < 0;
        xt += dx == 0;
        yt += dy == 0;
        nt += dx == 0 && dy == 0;
      }
    tl_kendall_res k = tl_kendall(x, y, n);
    assert_int_equal(k.n0, (int64_t)(n * (n - 1) / 2));
    assert_int_equal(k.dis, dis);
    assert_int_equal(k.xtie, xt);
    assert_int_equal(k.ytie, yt);
    assert_int_equal(k.ntie, nt);
    if (xt < k.n0 && yt < k.n0) {
      double S = (double)(k.n0 - xt - yt + nt - 2 * dis);
      assert_true(fabs(k.tau_b - S / sqrt((double)(k.n0 - xt) * (double)(k.n0 - yt))) < 1e-15);
    } else {
      assert_true(isnan(k.tau_b) && isnan(k.p_auto));
    }
    /* Pearson against exact integer sums (the values are multiples of 1/2): a few ulps.
     * (scipy's own pearsonr is off by up to ~2e-14 on such data: BLAS dot and norm.) */
    if (C[c].lx && C[c].ly && xt < k.n0 && yt < k.n0) {
      int64_t sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0, nn = (int64_t)n;
      for (size_t i = 0; i < n; i++) {
        int64_t a = (int64_t)(2 * x[i]), b = (int64_t)(2 * y[i]);
        sx += a;
        sy += b;
        sxx += a * a;
        syy += b * b;
        sxy += a * b;
      }
      /* n^2 S = n sum(ab) - sum(a) sum(b), exact in int64 at these sizes */
      long double cxy = (long double)(nn * sxy - sx * sy), cxx = (long double)(nn * sxx - sx * sx),
                  cyy = (long double)(nn * syy - sy * sy);
      double want = (double)(cxy / sqrtl(cxx * cyy));
      if (n > 2) assert_true(fabs(tl_pearson(x, y, n) - want) <= 4 * DBL_EPSILON);
    }
    free(x);
    free(y);
    free(r);
  }
}

static void test_row_order_and_symmetry(void **state) {
  (void)state;
  uint64_t seed = 11;
  static const size_t N[] = {3, 10, 33, 34, 200, 2000};
  static const int L[][2] = {{0, 0}, {3, 5}, {2, 0}, {3, 3}};
  for (size_t a = 0; a < sizeof N / sizeof N[0]; a++)
    for (size_t b = 0; b < sizeof L / sizeof L[0]; b++) {
      size_t n = N[a];
      double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
      double *px = malloc(n * sizeof *px), *py = malloc(n * sizeof *py);
      fill(x, n, L[b][0], &seed);
      fill(y, n, L[b][1], &seed);
      for (size_t i = 0; i < n; i++) y[i] += x[i] * (L[b][1] ? 0 : 0.5); /* some correlation */
      /* a random permutation of the rows */
      size_t *perm = malloc(n * sizeof *perm);
      for (size_t i = 0; i < n; i++) perm[i] = i;
      for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(sm64(&seed) % (i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
      }
      for (size_t i = 0; i < n; i++) {
        px[i] = x[perm[i]];
        py[i] = y[perm[i]];
      }
      tl_spearman_res s1 = tl_spearman(x, y, n), s2 = tl_spearman(px, py, n);
      tl_kendall_res k1 = tl_kendall(x, y, n), k2 = tl_kendall(px, py, n), ks = tl_kendall(y, x, n);
      /* rank statistics are computed from exact integer sums and counts: bit-identical */
      assert_memory_equal(&s1, &s2, sizeof s1);
      assert_true(k1.tau_b == k2.tau_b && k1.tau_c == k2.tau_c);
      assert_true(k1.p_auto == k2.p_auto && k1.p_asymptotic == k2.p_asymptotic);
      assert_int_equal(k1.dis, k2.dis);
      /* Pearson sums depend on the order (pairwise summation, as numpy): a few ulps */
      assert_true(fabs(tl_pearson(x, y, n) - tl_pearson(px, py, n)) <= 4e-16);
      /* symmetry */
      assert_true(fabs(k1.tau_b - ks.tau_b) <= 2.3e-16 && k1.tau_c == ks.tau_c);
      assert_true(k1.p_asymptotic == ks.p_asymptotic && k1.p_auto == ks.p_auto);
      assert_int_equal(k1.dis, ks.dis);
      assert_int_equal(k1.xtie, ks.ytie);
      assert_int_equal(k1.mx, ks.my);
      tl_spearman_res ss = tl_spearman(y, x, n);
      assert_true(fabs(ss.rho - s1.rho) <= 2.3e-16);
      /* rho(x, x) = 1, tau(x, x) = 1 */
      tl_spearman_res sxx = tl_spearman(x, x, n);
      tl_kendall_res kxx = tl_kendall(x, x, n);
      assert_true(fabs(sxx.rho - 1.0) <= 2.3e-16);
      assert_true(fabs(kxx.tau_b - 1.0) <= 2.3e-16);
      assert_int_equal(kxx.dis, 0);
      assert_true(fabs(tl_pearson(x, x, n) - 1.0) <= 4.5e-16);
      free(x);
      free(y);
      free(px);
      free(py);
      free(perm);
    }
}

static void test_edge_cases(void **state) {
  (void)state;
  double x[4] = {1, 2, 3, 4}, c[4] = {2, 2, 2, 2}, y2[2] = {5, 3};
  /* n = 0 and 1: NaN, no crash, no allocation of size 0 */
  for (size_t n = 0; n <= 1; n++) {
    tl_spearman_res s = tl_spearman(x, x, n);
    tl_kendall_res k = tl_kendall(x, x, n);
    assert_true(isnan(s.rho) && isnan(s.p));
    assert_true(isnan(k.tau_b) && isnan(k.tau_c) && isnan(k.p_auto) && isnan(k.p_asymptotic));
    assert_true(isnan(tl_pearson(x, x, n)));
    assert_true(isnan(tl_ttest_rel_p(x, x, n, NULL)));
  }
  tl_rankdata_avg(x, 0, NULL);
  /* n = 2 (scipy: spearman rho = -(1 - 2^-53) from corrcoef's scaling, p NaN (0 dof);
   * kendall exact p = 1, asymptotic NaN (0/0 in the variance); pearson = sign product) */
  tl_spearman_res s = tl_spearman(x, y2, 2);
  assert_true(s.rho == -0.9999999999999999 && isnan(s.p));
  tl_kendall_res k = tl_kendall(x, y2, 2);
  assert_true(k.tau_b == -1.0 && k.tau_c == -1.0 && k.p_auto == 1.0 && k.exact == 1);
  assert_true(isnan(k.p_asymptotic));
  assert_true(tl_pearson(x, y2, 2) == -1.0);
  /* n = 3, |rho| = 1: t = inf, p = 0 */
  double r3[3] = {3, 2, 1};
  s = tl_spearman(x, r3, 3);
  assert_true(s.rho == -1.0 && s.p == 0.0);
  /* constant input -> NaN without crash (either side, both sides) */
  for (int side = 0; side < 3; side++) {
    const double *a = side == 1 ? x : c, *b = side == 0 ? x : c;
    s = tl_spearman(a, b, 4);
    k = tl_kendall(a, b, 4);
    assert_true(isnan(s.rho) && isnan(s.p) && isnan(tl_pearson(a, b, 4)));
    assert_true(isnan(k.tau_b) && isnan(k.tau_c) && isnan(k.p_auto) && isnan(k.p_asymptotic));
    assert_int_equal(k.exact, 0);
  }
  /* t-tests: identical samples -> t = 0/0 = NaN; constant nonzero difference -> |t| = inf, p = 0 */
  double t;
  assert_true(isnan(tl_ttest_rel_p(x, x, 4, &t)) && isnan(t));
  double xs[4] = {1.5, 2.5, 3.5, 4.5};
  assert_true(tl_ttest_rel_p(x, xs, 4, &t) == 0.0 && t == -INFINITY);
  assert_true(isnan(tl_ttest_ind_p(x, x, 4, 1, NULL)));
  assert_true(isnan(tl_williams_p(0.5, 0.4, 0.3, 3, &t)) && isnan(t));
  /* distributions at their boundaries */
  assert_true(tl_norm_ppf(0.0) == -INFINITY && tl_norm_ppf(1.0) == INFINITY);
  assert_true(isnan(tl_norm_ppf(-0.1)) && isnan(tl_norm_ppf(1.5)) && tl_norm_ppf(0.5) == 0.0);
  assert_true(tl_t_sf(INFINITY, 3) == 0.0 && tl_t_sf(-INFINITY, 3) == 1.0 && tl_t_sf(0, 3) == 0.5);
  assert_true(isnan(tl_t_sf(1.0, 0.0)) && isnan(tl_t_sf(NAN, 3)));
  assert_true(tl_betainc(2, 3, 0) == 0.0 && tl_betainc(2, 3, 1) == 1.0);
  assert_true(isnan(tl_betainc(-1, 3, 0.5)) && isnan(tl_betainc(2, 3, 1.5)));
  assert_true(isnan(tl_kendall_exact_p(0, 0)) && isnan(tl_kendall_exact_p(5, 11)));
  assert_true(isnan(tl_kendall_exact_p(5, -1)));
}

/* Closed forms and identities that need no scipy. */
static void test_distribution_identities(void **state) {
  (void)state;
  double worst = 0;
  for (int i = -400; i <= 400; i++) {
    double t = sinh(i / 40.0); /* -1e4 .. 1e4 */
    double e1 = 0.5 - atan(t) / TL_PI_TEST, e2 = 0.5 - t / (2 * sqrt(2 + t * t));
    /* tail form for positive t keeps relative accuracy: atan(1/t)/pi, 1/2 (1 - t/sqrt(2+t^2)) */
    if (t > 1) {
      e1 = atan(1 / t) / TL_PI_TEST;
      e2 = 1 / (sqrt(2 + t * t) * (sqrt(2 + t * t) + t));
    }
    double r1 = fabs(tl_t_sf(t, 1) - e1) / e1, r2 = fabs(tl_t_sf(t, 2) - e2) / e2;
    worst = fmax(worst, fmax(r1, r2));
    assert_true(r1 < 1e-13 && r2 < 1e-13);
  }
  /* ppf inverts cdf; symmetric */
  for (int i = 1; i < 300; i++) {
    double p = pow(10.0, -i / 1.0);
    double z = tl_norm_ppf(p);
    /* z itself is rounded: Phi moves by |z| ulp(z) relative, about z^2 eps */
    double rt = fabs(tl_norm_cdf(z) / p - 1);
    if (rt > 4 * DBL_EPSILON * (1 + z * z)) fail_msg("ppf(%g) = %.17g: cdf rel err %.3g", p, z, rt);
    assert_true(tl_norm_ppf(1 - 0x1p-20 * i) == -tl_norm_ppf(0x1p-20 * i));
  }
  /* betainc: symmetry I_x(a,b) = 1 - I_{1-x}(b,a), and I_x(1,1) = x, I_x(a,1) = x^a */
  for (int i = 1; i < 100; i++) {
    double x = i / 100.0;
    assert_true(fabs(tl_betainc(1, 1, x) - x) < 1e-15);
    assert_true(fabs(tl_betainc(3.5, 1, x) / pow(x, 3.5) - 1) < 1e-13);
    assert_true(fabs(tl_betainc(2.5, 7.25, x) + tl_betainc(7.25, 2.5, 1 - x) - 1) < 1e-15);
  }
  print_message("  t sf closed forms (df 1, 2): max rel err %.3g\n", worst);
}

/* Exact Kendall p by enumerating permutations (n <= 8): p = 2 #(inversions <= c) / n!, clipped. */
static void test_kendall_exact_enumeration(void **state) {
  (void)state;
  for (int n = 1; n <= 8; n++) {
    int perm[8], nperm = 1;
    int64_t cnt[29] = {0};
    for (int i = 0; i < n; i++) {
      perm[i] = i;
      nperm *= i + 1;
    }
    for (int it = 0; it < nperm; it++) { /* next permutation (lexicographic) */
      int inv = 0;
      for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) inv += perm[i] > perm[j];
      cnt[inv]++;
      int i = n - 2;
      while (i >= 0 && perm[i] > perm[i + 1]) i--;
      if (i < 0) break;
      int j = n - 1;
      while (perm[j] < perm[i]) j--;
      int t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
      for (int a = i + 1, b = n - 1; a < b; a++, b--) {
        t = perm[a];
        perm[a] = perm[b];
        perm[b] = t;
      }
    }
    int n0 = n * (n - 1) / 2;
    for (int c = 0; c <= n0; c++) {
      int cm = c < n0 - c ? c : n0 - c;
      int64_t le = 0;
      for (int k = 0; k <= cm; k++) le += cnt[k];
      double want = fmin(1.0, 2.0 * (double)le / nperm);
      if (4 * cm == n * (n - 1)) want = 1.0;
      assert_true(fabs(tl_kendall_exact_p(n, c) - want) < 1e-15);
    }
  }
  /* dis <= 1 at large n goes through the shortcuts: 2/n!, 2/(n-1)!, 0 beyond 170/171 */
  assert_true(tl_kendall_exact_p(171, 0) == 0.0 && tl_kendall_exact_p(172, 1) == 0.0);
  assert_true(tl_kendall_exact_p(171, 1) > 0.0);
}

/* Timing (printed, not asserted): Kendall and Spearman at n = 1e6, continuous and 3-level ties. */
static void test_timing(void **state) {
  (void)state;
  size_t n = 1000000;
  uint64_t seed = 3;
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  for (int lev = 0; lev <= 3; lev += 3) {
    fill(x, n, lev, &seed);
    fill(y, n, 0, &seed);
    for (size_t i = 0; i < n; i++) y[i] += x[i];
    struct timespec a, b, c;
    clock_gettime(CLOCK_MONOTONIC, &a);
    tl_kendall_res k = tl_kendall(x, y, n);
    clock_gettime(CLOCK_MONOTONIC, &b);
    tl_spearman_res s = tl_spearman(x, y, n);
    clock_gettime(CLOCK_MONOTONIC, &c);
    assert_true(k.n0 == (int64_t)n * ((int64_t)n - 1) / 2 && !isnan(k.tau_b) && !isnan(s.rho));
    print_message("  n=1e6 (%s x): kendall %.3f s, spearman %.3f s (tau_b %.4f, rho %.4f)\n",
                  lev ? "3-level" : "continuous",
                  (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec),
                  (double)(c.tv_sec - b.tv_sec) + 1e-9 * (double)(c.tv_nsec - b.tv_nsec),
                  k.tau_b, s.rho);
  }
  free(x);
  free(y);
}

/* McNemar's exact test (against the binomial sums written out) and the paired bootstrap. */
static void test_paired(void **state) {
  (void)state;
  /* b = 3, c = 10: 2 P(X <= 3), X ~ Bin(13, 1/2) = 2 (1 + 13 + 78 + 286) / 8192 */
  assert_true(fabs(tl_mcnemar_exact_p(3, 10) - 2.0 * 378 / 8192) < 1e-15);
  assert_true(fabs(tl_mcnemar_exact_p(10, 3) - 2.0 * 378 / 8192) < 1e-15);
  assert_true(tl_mcnemar_exact_p(5, 5) == 1.0 && tl_mcnemar_exact_p(0, 0) == 1.0);
  assert_true(fabs(tl_mcnemar_exact_p(0, 6) - 2.0 / 64) < 1e-15);
  const double a[5] = {1, 0.5, 1, 0, 1}, b[5] = {0, 0.5, 0.5, 0, 0};
  tl_paired_res r, r2;
  assert_int_equal(tl_paired_boot(a, b, 5, 1000, 7, 0.95, &r), TL_OK);
  assert_true(fabs(r.diff - 0.5) < 1e-15 && fabs(r.mean_a - 0.7) < 1e-15);
  assert_true(r.ci_lo <= r.diff && r.diff <= r.ci_hi && r.ci_lo >= 0);
  assert_true(r.p_boot < 0.1); /* every difference is >= 0: only all-zero resamples sit at 0 */
  assert_int_equal(tl_paired_boot(a, b, 5, 1000, 7, 0.95, &r2), TL_OK);
  assert_true(r.ci_lo == r2.ci_lo && r.ci_hi == r2.ci_hi && r.p_boot == r2.p_boot);
  assert_int_equal(tl_paired_boot(b, a, 5, 1000, 7, 0.95, &r2), TL_OK); /* swapped: the mirror image */
  assert_true(r2.diff == -r.diff && r2.ci_lo == -r.ci_hi && r2.ci_hi == -r.ci_lo && r2.p_boot == r.p_boot);
  assert_int_equal(tl_paired_boot(a, b, 0, 10, 0, 0.95, &r2), TL_EINPUT);
}

/* Krippendorff's alpha on the reliability data of Krippendorff (2011), "Computing Krippendorff's
 * Alpha-Reliability" (4 coders, 12 units, values 1-5, missing values): the paper gives
 * nominal 0.743, ordinal 0.815, interval 0.849; the exact values below are from a direct
 * pairwise computation of D_o and D_e (no coincidence matrix). The matrix is built here with
 * the scale 12 (so 1/(m_u - 1) stays an integer for m_u <= 4), as integer-keeping callers do. */
static void test_kripp_alpha(void **state) {
  (void)state;
  enum { C = 4, U = 12, V = 5 };
  static const int D[C][U] = {{1, 2, 3, 3, 2, 1, 4, 1, 2, 0, 0, 0},
                              {1, 2, 3, 3, 2, 2, 4, 1, 2, 5, 0, 3},
                              {0, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 0},
                              {1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, 0}}; /* 0 = missing */
  double o[V * V] = {0};
  for (int u = 0; u < U; u++) {
    int m = 0;
    for (int c = 0; c < C; c++) m += D[c][u] != 0;
    if (m < 2) continue;
    for (int i = 0; i < C; i++)
      for (int j = 0; j < C; j++)
        if (i != j && D[i][u] && D[j][u]) o[(D[i][u] - 1) * V + (D[j][u] - 1)] += 12 / (m - 1);
  }
  static const double vals[V] = {1, 2, 3, 4, 5};
  assert_true(fabs(tl_kripp_alpha(o, V, 12, TL_KRIPP_NOMINAL, NULL) - 0.743421052631579) < 1e-12);
  assert_true(fabs(tl_kripp_alpha(o, V, 12, TL_KRIPP_ORDINAL, NULL) - 0.8153875037548813) < 1e-12);
  assert_true(fabs(tl_kripp_alpha(o, V, 12, TL_KRIPP_INTERVAL, vals) - 0.8491071428571428) < 1e-12);
  /* perfect agreement on two values: 1; one value only: undefined; nothing pairable: undefined */
  double p[4] = {4, 0, 0, 2};
  assert_true(tl_kripp_alpha(p, 2, 1, TL_KRIPP_ORDINAL, NULL) == 1.0);
  double q[4] = {6, 0, 0, 0};
  assert_true(isnan(tl_kripp_alpha(q, 2, 1, TL_KRIPP_NOMINAL, NULL)));
  double z[4] = {0};
  assert_true(isnan(tl_kripp_alpha(z, 2, 1, TL_KRIPP_NOMINAL, NULL)));
  /* systematic disagreement is below 0: two coders who always differ on a 2-value scale */
  double w[4] = {0, 3, 3, 0};
  assert_true(tl_kripp_alpha(w, 2, 1, TL_KRIPP_NOMINAL, NULL) < 0);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_scipy_golden, free_state),
      cmocka_unit_test(test_brute_force_counts),
      cmocka_unit_test(test_row_order_and_symmetry),
      cmocka_unit_test(test_edge_cases),
      cmocka_unit_test(test_distribution_identities),
      cmocka_unit_test(test_kendall_exact_enumeration),
      cmocka_unit_test(test_kripp_alpha),
      cmocka_unit_test(test_paired),
      cmocka_unit_test(test_timing),
  };
  const struct CMUnitTest shared[] = {
      cmocka_unit_test(test_scipy_vectors),
  };
  return TU_SHARED_GROUP(argc, argv, tests, shared, NULL, NULL);
}
