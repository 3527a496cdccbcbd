/* mcq_hooks.c - the multiple-choice module's hooks around the run (tally/bench_vt.h): log-likelihood
 * answer lines as an answer format, the named parsers of `tally parse`, and compare's defaults. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcq.h"

/* ---- answer format "mcq-loglik": {"id", "model", "seed"?, "loglik": [one number per choice]}
 * without "response" (lm-eval's log-likelihood multiple choice; the import reader writes them).
 * The replay engine takes a reply text, so the numbers become one: TL_MCQ_LOGLIK_PREFIX and
 * the JSON array (%.17g: the doubles round-trip), added to the parsed line as the member
 * "tally_loglik_text" that the reply then points at (the line is the replay engine's, parsed
 * for this call and freed after it; its text and checksum are untouched). The numbers stay the
 * evidence: the item table's response column holds them. ---- */

static int ll_claims(const cJSON *o) {
  return cJSON_GetObjectItemCaseSensitive(o, "loglik") && !cJSON_GetObjectItemCaseSensitive(o, "response");
}

static int ll_read(const cJSON *o, tl_answer_line *out, char *idbuf, size_t nid, char *msg, size_t msz) {
  (void)idbuf;
  (void)nid;
  char *text = tl_mcq_loglik_text(cJSON_GetObjectItemCaseSensitive(o, "loglik"), msg, msz);
  if (!text) return -1;
  cJSON *s = cJSON_CreateString(text);
  free(text);
  cJSON *line = (cJSON *)(uintptr_t)o; /* the replay engine's own parse of the line (see above) */
  cJSON_DeleteItemFromObjectCaseSensitive(line, "tally_loglik_text");
  if (!s || !cJSON_AddItemToObject(line, "tally_loglik_text", s)) {
    cJSON_Delete(s);
    snprintf(msg, msz, "out of memory");
    return -1;
  }
  out->resp = s;
  out->prompt = NULL;
  out->id = NULL; /* the line's "id" */
  return 0;
}

static const tl_answer_format LOGLIK = {.name = "mcq-loglik", .claims = ll_claims, .read = ll_read};
const tl_answer_format *const tl_mcq_formats[] = {&LOGLIK, NULL};

/* ---- `tally parse --parser mcq-<mode>` ----
 * input {"item": {...mcq item...}, "response", "model"?}; output {"answer", "correct", "status",
 * "rule", "gold"}. The lm-eval mode uses its default pattern. */

typedef struct {
  tl_mcq_parsers P;
  tl_parsed pr;
} mcq_state;

static tl_status mcq_open(const tl_named_parser *np, int flag, void **state, tl_err *err) {
  (void)np;
  (void)flag;
  mcq_state *s = calloc(1, sizeof *s);
  if (!s) return tl_err_set(err, TL_ENOMEM, "out of memory");
  tl_parsed_init(&s->pr);
  tl_status st = tl_mcq_parsers_init(&s->P, NULL, err);
  if (st) {
    free(s);
    return st;
  }
  *state = s;
  return TL_OK;
}

static void mcq_close(void *state) {
  mcq_state *s = state;
  if (!s) return;
  tl_parsed_release(&s->pr);
  tl_mcq_parsers_release(&s->P);
  free(s);
}

static tl_status mcq_run(const tl_named_parser *np, void *state, int flag, const tl_parse_line *line, cJSON *w,
                         tl_err *err) {
  (void)flag;
  mcq_state *s = state;
  tl_mcq_item it;
  char msg[256];
  tl_status st = tl_mcq_item_from_json(line->item, &it, msg, sizeof msg);
  if (st) return tl_err_set(err, st == TL_ENOMEM ? TL_ENOMEM : TL_EINPUT, "item %s", msg);
  st = tl_mcq_score(&s->P, (tl_mcq_mode)np->arg, &it, line->response, &s->pr);
  if (!st) {
    if (s->pr.answer) cJSON_AddStringToObject(w, "answer", s->pr.answer);
    else cJSON_AddNullToObject(w, "answer");
    cJSON_AddNumberToObject(w, "correct", s->pr.correct);
    cJSON_AddStringToObject(w, "status", tl_pstatus_name(s->pr.status));
    cJSON_AddStringToObject(w, "rule", s->pr.rule);
    cJSON_AddStringToObject(w, "gold", it.gold_letter);
  }
  tl_mcq_item_release(&it);
  return st;
}

#define MCQ_PARSER(var, nm, mode)                                                                                 \
  static const tl_named_parser var = {                                                                          \
      .name = nm, .arg = mode, .needs_item = 1, .open = mcq_open, .close = mcq_close, .run = mcq_run}
MCQ_PARSER(P_STRICT, "mcq-strict", TL_MCQ_STRICT);
MCQ_PARSER(P_LMEVAL, "mcq-lmeval-regex", TL_MCQ_LMEVAL);
MCQ_PARSER(P_INSPECT, "mcq-inspect-choice", TL_MCQ_INSPECT);
MCQ_PARSER(P_HELM, "mcq-helm-mapping", TL_MCQ_HELM);
MCQ_PARSER(P_VLMEVAL, "mcq-vlmeval-heuristic", TL_MCQ_VLMEVAL);
static const tl_named_parser *const PARSERS[] = {&P_STRICT, &P_LMEVAL, &P_INSPECT, &P_HELM, &P_VLMEVAL, NULL};

const tl_parser_set tl_mcq_parser_set = {
    .list = PARSERS,
    .kind = "multiple-choice answer parsers",
    .brief = "multiple choice",
    .help = "  mcq-*:\n"
            "    input lines:  {\"item\": {\"id\", \"question\", \"choices\": [...], \"answer\": letter|index|text}, "
            "\"response\": \"...\", \"model\": \"...\"?}\n"
            "    output lines: {\"answer\": ..., \"correct\": 0|1, \"status\": \"...\", \"rule\": \"...\", \"gold\": \"B\"}\n",
};

const tl_compare_defaults tl_mcq_compare = {.metric = "correct_strict", .by = "task", .status = "status_strict"};
