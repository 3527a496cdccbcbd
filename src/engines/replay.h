/* replay.h - the replay engine: answers already generated, read from JSONL files.
 *
 * Accepted lines (docs/JOBS.md):
 *   tally's own:  {"id", "model"?, "seed"?, "prompt_variant"?, "response": str|null}
 *   the SpatialEval reference evaluator's output lines: {"id", "answer", "oracle_answer", ...,
 *                 "prompt"?} - "answer" is the response and "prompt" is kept.
 * Fields a line lacks come from the source's defaults (the job's answers entry). Each problem
 * (malformed line, missing/mistyped field, duplicate key) goes to the inlog with file:line; the
 * first of duplicates is kept. A JSON null response means "no answer was obtained" and is
 * replayed as such. */
#ifndef TALLY_REPLAY_H
#define TALLY_REPLAY_H

#include "engine.h"
#include "tally/inlog.h"

typedef struct {
  const char *path;
  const char *model; /* default model (NULL: lines must carry one) */
  int seed;          /* default seed */
  int variant;       /* default prompt variant */
} tl_replay_source;

typedef struct tl_replay tl_replay;

/* Loads every source. TL_EIO when a file cannot be opened (err names it), TL_EINPUT when the log
 * is strict and reported something. */
tl_status tl_replay_open(const tl_replay_source *src, int nsrc, size_t max_line, tl_inlog *log,
                         tl_replay **out, tl_err *err);
tl_engine *tl_replay_engine(tl_replay *r); /* the engine view; freeing it frees r */

/* Simulated latency: every reply becomes ready `ms` milliseconds after its request (0 = at
 * once). For tests of scheduling, interruption and resume, and for scheduling benchmarks. */
void tl_replay_set_latency(tl_replay *r, int ms);

/* Iterates over the loaded answers' keys in load order (for discovery and checks). */
size_t tl_replay_count(const tl_replay *r);
void tl_replay_key(const tl_replay *r, size_t i, const char **id, const char **model, int *seed,
                   int *variant, const char **source);
/* Number of replies served so far (a call counter for tests). */
size_t tl_replay_served(const tl_replay *r);

#endif
