/* test_judged.c - the two-stage test module (test_judged.h): items, the generate and judge
 * requests, the rating parser, the SUM and MIN aggregates and the tables. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "test_judged.h"
#include "tally/jsonl.h"

#define TJ_MAX_TURNS 8
#define TJ_NSUM 4 /* block 0 values per cfg: n_units, n_ok, sum_value, n_missing */
enum { TJ_N = 0, TJ_OK = 1, TJ_SUM = 2, TJ_MISSING = 3 };

static const char *const VARIANTS[] = {"plain", NULL};
static const char *const KEYS[] = {"items", NULL};
static const char *const MODES[] = {"rating"};
static const char JUDGE_SYSTEM[] = "Rate the answer from 1 to 10. Reply with Rating: [[n]].";

/* One item; both strings owned by the item. */
typedef struct {
  char *id;
  char *question;
  uint32_t turns; /* 1 .. TJ_MAX_TURNS: units per cfg */
} tj_item;

/* The module object. paths are fixed at creation; items, n and by_id are set by load and
 * immutable afterwards. */
struct tl_bench {
  char **paths;     /* owned [npaths], each owned */
  int npaths;
  tj_item *items;   /* owned [n], sorted by id (strcmp) */
  size_t n;
  tl_strmap by_id;  /* id -> index into items */
};

static void items_release(tl_bench *b) {
  for (size_t i = 0; i < b->n; i++) {
    free(b->items[i].id);
    free(b->items[i].question);
  }
  free(b->items);
  b->items = NULL;
  b->n = 0;
  tl_strmap_release(&b->by_id);
  tl_strmap_init(&b->by_id);
}

static void tj_free(tl_bench *b) {
  if (!b) return;
  items_release(b);
  tl_strmap_release(&b->by_id);
  for (int i = 0; i < b->npaths; i++) free(b->paths[i]);
  free(b->paths);
  free(b);
}

/* Takes paths (the array and its strings) in every case. */
static tl_bench *bench_new(char **paths, int n) {
  tl_bench *b = calloc(1, sizeof *b);
  if (!b) {
    for (int i = 0; i < n; i++) free(paths[i]);
    free(paths);
    return NULL;
  }
  b->paths = paths;
  b->npaths = n;
  tl_strmap_init(&b->by_id);
  return b;
}

tl_bench *tl_test_judged_open_paths(char *const *paths, int n) {
  if (n < 1 || !paths) return NULL;
  char **cp = calloc((size_t)n, sizeof *cp);
  if (!cp) return NULL;
  for (int i = 0; i < n; i++) {
    if (!paths[i] || !(cp[i] = tl_strdup(paths[i]))) {
      for (int k = 0; k < i; k++) free(cp[k]);
      free(cp);
      return NULL;
    }
  }
  return bench_new(cp, n);
}

static tl_bench *tj_create(tl_job_ctx *c, const cJSON *entry, const char *where) {
  int problems = 0;
  tl_buf w;
  tl_buf_init(&w);
  if (tl_buf_printf(&w, "%s.items", where)) {
    tl_job_problem(c, where, "out of memory");
    return NULL;
  }
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(entry, "items");
  char **paths = NULL;
  int n = 0;
  if (!v) {
    tl_job_problem(c, w.data, "missing (the items file or files of test_judged)");
    problems++;
  } else {
    problems += tl_job_paths(c, v, w.data, "an items file", &paths, &n);
  }
  tl_buf_release(&w);
  if (problems) {
    for (int i = 0; i < n && paths; i++) free(paths[i]);
    free(paths);
    return NULL;
  }
  tl_bench *b = bench_new(paths, n);
  if (!b) tl_job_problem(c, where, "out of memory");
  return b;
}

static int tj_default_variant(const tl_bench *b) { return 0; }

/* ---- items ---- */

static int item_cmp(const void *a, const void *b) {
  return strcmp(((const tj_item *)a)->id, ((const tj_item *)b)->id);
}

