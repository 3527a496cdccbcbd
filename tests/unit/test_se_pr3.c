/* test_se_pr3.c - the 'pr3' mode (published generic parser, bugs included).
 *
 * 1. test_edge_cases: table of responses x items x prompt variants with the expected letter,
 *    status, rule and score (spec section 3 edge cases, Yes/No items, both prompt variants).
 * 2. test_real_data: fixed expectations on real responses (../shared/data/spatialeval).
 * 3. test_oracle_agreement: C vs tools/oracle/pr3_oracle.py (Python `re`, the reference
 *    semantics) on every real response x prompt variant plus generated adversarial responses;
 *    every answer, score, status and rule must agree. Skips when /usr/bin/python3 is absent. */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>

#include "testutil.h"
#include "tally/str.h"

#ifndef TALLY_SRC_DIR
#define TALLY_SRC_DIR TALLY_SOURCE_DIR
#endif
#define PYTHON "/usr/bin/python3"

/* ---- synthetic items -------------------------------------------------------------------- */
enum { I_MAP0, I_MAP1, I_MAZE2, I_COUNT, I_ACCENT, I_NOBLOCK, I_NINE, I_ODD, I__N };
static const char *const ITEMS[I__N] = {
    [I_MAP0] = "{\"id\":\"spatialmap.tqa.2000.0\",\"text\":\"In which direction is Planetarium "
               "Prints relative to Police Supply Store? Available options:\\nA. Northeast\\nB. "
               "Northwest\\nC. Southwest\\nD. Southeast.\",\"oracle_answer\":\"Northeast\","
               "\"oracle_option\":\"A\",\"oracle_full_answer\":\"A. Northeast\"}",
    [I_MAP1] = "{\"id\":\"spatialmap.tqa.2000.1\",\"text\":\"Which object is in the Northwest of "
               "Police Supply Store? Available options:\\nA. Coral Crafts\\nB. Narwhal's "
               "Novelties\\nC. Oz Oddities\\nD. Police Supply Store.\",\"oracle_answer\":\"Coral "
               "Crafts\",\"oracle_option\":\"A\",\"oracle_full_answer\":\"A. Coral Crafts\"}",
    [I_MAZE2] = "{\"id\":\"mazenav.tqa.3.2\",\"text\":\"Is the exit (E) directly below the "
                "starting point (S)? Available options:\\nA. Yes\\nB. No.\",\"oracle_answer\":"
                "\"No\",\"oracle_option\":\"B\",\"oracle_full_answer\":\"B. No\"}",
    [I_COUNT] = "{\"id\":\"spatialmap.tqa.2000.2\",\"text\":\"How many objects are in the "
                "Southeast of X? Available options:\\nA. 1\\nB. 0\\nC. 2\\nD. 3.\","
                "\"oracle_answer\":\"0\",\"oracle_option\":\"B\",\"oracle_full_answer\":\"B. 0\"}",
    [I_ACCENT] = "{\"id\":\"spatialreal.tqa.sa_1.0\",\"text\":\"Which one? Available "
                 "options:\\nA. Crème\\nB. Oz's\\nC. caf\xc3\xa9!\\nD. St. Ives.\","
                 "\"oracle_answer\":\"Oz's\",\"oracle_option\":\"B\",\"oracle_full_answer\":"
                 "\"B. Oz's\"}",
    [I_NOBLOCK] = "{\"id\":\"spatialreal.tqa.sa_2.0\",\"text\":\"How many chairs? Options: A. "
                  "six, B. two\",\"oracle_answer\":\"six\",\"oracle_option\":\"A\","
                  "\"oracle_full_answer\":\"A. six\"}",
    [I_NINE] = "{\"id\":\"spatialreal.tqa.sa_3.0\",\"text\":\"Pick. Available options:\\nA. "
               "a\\nB. b\\nC. c\\nD. d\\nE. e\\nF. f\\nG. g\\nH. h\\nI. i.\",\"oracle_answer\":"
               "\"a\",\"oracle_option\":\"A\",\"oracle_full_answer\":\"A. a\"}",
    /* odd block: spaces around the dots, a blank line, letters not starting at A */
    [I_ODD] = "{\"id\":\"spatialreal.tqa.sa_4.0\",\"text\":\"Odd. Available options:\\n  "
              "C . left \\n\\n D.right\\nE .  up.\",\"oracle_answer\":\"up\",\"oracle_option\":"
              "\"E\",\"oracle_full_answer\":\"E. up\"}",
};

