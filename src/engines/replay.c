/* replay.c - the replay engine (see replay.h). Answers are indexed by the key
 * "model \x1f variant \x1f seed \x1f id"; a request is answered at submit time and queued. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "tally/jsonl.h"
#include "spatialeval.h"
#include "tally/strmap.h"

typedef struct {
  char *id, *model, *response, *prompt, *source;
  int seed, variant, has_response;
} answer;

struct tl_replay {
  tl_engine base;
  answer *a;
  size_t n, cap;
  tl_strmap index;
  tl_eng_reply *queue; /* FIFO of replies */
  double *ready;       /* [qcap] time each reply becomes ready (CLOCK_MONOTONIC seconds) */
  size_t qhead, qlen, qcap;
  int latency_ms;
  size_t served;
};

void tl_eng_reply_release(tl_eng_reply *r) {
  free(r->text);
  free(r->prompt);
  free(r->source);
  free(r->error);
  memset(r, 0, sizeof *r);
}

static char *make_key(const char *model, int variant, int seed, const char *id) {
  tl_buf b;
  tl_buf_init(&b);
  if (tl_buf_printf(&b, "%s\x1f%d\x1f%d\x1f%s", model, variant, seed, id) != TL_OK) return NULL;
  return tl_buf_detach(&b);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tl_replay_set_latency(tl_replay *r, int ms) { r->latency_ms = ms; }

static tl_status submit(tl_engine *e, const tl_eng_request *req) {
  tl_replay *r = (tl_replay *)e;
  if (r->qhead + r->qlen == r->qcap) {
    if (r->qhead) {
      memmove(r->queue, r->queue + r->qhead, r->qlen * sizeof *r->queue);
      memmove(r->ready, r->ready + r->qhead, r->qlen * sizeof *r->ready);
      r->qhead = 0;
    } else {
      size_t cap = r->qcap ? r->qcap * 2 : 256;
      tl_eng_reply *q = realloc(r->queue, cap * sizeof *q);
      if (!q) return TL_ENOMEM;
      r->queue = q;
      double *rd = realloc(r->ready, cap * sizeof *rd);
      if (!rd) return TL_ENOMEM;
      r->ready = rd;
      r->qcap = cap;
    }
  }
  r->ready[r->qhead + r->qlen] = r->latency_ms ? now_s() + 1e-3 * r->latency_ms : 0;
  tl_eng_reply *out = &r->queue[r->qhead + r->qlen];
  memset(out, 0, sizeof *out);
  out->tag = req->tag;
  char *key = make_key(req->model, req->variant, req->seed, req->id);
  if (!key) return TL_ENOMEM;
  size_t i;
  int found = tl_strmap_get(&r->index, key, &i);
  free(key);
  if (found) {
    const answer *a = &r->a[i];
    out->source = tl_strdup(a->source);
    if (a->has_response) out->text = tl_strdup(a->response);
    else out->error = tl_strdup("the answer file records no response (null)");
    if (a->prompt) out->prompt = tl_strdup(a->prompt);
  } else {
    out->error = tl_strdup("no answer in the replay files");
  }
  r->qlen++;
  r->served++;
  return TL_OK;
}

static int poll_(tl_engine *e, tl_eng_reply *out, int max, int timeout_ms) {
  tl_replay *r = (tl_replay *)e;
  int k = 0;
  if (r->latency_ms && r->qlen) {
    /* wait (at most timeout_ms) for the oldest request to become ready */
    double wait = r->ready[r->qhead] - now_s();
    if (wait > 1e-3 * timeout_ms) wait = 1e-3 * timeout_ms;
    if (wait > 0) {
      struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
      nanosleep(&ts, NULL);
    }
    double t = now_s();
    while (k < max && r->qlen && r->ready[r->qhead] <= t) {
      out[k++] = r->queue[r->qhead++];
      r->qlen--;
    }
    if (!r->qlen) r->qhead = 0;
    return k;
  }
  while (k < max && r->qlen) {
    out[k++] = r->queue[r->qhead++];
    r->qlen--;
  }
  if (!r->qlen) r->qhead = 0;
  return k;
}

static size_t in_flight(const tl_engine *e) { return ((const tl_replay *)e)->qlen; }

static void free_(tl_engine *e) {
  tl_replay *r = (tl_replay *)e;
  if (!r) return;
  for (size_t i = 0; i < r->n; i++) {
    free(r->a[i].id);
    free(r->a[i].model);
    free(r->a[i].response);
    free(r->a[i].prompt);
    free(r->a[i].source);
  }
  for (size_t i = 0; i < r->qlen; i++) tl_eng_reply_release(&r->queue[r->qhead + i]);
  free(r->queue);
  free(r->ready);
  free(r->a);
  tl_strmap_release(&r->index);
  free(r);
}

static const tl_engine_vtbl VT = {"replay", submit, poll_, in_flight, free_};

/* Validates one line into `a`. Returns 0 ok, else fills kind/msg. */
static int read_answer(const cJSON *o, const tl_replay_source *s, answer *a, tl_in_kind *kind,
                       char *msg, size_t msz) {
  memset(a, 0, sizeof *a);
  if (!cJSON_IsObject(o)) {
    *kind = TL_IN_BAD_FIELD;
    snprintf(msg, msz, "answer line is not a JSON object");
    return -1;
  }
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
  const cJSON *resp = cJSON_GetObjectItemCaseSensitive(o, "response");
  const cJSON *prompt = NULL;
  if (!resp && cJSON_GetObjectItemCaseSensitive(o, "oracle_answer")) {
    resp = cJSON_GetObjectItemCaseSensitive(o, "answer"); /* reference evaluator output */
    prompt = cJSON_GetObjectItemCaseSensitive(o, "prompt");
  }
  const cJSON *model = cJSON_GetObjectItemCaseSensitive(o, "model");
  const cJSON *seed = cJSON_GetObjectItemCaseSensitive(o, "seed");
  const cJSON *var = cJSON_GetObjectItemCaseSensitive(o, "prompt_variant");
  *kind = TL_IN_MISSING_FIELD;
  if (!id) return snprintf(msg, msz, "missing field 'id'"), -1;
  if (!resp) return snprintf(msg, msz, "missing field 'response'"), -1;
  if (!model && !s->model)
    return snprintf(msg, msz, "missing field 'model' (and the job gives no default model for this file)"), -1;
  *kind = TL_IN_BAD_FIELD;
  if (!cJSON_IsString(id) || !*id->valuestring) return snprintf(msg, msz, "field 'id' is not a non-empty string"), -1;
  if (!cJSON_IsString(resp) && !cJSON_IsNull(resp))
    return snprintf(msg, msz, "field 'response' is not a string or null"), -1;
  if (model && (!cJSON_IsString(model) || !*model->valuestring))
    return snprintf(msg, msz, "field 'model' is not a non-empty string"), -1;
  if (seed && !tl_json_is_int(seed, INT_MIN, INT_MAX))
    return snprintf(msg, msz, "field 'seed' is not an integer"), -1;
  int variant = s->variant;
  if (var) {
    variant = cJSON_IsString(var) ? tl_se_prompt_from_name(var->valuestring) : -1;
    if (variant < 0) return snprintf(msg, msz, "field 'prompt_variant' is not \"reason\" or \"letter\""), -1;
  }
  if (prompt && !cJSON_IsString(prompt)) prompt = NULL;
  a->id = tl_strdup(id->valuestring);
  a->model = tl_strdup(model ? model->valuestring : s->model);
  a->has_response = cJSON_IsString(resp);
  a->response = a->has_response ? tl_strdup(resp->valuestring) : NULL;
  a->prompt = prompt ? tl_strdup(prompt->valuestring) : NULL;
  a->seed = seed ? (int)seed->valuedouble : s->seed;
  a->variant = variant;
  return 0;
}

tl_status tl_replay_open(const tl_replay_source *src, int nsrc, size_t max_line, tl_inlog *log,
                         tl_replay **out, tl_err *err) {
  *out = NULL;
  tl_replay *r = calloc(1, sizeof *r);
  if (!r) return tl_err_set(err, TL_ENOMEM, "out of memory");
  r->base.vt = &VT;
  tl_strmap_init(&r->index);
  tl_status st = TL_OK;
  for (int f = 0; f < nsrc && st == TL_OK; f++) {
    tl_jsonl jl;
    if ((st = tl_jsonl_open(&jl, src[f].path, max_line, err)) != TL_OK) break;
    cJSON *o;
    tl_jl_result res;
    tl_err e;
    while (st == TL_OK && (res = tl_jsonl_next(&jl, &o, &e)) != TL_JL_EOF) {
      if (res == TL_JL_IOERR) {
        st = tl_err_set(err, TL_EIO, "%s", e.msg);
        break;
      }
      if (res == TL_JL_BAD) {
        if (tl_inlog_report_bad_line(log, &jl)) st = TL_EINPUT;
        continue;
      }
      answer a;
      tl_in_kind kind;
      char msg[512];
      int bad = read_answer(o, &src[f], &a, &kind, msg, sizeof msg);
      cJSON_Delete(o);
      if (bad) {
        if (tl_inlog_report(log, kind, jl.path, jl.line_no, "%s", msg)) st = TL_EINPUT;
        continue;
      }
      tl_buf sb;
      tl_buf_init(&sb);
      tl_buf_printf(&sb, "%s:%ld", jl.path, jl.line_no);
      a.source = tl_buf_detach(&sb);
      char *key = make_key(a.model, a.variant, a.seed, a.id);
      bool inserted = false;
      size_t prev = 0;
      if (!key || !a.id || !a.model || !a.source ||
          tl_strmap_put(&r->index, key, r->n, &inserted, &prev) != TL_OK) {
        free(key);
        st = tl_err_set(err, TL_ENOMEM, "out of memory");
        free(a.id); free(a.model); free(a.response); free(a.prompt); free(a.source);
        break;
      }
      free(key);
      if (!inserted) {
        if (tl_inlog_report(log, TL_IN_DUPLICATE, jl.path, jl.line_no,
                            "duplicate answer for id '%s', model '%s', seed %d, variant %s (the one at %s is kept)",
                            a.id, a.model, a.seed, tl_se_prompt_name((tl_se_prompt_kind)a.variant),
                            r->a[prev].source))
          st = TL_EINPUT;
        free(a.id); free(a.model); free(a.response); free(a.prompt); free(a.source);
        continue;
      }
      if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 1024;
        answer *p = realloc(r->a, cap * sizeof *p);
        if (!p) {
          st = tl_err_set(err, TL_ENOMEM, "out of memory");
          free(a.id); free(a.model); free(a.response); free(a.prompt); free(a.source);
          break;
        }
        r->a = p;
        r->cap = cap;
      }
      r->a[r->n++] = a;
    }
    if (st == TL_OK && jl.n_records == 0 && jl.n_bad == 0)
      if (tl_inlog_report(log, TL_IN_EMPTY_FILE, jl.path, 0, "no answers in this file")) st = TL_EINPUT;
    tl_jsonl_close(&jl);
  }
  if (st != TL_OK) {
    free_(&r->base);
    return st;
  }
  *out = r;
  return TL_OK;
}

tl_engine *tl_replay_engine(tl_replay *r) { return &r->base; }
size_t tl_replay_count(const tl_replay *r) { return r->n; }
size_t tl_replay_served(const tl_replay *r) { return r->served; }

void tl_replay_key(const tl_replay *r, size_t i, const char **id, const char **model, int *seed,
                   int *variant, const char **source) {
  const answer *a = &r->a[i];
  if (id) *id = a->id;
  if (model) *model = a->model;
  if (seed) *seed = a->seed;
  if (variant) *variant = a->variant;
  if (source) *source = a->source;
}
