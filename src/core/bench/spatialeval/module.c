/* module.c - SpatialEval as a benchmark module (tally/bench.h): one stage (the model's answer),
 * parsed by the job's parsers (strict, pr3, legacy; the first is the primary), counted into one
 * additive block of integers (se_eval.h), from which rank 0 builds the metric and audit tables.
 *
 * Job keys (docs/JOBS.md): "items" (a path or a list), "parsers" (default ["strict"]),
 * "prompt_variant" ("reason", the default, or "letter"). */
#include <stdlib.h>
#include <string.h>

#include "se_eval.h"
#include "spatialeval.h"
#include "tally/bench.h"

static const char *const VARIANTS[] = {"reason", "letter", NULL}; /* = tl_se_prompt_kind order */
static const char *const KEYS[] = {"items", "parsers", "prompt_variant", NULL};

struct tl_bench {
  char **items;                /* resolved paths */
  int n_items;
  tl_se_mode modes[TL_SE__NMODES]; /* job order; modes[0] is the primary */
  int n_modes;
  int variant;                 /* default prompt variant */
  tl_se_itemset set;           /* after load */
  tl_se_parser *parsers[TL_SE__NMODES]; /* by mode; NULL = not run */
};

static void se_free(tl_bench *b) {
  if (!b) return;
  for (int i = 0; i < b->n_items; i++) free(b->items[i]);
  free(b->items);
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
  tl_status st = tl_se_itemset_load(&b->set, b->items, b->n_items, max_line, log, err);
  if (st) return st;
  for (int k = 0; k < b->n_modes; k++) {
    b->parsers[b->modes[k]] = tl_se_parser_new(b->modes[k], err);
    if (!b->parsers[b->modes[k]]) return TL_EINTERNAL;
  }
  return TL_OK;
}

static size_t se_n_items(const tl_bench *b) { return b->set.n; }
static const char *se_item_id(const tl_bench *b, size_t i) { return b->set.items[i].id; }
static int se_item_find(const tl_bench *b, const char *id, size_t *i) {
  return tl_strmap_get(&b->set.by_id, id, i) ? 1 : 0;
}
static uint32_t se_n_subs(const tl_bench *b, size_t i) { return 1; }
static int se_n_modes(const tl_bench *b) { return b->n_modes; }
static const char *se_mode_name(const tl_bench *b, int k) { return tl_se_mode_name(b->modes[k]); }

/* Stage 0: the prompt of the cfg's variant as one user message (the VLM form, as the model
 * under test is sent it; replay matches by key and does not read it). */
