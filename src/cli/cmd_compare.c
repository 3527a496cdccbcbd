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

enum { O_MODELS = 1, O_BENCH, O_METRIC, O_BY, O_STATUS, O_B, O_SEED, O_CI, O_EX, O_JSON, O_HELP };
const struct option tl_opts_compare[] = {{"models", required_argument, NULL, O_MODELS},
                                         {"benchmark", required_argument, NULL, O_BENCH},
                                         {"metric", required_argument, NULL, O_METRIC},
                                         {"by", required_argument, NULL, O_BY},
                                         {"status", required_argument, NULL, O_STATUS},
                                         {"resamples", required_argument, NULL, O_B},
                                         {"seed", required_argument, NULL, O_SEED},
                                         {"ci", required_argument, NULL, O_CI},
                                         {"examples", required_argument, NULL, O_EX},
                                         {"json", no_argument, NULL, O_JSON},
                                         {"help", no_argument, NULL, O_HELP},
                                         {NULL, 0, NULL, 0}};

static const char *const CMD = "tally compare";

/* Steps return this to go on; any other value is the command's exit code. */
enum { GO_ON = -1 };

/* One comparison: the options (cmp_options), the item table and what it says
 * (cmp_pick_bench, cmp_read), then its items, pairs and groups (cmp_collect). Released by
 * cmp_release whatever step stopped. */
typedef struct {
  /* the command line */
  const char *bench, *metric, *by, *status, *path;
  uint64_t B, seed;
  double level;
  int examples;
  int json;              /* --json: the result as a report document (tally/report.h) in JSON */
  char ma[256], mb[256]; /* --models A,B */
  /* the table */
  char grp[300];                   /* "/items/BENCH" */
  const tl_compare_defaults *def;  /* the benchmark's defaults (NULL: none) */
  tl_table *t;                     /* columns id, model, seed, metric, then turn, by, status where present */
  tl_table *rt;                    /* the rule column beside the status column (dialogues), or NULL */
  const tl_col *cm;                /* t's metric column */
  int c_by, c_st, c_turn, c_rule;  /* t's (rt's for c_rule) columns, -1 when absent */
  int dlg;                         /* dialogue scores: the least over a dialogue's judged turns */
  int binary, accuracy;            /* every value of the two models 0/1; in [0, 1] */
  /* collected */
  int maps;                        /* the three maps are initialised */
  tl_strmap item_of, pair_of, group_of;
  item_t *items;                   /* [ni] */
  pair_t *pairs;                   /* [np] */
  group_t *groups;                 /* [ng]: "all" first, then each value of --by */
  size_t ni, np, ng;
  counts_t cnt[2];
} compare_t;

/* The getopt_long loop and --models A,B: fills c's options (defaults first) and c->path.
 * Returns GO_ON, or the exit code of --help, a bad option or value (its message printed). */
static int cmp_options(int argc, char **argv, compare_t *c) {
  c->B = 2000, c->seed = 0, c->level = 0.95, c->examples = 3;
  const char *models = NULL;
  tl_opt_begin();
  int ch;
  uint64_t ex = 3;
  while ((ch = getopt_long(argc, argv, ":h", tl_opts_compare, NULL)) != -1) {
    switch (ch) {
    case O_MODELS: models = optarg; break;
    case O_BENCH: c->bench = optarg; break;
    case O_METRIC: c->metric = optarg; break;
    case O_BY: c->by = optarg; break;
    case O_STATUS: c->status = optarg; break;
    case O_B:
      if (tl_opt_u64(CMD, "--resamples", optarg, 2, 10000000, &c->B)) return TL_EXIT_USAGE;
      break;
    case O_SEED:
      if (tl_opt_u64(CMD, "--seed", optarg, 0, UINT64_MAX, &c->seed)) return TL_EXIT_USAGE;
      break;
    case O_CI:
      if (tl_opt_open_unit(CMD, "--ci", optarg, &c->level)) return TL_EXIT_USAGE;
      break;
    case O_EX:
      if (tl_opt_u64(CMD, "--examples", optarg, 0, 16, &ex)) return TL_EXIT_USAGE;
      c->examples = (int)ex;
      break;
    case O_JSON: c->json = 1; break;
    case 'h':
    case O_HELP: return tl_usage_help(CMD, tl_usage_compare_text());
    default: return tl_usage_bad_option(CMD, ch, argv, tl_usage_compare_text());
    }
  }
  if (optind != argc - 1 || !models) return tl_usage_error(tl_usage_compare_text());
  c->path = argv[optind];
  const char *comma = strchr(models, ',');
  if (!comma || strchr(comma + 1, ',') || comma == models || !comma[1] || (size_t)(comma - models) >= sizeof c->ma ||
      strlen(comma + 1) >= sizeof c->mb) {
    fprintf(stderr, "%s: --models wants two model names, A,B\n", CMD);
    return TL_EXIT_USAGE;
  }
  snprintf(c->ma, sizeof c->ma, "%.*s", (int)(comma - models), models);
  snprintf(c->mb, sizeof c->mb, "%s", comma + 1);
  if (!strcmp(c->ma, c->mb)) return fprintf(stderr, "%s: --models names '%s' twice\n", CMD, c->ma), TL_EXIT_USAGE;
  return GO_ON;
}

