/* module.c - the generic multiple-choice benchmark as a module (tally/bench.h; docs/MCQ.md): one
 * stage (the model's answer, or a replayed one: a text reply or a line of log-likelihoods),
 * scored by the job's modes (strict first, the primary; then each harness's own extraction),
 * counted into three additive blocks (the group counts per cfg x task x mode; each unit's correct
 * flag per mode, the CIs' clusters; the audit of each mode against the primary), from which
 * rank 0 builds the metric and audit tables and the summary (all of which, with the per-mode
 * columns of the items table, are tally/acctab.h's, shared with the gen module).
 *
 * Job keys: "items" (a path or a list), "modes" (default: strict, lmeval-regex, inspect-choice,
 * helm-mapping, vlmeval-heuristic, acc_norm; at most 6), "lmeval_regex" (lm-eval's filter pattern,
 * default "Answer: ([A-D])"), "ci_resamples" (1000), "ci_seed" (0). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mcq.h"
#include "tally/acctab.h"
#include "tally/bench.h"
#include "tally/itemset.h"

static const char *const VARIANTS[] = {"default", NULL};
static const char *const KEYS[] = {"items", "modes", "lmeval_regex", "ci_resamples", "ci_seed", NULL};
static const tl_mcq_mode DEFAULT_MODES[] = {TL_MCQ_STRICT,  TL_MCQ_LMEVAL,  TL_MCQ_INSPECT,
                                            TL_MCQ_HELM,    TL_MCQ_VLMEVAL, TL_MCQ_ACC_NORM};

struct tl_bench {
  char **files;
  int n_files;
  tl_mcq_mode modes[TL_MAX_MODES];
  int n_modes;
  char *lmeval_rx;
  int ci_B, ci_seed;
  tl_itemset set;     /* the items (tally/itemset.h); what follows is a view of it, set at load */
  tl_mcq_item *items; /* [n], sorted by id */
  size_t n;
  char **tasks;       /* [ntasks] sorted; slot ntasks of the counts is "all" */
  int ntasks;
  tl_mcq_parsers P;
  tl_acctab at;       /* the accuracy tables' view of this object (set at load) */
};

static void mcq_free(tl_bench *b) {
  if (!b) return;
  for (int i = 0; i < b->n_files; i++) free(b->files[i]);
  free(b->files);
  free(b->lmeval_rx);
  tl_itemset_release(&b->set);
  tl_mcq_parsers_release(&b->P);
  free(b);
}

#define PROBLEM(...)                \
  do {                              \
    tl_job_problem(c, __VA_ARGS__); \
    bad++;                          \
  } while (0)

static tl_bench *mcq_create(tl_job_ctx *c, const cJSON *e, const char *where) {
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
    PROBLEM(w2, "must be a non-empty list of modes (strict, lmeval-regex, inspect-choice, helm-mapping, "
                "vlmeval-heuristic, acc_norm, acc_bytes)");
  } else {
    const cJSON *x;
    cJSON_ArrayForEach(x, ms) {
      int m = cJSON_IsString(x) ? tl_mcq_mode_from_name(x->valuestring) : -1;
      if (m < 0) {
        PROBLEM(w2, "unknown mode %s (want strict, lmeval-regex, inspect-choice, helm-mapping, vlmeval-heuristic, "
                    "acc_norm or acc_bytes)", cJSON_IsString(x) ? x->valuestring : "(not a string)");
        continue;
      }
      int dup = 0;
      for (int k = 0; k < b->n_modes; k++) dup |= b->modes[k] == (tl_mcq_mode)m;
      if (dup) PROBLEM(w2, "mode '%s' listed twice", x->valuestring);
      else if (b->n_modes == TL_MAX_MODES) PROBLEM(w2, "at most %d modes", TL_MAX_MODES);
      else b->modes[b->n_modes++] = (tl_mcq_mode)m;
    }
  }
  const cJSON *rx = cJSON_GetObjectItemCaseSensitive(e, "lmeval_regex");
  if (rx) {
    snprintf(w2, sizeof w2, "%s.lmeval_regex", where);
    tl_err er = {0};
    tl_rx *t = cJSON_IsString(rx) && rx->valuestring[0] ? tl_rx_compile(rx->valuestring, 0, &er) : NULL;
    if (!t) PROBLEM(w2, "must be a regular expression (Python re syntax)%s%s", er.msg[0] ? ": " : "", er.msg);
    tl_rx_free(t);
    if (t && !(b->lmeval_rx = tl_strdup(rx->valuestring))) PROBLEM(w2, "out of memory");
  }
  b->ci_B = 1000;
  bad += tl_job_key_int(c, e, "ci_resamples", where, 2, 1000000, "an integer from 2 to 1000000", &b->ci_B);
  bad += tl_job_key_int(c, e, "ci_seed", where, 0, 2147483647, "an integer >= 0", &b->ci_seed);
  if (bad) {
    mcq_free(b);
    return NULL;
  }
  return b;
}

