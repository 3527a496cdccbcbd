/* test_import_opencompass.c - the OpenCompass reader (src/import/imp_opencompass.c) through the
 * registry (tl_importer_find / tl_importer_detect) and an emit callback, on the fixtures in
 * tests/fixtures/import/opencompass/: an MT-Bench-101 predictions file and its judged results
 * (dialogues 1 (GR), 923 (SA) and 1208 (CM) of the real data), a split generic dataset (gsm8k_0,
 * gsm8k_1: keys from "0" in each, a gold of 0 absent, a list prompt, a null prediction), a file
 * of bad records, and a judged results file whose detail carries a parsed score. The shared
 * group checks the fixture's dialogue ids and turns against the real MT-Bench-101 data. */
#define _GNU_SOURCE
#include "testutil.h"

#include "import_util.h"
#include "tally/import.h"
#include "tally/inlog.h"

#define FIX TALLY_SOURCE_DIR "/tests/fixtures/import/opencompass/"
#define PRED FIX "predictions/qwen2-7b/"
#define JUDGED FIX "results/qwen2-7b_judged-by--gpt-4o/mtbench101.json"

/* the records a reader emits, kept (import_util.h) */
typedef iu_rec rec_t;
typedef iu_recs recs_t;
#define collect iu_emit
#define recs_free iu_free


/* Reads path with the opencompass reader (import_util.h). */
static tl_status read_oc(const char *path, recs_t *rs, int strict, char **echo, long *problems, tl_err *err) {
  return iu_read_echo("opencompass", path, rs, strict, echo, problems, err);
}

