/* cmd_report.c - `tally report RUN.h5 [--format text|md|latex|csv|json|html] [-o FILE]`: the run's
 * tables, read back from its file, as one document (tally/report.h) rendered in one format
 * (issue 33; docs/REPORT.md).
 *
 * The document: "run" (the provenance from the root attributes: job, version, commit, counts,
 * engines, inputs and their SHA-256, seeds), then per benchmark (the groups under /metrics) its
 * module's `report` hook over its /metrics/<name>/... and /audit/<name>/... tables, or each table
 * generically; per study (/stats/<name>) its parameters, summary and comparisons with their
 * charts (the resamples are left out: data, not a result); the bad input lines when there were
 * any. What depends on how the run was spread (n_ranks, the job's folder, absolute paths) is
 * left out, so a file written on 1 rank and on 4 give the same report. One process, no MPI. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cJSON.h"
#include "cli.h"
#include "h5_read.h"
#include "outsafe.h"
#include "report_h5.h"
#include "tally/exit.h"
#include "tally/registry.h"
#include "tally/report.h"
#include "tally/str.h"
#include "usage.h"

enum { O_FORMAT = 1, O_OUTPUT, O_HELP };
const struct option tl_opts_report[] = {{"format", required_argument, NULL, O_FORMAT},
                                        {"output", required_argument, NULL, O_OUTPUT},
                                        {"out", required_argument, NULL, O_OUTPUT},
                                        {"help", no_argument, NULL, O_HELP},
                                        {NULL, 0, NULL, 0}};

static const char *const CMD = "tally report";

/* Adds a (key, value) row to a two-column table. */
static void kv(tl_doc *d, tl_rtable *t, const char *k, const char *v) {
  size_t r = tl_rtable_row(d, t);
  tl_cell_text(d, t, r, 0, k);
  tl_cell_text(d, t, r, 1, v);
}

static const char *const KV_NAMES[] = {"key", "value"};
static const tl_rcol_kind KV_KINDS[] = {TL_RC_TEXT, TL_RC_TEXT};

/* The root attributes that say what was run (the rest: engines, inputs, below). */
static void run_facts(const char *path, tl_doc *d, tl_section *s) {
  static const char *const STR[] = {"job_name", "tally_version", "tally_commit", "parsers", "hdf5_version", "deflate"};
  static const char *const INT[] = {"units", "units_resumed", "engine_calls", "judge_calls", "judge_resumed",
                                    "judge_skipped", "n_bad_input"};
  tl_rtable *t = tl_sec_table(d, s, "run", 2, KV_NAMES, KV_KINDS);
  tl_err err;
  for (size_t i = 0; i < sizeof STR / sizeof *STR; i++) {
    char *v = NULL;
    if (!tl_h5_read_attr_str(path, STR[i], &v, &err)) kv(d, t, STR[i], v);
    free(v);
  }
  for (size_t i = 0; i < sizeof INT / sizeof *INT; i++) {
    int64_t v;
    if (tl_h5_read_attr_i64(path, INT[i], &v, &err)) continue;
    size_t r = tl_rtable_row(d, t);
    tl_cell_text(d, t, r, 0, INT[i]);
    tl_cell_int(t, r, 1, v); /* a count: a number in JSON and CSV */
  }
}

/* The engines (root attribute "engines": {role: settings}) and the inputs ("input_sha256":
 * {path relative to the working folder: sha256}), and the seeds the job names. */
