/* run.h - the benchmark-agnostic core of `tally run`: the benchmarks of a run, their cfgs and
 * units in key order, and the pipeline that drives a unit through its stages (core tier: the
 * par scheduler feeds the pipeline units and engine replies; rank and rank count are never
 * needed here).
 *
 * Global unit numbering: the benchmarks of a job in job order, each a contiguous range
 * [base, base + U) of units in its own key order (bench.h): g = base + cfg * S + sub_off[item]
 * + sub. */
#ifndef TALLY_RUN_H
#define TALLY_RUN_H

#include <stdint.h>

#include "tally/bench.h"
#include "tally/engine.h"

/* One benchmark of a run. Built by tl_rb_units after the module's items are loaded and the
 * cfgs set; immutable afterwards (shared by the pipeline and the driver). */
typedef struct {
  const tl_bench_vt *vt;
  tl_bench *b;         /* borrowed (the job owns it) */
  tl_cfg *cfgs;        /* owned, sorted by key (tl_cfgs_sort) */
  size_t ncfgs;
  size_t nitems;
  uint64_t *sub_off;   /* owned [nitems + 1]: units of items < i in one cfg */
  uint64_t S;          /* units per cfg = sub_off[nitems] */
  uint64_t U;          /* ncfgs * S */
  uint64_t base;       /* first global unit */
  int nmodes;
  int nstages;         /* tl_bench_nstages(vt, b), set by tl_rb_units */
} tl_run_bench;

/* Sets nitems, sub_off, S and U from the module (its items loaded) and ncfgs. */
tl_status tl_rb_units(tl_run_bench *rb);
void tl_rb_release(tl_run_bench *rb); /* frees cfgs and sub_off (not the module) */
/* The unit of local index u (< rb->U). */
tl_unit tl_rb_unit(const tl_run_bench *rb, uint64_t u);
/* Its local index. */
uint64_t tl_rb_index(const tl_run_bench *rb, const tl_unit *x);
/* The benchmark holding global unit g (benches sorted by base). */
size_t tl_rb_find(const tl_run_bench *rbs, size_t n, uint64_t g);

/* ---- key blocks and chunks: how a run's units are split over ranks (pure arithmetic) ----
 * Rank q owns the key block [tl_block_lo(U, q, N), tl_block_lo(U, q + 1, N)) of U units over N
 * ranks: floor(U q / N), so blocks differ by at most one unit and block N ends at U. */
uint64_t tl_block_lo(uint64_t U, int q, int nranks);
/* The rank whose block holds unit u (u < U, U > 0). */
int tl_block_owner(uint64_t u, uint64_t U, int nranks);
/* Scheduling chunk size for P pending units over nranks ranks: P / (8 nranks), so about 8 chunks
 * per rank (load balance at the end of a run), clamped to 1 .. 1024 (one request per up to 1,024
 * units keeps the scheduling cost per unit small). */
uint64_t tl_chunk_size(uint64_t P, int nranks);

/* Scores a finished row with the module (vt->score), then marks every mode of a row on which
 * the engine gave up (row->error[s] set for some stage) engine_error: no answer, rule
 * "engine_error", not correct. Every scoring of a row goes through here. */
tl_status tl_rb_score(const tl_run_bench *rb, const tl_unit *u, tl_row *row, tl_err *err);

/* The engine's evidence of each reply, appended as columns to an item table of n rows (rows[i]
 * is row i; rows NULL with n 0: the columns only, for a schema). For each stage s in
 * stage_mask (bit s), the columns engine_error, finish_reason, prompt_tokens, completion_tokens,
 * latency_ms, attempts, cached, served_model, request_id, endpoint and raw_response, prefixed
 * tl_stage_prefix(s) ("judge_" for stage 1, "judge1_" for judge sample 1, ...), read from row->meta[s] and row->error[s] (src/core/run/evidence.c
 * documents each). A job adds them for the stages its HTTP engines answer, so the tables of a
 * replay job are what they were. A table that has a stage's columns already (filled again
 * after tl_table_clear) gets its rows' values in them, not a second set. */
