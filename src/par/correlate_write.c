/* correlate_write.c - `tally correlate`: what rank 0 prints (table or JSON) and the output
 * tables (correlate_int.h). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "correlate_int.h"
#include "tally/agree.h"
#include "tally/report.h"
#include "tally/str.h"

/* The multiple-comparison columns of a group's comparisons (tally/agree.h): p_boot adjusted by
 * Holm and by Benjamini-Hochberg within each family = one statistic's metric pairs of one group
 * (cmp[stat * npairs + pair]), and the minimum detectable difference at 80% power, two-sided
 * alpha 0.05: (z_0.975 + z_0.8) * the bootstrap SE of delta (delta assumed normal with that SE).
 * holm, bh, mde: [nstats * npairs]. */
static tl_status adjust_group(const corr_data *d, const group *g, double *holm, double *bh, double *mde) {
  const int npairs = d->M * (d->M - 1) / 2;
  double *p = malloc(((size_t)npairs + 1) * sizeof *p);
  if (!p) return TL_ENOMEM;
  for (int st = 0; st < d->nstats; st++) {
    for (int q = 0; q < npairs; q++) p[q] = g->cmp[st * npairs + q].p_boot;
    tl_p_holm(p, (size_t)npairs, holm + st * npairs);
    tl_p_bh(p, (size_t)npairs, bh + st * npairs);
  }
  for (int q = 0; q < d->nstats * npairs; q++) mde[q] = tl_mde_from_se(g->cmp[q].diff.se, 0.05, 0.8);
  free(p);
  return TL_OK;
}

/* The printed study is built from the study's own output tables (build_summary, build_compare:
 * the tables corr_write_tables writes), each made a report table by tally/report.h's study
 * builders and printed by its text renderer: every column as wide as its contents, and the
 * same tables `tally report` shows from the file. Header lines and notes stay text. */
static tl_status build_summary(const corr_data *d, tl_table *sum, int sys);
static tl_status build_compare(const corr_data *d, tl_table *cmp);

typedef struct {
  const tl_corr_opts *o;
  tl_doc *doc;     /* scratch document owning the report tables */
  tl_section *sec;
  tl_table *sum, *cmp, *sys; /* summary, compare, system/summary (every group) */
} printer;

/* Prints rt (NULL: a builder failed; said on the log) indented by `indent`. */
static void put(const printer *p, const tl_rtable *rt, const char *indent) {
  if (!rt || tl_rtable_fprint(rt, p->o->outf, indent) != TL_OK)
    fprintf(p->o->log, "%s: cannot print a table of the study (out of memory)\n", LABEL(p->o));
}

/* Group g's system-level table: the per-system means, then the statistics over the systems
 * (system/summary); a note when fewer than 3 systems make a correlation (+-1 or NaN). */
static void print_system(const printer *pr, const corr_data *d, const group *g) {
  const tl_corr_opts *o = pr->o;
  FILE *f = o->outf;
  fprintf(f, "  system level (%s means, %u systems): B = %llu resamples of %u %s, %.0f%% percentile CIs\n",
          o->system, g->nsys, (unsigned long long)d->B, g->cl ? g->ncl : g->n,
          g->cl ? (o->cluster_auto ? "questions (clusters)" : "clusters") : "rows", 100 * o->ci);
  double *mean = malloc((size_t)(d->M + 1) * (g->nsys ? g->nsys : 1) * sizeof *mean);
  const double **cols = malloc((size_t)d->M * sizeof *cols);
  const char **names = malloc((size_t)(d->M + 2) * sizeof *names);
  tl_rcol_kind *kinds = malloc((size_t)(d->M + 2) * sizeof *kinds);
  for (int m = 0; cols && m < d->M; m++) cols[m] = g->metric + (size_t)m * g->n;
  tl_sys_in si = {g->n, g->human, d->M, (const double *const *)cols, g->sys, g->nsys, g->cl, g->ncl, d->nstats,
                  {d->stats[0], d->nstats > 1 ? d->stats[1] : TL_STAT_SPEARMAN}, o->seed, d->B};
  if (mean && cols && names && kinds && tl_sys_means(&si, mean) == TL_OK) {
    names[0] = o->system, names[1] = "human", kinds[0] = TL_RC_TEXT, kinds[1] = TL_RC_REAL;
    for (int m = 0; m < d->M; m++) names[m + 2] = d->names[m], kinds[m + 2] = TL_RC_REAL;
    tl_rtable *t = tl_sec_table(pr->doc, pr->sec, "", d->M + 2, names, kinds);
    const char *nm = g->sysnames;
    for (uint32_t q = 0; t && q < g->nsys; q++, nm += strlen(nm) + 1) {
      size_t r = tl_rtable_row(pr->doc, t);
      tl_cell_text(pr->doc, t, r, 0, nm);
      for (int m = 0; m <= d->M; m++) tl_cell_real(t, r, m + 1, mean[(size_t)m * g->nsys + q]);
    }
    put(pr, tl_doc_ok(pr->doc) ? NULL : t, "  ");
  }
  free(mean), free(cols), free(names), free(kinds);
  put(pr, tl_study_summary(pr->doc, pr->sec, pr->sys, g->key, ""), "  ");
  if (g->nsys < 3)
    fprintf(f, "  note: %u system(s): a correlation over fewer than 3 systems is +-1 or undefined (NaN); "
               "it says nothing about agreement\n", g->nsys);
}