static void run_inputs(const char *path, tl_doc *d, tl_section *s) {
  tl_err err;
  char *eng = NULL, *sha = NULL, *job = NULL;
  tl_h5_read_attr_str(path, "engines", &eng, &err);
  tl_h5_read_attr_str(path, "input_sha256", &sha, &err);
  tl_h5_read_attr_str(path, "job", &job, &err);
  cJSON *e = eng ? cJSON_Parse(eng) : NULL, *h = sha ? cJSON_Parse(sha) : NULL, *j = job ? cJSON_Parse(job) : NULL;
  static const char *const EN[] = {"role", "settings"};
  tl_rtable *t = e ? tl_sec_table(d, s, "engines", 2, EN, KV_KINDS) : NULL;
  for (cJSON *c = e ? e->child : NULL; c; c = c->next) {
    char *v = cJSON_PrintUnformatted(c);
    kv(d, t, c->string ? c->string : "", v ? v : "");
    free(v);
  }
  static const char *const IN[] = {"input", "sha256"};
  t = h ? tl_sec_table(d, s, "inputs", 2, IN, KV_KINDS) : NULL;
  for (cJSON *c = h ? h->child : NULL; c; c = c->next) kv(d, t, c->string ? c->string : "", cJSON_IsString(c) ? c->valuestring : "");
  static const char *const SN[] = {"where", "seeds"};
  t = NULL;
  const cJSON *bs = cJSON_GetObjectItemCaseSensitive(j, "benchmarks"), *b;
  cJSON_ArrayForEach(b, bs) {
    const cJSON *seeds = cJSON_GetObjectItemCaseSensitive(b, "seeds"), *name = cJSON_GetObjectItemCaseSensitive(b, "benchmark");
    if (!seeds) continue;
    char *v = cJSON_PrintUnformatted(seeds);
    if (!t) t = tl_sec_table(d, s, "seeds the job names (a study's: its parameters below)", 2, SN, KV_KINDS);
    kv(d, t, cJSON_IsString(name) ? name->valuestring : "?", v ? v : "");
    free(v);
  }
  cJSON_Delete(e), cJSON_Delete(h), cJSON_Delete(j);
  free(eng), free(sha), free(job);
}

/* Reads every table at or below group root (every column). *out: malloc'd array of *n tables. */
static tl_status read_tables(const char *path, const char *root, tl_table ***out, int *n, tl_err *err) {
  rpt_tabs ts;
  *out = NULL, *n = 0;
  tl_status st = rpt_list(path, root, &ts, err);
  if (st) return st;
  tl_table **v = calloc((size_t)(ts.n ? ts.n : 1), sizeof *v);
  if (!v) st = TL_ENOMEM;
  for (int i = 0; !st && i < ts.n; i++) {
    st = tl_h5_read_table(path, ts.v[i].group, (const char *const *)ts.v[i].cols, ts.v[i].ncols, &v[i], err);
    if (!st) *n = i + 1;
  }
  rpt_tabs_free(&ts);
  *out = v;
  return st;
}

static void free_tables(tl_table **t, int n) {
  for (int i = 0; i < n; i++) tl_table_free(t[i]);
  free(t);
}

/* Appends the tables under root to (*all, *n). */
static tl_status gather(const char *path, const char *root, tl_table ***all, int *n, tl_err *err) {
  tl_table **t;
  int k;
  tl_status st = read_tables(path, root, &t, &k, err);
  tl_table **v = st ? NULL : realloc(*all, (size_t)(*n + k + 1) * sizeof *v);
  if (!st && !v) st = TL_ENOMEM;
  if (st) return free_tables(t, k), st;
  memcpy(v + *n, t, (size_t)k * sizeof *t);
  free(t);
  *all = v, *n += k;
  return TL_OK;
}

/* One benchmark: its module's report hook, or every table generically. */
static tl_status bench_part(const char *path, const char *name, tl_doc *d, tl_err *err) {
  char m[300], a[300];
  snprintf(m, sizeof m, "/metrics/%s", name);
  snprintf(a, sizeof a, "/audit/%s", name);
  tl_table **t = NULL;
  int n = 0;
  tl_status st = gather(path, m, &t, &n, err);
  if (!st) st = gather(path, a, &t, &n, err);
  const tl_bench_vt *vt = tl_bench_find(name);
  if (!st && vt && vt->report) {
    st = vt->report(t, n, d);
    if (st == TL_EINPUT) st = TL_OK, vt = NULL; /* a table it needs is absent: generic */
    else vt = st ? NULL : vt;
    if (!st && vt) return free_tables(t, n), tl_doc_ok(d);
  }
  char title[320];
  snprintf(title, sizeof title, "benchmark %s", name);
  tl_section *s = st ? NULL : tl_doc_section(d, title);
  for (int i = 0; !st && i < n; i++) tl_doc_from_table(d, s, t[i], NULL);
  free_tables(t, n);
  return st ? st : tl_doc_ok(d);
}