static int mcq_default_variant(const tl_bench *b) {
  (void)b;
  return 0;
}

static tl_status item_from_json(const cJSON *o, void *item, char *msg, size_t msz) {
  return tl_mcq_item_from_json(o, item, msg, msz);
}
static void item_release(void *item) { tl_mcq_item_release(item); }
static const tl_itemset_type ITEMS = {sizeof(tl_mcq_item), offsetof(tl_mcq_item, id), offsetof(tl_mcq_item, task), offsetof(tl_mcq_item, task_ix),
                                      item_from_json, item_release};

static int item_task(const void *ctx, size_t i) { return ((const tl_bench *)ctx)->items[i].task_ix; }

/* b->at, once the items and tasks are final. */
static void acctab_init(tl_bench *b) {
  b->at = (tl_acctab){.name = "mcq",
                      .variants = VARIANTS,
                      .n_modes = b->n_modes,
                      .n_items = b->n,
                      .tasks = b->tasks,
                      .ntasks = b->ntasks,
                      .item_task = item_task,
                      .ctx = b,
                      .ci_B = b->ci_B,
                      .ci_seed = b->ci_seed,
                      .answer_doc = {"answer extracted by the ", " mode (empty = none)"},
                      .unparsed_doc = "answered units this mode reads no choice from (status not ok)"};
  for (int k = 0; k < b->n_modes; k++) b->at.modes[k] = tl_mcq_mode_name(b->modes[k]);
}

static tl_status mcq_load(tl_bench *b, size_t max_line, tl_inlog *log, tl_err *err) {
  tl_status st = tl_itemset_load(&b->set, &ITEMS, b->files, b->n_files, max_line, log, err);
  if (st) return st;
  b->items = b->set.items;
  b->n = b->set.n;
  b->tasks = b->set.tasks;
  b->ntasks = b->set.ntasks;
  acctab_init(b);
  return tl_mcq_parsers_init(&b->P, b->lmeval_rx, err);
}

static size_t mcq_n_items(const tl_bench *b) { return b->n; }
static const char *mcq_item_id(const tl_bench *b, size_t i) { return b->items[i].id; }
static int mcq_item_find(const tl_bench *b, const char *id, size_t *i) { return tl_itemset_find(&b->set, id, i); }
static uint32_t mcq_n_subs(const tl_bench *b, size_t i) { return i <= b->n ? 1 : 0; }
static int mcq_n_modes(const tl_bench *b) { return b->n_modes; }
static const char *mcq_mode_name(const tl_bench *b, int k) { return tl_mcq_mode_name(b->modes[k]); }

/* Stage 0: the question and its lettered choices, asking for an "Answer: X" last line (tally's
 * own prompt; a replayed answer keeps the prompt it was given). */
static tl_status mcq_request(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, int s, const tl_row *r,
                             tl_buf *arena, tl_bench_req *out, tl_err *err) {
  (void)cfgs;
  (void)s;
  (void)r;
  const tl_mcq_item *it = &b->items[u->item];
  tl_status st = tl_buf_printf(arena, "Answer the following multiple choice question. The last line of your response "
                                      "should be of the form 'Answer: LETTER' where LETTER is one of ");
  for (int k = 0; k < it->n && !st; k++) st = tl_buf_printf(arena, "%s%c", k ? "," : "", 'A' + k);
  if (!st) st = tl_buf_printf(arena, ".\n\n%s\n", it->question);
  for (int k = 0; k < it->n && !st; k++) st = tl_buf_printf(arena, "\n%c) %s", 'A' + k, it->choice[k]);
  if (st || tl_buf_append(arena, "", 1)) return tl_err_set(err, TL_ENOMEM, "out of memory");
  out->role = TL_ROLE_MODEL;
  out->msgs[0].role = "user";
  out->msgs[0].content = arena->data;
  out->nmsg = 1;
  return TL_OK;
}

static tl_status mcq_score(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, tl_row *r, tl_err *err) {
  (void)cfgs;
  const tl_mcq_item *it = &b->items[u->item];
  for (int k = 0; k < b->n_modes; k++) {
    tl_status st = tl_mcq_score(&b->P, b->modes[k], it, r->text[0], &r->res[k]);
    if (st) return tl_err_set(err, st, "scoring item '%s' failed: %s", it->id, tl_strerror(st));
  }
  return TL_OK;
}

