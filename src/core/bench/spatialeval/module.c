/* module.c - SpatialEval as a benchmark module (tally/bench.h): one stage (the model's answer,
 * with the item's image for the vqa and vtqa modes), parsed by the job's parsers (strict, pr3,
 * legacy; the first is the primary), counted into two additive blocks of integers (se_eval.h:
 * the group counts, and each unit's correct flags for the CIs), from which rank 0 builds the
 * metric and audit tables and the summary (task x mode).
 *
 * Job keys (docs/JOBS.md): "items" (a path or a list), "parsers" (default ["strict"]),
 * "prompt_variant" ("reason", the default, or "letter"), "modes" (the question modes to run:
 * any of "tqa", "vqa", "vtqa"; default all), "images" (the folder relative item images resolve
 * in; default each items file's folder), "ci_resamples" (1000) and "ci_seed" (0). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "se_eval.h"
#include "spatialeval.h"
#include "tally/bench.h"
#include "tally/report.h"

static const char *const VARIANTS[] = {"reason", "letter", NULL}; /* = tl_se_prompt_kind order */
static const char *const KEYS[] = {"items", "parsers", "prompt_variant", "modes", "images", "ci_resamples", "ci_seed",
                                   NULL};

struct tl_bench {
  char **items;                /* resolved paths */
  int n_items;
  tl_se_mode modes[TL_SE__NMODES]; /* parsers, job order; modes[0] is the primary */
  int n_modes;
  int variant;                 /* default prompt variant */
  unsigned qmask;              /* question modes run (bit tl_se_qmode); 0 = all */
  char *images;                /* "images" resolved, or NULL */
  int need_images;             /* the model engine is a server: vision items must have an image */
  int ci_B, ci_seed;           /* the CIs' resamples and Philox seed */
  tl_se_itemset set;           /* after load */
  tl_se_parser *parsers[TL_SE__NMODES]; /* by mode; NULL = not run */
};

static void se_free(tl_bench *b) {
  if (!b) return;
  for (int i = 0; i < b->n_items; i++) free(b->items[i]);
  free(b->items);
  free(b->images);
  for (int m = 0; m < TL_SE__NMODES; m++) tl_se_parser_free(b->parsers[m]);
  tl_se_itemset_release(&b->set);
  free(b);
}

/* Reports a problem and counts it. */
#define PROBLEM(...)                  \
  do {                                \
    tl_job_problem(c, __VA_ARGS__);   \
    bad++;                            \
  } while (0)

