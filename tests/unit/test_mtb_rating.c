/* test_mtb_rating.c - the MT-Bench-101 judge-rating parsers (mtb_rating.h) and the think
 * strippers (tally/think.h).
 *
 * Fixture group: a table of cases for every mode (the spec's quoting attack, think blocks,
 * orphan </think>, unterminated <think>, 0 / 11 / leading zeros / inner blanks, decimals and
 * FastChat's literal_eval rules, empty text, NULL, huge numbers, multiple ratings, upper case,
 * Unicode digits, JudgeArena's Unicode tag folding and its lower()-index quirk); generated
 * cases at Python's 4300-digit int() limit; the two strippers on their own; runaway texts of
 * 4 MiB in linear time; the forced regex limit (parse_limit); mode names.
 * Shared group: every case of ../shared/data/mtbench101/judge_parser_cases.json through each
 * mode, against the file's OpenCompass, FastChat and JudgeArena columns and against our own
 * expectations for strict mode (stated below for each input of the file). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "testutil.h"

#include <math.h>
#include <time.h>

#include "tally/parsed.h"
#include "tally/rx.h"
#include "tally/str.h"
#include "tally/think.h"
#include "mtb_rating.h"


enum { S = TL_MTB_RATE_STRICT, OC = TL_MTB_RATE_OPENCOMPASS, FC = TL_MTB_RATE_FASTCHAT,
       JA = TL_MTB_RATE_JUDGEARENA };

static tl_mtb_rater *R[TL_MTB_RATE__COUNT];

static int setup(void **state) {
  (void)state;
  tl_err err;
  for (int m = 0; m < TL_MTB_RATE__COUNT; m++)
    if (!(R[m] = tl_mtb_rater_new((tl_mtb_rate_mode)m, &err))) {
      fprintf(stderr, "tl_mtb_rater_new(%d): %s\n", m, err.msg);
      return -1;
    }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (int m = 0; m < TL_MTB_RATE__COUNT; m++) tl_mtb_rater_free(R[m]);
  return 0;
}

/* Rates `text` in mode m and checks every field. answer NULL: none expected. */
static void expect(int m, const char *text, tl_pstatus st, const char *rule, const char *answer,
                   int64_t value, const char *where) {
  tl_parsed p;
  tl_parsed_init(&p);
  assert_int_equal(tl_mtb_rate(R[m], text, &p), TL_OK);
  const char *mode = tl_mtb_rate_mode_name((tl_mtb_rate_mode)m);
  if (p.status != st || strcmp(p.rule, rule) != 0 || p.value != value ||
      (answer == NULL) != (p.answer == NULL) || (answer && strcmp(answer, p.answer) != 0))
    fail_msg("%s: %s %.80s\n  got  %s/%s answer=%s value=%lld\n  want %s/%s answer=%s value=%lld",
             where, mode, text ? text : "(NULL)", tl_pstatus_name(p.status), p.rule,
             p.answer ? p.answer : "(null)", (long long)p.value, tl_pstatus_name(st), rule,
             answer ? answer : "(null)", (long long)value);
  assert_int_equal(p.correct, 0);
  tl_parsed_release(&p);
}

/* ---- the fixture table ------------------------------------------------------------------------ */

typedef struct {
  int mode;
  const char *text;
  tl_pstatus st;
  const char *rule;
  const char *answer;
  int64_t value; /* thousandths */
} rcase;

#define OK_(m, t, a, rule, v) {m, t, TL_PS_OK, rule, a, v}
#define NO_(m, t, rule) {m, t, TL_PS_NO_ANSWER, rule, NULL, 0}
#define OOR(m, t, a, rule) {m, t, TL_PS_OUT_OF_RANGE, rule, a, 0}
#define SKP(m, t, a, rule) {m, t, TL_PS_SKIPPED, rule, a, 0}

static const char QUOTE[] =
    "As instructed ('Rating: [[score]]', for example 'Rating: [[6]]'), my verdict is Rating: [[3]]";
static const char THINK[] = "<think>Perhaps [[2]]...</think> Rating: [[9]]";
static const char NOTE[] = "Rating: [[7]]\n\nNote: earlier draft said [[4]].";
static const char UNTERM[] = "<think>unterminated reasoning with [[2]]";