/* An HTTP run's engines: each role's concurrency trace (/engine/<role>/concurrency: when each
 * rank's endpoint changed the requests it keeps in flight, and why), as a table. */
static tl_status engine_part(const char *path, tl_doc *d, tl_err *err) {
  char **roles = NULL;
  int nr = 0;
  tl_status st = rpt_children(path, "/engine", &roles, &nr, err);
  for (int i = 0; !st && i < nr; i++) {
    char g[300], title[340];
    snprintf(g, sizeof g, "/engine/%.250s", roles[i]);
    tl_table **t = NULL;
    int n = 0;
    st = read_tables(path, g, &t, &n, err);
    snprintf(title, sizeof title, "engine %.250s", roles[i]);
    tl_section *s = !st && n ? tl_doc_section(d, title) : NULL;
    for (int k = 0; !st && k < n; k++)
      tl_rtable_note(d, tl_doc_from_table(d, s, t[k], NULL),
                     "the requests in flight each rank's endpoint allowed from t_s on (initial, grown on fast "
                     "replies, shrunk on HTTP 429, capped by the server's slots)");
    if (t) free_tables(t, n);
  }
  for (int i = 0; i < nr; i++) free(roles[i]);
  free(roles);
  return st ? st : tl_doc_ok(d);
}

/* A study's charts: its estimates with CIs (bars, one series per group) and its comparisons
 * (a forest of the paired differences, reference line 0). */
static void study_charts(tl_doc *d, tl_section *s, const tl_table *sum, const tl_table *cmp) {
  char lab[400];
  int g = sum ? tl_table_col(sum, "group") : -1, me = sum ? tl_table_col(sum, "metric") : -1;
  int st = sum ? tl_table_col(sum, "statistic") : -1, es = sum ? tl_table_col(sum, "estimate") : -1;
  int lo = sum ? tl_table_col(sum, "ci_lo") : -1, hi = sum ? tl_table_col(sum, "ci_hi") : -1;
  if (g >= 0 && me >= 0 && st >= 0 && es >= 0 && lo >= 0 && hi >= 0) {
    tl_chart *c = tl_sec_chart(d, s, TL_CHART_BARS_CI, "estimates with CIs", "metric (statistic)", "estimate");
    for (size_t r = 0; r < sum->nrows; r++) {
      snprintf(lab, sizeof lab, "%s (%s)", sum->cols[me].v.s[r], sum->cols[st].v.s[r]);
      tl_chart_point_add(d, tl_chart_series_get(d, c, sum->cols[g].v.s[r]), lab, sum->cols[es].v.f[r], sum->cols[lo].v.f[r],
                         sum->cols[hi].v.f[r]);
    }
  }
  g = cmp ? tl_table_col(cmp, "group") : -1, st = cmp ? tl_table_col(cmp, "statistic") : -1;
  int ca = cmp ? tl_table_col(cmp, "a") : -1, cb = cmp ? tl_table_col(cmp, "b") : -1, de = cmp ? tl_table_col(cmp, "delta") : -1;
  lo = cmp ? tl_table_col(cmp, "ci_lo") : -1, hi = cmp ? tl_table_col(cmp, "ci_hi") : -1;
  if (g >= 0 && st >= 0 && ca >= 0 && cb >= 0 && de >= 0 && lo >= 0 && hi >= 0) {
    tl_chart *c = tl_sec_chart(d, s, TL_CHART_FOREST, "paired differences a - b", "comparison", "delta");
    if (c) c->ref = 0;
    for (size_t r = 0; r < cmp->nrows; r++) {
      snprintf(lab, sizeof lab, "%s - %s (%s)", cmp->cols[ca].v.s[r], cmp->cols[cb].v.s[r], cmp->cols[st].v.s[r]);
      tl_chart_point_add(d, tl_chart_series_get(d, c, cmp->cols[g].v.s[r]), lab, cmp->cols[de].v.f[r], cmp->cols[lo].v.f[r],
                         cmp->cols[hi].v.f[r]);
    }
  }
}