/* Reads one item from a parsed line. 0 and *it filled (owned strings); or the kind of the
 * problem with its message in msg (*it untouched); or -1 when out of memory. */
static int item_from_json(const cJSON *o, tj_item *it, char *msg, size_t msgsz) {
  if (!cJSON_IsObject(o)) {
    snprintf(msg, msgsz, "item is not a JSON object");
    return TL_IN_BAD_FIELD;
  }
  static const char *const F[] = {"id", "question", "turns"};
  const cJSON *f[3];
  for (int k = 0; k < 3; k++) {
    f[k] = cJSON_GetObjectItemCaseSensitive(o, F[k]);
    if (!f[k] || cJSON_IsNull(f[k])) {
      snprintf(msg, msgsz, "item: missing field '%s'", F[k]);
      return TL_IN_MISSING_FIELD;
    }
  }
  if (!cJSON_IsString(f[0]) || !*f[0]->valuestring) {
    snprintf(msg, msgsz, "item: field 'id' is not a non-empty string");
    return TL_IN_BAD_FIELD;
  }
  if (!cJSON_IsString(f[1])) {
    snprintf(msg, msgsz, "item '%.200s': field 'question' is not a string", f[0]->valuestring);
    return TL_IN_BAD_FIELD;
  }
  if (!tl_json_is_int(f[2], 1, TJ_MAX_TURNS)) {
    snprintf(msg, msgsz, "item '%.200s': field 'turns' is not an integer from 1 to %d",
             f[0]->valuestring, TJ_MAX_TURNS);
    return TL_IN_BAD_FIELD;
  }
  it->id = tl_strdup(f[0]->valuestring);
  it->question = tl_strdup(f[1]->valuestring);
  it->turns = (uint32_t)f[2]->valuedouble;
  if (!it->id || !it->question) {
    free(it->id);
    free(it->question);
    return -1;
  }
  return 0;
}

/* tl_inlog_report's return for a problem at path:line -> ours: TL_EINPUT (strict) or TL_ENOMEM
 * stop the load. */
static tl_status logged(tl_status st, const char *path, long line, tl_err *err) {
  if (st == TL_OK) return TL_OK;
  if (st == TL_ENOMEM) return tl_err_set(err, TL_ENOMEM, "out of memory");
  return tl_err_set(err, TL_EINPUT, "%s:%ld: bad item line (strict input)", path, line);
}

/* The loader's state, for tl_inlog_each. */
typedef struct {
  tl_bench *b;
  size_t *cap;
  tl_inlog *log;
  tl_err *err;
} tj_loading;

/* One item line: checked, kept unless its id was seen (the first is kept). */
static tl_status item_line(void *vctx, const cJSON *obj, const tl_jsonl *r) {
  tj_loading *c = vctx;
  tl_bench *b = c->b;
  tj_item it;
  char msg[512];
  int kind = item_from_json(obj, &it, msg, sizeof msg);
  if (kind < 0) return tl_err_set(c->err, TL_ENOMEM, "out of memory");
  if (kind > 0)
    return logged(tl_inlog_report(c->log, (tl_in_kind)kind, r->path, r->line_no, "%s", msg), r->path, r->line_no, c->err);
  tl_status st = TL_OK;
  bool inserted = false;
  if (tl_strmap_put(&b->by_id, it.id, b->n, &inserted, NULL)) {
    st = tl_err_set(c->err, TL_ENOMEM, "out of memory");
  } else if (!inserted) {
    st = logged(tl_inlog_report(c->log, TL_IN_DUPLICATE, r->path, r->line_no,
                                "duplicate item id '%.200s' (the first one is kept)", it.id),
                r->path, r->line_no, c->err);
  } else if (b->n == *c->cap) {
    size_t nc = *c->cap ? *c->cap * 2 : 64;
    tj_item *p = realloc(b->items, nc * sizeof *p);
    if (!p) {
      st = tl_err_set(c->err, TL_ENOMEM, "out of memory");
    } else {
      b->items = p;
      *c->cap = nc;
    }
  }
  if (st || !inserted) {
    free(it.id);
    free(it.question);
    return st;
  }
  b->items[b->n++] = it;
  return TL_OK;
}

