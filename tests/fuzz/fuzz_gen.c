/* fuzz_gen.c - libFuzzer target for the gen module's scoring (src/core/bench/gen/gen.h): the
 * strict mode's extraction and normalisation and the exact mode (lm-eval's exact_match, with
 * re.sub over PCRE2) on a reply.
 *
 * Input: one control byte, then the gold text, a newline, and the reply (no newline: the reply
 * is the whole rest and the gold is empty). Only what production lets through reaches the
 * scorer: valid UTF-8 without NUL bytes. Control bits 0-2 are ignore_case, ignore_punctuation,
 * ignore_numbers; bit 3 adds gsm8k's regexes_to_ignore, bit 4 patterns that match empty (the
 * re.sub empty-match rule). Checked: each mode's status is ok, no_answer or parse_limit; correct
 * only when ok; strict's answer is a part of the reply when it has one; exact's answer is the
 * reply itself without options; a normalised text equals itself; scoring the gold against
 * itself in exact mode is correct (both sides get the same transforms). */
#include "fuzz_util.h"

#include "gen.h"
#include "tally/str.h"

static const char *const GSM8K[] = {",", "\\$", "(?s).*#### ", "\\.$"};
static const char *const EMPTY[] = {"x*?", "(?=a)|a", "\\b"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return -1;
  const uint8_t ctl = data[0];
  const char *body = (const char *)data + 1;
  const size_t n = size - 1;
  if (memchr(body, 0, n) || !tl_utf8_valid(body, n, NULL)) return -1;
  const char *nl = memchr(body, '\n', n);
  char *gold = tl_strndup(body, nl ? (size_t)(nl - body) : 0);
  char *reply = nl ? tl_strndup(nl + 1, n - (size_t)(nl + 1 - body)) : tl_strndup(body, n);
  FZ_CHECK(gold && reply);
  const char *pats[8];
  int np = 0;
  if (ctl & 8)
    for (size_t i = 0; i < sizeof GSM8K / sizeof *GSM8K; i++) pats[np++] = GSM8K[i];
  if (ctl & 16)
    for (size_t i = 0; i < sizeof EMPTY / sizeof *EMPTY; i++) pats[np++] = EMPTY[i];
  tl_gen_parsers P;
  tl_err err = {0};
  FZ_CHECK(tl_gen_parsers_init(&P, pats, np, ctl & 1, ctl & 2, ctl & 4, &err) == TL_OK);
  cJSON *o = cJSON_CreateObject();
  FZ_CHECK(o && cJSON_AddStringToObject(o, "id", "x") && cJSON_AddStringToObject(o, "answer", gold));
  tl_gen_item it;
  char msg[128];
  FZ_CHECK(tl_gen_item_from_json(o, &it, msg, sizeof msg) == TL_OK);
  cJSON_Delete(o);
  tl_parsed pr;
  tl_parsed_init(&pr);
  for (int m = 0; m < TL_GEN__NMODES; m++) {
    FZ_CHECK(tl_gen_score(&P, (tl_gen_mode)m, &it, reply, &pr) == TL_OK);
    FZ_CHECK(pr.status == TL_PS_OK || pr.status == TL_PS_NO_ANSWER || pr.status == TL_PS_PARSE_LIMIT);
    FZ_CHECK(!pr.correct || pr.status == TL_PS_OK);
    FZ_CHECK(pr.rule != NULL);
    if (m == TL_GEN_STRICT && pr.answer) FZ_CHECK(strstr(reply, pr.answer) != NULL);
    if (m == TL_GEN_EXACT && !np && !(ctl & 7)) FZ_CHECK(pr.answer && strcmp(pr.answer, reply) == 0);
    if (pr.answer) {
      char *norm = tl_gen_normalise(pr.answer, strlen(pr.answer));
      FZ_CHECK(norm != NULL);
      FZ_CHECK(tl_gen_equal(norm, norm));
      free(norm);
    }
  }
  FZ_CHECK(tl_gen_score(&P, TL_GEN_EXACT, &it, gold, &pr) == TL_OK);
  FZ_CHECK(pr.status == TL_PS_PARSE_LIMIT || pr.correct);
  tl_parsed_release(&pr);
  tl_gen_item_release(&it);
  tl_gen_parsers_release(&P);
  free(gold);
  free(reply);
  return 0;
}