/* A one-row parameters table as (key, value) rows. */
static void params_part(tl_doc *d, tl_section *s, const tl_table *p) {
  tl_rtable *t = tl_sec_table(d, s, "parameters", 2, KV_NAMES, KV_KINDS);
  for (int c = 0; p->nrows && c < p->ncols; c++) {
    char num[64];
    const tl_col *k = &p->cols[c];
    if (tl_col_is_str(k->type)) kv(d, t, k->name, k->v.s[0]);
    else {
      if (k->type == TL_COL_I64) snprintf(num, sizeof num, "%lld", (long long)k->v.i[0]);
      else { /* the shortest that reads back exactly */
        snprintf(num, sizeof num, "%.15g", k->v.f[0]);
        if (strtod(num, NULL) != k->v.f[0]) snprintf(num, sizeof num, "%.17g", k->v.f[0]);
      }
      kv(d, t, k->name, num);
    }
  }
}

/* The number in column `name` of the one-row parameters table p, or `dflt`. */
static double param_num(const tl_table *p, const char *name, double dflt) {
  int c = p && p->nrows == 1 ? tl_table_col(p, name) : -1;
  if (c < 0 || tl_col_is_str(p->cols[c].type)) return dflt;
  return p->cols[c].type == TL_COL_I64 ? (double)p->cols[c].v.i[0] : p->cols[c].v.f[0];
}

/* The agreement table's pairs, each with its confusion matrix (tally/report.h's study
 * builders: the tables `tally run` and `tally correlate` print). 0 when a builder could not
 * read the tables (the caller shows them generically). */
static int agreement_part(tl_doc *d, tl_section *s, const tl_table *ag, const tl_table *conf) {
  int ca = tl_table_col(ag, "a"), cb = tl_table_col(ag, "b");
  if (ca < 0 || cb < 0 || !tl_col_is_str(ag->cols[ca].type) || !tl_col_is_str(ag->cols[cb].type)) return 0;
  for (size_t r = 0; r < ag->nrows; r++) {
    const char *a = ag->cols[ca].v.s[r], *b = ag->cols[cb].v.s[r];
    if (r && !strcmp(a, ag->cols[ca].v.s[r - 1]) && !strcmp(b, ag->cols[cb].v.s[r - 1])) continue; /* same pair */
    if (!tl_study_agreement(d, s, ag, a, b)) return 0;
    if (*b && conf && !tl_study_confusion(d, s, conf, a, b) && tl_doc_ok(d)) return 0;
  }
  return 1;
}

/* The distinct statistics of the summary (first-seen order) when it has more than one group:
 * one by-group matrix each (x 100, the LAVE paper's layout). */
static void by_group_part(tl_doc *d, tl_section *s, const tl_table *sum) {
  int g = tl_table_col(sum, "group"), st = tl_table_col(sum, "statistic");
  if (g < 0 || st < 0 || !tl_col_is_str(sum->cols[g].type) || !tl_col_is_str(sum->cols[st].type)) return;
  int groups = 0;
  for (size_t r = 1; r < sum->nrows && !groups; r++) groups = strcmp(sum->cols[g].v.s[r], sum->cols[g].v.s[0]) != 0;
  for (size_t r = 0; groups && r < sum->nrows; r++) {
    const char *name = sum->cols[st].v.s[r];
    size_t q = 0;
    while (q < r && strcmp(sum->cols[st].v.s[q], name)) q++;
    if (q < r) continue;
    char title[300];
    snprintf(title, sizeof title, "%s x 100, by group", name);
    tl_study_by_group(d, s, sum, name, title);
  }
}