static tl_status load_file(tl_bench *b, const char *path, size_t *cap, size_t max_line,
                           tl_inlog *log, tl_err *err) {
  tl_jsonl r;
  tl_status st = tl_jsonl_open(&r, path, max_line, err); /* TL_EIO naming the path */
  if (st) return st;
  tj_loading c = {b, cap, log, err};
  st = tl_inlog_each(log, &r, "items", item_line, &c, err);
  tl_jsonl_close(&r);
  return st;
}

static tl_status tj_load(tl_bench *b, size_t max_line, tl_inlog *log, tl_err *err) {
  items_release(b);
  size_t cap = 0;
  tl_status st = TL_OK;
  for (int f = 0; f < b->npaths && st == TL_OK; f++)
    st = load_file(b, b->paths[f], &cap, max_line, log, err);
  if (st) {
    items_release(b);
    return st;
  }
  /* Key order: sort by id, then index the sorted positions. */
  if (b->n > 1) qsort(b->items, b->n, sizeof *b->items, item_cmp);
  tl_strmap_release(&b->by_id);
  tl_strmap_init(&b->by_id);
  for (size_t i = 0; i < b->n; i++)
    if (tl_strmap_put(&b->by_id, b->items[i].id, i, NULL, NULL)) {
      items_release(b);
      return tl_err_set(err, TL_ENOMEM, "out of memory");
    }
  return TL_OK;
}

static size_t tj_n_items(const tl_bench *b) { return b->n; }

static const char *tj_item_id(const tl_bench *b, size_t item) {
  return item < b->n ? b->items[item].id : NULL;
}

static int tj_item_find(const tl_bench *b, const char *id, size_t *item) {
  size_t i;
  if (!tl_strmap_get(&b->by_id, id, &i)) return 0;
  if (item) *item = i;
  return 1;
}

static uint32_t tj_n_subs(const tl_bench *b, size_t item) {
  return item < b->n ? b->items[item].turns : 0;
}

static int tj_n_modes(const tl_bench *b) { return 1; }

static const char *tj_mode_name(const tl_bench *b, int k) { return k == 0 ? MODES[0] : NULL; }

/* ---- requests ---- */

/* Appends a NUL after the strings just written, so each string ends on its own whatever the
 * caller appends later; on failure cuts the arena back to `off`. */
