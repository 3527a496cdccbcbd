/* module.c - the generative exact-match benchmark as a module (tally/bench.h; docs/GEN.md): one
 * stage (the model's answer, or a replayed one, e.g. lm-eval's generate_until samples), scored by
 * the job's modes (strict first, the primary; exact, lm-eval's exact_match), counted into three
 * additive blocks (the group counts per cfg x task x mode; each unit's correct flag per mode, the
 * CIs' clusters; the audit of each mode against the primary), from which rank 0 builds the
 * metric and audit tables and the summary: the accumulators, those tables and the per-mode
 * columns of the items table are the mcq module's, shared (tally/acctab.h).
 *
 * Job keys: "items" (a path or a list), "modes" (default: strict, exact), lm-eval's exact_match
 * options "regexes_to_ignore" (a list of patterns), "ignore_case", "ignore_punctuation",
 * "ignore_numbers" (false), "ci_resamples" (1000), "ci_seed" (0). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "tally/acctab.h"
#include "tally/bench.h"
#include "tally/itemset.h"

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
  tl_itemset set;     /* the items (tally/itemset.h); what follows is a view of it, set at load */
  tl_gen_item *items; /* [n], sorted by id */
  size_t n;
  char **tasks;       /* [ntasks] sorted; slot ntasks of the counts is "all" */
  int ntasks;
  tl_gen_parsers P;
  tl_acctab at;       /* the accuracy tables' view of this object (set at load) */
};

static void gen_free(tl_bench *b) {
  if (!b) return;
  for (int i = 0; i < b->n_files; i++) free(b->files[i]);
  free(b->files);
  for (int i = 0; i < b->n_rx; i++) free(b->rx[i]);
  free(b->rx);
  tl_itemset_release(&b->set);
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

static tl_status item_from_json(const cJSON *o, void *item, char *msg, size_t msz) {
  return tl_gen_item_from_json(o, item, msg, msz);
}
static void item_release(void *item) { tl_gen_item_release(item); }
static const tl_itemset_type ITEMS = {sizeof(tl_gen_item), offsetof(tl_gen_item, id), offsetof(tl_gen_item, task), offsetof(tl_gen_item, task_ix),
                                      item_from_json, item_release};

static int item_task(const void *ctx, size_t i) { return ((const tl_bench *)ctx)->items[i].task_ix; }

/* b->at, once the items and tasks are final. */
static void acctab_init(tl_bench *b) {
  b->at = (tl_acctab){.name = "gen",
                      .variants = VARIANTS,
                      .n_modes = b->n_modes,
                      .n_items = b->n,
                      .tasks = b->tasks,
                      .ntasks = b->ntasks,
                      .item_task = item_task,
                      .ctx = b,
                      .ci_B = b->ci_B,
                      .ci_seed = b->ci_seed,
                      .answer_doc = {"answer the ",
                                     " mode compared (strict: the final answer as written; exact: the reply)"},
                      .unparsed_doc = "answered units this mode reads no answer from (status not ok)"};
  for (int k = 0; k < b->n_modes; k++) b->at.modes[k] = tl_gen_mode_name(b->modes[k]);
}

static tl_status gen_load(tl_bench *b, size_t max_line, tl_inlog *log, tl_err *err) {
  tl_status st = tl_itemset_load(&b->set, &ITEMS, b->files, b->n_files, max_line, log, err);
  if (st) return st;
  b->items = b->set.items;
  b->n = b->set.n;
  b->tasks = b->set.tasks;
  b->ntasks = b->set.ntasks;
  acctab_init(b);
  return tl_gen_parsers_init(&b->P, (const char *const *)b->rx, b->n_rx, b->ignore_case, b->ignore_punctuation,
                             b->ignore_numbers, err);
}

static size_t gen_n_items(const tl_bench *b) { return b->n; }
static const char *gen_item_id(const tl_bench *b, size_t i) { return b->items[i].id; }
static int gen_item_find(const tl_bench *b, const char *id, size_t *i) { return tl_itemset_find(&b->set, id, i); }
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

/* ---- accumulators, metric and audit tables, summary: tally/acctab.h (b->at, set at load) ---- */
static int gen_acc_layout(const tl_bench *b, size_t ncfgs, tl_acc_block *out) {
  return tl_acctab_layout(&b->at, ncfgs, out);
}

static void gen_acc_add(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, const tl_unit *u, const tl_row *r,
                        int64_t *const *acc) {
  (void)cfgs;
  (void)ncfgs;
  tl_acctab_add(&b->at, u, r, acc);
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
    if (tl_acctab_item_cols(&b->at, t)) goto oom;
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
    tl_acctab_item_cells(&b->at, t, row, k, r);
  }
  return t;
oom:
  if (t != into) tl_table_free(t);
  return NULL;
}

/* Tables: one per mode (job order), then the audit. */
static tl_status gen_tables(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc,
                            tl_table ***out, int *n) {
  return tl_acctab_tables(&b->at, cfgs, ncfgs, acc, out, n);
}

static void gen_summary(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, uint64_t units, tl_table *const *tables,
                        int n, int64_t *const *acc, FILE *out) {
  (void)cfgs;
  (void)n;
  (void)acc;
  tl_acctab_summary(&b->at, ncfgs, units, tables, out);
}

static const tl_compare_defaults GEN_COMPARE = {.metric = "correct_strict", .by = "task", .status = "status_strict"};

const tl_bench_vt tl_bench_gen = {
    .name = "gen",
    .nstages = 1,
    .variants = VARIANTS,
    .keys = KEYS,
    .max_modes = TL_GEN__NMODES,
    .max_acc = TL_ACCTAB_NACC,
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
