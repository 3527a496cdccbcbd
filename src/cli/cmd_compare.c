/* cmd_compare.c - `tally compare RUN.h5 --models A,B`: a paired comparison of two models on the
 * units they share in a run's item table (docs/COMPARE.md).
 *
 * An item is a unit key without its model and seed (the id, and the turn where the table has
 * one). Units without a score (a status missing or engine_error, or a NaN metric) are left out.
 * For each item both models scored, a_i and b_i are the model's mean over its seeds of the item:
 * one cluster per item, so repeated seeds are never counted as independent items. Reported per
 * group (--by) and overall:
 *   - the mean difference a - b with a percentile CI from the paired bootstrap over items
 *     (tl_paired_boot: resamples keyed by (seed, r), the same numbers on any machine) and its
 *     p-value 2 min(#diff* <= 0, #diff* >= 0) / B;
 *   - for a 0/1 metric, McNemar's exact test over the (item, seed) pairs both scored, with the
 *     pairs that flip each way and the first examples of each (in the table's key order). It
 *     assumes independent pairs: with several seeds per item they are not (the bootstrap is the
 *     test that holds then). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "h5_read.h"
#include "tally/stats.h"
#include "tally/str.h"
#include "tally/strmap.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: tally compare RUN.h5 --models A,B [options]\n"
          "  --benchmark NAME    the item table /items/NAME (default: the only benchmark in the file)\n"
          "  --metric COL        the per-unit score (defaults: spatialeval correct_strict, vqa vqa_accuracy,\n"
          "                      mtbench101 rating)\n"
          "  --by COL            also per value of COL (defaults: task; vqa dataset); --by '' for none\n"
          "  --status COL        units whose COL is missing or engine_error are left out (defaults:\n"
          "                      status_strict, vqa_status, status)\n"
          "  --resamples B       paired bootstrap resamples over items (default 2000)\n"
          "  --seed S            resample r draws from Philox keyed by (S, r) (default 0)\n"
          "  --ci LEVEL          confidence level (default 0.95)\n"
          "  --examples K        items listed for each flip direction (default 3)\n"
          "exit codes: 0 ok, 1 runtime failure, 2 usage (a model or column not in the file)\n");
}

static const struct {
  const char *bench, *metric, *by, *status;
} DEFAULTS[] = {{"spatialeval", "correct_strict", "task", "status_strict"},
                {"vqa", "vqa_accuracy", "dataset", "vqa_status"},
                {"mtbench101", "rating", "task", "status"}};

typedef struct {
  double sum[2];
  int n[2];
  size_t group;
  size_t first_row; /* key order */
} item_t;

typedef struct {
  size_t item;
  double v[2];
  int has[2];
} pair_t; /* one (item, seed) */

typedef struct {
  const char *name;
  double *a, *b;
  uint32_t n;
  int64_t flip_ab, flip_ba, same; /* (item, seed) pairs: A right B wrong, A wrong B right, equal */
  size_t ex_ab[16], ex_ba[16];
  int nex_ab, nex_ba;
} group_t;

static int in_list(const char *v, const char *a, const char *b) { return !strcmp(v, a) ? 0 : !strcmp(v, b) ? 1 : -1; }

