/* test_import_vlmevalkit.c - the VLMEvalKit reader (src/import/imp_vlmevalkit.c) through the
 * registry and an emit callback, on the fixtures in tests/fixtures/import/vlmevalkit/: a tsv
 * (QUOTE_ALL, under <model>/<eval_id>/) with a row without index, its exact-matching result table
 * (hit, log; a hit that is not 1/0), a csv with quoted fields over several lines, json tables
 * (records with NaN; pandas' split form), an xlsx (read; one cut short, refused) and a SpatialEval
 * table whose items SpatialEval's loader reads. */
#define _GNU_SOURCE
#include "testutil.h"

#include "import_util.h"
#include "tally/import.h"
#include "tally/inlog.h"

#define FIX TALLY_SOURCE_DIR "/tests/fixtures/import/vlmevalkit/"
#define MMB FIX "Qwen2-VL-7B/T20250101-120000/Qwen2-VL-7B_MMBench_DEV_EN.tsv"
#define MMB_RESULT FIX "Qwen2-VL-7B/T20250101-120000/Qwen2-VL-7B_MMBench_DEV_EN_exact_matching_result.tsv"
#define XLSX FIX "Qwen2-VL-7B/Qwen2-VL-7B_MMBench_DEV_EN.xlsx" /* cut short: not a zip */
#define XLSX_OK FIX "llava_v1.5_7b/T20250102-090000/llava_v1.5_7b_AI2D_TEST.xlsx" /* make_xlsx.py */
#define SE FIX "GPT4o/GPT4o_SpatialEval.tsv"

/* the records a reader emits, kept (import_util.h) */
typedef iu_rec rec_t;
typedef iu_recs recs_t;
#define collect iu_emit
#define recs_free iu_free


/* Reads path with the vlmevalkit reader (import_util.h). */
static tl_status read_with(const char *path, recs_t *rs, int strict, char **echo, long *problems, tl_err *err) {
  return iu_read_echo("vlmevalkit", path, rs, strict, echo, problems, err);
}


