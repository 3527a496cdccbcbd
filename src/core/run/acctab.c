/* acctab.c - the accuracy tables shared by the modules whose units score 0/1 under each mode
 * (tally/acctab.h: the accumulator layout, the contract and the ownership). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tally/acctab.h"
#include "tally/boot.h"

#define GW TL_ACCTAB_GW
#define AW TL_ACCTAB_AW

int tl_acctab_layout(const tl_acctab *at, size_t ncfgs, tl_acc_block *out) {
  const size_t T = (size_t)at->ntasks + 1, M = (size_t)at->n_modes;
  out[0] = (tl_acc_block){ncfgs * T * M * GW, TL_ACC_SUM, 0};
  out[1] = (tl_acc_block){ncfgs * at->n_items * M, TL_ACC_SUM, 0};
  out[2] = (tl_acc_block){T * M * AW, TL_ACC_SUM, 0};
  return TL_ACCTAB_NACC;
}

void tl_acctab_add(const tl_acctab *at, const tl_unit *u, const tl_row *r, int64_t *const *acc) {
  const size_t T = (size_t)at->ntasks + 1, M = (size_t)at->n_modes;
  const size_t t = (size_t)at->item_task(at->ctx, u->item);
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
    acc[1][((size_t)u->cfg * at->n_items + u->item) * M + k] += p->correct;
  }
}

#define COL(t, name, type, doc)                                     \
  do {                                                              \
    if (tl_table_add_col((t), (name), (type), (doc)) < 0) goto oom; \
  } while (0)

int tl_acctab_item_cols(const tl_acctab *at, tl_table *t) {
  char name[64], doc[160];
  for (int k = 0; k < at->n_modes; k++) {
    const char *mn = at->modes[k];
    snprintf(name, sizeof name, "answer_%s", mn);
    snprintf(doc, sizeof doc, "%s%s%s", at->answer_doc[0], mn, at->answer_doc[1]);
    COL(t, name, TL_COL_STR, doc);
    snprintf(name, sizeof name, "status_%s", mn);
    COL(t, name, TL_COL_STR, "parse status: ok, no_answer, ambiguous, ...");
    snprintf(name, sizeof name, "rule_%s", mn);
    COL(t, name, TL_COL_STR, "the rule that fired");
    snprintf(name, sizeof name, "correct_%s", mn);
    COL(t, name, TL_COL_I64, "1 when scored correct under this mode");
  }
  return 0;
oom:
  return -1;
}

int tl_acctab_item_cells(const tl_acctab *at, tl_table *t, size_t row, int col, const tl_row *r) {
  for (int m = 0; m < at->n_modes; m++) {
    const tl_parsed *p = &r->res[m];
    tl_table_ref_str(t, row, col++, p->answer);
    tl_table_ref_str(t, row, col++, tl_pstatus_name(p->status));
    tl_table_ref_str(t, row, col++, p->rule);
    tl_table_set_i64(t, row, col++, p->correct);
  }
  return col;
}

/* /metrics/<name>/<mode k>'s columns. 0, or -1 when out of memory. */
static int metric_cols(const tl_acctab *at, tl_table *t) {
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
  COL(t, "unparsed", TL_COL_I64, at->unparsed_doc);
  COL(t, "engine_error", TL_COL_I64, "units the engine gave up on");
  for (int s = 0; s < TL_PS__COUNT; s++) {
    char nm[48];
    snprintf(nm, sizeof nm, "n_%s", tl_pstatus_name((tl_pstatus)s));
    COL(t, nm, TL_COL_I64, "units with this parse status");
  }
  return 0;
oom:
  return -1;
}

/* /metrics/<name>/<mode k>: per model x variant x task (and "all"), the seeds pooled; the CI is
 * over the group's items, each item's seeds one cluster (tl_cluster_ci_drawn, tally/boot.h).
 * num, den: scratch [max(n_items, 1)]. */
