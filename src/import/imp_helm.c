/* imp_helm.c - a HELM run folder (../shared/spec/harness-formats.md, "HELM"):
 * benchmark_output/runs/<suite>/<run_spec_name>/ with scenario_state.json and run_spec.json, and
 * per_instance_stats.json when HELM computed its metrics.
 *
 * One record per request state, in file order: id = instance.id, seed = train_trial_index, model
 * = run_spec's adapter_spec.model (else adapter_spec.model_deployment, else the request's model),
 * task = run_spec's name, response = result.completions[0].text (null when the request failed or
 * gave no completion: result.error kept in extra), prompt = request.prompt, item = {"id",
 * "question": instance.input.text, "choices": the references' texts, "answer": the index of the
 * first reference tagged "correct" (null when none is), "split"}, extra = {"output_mapping" (joint
 * multiple choice: letter -> choice text), "perturbation"}. verdict = the instance's exact_match
 * mean in per_instance_stats.json for the same (instance id, train trial, perturbation), when
 * the file is there and holds one; quasi_exact_match and prefix_exact_match go in extra. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tally/import.h"
#include "tally/jsonl.h"
#include "tally/str.h"
#include "tally/strmap.h"

#define HELM_MAX_JSON ((size_t)4 << 30)

static const cJSON *obj_get(const cJSON *o, const char *k) {
  return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}
static const cJSON *as_arr(const cJSON *o) { return cJSON_IsArray(o) ? o : NULL; }
static const char *str_get(const cJSON *o, const char *k) {
  const cJSON *v = obj_get(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* What cJSON takes silently (a key given twice, a \u0000 escape), reported: in
 * scenario_state.json the request state holding one is skipped (bad[k]); elsewhere the file's
 * problem is reported (line 0) and the file read on. */
typedef struct {
  tl_inlog *log;
  const char *file;
  unsigned char *bad; /* [nbad] or NULL */
  long nbad;
  tl_status st;
} chk_ctx;

static int on_issue(void *ctx, const tl_json_issue *is) {
  chk_ctx *c = ctx;
  long rec = 0;
  if (c->bad && strncmp(is->path, "request_states[", 15) == 0) {
    long k = strtol(is->path + 15, NULL, 10);
    if (k >= 0 && k < c->nbad) c->bad[k] = 1, rec = k + 1;
  }
  const char *at = is->path[0] ? is->path : "the top level";
  const char *then = rec > 0 ? ": the request state is skipped" : "";
  if (is->kind == TL_JSON_DUP_KEY)
    c->st = tl_inlog_report(c->log, TL_IN_DUPLICATE_KEY, c->file, rec, "%s: duplicate key '%s' in '%s' at byte %zu%s",
                            c->file, is->key ? is->key : "", at, is->byte, then);
  else
    c->st = tl_inlog_report(c->log, TL_IN_NUL_ESCAPE, c->file, rec,
                            "%s: \\u0000 escape (a NUL character) in '%s' at byte %zu%s", c->file, at, is->byte, then);
  return c->st != TL_OK;
}

/* Parses DIR/NAME into *out, its problems checked (tl_json_check; for scenario_state.json,
 * *bad: which request states hold one, malloc'd). absent_ok: *out NULL and TL_OK when the file
 * is not there. */
static tl_status load(const char *dir, const char *name, int absent_ok, tl_inlog *log, cJSON **out,
                      unsigned char **bad, tl_err *err) {
  *out = NULL;
  tl_buf p, b;
  tl_buf_init(&p);
  tl_buf_init(&b);
  tl_status st = tl_buf_printf(&p, "%s/%s", dir, name);
  struct stat sb;
  if (st == TL_OK && absent_ok && stat(p.data, &sb) != 0 && errno == ENOENT) goto done;
  if (st == TL_OK) st = tl_file_read(p.data, HELM_MAX_JSON, &b, err);
  if (st == TL_OK && strlen(b.data) != b.len) st = tl_err_set(err, TL_EINPUT, "'%s': a NUL byte in the file", p.data);
  if (st == TL_OK) {
    const char *end = NULL;
    *out = cJSON_ParseWithLengthOpts(b.data, b.len, &end, 0);
    if (!*out)
      st = tl_err_set(err, TL_EINPUT, "'%s': not valid JSON (at byte %zu)", p.data,
                      end && end >= b.data ? (size_t)(end - b.data) : (size_t)0);
  }
  if (st == TL_OK) {
    chk_ctx c = {log, p.data, NULL, 0, TL_OK};
    if (bad) {
      const cJSON *rs = cJSON_GetObjectItemCaseSensitive(*out, "request_states");
      c.nbad = cJSON_IsArray(rs) ? cJSON_GetArraySize(rs) : 0;
      c.bad = *bad = calloc(c.nbad ? (size_t)c.nbad : 1, 1);
      if (!c.bad) st = TL_ENOMEM;
    }
    if (st == TL_OK) tl_json_check(b.data, *out, on_issue, &c);
    if (st == TL_OK && c.st != TL_OK)
      st = tl_err_set(err, c.st, "'%s': a duplicate key or a \\u0000 escape (strict input)", p.data);
  }
done:
  tl_buf_release(&p);
  tl_buf_release(&b);
  return st;
}