static int contains(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

static void test_registry_detect(void **state) {
  (void)state;
  tl_err err = {0};
  const tl_importer *imp = tl_importer_find("vlmevalkit");
  assert_non_null(imp);
  assert_ptr_equal(tl_importer_detect(MMB, &err), imp);
  assert_ptr_equal(tl_importer_detect(MMB_RESULT, &err), imp);
  assert_ptr_equal(tl_importer_detect(FIX "llava_v1.5_7b/llava_v1.5_7b_AI2D_TEST.csv", &err), imp);
  assert_ptr_equal(tl_importer_detect(FIX "InternVL2-8B/InternVL2-8B_MMStar.json", &err), imp);
  assert_ptr_equal(tl_importer_detect(FIX "InternVL2-8B/InternVL2-8B_SEEDBench_IMG.json", &err), imp);
  assert_ptr_equal(tl_importer_detect(XLSX, &err), imp);
  assert_ptr_equal(tl_importer_detect(SE, &err), imp);
  /* an OpenCompass predictions file is not ours */
  assert_true(tl_importer_detect(TALLY_SOURCE_DIR "/tests/fixtures/import/opencompass/predictions/qwen2-7b/gsm8k_0.json",
                                 &err) != imp);
}

/* A tsv (QUOTE_ALL, as VLMEvalKit writes it) under <model>/<eval_id>/: model from the folder,
 * dataset from the rest of the name; the items in the generic mcq schema. */
static void test_tsv(void **state) {
  (void)state;
  recs_t rs;
  tl_err err = {0};
  char *echo = NULL;
  long problems = 0;
  assert_int_equal(read_with(MMB, &rs, 0, &echo, &problems, &err), TL_OK);
  assert_int_equal(rs.n, 3);
  assert_int_equal(problems, 1);
  assert_true(contains(echo, "Qwen2-VL-7B_MMBench_DEV_EN.tsv:4: row 3 (index ''): empty index"));
  for (int i = 0; i < 3; i++) {
    assert_string_equal(rs.r[i].model, "Qwen2-VL-7B");
    assert_string_equal(rs.r[i].task, "MMBench_DEV_EN");
    assert_int_equal(rs.r[i].stage, 0);
    assert_int_equal(rs.r[i].seed, -1);
    assert_int_equal(rs.r[i].has_verdict, 0);
  }
  assert_string_equal(rs.r[0].id, "0");
  assert_string_equal(rs.r[0].item,
                      "{\"id\":\"0\",\"question\":\"What color is the bus?\",\"choices\":[\"red\",\"blue\",\"green\","
                      "\"yellow\"],\"answer\":\"A\",\"category\":\"attribute_recognition\",\"l2-category\":"
                      "\"finegrained_perception\",\"split\":\"dev\"}");
  assert_string_equal(rs.r[1].response, "The answer is B. whale");
  assert_true(contains(rs.r[1].item, "\"choices\":[\"frog\",\"whale\",\"trout\"]")); /* D empty: 3 options */
  assert_true(contains(rs.r[1].item, "\"hint\":\"Look at the picture.\""));
  assert_string_equal(rs.r[2].id, "3");
  assert_string_equal(rs.r[2].response, "Failed to obtain answer via API.");
  assert_int_equal(rs.r[2].line, 5); /* the table's line */
  free(echo);
  recs_free(&rs);
}

/* The evaluation's result table: hit is the harness's verdict; a hit that is not 1/0 is
 * reported and the row kept without a verdict. */
static void test_result(void **state) {
  (void)state;
  recs_t rs;
  tl_err err = {0};
  char *echo = NULL;
  long problems = 0;
  assert_int_equal(read_with(MMB_RESULT, &rs, 0, &echo, &problems, &err), TL_OK);
  assert_int_equal(rs.n, 4);
  assert_string_equal(rs.r[0].task, "MMBench_DEV_EN");
  assert_string_equal(rs.r[0].model, "Qwen2-VL-7B");
  assert_true(contains(rs.r[0].extra, "\"judge\":\"exact_matching\""));
  assert_true(contains(rs.r[0].extra, "\"log\":\"Match Found\""));
  assert_int_equal(rs.r[0].has_verdict, 1);
  assert_true(rs.r[0].verdict == 1.0);
  assert_string_equal(rs.r[0].metric, "hit");
  assert_int_equal(rs.r[2].has_verdict, 0);
  assert_int_equal(rs.r[3].has_verdict, 1);
  assert_true(rs.r[3].verdict == 0.0);
  assert_int_equal(problems, 1);
  assert_true(contains(echo, "row 3 (index '3'): hit 'maybe' is not 1 or 0"));
  free(echo);
  recs_free(&rs);
}

/* csv with quoted fields over several lines; thinking kept; a model with underscores told by
 * its folder. */
static void test_csv(void **state) {
  (void)state;
  recs_t rs;
  tl_err err = {0};
  long problems = -1;
  assert_int_equal(read_with(FIX "llava_v1.5_7b/llava_v1.5_7b_AI2D_TEST.csv", &rs, 0, NULL, &problems, &err), TL_OK);
  assert_int_equal(problems, 0);
  assert_int_equal(rs.n, 2);
  assert_string_equal(rs.r[0].model, "llava_v1.5_7b");
  assert_string_equal(rs.r[0].task, "AI2D_TEST");
  assert_string_equal(rs.r[0].id, "10");
  assert_string_equal(rs.r[0].response, "Reasoning:\nthe bottom one is longer.\nAnswer: C");
  assert_true(contains(rs.r[0].item, "\"question\":\"Which\\nline is \\\"longest\\\"?\""));
  assert_true(contains(rs.r[0].extra, "\"thinking\":\"compare, then answer\""));
  assert_string_equal(rs.r[1].id, "11");
  assert_int_equal(rs.r[1].line, 6); /* after a record over 4 lines */
  assert_true(contains(rs.r[1].item, "\"choices\":[\"yes\",\"no\"]"));
  recs_free(&rs);
}

/* json: a list of records (NaN for pandas' missing cells), and pandas' split form. */
static void test_json(void **state) {
  (void)state;
  recs_t rs;
  tl_err err = {0};
  long problems = -1;
  assert_int_equal(read_with(FIX "InternVL2-8B/InternVL2-8B_MMStar.json", &rs, 0, NULL, &problems, &err), TL_OK);
  assert_int_equal(problems, 0);
  assert_int_equal(rs.n, 2);
  assert_string_equal(rs.r[0].id, "100");
  assert_string_equal(rs.r[0].model, "InternVL2-8B");
  assert_string_equal(rs.r[0].task, "MMStar");
  assert_false(contains(rs.r[0].item, "\"hint\"")); /* NaN: absent */
  assert_true(contains(rs.r[0].item, "\"choices\":[\"a cat\",\"a dog\",\"a cow\"]"));
  assert_true(contains(rs.r[1].item, "\"choices\":[\"3\",\"4\"]"));
  assert_true(contains(rs.r[1].item, "\"hint\":\"Small dots.\""));
  recs_free(&rs);
  assert_int_equal(read_with(FIX "InternVL2-8B/InternVL2-8B_SEEDBench_IMG.json", &rs, 0, NULL, NULL, &err), TL_OK);
  assert_int_equal(rs.n, 2);
  assert_string_equal(rs.r[1].id, "8");
  assert_string_equal(rs.r[1].response, "B");
  assert_true(contains(rs.r[1].item, "\"answer\":\"B\""));
  recs_free(&rs);
}

/* xlsx (xlsx.h): the workbook make_xlsx.py writes holds the rows of the AI2D csv (shared and
 * inline strings, rich-text runs with a phonetic guide, numeric cells, a cell without a
 * reference, cells never written, the first sheet named through its relationship): the same
 * answers and items as the csv, plus column L the header leaves unnamed ("column_L", holding the
 * _x000D_ escape decoded). A file that is not a zip (cut short) is refused naming it. */
static void test_xlsx(void **state) {
  (void)state;
  recs_t rx, rc;
  tl_err err = {0};
  assert_int_equal(read_with(XLSX_OK, &rx, 0, NULL, NULL, &err), TL_OK);
  assert_int_equal(read_with(FIX "llava_v1.5_7b/llava_v1.5_7b_AI2D_TEST.csv", &rc, 0, NULL, NULL, &err), TL_OK);
  assert_int_equal(rx.n, 2);
  assert_int_equal(rc.n, 2);
  for (size_t i = 0; i < 2; i++) {
    assert_string_equal(rx.r[i].id, rc.r[i].id);
    assert_string_equal(rx.r[i].model, "llava_v1.5_7b");
    assert_string_equal(rx.r[i].response, rc.r[i].response);
  }
  assert_string_equal(rx.r[0].item, rc.r[0].item);
  assert_true(contains(rx.r[1].item, "\"question\":\"Is it day?\""));
  assert_true(contains(rx.r[1].item, "\"choices\":[\"yes\",\"no\"]"));
  assert_true(contains(rx.r[1].item, "\"column_L\":\"\\r\""));
  assert_false(contains(rx.r[1].item, "PHONETIC"));
  recs_free(&rx);
  recs_free(&rc);
  assert_int_equal(read_with(XLSX, &rx, 0, NULL, NULL, &err), TL_EINPUT);
  assert_int_equal(rx.n, 0);
  assert_true(contains(err.msg, "Qwen2-VL-7B_MMBench_DEV_EN.xlsx': no end of central directory record"));
}

/* SpatialEval: items in SpatialEval's schema, which its loader (tl_se_item_from_json) reads:
 * the row's own SpatialEval id when it has one, else <task>.<mode>.vlmevalkit-<index>.<qid>; a
 * row naming no SpatialEval task is reported and kept with a generic item. */
static void test_spatialeval(void **state) {
  (void)state;
  recs_t rs;
  tl_err err = {0};
  char *echo = NULL;
  long problems = 0;
  assert_int_equal(read_with(SE, &rs, 0, &echo, &problems, &err), TL_OK);
  assert_int_equal(rs.n, 4);
  static const char *const ids[] = {"spatialmap.vqa.2000.1", "mazenav.vqa.vlmevalkit-1.0",
                                    "spatialgrid.vtqa.vlmevalkit-2.0"};
  static const char *const oracle[] = {"1", "Yes", "car"};
  static const int nopt[] = {4, 2, 4};
  for (int i = 0; i < 3; i++) {
    assert_string_equal(rs.r[i].id, ids[i]);
    assert_string_equal(rs.r[i].task, "SpatialEval");
    assert_string_equal(rs.r[i].model, "GPT4o");
    cJSON *j = cJSON_Parse(rs.r[i].item);
    assert_non_null(j);
    tl_se_item it;
    if (tl_se_item_from_json(j, &it, &err) != TL_OK) fail_msg("item %d: %s", i, err.msg);
    assert_string_equal(it.id, ids[i]);
    assert_int_equal(it.n_options, nopt[i]);
    assert_string_equal(it.oracle_answer, oracle[i]);
    assert_true(contains(it.oracle_full_answer, oracle[i]));
    tl_se_item_release(&it);
    cJSON_Delete(j);
  }
  assert_true(contains(rs.r[0].item, "\"vlmevalkit_index\":\"0\""));
  assert_true(contains(rs.r[0].item, "Available options:\\nA. 2\\nB. 1\\nC. 3\\nD. 0.\""));
  assert_string_equal(rs.r[3].id, "3");
  assert_true(contains(rs.r[3].item, "\"choices\":[\"north\",\"south\"]"));
  assert_int_equal(problems, 1);
  assert_true(contains(echo, "GPT4o_SpatialEval.tsv:5: row 4 (index '3'): SpatialEval row: cannot tell its SpatialEval item"));
  free(echo);
  recs_free(&rs);
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_registry_detect), cmocka_unit_test(test_tsv),  cmocka_unit_test(test_result),
      cmocka_unit_test(test_csv),             cmocka_unit_test(test_json), cmocka_unit_test(test_xlsx),
      cmocka_unit_test(test_spatialeval),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
