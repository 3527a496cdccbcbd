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
#include "tally/boot.h"
#include "tally/table.h"

#define TL_SE_MAX_QID 7 /* items with a larger qid are reported as bad ids */

typedef struct {
  tl_se_item *items; /* [n], sorted by id */
  size_t n;
  tl_strmap by_id;   /* id -> index */
  tl_strmap left_out;/* ids of the items whose mode the job does not select (their answers are
                        neither units nor unknown items) */
  size_t per_qmode[TL_SE__NQMODES]; /* items kept, by mode */
} tl_se_itemset;

/* How items are loaded (zeroed = every mode, images optional, relative images beside their
 * items file). */
typedef struct {
  const char *images_dir; /* the entry's "images" folder (resolved): a relative item image is
                             taken from there; NULL: from its items file's folder */
  int need_images;        /* 1: a vqa or vtqa item without an image is bad input (missing_field,
                             file:line) and left out: the model is a server, which would be asked
                             about a picture it never gets. 0 (replay: the answers exist): allowed */
  unsigned qmode_mask;    /* bit q (tl_se_qmode) set: items of mode q are kept; 0 = every mode.
                             Items of other modes are checked as usual, then left out (left_out) */
} tl_se_load_opts;

/* Loads items from several JSONL files. Bad lines (malformed, missing fields, bad ids,
 * duplicates: the first one is kept) go to `log`; an empty file is reported too. An item's
 * relative `image` is resolved (opts); absolute paths are kept; TQA items never carry one (an
 * image of a tqa item is dropped: the mode is text only). Returns TL_EIO when a file cannot be
 * opened/read (err names it), TL_EINPUT when the log is strict and something was reported,
 * TL_OK otherwise. On failure the set is left released. opts NULL = all zero. */
tl_status tl_se_itemset_load_opts(tl_se_itemset *s, char *const *paths, int npaths,
                                  const tl_se_load_opts *opts, size_t max_line, tl_inlog *log,
                                  tl_err *err);
tl_status tl_se_itemset_load(tl_se_itemset *s, char *const *paths, int npaths, size_t max_line,
                             tl_inlog *log, tl_err *err); /* opts NULL */
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
 *   groups [ncfgs][TL_SE__NTASKS][TL_SE__NQMODES][TL_SE_MAX_QID + 2][nmodes][2 + TL_PS__COUNT]
 *          (qid slot 0 = all qids of the task; n, correct, then one count per parse status)
 *   audit  [TL_SE__NTASKS + 1][1 + nmodes + nmodes * nmodes]
 *          (task slot TL_SE__NTASKS = all tasks; n, correct per mode, only[x][y] = units correct
 *          under mode x and not under mode y) */
size_t tl_se_counts_len(size_t ncfgs, int nmodes);
/* Adds rows (of units[i]) to c (zero it first for a fresh count). */
void tl_se_counts_add(int64_t *c, const tl_se_itemset *s, size_t ncfgs, const tl_unit *units,
                      const tl_row *rows, size_t nrows, int nmodes);
/* Units per parse status under mode index k (summed over every cfg, task and question mode). */
void tl_se_status_totals(const int64_t *c, size_t ncfgs, int nmodes, int k,
                         int64_t out[TL_PS__COUNT]);

/* The per-item counts behind the CIs: a second, additive int64 block of
 * tl_se_item_counts_len(ncfgs, nitems, nmodes) values, [ncfgs][nitems][nmodes]: 1 where the
 * unit (cfg, item) is correct under parser k (a cluster's num sums it over a model's seeds). */
size_t tl_se_item_counts_len(size_t ncfgs, size_t nitems, int nmodes);
void tl_se_item_counts_add(int64_t *c, size_t nitems, const tl_unit *u, const tl_row *r, int nmodes);

/* The tables. `modes` lists the job's parsers in job order (modes[0] primary). Every accuracy
 * divides by n, every unit of the group (docs/OUTPUT.md): a missing answer, an engine error or an
 * answer the parser cannot read scores 0, as correct is 0 for each of them.
 *  items:   /items/spatialeval - one row per unit, in the order given (key order); the table
 *           borrows the texts of s, cfgs and rows, so free it before them.
 *  metrics: /metrics/spatialeval/<parser> - model x variant x task x mode x qid x seed groups
 *           (qid -1 = all qids of the task), then per model x variant x seed one overall row
 *           (task and mode "all", qid -1): n, correct, accuracy, n_<status> for every status.
 *  seeds:   /metrics/spatialeval/<parser>_across_seeds - the same groups less the seed: seeds,
 *           n, correct, answered, missing, unparsed, engine_error, mean and std (ddof 1, NaN
 *           for one seed) of the per-seed accuracies, summed in seed order; pooled accuracy; se;
 *           ci_lo, ci_hi (NaN here: tl_se_fill_ci fills the qid -1 rows).
 *  audit:   /audit/spatialeval - per task (and "all"): accuracy under each mode and, per pair
 *           of modes, how many units they disagree on and which side was the correct one. */
tl_table *tl_se_items_table(const tl_se_itemset *s, const tl_cfg *cfgs, const tl_unit *units,
                            const tl_row *rows, size_t nrows, const tl_se_mode *modes, int nmodes,
                            tl_table *into);
tl_status tl_se_metric_tables(const int64_t *counts, const tl_cfg *cfgs, size_t ncfgs,
                              const tl_se_mode *modes, int nmodes, int k, tl_table **per_seed,
                              tl_table **across_seeds);
tl_table *tl_se_audit_table(const int64_t *counts, size_t ncfgs, const tl_se_mode *modes, int nmodes);

/* Fills ci_lo / ci_hi of the qid -1 rows of an across_seeds table (parser index k): a percentile
 * bootstrap over the row's items, each item's seeds one cluster (num = the item's correct units
 * over the row's seeds, den = its units), d's B resamples and seed, level 0.95: the bounds of
 * tl_cluster_ci, bit for bit (test_se_tables checks it). item_counts: the reduced
 * tl_se_item_counts block. TL_ENOMEM when out of memory. */
tl_status tl_se_fill_ci(tl_table *across, const tl_se_itemset *s, const int64_t *item_counts,
                        const tl_cfg *cfgs, size_t ncfgs, int nmodes, int k, tl_cluster_draws *d);

#endif
