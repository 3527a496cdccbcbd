/* evidence.c - the engine's evidence of each reply as item-table columns (tally/run.h). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tally/run.h"

/* The columns, in order. `key` is the field of the reply's meta object (tl_eng_reply.meta);
 * `off` where tl_evidence holds it (a const char * for the string columns, a double for the
 * numeric ones). */
static const struct {
  const char *name, *key;
  tl_col_type type;
  size_t off;
  const char *doc;
} COLS[] = {
    {"engine_error", NULL, TL_COL_TEXT, 0, "why the engine gave up on this reply (\"\" when it did not): retries spent, or the server refused the request"},
    {"finish_reason", "finish_reason", TL_COL_STR, offsetof(tl_evidence, finish_reason), "the server's finish_reason: stop, length, ... (\"\" when none)"},
    {"prompt_tokens", "prompt_tokens", TL_COL_I64, offsetof(tl_evidence, prompt_tokens), "usage.prompt_tokens the server reported (-1 when it reported none)"},
    {"completion_tokens", "completion_tokens", TL_COL_I64, offsetof(tl_evidence, completion_tokens), "usage.completion_tokens the server reported (-1 when none)"},
    {"latency_ms", "latency_ms", TL_COL_F64, offsetof(tl_evidence, latency_ms), "milliseconds from the first send to the reply, retries included (NaN: cached, or none)"},
    {"attempts", "attempts", TL_COL_I64, offsetof(tl_evidence, attempts), "requests sent for this reply (0: served from the cache)"},
    {"cached", "cached", TL_COL_I64, offsetof(tl_evidence, cached), "1 when the reply came from the cache (--cache), 0 when it was asked"},
    {"served_model", "model", TL_COL_STR, offsetof(tl_evidence, served_model), "the model name the server reported"},
    {"request_id", "request_id", TL_COL_STR, offsetof(tl_evidence, request_id), "the server's request id (x-request-id header, else the reply's id)"},
    {"endpoint", "endpoint", TL_COL_STR, offsetof(tl_evidence, endpoint), "the endpoint that answered"},
    {"raw_response", "raw", TL_COL_TEXT, offsetof(tl_evidence, raw), "the reply as received when it differs from the scored text (reasoning, a <think> block); \"\" when the same"},
};
#define NCOLS (sizeof COLS / sizeof COLS[0])

tl_evidence *tl_evidence_new(const char *finish_reason, const char *served_model, const char *request_id,
                             const char *endpoint, const char *raw) {
  const char *in[5] = {finish_reason, served_model, request_id, endpoint, raw};
  size_t len[5], total = sizeof(tl_evidence);
  for (int i = 0; i < 5; i++) total += in[i] ? (len[i] = strlen(in[i])) + 1 : 0;
  tl_evidence *e = malloc(total);
  if (!e) return NULL;
  char *p = (char *)(e + 1);
  const char **out[5] = {&e->finish_reason, &e->served_model, &e->request_id, &e->endpoint, &e->raw};
  for (int i = 0; i < 5; i++) {
    *out[i] = NULL;
    if (!in[i]) continue;
    memcpy(p, in[i], len[i] + 1);
    *out[i] = p;
    p += len[i] + 1;
  }
  e->prompt_tokens = e->completion_tokens = e->latency_ms = e->attempts = e->cached = NAN;
  return e;
}

/* The evidence fields of a parsed meta object m (strings point into m): a string where the
 * meta has one; a number where it has one, or for the integer columns a boolean (1 or 0). */
static void from_meta(const cJSON *m, tl_evidence *e) {
  memset(e, 0, sizeof *e);
  for (size_t c = 1; c < NCOLS; c++) {
    const cJSON *v = m ? cJSON_GetObjectItemCaseSensitive(m, COLS[c].key) : NULL;
    char *at = (char *)e + COLS[c].off;
    if (COLS[c].type == TL_COL_STR || COLS[c].type == TL_COL_TEXT) {
      const char *sv = cJSON_IsString(v) ? v->valuestring : NULL;
      memcpy(at, &sv, sizeof sv);
    } else {
      double d = cJSON_IsNumber(v) ? v->valuedouble
               : COLS[c].type == TL_COL_I64 && cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? 1.0 : 0.0) : NAN;
      memcpy(at, &d, sizeof d);
    }
  }
}

tl_status tl_evidence_cols(tl_table *t, const tl_row *rows, size_t n, unsigned stage_mask) {
  for (int s = 0; s < TL_MAX_STAGES; s++) {
    if (!(stage_mask & (1u << s))) continue;
    int first = -1;
    char name[96], doc[320], pre[16], who[32];
    tl_stage_prefix(s, pre, sizeof pre);
    if (s <= 1) snprintf(who, sizeof who, "%s", s == 0 ? "" : "judge: ");
    else snprintf(who, sizeof who, "judge sample %d: ", s - 1);
    snprintf(name, sizeof name, "%s%s", pre, COLS[0].name);
    first = tl_table_col(t, name); /* a table filled again has the columns already */
    const int add = first < 0;
    for (size_t c = 0; add && c < NCOLS; c++) {
      snprintf(name, sizeof name, "%s%s", pre, COLS[c].name);
      snprintf(doc, sizeof doc, "%s%s", who, COLS[c].doc);
      int k = tl_table_add_col(t, name, COLS[c].type, doc);
      if (k < 0) return TL_ENOMEM;
      if (c == 0) first = k;
    }
    for (size_t i = 0; rows && i < n; i++) {
      const tl_row *r = &rows[i];
      /* the engine's fields, else the meta's */
      cJSON *m = NULL;
      tl_evidence parsed;
      const tl_evidence *e = r->ev[s];
      if (!e) {
        m = r->meta[s] ? cJSON_Parse(r->meta[s]) : NULL;
        from_meta(m, &parsed);
        e = &parsed;
      }
      tl_status st = tl_table_set_str(t, i, first, r->error[s] ? r->error[s] : "");
      for (size_t c = 1; c < NCOLS && !st; c++) {
        const int k = first + (int)c;
        const char *at = (const char *)e + COLS[c].off;
        if (COLS[c].type == TL_COL_STR || COLS[c].type == TL_COL_TEXT) {
          const char *sv;
          memcpy(&sv, at, sizeof sv);
          if (sv) st = tl_table_set_str(t, i, k, sv);
        } else {
          double d;
          memcpy(&d, at, sizeof d);
          if (COLS[c].type == TL_COL_F64) {
            if (!isnan(d)) tl_table_set_f64(t, i, k, d);
          } else if (!isnan(d)) {
            tl_table_set_i64(t, i, k, (int64_t)d);
          } else if (strcmp(COLS[c].name, "attempts") && strcmp(COLS[c].name, "cached")) {
            tl_table_set_i64(t, i, k, -1);
          }
        }
      }
      cJSON_Delete(m);
      if (st) return st;
    }
  }
  return TL_OK;
}