/* Group g's header line, summary and comparisons (with their notes). */
static void print_group(const printer *pr, const corr_data *d, int k) {
  const tl_corr_opts *o = pr->o;
  FILE *f = o->outf;
  const group *g = &d->g[k];
  const int npairs = d->M * (d->M - 1) / 2;
  const char *meth = o->method == TL_CI_BCA ? "BCa" : "percentile";
  fprintf(f, "%s%s: n = %u items", k ? "\n" : "", g->key, g->n);
  if (g->excluded) fprintf(f, " (%lld rows excluded: non-numeric or undefined cells)", (long long)g->excluded);
  if (g->cl)
    fprintf(f, ", B = %llu resamples of %u %s '%s'), seed %llu, %.0f%% %s CIs\n",
            (unsigned long long)d->B, g->ncl, o->cluster_auto ? "questions (clusters by" : "clusters (by", o->cluster,
            (unsigned long long)o->seed, 100 * o->ci, meth);
  else
    fprintf(f, ", B = %llu resamples%s, seed %llu, %.0f%% %s CIs\n", (unsigned long long)d->B,
            d->indices ? " (--indices)" : "", (unsigned long long)o->seed, 100 * o->ci, meth);
  put(pr, tl_study_summary(pr->doc, pr->sec, pr->sum, g->key, ""), "  ");
  if (npairs) {
    fprintf(f, "  comparisons (paired bootstrap of the difference a - b; p_boot is the recommended test)\n");
    tl_study_fmt sf = {d->B, o->permutation, o->ttest_compat};
    put(pr, tl_study_compare(pr->doc, pr->sec, pr->cmp, g->key, &sf, ""), "  ");
    fprintf(f, "  p_holm, p_bh: p_boot adjusted over this statistic's %d pair(s) (Holm; Benjamini-Hochberg);\n"
               "  an adjusted 0 comes from p_boot 0 (< 1/B): read it as < m/B; mde80: the smallest |delta|\n"
               "  detected with 80%% power at alpha 0.05, (z_0.975 + z_0.8) x SE (delta taken as normal)\n", npairs);
    if (o->ttest_compat)
      fprintf(f, "  COMPAT p_ttest: paper-style t-test on the two bootstrap vectors; its p-value shrinks as B grows\n"
                 "  (it tests the resampling, not the metrics): do not use it as evidence.\n");
  }
  if (g->sys) print_system(pr, d, g);
}

