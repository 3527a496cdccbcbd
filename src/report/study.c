/* study.c - a study's tables as report tables (tally/report.h): the one code path behind what
 * `tally correlate` and a job's studies print (src/par/correlate_write.c, correlate_agree.c)
 * and the studies' section of `tally report` (src/cli/cmd_report.c). Both hold the study's
 * output tables as tl_tables (correlate: the ones it is about to write; report: read back from
 * /stats/<name>), so each builder here reads a tl_table by its column names (the schema:
 * docs/STATISTICS.md) and appends a report table; the text renderer sizes every column to its
 * contents, so nothing is cut.
 *
 * Every builder returns NULL, adding nothing, when a column it needs is absent or of another
 * type (a file from another version: the caller falls back to the generic table), and NULL
 * with the document marked out of memory when an allocation fails (tl_doc_ok tells which). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tally/report.h"

/* Column indices of `names` in t (n of them) into ix; 0 when each is there with the wanted
 * kind (str[i]: a string column, else a number column). */
static int cols_of(const tl_table *t, int n, const char *const *names, const int *str, int *ix) {
  for (int i = 0; i < n; i++) {
    ix[i] = t ? tl_table_col(t, names[i]) : -1;
    if (ix[i] < 0 || tl_col_is_str(t->cols[ix[i]].type) != (str[i] != 0)) return -1;
  }
  return 0;
}

/* A number cell of t as a double (an int64 column converted). */
static double num(const tl_table *t, int c, size_t r) {
  return t->cols[c].type == TL_COL_I64 ? (double)t->cols[c].v.i[r] : t->cols[c].v.f[r];
}

static const char *str(const tl_table *t, int c, size_t r) { return t->cols[c].v.s[r]; }

/* Whether row r belongs to `group` (NULL: every row). */
static int in_group(const tl_table *t, int gc, size_t r, const char *group) {
  return !group || !strcmp(str(t, gc, r), group);
}

enum { S_GROUP, S_METRIC, S_STAT, S_N, S_EST, S_SE, S_LO, S_HI, S_UND, S__N };

tl_rtable *tl_study_summary(tl_doc *d, tl_section *s, const tl_table *sum, const char *group, const char *title) {
  static const char *const NEED[S__N] = {"group", "metric", "statistic", "n", "estimate", "se", "ci_lo", "ci_hi", "n_undefined"};
  static const int STR[S__N] = {1, 1, 1, 0, 0, 0, 0, 0, 0};
  int ix[S__N];
  if (cols_of(sum, S__N, NEED, STR, ix)) return NULL;
  /* group NULL: every group's rows, with the group and its n; else the group's alone */
  static const char *const NAMES[] = {"group", "n", "metric", "statistic", "estimate [CI]", "SE", "undefined"};
  static const tl_rcol_kind KINDS[] = {TL_RC_TEXT, TL_RC_INT, TL_RC_TEXT, TL_RC_TEXT, TL_RC_EST, TL_RC_REAL, TL_RC_INT};
  const int off = group ? 2 : 0;
  tl_rtable *t = tl_sec_table(d, s, title, 7 - off, NAMES + off, KINDS + off);
  for (size_t r = 0; t && r < sum->nrows; r++) {
    if (!in_group(sum, ix[S_GROUP], r, group)) continue;
    size_t k = tl_rtable_row(d, t);
    if (k == (size_t)-1) break;
    if (!group) tl_cell_text(d, t, k, 0, str(sum, ix[S_GROUP], r)), tl_cell_int(t, k, 1, (int64_t)num(sum, ix[S_N], r));
    tl_cell_text(d, t, k, 2 - off, str(sum, ix[S_METRIC], r));
    tl_cell_text(d, t, k, 3 - off, str(sum, ix[S_STAT], r));
    tl_cell_est(t, k, 4 - off, num(sum, ix[S_EST], r), num(sum, ix[S_LO], r), num(sum, ix[S_HI], r));
    tl_cell_real(t, k, 5 - off, num(sum, ix[S_SE], r));
    tl_cell_int(t, k, 6 - off, (int64_t)num(sum, ix[S_UND], r));
  }
  return t;
}

/* A p-value cell: NaN left missing ("-": not run, or no such test) when `absent`. */
static void p_cell(tl_rtable *t, size_t k, int c, double p, int absent) {
  if (!(isnan(p) && absent)) tl_cell_real(t, k, c, p);
}

