/* module.c - the generative exact-match benchmark as a module (tally/bench.h; docs/GEN.md): one
 * stage (the model's answer, or a replayed one, e.g. lm-eval's generate_until samples), scored by
 * the job's modes (strict first, the primary; exact, lm-eval's exact_match), counted into three
 * additive blocks (the group counts per cfg x task x mode; each unit's correct flag per mode, the
 * CIs' clusters; the audit of each mode against the primary), from which rank 0 builds the
 * metric and audit tables and the summary. The layout and tables follow the mcq module's.
 *
 * Job keys: "items" (a path or a list), "modes" (default: strict, exact), lm-eval's exact_match
 * options "regexes_to_ignore" (a list of patterns), "ignore_case", "ignore_punctuation",
 * "ignore_numbers" (false), "ci_resamples" (1000), "ci_seed" (0). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "tally/bench.h"
#include "tally/boot.h"
#include "tally/jsonl.h"
#include "tally/strmap.h"

static const char *const VARIANTS[] = {"default", NULL};
static const char *const KEYS[] = {"items", "modes", "regexes_to_ignore", "ignore_case", "ignore_punctuation",
                                   "ignore_numbers", "ci_resamples", "ci_seed", NULL};
static const tl_gen_mode DEFAULT_MODES[] = {TL_GEN_STRICT, TL_GEN_EXACT};

struct tl_bench {
  char **files;
  int n_files;
  tl_gen_mode modes[TL_MAX_MODES];
  int n_modes;
  char **rx;           /* regexes_to_ignore [n_rx] */
  int n_rx;
  bool ignore_case, ignore_punctuation, ignore_numbers;
  int ci_B, ci_seed;
  tl_gen_item *items; /* [n], sorted by id */
  size_t n, cap;
  tl_strmap by_id;
  char **tasks;       /* [ntasks] sorted; slot ntasks of the counts is "all" */
  int ntasks;
  int loaded;
  tl_gen_parsers P;
};

static void gen_free(tl_bench *b) {
  if (!b) return;
  for (int i = 0; i < b->n_files; i++) free(b->files[i]);
  free(b->files);
  for (int i = 0; i < b->n_rx; i++) free(b->rx[i]);
  free(b->rx);
  for (size_t i = 0; i < b->n; i++) tl_gen_item_release(&b->items[i]);
  free(b->items);
  free(b->tasks); /* the names are the items' */
  if (b->loaded) tl_strmap_release(&b->by_id);
  tl_gen_parsers_release(&b->P);
  free(b);
}

#define PROBLEM(...)                \
  do {                              \
    tl_job_problem(c, __VA_ARGS__); \
    bad++;                          \
  } while (0)

/* "regexes_to_ignore": a list of at most TL_GEN_MAX_REGEXES patterns (Python re syntax, as
 * lm-eval's task YAML gives them), each checked here. Returns the problems reported. */
static int read_regexes(tl_job_ctx *c, const cJSON *e, const char *where, tl_bench *b) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "regexes_to_ignore");
  if (!v) return 0;
  char w2[160];
  int bad = 0;
  snprintf(w2, sizeof w2, "%s.regexes_to_ignore", where);
  const int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
  if (n < 0 || n > TL_GEN_MAX_REGEXES) {
    PROBLEM(w2, "must be a list of at most %d regular expressions (Python re syntax)", TL_GEN_MAX_REGEXES);
    return bad;
  }
  if (n && !(b->rx = calloc((size_t)n, sizeof *b->rx))) {
    PROBLEM(w2, "out of memory");
    return bad;
  }
  const cJSON *x;
  int i = 0;
  cJSON_ArrayForEach(x, v) {
    tl_err er = {0};
    tl_rx *t = cJSON_IsString(x) ? tl_rx_compile(x->valuestring, 0, &er) : NULL;
    if (!t) {
      PROBLEM(w2, "element %d must be a regular expression (Python re syntax)%s%s", i++, er.msg[0] ? ": " : "",
              er.msg);
      continue;
    }
    i++;
    tl_rx_free(t);
    if (!(b->rx[b->n_rx++] = tl_strdup(x->valuestring))) PROBLEM(w2, "out of memory");
  }
  return bad;
}

