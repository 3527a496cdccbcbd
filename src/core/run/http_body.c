/* http_body.c - an OpenAI-compatible request body, written as cJSON would write it with sorted
 * keys (see http_body.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tally/http_body.h"
#include "tally/jsonl.h"
#include "tally/jsonw.h"

/* The members each request sets itself, in strcmp order. */
enum { M_MAX_TOKENS, M_MESSAGES, M_MODEL, M_PROMPT, M_SEED, M_TEMPERATURE, M_N };
static const char *const OWN[M_N] = {"max_tokens", "messages", "model", "prompt", "seed", "temperature"};

void tl_http_body_free(tl_http_body_tpl *t) {
  for (int i = 0; i < t->n; i++) {
    free(t->key[i]);
    free(t->val[i]);
  }
  free(t->key);
  free(t->val);
  memset(t, 0, sizeof *t);
}

/* Adds member key with the JSON text v (owned from here, NULL: out of memory). */
static tl_status add(tl_http_body_tpl *t, const char *key, char *v) {
  char *k = tl_strdup(key);
  if (!k || !v) {
    free(k);
    free(v);
    return TL_ENOMEM;
  }
  t->key[t->n] = k;
  t->val[t->n++] = v;
  return TL_OK;
}

static char *num_text(double d) {
  tl_buf b;
  tl_buf_init(&b);
  if (tl_json_num(&b, d)) {
    tl_buf_release(&b);
    return NULL;
  }
  return tl_buf_detach(&b);
}

tl_status tl_http_body_prepare(tl_http_body_tpl *t, const tl_http_cfg *c, const cJSON *extra) {
  memset(t, 0, sizeof *t);
  int cap = 5 + (extra ? cJSON_GetArraySize(extra) : 0);
  t->key = calloc((size_t)cap, sizeof *t->key);
  t->val = calloc((size_t)cap, sizeof *t->val);
  tl_status st = t->key && t->val ? TL_OK : TL_ENOMEM;
  if (!st && !isnan(c->top_p)) st = add(t, "top_p", num_text(c->top_p));
  if (!st && c->n > 0) st = add(t, "n", num_text(c->n));
  if (!st && c->nstop) {
    tl_buf b;
    tl_buf_init(&b);
    tl_status s2 = tl_buf_append(&b, "[", 1);
    for (int i = 0; i < c->nstop; i++) {
      if (i) s2 |= tl_buf_append(&b, ",", 1);
      s2 |= tl_json_cstr(&b, c->stop[i]);
    }
    s2 |= tl_buf_append(&b, "]", 1);
    if (s2) tl_buf_release(&b);
    st = add(t, "stop", s2 ? NULL : tl_buf_detach(&b));
  }
  if (!st && c->logprobs >= 0) st = add(t, "logprobs", tl_strdup(c->logprobs ? "true" : "false"));
  if (!st && c->top_logprobs >= 0) st = add(t, "top_logprobs", num_text(c->top_logprobs));
  for (const cJSON *e = extra ? extra->child : NULL; e && !st; e = e->next) {
    /* the value as cJSON prints it, its objects' keys sorted as the whole body's are */
    cJSON *d = cJSON_Duplicate(e, 1);
    tl_json_sort_keys(d);
    st = add(t, e->string, d ? cJSON_PrintUnformatted(d) : NULL);
    cJSON_Delete(d);
  }
  if (st) {
    tl_http_body_free(t);
    return st;
  }
  /* key order: insertion sort (a handful of members) */
  for (int i = 1; i < t->n; i++)
    for (int j = i; j > 0 && strcmp(t->key[j - 1], t->key[j]) > 0; j--) {
      char *k = t->key[j], *v = t->val[j];
      t->key[j] = t->key[j - 1];
      t->val[j] = t->val[j - 1];
      t->key[j - 1] = k;
      t->val[j - 1] = v;
    }
  for (int m = 0; m < M_N; m++)
    for (int i = 0; i < t->n; i++) t->pos[m] += strcmp(t->key[i], OWN[m]) < 0;
  return TL_OK;
}