static void print_table(const tl_corr_opts *o, const corr_data *d) {
  printer pr = {o, tl_doc_new(""), NULL, tl_table_new("summary"), tl_table_new("compare"), tl_table_new("system")};
  if (pr.doc) pr.sec = tl_doc_section(pr.doc, "");
  tl_status st = pr.sec && pr.sum && pr.cmp && pr.sys ? TL_OK : TL_ENOMEM;
  if (st == TL_OK) st = build_summary(d, pr.sum, 0);
  if (st == TL_OK) st = build_summary(d, pr.sys, 1);
  if (st == TL_OK) st = build_compare(d, pr.cmp);
  if (st != TL_OK) fprintf(o->log, "%s: out of memory printing the study\n", LABEL(o));
  for (int k = 0; st == TL_OK && k < d->ngroups; k++) print_group(&pr, d, k);
  /* the layout of the LAVE paper's table: one row per metric, one column per group, each
   * statistic x 100 (the estimates above) */
  for (int s = 0; st == TL_OK && d->ngroups > 1 && s < d->nstats; s++) {
    fprintf(o->outf, "\n%s x 100, by group:\n", tl_stat_name(d->stats[s]));
    put(&pr, tl_study_by_group(pr.doc, pr.sec, pr.sum, tl_stat_name(d->stats[s]), ""), "  ");
  }
  tl_doc_free(pr.doc);
  tl_table_free(pr.sum), tl_table_free(pr.cmp), tl_table_free(pr.sys);
}

static void print_json(const tl_corr_opts *o, const corr_data *d) {
  int K = d->M * d->nstats, npairs = d->M * (d->M - 1) / 2;
  cJSON *root = cJSON_CreateObject();
  cJSON_AddNumberToObject(root, "resamples", (double)d->B);
  cJSON_AddNumberToObject(root, "seed", (double)o->seed);
  cJSON_AddNumberToObject(root, "ci", o->ci);
  cJSON_AddStringToObject(root, "method", o->method == TL_CI_BCA ? "bca" : "percentile");
  cJSON_AddBoolToObject(root, "indices", d->indices != NULL);
  if (o->cluster) cJSON_AddStringToObject(root, "cluster", o->cluster);
  cJSON *gs = cJSON_AddArrayToObject(root, "groups");
  size_t nq = (size_t)(d->nstats * npairs);
  double *adj = malloc(3 * (nq + 1) * sizeof *adj), *holm = adj, *bh = adj + nq + 1, *mde = bh + nq + 1;
#define NUM(obj, name, v) (isfinite(v) ? cJSON_AddNumberToObject(obj, name, v) : cJSON_AddNullToObject(obj, name))
  for (int k = 0; k < d->ngroups; k++) {
    const group *g = &d->g[k];
    cJSON *jg = cJSON_CreateObject();
    cJSON_AddStringToObject(jg, "group", g->key);
    cJSON_AddNumberToObject(jg, "n", g->n);
    cJSON_AddNumberToObject(jg, "excluded_rows", (double)g->excluded);
    if (g->cl) cJSON_AddNumberToObject(jg, "clusters", g->ncl);
    cJSON *ms = cJSON_AddArrayToObject(jg, "metrics");
    for (int q = 0; q < K; q++) {
      const tl_boot_summary *p = &g->per[q];
      cJSON *m = cJSON_CreateObject();
      cJSON_AddStringToObject(m, "metric", d->names[q / d->nstats]);
      cJSON_AddStringToObject(m, "statistic", tl_stat_name(d->stats[q % d->nstats]));
      NUM(m, "estimate", p->estimate); NUM(m, "boot_mean", p->boot_mean); NUM(m, "se", p->se);
      NUM(m, "ci_lo", p->ci_lo); NUM(m, "ci_hi", p->ci_hi);
      cJSON_AddNumberToObject(m, "n_defined", (double)p->n_defined);
      cJSON_AddNumberToObject(m, "n_undefined", (double)p->n_undefined);
      cJSON_AddItemToArray(ms, m);
    }
    cJSON *cs = cJSON_AddArrayToObject(jg, "comparisons");
    int have = adj && adjust_group(d, g, holm, bh, mde) == TL_OK; /* else null */
    for (int q = 0; q < d->nstats * npairs; q++) {
      const tl_boot_compare *c = &g->cmp[q];
      cJSON *m = cJSON_CreateObject();
      cJSON_AddStringToObject(m, "a", d->names[c->a]);
      cJSON_AddStringToObject(m, "b", d->names[c->b]);
      cJSON_AddStringToObject(m, "statistic", tl_stat_name(d->stats[q / npairs]));
      NUM(m, "delta", c->diff.estimate); NUM(m, "ci_lo", c->diff.ci_lo); NUM(m, "ci_hi", c->diff.ci_hi);
      NUM(m, "p_boot", c->p_boot); NUM(m, "p_williams", c->p_williams); NUM(m, "p_permutation", c->p_permutation);
      if (o->ttest_compat) { NUM(m, "p_ttest_compat", c->p_ttest_compat); NUM(m, "t_ttest_compat", c->t_ttest_compat); }
      NUM(m, "p_holm", have ? holm[q] : NAN); NUM(m, "p_bh", have ? bh[q] : NAN); NUM(m, "mde80", have ? mde[q] : NAN);
      cJSON_AddItemToArray(cs, m);
    }
    if (g->sys) {
      cJSON *sy = cJSON_AddObjectToObject(jg, "system_level");
      cJSON_AddStringToObject(sy, "system", o->system);
      cJSON_AddNumberToObject(sy, "systems", g->nsys);
      cJSON *sm = cJSON_AddArrayToObject(sy, "metrics");
      for (int q = 0; q < K; q++) {
        const tl_boot_summary *p = &g->per[K + q];
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "metric", d->names[q / d->nstats]);
        cJSON_AddStringToObject(m, "statistic", tl_stat_name(d->stats[q % d->nstats]));
        NUM(m, "estimate", p->estimate); NUM(m, "se", p->se); NUM(m, "ci_lo", p->ci_lo); NUM(m, "ci_hi", p->ci_hi);
        cJSON_AddNumberToObject(m, "n_undefined", (double)p->n_undefined);
        cJSON_AddItemToArray(sm, m);
      }
    }
    cJSON_AddItemToArray(gs, jg);
  }