/* Prompt variants: NONE = item->text (prompt NULL), REASON (VLM), REASON_LM, LETTER. */
enum { P_NONE, P_REASON, P_REASON_LM, P_LETTER };

static char *make_prompt(const tl_se_item *it, int pv) {
  switch (pv) {
  case P_REASON: return tl_se_build_prompt(it, TL_SE_PROMPT_REASON, 0);
  case P_REASON_LM: return tl_se_build_prompt(it, TL_SE_PROMPT_REASON, 1);
  case P_LETTER: return tl_se_build_prompt(it, TL_SE_PROMPT_LETTER, 0);
  default: return NULL;
  }
}

static tl_se_pr3 *g_pr3;

static int setup(void **state) {
  (void)state;
  tl_err err;
  g_pr3 = tl_se_pr3_new(&err);
  if (!g_pr3) fprintf(stderr, "pr3_new: %s\n", err.msg);
  return g_pr3 ? 0 : -1;
}
static int teardown(void **state) {
  (void)state;
  tl_se_pr3_free(g_pr3);
  return 0;
}

/* ---- 1. edge cases ---------------------------------------------------------------------- */
#define OK TL_PS_OK
#define NA TL_PS_NO_ANSWER
#define NO TL_PS_NO_OPTIONS
#define DIR "direct_choice_text"
#define TAG "answer_tag_letter"
#define NT "no_tag_first_letter"
#define TNL "answer_tag_no_letter"
#define NTNL "no_tag_no_letter"

