/* test_import_helm.c - the HELM run-folder reader (src/import/imp_helm.c).
 *
 * Fixtures (tests/fixtures/import/helm/, written for the project): a joint multiple-choice run
 * with two train trials, a perturbed instance beside its unperturbed one, an instance with no
 * reference tagged correct, a failed request and a state without an instance id; a run without
 * per_instance_stats.json; a scenario state cut short; one with a key given twice. Shared: the real MMLU philosophy run of
 * GPT-2 in ../shared/data/harness-outputs/helm. */
#define _POSIX_C_SOURCE 200809L
#include "import_util.h"

#define FX TALLY_SOURCE_DIR "/tests/fixtures/import/helm/"
#define RUN FX "mmlu-subject=fixture,method=multiple_choice_joint,model=org_fixture-model"

static void test_detect(void **state) {
  (void)state;
  tl_err err;
  const tl_importer *imp = tl_importer_detect(RUN, &err);
  if (!imp) fail_msg("%s", err.msg);
  assert_string_equal(imp->name, "helm");
  assert_non_null(tl_importer_detect(FX "no_stats", &err));
  /* a folder without run_spec.json / a file of the run: not HELM; the known formats named */
  assert_null(tl_importer_detect(FX, &err));
  assert_non_null(strstr(err.msg, "is not a folder of a known format"));
  assert_non_null(strstr(err.msg, "helm"));
  assert_null(tl_importer_detect(RUN "/run_spec.json", &err));
}

static void test_run(void **state) {
  (void)state;
  iu_recs c = {0};
  tl_inlog log;
  tl_err err;
  if (iu_read("helm", RUN, 0, &c, &log, &err) != TL_OK) fail_msg("%s", err.msg);
  iu_print_log(&log);
  assert_int_equal(c.n, 6);
  for (int i = 0; i < c.n; i++) {
    assert_string_equal(c.r[i].model, "org/fixture-model");
    assert_string_equal(c.r[i].task, "mmlu:subject=fixture,method=multiple_choice_joint,model=org_fixture-model");
    assert_int_equal(c.r[i].line, i + 1);
    assert_int_equal(c.r[i].turn_id, -1);
    assert_non_null(strstr(c.r[i].where, "scenario_state.json: request state"));
  }
  /* id1, two trials: seeds 0 and 1, each with its own exact_match */
  const iu_rec *r = &c.r[0];
  assert_string_equal(r->id, "id1");
  assert_int_equal(r->seed, 0);
  assert_string_equal(r->response, " C");
  assert_non_null(strstr(r->prompt, "Question: Sky colour?"));
  assert_string_equal(r->item,
                      "{\"id\":\"id1\",\"question\":\"Sky colour?\",\"choices\":[\"red\",\"green\",\"blue\"],\"answer\":2,"
                      "\"split\":\"test\"}");
  assert_true(r->has_verdict && r->verdict == 1.0);
  assert_string_equal(r->metric, "exact_match");
  assert_null(r->extracted);
  assert_string_equal(r->extra,
                      "{\"output_mapping\":{\"A\":\"red\",\"B\":\"green\",\"C\":\"blue\"},\"quasi_exact_match\":1}");
  r = &c.r[1];
  assert_string_equal(r->id, "id1");
  assert_int_equal(r->seed, 1);
  assert_true(r->has_verdict && r->verdict == 0.0);
  assert_non_null(strstr(r->where, "request state 2 (instance 'id1', trial 1)"));
  /* id2: no reference tagged correct: answer null, reported */
  r = &c.r[2];
  assert_string_equal(r->id, "id2");
  assert_non_null(strstr(r->item, "\"answer\":null"));
  assert_int_equal(iu_logged(&log, "request state 3 (instance 'id2', trial 0)", "no reference tagged \"correct\""), 1);
  /* id3: the perturbed state gets the perturbed stats, the plain one the plain stats */
  assert_string_equal(c.r[3].id, "id3");
  assert_true(c.r[3].verdict == 1.0);
  assert_non_null(strstr(c.r[3].extra, "\"perturbation\":{\"name\":\"typos\""));
  assert_string_equal(c.r[4].id, "id3");
  assert_true(c.r[4].has_verdict && c.r[4].verdict == 0.0);
  assert_null(strstr(c.r[4].extra, "perturbation"));
  /* id4: the request failed: a null reply, its error kept, no verdict (no stats) */
  r = &c.r[5];
  assert_string_equal(r->id, "id4");
  assert_true(r->null_response);
  assert_false(r->has_verdict);
  assert_non_null(strstr(r->extra, "\"error\":\"request timed out\""));
  assert_non_null(strstr(r->item, "\"answer\":0,\"split\":\"valid\""));
  /* the state without an id: reported with its number, not emitted */
  assert_int_equal(iu_logged(&log, "request state 7: no instance.id", NULL), 1);
  assert_int_equal(log.total, 2);
  tl_inlog_release(&log);
  /* strict input: stops at the first problem */
  assert_int_equal(iu_read("helm", RUN, 1, &c, &log, &err), TL_EINPUT);
  assert_int_equal(c.n, 2);
  tl_inlog_release(&log);
  iu_free(&c);
}