/* The file is a readable output of tally; the benchmark (--benchmark, else the only one of the
 * file with compare defaults) and its defaults for --metric, --by, --status (the modules'
 * tl_compare_defaults); c->grp its item table. Returns GO_ON, or the exit code with its message. */
static int cmp_pick_bench(compare_t *c) {
  tl_err oerr = {{0}};
  if (tl_h5_check_output(c->path, &oerr)) return fprintf(stderr, "%s: %s\n", CMD, oerr.msg), TL_EXIT_FAIL;
  tl_err rerr = {{0}};
  if (tl_bench_registry_check(&rerr)) return fprintf(stderr, "%s: %s\n", CMD, rerr.msg), 1;
  if (!c->bench) { /* the only benchmark of the file */
    int found = 0;
    for (size_t i = 0; i < tl_bench_count(); i++) {
      if (!tl_bench_at(i)->compare) continue;
      snprintf(c->grp, sizeof c->grp, "/items/%s", tl_bench_at(i)->name);
      if (tl_h5_has_column(c->path, c->grp, "model")) {
        c->bench = tl_bench_at(i)->name;
        found++;
      }
    }
    if (found != 1) {
      fprintf(stderr, "%s: %s: %s; give --benchmark\n", CMD, c->path, found ? "several benchmarks" : "no known benchmark table");
      return found ? TL_EXIT_USAGE : TL_EXIT_FAIL;
    }
  }
  c->def = tl_bench_compare_defaults(c->bench);
  if (c->def) {
    if (!c->metric) c->metric = c->def->metric;
    if (!c->by) c->by = c->def->by;
    if (!c->status) c->status = c->def->status;
  }
  if (!c->metric)
    return fprintf(stderr, "%s: benchmark '%s' has no default metric: give --metric\n", CMD, c->bench), TL_EXIT_USAGE;
  snprintf(c->grp, sizeof c->grp, "/items/%s", c->bench);
  return GO_ON;
}

/* Both models are in c->t, else "GRP has no model 'X'; its models: ..." (each once, in row
 * order). Returns GO_ON or TL_EXIT_USAGE. */
static int cmp_models_present(const compare_t *c) {
  const tl_table *t = c->t;
  int seen[2] = {0, 0};
  for (size_t r = 0; r < t->nrows; r++) {
    int m = in_list(t->cols[1].v.s[r], c->ma, c->mb);
    if (m >= 0) seen[m] = 1;
  }
  if (seen[0] && seen[1]) return GO_ON;
  fprintf(stderr, "%s: %s has no model '%s'; its models:", CMD, c->grp, !seen[0] ? c->ma : c->mb);
  tl_strmap ms;
  tl_strmap_init(&ms);
  for (size_t r = 0; r < t->nrows; r++) {
    bool ins = false;
    tl_strmap_put(&ms, t->cols[1].v.s[r], 0, &ins, NULL);
    if (ins) fprintf(stderr, " %s", t->cols[1].v.s[r]);
  }
  fprintf(stderr, "\n");
  tl_strmap_release(&ms);
  return TL_EXIT_USAGE;
}

/* Dialogues with a status column: the rule column beside it (status -> rule, <parser>_status
 * -> <parser>_rule) into c->rt (c->c_rule = 0 when it is a string column of t's rows):
 * MT-Bench-101 tells a turn without an answer (rule "") from one without a judgment by it. */
