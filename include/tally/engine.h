/* engine.h - where replies come from, behind one non-blocking interface (every engine
 * implements it: replay now, an OpenAI-compatible HTTP engine later).
 *
 * A caller submits requests and polls for replies; a rank keeps many requests in flight.
 * Replies may come in any order; callers place them by tag, so results never depend on
 * completion order.
 *
 * A request is the real request: the unit key (benchmark, item id, model under test, prompt
 * variant, seed, sub-unit), the stage, and what to send (chat messages with roles, image paths,
 * sampling settings). An engine that answers from files (replay) matches by unit key and stage;
 * one that calls a server sends the messages. Everything a request points to is borrowed and
 * valid only during submit: an engine copies what it keeps. */
#ifndef TALLY_ENGINE_H
#define TALLY_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "tally/err.h"

/* The roles a job names engines for ("engines": {"model": {...}, "judge": {...}}). */
typedef enum { TL_ROLE_MODEL = 0, TL_ROLE_JUDGE = 1, TL_ROLE__N = 2 } tl_role;
const char *tl_role_name(tl_role r); /* "model" | "judge" */

/* One chat message. role: "system" | "user" | "assistant". */
typedef struct {
  const char *role;
  const char *content;
} tl_msg;

/* The key of one stage of a unit: what replay files and journals match on. */
typedef struct {
  const char *bench;       /* benchmark name */
  const char *id;          /* item id */
  const char *model;       /* the model under test (also for a judge stage: whose answer) */
  const char *variant;     /* prompt variant name */
  int seed;
  uint32_t sub;            /* sub-unit (a judged dialogue turn); 0 for single-turn items */
  int stage;               /* 0 = generate, 1 = judge, 1 + j = judge sample j */
} tl_unit_key;

typedef struct {
  uint64_t tag;            /* the caller's, returned in the reply */
  tl_unit_key key;
  /* what to send */
  const tl_msg *msgs;
  int nmsg;
  const char *const *images; /* image file paths, in message order */
  int nimages;
  double temperature;      /* < 0: the engine's default */
  int max_tokens;          /* 0: the engine's default */
  int seed;                /* the seed sent to a server: key.seed, or the module's own for a
                              judge sample (tl_bench_req.seed) */
} tl_eng_request;

/* A reply's evidence as fields: what the item tables' evidence columns hold (tl_evidence_cols).
 * An engine that has the fields at hand hands them over with the reply (tl_eng_reply.ev), so
 * the tables need not parse the meta text again; they say exactly what the meta says, key by
 * key (a row restored from a journal or another rank has only the meta, and must give the same
 * columns). Numbers are NaN when the meta has no number (or, for the integer columns, boolean)
 * there; strings NULL when it has no string. One allocation (tl_evidence_new): the strings live
 * in the same block; free(3) releases it. */
typedef struct tl_evidence {
  const char *finish_reason, *served_model, *request_id, *endpoint, *raw;
  double prompt_tokens, completion_tokens, latency_ms, attempts, cached;
} tl_evidence;

/* A block with copies of the strings (each may be NULL) and every number NaN; NULL when out of
 * memory. */
tl_evidence *tl_evidence_new(const char *finish_reason, const char *served_model, const char *request_id,
                             const char *endpoint, const char *raw);

/* Where a reply's text already lies in a file that stays there (a replay file's line): so a
 * journal or a spill can name it instead of copying it (issue 34). The line of `len` bytes at
 * byte `off` of `path` (line number `line`, 1-based) has the 64-bit checksum `sum`
 * (tl_hash64 of its bytes) and the reply's text is the JSON string that starts at byte `resp`
 * of the line (its opening quote); the text's length is `tlen` bytes. src = 0: no reference (an
 * HTTP reply, or a replay line the engine had to parse whole: the text must be copied).
 * `path` (the file as the reply's source names it) is borrowed from the engine and lives as long
 * as the engine; `src` is 1 + the file's index in its engine. */
typedef struct {
  const char *path;
  uint64_t off, sum;
  uint32_t src, len, resp, line;
  uint64_t tlen;
} tl_reply_ref;

typedef struct {
  uint64_t tag;
  char *text;    /* owned by the receiver (free); NULL = no reply obtained */
  char *prompt;  /* owned; the prompt recorded with the reply (replay), NULL when none */
  char *source;  /* owned; where the reply came from ("file:line", a request id), NULL when none */
  char *error;   /* owned; why there is no reply, NULL when fine */
  char *meta;    /* owned; the reply's evidence as one JSON object (finish_reason, usage, latency,
                    attempts, served model, request id, cached, raw text), NULL when none (replay) */
  int failed;    /* 1: the engine gave up (retries spent, or a request the server refused):
                    `error` says why; the stage's status is engine_error, and --resume asks again */
  tl_evidence *ev; /* owned; the meta's evidence fields (see tl_evidence), NULL: read the meta */
  tl_reply_ref ref; /* where `text` lies in a replay file (ref.src = 0: nowhere; see tl_reply_ref):
                       the text is then also that file's JSON string, and `source` is
                       "<ref.path>:<ref.line>", and there is no prompt */
} tl_eng_reply;

typedef struct tl_engine tl_engine;

typedef struct {
  const char *name;
  /* Queues a request. TL_OK, or an error for a broken engine (not for a missing reply). */
  tl_status (*submit)(tl_engine *e, const tl_eng_request *req);
  /* Moves up to `max` finished replies into out[]; returns how many (0 = none ready yet),
   * waiting at most timeout_ms for the first. */
  int (*poll)(tl_engine *e, tl_eng_reply *out, int max, int timeout_ms);
  /* Requests submitted and not yet polled. */
  size_t (*in_flight)(const tl_engine *e);
  void (*free)(tl_engine *e);
} tl_engine_vtbl;

struct tl_engine {
  const tl_engine_vtbl *vt;
};

void tl_eng_reply_release(tl_eng_reply *r);

#endif
