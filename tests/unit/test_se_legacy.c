/* test_se_legacy.c - the 'legacy' SpatialEval parser (the original evaluator, bit-compatible).
 *
 * 1. table of hand-made cases, one or more per rule, including the known inflation cases;
 * 2. all 313 real VLM answers of vlm_outputs_313.jsonl against the extraction and substring
 *    verdict the original evaluator recorded for them;
 * 3. C vs. the Python oracle tools/oracle/legacy_oracle.py (Python's own `re`) on the 10 long
 *    DeepSeek answers and on generated responses (skipped when /usr/bin/python3 is missing). */
#define _POSIX_C_SOURCE 200809L /* popen, mkstemp, getline */
#include <unistd.h>

#include "testutil.h"

#include "tally/str.h"

#define PY "/usr/bin/python3"
#define ORACLE TALLY_SOURCE_DIR "/tools/oracle/legacy_oracle.py"

/* A synthetic item in the benchmark's format: oracle answer at the oracle letter's slot. */
static cJSON *item_json(const char *id, const char *oracle, const char *opt) {
  char text[1024];
  char full[512];
  if (strstr(id, "mazenav.") == id && id[strlen(id) - 1] == '2') {
    snprintf(text, sizeof text, "Is the exit (E) directly below the starting point (S)? "
                                "Available options:\nA. Yes\nB. No.");
  } else {
    const char *fill[4] = {"filler one", "filler two", "filler three", "filler four"};
    fill[opt[0] - 'A'] = oracle;
    snprintf(text, sizeof text, "Question? Available options:\nA. %s\nB. %s\nC. %s\nD. %s.",
             fill[0], fill[1], fill[2], fill[3]);
  }
  snprintf(full, sizeof full, "%s. %s", opt, oracle);
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "id", id);
  cJSON_AddStringToObject(o, "text", text);
  cJSON_AddStringToObject(o, "oracle_answer", oracle);
  cJSON_AddStringToObject(o, "oracle_option", opt);
  cJSON_AddStringToObject(o, "oracle_full_answer", full);
  return o;
}

static void mk_item(tl_se_item *it, const char *id, const char *oracle, const char *opt) {
  cJSON *o = item_json(id, oracle, opt);
  char *s = cJSON_PrintUnformatted(o);
  tu_item(it, s);
  free(s);
  cJSON_Delete(o);
}

typedef struct {
  const char *id, *oracle, *opt, *model, *response;
  const char *answer; /* NULL: skipped */
  int correct;
  tl_pstatus status;
  const char *rule;
} lcase;

#define OK TL_PS_OK
#define NA TL_PS_NO_ANSWER
#define SK TL_PS_SKIPPED
#define M0 "spatialmap.tqa.2000.0"
#define M1 "spatialmap.tqa.2000.1"
#define M2 "spatialmap.tqa.2000.2"
#define Z0 "mazenav.tqa.7.0"
#define Z1 "mazenav.tqa.7.1"
#define Z2 "mazenav.tqa.7.2"
#define G0 "spatialgrid.tqa.2.0"
#define G1 "spatialgrid.tqa.2.1"

