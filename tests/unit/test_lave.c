/* test_lave.c - LAVE (lave.h): references (filter, sort/format, binary detection), the task
 * text, prompt rendering on two made-up demonstration sets, demonstration-file errors, the judge
 * rating parser (table, compat fallback, think blocks, runaway texts), the expected rating from
 * log-probabilities and its token position, the human score from votes, Krippendorff's alpha
 * (the worked example of Krippendorff 2011, hand-computed cases, and random matrices against a
 * brute-force pairwise-disagreement formula).
 * Shared group: both prompts of ../shared/data/vqa/lave_prompt_{general,binary}.txt rendered
 * byte for byte from the real demonstration files, which the project does not ship. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "testutil.h"

#include <math.h>
#include <time.h>

#include "tally/str.h"
#include "lave.h"


#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MAXR 12 /* references per table case */

/* ---- references -------------------------------------------------------------------------------- */

static size_t count_list(const char *const *v) {
  size_t n = 0;
  while (n < MAXR && v[n]) n++;
  return n;
}

static void test_filter(void **state) {
  (void)state;
  static const struct {
    const char *in[MAXR], *want[MAXR];
  } CASES[] = {
      {{"a", "a", "a", "a", "b"}, {"a", "a", "a", "a"}},      /* 1/4 = 0.25: dropped (<=) */
      {{"a", "a", "b", "b", "c"}, {"a", "a", "b", "b", "c"}}, /* 1/2: kept */
      {{"b", "a", "a", "a", "a"}, {"a", "a", "a", "a"}},      /* order kept */
      {{"a", "b", "c", "d"}, {"a", "b", "c", "d"}},           /* all counts equal */
      {{"x"}, {"x"}},
      {{"a", "a", "a", "a", "a", "a", "a", "a", "b", "b"}, {"a", "a", "a", "a", "a", "a", "a", "a"}},
      {{"a", "a", "a", "a", "a", "a", "a", "b", "b"}, {"a", "a", "a", "a", "a", "a", "a", "b", "b"}},
      {{"red", "Red", "red", "red", "red", "red"}, {"red", "red", "red", "red", "red"}}, /* case */
      {{"2", "2", "2", "2", "two", "3", "2", "2"}, {"2", "2", "2", "2", "2", "2"}},
  };
  for (size_t c = 0; c < NELEM(CASES); c++) {
    size_t n = count_list(CASES[c].in), nw = count_list(CASES[c].want), nk = 99;
    const char *kept[MAXR];
    assert_int_equal(tl_lave_filter_refs(CASES[c].in, n, kept, &nk), TL_OK);
    if (nk != nw) fail_msg("filter case %zu: kept %zu, want %zu", c, nk, nw);
    for (size_t i = 0; i < nk; i++) assert_string_equal(kept[i], CASES[c].want[i]);
  }
  size_t nk = 5;
  assert_int_equal(tl_lave_filter_refs(NULL, 0, NULL, &nk), TL_OK);
  assert_int_equal(nk, 0);
}

static void test_format(void **state) {
  (void)state;
  static const struct {
    const char *in[MAXR], *want;
  } CASES[] = {
      {{"b", "a", "a"}, "'a', 'a', 'b'"},
      {{"it's", "dog"}, "'dog', 'it's'"},                  /* quotes are not escaped */
      {{"b", "B", "a", "A"}, "'A', 'B', 'a', 'b'"},        /* code points: upper case first */
      {{"\xc3\xa9", "z", "e"}, "'e', 'z', '\xc3\xa9'"},    /* U+00E9 after 'z' */
      {{"\xf0\x9f\x98\x80", "\xef\xbd\x9e"}, "'\xef\xbd\x9e', '\xf0\x9f\x98\x80'"}, /* U+FF5E < U+1F600 */
      {{"white, red", "white", "white red"}, "'white', 'white red', 'white, red'"},
      {{"", "a", ""}, "'', '', 'a'"},
      {{"x"}, "'x'"},
  };
  for (size_t c = 0; c < NELEM(CASES); c++) {
    tl_buf b;
    tl_buf_init(&b);
    tl_buf_puts(&b, ">");
    assert_int_equal(tl_lave_format_refs(CASES[c].in, count_list(CASES[c].in), &b), TL_OK);
    if (strcmp(b.data + 1, CASES[c].want) != 0)
      fail_msg("format case %zu: [%s], want [%s]", c, b.data + 1, CASES[c].want);
    tl_buf_release(&b);
  }
  tl_buf b;
  tl_buf_init(&b);
  assert_int_equal(tl_lave_format_refs(NULL, 0, &b), TL_OK);
  assert_string_equal(b.data, "");
  tl_buf_release(&b);
}

/* Python's Counter(refs).most_common(1)[0][0].lower().rstrip('.') in ['yes', 'no'], modelled
 * with tl_utf8_lower (full Unicode lower-casing) and a pairwise count, to check the ASCII
 * shortcut of lave.c. */
static int binary_model(const char *const *refs, size_t n) {
  size_t best = 0, bestc = 0;
  for (size_t i = 0; i < n; i++) {
    size_t c = 0;
    for (size_t j = 0; j < n; j++) c += strcmp(refs[i], refs[j]) == 0;
    if (c > bestc) best = i, bestc = c;
  }
  if (!n) return 0;
  char *low = tl_utf8_lower(refs[best], strlen(refs[best]));
  assert_non_null(low);
  size_t k = strlen(low);
  while (k && low[k - 1] == '.') low[--k] = 0;
  int r = strcmp(low, "yes") == 0 || strcmp(low, "no") == 0;
  free(low);
  return r;
}

