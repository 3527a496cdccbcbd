/* mtb_report.c - MT-Bench-101's part of a report (the `report` hook, tally/bench_vt.h), from
 * the module's tables alone (in memory or read back from a run file), in the paper's layout:
 *   - the summary: per model, variant and policy (exclude, fail: docs/MTBENCH101.md) the Avg
 *     with its 95% CI and the 13 tasks (CM SI AR TS CC CR FR SC SA MR GR IC PI), the std over
 *     seeds and the counts (n, answered, missing, unparsed, engine_error);
 *   - the abilities, and the overall score per rating parser, from the across-seeds table
 *     (mean over seeds [95% CI], std), one table each;
 *   - the model comparisons at the overall level (wins, losses, ties, win rates with CIs);
 *   - the rating parsers' audit (/audit/mtbench101/parsers as written);
 *   - a bars-with-CI chart of the primary parser's task means per model and policy.
 * Tables used: /metrics/mtbench101/{summary, across_seeds, comparisons} and
 * /audit/mtbench101/parsers; TL_EINPUT when the summary or across_seeds is absent (the report
 * then renders every table generically). */
#include <math.h>
#include <string.h>

#include "tally/report.h"
#include "tally/table.h"

tl_status tl_mtb_report(tl_table *const *tables, int n, struct tl_doc *doc);

static void digits(tl_rtable *t, int k) {
  for (int c = 0; t && c < t->ncols; c++) t->cols[c].digits = k;
}

/* The task means of the primary parser (the first row's) as bars with CIs. */
static void task_chart(const tl_table *a, struct tl_doc *d, tl_section *s) {
  int par = tl_table_col(a, "parser"), mo = tl_table_col(a, "model"), pol = tl_table_col(a, "policy");
  int lev = tl_table_col(a, "level"), grp = tl_table_col(a, "group"), me = tl_table_col(a, "mean");
  int lo = tl_table_col(a, "ci_lo"), hi = tl_table_col(a, "ci_hi");
  if (par < 0 || mo < 0 || pol < 0 || lev < 0 || grp < 0 || me < 0 || lo < 0 || hi < 0 || !a->nrows) return;
  const char *primary = a->cols[par].v.s[0];
  char title[200], ser[300];
  snprintf(title, sizeof title, "MT-Bench-101 task scores (%s ratings), 95%% CI", primary);
  tl_chart *c = tl_sec_chart(d, s, TL_CHART_BARS_CI, title, "task", "score (1-10)");
  for (size_t r = 0; r < a->nrows; r++) {
    if (strcmp(a->cols[par].v.s[r], primary) || strcmp(a->cols[lev].v.s[r], "task")) continue;
    snprintf(ser, sizeof ser, "%s (%s)", a->cols[mo].v.s[r], a->cols[pol].v.s[r]);
    tl_chart_point_add(d, tl_chart_series_get(d, c, ser), a->cols[grp].v.s[r], a->cols[me].v.f[r], a->cols[lo].v.f[r],
                       a->cols[hi].v.f[r]);
  }
}

tl_status tl_mtb_report(tl_table *const *tables, int n, struct tl_doc *doc) {
  const tl_table *sum = tl_report_find(tables, n, "/metrics/mtbench101/summary");
  const tl_table *acr = tl_report_find(tables, n, "/metrics/mtbench101/across_seeds");
  const tl_table *cmp = tl_report_find(tables, n, "/metrics/mtbench101/comparisons");
  const tl_table *aud = tl_report_find(tables, n, "/audit/mtbench101/parsers");
  if (!sum || !acr || tl_table_col(acr, "level") < 0) return TL_EINPUT;
  tl_section *s = tl_doc_section(doc, "benchmark mtbench101");
  tl_rtable *t = tl_doc_from_table(doc, s, sum, "MT-Bench-101: Avg [95% CI] and the 13 tasks, both policies");
  digits(t, 2);
  tl_rtable_note(doc, t, "policy exclude: a turn without a rating is left out of its dialogue's minimum; fail: the "
                         "dialogue scores nothing (docs/MTBENCH101.md); mean over seeds, CI: bootstrap over dialogues");
  static const char *const DROP_LEVEL[] = {"level", NULL};
  t = tl_doc_from_table_where(doc, s, acr, "abilities (mean over seeds [95% CI], every rating parser)", "level", "ability",
                              DROP_LEVEL);
  digits(t, 2);
  t = tl_doc_from_table_where(doc, s, acr, "overall score per rating parser (mean over seeds [95% CI])", "level", "overall",
                              DROP_LEVEL);
  digits(t, 2);
  if (cmp) {
    t = tl_doc_from_table_where(doc, s, cmp, "model comparisons, overall (per seed)", "level", "overall", DROP_LEVEL);
    digits(t, 3);
  }
  if (aud) digits(tl_doc_from_table(doc, s, aud, "rating parsers' audit"), 2);
  const tl_table *stab = tl_report_find(tables, n, "/metrics/mtbench101/judge_stability");
  const tl_table *swap = tl_report_find(tables, n, "/metrics/mtbench101/parser_swap");
  if (stab) digits(tl_doc_from_table(doc, s, stab, "judge stability over judge samples (docs/MTBENCH101.md)"), 3);
  if (swap) digits(tl_doc_from_table(doc, s, swap, "parser swap: what changes when the primary parser is replaced"), 3);
  task_chart(acr, doc, s);
  return tl_doc_ok(doc);
}
