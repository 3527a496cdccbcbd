/* test_gen.c - the generative exact-match module (docs/GEN.md): items (a text, a number, a list of
 * accepted texts; bad items named), the strict mode's extraction and normalisation table-driven
 * (nested braces, several \boxed, a cut-off \boxed, "0" vs "90", "3" vs "3.0", units, no answer),
 * and the exact mode as lm-eval's exact_match with each of its options (the expected values of
 * the regexes_to_ignore cases are Python's re.sub, checked with python3). */
#include "testutil.h"
#include "gen.h"

static tl_gen_item item_of(const char *json) {
  cJSON *o = cJSON_Parse(json);
  assert_non_null(o);
  tl_gen_item it;
  char msg[256];
  tl_status st = tl_gen_item_from_json(o, &it, msg, sizeof msg);
  if (st) fail_msg("item %s: %s", json, msg);
  cJSON_Delete(o);
  return it;
}

static void test_items(void **state) {
  (void)state;
  static const struct {
    const char *json;
    int n_gold; /* -1: refused */
    const char *gold; /* the golds joined, or the refusal's words */
  } T[] = {
      {"{\"id\":\"a\",\"answer\":\"3\"}", 1, "3"},
      {"{\"id\":7,\"question\":\"q\",\"answer\":3}", 1, "3"},
      {"{\"id\":\"a\",\"question\":null,\"answer\":[\"1/2\",\"0.5\"]}", 2, "1/2 || 0.5"},
      {"{\"id\":\"a\",\"answer\":[]}", -1, "empty list"},
      {"{\"id\":\"a\",\"answer\":[\"x\",true]}", -1, "answer 1 is not a string"},
      {"{\"id\":\"a\",\"answer\":{}}", -1, "not a string, a number or a list"},
      {"{\"id\":\"a\"}", -1, "missing field 'answer'"},
      {"{\"answer\":\"3\"}", -1, "missing field 'id'"},
      {"{\"id\":\"\",\"answer\":\"3\"}", -1, "field 'id'"},
      {"{\"id\":\"a\",\"question\":5,\"answer\":\"3\"}", -1, "'question' is not a string"},
      {"{\"id\":\"a\",\"task\":\"\",\"answer\":\"3\"}", -1, "'task'"},
  };
  for (size_t i = 0; i < sizeof T / sizeof *T; i++) {
    cJSON *o = cJSON_Parse(T[i].json);
    tl_gen_item it;
    char msg[256] = "";
    tl_status st = tl_gen_item_from_json(o, &it, msg, sizeof msg);
    cJSON_Delete(o);
    if (T[i].n_gold < 0) {
      if (st != TL_EINPUT || !strstr(msg, T[i].gold)) fail_msg("case %zu: want '%s', got %d '%s'", i, T[i].gold, st, msg);
      continue;
    }
    assert_int_equal(st, TL_OK);
    assert_int_equal(it.n_gold, T[i].n_gold);
    assert_string_equal(it.gold_text, T[i].gold);
    assert_string_equal(it.task, "default");
    tl_gen_item_release(&it);
  }
}

/* One strict case: the reply, the item's answer (JSON), and what the mode must give. */
typedef struct {
  const char *resp;
  const char *gold_json;
  const char *status;
  const char *rule;
  const char *answer; /* NULL: none */
  int correct;
} strict_case;

static void check_case(const tl_gen_parsers *P, tl_gen_mode m, size_t i, const strict_case *c) {
  char json[512];
  snprintf(json, sizeof json, "{\"id\":\"x\",\"answer\":%s}", c->gold_json);
  tl_gen_item it = item_of(json);
  tl_parsed pr;
  tl_parsed_init(&pr);
  assert_int_equal(tl_gen_score(P, m, &it, c->resp, &pr), TL_OK);
  if (strcmp(tl_pstatus_name(pr.status), c->status) || strcmp(pr.rule, c->rule) || pr.correct != c->correct ||
      (c->answer == NULL) != (pr.answer == NULL) || (c->answer && strcmp(c->answer, pr.answer)))
    fail_msg("%s case %zu (%s): want %s/%s/'%s'/%d, got %s/%s/'%s'/%d", tl_gen_mode_name(m), i,
             c->resp ? c->resp : "(null)", c->status, c->rule, c->answer ? c->answer : "(none)", c->correct,
             tl_pstatus_name(pr.status), pr.rule, pr.answer ? pr.answer : "(none)", pr.correct);
  tl_parsed_release(&pr);
  tl_gen_item_release(&it);
}