#undef NUM
  free(adj);
  char *s = cJSON_Print(root);
  fprintf(o->outf, "%s\n", s);
  free(s);
  cJSON_Delete(root);
}

/* ---- the output tables (rank 0 builds them; every rank takes part in the writes) ---- */

#define ADDCOL(t, n, ty, doc) if (tl_table_add_col((t), (n), (ty), (doc)) < 0) return TL_ENOMEM
/* Rank 0: the summary table, one row per (group, metric, statistic). TL_ENOMEM when out of
 * memory. */
static tl_status build_summary(const corr_data *d, tl_table *sum, int sys) {
  const int K = d->M * d->nstats;
  ADDCOL(sum, "group", TL_COL_STR, "group key (col=value,...) or all");
  ADDCOL(sum, "metric", TL_COL_STR, "metric column");
  ADDCOL(sum, "statistic", TL_COL_STR, "spearman | kendall_b");
  ADDCOL(sum, "n", TL_COL_I64, sys ? "systems in the group" : "items in the group");
  ADDCOL(sum, "estimate", TL_COL_F64, "statistic on the full data");
  ADDCOL(sum, "boot_mean", TL_COL_F64, "mean of the defined resample values");
  ADDCOL(sum, "se", TL_COL_F64, "bootstrap standard error (ddof=1)");
  ADDCOL(sum, "ci_lo", TL_COL_F64, "lower CI bound");
  ADDCOL(sum, "ci_hi", TL_COL_F64, "upper CI bound");
  ADDCOL(sum, "n_defined", TL_COL_I64, "resamples with a defined value");
  ADDCOL(sum, "n_undefined", TL_COL_I64, "resamples excluded (undefined statistic)");
  for (int k = 0; k < d->ngroups; k++) {
    const group *g = &d->g[k];
    for (int q = 0; q < K && (!sys || g->sys); q++) {
      const tl_boot_summary *p = &g->per[sys ? K + q : q];
      size_t r = tl_table_add_row(sum);
      if (r == (size_t)-1) return TL_ENOMEM;
      if (tl_table_set_str(sum, r, 0, g->key) || tl_table_set_str(sum, r, 1, d->names[q / d->nstats]) ||
          tl_table_set_str(sum, r, 2, tl_stat_name(d->stats[q % d->nstats])))
        return TL_ENOMEM;
      tl_table_set_i64(sum, r, 3, sys ? g->nsys : g->n);
      double v[] = {p->estimate, p->boot_mean, p->se, p->ci_lo, p->ci_hi};
      for (int i = 0; i < 5; i++) tl_table_set_f64(sum, r, 4 + i, v[i]);
      tl_table_set_i64(sum, r, 9, p->n_defined);
      tl_table_set_i64(sum, r, 10, p->n_undefined);
    }
  }
  return TL_OK;
}