static const rcase CASES[] = {
    /* ---- strict (ours) ---- */
    OK_(S, "Reasoning...\nRating: [[7]]", "7", "rating_label", 7000),
    OK_(S, "rating: [[10]]", "10", "rating_label", 10000),
    OK_(S, "RATING: [[4]]", "4", "rating_label", 4000),
    OK_(S, "I would rate this [[6]] overall.", "6", "double_bracket", 6000),
    OK_(S, QUOTE, "3", "rating_label", 3000),               /* last, not the quoted template */
    OK_(S, THINK, "9", "rating_label", 9000),               /* the block is dropped */
    OK_(S, NOTE, "7", "rating_label", 7000),                /* a label beats a later bare [[4]] */
    {S, UNTERM, TL_PS_UNTERMINATED, "unterminated_think", NULL, 0},
    {S, "Rating: [[8]] <think>", TL_PS_UNTERMINATED, "unterminated_think", NULL, 0},
    OK_(S, "Draft: Rating: [[2]]</think>Rating: [[8]]", "8", "rating_label", 8000),
    NO_(S, "Rating: [[3]]</think>no verdict here", "no_rating"), /* all before </think> goes */
    OK_(S, "<think>a [[1]]</think>x [[2]] y</think> [[5]]", "5", "double_bracket", 5000),
    OK_(S, "<THINK>[[2]]</Think>[[5]] <think>[[6]]</think>", "5", "double_bracket", 5000),
    OOR(S, "Rating: [[0]]", "0", "out_of_range"),
    OOR(S, "Rating: [[11]]", "11", "out_of_range"),
    OOR(S, "[[0000]]", "0000", "out_of_range"),
    OOR(S, "Rating: [[99999999999999999999999]]", "99999999999999999999999", "out_of_range"),
    OOR(S, "Rating: [[3]] ... final Rating: [[12]]", "12", "out_of_range"), /* no fallback */
    OK_(S, "Rating: [[07]]", "07", "rating_label", 7000),
    OK_(S, "[[010]]", "010", "double_bracket", 10000),
    OK_(S, "Rating: [[ 7 ]]", "7", "rating_label", 7000),
    OK_(S, "Rating:\n[[\t7\n]]", "7", "rating_label", 7000),
    NO_(S, "Rating: [[8.5]]", "no_rating"),                 /* decimals: no integer rating */
    OK_(S, "Rating: [[8.5]], i.e. [[8]]", "8", "double_bracket", 8000),
    NO_(S, "Rating: [6]", "no_rating"),                     /* single brackets never count */
    NO_(S, "Rating: [[score]]", "no_rating"),
    NO_(S, "", "no_rating"),
    NO_(S, "No rating present.", "no_rating"),
    OK_(S, "**Rating:** [[9]]", "9", "rating_label", 9000),
    OK_(S, "**Rating**: [[9]]", "9", "rating_label", 9000),
    OK_(S, "Rating: **[[9]]**", "9", "rating_label", 9000),
    OK_(S, "Subrating: [[3]]", "3", "double_bracket", 3000), /* \b: no label */
    OK_(S, "Rating: [[2]]. Subrating: [[3]]", "2", "rating_label", 2000),
    OK_(S, "[[7]] [[8]] [[9]]", "9", "double_bracket", 9000),
    OK_(S, "[[[7]]]", "7", "double_bracket", 7000),
    OK_(S, "Rating: [[\xd9\xa3]]", "\xd9\xa3", "rating_label", 3000), /* U+0663 ARABIC-INDIC 3 */
    OK_(S, "Rating: [[1\xd9\xa0]]", "1\xd9\xa0", "rating_label", 10000), /* "1" U+0660 = 10 */
    /* the byte-wise tag quirk (tally/think.h): "<\x0fthink>" is an orphan </think> */
    OK_(S, "Rating: [[3]]<\x0fthink> [[5]]", "5", "double_bracket", 5000),
    /* ---- OpenCompass ---- */
    OK_(OC, "See section [3] for details...\nRating: [[6]]", "3", "single_bracket", 3000),
    OK_(OC, "Rating: [[0]]", "0", "single_bracket", 0),
    OK_(OC, "Rating: [[11]]", "11", "single_bracket", 11000),
    OK_(OC, "Rating: [6]", "6", "single_bracket", 6000),
    OK_(OC, QUOTE, "6", "single_bracket", 6000),
    OK_(OC, THINK, "2", "single_bracket", 2000),             /* no think stripping */
    OK_(OC, UNTERM, "2", "single_bracket", 2000),
    OK_(OC, NOTE, "7", "single_bracket", 7000),
    OK_(OC, "Rating: [007]", "007", "single_bracket", 7000),
    NO_(OC, "Rating: [[8.5]]", "no_rating"),
    OK_(OC, "Rating: [[8.5]] [4]", "4", "single_bracket", 4000),
    NO_(OC, "Rating: [[ 7 ]]", "no_rating"),
    NO_(OC, "Rating: [\xd9\xa3]", "no_rating"),               /* [0-9]: ASCII only */
    NO_(OC, "", "no_rating"),
    OK_(OC, "[9223372036854775]", "9223372036854775", "single_bracket", INT64_C(9223372036854775000)),
    OOR(OC, "[9223372036854776]", "9223372036854776", "too_large"),
    OOR(OC, "[99999999999999999999999]", "99999999999999999999999", "too_large"),
    /* ---- FastChat ---- */
    OK_(FC, "See section [3] for details...\nRating: [[6]]", "6", "double_bracket", 6000),
    OK_(FC, "Rating: [[8.5]]", "8.5", "double_bracket", 8500),
    SKP(FC, "Rating: [[07]]", "07", "literal_eval_error"),
    SKP(FC, "Rating: [[007]]", "007", "literal_eval_error"),
    OK_(FC, "Rating: [[0]]", "0", "double_bracket", 0),
    OK_(FC, "Rating: [[00]]", "00", "double_bracket", 0),
    OK_(FC, "Rating: [[11]]", "11", "double_bracket", 11000),
    OK_(FC, "Rating: [[7.]]", "7.", "double_bracket", 7000),
    OK_(FC, "Rating: [[007.50]]", "007.50", "double_bracket", 7500),
    NO_(FC, "Rating: [[ 7 ]]", "no_rating"),
    OK_(FC, "Rating: [6]", "6", "single_bracket", 6000),
    SKP(FC, "Rating: [07]", "07", "literal_eval_error"),
    NO_(FC, "Rating: [[1.5.3]]", "no_rating"),
    OK_(FC, "Rating: [[1.5.3]] [2]", "2", "single_bracket", 2000),
    OK_(FC, "[3] and then [[6]]", "6", "double_bracket", 6000), /* double first, wherever */
    OK_(FC, QUOTE, "6", "double_bracket", 6000),
    OK_(FC, THINK, "2", "double_bracket", 2000),
    OK_(FC, NOTE, "7", "double_bracket", 7000),
    SKP(FC, "Rating: [[\xd9\xa3]]", "\xd9\xa3", "literal_eval_error"), /* invalid character */
    OK_(FC, "[[8.1235]]", "8.1235", "double_bracket", 8124),  /* half to even */
    OK_(FC, "[[8.1245]]", "8.1245", "double_bracket", 8124),
    OK_(FC, "[[8.12451]]", "8.12451", "double_bracket", 8125),
    OK_(FC, "[[8.1236]]", "8.1236", "double_bracket", 8124),
    OK_(FC, "[[0.0005]]", "0.0005", "double_bracket", 0),
    OK_(FC, "[[0.0015]]", "0.0015", "double_bracket", 2),
    OK_(FC, "[[9223372036854775.807]]", "9223372036854775.807", "double_bracket", INT64_MAX),
    OK_(FC, "[[9223372036854775.8065]]", "9223372036854775.8065", "double_bracket", INT64_MAX - 1),
    OOR(FC, "[[9223372036854775.8075]]", "9223372036854775.8075", "too_large"),
    OOR(FC, "[[9223372036854775.808]]", "9223372036854775.808", "too_large"),
    OOR(FC, "[[12345678901234567]]", "12345678901234567", "too_large"),
    NO_(FC, "No rating present.", "no_rating"),
    NO_(FC, "", "no_rating"),
    /* ---- JudgeArena ---- */
    OK_(JA, NOTE, "4", "double_bracket", 4000),              /* last valid */
    OK_(JA, QUOTE, "3", "double_bracket", 3000),
    OK_(JA, THINK, "9", "double_bracket", 9000),
    OK_(JA, UNTERM, "2", "double_bracket", 2000),            /* an unclosed block is read */
    NO_(JA, "Rating: [[0]]", "no_rating"),
    NO_(JA, "Rating: [[11]]", "no_rating"),
    OK_(JA, "[[5]] then [[11]] and [[0]]", "5", "double_bracket", 5000),
    OK_(JA, "Rating: [[07]]", "07", "double_bracket", 7000),
    OK_(JA, "[[0007]]", "0007", "double_bracket", 7000),
    NO_(JA, "Rating: [[ 7 ]]", "no_rating"),
    NO_(JA, "Rating: [[8.5]]", "no_rating"),
    NO_(JA, "Rating: [6]", "no_rating"),
    OK_(JA, "Rating: [[\xd9\xa3]]", "\xd9\xa3", "double_bracket", 3000), /* int() takes Nd */
    OK_(JA, "Rating: [[7]] <think>[[3]]</think>", "7", "double_bracket", 7000),
    OK_(JA, "[[3]] </think> [[5]]", "5", "double_bracket", 5000),
    NO_(JA, "Rating: [[7]]</think> nothing", "no_rating"),
    /* after a removed block an orphan </think> stays (ours would drop what precedes it) */
    OK_(JA, "<think>a</think>[[3]]</think>", "3", "double_bracket", 3000),
    /* re.IGNORECASE: U+0130 / U+0131 for 'i', U+212A for 'k' */
    OK_(JA, "<th\xc4\xb0nk>[[2]]</think>[[6]]", "6", "double_bracket", 6000),
    OK_(JA, "<th\xc4\xb1nk>[[2]]</think>[[6]]", "6", "double_bracket", 6000),
    OK_(JA, "<thin\xe2\x84\xaa>[[2]]</THINK>[[6]]", "6", "double_bracket", 6000),
    /* step 2 slices at the index of text.lower(), one code point further per U+0130 before it:
     * Python gives "[8]]" here */
    NO_(JA, "\xc4\xb0[[9]]</think>[[8]]", "no_rating"),
    OK_(JA, "\xc4\xb0\xc4\xb0</think>ab[[8]]", "8", "double_bracket", 8000),
    /* "</thİnk>" is a tag for re.IGNORECASE, not for lower(): no step 2 here */
    OK_(JA, "[[4]]</th\xc4\xb0nk>", "4", "double_bracket", 4000),
    NO_(JA, "", "no_rating"),
    /* ---- every mode: NULL is a missing judgment ---- */
    {S, NULL, TL_PS_MISSING, "", NULL, 0},
    {OC, NULL, TL_PS_MISSING, "", NULL, 0},
    {FC, NULL, TL_PS_MISSING, "", NULL, 0},
    {JA, NULL, TL_PS_MISSING, "", NULL, 0},
};