static tl_bench *gen_create(tl_job_ctx *c, const cJSON *e, const char *where) {
  tl_bench *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  int bad = 0;
  char w2[160];
  snprintf(w2, sizeof w2, "%s.items", where);
  const cJSON *items = cJSON_GetObjectItemCaseSensitive(e, "items");
  if (!items) PROBLEM(w2, "missing (a path or a list of paths)");
  else bad += tl_job_paths(c, items, w2, "an items file", &b->files, &b->n_files);
  const cJSON *ms = cJSON_GetObjectItemCaseSensitive(e, "modes");
  snprintf(w2, sizeof w2, "%s.modes", where);
  if (!ms) {
    b->n_modes = (int)(sizeof DEFAULT_MODES / sizeof *DEFAULT_MODES);
    memcpy(b->modes, DEFAULT_MODES, sizeof DEFAULT_MODES);
  } else if (!cJSON_IsArray(ms) || cJSON_GetArraySize(ms) == 0) {
    PROBLEM(w2, "must be a non-empty list of modes (strict, exact)");
  } else {
    const cJSON *x;
    cJSON_ArrayForEach(x, ms) {
      int m = cJSON_IsString(x) ? tl_gen_mode_from_name(x->valuestring) : -1;
      if (m < 0) {
        PROBLEM(w2, "unknown mode %s (want strict or exact)", cJSON_IsString(x) ? x->valuestring : "(not a string)");
        continue;
      }
      int dup = 0;
      for (int k = 0; k < b->n_modes; k++) dup |= b->modes[k] == (tl_gen_mode)m;
      if (dup) PROBLEM(w2, "mode '%s' listed twice", x->valuestring);
      else if (b->n_modes == TL_MAX_MODES) PROBLEM(w2, "at most %d modes", TL_MAX_MODES);
      else b->modes[b->n_modes++] = (tl_gen_mode)m;
    }
  }
  bad += read_regexes(c, e, where, b);
  bad += tl_job_key_bool(c, e, "ignore_case", where, &b->ignore_case);
  bad += tl_job_key_bool(c, e, "ignore_punctuation", where, &b->ignore_punctuation);
  bad += tl_job_key_bool(c, e, "ignore_numbers", where, &b->ignore_numbers);
  b->ci_B = 1000;
  bad += tl_job_key_int(c, e, "ci_resamples", where, 2, 1000000, "an integer from 2 to 1000000", &b->ci_B);
  bad += tl_job_key_int(c, e, "ci_seed", where, 0, 2147483647, "an integer >= 0", &b->ci_seed);
  if (bad) {
    gen_free(b);
    return NULL;
  }
  return b;
}

static int gen_default_variant(const tl_bench *b) {
  (void)b;
  return 0;
}

