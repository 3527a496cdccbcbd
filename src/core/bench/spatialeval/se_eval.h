/* se_eval.h - SpatialEval scoring of work units and the tables built from them.
 *
 * A work unit is (benchmark, item, model, seed, prompt variant). Here a "cfg" is the
 * (model, variant, seed) part; a row is one unit: item x cfg, with the response (or none) and
 * one parsed result per parser mode. Row order is key order: cfgs sorted by (model, variant,
 * seed), items sorted by id, rows cfg-major. Every table below depends only on the rows' content
 * and that order, never on who computed them. */
#ifndef TALLY_SE_EVAL_H
#define TALLY_SE_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "tally/bench.h"
#include "tally/inlog.h"
#include "spatialeval.h"
#include "tally/strmap.h"
#include "tally/table.h"

#define TL_SE_MAX_QID 7 /* items with a larger qid are reported as bad ids */

typedef struct {
  tl_se_item *items; /* [n], sorted by id */
  size_t n;
  tl_strmap by_id;   /* id -> index */
} tl_se_itemset;

/* Loads items from several JSONL files. Bad lines (malformed, missing fields, bad ids,
 * duplicates: the first one is kept) go to `log`; an empty file is reported too. Returns
 * TL_EIO when a file cannot be opened/read (err names it), TL_EINPUT when the log is strict and
 * something was reported, TL_OK otherwise. On failure the set is left released. */
tl_status tl_se_itemset_load(tl_se_itemset *s, char *const *paths, int npaths, size_t max_line,
                             tl_inlog *log, tl_err *err);
void tl_se_itemset_release(tl_se_itemset *s);

/* Cfgs are tally/bench.h's tl_cfg (variant: tl_se_prompt_kind); rows are tl_row: text[0] is the
 * response (NULL = none obtained: status "missing" in every mode), prompt[0] the prompt it came
 * with (NULL = built from the item), source[0] its file:line; res[k] is job mode k's result. */

/* Parses and scores one row (unit u) with every job mode (`modes` in job order; parsers indexed
 * by mode). pr3 reads options from the prompt: row->prompt[0] when the answer carried one, else
 * the prompt tally builds for the cfg's variant. */
tl_status tl_se_score_row(tl_se_parser *const parsers[TL_SE__NMODES], const tl_se_itemset *s,
                          const tl_cfg *cfgs, const tl_unit *u, const tl_se_mode *modes, int nmodes,
                          tl_row *row);

/* The integer counts behind every metric and audit table: a flat int64 array of
 * tl_se_counts_len(ncfgs, nmodes) values. It is additive - the counts of any split of the rows
 * sum to the counts of all rows - so ranks combine theirs with MPI_Reduce(MPI_SUM) and every
 * float in the tables is computed once, from the integers, in key order. Layout:
 *   groups [ncfgs][TL_SE__NTASKS][TL_SE_MAX_QID + 2][nmodes][2 + TL_PS__COUNT]
 *          (qid slot 0 = all qids of the task; n, correct, then one count per parse status)
 *   audit  [TL_SE__NTASKS + 1][1 + nmodes + nmodes * nmodes]
 *          (task slot TL_SE__NTASKS = all tasks; n, correct per mode, only[x][y] = units correct
 *          under mode x and not under mode y) */
size_t tl_se_counts_len(size_t ncfgs, int nmodes);
/* Adds rows (of units[i]) to c (zero it first for a fresh count). */
void tl_se_counts_add(int64_t *c, const tl_se_itemset *s, size_t ncfgs, const tl_unit *units,
                      const tl_row *rows, size_t nrows, int nmodes);
/* Units per parse status under mode index k (summed over every cfg and task). */
void tl_se_status_totals(const int64_t *c, size_t ncfgs, int nmodes, int k,
                         int64_t out[TL_PS__COUNT]);

/* The tables. `modes` lists the job's modes in job order (modes[0] primary).
 *  items:   /items/spatialeval - one row per unit, in the order given (key order); the table
 *           borrows the texts of s, cfgs and rows, so free it before them.
 *  metrics: /metrics/spatialeval/<mode> - model x variant x task x qid x seed groups (qid -1 =
 *           all qids of the task): n, correct, accuracy, n_<status> for every status.
 *  seeds:   /metrics/spatialeval/<mode>_across_seeds - per model x variant x task x qid: seeds,
 *           mean and std (population, ddof=0) of the per-seed accuracies, summed in seed order;
 *           pooled accuracy.
 *  audit:   /audit/spatialeval - per task (and "all"): accuracy under each mode and, per pair
 *           of modes, how many units they disagree on and which side was the correct one. */
tl_table *tl_se_items_table(const tl_se_itemset *s, const tl_cfg *cfgs, const tl_unit *units,
                            const tl_row *rows, size_t nrows, const tl_se_mode *modes, int nmodes,
                            tl_table *into);
tl_status tl_se_metric_tables(const int64_t *counts, const tl_cfg *cfgs, size_t ncfgs,
                              const tl_se_mode *modes, int nmodes, int k, tl_table **per_seed,
                              tl_table **across_seeds);
tl_table *tl_se_audit_table(const int64_t *counts, size_t ncfgs, const tl_se_mode *modes, int nmodes);

#endif
