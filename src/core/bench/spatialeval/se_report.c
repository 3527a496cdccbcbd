/* se_report.c - SpatialEval's part of a report (the `report` hook, tally/bench_vt.h): the
 * paper's layout from the module's tables alone (its in-memory tables or those read back from a
 * run file):
 *   - accuracy by task and mode: per (model, variant, task, mode) over the whole task (qid -1)
 *     the seeds, the counts (n, answered, missing, unparsed and engine_error: the primary
 *     parser's), and per parser the mean over seeds with its 95% CI and the std over seeds;
 *   - the primary parser's task x mode matrix (mean over seeds; "-" where a task has no mode);
 *   - the parser audit (/audit/spatialeval as written);
 *   - a bars-with-CI chart: per model and variant, the primary parser's accuracy per task and
 *     mode.
 * The tables used: /metrics/spatialeval/<parser>_across_seeds (one per parser, in the order
 * written: the first is the primary) and /audit/spatialeval. TL_EINPUT when they are absent or
 * disagree on their rows (the report then renders the tables generically). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tally/report.h"
#include "tally/table.h"

tl_status tl_se_report(tl_table *const *tables, int n, struct tl_doc *doc);

#define SUFFIX "_across_seeds"
#define MAXP 8 /* parsers a report shows (the module has 3) */

/* The parser's name of an across-seeds table (its leaf without the suffix), or NULL. */
static const char *parser_of(const tl_table *t, char *buf, size_t nb) {
  const char *leaf = strrchr(t->path, '/');
  size_t n = leaf ? strlen(++leaf) : 0, k = strlen(SUFFIX);
  if (n <= k || strcmp(leaf + n - k, SUFFIX) || n - k >= nb) return NULL;
  memcpy(buf, leaf, n - k);
  buf[n - k] = 0;
  return buf;
}

typedef struct {
  const tl_table *t[MAXP];
  char name[MAXP][64];
  int np;
  const tl_table *audit;
  /* columns of t[0] */
  int model, var, task, mode, qid, seeds, cnt[5];
} se_rep;

static const char *const COUNTS[] = {"n", "answered", "missing", "unparsed", "engine_error"};

/* Finds the tables and the columns of the primary's; TL_EINPUT when something is absent. */
static tl_status find(tl_table *const *tables, int n, se_rep *r) {
  memset(r, 0, sizeof *r);
  for (int i = 0; i < n; i++) {
    if (!strcmp(tables[i]->path, "/audit/spatialeval")) r->audit = tables[i];
    if (r->np < MAXP && parser_of(tables[i], r->name[r->np], sizeof r->name[0])) r->t[r->np++] = tables[i];
  }
  if (!r->np) return TL_EINPUT;
  const tl_table *p = r->t[0];
  r->model = tl_table_col(p, "model"), r->var = tl_table_col(p, "prompt_variant"), r->task = tl_table_col(p, "task");
  r->mode = tl_table_col(p, "mode"), r->qid = tl_table_col(p, "qid"), r->seeds = tl_table_col(p, "n_seeds");
  int bad = r->model < 0 || r->var < 0 || r->task < 0 || r->mode < 0 || r->qid < 0 || r->seeds < 0;
  for (int k = 0; k < 5; k++) bad |= (r->cnt[k] = tl_table_col(p, COUNTS[k])) < 0;
  for (int i = 0; i < r->np && !bad; i++) {
    const tl_table *t = r->t[i];
    bad = t->nrows != p->nrows || tl_table_col(t, "mean") < 0 || tl_table_col(t, "std") < 0 ||
          tl_table_col(t, "ci_lo") < 0 || tl_table_col(t, "ci_hi") < 0;
    bad = bad || p->cols[r->model].type != TL_COL_STR || p->cols[r->qid].type != TL_COL_I64 ||
          t->cols[tl_table_col(t, "mean")].type != TL_COL_F64;
  }
  return bad ? TL_EINPUT : TL_OK;
}

static double f64(const tl_table *t, const char *col, size_t r) {
  int c = tl_table_col(t, col);
  return c >= 0 && t->cols[c].type == TL_COL_F64 ? t->cols[c].v.f[r] : NAN;
}

