/* se_eval.c - SpatialEval item sets, unit scoring and result tables (see se_eval.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/agree.h"
#include "tally/boot.h"
#include "tally/job.h"
#include "tally/jsonl.h"
#include "se_eval.h"
#include "tally/str.h"
#include "tally/stats.h"

/* ---- item set ---- */

static int item_cmp(const void *a, const void *b) {
  return strcmp(((const tl_se_item *)a)->id, ((const tl_se_item *)b)->id);
}

/* The items loader's state, for tl_inlog_each. */
typedef struct {
  tl_se_itemset *s;
  size_t cap;
  tl_inlog *log;
  tl_err *err;
  const tl_se_load_opts *o;
  const char *img_dir; /* where relative images resolve: o->images_dir, or the file's folder */
} item_load;

/* One item line: checked, kept unless its id was seen (the first is kept). */
static tl_status item_line(void *vctx, const cJSON *obj, const tl_jsonl *r) {
  item_load *c = vctx;
  tl_se_itemset *s = c->s;
  tl_se_item it;
  tl_err e;
  tl_status ist = tl_se_item_from_json(obj, &it, &e);
  if (ist == TL_OK && it.qid > TL_SE_MAX_QID) {
    snprintf(e.msg, sizeof e.msg, "id '%s': question id %d is larger than %d", it.id, it.qid, TL_SE_MAX_QID);
    tl_se_item_release(&it);
    ist = TL_EINPUT;
  }
  if (ist == TL_ENOMEM) return tl_err_set(c->err, TL_ENOMEM, "out of memory");
  if (ist != TL_OK) {
    tl_in_kind k = strstr(e.msg, "missing field") ? TL_IN_MISSING_FIELD
                   : strncmp(e.msg, "id ", 3) == 0 ? TL_IN_BAD_ID : TL_IN_BAD_FIELD;
    return tl_inlog_report(c->log, k, r->path, r->line_no, "item %s", e.msg) ? TL_EINPUT : TL_OK;
  }
  if (it.qmode == TL_SE_TQA) { /* text only: an image is never sent with it */
    free(it.image);
    it.image = NULL;
  } else if (!it.image && c->o->need_images) {
    tl_status rst = tl_inlog_report(c->log, TL_IN_MISSING_FIELD, r->path, r->line_no,
                                    "item '%s' is a %s item without an 'image': the model would be asked about a "
                                    "picture it never gets (the item is left out)", it.id, it.mode);
    tl_se_item_release(&it);
    return rst ? TL_EINPUT : TL_OK;
  } else if (it.image) {
    char *p = tl_path_resolve(c->img_dir, it.image);
    if (!p) {
      tl_se_item_release(&it);
      return tl_err_set(c->err, TL_ENOMEM, "out of memory");
    }
    free(it.image);
    it.image = p;
  }
  if (c->o->qmode_mask && !(c->o->qmode_mask & (1u << it.qmode))) { /* a mode the job leaves out */
    tl_status pst = tl_strmap_put(&s->left_out, it.id, 0, NULL, NULL);
    tl_se_item_release(&it);
    return pst ? tl_err_set(c->err, TL_ENOMEM, "out of memory") : TL_OK;
  }
  size_t prev;
  bool inserted;
  if (tl_strmap_put(&s->by_id, it.id, s->n, &inserted, &prev) != TL_OK) {
    tl_se_item_release(&it);
    return tl_err_set(c->err, TL_ENOMEM, "out of memory");
  }
  if (!inserted) {
    tl_se_item_release(&it);
    return tl_inlog_report(c->log, TL_IN_DUPLICATE, r->path, r->line_no, "duplicate item id '%s' (the first one is kept)",
                           s->items[prev].id) ? TL_EINPUT : TL_OK;
  }
  if (s->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 256;
    tl_se_item *p = realloc(s->items, cap * sizeof *p);
    if (!p) {
      tl_se_item_release(&it);
      return tl_err_set(c->err, TL_ENOMEM, "out of memory");
    }
    s->items = p;
    c->cap = cap;
  }
  s->per_qmode[it.qmode]++;
  s->items[s->n++] = it;
  return TL_OK;
}