static tl_status se_request(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, int s,
                            const tl_row *r, tl_buf *arena, tl_bench_req *out, tl_err *err) {
  char *prompt = tl_se_build_prompt(&b->set.items[u->item], (tl_se_prompt_kind)cfgs[u->cfg].variant, 0);
  if (!prompt || tl_buf_append(arena, prompt, strlen(prompt) + 1)) {
    free(prompt);
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  free(prompt);
  out->role = TL_ROLE_MODEL;
  out->msgs[0].role = "user";
  out->msgs[0].content = arena->data;
  out->nmsg = 1;
  return TL_OK;
}

static tl_status se_score(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, tl_row *r, tl_err *err) {
  tl_status st = tl_se_score_row(b->parsers, &b->set, cfgs, u, b->modes, b->n_modes, r);
  if (st) tl_err_set(err, st, "scoring item '%s' failed: %s", b->set.items[u->item].id, tl_strerror(st));
  return st;
}

static int se_acc_layout(const tl_bench *b, size_t ncfgs, tl_acc_block *out) {
  out[0].len = tl_se_counts_len(ncfgs, b->n_modes);
  out[0].op = TL_ACC_SUM;
  out[0].init = 0;
  return 1;
}

static void se_acc_add(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, const tl_unit *u, const tl_row *r,
                       int64_t *const *acc) {
  (void)cfgs;
  tl_se_counts_add(acc[0], &b->set, ncfgs, u, r, 1, b->n_modes);
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
  tl_status st = TL_OK;
  for (int k = 0; k < b->n_modes && !st; k++)
    st = tl_se_metric_tables(acc[0], cfgs, ncfgs, b->modes, b->n_modes, k, &t[2 * k], &t[2 * k + 1]);
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

static void se_summary(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, uint64_t units,
                       tl_table *const *tables, int n, int64_t *const *acc, FILE *out) {
  const int nm = b->n_modes;
  fprintf(out, "spatialeval: %zu items x %zu model/variant/seed configs = %llu units; parsers:", b->set.n, ncfgs,
          (unsigned long long)units);
  for (int k = 0; k < nm; k++) fprintf(out, " %s%s", tl_se_mode_name(b->modes[k]), k == 0 ? " (primary)" : "");
  fprintf(out, "\n\naccuracy, mean +/- std over seeds (all questions of each task)\n");
  fprintf(out, "%-22s %-7s %-12s %5s %6s", "model", "variant", "task", "seeds", "n");
  for (int k = 0; k < nm; k++) fprintf(out, "  %-15s", tl_se_mode_name(b->modes[k]));
  fprintf(out, "\n");
  const tl_table *a0 = tables[1];
  int cq = tl_table_col(a0, "qid");
  for (size_t row = 0; row < a0->nrows; row++) {
    if (a0->cols[cq].v.i[row] != -1) continue;
    fprintf(out, "%-22s %-7s %-12s %5lld %6lld", a0->cols[0].v.s[row], a0->cols[1].v.s[row], a0->cols[2].v.s[row],
            (long long)a0->cols[tl_table_col(a0, "n_seeds")].v.i[row], (long long)a0->cols[tl_table_col(a0, "n")].v.i[row]);
    for (int k = 0; k < nm; k++) {
      const tl_table *a = tables[2 * k + 1]; /* same groups, same order in every mode */
      fprintf(out, "  %.3f +/- %.3f  ", a->cols[tl_table_col(a, "mean")].v.f[row], a->cols[tl_table_col(a, "std")].v.f[row]);
    }
    fprintf(out, "\n");
  }
  const tl_table *audit = tables[2 * nm];
  if (nm > 1) {
    fprintf(out, "\nparser audit (all models, variants and seeds): accuracy per parser; units each pair scores differently\n");
    fprintf(out, "%-12s %6s", "task", "n");
    for (int k = 0; k < nm; k++) fprintf(out, " %8s", tl_se_mode_name(b->modes[k]));
    for (int x = 0; x < nm; x++)
      for (int y = x + 1; y < nm; y++) {
        char h[64];
        snprintf(h, sizeof h, "%s|%s", tl_se_mode_name(b->modes[x]), tl_se_mode_name(b->modes[y]));
        fprintf(out, " %14s", h);
      }
    fprintf(out, "\n");
    for (size_t row = 0; row < audit->nrows; row++) {
      fprintf(out, "%-12s %6lld", audit->cols[0].v.s[row], (long long)audit->cols[1].v.i[row]);
      int c = 2;
      for (int k = 0; k < nm; k++) fprintf(out, " %8.3f", audit->cols[c++].v.f[row]);
      for (int x = 0; x < nm; x++)
        for (int y = x + 1; y < nm; y++) {
          char h[64];
          snprintf(h, sizeof h, "%lld (%lld/%lld)", (long long)audit->cols[c].v.i[row],
                   (long long)audit->cols[c + 1].v.i[row], (long long)audit->cols[c + 2].v.i[row]);
          fprintf(out, " %14s", h);
          c += 3;
        }
      fprintf(out, "\n");
    }
    fprintf(out, "(d (a/b): d units disagree; a correct only under the first parser, b only under the second)\n");
  }
  int64_t st[TL_PS__COUNT];
  tl_se_status_totals(acc[0], ncfgs, nm, 0, st);
  fprintf(out, "\n%s parse statuses:", tl_se_mode_name(b->modes[0]));
  for (int k = 0; k < TL_PS__COUNT; k++)
    if (st[k]) fprintf(out, " %s=%lld", tl_pstatus_name((tl_pstatus)k), (long long)st[k]);
  fprintf(out, "\n");
}

const tl_bench_vt tl_bench_spatialeval = {
    .name = "spatialeval",
    .about = "SpatialEval (Spatial-Map, Maze-Nav, Spatial-Grid, Spatial-Real): option answers, three parsers",
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
};