static const struct {
  int item, pv;
  const char *response;
  const char *answer; /* NULL = none */
  tl_pstatus status;
  const char *rule;
  int correct;
} EDGE[] = {
    /* spec section 3, verified edge cases */
    {I_MAP0, P_REASON, "Answer: B", "B", OK, TAG, 0},
    {I_MAP0, P_REASON, "**Answer:** D", "D", OK, TAG, 0},
    {I_MAP0, P_LETTER,
     "Answer: <A single letter option that best answers the question>.\nAnswer: A", "A", OK, TAG, 1},
    {I_MAP0, P_REASON, "Answer: (B)", NULL, NA, TNL, 0},
    {I_MAP0, P_REASON, "Answer: Down", "D", OK, TAG, 0},
    {I_MAP1, P_REASON, "Answer: Coral Crafts", "C", OK, TAG, 0}, /* initial letter, not A */
    {I_MAP1, P_REASON, "Answer: Police Supply Store", NULL, NA, TNL, 0},
    {I_MAP0, P_REASON, "B. Northwest", "B", OK, NT, 0},
    {I_MAP0, P_REASON, "Northwest", NULL, NA, NTNL, 0},
    {I_MAP0, P_REASON, "Answer: Northeast of the store", "A", OK, DIR, 1},
    {I_MAP0, P_REASON, "The answer is B", "A", OK, NT, 1},   /* 'a' of "answer" */
    {I_MAP0, P_REASON, "Southwest is correct", "C", OK, NT, 0}, /* 'c' of "correct" */
    {I_MAZE2, P_REASON, "The exit is above", "A", OK, NT, 0},   /* 'a' of "above" = Yes */
    /* direct answers: case, punctuation, first "Answer:" only */
    {I_MAP0, P_REASON, "answer: southwest.", "C", OK, DIR, 0},
    {I_MAP0, P_REASON, "ANSWER : b", "B", OK, TAG, 0},
    {I_MAP0, P_REASON, "Answer: Northeast!\nAnswer: D", "A", OK, DIR, 1},
    {I_MAP0, P_REASON, "Answer: NE\nAnswer: Northeast", NULL, NA, TNL, 0}, /* only the first tag is direct */
    {I_MAP0, P_REASON, "Reason: far.\nAnswer: C", "C", OK, TAG, 0},
    {I_MAP0, P_REASON, "**Answer**: **Southeast**", "D", OK, DIR, 0},
    {I_MAP0, P_REASON, "Answer:\n\nD. Southeast", "D", OK, TAG, 0}, /* token "D" */
    /* the LM prompt glues the instruction onto the last option: "Southeast" is not a choice */
    {I_MAP0, P_REASON_LM, "Answer: Southeast", NULL, NA, TNL, 0},
    {I_MAP0, P_REASON_LM, "Answer: Northeast", "A", OK, DIR, 1},
    {I_MAP0, P_NONE, "Answer: Southeast", "D", OK, DIR, 0},
    {I_MAP0, P_LETTER, "Answer: Southeast", "D", OK, DIR, 0},
    /* the placeholder repeated from the letter prompt */
    {I_MAP0, P_LETTER, "Answer: <A single letter option that best answers the question>.", "A",
     OK, NT, 1}, /* no usable tag: first a-d anywhere = 'A' of "Answer" */
    {I_MAP0, P_LETTER, "Reason: see.\nthe correct answer is D", "A", OK, NT, 1}, /* 'a' of "Reason" */
    {I_MAP0, P_LETTER, "See: the correct answer is D", "D", OK, NT, 0},
    {I_MAP0, P_LETTER, "the correct answer is D", "D", OK, NT, 0},
    {I_MAP0, P_LETTER, "The Correct Answer Is  **B**", "B", OK, NT, 0},
    /* Yes/No items: range [A-B] */
    {I_MAZE2, P_REASON, "Answer: No", "B", OK, DIR, 1},
    {I_MAZE2, P_REASON, "Answer: Yes, it is.", "A", OK, DIR, 0},
    {I_MAZE2, P_REASON, "Answer: C", NULL, NA, TNL, 0},
    {I_MAZE2, P_REASON, "No.", NULL, NA, NTNL, 0},
    {I_MAZE2, P_REASON, "No, it is not; the exit is left.", NULL, NA, NTNL, 0},
    {I_MAZE2, P_REASON, "No, it is below.", "B", OK, NT, 1},
    {I_MAZE2, P_LETTER, "Answer: b. Reason: it is not", "B", OK, TAG, 1},
    /* numeric choices: a number is a direct answer */
    {I_COUNT, P_REASON, "Answer: 0", "B", OK, DIR, 1},
    {I_COUNT, P_REASON, "Answer: 3.", "D", OK, DIR, 0},
    {I_COUNT, P_REASON, "Answer: 4", NULL, NA, TNL, 0},
    {I_COUNT, P_REASON, "There are 0 objects", "A", OK, NT, 0}, /* 'a' of "are" */
    /* Unicode: \w keeps accents, [^\w\s] drops apostrophes (both kinds) and '!' */
    {I_ACCENT, P_REASON, "Answer: crème", "A", OK, DIR, 0},
    {I_ACCENT, P_REASON, "Answer: OZ\xe2\x80\x99S", "B", OK, DIR, 1},
    {I_ACCENT, P_REASON, "Answer: ozs", "B", OK, DIR, 1},
    {I_ACCENT, P_REASON, "Answer: CAF\xc3\x89", "C", OK, DIR, 0},
    {I_ACCENT, P_REASON, "Answer: St. Ives", NULL, NA, TNL, 0}, /* token "St" */
    /* no options block in the prompt: the original skips the line (min of []) */
    {I_NOBLOCK, P_NONE, "Answer: A", NULL, NO, "no_options", 0},
    {I_NOBLOCK, P_REASON, "A", NULL, NO, "no_options", 0},
    /* nine options: range [A-I]; IGNORECASE also takes U+0131 for I, as Python does */
    {I_NINE, P_REASON, "Answer: i", "I", OK, DIR, 0},
    {I_NINE, P_REASON, "Answer: a", "A", OK, DIR, 1},
    {I_NINE, P_REASON, "Answer: Ix", "I", OK, TAG, 0},
    {I_NINE, P_REASON, "Answer: \xc4\xb1", "\xc4\xb1", OK, TAG, 0},
    {I_NINE, P_REASON, "Answer: J", NULL, NA, TNL, 0},
    {I_NINE, P_REASON, "xyz hi", "H", OK, NT, 0},
    /* odd block: letters C..E, texts "left " -> "left", "right", "up." -> "up" */
    {I_ODD, P_NONE, "Answer: left", "C", OK, DIR, 0},
    {I_ODD, P_NONE, "Answer: up", "E", OK, DIR, 1},
    {I_ODD, P_NONE, "Answer: B", NULL, NA, TNL, 0},
    {I_ODD, P_NONE, "abc", "C", OK, NT, 0},
    /* Python's \s covers U+001C..U+001F (PCRE2's does not) */
    {I_MAP0, P_REASON, "Answer:\x1c" "B", "B", OK, TAG, 0},
    {I_MAP0, P_REASON, "Answer:\xe1\xa0\x8e" "B", NULL, NA, TNL, 0}, /* U+180E is not \s */
};

/* The cases twice over: with the options of every prompt cached, and with a cache that holds
 * one prompt (emptied before almost every case); then with one that holds two, in the reverse
 * order. The results are the same. */