static tl_bench *se_create(tl_job_ctx *c, const cJSON *e, const char *where) {
  tl_bench *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  int bad = 0;
  b->variant = TL_SE_PROMPT_REASON;
  char w2[160];
  snprintf(w2, sizeof w2, "%s.items", where);
  const cJSON *items = cJSON_GetObjectItemCaseSensitive(e, "items");
  if (!items) PROBLEM(w2, "missing (a path or a list of paths)");
  else bad += tl_job_paths(c, items, w2, "an items file", &b->items, &b->n_items);
  const cJSON *pv = cJSON_GetObjectItemCaseSensitive(e, "prompt_variant");
  if (pv) {
    snprintf(w2, sizeof w2, "%s.prompt_variant", where);
    int v = cJSON_IsString(pv) ? tl_se_prompt_from_name(pv->valuestring) : -1;
    if (v < 0) PROBLEM(w2, "prompt_variant must be \"reason\" or \"letter\"");
    else b->variant = v;
  }
  const cJSON *qs = cJSON_GetObjectItemCaseSensitive(e, "modes");
  if (qs) {
    snprintf(w2, sizeof w2, "%s.modes", where);
    if (!cJSON_IsArray(qs) || cJSON_GetArraySize(qs) == 0) {
      PROBLEM(w2, "must be a non-empty list of \"tqa\", \"vqa\", \"vtqa\"");
    } else {
      const cJSON *x;
      cJSON_ArrayForEach(x, qs) {
        int q = cJSON_IsString(x) ? tl_se_qmode_from_name(x->valuestring) : -1;
        if (q < 0)
          PROBLEM(w2, "unknown mode %s%s%s (want tqa, vqa or vtqa)", cJSON_IsString(x) ? "'" : "",
                  cJSON_IsString(x) ? x->valuestring : "(not a string)", cJSON_IsString(x) ? "'" : "");
        else if (b->qmask & (1u << q))
          PROBLEM(w2, "mode '%s' listed twice", x->valuestring);
        else
          b->qmask |= 1u << q;
      }
    }
  }
  const cJSON *im = cJSON_GetObjectItemCaseSensitive(e, "images");
  if (im) {
    snprintf(w2, sizeof w2, "%s.images", where);
    if (!cJSON_IsString(im) || !im->valuestring[0]) PROBLEM(w2, "must be a folder (a path)");
    else if (!(b->images = tl_job_resolve(c, im->valuestring))) PROBLEM(w2, "out of memory");
  }
  b->ci_B = 1000;
  b->ci_seed = 0;
  bad += tl_job_key_int(c, e, "ci_resamples", where, 2, 1000000, "an integer from 2 to 1000000", &b->ci_B);
  bad += tl_job_key_int(c, e, "ci_seed", where, 0, 2147483647, "an integer >= 0", &b->ci_seed);
  b->need_images = strcmp(tl_job_engine_type(c, TL_ROLE_MODEL), "replay") != 0;
  const cJSON *ps = cJSON_GetObjectItemCaseSensitive(e, "parsers");
  snprintf(w2, sizeof w2, "%s.parsers", where);
  if (!ps) {
    b->modes[0] = TL_SE_STRICT;
    b->n_modes = 1;
  } else if (!cJSON_IsArray(ps) || cJSON_GetArraySize(ps) == 0) {
    PROBLEM(w2, "must be a non-empty list of \"strict\", \"pr3\", \"legacy\"");
  } else {
    const cJSON *x;
    cJSON_ArrayForEach(x, ps) {
      int m = cJSON_IsString(x) ? tl_se_mode_from_name(x->valuestring) : -1;
      if (m < 0) {
        PROBLEM(w2, "unknown parser %s%s%s (want strict, pr3 or legacy)", cJSON_IsString(x) ? "'" : "",
                cJSON_IsString(x) ? x->valuestring : "(not a string)", cJSON_IsString(x) ? "'" : "");
        continue;
      }
      int dup = 0;
      for (int k = 0; k < b->n_modes; k++) dup |= b->modes[k] == (tl_se_mode)m;
      if (dup) {
        PROBLEM(w2, "parser '%s' listed twice", x->valuestring);
        continue;
      }
      b->modes[b->n_modes++] = (tl_se_mode)m;
    }
  }
  if (bad) {
    se_free(b);
    return NULL;
  }
  return b;
}

static int se_default_variant(const tl_bench *b) { return b->variant; }

static tl_status se_load(tl_bench *b, size_t max_line, tl_inlog *log, tl_err *err) {
  struct stat sb;
  if (b->images && stat(b->images, &sb) != 0)
    return tl_err_set(err, TL_EJOB, "spatialeval: images folder '%s': %s", b->images, strerror(errno));
  if (b->images && !S_ISDIR(sb.st_mode))
    return tl_err_set(err, TL_EJOB, "spatialeval: images folder '%s' is not a folder", b->images);
  const tl_se_load_opts o = {b->images, b->need_images, b->qmask};
  tl_status st = tl_se_itemset_load_opts(&b->set, b->items, b->n_items, &o, max_line, log, err);
  if (st) return st;
  /* a mode the job names that no item has is the user's mistake, never an empty table */
  for (int q = 0; q < TL_SE__NQMODES; q++)
    if ((b->qmask & (1u << q)) && b->set.per_qmode[q] == 0)
      return tl_err_set(err, TL_EJOB, "spatialeval: \"modes\" names '%s', but the items hold no usable %s item%s",
                        tl_se_qmode_name((tl_se_qmode)q), tl_se_qmode_name((tl_se_qmode)q),
                        q != TL_SE_TQA && b->need_images ? " (one without an image is left out: see above)" : "");
  for (int k = 0; k < b->n_modes; k++) {
    b->parsers[b->modes[k]] = tl_se_parser_new(b->modes[k], err);
    if (!b->parsers[b->modes[k]]) return TL_EINTERNAL;
  }
  return TL_OK;
}