tl_status tl_se_itemset_load(tl_se_itemset *s, char *const *paths, int npaths, size_t max_line,
                             tl_inlog *log, tl_err *err) {
  return tl_se_itemset_load_opts(s, paths, npaths, NULL, max_line, log, err);
}

tl_status tl_se_itemset_load_opts(tl_se_itemset *s, char *const *paths, int npaths,
                                  const tl_se_load_opts *opts, size_t max_line, tl_inlog *log,
                                  tl_err *err) {
  static const tl_se_load_opts none;
  memset(s, 0, sizeof *s);
  tl_strmap_init(&s->by_id);
  tl_strmap_init(&s->left_out);
  item_load c = {s, 0, log, err, opts ? opts : &none, NULL};
  tl_status st = TL_OK;
  for (int f = 0; f < npaths && st == TL_OK; f++) {
    tl_jsonl r;
    char *dir = NULL;
    if (!c.o->images_dir) { /* the items file's folder ("" for a file in the working folder) */
      const char *sl = strrchr(paths[f], '/');
      if (!(dir = tl_strndup(paths[f], sl ? (size_t)(sl == paths[f] ? 1 : sl - paths[f]) : 0))) {
        st = tl_err_set(err, TL_ENOMEM, "out of memory");
        break;
      }
    }
    c.img_dir = c.o->images_dir ? c.o->images_dir : dir;
    if ((st = tl_jsonl_open(&r, paths[f], max_line, err)) != TL_OK) {
      free(dir);
      break;
    }
    st = tl_inlog_each(log, &r, "items", item_line, &c, err);
    tl_jsonl_close(&r);
    free(dir);
  }
  if (st != TL_OK) {
    tl_se_itemset_release(s);
    return st;
  }
  /* Key order: sort by id and rebuild the index. */
  if (s->n > 1) qsort(s->items, s->n, sizeof *s->items, item_cmp); /* items is NULL when n == 0 */
  tl_strmap_release(&s->by_id);
  tl_strmap_init(&s->by_id);
  for (size_t i = 0; i < s->n; i++)
    if (tl_strmap_put(&s->by_id, s->items[i].id, i, NULL, NULL) != TL_OK)
      return tl_err_set(err, TL_ENOMEM, "out of memory");
  return TL_OK;
}

void tl_se_itemset_release(tl_se_itemset *s) {
  for (size_t i = 0; i < s->n; i++) tl_se_item_release(&s->items[i]);
  free(s->items);
  tl_strmap_release(&s->by_id);
  tl_strmap_release(&s->left_out);
  memset(s, 0, sizeof *s);
}

/* ---- scoring ---- */

tl_status tl_se_score_row(tl_se_parser *const parsers[TL_SE__NMODES], const tl_se_itemset *s,
                          const tl_cfg *cfgs, const tl_unit *u, const tl_se_mode *modes, int nmodes,
                          tl_row *row) {
  const tl_se_item *it = &s->items[u->item];
  const tl_cfg *cfg = &cfgs[u->cfg];
  char *built = NULL;
  tl_status st = TL_OK;
  for (int k = 0; k < nmodes && st == TL_OK; k++) {
    tl_se_mode m = modes[k];
    const char *prompt = row->prompt[0];
    if (m == TL_SE_PR3 && !prompt && row->text[0]) {
      if (!built) built = tl_se_build_prompt(it, (tl_se_prompt_kind)cfg->variant, 0);
      if (!built) st = TL_ENOMEM;
      prompt = built;
    }
    if (st == TL_OK) st = tl_se_parse(parsers[m], it, prompt, row->text[0], cfg->model, &row->res[k]);
  }
  free(built);
  return st;
}

/* ---- tables ---- */

#define COL(t, name, type, doc)                                 \
  do {                                                          \
    if (tl_table_add_col((t), (name), (type), (doc)) < 0) goto oom; \
  } while (0)

/* The table borrows the texts of s, cfgs and rows: free (or clear) it before them. into: see
 * tl_bench_vt.items_table. */
