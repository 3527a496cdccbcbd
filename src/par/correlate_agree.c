/* correlate_agree.c - the agreement table of a study (correlate_agree.h). The statistics are in
 * the core (tally/agree.h); this file reads the rating columns, runs each pair on rank 0, prints
 * the table and builds the output tables.
 *
 * Rating cells: a number; or a preference "A" / "model_a" (-1), "tie" / "tie (bothbad)" (0),
 * "B" / "model_b" (1), case-insensitive (MT-Bench's human judgments); an empty cell or "nan" is
 * a missing rating (the item is left out of that pair and counted). Any other cell is a bad
 * input cell, reported (file:line, column) and left out like a missing one (--strict-input:
 * the study stops). */
#define _POSIX_C_SOURCE 200809L
#include "correlate_agree.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "comm.h"
#include "tally/agree.h"
#include "tally/inlog.h"
#include "tally/report.h"
#include "tally/str.h"
#include "tally/strmap.h"
#include "tally/table.h"
#include "tally/tabin.h"

#define ALABEL(o) ((o)->label ? (o)->label : "tally correlate")

/* One pair of columns (or, with multi, the alpha of all the columns of a list). */
typedef struct {
  char *a, *b;        /* column names; multi: a = "c1,c2,...", b = "" */
  int multi;
  uint32_t n;         /* items used */
  int64_t left_out;   /* rows without both ratings (missing or bad cells) */
  tl_agree_data d;    /* pairs: the categories and indices */
  tl_agree_res r;     /* pairs */
  tl_agree_ci alpha;  /* multi */
} ag_pair;

typedef struct {
  const tl_corr_opts *o;
  const tl_tabin *t;
  tl_inlog *log;
  double **col;       /* [ncols] cached columns (NaN = missing), by table column index */
  uint32_t *cluster;  /* [nrows] cluster id of each row (o->agreement_cluster), or NULL */
  ag_pair *p;
  int np, cap;
} ag_ctx;

/* A rating cell as a double: NaN when missing; *bad = 1 when the cell is not a rating. */
static double rating(const char *s, int *bad) {
  *bad = 0;
  if (!*s || !strcasecmp(s, "nan")) return NAN;
  char *e;
  double v = strtod(s, &e);
  if (e != s && !*e && isfinite(v)) return v;
  if (!strcasecmp(s, "a") || !strcasecmp(s, "model_a")) return -1;
  if (!strcasecmp(s, "tie") || !strcasecmp(s, "tie (bothbad)")) return 0;
  if (!strcasecmp(s, "b") || !strcasecmp(s, "model_b")) return 1;
  *bad = 1;
  return NAN;
}

/* Column j of the table as ratings (cached). TL_EINPUT when the log is strict and reported. */
static tl_status column(ag_ctx *x, int j, const double **out) {
  if (x->col[j]) {
    *out = x->col[j];
    return TL_OK;
  }
  const tl_tabin *t = x->t;
  double *v = malloc((t->nrows ? t->nrows : 1) * sizeof *v);
  if (!v) return TL_ENOMEM;
  tl_status st = TL_OK;
  for (size_t r = 0; r < t->nrows && st == TL_OK; r++) {
    int bad;
    v[r] = rating(t->cells[r][j], &bad);
    if (bad)
      st = tl_inlog_report(x->log, TL_IN_BAD_FIELD, t->path, t->line[r],
                           "column '%s' is not a rating (a number, or A / tie / B): '%.40s'", t->colnames[j],
                           t->cells[r][j]);
  }
  x->col[j] = v;
  *out = v;
  return st;
}

/* The cluster id of each row from o->agreement_cluster (distinct cell texts, in first-seen
 * order). */
