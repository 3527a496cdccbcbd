/* acctab.h - the accuracy tables of a benchmark whose units score 0/1 under each of its scoring
 * modes (core tier: no MPI/HDF5). One implementation for the modules that share this shape (mcq,
 * gen): the per-mode columns of the items table, the three accumulator blocks, the metric table
 * of each mode (/metrics/<name>/<mode>), the mode audit (/audit/<name>) and the summary. A module
 * keeps its items, its prompt, its scoring and its fixed item columns; it describes itself to
 * these functions with one tl_acctab, filled once its items are loaded.
 *
 * The units: one stage, one reply; r->res[k] is mode k's tl_parsed (k < n_modes, mode 0 the
 * primary); a unit counts as correct under mode k when res[k].correct is 1.
 *
 * Accumulators (tl_acctab_layout; every block a sum, so every rank adds its units and the
 * reduced integers are the same on any number of ranks; T = ntasks + 1, slot ntasks = "all";
 * M = n_modes):
 *   0: [ncfgs][T][M][TL_ACCTAB_GW]: n, correct, then one count per tl_pstatus;
 *   1: [ncfgs][n_items][M]: 1 where the unit is correct (the CIs' clusters);
 *   2: [T][M][TL_ACCTAB_AW]: units with a reply (the primary's status neither missing nor
 *      engine_error): n, correct, scored differently from the primary, correct under this mode
 *      and not under the primary (the audit).
 *
 * Ownership: a tl_acctab borrows every string and array it points to from its module object,
 * which outlives it; the functions keep nothing. Tables they return are the caller's. */
#ifndef TALLY_ACCTAB_H
#define TALLY_ACCTAB_H

#include <stdint.h>
#include <stdio.h>

#include "tally/bench_vt.h"

#define TL_ACCTAB_NACC 3                 /* accumulator blocks (a module's max_acc) */
#define TL_ACCTAB_GW (2 + TL_PS__COUNT)  /* int64s per group count in block 0 */
#define TL_ACCTAB_AW 4                   /* int64s per audit count in block 2 */

typedef struct {
  const char *name;             /* the benchmark's name: "/metrics/<name>/<mode>", "/audit/<name>"
                                   and the summary's first line "<name>: N items in ..." */
  const char *const *variants;  /* the prompt variants' names, indexed by tl_cfg.variant */
  const char *modes[TL_MAX_MODES]; /* [n_modes] the modes' names in job order, the primary first */
  int n_modes;                  /* 1..TL_MAX_MODES */
  size_t n_items;               /* the items, indexed as tl_unit.item */
  char *const *tasks;           /* [ntasks] the tasks' names, sorted (NULL when ntasks is 0) */
  int ntasks;
  /* Item i's task: its index in tasks[0..ntasks). ctx is the field below (the module object). */
  int (*item_task)(const void *ctx, size_t i);
  const void *ctx;
  int ci_B;                     /* bootstrap resamples of the metric tables' CIs */
  int ci_seed;                  /* their Philox seed */
  /* The doc of the items table's answer_<mode> column: answer_doc[0], the mode's name, then
   * answer_doc[1] (what the mode's answer is differs by benchmark). */
  const char *answer_doc[2];
  /* The doc of the metric tables' "unparsed" column (what a mode reads from a reply). */
  const char *unparsed_doc;
} tl_acctab;

/* The accumulator blocks (header comment) into out[0..TL_ACCTAB_NACC); returns TL_ACCTAB_NACC. */
int tl_acctab_layout(const tl_acctab *at, size_t ncfgs, tl_acc_block *out);
/* Adds unit u (row r scored under every mode) to the blocks acc[0..TL_ACCTAB_NACC). */
void tl_acctab_add(const tl_acctab *at, const tl_unit *u, const tl_row *r, int64_t *const *acc);

/* The items table's per-mode columns, appended to t in mode order: answer_<mode>,
 * status_<mode>, rule_<mode>, correct_<mode>. 0, or -1 when out of memory. */
int tl_acctab_item_cols(const tl_acctab *at, tl_table *t);
/* Row `row`'s cells of those columns, the first at column col, from r->res (borrowed: the row
 * must outlive the table, as the module's other item cells). Returns the column after them. */
int tl_acctab_item_cells(const tl_acctab *at, tl_table *t, size_t row, int col, const tl_row *r);

/* Rank 0: the tables from the reduced blocks: *out (malloc'd, *n = n_modes + 1 owned tables):
 * /metrics/<name>/<mode> for each mode in order (per model x variant x task and "all", the
 * seeds pooled; cfgs sorted by model, variant as the run gives them), then /audit/<name>.
 * TL_OK, or a failure (nothing is returned). */
tl_status tl_acctab_tables(const tl_acctab *at, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc,
                           tl_table ***out, int *n);
/* Rank 0: the summary (per group and mode the accuracy and CI, the mode audit, the primary's
 * parse statuses) from the tables tl_acctab_tables made (tables[0..n_modes]); units: the run's. */
void tl_acctab_summary(const tl_acctab *at, size_t ncfgs, uint64_t units, tl_table *const *tables, FILE *out);

#endif
