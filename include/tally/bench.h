/* bench.h - a benchmark is one module behind one function table (core tier: no MPI/HDF5/curl).
 *
 * The run path (job, units, pipeline, scheduler, journal, row exchange, writers) names no
 * benchmark: it calls these functions. A new benchmark is a folder src/core/bench/<name>/ with
 * one tl_bench_vt, plus one line in the registry (src/core/run/registry.c).
 *
 * Units. A cfg is (model, prompt variant, seed); a unit is (cfg, item, sub), sub being a judged
 * dialogue turn (0 for single-turn items). Key order: cfgs sorted by (model, variant index,
 * seed), items by id, subs ascending; u = cfg * S + sub_off[item] + sub with S the units per
 * cfg (tally/units.h). Every table depends only on the rows' contents and that order.
 *
 * Stages. A unit goes through nstages stages: 0 = generate (the model under test), then the
 * judge stages where the benchmark has a judge: stage 1 = the judge, and stages 2.. = further
 * samples of the same judgment when the module asks the judge several times (judge repeats:
 * stage 1 + j is sample j). vt->nstages is the count unless the module has vt->n_stages, which
 * gives it per module object (from the job's settings). Each stage's reply is journaled on its
 * own; a replay judgments line names its sample with "sample" (0 when absent).
 *
 * Aggregates. A module declares blocks of int64 accumulators, each with its reduction (sum,
 * min or max). Ranks add the units they hold, par reduces every block with its operation, and
 * rank 0 builds the metric tables from the reduced integers in key order - so every float
 * depends only on the integers, never on how the units were split.
 *
 * Ownership: a module object owns its configuration, items and compiled parsers; after load
 * they are immutable and may be shared by threads. Callers own rows, cfgs and tables. Strings a
 * callback returns are borrowed from the module object. */
#ifndef TALLY_BENCH_H
#define TALLY_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "tally/engine.h"
#include "tally/inlog.h"
#include "tally/parsed.h"
#include "tally/str.h"
#include "tally/strmap.h"
#include "tally/table.h"

#define TL_MAX_STAGES 8 /* generate, then up to 7 judge samples (bit s of a uint8_t per stage) */
#define TL_MAX_MODES 6  /* scoring modes of one benchmark (SpatialEval: strict, pr3, legacy; VQA: up to 5) */
#define TL_MAX_ACC 8    /* accumulator blocks of one benchmark */
#define TL_MAX_MSGS 64  /* chat messages of one request (a system prompt and a long dialogue) */

typedef struct {
  char *model;  /* owned */
  int variant;  /* index into vt->variants */
  int seed;
} tl_cfg;

typedef struct {
  uint32_t cfg, item, sub;
} tl_unit;

/* A unit's evidence and results: journaled per stage, packed between ranks, written. */
typedef struct {
  char *text[TL_MAX_STAGES];   /* owned; the reply of each stage, NULL = none obtained */
  char *prompt[TL_MAX_STAGES]; /* owned; the prompt recorded with a replayed reply, or NULL */
  char *source[TL_MAX_STAGES]; /* owned; "file:line" (replay) or a request id, or NULL */
  char *meta[TL_MAX_STAGES];   /* owned; the engine's evidence of the reply (tl_eng_reply.meta), or NULL */
  tl_evidence *ev[TL_MAX_STAGES]; /* owned; the meta's fields when the engine gave them
                                  (tl_eng_reply.ev), else NULL. Not packed or journaled: the
                                  meta says the same */
  char *error[TL_MAX_STAGES];  /* owned; set when the engine gave up on the stage: why */
  uint64_t ref[TL_MAX_STAGES]; /* where each stage's reply is journaled (the caller's encoding),
                                  TL_REF_NONE when it is not: the texts can be dropped and read
                                  back from there later */
  uint8_t done;                /* stages finished, 0 .. nstages */
  tl_parsed res[TL_MAX_MODES]; /* per scoring mode the module runs (n_modes), in its order */
  tl_parsed *extra;            /* owned [nextra]: more results the module's score keeps with the
                                  row (e.g. each judge sample's parse, mode-major); NULL when none.
                                  Not packed: whoever holds the row's texts scores it again */
  int nextra;
} tl_row;

#define TL_REF_NONE UINT64_MAX
void tl_row_init(tl_row *r);
void tl_row_release(tl_row *r); /* frees every string and re-inits */

/* The request of one stage of a unit, as the module builds it. Strings point into the module,
 * the row, or the caller's arena. The arena is a tl_buf, emptied by the caller before each
 * request() call and valid until the next one; it moves when it grows, so a module appends
 * every string first (each with its NUL) and takes pointers into it only at the end. */