static void test_no_stats(void **state) {
  (void)state;
  iu_recs c = {0};
  tl_inlog log;
  tl_err err;
  if (iu_read("helm", FX "no_stats", 0, &c, &log, &err) != TL_OK) fail_msg("%s", err.msg);
  assert_int_equal(c.n, 1);
  assert_string_equal(c.r[0].model, "dep/only");
  assert_false(c.r[0].has_verdict);
  assert_int_equal(log.total, 0);
  tl_inlog_release(&log);
  iu_free(&c);
}

static void test_cut_short(void **state) {
  (void)state;
  iu_recs c = {0};
  tl_inlog log;
  tl_err err;
  assert_int_equal(iu_read("helm", FX "cut_short", 0, &c, &log, &err), TL_EINPUT);
  assert_non_null(strstr(err.msg, "cut_short/scenario_state.json': not valid JSON"));
  assert_int_equal(c.n, 0);
  tl_inlog_release(&log);
  /* a folder without its files */
  assert_int_equal(iu_read("helm", FX, 0, &c, &log, &err), TL_EIO);
  assert_non_null(strstr(err.msg, "run_spec.json"));
  tl_inlog_release(&log);
}

/* A key given twice in a request state (cJSON would keep one silently): reported, the state
 * skipped, the others read. */
static void test_duplicate_key(void **state) {
  (void)state;
  iu_recs c = {0};
  tl_inlog log;
  tl_err err;
  assert_int_equal(iu_read("helm", FX "dup_key", 0, &c, &log, &err), TL_OK);
  iu_print_log(&log);
  assert_int_equal(c.n, 2);
  assert_string_equal(c.r[0].id, "id1");
  assert_int_equal(c.r[0].seed, 0);
  assert_string_equal(c.r[1].id, "id2");
  assert_int_equal(iu_logged(&log, "dup_key/scenario_state.json: duplicate key 'train_trial_index' in 'request_states[1]'",
                             "the request state is skipped"),
                   1);
  assert_int_equal(log.total, 2); /* and id2's missing "correct" tag */
  assert_int_equal((long)log.table->cols[2].v.i[0], 2);
  tl_inlog_release(&log);
  iu_free(&c);
}

/* ---- the real run ---- */

static void test_real_run(void **state) {
  (void)state;
  TU_NEED_SHARED(p, "harness-outputs/helm/mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2");
  tl_err err;
  const tl_importer *imp = tl_importer_detect(p, &err);
  if (!imp) fail_msg("%s", err.msg);
  assert_string_equal(imp->name, "helm");
  iu_recs c = {0};
  tl_inlog log;
  if (iu_read("helm", p, 0, &c, &log, &err) != TL_OK) fail_msg("%s", err.msg);
  iu_print_log(&log);
  assert_int_equal(log.total, 0);
  assert_int_equal(c.n, 10);
  /* the instances in file order, with the index of their correct reference (C=2, A=0, ...) */
  static const char *const ids[] = {"id147", "id11", "id65", "id344", "id59", "id291", "id131", "id222", "id259", "id105"};
  static const int gold[] = {2, 2, 0, 1, 2, 0, 1, 3, 1, 2};
  double sum = 0;
  for (int i = 0; i < 10; i++) {
    const iu_rec *r = &c.r[i];
    assert_string_equal(r->id, ids[i]);
    assert_int_equal(r->seed, 0);
    assert_string_equal(r->model, "openai/gpt2");
    assert_string_equal(r->task, "mmlu:subject=philosophy,method=multiple_choice_joint,model=openai_gpt2");
    assert_string_equal(r->response, " D");
    assert_non_null(strstr(r->prompt, "The following are multiple choice questions (with answers) about philosophy."));
    char want[32];
    snprintf(want, sizeof want, "\"answer\":%d", gold[i]);
    assert_non_null(strstr(r->item, want));
    assert_non_null(strstr(r->extra, "\"output_mapping\":{\"A\":"));
    assert_true(r->has_verdict);
    assert_string_equal(r->metric, "exact_match");
    /* HELM's exact match on a joint question: the completion is the gold letter */
    assert_true(r->verdict == (gold[i] == 3 ? 1.0 : 0.0));
    sum += r->verdict;
  }
  print_message("HELM MMLU philosophy, GPT-2: 10 instances, exact_match %.3f (HELM's per-instance stats)\n", sum / 10);
  assert_true(sum == 1.0);
  tl_inlog_release(&log);
  iu_free(&c);
}

int main(int argc, char **argv) {
  const struct CMUnitTest fixture[] = {
      cmocka_unit_test(test_detect),
      cmocka_unit_test(test_run),
      cmocka_unit_test(test_no_stats),
      cmocka_unit_test(test_cut_short),
      cmocka_unit_test(test_duplicate_key),
  };
  const struct CMUnitTest shared[] = {
      cmocka_unit_test(test_real_run),
  };
  return TU_SHARED_GROUP(argc, argv, fixture, shared, NULL, NULL);
}