enum { C_GROUP, C_STAT, C_A, C_B, C_DELTA, C_LO, C_HI, C_PB, C_PW, C_PP, C_HOLM, C_BH, C_MDE, C_TT, C__N };

tl_rtable *tl_study_compare(tl_doc *d, tl_section *s, const tl_table *cmp, const char *group, const tl_study_fmt *f,
                            const char *title) {
  static const char *const NEED[C__N] = {"group", "statistic", "a", "b", "delta", "ci_lo", "ci_hi", "p_boot",
                                         "p_williams", "p_permutation", "p_holm", "p_bh", "mde80", "p_ttest_compat"};
  static const int STR[C__N] = {1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  int ix[C__N];
  if (cols_of(cmp, f->ttest_compat ? C__N : C__N - 1, NEED, STR, ix)) return NULL;
  static const char *const NAMES[] = {"group", "a", "b", "statistic", "delta [CI]", "p_boot", "p_williams", "p_perm",
                                      "p_holm", "p_bh", "mde80", "p_ttest(COMPAT)"};
  static const tl_rcol_kind KINDS[] = {TL_RC_TEXT, TL_RC_TEXT, TL_RC_TEXT, TL_RC_TEXT, TL_RC_EST, TL_RC_P,
                                       TL_RC_P,    TL_RC_P,    TL_RC_P,    TL_RC_P,    TL_RC_REAL, TL_RC_P};
  const int off = group ? 1 : 0, nc = (f->ttest_compat ? 12 : 11) - off;
  tl_rtable *t = tl_sec_table(d, s, title, nc, NAMES + off, KINDS + off);
  if (t && f->B) t->cols[5 - off].p_floor = t->cols[7 - off].p_floor = 1.0 / (double)f->B; /* p_boot, p_perm */
  for (size_t r = 0; t && r < cmp->nrows; r++) {
    if (!in_group(cmp, ix[C_GROUP], r, group)) continue;
    size_t k = tl_rtable_row(d, t);
    if (k == (size_t)-1) break;
    const char *stat = str(cmp, ix[C_STAT], r);
    if (!group) tl_cell_text(d, t, k, 0, str(cmp, ix[C_GROUP], r));
    tl_cell_text(d, t, k, 1 - off, str(cmp, ix[C_A], r));
    tl_cell_text(d, t, k, 2 - off, str(cmp, ix[C_B], r));
    tl_cell_text(d, t, k, 3 - off, stat);
    tl_cell_est(t, k, 4 - off, num(cmp, ix[C_DELTA], r), num(cmp, ix[C_LO], r), num(cmp, ix[C_HI], r));
    p_cell(t, k, 5 - off, num(cmp, ix[C_PB], r), 0);
    /* Williams' test exists for Spearman's rho alone: absent ("-") for the others */
    p_cell(t, k, 6 - off, num(cmp, ix[C_PW], r), strcmp(stat, "spearman") != 0);
    p_cell(t, k, 7 - off, num(cmp, ix[C_PP], r), !f->permutation);
    p_cell(t, k, 8 - off, num(cmp, ix[C_HOLM], r), 0);
    p_cell(t, k, 9 - off, num(cmp, ix[C_BH], r), 0);
    tl_cell_real(t, k, 10 - off, num(cmp, ix[C_MDE], r));
    if (f->ttest_compat) p_cell(t, k, 11 - off, num(cmp, ix[C_TT], r), 0);
  }
  return t;
}

/* Index of s in v[0..n), or n. */
static size_t find(const char *const *v, size_t n, const char *s) {
  size_t i = 0;
  while (i < n && strcmp(v[i], s)) i++;
  return i;
}

/* The distinct values of string column c of t, first-seen order: v[*n] (borrowed from t;
 * the array malloc'd, NULL when out of memory). */
static const char **distinct(const tl_table *t, int c, size_t *n) {
  const char **v = malloc((t->nrows + 1) * sizeof *v);
  *n = 0;
  for (size_t r = 0; v && r < t->nrows; r++)
    if (find(v, *n, str(t, c, r)) == *n) v[(*n)++] = str(t, c, r);
  return v;
}

tl_rtable *tl_study_by_group(tl_doc *d, tl_section *s, const tl_table *sum, const char *statistic, const char *title) {
  static const char *const NEED[] = {"group", "metric", "statistic", "estimate"};
  static const int STR[] = {1, 1, 1, 0};
  int ix[4];
  if (cols_of(sum, 4, NEED, STR, ix)) return NULL;
  size_t ng = 0, nm = 0;
  const char **gs = distinct(sum, ix[0], &ng), **ms = distinct(sum, ix[1], &nm);
  const char **names = malloc((ng + 1) * sizeof *names);
  tl_rcol_kind *kinds = malloc((ng + 1) * sizeof *kinds);
  tl_rtable *t = NULL;
  if (gs && ms && names && kinds && ng + 1 <= 4096) {
    names[0] = "metric", kinds[0] = TL_RC_TEXT;
    for (size_t g = 0; g < ng; g++) names[g + 1] = gs[g], kinds[g + 1] = TL_RC_REAL;
    t = tl_sec_table(d, s, title, (int)ng + 1, names, kinds);
    for (int c = 1; t && c <= (int)ng; c++) t->cols[c].digits = 2;
    size_t k0 = t ? t->nrows : 0;
    for (size_t m = 0; t && m < nm; m++) tl_cell_text(d, t, tl_rtable_row(d, t), 0, ms[m]);
    for (size_t r = 0; t && t->nrows == k0 + nm && r < sum->nrows; r++) {
      if (strcmp(str(sum, ix[2], r), statistic)) continue;
      size_t m = find(ms, nm, str(sum, ix[1], r)), g = find(gs, ng, str(sum, ix[0], r));
      tl_cell_real(t, k0 + m, (int)g + 1, 100 * num(sum, ix[3], r)); /* x 100, as the LAVE paper's table */
    }
  } else if (!(gs && ms && names && kinds)) d->oom = 1;
  free(gs), free(ms), free(names), free(kinds);
  return t;
}

enum { A_A, A_B, A_STAT, A_N, A_LEFT, A_EST, A_SE, A_LO, A_HI, A_CNT, A_OF, A_WL, A_WH, A_JL, A_JH, A__N };

/* "[lo, hi]" with 4 decimals (an undefined bound: nan). */
static void interval_cell(tl_doc *d, tl_rtable *t, size_t k, int c, double lo, double hi) {
  char s[96];
  snprintf(s, sizeof s, "[%.4f, %.4f]", lo, hi);
  tl_cell_text(d, t, k, c, s);
}

tl_rtable *tl_study_agreement(tl_doc *d, tl_section *s, const tl_table *ag, const char *a, const char *b) {
  static const char *const NEED[A__N] = {"a", "b", "statistic", "n", "left_out", "estimate", "se", "ci_lo", "ci_hi",
                                         "count", "of", "wilson_lo", "wilson_hi", "jeffreys_lo", "jeffreys_hi"};
  static const int STR[A__N] = {1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  int ix[A__N];
  if (cols_of(ag, A__N, NEED, STR, ix)) return NULL;
  size_t r0 = 0;
  while (r0 < ag->nrows && (strcmp(str(ag, ix[A_A], r0), a) || strcmp(str(ag, ix[A_B], r0), b))) r0++;
  if (r0 == ag->nrows) return NULL;
  char title[1024];
  long long n = (long long)num(ag, ix[A_N], r0), left = (long long)num(ag, ix[A_LEFT], r0);
  if (*b) snprintf(title, sizeof title, "%s vs %s: n = %lld items (%lld left out: a rating missing or bad)", a, b, n, left);
  else snprintf(title, sizeof title, "all of %s: n = %lld items with 2 ratings or more (%lld left out)", a, n, left);
  static const char *const NAMES[] = {"statistic", "estimate [bootstrap CI]", "SE", "count", "of", "Wilson", "Jeffreys"};
  static const tl_rcol_kind KINDS[] = {TL_RC_TEXT, TL_RC_EST, TL_RC_REAL, TL_RC_INT, TL_RC_INT, TL_RC_TEXT, TL_RC_TEXT};
  tl_rtable *t = tl_sec_table(d, s, title, 7, NAMES, KINDS);
  /* the pair's rows are contiguous (a pair listed twice: its first block) */
  for (size_t r = r0; t && r < ag->nrows; r++) {
    if (strcmp(str(ag, ix[A_A], r), a) || strcmp(str(ag, ix[A_B], r), b)) break;
    size_t k = tl_rtable_row(d, t);
    if (k == (size_t)-1) break;
    tl_cell_text(d, t, k, 0, str(ag, ix[A_STAT], r));
    tl_cell_est(t, k, 1, num(ag, ix[A_EST], r), num(ag, ix[A_LO], r), num(ag, ix[A_HI], r));
    tl_cell_real(t, k, 2, num(ag, ix[A_SE], r));
    if (num(ag, ix[A_OF], r) < 0) continue; /* not a proportion: count .. Jeffreys missing */
    /* a proportion: agreeing items of those counted, its intervals (of 0: undefined, nan) */
    tl_cell_int(t, k, 3, (int64_t)num(ag, ix[A_CNT], r)), tl_cell_int(t, k, 4, (int64_t)num(ag, ix[A_OF], r));
    interval_cell(d, t, k, 5, num(ag, ix[A_WL], r), num(ag, ix[A_WH], r));
    interval_cell(d, t, k, 6, num(ag, ix[A_JL], r), num(ag, ix[A_JH], r));
  }
  return t;
}

tl_rtable *tl_study_confusion(tl_doc *d, tl_section *s, const tl_table *conf, const char *a, const char *b) {
  static const char *const NEED[] = {"a", "b", "a_value", "b_value", "count"};
  static const int STR[] = {1, 1, 0, 0, 0};
  int ix[5];
  if (cols_of(conf, 5, NEED, STR, ix)) return NULL;
  /* the categories: the pair's b values in first-seen order (the table is row-major over
   * the categories, so that is their order); the matrix V x V */
  size_t V = 0;
  double *cat = malloc((conf->nrows + 1) * sizeof *cat);
  char (*lab)[32] = malloc((conf->nrows + 1) * sizeof *lab);
  const char **names = malloc((conf->nrows + 2) * sizeof *names);
  tl_rcol_kind *kinds = malloc((conf->nrows + 2) * sizeof *kinds);
  tl_rtable *t = NULL;
  if (!cat || !lab || !names || !kinds) d->oom = 1;
  for (size_t r = 0; cat && lab && r < conf->nrows; r++) {
    if (strcmp(str(conf, ix[0], r), a) || strcmp(str(conf, ix[1], r), b)) continue;
    size_t k = 0;
    while (k < V && cat[k] != num(conf, ix[3], r)) k++;
    if (k == V) cat[V] = num(conf, ix[3], r), snprintf(lab[V], sizeof lab[V], "%g", cat[V]), V++;
  }
  if (V && names && kinds) {
    char title[1024];
    snprintf(title, sizeof title, "confusion (rows %s, columns %s)", a, b);
    names[0] = a, kinds[0] = TL_RC_TEXT;
    for (size_t k = 0; k < V; k++) names[k + 1] = lab[k], kinds[k + 1] = TL_RC_INT;
    t = tl_sec_table(d, s, title, (int)V + 1, names, kinds);
    if (t) t->cols[0].align = TL_AL_RIGHT; /* the row categories line up with the columns' */
    size_t k0 = t ? t->nrows : 0;
    for (size_t k = 0; t && k < V; k++) tl_cell_text(d, t, tl_rtable_row(d, t), 0, lab[k]);
    for (size_t r = 0; t && t->nrows == k0 + V && r < conf->nrows; r++) {
      if (strcmp(str(conf, ix[0], r), a) || strcmp(str(conf, ix[1], r), b)) continue;
      size_t i = 0, j = 0;
      while (i < V && cat[i] != num(conf, ix[2], r)) i++;
      while (j < V && cat[j] != num(conf, ix[3], r)) j++;
      if (i < V && j < V) tl_cell_int(t, k0 + i, (int)j + 1, (int64_t)num(conf, ix[4], r));
    }
  }
  free(cat), free(lab), free(names), free(kinds);
  return t;
}

tl_status tl_rtable_fprint(const tl_rtable *t, FILE *f, const char *indent) {
  tl_buf b;
  tl_buf_init(&b);
  tl_status st = tl_rtable_render(t, TL_FMT_TEXT, &b);
  for (size_t i = 0; !st && i < b.len;) {
    size_t n = strcspn(b.data + i, "\n");
    if (fprintf(f, "%s%.*s\n", indent ? indent : "", (int)n, b.data + i) < 0) st = TL_EIO;
    i += n + 1;
  }
  tl_buf_release(&b);
  return st;
}
