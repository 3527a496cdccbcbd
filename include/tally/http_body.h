/* http_body.h - the JSON body of an OpenAI-compatible request (POST /chat/completions or
 * /completions), written straight into a buffer.
 *
 * The bytes are those cJSON_PrintUnformatted gives for the same members with every object's keys
 * in strcmp order (tl_json_sort_keys), which is what tally sent before this writer existed: the
 * reply cache's keys hash these bytes, so they may not change (tests/unit/test_jsonw.c holds the
 * identity to a cJSON-built body over a table of requests).
 *
 * Members: "model"; "messages" (chat: [{"content", "role"}], the last user message's content a
 * list of parts {"text", "type": "text"} and {"image_url": {"url"}, "type": "image_url"} when the
 * request has images) or "prompt" (completions: the messages' contents joined by a blank line);
 * "temperature" (the job's, else the request's, else 0); "max_tokens" (the job's, else the
 * request's, when > 0); "seed" (when the job sends seeds); and the members every request of an
 * engine sends alike, rendered once by tl_http_body_prepare: "top_p", "n", "stop", "logprobs",
 * "top_logprobs" when set, and the job's "extra" members (which may not use the names above:
 * job.c refuses them). */
#ifndef TALLY_HTTP_BODY_H
#define TALLY_HTTP_BODY_H

#include <cjson/cJSON.h>

#include "tally/engine.h"
#include "tally/job.h"
#include "tally/str.h"

/* The per-engine constant members, in key order. Owned by the struct (tl_http_body_free). */
typedef struct {
  int n;
  char **key, **val; /* [n]: member names, and their values as JSON text */
  int pos[6];        /* per per-request member (max_tokens, messages, model, prompt, seed,
                        temperature): how many constant members sort before it */
} tl_http_body_tpl;

/* Renders c's constant members and extra's (an object, or NULL; borrowed for the call).
 * TL_OK or TL_ENOMEM; on failure t holds nothing to free. */
tl_status tl_http_body_prepare(tl_http_body_tpl *t, const tl_http_cfg *c, const cJSON *extra);
void tl_http_body_free(tl_http_body_tpl *t);

/* Appends rq's body to out. model: the served name; image_urls: rq->nimages URLs (data URLs)
 * for the chat API, NULL when there are none (the completions API takes no images: the caller
 * refuses such a request first). *temp (if not NULL): the temperature sent. TL_OK or
 * TL_ENOMEM. */
tl_status tl_http_body(tl_buf *out, const tl_http_body_tpl *t, const tl_http_cfg *c, const char *model,
                       const tl_eng_request *rq, char *const *image_urls, double *temp);

#endif
