/* test_mcq.c - the generic multiple-choice module: items (letter, index and text golds; bad
 * items named), each scoring mode's extraction table-driven (the "0" vs "90" substring trap,
 * letters inside words, several answers, "ANSWER: B" forms, lowercase, parentheses), and
 * log-likelihood replies (acc, acc_norm, acc_bytes, ties, malformed). */
#include <math.h>

#include "testutil.h"
#include "mcq.h"

static tl_mcq_item item_of(const char *json) {
  cJSON *o = cJSON_Parse(json);
  assert_non_null(o);
  tl_mcq_item it;
  char msg[256];
  tl_status st = tl_mcq_item_from_json(o, &it, msg, sizeof msg);
  if (st) fail_msg("item %s: %s", json, msg);
  cJSON_Delete(o);
  return it;
}

static void test_items(void **state) {
  (void)state;
  static const struct {
    const char *json;
    int gold; /* -1: refused */
    const char *msg;
  } T[] = {
      {"{\"id\":\"a\",\"question\":\"q\",\"choices\":[\"x\",\"y\",\"z\"],\"answer\":\"B\"}", 1, NULL},
      {"{\"id\":\"a\",\"question\":\"q\",\"choices\":[\"x\",\"y\",\"z\"],\"answer\":2}", 2, NULL},
      {"{\"id\":\"a\",\"question\":\"q\",\"choices\":[\"x\",\"y\",\"z\"],\"answer\":0}", 0, NULL},
      {"{\"id\":\"a\",\"question\":\"q\",\"choices\":[\"x\",\"y\",\"z\"],\"answer\":\"z\"}", 2, NULL},
      {"{\"id\":5,\"question\":\"q\",\"choices\":[\"B\",\"A\"],\"answer\":\"A\"}", 0, NULL}, /* a letter first */
      {"{\"id\":\"a\",\"question\":\"q\",\"choices\":[\"x\",\"y\"],\"answer\":\"C\"}", -1, "neither a letter A-B"},
      {"{\"id\":\"a\",\"question\":\"q\",\"choices\":[\"x\",\"y\"],\"answer\":2}", -1, "outside 0..1"},
      {"{\"id\":\"a\",\"question\":\"q\",\"choices\":[\"x\",\"y\"],\"answer\":-1}", -1, "outside 0..1"},
      {"{\"id\":\"a\",\"question\":\"q\",\"choices\":[\"x\",\"x\"],\"answer\":\"x\"}", -1, "the text of 2 choices"},
      {"{\"id\":\"a\",\"question\":\"q\",\"choices\":[\"x\"],\"answer\":0}", -1, "has 1 choice"},
      {"{\"id\":\"a\",\"question\":\"q\",\"choices\":[\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\"],"
       "\"answer\":0}", -1, "has 9 choices"},
      {"{\"id\":\"a\",\"question\":\"q\",\"choices\":[\"x\",3],\"answer\":0}", -1, "choice 1 is not a string"},
      {"{\"id\":\"a\",\"question\":\"q\",\"answer\":0}", -1, "missing field 'choices'"},
      {"{\"question\":\"q\",\"choices\":[\"x\",\"y\"],\"answer\":0}", -1, "missing field 'id'"},
      {"{\"id\":\"a\",\"question\":\"q\",\"choices\":[\"x\",\"y\"],\"answer\":true}", -1, "not a letter"},
      {"{\"id\":\"a\",\"question\":\"q\",\"choices\":[\"x\",\"y\"],\"answer\":0,\"task\":7}", -1, "'task'"},
  };
  for (size_t i = 0; i < sizeof T / sizeof *T; i++) {
    cJSON *o = cJSON_Parse(T[i].json);
    tl_mcq_item it;
    char msg[256] = "";
    tl_status st = tl_mcq_item_from_json(o, &it, msg, sizeof msg);
    cJSON_Delete(o);
    if (T[i].gold < 0) {
      if (st != TL_EINPUT || !strstr(msg, T[i].msg)) fail_msg("case %zu: want refusal '%s', got %d '%s'", i, T[i].msg, st, msg);
      continue;
    }
    assert_int_equal(st, TL_OK);
    assert_int_equal(it.gold, T[i].gold);
    assert_int_equal(it.gold_letter[0], 'A' + T[i].gold);
    assert_string_equal(it.task, "default");
    tl_mcq_item_release(&it);
  }
}