/* Rank 0: the compare table, one row per (group, statistic, metric pair). */
static tl_status build_compare(const corr_data *d, tl_table *cmp) {
  const int npairs = d->M * (d->M - 1) / 2;
  ADDCOL(cmp, "group", TL_COL_STR, "group key");
  ADDCOL(cmp, "statistic", TL_COL_STR, "spearman | kendall_b");
  ADDCOL(cmp, "a", TL_COL_STR, "first metric");
  ADDCOL(cmp, "b", TL_COL_STR, "second metric");
  ADDCOL(cmp, "delta", TL_COL_F64, "stat(a) - stat(b) on the full data");
  ADDCOL(cmp, "ci_lo", TL_COL_F64, "lower CI bound of the paired difference");
  ADDCOL(cmp, "ci_hi", TL_COL_F64, "upper CI bound of the paired difference");
  ADDCOL(cmp, "p_boot", TL_COL_F64, "paired bootstrap p-value (recommended)");
  ADDCOL(cmp, "p_williams", TL_COL_F64, "Williams' test (spearman only)");
  ADDCOL(cmp, "p_permutation", TL_COL_F64, "paired permutation test");
  ADDCOL(cmp, "p_ttest_compat", TL_COL_F64, "COMPAT: t-test on bootstrap vectors; shrinks with B, not evidence");
  ADDCOL(cmp, "p_holm", TL_COL_F64, "p_boot, Holm-adjusted over the group's pairs of this statistic");
  ADDCOL(cmp, "p_bh", TL_COL_F64, "p_boot, Benjamini-Hochberg-adjusted over the group's pairs of this statistic");
  ADDCOL(cmp, "mde80", TL_COL_F64, "minimum detectable |delta|, 80% power, alpha 0.05: 2.8016 x bootstrap SE");
  double *adj = malloc(3 * ((size_t)d->nstats * (size_t)npairs + 1) * sizeof *adj);
  if (!adj) return TL_ENOMEM;
  double *holm = adj, *bh = adj + d->nstats * npairs + 1, *mde = bh + d->nstats * npairs + 1;
  for (int k = 0; k < d->ngroups; k++) {
    const group *g = &d->g[k];
    if (adjust_group(d, g, holm, bh, mde) != TL_OK) {
      free(adj);
      return TL_ENOMEM;
    }
    for (int q = 0; q < d->nstats * npairs; q++) {
      const tl_boot_compare *c = &g->cmp[q];
      size_t r = tl_table_add_row(cmp);
      if (r == (size_t)-1 || tl_table_set_str(cmp, r, 0, g->key) ||
          tl_table_set_str(cmp, r, 1, tl_stat_name(d->stats[q / npairs])) ||
          tl_table_set_str(cmp, r, 2, d->names[c->a]) || tl_table_set_str(cmp, r, 3, d->names[c->b])) {
        free(adj);
        return TL_ENOMEM;
      }
      double v[] = {c->diff.estimate, c->diff.ci_lo, c->diff.ci_hi, c->p_boot, c->p_williams,
                    c->p_permutation, c->p_ttest_compat, holm[q], bh[q], mde[q]};
      for (int i = 0; i < 10; i++) tl_table_set_f64(cmp, r, 4 + (size_t)i, v[i]);
    }
  }
  free(adj);
  return TL_OK;
}