/* One study (/stats/<name>): parameters, summary (with the by-group matrices), comparisons,
 * system level, agreement with its confusion matrices (the tables the study printed when it
 * ran: tally/report.h's study builders), charts; the resamples left out. A table the builders
 * cannot read (another version's columns), or one they do not know, is shown generically. */
static tl_status study_part(const char *path, const char *name, tl_doc *d, tl_err *err) {
  char root[300], title[320];
  snprintf(root, sizeof root, "/stats/%s", name);
  snprintf(title, sizeof title, "study %s", name);
  tl_table **t = NULL;
  int n = 0;
  tl_status st = read_tables(path, root, &t, &n, err);
  tl_section *s = st ? NULL : tl_doc_section(d, title);
  enum { P, SUM, CMP, SYS, AG, CONF, RES, K };
  static const char *const LEAF[K] = {"params", "summary", "compare", "system/summary", "agreement", "confusion", "resamples"};
  const tl_table *k[K] = {NULL};
  for (int i = 0; s && i < n; i++) {
    const char *rel = t[i]->path + strlen(root) + (strlen(t[i]->path) > strlen(root)); /* below the study */
    for (int j = 0; j < K; j++)
      if (!strcmp(rel, LEAF[j])) k[j] = t[i];
  }
  int done[K] = {0}; /* shown by its builder (the resamples: never shown) */
  done[RES] = 1;
  if (s && (done[P] = k[P] && k[P]->nrows == 1)) params_part(d, s, k[P]);
  tl_study_fmt f = {(uint64_t)param_num(k[P], "resamples", 0), (int)param_num(k[P], "permutation", 1), 0};
  done[SUM] = s && k[SUM] && tl_study_summary(d, s, k[SUM], NULL, "summary");
  if (done[SUM]) by_group_part(d, s, k[SUM]);
  done[CMP] = s && k[CMP] && tl_study_compare(d, s, k[CMP], NULL, &f, "comparisons (paired bootstrap of a - b)");
  done[SYS] = s && k[SYS] && tl_study_summary(d, s, k[SYS], NULL, "system level (statistics over the systems' means)");
  done[AG] = done[CONF] = s && k[AG] && agreement_part(d, s, k[AG], k[CONF]);
  for (int i = 0; s && i < n; i++) { /* the rest generically */
    int shown = 0;
    for (int j = 0; j < K; j++) shown |= t[i] == k[j] && done[j];
    if (!shown) tl_doc_from_table(d, s, t[i], t[i]->path + strlen(root) + 1);
  }
  if (s) study_charts(d, s, k[SUM], k[CMP]);
  free_tables(t, n);
  return st ? st : tl_doc_ok(d);
}

static void free_names(char **v, int n) {
  for (int i = 0; i < n; i++) free(v[i]);
  free(v);
}

tl_status tl_report_file(const char *path, tl_doc **out, tl_err *err) {
  *out = NULL;
  tl_status st = tl_h5_check_output(path, err);
  if (st) return st;
  char *jn = NULL;
  tl_err e2;
  tl_h5_read_attr_str(path, "job_name", &jn, &e2);
  char title[400];
  snprintf(title, sizeof title, "tally report: %s", jn ? jn : "run");
  free(jn);
  tl_doc *d = tl_doc_new(title);
  if (!d) return TL_ENOMEM;
  tl_section *s = tl_doc_section(d, "run");
  run_facts(path, d, s);
  run_inputs(path, d, s);
  char **names = NULL;
  int n = 0;
  st = rpt_children(path, "/metrics", &names, &n, err);
  for (int i = 0; !st && i < n; i++) {
    st = bench_part(path, names[i], d, err);
    if (!st) st = rpt_examples(path, names[i], d, err); /* the parser audit's diverging units */
  }
  free_names(names, n), names = NULL, n = 0;
  if (!st) st = rpt_children(path, "/stats", &names, &n, err);
  for (int i = 0; !st && i < n; i++) st = study_part(path, names[i], d, err);
  free_names(names, n);
  if (!st) st = engine_part(path, d, err);
  tl_table **t = NULL;
  if (!st && tl_h5_has_column(path, "/input_problems", "kind")) st = read_tables(path, "/input_problems", &t, &n, err);
  else n = 0;
  if (!st && n == 1 && t[0]->nrows) tl_doc_from_table(d, tl_doc_section(d, "bad input lines"), t[0], "input_problems");
  if (t) free_tables(t, n);
  if (!st) st = tl_doc_ok(d);
  if (st) tl_doc_free(d), d = NULL;
  *out = d;
  return st;
}