static const lcase CASES[] = {
    /* ---- spatialmap q0 ---- */
    {M0, "Northeast", "A", "", "A. Northeast is the direction.", "northeast", 1, OK, "map_q0_letter_dir"},
    {M0, "Southwest", "C", "", "b.  SOUTHWEST", "southwest", 1, OK, "map_q0_letter_dir"}, /* I */
    /* inflation 5: the word decides, not the letter ("D. Southeast" while C is Southeast) */
    {M0, "Southeast", "C", "", "D. Southeast", "southeast", 1, OK, "map_q0_letter_dir"},
    {M0, "Northwest", "B", "", "It is northwest, not Southeast.", "northwest", 1, OK, "map_q0_first_dir"},
    {M0, "Northwest", "B", "", "Northeastern, then NorthWest.", "northwest", 1, OK, "map_q0_first_dir"},
    {M0, "Northwest", "B", "", "I cannot tell.", "none", 0, NA, "map_q0_none"},
    /* ---- spatialmap q1 ---- */
    {M1, "Frost Funhouse", "B", "", "Frost Funhouse is located to the Northeast of Bolt Books.",
     "frost funhouse", 1, OK, "map_q1_lead_is_dir"},
    {M1, "Narwhal\u2019s Novelties", "A", "", "Narwhal\u2019s Novelties is in the southwest of X.",
     "narwhal\u2019s novelties", 1, OK, "map_q1_lead_is_dir"},
    /* "**" and every "." removed, cut at the first " is": the tail is kept (inflation 4) */
    {M1, "Oz Oddities", "B", "", "The answer is B. **Oz Oddities**. It is located in the north.",
     "oz oddities it", 1, OK, "map_q1_letter_rest"},
    {M1, "St. Ives", "D", "", "D. St. Ives", "st ives", 0, OK, "map_q1_letter_rest"},
    {M1, "Mystic Mall", "C", "", "C. Mystic island Mall", "mystic", 0, OK, "map_q1_letter_rest"},
    /* the letter-token branch returns the token, never the name */
    {M1, "Coral Crafts", "C", "", "The object is C, Coral Crafts", "c", 0, OK, "map_q1_letter_token"},
    {M1, "Oz Oddities", "B", "", "Choice(b)\nOz Oddities", "(b)", 0, OK, "map_q1_letter_token"},
    /* "\b(" needs a word character before "(": after a space "(b)" never matches */
    {M1, "Oz Oddities", "B", "", "Answer: (b)\nOz Oddities", "none", 0, NA, "map_q1_none"},
    {M1, "Frost Funhouse", "B", "", "Therefore, the object in the Northeast of Bolt Books is Frost Funhouse",
     "frost funhouse", 1, OK, "map_q1_therefore"},
    {M1, "Frost Funhouse", "B", "", /* greedy name: the capture starts after the last " is " */
     "Therefore, the object in the Northeast of Bolt Books is Frost Funhouse which is nice", "nice", 0,
     OK, "map_q1_therefore"},
    {M1, "Frost Funhouse", "B", "Claude-3-Opus", "Frost Funhouse is to the Northeast of Bolt Books",
     "frost funhouse", 1, OK, "map_q1_claude"},
    {M1, "Frost Funhouse", "B", "", "Frost Funhouse is to the Northeast of Bolt Books",
     "to the northeast of bolt books", 0, OK, "map_q1_is_phrase"},
    {M1, "Frost Funhouse", "B", "geminiv-1.5-pro", "**Answer:** Frost Funhouse\nThe map shows it.",
     "frost funhouse\nthe map shows it", 1, OK, "map_q1_geminiv"},
    {M1, "Frost Funhouse", "B", "m-gpt4o", "Concise Answer: Frost Funhouse is in the Northeast of Bolt Books.",
     "frost funhouse", 1, OK, "map_q1_gpt4o"},
    {M1, "Frost Funhouse", "B", "", "Concise Answer: Frost Funhouse is in the Northeast of Bolt Books.",
     "in the northeast of bolt books", 0, OK, "map_q1_is_phrase"},
    {M1, "Oz Oddities", "B", "", "The object you want is Oz Oddities, which is near.", "oz oddities", 1,
     OK, "map_q1_is_phrase"},
    /* inflation 4: a long capture that names a wrong object first */
    {M1, "Narwhal's Novelties", "A", "", "The answer is not Coral Crafts but Narwhal's Novelties.",
     "not coral crafts but narwhal's novelties", 1, OK, "map_q1_is_phrase"},
    /* '.' stops at a newline: the first "is" cannot reach a stop, the second one can */
    {M1, "Oz Oddities", "B", "", "This is\nmaybe\nThe store is Oz Oddities", "oz oddities", 1, OK,
     "map_q1_is_phrase"},
    {M1, "Oz Oddities", "B", "", "Which is it? The store is Oz Oddities?!",
     "it? the store is oz oddities", 1, OK, "map_q1_is_phrase"},
    {M1, "Oz Oddities", "B", "", "I do not know", "none", 0, NA, "map_q1_none"},
    /* ---- spatialmap q2 ---- */
    {M2, "7", "D", "", "B. 007 objects", "7", 1, OK, "map_q2_letter_number"},
    {M2, "3", "D", "", "C. \u0663", "3", 1, OK, "map_q2_letter_number"}, /* Arabic-Indic 3 */
    /* inflation 2: ref "0" is a substring of "90" */
    {M2, "0", "A", "", "The answer is 90.", "90", 1, OK, "map_q2_first_number"},
    {M2, "2", "C", "", "There are no objects, maybe 2.", "0", 0, OK, "map_q2_first_number"},
    {M2, "2", "C", "", "Two objects, maybe 3", "2", 1, OK, "map_q2_first_number"},
    {M2, "12", "C", "", "There are \uff11\uff12 objects", "12", 1, OK, "map_q2_first_number"},
    /* the leading "\n\n1. " is removed for digits only: positions shift, the 5 beats "one" */
    {M2, "5", "C", "", "\n\n1. one 5", "5", 1, OK, "map_q2_first_number"},
    {M2, "2", "C", "", "\n\n1. There are two objects", "2", 1, OK, "map_q2_first_number"},
    {M2, "0", "A", "", "I can't count them", "none", 0, NA, "map_q2_none"},
    {"spatialmap.tqa.2000.3", "0", "A", "", "B. 3", NULL, 0, SK, "map_bad_qid"},
    /* ---- mazenav q2 ---- */
    {Z2, "Yes", "A", "", "Yes, the exit is below.", "yes", 1, OK, "maze_q2_yes"},
    {Z2, "Yes", "A", "", "It is the shortest path.", "yes", 1, OK, "maze_q2_yes"},
    {Z2, "Yes", "A", "", "No.", "no", 0, OK, "maze_q2_no"},
    {Z2, "No", "B", "", "The exit is not directly below", "no", 1, OK, "maze_q2_no"},
    {Z2, "No", "B", "", "The answer: \"no\", yesterday", "no", 1, OK, "maze_q2_no"},
    /* inflation 1: None -> "none" contains "no" */
    {Z2, "No", "B", "", "I am unsure", "none", 1, NA, "maze_q2_none"},
    {Z2, "Yes", "A", "", "Yesterday", "none", 0, NA, "maze_q2_none"},
    /* ---- mazenav q0 / q1 ---- */
    /* inflation 3: "No" counts as the number 0, anywhere */
    {Z0, "3", "B", "", "There are 3 right turns. No other turns.", "0", 0, OK, "maze_numword"},
    /* dict order, not position */
    {Z0, "2", "B", "", "two right turns and one left", "1", 0, OK, "maze_numword"},
    {Z0, "9", "B", "", "NINE turns", "9", 1, OK, "maze_numword"},
    {Z0, "3", "B", "", "There are 3 right turns", "3", 1, OK, "maze_q0_pattern"},
    {Z0, "4", "B", "", "None 4", "4", 1, OK, "maze_first_digits"},
    {Z0, "2", "B", "", "S(2,3) to E", "2", 1, OK, "maze_first_digits"},
    {Z1, "2", "A", "", "Total: 12 turns", "12", 1, OK, "maze_q1_pattern"}, /* inflation 2 */
    {Z1, "5", "A", "", "The answer is 05", "5", 1, OK, "maze_q1_pattern"},
    {Z1, "5", "A", "", "unclear", "none", 0, NA, "maze_none"},
    {"mazenav.tqa.7.3", "5", "A", "", "3 turns", NULL, 0, SK, "maze_bad_qid"},
    {"mazenav.tqa.7.3", "2", "A", "", "two turns", "2", 1, OK, "maze_numword"},
    /* ---- spatialgrid ---- */
    {G1, "cat", "A", "", "The animal is a Cat.", "cat", 1, OK, "grid_animal"},
    {G1, "dog", "B", "", "cats and a dog", "dog", 1, OK, "grid_animal"},
    {G1, "dog", "B", "", "I see no animals", "none", 0, NA, "grid_animal_none"},
    /* inflation 2 (the real line): ref "5" in "25" */
    {G0, "5", "C", "", "B.\nThere are 25 blocks in the 5x5 grid.", "25", 1, OK, "grid_q0_first_number"},
    {G0, "4", "C", "claude-3", "There are 2 dogs. The grid contains 4 blocks with dogs.", "4", 1, OK,
     "grid_q0_claude_contains"},
    {G0, "4", "C", "", "There are 2 dogs. The grid contains 4 blocks with dogs.", "2", 0, OK,
     "grid_q0_first_number"},
    /* only the last claude phrase is tested: "there are 3 blocks" is ignored */
    {G0, "3", "C", "claude-3", "Out of 25 cells, there are 3 blocks with dogs.", "25", 0, OK,
     "grid_q0_first_number"},
    {G0, "0", "A", "", "Nothing to count", "none", 0, NA, "grid_q0_none"},
    /* ---- spatialreal: no branch in the original ---- */
    {"spatialreal.tqa.sa_1.0", "six", "D", "", "D. six", NULL, 0, SK, "legacy_no_spatialreal_branch"},
};