tl_table *tl_se_items_table(const tl_se_itemset *s, const tl_cfg *cfgs, const tl_unit *units,
                            const tl_row *rows, size_t nrows, const tl_se_mode *modes, int nmodes,
                            tl_table *into) {
  tl_table *t = into ? into : tl_table_new("/items/spatialeval");
  if (!t) return NULL;
  if (into) goto rows;
  COL(t, "id", TL_COL_STR, "item id <task>.<mode>.<instance>.<qid>");
  COL(t, "task", TL_COL_STR, "spatialmap | mazenav | spatialgrid | spatialreal");
  COL(t, "mode", TL_COL_STR, "tqa | vqa | vtqa (text only, image only, both)");
  COL(t, "qid", TL_COL_I64, "question id within the task");
  COL(t, "image", TL_COL_STR, "the item's image file as resolved (sent with a vqa/vtqa question to a server); "
                              "empty when none");
  COL(t, "model", TL_COL_STR, "model under test");
  COL(t, "seed", TL_COL_I64, "generation seed");
  COL(t, "prompt_variant", TL_COL_STR, "reason | letter");
  COL(t, "oracle_option", TL_COL_STR, "the correct option letter");
  COL(t, "oracle_answer", TL_COL_STR, "the correct option text");
  COL(t, "response", TL_COL_TEXT, "raw model answer (empty when missing)");
  COL(t, "has_response", TL_COL_I64, "1 when an answer was obtained");
  COL(t, "source", TL_COL_STR, "file:line the answer came from");
  char name[64], doc[160];
  for (int k = 0; k < nmodes; k++) {
    const char *mn = tl_se_mode_name(modes[k]);
    snprintf(name, sizeof name, "answer_%s", mn);
    snprintf(doc, sizeof doc, "answer extracted by the %s parser (empty = none)", mn);
    COL(t, name, TL_COL_STR, doc);
    snprintf(name, sizeof name, "status_%s", mn);
    COL(t, name, TL_COL_STR, "parse status: ok, no_answer, ambiguous, conflict, ...");
    snprintf(name, sizeof name, "rule_%s", mn);
    COL(t, name, TL_COL_STR, "the rule that fired");
    snprintf(name, sizeof name, "correct_%s", mn);
    COL(t, name, TL_COL_I64, "1 when scored correct under this parser");
  }
rows:
  for (size_t i = 0; i < nrows; i++) {
    const tl_row *r = &rows[i];
    const tl_se_item *it = &s->items[units[i].item];
    const tl_cfg *c = &cfgs[units[i].cfg];
    size_t row = tl_table_add_row(t);
    if (row == (size_t)-1) goto oom;
    int k = 0;
    tl_table_ref_str(t, row, k++, it->id);
    tl_table_ref_str(t, row, k++, tl_se_task_name(it->task));
    tl_table_ref_str(t, row, k++, tl_se_qmode_name(it->qmode));
    tl_table_set_i64(t, row, k++, it->qid);
    tl_table_ref_str(t, row, k++, it->image ? it->image : "");
    tl_table_ref_str(t, row, k++, c->model);
    tl_table_set_i64(t, row, k++, c->seed);
    /* Texts owned by the items and rows are borrowed (the table lives shorter than both). */
    tl_table_ref_str(t, row, k++, tl_se_prompt_name((tl_se_prompt_kind)c->variant));
    tl_table_ref_str(t, row, k++, it->oracle_option);
    tl_table_ref_str(t, row, k++, it->oracle_answer);
    tl_table_ref_str(t, row, k++, r->text[0]);
    tl_table_set_i64(t, row, k++, r->text[0] != NULL);
    tl_table_ref_str(t, row, k++, r->source[0]);
    for (int m = 0; m < nmodes; m++) {
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

/* Group slots: qid slot 0 = all qids of the task, slot q+1 = qid q. */
#define NQS (TL_SE_MAX_QID + 2)
#define NQM TL_SE__NQMODES
#define GW (2 + TL_PS__COUNT) /* n, correct, per-status counts */

static size_t groups_len(size_t ncfgs, int nmodes) {
  return ncfgs * TL_SE__NTASKS * NQM * NQS * (size_t)nmodes * GW;
}
/* Offset of group (cfg, task, question mode, qid slot) of parser index m. */
static size_t gix(size_t cfg, int task, int qm, int qs, int nmodes, int m) {
  return ((((cfg * TL_SE__NTASKS + (size_t)task) * NQM + (size_t)qm) * NQS + (size_t)qs) * (size_t)nmodes +
          (size_t)m) * GW;
}
static size_t audit_w(int nmodes) { return 1 + (size_t)nmodes + (size_t)nmodes * (size_t)nmodes; }

size_t tl_se_counts_len(size_t ncfgs, int nmodes) {
  return groups_len(ncfgs, nmodes) + (TL_SE__NTASKS + 1) * audit_w(nmodes);
}

void tl_se_counts_add(int64_t *c, const tl_se_itemset *s, size_t ncfgs, const tl_unit *units,
                      const tl_row *rows, size_t nrows, int nmodes) {
  int64_t *audit = c + groups_len(ncfgs, nmodes);
  const size_t aw = audit_w(nmodes);
  for (size_t i = 0; i < nrows; i++) {
    const tl_row *r = &rows[i];
    const tl_se_item *it = &s->items[units[i].item];
    const int qs[2] = {0, 1 + it->qid};
    for (int k = 0; k < 2; k++)
      for (int m = 0; m < nmodes; m++) {
        const tl_parsed *p = &r->res[m];
        int64_t *g = c + gix(units[i].cfg, (int)it->task, (int)it->qmode, qs[k], nmodes, m);
        g[0]++;
        g[1] += p->correct;
        g[2 + p->status]++;
      }
    if (r->res[0].status == TL_PS_ENGINE_ERROR) continue; /* no reply: not in the parser audit */
    int aslots[2] = {(int)it->task, TL_SE__NTASKS};
    for (int k = 0; k < 2; k++) {
      int64_t *a = audit + (size_t)aslots[k] * aw;
      a[0]++;
      for (int x = 0; x < nmodes; x++) {
        int cx = r->res[x].correct;
        a[1 + x] += cx;
        for (int y = 0; y < nmodes; y++)
          if (cx && !r->res[y].correct) a[1 + nmodes + x * nmodes + y]++;
      }
    }
  }
}

size_t tl_se_item_counts_len(size_t ncfgs, size_t nitems, int nmodes) {
  return ncfgs * nitems * (size_t)nmodes;
}

void tl_se_item_counts_add(int64_t *c, size_t nitems, const tl_unit *u, const tl_row *r, int nmodes) {
  int64_t *x = c + ((size_t)u->cfg * nitems + u->item) * (size_t)nmodes;
  for (int m = 0; m < nmodes; m++) x[m] += r->res[m].correct; /* 0 for missing, engine_error, unparsed */
}

void tl_se_status_totals(const int64_t *c, size_t ncfgs, int nmodes, int k,
                         int64_t out[TL_PS__COUNT]) {
  memset(out, 0, TL_PS__COUNT * sizeof *out);
  for (size_t cfg = 0; cfg < ncfgs; cfg++)
    for (int task = 0; task < TL_SE__NTASKS; task++)
      for (int qm = 0; qm < NQM; qm++) {
        const int64_t *g = c + gix(cfg, task, qm, 0, nmodes, k);
        for (int st = 0; st < TL_PS__COUNT; st++) out[st] += g[2 + st];
      }
}

/* The two tables being built, and a scratch array of per-seed accuracies. */
typedef struct {
  tl_table *t, *a;
  double *acc;
} tabs;

/* The rows of one group of the (model, variant) block of cfgs [b0, b1): g holds each cfg's
 * counts (GW values per cfg, cfg b0 first). One per-seed row per cfg with units, one
 * across-seeds row. Every accuracy divides by n: missing, engine_error and unparsed units are
 * in n with correct 0 (the policy of docs/OUTPUT.md). -1 when out of memory. */
static int emit_group(tabs *T, const tl_cfg *cfgs, size_t b0, size_t b1, const int64_t *g, const char *task,
                      const char *qmode, int qid) {
  tl_table *t = T->t, *a = T->a;
  const char *model = cfgs[b0].model, *variant = tl_se_prompt_name((tl_se_prompt_kind)cfgs[b0].variant);
  int k = 0;
  int64_t tn = 0, tc = 0, tmiss = 0, terr = 0, tunp = 0;
  for (size_t ci = b0; ci < b1; ci++) {
    const int64_t *x = g + (ci - b0) * GW;
    if (!x[0]) continue;
    size_t row = tl_table_add_row(t);
    if (row == (size_t)-1) return -1;
    int c = 0;
    if (tl_table_set_str(t, row, c++, model) || tl_table_set_str(t, row, c++, variant) ||
        tl_table_set_str(t, row, c++, task) || tl_table_set_str(t, row, c++, qmode))
      return -1;
    tl_table_set_i64(t, row, c++, qid);
    tl_table_set_i64(t, row, c++, cfgs[ci].seed);
    tl_table_set_i64(t, row, c++, x[0]);
    tl_table_set_i64(t, row, c++, x[1]);
    tl_table_set_f64(t, row, c++, (double)x[1] / (double)x[0]);
    for (int st = 0; st < TL_PS__COUNT; st++) tl_table_set_i64(t, row, c++, x[2 + st]);
    T->acc[k++] = (double)x[1] / (double)x[0];
    tn += x[0];
    tc += x[1];
    tmiss += x[2 + TL_PS_MISSING];
    terr += x[2 + TL_PS_ENGINE_ERROR];
    tunp += x[0] - x[2 + TL_PS_OK] - x[2 + TL_PS_MISSING] - x[2 + TL_PS_ENGINE_ERROR];
  }
  if (!k) return 0;
  double lo = T->acc[0], hi = T->acc[0], ss;
  for (int i = 0; i < k; i++) {
    if (T->acc[i] < lo) lo = T->acc[i];
    if (T->acc[i] > hi) hi = T->acc[i];
  }
  const double mean = tl_mean_ss(T->acc, (size_t)k, &ss);
  const double sd = k > 1 ? sqrt(ss / (k - 1)) : NAN;
  size_t row = tl_table_add_row(a);
  if (row == (size_t)-1) return -1;
  int c = 0;
  if (tl_table_set_str(a, row, c++, model) || tl_table_set_str(a, row, c++, variant) ||
      tl_table_set_str(a, row, c++, task) || tl_table_set_str(a, row, c++, qmode))
    return -1;
  tl_table_set_i64(a, row, c++, qid);
  tl_table_set_i64(a, row, c++, k);
  tl_table_set_i64(a, row, c++, tn);
  tl_table_set_i64(a, row, c++, tc);
  tl_table_set_i64(a, row, c++, tn - tmiss - terr);
  tl_table_set_i64(a, row, c++, tmiss);
  tl_table_set_i64(a, row, c++, tunp);
  tl_table_set_i64(a, row, c++, terr);
  tl_table_set_f64(a, row, c++, mean);
  tl_table_set_f64(a, row, c++, sd);
  tl_table_set_f64(a, row, c++, lo);
  tl_table_set_f64(a, row, c++, hi);
  tl_table_set_f64(a, row, c++, (double)tc / (double)tn);
  tl_table_set_f64(a, row, c++, k > 1 ? sd / sqrt((double)k) : NAN);
  for (int w = 0; w < 4; w++) tl_table_set_f64(a, row, c++, NAN); /* ci_lo, ci_hi, wilson_lo, wilson_hi: tl_se_fill_ci */
  return 0;
}

tl_status tl_se_metric_tables(const int64_t *c, const tl_cfg *cfgs, size_t ncfgs,
                              const tl_se_mode *modes, int nmodes, int mk, tl_table **per_seed,
                              tl_table **across_seeds) {
  *per_seed = *across_seeds = NULL;
  char path[128];
  const char *mn = tl_se_mode_name(modes[mk]);
  tl_table *t = NULL, *a = NULL;
  double *acc = NULL;
  int64_t *g = NULL;
  snprintf(path, sizeof path, "/metrics/spatialeval/%s", mn);
  if (!(t = tl_table_new(path))) goto oom;
  COL(t, "model", TL_COL_STR, "model under test");
  COL(t, "prompt_variant", TL_COL_STR, "reason | letter");
  COL(t, "task", TL_COL_STR, "task; \"all\" = every task and mode (the model's overall row)");
  COL(t, "mode", TL_COL_STR, "tqa | vqa | vtqa; \"all\" in the overall row");
  COL(t, "qid", TL_COL_I64, "question id; -1 = all questions of the task");
  COL(t, "seed", TL_COL_I64, "seed");
  COL(t, "n", TL_COL_I64, "units in the group (missing answers and engine errors included)");
  COL(t, "correct", TL_COL_I64, "units scored correct");
  COL(t, "accuracy", TL_COL_F64, "correct / n: missing, engine_error and unparsed units score 0");
  for (int k = 0; k < TL_PS__COUNT; k++) {
    char name[64];
    snprintf(name, sizeof name, "n_%s", tl_pstatus_name((tl_pstatus)k));
    COL(t, name, TL_COL_I64, "units with this parse status");
  }
  snprintf(path, sizeof path, "/metrics/spatialeval/%s_across_seeds", mn);
  if (!(a = tl_table_new(path))) goto oom;
  COL(a, "model", TL_COL_STR, "model under test");
  COL(a, "prompt_variant", TL_COL_STR, "reason | letter");
  COL(a, "task", TL_COL_STR, "task; \"all\" = every task and mode (the model's overall row)");
  COL(a, "mode", TL_COL_STR, "tqa | vqa | vtqa; \"all\" in the overall row");
  COL(a, "qid", TL_COL_I64, "question id; -1 = all questions of the task");
  COL(a, "n_seeds", TL_COL_I64, "seeds with units in the group");
  COL(a, "n", TL_COL_I64, "units over all seeds (missing answers and engine errors included)");
  COL(a, "correct", TL_COL_I64, "correct units over all seeds");
  COL(a, "answered", TL_COL_I64, "units with a reply: n - missing - engine_error");
  COL(a, "missing", TL_COL_I64, "units with no answer line (status missing)");
  COL(a, "unparsed", TL_COL_I64, "answered units this parser could not read (a status other than ok)");
  COL(a, "engine_error", TL_COL_I64, "units the engine gave up on (an unreadable image, retries spent)");
  COL(a, "mean", TL_COL_F64, "mean of per-seed accuracies (correct / n; summed in seed order)");
  COL(a, "std", TL_COL_F64, "sample std (ddof=1) of per-seed accuracies; NaN for one seed");
  COL(a, "min", TL_COL_F64, "lowest per-seed accuracy");
  COL(a, "max", TL_COL_F64, "highest per-seed accuracy");
  COL(a, "pooled_accuracy", TL_COL_F64, "correct / n over all seeds");
  COL(a, "se", TL_COL_F64, "standard error of the mean over seeds: std / sqrt(n_seeds); NaN for one seed");
  COL(a, "ci_lo", TL_COL_F64, "95% bootstrap CI of the accuracy over the group's items, each item's seeds one "
                              "cluster (qid -1 rows; NaN for a question row or fewer than 2 items)");
  COL(a, "ci_hi", TL_COL_F64, "upper bound of that CI");
  COL(a, "wilson_lo", TL_COL_F64, "95% Wilson score interval of the accuracy with n = the group's items (each item's "
                                  "seeds averaged): not zero-width at 0 or 1, unlike any bootstrap (qid -1 rows)");
  COL(a, "wilson_hi", TL_COL_F64, "upper bound of that interval");
  acc = malloc((ncfgs ? ncfgs : 1) * sizeof *acc);
  g = malloc((ncfgs ? ncfgs : 1) * GW * sizeof *g);
  if (!acc || !g) goto oom;
  tabs T = {t, a, acc};
  /* cfgs are sorted (model, variant, seed): a (model, variant) run is a block of seeds. */
  for (size_t b0 = 0; b0 < ncfgs;) {
    size_t b1 = b0 + 1;
    while (b1 < ncfgs && strcmp(cfgs[b1].model, cfgs[b0].model) == 0 &&
           cfgs[b1].variant == cfgs[b0].variant)
      b1++;
    for (int task = 0; task < TL_SE__NTASKS; task++)
      for (int qm = 0; qm < NQM; qm++)
        for (int q = 0; q < NQS; q++) {
          for (size_t ci = b0; ci < b1; ci++)
            memcpy(g + (ci - b0) * GW, c + gix(ci, task, qm, q, nmodes, mk), GW * sizeof *g);
          if (emit_group(&T, cfgs, b0, b1, g, tl_se_task_name((tl_se_task)task), tl_se_qmode_name((tl_se_qmode)qm),
                         q - 1))
            goto oom;
        }
    /* the model's overall row: every task and mode */
    memset(g, 0, (b1 - b0) * GW * sizeof *g);
    for (size_t ci = b0; ci < b1; ci++)
      for (int task = 0; task < TL_SE__NTASKS; task++)
        for (int qm = 0; qm < NQM; qm++)
          for (int w = 0; w < GW; w++) g[(ci - b0) * GW + w] += c[gix(ci, task, qm, 0, nmodes, mk) + w];
    if (emit_group(&T, cfgs, b0, b1, g, "all", "all", -1)) goto oom;
    b0 = b1;
  }
  free(acc);
  free(g);
  *per_seed = t;
  *across_seeds = a;
  return TL_OK;
oom:
  free(acc);
  free(g);
  tl_table_free(t);
  tl_table_free(a);
  return TL_ENOMEM;
}

#define CI_LEVEL 0.95
tl_status tl_se_fill_ci(tl_table *a, const tl_se_itemset *s, const int64_t *ic, const tl_cfg *cfgs, size_t ncfgs,
                        int nmodes, int k, tl_cluster_draws *d) {
  const int cm = tl_table_col(a, "model"), cv = tl_table_col(a, "prompt_variant"), ct = tl_table_col(a, "task"),
            cq = tl_table_col(a, "mode"), cqid = tl_table_col(a, "qid"), clo = tl_table_col(a, "ci_lo"),
            chi = tl_table_col(a, "ci_hi"), cwl = tl_table_col(a, "wilson_lo"), cwh = tl_table_col(a, "wilson_hi");
  if (cm < 0 || cv < 0 || ct < 0 || cq < 0 || cqid < 0 || clo < 0 || chi < 0 || cwl < 0 || cwh < 0)
    return TL_EINTERNAL;
  const size_t ni = s->n;
  int64_t *num = malloc((ni ? ni : 1) * 2 * sizeof *num);
  tl_status st = num ? TL_OK : TL_ENOMEM;
  int64_t *den = num + (ni ? ni : 1);
  size_t b0 = 0, b1 = 0; /* the (model, variant) block of cfgs of the row; rows come in block order */
  for (size_t row = 0; row < a->nrows && !st; row++) {
    if (a->cols[cqid].v.i[row] != -1) continue;
    const char *model = a->cols[cm].v.s[row], *variant = a->cols[cv].v.s[row];
    const char *task = a->cols[ct].v.s[row], *qmode = a->cols[cq].v.s[row];
    if (b1 <= b0 || strcmp(cfgs[b0].model, model) != 0 ||
        strcmp(tl_se_prompt_name((tl_se_prompt_kind)cfgs[b0].variant), variant) != 0) {
      for (b0 = 0; b0 < ncfgs; b0++)
        if (strcmp(cfgs[b0].model, model) == 0 &&
            strcmp(tl_se_prompt_name((tl_se_prompt_kind)cfgs[b0].variant), variant) == 0)
          break;
      if (b0 == ncfgs) {
        st = TL_EINTERNAL;
        break;
      }
      b1 = b0 + 1;
      while (b1 < ncfgs && cfgs[b1].variant == cfgs[b0].variant && strcmp(cfgs[b1].model, model) == 0) b1++;
    }
    const int all = strcmp(task, "all") == 0;
    uint32_t n = 0;
    for (size_t i = 0; i < ni; i++) {
      const tl_se_item *it = &s->items[i];
      if (!all && (strcmp(tl_se_task_name(it->task), task) != 0 || strcmp(tl_se_qmode_name(it->qmode), qmode) != 0))
        continue;
      int64_t sum = 0;
      for (size_t ci = b0; ci < b1; ci++) sum += ic[(ci * ni + i) * (size_t)nmodes + (size_t)k];
      num[n] = sum;
      den[n] = (int64_t)(b1 - b0); /* every cfg of the block has a unit of every item */
      n++;
    }
    double lo, hi, wl, wh;
    if ((st = tl_cluster_ci_drawn(d, num, den, n, CI_LEVEL, &lo, &hi))) break;
    tl_table_set_f64(a, row, clo, lo);
    tl_table_set_f64(a, row, chi, hi);
    int64_t sn = 0, sd = 0; /* integers: exact, any order */
    for (uint32_t i = 0; i < n; i++) sn += num[i], sd += den[i];
    tl_wilson_p(sd ? (double)sn / (double)sd : NAN, (double)n, CI_LEVEL, &wl, &wh);
    tl_table_set_f64(a, row, cwl, wl);
    tl_table_set_f64(a, row, cwh, wh);
  }
  free(num);
  return st;
}

tl_table *tl_se_audit_table(const int64_t *c, size_t ncfgs, const tl_se_mode *modes, int nmodes) {
  /* slot TL_SE__NTASKS = all tasks; only[a][b]: a right, b wrong */
  const int64_t *audit = c + groups_len(ncfgs, nmodes);
  const size_t aw = audit_w(nmodes);
#define A_N(sl) (audit[(size_t)(sl) * aw])
#define A_COR(sl, x) (audit[(size_t)(sl) * aw + 1 + (size_t)(x)])
#define A_ONLY(sl, x, y) (audit[(size_t)(sl) * aw + 1 + (size_t)nmodes + (size_t)(x) * (size_t)nmodes + (size_t)(y)])
  tl_table *t = tl_table_new("/audit/spatialeval");
  if (!t) return NULL;
  char name[96];
  COL(t, "task", TL_COL_STR, "task, or \"all\"");
  COL(t, "n", TL_COL_I64, "units");
  for (int x = 0; x < nmodes; x++) {
    snprintf(name, sizeof name, "accuracy_%s", tl_se_mode_name(modes[x]));
    COL(t, name, TL_COL_F64, "accuracy under this parser");
  }
  for (int x = 0; x < nmodes; x++)
    for (int y = x + 1; y < nmodes; y++) {
      const char *a = tl_se_mode_name(modes[x]), *b = tl_se_mode_name(modes[y]);
      snprintf(name, sizeof name, "disagree_%s_%s", a, b);
      COL(t, name, TL_COL_I64, "units the two parsers score differently");
      snprintf(name, sizeof name, "only_%s_%s", a, b);
      COL(t, name, TL_COL_I64, "units correct under the first parser only");
      snprintf(name, sizeof name, "only_%s_%s", b, a);
      COL(t, name, TL_COL_I64, "units correct under the second parser only");
    }
  for (int sl = 0; sl <= TL_SE__NTASKS; sl++) {
    if (!A_N(sl)) continue;
    size_t row = tl_table_add_row(t);
    if (row == (size_t)-1) goto oom;
    int k = 0;
    if (tl_table_set_str(t, row, k++, sl == TL_SE__NTASKS ? "all" : tl_se_task_name((tl_se_task)sl)))
      goto oom;
    tl_table_set_i64(t, row, k++, A_N(sl));
    for (int x = 0; x < nmodes; x++) tl_table_set_f64(t, row, k++, (double)A_COR(sl, x) / (double)A_N(sl));
    for (int x = 0; x < nmodes; x++)
      for (int y = x + 1; y < nmodes; y++) {
        tl_table_set_i64(t, row, k++, A_ONLY(sl, x, y) + A_ONLY(sl, y, x));
        tl_table_set_i64(t, row, k++, A_ONLY(sl, x, y));
        tl_table_set_i64(t, row, k++, A_ONLY(sl, y, x));
      }
  }
  return t;
oom:
  tl_table_free(t);
  return NULL;
}