/* The extraction cases: one item each ("deg": choices 0, 90, 180, 45, gold B = 90; "city":
 * Berlin, Paris, Rome, Madrid, gold B), a reply, and per mode the status, answer and rule. */
#define DEG "{\"id\":\"d\",\"question\":\"q\",\"choices\":[\"0\",\"90\",\"180\",\"45\"],\"answer\":\"90\"}"
#define CITY "{\"id\":\"c\",\"question\":\"q\",\"choices\":[\"Berlin\",\"Paris\",\"Rome\",\"Madrid\"],\"answer\":1}"

typedef struct {
  const char *item;
  const char *reply;
  tl_mcq_mode mode;
  tl_pstatus status;
  const char *answer; /* NULL: none */
  int correct;
  const char *rule;
} xcase;

static const xcase X[] = {
    /* strict (the shared letter parser) */
    {CITY, "Answer: B", TL_MCQ_STRICT, TL_PS_OK, "B", 1, "explicit_answer_letter"},
    {CITY, "ANSWER: B", TL_MCQ_STRICT, TL_PS_OK, "B", 1, "explicit_answer_letter"},
    {CITY, "answer: (b)", TL_MCQ_STRICT, TL_PS_OK, "B", 1, "explicit_answer_letter"},
    {CITY, "B", TL_MCQ_STRICT, TL_PS_OK, "B", 1, "opening_letter"},
    {CITY, "The capital is Paris.", TL_MCQ_STRICT, TL_PS_OK, "B", 1, "first_sentence_text"},
    {CITY, "Answer: A or B", TL_MCQ_STRICT, TL_PS_AMBIGUOUS, NULL, 0, "explicit_answer_letter"},
    {CITY, "Answer: A\nWait.\nAnswer: B", TL_MCQ_STRICT, TL_PS_OK, "B", 1, "explicit_answer_letter"},
    {CITY, "Absolutely Brilliant Choice", TL_MCQ_STRICT, TL_PS_NO_ANSWER, NULL, 0, "none"},
    {DEG, "It is 90 degrees.", TL_MCQ_STRICT, TL_PS_OK, "B", 1, "first_sentence_text"},
    {DEG, "It is 0 degrees.", TL_MCQ_STRICT, TL_PS_OK, "A", 0, "first_sentence_text"},
    {CITY, "<think>Answer: A</think>Answer: B", TL_MCQ_STRICT, TL_PS_OK, "B", 1, "explicit_answer_letter"},
    {CITY, NULL, TL_MCQ_STRICT, TL_PS_MISSING, NULL, 0, NULL},
    /* lm-eval: "Answer: ([A-D])", the first match, case-sensitive */
    {CITY, "Answer: B", TL_MCQ_LMEVAL, TL_PS_OK, "B", 1, "regex_first_match"},
    {CITY, "Answer: A\nAnswer: B", TL_MCQ_LMEVAL, TL_PS_OK, "A", 0, "regex_first_match"},
    {CITY, "ANSWER: B", TL_MCQ_LMEVAL, TL_PS_NO_ANSWER, NULL, 0, "no_match"},
    {CITY, "answer: B", TL_MCQ_LMEVAL, TL_PS_NO_ANSWER, NULL, 0, "no_match"},
    {CITY, "Answer: (B)", TL_MCQ_LMEVAL, TL_PS_NO_ANSWER, NULL, 0, "no_match"},
    {CITY, "B", TL_MCQ_LMEVAL, TL_PS_NO_ANSWER, NULL, 0, "no_match"},
    {CITY, "Final Answer: Bernard", TL_MCQ_LMEVAL, TL_PS_OK, "B", 1, "regex_first_match"}, /* a letter in a word */
    {CITY, "<think>Answer: A</think>Answer: B", TL_MCQ_LMEVAL, TL_PS_OK, "A", 0, "regex_first_match"},
    /* inspect_ai: the answer line, else anywhere; the chosen set must be exactly the gold */
    {CITY, "Reasoning...\nANSWER: B", TL_MCQ_INSPECT, TL_PS_OK, "B", 1, "answer_line"},
    {CITY, "answer: b", TL_MCQ_INSPECT, TL_PS_OK, "B", 1, "answer_line"},
    {CITY, "ANSWER : B\n", TL_MCQ_INSPECT, TL_PS_OK, "B", 1, "answer_line"},
    {CITY, "ANSWER: A, B", TL_MCQ_INSPECT, TL_PS_AMBIGUOUS, "A, B", 0, "answer_line"},
    {CITY, "ANSWER: AB", TL_MCQ_INSPECT, TL_PS_AMBIGUOUS, "A, B", 0, "answer_line"},
    {CITY, "My ANSWER: B.", TL_MCQ_INSPECT, TL_PS_OK, "B", 1, "answer_anywhere"},
    /* the letters of a word name choices: "Berlin" (A) reads as B (E, R, L, I, N are no choices) */
    {CITY, "The answer: Berlin!", TL_MCQ_INSPECT, TL_PS_OK, "B", 1, "answer_anywhere"},
    {CITY, "The answer: Madrid!", TL_MCQ_INSPECT, TL_PS_AMBIGUOUS, "A, D", 0, "answer_anywhere"},
    /* the blank after the colon is the group, then "(" ends it: nothing chosen */
    {CITY, "ANSWER: (B)", TL_MCQ_INSPECT, TL_PS_NO_ANSWER, NULL, 0, "answer_anywhere"},
    {CITY, "B", TL_MCQ_INSPECT, TL_PS_NO_ANSWER, NULL, 0, "none"},
    {CITY, "ANSWER: Z", TL_MCQ_INSPECT, TL_PS_NO_ANSWER, NULL, 0, "answer_line"},
    /* HELM: the stripped completion must be a key */
    {CITY, " B", TL_MCQ_HELM, TL_PS_OK, "B", 1, "mapped_key"},
    {CITY, "B\n", TL_MCQ_HELM, TL_PS_OK, "B", 1, "mapped_key"},
    {CITY, " A", TL_MCQ_HELM, TL_PS_OK, "A", 0, "mapped_key"},
    {CITY, "b", TL_MCQ_HELM, TL_PS_NO_ANSWER, NULL, 0, "not_a_key"},
    {CITY, "B.", TL_MCQ_HELM, TL_PS_NO_ANSWER, NULL, 0, "not_a_key"},
    {CITY, "E", TL_MCQ_HELM, TL_PS_NO_ANSWER, NULL, 0, "not_a_key"},
    {CITY, "Answer: B", TL_MCQ_HELM, TL_PS_NO_ANSWER, NULL, 0, "not_a_key"},
    {CITY, "  ", TL_MCQ_HELM, TL_PS_NO_ANSWER, NULL, 0, "empty"},
    /* VLMEvalKit: a letter standing alone, else exactly one choice text inside the reply */
    {CITY, "(B) Paris", TL_MCQ_VLMEVAL, TL_PS_OK, "B", 1, "option_letter"},
    {CITY, "The answer is B.", TL_MCQ_VLMEVAL, TL_PS_OK, "B", 1, "option_letter"},
    {CITY, "A map shows it: B", TL_MCQ_VLMEVAL, TL_PS_NO_ANSWER, NULL, 0, "judge_needed"}, /* two letters */
    {CITY, "I pick paris", TL_MCQ_VLMEVAL, TL_PS_OK, "B", 1, "choice_text"},
    {CITY, "Bb", TL_MCQ_VLMEVAL, TL_PS_NO_ANSWER, NULL, 0, "judge_needed"},
    {CITY, "Cannot determine the answer", TL_MCQ_VLMEVAL, TL_PS_NO_ANSWER, "Z", 0, "reject_z"},
    {CITY, "Z", TL_MCQ_VLMEVAL, TL_PS_NO_ANSWER, "Z", 0, "option_z"},
    {CITY, "b", TL_MCQ_VLMEVAL, TL_PS_NO_ANSWER, NULL, 0, "judge_needed"},
    {DEG, "The answer is 90", TL_MCQ_VLMEVAL, TL_PS_AMBIGUOUS, NULL, 0, "judge_needed"}, /* "0" is in "90" */
    {DEG, "A right angle is 90 degrees", TL_MCQ_VLMEVAL, TL_PS_OK, "A", 0, "option_letter"}, /* the article */
    {DEG, "It is 180", TL_MCQ_VLMEVAL, TL_PS_AMBIGUOUS, NULL, 0, "judge_needed"},
    /* acc_norm on a text reply: strict's result */
    {CITY, "Answer: B", TL_MCQ_ACC_NORM, TL_PS_OK, "B", 1, "explicit_answer_letter"},
};