static void check_case(const tl_se_legacy *lg, const lcase *c, size_t i) {
  tl_se_item it;
  mk_item(&it, c->id, c->oracle, c->opt);
  tl_parsed p;
  tl_parsed_init(&p);
  assert_int_equal(tl_se_legacy_parse(lg, &it, c->response, c->model, &p), TL_OK);
  if (p.status != c->status || p.correct != c->correct || strcmp(p.rule, c->rule) != 0 ||
      (c->answer == NULL) != (p.answer == NULL) || (c->answer && strcmp(c->answer, p.answer)))
    fail_msg("case %zu (%s %s): got answer=%s correct=%d status=%s rule=%s; want answer=%s "
             "correct=%d status=%s rule=%s",
             i, c->id, c->response, p.answer ? p.answer : "NULL", p.correct,
             tl_pstatus_name(p.status), p.rule, c->answer ? c->answer : "NULL", c->correct,
             tl_pstatus_name(c->status), c->rule);
  tl_parsed_release(&p);
  tl_se_item_release(&it);
}

static void test_rules(void **state) {
  (void)state;
  tl_err err;
  tl_se_legacy *lg = tl_se_legacy_new(&err);
  assert_non_null(lg);
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) check_case(lg, &CASES[i], i);
  tl_se_legacy_free(lg);
}

