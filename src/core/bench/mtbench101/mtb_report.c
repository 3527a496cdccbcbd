/* mtb_report.c - MT-Bench-101's part of a report (the `report` hook, tally/bench_vt.h), from
 * the module's tables alone (in memory or read back from a run file), in the paper's layout.
 * The run's summary (mtb_summary in module.c) prints this same document as text, so everything
 * the summary shows is here and `tally report RUN.h5` shows it again:
 *   - the summary: per model, variant and policy (exclude, fail: docs/MTBENCH101.md) the Avg
 *     with its 95% CI and the 13 tasks (CM SI AR TS CC CR FR SC SA MR GR IC PI), the std over
 *     seeds and the counts (n, answered, missing, unparsed, engine_error);
 *   - the turns without a rating and the dialogues without a score (from the dialogue table) and
 *     the primary parser's statuses (from the parser audit), as lines of text;
 *   - the abilities, and the overall score per rating parser, from the across-seeds table
 *     (mean over seeds [95% CI], std), one table each;
 *   - the model comparisons, overall and by domain (wins, losses, ties, win rates with CIs);
 *   - the rating parsers' audit (/audit/mtbench101/parsers as written);
 *   - with judge repeats the judge's self-agreement and stability; the parser swap;
 *   - a bars-with-CI chart of the primary parser's task means per model and policy.
 * Tables used: /metrics/mtbench101/{summary, across_seeds, dialogues, comparisons, settings,
 * judge_agreement, judge_stability, parser_swap} and /audit/mtbench101/parsers; TL_EINPUT when
 * the summary or across_seeds is absent (the report then renders every table generically). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tally/report.h"
#include "tally/table.h"

tl_status tl_mtb_report(tl_table *const *tables, int n, struct tl_doc *doc);

static void digits(tl_rtable *t, int k) {
  for (int c = 0; t && c < t->ncols; c++) t->cols[c].digits = k;
}

/* The column `name` of t gets k decimals (no such column: nothing). */
static void col_digits(tl_rtable *t, const char *name, int k) {
  for (int c = 0; t && c < t->ncols; c++)
    if (!strcmp(t->cols[c].name, name)) t->cols[c].digits = k;
}

/* The value of setting `key` in /metrics/mtbench101/settings (key, value), or NULL. */
static const char *setting(const tl_table *set, const char *key) {
  int k = set ? tl_table_col(set, "key") : -1, v = set ? tl_table_col(set, "value") : -1;
  if (k < 0 || v < 0 || !tl_col_is_str(set->cols[k].type) || !tl_col_is_str(set->cols[v].type)) return NULL;
  for (size_t r = 0; r < set->nrows; r++)
    if (!strcmp(set->cols[k].v.s[r], key)) return set->cols[v].v.s[r];
  return NULL;
}

/* The primary (the job's first) rating parser: the first of the setting "parsers", else the
 * first row's parser of the across-seeds table (written primary first). */
static void primary_parser(const tl_table *set, const tl_table *acr, char *out, size_t nout) {
  const char *p = setting(set, "parsers");
  int c = tl_table_col(acr, "parser");
  if (!p && c >= 0 && acr->nrows) p = acr->cols[c].v.s[0];
  snprintf(out, nout, "%.*s", p ? (int)strcspn(p, ",") : 1, p ? p : "?");
}

/* The summary table: Avg [95% CI] and std with 3 decimals, the tasks with 2 (as the paper). */
static void summary_table(struct tl_doc *d, tl_section *s, const tl_table *sum, const tl_table *set,
                          const char *primary) {
  char title[200], note[900];
  snprintf(title, sizeof title, "MT-Bench-101: Avg [95%% CI] and the 13 tasks, both policies (%s parser)", primary);
  tl_rtable *t = tl_doc_from_table(d, s, sum, title);
  digits(t, 2);
  col_digits(t, "Avg", 3);
  col_digits(t, "std", 3);
  const char *B = setting(set, "ci_resamples"), *seed = setting(set, "ci_seed");
  snprintf(note, sizeof note,
           "Avg: 1-10, the mean of the task scores (a dialogue scores the least rating over its turns, a task the "
           "mean of its dialogues), mean over seeds; std: over seeds (ddof 1); 95%% CI: percentile bootstrap over "
           "dialogues, a dialogue's seeds together (%s resamples, seed %s). n: judged turns asked (every seed); "
           "answered: a reply from the model; missing: none; unparsed: answered, no rating; engine_error: an engine "
           "gave up. policy exclude: a turn without a rating is left out of its dialogue's minimum; fail: the "
           "dialogue scores nothing (docs/MTBENCH101.md)",
           B ? B : "?", seed ? seed : "?");
  tl_rtable_note(d, t, note);
}