int tl_cmd_compare(int argc, char **argv) {
  static const char *const CMD = "tally compare";
  const char *bench = NULL, *metric = NULL, *by = NULL, *status = NULL, *models = NULL;
  uint64_t B = 2000, seed = 0;
  double level = 0.95;
  int examples = 3;
  enum { O_MODELS = 1, O_BENCH, O_METRIC, O_BY, O_STATUS, O_B, O_SEED, O_CI, O_EX, O_HELP };
  static const struct option LONG[] = {{"models", required_argument, NULL, O_MODELS},
                                       {"benchmark", required_argument, NULL, O_BENCH},
                                       {"metric", required_argument, NULL, O_METRIC},
                                       {"by", required_argument, NULL, O_BY},
                                       {"status", required_argument, NULL, O_STATUS},
                                       {"resamples", required_argument, NULL, O_B},
                                       {"seed", required_argument, NULL, O_SEED},
                                       {"ci", required_argument, NULL, O_CI},
                                       {"examples", required_argument, NULL, O_EX},
                                       {"help", no_argument, NULL, O_HELP},
                                       {NULL, 0, NULL, 0}};
  opterr = 0;
  optind = 1;
  int ch;
  uint64_t ex = 3;
  while ((ch = getopt_long(argc, argv, ":", LONG, NULL)) != -1) {
    switch (ch) {
    case O_MODELS: models = optarg; break;
    case O_BENCH: bench = optarg; break;
    case O_METRIC: metric = optarg; break;
    case O_BY: by = optarg; break;
    case O_STATUS: status = optarg; break;
    case O_B:
      if (tl_opt_u64(CMD, "--resamples", optarg, 0, 10000000, &B)) return 2;
      break;
    case O_SEED:
      if (tl_opt_u64(CMD, "--seed", optarg, 0, UINT64_MAX, &seed)) return 2;
      break;
    case O_CI:
      if (tl_opt_open_unit(CMD, "--ci", optarg, &level)) return 2;
      break;
    case O_EX:
      if (tl_opt_u64(CMD, "--examples", optarg, 0, 16, &ex)) return 2;
      examples = (int)ex;
      break;
    case O_HELP: usage(stdout); return 0;
    default:
      tl_opt_unknown(CMD, ch, optopt, argv[optind - 1]);
      usage(stderr);
      return 2;
    }
  }
  if (optind != argc - 1 || !models) {
    usage(stderr);
    return 2;
  }
  const char *path = argv[optind];
  char ma[256], mb[256];
  const char *comma = strchr(models, ',');
  if (!comma || strchr(comma + 1, ',') || comma == models || !comma[1] || (size_t)(comma - models) >= sizeof ma ||
      strlen(comma + 1) >= sizeof mb) {
    fprintf(stderr, "%s: --models wants two model names, A,B\n", CMD);
    return 2;
  }
  snprintf(ma, sizeof ma, "%.*s", (int)(comma - models), models);
  snprintf(mb, sizeof mb, "%s", comma + 1);
  if (!strcmp(ma, mb)) return fprintf(stderr, "%s: --models names '%s' twice\n", CMD, ma), 2;
  char grp[300];
  { /* a file that is not a readable output of tally: one line saying why */
    tl_err oerr = {{0}};
    if (tl_h5_check_output(path, &oerr)) return fprintf(stderr, "%s: %s\n", CMD, oerr.msg), 1;
  }
  if (!bench) { /* the only benchmark of the file */
    int found = 0;
    for (size_t i = 0; i < sizeof DEFAULTS / sizeof *DEFAULTS; i++) {
      snprintf(grp, sizeof grp, "/items/%s", DEFAULTS[i].bench);
      if (tl_h5_has_column(path, grp, "model")) {
        bench = DEFAULTS[i].bench;
        found++;
      }
    }
    if (found != 1) {
      fprintf(stderr, "%s: %s: %s; give --benchmark\n", CMD, path, found ? "several benchmarks" : "no known benchmark table");
      return found ? 2 : 1;
    }
  }
  for (size_t i = 0; i < sizeof DEFAULTS / sizeof *DEFAULTS; i++)
    if (!strcmp(bench, DEFAULTS[i].bench)) {
      if (!metric) metric = DEFAULTS[i].metric;
      if (!by) by = DEFAULTS[i].by;
      if (!status) status = DEFAULTS[i].status;
    }
  if (!metric) return fprintf(stderr, "%s: benchmark '%s' has no default metric: give --metric\n", CMD, bench), 2;
  snprintf(grp, sizeof grp, "/items/%s", bench);
  const int has_turn = tl_h5_has_column(path, grp, "turn");
  const char *cols[7];
  int nc = 0, c_by = -1, c_st = -1, c_turn = -1;
  cols[nc++] = "id";
  cols[nc++] = "model";
  cols[nc++] = "seed";
  cols[nc++] = metric;
  if (has_turn) cols[c_turn = nc++] = "turn";
  if (by && *by) cols[c_by = nc++] = by;
  if (status && *status) cols[c_st = nc++] = status;
  tl_table *t = NULL;
  tl_err err = {{0}};
  tl_status st = tl_h5_read_table(path, grp, cols, nc, &t, &err);
  if (st) {
    fprintf(stderr, "%s: %s\n", CMD, err.msg);
    return st == TL_EINPUT ? 2 : 1;
  }
  const tl_col *cm = &t->cols[3];
  if (tl_col_is_str(cm->type)) {
    fprintf(stderr, "%s: column '%s' is not numeric\n", CMD, metric);
    tl_table_free(t);
    return 2;
  }
  int seen[2] = {0, 0};
  for (size_t r = 0; r < t->nrows; r++) {
    int m = in_list(t->cols[1].v.s[r], ma, mb);
    if (m >= 0) seen[m] = 1;
  }
  if (!seen[0] || !seen[1]) {
    fprintf(stderr, "%s: %s has no model '%s'; its models:", CMD, grp, !seen[0] ? ma : mb);
    tl_strmap ms;
    tl_strmap_init(&ms);
    for (size_t r = 0; r < t->nrows; r++) {
      bool ins = false;
      tl_strmap_put(&ms, t->cols[1].v.s[r], 0, &ins, NULL);
      if (ins) fprintf(stderr, " %s", t->cols[1].v.s[r]);
    }
    fprintf(stderr, "\n");
    tl_strmap_release(&ms);
    tl_table_free(t);
    return 2;
  }
  /* items, (item, seed) pairs, groups */
  tl_strmap item_of, pair_of, group_of;
  tl_strmap_init(&item_of);
  tl_strmap_init(&pair_of);
  tl_strmap_init(&group_of);
  item_t *items = calloc(t->nrows + 1, sizeof *items);
  pair_t *pairs = calloc(t->nrows + 1, sizeof *pairs);
  group_t *groups = calloc(t->nrows + 2, sizeof *groups);
  size_t ni = 0, np = 0, ng = 1;
  int binary = 1;
  int64_t left_out = 0;
  tl_buf k;
  tl_buf_init(&k);
  if (!items || !pairs || !groups) st = TL_ENOMEM;
  if (!st) groups[0].name = "all";
  for (size_t r = 0; !st && r < t->nrows; r++) {
    int m = in_list(t->cols[1].v.s[r], ma, mb);
    if (m < 0) continue;
    double v = cm->type == TL_COL_I64 ? (double)cm->v.i[r] : cm->v.f[r];
    const char *sv = c_st >= 0 ? t->cols[c_st].v.s[r] : "";
    if (isnan(v) || !strcmp(sv, "missing") || !strcmp(sv, "engine_error")) {
      left_out++;
      continue;
    }
    if (v != 0 && v != 1) binary = 0;
    tl_buf_reset(&k);
    tl_buf_puts(&k, t->cols[0].v.s[r]);
    if (c_turn >= 0) tl_buf_printf(&k, "\x1f%lld", (long long)t->cols[c_turn].v.i[r]);
    size_t it;
    bool ins;
    if ((st = tl_strmap_put(&item_of, k.data, ni, &ins, &it))) break;
    if (ins) {
      it = ni++;
      items[it].first_row = r;
      size_t g = 0;
      if (c_by >= 0) {
        const char *gv = t->cols[c_by].v.s[r];
        bool gins;
        if ((st = tl_strmap_put(&group_of, gv, ng, &gins, &g))) break;
        if (gins) {
          g = ng++;
          groups[g].name = tl_strmap_stored_key(&group_of, gv);
        }
      }
      items[it].group = g;
    }
    items[it].sum[m] += v;
    items[it].n[m]++;
    tl_buf_printf(&k, "\x1f%lld", (long long)t->cols[2].v.i[r]);
    size_t pi;
    if ((st = tl_strmap_put(&pair_of, k.data, np, &ins, &pi))) break;
    if (ins) {
      pi = np++;
      pairs[pi].item = it;
    }
    pairs[pi].v[m] = v;
    pairs[pi].has[m] = 1;
  }
  tl_buf_release(&k);
  /* per group: the items both models scored */
  for (size_t g = 0; !st && g < ng; g++)
    if (!(groups[g].a = malloc((ni + 1) * sizeof(double))) || !(groups[g].b = malloc((ni + 1) * sizeof(double)))) st = TL_ENOMEM;
  for (size_t i = 0; !st && i < ni; i++) {
    if (!items[i].n[0] || !items[i].n[1]) continue;
    const size_t gs[2] = {0, items[i].group};
    for (int q = 0; q < (gs[1] ? 2 : 1); q++) {
      group_t *G = &groups[gs[q]];
      G->a[G->n] = items[i].sum[0] / items[i].n[0];
      G->b[G->n] = items[i].sum[1] / items[i].n[1];
      G->n++;
    }
  }
  for (size_t p = 0; !st && p < np; p++) {
    if (!pairs[p].has[0] || !pairs[p].has[1]) continue;
    const size_t it = pairs[p].item, gs[2] = {0, items[it].group};
    for (int q = 0; q < (gs[1] ? 2 : 1); q++) {
      group_t *G = &groups[gs[q]];
      if (pairs[p].v[0] > pairs[p].v[1]) {
        G->flip_ab++;
        if (G->nex_ab < examples && (G->nex_ab == 0 || G->ex_ab[G->nex_ab - 1] != it)) G->ex_ab[G->nex_ab++] = it;
      } else if (pairs[p].v[0] < pairs[p].v[1]) {
        G->flip_ba++;
        if (G->nex_ba < examples && (G->nex_ba == 0 || G->ex_ba[G->nex_ba - 1] != it)) G->ex_ba[G->nex_ba++] = it;
      } else {
        G->same++;
      }
    }
  }
  int rc = 0;
  if (st) {
    fprintf(stderr, "%s: out of memory\n", CMD);
    rc = 1;
  } else {
    printf("paired comparison on /items/%s of %s: A = %s, B = %s, metric %s%s%s\n", bench, path, ma, mb, metric,
           c_by >= 0 ? ", by " : "", c_by >= 0 ? by : "");
    printf("items both scored (seeds of an item averaged: one cluster each); %lld units left out (no score)\n",
           (long long)left_out);
    printf("diff = mean A - mean B; %.0f%% CI and p_boot from the paired bootstrap over items (%llu resamples, seed "
           "%llu)%s\n",
           100 * level, (unsigned long long)B, (unsigned long long)seed,
           binary ? "; McNemar exact over (item, seed) pairs (assumes independent pairs: not so with several "
                    "seeds per item - then trust the bootstrap)"
                  : "");
    printf("%-16s %6s %8s %8s %8s  %-19s %8s", "group", "items", "mean A", "mean B", "diff", "CI", "p_boot");
    if (binary) printf(" %6s %6s %9s", "A>B", "B>A", "McNemar");
    printf("\n");
    for (size_t g = 0; g < ng; g++) {
      group_t *G = &groups[g];
      tl_paired_res pr;
      tl_status bs = G->n ? tl_paired_boot(G->a, G->b, G->n, B, seed, level, &pr) : TL_EINPUT;
      if (bs == TL_ENOMEM) {
        fprintf(stderr, "%s: out of memory\n", CMD);
        rc = 1;
        break;
      }
      if (bs) {
        printf("%-16.16s %6u %8s\n", G->name, G->n, "(no item both scored)");
        continue;
      }
      char ci[48], pb[32];
      snprintf(ci, sizeof ci, "[%.4f, %.4f]", pr.ci_lo, pr.ci_hi);
      if (isnan(pr.p_boot)) snprintf(pb, sizeof pb, "-");
      else if (pr.p_boot == 0) snprintf(pb, sizeof pb, "<%.4f", 1.0 / (double)B); /* no resample on the other side */
      else snprintf(pb, sizeof pb, "%.4f", pr.p_boot);
      printf("%-16.16s %6u %8.4f %8.4f %+8.4f  %-19s %8s", G->name, G->n, pr.mean_a, pr.mean_b, pr.diff, ci, pb);
      if (binary)
        printf(" %6lld %6lld %9.4g", (long long)G->flip_ab, (long long)G->flip_ba, tl_mcnemar_exact_p(G->flip_ab, G->flip_ba));
      printf("\n");
    }
    if (examples && rc == 0)
      for (size_t g = 0; g < ng; g++) {
        group_t *G = &groups[g];
        if (!G->nex_ab && !G->nex_ba) continue;
        printf("%s: A > B on", G->name);
        for (int e = 0; e < G->nex_ab; e++) printf(" %s", t->cols[0].v.s[items[G->ex_ab[e]].first_row]);
        if (!G->nex_ab) printf(" -");
        printf("; B > A on");
        for (int e = 0; e < G->nex_ba; e++) printf(" %s", t->cols[0].v.s[items[G->ex_ba[e]].first_row]);
        if (!G->nex_ba) printf(" -");
        printf("\n");
      }
  }
  for (size_t g = 0; groups && g < ng; g++) {
    free(groups[g].a);
    free(groups[g].b);
  }
  free(groups);
  free(items);
  free(pairs);
  tl_strmap_release(&item_of);
  tl_strmap_release(&pair_of);
  tl_strmap_release(&group_of);
  tl_table_free(t);
  if (fflush(stdout) != 0 && !rc) rc = 1;
  return rc;
}