static void test_edge_cases(void **state) {
  (void)state;
  tl_se_item items[I__N];
  for (int i = 0; i < I__N; i++) tu_item(&items[i], ITEMS[i]);
  tl_err perr;
  tl_se_pr3 *small = tl_se_pr3_new(&perr);
  assert_non_null(small);
  const size_t ncase = sizeof EDGE / sizeof EDGE[0];
  for (size_t q = 0; q < 6 * ncase; q++) {
    const size_t k = q / ncase == 5 ? ncase - 1 - q % ncase : q % ncase;
    const tl_se_pr3 *pr = q / ncase < 2 ? g_pr3 : small;
    if (q == 2 * ncase) tl_se_pr3_test_cache_max(small, 1);
    if (q == 4 * ncase) tl_se_pr3_test_cache_max(small, 2);
    const tl_se_item *it = &items[EDGE[k].item];
    char *prompt = make_prompt(it, EDGE[k].pv);
    tl_parsed out;
    tl_parsed_init(&out);
    assert_int_equal(tl_se_pr3_parse(pr, it, prompt, EDGE[k].response, &out), TL_OK);
    if (out.status != EDGE[k].status || strcmp(out.rule, EDGE[k].rule) != 0 ||
        out.correct != EDGE[k].correct ||
        (EDGE[k].answer ? !out.answer || strcmp(out.answer, EDGE[k].answer) != 0 : !!out.answer))
      fail_msg("pass %zu, case %zu (%s): got answer=%s status=%s rule=%s correct=%d; want %s %s %s %d", q / ncase, k,
               EDGE[k].response, out.answer ? out.answer : "(null)",
               tl_pstatus_name(out.status), out.rule, out.correct,
               EDGE[k].answer ? EDGE[k].answer : "(null)", tl_pstatus_name(EDGE[k].status),
               EDGE[k].rule, EDGE[k].correct);
    tl_parsed_release(&out);
    free(prompt);
  }
  tl_se_pr3_free(small);
  /* through the dispatcher: mode pr3, NULL prompt = item->text, NULL response = missing */
  tl_err err;
  tl_se_parser *p = tl_se_parser_new(TL_SE_PR3, &err);
  assert_non_null(p);
  tl_parsed out;
  tl_parsed_init(&out);
  assert_int_equal(tl_se_parse(p, &items[I_MAP0], NULL, "Answer: Northeast.", NULL, &out), TL_OK);
  assert_string_equal(out.answer, "A");
  assert_int_equal(out.correct, 1);
  assert_int_equal(tl_se_parse(p, &items[I_MAP0], NULL, NULL, NULL, &out), TL_OK);
  assert_int_equal(out.status, TL_PS_MISSING);
  assert_null(out.answer);
  tl_parsed_release(&out);
  tl_se_parser_free(p);
  for (int i = 0; i < I__N; i++) tl_se_item_release(&items[i]);
}

/* ---- real data ---------------------------------------------------------------------------- */
typedef struct {
  tl_se_item *item; /* borrowed (from the loaded items) or owned (synthetic) */
  char *response;
  char *source; /* "vlm313:<model>:<id>" or "r1:<id>" */
} real_case;

static const tl_se_item *find_item(tl_se_item *items, int n, const char *id) {
  for (int i = 0; i < n; i++)
    if (strcmp(items[i].id, id) == 0) return &items[i];
  return NULL;
}

/* A synthetic Grid item for the one spatialgrid line of vlm_outputs_313 (its options are not in
 * the shared data; the oracle letter C is). */
static const char GRID_ITEM[] =
    "{\"id\":\"spatialgrid.tqa.2.0\",\"text\":\"How many blocks contain dog? Available "
    "options:\\nA. 3\\nB. 4\\nC. 5\\nD. 6.\",\"oracle_answer\":\"5\",\"oracle_option\":\"C\","
    "\"oracle_full_answer\":\"C. 5\"}";

/* Loads the 313 VLM answers and the 10 R1 answers with their items. Returns the count; the
 * synthetic grid item is returned in *grid (caller releases). */