static int contains(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

static void test_registry_detect(void **state) {
  (void)state;
  tl_err err = {0};
  const tl_importer *imp = tl_importer_find("opencompass");
  assert_non_null(imp);
  assert_string_equal(imp->name, "opencompass");
  assert_ptr_equal(tl_importer_detect(PRED "mtbench101.json", &err), imp);
  assert_ptr_equal(tl_importer_detect(JUDGED, &err), imp);
  assert_ptr_equal(tl_importer_detect(PRED "gsm8k_1.json", &err), imp);
  assert_ptr_equal(tl_importer_detect(FIX "results/qwen2-7b_judged-by--gpt-4o", &err), imp); /* a folder */
  /* a VLMEvalKit json table is not ours, nor a plain JSON object */
  const tl_importer *vk = tl_importer_detect(TALLY_SOURCE_DIR "/tests/fixtures/import/vlmevalkit/InternVL2-8B/"
                                                                "InternVL2-8B_MMStar.json", &err);
  assert_true(vk != imp);
  assert_null(tl_importer_detect(TALLY_SOURCE_DIR "/tests/fixtures/import/opencompass/../../../../CMakeLists.txt", &err));
  assert_true(contains(err.msg, "opencompass"));
  assert_true(contains(err.msg, "vlmevalkit"));
}

/* The model's turn answers: keyed by the dialogue (multi_id) and its 1-based turn (turn_id). */
static void test_mtbench_predictions(void **state) {
  (void)state;
  recs_t rs;
  tl_err err = {0};
  long problems = -1;
  assert_int_equal(read_oc(PRED "mtbench101.json", &rs, 0, NULL, &problems, &err), TL_OK);
  assert_int_equal(problems, 0);
  assert_int_equal(rs.n, 6);
  static const char *const ids[] = {"1", "1", "1", "923", "1208", "1208"};
  static const int turns[] = {1, 2, 3, 2, 2, 3};
  for (int i = 0; i < 6; i++) {
    assert_string_equal(rs.r[i].id, ids[i]);
    assert_int_equal(rs.r[i].turn_id, turns[i]);
    assert_int_equal(rs.r[i].stage, 0);
    assert_int_equal(rs.r[i].seed, -1);
    assert_string_equal(rs.r[i].model, "qwen2-7b");
    assert_string_equal(rs.r[i].task, "mtbench101");
    assert_int_equal(rs.r[i].has_verdict, 0);
    assert_null(rs.r[i].item); /* the module's items come from the benchmark file */
    assert_int_equal(rs.r[i].line, i + 1);
    assert_true(contains(rs.r[i].prompt, "\"role\":\"HUMAN\""));
  }
  assert_string_equal(rs.r[0].response, "A is the tallest.");
  assert_string_equal(rs.r[2].response, "<think>D > A and E > D.</think>E is still the tallest.");
  assert_true(contains(rs.r[3].extra, "\"task\":\"SA\""));
  assert_true(contains(rs.r[4].where, "mtbench101.json: key '4'"));
  recs_free(&rs);
}

/* The judge's raw texts, stage 1, matched to the answers by (dialogue, turn); the model is the
 * folder's name less _judged-by--<judge>. */
static void test_mtbench_judged(void **state) {
  (void)state;
  recs_t a, j;
  tl_err err = {0};
  assert_int_equal(read_oc(PRED "mtbench101.json", &a, 0, NULL, NULL, &err), TL_OK);
  assert_int_equal(read_oc(JUDGED, &j, 0, NULL, NULL, &err), TL_OK);
  assert_int_equal(j.n, a.n);
  for (int i = 0; i < j.n; i++) {
    assert_string_equal(j.r[i].id, a.r[i].id);
    assert_int_equal(j.r[i].turn_id, a.r[i].turn_id);
    assert_int_equal(j.r[i].stage, 1);
    assert_string_equal(j.r[i].model, "qwen2-7b");
    assert_true(contains(j.r[i].extra, "\"judge\":\"gpt-4o\""));
    assert_int_equal(j.r[i].has_verdict, 0); /* OpenCompass saves no parsed rating per detail */
    assert_true(contains(j.r[i].where, "details '"));
  }
  assert_string_equal(j.r[1].response, "Correct reasoning [3]. Rating: [[8]]");
  assert_string_equal(j.r[5].response, "No rating given here.");
  recs_free(&a);
  recs_free(&j);
  /* a detail with OpenCompass's own parsed score: the harness's verdict */
  assert_int_equal(read_oc(FIX "scored/results/m1_judged-by--j1/mtbench101.json", &j, 0, NULL, NULL, &err), TL_OK);
  assert_int_equal(j.n, 1);
  assert_int_equal(j.r[0].has_verdict, 1);
  assert_true(j.r[0].verdict == 6.0);
  assert_string_equal(j.r[0].metric, "rating");
  assert_string_equal(j.r[0].model, "m1");
  recs_free(&j);
}

/* A split dataset read from its first file: the splits in order, each keyed from "0", ids the
 * position overall; a gold of 0 is absent (no item); a list prompt's question is its last HUMAN
 * prompt; a null prediction is a null response. */
static void test_split(void **state) {
  (void)state;
  recs_t rs;
  tl_err err = {0};
  long problems = -1;
  assert_int_equal(read_oc(PRED "gsm8k_0.json", &rs, 0, NULL, &problems, &err), TL_OK);
  assert_int_equal(problems, 0);
  assert_int_equal(rs.n, 4);
  for (int i = 0; i < 4; i++) {
    char id[8];
    snprintf(id, sizeof id, "%d", i);
    assert_string_equal(rs.r[i].id, id);
    assert_string_equal(rs.r[i].task, "gsm8k");
    assert_int_equal(rs.r[i].turn_id, -1);
  }
  assert_true(contains(rs.r[0].item, "\"id\":\"0\""));
  assert_true(contains(rs.r[0].item, "\"answer\":\"18\""));
  assert_null(rs.r[1].item); /* gold 0: absent */
  assert_string_equal(rs.r[1].response, "0");
  assert_true(contains(rs.r[2].item, "\"id\":\"2\""));
  assert_true(contains(rs.r[2].where, "gsm8k_1.json"));
  assert_null(rs.r[3].response);
  assert_true(contains(rs.r[3].item, "\"question\":\"Question: A house costs 80000"));
  assert_true(contains(rs.r[3].item, "\"answer\":\"70000\""));
  assert_true(contains(rs.r[3].prompt, "\"role\":\"SYSTEM\""));
  recs_free(&rs);
  /* the folder: datasets in name order, splits in number order */
  assert_int_equal(read_oc(FIX "predictions/qwen2-7b", &rs, 0, NULL, NULL, &err), TL_OK);
  assert_int_equal(rs.n, 10);
  assert_string_equal(rs.r[3].id, "3");
  assert_string_equal(rs.r[3].task, "gsm8k");
  assert_string_equal(rs.r[4].task, "mtbench101");
  assert_string_equal(rs.r[9].id, "1208");
  recs_free(&rs);
}

/* Bad records: reported with the file and the key, counted, the rest read. */
static void test_bad_records(void **state) {
  (void)state;
  recs_t rs;
  tl_err err = {0};
  char *echo = NULL;
  long problems = 0;
  const char *path = FIX "bad/predictions/m1/mtbench101.json";
  assert_int_equal(read_oc(path, &rs, 0, &echo, &problems, &err), TL_OK);
  assert_int_equal(rs.n, 2);
  assert_string_equal(rs.r[0].id, "1");
  assert_string_equal(rs.r[1].id, "17"); /* "0017": the dialogue id as the data writes it */
  assert_int_equal(rs.r[1].turn_id, 2);
  assert_string_equal(rs.r[1].model, "m1");
  assert_int_equal(problems, 4);
  assert_true(contains(echo, "mtbench101.json:2: key 'x1': not a decimal string"));
  assert_true(contains(echo, "mtbench101.json:3: key '2': no 'prediction'"));
  assert_true(contains(echo, "key '3': gold.multi_id \"abc\" is not a dialogue id"));
  assert_true(contains(echo, "key '4': gold.turn_id \"0\" is not a turn"));
  free(echo);
  recs_free(&rs);
  /* strict input: the first bad record stops the read, named */
  assert_int_equal(read_oc(path, &rs, 1, NULL, NULL, &err), TL_EINPUT);
  assert_int_equal(rs.n, 1);
  assert_true(contains(err.msg, "mtbench101.json: key 'x1'"));
  assert_true(contains(err.msg, "strict input"));
  recs_free(&rs);
}

/* The fixture's dialogues and turns are the real data's: each id is a dialogue of that task and
 * each turn one of its turns. */
static void test_real_ids(void **state) {
  (void)state;
  TU_NEED_SHARED(data, "mtbench101/mtbench101.jsonl");
  recs_t rs;
  tl_err err = {0};
  assert_int_equal(read_oc(PRED "mtbench101.json", &rs, 0, NULL, NULL, &err), TL_OK);
  int found = 0;
  tl_jsonl r;
  assert_int_equal(tl_jsonl_open(&r, data, 0, &err), TL_OK);
  cJSON *obj;
  while (tl_jsonl_next(&r, &obj, &err) == TL_JL_RECORD) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(obj, "id");
    char key[24];
    snprintf(key, sizeof key, "%d", id->valueint);
    for (int i = 0; i < rs.n; i++) {
      if (strcmp(rs.r[i].id, key)) continue;
      found++;
      int turns = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(obj, "history"));
      assert_true(rs.r[i].turn_id >= 1 && rs.r[i].turn_id <= turns);
      const char *task = cJSON_GetObjectItemCaseSensitive(obj, "task")->valuestring;
      char want[32];
      snprintf(want, sizeof want, "\"task\":\"%s\"", task);
      assert_true(contains(rs.r[i].extra, want));
    }
    cJSON_Delete(obj);
  }
  tl_jsonl_close(&r);
  assert_int_equal(found, rs.n);
  recs_free(&rs);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_registry_detect), cmocka_unit_test(test_mtbench_predictions),
      cmocka_unit_test(test_mtbench_judged),  cmocka_unit_test(test_split),
      cmocka_unit_test(test_bad_records),     cmocka_unit_test(test_real_ids),
  };
  const struct CMUnitTest shared[] = {
      cmocka_unit_test(test_real_ids),
  };
  return TU_SHARED_GROUP(argc, argv, tests, shared, NULL, NULL);
}