static void test_table(void **state) {
  (void)state;
  int seen[TL_MTB_RATE__COUNT] = {0};
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
    const rcase *c = &CASES[i];
    char where[32];
    snprintf(where, sizeof where, "case %zu", i);
    expect(c->mode, c->text, c->st, c->rule, c->answer, c->value, where);
    seen[c->mode]++;
  }
  for (int m = 0; m < TL_MTB_RATE__COUNT; m++) assert_true(seen[m] >= 15);
}

/* An earlier result in `out` is replaced (its answer freed: LSan checks), and a failing text
 * after a good one leaves no stale answer or value. */
static void test_reuse(void **state) {
  (void)state;
  tl_parsed p;
  tl_parsed_init(&p);
  for (int m = 0; m < TL_MTB_RATE__COUNT; m++) {
    assert_int_equal(tl_mtb_rate(R[m], "Rating: [[7]]", &p), TL_OK);
    assert_int_equal(p.status, TL_PS_OK);
    assert_int_equal(p.value, 7000);
    assert_string_equal(p.answer, "7");
    assert_int_equal(tl_mtb_rate(R[m], "nothing", &p), TL_OK);
    assert_int_equal(p.status, TL_PS_NO_ANSWER);
    assert_null(p.answer);
    assert_int_equal(p.value, 0);
  }
  tl_parsed_release(&p);
}

