/* se_hooks.c - SpatialEval's hooks around the run (tally/bench_vt.h): the reference evaluator's
 * output as an answer format, the three answer parsers of `tally parse`, and the defaults of
 * `tally compare`. */
#include <stdlib.h>

#include "spatialeval.h"

/* ---- the reference evaluator's output lines: {"id", "answer", "oracle_answer", ..., "prompt"?}
 * ("answer" is the response and "prompt" is kept) ---- */

static int ref_claims(const cJSON *o) {
  return cJSON_GetObjectItemCaseSensitive(o, "oracle_answer") && cJSON_GetObjectItemCaseSensitive(o, "id");
}

static int ref_read(const cJSON *o, tl_answer_line *out, char *idbuf, size_t nid, char *msg, size_t msz) {
  out->resp = cJSON_GetObjectItemCaseSensitive(o, "answer");
  out->prompt = cJSON_GetObjectItemCaseSensitive(o, "prompt");
  out->id = NULL; /* the line's "id" */
  return 0;
}

static const tl_answer_format REFERENCE = {
    .name = "spatialeval-reference",
    .claims = ref_claims,
    .read = ref_read,
};
const tl_answer_format *const tl_se_formats[] = {&REFERENCE, NULL};

/* ---- `tally parse --parser spatialeval-<mode>` ----
 * input {"item": {...benchmark row...}, "response", "model", "prompt"?}; output {"answer",
 * "correct", "status", "rule"}. */

typedef struct {
  tl_se_parser *p;
  tl_parsed pr; /* reused from line to line */
} se_state;

static tl_status se_open(const tl_named_parser *np, int flag, void **state, tl_err *err) {
  se_state *s = calloc(1, sizeof *s);
  if (!s) return tl_err_set(err, TL_ENOMEM, "out of memory");
  tl_parsed_init(&s->pr);
  if (!(s->p = tl_se_parser_new((tl_se_mode)np->arg, err))) {
    free(s);
    return TL_EINTERNAL; /* err says why */
  }
  *state = s;
  return TL_OK;
}

static void se_close(void *state) {
  se_state *s = state;
  if (!s) return;
  tl_parsed_release(&s->pr);
  tl_se_parser_free(s->p);
  free(s);
}

static tl_status se_run(const tl_named_parser *np, void *state, int flag, const tl_parse_line *line, cJSON *w,
                        tl_err *err) {
  se_state *s = state;
  tl_se_item it;
  tl_se_item_init(&it);
  tl_status st = tl_se_item_from_json(line->item, &it, err);
  if (st != TL_OK) {
    tl_se_item_release(&it);
    return TL_EINPUT; /* err says what is wrong with the item */
  }
  st = tl_se_parse(s->p, &it, line->prompt, line->response, line->model, &s->pr);
  tl_se_item_release(&it);
  if (st != TL_OK) return st;
  if (s->pr.answer) cJSON_AddStringToObject(w, "answer", s->pr.answer);
  else cJSON_AddNullToObject(w, "answer");
  cJSON_AddNumberToObject(w, "correct", s->pr.correct);
  cJSON_AddStringToObject(w, "status", tl_pstatus_name(s->pr.status));
  cJSON_AddStringToObject(w, "rule", s->pr.rule);
  return TL_OK;
}

#define SE_PARSER(var, nm, mode)                                                                                      \
  static const tl_named_parser var = {                                                                              \
      .name = nm, .arg = mode, .needs_item = 1, .open = se_open, .close = se_close, .run = se_run}
SE_PARSER(P_STRICT, "spatialeval-strict", TL_SE_STRICT);
SE_PARSER(P_PR3, "spatialeval-pr3", TL_SE_PR3);
SE_PARSER(P_LEGACY, "spatialeval-legacy", TL_SE_LEGACY);
static const tl_named_parser *const PARSERS[] = {&P_STRICT, &P_PR3, &P_LEGACY, NULL};

const tl_parser_set tl_se_parser_set = {
    .list = PARSERS,
    .kind = "answer parsers",
    .brief = NULL,
    .help = "  spatialeval-*:\n"
            "    input lines:  {\"item\": {...benchmark row...}, \"response\": \"...\", \"model\": \"...\", \"prompt\": \"...\"?}\n"
            "    output lines: {\"answer\": ..., \"correct\": 0|1, \"status\": \"...\", \"rule\": \"...\"}\n",
};

/* ---- `tally compare` ---- */
const tl_compare_defaults tl_se_compare = {.metric = "correct_strict", .by = "task", .status = "status_strict"};