/* int() of more than 4300 digits raises ValueError (CPython >= 3.11): convert_str_to_int keeps
 * the string, the earliest-number loop and mazenav raise (line skipped). */
static void test_int_limit(void **state) {
  (void)state;
  tl_err err;
  tl_se_legacy *lg = tl_se_legacy_new(&err);
  assert_non_null(lg);
  size_t nd = 4301;
  char *r = malloc(nd + 64);
  tl_se_item it;
  tl_parsed p;
  tl_parsed_init(&p);

  mk_item(&it, M2, "1", "A");
  strcpy(r, "A. 0");
  memset(r + 4, '1', nd - 1);
  r[3 + nd] = 0; /* "A. 0111...1": 4301 digits, leading zero kept */
  assert_int_equal(tl_se_legacy_parse(lg, &it, r, "", &p), TL_OK);
  assert_int_equal(p.status, TL_PS_OK);
  assert_int_equal(strlen(p.answer), nd);
  assert_int_equal(p.answer[0], '0');
  assert_int_equal(p.correct, 1);
  r[3 + nd - 1] = 0; /* 4300 digits: int() works, the leading zero goes */
  assert_int_equal(tl_se_legacy_parse(lg, &it, r, "", &p), TL_OK);
  assert_int_equal(strlen(p.answer), nd - 2);

  memcpy(r, "two ", 4); /* no letter: every digit run goes through int() */
  memset(r + 4, '9', nd);
  r[4 + nd] = 0;
  assert_int_equal(tl_se_legacy_parse(lg, &it, r, "", &p), TL_OK);
  assert_int_equal(p.status, TL_PS_SKIPPED);
  assert_null(p.answer);
  assert_string_equal(p.rule, "int_digit_limit");
  tl_se_item_release(&it);

  mk_item(&it, Z0, "1", "A");
  memcpy(r, "xyz ", 4);
  assert_int_equal(tl_se_legacy_parse(lg, &it, r, "", &p), TL_OK);
  assert_int_equal(p.status, TL_PS_SKIPPED);
  r[4 + nd - 1] = 0; /* 4300 nines: fine */
  assert_int_equal(tl_se_legacy_parse(lg, &it, r, "", &p), TL_OK);
  assert_int_equal(p.status, TL_PS_OK);
  assert_string_equal(p.rule, "maze_first_digits");
  tl_parsed_release(&p);
  tl_se_item_release(&it);
  free(r);
  tl_se_legacy_free(lg);
}

/* Through the public dispatch: a NULL response is 'missing', NULL model is "". */
static void test_dispatch(void **state) {
  (void)state;
  tl_err err;
  tl_se_parser *ps = tl_se_parser_new(TL_SE_LEGACY, &err);
  assert_non_null(ps);
  tl_se_item it;
  mk_item(&it, M1, "Frost Funhouse", "B");
  tl_parsed p;
  tl_parsed_init(&p);
  assert_int_equal(tl_se_parse(ps, &it, NULL, "Concise Answer: Frost Funhouse is in the Northeast.",
                               NULL, &p),
                   TL_OK);
  assert_string_equal(p.rule, "map_q1_is_phrase");
  assert_int_equal(tl_se_parse(ps, &it, NULL, NULL, "gpt4o", &p), TL_OK);
  assert_int_equal(p.status, TL_PS_MISSING);
  tl_parsed_release(&p);
  tl_se_item_release(&it);
  tl_se_parser_free(ps);
}