static void test_binary(void **state) {
  (void)state;
  static const struct {
    const char *in[MAXR];
    int want;
  } CASES[] = {
      {{"yes", "no", "yes", "no"}, 1},          /* tie: 'yes' occurs first */
      {{"red", "yes", "red", "yes"}, 0},        /* tie: 'red' occurs first */
      {{"yes", "red", "red", "yes"}, 1},
      {{"no", "maybe", "maybe"}, 0},
      {{"Yes."}, 1},
      {{"YES..."}, 1},
      {{"nO."}, 1},
      {{"No"}, 1},
      {{"yes "}, 0},                            /* rstrip('.') only */
      {{" yes"}, 0},
      {{"yes. "}, 0},
      {{"yess"}, 0},
      {{"y"}, 0},
      {{"."}, 0},
      {{"\xef\xbd\x99\xef\xbd\x85\xef\xbd\x93"}, 0}, /* fullwidth "yes" */
      {{"\xe2\x84\xaa" "no"}, 0},                    /* KELVIN SIGN lower-cases to 'k' */
      {{"no", "no", "no", "yes", "yes", "yes", "yes", "yes", "yes", "yes"}, 1},
      {{"2", "2", "yes"}, 0},
  };
  for (size_t c = 0; c < NELEM(CASES); c++) {
    size_t n = count_list(CASES[c].in);
    int got = tl_lave_is_binary(CASES[c].in, n);
    if (got != CASES[c].want) fail_msg("binary case %zu: %d, want %d", c, got, CASES[c].want);
    if (binary_model(CASES[c].in, n) != got) fail_msg("binary case %zu: the Python model differs", c);
  }
  assert_int_equal(tl_lave_is_binary(NULL, 0), 0);
}

/* ---- task text, made-up demonstrations, prompts ---------------------------------------------- */

static const char TASK[] =
    "You are given a question, a set of gold-standard reference answers written by experts, and a "
    "candidate answer. Please rate the accuracy of the candidate answer for the question "
    "considering the reference answers. Use a scale of 1-3, with 1 indicating an incorrect or "
    "irrelevant answer, 2 indicating an ambiguous or incomplete answer, and 3 indicating a correct "
    "answer. Give the rationale before rating.\n\nTHIS IS VERY IMPORTANT: A binary question should "
    "only be answered with 'yes' or 'no', otherwise the candidate answer is incorrect (rating=1).";
static const char TASK_CAPTION_HEAD[] =
    "You are given an image description, a question about the image, a set of gold-standard "
    "reference answers written by experts, and a candidate answer. Please rate the accuracy of the "
    "candidate answer for the question considering the reference answers and the image "
    "description. In case of discrepancy, prioritize the reference answers. Use a scale of 1-3";

static void test_task_definition(void **state) {
  (void)state;
  for (int cap = 0; cap < 2; cap++)
    for (int rat = 0; rat < 2; rat++) {
      tl_lave_opts o = TL_LAVE_OPTS_DEFAULT;
      o.use_caption = cap;
      o.rationalize = rat;
      tl_buf b;
      tl_buf_init(&b);
      assert_int_equal(tl_lave_task_definition(&o, &b), TL_OK);
      if (!cap && rat) assert_string_equal(b.data, TASK);
      if (cap) assert_memory_equal(b.data, TASK_CAPTION_HEAD, strlen(TASK_CAPTION_HEAD));
      int has = strstr(b.data, "correct answer. Give the rationale before rating.\n\n") != NULL;
      assert_int_equal(has, rat);
      if (!rat) assert_non_null(strstr(b.data, "correct answer.\n\nTHIS IS VERY IMPORTANT"));
      tl_buf_release(&b);
    }
}

/* Two sets written for this test (the real LAVE demos carry no licence and are not shipped). */
static const char GENERAL[] =
    "[\n"
    "  {\"question\": \"What is on the plate?\",\n"
    "   \"references\": [\"toast\", \"toast\", \"bread\", \"toast\", \"toast\"],\n"
    "   \"prediction\": \"bread\", \"output\": \"3\",\n"
    "   \"explanation\": \"Bread is what the plate holds, as one reference says.\",\n"
    "   \"caption\": \"A plate with toast.\"},\n"
    "  {\"question\": \"Who's holding the kite?\",\n"
    "   \"references\": [\"the girl\", \"girl\", \"a girl's hand\"],\n"
    "   \"prediction\": \"the dog\", \"output\": \"1\",\n"
    "   \"explanation\": \"No reference mentions a dog.\", \"extra\": [1, {\"x\": 2}]}\n"
    "]\n";
static const char BINARY[] =
    "[{\"question\": \"Is it raining?\", \"references\": [\"no\", \"no\", \"yes\", \"no\"],\n"
    "  \"prediction\": \"no\", \"output\": \"3\", \"explanation\": \"Most references say no.\",\n"
    "  \"caption\": \"A dry street.\"}]";

static const char DEMO1[] =
    "Question: 'What is on the plate?'\nReference answers: 'bread', 'toast', 'toast', 'toast', "
    "'toast'\nCandidate answer: 'bread'\nOutput: ";
static const char DEMO2[] =
    "Question: 'Who's holding the kite?'\nReference answers: 'a girl's hand', 'girl', 'the girl'\n"
    "Candidate answer: 'the dog'\nOutput: ";
static const char BDEMO[] =
    "Question: 'Is it raining?'\nReference answers: 'no', 'no', 'no', 'yes'\n"
    "Candidate answer: 'no'\nOutput: ";

static tl_lave_demos *G, *B;

