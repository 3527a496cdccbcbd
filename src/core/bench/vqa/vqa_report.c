/* vqa_report.c - VQA's part of a report (the `report` hook, tally/bench_vt.h), from the
 * module's tables alone (in memory or read back from a run file), in the papers' layout:
 *   - the summary, one table per level (all, dataset, answer type, question type, ...: the
 *     levels the run has, in the order written): per model and variant the counts (n, answered,
 *     missing, unparsed, engine errors, the judge's) and each metric's mean over seeds (VQA
 *     accuracy with its 95% CI) and std;
 *   - the human scores and their join, the failure modes and the status audit, as written;
 *   - a bars-with-CI chart of the VQA accuracy per answer type and model.
 * Tables used: /metrics/vqa/summary (required: TL_EINPUT without it, and the report then renders
 * every table generically), /metrics/vqa/{human, human_join, failure_modes},
 * /audit/vqa/statuses. */
#include <math.h>
#include <string.h>

#include "tally/report.h"
#include "tally/table.h"

tl_status tl_vqa_doc_report(tl_table *const *tables, int n, struct tl_doc *doc);

static void digits(tl_rtable *t, int k) {
  for (int c = 0; t && c < t->ncols; c++) t->cols[c].digits = k;
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

tl_status tl_vqa_doc_report(tl_table *const *tables, int n, struct tl_doc *doc) {
  const tl_table *sm = tl_report_find(tables, n, "/metrics/vqa/summary");
  int lev = sm ? tl_table_col(sm, "level") : -1;
  if (!sm || lev < 0 || !tl_col_is_str(sm->cols[lev].type)) return TL_EINPUT;
  tl_section *s = tl_doc_section(doc, "benchmark vqa");
  const char *levels[16];
  int nl = 0;
  for (size_t r = 0; r < sm->nrows; r++) {
    const char *l = sm->cols[lev].v.s[r];
    int seen = 0;
    for (int i = 0; i < nl; i++) seen |= !strcmp(levels[i], l);
    if (!seen && nl < 16) levels[nl++] = l;
  }
  static const char *const DROP[] = {"level", NULL};
  for (int i = 0; i < nl; i++) {
    char title[200];
    snprintf(title, sizeof title, "by %s (mean over seeds [95%% CI: bootstrap over items], std over seeds)", levels[i]);
    digits(tl_doc_from_table_where(doc, s, sm, title, "level", levels[i], DROP), 4);
  }
  static const char *const MORE[][2] = {{"/metrics/vqa/human", "human scores"},
                                        {"/metrics/vqa/human_join", "the human-score file's join"},
                                        {"/metrics/vqa/failure_modes", "failure modes against the human scores"},
                                        {"/audit/vqa/statuses", "statuses per metric (audit)"}};
  for (size_t i = 0; i < sizeof MORE / sizeof *MORE; i++) {
    const tl_table *t = tl_report_find(tables, n, MORE[i][0]);
    if (t) digits(tl_doc_from_table(doc, s, t, MORE[i][1]), 4);
  }
  chart(sm, doc, s);
  return tl_doc_ok(doc);
}