/* Python's str.strip(), as eval_robust.py applied it to the recorded `extracted`. */
static char *py_strip_dup(const char *s) {
  size_t n = strlen(s), b = 0, e = n, i = 0;
  int seen = 0;
  while (i < n) {
    uint32_t cp;
    size_t k = tl_utf8_decode(s + i, n - i, &cp);
    if (!k) k = 1;
    if (!tl_uni_isspace(cp)) {
      if (!seen) b = i;
      seen = 1;
      e = i + k;
    }
    i += k;
  }
  if (!seen) b = e = 0;
  return tl_strndup(s + b, e - b);
}

static const tl_se_item *find_item(const tl_se_item *items, int n, const char *id) {
  for (int i = 0; i < n; i++)
    if (strcmp(items[i].id, id) == 0) return &items[i];
  return NULL;
}

/* The 313 real answers (BinSpa eval_summary/disagreements.jsonl): `extracted` is
 * (str(extractor(answer, qid, model_name)) or "").lower().strip() and `substring` the original's
 * verdict, with model_name from the file name m-<model>_w_reason.jsonl = the `model` field. */
static void test_real_313(void **state) {
  (void)state;
  TU_NEED_SHARED(ipath, "spatialeval/spatialmap_tqa.jsonl");
  tl_se_item *items;
  int ni = tu_load_items(ipath, &items);
  TU_NEED_SHARED(opath, "spatialeval/outputs/vlm_outputs_313.jsonl");
  tl_err err;
  tl_se_legacy *lg = tl_se_legacy_new(&err);
  assert_non_null(lg);
  tl_jsonl r;
  assert_int_equal(tl_jsonl_open(&r, opath, 0, &err), TL_OK);
  cJSON *o;
  int n = 0, n_correct = 0, n_synth = 0, n_long = 0;
  while (tl_jsonl_next(&r, &o, &err) == TL_JL_RECORD) {
    const char *sid = cJSON_GetObjectItem(o, "sample_id")->valuestring;
    const char *raw = cJSON_GetObjectItem(o, "raw_answer")->valuestring;
    const char *model = cJSON_GetObjectItem(o, "model")->valuestring;
    const char *ext = cJSON_GetObjectItem(o, "extracted")->valuestring;
    const char *oa = cJSON_GetObjectItem(o, "oracle_answer")->valuestring;
    int substring = cJSON_IsTrue(cJSON_GetObjectItem(o, "substring"));
    char tid[128];
    const char *v = strstr(sid, ".vqa.");
    assert_non_null(v);
    snprintf(tid, sizeof tid, "%.*s.tqa.%s", (int)(v - sid), sid, v + 5);
    const tl_se_item *it = find_item(items, ni, tid);
    tl_se_item synth;
    if (!it) { /* the spatialgrid line: an item from the line's own oracle fields */
      assert_non_null(strstr(tid, "spatialgrid."));
      mk_item(&synth, tid, oa, cJSON_GetObjectItem(o, "oracle_option")->valuestring);
      it = &synth;
      n_synth++;
    } else {
      char *l = tl_utf8_lower(it->oracle_answer, strlen(it->oracle_answer));
      assert_string_equal(l, oa); /* oracles identical across modes */
      assert_string_equal(it->oracle_option, cJSON_GetObjectItem(o, "oracle_option")->valuestring);
      free(l);
    }
    if (strlen(raw) >= 300) n_long++;
    tl_parsed p;
    tl_parsed_init(&p);
    assert_int_equal(tl_se_legacy_parse(lg, it, raw, model, &p), TL_OK);
    char *got = p.status == TL_PS_OK ? py_strip_dup(p.answer) : tl_strdup("");
    if (strcmp(got, ext) != 0 || p.correct != substring)
      fail_msg("line %ld (%s, %s): got '%s' correct=%d rule=%s; recorded '%s' substring=%d",
               r.line_no, sid, model, got, p.correct, p.rule, ext, substring);
    n_correct += p.correct;
    free(got);
    tl_parsed_release(&p);
    if (it == &synth) tl_se_item_release(&synth);
    cJSON_Delete(o);
    n++;
  }
  tl_jsonl_close(&r);
  assert_int_equal(n, 313);
  assert_int_equal(n_synth, 1);
  assert_int_equal(n_correct, 313); /* every line is a substring-only "correct" */
  print_message("313 real answers: all extractions and verdicts match (%d raw answers cut at "
                "300 chars)\n", n_long);
  for (int i = 0; i < ni; i++) tl_se_item_release(&items[i]);
  free(items);
  tl_se_legacy_free(lg);
}