typedef struct {
  int skip;          /* 1: no request for this stage (e.g. nothing to judge): it finishes with
                        no reply and is not journaled (it is rebuilt the same way on resume) */
  int seed_set;      /* 1: send `seed` to the server instead of the cfg's seed (judge samples) */
  int seed;
  tl_role role;      /* which engine answers it */
  tl_msg msgs[TL_MAX_MSGS];
  int nmsg;
  const char *images[4];
  int nimages;
  double temperature; /* < 0: the engine's default */
  int max_tokens;     /* 0: the engine's default */
} tl_bench_req;

typedef enum { TL_ACC_SUM = 0, TL_ACC_MIN = 1, TL_ACC_MAX = 2 } tl_acc_op;
typedef struct {
  size_t len;     /* int64 values */
  tl_acc_op op;
  int64_t init;   /* every value starts here (0 for sums, INT64_MAX for minima, ...) */
} tl_acc_block;

/* What a module needs from the job loader (src/core/run/job.c) while it reads its keys. */
typedef struct tl_job_ctx tl_job_ctx;
/* One problem at `where` (e.g. "benchmarks[0].items"); every problem is reported, then none runs. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void tl_job_problem(tl_job_ctx *c, const char *where, const char *fmt, ...);
/* A path or a list of paths at `v` -> resolved against the job's folder (malloc'd array of
 * malloc'd strings). Each is also declared an input of the job (`what`: "an items file"), so
 * the output is checked against it and its SHA-256 is recorded. Problems are reported. */
/* Typed keys of a benchmark entry e: when `key` is present and valid its value goes to *out;
 * when it is of the wrong type or range a problem "<where>.<key>: must be ..." is reported
 * (`what` describes the integer wanted, e.g. "an integer >= 0 (0: the engine's default)").
 * Return the number of problems (0 or 1); an absent key leaves *out as it is. */
int tl_job_key_int(tl_job_ctx *c, const cJSON *e, const char *key, const char *where, double lo, double hi,
                   const char *what, int *out);
int tl_job_key_num(tl_job_ctx *c, const cJSON *e, const char *key, const char *where, double lo, double hi,
                   double *out);
int tl_job_key_bool(tl_job_ctx *c, const cJSON *e, const char *key, const char *where, bool *out);
/* The type of the engine that answers `role` in this job ("replay", "openai"; the job's engines
 * are read before its benchmarks), or "replay" when the job names none. A module uses it where
 * the engine changes what its items need (SpatialEval: a server must get a vision item's image). */
const char *tl_job_engine_type(const tl_job_ctx *c, tl_role role);
/* A path of the job resolved against the job's folder (absolute paths as they are), malloc'd;
 * NULL when out of memory. Not declared an input (for a folder, e.g. SpatialEval's "images"). */
char *tl_job_resolve(const tl_job_ctx *c, const char *path);
/* Returns the number of problems it reported (0: every entry is in *out). */
int tl_job_paths(tl_job_ctx *c, const cJSON *v, const char *where, const char *what, char ***out,
                 int *n);

typedef struct tl_bench tl_bench;