static void test_strict(void **state) {
  (void)state;
  static const strict_case T[] = {
      {"so the answer is $\\boxed{3}$.", "\"3\"", "ok", "boxed", "3", 1},
      /* nested braces are kept whole */
      {"\\boxed{x^{2}+\\frac{1}{2}}", "\"x^{2}+\\\\frac{1}{2}\"", "ok", "boxed", "x^{2}+\\frac{1}{2}", 1},
      {"\\boxed{\\frac{13}{9}}", "\"\\\\dfrac{13}{9}\"", "ok", "boxed", "\\frac{13}{9}", 1},
      /* several \boxed: the last; a cut-off last one: the last balanced one */
      {"first \\boxed{2}, then \\boxed{3}", "\"3\"", "ok", "boxed", "3", 1},
      {"first \\boxed{2}, then \\boxed{3}", "\"2\"", "ok", "boxed", "3", 0},
      {"\\boxed{3} and then \\boxed{4", "\"3\"", "ok", "boxed", "3", 1},
      {"\\boxed{2 oops \\boxed{3}", "\"3\"", "ok", "boxed", "3", 1},
      {"\\boxed{\\boxed{5}}", "\"5\"", "ok", "boxed", "5", 1},
      {"\\boxed{\\{1,2\\}}", "\"\\\\{1,2\\\\}\"", "ok", "boxed", "\\{1,2\\}", 1},
      /* "0" vs "90": never a substring */
      {"The answer is 90", "\"0\"", "ok", "answer_is", "90", 0},
      {"\\boxed{0}", "\"90\"", "ok", "boxed", "0", 0},
      {"The answer is 90", "\"90\"", "ok", "answer_is", "90", 1},
      /* numbers as numbers */
      {"\\boxed{3.0}", "\"3\"", "ok", "boxed", "3.0", 1},
      {"\\boxed{03}", "3", "ok", "boxed", "03", 1},
      {"\\boxed{-0.50}", "\"-.5\"", "ok", "boxed", "-0.50", 1},
      {"\\boxed{-0}", "\"0\"", "ok", "boxed", "-0", 1},
      {"\\boxed{3.1}", "\"3\"", "ok", "boxed", "3.1", 0},
      {"\\boxed{1e3}", "\"1000\"", "ok", "boxed", "1e3", 0},
      /* the answer line */
      {"Work.\nThe answer is: $5$.\n", "\"5\"", "ok", "answer_is", "$5$.", 1},
      {"Final Answer: 12\\text{ cm}^2", "\"12\"", "ok", "answer_colon", "12\\text{ cm}^2", 1},
      {"answer: 12 cm", "\"12\"", "ok", "answer_colon", "12 cm", 0},
      {"The answer is \\$5", "\"5\"", "ok", "answer_is", "\\$5", 1},
      {"The final answer is 7. Wait, the answer is 8", "\"8\"", "ok", "answer_is", "8", 1},
      {"the manswer: 4", "\"4\"", "no_answer", "none", NULL, 0},
      /* normalisation */
      {"\\boxed{\\text{Monday}}", "\"Monday\"", "ok", "boxed", "\\text{Monday}", 1},
      {"\\boxed{\\left( 1, 2 \\right)}", "\"(1,2)\"", "ok", "boxed", "\\left( 1, 2 \\right)", 1},
      {"\\boxed{x \\in [-3,8]}", "\"x \\\\in [-3,8]\"", "ok", "boxed", "x \\in [-3,8]", 1},
      {"\\boxed{\\leftarrow}", "\"arrow\"", "ok", "boxed", "\\leftarrow", 0},
      {"\\boxed{0.5}", "[\"1/2\", \"0.5\"]", "ok", "boxed", "0.5", 1},
      /* no answer: counted, never a silent wrong */
      {"I think it is 3", "\"3\"", "no_answer", "none", NULL, 0},
      {"\\boxed{3", "\"3\"", "no_answer", "none", NULL, 0},
      {"\\boxed{}", "\"3\"", "no_answer", "boxed", "", 0},
      {"The answer is 5\nso the answer is", "\"5\"", "no_answer", "answer_is", "", 0},
      {"", "\"\"", "no_answer", "none", NULL, 0},
      {NULL, "\"3\"", "missing", "missing", NULL, 0},
  };
  tl_gen_parsers P;
  tl_err err = {0};
  assert_int_equal(tl_gen_parsers_init(&P, NULL, 0, false, false, false, &err), TL_OK);
  for (size_t i = 0; i < sizeof T / sizeof *T; i++) check_case(&P, TL_GEN_STRICT, i, &T[i]);
  tl_gen_parsers_release(&P);
}

static void test_normalise(void **state) {
  (void)state;
  static const char *const T[][2] = {
      {"$\\dfrac{1}{2}$", "\\frac{1}{2}"}, {"\\tfrac12", "\\frac12"}, {" 3 . ", "3"},
      {"5\\text{ cm}", "5"}, {"\\text{(A)}", "(A)"}, {"\\mbox{yes}", "yes"},
      {"\\left[ 1 \\right]", "[1]"}, {"1,\\!000", "1,000"}, {"3..", "3."},
  };
  for (size_t i = 0; i < sizeof T / sizeof *T; i++) {
    char *n = tl_gen_normalise(T[i][0], strlen(T[i][0]));
    assert_non_null(n);
    if (strcmp(n, T[i][1])) fail_msg("normalise '%s': want '%s', got '%s'", T[i][0], T[i][1], n);
    free(n);
  }
  assert_true(tl_gen_equal("3", "3.000"));
  assert_true(tl_gen_equal("+3", "3"));
  assert_true(tl_gen_equal(".5", "0.5"));
  assert_false(tl_gen_equal("3", "30"));
  assert_false(tl_gen_equal("1/2", "0.5"));
  assert_false(tl_gen_equal("-", "0"));
  assert_false(tl_gen_equal(".", "0"));
}