static void cmp_rule_column(compare_t *c) {
  if (!c->dlg || c->c_st < 0) return;
  size_t sl = strlen(c->status);
  char rc_name[300];
  if (sl >= 6 && sl - 6 + 5 < sizeof rc_name && !strcmp(c->status + sl - 6, "status")) {
    snprintf(rc_name, sizeof rc_name, "%.*srule", (int)(sl - 6), c->status);
    const char *rcols[1] = {rc_name};
    tl_err err = {{0}};
    if (tl_h5_has_column(c->path, c->grp, rc_name) && tl_h5_read_table(c->path, c->grp, rcols, 1, &c->rt, &err) == TL_OK &&
        c->rt->nrows == c->t->nrows && tl_col_is_str(c->rt->cols[0].type))
      c->c_rule = 0;
  }
}

/* The policy for units without a score: an accuracy (every value of the two models in [0, 1])
 * counts them 0, as the summaries do; any other metric leaves them out (counted). Dialogue
 * scores are neither binary nor an accuracy. */
static void cmp_policy(compare_t *c) {
  c->binary = c->accuracy = 1;
  for (size_t r = 0; r < c->t->nrows; r++) {
    if (in_list(c->t->cols[1].v.s[r], c->ma, c->mb) < 0) continue;
    double v = c->cm->type == TL_COL_I64 ? (double)c->cm->v.i[r] : c->cm->v.f[r];
    if (isnan(v)) continue;
    if (v != 0 && v != 1) c->binary = 0;
    if (!(v >= 0 && v <= 1)) c->accuracy = 0;
  }
  if (c->dlg) c->binary = c->accuracy = 0;
}

/* Reads the item table's columns (c->t; a column not in the file is a usage error), checks the
 * metric is numeric and both models are there, then the rule column and the policy. Returns
 * GO_ON, or the exit code with its message printed. */
static int cmp_read(compare_t *c) {
  const int has_turn = tl_h5_has_column(c->path, c->grp, "turn");
  const char *cols[8];
  int nc = 0;
  c->c_by = c->c_st = c->c_turn = c->c_rule = -1;
  cols[nc++] = "id";
  cols[nc++] = "model";
  cols[nc++] = "seed";
  cols[nc++] = c->metric;
  if (has_turn) cols[c->c_turn = nc++] = "turn";
  if (c->by && *c->by) cols[c->c_by = nc++] = c->by;
  if (c->status && *c->status) cols[c->c_st = nc++] = c->status;
  tl_err err = {{0}};
  tl_status st = tl_h5_read_table(c->path, c->grp, cols, nc, &c->t, &err);
  if (st) {
    fprintf(stderr, "%s: %s\n", CMD, err.msg);
    return st == TL_EINPUT ? TL_EXIT_USAGE : TL_EXIT_FAIL; /* a column not in the file: usage */
  }
  c->cm = &c->t->cols[3];
  if (tl_col_is_str(c->cm->type)) return fprintf(stderr, "%s: column '%s' is not numeric\n", CMD, c->metric), TL_EXIT_USAGE;
  int rc = cmp_models_present(c);
  if (rc != GO_ON) return rc;
  c->dlg = c->def && c->def->dialogue && c->c_turn >= 0; /* dialogue scores, min over turns */
  cmp_rule_column(c);
  cmp_policy(c);
  return GO_ON;
}

/* Row r of model m (0 A, 1 B): counted in c->cnt[m]; its value into *v and whether it has a
 * score into *scored. Returns 0 when the row is left out (no score, and not an accuracy), 1
 * when it goes on (outside dialogues a row without a score counts 0 for an accuracy). */
