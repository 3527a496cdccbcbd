/* openai.h - the "openai" engine: an OpenAI-compatible server (vLLM, SGLang, llama.cpp server,
 * TGI, a hosted API) over libcurl's multi interface, behind tally/engine.h. One engine per role
 * per rank; its event loop runs inside poll(), so a rank keeps hundreds of requests in flight
 * on one thread.
 *
 * Requests. POST {base}/chat/completions (or {base}/completions for base models: the messages'
 * contents joined by blank lines as "prompt"), one JSON body with its keys in sorted order:
 * model (the job's "model", else the unit's model name), messages (a message with images gets
 * content parts: its text, then each image as a base64 data URL read from its path), the
 * sampling fields (temperature: the job's, else the benchmark's, else 0 - always sent, as
 * servers otherwise apply their own generation_config defaults; seed = the unit's seed unless
 * the job says "seed": false; top_p, max_tokens, n, stop, logprobs, top_logprobs when set; the
 * benchmark's max_tokens when the job sets none), then the job's "extra" fields. Headers: the
 * API key as "Authorization: Bearer" when the job names its variable; with "key_header": true,
 * "X-Tally-Key: <unit key>" (bench/id/model/variant/seed/sub/stage, percent-encoded), which
 * tools/testserver keys its replies, faults and counts on.
 *
 * Replies. choices[0].message.content is the text; JSON null is an empty answer (counted, not
 * missing); reasoning_content and a <think>...</think> block are kept as the raw text, and with
 * "think": "strip" (the default) scoring sees what follows the last </think> (an unclosed block
 * is left whole, for the parser to report). The evidence (tl_eng_reply.meta, one JSON object):
 * finish_reason, prompt_tokens, completion_tokens, latency_ms, attempts, model (as the server
 * reports it), request_id (x-request-id, else the reply's id), endpoint, cached, raw (when it
 * differs from the text), n_choices. source = the request id.
 *
 * Faults. Connect and total timeouts per request. 429, 408, 5xx, timeouts, connection errors and
 * malformed or cut replies are retried, at most `retries.max` times, after backoff_s * 2^k
 * (capped at backoff_max_s) times a jitter in [0.5, 1), and never before a 429's Retry-After.
 * Another 4xx (a request the server refuses, e.g. one over its context) is permanent at once.
 * A permanent failure is a reply with failed = 1 and the reason in `error`.
 *
 * Concurrency. Each endpoint has a limit on requests in flight, from concurrency.initial within
 * [min, max]: it grows while replies are fast (latency within twice the endpoint's fastest) and
 * the limit is in use (by 1 per reply until the first 429, then by 1/limit per reply), halves on
 * a 429 (and the endpoint pauses for its Retry-After), and holds on 5xx and timeouts. Requests
 * go to the endpoint with the most free room. Every change of a limit is recorded (history).
 *
 * Cache. With a cache folder, each reply is stored under the SHA-256 of (role, stage, the
 * request body) - transport settings (URL, timeouts, concurrency) are not in the body, the seed
 * and every sampling field are - as <dir>/<2 hex>/<64 hex>.json, written to a temporary name and
 * renamed (safe for concurrent writers on one file system; the last writer wins with the same
 * content). A request whose reply is stored is answered from it and sends nothing, unless it
 * samples (temperature > 0) with no seed and the job did not set cache_unseeded.
 *
 * Dry run. With a dry-run stream, submit() writes the request as one JSON line
 * {"role", "key": {...}, "url", "cached", "body"} and sends nothing; a cached reply is still
 * answered (so the requests that depend on it - a judge's - are written too), any other is
 * answered with no text and the error "dry run: not sent".
 *
 * Not thread-safe: one thread drives an engine. */
#ifndef TALLY_OPENAI_H
#define TALLY_OPENAI_H

#include <signal.h>
#include <stdio.h>

#include "tally/engine.h"
#include "tally/job.h"

typedef struct tl_openai tl_openai;

typedef struct {
  const tl_http_cfg *cfg;  /* borrowed for the call (copied) */
  tl_role role;
  int local_rank, local_size; /* of this rank on its node: {local_rank}, {port}, URL lists */
  const char *cache_dir;   /* NULL: no cache */
  FILE *dry;               /* non-NULL: a dry run, requests written here */
  const volatile sig_atomic_t *stop; /* NULL, or a flag a signal handler sets: the health wait
                                        ends when it is nonzero */
  FILE *log;               /* warnings (a model the server does not list); NULL: none */
} tl_openai_opts;

/* Resolves this rank's endpoints (a URL template, or its share of a URL list: list entries i
 * with i % local_size == local_rank, or entry local_rank % n when there are fewer entries than
 * ranks) and reads the API key. TL_EJOB when the key's variable is unset or empty (err names the
 * variable, never a value); TL_ENOMEM. Sends nothing. */
tl_status tl_openai_open(const tl_openai_opts *o, tl_openai **out, tl_err *err);
/* Waits until every endpoint answers GET {root}{health.path} with 200 ({root}: the URL without
 * a final "/v1"), polling every 0.5 s, for at most health.wait_s in all. TL_ENGINE naming the
 * first endpoint that did not come up, with what it last answered. */
tl_status tl_openai_wait_healthy(tl_openai *o, tl_err *err);
tl_engine *tl_openai_engine(tl_openai *o); /* freeing it frees o */

typedef struct {
  uint64_t sent;        /* HTTP requests sent (attempts) */
  uint64_t replies;     /* replies obtained from a server */
  uint64_t cache_hits;  /* replies served from the cache */
  uint64_t cache_writes;
  uint64_t retries;     /* attempts after the first */
  uint64_t failed;      /* permanent failures */
  uint64_t http_429, http_5xx, timeouts, conn_errors, malformed;
  uint64_t max_waiting; /* the most requests built and waiting for a slot (or a retry) at once */
  uint64_t dead_endpoints; /* endpoints that refused the credentials (HTTP 401/403): no more
                              requests went there */
  uint64_t cache_write_errors; /* cache entries that could not be written */
  uint64_t server_timed;   /* replies with llama.cpp's "timings" (prompt_ms, predicted_ms) */
  uint64_t server_us;      /* their server time (prompt + generation), microseconds */
  uint64_t latency_timed_us; /* the same replies' latency as tally saw it: the rest is queueing */
} tl_openai_stats;
/* The first cache write failure (borrowed; NULL when none). */
const char *tl_openai_cache_error(const tl_openai *o);
void tl_openai_stats_get(const tl_openai *o, tl_openai_stats *st);

/* One change of an endpoint's limit: seconds since open, endpoint index, the new limit
 * (requests in flight), and why: 'i' initial, 'g' grown, 's' shrunk after a 429, 'p' capped by
 * the server's slots (llama.cpp's /props). */
typedef struct {
  double t;
  int endpoint;
  int limit;
  char why;
} tl_openai_change;
const tl_openai_change *tl_openai_history(const tl_openai *o, size_t *n);
/* The requests the engine would hold in flight now: the sum of its endpoints' current limits
 * (they adapt between "concurrency".min and .max). */
size_t tl_openai_capacity(const tl_openai *o);
int tl_openai_n_endpoints(const tl_openai *o);
const char *tl_openai_endpoint(const tl_openai *o, int i); /* its base URL */
/* What endpoint i said of itself at the health wait: the model ids GET /models listed (", "
 * joined; NULL when unknown) and llama.cpp's total_slots from GET /props (0 when unknown), which
 * caps its limit on requests in flight. */
const char *tl_openai_served(const tl_openai *o, int i);
int tl_openai_slots(const tl_openai *o, int i);

#endif