/* exact: lm-eval's exact_match under each set of options. */
static void test_exact(void **state) {
  (void)state;
  static const struct {
    const char *rx[4];
    int nrx;
    bool icase, ipunct, inum;
    strict_case c;
  } T[] = {
      /* defaults: the strings as they are */
      {{0}, 0, 0, 0, 0, {"3", "\"3\"", "ok", "string_equal", "3", 1}},
      {{0}, 0, 0, 0, 0, {" 3", "\"3\"", "ok", "string_equal", " 3", 0}},
      {{0}, 0, 0, 0, 0, {"3.", "\"3\"", "ok", "string_equal", "3.", 0}},
      {{0}, 0, 0, 0, 0, {"\\boxed{3}", "\"3\"", "ok", "string_equal", "\\boxed{3}", 0}},
      {{0}, 0, 0, 0, 0, {"3.0", "\"3\"", "ok", "string_equal", "3.0", 0}},
      {{0}, 0, 0, 0, 0, {"90", "\"0\"", "ok", "string_equal", "90", 0}},
      {{0}, 0, 0, 0, 0, {"", "\"\"", "ok", "string_equal", "", 1}},
      {{0}, 0, 0, 0, 0, {"b", "[\"a\", \"b\"]", "ok", "string_equal", "b", 1}},
      {{0}, 0, 0, 0, 0, {NULL, "\"3\"", "missing", "missing", NULL, 0}},
      /* options */
      {{0}, 0, 1, 0, 0, {"ABC", "\"abc\"", "ok", "string_equal_after_options", "abc", 1}},
      {{0}, 0, 1, 0, 0, {"\xc3\x89t\xc3\xa9", "\"\xc3\xa9t\xc3\xa9\"", "ok", "string_equal_after_options",
                         "\xc3\xa9t\xc3\xa9", 1}},
      {{0}, 0, 0, 1, 0, {"3.", "\"3\"", "ok", "string_equal_after_options", "3", 1}},
      {{0}, 0, 0, 1, 0, {"!wow~", "\"wow\"", "ok", "string_equal_after_options", "wow", 1}},
      {{0}, 0, 0, 1, 0, {"\"a-b\"", "\"ab\"", "ok", "string_equal_after_options", "ab", 1}},
      {{0}, 0, 0, 0, 1, {"a1", "\"a2\"", "ok", "string_equal_after_options", "a", 1}},
      /* gsm8k's: regexes first, then the case */
      {{",", "\\$", "(?s).*#### ", "\\.$"}, 4, 1, 0, 0,
       {"so\n#### $1,000.", "\"1000\"", "ok", "string_equal_after_options", "1000", 1}},
      /* re.sub's empty matches (Python 3.7+): re.sub('(?=x)|x', '', 'axb') == 'ab',
       * re.sub('x*', '', 'axxb') == 'ab', re.sub('x*?', '', 'axb') == 'ab' */
      {{"(?=x)|x"}, 1, 0, 0, 0, {"axb", "\"ab\"", "ok", "string_equal_after_options", "ab", 1}},
      {{"x*"}, 1, 0, 0, 0, {"axxb", "\"ab\"", "ok", "string_equal_after_options", "ab", 1}},
      {{"x*?"}, 1, 0, 0, 0, {"axb", "\"ab\"", "ok", "string_equal_after_options", "ab", 1}},
      {{"^ +"}, 1, 0, 0, 0, {"  3 ", "\"3 \"", "ok", "string_equal_after_options", "3 ", 1}},
      {{"\\s"}, 1, 0, 0, 0, {"\xc3\xa9 \xc3\xa9", "\"\xc3\xa9\xc3\xa9\"", "ok", "string_equal_after_options",
                             "\xc3\xa9\xc3\xa9", 1}},
  };
  for (size_t i = 0; i < sizeof T / sizeof *T; i++) {
    tl_gen_parsers P;
    tl_err err = {0};
    if (tl_gen_parsers_init(&P, T[i].rx, T[i].nrx, T[i].icase, T[i].ipunct, T[i].inum, &err))
      fail_msg("case %zu: %s", i, err.msg);
    check_case(&P, TL_GEN_EXACT, i, &T[i].c);
    tl_gen_parsers_release(&P);
  }
  tl_gen_parsers P;
  tl_err err = {0};
  const char *bad[] = {"("};
  assert_int_equal(tl_gen_parsers_init(&P, bad, 1, false, false, false, &err), TL_EREGEX);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_items),
      cmocka_unit_test(test_strict),
      cmocka_unit_test(test_normalise),
      cmocka_unit_test(test_exact),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
