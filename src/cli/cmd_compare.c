/* cmd_compare.c - `tally compare RUN.h5 --models A,B`: a paired comparison of two models on the
 * units they share in a run's item table (docs/COMPARE.md).
 *
 * An item is a unit key without its model and seed (the id, and the turn where the table has
 * one). A unit without a score (a status missing or engine_error, or a NaN metric) counts 0 when
 * the metric is an accuracy (every value of the two models in [0, 1]: the one missing-answer
 * policy of the summaries, docs/OUTPUT.md), else it is left out; either way each model's counts
 * are printed. MT-Bench-101 compares dialogue scores, as the benchmark does: an item is a
 * dialogue, its score in a seed the least rating over its judged turns, under both policies for
 * a turn without a rating (exclude: it leaves the minimum; fail: the dialogue has no score).
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
#include "tally/registry.h"
#include "tally/stats.h"
#include "tally/str.h"
#include "tally/strmap.h"
#include "usage.h"

typedef struct { /* one item: a unit key without model and seed (MT-Bench-101: a dialogue) */
  double sum[2];  /* per model: the sum of its values over its seeds (under the policy in use) */
  int n[2];       /* and their count */
  size_t group;
} item_t;

typedef struct { /* one (item, seed) */
  size_t item;
  size_t row;        /* its first row of the table (key order) */
  double v[2];       /* per model: its value (MT-Bench-101: the dialogue's least rating) */
  int has[2];        /* the model has rows for it */
  int def[2];        /* the model has a value under the policy in use */
  int rated[2], unrated[2]; /* MT-Bench-101: the dialogue's turns with and without a rating */
  long long turn[2]; /* MT-Bench-101: the (1-based) turn of the least rating */
} pair_t;

typedef struct {
  const char *name;
  double *a, *b;  /* [n] the models' item means, over the items both have */
  uint32_t n;
  int64_t flip_ab, flip_ba, same; /* (item, seed) pairs: A higher, B higher, equal */
  size_t ex_ab[16], ex_ba[16];    /* pair indices, key order */
  int nex_ab, nex_ba;
} group_t;

typedef struct { /* one model's units (MT-Bench-101: judged turns) */
  int64_t n, missing, engine_error, unparsed;
  int64_t zeroed, left_out; /* units without a score counted 0 (an accuracy) / left out */
} counts_t;

/* 1 when an example of item `it` is among ex[0..n) (pair indices): an item is listed once. */
static int listed(const pair_t *pairs, const size_t *ex, int n, size_t it) {
  for (int i = 0; i < n; i++)
    if (pairs[ex[i]].item == it) return 1;
  return 0;
}

static int in_list(const char *v, const char *a, const char *b) { return !strcmp(v, a) ? 0 : !strcmp(v, b) ? 1 : -1; }