/* The lines of the unrated turns (primary parser, every model and seed: the dialogue table's
 * n_turns, n_unrated, one row per dialogue) and of the primary parser's statuses (the audit's
 * n_<status> columns summed over the primary parser's rows). */
static tl_status unrated_lines(struct tl_doc *d, tl_section *s, const tl_table *dlg, const tl_table *aud,
                               const char *primary) {
  char line[600];
  int nt = dlg ? tl_table_col(dlg, "n_turns") : -1, nu = dlg ? tl_table_col(dlg, "n_unrated") : -1;
  if (nt >= 0 && nu >= 0) {
    long long unr = 0, tot = 0, unsc = 0;
    for (size_t r = 0; r < dlg->nrows; r++) {
      tot += dlg->cols[nt].v.i[r];
      unr += dlg->cols[nu].v.i[r];
      unsc += dlg->cols[nu].v.i[r] > 0;
    }
    snprintf(line, sizeof line,
             "turns without a rating: %lld of %lld; dialogues without a score under policy fail: %lld of %zu", unr,
             tot, unsc, dlg->nrows);
    tl_status st = tl_sec_text(d, s, line);
    if (st) return st;
  }
  int pc = aud ? tl_table_col(aud, "parser") : -1;
  if (pc < 0 || !tl_col_is_str(aud->cols[pc].type)) return TL_OK;
  int off = snprintf(line, sizeof line, "%s parse statuses:", primary);
  for (int c = 0; c < aud->ncols && off < (int)sizeof line; c++) {
    if (strncmp(aud->cols[c].name, "n_", 2) || !strcmp(aud->cols[c].name, "n_turns") ||
        !strcmp(aud->cols[c].name, "n_rated") || aud->cols[c].type != TL_COL_I64)
      continue;
    long long k = 0;
    for (size_t r = 0; r < aud->nrows; r++)
      if (!strcmp(aud->cols[pc].v.s[r], primary)) k += aud->cols[c].v.i[r];
    if (k) off += snprintf(line + off, sizeof line - (size_t)off, " %s=%lld", aud->cols[c].name + 2, k);
  }
  return tl_sec_text(d, s, line);
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

/* The model comparisons (both policies), overall and by domain; the rest by task and ability
 * stays in the table. */
static void comparison_tables(struct tl_doc *d, tl_section *s, const tl_table *cmp, const tl_table *set) {
  static const char *const DROP_LEVEL[] = {"level", NULL};
  const char *B = setting(set, "compare_resamples"), *seed = setting(set, "compare_seed");
  const char *lv = setting(set, "compare_level");
  char title[300], more[160] = "", pct[40] = ""; /* a file without these settings: not said */
  if (B && seed) snprintf(more, sizeof more, " (%s resamples, seed %s)", B, seed);
  if (lv) snprintf(pct, sizeof pct, "%s%% ", lv);
  snprintf(title, sizeof title,
           "model comparison (beyond the original protocol), overall, per seed; %spaired bootstrap CIs over "
           "dialogues%s",
           pct, more);
  tl_rtable *t = tl_doc_from_table_where(d, s, cmp, title, "level", "overall", DROP_LEVEL);
  digits(t, 3);
  snprintf(title, sizeof title, "model comparison by domain, per seed (by task and ability: /metrics/mtbench101/comparisons)");
  t = tl_doc_from_table_where(d, s, cmp, title, "level", "domain", DROP_LEVEL);
  digits(t, 3);
}

/* Judge self-agreement and stability over judge samples, the parser swap; a line saying why
 * when a table is absent (one judge sample; one parser). */
static tl_status judge_tables(struct tl_doc *d, tl_section *s, tl_table *const *tables, int n, const tl_table *set,
                              const char *primary) {
  const tl_table *agr = tl_report_find(tables, n, "/metrics/mtbench101/judge_agreement");
  const tl_table *stab = tl_report_find(tables, n, "/metrics/mtbench101/judge_stability");
  const tl_table *swap = tl_report_find(tables, n, "/metrics/mtbench101/parser_swap");
  const char *k = setting(set, "judge_samples");
  char title[600];
  tl_status st = TL_OK;
  if (agr) {
    snprintf(title, sizeof title, "judge self-agreement over %s samples (every parser; seed -1: the model's seeds "
                                  "pooled): exact agreement, mean range, Krippendorff's alpha (ordinal)", k ? k : "?");
    digits(tl_doc_from_table(d, s, agr, title), 3);
  }
  if (stab) {
    snprintf(title, sizeof title, "judge stability over %s samples (every parser; seed -1: the model's seeds pooled): "
                                  "turns with >= 2 rated samples, the share whose rating changes, spread (max - min) "
                                  "mean and max, mean per-turn SD (ddof 1) (docs/MTBENCH101.md)", k ? k : "?");
    digits(tl_doc_from_table(d, s, stab, title), 3);
  } else if (k && !strcmp(k, "1")) {
    st = tl_sec_text(d, s, "judge stability: one judge sample per turn (judge_samples 1): no repeats to compare");
  }
  if (swap) {
    snprintf(title, sizeof title, "parser swap: the primary %s parser replaced by each compatibility parser; dialogue "
                                  "scores that change (models x seeds x dialogues), tasks whose model ranking changes "
                                  "(means over seeds), the overall ranking, the largest |dialogue score difference|",
             primary);
    digits(tl_doc_from_table(d, s, swap, title), 3);
  } else if (!st && setting(set, "parsers") && !strchr(setting(set, "parsers"), ',')) {
    snprintf(title, sizeof title, "parser swap: only the %s parser in \"parsers\" (list mtbench101-opencompass, "
                                  "fastchat or judgearena after it to compare)", primary);
    st = tl_sec_text(d, s, title);
  }
  return st;
}

tl_status tl_mtb_report(tl_table *const *tables, int n, struct tl_doc *doc) {
  const tl_table *sum = tl_report_find(tables, n, "/metrics/mtbench101/summary");
  const tl_table *acr = tl_report_find(tables, n, "/metrics/mtbench101/across_seeds");
  const tl_table *cmp = tl_report_find(tables, n, "/metrics/mtbench101/comparisons");
  const tl_table *aud = tl_report_find(tables, n, "/audit/mtbench101/parsers");
  const tl_table *dlg = tl_report_find(tables, n, "/metrics/mtbench101/dialogues");
  const tl_table *set = tl_report_find(tables, n, "/metrics/mtbench101/settings");
  if (!sum || !acr || tl_table_col(acr, "level") < 0 || tl_table_col(acr, "parser") < 0) return TL_EINPUT;
  char primary[128];
  primary_parser(set, acr, primary, sizeof primary);
  tl_section *s = tl_doc_section(doc, "benchmark mtbench101");
  summary_table(doc, s, sum, set, primary);
  tl_status st = unrated_lines(doc, s, dlg, aud, primary);
  if (st) return st;
  static const char *const DROP_LEVEL[] = {"level", NULL};
  tl_rtable *t = tl_doc_from_table_where(doc, s, acr, "abilities (mean over seeds [95% CI], every rating parser)",
                                         "level", "ability", DROP_LEVEL);
  digits(t, 2);
  t = tl_doc_from_table_where(doc, s, acr, "overall score per rating parser (mean over seeds [95% CI])", "level",
                              "overall", DROP_LEVEL);
  digits(t, 2);
  if (cmp && cmp->nrows) comparison_tables(doc, s, cmp, set);
  if (aud) digits(tl_doc_from_table(doc, s, aud, "rating parsers' audit: overall score (exclude, fail) and the turns "
                                                 "per status, per parser, model and seed"), 2);
  if ((st = judge_tables(doc, s, tables, n, set, primary))) return st;
  task_chart(acr, doc, s);
  return tl_doc_ok(doc);
}
