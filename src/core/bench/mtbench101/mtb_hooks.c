/* mtb_hooks.c - MT-Bench-101's hooks around the run (tally/bench_vt.h): the judge-rating parsers
 * of `tally parse` (mtb_rating.h) and the defaults of `tally compare`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtb_rating.h"

/* ---- `tally parse --parser mtbench101-rating|mtbench101-opencompass|fastchat|judgearena` ----
 * input {"response": "<judge output>"|null}; output {"answer", "rating", "status", "rule"}, the
 * rating written as exact decimal text from the thousandths (a double would round 16-digit
 * ratings), null unless the status is ok. */

typedef struct {
  tl_mtb_rater *rater;
  tl_parsed pr; /* reused from line to line */
} mtb_state;

static tl_status rate_open(const tl_named_parser *np, int flag, void **state, tl_err *err) {
  mtb_state *s = calloc(1, sizeof *s);
  if (!s) return tl_err_set(err, TL_ENOMEM, "out of memory");
  tl_parsed_init(&s->pr);
  if (!(s->rater = tl_mtb_rater_new((tl_mtb_rate_mode)np->arg, err))) {
    free(s);
    return TL_EINTERNAL; /* err says why */
  }
  *state = s;
  return TL_OK;
}

static void rate_close(void *state) {
  mtb_state *s = state;
  if (!s) return;
  tl_parsed_release(&s->pr);
  tl_mtb_rater_free(s->rater);
  free(s);
}

static tl_status rate_run(const tl_named_parser *np, void *state, int flag, const tl_parse_line *line, cJSON *w,
                          tl_err *err) {
  mtb_state *s = state;
  tl_status st = tl_mtb_rate(s->rater, line->response, &s->pr);
  if (st != TL_OK) return st;
  const tl_parsed *pr = &s->pr;
  if (pr->answer) cJSON_AddStringToObject(w, "answer", pr->answer);
  else cJSON_AddNullToObject(w, "answer");
  if (pr->status == TL_PS_OK) {
    char num[48];
    long long v = (long long)pr->value; /* >= 0: ratings are never negative */
    int k = snprintf(num, sizeof num, "%lld", v / TL_MTB_RATING_SCALE);
    long long f = v % TL_MTB_RATING_SCALE;
    if (f) {
      snprintf(num + k, sizeof num - (size_t)k, ".%03lld", f);
      size_t e = strlen(num);
      while (num[e - 1] == '0') num[--e] = 0;
    }
    cJSON_AddRawToObject(w, "rating", num);
  } else {
    cJSON_AddNullToObject(w, "rating");
  }
  cJSON_AddStringToObject(w, "status", tl_pstatus_name(pr->status));
  cJSON_AddStringToObject(w, "rule", pr->rule);
  return TL_OK;
}

#define MTB_PARSER(var, nm, mode)                                                                                    \
  static const tl_named_parser var = {.name = nm, .arg = mode, .open = rate_open, .close = rate_close, .run = rate_run}
MTB_PARSER(P_OURS, "mtbench101-rating", TL_MTB_RATE_STRICT);
MTB_PARSER(P_OPENCOMPASS, "mtbench101-opencompass", TL_MTB_RATE_OPENCOMPASS);
MTB_PARSER(P_FASTCHAT, "fastchat", TL_MTB_RATE_FASTCHAT);
MTB_PARSER(P_JUDGEARENA, "judgearena", TL_MTB_RATE_JUDGEARENA);
static const tl_named_parser *const PARSERS[] = {&P_OURS, &P_OPENCOMPASS, &P_FASTCHAT, &P_JUDGEARENA, NULL};

const tl_parser_set tl_mtb_parser_set = {
    .list = PARSERS,
    .kind = "judge ratings",
    .brief = "MT-Bench-101",
    .help = "  judge ratings (MT-Bench-101; mtbench101-rating is ours, the others reproduce OpenCompass,\n"
            "  FastChat and JudgeArena):\n"
            "    input lines:  {\"response\": \"<judge output>\"|null} (\"item\" ignored; \"model\", \"prompt\" checked, ignored)\n"
            "    output lines: {\"answer\": \"7\"|null, \"rating\": 7|8.5|null, \"status\": \"...\", \"rule\": \"...\"}\n"
            "                  (rating: the exact decimal rating when status is ok, else null)\n",
};

/* ---- `tally compare`: a dialogue's score is its least rating over the judged turns ---- */
const tl_compare_defaults tl_mtb_compare = {.metric = "rating", .by = "task", .status = "status", .dialogue = 1};