static int cmp_count(compare_t *c, size_t r, int m, double *v, int *scored) {
  const tl_table *t = c->t;
  *v = c->cm->type == TL_COL_I64 ? (double)c->cm->v.i[r] : c->cm->v.f[r];
  const char *sv = c->c_st >= 0 ? t->cols[c->c_st].v.s[r] : "";
  const int ee = !strcmp(sv, "engine_error"),
            miss = !strcmp(sv, "missing") && !(c->c_rule >= 0 && !strcmp(c->rt->cols[0].v.s[r], "no_judgment"));
  *scored = !isnan(*v) && !ee && !miss && (c->c_st < 0 || !c->dlg || !strcmp(sv, "ok"));
  counts_t *C = &c->cnt[m];
  C->n++;
  if (ee) C->engine_error++;
  else if (miss) C->missing++;
  else if (c->c_st >= 0 ? strcmp(sv, "ok") != 0 : isnan(*v)) C->unparsed++;
  if (!c->dlg && !*scored) {
    if (!c->accuracy) {
      C->left_out++;
      return 0;
    }
    *v = 0; /* the one missing-answer policy of the summaries */
    C->zeroed++;
  }
  return 1;
}

/* Row r of model m, value v: its item (a new one joins its --by group), its (item, seed) pair
 * (a new one remembers its first row), and the pair's value for m (dialogues: the least rating
 * of the rated turns, and the count of turns with and without one). k is scratch. */
static tl_status cmp_add_row(compare_t *c, size_t r, int m, double v, int scored, tl_buf *k) {
  const tl_table *t = c->t;
  tl_status st;
  tl_buf_reset(k);
  tl_buf_puts(k, t->cols[0].v.s[r]);
  if (c->c_turn >= 0 && !c->dlg) tl_buf_printf(k, "\x1f%lld", (long long)t->cols[c->c_turn].v.i[r]);
  size_t it;
  bool ins;
  if ((st = tl_strmap_put(&c->item_of, k->data, c->ni, &ins, &it))) return st;
  if (ins) {
    it = c->ni++;
    size_t g = 0;
    if (c->c_by >= 0) {
      const char *gv = t->cols[c->c_by].v.s[r];
      bool gins;
      if ((st = tl_strmap_put(&c->group_of, gv, c->ng, &gins, &g))) return st;
      if (gins) {
        g = c->ng++;
        c->groups[g].name = tl_strmap_stored_key(&c->group_of, gv);
      }
    }
    c->items[it].group = g;
  }
  tl_buf_printf(k, "\x1f%lld", (long long)t->cols[2].v.i[r]);
  size_t pi;
  if ((st = tl_strmap_put(&c->pair_of, k->data, c->np, &ins, &pi))) return st;
  if (ins) {
    pi = c->np++;
    c->pairs[pi].item = it;
    c->pairs[pi].row = r;
  }
  pair_t *P = &c->pairs[pi];
  P->has[m] = 1;
  if (!c->dlg) {
    P->v[m] = v;
  } else if (scored) { /* a rated turn: the dialogue's least rating so far? */
    if (!P->rated[m] || v < P->v[m]) {
      P->v[m] = v;
      P->turn[m] = (long long)t->cols[c->c_turn].v.i[r];
    }
    P->rated[m]++;
  } else {
    P->unrated[m]++;
  }
  return TL_OK;
}

/* Items, (item, seed) pairs and groups of the two models' rows, in row order; each group's
 * a and b arrays ([ni + 1]). Returns TL_OK or TL_ENOMEM (c is released by cmp_release). */
static tl_status cmp_collect(compare_t *c) {
  const tl_table *t = c->t;
  tl_strmap_init(&c->item_of);
  tl_strmap_init(&c->pair_of);
  tl_strmap_init(&c->group_of);
  c->maps = 1;
  c->items = calloc(t->nrows + 1, sizeof *c->items);
  c->pairs = calloc(t->nrows + 1, sizeof *c->pairs);
  c->groups = calloc(t->nrows + 2, sizeof *c->groups);
  c->ng = 1;
  if (!c->items || !c->pairs || !c->groups) return TL_ENOMEM;
  c->groups[0].name = "all";
  tl_status st = TL_OK;
  tl_buf k;
  tl_buf_init(&k);
  for (size_t r = 0; !st && r < t->nrows; r++) {
    int m = in_list(t->cols[1].v.s[r], c->ma, c->mb), scored;
    double v;
    if (m < 0 || !cmp_count(c, r, m, &v, &scored)) continue;
    st = cmp_add_row(c, r, m, v, scored, &k);
  }
  tl_buf_release(&k);
  for (size_t g = 0; !st && g < c->ng; g++)
    if (!(c->groups[g].a = malloc((c->ni + 1) * sizeof(double))) || !(c->groups[g].b = malloc((c->ni + 1) * sizeof(double))))
      st = TL_ENOMEM;
  return st;
}