static void test_extraction(void **state) {
  (void)state;
  tl_mcq_parsers P;
  tl_err err;
  assert_int_equal(tl_mcq_parsers_init(&P, NULL, &err), TL_OK);
  tl_parsed pr;
  tl_parsed_init(&pr);
  int bad = 0;
  for (size_t i = 0; i < sizeof X / sizeof *X; i++) {
    tl_mcq_item it = item_of(X[i].item);
    assert_int_equal(tl_mcq_score(&P, X[i].mode, &it, X[i].reply, &pr), TL_OK);
    const int ok = pr.status == X[i].status && pr.correct == X[i].correct &&
                   (X[i].answer ? pr.answer && !strcmp(pr.answer, X[i].answer) : !pr.answer) &&
                   (!X[i].rule || (pr.rule && !strcmp(pr.rule, X[i].rule)));
    if (!ok) {
      fprintf(stderr, "case %zu (%s, %s): got %s %s %d %s\n", i, tl_mcq_mode_name(X[i].mode),
              X[i].reply ? X[i].reply : "(null)", tl_pstatus_name(pr.status), pr.answer ? pr.answer : "-", pr.correct,
              pr.rule ? pr.rule : "-");
      bad++;
    }
    tl_mcq_item_release(&it);
  }
  tl_parsed_release(&pr);
  tl_mcq_parsers_release(&P);
  assert_int_equal(bad, 0);
}

