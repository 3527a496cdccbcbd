/* vqa_report.c - VQA's part of a report (the `report` hook, tally/bench_vt.h), from the
 * module's tables alone (in memory or read back from a run file), in the papers' layout. The
 * run's summary (vqa_summary in module.c) prints this same document as text, so everything the
 * summary shows is here and `tally report RUN.h5` shows it again:
 *   - the summary, one table per level (all, dataset, answer type, question type, ...: the
 *     levels the run has, in the order written; the dataset level left out when the run has one
 *     dataset, whose rows repeat "all"): per model and variant the counts (n, answered, missing,
 *     unparsed, engine errors, the judge's) and each metric's mean over seeds (VQA accuracy with
 *     its 95% CI) and std; the LAVE columns only when LAVE is on;
 *   - with LAVE, a line per model saying what its unrated units are;
 *   - the failure modes, the human scores (and a line with the pooled mean and the annotators'
 *     alpha), the human-score files' join (and a line per file), the status audit, as written;
 *   - a bars-with-CI chart of the VQA accuracy per answer type and model.
 * Tables used: /metrics/vqa/summary (required: TL_EINPUT without it, and the report then renders
 * every table generically), /metrics/vqa/{settings, human, human_join, failure_modes},
 * /audit/vqa/statuses. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tally/report.h"
#include "tally/table.h"

tl_status tl_vqa_doc_report(tl_table *const *tables, int n, struct tl_doc *doc);

static void digits(tl_rtable *t, int k) {
  for (int c = 0; t && c < t->ncols; c++) t->cols[c].digits = k;
}

/* The value of setting `key` in /metrics/vqa/settings (key, value), or NULL. */
static const char *setting(const tl_table *set, const char *key) {
  int k = set ? tl_table_col(set, "key") : -1, v = set ? tl_table_col(set, "value") : -1;
  if (k < 0 || v < 0 || !tl_col_is_str(set->cols[k].type) || !tl_col_is_str(set->cols[v].type)) return NULL;
  for (size_t r = 0; r < set->nrows; r++)
    if (!strcmp(set->cols[k].v.s[r], key)) return set->cols[v].v.s[r];
  return NULL;
}

/* Column `name` of t as int64 (its row r), or -1 when t has no such int64 column. */
static long long ival(const tl_table *t, const char *name, size_t r) {
  int c = tl_table_col(t, name);
  return c >= 0 && t->cols[c].type == TL_COL_I64 ? (long long)t->cols[c].v.i[r] : -1;
}
static double fval(const tl_table *t, const char *name, size_t r) {
  int c = tl_table_col(t, name);
  return c >= 0 && t->cols[c].type == TL_COL_F64 ? t->cols[c].v.f[r] : NAN;
}
static const char *sval(const tl_table *t, const char *name, size_t r) {
  int c = tl_table_col(t, name);
  return c >= 0 && tl_col_is_str(t->cols[c].type) ? t->cols[c].v.s[r] : "?";
}

static void chart(const tl_table *sm, struct tl_doc *d, tl_section *s) {
  int mo = tl_table_col(sm, "model"), lev = tl_table_col(sm, "level"), grp = tl_table_col(sm, "group");
  int v = tl_table_col(sm, "vqa_accuracy"), lo = tl_table_col(sm, "vqa_accuracy_ci_lo"), hi = tl_table_col(sm, "vqa_accuracy_ci_hi");
  if (mo < 0 || lev < 0 || grp < 0 || v < 0 || lo < 0 || hi < 0) return;
  tl_chart *c = tl_sec_chart(d, s, TL_CHART_BARS_CI, "VQA accuracy by answer type, 95% CI", "answer type", "VQA accuracy");
  for (size_t r = 0; r < sm->nrows; r++)
    if (!strcmp(sm->cols[lev].v.s[r], "answer_type") || !strcmp(sm->cols[lev].v.s[r], "all"))
      tl_chart_point_add(d, tl_chart_series_get(d, c, sm->cols[mo].v.s[r]), sm->cols[grp].v.s[r], sm->cols[v].v.f[r],
                         sm->cols[lo].v.f[r], sm->cols[hi].v.f[r]);
}

/* 1 when level `l` of the summary has one group only (one dataset: its rows repeat "all"). */
static int one_group(const tl_table *sm, int lev, const char *l) {
  int grp = tl_table_col(sm, "group");
  const char *first = NULL;
  for (size_t r = 0; grp >= 0 && r < sm->nrows; r++) {
    if (strcmp(sm->cols[lev].v.s[r], l)) continue;
    if (first && strcmp(first, sm->cols[grp].v.s[r])) return 0;
    first = sm->cols[grp].v.s[r];
  }
  return 1;
}