static tl_table *metric_table(const tl_acctab *at, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc, int k,
                              tl_cluster_draws *d, int64_t *num, int64_t *den, tl_status *st) {
  char path[96];
  snprintf(path, sizeof path, "/metrics/%s/%s", at->name, at->modes[k]);
  tl_table *t = tl_table_new(path);
  *st = TL_ENOMEM;
  if (!t || metric_cols(at, t)) goto oom;
  const size_t T = (size_t)at->ntasks + 1, M = (size_t)at->n_modes, N = at->n_items;
  for (size_t c0 = 0; c0 < ncfgs;) {
    size_t c1 = c0;
    while (c1 < ncfgs && !strcmp(cfgs[c1].model, cfgs[c0].model) && cfgs[c1].variant == cfgs[c0].variant) c1++;
    for (size_t ts = 0; ts < T; ts++) {
      int64_t x[GW] = {0};
      for (size_t c = c0; c < c1; c++)
        for (int j = 0; j < GW; j++) x[j] += acc[0][((c * T + ts) * M + (size_t)k) * GW + (size_t)j];
      if (x[0] == 0) continue;
      uint32_t nc = 0;
      for (size_t i = 0; i < N; i++) {
        if (ts + 1 < T && (size_t)at->item_task(at->ctx, i) != ts) continue;
        num[nc] = 0;
        for (size_t c = c0; c < c1; c++) num[nc] += acc[1][(c * N + i) * M + (size_t)k];
        den[nc++] = (int64_t)(c1 - c0);
      }
      double lo, hi;
      if ((*st = tl_cluster_ci_drawn(d, num, den, nc, 0.95, &lo, &hi))) goto fail;
      size_t row = tl_table_add_row(t);
      if (row == (size_t)-1) goto oom;
      const int64_t miss = x[2 + TL_PS_MISSING], eerr = x[2 + TL_PS_ENGINE_ERROR];
      int col = 0;
      if (tl_table_set_str(t, row, col++, cfgs[c0].model) ||
          tl_table_set_str(t, row, col++, at->variants[cfgs[c0].variant]) ||
          tl_table_set_str(t, row, col++, ts + 1 < T ? at->tasks[ts] : "all"))
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
  *st = TL_OK;
  return t;
oom:
  *st = TL_ENOMEM;
fail:
  tl_table_free(t);
  return NULL;
}

/* /audit/<name>: per task (and "all") and mode, over every model's units with a reply: accuracy,
 * units scored differently from the primary, and which side was correct. */
static tl_table *audit_table(const tl_acctab *at, int64_t *const *acc) {
  char path[96];
  snprintf(path, sizeof path, "/audit/%s", at->name);
  tl_table *t = tl_table_new(path);
  if (!t) return NULL;
  COL(t, "task", TL_COL_STR, "the items' task, or \"all\"");
  COL(t, "mode", TL_COL_STR, "scoring mode");
  COL(t, "n", TL_COL_I64, "units with an answer (every model, seed)");
  COL(t, "correct", TL_COL_I64, "units scored correct under this mode");
  COL(t, "accuracy", TL_COL_F64, "correct / n");
  COL(t, "disagree", TL_COL_I64, "units this mode and the primary score differently");
  COL(t, "correct_only_here", TL_COL_I64, "units correct under this mode and not under the primary");
  COL(t, "correct_only_primary", TL_COL_I64, "units correct under the primary and not under this mode");
  const size_t T = (size_t)at->ntasks + 1, M = (size_t)at->n_modes;
  for (size_t ts = 0; ts < T; ts++)
    for (size_t k = 0; k < M; k++) {
      const int64_t *a = acc[2] + (ts * M + k) * AW;
      size_t row = tl_table_add_row(t);
      if (row == (size_t)-1 || tl_table_set_str(t, row, 0, ts + 1 < T ? at->tasks[ts] : "all") ||
          tl_table_set_str(t, row, 1, at->modes[k]))
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

tl_status tl_acctab_tables(const tl_acctab *at, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc,
                           tl_table ***out, int *n) {
  const int nt = at->n_modes + 1;
  const size_t nn = at->n_items ? at->n_items : 1;
  tl_table **t = calloc((size_t)nt, sizeof *t);
  int64_t *num = malloc(nn * sizeof *num), *den = malloc(nn * sizeof *den);
  tl_cluster_draws *d = tl_cluster_draws_new((uint32_t)at->ci_B, (uint64_t)at->ci_seed);
  tl_status st = t && num && den && d ? TL_OK : TL_ENOMEM;
  for (int k = 0; k < at->n_modes && !st; k++) t[k] = metric_table(at, cfgs, ncfgs, acc, k, d, num, den, &st);
  tl_cluster_draws_free(d);
  free(num);
  free(den);
  if (!st && !(t[nt - 1] = audit_table(at, acc))) st = TL_ENOMEM;
  if (st) {
    for (int i = 0; t && i < nt; i++) tl_table_free(t[i]);
    free(t);
    return st;
  }
  *out = t;
  *n = nt;
  return TL_OK;
}

/* The summary's accuracy table: one line per group of the primary's table (a0), each mode's
 * accuracy and CI; wm, wt: the model and task columns' widths. */
static void summary_groups(const tl_acctab *at, tl_table *const *tables, int wm, int wt, FILE *out) {
  const int nm = at->n_modes;
  const tl_table *a0 = tables[0];
  fprintf(out, "%-*s  %-*s %5s %6s %8s %7s %8s %12s", wm, "model", wt, "task", "seeds", "n", "answered", "missing",
          "unparsed", "engine_error");
  for (int k = 0; k < nm; k++) fprintf(out, "  %-*s", k + 1 < nm ? 24 : 0, at->modes[k]);
  fprintf(out, "\n");
#define I64(t, name) ((long long)(t)->cols[tl_table_col((t), name)].v.i[r])
#define F64(t, name) ((t)->cols[tl_table_col((t), name)].v.f[r])
  for (size_t r = 0; r < a0->nrows; r++) {
    fprintf(out, "%-*s  %-*s %5lld %6lld %8lld %7lld %8lld %12lld", wm, a0->cols[0].v.s[r], wt, a0->cols[2].v.s[r],
            I64(a0, "seeds"), I64(a0, "n"), I64(a0, "answered"), I64(a0, "missing"), I64(a0, "unparsed"),
            I64(a0, "engine_error"));
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
}

void tl_acctab_summary(const tl_acctab *at, size_t ncfgs, uint64_t units, tl_table *const *tables, FILE *out) {
  const int nm = at->n_modes;
  const char *m0 = at->modes[0];
  fprintf(out, "%s: %zu items in %d task%s x %zu model/seed configs = %llu units; modes:", at->name, at->n_items,
          at->ntasks, at->ntasks == 1 ? "" : "s", ncfgs, (unsigned long long)units);
  for (int k = 0; k < nm; k++) fprintf(out, " %s%s", at->modes[k], k == 0 ? " (primary)" : "");
  fprintf(out, "\n\naccuracy = correct / n (seeds pooled; a missing, failed or unparsed answer scores 0), 95%% CI: "
               "bootstrap over items, each item's seeds together (B = %d); unparsed: the %s mode's\n",
          at->ci_B, m0);
  const tl_table *a0 = tables[0];
  size_t wm = strlen("model"), wt = strlen("task");
  for (size_t r = 0; r < a0->nrows; r++) {
    wm = strlen(a0->cols[0].v.s[r]) > wm ? strlen(a0->cols[0].v.s[r]) : wm;
    wt = strlen(a0->cols[2].v.s[r]) > wt ? strlen(a0->cols[2].v.s[r]) : wt;
  }
  summary_groups(at, tables, (int)wm, (int)wt, out);
  const tl_table *au = tables[nm];
  if (nm > 1) {
    fprintf(out, "\nmode audit against %s (every model and seed; units with an answer): d (a/b): d units scored "
                 "differently, a correct only under the mode, b only under %s\n",
            m0, m0);
    fprintf(out, "%-*s %-18s %6s %8s %s\n", (int)wt, "task", "mode", "n", "accuracy", "disagree");
    for (size_t r = 0; r < au->nrows; r++) {
      if (!strcmp(au->cols[1].v.s[r], m0)) continue;
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
  fprintf(out, "\n%s parse statuses:", m0);
  for (int s = 0; s < TL_PS__COUNT; s++)
    if (st[s]) fprintf(out, " %s=%lld", tl_pstatus_name((tl_pstatus)s), (long long)st[s]);
  fprintf(out, "\n");
}