/* ---- Python's 4300-digit int() limit ---------------------------------------------------------- */

static char *digits_text(const char *pre, char lead, size_t nlead, char d, size_t nd,
                         const char *post) {
  size_t n = strlen(pre) + nlead + nd + strlen(post);
  char *s = malloc(n + 1);
  assert_non_null(s);
  char *w = s;
  w += sprintf(w, "%s", pre);
  memset(w, lead, nlead);
  w += nlead;
  memset(w, d, nd);
  w += nd;
  strcpy(w, post);
  return s;
}

static void expect_owned(int m, char *text, tl_pstatus st, const char *rule, const char *answer,
                         int64_t value, const char *where) {
  expect(m, text, st, rule, answer, value, where);
  free(text);
}

static void test_digit_limit(void **state) {
  (void)state;
  char *d4300 = digits_text("", '1', 0, '1', 4300, "");
  char *d4301 = digits_text("", '1', 0, '1', 4301, "");
  char *z4300_7 = digits_text("", '0', 4300, '7', 1, "");  /* 4301 digits, value 7 */
  char *z4299_7 = digits_text("", '0', 4299, '7', 1, "");  /* 4300 digits, value 7 */
  char *z5000 = digits_text("", '0', 5000, '0', 0, "");
  /* OpenCompass: int() raises above 4300 digits, leading zeros included */
  expect_owned(OC, digits_text("[", '1', 0, '1', 4300, "]"), TL_PS_OUT_OF_RANGE, "too_large", d4300, 0, "oc 4300");
  expect_owned(OC, digits_text("[", '1', 0, '1', 4301, "]"), TL_PS_SKIPPED, "int_digit_limit", d4301, 0, "oc 4301");
  expect_owned(OC, digits_text("[", '0', 4300, '7', 1, "]"), TL_PS_SKIPPED, "int_digit_limit", z4300_7, 0, "oc 0..07");
  expect_owned(OC, digits_text("[", '0', 4299, '7', 1, "]"), TL_PS_OK, "single_bracket", z4299_7, 7000, "oc 0..7");
  /* FastChat: an integer literal above 4300 digits is a SyntaxError; zeros alone are 0; a
   * float has no such limit */
  expect_owned(FC, digits_text("[[", '1', 0, '1', 4301, "]]"), TL_PS_SKIPPED, "literal_eval_error", d4301, 0, "fc 4301");
  expect_owned(FC, digits_text("[[", '1', 0, '1', 4300, "]]"), TL_PS_OUT_OF_RANGE, "too_large", d4300, 0, "fc 4300");
  expect_owned(FC, digits_text("[[", '0', 5000, '0', 0, "]]"), TL_PS_OK, "double_bracket", z5000, 0, "fc zeros");
  {
    char *ans = digits_text("", '0', 5000, '7', 1, ".");
    expect_owned(FC, digits_text("[[", '0', 5000, '7', 1, ".]]"), TL_PS_OK, "double_bracket", ans, 7000, "fc float");
    free(ans);
  }
  /* JudgeArena: the reversed scan meets the huge match first only when it comes last */
  expect_owned(JA, digits_text("[[5]] [[", '1', 0, '1', 4301, "]]"), TL_PS_SKIPPED, "int_digit_limit", d4301, 0, "ja huge last");
  expect_owned(JA, digits_text("[[", '1', 0, '1', 4301, "]] [[5]]"), TL_PS_OK, "double_bracket", "5", 5000, "ja huge first");
  expect_owned(JA, digits_text("[[", '0', 4299, '7', 1, "]]"), TL_PS_OK, "double_bracket", z4299_7, 7000, "ja 0..7");
  expect_owned(JA, digits_text("[[", '0', 4300, '7', 1, "]]"), TL_PS_SKIPPED, "int_digit_limit", z4300_7, 0, "ja 0..07");
  expect_owned(JA, digits_text("[[", '1', 0, '1', 4300, "]] [[11]]"), TL_PS_NO_ANSWER, "no_rating", NULL, 0, "ja big");
  /* ours: no digit limit, the value decides */
  expect_owned(S, digits_text("Rating: [[", '0', 4300, '7', 1, "]]"), TL_PS_OK, "rating_label", z4300_7, 7000, "s 0..07");
  expect_owned(S, digits_text("Rating: [[", '1', 0, '1', 4301, "]]"), TL_PS_OUT_OF_RANGE, "out_of_range", d4301, 0, "s huge");
  free(d4300);
  free(d4301);
  free(z4300_7);
  free(z4299_7);
  free(z5000);
}

