/* replay.c - the replay engine (see replay.h). Replies are indexed by the key
 * "bench \x1f stage \x1f model \x1f variant \x1f seed \x1f id \x1f sub"; a request is answered
 * at submit time and queued. The engine names no benchmark: what a benchmark allows (its
 * variant names) comes with each source. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "tally/jsonl.h"
#include "tally/strmap.h"

typedef struct {
  /* bench, model and variant point into the engine's string pool (one copy per distinct
   * string, not one per line); the rest is owned by the record. */
  const char *bench, *model, *variant;
  char *id, *response, *prompt, *source;
  int seed, stage, has_response;
  uint32_t sub;
} answer;

struct tl_replay {
  tl_engine base;
  answer *a;
  size_t n, cap;
  tl_strmap index;
  tl_strmap pool;      /* interned bench, model and variant names (the map owns the copies) */
  tl_buf kbuf;         /* reused buffer for index keys */
  tl_eng_reply *queue; /* FIFO of replies */
  double *ready;       /* [qcap] time each reply becomes ready (CLOCK_MONOTONIC seconds) */
  size_t qhead, qlen, qcap;
  int latency_ms;
  size_t served;
};

static const char *nz(const char *s) { return s ? s : ""; }

/* The index key of a unit stage, in r->kbuf (valid until the next call). NULL when out of
 * memory. */
static const char *make_key(tl_replay *r, const char *bench, int stage, const char *model,
                            const char *variant, int seed, const char *id, uint32_t sub) {
  tl_buf_reset(&r->kbuf);
  if (tl_buf_printf(&r->kbuf, "%s\x1f%d\x1f%s\x1f%s\x1f%d\x1f%s\x1f%u", nz(bench), stage, nz(model),
                    nz(variant), seed, nz(id), (unsigned)sub) != TL_OK)
    return NULL;
  return r->kbuf.data;
}

/* The pool's copy of s (stable while the engine lives), NULL when out of memory. */
static const char *intern(tl_replay *r, const char *s) {
  const char *k = tl_strmap_stored_key(&r->pool, s);
  if (k) return k;
  if (tl_strmap_put(&r->pool, s, 0, NULL, NULL) != TL_OK) return NULL;
  return tl_strmap_stored_key(&r->pool, s);
}