static int load_real(tl_se_item *items, int nitems, tl_se_item *grid, real_case **out) {
  static const char *const FILES[2] = {"spatialeval/outputs/vlm_outputs_313.jsonl",
                                       "spatialeval/outputs/deepseek_r1_distill_qwen1.5b_spatialmap_tqa_10.jsonl"};
  tu_item(grid, GRID_ITEM);
  real_case *rc = calloc(400, sizeof *rc);
  assert_non_null(rc);
  int n = 0;
  for (int f = 0; f < 2; f++) {
    const char *path = tu_shared_path(FILES[f]);
    assert_non_null(path);
    tl_jsonl r;
    tl_err err;
    assert_int_equal(tl_jsonl_open(&r, path, 0, &err), TL_OK);
    cJSON *obj;
    tl_jl_result res;
    while ((res = tl_jsonl_next(&r, &obj, &err)) != TL_JL_EOF) {
      assert_int_equal(res, TL_JL_RECORD);
      assert_true(n < 400);
      const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(obj, f == 0 ? "sample_id" : "id"));
      const char *resp =
          cJSON_GetStringValue(cJSON_GetObjectItem(obj, f == 0 ? "raw_answer" : "response"));
      const char *opt = cJSON_GetStringValue(cJSON_GetObjectItem(obj, "oracle_option"));
      assert_non_null(id);
      assert_non_null(resp);
      assert_non_null(opt);
      char tid[128];
      snprintf(tid, sizeof tid, "%s", id);
      char *v = strstr(tid, ".vqa.");
      if (v) memcpy(v, ".tqa.", 5); /* the VQA answer's TQA twin has the same oracles */
      const tl_se_item *it = find_item(items, nitems, tid);
      if (!it && strncmp(tid, "spatialgrid.tqa.2.0", 20) == 0) it = grid;
      if (!it) fail_msg("no item for %s", id);
      assert_string_equal(it->oracle_option, opt);
      rc[n].item = (tl_se_item *)it;
      rc[n].response = tl_strdup(resp);
      char src[256];
      const char *model = f == 0 ? cJSON_GetStringValue(cJSON_GetObjectItem(obj, "model")) : "r1";
      snprintf(src, sizeof src, "%s:%s", model ? model : "?", id);
      rc[n].source = tl_strdup(src);
      n++;
      cJSON_Delete(obj);
    }
    tl_jsonl_close(&r);
  }
  *out = rc;
  return n;
}

static void free_real(real_case *rc, int n) {
  for (int i = 0; i < n; i++) {
    free(rc[i].response);
    free(rc[i].source);
  }
  free(rc);
}

/* 600 prompts of one length whose options differ: each prompt's own option text is a direct
 * answer, its neighbour's is not; asked in two passes (the second from the cache), and through
 * a cache that holds 7 prompts. Prompts that share a length and a probe sequence must not share
 * options. */
static void test_cache_same_length(void **state) {
  (void)state;
  tl_se_item it;
  tu_item(&it, ITEMS[I_MAP0]);
  tl_err err;
  tl_se_pr3 *small = tl_se_pr3_new(&err);
  assert_non_null(small);
  tl_se_pr3_test_cache_max(small, 7);
  enum { NP = 600 };
  for (int pass = 0; pass < 3; pass++)
    for (int i = 0; i < NP; i++) {
      char prompt[160], own[32], other[32];
      snprintf(prompt, sizeof prompt, "Question?\nAvailable options:\nA. opt%04d\nB. alt%04d\n", i, i);
      snprintf(own, sizeof own, "Answer: alt%04d", i);
      snprintf(other, sizeof other, "Answer: alt%04d", (i + 1) % NP);
      const tl_se_pr3 *pr = pass == 2 ? small : g_pr3;
      tl_parsed out;
      tl_parsed_init(&out);
      assert_int_equal(tl_se_pr3_parse(pr, &it, prompt, own, &out), TL_OK);
      if (strcmp(out.rule, DIR) != 0 || !out.answer || strcmp(out.answer, "B") != 0)
        fail_msg("pass %d, prompt %d: '%s' read as %s by %s, want B by %s", pass, i, own,
                 out.answer ? out.answer : "(none)", out.rule, DIR);
      assert_int_equal(tl_se_pr3_parse(pr, &it, prompt, other, &out), TL_OK);
      if (strcmp(out.rule, DIR) == 0) fail_msg("pass %d, prompt %d: '%s' is another prompt's option", pass, i, other);
      tl_parsed_release(&out);
    }
  tl_se_pr3_free(small);
  tl_se_item_release(&it);
}