/* A job's own lm-eval pattern: two groups, the first non-empty one is taken; stripped. */
static void test_lmeval_pattern(void **state) {
  (void)state;
  tl_mcq_parsers P;
  tl_err err;
  assert_int_equal(tl_mcq_parsers_init(&P, "(?i)answer\\s*(?:is|:)\\s*\\(?([A-D])\\)?|\\*\\*([A-D])\\*\\*", &err), TL_OK);
  tl_mcq_item it = item_of(CITY);
  tl_parsed pr;
  tl_parsed_init(&pr);
  assert_int_equal(tl_mcq_score(&P, TL_MCQ_LMEVAL, &it, "so **B** it is", &pr), TL_OK);
  assert_string_equal(pr.answer, "B");
  assert_int_equal(pr.correct, 1);
  assert_int_equal(tl_mcq_score(&P, TL_MCQ_LMEVAL, &it, "the answer is (a)", &pr), TL_OK);
  assert_string_equal(pr.answer, "a"); /* exact_match: not the gold, and not B either */
  assert_int_equal(pr.correct, 0);
  /* every group empty: lm-eval's fallback "[invalid]" */
  tl_mcq_parsers_release(&P);
  assert_int_equal(tl_mcq_parsers_init(&P, "x(A?)(B?)", &err), TL_OK);
  assert_int_equal(tl_mcq_score(&P, TL_MCQ_LMEVAL, &it, "x", &pr), TL_OK);
  assert_int_equal(pr.status, TL_PS_NO_ANSWER);
  assert_string_equal(pr.rule, "no_match");
  tl_mcq_parsers_release(&P);
  assert_int_not_equal(tl_mcq_parsers_init(&P, "(unclosed", &err), TL_OK);
  tl_parsed_release(&pr);
  tl_mcq_item_release(&it);
}