static tl_status messages(tl_buf *b, const tl_eng_request *rq, char *const *image_urls) {
  /* the image parts go with the last user message */
  int img_msg = -1;
  for (int i = 0; i < rq->nmsg; i++)
    if (rq->msgs[i].role && !strcmp(rq->msgs[i].role, "user")) img_msg = i;
  tl_status st = tl_buf_append(b, "[", 1);
  for (int i = 0; i < rq->nmsg; i++) {
    const tl_msg *m = &rq->msgs[i];
    st |= tl_buf_append(b, i ? ",{\"content\":" : "{\"content\":", i ? 12 : 11);
    if (i == img_msg && rq->nimages > 0 && image_urls) {
      st |= tl_buf_append(b, "[{\"text\":", 9);
      st |= tl_json_cstr(b, m->content ? m->content : "");
      st |= tl_buf_puts(b, ",\"type\":\"text\"}");
      for (int k = 0; k < rq->nimages; k++) {
        st |= tl_buf_puts(b, ",{\"image_url\":{\"url\":");
        st |= tl_json_cstr(b, image_urls[k]);
        st |= tl_buf_puts(b, "},\"type\":\"image_url\"}");
      }
      st |= tl_buf_append(b, "]", 1);
    } else {
      st |= tl_json_cstr(b, m->content ? m->content : "");
    }
    st |= tl_buf_append(b, ",\"role\":", 8);
    st |= tl_json_cstr(b, m->role ? m->role : "user");
    st |= tl_buf_append(b, "}", 1);
  }
  return st | tl_buf_append(b, "]", 1);
}

static tl_status prompt(tl_buf *b, const tl_eng_request *rq) {
  tl_buf p;
  tl_buf_init(&p);
  tl_status st = TL_OK;
  for (int i = 0; i < rq->nmsg; i++) {
    if (i) st |= tl_buf_append(&p, "\n\n", 2);
    st |= tl_buf_puts(&p, rq->msgs[i].content ? rq->msgs[i].content : "");
  }
  st |= tl_json_str(b, p.data, p.len);
  tl_buf_release(&p);
  return st;
}

tl_status tl_http_body(tl_buf *out, const tl_http_body_tpl *t, const tl_http_cfg *c, const char *model,
                       const tl_eng_request *rq, char *const *image_urls, double *temp) {
  const double tv = !isnan(c->temperature) ? c->temperature : rq->temperature >= 0 ? rq->temperature : 0.0;
  const int mt = c->max_tokens > 0 ? c->max_tokens : rq->max_tokens > 0 ? rq->max_tokens : -1;
  if (temp) *temp = tv;
  /* room for the whole body at once, escapes aside: one allocation for most bodies */
  size_t est = 256 + (model ? strlen(model) : 0);
  for (int i = 0; i < rq->nmsg; i++) est += 32 + (rq->msgs[i].content ? strlen(rq->msgs[i].content) : 0);
  for (int k = 0; image_urls && k < rq->nimages; k++) est += 64 + strlen(image_urls[k]);
  for (int i = 0; i < t->n; i++) est += 4 + strlen(t->key[i]) + strlen(t->val[i]);
  if (tl_buf_reserve(out, est) != TL_OK) return TL_ENOMEM;
  const int sends[M_N] = {mt > 0, !c->completions, 1, c->completions, c->send_seed, 1};
  tl_status st = tl_buf_append(out, "{", 1);
  int first = 1, i = 0;
  for (int m = 0; m <= M_N; m++) {
    const int upto = m < M_N ? t->pos[m] : t->n; /* the constant members before OWN[m] */
    for (; i < upto; i++, first = 0) {
      st |= tl_json_key(out, t->key[i], first);
      st |= tl_buf_puts(out, t->val[i]);
    }
    if (m == M_N || !sends[m]) continue;
    st |= tl_json_key(out, OWN[m], first);
    first = 0;
    switch (m) {
    case M_MAX_TOKENS: st |= tl_json_num(out, mt); break;
    case M_MESSAGES: st |= messages(out, rq, image_urls); break;
    case M_MODEL: st |= tl_json_cstr(out, model ? model : ""); break;
    case M_PROMPT: st |= prompt(out, rq); break;
    case M_SEED: st |= tl_json_num(out, rq->seed); break;
    default: st |= tl_json_num(out, tv); break;
    }
  }
  return st | tl_buf_append(out, "}", 1);
}
