/* row.h - what the run path keeps per unit: cfgs, unit keys and rows (core tier; twin
 * src/core/run/row.c).
 *
 * Units. A cfg is (model, prompt variant, seed); a unit is (cfg, item, sub), sub being a judged
 * dialogue turn (0 for single-turn items). Key order: cfgs sorted by (model, variant index,
 * seed), items by id, subs ascending; u = cfg * S + sub_off[item] + sub with S the units per
 * cfg (tally/run.h). Every table depends only on the rows' contents and that order.
 *
 * Stages. A unit goes through nstages stages: 0 = generate (the model under test), then the
 * judge stages where the benchmark has a judge: stage 1 = the judge, and stages 2.. = further
 * samples of the same judgment when the module asks the judge several times (judge repeats:
 * stage 1 + j is sample j). Each stage's reply is journaled on its own; a replay judgments line
 * names its sample with "sample" (0 when absent). */
#ifndef TALLY_ROW_H
#define TALLY_ROW_H

#include <stddef.h>
#include <stdint.h>

#include "tally/engine.h"
#include "tally/parsed.h"

#define TL_MAX_STAGES 8 /* generate, then up to 7 judge samples (bit s of a uint8_t per stage) */
#define TL_MAX_MODES 6  /* scoring modes of one benchmark (SpatialEval: strict, pr3, legacy; VQA: up to 5) */

typedef struct {
  char *model;  /* owned */
  int variant;  /* index into vt->variants */
  int seed;
} tl_cfg;

typedef struct {
  uint32_t cfg, item, sub;
} tl_unit;

/* A unit's evidence and results: journaled per stage, exchanged between ranks, written. */
typedef struct {
  char *text[TL_MAX_STAGES];   /* owned; the reply of each stage, NULL = none obtained */
  char *prompt[TL_MAX_STAGES]; /* owned; the prompt recorded with a replayed reply, or NULL */
  char *source[TL_MAX_STAGES]; /* owned; "file:line" (replay) or a request id, or NULL */
  char *meta[TL_MAX_STAGES];   /* owned; the engine's evidence of the reply (tl_eng_reply.meta), or NULL */
  tl_evidence *ev[TL_MAX_STAGES]; /* owned; the meta's fields when the engine gave them
                                  (tl_eng_reply.ev), else NULL. Not journaled: the meta says
                                  the same */
  char *error[TL_MAX_STAGES];  /* owned; set when the engine gave up on the stage: why */
  uint8_t done;                /* stages finished, 0 .. nstages */
  tl_parsed res[TL_MAX_MODES]; /* per scoring mode the module runs (n_modes), in its order */
  tl_parsed *extra;            /* owned [nextra]: more results the module's score keeps with the
                                  row (e.g. each judge sample's parse, mode-major); NULL when none.
                                  Whoever holds the row's texts scores it again */
  int nextra;
} tl_row;

/* A reference (par's encodings: a journal record, a spilled row) that names nothing. */
#define TL_REF_NONE UINT64_MAX

void tl_row_init(tl_row *r);
void tl_row_release(tl_row *r); /* frees every string and re-inits */

/* The prefix of stage s's columns: "" (generate), "judge_" (stage 1), "judge<j>_" (sample j =
 * s - 1 >= 1), into buf (>= 16 bytes); returns buf. */
const char *tl_stage_prefix(int s, char *buf, size_t n);

#endif