/* The report's head: what is compared, each model's counts, the policy for units without a
 * score, and what the columns mean. */
static void cmp_print_head(const compare_t *c) {
  const int dlg = c->dlg;
  const counts_t *cnt = c->cnt;
  printf("paired comparison on %s of %s: A = %s, B = %s, %s %s%s%s%s\n", c->grp, c->path, c->ma, c->mb,
         dlg ? "dialogue scores, the least" : "metric", c->metric, dlg ? " over a dialogue's judged turns" : "",
         c->c_by >= 0 ? ", by " : "", c->c_by >= 0 ? c->by : "");
  printf("%s per model (answered = n - missing - engine_error; unparsed: answered, %s):\n",
         dlg ? "judged turns" : "units", dlg ? "no rating" : "the status is not ok or the metric has no value");
  for (int m = 0; m < 2; m++)
    printf("  %s %s: n %lld, answered %lld, missing %lld, engine_error %lld, unparsed %lld\n", m ? "B" : "A",
           m ? c->mb : c->ma, (long long)cnt[m].n, (long long)(cnt[m].n - cnt[m].missing - cnt[m].engine_error),
           (long long)cnt[m].missing, (long long)cnt[m].engine_error, (long long)cnt[m].unparsed);
  if (!dlg && c->accuracy)
    printf("a unit without a score (missing, engine_error, no value) counts 0, as in the summaries: A %lld, B %lld "
           "units\n", (long long)cnt[0].zeroed, (long long)cnt[1].zeroed);
  else if (!dlg)
    printf("units without a score (missing, engine_error, no value) are left out (the metric is not an accuracy "
           "in [0, 1]): A %lld, B %lld units\n", (long long)cnt[0].left_out, (long long)cnt[1].left_out);
  printf("diff = mean A - mean B over the %s both have%s (an item's seeds averaged: one cluster each); %.0f%% CI and "
         "p_boot from the paired bootstrap over them (%llu resamples, seed %llu); A>B, B>A: (%s, seed) pairs%s\n",
         dlg ? "dialogues" : "items", dlg ? " a score for" : "", 100 * c->level, (unsigned long long)c->B,
         (unsigned long long)c->seed, dlg ? "dialogue" : "item",
         c->binary ? "; McNemar exact over them (assumes independent pairs: not so with several seeds per item - "
                     "then trust the bootstrap)"
                   : "");
}

/* Under policy pol (dialogues: 0 exclude, 1 fail; else 0): each pair's models with a value
 * (P->def), the items' means per group (G->a, G->b over the items both have), and the pairs
 * that flip each way with their first examples. unscored/have: per model, the pairs without a
 * value / with rows. */
static void cmp_fill(compare_t *c, int pol, int64_t unscored[2], int64_t have[2]) {
  item_t *items = c->items;
  pair_t *pairs = c->pairs;
  for (size_t i = 0; i < c->ni; i++) items[i].sum[0] = items[i].sum[1] = 0, items[i].n[0] = items[i].n[1] = 0;
  for (size_t g = 0; g < c->ng; g++) {
    group_t *G = &c->groups[g];
    G->n = 0;
    G->flip_ab = G->flip_ba = G->same = 0;
    G->nex_ab = G->nex_ba = 0;
  }
  for (size_t p = 0; p < c->np; p++) {
    pair_t *P = &pairs[p];
    for (int m = 0; m < 2; m++) {
      P->def[m] = P->has[m] && (!c->dlg || (P->rated[m] && (pol == 0 || !P->unrated[m])));
      have[m] += P->has[m];
      if (P->has[m] && !P->def[m]) unscored[m]++;
      if (!P->def[m]) continue;
      items[P->item].sum[m] += P->v[m];
      items[P->item].n[m]++;
    }
  }
  for (size_t i = 0; i < c->ni; i++) {
    if (!items[i].n[0] || !items[i].n[1]) continue;
    const size_t gs[2] = {0, items[i].group};
    for (int q = 0; q < (gs[1] ? 2 : 1); q++) {
      group_t *G = &c->groups[gs[q]];
      G->a[G->n] = items[i].sum[0] / items[i].n[0];
      G->b[G->n] = items[i].sum[1] / items[i].n[1];
      G->n++;
    }
  }
  for (size_t p = 0; p < c->np; p++) {
    if (!pairs[p].def[0] || !pairs[p].def[1]) continue;
    const size_t it = pairs[p].item, gs[2] = {0, items[it].group};
    for (int q = 0; q < (gs[1] ? 2 : 1); q++) {
      group_t *G = &c->groups[gs[q]];
      if (pairs[p].v[0] > pairs[p].v[1]) {
        G->flip_ab++;
        if (G->nex_ab < c->examples && !listed(pairs, G->ex_ab, G->nex_ab, it)) G->ex_ab[G->nex_ab++] = p;
      } else if (pairs[p].v[0] < pairs[p].v[1]) {
        G->flip_ba++;
        if (G->nex_ba < c->examples && !listed(pairs, G->ex_ba, G->nex_ba, it)) G->ex_ba[G->nex_ba++] = p;
      } else {
        G->same++;
      }
    }
  }
}