/* "instance\x1ftrial\x1fperturbation": the key of a state and of its stats */
static tl_status stats_key(tl_buf *k, const char *id, int trial, const cJSON *pert) {
  tl_buf_reset(k);
  const char *pname = str_get(pert, "name");
  return tl_buf_printf(k, "%s\x1f%d\x1f%s", id, trial, pname ? pname : "");
}

static int trial_of(const cJSON *o) {
  const cJSON *t = obj_get(o, "train_trial_index");
  return cJSON_IsNumber(t) && t->valuedouble >= 0 && t->valuedouble < 1e9 ? (int)t->valuedouble : 0;
}

/* The mean of the stat named name (split any, no perturbation in its name) in stats[], or -1. */
static int stat_mean(const cJSON *stats, const char *name, double *v) {
  const cJSON *s;
  cJSON_ArrayForEach(s, as_arr(stats)) {
    const cJSON *nm = obj_get(s, "name");
    const char *n = str_get(nm, "name");
    if (!n || strcmp(n, name) != 0) continue;
    const cJSON *mean = obj_get(s, "mean"), *sum = obj_get(s, "sum"), *count = obj_get(s, "count");
    if (cJSON_IsNumber(mean)) return *v = mean->valuedouble, 1;
    if (cJSON_IsNumber(sum) && cJSON_IsNumber(count) && count->valuedouble > 0)
      return *v = sum->valuedouble / count->valuedouble, 1;
  }
  return 0;
}

