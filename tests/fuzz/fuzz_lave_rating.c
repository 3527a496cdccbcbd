/* fuzz_lave_rating.c - libFuzzer target for LAVE (lave.h): the judge-rating parser and the prompt
 * renderer, plus the expected rating and Krippendorff's alpha on values taken from the input.
 *
 * Input: text. Only valid UTF-8 without NUL bytes reaches these functions in production (replies
 * and references are validated on load), so other inputs are rejected (-1: not kept).
 *   - The whole text is a judge reply: tl_lave_rate without and with the compat fallback.
 *   - Split at '\n' it is a test example: piece 0 the question, piece 1 the prediction, piece 2
 *     the caption, pieces 3.. (at most 16) the references. The options come from the first
 *     byte b (0 for an empty input): use_caption = b & 1, rationalize = b & 2, filter_refs =
 *     !(b & 4), num_shots = {0, 1, 2, 8}[(b >> 3) & 3]. The demonstrations are two tiny sets
 *     made up here (general: 2 demos, binary: 1).
 *   - The references are also top_logprobs tokens (logprob -k/2 for the k-th) and the input
 *     bytes a votes matrix for alpha.
 *
 * Checked: tl_lave_rate returns TL_OK; rating in 1..3 exactly when the status is ok, score ==
 * (rating - 1) / 2 then and NaN otherwise; answer is the rating's digit for rating_eq/last_char
 * and NULL otherwise; without compat the status is ok, no_answer, out_of_range or
 * unterminated_think; with compat it is always ok, equal to the plain result when that is ok and
 * else rating 2 with rule compat_fallback_2; the same result twice (no hidden state). The prompt
 * (when the options allow it) starts with "You are given", ends with "Output:", is valid UTF-8,
 * and its binary decision is tl_lave_is_binary's; an empty reference list fails exactly when
 * the reference would raise. The expected rating lies in [1, 3] when ok; alpha is NaN or <= 1.
 * Everything allocated is freed (a leak is a finding). */
#include "fuzz_util.h"

#include <math.h>

#include "tally/str.h"
#include "lave.h"

static const char GENERAL[] =
    "[{\"question\": \"What is it?\", \"references\": [\"a cup\", \"cup\", \"cup\", \"mug\"],"
    " \"prediction\": \"mug\", \"output\": \"2\", \"explanation\": \"Close to 'cup'.\","
    " \"caption\": \"A cup on a desk.\"},"
    " {\"question\": \"Which way?\", \"references\": [\"left\"], \"prediction\": \"right\","
    " \"output\": \"1\", \"explanation\": \"Opposite.\", \"caption\": \"A road sign.\"}]";
static const char BINARY[] =
    "[{\"question\": \"Is it on?\", \"references\": [\"yes\", \"yes\", \"no\"],"
    " \"prediction\": \"no\", \"output\": \"1\", \"explanation\": \"Most say yes.\","
    " \"caption\": \"A lamp.\"}]";

static tl_lave_demos *g_general, *g_binary;

static void fz_free_all(void) {
  tl_lave_demos_free(g_general);
  tl_lave_demos_free(g_binary);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  tl_err err;
  if (tl_utf8_locale_check(&err) != TL_OK ||
      tl_lave_demos_parse(GENERAL, strlen(GENERAL), "general", &g_general, &err) != TL_OK ||
      tl_lave_demos_parse(BINARY, strlen(BINARY), "binary", &g_binary, &err) != TL_OK) {
    fprintf(stderr, "setup: %s\n", err.msg);
    abort();
  }
  atexit(fz_free_all);
  return 0;
}

static void check_rating(const tl_lave_rating *r) {
  FZ_CHECK(r->rule != NULL && r->rule[0] != 0);
  FZ_CHECK((r->status == TL_PS_OK) == (r->rating >= 1 && r->rating <= 3));
  if (r->status == TL_PS_OK) FZ_CHECK(r->score == (r->rating - 1) / 2.0);
  else FZ_CHECK(isnan(r->score) && r->rating == 0);
  int read = strcmp(r->rule, "rating_eq") == 0 || strcmp(r->rule, "last_char") == 0;
  FZ_CHECK(read == (r->answer != NULL));
  if (r->answer) FZ_CHECK(r->answer[0] == '0' + r->rating && r->answer[1] == 0);
}