/* ---- the strippers on their own ---------------------------------------------------------------- */

static void strip_is(int ja, const char *in, int want_rc, const char *want) {
  tl_buf b;
  tl_buf_init(&b);
  const char *v = "unset";
  size_t vl = 5;
  int rc = ja ? tl_think_strip_judgearena(in, strlen(in), &b, &v, &vl)
              : tl_think_strip(in, strlen(in), &b, &v, &vl);
  if (rc != want_rc) fail_msg("%s(%s): rc %d, want %d", ja ? "ja" : "ours", in, rc, want_rc);
  if (want && (vl != strlen(want) || memcmp(v, want, vl) != 0))
    fail_msg("%s(%s): '%.*s', want '%s'", ja ? "ja" : "ours", in, (int)vl, v, want);
  if (!want) assert_string_equal(v, "unset"); /* untouched on unterminated */
  tl_buf_release(&b);
}

static void test_strip(void **state) {
  (void)state;
  strip_is(0, "plain text", TL_THINK_OK, "plain text");
  strip_is(0, "", TL_THINK_OK, "");
  strip_is(0, "a<think>x</think>b<THINK>y</Think>c", TL_THINK_OK, "abc");
  strip_is(0, "a</think>b<think>x</think>c", TL_THINK_OK, "bc");
  strip_is(0, "<think>a</think>B</think>C", TL_THINK_OK, "C");
  strip_is(0, "a<think>x", TL_THINK_UNTERMINATED, NULL);
  strip_is(0, "<think>x</think><think>y", TL_THINK_UNTERMINATED, NULL);
  strip_is(0, "<think></think>", TL_THINK_OK, "");
  strip_is(0, "<thin\xe2\x84\xaa>x</think>y", TL_THINK_OK, "y"); /* Kelvin: no tag; orphan */
  strip_is(1, "a<think>x</think>b<THINK>y</Think>c", TL_THINK_OK, "abc");
  strip_is(1, "a</think>b<think>x</think>c", TL_THINK_OK, "a</think>bc");
  strip_is(1, "a<think>x", TL_THINK_OK, "a<think>x");
  strip_is(1, "<think>x</think><think>y", TL_THINK_OK, "<think>y");
  strip_is(1, " \n<think>x</think> \xe2\x80\x83 y", TL_THINK_OK, "y"); /* lstrip: U+2003 */
  strip_is(1, "\xe2\x80\x83\n [[4]]</think>\xc2\xa0 x", TL_THINK_OK, "x");
  strip_is(1, "\xc4\xb0[[9]]</think>[[8]]", TL_THINK_OK, "[8]]");
  strip_is(1, "\xc4\xb0\xc4\xb0</think>", TL_THINK_OK, "");
  strip_is(1, "no tags", TL_THINK_OK, "no tags");
  strip_is(1, "x I have to give the solution based on the thinking directly now.</think> y",
           TL_THINK_OK, "y");
}