/* Fixed expectations on the real answers (reason prompt, VLM style). */
static void test_real_data(void **state) {
  (void)state;
  TU_NEED_SHARED(ipath0, "spatialeval/spatialmap_tqa.jsonl");
  char ipath[4096]; /* tu_shared_path returns a static buffer */
  snprintf(ipath, sizeof ipath, "%s", ipath0);
  TU_NEED_SHARED(vpath, "spatialeval/outputs/vlm_outputs_313.jsonl");
  (void)vpath;
  tl_se_item *items, grid;
  int nitems = tu_load_items(ipath, &items);
  real_case *rc;
  int n = load_real(items, nitems, &grid, &rc);
  assert_int_equal(n, 323);
  int ok = 0, correct = 0, by_rule[5] = {0};
  static const char *const RULES[5] = {DIR, TAG, NT, TNL, NTNL};
  for (int i = 0; i < n; i++) {
    char *prompt = make_prompt(rc[i].item, P_REASON);
    tl_parsed out;
    tl_parsed_init(&out);
    assert_int_equal(tl_se_pr3_parse(g_pr3, rc[i].item, prompt, rc[i].response, &out), TL_OK);
    ok += out.status == TL_PS_OK;
    correct += out.correct;
    for (int k = 0; k < 5; k++) by_rule[k] += strcmp(out.rule, RULES[k]) == 0;
    /* R1 answers all end with "Answer: X": the tag letter is taken (the first one) */
    if (strncmp(rc[i].source, "r1:", 3) == 0) {
      assert_int_equal(out.status, TL_PS_OK);
      assert_string_equal(out.rule, TAG);
    }
    if (strcmp(rc[i].source, "r1:spatialmap.tqa.2001.0") == 0) {
      assert_string_equal(out.answer, "D"); /* "D. Southeast ... Answer: D", oracle C */
      assert_int_equal(out.correct, 0);
    }
    if (strstr(rc[i].source, "spatialgrid.vqa.2.0")) { /* "B.\nThere are 25 blocks..." */
      assert_string_equal(out.answer, "B");
      assert_string_equal(out.rule, NT);
    }
    tl_parsed_release(&out);
    free(prompt);
  }
  print_message("pr3 on 323 real answers (reason prompt): %d with a letter, %d correct; rules "
                "direct=%d tag=%d no_tag=%d tag_no_letter=%d no_tag_no_letter=%d\n",
                ok, correct, by_rule[0], by_rule[1], by_rule[2], by_rule[3], by_rule[4]);
  assert_int_equal(by_rule[0] + by_rule[1] + by_rule[2] + by_rule[3] + by_rule[4], n);
  free_real(rc, n);
  for (int i = 0; i < nitems; i++) tl_se_item_release(&items[i]);
  free(items);
  tl_se_item_release(&grid);
}

/* ---- 3. agreement with the Python oracle ------------------------------------------------- */
typedef struct {
  const tl_se_item *item;
  char *prompt; /* NULL: item text */
  char *response;
} ocase;

static cJSON *item_json(const tl_se_item *it) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "id", it->id);
  cJSON_AddStringToObject(o, "text", it->text);
  cJSON_AddStringToObject(o, "oracle_answer", it->oracle_answer);
  cJSON_AddStringToObject(o, "oracle_option", it->oracle_option);
  cJSON_AddStringToObject(o, "oracle_full_answer", it->oracle_full_answer);
  return o;
}

/* Fragments the adversarial responses are made of: tags, placeholders, letters, option texts,
 * punctuation, and the code points where Python's `re` and PCRE2 differ by default. */
static const char *const FRAG[] = {
    "Answer", "answer", "ANSWER", "**", "*", ":", ": ", " ", "  ", "\n", "\n\n", "\t", ".", "(B)",
    "B", "b", "C.", "d", "E", "I", "h", "\xc4\xb1" /* ı */, "\xc4\xb0" /* İ */,
    "\xc5\xbf" /* ſ */, "\xe2\x84\xaa" /* K */, "Reason:", "**Reason**", "Reasoning",
    "<A single letter option that best answers the question>",
    "<A s\xc4\xb1ngle letter option that best answers the question>", "<A single letter option",
    "<a SINGLE letter option that best answers the question>", "the correct answer is",
    "The correct answer is", "the correct answer \xc4\xb1s", "Northeast", "northwest.",
    "Southeast", "Southwest!", "Coral", "Crafts", "Yes", "No", "no", "0", "3", "$", "$B",
    "\xe2\x80\x99", "'", "Oz's", "Cr\xc3\xa8me", "caf\xc3\x89", "\xc3\xa9", "\x1c", "\x1f",
    "\xe1\xa0\x8e" /* U+180E */, "\xc2\xa0", "\xc2\x85", "\xe2\x80\xa8", "_", "Down", "up",
    "left", "i", "\xc2\xb2" /* superscript two (\w in Python) */, "\xcc\x81" /* combining acute */,
    "\xe4\xb8\x80" /* CJK one */, "First", "St. Ives", "x", "The exit is above", "</think>",
    "D. Southeast", "\nAnswer: ", "**Answer:** ", "Answer: B.", "**Answer**:\n", "Answer:**",
};
#define NFRAG (sizeof FRAG / sizeof FRAG[0])

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

