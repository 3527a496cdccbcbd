/* evidence.c - the engine's evidence of each reply as item-table columns (tally/run.h). */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tally/run.h"

/* The columns, in order. `key` is the field of the reply's meta object (tl_eng_reply.meta). */
static const struct {
  const char *name, *key;
  tl_col_type type;
  const char *doc;
} COLS[] = {
    {"engine_error", NULL, TL_COL_TEXT, "why the engine gave up on this reply (\"\" when it did not): retries spent, or the server refused the request"},
    {"finish_reason", "finish_reason", TL_COL_STR, "the server's finish_reason: stop, length, ... (\"\" when none)"},
    {"prompt_tokens", "prompt_tokens", TL_COL_I64, "usage.prompt_tokens the server reported (-1 when it reported none)"},
    {"completion_tokens", "completion_tokens", TL_COL_I64, "usage.completion_tokens the server reported (-1 when none)"},
    {"latency_ms", "latency_ms", TL_COL_F64, "milliseconds from the first send to the reply, retries included (NaN: cached, or none)"},
    {"attempts", "attempts", TL_COL_I64, "requests sent for this reply (0: served from the cache)"},
    {"cached", "cached", TL_COL_I64, "1 when the reply came from the cache (--cache), 0 when it was asked"},
    {"served_model", "model", TL_COL_STR, "the model name the server reported"},
    {"request_id", "request_id", TL_COL_STR, "the server's request id (x-request-id header, else the reply's id)"},
    {"endpoint", "endpoint", TL_COL_STR, "the endpoint that answered"},
    {"raw_response", "raw", TL_COL_TEXT, "the reply as received when it differs from the scored text (reasoning, a <think> block); \"\" when the same"},
};
#define NCOLS (sizeof COLS / sizeof COLS[0])

/* The value of string column c of stage s of row r ("" when none); m is the parsed meta. */
static const char *str_val(const tl_row *r, int s, size_t c, const cJSON *m) {
  if (!COLS[c].key) return r->error[s] ? r->error[s] : "";
  const cJSON *v = m ? cJSON_GetObjectItemCaseSensitive(m, COLS[c].key) : NULL;
  return cJSON_IsString(v) ? v->valuestring : "";
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
      cJSON *m = r->meta[s] ? cJSON_Parse(r->meta[s]) : NULL;
      for (size_t c = 0; c < NCOLS; c++) {
        const int k = first + (int)c;
        const cJSON *v = COLS[c].key && m ? cJSON_GetObjectItemCaseSensitive(m, COLS[c].key) : NULL;
        tl_status st = TL_OK;
        switch (COLS[c].type) {
        case TL_COL_STR:
        case TL_COL_TEXT:
          if (!COLS[c].key || cJSON_IsString(v)) st = tl_table_set_str(t, i, k, str_val(r, s, c, m));
          break;
        case TL_COL_I64:
          if (cJSON_IsBool(v)) tl_table_set_i64(t, i, k, cJSON_IsTrue(v));
          else if (cJSON_IsNumber(v)) tl_table_set_i64(t, i, k, (int64_t)v->valuedouble);
          else if (strcmp(COLS[c].name, "attempts") && strcmp(COLS[c].name, "cached")) tl_table_set_i64(t, i, k, -1);
          break;
        case TL_COL_F64:
          if (cJSON_IsNumber(v)) tl_table_set_f64(t, i, k, v->valuedouble);
          break;
        }
        if (st) {
          cJSON_Delete(m);
          return st;
        }
      }
      cJSON_Delete(m);
    }
  }
  return TL_OK;
}