/* ---- cost: runaway texts --------------------------------------------------------------------- */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char *repeat(const char *piece, size_t total, const char *tail) {
  size_t k = strlen(piece), n = total / k * k, t = strlen(tail);
  char *s = malloc(n + t + 1);
  assert_non_null(s);
  for (size_t i = 0; i < n; i += k) memcpy(s + i, piece, k);
  memcpy(s + n, tail, t + 1);
  return s;
}

static void test_runaway(void **state) {
  (void)state;
  static const struct {
    const char *piece, *tail;
    tl_pstatus st[TL_MTB_RATE__COUNT]; /* S, OC, FC, JA */
  } SHAPES[] = {
      {"[[", "", {TL_PS_NO_ANSWER, TL_PS_NO_ANSWER, TL_PS_NO_ANSWER, TL_PS_NO_ANSWER}},
      {"[", "", {TL_PS_NO_ANSWER, TL_PS_NO_ANSWER, TL_PS_NO_ANSWER, TL_PS_NO_ANSWER}},
      {"[[1", "", {TL_PS_NO_ANSWER, TL_PS_NO_ANSWER, TL_PS_NO_ANSWER, TL_PS_NO_ANSWER}},
      {"[[1.1", "", {TL_PS_NO_ANSWER, TL_PS_NO_ANSWER, TL_PS_NO_ANSWER, TL_PS_NO_ANSWER}},
      {"[[7]]", "", {TL_PS_OK, TL_PS_OK, TL_PS_OK, TL_PS_OK}},
      {"Rating: [[7]] ", "", {TL_PS_OK, TL_PS_OK, TL_PS_OK, TL_PS_OK}},
      {"Rating:", "", {TL_PS_NO_ANSWER, TL_PS_NO_ANSWER, TL_PS_NO_ANSWER, TL_PS_NO_ANSWER}},
      {"</think>", "[[7]]", {TL_PS_OK, TL_PS_OK, TL_PS_OK, TL_PS_OK}},
      {"<think>", "[[7]]", {TL_PS_UNTERMINATED, TL_PS_OK, TL_PS_OK, TL_PS_OK}},
      {"<think>x</think>", "[[7]]", {TL_PS_OK, TL_PS_OK, TL_PS_OK, TL_PS_OK}},
  };
  static const char *const RUNS[] = {"1", " ", "0", "*"}; /* one long run after a prefix */
  for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++) {
    char *s = repeat(SHAPES[i].piece, 4u << 20, SHAPES[i].tail);
    for (int m = 0; m < TL_MTB_RATE__COUNT; m++) {
      tl_parsed p;
      tl_parsed_init(&p);
      double t0 = now();
      assert_int_equal(tl_mtb_rate(R[m], s, &p), TL_OK);
      double dt = now() - t0;
      if (p.status != SHAPES[i].st[m])
        fail_msg("runaway '%s' mode %d: %s", SHAPES[i].piece, m, tl_pstatus_name(p.status));
      if (dt > 2.0 * SLOWDOWN) fail_msg("runaway '%s' mode %d: %.2f s", SHAPES[i].piece, m, dt);
      tl_parsed_release(&p);
    }
    free(s);
  }
  static const char *const PRE[] = {"[[", "[", "Rating: [[", "[[1.", "Rating:", "[[ "};
  for (size_t i = 0; i < sizeof RUNS / sizeof RUNS[0]; i++)
    for (size_t j = 0; j < sizeof PRE / sizeof PRE[0]; j++) {
      char *run = repeat(RUNS[i], 4u << 20, "");
      size_t pl = strlen(PRE[j]), rl = strlen(run);
      char *s = malloc(pl + rl + 1);
      assert_non_null(s);
      memcpy(s, PRE[j], pl);
      memcpy(s + pl, run, rl + 1);
      free(run);
      for (int m = 0; m < TL_MTB_RATE__COUNT; m++) {
        tl_parsed p;
        tl_parsed_init(&p);
        double t0 = now();
        assert_int_equal(tl_mtb_rate(R[m], s, &p), TL_OK);
        double dt = now() - t0;
        assert_int_equal(p.status, TL_PS_NO_ANSWER); /* never closed */
        if (dt > 2.0 * SLOWDOWN) fail_msg("'%s' + run '%s' mode %d: %.2f s", PRE[j], RUNS[i], m, dt);
        tl_parsed_release(&p);
      }
      free(s);
    }
}

/* ---- a regex resource limit is a status ------------------------------------------------------ */