typedef struct {
  const char *name;                  /* the job's "benchmark" value */
  const char *about;                 /* one line, for the list of known benchmarks */
  int nstages;                       /* 1: generate; 2: generate, then judge (see n_stages) */
  const char *const *variants;       /* prompt variant names, NULL-terminated; index = order */
  const char *const *keys;           /* the module's own keys of a benchmark entry, NULL-terminated
                                        (the loader owns: benchmark, answers, judgments, models, seeds) */

  /* Reads the module's keys of a benchmark entry (`where` names it in problems). Returns the
   * module object, or NULL when something was reported. Loads nothing yet. */
  tl_bench *(*create)(tl_job_ctx *c, const cJSON *entry, const char *where);
  void (*free)(tl_bench *b);         /* NULL ok */
  /* Stages of this module object, 1 .. TL_MAX_STAGES (NULL: vt->nstages); fixed after create. */
  int (*n_stages)(const tl_bench *b);
  int (*default_variant)(const tl_bench *b);

  /* Loads the items (every rank does: the same files give the same items). Bad lines go to the
   * log with file:line; TL_EIO when a file cannot be read (err names it), TL_EINPUT when the
   * log is strict and reported something. */
  tl_status (*load)(tl_bench *b, size_t max_line, tl_inlog *log, tl_err *err);
  size_t (*n_items)(const tl_bench *b);                       /* items sorted by id */
  const char *(*item_id)(const tl_bench *b, size_t item);
  /* 1 when found. An item the job's selection leaves out on purpose (SpatialEval's "modes") is
   * found with *item = n_items: its answer lines are neither reported as unknown items nor
   * matched, and it never becomes a unit. Every caller that indexes by an item from item_find
   * skips item >= n_items (the driver's replay discovery, turn check, resume and merge scan). */
  int (*item_find)(const tl_bench *b, const char *id, size_t *item);
  uint32_t (*n_subs)(const tl_bench *b, size_t item);         /* 1 for single-turn items */

  int (*n_modes)(const tl_bench *b);                          /* 1 .. TL_MAX_MODES */
  const char *(*mode_name)(const tl_bench *b, int k);         /* k = 0 is the primary */

  /* The request of stage s of unit u; r holds the replies of stages < s. */
  tl_status (*request)(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, int s,
                       const tl_row *r, tl_buf *arena, tl_bench_req *out, tl_err *err);
  /* Parses and scores every mode of a finished row (r->done == nstages) into r->res. A
   * property of a reply is a status, never an error; an error is an internal failure. */
  tl_status (*score)(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, tl_row *r,
                     tl_err *err);

  /* Accumulator blocks for ncfgs cfgs into out[TL_MAX_ACC]; returns how many. Called after
   * load (a layout may depend on the items). */
  int (*acc_layout)(const tl_bench *b, size_t ncfgs, tl_acc_block *out);
  /* Adds one scored unit (u is a unit of this run: cfg < ncfgs, item < n_items) to the
   * blocks (acc[k] has out[k].len values). */
  void (*acc_add)(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, const tl_unit *u, const tl_row *r,
                  int64_t *const *acc);

  /* The item table /items/<name> of n rows of consecutive units in key order (units[i] is
   * row i's unit). The table may borrow the rows' texts: free it (or tl_table_clear it)
   * before them. into: NULL for a new table; else a table an earlier call of this function
   * returned for the same benchmark, emptied with tl_table_clear, to which the rows are
   * appended (its columns are not added again) and which is returned. NULL when out of
   * memory (into, if given, stays the caller's to free). */
  tl_table *(*items_table)(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *units,
                           const tl_row *rows, size_t n, tl_table *into);
  /* Rank 0, from the reduced accumulators, in key order: /metrics/<name>/..., /audit/...
   * *out: malloc'd array of *n owned tables. */
  tl_status (*tables)(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc,
                      tl_table ***out, int *n);
  /* Rank 0: the benchmark's part of the summary on stdout. */
  void (*summary)(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, uint64_t units,
                  tl_table *const *tables, int n, int64_t *const *acc, FILE *out);

  /* Optional (NULL: turn t of an item is its sub t - 1, every turn a unit). The sub of the
   * item's 1-based turn `turn_id` (a replay line's "turn_id", OpenCompass's name): 0 with *sub
   * set, else -1 with why[0..nwhy) saying why the turn names no unit of the item (past its last
   * turn; a context-only turn, which is never generated or judged). */
  int (*turn_sub)(const tl_bench *b, size_t item, uint64_t turn_id, uint32_t *sub, char *why, size_t nwhy);

  /* Optional (NULL: nothing to check). Called on every rank once the run's cfgs are known and
   * before any engine is asked or a journal started (not in a merge): a join of the module's
   * that matches none of them (a human-score file of other models) is TL_EJOB with err saying
   * so; the run then stops with exit 2, nothing written. */
  tl_status (*check_cfgs)(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, tl_err *err);
} tl_bench_vt;

/* The registry. NULL when unknown. */
const tl_bench_vt *tl_bench_find(const char *name);
/* The known benchmarks' names, ", "-joined, into out (for "unknown benchmark" messages). */
void tl_bench_known(tl_buf *out);
/* The stages of module object b: vt->n_stages(b), else vt->nstages. */
int tl_bench_nstages(const tl_bench_vt *vt, const tl_bench *b);
/* The prefix of stage s's columns: "" (generate), "judge_" (stage 1), "judge<j>_" (sample j =
 * s - 1 >= 1), into buf (>= 16 bytes); returns buf. */
const char *tl_stage_prefix(int s, char *buf, size_t n);
/* Index of a variant name in vt->variants; -1 when unknown. */
int tl_bench_variant(const tl_bench_vt *vt, const char *name);

/* Rows travel between ranks packed: unit index, done, per stage (ref, text, prompt, source:
 * each string absent or a byte string), then per mode status, correct, value, answer, rule. Native byte
 * order: the ranks of one job run one build. */
tl_status tl_row_pack(const tl_row *r, uint64_t unit, int nstages, int nmodes, tl_buf *out);
/* Unpacks one row at *p (< end), advancing *p. Rule names are interned in `rules` (the row's
 * rule pointers stay valid until `rules` is released). TL_EINPUT on a truncated buffer. */
tl_status tl_row_unpack(const char **p, const char *end, int nstages, int nmodes,
                        tl_strmap *rules, tl_row *r, uint64_t *unit);

#endif