/* ---- C vs. the Python oracle ---- */

typedef struct {
  cJSON *arr;  /* inputs, each {item, response, model} */
} ocases;

static void add_case(ocases *oc, const char *id, const char *oracle, const char *opt,
                     const char *response, const char *model) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToObject(o, "item", item_json(id, oracle, opt));
  cJSON_AddStringToObject(o, "response", response);
  cJSON_AddStringToObject(o, "model", model);
  cJSON_AddItemToArray(oc->arr, o);
}

static const char *const FRAG[] = {
    "A. ", "B.", "C, ", "(c) ", "(d)", "D.", " Northeast", "southwest", "NorthWest ",
    "southeast", " is ", "is", " located in the ", " in the ", " located to the ", " to the ",
    "Therefore, the object in the Northeast of Bolt Books is ", "**Answer:** ", "**Answer:**\n",
    "**Answer**: ", "**Concise Answer:**\n", "Concise Answer: ", "Frost Funhouse", "Oz Oddities",
    "St. Ives", "Narwhal\u2019s Novelties", "Narwhal's", "**", ".", ",", "<", "?!", "\n", "\n\n",
    "\n\n1. ", " ", "no", "No ", "not", "yes", "Yes", "None", "\"no\"", "'yes'", "the answer is ",
    "answer is: \n 4", "is the shortest path", "zero", "two", "Three", "nine", "3", "007", "12",
    "90", "\u0663", "\uff11\uff12", " right turns", " right turn", " turns", "There are ",
    "There is ", "total of ", " total turns", "from S to E is ", "Answer:** 5", " contains 4 blocks",
    " blocks", "cat", "dogs", "Elephant", "rabbit", "giraffe", "\u00e9t\u00e9", "\u00a0", "\t",
    "\u2019", "_", "x", "Cat5", "five", "six", "eight", "f\u0131ve", "S\u0130X", "\x1c", "\xc2\x85", "\u2007", "\u0301", "\u202f", "\u1680", "Dog\u0301", "\u180e", "\x1f" "5",
    "\u2028", "Frost\x1d" "Funhouse is located in the Northeast",
};

static unsigned long lcg(unsigned long *s) {
  *s = *s * 6364136223846793005UL + 1442695040888963407UL;
  return *s >> 33;
}

static void gen_cases(ocases *oc, int count) {
  static const struct {
    const char *id, *oracle, *opt;
  } IT[] = {
      {M0, "Northeast", "A"},       {M1, "Frost Funhouse", "B"}, {M1, "Oz Oddities", "C"},
      {M2, "0", "A"},               {M2, "2", "C"},              {Z0, "3", "B"},
      {Z1, "2", "A"},               {Z2, "No", "B"},             {Z2, "Yes", "A"},
      {G0, "5", "C"},               {G1, "cat", "A"},            {"spatialgrid.tqa.2.2", "dog", "B"},
      {"spatialmap.tqa.2000.4", "0", "A"}, {"mazenav.tqa.7.5", "1", "A"},
      {"spatialreal.tqa.sa_9.0", "six", "D"},
  };
  static const char *const MODELS[] = {"", "claude-3-5-sonnet", "geminiv-pro", "gpt4o-mini",
                                       "Qwen__Qwen3-VL-4B-Instruct"};
  unsigned long seed = 20240601UL;
  tl_buf b;
  tl_buf_init(&b);
  for (int i = 0; i < count; i++) {
    tl_buf_reset(&b);
    int nf = 1 + (int)(lcg(&seed) % 9);
    for (int k = 0; k < nf; k++)
      tl_buf_puts(&b, FRAG[lcg(&seed) % (sizeof FRAG / sizeof FRAG[0])]);
    size_t t = lcg(&seed) % (sizeof IT / sizeof IT[0]);
    add_case(oc, IT[t].id, IT[t].oracle, IT[t].opt, b.data,
             MODELS[lcg(&seed) % (sizeof MODELS / sizeof MODELS[0])]);
  }
  tl_buf_release(&b);
}