static void test_loglik(void **state) {
  (void)state;
  tl_mcq_parsers P;
  tl_err err;
  assert_int_equal(tl_mcq_parsers_init(&P, NULL, &err), TL_OK);
  /* choices of 1, 3 and 6 characters; "é" is 1 character and 2 bytes */
  tl_mcq_item it = item_of("{\"id\":\"l\",\"question\":\"q\",\"choices\":[\"a\",\"bcd\",\"\xc3\xa9\xc3\xa9\xc3\xa9xyz\"],"
                           "\"answer\":2}");
  const struct {
    const char *ll;
    char acc, norm, bytes;
  } U[] = {
      {"[-2, -3, -5.4]", 'A', 'C', 'C'},
      {"[-1, -1, -9]", 'A', 'B', 'B'},
      {"[-1, -4.5, -9]", 'A', 'A', 'A'}, /* norm -1, -1.5, -1.5; bytes -1, -1.5, -1 (tie: A) */
      {"[-3, -6, -12]", 'A', 'B', 'C'}, /* norm -3, -2, -2 (tie: B); bytes -3, -2, -1.33 */
      {"[\"-0.5\", \"-4\", \"-9\"]", 'A', 'A', 'A'},
      {"[-1, -2]", 0, 0, 0},
  };
  tl_parsed pr;
  tl_parsed_init(&pr);
  for (size_t i = 0; i < sizeof U / sizeof *U; i++) {
    cJSON *a = cJSON_Parse(U[i].ll);
    char msg[128];
    char *text = tl_mcq_loglik_text(a, msg, sizeof msg);
    cJSON_Delete(a);
    assert_non_null(text);
    const tl_mcq_mode modes[3] = {TL_MCQ_STRICT, TL_MCQ_ACC_NORM, TL_MCQ_ACC_BYTES};
    const char want[3] = {U[i].acc, U[i].norm, U[i].bytes};
    for (int m = 0; m < 3; m++) {
      assert_int_equal(tl_mcq_score(&P, modes[m], &it, text, &pr), TL_OK);
      if (!want[m]) {
        assert_int_equal(pr.status, TL_PS_SKIPPED);
        assert_string_equal(pr.rule, "loglik_count_mismatch");
        continue;
      }
      if (!pr.answer || pr.answer[0] != want[m])
        fail_msg("case %zu mode %s: want %c, got %s", i, tl_mcq_mode_name(modes[m]), want[m], pr.answer ? pr.answer : "-");
      assert_int_equal(pr.correct, want[m] == 'C');
    }
    /* every text mode reads a loglik reply as acc */
    assert_int_equal(tl_mcq_score(&P, TL_MCQ_INSPECT, &it, text, &pr), TL_OK);
    if (U[i].acc) assert_string_equal(pr.rule, "loglik_acc");
    free(text);
  }
  /* not numbers: refused with the element named; the round trip keeps every bit */
  cJSON *a = cJSON_Parse("[-1, \"x\"]");
  char msg[128];
  assert_null(tl_mcq_loglik_text(a, msg, sizeof msg));
  assert_non_null(strstr(msg, "element 1"));
  cJSON_Delete(a);
  a = cJSON_Parse("[]");
  assert_null(tl_mcq_loglik_text(a, msg, sizeof msg));
  cJSON_Delete(a);
  a = cJSON_Parse("[-0.1, -1e-300, -12345.678901234567]");
  char *text = tl_mcq_loglik_text(a, msg, sizeof msg);
  cJSON_Delete(a);
  double v[4];
  assert_int_equal(tl_mcq_loglik_parse(text, v, 4), 3);
  assert_true(v[0] == -0.1 && v[1] == -1e-300 && v[2] == -12345.678901234567);
  free(text);
  assert_int_equal(tl_mcq_loglik_parse("Answer: B", v, 4), 0);
  assert_int_equal(tl_mcq_loglik_parse(TL_MCQ_LOGLIK_PREFIX "[1,", v, 4), -1);
  tl_parsed_release(&pr);
  tl_mcq_item_release(&it);
  tl_mcq_parsers_release(&P);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_items),
      cmocka_unit_test(test_extraction),
      cmocka_unit_test(test_lmeval_pattern),
      cmocka_unit_test(test_loglik),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
