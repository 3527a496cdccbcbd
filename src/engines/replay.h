/* replay.h - the replay engine: replies already generated (a model's answers, a judge's
 * judgments), read from JSONL files and matched by unit key and stage (tally/engine.h).
 *
 * Accepted lines (docs/JOBS.md):
 *   tally's own:  {"id", "model"?, "seed"?, "prompt_variant"?, "turn"?, "response": str|null}
 *                 ("turn": the sub-unit, an integer >= 0, default 0)
 *   the SpatialEval reference evaluator's output lines: {"id", "answer", "oracle_answer", ...,
 *                 "prompt"?} - "answer" is the response and "prompt" is kept.
 * Fields a line lacks come from the source's defaults (the job's answers entry). Each problem
 * (malformed line, missing/mistyped field, duplicate key) goes to the inlog with file:line; the
 * first of duplicates is kept. A JSON null response means "no reply was obtained" and is
 * replayed as such. One replay engine serves every source it is given: sources name their
 * benchmark and stage, and a request is answered from the sources of its key's benchmark and
 * stage. */
#ifndef TALLY_REPLAY_H
#define TALLY_REPLAY_H

#include "tally/engine.h"
#include "tally/inlog.h"

typedef struct {
  const char *path;
  const char *bench;               /* the benchmark the file belongs to */
  int stage;                       /* 0: the model's answers; 1: the judge's replies */
  const char *model;               /* default model (NULL: lines must carry one) */
  int seed;                        /* default seed */
  const char *variant;             /* default prompt variant name (not NULL) */
  const char *const *variants;     /* the names a line's "prompt_variant" may take, NULL-terminated;
                                      NULL = any */
} tl_replay_source;

typedef struct tl_replay tl_replay;

/* Loads every source. TL_EIO when a file cannot be opened (err names it), TL_EINPUT when the log
 * is strict and reported something. The engine copies what it keeps of src (each distinct
 * benchmark, model and variant name once): src, its strings and its variant lists need to live
 * only during this call. */
tl_status tl_replay_open(const tl_replay_source *src, int nsrc, size_t max_line, tl_inlog *log,
                         tl_replay **out, tl_err *err);
tl_engine *tl_replay_engine(tl_replay *r); /* the engine view; freeing it frees r */

/* Simulated latency: every reply becomes ready `ms` milliseconds after its request (0 = at
 * once). For tests of scheduling, interruption and resume, and for scheduling benchmarks. */
void tl_replay_set_latency(tl_replay *r, int ms);

/* Iterates over the loaded replies' keys in load order (for discovery and checks). The
 * strings are borrowed from r. */
size_t tl_replay_count(const tl_replay *r);
void tl_replay_key(const tl_replay *r, size_t i, tl_unit_key *key, const char **source);
/* Number of requests answered so far (a call counter for tests). */
size_t tl_replay_served(const tl_replay *r);

#endif