static tl_status clusters(ag_ctx *x) {
  const tl_corr_opts *o = x->o;
  if (!o->agreement_cluster) return TL_OK;
  int j = tl_tabin_col(x->t, o->agreement_cluster);
  if (j < 0) {
    fprintf(o->log, "%s: %s has no column '%s' (the agreement cluster)\n", ALABEL(o), x->t->path,
            o->agreement_cluster);
    return TL_EJOB;
  }
  if (!(x->cluster = malloc((x->t->nrows ? x->t->nrows : 1) * sizeof *x->cluster))) return TL_ENOMEM;
  tl_strmap m;
  tl_strmap_init(&m);
  tl_status st = TL_OK;
  for (size_t r = 0; r < x->t->nrows && st == TL_OK; r++) {
    bool ins = false;
    size_t old = 0, next = m.n;
    st = tl_strmap_put(&m, x->t->cells[r][j], next, &ins, &old);
    x->cluster[r] = (uint32_t)(ins ? next : old);
  }
  tl_strmap_release(&m);
  return st;
}

/* Compact cluster ids of the rows used (rows[k], k < n) into cl[n]; *ncl their number. */
static tl_status compact_clusters(const ag_ctx *x, const size_t *rows, uint32_t n, uint32_t *cl, uint32_t *ncl) {
  uint32_t *map = malloc((x->t->nrows ? x->t->nrows : 1) * sizeof *map);
  if (!map) return TL_ENOMEM;
  for (size_t r = 0; r < x->t->nrows; r++) map[r] = UINT32_MAX;
  *ncl = 0;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t g = x->cluster[rows[k]];
    if (map[g] == UINT32_MAX) map[g] = (*ncl)++;
    cl[k] = map[g];
  }
  free(map);
  return TL_OK;
}

static ag_pair *new_pair(ag_ctx *x) {
  if (x->np == x->cap) {
    int cap = x->cap ? 2 * x->cap : 8;
    ag_pair *g = realloc(x->p, (size_t)cap * sizeof *g);
    if (!g) return NULL;
    x->p = g;
    x->cap = cap;
  }
  ag_pair *p = &x->p[x->np++];
  memset(p, 0, sizeof *p);
  return p;
}

/* One pair of columns ja, jb. */
static tl_status run_pair(ag_ctx *x, int ja, int jb) {
  const tl_corr_opts *o = x->o;
  const tl_tabin *t = x->t;
  const double *va, *vb;
  tl_status st = column(x, ja, &va);
  if (st == TL_OK) st = column(x, jb, &vb);
  ag_pair *p = st == TL_OK ? new_pair(x) : NULL;
  if (!p) return st ? st : TL_ENOMEM;
  p->a = tl_strdup(t->colnames[ja]);
  p->b = tl_strdup(t->colnames[jb]);
  double *xa = malloc((t->nrows + 1) * sizeof *xa), *xb = malloc((t->nrows + 1) * sizeof *xb);
  size_t *rows = malloc((t->nrows + 1) * sizeof *rows);
  uint32_t *cl = malloc((t->nrows + 1) * sizeof *cl), ncl = 0;
  if (!p->a || !p->b || !xa || !xb || !rows || !cl) st = TL_ENOMEM;
  uint32_t n = 0;
  for (size_t r = 0; st == TL_OK && r < t->nrows; r++) {
    if (isnan(va[r]) || isnan(vb[r])) {
      p->left_out++;
      continue;
    }
    xa[n] = va[r];
    xb[n] = vb[r];
    rows[n++] = r;
  }
  p->n = n;
  tl_err err = {{0}};
  if (st == TL_OK && x->cluster) st = compact_clusters(x, rows, n, cl, &ncl);
  if (st == TL_OK) st = tl_agree_prepare(xa, xb, n, &p->d, &err);
  if (st == TL_OK)
    st = tl_agree_boot(&p->d, x->cluster ? cl : NULL, ncl, (tl_kripp_metric)o->agreement_scale, o->resamples,
                       o->seed, o->ci, &p->r, &err);
  if (st != TL_OK && err.msg[0])
    fprintf(o->log, "%s: agreement of '%s' and '%s': %s\n", ALABEL(o), p->a, p->b, err.msg);
  free(xa); free(xb); free(rows); free(cl);
  return st;
}