/* The accuracy table: one row per (model, variant, task, mode) of the whole task. */
static void accuracy(const se_rep *r, struct tl_doc *d, tl_section *s) {
  const char *names[10 + 2 * MAXP];
  tl_rcol_kind kinds[10 + 2 * MAXP];
  char hdr[MAXP][80];
  static const char *const FIX[] = {"model", "variant", "task", "mode", "seeds"};
  int nc = 0;
  for (int k = 0; k < 5; k++) names[nc] = FIX[k], kinds[nc++] = k == 4 ? TL_RC_INT : TL_RC_TEXT;
  for (int k = 0; k < 5; k++) names[nc] = COUNTS[k], kinds[nc++] = TL_RC_INT;
  for (int i = 0; i < r->np; i++) {
    snprintf(hdr[i], sizeof hdr[i], "%s std", r->name[i]);
    names[nc] = r->name[i], kinds[nc++] = TL_RC_EST;
    names[nc] = hdr[i], kinds[nc++] = TL_RC_REAL;
  }
  tl_rtable *t = tl_sec_table(d, s, "accuracy by task and mode", nc, names, kinds);
  for (int c = 0; t && c < nc; c++) t->cols[c].digits = 3;
  tl_rtable_note(d, t, "accuracy = correct / n (a missing answer, an engine error or an answer the parser cannot read "
                       "scores 0); mean over seeds [95% CI: bootstrap over items, each item's seeds together]; std over "
                       "seeds (ddof 1; nan for one seed); unparsed: the primary parser's");
  const tl_table *p = r->t[0];
  for (size_t i = 0; t && i < p->nrows; i++) {
    if (p->cols[r->qid].v.i[i] != -1) continue;
    size_t row = tl_rtable_row(d, t);
    const int src[] = {r->model, r->var, r->task, r->mode};
    for (int k = 0; k < 4; k++) tl_cell_text(d, t, row, k, p->cols[src[k]].v.s[i]);
    tl_cell_int(t, row, 4, p->cols[r->seeds].v.i[i]);
    for (int k = 0; k < 5; k++) tl_cell_int(t, row, 5 + k, p->cols[r->cnt[k]].v.i[i]);
    for (int j = 0; j < r->np; j++) {
      tl_cell_est(t, row, 10 + 2 * j, f64(r->t[j], "mean", i), f64(r->t[j], "ci_lo", i), f64(r->t[j], "ci_hi", i));
      tl_cell_real(t, row, 11 + 2 * j, f64(r->t[j], "std", i));
    }
  }
}

/* Rows whose bootstrap CI has zero width (every resample gives one accuracy: 0 or 1, or very
 * few items) say nothing about uncertainty: their Wilson score interval over the items
 * (wilson_lo, wilson_hi; issue 32), one table, only when there is such a row. */
static void wilson(const se_rep *r, struct tl_doc *d, tl_section *s) {
  static const char *const names[] = {"model", "variant", "task", "mode", "parser", "accuracy [95% Wilson]"};
  static const tl_rcol_kind kinds[] = {TL_RC_TEXT, TL_RC_TEXT, TL_RC_TEXT, TL_RC_TEXT, TL_RC_TEXT, TL_RC_EST};
  tl_rtable *t = NULL;
  for (size_t i = 0; i < r->t[0]->nrows; i++) {
    if (r->t[0]->cols[r->qid].v.i[i] != -1) continue;
    for (int j = 0; j < r->np; j++) {
      const tl_table *p = r->t[j];
      double lo = f64(p, "ci_lo", i), hi = f64(p, "ci_hi", i);
      if (isnan(lo) || lo != hi || tl_table_col(p, "wilson_lo") < 0) continue;
      if (!t) {
        t = tl_sec_table(d, s, "zero-width bootstrap CIs: the Wilson score interval over the items instead", 6, names,
                         kinds);
        if (t) t->cols[5].digits = 3;
      }
      size_t row = tl_rtable_row(d, t);
      const int src[] = {r->model, r->var, r->task, r->mode};
      for (int k = 0; k < 4; k++) tl_cell_text(d, t, row, k, r->t[0]->cols[src[k]].v.s[i]);
      tl_cell_text(d, t, row, 4, r->name[j]);
      tl_cell_est(t, row, 5, f64(p, "mean", i), f64(p, "wilson_lo", i), f64(p, "wilson_hi", i));
    }
  }
}