tl_status tl_evidence_cols(tl_table *t, const tl_row *rows, size_t n, unsigned stage_mask);

/* ---- cfgs ---- */
/* Sorts cfgs into key order (model, variant index, seed). */
void tl_cfgs_sort(tl_cfg *cfgs, size_t n);
/* Adds (model, variant, seed) unless present (`seen` maps the cfg key to its index). */
tl_status tl_cfgs_add(tl_cfg **cfgs, size_t *n, size_t *cap, tl_strmap *seen, const char *model,
                      int variant, int seed);
void tl_cfgs_free(tl_cfg *cfgs, size_t n);

/* The cfgs of a benchmark of a job (*out, *n; the caller frees them with tl_cfgs_free): those of
 * found[nfound] (the distinct (model, variant, seed) its answers hold, in any order) that the
 * entry's "models" and "seeds" lists keep (a NULL list keeps all); with list_all (a run, not a
 * merge) and both lists given, every listed model x seed is a cfg even without answers (its
 * units are then counted "missing"): for each variant the model was seen with, or the default
 * variant dv when it was seen with none. Sorted into key order. TL_ENOMEM only. */
tl_status tl_cfgs_select(const tl_cfg *found, size_t nfound, char *const *models, int n_models, const int *seeds,
                         int n_seeds, int dv, int list_all, tl_cfg **out, size_t *n);
/* A "models" or "seeds" value that no answer holds is a typo until shown otherwise: TL_EJOB
 * naming every such value and the models the answers do hold (the first 8, in the order of
 * found), never a run of zero units or of units that are all "missing". TL_ENOMEM. */
tl_status tl_cfgs_check_filter(const tl_cfg *found, size_t nfound, char *const *models, int n_models,
                               const int *seeds, int n_seeds, tl_err *err);

/* ---- the pipeline ---- */
/* Submits one request to the engine of its role. `rq->tag` is g * TL_MAX_STAGES + stage. */
typedef tl_status (*tl_pipe_submit_fn)(void *ctx, tl_role role, const tl_eng_request *rq);
/* A unit is finished and scored: the callee takes the row (its strings) and g. */
typedef tl_status (*tl_pipe_done_fn)(void *ctx, size_t bench, uint64_t g, tl_row *row);

typedef struct tl_pipe tl_pipe;

/* rbs: the run's benchmarks (borrowed, outlive the pipe). NULL when out of memory. */
tl_pipe *tl_pipe_new(const tl_run_bench *rbs, size_t nb, tl_pipe_submit_fn submit,
                     tl_pipe_done_fn done, void *ctx);
void tl_pipe_free(tl_pipe *p); /* drops the rows still in flight */
/* Starts unit g at stage row->done (row NULL: a fresh unit; else a restored one, taken): the
 * stages' requests are built and submitted one after the other as replies come; a skipped
 * stage is passed over; when every stage is done the row is scored and handed to `done`. */
tl_status tl_pipe_start(tl_pipe *p, uint64_t g, tl_row *row, tl_err *err);
/* One engine reply (its strings are taken): the stage's texts go into the row, then the next
 * stage is submitted or the row finished. The caller journals the reply before this. */
tl_status tl_pipe_reply(tl_pipe *p, tl_eng_reply *rep, tl_err *err);
/* Units started and not finished. */
size_t tl_pipe_in_flight(const tl_pipe *p);
/* Requests submitted per stage, stages skipped per stage (since tl_pipe_new). */
uint64_t tl_pipe_calls(const tl_pipe *p, int stage);
uint64_t tl_pipe_skips(const tl_pipe *p, int stage);
/* Decodes a tag. */
static inline uint64_t tl_tag_unit(uint64_t tag) { return tag / TL_MAX_STAGES; }
static inline int tl_tag_stage(uint64_t tag) { return (int)(tag % TL_MAX_STAGES); }

#endif