/* Krippendorff's alpha of all the columns js[0..k) (k > 2). */
static tl_status run_multi(ag_ctx *x, const int *js, int k, const char *names) {
  const tl_corr_opts *o = x->o;
  const tl_tabin *t = x->t;
  ag_pair *p = new_pair(x);
  if (!p) return TL_ENOMEM;
  p->multi = 1;
  p->a = tl_strdup(names);
  p->b = tl_strdup("");
  double *votes = malloc((t->nrows + 1) * (size_t)k * sizeof *votes);
  size_t *rows = malloc((t->nrows + 1) * sizeof *rows);
  uint32_t *cl = malloc((t->nrows + 1) * sizeof *cl), ncl = 0, n = 0;
  tl_status st = !p->a || !p->b || !votes || !rows || !cl ? TL_ENOMEM : TL_OK;
  for (size_t r = 0; st == TL_OK && r < t->nrows; r++) {
    int have = 0;
    for (int j = 0; j < k; j++) {
      votes[(size_t)n * (size_t)k + (size_t)j] = x->col[js[j]][r];
      have += !isnan(x->col[js[j]][r]);
    }
    if (have < 2) { /* not pairable: left out */
      p->left_out++;
      continue;
    }
    rows[n++] = r;
  }
  p->n = n;
  tl_err err = {{0}};
  if (st == TL_OK && x->cluster) st = compact_clusters(x, rows, n, cl, &ncl);
  if (st == TL_OK)
    st = tl_agree_alpha_coders(votes, n, (uint32_t)k, x->cluster ? cl : NULL, ncl,
                               (tl_kripp_metric)o->agreement_scale, o->resamples, o->seed, o->ci, &p->alpha, &err);
  if (st != TL_OK && err.msg[0]) fprintf(o->log, "%s: alpha of %s: %s\n", ALABEL(o), names, err.msg);
  free(votes); free(rows); free(cl);
  return st;
}

/* One list "c1,c2,...": every pair, then alpha over all when more than two. Unknown columns are
 * reported by name. */
static tl_status run_list(ag_ctx *x, const char *list) {
  const tl_corr_opts *o = x->o;
  int js[64], k = 0, missing = 0;
  const char *s = list;
  while (*s) {
    size_t len = strcspn(s, ",");
    char *name = tl_strndup(s, len);
    if (!name) return TL_ENOMEM;
    int j = tl_tabin_col(x->t, name);
    if (j < 0) {
      fprintf(o->log, "%s: %s has no column '%s' (in the agreement columns)\n", ALABEL(o), x->t->path, name);
      missing = 1;
    } else if (k < 64) {
      js[k++] = j;
    }
    free(name);
    s += len + (s[len] == ',');
  }
  if (missing) return TL_EJOB;
  if (k < 2) {
    fprintf(o->log, "%s: agreement needs two columns or more, got '%s'\n", ALABEL(o), list);
    return TL_EJOB;
  }
  tl_status st = TL_OK;
  for (int a = 0; a < k && st == TL_OK; a++)
    for (int b = a + 1; b < k && st == TL_OK; b++) st = run_pair(x, js[a], js[b]);
  if (st == TL_OK && k > 2) st = run_multi(x, js, k, list);
  return st;
}

/* ---- the printout and the output tables (rank 0) ---- */

static const char *const SCALE[3] = {"nominal", "ordinal", "interval"};

/* The printout: the header lines as text, then per pair its agreement and confusion tables
 * built from the output tables t[0] (agreement) and t[1] (confusion) by tally/report.h's study
 * builders (the same tables `tally report` shows) and printed by the text renderer. */
