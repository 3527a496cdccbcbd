/* engine.h - where answers come from, behind one non-blocking interface.
 *
 * A caller submits requests (one per work unit, tagged with the caller's unit index) and polls
 * for replies; a rank keeps many requests in flight. Replies may come in any order; callers
 * place them by tag, so results never depend on completion order.
 *
 * Engines: replay (answers already generated, from JSONL; replies at once) now; an
 * OpenAI-compatible HTTP engine over libcurl's multi interface joins later behind the same
 * vtable. */
#ifndef TALLY_ENGINE_H
#define TALLY_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "tally/err.h"

typedef struct {
  uint64_t tag;        /* caller's unit index, returned in the reply */
  const char *id;      /* item id */
  const char *model;
  int seed;
  int variant;         /* tl_se_prompt_kind */
  const char *prompt;  /* the prompt to send (replay ignores it) */
} tl_eng_request;

typedef struct {
  uint64_t tag;
  char *text;    /* owned by the receiver (free); NULL = no answer obtained */
  char *prompt;  /* owned; the prompt recorded with the answer, NULL when none */
  char *source;  /* owned; where the answer came from ("file:line"), NULL when none */
  char *error;   /* owned; why there is no answer, NULL when fine */
} tl_eng_reply;

typedef struct tl_engine tl_engine;

typedef struct {
  const char *name;
  /* Queues a request. TL_OK, or an error for a broken engine (not for a missing answer). */
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
