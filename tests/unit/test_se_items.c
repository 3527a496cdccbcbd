/* test_se_items.c - ids, option blocks, item loading and both prompt variants. */
#include "testutil.h"

static void test_ids(void **state) {
  (void)state;
  static const struct {
    const char *id;
    int ok;
    int task;
    const char *mode, *inst;
    int qid;
  } T[] = {
      {"spatialmap.tqa.2000.0", 1, TL_SE_SPATIALMAP, "tqa", "2000", 0},
      {"mazenav.vqa.116.2", 1, TL_SE_MAZENAV, "vqa", "116", 2},
      {"spatialgrid.vtqa.396.1", 1, TL_SE_SPATIALGRID, "vtqa", "396", 1},
      {"spatialreal.vqa.sa_1543979.0", 1, TL_SE_SPATIALREAL, "vqa", "sa_1543979", 0},
      {"spatialmap.tqa.2000", 0, 0, "", "", 0},
      {"spatialmap.tqa.2000.x", 0, 0, "", "", 0},
      {"spatialmap.xqa.2000.0", 0, 0, "", "", 0},
      {"maze.tqa.1.0", 0, 0, "", "", 0},
      {"spatialmap.tqa..0", 0, 0, "", "", 0},
      {"", 0, 0, "", "", 0},
  };
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
    tl_se_task task;
    char mode[8];
    char *inst = NULL;
    int qid;
    tl_err err;
    tl_status st = tl_se_parse_id(T[i].id, &task, mode, &inst, &qid, &err);
    if (!T[i].ok) {
      assert_int_equal(st, TL_EINPUT);
      continue;
    }
    assert_int_equal(st, TL_OK);
    assert_int_equal(task, T[i].task);
    assert_string_equal(mode, T[i].mode);
    assert_string_equal(inst, T[i].inst);
    assert_int_equal(qid, T[i].qid);
    free(inst);
  }
}

static void test_options(void **state) {
  (void)state;
  static const struct {
    const char *text;
    int n;
    const char *opts[4];
  } T[] = {
      {"Q? Available options:\nA. Northeast\nB. Northwest\nC. Southwest\nD. Southeast.", 4,
       {"Northeast", "Northwest", "Southwest", "Southeast"}},
      {"Is it? Available options:\nA. Yes\nB. No.", 2, {"Yes", "No"}},
      {"Q? Available options:\nA. Narwhal's Novelties\nB. Oz Oddities\nC. Coral Crafts\nD. St. Ives.", 4,
       {"Narwhal's Novelties", "Oz Oddities", "Coral Crafts", "St. Ives"}},
      {"How many? Available options:\nA. eight\nB. five\nC. seven\nD. six.", 4,
       {"eight", "five", "seven", "six"}},
      {"No block here.", 0, {0}},
      {"Available options: A. x", 0, {0}},
  };
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
    char letters[TL_SE_MAX_OPTIONS];
    char *texts[TL_SE_MAX_OPTIONS];
    int n = tl_se_parse_options(T[i].text, letters, texts);
    assert_int_equal(n, T[i].n);
    for (int k = 0; k < n; k++) {
      assert_int_equal(letters[k], 'A' + k);
      assert_string_equal(texts[k], T[i].opts[k]);
      free(texts[k]);
    }
  }
}

static const char ITEM[] =
    "{\"id\":\"mazenav.tqa.3.2\",\"text\":\"Is the exit (E) directly below the starting point "
    "(S)? Available options:\\nA. Yes\\nB. No.\",\"oracle_answer\":\"No\",\"oracle_option\":\"B\","
    "\"oracle_full_answer\":\"B. No\"}";