static int helm_detect(const char *path, int is_dir, const unsigned char *head, size_t n) {
  (void)head;
  (void)n;
  if (!is_dir) return 0;
  char p[4096];
  struct stat sb;
  snprintf(p, sizeof p, "%s/scenario_state.json", path);
  if (stat(p, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0;
  snprintf(p, sizeof p, "%s/run_spec.json", path);
  return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* What helm_read carries from one request state to the next. */
typedef struct {
  tl_inlog *log;
  const char *file;       /* scenario_state.json's path, for messages */
  const cJSON *pis;       /* per_instance_stats.json's list, or NULL */
  tl_strmap idx;          /* stats_key -> index in pis */
  const char *spec_model; /* run_spec's model, or NULL */
  const char *task;       /* run_spec's name, or NULL */
  tl_buf key, where;      /* scratch */
  tl_imp_emit emit;
  void *ctx;
} helm_run;

/* Indexes pis[] by (instance, trial, perturbation) into h->idx; entries with no instance_id are
 * left out. */
static tl_status index_stats(helm_run *h) {
  size_t i = 0;
  const cJSON *ps;
  cJSON_ArrayForEach(ps, h->pis) {
    const char *iid = str_get(ps, "instance_id");
    if (iid) {
      tl_status st = stats_key(&h->key, iid, trial_of(ps), obj_get(ps, "perturbation"));
      if (st == TL_OK) st = tl_strmap_put(&h->idx, h->key.data, i, NULL, NULL);
      if (st != TL_OK) return st;
    }
    i++;
  }
  return TL_OK;
}

/* Adds to item (which holds "id") the instance's "question", "choices" (the references' texts),
 * "answer" (the index of the first reference tagged "correct", else null) and "split"; *correct
 * and *nref: that index (-1) and the number of references. TL_ENOMEM only. */
static tl_status build_item(const cJSON *inst, cJSON *item, int *correct, int *nref) {
  cJSON *choices;
  int k = 0;
  *correct = -1;
  const char *question = str_get(obj_get(inst, "input"), "text");
  if ((question && !cJSON_AddStringToObject(item, "question", question)) ||
      !(choices = cJSON_AddArrayToObject(item, "choices")))
    return TL_ENOMEM;
  const cJSON *ref;
  cJSON_ArrayForEach(ref, as_arr(obj_get(inst, "references"))) {
    const char *t = str_get(obj_get(ref, "output"), "text");
    cJSON *c = cJSON_CreateString(t ? t : "");
    if (!c || !cJSON_AddItemToArray(choices, c)) {
      cJSON_Delete(c);
      return TL_ENOMEM;
    }
    const cJSON *tag;
    cJSON_ArrayForEach(tag, as_arr(obj_get(ref, "tags"))) {
      if (*correct < 0 && cJSON_IsString(tag) && strcmp(tag->valuestring, "correct") == 0) *correct = k;
    }
    k++;
  }
  *nref = k;
  if (!(*correct >= 0 ? cJSON_AddNumberToObject(item, "answer", *correct) : cJSON_AddNullToObject(item, "answer")))
    return TL_ENOMEM;
  const char *split = str_get(inst, "split");
  if (split && !cJSON_AddStringToObject(item, "split", split)) return TL_ENOMEM;
  return TL_OK;
}

/* Puts a copy of v (when not NULL) in extra under name. TL_ENOMEM only. */
static tl_status add_copy(cJSON *extra, const char *name, const cJSON *v) {
  if (!v) return TL_OK;
  cJSON *d = cJSON_Duplicate(v, 1);
  if (!d || !cJSON_AddItemToObject(extra, name, d)) {
    cJSON_Delete(d);
    return TL_ENOMEM;
  }
  return TL_OK;
}

/* The verdict of r (exact_match) and extra's quasi/prefix exact matches, from the stats of
 * (r->id, r->seed, pert) when per_instance_stats.json holds them; nothing when it does not. */
static tl_status add_stats(helm_run *h, const cJSON *pert, tl_imp_rec *r, cJSON *extra) {
  size_t at;
  tl_status st = stats_key(&h->key, r->id, r->seed, pert);
  if (st != TL_OK || !h->pis || !tl_strmap_get(&h->idx, h->key.data, &at)) return st;
  const cJSON *stats = obj_get(cJSON_GetArrayItem(h->pis, (int)at), "stats");
  if (stat_mean(stats, "exact_match", &r->verdict)) {
    r->has_verdict = 1;
    r->verdict_metric = "exact_match";
  }
  static const char *const more[] = {"quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match"};
  for (size_t m = 0; m < sizeof more / sizeof *more; m++) {
    double v;
    if (stat_mean(stats, more[m], &v) && !cJSON_AddNumberToObject(extra, more[m], v)) return TL_ENOMEM;
  }
  return TL_OK;
}

/* One request state (line: its 1-based index): its record emitted, or its problems reported
 * (a state with no instance.id is skipped; a missing question, gold or reply is reported and the
 * record still emitted). Returns what emit or the input log returned. */
static tl_status read_state(helm_run *h, const cJSON *rs, long line, tl_err *err) {
  const cJSON *inst = obj_get(rs, "instance");
  const char *id = str_get(inst, "id");
  int trial = trial_of(rs);
  tl_buf_reset(&h->where);
  if (!id)
    return tl_inlog_report(h->log, TL_IN_MISSING_FIELD, h->file, line, "%s: request state %ld: no instance.id",
                           h->file, line);
  tl_status st = tl_buf_printf(&h->where, "%s: request state %ld (instance '%s', trial %d)", h->file, line, id, trial);
  if (st != TL_OK) return st;
  const cJSON *pert = obj_get(inst, "perturbation");
  cJSON *item = cJSON_CreateObject(), *extra = cJSON_CreateObject();
  int correct = -1, nref = 0;
  st = item && extra && cJSON_AddStringToObject(item, "id", id) ? build_item(inst, item, &correct, &nref) : TL_ENOMEM;
  if (st == TL_OK && !str_get(obj_get(inst, "input"), "text"))
    st = tl_inlog_report(h->log, TL_IN_MISSING_FIELD, h->file, line, "%s: no instance.input.text", h->where.data);
  if (st == TL_OK && correct < 0 && nref > 0)
    st = tl_inlog_report(h->log, TL_IN_MISSING_FIELD, h->file, line,
                         "%s: no reference tagged \"correct\": the item's answer is null", h->where.data);
  const cJSON *om = obj_get(rs, "output_mapping");
  if (st == TL_OK) st = add_copy(extra, "output_mapping", cJSON_IsObject(om) ? om : NULL);
  if (st == TL_OK) st = add_copy(extra, "perturbation", pert);
  /* the response */
  const cJSON *result = obj_get(rs, "result");
  const cJSON *comps = obj_get(result, "completions");
  const char *response = cJSON_IsArray(comps) ? str_get(cJSON_GetArrayItem(comps, 0), "text") : NULL;
  const char *rerr = str_get(result, "error");
  if (st == TL_OK && rerr && !cJSON_AddStringToObject(extra, "error", rerr)) st = TL_ENOMEM;
  if (st == TL_OK && !response && !rerr)
    st = tl_inlog_report(h->log, TL_IN_MISSING_FIELD, h->file, line,
                         "%s: no result.completions[0].text: a null reply", h->where.data);
  tl_imp_rec r = {0};
  r.where = h->where.data;
  r.line = line;
  r.task = h->task;
  r.id = id;
  r.model = h->spec_model ? h->spec_model : str_get(obj_get(rs, "request"), "model");
  r.seed = trial;
  r.turn_id = -1;
  r.stage = 0;
  r.response = response;
  r.prompt = str_get(obj_get(rs, "request"), "prompt");
  r.item = item;
  if (st == TL_OK) st = add_stats(h, pert, &r, extra);
  r.extra = st == TL_OK && extra->child ? extra : NULL;
  if (st == TL_OK) st = h->emit(h->ctx, &r, err);
  cJSON_Delete(item);
  cJSON_Delete(extra);
  return st;
}

/* Reads run_spec.json, scenario_state.json and per_instance_stats.json (when there) of the run
 * folder path and emits one record per request state, in file order (the header comment). */
static tl_status helm_read(const char *path, tl_inlog *log, tl_imp_emit emit, void *ctx, tl_err *err) {
  cJSON *state = NULL, *spec = NULL, *pis = NULL;
  unsigned char *bad = NULL;
  helm_run h = {.log = log, .emit = emit, .ctx = ctx};
  tl_strmap_init(&h.idx);
  tl_buf file;
  tl_buf_init(&h.key);
  tl_buf_init(&file);
  tl_buf_init(&h.where);
  tl_status st = tl_buf_printf(&file, "%s/scenario_state.json", path);
  h.file = file.data;
  if (st == TL_OK) st = load(path, "run_spec.json", 0, log, &spec, NULL, err);
  if (st == TL_OK) st = load(path, "scenario_state.json", 0, log, &state, &bad, err);
  if (st == TL_OK) st = load(path, "per_instance_stats.json", 1, log, &pis, NULL, err);
  if (st != TL_OK) goto done;
  h.pis = pis;
  const cJSON *states = obj_get(state, "request_states");
  if (!cJSON_IsArray(states)) {
    st = tl_err_set(err, TL_EINPUT, "'%s': no request_states list: not a HELM scenario state", file.data);
    goto done;
  }
  if (pis && !cJSON_IsArray(pis)) {
    st = tl_err_set(err, TL_EINPUT, "'%s/per_instance_stats.json': not a list of instance stats", path);
    goto done;
  }
  if ((st = index_stats(&h)) != TL_OK) goto done;
  const cJSON *as = obj_get(spec, "adapter_spec");
  h.spec_model = str_get(as, "model");
  if (!h.spec_model) h.spec_model = str_get(as, "model_deployment");
  h.task = str_get(spec, "name");
  if (cJSON_GetArraySize(states) == 0 &&
      (st = tl_inlog_report(log, TL_IN_EMPTY_FILE, file.data, 0, "%s: no request states", file.data)) != TL_OK)
    goto done;
  long line = 0;
  const cJSON *rs;
  cJSON_ArrayForEach(rs, states) {
    line++;
    if (bad && bad[line - 1]) continue; /* reported */
    if ((st = read_state(&h, rs, line, err)) != TL_OK) goto done;
  }
done:
  if (st == TL_EINPUT && err && !err->msg[0]) tl_err_set(err, st, "'%s': bad request state (strict input)", file.data);
  free(bad);
  cJSON_Delete(state);
  cJSON_Delete(spec);
  cJSON_Delete(pis);
  tl_strmap_release(&h.idx);
  tl_buf_release(&h.key);
  tl_buf_release(&file);
  tl_buf_release(&h.where);
  return st;
}

const tl_importer tl_imp_helm = {
    "helm",
    "HELM run folders: scenario_state.json and run_spec.json (per_instance_stats.json for HELM's verdicts)",
    helm_detect,
    helm_read,
};