static int setup(void **state) {
  (void)state;
  tl_err err;
  if (tl_utf8_locale_check(&err) != TL_OK ||
      tl_lave_demos_parse(GENERAL, strlen(GENERAL), "general.json", &G, &err) != TL_OK ||
      tl_lave_demos_parse(BINARY, strlen(BINARY), "binary.json", &B, &err) != TL_OK) {
    fprintf(stderr, "setup: %s\n", err.msg);
    return -1;
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tl_lave_demos_free(G);
  tl_lave_demos_free(B);
  return 0;
}

static void test_demos_loaded(void **state) {
  (void)state;
  assert_int_equal(G->n, 2);
  assert_string_equal(G->name, "general.json");
  assert_int_equal(G->v[0].line, 2);
  assert_int_equal(G->v[1].line, 7);
  assert_int_equal(G->v[0].nrefs, 5);
  assert_string_equal(G->v[0].refs[2], "bread"); /* file order */
  assert_string_equal(G->v[0].caption, "A plate with toast.");
  assert_null(G->v[1].caption);
  assert_int_equal(B->n, 1);
  assert_int_equal(B->v[0].line, 1);
}

/* Renders with options o; checks the status and, when want is non-NULL, the text. */
static void prompt_is(const tl_lave_opts *o, const char *q, const char *const *refs, size_t n,
                      const char *pred, const char *cap, const char *want, int want_bin) {
  tl_buf b;
  tl_buf_init(&b);
  tl_err err = {{0}};
  int bin = -7;
  tl_status st = tl_lave_prompt(o, G, B, q, refs, n, pred, cap, &b, &bin, &err);
  if (st != TL_OK) fail_msg("prompt '%s': %s", q, err.msg);
  if (strcmp(b.data, want) != 0) fail_msg("prompt '%s':\n[%s]\nwant\n[%s]", q, b.data, want);
  assert_int_equal(bin, want_bin);
  tl_buf_release(&b);
}

static char *cat(const char *const *parts) {
  tl_buf b;
  tl_buf_init(&b);
  for (; *parts; parts++) assert_int_equal(tl_buf_puts(&b, *parts), TL_OK);
  return tl_buf_detach(&b);
}

static void test_prompt(void **state) {
  (void)state;
  static const char *const CATS[] = {"2", "2", "2", "2", "two", "3", "2", "2"};
  static const char TEST_CATS[] =
      "Question: 'How many cats are there?'\nReference answers: '2', '2', '2', '2', '2', '2'\n"
      "Candidate answer: 'two'\nOutput:";
  tl_lave_opts o = TL_LAVE_OPTS_DEFAULT;
  /* defaults: both general demos, demos unfiltered ('bread' 1/5 stays), the test example
   * filtered ('two' and '3', 1/6, go), ending in "Output:" */
  char *want = cat((const char *const[]){
      TASK, "\n\n", DEMO1, "Bread is what the plate holds, as one reference says. So rating=3\n\n",
      DEMO2, "No reference mentions a dog. So rating=1\n\n", TEST_CATS, NULL});
  prompt_is(&o, "How many cats are there?", CATS, 8, "two", NULL, want, 0);
  free(want);
  /* num_shots 1, no rationale */
  o.num_shots = 1;
  o.rationalize = 0;
  tl_buf t;
  tl_buf_init(&t);
  tl_lave_task_definition(&o, &t);
  want = cat((const char *const[]){t.data, "\n\n", DEMO1, "3\n\n", TEST_CATS, NULL});
  prompt_is(&o, "How many cats are there?", CATS, 8, "two", NULL, want, 0);
  free(want);
  /* no filter */
  o = (tl_lave_opts)TL_LAVE_OPTS_DEFAULT;
  o.filter_refs = 0;
  o.num_shots = 0;
  want = cat((const char *const[]){
      TASK, "\n\n",
      "Question: 'How many cats are there?'\nReference answers: '2', '2', '2', '2', '2', '2', "
      "'3', 'two'\nCandidate answer: 'two'\nOutput:", NULL});
  prompt_is(&o, "How many cats are there?", CATS, 8, "two", NULL, want, 0);
  free(want);
  /* binary: chosen by the unfiltered references, demos[:8] of a one-demo set; 'Yes.' counts */
  static const char *const BREFS[] = {"Yes.", "no", "Yes.", "Yes.", "Yes.", "Yes.", "maybe"};
  o = (tl_lave_opts)TL_LAVE_OPTS_DEFAULT;
  want = cat((const char *const[]){
      TASK, "\n\n", BDEMO, "Most references say no. So rating=3\n\n",
      "Question: 'Is the tap on?'\nReference answers: 'Yes.', 'Yes.', 'Yes.', 'Yes.', 'Yes.'\n"
      "Candidate answer: 'it is'\nOutput:", NULL});
  prompt_is(&o, "Is the tap on?", BREFS, 7, "it is", NULL, want, 1);
  free(want);
  /* use_caption: the test caption is strip()ped (Unicode spaces too), the demos' are not */
  o.use_caption = 1;
  tl_buf_reset(&t);
  tl_lave_task_definition(&o, &t);
  want = cat((const char *const[]){
      t.data, "\n\n", "Image description: 'A dry street.'\n", BDEMO,
      "Most references say no. So rating=3\n\n", "Image description: 'A tap, running.'\n",
      "Question: 'Is the tap on?'\nReference answers: 'Yes.', 'Yes.', 'Yes.', 'Yes.', 'Yes.'\n"
      "Candidate answer: 'it is'\nOutput:", NULL});
  prompt_is(&o, "Is the tap on?", BREFS, 7, "it is", " \t\xe2\x80\x83" "A tap, running.\n\xc2\xa0",
            want, 1);
  free(want);
  /* out is appended to */
  tl_buf_reset(&t);
  tl_buf_puts(&t, "KEEP");
  tl_err err;
  o = (tl_lave_opts)TL_LAVE_OPTS_DEFAULT;
  o.num_shots = 0;
  assert_int_equal(tl_lave_prompt(&o, NULL, NULL, "q", CATS, 1, "p", NULL, &t, NULL, &err), TL_OK);
  assert_memory_equal(t.data, "KEEPYou are given", 17);
  assert_int_equal(t.data[t.len - 1], ':');
  tl_buf_release(&t);
}

static void prompt_fails(const tl_lave_opts *o, const tl_lave_demos *g, const tl_lave_demos *b,
                         const char *const *refs, size_t n, const char *cap, tl_status want,
                         const char *msg) {
  tl_buf out;
  tl_buf_init(&out);
  tl_buf_puts(&out, "x");
  tl_err err = {{0}};
  int bin = -7;
  tl_status st = tl_lave_prompt(o, g, b, "q?", refs, n, "p", cap, &out, &bin, &err);
  if (st != want || !strstr(err.msg, msg))
    fail_msg("prompt error: %d '%s', want %d '%s'", (int)st, err.msg, (int)want, msg);
  assert_string_equal(out.data, "x"); /* unchanged */
  assert_int_equal(bin, -7);
  tl_buf_release(&out);
}

static void test_prompt_errors(void **state) {
  (void)state;
  static const char *const R[] = {"a", "b"};
  static const char *const Y[] = {"yes"};
  tl_lave_opts o = TL_LAVE_OPTS_DEFAULT;
  o.num_shots = -1;
  prompt_fails(&o, G, B, R, 2, NULL, TL_EUSAGE, "num_shots");
  o = (tl_lave_opts)TL_LAVE_OPTS_DEFAULT;
  prompt_fails(&o, G, B, R, 0, NULL, TL_EINPUT, "no reference answers");
  o.use_caption = 1;
  prompt_fails(&o, G, B, R, 2, NULL, TL_EINPUT, "image description");
  prompt_fails(&o, G, B, R, 2, "cap", TL_EINPUT, "general.json: element 1 (line 7) has no 'caption'");
  o.num_shots = 1; /* only demo 0 is used: it has a caption */
  tl_buf b;
  tl_buf_init(&b);
  tl_err err;
  assert_int_equal(tl_lave_prompt(&o, G, B, "q?", R, 2, "p", "cap", &b, NULL, &err), TL_OK);
  tl_buf_release(&b);
  o = (tl_lave_opts)TL_LAVE_OPTS_DEFAULT;
  prompt_fails(&o, NULL, B, R, 2, NULL, TL_EUSAGE, "no general demonstrations");
  prompt_fails(&o, G, NULL, Y, 1, NULL, TL_EUSAGE, "no binary demonstrations");
  /* the reference accepts an empty list only without the filter and the demos */
  o.filter_refs = 0;
  o.num_shots = 0;
  tl_buf_init(&b);
  assert_int_equal(tl_lave_prompt(&o, NULL, NULL, "q?", NULL, 0, "p", NULL, &b, NULL, &err), TL_OK);
  assert_non_null(strstr(b.data, "\nReference answers: \nCandidate answer: 'p'\nOutput:"));
  tl_buf_release(&b);
}

/* ---- demonstration files: errors ------------------------------------------------------------- */

static void test_demos_errors(void **state) {
  (void)state;
  static const struct {
    const char *text, *msg;
  } CASES[] = {
      {"{}", "d.json: must be a JSON array"},
      {"[]", "d.json: has no demonstrations"},
      {"[\n1]", "d.json: element 0 (line 2): must be an object"},
      {"[{\"question\": \"q\", \"references\": [\"a\"], \"prediction\": \"p\", \"output\": \"1\","
       " \"explanation\": \"e\"},\n\n {\"references\": [\"a\"]}]",
       "d.json: element 1 (line 3): 'question' must be a string"},
      {"[{\"question\": \"q\", \"references\": [], \"prediction\": \"p\", \"output\": \"1\","
       " \"explanation\": \"e\"}]",
       "element 0 (line 1): 'references' must be a non-empty array of strings"},
      {"[{\"question\": \"q\", \"references\": \"a\", \"prediction\": \"p\", \"output\": \"1\","
       " \"explanation\": \"e\"}]",
       "'references' must be a non-empty array"},
      {"[{\"question\": \"q\", \"references\": [\"a\", 2], \"prediction\": \"p\", \"output\": \"1\","
       " \"explanation\": \"e\"}]",
       "references[1] must be a string"},
      {"[{\"question\": \"q\", \"references\": [\"a\"], \"prediction\": \"p\", \"output\": 1,"
       " \"explanation\": \"e\"}]",
       "'output' must be a string"},
      {"[{\"question\": \"q\", \"references\": [\"a\"], \"prediction\": \"p\", \"output\": \"1\"}]",
       "'explanation' must be a string"},
      {"[{\"question\": \"q\", \"references\": [\"a\"], \"prediction\": \"p\", \"output\": \"1\","
       " \"explanation\": \"e\", \"caption\": null}]",
       "'caption' must be a string when given"},
      {"[\n  {\"question\": \"q\",,}]", "d.json: malformed JSON at line 2, column 2"},
      {"[{\"question\": \"q\"}] x", "malformed JSON at line 1, column"},
      {"[{\"question\": \"q\",\n \"question\": \"r\"}]", "d.json: duplicate key 'question' at line 2"},
      {"[{\"question\": \"a\\u0000b\"}]", "d.json: \\u0000 escape (a NUL character) at line 1"},
      {"[\"a\xff\"]", "d.json: invalid UTF-8 at line 1"},
      {"", "malformed JSON"},
      /* an element that starts after strings holding brackets, commas and escaped quotes */
      {"[{\"question\": \"[,{\\\"\", \"references\": [\"a\"], \"prediction\": \"p\", \"output\":"
       " \"1\", \"explanation\": \"e\"},\n\n\n  \"x\"]",
       "element 1 (line 4): must be an object"},
  };
  for (size_t c = 0; c < NELEM(CASES); c++) {
    tl_lave_demos *d = (tl_lave_demos *)&c; /* set to NULL on failure */
    tl_err err = {{0}};
    tl_status st = tl_lave_demos_parse(CASES[c].text, strlen(CASES[c].text), "d.json", &d, &err);
    if (st != TL_EINPUT || d || !strstr(err.msg, CASES[c].msg))
      fail_msg("demos case %zu: %d '%s', want '%s'", c, (int)st, err.msg, CASES[c].msg);
  }
  /* a NUL byte in the text */
  tl_lave_demos *d;
  tl_err err;
  assert_int_equal(tl_lave_demos_parse("[\n\n\"a\0\"]", 8, "n.json", &d, &err), TL_EINPUT);
  assert_non_null(strstr(err.msg, "n.json: NUL byte at line 3"));
  /* a file that is absent */
  assert_int_equal(tl_lave_demos_load("/nonexistent/lave_demos.json", &d, &err), TL_EIO);
  assert_null(d);
  assert_non_null(strstr(err.msg, "/nonexistent/lave_demos.json"));
}

/* ---- judge rating -------------------------------------------------------------------------------- */

typedef struct {
  const char *text;
  tl_pstatus st; /* without compat */
  const char *rule;
  int rating;
} rcase;

#define OK_(t, rule, r) {t, TL_PS_OK, rule, r}
#define NO_(t) {t, TL_PS_NO_ANSWER, "no_rating", 0}
#define OOR(t) {t, TL_PS_OUT_OF_RANGE, "out_of_range", 0}

static const rcase RCASES[] = {
    OK_("So rating=3", "rating_eq", 3),
    OK_("The candidate answer is incorrect because it is 'pink'. So rating=1", "rating_eq", 1),
    OK_("So rating=2.", "rating_eq", 2),
    OK_("So rating=3  \n\t ", "rating_eq", 3),
    OK_("So rating=3\xe3\x80\x80", "rating_eq", 3),                /* U+3000 after */
    OK_("Earlier rating=1 ... So rating=3", "rating_eq", 3),       /* the last one */
    OK_("So rating=3. As the task says, (rating=1)", "rating_eq", 1),
    OK_("Rating = 3", "rating_eq", 3),
    OK_("RATING=\xc2\xa0" "2", "rating_eq", 2),                    /* NBSP is \s */
    OK_("rating\n=\n1 is what I give", "rating_eq", 1),
    OK_("**rating=3**", "rating_eq", 3),
    OK_("So rating=3 and not 1", "rating_eq", 3),                  /* rating= beats the end */
    OK_("rating=2rd", "rating_eq", 2),
    OK_("\xc3\xa9 rating=2 ok", "rating_eq", 2),
    OOR("So rating=4"),
    OOR("rating=0"),
    OOR("So rating=10"),
    OOR("rating=03"),
    OOR("rating=2.5"),
    OOR("rating=4, final answer 3"),                               /* no fallback */
    OOR("rating=3 then rating=7"),
    OK_("3", "last_char", 3),
    OK_("  2 \n", "last_char", 2),
    OK_("Rating: 3", "last_char", 3),
    OK_("The candidate is correct.\n1", "last_char", 1),
    OK_("rating=x 2", "last_char", 2),                             /* no number after = */
    OK_("subrating=3", "last_char", 3),                            /* \b fails; '=' then 3 */
    OK_("verdict: 2\xe3\x80\x80", "last_char", 2),
    NO_("The answer is 13"),
    NO_("score 2.3"),
    NO_("1,3"),
    NO_("v3"),
    NO_("\xc3\xa9" "3"),                                           /* a word character before */
    NO_("(rating: 3)"),
    NO_("So rating: 2."),
    NO_("So rating=\xd9\xa3"),                                     /* ASCII digits only */
    NO_("\xc3\xa9rating=2 ok"),                                    /* \b: no boundary */
    NO_("subrating=3 x"),
    NO_("rating="),
    NO_(""),
    NO_(" \n\t\xe3\x80\x80"),
    NO_("No rating here."),
    NO_("4"),
    OK_("<think>rating=1</think>So rating=3", "rating_eq", 3),
    OK_("<think>So rating=1</think>\n2", "last_char", 2),
    {"<think>So rating=1", TL_PS_UNTERMINATED, "unterminated_think", 0},
    {"So rating=3 <think>", TL_PS_UNTERMINATED, "unterminated_think", 0},
    NO_("So rating=3</think>nothing"),                             /* all before </think> goes */
    OK_("draft rating=1</think>final rating=2", "rating_eq", 2),
};

static void check_rating(const char *text, int compat, tl_pstatus st, const char *rule, int r,
                         size_t where) {
  tl_lave_rating out;
  assert_int_equal(tl_lave_rate(text, compat, &out), TL_OK);
  if (out.status != st || strcmp(out.rule, rule) != 0 || out.rating != r)
    fail_msg("rating case %zu (compat %d) '%s': %s/%s %d, want %s/%s %d", where, compat,
             text ? text : "(NULL)", tl_pstatus_name(out.status), out.rule, out.rating,
             tl_pstatus_name(st), rule, r);
  if (st == TL_PS_OK) {
    assert_true(out.score == (r - 1) / 2.0);
    if (strcmp(rule, "compat_fallback_2") == 0) assert_null(out.answer);
    else assert_true(out.answer && out.answer[0] == '0' + r && !out.answer[1]);
  } else {
    assert_true(isnan(out.score));
    assert_null(out.answer);
  }
}

static void test_rate(void **state) {
  (void)state;
  for (size_t c = 0; c < NELEM(RCASES); c++) {
    const rcase *k = &RCASES[c];
    check_rating(k->text, 0, k->st, k->rule, k->rating, c);
    if (k->st == TL_PS_OK) check_rating(k->text, 1, k->st, k->rule, k->rating, c);
    else check_rating(k->text, 1, TL_PS_OK, "compat_fallback_2", 2, c);
  }
  /* no reply: missing in both modes */
  check_rating(NULL, 0, TL_PS_MISSING, "", 0, 999);
  check_rating(NULL, 1, TL_PS_MISSING, "", 0, 999);
  /* the scores */
  tl_lave_rating out;
  tl_lave_rate("So rating=1", 0, &out);
  assert_true(out.score == 0.0);
  tl_lave_rate("So rating=2", 0, &out);
  assert_true(out.score == 0.5);
  tl_lave_rate("So rating=3", 0, &out);
  assert_true(out.score == 1.0);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char *repeat(const char *head, const char *piece, size_t total, const char *tail) {
  size_t h = strlen(head), k = strlen(piece), n = total / k * k, t = strlen(tail);
  char *s = malloc(h + n + t + 1);
  assert_non_null(s);
  memcpy(s, head, h);
  for (size_t i = 0; i < n; i += k) memcpy(s + h + i, piece, k);
  memcpy(s + h + n, tail, t + 1);
  return s;
}

/* Runaway judge replies of 4 MiB: one pass each. */
static void test_rate_runaway(void **state) {
  (void)state;
  static const struct {
    const char *head, *piece, *tail;
    tl_pstatus st;
    int rating;
  } SHAPES[] = {
      {"", "rating=", "", TL_PS_NO_ANSWER, 0},
      {"", "rating=1 ", "", TL_PS_OK, 1},
      {"", "rating ", "=2", TL_PS_OK, 2},
      {"rating=", "9", "", TL_PS_OUT_OF_RANGE, 0},
      {"rating=", " ", "3", TL_PS_OK, 3},
      {"", "\xe3\x80\x80", "3", TL_PS_OK, 3},
      {"3", "\xe3\x80\x80", "", TL_PS_OK, 3},
      {"rating=1.", "5", "", TL_PS_OUT_OF_RANGE, 0},
      {"", "<think>x</think>", "2", TL_PS_OK, 2},
      {"", "</think>", "2", TL_PS_OK, 2},
      {"", "ratin", "", TL_PS_NO_ANSWER, 0},
      {"", "\xc3\xa9", "rating=1 x", TL_PS_NO_ANSWER, 0}, /* no \b: and x ends it */
  };
  for (size_t i = 0; i < NELEM(SHAPES); i++) {
    char *s = repeat(SHAPES[i].head, SHAPES[i].piece, 4u << 20, SHAPES[i].tail);
    tl_lave_rating out;
    double t0 = now();
    assert_int_equal(tl_lave_rate(s, 0, &out), TL_OK);
    double dt = now() - t0;
    if (out.status != SHAPES[i].st || out.rating != SHAPES[i].rating)
      fail_msg("runaway '%s': %s %d", SHAPES[i].piece, tl_pstatus_name(out.status), out.rating);
    if (dt > 2.0 * SLOWDOWN) fail_msg("runaway '%s': %.2f s", SHAPES[i].piece, dt);
    free(s);
  }
}

/* ---- expected rating ---------------------------------------------------------------------------- */

static void test_expected(void **state) {
  (void)state;
  tl_lave_expected e;
  const tl_lave_logprob a[] = {{"3", log(0.9)}, {"2", log(0.1)}};
  assert_int_equal(tl_lave_expected_rating(a, 2, &e), TL_OK);
  assert_int_equal(e.status, TL_PS_OK);
  assert_string_equal(e.rule, "logprob_expectation");
  assert_true(fabs(e.expected - 2.9) < 1e-12);
  assert_true(fabs(e.score - 0.95) < 1e-12);
  assert_true(fabs(e.mass - 1.0) < 1e-12);
  /* tokens of one rating add up; whitespace is stripped; others are ignored */
  const tl_lave_logprob b[] = {{" 3", log(0.4)}, {"3", log(0.2)}, {"yes", log(0.2)},
                               {"\n1\t", log(0.15)}, {"12", log(0.05)}};
  assert_int_equal(tl_lave_expected_rating(b, 5, &e), TL_OK);
  assert_true(fabs(e.expected - (0.6 * 3 + 0.15 * 1) / 0.75) < 1e-12);
  assert_true(fabs(e.mass - 0.75) < 1e-12);
  /* far below exp's range: the ratio is still exact */
  const tl_lave_logprob c[] = {{"1", -1000.0}, {"2", -1001.0}};
  assert_int_equal(tl_lave_expected_rating(c, 2, &e), TL_OK);
  double w = exp(-1.0);
  assert_true(fabs(e.expected - (1 + 2 * w) / (1 + w)) < 1e-12);
  assert_true(e.mass == 0.0);
  /* none of the three ratings */
  const tl_lave_logprob d[] = {{"4", 0.0}, {"three", -0.1}, {"", -1}};
  assert_int_equal(tl_lave_expected_rating(d, 3, &e), TL_OK);
  assert_int_equal(e.status, TL_PS_NO_ANSWER);
  assert_string_equal(e.rule, "no_rating");
  assert_true(isnan(e.expected) && isnan(e.score));
  const tl_lave_logprob f[] = {{"3", -INFINITY}};
  assert_int_equal(tl_lave_expected_rating(f, 1, &e), TL_OK);
  assert_int_equal(e.status, TL_PS_NO_ANSWER);
  assert_int_equal(tl_lave_expected_rating(NULL, 0, &e), TL_OK);
  assert_int_equal(e.status, TL_PS_NO_ANSWER);
  /* bad input */
  const tl_lave_logprob g[] = {{"3", NAN}};
  assert_int_equal(tl_lave_expected_rating(g, 1, &e), TL_EINPUT);
  const tl_lave_logprob h[] = {{NULL, -1}};
  assert_int_equal(tl_lave_expected_rating(h, 1, &e), TL_EINPUT);
  const tl_lave_logprob k[] = {{"2", INFINITY}};
  assert_int_equal(tl_lave_expected_rating(k, 1, &e), TL_EINPUT);
  assert_int_equal(e.status, TL_PS_NO_ANSWER);
}

static cJSON *tokens(const char *json) {
  cJSON *c = cJSON_Parse(json);
  assert_non_null(c);
  return c;
}

static void test_position(void **state) {
  (void)state;
  static const struct {
    const char *json;
    long index;
    const char *rule;
  } CASES[] = {
      {"[{\"token\":\"So\"},{\"token\":\" rating\"},{\"token\":\"=\"},{\"token\":\"3\"}]", 3,
       "after_rating_eq"},
      {"[{\"token\":\"rating\"},{\"token\":\"=\"},{\"token\":\"2\"},{\"token\":\" and\"},"
       "{\"token\":\" 3\"}]", 2, "after_rating_eq"},
      {"[{\"token\":\"Rating \"},{\"token\":\"= \"},{\"token\":\" 1\"},{\"token\":\".\"}]", 2,
       "after_rating_eq"},
      {"[{\"token\":\"rating=1\"},{\"token\":\" so\"},{\"token\":\" rating=\"},{\"token\":\"2\"}]",
       3, "after_rating_eq"},
      {"[{\"token\":\"The\"},{\"token\":\" answer\"},{\"token\":\" 3\"},{\"token\":\" ok\"}]", 2,
       "last_rating_token"},
      {"[{\"token\":\"sub\"},{\"token\":\"rating=\"},{\"token\":\"3\"}]", 2, "last_rating_token"},
      {"[{\"token\":\"1\"},{\"token\":\"2\"}]", 1, "last_rating_token"},
      {"[{\"token\":\"none\"},{\"token\":\"13\"}]", -1, "no_rating_token"},
      {"[]", -1, "no_rating_token"},
  };
  for (size_t c = 0; c < NELEM(CASES); c++) {
    cJSON *j = tokens(CASES[c].json);
    long at = 99;
    const char *rule = NULL;
    assert_int_equal(tl_lave_logprob_position(j, &at, &rule), TL_OK);
    if (at != CASES[c].index || strcmp(rule, CASES[c].rule) != 0)
      fail_msg("position case %zu: %ld %s, want %ld %s", c, at, rule, CASES[c].index, CASES[c].rule);
    cJSON_Delete(j);
  }
  static const char *const BAD[] = {"{}", "[{\"token\":1}]", "[{\"x\":\"3\"}]", "[\"3\"]"};
  for (size_t c = 0; c < NELEM(BAD); c++) {
    cJSON *j = tokens(BAD[c]);
    long at;
    const char *rule;
    assert_int_equal(tl_lave_logprob_position(j, &at, &rule), TL_EINPUT);
    assert_int_equal(at, -1);
    cJSON_Delete(j);
  }
}

static void test_expected_from_content(void **state) {
  (void)state;
  tl_lave_expected e;
  tl_err err;
  long at;
  cJSON *j = tokens(
      "[{\"token\":\"So rating=\",\"logprob\":-0.01,\"top_logprobs\":[]},"
      "{\"token\":\"3\",\"logprob\":-0.2231435513142097,\"top_logprobs\":["
      "{\"token\":\"3\",\"logprob\":-0.2231435513142097},{\"token\":\"2\",\"logprob\":-1.6094379124341003},"
      "{\"token\":\" \",\"logprob\":-5}]},{\"token\":\"\",\"logprob\":0}]");
  assert_int_equal(tl_lave_expected_from_content(j, &e, &at, &err), TL_OK);
  assert_int_equal(at, 1);
  assert_int_equal(e.status, TL_PS_OK);
  assert_true(fabs(e.expected - (0.8 * 3 + 0.2 * 2)) < 1e-12);
  cJSON_Delete(j);
  /* no top_logprobs: the token itself */
  j = tokens("[{\"token\":\"rating=\",\"logprob\":0},{\"token\":\"2\",\"logprob\":-0.5}]");
  assert_int_equal(tl_lave_expected_from_content(j, &e, &at, &err), TL_OK);
  assert_int_equal(at, 1);
  assert_true(e.expected == 2.0);
  cJSON_Delete(j);
  /* no rating token */
  j = tokens("[{\"token\":\"fine\",\"logprob\":0}]");
  assert_int_equal(tl_lave_expected_from_content(j, &e, NULL, &err), TL_OK);
  assert_int_equal(e.status, TL_PS_NO_ANSWER);
  assert_string_equal(e.rule, "no_rating_token");
  cJSON_Delete(j);
  /* malformed */
  j = tokens("[{\"token\":\"3\",\"logprob\":0,\"top_logprobs\":[{\"token\":\"3\"}]}]");
  assert_int_equal(tl_lave_expected_from_content(j, &e, &at, &err), TL_EINPUT);
  assert_non_null(strstr(err.msg, "logprobs.content[0].top_logprobs[0]"));
  assert_int_equal(e.status, TL_PS_NO_ANSWER);
  cJSON_Delete(j);
  j = tokens("[{\"token\":\"3\",\"top_logprobs\":7}]");
  assert_int_equal(tl_lave_expected_from_content(j, &e, &at, &err), TL_EINPUT);
  cJSON_Delete(j);
  j = tokens("[{\"token\":\"3\"}]");
  assert_int_equal(tl_lave_expected_from_content(j, &e, &at, &err), TL_EINPUT);
  assert_non_null(strstr(err.msg, "no number 'logprob'"));
  cJSON_Delete(j);
  j = tokens("{\"token\":\"3\"}");
  assert_int_equal(tl_lave_expected_from_content(j, &e, &at, &err), TL_EINPUT);
  cJSON_Delete(j);
}

/* ---- votes, alpha ---------------------------------------------------------------------------------- */

static void test_votes(void **state) {
  (void)state;
  static const struct {
    int v[6], n;
    double want; /* NaN: undefined */
  } CASES[] = {
      {{1, 1, 1, 1, 1}, 5, 1.0}, {{1, 1, 0, 1, 1}, 5, 1.0}, {{1, 1, 1, 0, 0}, 5, 0.5},
      {{0, 1, 0, 1, 0}, 5, 0.5}, {{0, 0, 1, 0, 0}, 5, 0.0}, {{0, 0, 0, 0, 0}, 5, 0.0},
      {{1, 1, 1, 1}, 4, NAN},    {{1, 1, 1, 1, 1, 1}, 6, NAN}, {{0}, 0, NAN},
      {{1, 1, 2, 1, 1}, 5, NAN}, {{1, -1, 1, 1, 1}, 5, NAN},
  };
  for (size_t c = 0; c < NELEM(CASES); c++) {
    double got = tl_lave_human_from_votes(CASES[c].v, CASES[c].n);
    if (isnan(CASES[c].want) ? !isnan(got) : got != CASES[c].want)
      fail_msg("votes case %zu: %g, want %g", c, got, CASES[c].want);
  }
  assert_true(isnan(tl_lave_human_from_votes(NULL, 5)));
}

/* alpha = 1 - D_o / D_e from the pairs themselves (Krippendorff 2011, eq. for D_o, D_e with the
 * nominal metric): D_o averages, per pairable unit, the disagreeing ordered pairs weighted
 * 1/(m_u - 1); D_e counts the disagreeing ordered pairs among all pairable values pooled. */
static double alpha_brute(const int *v, size_t ni, size_t nc) {
  double n = 0, dis_o = 0, dis_e = 0;
  int pool[4096];
  size_t np = 0;
  for (size_t u = 0; u < ni; u++) {
    const int *r = v + u * nc;
    size_t m = 0;
    for (size_t j = 0; j < nc; j++) m += r[j] >= 0;
    if (m < 2) continue;
    size_t d = 0;
    for (size_t a = 0; a < nc; a++)
      for (size_t b = 0; b < nc; b++)
        if (a != b && r[a] >= 0 && r[b] >= 0 && r[a] != r[b]) d++;
    dis_o += (double)d / (double)(m - 1);
    for (size_t j = 0; j < nc; j++)
      if (r[j] >= 0) pool[np++] = r[j];
    n += (double)m;
  }
  for (size_t a = 0; a < np; a++)
    for (size_t b = 0; b < np; b++) dis_e += a != b && pool[a] != pool[b];
  if (n < 2 || dis_e == 0) return NAN;
  double d_o = dis_o / n, d_e = dis_e / (n * (n - 1));
  return 1 - d_o / d_e;
}

static void alpha_is(const int *v, size_t ni, size_t nc, double want, const char *what) {
  double got = tl_kripp_alpha_nominal(v, ni, nc);
  if (isnan(want) ? !isnan(got) : !(fabs(got - want) < 1e-12))
    fail_msg("alpha %s: %.17g, want %.17g", what, got, want);
}

static void test_alpha(void **state) {
  (void)state;
  /* Krippendorff (2011), section C: 4 observers x 12 units, nominal, with missing values;
   * his result alpha = 0.743: n = 40, sum_c o_cc = 32, n_c = 9, 13, 10, 5, 3, so
   * alpha = 1 - 39 * 8 / (1600 - 384) = 1 - 312/1216. Rows are units, columns observers A-D. */
  static const int K[12][4] = {
      {1, 1, -1, 1}, {2, 2, 3, 2}, {3, 3, 3, 3}, {3, 3, 3, 3},  {2, 2, 2, 2},    {1, 2, 3, 4},
      {4, 4, 4, 4},  {1, 1, 2, 1}, {2, 2, 2, 2}, {-1, 5, 5, 5}, {-1, -1, 1, 1}, {-1, 3, -1, -1}};
  alpha_is(&K[0][0], 12, 4, 1.0 - 312.0 / 1216.0, "Krippendorff 2011");
  assert_true(fabs(tl_kripp_alpha_nominal(&K[0][0], 12, 4) - 0.743) < 5e-4);
  alpha_is(&K[0][0], 12, 4, alpha_brute(&K[0][0], 12, 4), "Krippendorff 2011 (brute)");
  /* by hand */
  static const int AGREE[] = {1, 1, 2, 2};          /* perfect agreement, two categories */
  alpha_is(AGREE, 2, 2, 1.0, "agree");
  static const int SWAP[] = {1, 2, 2, 1};           /* D_o = 1, D_e = 8/12 */
  alpha_is(SWAP, 2, 2, -0.5, "swap");
  static const int ONE[] = {1, 2};                  /* D_o = D_e = 1 */
  alpha_is(ONE, 1, 2, 0.0, "one unit");
  static const int LONE[] = {1, -1, 1, 1, 2, 2};    /* the lone vote is not pairable */
  alpha_is(LONE, 3, 2, 1.0, "lone vote");
  /* 3 units x 3 coders: {0,0,1}, {1,1,1}, {0,-1,0}; n = 8, n_0 = 4, n_1 = 4;
   * o_cc: (2*1 + 0)/2 + 3*2/2 + 2/1 = 1 + 3 + 2 = 6; alpha = 1 - 7 * 2 / (64 - 32) = 0.5625 */
  static const int HAND[] = {0, 0, 1, 1, 1, 1, 0, -1, 0};
  alpha_is(HAND, 3, 3, 0.5625, "3x3 by hand");
  static const int SAME[] = {1, 1, 1, 1};           /* one category: undefined */
  alpha_is(SAME, 2, 2, NAN, "one category");
  static const int MISS[] = {-1, -1, 1, -1};
  alpha_is(MISS, 2, 2, NAN, "nothing pairable");
  static const int BADV[] = {1, -2};
  alpha_is(BADV, 1, 2, NAN, "value below -1");
  alpha_is(NULL, 0, 3, NAN, "no items");
  alpha_is(NULL, 2, 2, NAN, "NULL votes");
  /* random matrices against the pairwise formula */
  uint64_t x = 88172645463325252u;
  int v[8 * 6];
  for (int t = 0; t < 2000; t++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t ni = 1 + x % 8, nc = 1 + (x >> 8) % 6;
    int ncat = 1 + (int)((x >> 16) % 4);
    for (size_t i = 0; i < ni * nc; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      v[i] = (x % 10) < 3 ? -1 : (int)((x >> 20) % (uint64_t)ncat) * 7;
    }
    char what[32];
    snprintf(what, sizeof what, "random %d", t);
    alpha_is(v, ni, nc, alpha_brute(v, ni, nc), what);
  }
}

/* ---- shared: the two rendered prompts --------------------------------------------------------- */

static void prompt_matches(const char *file, const char *q, const char *const *refs, size_t n,
                           const char *pred, int want_bin) {
  TU_NEED_SHARED(gpath, "vqa/lave_demos.json");
  TU_NEED_SHARED(bpath, "vqa/lave_demos_binary.json");
  char rel[64];
  snprintf(rel, sizeof rel, "vqa/%s", file);
  TU_NEED_SHARED(ppath, rel);
  tl_err err;
  tl_lave_demos *g = NULL, *b = NULL;
  if (tl_lave_demos_load(gpath, &g, &err) || tl_lave_demos_load(bpath, &b, &err))
    fail_msg("%s", err.msg);
  assert_int_equal(g->n, 16);
  assert_int_equal(b->n, 8);
  tl_buf want, got;
  tl_buf_init(&want);
  tl_buf_init(&got);
  assert_int_equal(tl_file_read(ppath, 0, &want, &err), TL_OK);
  tl_lave_opts o = TL_LAVE_OPTS_DEFAULT;
  int bin = -1;
  assert_int_equal(tl_lave_prompt(&o, g, b, q, refs, n, pred, NULL, &got, &bin, &err), TL_OK);
  assert_int_equal(bin, want_bin);
  if (got.len != want.len || memcmp(got.data, want.data, got.len) != 0) {
    size_t i = 0;
    while (i < got.len && i < want.len && got.data[i] == want.data[i]) i++;
    fail_msg("%s: differs at byte %zu (lengths %zu, %zu): ...%.40s", file, i, got.len, want.len,
             got.data + (i > 20 ? i - 20 : 0));
  }
  tl_buf_release(&want);
  tl_buf_release(&got);
  tl_lave_demos_free(g);
  tl_lave_demos_free(b);
}

/* The README example of mair-lab/lave (the general prompt's test example). */
static void test_shared_general(void **state) {
  (void)state;
  static const char *const R[] = {"red white blue", "white, red, blue", "white, red, and blue",
                                  "white red blue black"};
  prompt_matches("lave_prompt_general.txt", "What color is the plane?", R, 4, "white and red", 0);
}

/* The binary prompt's test example: PROVENANCE.md does not give its reference list; the prompt
 * shows 3 'no' and 7 'yes' after the filter, and any list with those counts (and nothing the
 * filter drops) renders the same. This one is interleaved, so sorting is exercised. */
static void test_shared_binary(void **state) {
  (void)state;
  static const char *const R[] = {"yes", "no", "yes", "yes", "no", "yes", "yes", "no", "yes", "yes"};
  prompt_matches("lave_prompt_binary.txt", "Is the man happy?", R, 10, "Yes.", 1);
}

int main(int argc, char **argv) {
  const struct CMUnitTest fixture[] = {
      cmocka_unit_test(test_filter),        cmocka_unit_test(test_format),
      cmocka_unit_test(test_binary),        cmocka_unit_test(test_task_definition),
      cmocka_unit_test(test_demos_loaded),  cmocka_unit_test(test_prompt),
      cmocka_unit_test(test_prompt_errors), cmocka_unit_test(test_demos_errors),
      cmocka_unit_test(test_rate),          cmocka_unit_test(test_rate_runaway),
      cmocka_unit_test(test_expected),      cmocka_unit_test(test_position),
      cmocka_unit_test(test_expected_from_content), cmocka_unit_test(test_votes),
      cmocka_unit_test(test_alpha),
  };
  const struct CMUnitTest shared[] = {cmocka_unit_test(test_shared_general),
                                      cmocka_unit_test(test_shared_binary)};
  return TU_SHARED_GROUP(argc, argv, fixture, shared, setup, teardown);
}
