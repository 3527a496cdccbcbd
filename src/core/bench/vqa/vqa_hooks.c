/* vqa_hooks.c - the VQA module's hooks around the run (tally/bench_vt.h): the rows of the LAVE
 * release as an answer format, the lave-rating parser of `tally parse` (lave.h tl_lave_rate),
 * and the defaults of `tally compare`. */
#include <stdio.h>

#include "lave.h"
#include "tally/jsonl.h"

/* ---- a row of the LAVE release (dataset, model, qid, ..., prediction): the id is
 * "<dataset>:<qid>", the reply "prediction"; a line with an "id" is never one ---- */

static int release_claims(const cJSON *o) {
  return !cJSON_GetObjectItemCaseSensitive(o, "id") && cJSON_GetObjectItemCaseSensitive(o, "qid") &&
         cJSON_GetObjectItemCaseSensitive(o, "prediction");
}

static int release_read(const cJSON *o, tl_answer_line *out, char *idbuf, size_t nid, char *msg, size_t msz) {
  const cJSON *ds = cJSON_GetObjectItemCaseSensitive(o, "dataset");
  const cJSON *qid = cJSON_GetObjectItemCaseSensitive(o, "qid");
  if (!cJSON_IsString(ds) || !*ds->valuestring)
    return snprintf(msg, msz, "a LAVE-release row (it has 'qid' and 'prediction') needs 'dataset', a non-empty string"), -1;
  int w = -1;
  if (tl_json_is_int(qid, -9007199254740992.0, 9007199254740992.0))
    w = snprintf(idbuf, nid, "%s:%lld", ds->valuestring, (long long)qid->valuedouble);
  else if (cJSON_IsString(qid) && *qid->valuestring)
    w = snprintf(idbuf, nid, "%s:%s", ds->valuestring, qid->valuestring);
  if (w < 0 || (size_t)w >= nid)
    return snprintf(msg, msz, "field 'qid' is not an integer or a non-empty string (with 'dataset', under %zu bytes)",
                    nid), -1;
  out->resp = cJSON_GetObjectItemCaseSensitive(o, "prediction");
  out->prompt = NULL;
  out->id = idbuf;
  return 0;
}

static const tl_answer_format RELEASE = {
    .name = "lave-release",
    .claims = release_claims,
    .read = release_read,
};
const tl_answer_format *const tl_vqa_formats[] = {&RELEASE, NULL};

/* ---- `tally parse --parser lave-rating [--lave-compat]` ----
 * input {"response": "<judge output>"|null}; output {"answer", "rating", "score", "status",
 * "rule"}: "answer" the rating as read from the reply (null for the compat fallback), "rating"
 * and "score" set when the status is ok. */

static tl_status lave_open(const tl_named_parser *np, int flag, void **state, tl_err *err) {
  *state = NULL; /* tl_lave_rate needs no parser object */
  return TL_OK;
}

static tl_status lave_run(const tl_named_parser *np, void *state, int flag, const tl_parse_line *line, cJSON *w,
                          tl_err *err) {
  tl_lave_rating lr;
  tl_status st = tl_lave_rate(line->response, flag, &lr);
  if (st != TL_OK) return st;
  if (lr.answer) cJSON_AddStringToObject(w, "answer", lr.answer);
  else cJSON_AddNullToObject(w, "answer");
  if (lr.status == TL_PS_OK) {
    cJSON_AddNumberToObject(w, "rating", lr.rating);
    cJSON_AddNumberToObject(w, "score", lr.score); /* 0, 0.5 or 1: printed exactly */
  } else {
    cJSON_AddNullToObject(w, "rating");
    cJSON_AddNullToObject(w, "score");
  }
  cJSON_AddStringToObject(w, "status", tl_pstatus_name(lr.status));
  cJSON_AddStringToObject(w, "rule", lr.rule);
  return TL_OK;
}

static const tl_named_parser P_LAVE = {
    .name = "lave-rating", .flag = "lave-compat", .open = lave_open, .run = lave_run};
static const tl_named_parser *const PARSERS[] = {&P_LAVE, NULL};

const tl_parser_set tl_vqa_parser_set = {
    .list = PARSERS,
    .kind = "LAVE judge ratings, 1-3",
    .brief = "LAVE",
    .help = "  lave-rating (the last 'rating=N', else a final 1/2/3; docs/LAVE.md):\n"
            "    input lines:  {\"response\": \"<judge output>\"|null} (as for the judge ratings above)\n"
            "    output lines: {\"answer\": \"3\"|null, \"rating\": 3|null, \"score\": 1|0.5|0|null, \"status\": \"...\", \"rule\": \"...\"}\n"
            "    --lave-compat: the reference's fallback: a reply with no rating is rated 2 (score 0.5),\n"
            "                   status ok, rule compat_fallback_2 (a null response stays missing)\n",
};

/* ---- `tally compare` ---- */
const tl_compare_defaults tl_vqa_compare = {.metric = "vqa_accuracy", .by = "dataset", .status = "vqa_status"};