static void test_parse_limit(void **state) {
  (void)state;
  tl_rx_test_set_match_limit(1);
  for (int m = 0; m < TL_MTB_RATE__COUNT; m++) {
    tl_parsed p;
    tl_parsed_init(&p);
    assert_int_equal(tl_mtb_rate(R[m], "Rating: [[7]]", &p), TL_OK);
    assert_int_equal(p.status, TL_PS_PARSE_LIMIT);
    assert_string_equal(p.rule, "parse_limit");
    assert_null(p.answer);
    assert_int_equal(p.value, 0);
    tl_parsed_release(&p);
  }
  tl_rx_test_set_match_limit(0);
  expect(S, "Rating: [[7]]", TL_PS_OK, "rating_label", "7", 7000, "after the limit");
}

/* ---- names ---------------------------------------------------------------------------------- */

static void test_names(void **state) {
  (void)state;
  static const char *const NAMES[] = {"mtbench101", "mtbench101-opencompass", "fastchat",
                                      "judgearena"};
  for (int m = 0; m < TL_MTB_RATE__COUNT; m++) {
    assert_string_equal(tl_mtb_rate_mode_name((tl_mtb_rate_mode)m), NAMES[m]);
    assert_int_equal(tl_mtb_rate_mode_from_name(NAMES[m]), m);
    assert_int_equal((int)tl_mtb_rater_mode(R[m]), m);
  }
  assert_int_equal(tl_mtb_rate_mode_from_name("mtbench101-rating"), -1);
  assert_int_equal(tl_mtb_rate_mode_from_name("FastChat"), -1);
  assert_int_equal(tl_mtb_rate_mode_from_name(NULL), -1);
  assert_string_equal(tl_mtb_rate_mode_name(TL_MTB_RATE__COUNT), "unknown");
  tl_err err;
  assert_null(tl_mtb_rater_new(TL_MTB_RATE__COUNT, &err));
  assert_non_null(strstr(err.msg, "unknown"));
}

/* ---- shared: judge_parser_cases.json --------------------------------------------------------- */

/* Our strict mode on each input of the file (the file has no column for it). */
static const struct {
  const char *text;
  tl_pstatus st;
  const char *rule;
  int64_t value;
} OURS[] = {
    {"Reasoning...\nRating: [[7]]", TL_PS_OK, "rating_label", 7000},
    {"rating: [[10]]", TL_PS_OK, "rating_label", 10000},
    {"I would rate this [[6]] overall.", TL_PS_OK, "double_bracket", 6000},
    {"See section [3] for details...\nRating: [[6]]", TL_PS_OK, "rating_label", 6000},
    {"Rating: [[0]]", TL_PS_OUT_OF_RANGE, "out_of_range", 0},
    {"Rating: [[11]]", TL_PS_OUT_OF_RANGE, "out_of_range", 0},
    {"Rating: [6]", TL_PS_NO_ANSWER, "no_rating", 0},
    {"No rating present.", TL_PS_NO_ANSWER, "no_rating", 0},
    {"<think>Perhaps [[2]]...</think> Rating: [[9]]", TL_PS_OK, "rating_label", 9000},
    {"As instructed ('Rating: [[score]]', for example 'Rating: [[6]]'), my verdict is Rating: [[3]]",
     TL_PS_OK, "rating_label", 3000},
    {"Rating: [[8.5]]", TL_PS_NO_ANSWER, "no_rating", 0},
    {"Rating: [[ 7 ]]", TL_PS_OK, "rating_label", 7000},
    {"Rating: [[7]]\n\nNote: earlier draft said [[4]].", TL_PS_OK, "rating_label", 7000},
    {"<think>unterminated reasoning with [[2]]", TL_PS_UNTERMINATED, "unterminated_think", 0},
    {"Rating: [[07]]", TL_PS_OK, "rating_label", 7000},
    {"**Rating: [[10]]**", TL_PS_OK, "rating_label", 10000},
};

/* Runs mode m on text and checks it against a column value: null / -1 -> no_answer, a number
 * -> ok with that value, "EXCEPTION:SyntaxError" -> skipped. */
static void check_column(int m, const char *text, const cJSON *col, const char *colname,
                         int minus_one_is_none) {
  if (!col) fail_msg("a case lacks the column '%s'", colname);
  tl_parsed p;
  tl_parsed_init(&p);
  assert_int_equal(tl_mtb_rate(R[m], text, &p), TL_OK);
  if (cJSON_IsNull(col) || (minus_one_is_none && cJSON_IsNumber(col) && col->valuedouble == -1)) {
    if (p.status != TL_PS_NO_ANSWER || p.answer)
      fail_msg("%s: '%s': %s, want no_answer", colname, text, tl_pstatus_name(p.status));
  } else if (cJSON_IsNumber(col)) {
    int64_t want = (int64_t)llround(col->valuedouble * TL_MTB_RATING_SCALE);
    if (p.status != TL_PS_OK || p.value != want)
      fail_msg("%s: '%s': %s value %lld, want ok %lld", colname, text, tl_pstatus_name(p.status),
               (long long)p.value, (long long)want);
  } else if (cJSON_IsString(col) && strcmp(col->valuestring, "EXCEPTION:SyntaxError") == 0) {
    if (p.status != TL_PS_SKIPPED || strcmp(p.rule, "literal_eval_error") != 0)
      fail_msg("%s: '%s': %s/%s, want skipped/literal_eval_error", colname, text,
               tl_pstatus_name(p.status), p.rule);
  } else {
    fail_msg("%s: '%s': a column value this test does not know", colname, text);
  }
  tl_parsed_release(&p);
}