/* The table of one policy: a line per group (the group column wg wide), its bootstrap over the
 * items both scored and, for a 0/1 metric, McNemar. Returns TL_EXIT_OK, or TL_EXIT_FAIL out of
 * memory (the table cut there). */
static int cmp_print_table(const compare_t *c, int wg) {
  const int dlg = c->dlg;
  printf("%-*s %9s %8s %8s %8s  %-19s %8s %6s %6s", wg, "group", dlg ? "dialogues" : "items", "mean A", "mean B",
         "diff", "CI", "p_boot", "A>B", "B>A");
  if (c->binary) printf(" %9s", "McNemar");
  printf("\n");
  for (size_t g = 0; g < c->ng; g++) {
    const group_t *G = &c->groups[g];
    tl_paired_res pr;
    tl_status bs = G->n ? tl_paired_boot(G->a, G->b, G->n, c->B, c->seed, c->level, &pr) : TL_EINPUT;
    if (bs == TL_ENOMEM) {
      fprintf(stderr, "%s: out of memory\n", CMD);
      return TL_EXIT_FAIL;
    }
    if (bs) {
      printf("%-*s %9u %s\n", wg, G->name, G->n, dlg ? "(no dialogue both scored)" : "(no item both scored)");
      continue;
    }
    char ci[48], pb[32];
    snprintf(ci, sizeof ci, "[%.4f, %.4f]", pr.ci_lo, pr.ci_hi);
    if (isnan(pr.p_boot)) snprintf(pb, sizeof pb, "-");
    else if (pr.p_boot == 0) snprintf(pb, sizeof pb, "<%.4f", 1.0 / (double)c->B); /* no resample on the other side */
    else snprintf(pb, sizeof pb, "%.4f", pr.p_boot);
    printf("%-*s %9u %8.4f %8.4f %+8.4f  %-19s %8s %6lld %6lld", wg, G->name, G->n, pr.mean_a, pr.mean_b, pr.diff, ci,
           pb, (long long)G->flip_ab, (long long)G->flip_ba);
    if (c->binary) printf(" %9.4g", tl_mcnemar_exact_p(G->flip_ab, G->flip_ba));
    printf("\n");
  }
  return TL_EXIT_OK;
}

/* Each group's examples of a flip either way ("-" for none; dialogues: the turn of the losing
 * model's least rating; else the turn where the table has one). */
static void cmp_print_examples(const compare_t *c) {
  const tl_table *t = c->t;
  if (c->dlg) printf("examples: dialogue (turn: where the other model's least rating, its dialogue score, was given)\n");
  for (size_t g = 0; g < c->ng; g++) {
    const group_t *G = &c->groups[g];
    if (!G->nex_ab && !G->nex_ba) continue;
    for (int d = 0; d < 2; d++) {
      const size_t *exs = d ? G->ex_ba : G->ex_ab;
      const int nex = d ? G->nex_ba : G->nex_ab;
      if (d) printf("; B > A on");
      else printf("%s: A > B on", G->name);
      for (int e = 0; e < nex; e++) {
        const pair_t *P = &c->pairs[exs[e]];
        printf("%s %s", e ? "," : "", t->cols[0].v.s[P->row]);
        if (c->dlg) printf(" (turn %lld)", P->turn[d ? 0 : 1]); /* the loser's least rating */
        else if (c->c_turn >= 0) printf(" turn %lld", (long long)t->cols[c->c_turn].v.i[P->row]);
      }
      if (!nex) printf(" -");
    }
    printf("\n");
  }
}