static void print_agreement(const ag_ctx *x, tl_table *const *t) {
  const tl_corr_opts *o = x->o;
  FILE *f = o->outf;
  fprintf(f, "\nagreement (alpha %s; B = %llu resamples of %s, seed %llu, %.0f%% percentile CIs; Wilson and "
             "Jeffreys intervals of the proportions):\n",
          SCALE[o->agreement_scale], (unsigned long long)o->resamples,
          o->agreement_cluster ? "clusters" : "items", (unsigned long long)o->seed, 100 * o->ci);
  if (o->agreement_cluster) fprintf(f, "  clusters: the values of column '%s'\n", o->agreement_cluster);
  if (o->group_by) fprintf(f, "  over all rows: the grouping (%s) does not split the agreement table\n", o->group_by);
  tl_doc *d = tl_doc_new("");
  tl_section *s = d ? tl_doc_section(d, "") : NULL;
  for (int i = 0; s && i < x->np; i++) {
    const ag_pair *p = &x->p[i];
    tl_rtable *a = tl_study_agreement(d, s, t[0], p->a, p->multi ? "" : p->b);
    if (!a || tl_rtable_fprint(a, f, "  ") != TL_OK) break;
    if (p->multi) continue;
    tl_rtable *c = tl_study_confusion(d, s, t[1], p->a, p->b);
    if (!c || tl_rtable_fprint(c, f, "    ") != TL_OK) break;
  }
  if (!s || tl_doc_ok(d) != TL_OK) fprintf(o->log, "%s: cannot print the agreement table (out of memory)\n", ALABEL(o));
  tl_doc_free(d);
}

#define ADDCOL(t, n, ty, doc) if (tl_table_add_col((t), (n), (ty), (doc)) < 0) return TL_ENOMEM

static tl_status agreement_cols(tl_table *t) {
  ADDCOL(t, "a", TL_COL_STR, "first rating column (multi-rater alpha: all the columns, comma-separated)");
  ADDCOL(t, "b", TL_COL_STR, "second rating column (empty for a multi-rater alpha)");
  ADDCOL(t, "statistic", TL_COL_STR, "raw | raw_no_ties | kappa | kappa_linear | kappa_quadratic | scott_pi | alpha");
  ADDCOL(t, "scale", TL_COL_STR, "alpha's metric: nominal | ordinal | interval");
  ADDCOL(t, "n", TL_COL_I64, "items with both ratings (multi: with 2 ratings or more)");
  ADDCOL(t, "left_out", TL_COL_I64, "rows left out (a rating missing or bad)");
  ADDCOL(t, "estimate", TL_COL_F64, "statistic on the full data (NaN = undefined)");
  ADDCOL(t, "se", TL_COL_F64, "bootstrap standard error (ddof=1)");
  ADDCOL(t, "ci_lo", TL_COL_F64, "percentile bootstrap CI, lower");
  ADDCOL(t, "ci_hi", TL_COL_F64, "percentile bootstrap CI, upper");
  ADDCOL(t, "n_undefined", TL_COL_I64, "resamples where the statistic was undefined");
  ADDCOL(t, "count", TL_COL_I64, "proportions: agreeing items (-1 for the other statistics)");
  ADDCOL(t, "of", TL_COL_I64, "proportions: items counted (-1 for the other statistics)");
  ADDCOL(t, "wilson_lo", TL_COL_F64, "proportions: Wilson score interval (NaN otherwise)");
  ADDCOL(t, "wilson_hi", TL_COL_F64, "");
  ADDCOL(t, "jeffreys_lo", TL_COL_F64, "proportions: Jeffreys interval (NaN otherwise)");
  ADDCOL(t, "jeffreys_hi", TL_COL_F64, "");
  return TL_OK;
}