/* Rank 0: the resamples table, one row per (group, resample), one column per value. */
static tl_status build_resamples(const corr_data *d, tl_table *res) {
  const int K = d->M * d->nstats;
  ADDCOL(res, "group", TL_COL_STR, "group key");
  ADDCOL(res, "resample", TL_COL_I64, "resample index r");
  for (int q = 0; q < K; q++) {
    char nm[256];
    snprintf(nm, sizeof nm, "%s/%s", d->names[q / d->nstats], tl_stat_name(d->stats[q % d->nstats]));
    for (char *c = nm; *c; c++) if (*c == '/') *c = ':';
    ADDCOL(res, nm, TL_COL_F64, "value on the resample (NaN = undefined)");
  }
  for (int k = 0; k < d->ngroups; k++) {
    const group *g = &d->g[k];
    for (uint64_t b = 0; b < d->B; b++) {
      size_t r = tl_table_add_row(res);
      if (r == (size_t)-1 || tl_table_set_str(res, r, 0, g->key)) return TL_ENOMEM;
      tl_table_set_i64(res, r, 1, (int64_t)b);
      for (int q = 0; q < K; q++) tl_table_set_f64(res, r, 2 + q, g->vals[b * (uint64_t)K + (uint64_t)q]);
    }
  }
  return TL_OK;
}

/* Rank 0: the params table, one row: how the study was run. */
static tl_status build_params(const tl_corr_opts *o, const corr_data *d, tl_table *par) {
  uint64_t clustered = 0; /* clusters over the groups */
  int sys = 0;
  for (int k = 0; k < d->ngroups; k++) {
    clustered += d->g[k].cl ? d->g[k].ncl : 0;
    sys |= d->g[k].sys != NULL;
  }
  ADDCOL(par, "input", TL_COL_STR, "the data table");
  ADDCOL(par, "human", TL_COL_STR, "human score column");
  ADDCOL(par, "metrics", TL_COL_STR, "metric columns, comma-separated");
  ADDCOL(par, "group_by", TL_COL_STR, "grouping columns, comma-separated");
  ADDCOL(par, "resamples", TL_COL_I64, "B");
  ADDCOL(par, "seed", TL_COL_I64, "Philox key");
  ADDCOL(par, "ci_level", TL_COL_F64, "confidence level");
  ADDCOL(par, "ci_method", TL_COL_STR, "percentile | bca");
  ADDCOL(par, "permutation", TL_COL_I64, "1 when the permutation test ran (B permutations)");
  ADDCOL(par, "resampling", TL_COL_STR, "how resamples were drawn");
  ADDCOL(par, "cluster", TL_COL_STR, "the cluster column (questions), or empty: items resampled");
  ADDCOL(par, "clusters", TL_COL_I64, "clusters resampled, summed over the groups (0: items resampled)");
  ADDCOL(par, "system", TL_COL_STR, "the system column of the system-level table, or empty");
  size_t r = tl_table_add_row(par);
  if (r == (size_t)-1) return TL_ENOMEM;
  if (tl_table_set_str(par, r, 0, o->input) || tl_table_set_str(par, r, 1, o->human) ||
      tl_table_set_str(par, r, 2, o->metrics) || tl_table_set_str(par, r, 3, o->group_by ? o->group_by : "") ||
      tl_table_set_str(par, r, 7, o->method == TL_CI_BCA ? "bca" : "percentile") ||
      tl_table_set_str(par, r, 9, d->indices ? "explicit index matrix (--indices)"
                                  : clustered ? "Philox4x32-10 keyed by (seed, resample), clusters drawn"
                                              : "Philox4x32-10 keyed by (seed, resample)") ||
      tl_table_set_str(par, r, 10, clustered ? o->cluster : "") ||
      tl_table_set_str(par, r, 12, sys ? o->system : ""))
    return TL_ENOMEM;
  tl_table_set_i64(par, r, 11, (int64_t)clustered);
  tl_table_set_i64(par, r, 4, (int64_t)d->B);
  tl_table_set_i64(par, r, 5, (int64_t)o->seed);
  tl_table_set_f64(par, r, 6, o->ci);
  tl_table_set_i64(par, r, 8, o->permutation);
  return TL_OK;
}
#undef ADDCOL

/* Collective over c and w's communicator. Writes the study's tables under `prefix` (e.g.
 * "/stats/correlate"): summary, compare, resamples (every resample value) and params (one row:
 * how the study was run). Rank 0 builds them; the ranks agree on that (over c) before the
 * first write, then every rank takes part in each write (the writer agrees on its failures).
 * Nothing here depends on the rank count or the device (those go to the log), so the datasets
 * are byte-identical however the study ran. Returns the agreed status, its message in err. */