static void test_prompts(void **state) {
  (void)state;
  tl_se_item it;
  tu_item(&it, ITEM);
  char *p = tl_se_build_prompt(&it, TL_SE_PROMPT_REASON, 0);
  assert_string_equal(p, "Is the exit (E) directly below the starting point (S)? Available "
                         "options:\nA. Yes\nB. No.\nFirst, provide a concise answer in one "
                         "sentence. Then, elaborate on the reasoning behind your answer in a "
                         "detailed, step-by-step explanation.");
  free(p);
  p = tl_se_build_prompt(&it, TL_SE_PROMPT_REASON, 1);
  assert_non_null(strstr(p, "B. No. First, provide a concise"));
  free(p);
  p = tl_se_build_prompt(&it, TL_SE_PROMPT_LETTER, 0);
  const char *want =
      "Is the exit (E) directly below the starting point (S)? Available options:\nA. Yes\nB. No.\n"
      "First, provide a single letter response that selects the option which best answers the "
      "question. Then, elaborate on the reasoning behind your answer in a detailed, step-by-step "
      "explanation. Please strictly format the final response as follows -- Answer: <A single "
      "letter option that best answers the question>.\nReason: <reasoning behind the answer>\n"
      "Read the question again:\nIs the exit (E) directly below the starting point (S)? "
      "Available options:\nA. Yes\nB. No.";
  assert_string_equal(p, want);
  free(p);
  tl_se_item_release(&it);
}

static void test_bad_items(void **state) {
  (void)state;
  static const char *const BAD[] = {
      "{\"text\":\"x\",\"oracle_answer\":\"1\",\"oracle_option\":\"A\",\"oracle_full_answer\":\"A. 1\"}",
      "{\"id\":5,\"text\":\"x\",\"oracle_answer\":\"1\",\"oracle_option\":\"A\",\"oracle_full_answer\":\"A. 1\"}",
      "{\"id\":\"spatialmap.tqa.1\",\"text\":\"x\",\"oracle_answer\":\"1\",\"oracle_option\":\"A\",\"oracle_full_answer\":\"A. 1\"}",
      "{\"id\":\"mazenav.tqa.3.2\",\"text\":\"Q Available options:\\nA. Yes\\nB. No.\",\"oracle_answer\":\"No\",\"oracle_option\":\"C\",\"oracle_full_answer\":\"C. No\"}",
      "[1,2]",
  };
  for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
    cJSON *o = cJSON_Parse(BAD[i]);
    assert_non_null(o);
    tl_se_item it;
    tl_err err;
    assert_int_equal(tl_se_item_from_json(o, &it, &err), TL_EINPUT);
    assert_true(strlen(err.msg) > 0);
    cJSON_Delete(o);
  }
}

/* All 1,500 real Spatial-Map TQA items: 4 options each, oracle_full_answer == "X. answer",
 * and the oracle letter names the oracle text. */
static void test_real_items(void **state) {
  (void)state;
  TU_NEED_SHARED(path, "spatialeval/spatialmap_tqa.jsonl");
  tl_se_item *items;
  int n = tu_load_items(path, &items);
  assert_int_equal(n, 1500);
  int qcount[3] = {0};
  for (int i = 0; i < n; i++) {
    tl_se_item *it = &items[i];
    assert_int_equal(it->task, TL_SE_SPATIALMAP);
    assert_int_equal(it->n_options, 4);
    char want[512];
    snprintf(want, sizeof want, "%s. %s", it->oracle_option, it->oracle_answer);
    assert_string_equal(it->oracle_full_answer, want);
    assert_string_equal(it->opt_text[it->oracle_option[0] - 'A'], it->oracle_answer);
    qcount[it->qid]++;
    tl_se_item_release(it);
  }
  free(items);
  assert_int_equal(qcount[0], 500);
  assert_int_equal(qcount[1], 500);
  assert_int_equal(qcount[2], 500);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ids),        cmocka_unit_test(test_options),
      cmocka_unit_test(test_prompts),    cmocka_unit_test(test_bad_items),
  };
  const struct CMUnitTest shared[] = {
      cmocka_unit_test(test_real_items),
  };
  return TU_SHARED_GROUP(argc, argv, tests, shared, NULL, NULL);
}
