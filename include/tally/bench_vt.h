/* bench_vt.h - the benchmark module contract: one function table per benchmark (core tier: no
 * MPI/HDF5/curl). Types only: what the table's callbacks take and give. The rows and units they
 * see are in tally/row.h, the job loader's services in tally/job.h, the registry that lists the
 * modules in tally/registry.h (tally/bench.h includes them all).
 *
 * The run path (job, units, pipeline, scheduler, journal, row exchange, writers) names no
 * benchmark: it calls these functions. A new benchmark is a folder src/core/bench/<name>/ with
 * one tl_bench_vt, plus one line in the registry (src/core/run/registry.c); the commands around
 * the run (the replay engine's answer formats, `tally parse`, `tally compare`) ask the registry
 * through the optional hooks at the end of the table, so they name no benchmark either.
 *
 * Stages. vt->nstages is the count of a module's stages (tally/row.h) unless the module has
 * vt->n_stages, which gives it per module object (from the job's settings).
 *
 * Aggregates. A module declares blocks of int64 accumulators, each with its reduction (sum,
 * min or max). Ranks add the units they hold, par reduces every block with its operation, and
 * rank 0 builds the metric tables from the reduced integers in key order - so every float
 * depends only on the integers, never on how the units were split.
 *
 * Ownership: a module object owns its configuration, items and compiled parsers; after load
 * they are immutable and may be shared by threads. Callers own rows, cfgs and tables. Strings a
 * callback returns are borrowed from the module object. Everything a hook points to is static. */
#ifndef TALLY_BENCH_VT_H
#define TALLY_BENCH_VT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "tally/engine.h"
#include "tally/inlog.h"
#include "tally/parsed.h"
#include "tally/row.h"
#include "tally/str.h"
#include "tally/table.h"

#define TL_MAX_ACC 8    /* accumulator blocks of one benchmark */
#define TL_MAX_MSGS 64  /* chat messages of one request (a system prompt and a long dialogue) */

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

/* The job loader's context a module reads its keys with (tally/job.h). */
typedef struct tl_job_ctx tl_job_ctx;

/* ---- hook: a foreign answer format ----
 * tally's own answer line is {"id", "model"?, "seed"?, "prompt_variant"?, "turn"?, "turn_id"?,
 * "sample"?, "response"} (src/engines/replay.h). A format of another tool's output names the
 * reply (and maybe the item id) otherwise; the replay engine asks the registry for the first
 * format (in registry order) that claims a line without "response", and then reads every other
 * field as for its own lines. Formats must claim disjoint sets of lines (the registry's order
 * then never matters). */
typedef struct {
  const cJSON *resp;   /* the reply: a string or null member of the line; NULL = it has none
                          (the line is then reported as missing 'response') */
  const cJSON *prompt; /* the prompt recorded with the reply (a member of the line), or NULL */
  const char *id;      /* the item id the format makes (written into the caller's buffer), or
                          NULL: the line's "id", as for tally's own lines */
} tl_answer_line;

typedef struct {
  const char *name;  /* e.g. "spatialeval-reference" (docs and tests) */
  /* Whether line o (a JSON object without "response") is of this format. */
  int (*claims)(const cJSON *o);
  /* Reads a claimed line: 0 with *out set (members borrowed from o; out->id, when set, points
   * into idbuf[0..nid)); -1 with msg[0..msz) saying what is wrong (the caller adds file:line). */
  int (*read)(const cJSON *o, tl_answer_line *out, char *idbuf, size_t nid, char *msg, size_t msz);
} tl_answer_format;

/* ---- hook: named parsers (`tally parse --parser NAME`) ----
 * A parser reads one JSONL line's fields and writes its output line's members. The command
 * checks the fields every parser shares ("response" a string or null, "model" a string,
 * "prompt" a string or null; "item" present when needs_item), reads and writes the lines. */
typedef struct {
  const cJSON *item;    /* the line's "item" when the parser needs one, else NULL */
  const char *prompt;   /* NULL when absent or null */
  const char *response; /* NULL for a null response */
  const char *model;    /* NULL when absent */
} tl_parse_line;

typedef struct tl_named_parser tl_named_parser;
struct tl_named_parser {
  const char *name;    /* the --parser value, unique over every module */
  int arg;             /* the module's own (e.g. the scoring mode the name runs) */
  int needs_item;      /* 1: the line's "item" is required and handed to run */
  const char *flag;    /* the one boolean option the parser takes (without "--", e.g.
                          "lave-compat"), or NULL */
  /* The parser's state, with the flag on or off; NULL state is fine when it needs none.
   * TL_OK, or a failure with err set (the command prints it and exits 1). */
  tl_status (*open)(const tl_named_parser *np, int flag, void **state, tl_err *err);
  void (*close)(void *state); /* NULL ok; called with what open gave */
  /* One line into out (an empty object the caller prints). TL_EINPUT: the line's item is not
   * one this parser reads (err says why; the line gets an error line). Any other failure is
   * the parser's own ("parser failed: <status>"). */
  tl_status (*run)(const tl_named_parser *np, void *state, int flag, const tl_parse_line *line, cJSON *out,
                   tl_err *err);
};

