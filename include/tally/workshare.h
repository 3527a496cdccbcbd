/* workshare.h - the costly steps of a benchmark's tables hook shared by the ranks.
 *
 * A module's tables hook (bench_vt.h) is a deterministic function of the reduced counts, and
 * its costly steps - a headline CI (tl_ccis_row, tl_cluster_ci_drawn), a batch of model
 * comparisons (tl_mtb_cmp_pairs) - are independent of each other: "tasks", numbered in the order the hook
 * asks for them. The par driver (src/par/run/write.c) shares them on 2 or more ranks:
 *
 *   1. every rank runs the hook in TL_WS_COMPUTE mode: task i is computed by rank i % size only,
 *      which keeps its result; on the other ranks it returns at once with a placeholder result
 *      (NaN and zeros). The tables of this pass are thrown away;
 *   2. the kept results are gathered to rank 0 (one collective, outside the hook);
 *   3. rank 0 runs the hook again in TL_WS_REPLAY mode: task i gets the result its rank
 *      computed, and nothing is computed again.
 *
 * Each task is keyed by its kind and a hash of its inputs; a replayed task whose key differs
 * from the computed one, or a task no rank computed, is TL_EINTERNAL (the hook asked for other
 * tasks than in pass 1: never expected, never a wrong number). The results are the computing
 * function's own bytes, so the tables are the same bits on any rank count.
 *
 * A hook must issue the same tasks whatever their results (the task sequence may depend on the
 * inputs only) - true of every module: a result only goes into a table cell. And it runs twice
 * on rank 0: what it prints (a module's messages on rank 0's stream, an error's reason) it
 * prints in the first run only, where a failure stops the pass (tl_ws_replaying() is then 0).
 *
 * Outside the driver's two passes (mode TL_WS_OFF, the default: one rank, `tally score`, the
 * tests) every task is computed where it is asked. The context is one per process, set and
 * cleared by the driver around the hook, which runs on the main thread; nothing else in tally
 * runs tasks concurrently with it. */
#ifndef TALLY_WORKSHARE_H
#define TALLY_WORKSHARE_H

#include <stddef.h>
#include <stdint.h>

#include "tally/err.h"

typedef enum { TL_WS_OFF = 0, TL_WS_COMPUTE, TL_WS_REPLAY } tl_ws_mode;

/* Task kinds (part of a task's key). */
enum { TL_WS_CCIS = 1, TL_WS_MTB_PAIRS = 2, TL_WS_CCIS_PART = 3, TL_WS_DRAWN = 4 };

/* Starts a pass. COMPUTE: this rank's index and the rank count (size >= 1). REPLAY: recs/nrecs
 * are the records every rank kept in its COMPUTE pass, concatenated in any order (borrowed until
 * tl_ws_end). TL_ENOMEM when the replay index cannot be built; TL_EINTERNAL when recs is not a
 * sequence of records. */
tl_status tl_ws_begin(tl_ws_mode mode, int rank, int size, const unsigned char *recs, size_t nrecs);

/* Ends the pass and goes back to TL_WS_OFF. COMPUTE: *kept (malloc'd, the caller frees; NULL
 * when empty) and *nkept are this rank's records. REPLAY: TL_EINTERNAL when a record was not
 * replayed (pass 2 asked for fewer tasks). kept may be NULL (the records are dropped). */
tl_status tl_ws_end(unsigned char **kept, size_t *nkept);

/* What tl_ws_task tells the caller to do. */
enum {
  TL_WS_HAVE = 0, /* *out holds the task's result (replayed): use it */
  TL_WS_RUN = 1,  /* compute it here, then hand the result to tl_ws_done */
  TL_WS_SKIP = 2  /* another rank's task (COMPUTE): write the placeholder result and go on */
};
/* A task of `kind` whose inputs hash to `key`, with a result of `len` bytes at `out`: one of the
 * above, or a negative tl_status (-TL_EINTERNAL: the replayed task has another key or length, or
 * no rank computed it; the pass cannot go on). */
int tl_ws_task(uint32_t kind, uint64_t key, void *out, size_t len);
/* The result of the task tl_ws_task just said TL_WS_RUN for (kept in COMPUTE mode). TL_ENOMEM. */
tl_status tl_ws_done(const void *out, size_t len);

/* The mode now. */
tl_ws_mode tl_ws_mode_now(void);
/* 1 in the REPLAY pass (rank 0's second run of the hook): a hook prints nothing then, having
 * printed its messages in the COMPUTE pass (or, OFF, in its only run). */
int tl_ws_replaying(void);
/* The rank count of the pass (1 when OFF): a task too large for one rank may be asked for as
 * that many parts (tl_ccis_row), the same number in both passes. */
int tl_ws_parts(void);

#endif