/* 1 when s is among v[0..n); else appends it when there is room. Returns its index. */
static int intern(const char **v, int *n, int cap, const char *s) {
  for (int i = 0; i < *n; i++)
    if (!strcmp(v[i], s)) return i;
  if (*n == cap) return -1;
  v[*n] = s;
  return (*n)++;
}

/* The primary parser's task x mode matrix, and the chart of the same accuracies with CIs. */
static void matrix(const se_rep *r, struct tl_doc *d, tl_section *s) {
  const tl_table *p = r->t[0];
  const char *modes[8];
  int nm = 0;
  for (size_t i = 0; i < p->nrows; i++)
    if (p->cols[r->qid].v.i[i] == -1 && strcmp(p->cols[r->mode].v.s[i], "all")) intern(modes, &nm, 8, p->cols[r->mode].v.s[i]);
  const char *names[3 + 8] = {"model", "variant", "task"};
  tl_rcol_kind kinds[3 + 8] = {TL_RC_TEXT, TL_RC_TEXT, TL_RC_TEXT};
  for (int m = 0; m < nm; m++) names[3 + m] = modes[m], kinds[3 + m] = TL_RC_REAL;
  char title[160];
  snprintf(title, sizeof title, "%s accuracy, task x mode (mean over seeds)", r->name[0]);
  tl_rtable *t = tl_sec_table(d, s, title, 3 + nm, names, kinds);
  for (int c = 0; t && c < 3 + nm; c++) t->cols[c].digits = 3;
  char chart_title[200];
  snprintf(chart_title, sizeof chart_title, "%s accuracy by task and mode, 95%% CI", r->name[0]);
  tl_chart *ch = tl_sec_chart(d, s, TL_CHART_BARS_CI, chart_title, "task / mode", "accuracy");
  size_t row = (size_t)-1;
  const char *last[3] = {NULL, NULL, NULL};
  for (size_t i = 0; t && i < p->nrows; i++) {
    if (p->cols[r->qid].v.i[i] != -1) continue;
    const char *key[3] = {p->cols[r->model].v.s[i], p->cols[r->var].v.s[i], p->cols[r->task].v.s[i]};
    const char *mode = p->cols[r->mode].v.s[i];
    char ser[300], lab[200];
    snprintf(ser, sizeof ser, "%s (%s)", key[0], key[1]);
    snprintf(lab, sizeof lab, "%s / %s", key[2], mode);
    tl_chart_point_add(d, tl_chart_series_get(d, ch, ser), lab, f64(p, "mean", i), f64(p, "ci_lo", i), f64(p, "ci_hi", i));
    if (!strcmp(key[2], "all")) continue;
    if (!last[0] || strcmp(last[0], key[0]) || strcmp(last[1], key[1]) || strcmp(last[2], key[2])) {
      row = tl_rtable_row(d, t);
      for (int k = 0; k < 3; k++) tl_cell_text(d, t, row, k, key[k]), last[k] = key[k];
    }
    for (int m = 0; m < nm; m++)
      if (!strcmp(modes[m], mode)) tl_cell_real(t, row, 3 + m, f64(p, "mean", i));
  }
}

tl_status tl_se_report(tl_table *const *tables, int n, struct tl_doc *doc) {
  se_rep r;
  tl_status st = find(tables, n, &r);
  if (st) return st;
  tl_section *s = tl_doc_section(doc, "benchmark spatialeval");
  accuracy(&r, doc, s);
  wilson(&r, doc, s);
  matrix(&r, doc, s);
  if (r.audit) {
    tl_rtable *a = tl_doc_from_table(doc, s, r.audit, "parser audit (all models, variants, seeds and modes; units with a reply)");
    for (int c = 0; a && c < a->ncols; c++) a->cols[c].digits = 3;
    tl_rtable_note(doc, a, "accuracy_P: accuracy under parser P; disagree_P_Q: units the two parsers score differently; "
                           "only_P_Q: of those, correct only under P");
  }
  return tl_doc_ok(doc);
}
