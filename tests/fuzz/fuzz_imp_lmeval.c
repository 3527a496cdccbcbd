/* fuzz_imp_lmeval.c - libFuzzer target for the lm-eval / lmms-eval sample mapper
 * (src/import/lmeval.h tl_lme_sample), the lm-eval reader's detection and its name helpers.
 *
 * The reader's source is compiled into this target (tally_core_fuzz holds core only, and the
 * import tier is one file away). Input: one control byte, then one sample line. Control bit 0
 * makes the log strict; bit 1 gives the sample a task name; bit 2 also runs it through the
 * pre-pass (tl_lme_note) beside a copy under another filter, then tl_lme_finish. Only what the JSONL reader lets
 * through reaches the mapper: valid UTF-8 without NUL bytes, no key twice in an object, no
 * \u0000 escape (tl_json_check). Every record emitted must have an id, a where, a seed >= 0,
 * its item (when any) an object with an "id", and a finite verdict; a sample that emits
 * nothing is reported; the same sample again under another filter is reported, never emitted. */
#include "fuzz_util.h"

#include <math.h>

#include "../../src/import/imp_lmeval.c"

static tl_status fz_emit(void *ctx, const tl_imp_rec *r, tl_err *err) {
  (void)err;
  long *n = ctx;
  (*n)++;
  FZ_CHECK(r->id && r->id[0] && r->where && r->seed >= 0 && r->stage == 0);
  FZ_CHECK(!r->item || (cJSON_IsObject(r->item) && cJSON_GetObjectItemCaseSensitive(r->item, "id")));
  FZ_CHECK(!r->has_verdict || isfinite(r->verdict));
  if (r->response) (void)strlen(r->response);
  char *s = r->extra ? cJSON_PrintUnformatted(r->extra) : NULL;
  free(s);
  return TL_OK;
}

static int fz_no_issue(void *ctx, const tl_json_issue *issue) {
  (void)ctx;
  (void)issue;
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return -1;
  const uint8_t ctl = data[0];
  const char *body = (const char *)data + 1;
  size_t n = size - 1;
  if (memchr(body, 0, n) || !tl_utf8_valid(body, n, NULL)) return -1;
  char *text = tl_strndup(body, n);
  FZ_CHECK(text != NULL);
  /* the name helpers and detection on the same bytes */
  free(tl_lme_task_from_name(text));
  free(tl_lme_model_from_args(text));
  (void)lm_detect("samples_t_2025-01-01T00-00-00.jsonl", 0, (const unsigned char *)body, n);
  (void)lm_detect("results_x.json", 0, (const unsigned char *)body, n);
  cJSON *o = cJSON_ParseWithLength(body, n);
  if (o && tl_json_check(text, o, fz_no_issue, NULL) > 0) { /* the JSONL reader refuses the line */
    cJSON_Delete(o);
    o = NULL;
  }
  if (o) {
    tl_inlog log;
    FZ_CHECK(tl_inlog_init(&log, NULL, ctl & 1) == TL_OK);
    tl_lme_state s;
    tl_lme_init(&s, "lm-eval");
    long emitted = 0;
    tl_err err;
    const char *task = ctl & 2 ? "task" : NULL;
    tl_status st = tl_lme_sample(&s, o, "f.jsonl", "f.jsonl:1", 1, task, "m", &log, fz_emit, &emitted, &err);
    FZ_CHECK(st == TL_OK || st == TL_EINPUT || st == TL_ENOMEM);
    FZ_CHECK(st != TL_OK || emitted > 0 || log.total > 0); /* nothing dropped silently */
    /* the same sample under another filter: reported, never emitted */
    cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "filter");
    if (st == TL_OK && emitted && cJSON_IsObject(o)) {
      const char *other = cJSON_IsString(f) && !strcmp(f->valuestring, "x") ? "y" : "x";
      cJSON_DeleteItemFromObjectCaseSensitive(o, "filter");
      cJSON_AddStringToObject(o, "filter", other);
      long before = emitted, bad = log.total;
      st = tl_lme_sample(&s, o, "f.jsonl", "f.jsonl:2", 2, task, "m", &log, fz_emit, &emitted, &err);
      FZ_CHECK(emitted == before && (log.total == bad + 1));
    }
    tl_lme_release(&s);
    /* with the pre-pass (control bit 2): noted twice under two filters, emitted once */
    if (ctl & 4) {
      tl_lme_init(&s, "lm-eval");
      FZ_CHECK(tl_lme_note(&s, o, task, 1) == TL_OK);
      cJSON *o2 = cJSON_Duplicate(o, 1);
      if (cJSON_IsObject(o2)) {
        cJSON_DeleteItemFromObjectCaseSensitive(o2, "filter");
        cJSON_AddStringToObject(o2, "filter", "zz-other");
        FZ_CHECK(tl_lme_note(&s, o2, task, 2) == TL_OK);
      }
      for (size_t i = 0; i < s.n; i++) free(s.chosen[i]);
      s.n = 0;
      tl_strmap_release(&s.filters);
      tl_strmap_init(&s.filters);
      st = tl_lme_sample(&s, o, "f.jsonl", "f.jsonl:1", 1, task, "m", &log, fz_emit, &emitted, &err);
      if (st == TL_OK && o2) st = tl_lme_sample(&s, o2, "f.jsonl", "f.jsonl:2", 2, task, "m", &log, fz_emit, &emitted, &err);
      if (st == TL_OK) st = tl_lme_finish(&s, "f.jsonl", &log, &err);
      FZ_CHECK(st == TL_OK || st == TL_EINPUT || st == TL_ENOMEM);
      cJSON_Delete(o2);
      tl_lme_release(&s);
    }
    tl_inlog_release(&log);
    cJSON_Delete(o);
  }
  free(text);
  return 0;
}