/* The report of one policy: (dialogues) its line of pairs without a score, the table, the
 * examples. Returns the exit code so far (TL_EXIT_FAIL: out of memory). */
static int cmp_report(compare_t *c, int pol, int wg) {
  int64_t unscored[2] = {0, 0}, have[2] = {0, 0};
  cmp_fill(c, pol, unscored, have);
  if (c->dlg)
    printf("\npolicy %s (%s): (dialogue, seed) without a score: A %lld of %lld, B %lld of %lld\n",
           pol ? "fail" : "exclude",
           pol ? "a dialogue with a turn without a rating has no score"
               : "a turn without a rating leaves the minimum; a dialogue with no rated turn has no score",
           (long long)unscored[0], (long long)have[0], (long long)unscored[1], (long long)have[1]);
  int rc = cmp_print_table(c, wg);
  if (c->examples && !rc) cmp_print_examples(c);
  return rc;
}

/* --json: the comparison as a report document (docs/REPORT.md, schema tally-report/1) on
 * standard output: a section "comparison" with the settings, each model's counts, per policy
 * (dialogues: exclude, fail) a table of the groups (means, diff [CI], p_boot, the pairs each way,
 * McNemar for a 0/1 metric) and a forest chart of the diffs. Returns the exit code. */
static int cmp_json(compare_t *c) {
  char title[700];
  snprintf(title, sizeof title, "tally compare: %s vs %s", c->ma, c->mb);
  tl_doc *d = tl_doc_new(title);
  tl_section *s = tl_doc_section(d, "comparison");
  static const char *const KV[] = {"key", "value"};
  static const tl_rcol_kind KVK[] = {TL_RC_TEXT, TL_RC_TEXT};
  tl_rtable *t = tl_sec_table(d, s, "settings", 2, KV, KVK);
  const char *kv[][2] = {{"file", c->path}, {"table", c->grp}, {"metric", c->metric}, {"a", c->ma}, {"b", c->mb},
                         {"by", c->c_by >= 0 ? c->by : ""}, {"unit", c->dlg ? "dialogue" : "item"}};
  for (size_t i = 0; i < sizeof kv / sizeof *kv; i++) {
    size_t r = tl_rtable_row(d, t);
    tl_cell_text(d, t, r, 0, kv[i][0]), tl_cell_text(d, t, r, 1, kv[i][1]);
  }
  const char *kn[] = {"resamples", "seed", "ci"};
  for (int i = 0; i < 3; i++) {
    size_t r = tl_rtable_row(d, t);
    tl_cell_text(d, t, r, 0, kn[i]);
    if (i < 2) tl_cell_int(t, r, 1, (int64_t)(i ? c->seed : c->B));
    else tl_cell_real(t, r, 1, c->level);
  }
  static const char *const CN[] = {"role", "model", "n", "answered", "missing", "engine_error", "unparsed"};
  static const tl_rcol_kind CK[] = {TL_RC_TEXT, TL_RC_TEXT, TL_RC_INT, TL_RC_INT, TL_RC_INT, TL_RC_INT, TL_RC_INT};
  t = tl_sec_table(d, s, c->dlg ? "judged turns per model" : "units per model", 7, CN, CK);
  for (int m = 0; m < 2; m++) {
    const counts_t *k = &c->cnt[m];
    size_t r = tl_rtable_row(d, t);
    tl_cell_text(d, t, r, 0, m ? "b" : "a"), tl_cell_text(d, t, r, 1, m ? c->mb : c->ma);
    const int64_t v[] = {k->n, k->n - k->missing - k->engine_error, k->missing, k->engine_error, k->unparsed};
    for (int j = 0; j < 5; j++) tl_cell_int(t, r, 2 + j, v[j]);
  }
  static const char *const GN[] = {"group", "n", "mean_a", "mean_b", "diff", "p_boot", "a_gt_b", "b_gt_a", "mcnemar_p"};
  static const tl_rcol_kind GK[] = {TL_RC_TEXT, TL_RC_INT, TL_RC_REAL, TL_RC_REAL, TL_RC_EST,
                                    TL_RC_P,    TL_RC_INT, TL_RC_INT,  TL_RC_P};
  int rc = TL_EXIT_OK;
  for (int pol = 0; !rc && pol < (c->dlg ? 2 : 1); pol++) {
    int64_t unscored[2] = {0, 0}, have[2] = {0, 0};
    cmp_fill(c, pol, unscored, have);
    const char *pname = c->dlg ? (pol ? "policy fail" : "policy exclude") : "all units";
    t = tl_sec_table(d, s, pname, c->binary ? 9 : 8, GN, GK);
    tl_chart *ch = tl_sec_chart(d, s, TL_CHART_FOREST, pname, "group", "diff = mean A - mean B");
    if (ch) ch->ref = 0;
    for (size_t g = 0; g < c->ng; g++) {
      const group_t *G = &c->groups[g];
      tl_paired_res pr;
      tl_status bs = G->n ? tl_paired_boot(G->a, G->b, G->n, c->B, c->seed, c->level, &pr) : TL_EINPUT;
      if (bs == TL_ENOMEM) rc = TL_EXIT_FAIL;
      size_t r = tl_rtable_row(d, t);
      tl_cell_text(d, t, r, 0, G->name), tl_cell_int(t, r, 1, G->n);
      if (bs) continue; /* no item both scored: the rest missing */
      tl_cell_real(t, r, 2, pr.mean_a), tl_cell_real(t, r, 3, pr.mean_b);
      tl_cell_est(t, r, 4, pr.diff, pr.ci_lo, pr.ci_hi), tl_cell_real(t, r, 5, pr.p_boot);
      tl_cell_int(t, r, 6, G->flip_ab), tl_cell_int(t, r, 7, G->flip_ba);
      if (c->binary) tl_cell_real(t, r, 8, tl_mcnemar_exact_p(G->flip_ab, G->flip_ba));
      tl_chart_point_add(d, tl_chart_series_get(d, ch, pname), G->name, pr.diff, pr.ci_lo, pr.ci_hi);
    }
  }
  if (!rc && tl_doc_ok(d)) rc = TL_EXIT_FAIL;
  if (!rc) rc = tl_report_print(d, TL_FMT_JSON, NULL, CMD);
  else fprintf(stderr, "%s: out of memory\n", CMD);
  tl_doc_free(d);
  return rc;
}