/* Prompts of odd shape for the generated cases (options parsed from these, not the item). */
static const char *const ODD_PROMPTS[] = {
    "Q? Available options:\nA. Northeast\nB. Northwest\nC. Southwest\nD. Southeast. First, "
    "provide a concise answer in one sentence.",
    "Q? Available options:\n\tA .  Yes \nB.No\x1c\nC. Oz\xe2\x80\x99s.\n",
    "Q? Available options: A. x\nB. y",
    "Q? available options:\nA. x\nB. y.",
    "Q? Available options:\nK. kilo\nS. sierra.\nAvailable options:\nA. other.",
    "Q? Available options:\nH. hotel\nJ. juliet.",
    "Q? Available options:\n\xe1\xa0\x8e" "A. x\nB. y.",
    "Q? Available options:\n\x1f" "A. x\x1f\x1f\nB. y \xe1\xa0\x8e.",
    "Q? Available options:\nA. caf\xc3\xa9\nB. \xc2\xb2\nC. __\nD. .",
};
#define NODD (sizeof ODD_PROMPTS / sizeof ODD_PROMPTS[0])

static char *gen_response(uint64_t *s) {
  tl_buf b;
  tl_buf_init(&b);
  int k = 1 + (int)(rng_next(s) % 7);
  for (int i = 0; i < k; i++) assert_int_equal(tl_buf_puts(&b, FRAG[rng_next(s) % NFRAG]), TL_OK);
  return tl_buf_detach(&b);
}

static int run_oracle(const ocase *cs, int n, cJSON ***results) {
  char in[] = "/tmp/tally_pr3_inXXXXXX", outp[] = "/tmp/tally_pr3_outXXXXXX";
  int fd = mkstemp(in);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  assert_non_null(f);
  for (int i = 0; i < n; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "item", item_json(cs[i].item));
    if (cs[i].prompt) cJSON_AddStringToObject(o, "prompt", cs[i].prompt);
    cJSON_AddStringToObject(o, "response", cs[i].response);
    char *line = cJSON_PrintUnformatted(o);
    fprintf(f, "%s\n", line);
    free(line);
    cJSON_Delete(o);
  }
  fclose(f);
  int ofd = mkstemp(outp);
  assert_true(ofd >= 0);
  close(ofd);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s %s/tools/oracle/pr3_oracle.py < %s > %s", PYTHON, TALLY_SRC_DIR,
           in, outp);
  int rc = system(cmd);
  if (rc != 0) fail_msg("oracle failed (%d): %s", rc, cmd);
  cJSON **res = calloc((size_t)n, sizeof *res);
  assert_non_null(res);
  tl_jsonl r;
  tl_err err;
  assert_int_equal(tl_jsonl_open(&r, outp, 0, &err), TL_OK);
  int m = 0;
  cJSON *obj;
  tl_jl_result jr;
  while ((jr = tl_jsonl_next(&r, &obj, &err)) != TL_JL_EOF) {
    assert_int_equal(jr, TL_JL_RECORD);
    assert_true(m < n);
    res[m++] = obj;
  }
  tl_jsonl_close(&r);
  unlink(in);
  unlink(outp);
  *results = res;
  return m;
}

/* Returns 1 when C and the oracle agree on case i (prints the difference otherwise). */
static int agree(const ocase *c, const cJSON *py, int i) {
  tl_parsed out;
  tl_parsed_init(&out);
  assert_int_equal(tl_se_pr3_parse(g_pr3, c->item, c->prompt, c->response, &out), TL_OK);
  const cJSON *pa = cJSON_GetObjectItem(py, "answer");
  const char *pans = cJSON_IsString(pa) ? pa->valuestring : NULL;
  int pcor = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(py, "correct"));
  const char *pst = cJSON_GetStringValue(cJSON_GetObjectItem(py, "status"));
  const char *prule = cJSON_GetStringValue(cJSON_GetObjectItem(py, "rule"));
  int same = ((!pans && !out.answer) || (pans && out.answer && !strcmp(pans, out.answer))) &&
             pcor == out.correct && pst && !strcmp(pst, tl_pstatus_name(out.status)) && prule &&
             !strcmp(prule, out.rule);
  if (!same)
    print_message("DIFF case %d item %s response [%.120s]: C %s/%d/%s/%s, Python %s/%d/%s/%s\n", i,
                  c->item->id, c->response, out.answer ? out.answer : "null", out.correct,
                  tl_pstatus_name(out.status), out.rule, pans ? pans : "null", pcor,
                  pst ? pst : "?", prule ? prule : "?");
  tl_parsed_release(&out);
  return same;
}