static tl_status arena_end(tl_buf *arena, size_t off, tl_status st, tl_err *err) {
  if (!st) st = tl_buf_append(arena, "", 1);
  if (st) {
    arena->len = off;
    arena->data[off] = 0;
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  return TL_OK;
}

static tl_status tj_request(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, int s,
                            const tl_row *r, tl_buf *arena, tl_bench_req *out, tl_err *err) {
  memset(out, 0, sizeof *out);
  out->temperature = -1;
  out->max_tokens = 0;
  if (u->item >= b->n || u->sub >= b->items[u->item].turns)
    return tl_err_set(err, TL_EINTERNAL, "test_judged: unit (item %" PRIu32 ", sub %" PRIu32
                      ") out of range", u->item, u->sub);
  const tj_item *it = &b->items[u->item];
  /* Every string is appended first and pointed to after: a growing tl_buf moves its data. */
  size_t off = arena->len;
  tl_status st;
  if (s == 0) {
    st = tl_buf_puts(arena, it->question);
    if (!st) st = tl_buf_printf(arena, " (turn %" PRIu32 ")", u->sub + 1);
    if ((st = arena_end(arena, off, st, err))) return st;
    out->role = TL_ROLE_MODEL;
    out->msgs[0].role = "user";
    out->msgs[0].content = arena->data + off;
    out->nmsg = 1;
    return TL_OK;
  }
  if (s != 1)
    return tl_err_set(err, TL_EINTERNAL, "test_judged: no stage %d (it has 2)", s);
  if (!r->text[0]) {
    out->skip = 1; /* nothing to judge */
    return TL_OK;
  }
  st = tl_buf_puts(arena, "[Question]\n");
  if (!st) st = tl_buf_puts(arena, it->question);
  if (!st) st = tl_buf_printf(arena, " (turn %" PRIu32 ")\n\n[Answer]\n", u->sub + 1);
  if (!st) st = tl_buf_puts(arena, r->text[0]);
  if ((st = arena_end(arena, off, st, err))) return st;
  out->role = TL_ROLE_JUDGE;
  out->msgs[0].role = "system";
  out->msgs[0].content = JUDGE_SYSTEM;
  out->msgs[1].role = "user";
  out->msgs[1].content = arena->data + off;
  out->nmsg = 2;
  return TL_OK;
}

/* ---- scoring ---- */

/* The last "Rating: [[d]]" / "Rating: [[dd]]" in text: 1 and its number in *v, or 0 when there
 * is none. One pass (each strstr resumes after the previous marker; the marker does not overlap
 * itself). */
static int last_rating(const char *text, int *v) {
  static const char MARK[] = "Rating: [[";
  const size_t ml = sizeof MARK - 1;
  int found = 0;
  for (const char *p = text; (p = strstr(p, MARK)) != NULL;) {
    p += ml;
    int nd = 0, val = 0;
    while (nd < 3 && p[nd] >= '0' && p[nd] <= '9') val = val * 10 + (p[nd++] - '0');
    if (nd >= 1 && nd <= 2 && p[nd] == ']' && p[nd + 1] == ']') {
      found = 1;
      *v = val;
    }
  }
  return found;
}

/* The rating of judgment `text` (NULL: none obtained) into p (empty: initialised or released). */
static tl_status rate_judgment(const char *text, tl_parsed *p, tl_err *err) {
  if (!text) {
    p->status = TL_PS_MISSING;
    p->rule = "no_judgment";
    return TL_OK;
  }
  int v = 0;
  if (!last_rating(text, &v)) {
    p->status = TL_PS_NO_ANSWER;
    p->rule = "no_rating";
    return TL_OK;
  }
  if (v < 1 || v > 10) {
    p->status = TL_PS_OUT_OF_RANGE;
    p->rule = "rating_range";
    return TL_OK;
  }
  char buf[4];
  snprintf(buf, sizeof buf, "%d", v);
  if (!(p->answer = tl_strdup(buf))) return tl_err_set(err, TL_ENOMEM, "out of memory");
  p->status = TL_PS_OK;
  p->rule = "last_rating";
  p->value = v;
  p->correct = v >= 6;
  return TL_OK;
}

static tl_status tj_score(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, tl_row *r,
                          tl_err *err) {
  if (r->done != 2)
    return tl_err_set(err, TL_EINTERNAL, "test_judged: scoring a row with %d of 2 stages done",
                      (int)r->done);
  tl_parsed *p = &r->res[0];
  tl_parsed_release(p);
  if (!r->text[0]) {
    p->status = TL_PS_MISSING;
    p->rule = ""; /* parsed.h: "" is the rule of a plain missing reply */
    return TL_OK;
  }
  return rate_judgment(r->text[1], p, err);
}

/* ---- aggregates ---- */

static int tj_acc_layout(const tl_bench *b, size_t ncfgs, tl_acc_block *out) {
  out[0].len = ncfgs * TJ_NSUM;
  out[0].op = TL_ACC_SUM;
  out[0].init = 0;
  out[1].len = ncfgs * b->n;
  out[1].op = TL_ACC_MIN;
  out[1].init = INT64_MAX;
  return 2;
}

static void tj_acc_add(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, const tl_unit *u, const tl_row *r,
                       int64_t *const *acc) {
  (void)cfgs;
  if (u->cfg >= ncfgs || u->item >= b->n) return; /* not a unit of this layout */
  const tl_parsed *p = &r->res[0];
  int ok = p->status == TL_PS_OK;
  int64_t *sum = acc[0] + (size_t)u->cfg * TJ_NSUM;
  sum[TJ_N]++;
  if (ok) {
    sum[TJ_OK]++;
    sum[TJ_SUM] += p->value;
  }
  if (p->status == TL_PS_MISSING) sum[TJ_MISSING]++;
  int64_t *mn = acc[1] + (size_t)u->cfg * b->n + u->item;
  int64_t v = ok ? p->value : 0;
  if (v < *mn) *mn = v;
}

/* ---- tables ---- */

static const char *variant_name(const tl_cfg *c) {
  return c->variant == 0 ? VARIANTS[0] : "?";
}


static const tl_col_spec ITEM_COLS[] = {
    {"id", TL_COL_STR, "item id"},
    {"turn", TL_COL_I64, "dialogue turn, 0-based (the unit's sub)"},
    {"model", TL_COL_STR, "model under test"},
    {"seed", TL_COL_I64, "sampling seed of the model under test"},
    {"prompt_variant", TL_COL_STR, "prompt variant name"},
    {"answer", TL_COL_TEXT, "the model's reply (stage 0); \"\" when none was obtained"},
    {"judgment", TL_COL_TEXT, "the judge's reply (stage 1); \"\" when none (or not asked)"},
    {"status", TL_COL_STR, "parse status of the judgment (ok, no_answer, out_of_range, missing)"},
    {"rule", TL_COL_STR, "the parse rule that fired (last_rating, no_rating, ...)"},
    {"rating", TL_COL_I64, "the judge's rating 1..10 when status is ok, else 0"},
};
enum { IC_ID, IC_TURN, IC_MODEL, IC_SEED, IC_VARIANT, IC_ANSWER, IC_JUDGMENT, IC_STATUS, IC_RULE,
       IC_RATING, IC__N };

static tl_table *tj_items_table(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *units,
                                const tl_row *rows, size_t n, tl_table *into) {
  tl_table *t = into ? into : tl_table_new("/items/test_judged");
  if (!t || (!into && tl_table_add_cols(t, ITEM_COLS, IC__N))) goto fail;
  for (size_t i = 0; i < n; i++) {
    const tl_unit *u = &units[i];
    const tl_row *r = &rows[i];
    const tl_cfg *c = &cfgs[u->cfg];
    size_t k = tl_table_add_row(t);
    if (k == (size_t)-1) goto fail;
    const char *id = tj_item_id(b, u->item);
    if (tl_table_set_str(t, k, IC_ID, id ? id : "") || tl_table_set_str(t, k, IC_MODEL, c->model) ||
        tl_table_set_str(t, k, IC_VARIANT, variant_name(c)) ||
        tl_table_set_str(t, k, IC_ANSWER, r->text[0] ? r->text[0] : "") ||
        tl_table_set_str(t, k, IC_JUDGMENT, r->text[1] ? r->text[1] : "") ||
        tl_table_set_str(t, k, IC_STATUS, tl_pstatus_name(r->res[0].status)) ||
        tl_table_set_str(t, k, IC_RULE, r->res[0].rule ? r->res[0].rule : ""))
      goto fail;
    tl_table_set_i64(t, k, IC_TURN, u->sub);
    tl_table_set_i64(t, k, IC_SEED, c->seed);
    tl_table_set_i64(t, k, IC_RATING, r->res[0].value);
  }
  return t;
fail:
  if (t != into) tl_table_free(t);
  return NULL;
}

static const tl_col_spec CFG_COLS[] = {
    {"model", TL_COL_STR, "model under test"},
    {"prompt_variant", TL_COL_STR, "prompt variant name"},
    {"seed", TL_COL_I64, "sampling seed of the model under test"},
    {"n", TL_COL_I64, "units (dialogue turns) scored"},
    {"n_ok", TL_COL_I64, "units with a rating 1..10"},
    {"n_missing", TL_COL_I64, "units without an answer or without a judgment"},
    {"mean_rating", TL_COL_F64, "mean rating over the n_ok rated units; NaN when n_ok = 0"},
};
static const tl_col_spec MIN_COLS[] = {
    {"model", TL_COL_STR, "model under test"},
    {"prompt_variant", TL_COL_STR, "prompt variant name"},
    {"seed", TL_COL_I64, "sampling seed of the model under test"},
    {"id", TL_COL_STR, "item id"},
    {"min_rating", TL_COL_I64,
     "least rating over the item's turns (0 when a turn is unrated); -1 when none was scored"},
};

static tl_status tj_tables(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs,
                           int64_t *const *acc, tl_table ***out, int *n) {
  *out = NULL;
  *n = 0;
  tl_table **ts = calloc(2, sizeof *ts);
  if (!ts) return TL_ENOMEM;
  ts[0] = tl_table_new("/metrics/test_judged/by_cfg");
  ts[1] = tl_table_new("/metrics/test_judged/dialogue_min");
  if (!ts[0] || !ts[1] || tl_table_add_cols(ts[0], CFG_COLS, 7) || tl_table_add_cols(ts[1], MIN_COLS, 5)) goto fail;
  for (size_t c = 0; c < ncfgs; c++) {
    const int64_t *s = acc[0] + c * TJ_NSUM;
    size_t k = tl_table_add_row(ts[0]);
    if (k == (size_t)-1 || tl_table_set_str(ts[0], k, 0, cfgs[c].model) ||
        tl_table_set_str(ts[0], k, 1, variant_name(&cfgs[c])))
      goto fail;
    tl_table_set_i64(ts[0], k, 2, cfgs[c].seed);
    tl_table_set_i64(ts[0], k, 3, s[TJ_N]);
    tl_table_set_i64(ts[0], k, 4, s[TJ_OK]);
    tl_table_set_i64(ts[0], k, 5, s[TJ_MISSING]);
    tl_table_set_f64(ts[0], k, 6, s[TJ_OK] ? (double)s[TJ_SUM] / (double)s[TJ_OK] : NAN);
    for (size_t i = 0; i < b->n; i++) {
      int64_t m = acc[1][c * b->n + i];
      size_t j = tl_table_add_row(ts[1]);
      if (j == (size_t)-1 || tl_table_set_str(ts[1], j, 0, cfgs[c].model) ||
          tl_table_set_str(ts[1], j, 1, variant_name(&cfgs[c])) ||
          tl_table_set_str(ts[1], j, 3, b->items[i].id))
        goto fail;
      tl_table_set_i64(ts[1], j, 2, cfgs[c].seed);
      tl_table_set_i64(ts[1], j, 4, m == INT64_MAX ? -1 : m);
    }
  }
  *out = ts;
  *n = 2;
  return TL_OK;
fail:
  tl_table_free(ts[0]);
  tl_table_free(ts[1]);
  free(ts);
  return TL_ENOMEM;
}

static void tj_summary(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, uint64_t units,
                       tl_table *const *tables, int n, int64_t *const *acc, FILE *out) {
  for (size_t c = 0; c < ncfgs; c++) {
    const int64_t *s = acc[0] + c * TJ_NSUM;
    fprintf(out, "test_judged: %s seed %d: n=%" PRId64 " ok=%" PRId64 " mean rating=", cfgs[c].model,
            cfgs[c].seed, s[TJ_N], s[TJ_OK]);
    if (s[TJ_OK]) fprintf(out, "%.3f\n", (double)s[TJ_SUM] / (double)s[TJ_OK]);
    else fprintf(out, "nan\n");
  }
}

/* ---- hooks around the run (test_judged.h) ---- */

/* The "test_judged-qa" format: {"question_id": str, "output": str|null, "instruction"?: str}. */
static int qa_claims(const cJSON *o) {
  return cJSON_GetObjectItemCaseSensitive(o, "question_id") && cJSON_GetObjectItemCaseSensitive(o, "output");
}

static int qa_read(const cJSON *o, tl_answer_line *out, char *idbuf, size_t nid, char *msg, size_t msz) {
  const cJSON *q = cJSON_GetObjectItemCaseSensitive(o, "question_id");
  if (!cJSON_IsString(q) || !*q->valuestring || strlen(q->valuestring) >= nid)
    return snprintf(msg, msz, "a test_judged-qa line needs 'question_id', a non-empty string"), -1;
  memcpy(idbuf, q->valuestring, strlen(q->valuestring) + 1);
  out->id = idbuf;
  out->resp = cJSON_GetObjectItemCaseSensitive(o, "output");
  out->prompt = cJSON_GetObjectItemCaseSensitive(o, "instruction");
  return 0;
}

static const tl_answer_format QA_FORMAT = {.name = "test_judged-qa", .claims = qa_claims, .read = qa_read};
static const tl_answer_format *const FORMATS[] = {&QA_FORMAT, NULL};

/* The parser "test_judged-rating": {"response"} -> {"answer", "rating", "status", "rule"}. */
static tl_status rp_open(const tl_named_parser *np, int flag, void **state, tl_err *err) {
  *state = NULL;
  return TL_OK;
}

static tl_status rp_run(const tl_named_parser *np, void *state, int flag, const tl_parse_line *line, cJSON *w,
                        tl_err *err) {
  tl_parsed p;
  tl_parsed_init(&p);
  tl_status st = rate_judgment(line->response, &p, err);
  if (st == TL_OK) {
    if (p.answer) cJSON_AddStringToObject(w, "answer", p.answer);
    else cJSON_AddNullToObject(w, "answer");
    if (p.status == TL_PS_OK) cJSON_AddNumberToObject(w, "rating", (double)p.value);
    else cJSON_AddNullToObject(w, "rating");
    cJSON_AddStringToObject(w, "status", tl_pstatus_name(p.status));
    cJSON_AddStringToObject(w, "rule", p.rule);
  }
  tl_parsed_release(&p);
  return st;
}

static const tl_named_parser RATING_PARSER = {.name = "test_judged-rating", .open = rp_open, .run = rp_run};
static const tl_named_parser *const PARSERS[] = {&RATING_PARSER, NULL};
static const tl_parser_set PARSER_SET = {
    .list = PARSERS,
    .kind = "test ratings",
    .brief = "test_judged",
    .help = "  test_judged-rating (the last 'Rating: [[n]]'; tests only):\n"
            "    input lines:  {\"response\": \"<judge output>\"|null}\n"
            "    output lines: {\"answer\": \"7\"|null, \"rating\": 7|null, \"status\": \"...\", \"rule\": \"...\"}\n",
};

/* `tally compare`: the rating, no groups, a dialogue scored by its least rating. */
static const tl_compare_defaults COMPARE = {.metric = "rating", .by = "", .status = "status", .dialogue = 1};

const tl_bench_vt tl_bench_test_judged = {
    .name = "test_judged",
    .nstages = 2,
    .variants = VARIANTS,
    .keys = KEYS,
    .create = tj_create,
    .free = tj_free,
    .default_variant = tj_default_variant,
    .load = tj_load,
    .n_items = tj_n_items,
    .item_id = tj_item_id,
    .item_find = tj_item_find,
    .n_subs = tj_n_subs,
    .n_modes = tj_n_modes,
    .mode_name = tj_mode_name,
    .request = tj_request,
    .score = tj_score,
    .acc_layout = tj_acc_layout,
    .acc_add = tj_acc_add,
    .items_table = tj_items_table,
    .tables = tj_tables,
    .summary = tj_summary,
    .max_modes = 1,
    .max_acc = 2,
    .formats = FORMATS,
    .parsers = &PARSER_SET,
    .compare = &COMPARE,
};