static int item_cmp(const void *x, const void *y) {
  return strcmp(((const tl_gen_item *)x)->id, ((const tl_gen_item *)y)->id);
}
static int str_cmp(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

typedef struct {
  tl_bench *b;
  tl_inlog *log;
  tl_err *err;
} load_ctx;

static tl_status item_line(void *vctx, const cJSON *o, const tl_jsonl *r) {
  load_ctx *c = vctx;
  tl_bench *b = c->b;
  tl_gen_item it;
  char msg[256];
  tl_status st = tl_gen_item_from_json(o, &it, msg, sizeof msg);
  if (st == TL_ENOMEM) return tl_err_set(c->err, TL_ENOMEM, "out of memory");
  if (st) {
    tl_in_kind k = strstr(msg, "missing field") ? TL_IN_MISSING_FIELD : TL_IN_BAD_FIELD;
    return tl_inlog_report(c->log, k, r->path, r->line_no, "%s%s", strncmp(msg, "item '", 6) ? "item " : "", msg)
               ? TL_EINPUT
               : TL_OK;
  }
  bool inserted;
  size_t prev;
  if (tl_strmap_put(&b->by_id, it.id, b->n, &inserted, &prev) != TL_OK) {
    tl_gen_item_release(&it);
    return tl_err_set(c->err, TL_ENOMEM, "out of memory");
  }
  if (!inserted) {
    tl_gen_item_release(&it);
    return tl_inlog_report(c->log, TL_IN_DUPLICATE, r->path, r->line_no, "duplicate item id '%s' (the first one is kept)",
                           b->items[prev].id) ? TL_EINPUT : TL_OK;
  }
  if (b->n == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 256;
    tl_gen_item *p = realloc(b->items, cap * sizeof *p);
    if (!p) {
      tl_gen_item_release(&it);
      return tl_err_set(c->err, TL_ENOMEM, "out of memory");
    }
    b->items = p;
    b->cap = cap;
  }
  b->items[b->n++] = it;
  return TL_OK;
}

static tl_status gen_load(tl_bench *b, size_t max_line, tl_inlog *log, tl_err *err) {
  tl_strmap_init(&b->by_id);
  b->loaded = 1;
  load_ctx c = {b, log, err};
  tl_status st = TL_OK;
  for (int f = 0; f < b->n_files && !st; f++) {
    tl_jsonl r;
    if ((st = tl_jsonl_open(&r, b->files[f], max_line, err))) break;
    st = tl_inlog_each(log, &r, "items", item_line, &c, err);
    tl_jsonl_close(&r);
  }
  if (st) return st;
  if (b->n > 1) qsort(b->items, b->n, sizeof *b->items, item_cmp);
  tl_strmap_release(&b->by_id);
  tl_strmap_init(&b->by_id);
  for (size_t i = 0; i < b->n; i++)
    if (tl_strmap_put(&b->by_id, b->items[i].id, i, NULL, NULL)) return tl_err_set(err, TL_ENOMEM, "out of memory");
  /* the tasks, sorted; each item's index among them */
  if (b->n && !(b->tasks = malloc(b->n * sizeof *b->tasks))) return tl_err_set(err, TL_ENOMEM, "out of memory");
  for (size_t i = 0; i < b->n; i++) b->tasks[i] = b->items[i].task;
  if (b->n > 1) qsort(b->tasks, b->n, sizeof *b->tasks, str_cmp);
  for (size_t i = 0; i < b->n; i++)
    if (b->ntasks == 0 || strcmp(b->tasks[b->ntasks - 1], b->tasks[i])) b->tasks[b->ntasks++] = b->tasks[i];
  for (size_t i = 0; i < b->n; i++) {
    char **t = bsearch(&b->items[i].task, b->tasks, (size_t)b->ntasks, sizeof *b->tasks, str_cmp);
    b->items[i].task_ix = (int)(t - b->tasks);
  }
  return tl_gen_parsers_init(&b->P, (const char *const *)b->rx, b->n_rx, b->ignore_case, b->ignore_punctuation,
                             b->ignore_numbers, err);
}

static size_t gen_n_items(const tl_bench *b) { return b->n; }
static const char *gen_item_id(const tl_bench *b, size_t i) { return b->items[i].id; }
static int gen_item_find(const tl_bench *b, const char *id, size_t *i) { return tl_strmap_get(&b->by_id, id, i); }
static uint32_t gen_n_subs(const tl_bench *b, size_t i) { return i <= b->n ? 1 : 0; }
static int gen_n_modes(const tl_bench *b) { return b->n_modes; }
static const char *gen_mode_name(const tl_bench *b, int k) { return tl_gen_mode_name(b->modes[k]); }

/* Stage 0: the question, asking for the final answer in \boxed{} (tally's own prompt; a replayed
 * answer keeps the prompt it was given). The replay engine asks too: an item without a question
 * (for replaying only) gives the instruction alone. */
static tl_status gen_request(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, int s, const tl_row *r,
                             tl_buf *arena, tl_bench_req *out, tl_err *err) {
  (void)cfgs;
  (void)s;
  (void)r;
  const tl_gen_item *it = &b->items[u->item];
  if (tl_buf_printf(arena, "Solve the following problem. Put your final answer within \\boxed{}.\n\n%s",
                    it->question) ||
      tl_buf_append(arena, "", 1))
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  out->role = TL_ROLE_MODEL;
  out->msgs[0].role = "user";
  out->msgs[0].content = arena->data;
  out->nmsg = 1;
  return TL_OK;
}

static tl_status gen_score(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, tl_row *r, tl_err *err) {
  (void)cfgs;
  const tl_gen_item *it = &b->items[u->item];
  for (int k = 0; k < b->n_modes; k++) {
    tl_status st = tl_gen_score(&b->P, b->modes[k], it, r->text[0], &r->res[k]);
    if (st) return tl_err_set(err, st, "scoring item '%s' failed: %s", it->id, tl_strerror(st));
  }
  return TL_OK;
}

/* ---- accumulators ----
 * 0: [ncfgs][ntasks + 1][nmodes][GW]: n, correct, one count per parse status (task slot ntasks
 *    = every task);
 * 1: [ncfgs][nitems][nmodes]: 1 where the unit is correct (the CIs' clusters);
 * 2: [ntasks + 1][nmodes][AW]: units with a reply: n, correct, disagree with the primary,
 *    correct only under this mode (the audit). */
#define GW (2 + TL_PS__COUNT)
#define AW 4

static int gen_acc_layout(const tl_bench *b, size_t ncfgs, tl_acc_block *out) {
  const size_t T = (size_t)b->ntasks + 1, M = (size_t)b->n_modes;
  out[0] = (tl_acc_block){ncfgs * T * M * GW, TL_ACC_SUM, 0};
  out[1] = (tl_acc_block){ncfgs * b->n * M, TL_ACC_SUM, 0};
  out[2] = (tl_acc_block){T * M * AW, TL_ACC_SUM, 0};
  return 3;
}

static void gen_acc_add(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, const tl_unit *u, const tl_row *r,
                        int64_t *const *acc) {
  (void)cfgs;
  (void)ncfgs;
  const size_t T = (size_t)b->ntasks + 1, M = (size_t)b->n_modes;
  const size_t t = (size_t)b->items[u->item].task_ix;
  const tl_pstatus s0 = r->res[0].status;
  const int replied = s0 != TL_PS_MISSING && s0 != TL_PS_ENGINE_ERROR;
  for (size_t k = 0; k < M; k++) {
    const tl_parsed *p = &r->res[k];
    const size_t slots[2] = {t, T - 1};
    for (int j = 0; j < 2; j++) {
      int64_t *g = acc[0] + ((u->cfg * T + slots[j]) * M + k) * GW;
      g[0]++;
      g[1] += p->correct;
      g[2 + p->status]++;
      if (replied) {
        int64_t *a = acc[2] + (slots[j] * M + k) * AW;
        a[0]++;
        a[1] += p->correct;
        a[2] += p->correct != r->res[0].correct;
        a[3] += p->correct && !r->res[0].correct;
      }
    }
    acc[1][((size_t)u->cfg * b->n + u->item) * M + k] += p->correct;
  }
}

#define COL(t, name, type, doc)                                     \
  do {                                                              \
    if (tl_table_add_col((t), (name), (type), (doc)) < 0) goto oom; \
  } while (0)

static tl_table *gen_items_table(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *units, const tl_row *rows,
                                 size_t n, tl_table *into) {
  tl_table *t = into ? into : tl_table_new("/items/gen");
  if (!t) return NULL;
  if (!into) {
    COL(t, "id", TL_COL_STR, "item id");
    COL(t, "task", TL_COL_STR, "the item's task (\"default\" when it names none)");
    COL(t, "model", TL_COL_STR, "model under test");
    COL(t, "seed", TL_COL_I64, "generation seed (a harness's repeat index)");
    COL(t, "prompt_variant", TL_COL_STR, "default");
    COL(t, "gold", TL_COL_TEXT, "the accepted answers, \" || \"-joined");
    COL(t, "n_gold", TL_COL_I64, "the item's accepted answers");
    COL(t, "question", TL_COL_TEXT, "the item's question (as its items file gives it)");
    COL(t, "response", TL_COL_TEXT, "raw answer (empty when missing)");
    COL(t, "has_response", TL_COL_I64, "1 when an answer was obtained");
    COL(t, "source", TL_COL_STR, "file:line the answer came from");
    char name[64], doc[160];
    for (int k = 0; k < b->n_modes; k++) {
      const char *mn = tl_gen_mode_name(b->modes[k]);
      snprintf(name, sizeof name, "answer_%s", mn);
      snprintf(doc, sizeof doc, "answer the %s mode compared (strict: the final answer as written; exact: the reply)", mn);
      COL(t, name, TL_COL_STR, doc);
      snprintf(name, sizeof name, "status_%s", mn);
      COL(t, name, TL_COL_STR, "parse status: ok, no_answer, ambiguous, ...");
      snprintf(name, sizeof name, "rule_%s", mn);
      COL(t, name, TL_COL_STR, "the rule that fired");
      snprintf(name, sizeof name, "correct_%s", mn);
      COL(t, name, TL_COL_I64, "1 when scored correct under this mode");
    }
  }
  for (size_t i = 0; i < n; i++) {
    const tl_row *r = &rows[i];
    const tl_gen_item *it = &b->items[units[i].item];
    const tl_cfg *c = &cfgs[units[i].cfg];
    size_t row = tl_table_add_row(t);
    if (row == (size_t)-1) goto oom;
    int k = 0;
    tl_table_ref_str(t, row, k++, it->id);
    tl_table_ref_str(t, row, k++, it->task);
    tl_table_ref_str(t, row, k++, c->model);
    tl_table_set_i64(t, row, k++, c->seed);
    tl_table_ref_str(t, row, k++, VARIANTS[0]);
    tl_table_ref_str(t, row, k++, it->gold_text);
    tl_table_set_i64(t, row, k++, it->n_gold);
    tl_table_ref_str(t, row, k++, it->question);
    tl_table_ref_str(t, row, k++, r->text[0]);
    tl_table_set_i64(t, row, k++, r->text[0] != NULL);
    tl_table_ref_str(t, row, k++, r->source[0]);
    for (int m = 0; m < b->n_modes; m++) {
      const tl_parsed *p = &r->res[m];
      tl_table_ref_str(t, row, k++, p->answer);
      tl_table_ref_str(t, row, k++, tl_pstatus_name(p->status));
      tl_table_ref_str(t, row, k++, p->rule);
      tl_table_set_i64(t, row, k++, p->correct);
    }
  }
  return t;
oom:
  if (t != into) tl_table_free(t);
  return NULL;
}

/* /metrics/gen/<mode>: per model x variant x task (and "all"), the seeds pooled; the CI is over
 * the group's items, each item's seeds one cluster. */
static tl_table *metric_table(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc, int k,
                              tl_cluster_draws *d, tl_status *st) {
  char path[96];
  snprintf(path, sizeof path, "/metrics/gen/%s", tl_gen_mode_name(b->modes[k]));
  tl_table *t = tl_table_new(path);
  int64_t *num = malloc((b->n ? b->n : 1) * sizeof *num), *den = malloc((b->n ? b->n : 1) * sizeof *den);
  *st = TL_ENOMEM;
  if (!t || !num || !den) goto oom;
  COL(t, "model", TL_COL_STR, "model under test");
  COL(t, "prompt_variant", TL_COL_STR, "default");
  COL(t, "task", TL_COL_STR, "the items' task, or \"all\"");
  COL(t, "seeds", TL_COL_I64, "seeds pooled");
  COL(t, "n", TL_COL_I64, "units (items x seeds)");
  COL(t, "correct", TL_COL_I64, "units scored correct");
  COL(t, "accuracy", TL_COL_F64, "correct / n (a missing answer, an engine error or an unparsed one scores 0)");
  COL(t, "ci_lo", TL_COL_F64, "95% bootstrap CI of the accuracy over the group's items, each item's seeds one cluster");
  COL(t, "ci_hi", TL_COL_F64, "upper bound of that CI");
  COL(t, "answered", TL_COL_I64, "units with an answer");
  COL(t, "missing", TL_COL_I64, "units without an answer");
  COL(t, "unparsed", TL_COL_I64, "answered units this mode reads no answer from (status not ok)");
  COL(t, "engine_error", TL_COL_I64, "units the engine gave up on");
  for (int s = 0; s < TL_PS__COUNT; s++) {
    char nm[48];
    snprintf(nm, sizeof nm, "n_%s", tl_pstatus_name((tl_pstatus)s));
    COL(t, nm, TL_COL_I64, "units with this parse status");
  }
  const size_t T = (size_t)b->ntasks + 1, M = (size_t)b->n_modes;
  for (size_t c0 = 0; c0 < ncfgs;) {
    size_t c1 = c0;
    while (c1 < ncfgs && !strcmp(cfgs[c1].model, cfgs[c0].model) && cfgs[c1].variant == cfgs[c0].variant) c1++;
    for (size_t ts = 0; ts < T; ts++) {
      int64_t x[GW] = {0};
      for (size_t c = c0; c < c1; c++)
        for (int j = 0; j < GW; j++) x[j] += acc[0][((c * T + ts) * M + (size_t)k) * GW + (size_t)j];
      if (x[0] == 0) continue;
      uint32_t nc = 0;
      for (size_t i = 0; i < b->n; i++) {
        if (ts + 1 < T && (size_t)b->items[i].task_ix != ts) continue;
        num[nc] = 0;
        for (size_t c = c0; c < c1; c++) num[nc] += acc[1][(c * b->n + i) * M + (size_t)k];
        den[nc++] = (int64_t)(c1 - c0);
      }
      double lo, hi;
      if ((*st = tl_cluster_ci_drawn(d, num, den, nc, 0.95, &lo, &hi))) goto fail;
      size_t row = tl_table_add_row(t);
      if (row == (size_t)-1) goto oom;
      const int64_t miss = x[2 + TL_PS_MISSING], eerr = x[2 + TL_PS_ENGINE_ERROR];
      int col = 0;
      if (tl_table_set_str(t, row, col++, cfgs[c0].model) || tl_table_set_str(t, row, col++, VARIANTS[cfgs[c0].variant]) ||
          tl_table_set_str(t, row, col++, ts + 1 < T ? b->tasks[ts] : "all"))
        goto oom;
      tl_table_set_i64(t, row, col++, (int64_t)(c1 - c0));
      tl_table_set_i64(t, row, col++, x[0]);
      tl_table_set_i64(t, row, col++, x[1]);
      tl_table_set_f64(t, row, col++, (double)x[1] / (double)x[0]);
      tl_table_set_f64(t, row, col++, lo);
      tl_table_set_f64(t, row, col++, hi);
      tl_table_set_i64(t, row, col++, x[0] - miss - eerr);
      tl_table_set_i64(t, row, col++, miss);
      tl_table_set_i64(t, row, col++, x[0] - x[2 + TL_PS_OK] - miss - eerr);
      tl_table_set_i64(t, row, col++, eerr);
      for (int s = 0; s < TL_PS__COUNT; s++) tl_table_set_i64(t, row, col++, x[2 + s]);
    }
    c0 = c1;
  }
  free(num);
  free(den);
  *st = TL_OK;
  return t;
oom:
  *st = TL_ENOMEM;
fail:
  free(num);
  free(den);
  tl_table_free(t);
  return NULL;
}

/* /audit/gen: per task (and "all") and mode, over every model's units with a reply: accuracy,
 * units scored differently from the primary, and which side was correct. */
static tl_table *audit_table(const tl_bench *b, int64_t *const *acc) {
  tl_table *t = tl_table_new("/audit/gen");
  if (!t) return NULL;
  COL(t, "task", TL_COL_STR, "the items' task, or \"all\"");
  COL(t, "mode", TL_COL_STR, "scoring mode");
  COL(t, "n", TL_COL_I64, "units with an answer (every model, seed)");
  COL(t, "correct", TL_COL_I64, "units scored correct under this mode");
  COL(t, "accuracy", TL_COL_F64, "correct / n");
  COL(t, "disagree", TL_COL_I64, "units this mode and the primary score differently");
  COL(t, "correct_only_here", TL_COL_I64, "units correct under this mode and not under the primary");
  COL(t, "correct_only_primary", TL_COL_I64, "units correct under the primary and not under this mode");
  const size_t T = (size_t)b->ntasks + 1, M = (size_t)b->n_modes;
  for (size_t ts = 0; ts < T; ts++)
    for (size_t k = 0; k < M; k++) {
      const int64_t *a = acc[2] + (ts * M + k) * AW;
      size_t row = tl_table_add_row(t);
      if (row == (size_t)-1 || tl_table_set_str(t, row, 0, ts + 1 < T ? b->tasks[ts] : "all") ||
          tl_table_set_str(t, row, 1, tl_gen_mode_name(b->modes[k])))
        goto oom;
      tl_table_set_i64(t, row, 2, a[0]);
      tl_table_set_i64(t, row, 3, a[1]);
      tl_table_set_f64(t, row, 4, a[0] ? (double)a[1] / (double)a[0] : NAN);
      tl_table_set_i64(t, row, 5, a[2]);
      tl_table_set_i64(t, row, 6, a[3]);
      tl_table_set_i64(t, row, 7, a[2] - a[3]);
    }
  return t;
oom:
  tl_table_free(t);
  return NULL;
}

/* Tables: one per mode (job order), then the audit. */
static tl_status gen_tables(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc,
                            tl_table ***out, int *n) {
  const int nt = b->n_modes + 1;
  tl_table **t = calloc((size_t)nt, sizeof *t);
  tl_cluster_draws *d = tl_cluster_draws_new((uint32_t)b->ci_B, (uint64_t)b->ci_seed);
  tl_status st = t && d ? TL_OK : TL_ENOMEM;
  for (int k = 0; k < b->n_modes && !st; k++) t[k] = metric_table(b, cfgs, ncfgs, acc, k, d, &st);
  tl_cluster_draws_free(d);
  if (!st && !(t[nt - 1] = audit_table(b, acc))) st = TL_ENOMEM;
  if (st) {
    for (int i = 0; t && i < nt; i++) tl_table_free(t[i]);
    free(t);
    return st;
  }
  *out = t;
  *n = nt;
  return TL_OK;
}

static void gen_summary(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, uint64_t units, tl_table *const *tables,
                        int n, int64_t *const *acc, FILE *out) {
  (void)cfgs;
  (void)n;
  (void)acc;
  const int nm = b->n_modes;
  fprintf(out, "gen: %zu items in %d task%s x %zu model/seed configs = %llu units; modes:", b->n, b->ntasks,
          b->ntasks == 1 ? "" : "s", ncfgs, (unsigned long long)units);
  for (int k = 0; k < nm; k++) fprintf(out, " %s%s", tl_gen_mode_name(b->modes[k]), k == 0 ? " (primary)" : "");
  fprintf(out, "\n\naccuracy = correct / n (seeds pooled; a missing, failed or unparsed answer scores 0), 95%% CI: "
               "bootstrap over items, each item's seeds together (B = %d); unparsed: the %s mode's\n",
          b->ci_B, tl_gen_mode_name(b->modes[0]));
  const tl_table *a0 = tables[0];
  size_t wm = strlen("model"), wt = strlen("task");
  for (size_t r = 0; r < a0->nrows; r++) {
    wm = strlen(a0->cols[0].v.s[r]) > wm ? strlen(a0->cols[0].v.s[r]) : wm;
    wt = strlen(a0->cols[2].v.s[r]) > wt ? strlen(a0->cols[2].v.s[r]) : wt;
  }
  fprintf(out, "%-*s  %-*s %5s %6s %8s %7s %8s %12s", (int)wm, "model", (int)wt, "task", "seeds", "n", "answered",
          "missing", "unparsed", "engine_error");
  for (int k = 0; k < nm; k++) fprintf(out, "  %-*s", k + 1 < nm ? 24 : 0, tl_gen_mode_name(b->modes[k]));
  fprintf(out, "\n");
#define I64(t, name) ((long long)(t)->cols[tl_table_col((t), name)].v.i[r])
#define F64(t, name) ((t)->cols[tl_table_col((t), name)].v.f[r])
  for (size_t r = 0; r < a0->nrows; r++) {
    fprintf(out, "%-*s  %-*s %5lld %6lld %8lld %7lld %8lld %12lld", (int)wm, a0->cols[0].v.s[r], (int)wt,
            a0->cols[2].v.s[r], I64(a0, "seeds"), I64(a0, "n"), I64(a0, "answered"), I64(a0, "missing"),
            I64(a0, "unparsed"), I64(a0, "engine_error"));
    for (int k = 0; k < nm; k++) {
      const tl_table *a = tables[k]; /* same groups, same order for every mode */
      char cell[64];
      if (isnan(F64(a, "ci_lo"))) snprintf(cell, sizeof cell, "%.3f [-]", F64(a, "accuracy"));
      else snprintf(cell, sizeof cell, "%.3f [%.3f, %.3f]", F64(a, "accuracy"), F64(a, "ci_lo"), F64(a, "ci_hi"));
      fprintf(out, "  %-*s", k + 1 < nm ? 24 : 0, cell);
    }
    fprintf(out, "\n");
  }
#undef I64
#undef F64
  const tl_table *au = tables[nm];
  if (nm > 1) {
    fprintf(out, "\nmode audit against %s (every model and seed; units with an answer): d (a/b): d units scored "
                 "differently, a correct only under the mode, b only under %s\n",
            tl_gen_mode_name(b->modes[0]), tl_gen_mode_name(b->modes[0]));
    fprintf(out, "%-*s %-18s %6s %8s %s\n", (int)wt, "task", "mode", "n", "accuracy", "disagree");
    for (size_t r = 0; r < au->nrows; r++) {
      if (!strcmp(au->cols[1].v.s[r], tl_gen_mode_name(b->modes[0]))) continue;
      fprintf(out, "%-*s %-18s %6lld %8.3f %lld (%lld/%lld)\n", (int)wt, au->cols[0].v.s[r], au->cols[1].v.s[r],
              (long long)au->cols[2].v.i[r], au->cols[4].v.f[r], (long long)au->cols[5].v.i[r],
              (long long)au->cols[6].v.i[r], (long long)au->cols[7].v.i[r]);
    }
  }
  /* the primary's parse statuses, over every group's "all" row */
  int64_t st[TL_PS__COUNT] = {0};
  const int c0 = tl_table_col(a0, "n_ok");
  for (size_t r = 0; r < a0->nrows; r++)
    if (!strcmp(a0->cols[2].v.s[r], "all"))
      for (int s = 0; s < TL_PS__COUNT; s++) st[s] += a0->cols[c0 + s].v.i[r];
  fprintf(out, "\n%s parse statuses:", tl_gen_mode_name(b->modes[0]));
  for (int s = 0; s < TL_PS__COUNT; s++)
    if (st[s]) fprintf(out, " %s=%lld", tl_pstatus_name((tl_pstatus)s), (long long)st[s]);
  fprintf(out, "\n");
}

static const tl_compare_defaults GEN_COMPARE = {.metric = "correct_strict", .by = "task", .status = "status_strict"};

const tl_bench_vt tl_bench_gen = {
    .name = "gen",
    .nstages = 1,
    .variants = VARIANTS,
    .keys = KEYS,
    .max_modes = TL_GEN__NMODES,
    .max_acc = 3,
    .create = gen_create,
    .free = gen_free,
    .default_variant = gen_default_variant,
    .load = gen_load,
    .n_items = gen_n_items,
    .item_id = gen_item_id,
    .item_find = gen_item_find,
    .n_subs = gen_n_subs,
    .n_modes = gen_n_modes,
    .mode_name = gen_mode_name,
    .request = gen_request,
    .score = gen_score,
    .acc_layout = gen_acc_layout,
    .acc_add = gen_acc_add,
    .items_table = gen_items_table,
    .tables = gen_tables,
    .summary = gen_summary,
    .compare = &GEN_COMPARE,
};