static void test_shared_cases(void **state) {
  (void)state;
  TU_NEED_SHARED(path, "mtbench101/judge_parser_cases.json");
  tl_buf b;
  tl_buf_init(&b);
  tl_err err;
  assert_int_equal(tl_file_read(path, 0, &b, &err), TL_OK);
  cJSON *doc = cJSON_Parse(b.data);
  tl_buf_release(&b);
  assert_non_null(doc);
  const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
  assert_true(cJSON_IsArray(cases));
  int n = 0, ja_differ = 0;
  int used[sizeof OURS / sizeof OURS[0]] = {0};
  const cJSON *c;
  cJSON_ArrayForEach(c, cases) {
    const cJSON *jt = cJSON_GetObjectItemCaseSensitive(c, "judge_output");
    assert_true(cJSON_IsString(jt));
    const char *text = jt->valuestring;
    check_column(OC, text, cJSON_GetObjectItemCaseSensitive(c, "opencompass_first_single_bracket"),
                 "opencompass_first_single_bracket", 0);
    check_column(FC, text,
                 cJSON_GetObjectItemCaseSensitive(c, "fastchat_first_double_then_single_or_-1"),
                 "fastchat_first_double_then_single_or_-1", 1);
    /* JudgeArena: the file has the parse of the raw text and the parse after think stripping;
     * our mode strips (mtb_rating.h). They agree on every case of the file, so both columns are
     * checked; a case where they differ would be checked against the stripped column only. */
    const cJSON *raw = cJSON_GetObjectItemCaseSensitive(c, "judgearena_last_double_1_10");
    const cJSON *stripped = cJSON_GetObjectItemCaseSensitive(c, "judgearena_last_after_strip_think");
    check_column(JA, text, stripped, "judgearena_last_after_strip_think", 0);
    char *rs = raw ? cJSON_PrintUnformatted(raw) : NULL, *ss = cJSON_PrintUnformatted(stripped);
    if (rs && ss && strcmp(rs, ss) == 0) check_column(JA, text, raw, "judgearena_last_double_1_10", 0);
    else ja_differ++;
    free(rs);
    free(ss);
    /* ours */
    size_t k = 0;
    while (k < sizeof OURS / sizeof OURS[0] && strcmp(OURS[k].text, text) != 0) k++;
    if (k == sizeof OURS / sizeof OURS[0]) fail_msg("no strict expectation for '%s'", text);
    used[k] = 1;
    tl_parsed p;
    tl_parsed_init(&p);
    assert_int_equal(tl_mtb_rate(R[S], text, &p), TL_OK);
    if (p.status != OURS[k].st || strcmp(p.rule, OURS[k].rule) != 0 || p.value != OURS[k].value)
      fail_msg("strict: '%s': %s/%s %lld, want %s/%s %lld", text, tl_pstatus_name(p.status),
               p.rule, (long long)p.value, tl_pstatus_name(OURS[k].st), OURS[k].rule,
               (long long)OURS[k].value);
    tl_parsed_release(&p);
    n++;
  }
  cJSON_Delete(doc);
  print_message("%d cases; the two JudgeArena columns differ on %d\n", n, ja_differ);
  assert_int_equal(ja_differ, 0);
  assert_int_equal(n, (int)(sizeof OURS / sizeof OURS[0]));
  for (size_t k = 0; k < sizeof OURS / sizeof OURS[0]; k++)
    if (!used[k]) fail_msg("strict expectation for '%s' matches no case of the file", OURS[k].text);
}

int main(int argc, char **argv) {
  const struct CMUnitTest fixture[] = {
      cmocka_unit_test(test_table),     cmocka_unit_test(test_reuse),
      cmocka_unit_test(test_digit_limit), cmocka_unit_test(test_strip),
      cmocka_unit_test(test_runaway),   cmocka_unit_test(test_parse_limit),
      cmocka_unit_test(test_names),
  };
  const struct CMUnitTest shared[] = {cmocka_unit_test(test_shared_cases)};
  return TU_SHARED_GROUP(argc, argv, fixture, shared, setup, teardown);
}