/* Frees what the steps made (any of them may be absent). */
static void cmp_release(compare_t *c) {
  for (size_t g = 0; c->groups && g < c->ng; g++) {
    free(c->groups[g].a);
    free(c->groups[g].b);
  }
  free(c->groups);
  free(c->items);
  free(c->pairs);
  if (c->maps) {
    tl_strmap_release(&c->item_of);
    tl_strmap_release(&c->pair_of);
    tl_strmap_release(&c->group_of);
  }
  tl_table_free(c->rt);
  tl_table_free(c->t);
}

/* `tally compare RUN.h5 --models A,B [options]`: the options, the benchmark and its table, the
 * items, then the head and one report per policy (dialogues: exclude, then fail). Returns the
 * exit code. */
int tl_cmd_compare(int argc, char **argv) {
  compare_t c;
  memset(&c, 0, sizeof c);
  int rc = cmp_options(argc, argv, &c);
  if (rc == GO_ON) rc = cmp_pick_bench(&c);
  if (rc == GO_ON) rc = cmp_read(&c);
  if (rc != GO_ON) {
    cmp_release(&c);
    return rc;
  }
  rc = TL_EXIT_OK;
  if (cmp_collect(&c)) {
    fprintf(stderr, "%s: out of memory\n", CMD);
    rc = TL_EXIT_FAIL;
  } else if (c.json) {
    rc = cmp_json(&c);
    cmp_release(&c);
    return rc;
  } else {
    cmp_print_head(&c);
  }
  int wg = 5; /* the group column: the longest name, never cut */
  for (size_t g = 0; g < c.ng && c.groups; g++)
    if (c.groups[g].name && (int)strlen(c.groups[g].name) > wg) wg = (int)strlen(c.groups[g].name);
  for (int pol = 0; !rc && pol < (c.dlg ? 2 : 1); pol++) rc = cmp_report(&c, pol, wg);
  cmp_release(&c);
  if (fflush(stdout) != 0 && !rc) rc = TL_EXIT_FAIL;
  return rc;
}