tl_status corr_write_tables(const tl_corr_opts *o, const corr_data *d, tl_writer *w,
                            const char *prefix, int rank, MPI_Comm c, tl_err *err) {
  static const char *const NAME[5] = {"summary", "compare", "resamples", "params", "system/summary"};
  tl_table *t[5] = {NULL, NULL, NULL, NULL, NULL};
  tl_status st = TL_OK;
  int nt = 4; /* the system-level table when a group has one (rank 0 decides; agreed below) */
  for (int k = 0; rank == 0 && k < d->ngroups; k++)
    if (d->g[k].sys) nt = 5;
  if (rank == 0) {
    for (int i = 0; i < nt && st == TL_OK; i++) {
      char path[512];
      snprintf(path, sizeof path, "%s/%s", prefix, NAME[i]);
      if (!(t[i] = tl_table_new(path))) st = TL_ENOMEM;
    }
    if (st == TL_OK) st = build_summary(d, t[0], 0);
    if (st == TL_OK && nt == 5) st = build_summary(d, t[4], 1);
    if (st == TL_OK) st = build_compare(d, t[1]);
    if (st == TL_OK) st = build_resamples(d, t[2]);
    if (st == TL_OK) st = build_params(o, d, t[3]);
    if (st != TL_OK) tl_err_set(err, st, "out of memory building the output tables");
  }
  st = tl_agree(st, err, c);
  if (st == TL_OK) st = tl_agree(tl_bcast(&nt, 1, MPI_INT, 0, c, err), err, c);
  for (int i = 0; i < nt && st == TL_OK; i++) st = w->vt->write_table(w, rank ? NULL : t[i], err);
  for (int i = 0; i < 5; i++) tl_table_free(t[i]);
  return st;
}

/* Step: how the study ran (CUDA ranks, the slowest rank's seconds) reduced to rank 0, which
 * prints the study (table or JSON) and its log lines. Agreed. */
tl_status corr_study_report(study *s, const tl_inlog *log, tl_err *err) {
  const tl_corr_opts *o = s->o;
  const corr_data *d = &s->d;
  int gpu_ranks = 0, my_gpu = s->gpu_groups > 0;
  double t_max = 0, t_sum_max = 0;
  tl_status st = tl_reduce(&my_gpu, &gpu_ranks, 1, MPI_INT, MPI_SUM, 0, s->c, err);
  corr_keep(&st, tl_reduce(&s->t_res, &t_max, 1, MPI_DOUBLE, MPI_MAX, 0, s->c, err));
  corr_keep(&st, tl_reduce(&s->t_sum, &t_sum_max, 1, MPI_DOUBLE, MPI_MAX, 0, s->c, err));
  if ((st = tl_agree(st, err, s->c)) != TL_OK) {
    if (s->rank == 0) fprintf(o->log, "%s: %s\n", LABEL(o), err->msg);
    return st;
  }
  if (s->rank == 0) {
    char devices[128];
    snprintf(devices, sizeof devices, "%d rank(s), %d using CUDA", s->nranks, gpu_ranks);
    if (o->json) print_json(o, d);
    else print_table(o, d);
    int clustered = 0; /* groups resampling clusters: the CPU path (the CUDA kernels draw items) */
    for (int k = 0; k < d->ngroups; k++) clustered += d->g[k].cl != NULL;
    if (!o->quiet)
      fprintf(o->log, "%s: %d group(s), %llu resamples x %d values in %.3f s; "
              "%s%s in %.3f s; on %s%s\n", LABEL(o), d->ngroups, (unsigned long long)d->B, s->K, t_max,
              o->permutation ? "permutation test" : "no permutation test",
              o->method == TL_CI_BCA ? ", BCa jackknife" : "", t_sum_max, devices,
              clustered ? "; clusters resampled on the CPU (the CUDA kernels draw items)" : "");
    if (log->total) fprintf(o->log, "%s: %ld bad input cell(s) reported; those rows were excluded\n", LABEL(o), log->total);
  }
  return TL_OK;
}