enum { O_MODELS = 1, O_BENCH, O_METRIC, O_BY, O_STATUS, O_B, O_SEED, O_CI, O_EX, O_HELP };
const struct option tl_opts_compare[] = {{"models", required_argument, NULL, O_MODELS},
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

int tl_cmd_compare(int argc, char **argv) {
  static const char *const CMD = "tally compare";
  const char *bench = NULL, *metric = NULL, *by = NULL, *status = NULL, *models = NULL;
  uint64_t B = 2000, seed = 0;
  double level = 0.95;
  int examples = 3;
  tl_opt_begin();
  int ch;
  uint64_t ex = 3;
  while ((ch = getopt_long(argc, argv, ":h", tl_opts_compare, NULL)) != -1) {
    switch (ch) {
    case O_MODELS: models = optarg; break;
    case O_BENCH: bench = optarg; break;
    case O_METRIC: metric = optarg; break;
    case O_BY: by = optarg; break;
    case O_STATUS: status = optarg; break;
    case O_B:
      if (tl_opt_u64(CMD, "--resamples", optarg, 2, 10000000, &B)) return TL_EXIT_USAGE;
      break;
    case O_SEED:
      if (tl_opt_u64(CMD, "--seed", optarg, 0, UINT64_MAX, &seed)) return TL_EXIT_USAGE;
      break;
    case O_CI:
      if (tl_opt_open_unit(CMD, "--ci", optarg, &level)) return TL_EXIT_USAGE;
      break;
    case O_EX:
      if (tl_opt_u64(CMD, "--examples", optarg, 0, 16, &ex)) return TL_EXIT_USAGE;
      examples = (int)ex;
      break;
    case 'h':
    case O_HELP: return tl_usage_help(CMD, tl_usage_compare);
    default: return tl_usage_bad_option(CMD, ch, argv, tl_usage_compare);
    }
  }
  if (optind != argc - 1 || !models) return tl_usage_error(tl_usage_compare);
  const char *path = argv[optind];
  char ma[256], mb[256];
  const char *comma = strchr(models, ',');
  if (!comma || strchr(comma + 1, ',') || comma == models || !comma[1] || (size_t)(comma - models) >= sizeof ma ||
      strlen(comma + 1) >= sizeof mb) {
    fprintf(stderr, "%s: --models wants two model names, A,B\n", CMD);
    return TL_EXIT_USAGE;
  }
  snprintf(ma, sizeof ma, "%.*s", (int)(comma - models), models);
  snprintf(mb, sizeof mb, "%s", comma + 1);
  if (!strcmp(ma, mb)) return fprintf(stderr, "%s: --models names '%s' twice\n", CMD, ma), TL_EXIT_USAGE;
  char grp[300];
  { /* a file that is not a readable output of tally: one line saying why */
    tl_err oerr = {{0}};
    if (tl_h5_check_output(path, &oerr)) return fprintf(stderr, "%s: %s\n", CMD, oerr.msg), TL_EXIT_FAIL;
  }
  { /* the defaults come from the benchmark modules (tl_compare_defaults) */
    tl_err rerr = {{0}};
    if (tl_bench_registry_check(&rerr)) return fprintf(stderr, "%s: %s\n", CMD, rerr.msg), 1;
  }
  if (!bench) { /* the only benchmark of the file */
    int found = 0;
    for (size_t i = 0; i < tl_bench_count(); i++) {
      if (!tl_bench_at(i)->compare) continue;
      snprintf(grp, sizeof grp, "/items/%s", tl_bench_at(i)->name);
      if (tl_h5_has_column(path, grp, "model")) {
        bench = tl_bench_at(i)->name;
        found++;
      }
    }
    if (found != 1) {
      fprintf(stderr, "%s: %s: %s; give --benchmark\n", CMD, path, found ? "several benchmarks" : "no known benchmark table");
      return found ? TL_EXIT_USAGE : TL_EXIT_FAIL;
    }
  }
  const tl_compare_defaults *def = tl_bench_compare_defaults(bench);
  if (def) {
    if (!metric) metric = def->metric;
    if (!by) by = def->by;
    if (!status) status = def->status;
  }
  if (!metric) return fprintf(stderr, "%s: benchmark '%s' has no default metric: give --metric\n", CMD, bench), TL_EXIT_USAGE;
  snprintf(grp, sizeof grp, "/items/%s", bench);
  const int has_turn = tl_h5_has_column(path, grp, "turn");
  const char *cols[8];
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
    return st == TL_EINPUT ? TL_EXIT_USAGE : TL_EXIT_FAIL; /* a column not in the file: usage */
  }
  const tl_col *cm = &t->cols[3];
  if (tl_col_is_str(cm->type)) {
    fprintf(stderr, "%s: column '%s' is not numeric\n", CMD, metric);
    tl_table_free(t);
    return TL_EXIT_USAGE;
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
    return TL_EXIT_USAGE;
  }
  const int dlg = def && def->dialogue && c_turn >= 0; /* dialogue scores, min over turns */
  /* the rule column beside the status column (status -> rule, <parser>_status -> <parser>_rule):
   * MT-Bench-101 tells a turn without an answer (rule "") from one without a judgment by it */
  int c_rule = -1;
  tl_table *rt = NULL;
  if (dlg && c_st >= 0) {
    size_t sl = strlen(status);
    char rc_name[300];
    if (sl >= 6 && sl - 6 + 5 < sizeof rc_name && !strcmp(status + sl - 6, "status")) {
      snprintf(rc_name, sizeof rc_name, "%.*srule", (int)(sl - 6), status);
      const char *rcols[1] = {rc_name};
      if (tl_h5_has_column(path, grp, rc_name) && tl_h5_read_table(path, grp, rcols, 1, &rt, &err) == TL_OK &&
          rt->nrows == t->nrows && tl_col_is_str(rt->cols[0].type))
        c_rule = 0;
    }
  }
  /* the policy for units without a score: an accuracy (every value of the two models in [0, 1])
   * counts them 0, as the summaries do; any other metric leaves them out (counted) */
  int binary = 1, accuracy = 1;
  for (size_t r = 0; r < t->nrows; r++) {
    if (in_list(t->cols[1].v.s[r], ma, mb) < 0) continue;
    double v = cm->type == TL_COL_I64 ? (double)cm->v.i[r] : cm->v.f[r];
    if (isnan(v)) continue;
    if (v != 0 && v != 1) binary = 0;
    if (!(v >= 0 && v <= 1)) accuracy = 0;
  }
  if (dlg) binary = accuracy = 0;
  /* items, (item, seed) pairs, groups; per model its units */
  tl_strmap item_of, pair_of, group_of;
  tl_strmap_init(&item_of);
  tl_strmap_init(&pair_of);
  tl_strmap_init(&group_of);
  item_t *items = calloc(t->nrows + 1, sizeof *items);
  pair_t *pairs = calloc(t->nrows + 1, sizeof *pairs);
  group_t *groups = calloc(t->nrows + 2, sizeof *groups);
  counts_t cnt[2];
  memset(cnt, 0, sizeof cnt);
  size_t ni = 0, np = 0, ng = 1;
  tl_buf k;
  tl_buf_init(&k);
  if (!items || !pairs || !groups) st = TL_ENOMEM;
  if (!st) groups[0].name = "all";
  for (size_t r = 0; !st && r < t->nrows; r++) {
    int m = in_list(t->cols[1].v.s[r], ma, mb);
    if (m < 0) continue;
    double v = cm->type == TL_COL_I64 ? (double)cm->v.i[r] : cm->v.f[r];
    const char *sv = c_st >= 0 ? t->cols[c_st].v.s[r] : "";
    const int ee = !strcmp(sv, "engine_error"),
              miss = !strcmp(sv, "missing") && !(c_rule >= 0 && !strcmp(rt->cols[0].v.s[r], "no_judgment"));
    const int scored = !isnan(v) && !ee && !miss && (c_st < 0 || !dlg || !strcmp(sv, "ok"));
    counts_t *C = &cnt[m];
    C->n++;
    if (ee) C->engine_error++;
    else if (miss) C->missing++;
    else if (c_st >= 0 ? strcmp(sv, "ok") != 0 : isnan(v)) C->unparsed++;
    if (!dlg && !scored) {
      if (!accuracy) {
        C->left_out++;
        continue;
      }
      v = 0; /* the one missing-answer policy of the summaries */
      C->zeroed++;
    }
    tl_buf_reset(&k);
    tl_buf_puts(&k, t->cols[0].v.s[r]);
    if (c_turn >= 0 && !dlg) tl_buf_printf(&k, "\x1f%lld", (long long)t->cols[c_turn].v.i[r]);
    size_t it;
    bool ins;
    if ((st = tl_strmap_put(&item_of, k.data, ni, &ins, &it))) break;
    if (ins) {
      it = ni++;
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
    tl_buf_printf(&k, "\x1f%lld", (long long)t->cols[2].v.i[r]);
    size_t pi;
    if ((st = tl_strmap_put(&pair_of, k.data, np, &ins, &pi))) break;
    if (ins) {
      pi = np++;
      pairs[pi].item = it;
      pairs[pi].row = r;
    }
    pair_t *P = &pairs[pi];
    P->has[m] = 1;
    if (!dlg) {
      P->v[m] = v;
    } else if (scored) { /* a rated turn: the dialogue's least rating so far? */
      if (!P->rated[m] || v < P->v[m]) {
        P->v[m] = v;
        P->turn[m] = (long long)t->cols[c_turn].v.i[r];
      }
      P->rated[m]++;
    } else {
      P->unrated[m]++;
    }
  }
  tl_buf_release(&k);
  for (size_t g = 0; !st && g < ng; g++)
    if (!(groups[g].a = malloc((ni + 1) * sizeof(double))) || !(groups[g].b = malloc((ni + 1) * sizeof(double)))) st = TL_ENOMEM;
  int rc = TL_EXIT_OK;
  if (st) {
    fprintf(stderr, "%s: out of memory\n", CMD);
    rc = TL_EXIT_FAIL;
  } else {
    printf("paired comparison on %s of %s: A = %s, B = %s, %s %s%s%s%s\n", grp, path, ma, mb,
           dlg ? "dialogue scores, the least" : "metric", metric, dlg ? " over a dialogue's judged turns" : "",
           c_by >= 0 ? ", by " : "", c_by >= 0 ? by : "");
    printf("%s per model (answered = n - missing - engine_error; unparsed: answered, %s):\n",
           dlg ? "judged turns" : "units", dlg ? "no rating" : "the status is not ok or the metric has no value");
    for (int m = 0; m < 2; m++)
      printf("  %s %s: n %lld, answered %lld, missing %lld, engine_error %lld, unparsed %lld\n", m ? "B" : "A",
             m ? mb : ma, (long long)cnt[m].n, (long long)(cnt[m].n - cnt[m].missing - cnt[m].engine_error),
             (long long)cnt[m].missing, (long long)cnt[m].engine_error, (long long)cnt[m].unparsed);
    if (!dlg && accuracy)
      printf("a unit without a score (missing, engine_error, no value) counts 0, as in the summaries: A %lld, B %lld "
             "units\n", (long long)cnt[0].zeroed, (long long)cnt[1].zeroed);
    else if (!dlg)
      printf("units without a score (missing, engine_error, no value) are left out (the metric is not an accuracy "
             "in [0, 1]): A %lld, B %lld units\n", (long long)cnt[0].left_out, (long long)cnt[1].left_out);
    printf("diff = mean A - mean B over the %s both have%s (an item's seeds averaged: one cluster each); %.0f%% CI and "
           "p_boot from the paired bootstrap over them (%llu resamples, seed %llu); A>B, B>A: (%s, seed) pairs%s\n",
           dlg ? "dialogues" : "items", dlg ? " a score for" : "", 100 * level, (unsigned long long)B,
           (unsigned long long)seed, dlg ? "dialogue" : "item",
           binary ? "; McNemar exact over them (assumes independent pairs: not so with several seeds per item - "
                    "then trust the bootstrap)"
                  : "");
  }
  int wg = 5; /* the group column: the longest name, never cut */
  for (size_t g = 0; g < ng && groups; g++)
    if (groups[g].name && (int)strlen(groups[g].name) > wg) wg = (int)strlen(groups[g].name);
  for (int pol = 0; !rc && pol < (dlg ? 2 : 1); pol++) {
    /* each model's value of a pair under this policy (dialogues: exclude 0, fail 1) */
    for (size_t i = 0; i < ni; i++) items[i].sum[0] = items[i].sum[1] = 0, items[i].n[0] = items[i].n[1] = 0;
    for (size_t g = 0; g < ng; g++) {
      group_t *G = &groups[g];
      G->n = 0;
      G->flip_ab = G->flip_ba = G->same = 0;
      G->nex_ab = G->nex_ba = 0;
    }
    int64_t unscored[2] = {0, 0}, have[2] = {0, 0};
    for (size_t p = 0; p < np; p++) {
      pair_t *P = &pairs[p];
      for (int m = 0; m < 2; m++) {
        P->def[m] = P->has[m] && (!dlg || (P->rated[m] && (pol == 0 || !P->unrated[m])));
        have[m] += P->has[m];
        if (P->has[m] && !P->def[m]) unscored[m]++;
        if (!P->def[m]) continue;
        items[P->item].sum[m] += P->v[m];
        items[P->item].n[m]++;
      }
    }
    for (size_t i = 0; i < ni; i++) {
      if (!items[i].n[0] || !items[i].n[1]) continue;
      const size_t gs[2] = {0, items[i].group};
      for (int q = 0; q < (gs[1] ? 2 : 1); q++) {
        group_t *G = &groups[gs[q]];
        G->a[G->n] = items[i].sum[0] / items[i].n[0];
        G->b[G->n] = items[i].sum[1] / items[i].n[1];
        G->n++;
      }
    }
    for (size_t p = 0; p < np; p++) {
      if (!pairs[p].def[0] || !pairs[p].def[1]) continue;
      const size_t it = pairs[p].item, gs[2] = {0, items[it].group};
      for (int q = 0; q < (gs[1] ? 2 : 1); q++) {
        group_t *G = &groups[gs[q]];
        if (pairs[p].v[0] > pairs[p].v[1]) {
          G->flip_ab++;
          if (G->nex_ab < examples && !listed(pairs, G->ex_ab, G->nex_ab, it)) G->ex_ab[G->nex_ab++] = p;
        } else if (pairs[p].v[0] < pairs[p].v[1]) {
          G->flip_ba++;
          if (G->nex_ba < examples && !listed(pairs, G->ex_ba, G->nex_ba, it)) G->ex_ba[G->nex_ba++] = p;
        } else {
          G->same++;
        }
      }
    }
    if (dlg)
      printf("\npolicy %s (%s): (dialogue, seed) without a score: A %lld of %lld, B %lld of %lld\n",
             pol ? "fail" : "exclude",
             pol ? "a dialogue with a turn without a rating has no score"
                 : "a turn without a rating leaves the minimum; a dialogue with no rated turn has no score",
             (long long)unscored[0], (long long)have[0], (long long)unscored[1], (long long)have[1]);
    printf("%-*s %9s %8s %8s %8s  %-19s %8s %6s %6s", wg, "group", dlg ? "dialogues" : "items", "mean A", "mean B",
           "diff", "CI", "p_boot", "A>B", "B>A");
    if (binary) printf(" %9s", "McNemar");
    printf("\n");
    for (size_t g = 0; g < ng; g++) {
      group_t *G = &groups[g];
      tl_paired_res pr;
      tl_status bs = G->n ? tl_paired_boot(G->a, G->b, G->n, B, seed, level, &pr) : TL_EINPUT;
      if (bs == TL_ENOMEM) {
        fprintf(stderr, "%s: out of memory\n", CMD);
        rc = TL_EXIT_FAIL;
        break;
      }
      if (bs) {
        printf("%-*s %9u %s\n", wg, G->name, G->n, dlg ? "(no dialogue both scored)" : "(no item both scored)");
        continue;
      }
      char ci[48], pb[32];
      snprintf(ci, sizeof ci, "[%.4f, %.4f]", pr.ci_lo, pr.ci_hi);
      if (isnan(pr.p_boot)) snprintf(pb, sizeof pb, "-");
      else if (pr.p_boot == 0) snprintf(pb, sizeof pb, "<%.4f", 1.0 / (double)B); /* no resample on the other side */
      else snprintf(pb, sizeof pb, "%.4f", pr.p_boot);
      printf("%-*s %9u %8.4f %8.4f %+8.4f  %-19s %8s %6lld %6lld", wg, G->name, G->n, pr.mean_a, pr.mean_b, pr.diff, ci,
             pb, (long long)G->flip_ab, (long long)G->flip_ba);
      if (binary) printf(" %9.4g", tl_mcnemar_exact_p(G->flip_ab, G->flip_ba));
      printf("\n");
    }
    if (!examples || rc) continue;
    if (dlg) printf("examples: dialogue (turn: where the other model's least rating, its dialogue score, was given)\n");
    for (size_t g = 0; g < ng; g++) {
      group_t *G = &groups[g];
      if (!G->nex_ab && !G->nex_ba) continue;
      for (int d = 0; d < 2; d++) {
        const size_t *exs = d ? G->ex_ba : G->ex_ab;
        const int nex = d ? G->nex_ba : G->nex_ab;
        if (d) printf("; B > A on");
        else printf("%s: A > B on", G->name);
        for (int e = 0; e < nex; e++) {
          const pair_t *P = &pairs[exs[e]];
          printf("%s %s", e ? "," : "", t->cols[0].v.s[P->row]);
          if (dlg) printf(" (turn %lld)", P->turn[d ? 0 : 1]); /* the loser's least rating */
          else if (c_turn >= 0) printf(" turn %lld", (long long)t->cols[c_turn].v.i[P->row]);
        }
        if (!nex) printf(" -");
      }
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
  tl_table_free(rt);
  tl_table_free(t);
  if (fflush(stdout) != 0 && !rc) rc = TL_EXIT_FAIL;
  return rc;
}