/* One row of the agreement table. prop: [count, of] and the four interval bounds, or NULL. */
static tl_status agreement_row(tl_table *t, const ag_pair *p, const char *stat, const char *scale,
                               const tl_agree_ci *c, const int64_t *cnt, const double *iv) {
  size_t r = tl_table_add_row(t);
  if (r == (size_t)-1 || tl_table_set_str(t, r, 0, p->a) || tl_table_set_str(t, r, 1, p->b) ||
      tl_table_set_str(t, r, 2, stat) || tl_table_set_str(t, r, 3, scale))
    return TL_ENOMEM;
  tl_table_set_i64(t, r, 4, p->n);
  tl_table_set_i64(t, r, 5, p->left_out);
  double v[4] = {c->estimate, c->se, c->ci_lo, c->ci_hi};
  for (int i = 0; i < 4; i++) tl_table_set_f64(t, r, 6 + (size_t)i, v[i]);
  tl_table_set_i64(t, r, 10, c->n_undefined);
  tl_table_set_i64(t, r, 11, cnt ? cnt[0] : -1);
  tl_table_set_i64(t, r, 12, cnt ? cnt[1] : -1);
  for (int i = 0; i < 4; i++) tl_table_set_f64(t, r, 13 + (size_t)i, iv ? iv[i] : NAN);
  return TL_OK;
}

static tl_status build_agreement(const ag_ctx *x, tl_table *t) {
  tl_status st = agreement_cols(t);
  const char *scale = SCALE[x->o->agreement_scale];
  for (int i = 0; i < x->np && st == TL_OK; i++) {
    const ag_pair *p = &x->p[i];
    if (p->multi) {
      st = agreement_row(t, p, "alpha", scale, &p->alpha, NULL, NULL);
      continue;
    }
    const tl_agree_res *r = &p->r;
    for (int s = 0; s < TL_AG__N && st == TL_OK; s++) {
      int64_t cnt[2] = {r->agree, r->n}, cnt_nt[2] = {r->agree_nt, r->n_nt};
      double iv[4] = {r->wilson_lo, r->wilson_hi, r->jeffreys_lo, r->jeffreys_hi};
      double iv_nt[4] = {r->wilson_nt_lo, r->wilson_nt_hi, r->jeffreys_nt_lo, r->jeffreys_nt_hi};
      int raw = s == TL_AG_RAW, nt = s == TL_AG_RAW_NO_TIES;
      st = agreement_row(t, p, tl_agree_stat_name((tl_agree_stat)s), s == TL_AG_ALPHA ? scale : "", &r->s[s],
                         raw ? cnt : nt ? cnt_nt : NULL, raw ? iv : nt ? iv_nt : NULL);
    }
  }
  return st;
}

static tl_status build_confusion(const ag_ctx *x, tl_table *t) {
  ADDCOL(t, "a", TL_COL_STR, "first rating column (the rows of the matrix)");
  ADDCOL(t, "b", TL_COL_STR, "second rating column (the columns)");
  ADDCOL(t, "a_value", TL_COL_F64, "rating of a (preferences: A = -1, tie = 0, B = 1)");
  ADDCOL(t, "b_value", TL_COL_F64, "rating of b");
  ADDCOL(t, "count", TL_COL_I64, "items rated a_value by a and b_value by b");
  for (int i = 0; i < x->np; i++) {
    const ag_pair *p = &x->p[i];
    if (p->multi) continue;
    const size_t V = p->d.V;
    for (size_t c = 0; c < V; c++)
      for (size_t k = 0; k < V; k++) {
        size_t r = tl_table_add_row(t);
        if (r == (size_t)-1 || tl_table_set_str(t, r, 0, p->a) || tl_table_set_str(t, r, 1, p->b)) return TL_ENOMEM;
        tl_table_set_f64(t, r, 2, p->d.cats[c]);
        tl_table_set_f64(t, r, 3, p->d.cats[k]);
        tl_table_set_i64(t, r, 4, p->r.confusion[c * V + k]);
      }
  }
  return TL_OK;
}
#undef ADDCOL