static size_t se_n_items(const tl_bench *b) { return b->set.n; }
static const char *se_item_id(const tl_bench *b, size_t i) { return b->set.items[i].id; }
/* An item of a mode the job leaves out is found as index n (bench.h): its answers are neither
 * units nor "unknown item" lines; n_subs(n) = 1 lets their lines pass the driver's turn check. */
static int se_item_find(const tl_bench *b, const char *id, size_t *i) {
  if (tl_strmap_get(&b->set.by_id, id, i)) return 1;
  if (!tl_strmap_get(&b->set.left_out, id, NULL)) return 0;
  if (i) *i = b->set.n;
  return 1;
}
static uint32_t se_n_subs(const tl_bench *b, size_t i) { return i <= b->set.n ? 1 : 0; }
static int se_n_modes(const tl_bench *b) { return b->n_modes; }
static const char *se_mode_name(const tl_bench *b, int k) { return tl_se_mode_name(b->modes[k]); }

/* Stage 0: the prompt of the cfg's variant as one user message (the VLM form, as the model
 * under test is sent it; replay matches by key and does not read it), with the item's image for
 * the vqa and vtqa modes (the engine reads and encodes it; an image it cannot read is a
 * permanent failure of the unit: engine_error, with the reason in the item table). */
static tl_status se_request(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, int s,
                            const tl_row *r, tl_buf *arena, tl_bench_req *out, tl_err *err) {
  (void)s;
  (void)r;
  const tl_se_item *it = &b->set.items[u->item];
  char *prompt = tl_se_build_prompt(it, (tl_se_prompt_kind)cfgs[u->cfg].variant, 0);
  if (!prompt || tl_buf_append(arena, prompt, strlen(prompt) + 1)) {
    free(prompt);
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  free(prompt);
  out->role = TL_ROLE_MODEL;
  out->msgs[0].role = "user";
  out->msgs[0].content = arena->data;
  out->nmsg = 1;
  if (it->qmode != TL_SE_TQA && it->image) { /* the loader kept no vision item without one for a server */
    out->images[0] = it->image;
    out->nimages = 1;
  }
  return TL_OK;
}

static tl_status se_score(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, tl_row *r, tl_err *err) {
  tl_status st = tl_se_score_row(b->parsers, &b->set, cfgs, u, b->modes, b->n_modes, r);
  if (st) tl_err_set(err, st, "scoring item '%s' failed: %s", b->set.items[u->item].id, tl_strerror(st));
  return st;
}

/* Block 0: the group counts; block 1: each unit's correct flag per parser (the CIs' clusters). */
static int se_acc_layout(const tl_bench *b, size_t ncfgs, tl_acc_block *out) {
  out[0].len = tl_se_counts_len(ncfgs, b->n_modes);
  out[0].op = TL_ACC_SUM;
  out[0].init = 0;
  out[1].len = tl_se_item_counts_len(ncfgs, b->set.n, b->n_modes);
  out[1].op = TL_ACC_SUM;
  out[1].init = 0;
  return 2;
}

static void se_acc_add(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, const tl_unit *u, const tl_row *r,
                       int64_t *const *acc) {
  (void)cfgs;
  tl_se_counts_add(acc[0], &b->set, ncfgs, u, r, 1, b->n_modes);
  tl_se_item_counts_add(acc[1], b->set.n, u, r, b->n_modes);
}

static tl_table *se_items_table(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *units,
                                const tl_row *rows, size_t n, tl_table *into) {
  return tl_se_items_table(&b->set, cfgs, units, rows, n, b->modes, b->n_modes, into);
}

/* Tables, in this order: per mode k, <mode> and <mode>_across_seeds; then the audit. */
static tl_status se_tables(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc,
                           tl_table ***out, int *n) {
  int nt = 2 * b->n_modes + 1;
  tl_table **t = calloc((size_t)nt, sizeof *t);
  if (!t) return TL_ENOMEM;
  tl_cluster_draws *d = tl_cluster_draws_new((uint32_t)b->ci_B, (uint64_t)b->ci_seed); /* shared by the parsers */
  tl_status st = d ? TL_OK : TL_ENOMEM;
  for (int k = 0; k < b->n_modes && !st; k++) {
    st = tl_se_metric_tables(acc[0], cfgs, ncfgs, b->modes, b->n_modes, k, &t[2 * k], &t[2 * k + 1]);
    if (!st) st = tl_se_fill_ci(t[2 * k + 1], &b->set, acc[1], cfgs, ncfgs, b->n_modes, k, d);
  }
  tl_cluster_draws_free(d);
  if (!st && !(t[nt - 1] = tl_se_audit_table(acc[0], ncfgs, b->modes, b->n_modes))) st = TL_ENOMEM;
  if (st) {
    for (int i = 0; i < nt; i++) tl_table_free(t[i]);
    free(t);
    return st;
  }
  *out = t;
  *n = nt;
  return TL_OK;
}

tl_status tl_se_report(tl_table *const *tables, int n, struct tl_doc *doc); /* se_report.c */

/* The summary: the run's counts, then the tables of the module's report (tl_se_report: per
 * model x variant x task x mode and overall the seeds, counts and every parser's mean [95% CI]
 * and std; the primary parser's task x mode matrix; the parser audit) rendered as text by the
 * report's renderer (columns as wide as their contents: nothing is cut), then the parse
 * statuses. */
static void se_summary(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, uint64_t units,
                       tl_table *const *tables, int n, int64_t *const *acc, FILE *out) {
  (void)cfgs;
  (void)n;
  const int nm = b->n_modes;
  fprintf(out, "spatialeval: %zu items (", b->set.n);
  for (int q = 0, first = 1; q < TL_SE__NQMODES; q++)
    if (b->set.per_qmode[q]) {
      fprintf(out, "%s%s %zu", first ? "" : ", ", tl_se_qmode_name((tl_se_qmode)q), b->set.per_qmode[q]);
      first = 0;
    }
  fprintf(out, ") x %zu model/variant/seed configs = %llu units; parsers:", ncfgs, (unsigned long long)units);
  for (int k = 0; k < nm; k++) fprintf(out, " %s%s", tl_se_mode_name(b->modes[k]), k == 0 ? " (primary)" : "");
  if (b->qmask) {
    fprintf(out, "; modes run:");
    for (int q = 0; q < TL_SE__NQMODES; q++)
      if (b->qmask & (1u << q)) fprintf(out, " %s", tl_se_qmode_name((tl_se_qmode)q));
  }
  fprintf(out, "\n");
  /* the tables of the report (se_report.c), rendered as text: the summary and `tally report`
   * are one code path */
  struct tl_doc *doc = tl_doc_new("");
  tl_doc_summary_print(doc, doc ? tl_se_report(tables, n, doc) : TL_ENOMEM, out);
  int64_t st[TL_PS__COUNT];
  tl_se_status_totals(acc[0], ncfgs, nm, 0, st);
  fprintf(out, "\n%s parse statuses:", tl_se_mode_name(b->modes[0]));
  for (int k = 0; k < TL_PS__COUNT; k++)
    if (st[k]) fprintf(out, " %s=%lld", tl_pstatus_name((tl_pstatus)k), (long long)st[k]);
  fprintf(out, "\n");
}

const tl_bench_vt tl_bench_spatialeval = {
    .name = "spatialeval",
    .nstages = 1,
    .variants = VARIANTS,
    .keys = KEYS,
    .create = se_create,
    .free = se_free,
    .default_variant = se_default_variant,
    .load = se_load,
    .n_items = se_n_items,
    .item_id = se_item_id,
    .item_find = se_item_find,
    .n_subs = se_n_subs,
    .n_modes = se_n_modes,
    .mode_name = se_mode_name,
    .request = se_request,
    .score = se_score,
    .acc_layout = se_acc_layout,
    .acc_add = se_acc_add,
    .items_table = se_items_table,
    .tables = se_tables,
    .summary = se_summary,
    .max_modes = TL_SE__NMODES,
    .max_acc = 2,
    .formats = tl_se_formats,
    .parsers = &tl_se_parser_set,
    .compare = &tl_se_compare,
    .report = tl_se_report,
};