/* Each of the 10 long DeepSeek answers against its own item and against other question types
 * (the same instance's other qids, synthetic maze and grid items), to exercise every path. */
static void long_cases(ocases *oc, const tl_se_item *items, int ni, const char *path) {
  tl_jsonl r;
  tl_err err;
  assert_int_equal(tl_jsonl_open(&r, path, 0, &err), TL_OK);
  cJSON *o;
  int n = 0;
  while (tl_jsonl_next(&r, &o, &err) == TL_JL_RECORD) {
    const char *id = cJSON_GetObjectItem(o, "id")->valuestring;
    const char *resp = cJSON_GetObjectItem(o, "response")->valuestring;
    char base[96];
    snprintf(base, sizeof base, "%.*s", (int)(strrchr(id, '.') - id), id);
    for (int q = 0; q < 3; q++) {
      char qidbuf[128];
      snprintf(qidbuf, sizeof qidbuf, "%s.%d", base, q);
      const tl_se_item *it = find_item(items, ni, qidbuf);
      assert_non_null(it);
      add_case(oc, it->id, it->oracle_answer, it->oracle_option, resp, "deepseek-r1-distill");
    }
    add_case(oc, Z0, "2", "B", resp, "");
    add_case(oc, Z1, "4", "B", resp, "");
    add_case(oc, Z2, "No", "B", resp, "");
    add_case(oc, G0, "5", "C", resp, "claude");
    add_case(oc, G1, "cat", "A", resp, "");
    add_case(oc, M1, "Frost Funhouse", "B", resp, "geminiv gpt4o claude");
    cJSON_Delete(o);
    n++;
  }
  tl_jsonl_close(&r);
  assert_int_equal(n, 10);
}

static void test_vs_python_oracle(void **state) {
  (void)state;
  if (access(PY, X_OK) != 0) {
    TU_SKIP("skipped: %s is missing (the Python oracle needs it)\n", PY);
  }
  TU_NEED_SHARED(ipath, "spatialeval/spatialmap_tqa.jsonl");
  tl_se_item *items;
  int ni = tu_load_items(ipath, &items); /* before the next lookup reuses the path buffer */
  TU_NEED_SHARED(lpath_, "spatialeval/outputs/deepseek_r1_distill_qwen1.5b_spatialmap_tqa_10.jsonl");
  char lpath[4096];
  snprintf(lpath, sizeof lpath, "%s", lpath_);
  ocases oc = {cJSON_CreateArray()};
  long_cases(&oc, items, ni, lpath);
  int n_long = cJSON_GetArraySize(oc.arr);
  gen_cases(&oc, 3000);
  for (int i = 0; i < (int)(sizeof CASES / sizeof CASES[0]); i++)
    add_case(&oc, CASES[i].id, CASES[i].oracle, CASES[i].opt, CASES[i].response, CASES[i].model);

  char in[] = "/tmp/tl_legacy_in_XXXXXX";
  int fd = mkstemp(in);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  int n = cJSON_GetArraySize(oc.arr);
  for (int i = 0; i < n; i++) {
    char *s = cJSON_PrintUnformatted(cJSON_GetArrayItem(oc.arr, i));
    fprintf(f, "%s\n", s);
    free(s);
  }
  fclose(f);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, PY " %s < %s", ORACLE, in);
  FILE *pp = popen(cmd, "r");
  assert_non_null(pp);

  tl_err err;
  tl_se_legacy *lg = tl_se_legacy_new(&err);
  assert_non_null(lg);
  char *line = NULL;
  size_t cap = 0;
  int diff = 0, rules = 0;
  const char *seen[64];
  for (int i = 0; i < n; i++) {
    ssize_t got = getline(&line, &cap, pp);
    if (got <= 0) fail_msg("oracle gave %d lines for %d inputs", i, n);
    cJSON *want = cJSON_Parse(line);
    assert_non_null(want);
    cJSON *in_o = cJSON_GetArrayItem(oc.arr, i);
    char *is = cJSON_PrintUnformatted(cJSON_GetObjectItem(in_o, "item"));
    tl_se_item it;
    tu_item(&it, is);
    free(is);
    tl_parsed p;
    tl_parsed_init(&p);
    assert_int_equal(tl_se_legacy_parse(lg, &it, cJSON_GetObjectItem(in_o, "response")->valuestring,
                                         cJSON_GetObjectItem(in_o, "model")->valuestring, &p),
                     TL_OK);
    cJSON *wa = cJSON_GetObjectItem(want, "answer");
    const char *wans = cJSON_IsString(wa) ? wa->valuestring : NULL;
    int wc = cJSON_GetObjectItem(want, "correct")->valueint;
    const char *wst = cJSON_GetObjectItem(want, "status")->valuestring;
    const char *wr = cJSON_GetObjectItem(want, "rule")->valuestring;
    if ((wans == NULL) != (p.answer == NULL) || (wans && strcmp(wans, p.answer)) || wc != p.correct ||
        strcmp(wst, tl_pstatus_name(p.status)) || strcmp(wr, p.rule)) {
      if (diff++ < 10)
        print_message("differs #%d (%s): C answer=%s correct=%d %s/%s; Python answer=%s correct=%d "
                      "%s/%s\n",
                      i, it.id, p.answer ? p.answer : "NULL", p.correct,
                      tl_pstatus_name(p.status), p.rule, wans ? wans : "NULL", wc, wst, wr);
    }
    int k;
    for (k = 0; k < rules && strcmp(seen[k], p.rule); k++) {
    }
    if (k == rules && rules < 64) seen[rules++] = p.rule;
    tl_parsed_release(&p);
    tl_se_item_release(&it);
    cJSON_Delete(want);
  }
  free(line);
  assert_int_equal(pclose(pp), 0);
  unlink(in);
  print_message("C vs Python oracle: %d inputs (%d from the 10 long answers), %d rules hit, %d "
                "differences\n", n, n_long, rules, diff);
  assert_int_equal(diff, 0);
  assert_true(rules >= 25); /* the generator reaches (nearly) every branch */
  cJSON_Delete(oc.arr);
  for (int i = 0; i < ni; i++) tl_se_item_release(&items[i]);
  free(items);
  tl_se_legacy_free(lg);
}