/* ---- accumulators, metric and audit tables, summary: tally/acctab.h (b->at, set at load) ---- */
static int mcq_acc_layout(const tl_bench *b, size_t ncfgs, tl_acc_block *out) {
  return tl_acctab_layout(&b->at, ncfgs, out);
}

static void mcq_acc_add(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, const tl_unit *u, const tl_row *r,
                        int64_t *const *acc) {
  (void)cfgs;
  (void)ncfgs;
  tl_acctab_add(&b->at, u, r, acc);
}

#define COL(t, name, type, doc)                                     \
  do {                                                              \
    if (tl_table_add_col((t), (name), (type), (doc)) < 0) goto oom; \
  } while (0)

static tl_table *mcq_items_table(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *units, const tl_row *rows,
                                 size_t n, tl_table *into) {
  tl_table *t = into ? into : tl_table_new("/items/mcq");
  if (!t) return NULL;
  if (!into) {
    COL(t, "id", TL_COL_STR, "item id");
    COL(t, "task", TL_COL_STR, "the item's task (\"default\" when it names none)");
    COL(t, "model", TL_COL_STR, "model under test");
    COL(t, "seed", TL_COL_I64, "generation seed (a harness's repeat index)");
    COL(t, "prompt_variant", TL_COL_STR, "default");
    COL(t, "gold", TL_COL_STR, "the correct choice's letter");
    COL(t, "n_choices", TL_COL_I64, "the item's choices");
    COL(t, "question", TL_COL_TEXT, "the item's question (as its items file gives it)");
    COL(t, "response", TL_COL_TEXT, "raw answer (empty when missing); a log-likelihood answer: the marker "
                                    "tally-loglik in U+27E6/U+27E7 brackets, then its logliks as a JSON array");
    COL(t, "has_response", TL_COL_I64, "1 when an answer was obtained");
    COL(t, "source", TL_COL_STR, "file:line the answer came from");
    if (tl_acctab_item_cols(&b->at, t)) goto oom;
  }
  for (size_t i = 0; i < n; i++) {
    const tl_row *r = &rows[i];
    const tl_mcq_item *it = &b->items[units[i].item];
    const tl_cfg *c = &cfgs[units[i].cfg];
    size_t row = tl_table_add_row(t);
    if (row == (size_t)-1) goto oom;
    int k = 0;
    tl_table_ref_str(t, row, k++, it->id);
    tl_table_ref_str(t, row, k++, it->task);
    tl_table_ref_str(t, row, k++, c->model);
    tl_table_set_i64(t, row, k++, c->seed);
    tl_table_ref_str(t, row, k++, VARIANTS[0]);
    tl_table_ref_str(t, row, k++, it->gold_letter);
    tl_table_set_i64(t, row, k++, it->n);
    tl_table_ref_str(t, row, k++, it->question);
    tl_table_ref_str(t, row, k++, r->text[0]);
    tl_table_set_i64(t, row, k++, r->text[0] != NULL);
    tl_table_ref_str(t, row, k++, r->source[0]);
    tl_acctab_item_cells(&b->at, t, row, k, r);
  }
  return t;
oom:
  if (t != into) tl_table_free(t);
  return NULL;
}

/* Tables: one per mode (job order), then the audit. */
static tl_status mcq_tables(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc,
                            tl_table ***out, int *n) {
  return tl_acctab_tables(&b->at, cfgs, ncfgs, acc, out, n);
}

static void mcq_summary(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, uint64_t units, tl_table *const *tables,
                        int n, int64_t *const *acc, FILE *out) {
  (void)cfgs;
  (void)n;
  (void)acc;
  tl_acctab_summary(&b->at, ncfgs, units, tables, out);
}

const tl_bench_vt tl_bench_mcq = {
    .name = "mcq",
    .nstages = 1,
    .variants = VARIANTS,
    .keys = KEYS,
    .max_modes = TL_MAX_MODES,
    .max_acc = TL_ACCTAB_NACC,
    .create = mcq_create,
    .free = mcq_free,
    .default_variant = mcq_default_variant,
    .load = mcq_load,
    .n_items = mcq_n_items,
    .item_id = mcq_item_id,
    .item_find = mcq_item_find,
    .n_subs = mcq_n_subs,
    .n_modes = mcq_n_modes,
    .mode_name = mcq_mode_name,
    .request = mcq_request,
    .score = mcq_score,
    .acc_layout = mcq_acc_layout,
    .acc_add = mcq_acc_add,
    .items_table = mcq_items_table,
    .tables = mcq_tables,
    .summary = mcq_summary,
    .formats = tl_mcq_formats,
    .parsers = &tl_mcq_parser_set,
    .compare = &tl_mcq_compare,
};