static void fuzz_rate(const char *text) {
  tl_lave_rating plain, compat, again;
  FZ_CHECK(tl_lave_rate(text, 0, &plain) == TL_OK);
  check_rating(&plain);
  FZ_CHECK(plain.status == TL_PS_OK || plain.status == TL_PS_NO_ANSWER ||
           plain.status == TL_PS_OUT_OF_RANGE || plain.status == TL_PS_UNTERMINATED);
  FZ_CHECK(tl_lave_rate(text, 1, &compat) == TL_OK);
  check_rating(&compat);
  FZ_CHECK(compat.status == TL_PS_OK); /* never no_rating for a reply */
  if (plain.status == TL_PS_OK)
    FZ_CHECK(compat.rating == plain.rating && strcmp(compat.rule, plain.rule) == 0);
  else
    FZ_CHECK(compat.rating == 2 && strcmp(compat.rule, "compat_fallback_2") == 0);
  FZ_CHECK(tl_lave_rate(text, 0, &again) == TL_OK);
  FZ_CHECK(again.status == plain.status && again.rating == plain.rating &&
           strcmp(again.rule, plain.rule) == 0);
}

enum { MAXP = 19 }; /* question, prediction, caption, 16 references */

static void fuzz_prompt(char *text, unsigned char b) {
  const char *piece[MAXP];
  size_t np = 0;
  for (char *p = text; np < MAXP;) {
    piece[np++] = p;
    char *nl = strchr(p, '\n');
    if (!nl) break;
    *nl = 0;
    p = nl + 1;
  }
  static const int SHOTS[4] = {0, 1, 2, 8};
  tl_lave_opts o = {b & 1, (b & 2) != 0, !(b & 4), SHOTS[(b >> 3) & 3]};
  const char *q = piece[0], *pred = np > 1 ? piece[1] : "", *cap = np > 2 ? piece[2] : NULL;
  const char *const *refs = piece + 3;
  size_t nrefs = np > 3 ? np - 3 : 0;
  tl_buf out;
  tl_buf_init(&out);
  tl_err err;
  int bin = -1;
  tl_status st = tl_lave_prompt(&o, g_general, g_binary, q, refs, nrefs, pred, cap, &out, &bin, &err);
  int should_fail = (nrefs == 0 && (o.filter_refs || o.num_shots > 0)) || (o.use_caption && !cap);
  FZ_CHECK((st != TL_OK) == should_fail);
  if (st == TL_OK) {
    FZ_CHECK(out.len >= 20 && memcmp(out.data, "You are given", 13) == 0);
    FZ_CHECK(memcmp(out.data + out.len - 7, "Output:", 7) == 0);
    FZ_CHECK(strlen(out.data) == out.len && tl_utf8_valid(out.data, out.len, NULL));
    FZ_CHECK(bin == tl_lave_is_binary(refs, nrefs));
  } else {
    FZ_CHECK(out.len == 0 && st == TL_EINPUT && err.msg[0]);
  }
  tl_buf_release(&out);
  /* the references as top_logprobs */
  tl_lave_logprob lp[16];
  for (size_t i = 0; i < nrefs; i++) lp[i] = (tl_lave_logprob){refs[i], -0.5 * (double)i};
  tl_lave_expected e;
  FZ_CHECK(tl_lave_expected_rating(lp, nrefs, &e) == TL_OK);
  if (e.status == TL_PS_OK) FZ_CHECK(e.expected >= 1 && e.expected <= 3 && e.score >= 0 && e.score <= 1);
  else FZ_CHECK(isnan(e.expected) && e.status == TL_PS_NO_ANSWER);
}

/* Votes from the bytes: 4 coders, each byte a vote in -1..3. */
static void fuzz_alpha(const uint8_t *data, size_t size) {
  int v[64];
  size_t n = size < 64 ? size / 4 * 4 : 64;
  for (size_t i = 0; i < n; i++) v[i] = (int)(data[i] % 5) - 1;
  double a = tl_kripp_alpha_nominal(v, n / 4, 4);
  FZ_CHECK(isnan(a) || a <= 1.0 + 1e-12);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *in = (const char *)data;
  if (memchr(in, 0, size) || !tl_utf8_valid(in, size, NULL)) return -1;
  char *text = tl_strndup(in, size);
  FZ_CHECK(text != NULL);
  fuzz_rate(text);
  fuzz_prompt(text, size ? data[0] : 0); /* cuts text at its newlines */
  fuzz_alpha(data, size);
  free(text);
  return 0;
}