static void test_oracle_agreement(void **state) {
  (void)state;
  if (access(PYTHON, X_OK) != 0) {
    TU_SKIP("skipped: %s is absent\n", PYTHON);
  }
  TU_NEED_SHARED(ipath0, "spatialeval/spatialmap_tqa.jsonl");
  char ipath[4096]; /* tu_shared_path returns a static buffer */
  snprintf(ipath, sizeof ipath, "%s", ipath0);
  TU_NEED_SHARED(vpath, "spatialeval/outputs/vlm_outputs_313.jsonl");
  (void)vpath;
  tl_se_item *items, grid, syn[I__N];
  int nitems = tu_load_items(ipath, &items);
  for (int i = 0; i < I__N; i++) tu_item(&syn[i], ITEMS[i]);
  real_case *rc;
  int nreal = load_real(items, nitems, &grid, &rc);
  enum { NGEN = 1500 };
  const int PV[3] = {P_REASON, P_REASON_LM, P_LETTER};
  int cap = nreal * 3 + NGEN + (int)(sizeof EDGE / sizeof EDGE[0]);
  ocase *cs = calloc((size_t)cap, sizeof *cs);
  assert_non_null(cs);
  int n = 0;
  for (int i = 0; i < nreal; i++) /* real answers x prompt variants */
    for (int v = 0; v < 3; v++) {
      cs[n].item = rc[i].item;
      cs[n].prompt = make_prompt(rc[i].item, PV[v]);
      cs[n].response = tl_strdup(rc[i].response);
      n++;
    }
  int nreal_cases = n;
  for (size_t k = 0; k < sizeof EDGE / sizeof EDGE[0]; k++) { /* the edge table too */
    cs[n].item = &syn[EDGE[k].item];
    cs[n].prompt = make_prompt(cs[n].item, EDGE[k].pv);
    cs[n].response = tl_strdup(EDGE[k].response);
    n++;
  }
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int g = 0; g < NGEN; g++) { /* generated responses over synthetic items and prompts */
    uint64_t r = rng_next(&seed);
    int it = (int)(r % I__N);
    cs[n].item = &syn[it];
    int pk = (int)((r >> 8) % (4 + NODD));
    cs[n].prompt = pk < 4 ? make_prompt(cs[n].item, pk) : tl_strdup(ODD_PROMPTS[pk - 4]);
    cs[n].response = gen_response(&seed);
    n++;
  }
  cJSON **py;
  int m = run_oracle(cs, n, &py);
  assert_int_equal(m, n);
  int agree_real = 0, agree_other = 0;
  for (int i = 0; i < n; i++) {
    int a = agree(&cs[i], py[i], i);
    if (i < nreal_cases) agree_real += a;
    else agree_other += a;
  }
  print_message("pr3 vs Python oracle: real %d/%d (%d answers x 3 prompts), synthetic %d/%d\n",
                agree_real, nreal_cases, nreal, agree_other, n - nreal_cases);
  assert_int_equal(agree_real, nreal_cases);
  assert_int_equal(agree_other, n - nreal_cases);
  for (int i = 0; i < n; i++) {
    free(cs[i].prompt);
    free(cs[i].response);
    cJSON_Delete(py[i]);
  }
  free(py);
  free(cs);
  free_real(rc, nreal);
  for (int i = 0; i < nitems; i++) tl_se_item_release(&items[i]);
  free(items);
  for (int i = 0; i < I__N; i++) tl_se_item_release(&syn[i]);
  tl_se_item_release(&grid);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_edge_cases),
  };
  const struct CMUnitTest shared[] = {
      cmocka_unit_test(test_cache_same_length),
      cmocka_unit_test(test_real_data),
      cmocka_unit_test(test_oracle_agreement),
  };
  return TU_SHARED_GROUP(argc, argv, tests, shared, setup, teardown);
}