/* The summary's tables, one per level, then (LAVE on) the unrated units per model. */
static tl_status level_tables(struct tl_doc *d, tl_section *s, const tl_table *sm, const tl_table *set, int lave) {
  const int lev = tl_table_col(sm, "level");
  const char *levels[16];
  int nl = 0;
  for (size_t r = 0; r < sm->nrows; r++) {
    const char *l = sm->cols[lev].v.s[r];
    int seen = 0;
    for (int i = 0; i < nl; i++) seen |= !strcmp(levels[i], l);
    if (!seen && nl < 16) levels[nl++] = l;
  }
  static const char *const DROP[] = {"level", NULL};
  static const char *const DROP_LAVE[] = {"level",        "n_judge_engine_error", "n_lave_unparsed", "n_lave_unjudged",
                                          "n_lave_rated", "lave_score",           "lave_score_std",  NULL};
  const char *B = setting(set, "ci_resamples"), *seed = setting(set, "ci_seed");
  char title[200], note[700];
  snprintf(note, sizeof note,
           "every mean divides by n (questions x seeds): a missing, unparsed or engine_error unit scores 0; mean over "
           "seeds, std over seeds (ddof 1; nan: one seed); 95%% CI of vqa_accuracy: percentile bootstrap over "
           "questions, seeds together (%s resamples, seed %s)%s",
           B ? B : "?", seed ? seed : "?", lave ? "; lave_score: an unrated unit scores 0, rated: n_lave_rated" : "");
  for (int i = 0; i < nl; i++) {
    if (!strcmp(levels[i], "dataset") && one_group(sm, lev, levels[i])) continue;
    snprintf(title, sizeof title, "by %s (mean over seeds [95%% CI: bootstrap over items], std over seeds)", levels[i]);
    tl_rtable *t = tl_doc_from_table_where(d, s, sm, title, "level", levels[i], lave ? DROP : DROP_LAVE);
    digits(t, 3);
    if (i == 0) tl_rtable_note(d, t, note);
  }
  tl_status st = TL_OK;
  if (lave)
    st = tl_sec_text(d, s, "lave_score: an unrated unit scores 0; unrated = missing + engine_error + judge engine "
                           "errors + unparsed judge replies (no rating) + not judged:");
  for (size_t r = 0; lave && !st && r < sm->nrows; r++) {
    if (strcmp(sm->cols[lev].v.s[r], "all")) continue;
    char line[600];
    snprintf(line, sizeof line,
             "  %s: %lld unrated = %lld missing + %lld engine_error + %lld judge engine errors + %lld no rating + "
             "%lld not judged",
             sval(sm, "model", r), ival(sm, "n", r) - ival(sm, "n_lave_rated", r), ival(sm, "n_missing", r),
             ival(sm, "n_engine_error", r), ival(sm, "n_judge_engine_error", r), ival(sm, "n_lave_unparsed", r),
             ival(sm, "n_lave_unjudged", r));
    st = tl_sec_text(d, s, line);
  }
  return st ? st : tl_sec_text(d, s, "(by seed and question type: /metrics/vqa/accuracy; these rows: /metrics/vqa/summary)");
}

/* The human side: failure modes, human scores (a line for the pooled row), the files' join (a
 * line per file). */
static tl_status human_tables(struct tl_doc *d, tl_section *s, tl_table *const *tables, int n) {
  const tl_table *f = tl_report_find(tables, n, "/metrics/vqa/failure_modes");
  const tl_table *h = tl_report_find(tables, n, "/metrics/vqa/human");
  const tl_table *j = tl_report_find(tables, n, "/metrics/vqa/human_join");
  tl_status st = TL_OK;
  char line[900];
  if (f && f->nrows)
    digits(tl_doc_from_table(d, s, f, "failure modes: humans say correct (score 1) but the metric < 0.5, and humans "
                                      "say wrong (score 0) but the metric >= 0.5 (model all, seed -1: every model and "
                                      "seed pooled)"), 3);
  if (h && h->nrows) {
    digits(tl_doc_from_table(d, s, h, "human scores (model all, seed -1: pooled)"), 3);
    for (size_t r = 0; !st && r < h->nrows; r++) {
      if (ival(h, "seed", r) != -1) continue;
      const double al = fval(h, "alpha_nominal", r);
      char as[32] = "- (no votes)";
      if (!isnan(al)) snprintf(as, sizeof as, "%.3f", al);
      else if (ival(h, "n_with_votes", r) > 0) snprintf(as, sizeof as, "- (undefined)");
      snprintf(line, sizeof line,
               "human scores: %lld units, mean %.3f; annotator votes on %lld units, Krippendorff's alpha (nominal) %s",
               ival(h, "n_human", r), fval(h, "human_mean", r), ival(h, "n_with_votes", r), as);
      st = tl_sec_text(d, s, line);
    }
  }
  if (j && j->nrows) {
    digits(tl_doc_from_table(d, s, j, "the human-score files' join"), 3);
    for (size_t r = 0; !st && r < j->nrows; r++) {
      snprintf(line, sizeof line, "human scores %s: %lld of %lld units matched (%lld of %lld rows; /metrics/vqa/human_join)",
               sval(j, "file", r), ival(j, "n_units_matched", r), ival(j, "n_units", r),
               ival(j, "n_rows_joined", r) - ival(j, "n_rows_other_model", r), ival(j, "n_rows", r));
      st = tl_sec_text(d, s, line);
    }
  }
  return st;
}

tl_status tl_vqa_doc_report(tl_table *const *tables, int n, struct tl_doc *doc) {
  const tl_table *sm = tl_report_find(tables, n, "/metrics/vqa/summary");
  const tl_table *set = tl_report_find(tables, n, "/metrics/vqa/settings");
  int lev = sm ? tl_table_col(sm, "level") : -1;
  if (!sm || lev < 0 || !tl_col_is_str(sm->cols[lev].type)) return TL_EINPUT;
  const char *lv = setting(set, "lave");
  const int lave = !lv || strcmp(lv, "off"); /* no settings table: every column */
  tl_section *s = tl_doc_section(doc, "benchmark vqa");
  tl_status st = level_tables(doc, s, sm, set, lave);
  if (!st) st = human_tables(doc, s, tables, n);
  if (st) return st;
  const tl_table *a = tl_report_find(tables, n, "/audit/vqa/statuses");
  if (a) digits(tl_doc_from_table(doc, s, a, "statuses per metric (audit)"), 3);
  chart(sm, doc, s);
  return tl_doc_ok(doc);
}