static void answer_free(answer *a) {
  free(a->id);
  free(a->response);
  free(a->prompt);
  free(a->source);
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
  const tl_unit_key *k = &req->key;
  const char *key = make_key(r, k->bench, k->stage, k->model, k->variant, k->seed, k->id, k->sub);
  if (!key) return TL_ENOMEM;
  size_t i;
  if (tl_strmap_get(&r->index, key, &i)) {
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
  for (size_t i = 0; i < r->n; i++) answer_free(&r->a[i]);
  for (size_t i = 0; i < r->qlen; i++) tl_eng_reply_release(&r->queue[r->qhead + i]);
  free(r->queue);
  free(r->ready);
  free(r->a);
  tl_strmap_release(&r->index);
  tl_strmap_release(&r->pool);
  tl_buf_release(&r->kbuf);
  free(r);
}

static const tl_engine_vtbl VT = {"replay", submit, poll_, in_flight, free_};

/* The message for a "prompt_variant" that is none of `names` (NULL-terminated, not NULL):
 * `field 'prompt_variant' is not "a"`, `... "a" or "b"`, `... "a", "b" or "c"`. */
static void variant_msg(const char *const *names, char *msg, size_t msz) {
  size_t n = 0;
  while (names[n]) n++;
  if (n == 0) {
    snprintf(msg, msz, "field 'prompt_variant' is given but the benchmark has no prompt variants");
    return;
  }
  int len = snprintf(msg, msz, "field 'prompt_variant' is not");
  for (size_t i = 0; i < n && len >= 0 && (size_t)len < msz; i++) {
    const char *sep = i == 0 ? " " : i + 1 == n ? " or " : ", ";
    int w = snprintf(msg + len, msz - (size_t)len, "%s\"%s\"", sep, names[i]);
    if (w < 0) break;
    len += w;
  }
}

/* Validates one line into `a` (the caller sets its pooled strings). Returns 0 ok, else fills
 * kind/msg. *model_out and *variant_out: the line's names or the source's defaults, borrowed
 * from o or from s. */
static int read_answer(const cJSON *o, const tl_replay_source *s, answer *a, const char **model_out,
                       const char **variant_out, tl_in_kind *kind, char *msg, size_t msz) {
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
  const cJSON *turn = cJSON_GetObjectItemCaseSensitive(o, "turn");
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
  const char *variant = s->variant;
  if (var) {
    if (s->variants) {
      variant = NULL;
      if (cJSON_IsString(var))
        for (const char *const *v = s->variants; *v; v++)
          if (strcmp(*v, var->valuestring) == 0) variant = *v;
      if (!variant) return variant_msg(s->variants, msg, msz), -1;
    } else {
      if (!cJSON_IsString(var) || !*var->valuestring)
        return snprintf(msg, msz, "field 'prompt_variant' is not a non-empty string"), -1;
      variant = var->valuestring;
    }
  }
  if (turn && !tl_json_is_int(turn, 0, UINT32_MAX))
    return snprintf(msg, msz, "field 'turn' is not an integer >= 0"), -1;
  if (prompt && !cJSON_IsString(prompt)) prompt = NULL;
  a->id = tl_strdup(id->valuestring);
  *model_out = model ? model->valuestring : s->model;
  *variant_out = variant;
  a->has_response = cJSON_IsString(resp);
  a->response = a->has_response ? tl_strdup(resp->valuestring) : NULL;
  a->prompt = prompt ? tl_strdup(prompt->valuestring) : NULL;
  a->seed = seed ? (int)seed->valuedouble : s->seed;
  a->sub = turn ? (uint32_t)turn->valuedouble : 0;
  a->stage = s->stage;
  return 0;
}

/* Reads one source into r. */
static tl_status load_source(tl_replay *r, const tl_replay_source *src, size_t max_line,
                             tl_inlog *log, tl_err *err) {
  if (!src->bench || !src->variant)
    return tl_err_set(err, TL_EINTERNAL, "replay source '%s' names no benchmark or default variant",
                      nz(src->path));
  tl_jsonl jl;
  tl_status st = tl_jsonl_open(&jl, src->path, max_line, err);
  if (st != TL_OK) return st;
  const char *bench = intern(r, src->bench);
  if (!bench) st = tl_err_set(err, TL_ENOMEM, "out of memory");
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
    const char *model = NULL, *variant = NULL;
    int bad = read_answer(o, src, &a, &model, &variant, &kind, msg, sizeof msg);
    if (!bad) {
      /* intern while o (which model may point into) is alive */
      a.bench = bench;
      a.model = intern(r, model);
      a.variant = intern(r, variant);
    }
    cJSON_Delete(o);
    if (bad) {
      if (tl_inlog_report(log, kind, jl.path, jl.line_no, "%s", msg)) st = TL_EINPUT;
      continue;
    }
    tl_buf sb;
    tl_buf_init(&sb);
    tl_buf_printf(&sb, "%s:%ld", jl.path, jl.line_no);
    a.source = tl_buf_detach(&sb);
    const char *key = NULL;
    if (a.id && a.model && a.variant)
      key = make_key(r, a.bench, a.stage, a.model, a.variant, a.seed, a.id, a.sub);
    bool inserted = false;
    size_t prev = 0;
    if (!key || !a.id || !a.source || (a.has_response && !a.response) ||
        tl_strmap_put(&r->index, key, r->n, &inserted, &prev) != TL_OK) {
      st = tl_err_set(err, TL_ENOMEM, "out of memory");
      answer_free(&a);
      break;
    }
    if (!inserted) {
      char turn[32] = "";
      if (a.sub) snprintf(turn, sizeof turn, ", turn %u", (unsigned)a.sub);
      if (tl_inlog_report(log, TL_IN_DUPLICATE, jl.path, jl.line_no,
                          "duplicate %s for id '%s', model '%s', seed %d, variant %s%s (the one at %s is kept)",
                          a.stage == 0 ? "answer" : "judgment", a.id, a.model, a.seed, a.variant, turn,
                          r->a[prev].source))
        st = TL_EINPUT;
      answer_free(&a);
      continue;
    }
    if (r->n == r->cap) {
      size_t cap = r->cap ? r->cap * 2 : 1024;
      answer *p = realloc(r->a, cap * sizeof *p);
      if (!p) {
        st = tl_err_set(err, TL_ENOMEM, "out of memory");
        answer_free(&a);
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
  return st;
}

tl_status tl_replay_open(const tl_replay_source *src, int nsrc, size_t max_line, tl_inlog *log,
                         tl_replay **out, tl_err *err) {
  *out = NULL;
  tl_replay *r = calloc(1, sizeof *r);
  if (!r) return tl_err_set(err, TL_ENOMEM, "out of memory");
  r->base.vt = &VT;
  tl_strmap_init(&r->index);
  tl_strmap_init(&r->pool);
  tl_buf_init(&r->kbuf);
  tl_status st = TL_OK;
  for (int f = 0; f < nsrc && st == TL_OK; f++) st = load_source(r, &src[f], max_line, log, err);
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

void tl_replay_key(const tl_replay *r, size_t i, tl_unit_key *key, const char **source) {
  const answer *a = &r->a[i];
  if (key) {
    key->bench = a->bench;
    key->id = a->id;
    key->model = a->model;
    key->variant = a->variant;
    key->seed = a->seed;
    key->sub = a->sub;
    key->stage = a->stage;
  }
  if (source) *source = a->source;
}