int tl_report_print(const tl_doc *d, tl_report_fmt f, const char *outp, const char *cmd) {
  tl_buf b;
  tl_buf_init(&b);
  tl_err err = {{0}};
  tl_out_stream os;
  tl_status st = tl_doc_render(d, f, &b);
  if (!st) st = tl_out_stream_open(&os, outp ? outp : "-", &err);
  if (st) {
    tl_buf_release(&b);
    fprintf(stderr, "%s: %s\n", cmd, err.msg[0] ? err.msg : tl_strerror(st));
    return TL_EXIT_FAIL;
  }
  int ok = fwrite(b.data, 1, b.len, os.f) == b.len;
  tl_buf_release(&b);
  if (tl_out_stream_close(&os, ok, &err) != TL_OK || !ok) {
    fprintf(stderr, "%s: %s\n", cmd, err.msg[0] ? err.msg : "cannot write the report");
    return TL_EXIT_FAIL;
  }
  return TL_EXIT_OK;
}

int tl_cmd_report(int argc, char **argv) {
  const char *fmt = "text", *outp = NULL;
  tl_opt_begin();
  int c;
  while ((c = getopt_long(argc, argv, ":ho:", tl_opts_report, NULL)) != -1) {
    switch (c) {
    case O_FORMAT: fmt = optarg; break;
    case 'o':
    case O_OUTPUT:
      if (tl_opt_nonempty(CMD, "--output", optarg)) return TL_EXIT_USAGE;
      outp = optarg;
      break;
    case 'h':
    case O_HELP: return tl_usage_help(CMD, tl_usage_report);
    default: return tl_usage_bad_option(CMD, c, argv, tl_usage_report);
    }
  }
  if (optind + 1 != argc) {
    fprintf(stderr, "%s: %s\n", CMD, optind < argc ? "one run file only" : "the run file is missing");
    return tl_usage_error(tl_usage_report);
  }
  const char *path = argv[optind];
  int f = tl_opt_choice(CMD, "--format", fmt, tl_report_fmt_names, 6);
  if (f < 0) return TL_EXIT_USAGE;
  tl_err err = {{0}};
  tl_path_role roles[1] = {{path, "the run file"}};
  if (outp && tl_path_is_std(outp)) outp = NULL;
  tl_status st = outp ? tl_out_check_inputs(outp, "the report", roles, 1, &err) : tl_stdout_check_inputs(roles, 1, &err);
  if (!st && outp) st = tl_out_check_stream_place(outp, &err);
  if (st) return fprintf(stderr, "%s: %s\n", CMD, err.msg), tl_exit_code(st);
  tl_doc *d = NULL;
  st = tl_report_file(path, &d, &err);
  if (st) {
    fprintf(stderr, "%s: %s\n", CMD, err.msg[0] ? err.msg : tl_strerror(st));
    return st == TL_EIO || st == TL_EINPUT ? TL_EXIT_BAD_INPUT : TL_EXIT_FAIL;
  }
  int rc = tl_report_print(d, (tl_report_fmt)f, outp, CMD);
  tl_doc_free(d);
  return rc;
}
