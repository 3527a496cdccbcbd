/* fuzz_mtb_rating.c - libFuzzer target for the MT-Bench-101 judge-rating parsers (tl_mtb_rate,
 * mtb_rating.h): every input goes through all four modes (mtbench101, mtbench101-opencompass,
 * fastchat, judgearena), twice each (the same result both times: no hidden state).
 *
 * Input: the judge output itself. Only valid UTF-8 without NUL bytes reaches the parsers in
 * production (judgments are validated on load), so other inputs are rejected (-1: not kept in
 * the corpus).
 *
 * Checked (the contract in mtb_rating.h): tl_mtb_rate returns TL_OK; the status is one the mode
 * can give; the rule is non-NULL and non-empty; correct is 0; answer != NULL exactly when the
 * status is ok, out_of_range or skipped, and it is valid UTF-8 made of digits (FastChat: digits
 * and at most one '.'); value is 0 unless ok; ok means 1000..10000 (whole) for mtbench101 and
 * judgearena, a whole non-negative multiple of 1000 for opencompass, non-negative for fastchat. */
#include "fuzz_util.h"

#include "tally/parsed.h"
#include "tally/str.h"
#include "mtb_rating.h"

static tl_mtb_rater *g_rater[TL_MTB_RATE__COUNT];

static void fz_free_all(void) {
  for (int m = 0; m < TL_MTB_RATE__COUNT; m++) tl_mtb_rater_free(g_rater[m]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  tl_err err;
  for (int m = 0; m < TL_MTB_RATE__COUNT; m++)
    if (!(g_rater[m] = tl_mtb_rater_new((tl_mtb_rate_mode)m, &err))) {
      fprintf(stderr, "tl_mtb_rater_new(%d): %s\n", m, err.msg);
      abort();
    }
  atexit(fz_free_all);
  return 0;
}

/* The statuses mode m can give. */
static int status_allowed(int m, tl_pstatus st) {
  switch (st) {
  case TL_PS_OK:
  case TL_PS_NO_ANSWER:
  case TL_PS_PARSE_LIMIT: return 1;
  case TL_PS_OUT_OF_RANGE: return m != TL_MTB_RATE_JUDGEARENA;
  case TL_PS_UNTERMINATED: return m == TL_MTB_RATE_STRICT;
  case TL_PS_SKIPPED: return m != TL_MTB_RATE_STRICT;
  default: return 0;
  }
}

/* The answer is a run of decimal digits (ASCII only for OpenCompass), with at most one '.' in
 * FastChat (not first). Non-ASCII characters (Unicode digits: PCRE2's \d decides which) are
 * only checked to be valid UTF-8. */
static int answer_shape(int m, const char *a) {
  size_t n = strlen(a);
  if (n == 0 || !tl_utf8_valid(a, n, NULL)) return 0;
  int dots = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)a[i];
    if (c >= '0' && c <= '9') continue;
    if (c == '.' && m == TL_MTB_RATE_FASTCHAT && i > 0 && !dots++) continue;
    if (c >= 0x80 && m != TL_MTB_RATE_OPENCOMPASS) continue;
    return 0;
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *in = (const char *)data;
  if (memchr(in, 0, size) || !tl_utf8_valid(in, size, NULL)) return -1;
  char *text = tl_strndup(in, size);
  FZ_CHECK(text != NULL);
  for (int m = 0; m < TL_MTB_RATE__COUNT; m++) {
    tl_parsed out, again;
    tl_parsed_init(&out);
    tl_parsed_init(&again);
    tl_status st = tl_mtb_rate(g_rater[m], text, &out);
    if (st != TL_OK) { /* only internal failures may be errors: a judgment is never one */
      fprintf(stderr, "tl_mtb_rate (%s) returned %d: %s\n",
              tl_mtb_rate_mode_name((tl_mtb_rate_mode)m), (int)st, tl_strerror(st));
      abort();
    }
    FZ_CHECK(out.status >= TL_PS_OK && out.status < TL_PS__COUNT);
    FZ_CHECK(status_allowed(m, out.status));
    FZ_CHECK(out.rule != NULL && out.rule[0] != 0);
    FZ_CHECK(out.correct == 0);
    int with_answer = out.status == TL_PS_OK || out.status == TL_PS_OUT_OF_RANGE ||
                      out.status == TL_PS_SKIPPED;
    FZ_CHECK(with_answer == (out.answer != NULL));
    if (out.answer) FZ_CHECK(answer_shape(m, out.answer));
    if (out.status != TL_PS_OK) FZ_CHECK(out.value == 0);
    if (out.status == TL_PS_OK) {
      switch (m) {
      case TL_MTB_RATE_STRICT:
      case TL_MTB_RATE_JUDGEARENA:
        FZ_CHECK(out.value >= 1000 && out.value <= 10000 && out.value % 1000 == 0);
        break;
      case TL_MTB_RATE_OPENCOMPASS: FZ_CHECK(out.value >= 0 && out.value % 1000 == 0); break;
      default: FZ_CHECK(out.value >= 0); break;
      }
    }
    FZ_CHECK(tl_mtb_rate(g_rater[m], text, &again) == TL_OK);
    FZ_CHECK(again.status == out.status && again.value == out.value &&
             strcmp(again.rule, out.rule) == 0 && (again.answer == NULL) == (out.answer == NULL) &&
             (!out.answer || strcmp(again.answer, out.answer) == 0));
    tl_parsed_release(&again);
    tl_parsed_release(&out);
  }
  free(text);
  return 0;
}