/* `test_se_legacy --dump FILE`: runs the C parser over {item, response, model} lines and prints
 * {answer, correct, status, rule} lines in the oracle's format (tools/oracle/compare_legacy.sh). */
static int dump(const char *path) {
  tl_err err;
  tl_se_legacy *lg = tl_se_legacy_new(&err);
  tl_jsonl r;
  if (!lg || tl_jsonl_open(&r, path, 0, &err) != TL_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 2;
  }
  cJSON *o;
  tl_jl_result res;
  int rc = 0;
  while ((res = tl_jsonl_next(&r, &o, &err)) != TL_JL_EOF) {
    tl_se_item it;
    const cJSON *resp = cJSON_GetObjectItem(o, "response"), *model = cJSON_GetObjectItem(o, "model");
    tl_parsed p;
    tl_parsed_init(&p);
    if (res != TL_JL_RECORD || tl_se_item_from_json(cJSON_GetObjectItem(o, "item"), &it, &err) ||
        !cJSON_IsString(resp) ||
        tl_se_legacy_parse(lg, &it, resp->valuestring,
                           cJSON_IsString(model) ? model->valuestring : "", &p)) {
      fprintf(stderr, "line %ld: %s\n", r.line_no, err.msg);
      rc = 2;
      break;
    }
    cJSON *out = cJSON_CreateObject();
    if (p.answer) cJSON_AddStringToObject(out, "answer", p.answer);
    else cJSON_AddNullToObject(out, "answer");
    cJSON_AddNumberToObject(out, "correct", p.correct);
    cJSON_AddStringToObject(out, "status", tl_pstatus_name(p.status));
    cJSON_AddStringToObject(out, "rule", p.rule);
    char *s = cJSON_PrintUnformatted(out);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(out);
    cJSON_Delete(o);
    tl_parsed_release(&p);
    tl_se_item_release(&it);
  }
  tl_jsonl_close(&r);
  tl_se_legacy_free(lg);
  return rc;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--dump") == 0) return dump(argv[2]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rules),      cmocka_unit_test(test_int_limit),
      cmocka_unit_test(test_dispatch),
  };
  const struct CMUnitTest shared[] = {
      cmocka_unit_test(test_real_313),   cmocka_unit_test(test_vs_python_oracle),
  };
  return TU_SHARED_GROUP(argc, argv, tests, shared, NULL, NULL);
}
