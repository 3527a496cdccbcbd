/* mtb_stability.h - MT-Bench-101: how stable the judge's verdicts are (issue 32, item 4).
 *
 * Two reports, both computed on rank 0 from the module's reduced int64 accumulators, in key
 * order, so they are the same on any number of ranks:
 *
 *   1. Judge stability (judge_samples > 1): per (parser, model, seed) and per (parser, model)
 *      with its seeds pooled (seed -1), over the turns with two or more rated samples: the share
 *      whose rated samples differ, the mean and max spread (max - min), the mean per-turn
 *      standard deviation (ddof 1), beside the judge_agreement table's Krippendorff's alpha.
 *      /metrics/mtbench101/judge_stability.
 *   2. Parser swap (two or more parsers in "parsers"): for each compatibility parser k >= 1
 *      against the primary (mode 0), per policy: the (model, seed, dialogue) scores that change,
 *      the tasks whose ranking of the models changes, whether the overall (Avg) ranking changes,
 *      the largest |score difference| of a dialogue. /metrics/mtbench101/parser_swap.
 *
 * Accumulators. The module (module.c) gives each mode two blocks: MIN [cfg][dialogue] (the
 * dialogue's least turn rating in units of 1/rscale; INT64_MAX: none) and SUM, which starts with
 * [cfg][dialogue][2] = (turns rated, turns unrated). With judge_samples > 1 this file owns two
 * further slices, placed by the module:
 *   SUM block, at sum_off: [ncfgs][TL_MTB_ST__N] counters (tl_mtb_stab_add);
 *   MIN block, at min_off: [ncfgs] = - the largest spread (thousandths) of a compared turn
 *     (INT64_MAX: no compared turn). A MIN of the negated spread is its MAX: the module's
 *     blocks are limited to TL_MAX_ACC = 2 per mode, so no MAX block of its own is possible.
 * Every counter is an integer sum (the per-turn SD in fixed point, below), so the reduction is
 * exact whatever the split of the units. */
#ifndef TALLY_MTB_STABILITY_H
#define TALLY_MTB_STABILITY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mtb_data.h"
#include "tally/err.h"
#include "tally/parsed.h"
#include "tally/row.h"
#include "tally/table.h"

/* The per-turn SD (in ratings) is summed as llround(sd * TL_MTB_SD_FIX): units of 1e-9 of a
 * rating, exact integers, so the mean SD is rank-invariant and off by at most 5e-10. */
#define TL_MTB_SD_FIX 1e9

/* Counters per (mode, cfg) in the SUM block (sum_off + cfg * TL_MTB_ST__N):
 *   TURNS     judged turns seen (every unit of the cfg);
 *   COMPARED  turns with >= 2 rated samples;
 *   CHANGED   compared turns whose rated samples are not all equal;
 *   PARTLY    turns with at least one rated and at least one unrated sample (a parse that
 *             appears or vanishes between samples: also a change, counted apart);
 *   SPREAD    sum over compared turns of max - min (thousandths);
 *   SDFIX     sum over compared turns of the sample SD (ddof 1), in 1/TL_MTB_SD_FIX ratings;
 *   SDBIG     compared turns whose SD is too large to sum in fixed point (> 1e9 ratings, only
 *             the compatibility parsers, which check no range, can give one): the mean SD is
 *             then NaN, never a wrong number. */
enum { TL_MTB_ST_TURNS, TL_MTB_ST_COMPARED, TL_MTB_ST_CHANGED, TL_MTB_ST_PARTLY, TL_MTB_ST_SPREAD,
       TL_MTB_ST_SDFIX, TL_MTB_ST_SDBIG, TL_MTB_ST__N };

/* What the module tells this file about its layout and settings (module.c fills it). */
typedef struct {
  int nmodes;                   /* parsers; mode 0 is the primary */
  const int *modes;             /* [nmodes] tl_mtb_rate_mode */
  int nsamples;                 /* judge samples per turn */
  int64_t rscale;               /* MIN-block units per rating (turn ratings are value / rscale) */
  size_t n;                     /* dialogues */
  const tl_mtb_dialogue *d;     /* [n], in key order */
  size_t sum_off;               /* the stability counters' start in each mode's SUM block */
  size_t min_off;               /* the negated max spreads' start in each mode's MIN block */
  const char *variant;          /* the prompt variant's name, for the tables */
} tl_mtb_stab_ctx;

/* SUM-block and MIN-block slots per cfg that this file needs: TL_MTB_ST__N and 1 with
 * nsamples > 1, else 0 and 0. */
size_t tl_mtb_stab_sum_len(int nsamples);
size_t tl_mtb_stab_min_len(int nsamples);

/* Adds one turn's judge samples sp[0..ns) (ns > 1; tl_parsed.value in parser thousandths when
 * status is OK) to its cfg's counters st[TL_MTB_ST__N] and negated max spread *negmax. */
void tl_mtb_stab_add(const tl_parsed *sp, int ns, int64_t *st, int64_t *negmax);

/* The SD (ddof 1) of m >= 2 ratings v[] in thousandths, in ratings. Two-pass; deterministic. */
double tl_mtb_stab_sd(const int64_t *v, int m);

/* Ranks of m scores, 1 = best (highest): 1 + the number of strictly higher defined scores
 * (ties share the best rank: competition ranking); 0 for a NaN score (unranked). */
void tl_mtb_stab_ranks(const double *s, size_t m, int *rank);

/* Rank 0. Appends judge_stability (ctx->nsamples > 1) and parser_swap (ctx->nmodes > 1) to the
 * module's tables (*tabs, *ntabs; the array is reallocated). acc: the reduced blocks, 2 per
 * mode. cfgs in key order (a model's seeds adjacent). TL_OK or TL_ENOMEM (the array and its
 * tables are then left as they were). */
tl_status tl_mtb_stab_tables(const tl_mtb_stab_ctx *ctx, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc,
                             tl_table ***tabs, int *ntabs);

#endif