/* t[0] = <prefix>/agreement, t[1] = <prefix>/confusion (freed by the caller). */
static tl_status build_tables(const ag_ctx *x, tl_table **t, const char *prefix) {
  char path[512];
  snprintf(path, sizeof path, "%s/agreement", prefix);
  if (!(t[0] = tl_table_new(path))) return TL_ENOMEM;
  snprintf(path, sizeof path, "%s/confusion", prefix);
  if (!(t[1] = tl_table_new(path))) return TL_ENOMEM;
  tl_status st = build_agreement(x, t[0]);
  if (st == TL_OK) st = build_confusion(x, t[1]);
  return st;
}

static void ctx_release(ag_ctx *x) {
  if (x->col)
    for (int j = 0; j < x->t->ncols; j++) free(x->col[j]);
  free(x->col);
  free(x->cluster);
  for (int i = 0; i < x->np; i++) {
    free(x->p[i].a);
    free(x->p[i].b);
    tl_agree_release(&x->p[i].d);
    tl_agree_res_release(&x->p[i].r);
  }
  free(x->p);
}

/* Rank 0: the table, every list (';'-separated), the printout and the tables t[2]. */
static tl_status agree_rank0(const tl_corr_opts *o, tl_inlog *log, tl_table **t, const char *prefix) {
  tl_tabin own;
  memset(&own, 0, sizeof own);
  tl_err err = {{0}};
  tl_status st = TL_OK;
  if (!o->table && (st = tl_tabin_read(o->input, 0, log, &own, &err)) != TL_OK) {
    fprintf(o->log, "%s: cannot use the table '%s' for the agreement: %s\n", ALABEL(o), o->input,
            err.msg[0] ? err.msg : tl_strerror(st));
    return st;
  }
  ag_ctx x;
  memset(&x, 0, sizeof x);
  x.o = o;
  x.t = o->table ? o->table : &own;
  x.log = log;
  if (!(x.col = calloc((size_t)x.t->ncols + 1, sizeof *x.col))) st = TL_ENOMEM;
  if (st == TL_OK) st = clusters(&x);
  for (const char *s = o->agreement; st == TL_OK && *s;) {
    size_t len = strcspn(s, ";");
    char *list = tl_strndup(s, len);
    st = list ? run_list(&x, list) : TL_ENOMEM;
    free(list);
    s += len + (s[len] == ';');
  }
  tl_table *own_t[2] = {NULL, NULL}; /* the tables to print from, when not written */
  tl_table **tt = t ? t : own_t;
  if (st == TL_OK) st = build_tables(&x, tt, prefix);
  if (st == TL_OK) print_agreement(&x, tt);
  tl_table_free(own_t[0]), tl_table_free(own_t[1]);
  if (st == TL_ENOMEM) fprintf(o->log, "%s: out of memory in the agreement table\n", ALABEL(o));
  if (st == TL_EINPUT && log->strict) fprintf(o->log, "%s: stopped at the first input problem (--strict-input)\n", ALABEL(o));
  ctx_release(&x);
  if (!o->table) tl_tabin_release(&own);
  return st;
}

tl_status corr_agreement(const tl_corr_opts *o, MPI_Comm c, int rank, tl_writer *w, const char *prefix) {
  if (!o->agreement) return TL_OK;
  tl_table *t[2] = {NULL, NULL};
  tl_err err = {{0}};
  tl_status st = TL_OK;
  if (rank == 0) {
    tl_inlog log;
    tl_inlog_init(&log, o->log, o->strict_input);
    st = agree_rank0(o, &log, w ? t : NULL, prefix);
    tl_inlog_release(&log);
    if (st != TL_OK) tl_err_set(&err, st, "the agreement table failed (see above)");
  }
  st = tl_agree(st, &err, c);
  for (int i = 0; i < 2 && st == TL_OK && w; i++) {
    st = w->vt->write_table(w, rank ? NULL : t[i], &err);
    if (st != TL_OK && rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
  }
  tl_table_free(t[0]);
  tl_table_free(t[1]);
  return st;
}