/* A module's parsers, and how `tally parse --help` describes them. */
typedef struct {
  const tl_named_parser *const *list; /* NULL-terminated */
  const char *kind;  /* after the names on the usage's NAME line: "answer parsers" */
  const char *brief; /* after the names in "--parser is required: ..." (NULL: none; with one,
                        the group's last name is joined by " or ") */
  const char *help;  /* the usage's block for these parsers: whole lines, each ending "\n" */
} tl_parser_set;

/* ---- hook: `tally compare` defaults ---- */
typedef struct {
  const char *metric; /* the per-unit score column */
  const char *by;     /* the group column ("" for none) */
  const char *status; /* the status column ("" for none) */
  int dialogue;       /* 1: where the item table has a "turn" column, an item is a dialogue scored
                         by the least value over its turns (MT-Bench-101) */
} tl_compare_defaults;

typedef struct tl_bench tl_bench;
struct tl_doc; /* tally/report.h */

typedef struct {
  const char *name;                  /* the job's "benchmark" value */
  int nstages;                       /* 1: generate; 2: generate, then judge (see n_stages) */
  const char *const *variants;       /* prompt variant names, NULL-terminated; index = order */
  const char *const *keys;           /* the module's own keys of a benchmark entry, NULL-terminated
                                        (the loader owns: benchmark, answers, judgments, models, seeds) */
  /* Sizes the run path gives fixed arrays (checked at registration, tl_bench_check): the most
   * scoring modes n_modes ever returns (<= TL_MAX_MODES: tl_row.res) and the most accumulator
   * blocks acc_layout ever returns (<= TL_MAX_ACC: the driver's layout arrays). */
  int max_modes;
  int max_acc;

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

  int (*n_modes)(const tl_bench *b);                          /* 1 .. vt->max_modes; fixed after create */
  const char *(*mode_name)(const tl_bench *b, int k);         /* k = 0 is the primary */

  /* The request of stage s of unit u; r holds the replies of stages < s. */
  tl_status (*request)(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, int s,
                       const tl_row *r, tl_buf *arena, tl_bench_req *out, tl_err *err);
  /* Parses and scores every mode of a finished row (r->done == nstages) into r->res. A
   * property of a reply is a status, never an error; an error is an internal failure. */
  tl_status (*score)(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, tl_row *r,
                     tl_err *err);

  /* Accumulator blocks for ncfgs cfgs into out[TL_MAX_ACC]; returns how many, 1 ..
   * vt->max_acc. Called after load (a layout may depend on the items). */
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
  /* From the reduced accumulators, in key order: /metrics/<name>/..., /audit/...
   * *out: malloc'd array of *n owned tables. On one rank, run once on it; on 2 or more, run on
   * every rank and again on rank 0 (tally/workshare.h: the costly steps are shared): a function
   * of (b, cfgs, acc) alone, which asks for the same tasks whatever their results and prints
   * nothing while tl_ws_replaying(). */
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

  /* ---- optional hooks: what the commands around the run ask a benchmark (NULL: none) ---- */
  /* Foreign answer formats the module reads (NULL-terminated): answer or judgment lines written
   * by other tools, which the replay engine accepts beside tally's own lines (tl_answer_format). */
  const tl_answer_format *const *formats;
  /* Named parsers `tally parse` lists and runs (tl_parser_set). */
  const tl_parser_set *parsers;
  /* What `tally compare` uses when the command line does not say (tl_compare_defaults). */
  const tl_compare_defaults *compare;
  /* The benchmark's part of a report (`tally report`, tally/report.h), in the paper's layout,
   * built from its tables alone: tables[0..n) are its /metrics/<name>/... and /audit/... tables
   * as `tables` made them or as read back from a run file (path set, every column; string
   * columns TL_COL_STR). Adds its section(s) to doc. TL_OK; TL_ENOMEM; TL_EINPUT when a table
   * it needs is absent or lacks a column (the report then renders the tables generically).
   * NULL: the report renders each table generically (tl_doc_from_table). */
  tl_status (*report)(tl_table *const *tables, int n, struct tl_doc *doc);
} tl_bench_vt;

#endif
