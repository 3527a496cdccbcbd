/* mtb_stability.c - MT-Bench-101: judge stability over judge samples and the parser swap
 * (mtb_stability.h states the contract and the accumulator layout; docs/MTBENCH101.md, section
 * "Judge stability", the definitions). Everything here runs on rank 0 from reduced integers,
 * in key order, except tl_mtb_stab_add, which every rank calls on its own units. */
#include "mtb_stability.h"

#include <limits.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mtb_rating.h"

#define NTASK TL_MTB__NTASKS

size_t tl_mtb_stab_sum_len(int nsamples) { return nsamples > 1 ? TL_MTB_ST__N : 0; }
size_t tl_mtb_stab_min_len(int nsamples) { return nsamples > 1 ? 1 : 0; }

double tl_mtb_stab_sd(const int64_t *v, int m) {
  if (m < 2) return NAN;
  double mean = 0, ss = 0;
  for (int j = 0; j < m; j++) mean += (double)v[j];
  mean /= m;
  for (int j = 0; j < m; j++) ss += ((double)v[j] - mean) * ((double)v[j] - mean);
  return sqrt(ss / (m - 1)) / TL_MTB_RATING_SCALE;
}

void tl_mtb_stab_add(const tl_parsed *sp, int ns, int64_t *st, int64_t *negmax) {
  int64_t v[TL_MAX_STAGES];
  int m = 0, unrated = 0;
  for (int j = 0; j < ns && j < TL_MAX_STAGES; j++) {
    if (sp[j].status == TL_PS_OK) v[m++] = sp[j].value;
    else unrated++;
  }
  st[TL_MTB_ST_TURNS]++;
  st[TL_MTB_ST_PARTLY] += m > 0 && unrated > 0;
  if (m < 2) return;
  int64_t lo = v[0], hi = v[0];
  for (int j = 1; j < m; j++) {
    if (v[j] < lo) lo = v[j];
    if (v[j] > hi) hi = v[j];
  }
  st[TL_MTB_ST_COMPARED]++;
  st[TL_MTB_ST_CHANGED] += lo != hi;
  st[TL_MTB_ST_SPREAD] += hi - lo;
  if (-(hi - lo) < *negmax) *negmax = -(hi - lo);
  const double sd = tl_mtb_stab_sd(v, m);
  if (sd <= 1e9) st[TL_MTB_ST_SDFIX] += llround(sd * TL_MTB_SD_FIX);
  else st[TL_MTB_ST_SDBIG]++;
}

void tl_mtb_stab_ranks(const double *s, size_t m, int *rank) {
  for (size_t i = 0; i < m; i++) {
    if (isnan(s[i])) {
      rank[i] = 0;
      continue;
    }
    int r = 1;
    for (size_t j = 0; j < m; j++) r += !isnan(s[j]) && s[j] > s[i];
    rank[i] = r;
  }
}

static const char *mode_name(const tl_mtb_stab_ctx *x, int k) {
  return tl_mtb_rate_mode_name((tl_mtb_rate_mode)x->modes[k]);
}

/* ---- judge stability ---- */

static const tl_col_spec STAB_COLS[] = {
    {"parser", TL_COL_STR, "rating parser"},
    {"model", TL_COL_STR, "model under test (whose answers were judged)"},
    {"prompt_variant", TL_COL_STR, "prompt variant"},
    {"seed", TL_COL_I64, "sampling seed; -1: the model's seeds pooled"},
    {"samples", TL_COL_I64, "judge samples per turn (judge_samples)"},
    {"n_turns", TL_COL_I64, "judged turns"},
    {"n_turns_compared", TL_COL_I64, "turns with two or more rated samples (the denominator of the columns below)"},
    {"n_changed", TL_COL_I64, "compared turns whose rated samples are not all equal"},
    {"share_changed", TL_COL_F64, "n_changed / n_turns_compared; NaN when no turn is compared"},
    {"mean_spread", TL_COL_F64, "mean over the compared turns of max - min of their rated samples; NaN when none"},
    {"max_spread", TL_COL_F64, "largest max - min of a compared turn; NaN when none"},
    {"mean_sd", TL_COL_F64,
     "mean over the compared turns of the standard deviation (ddof 1) of their rated samples (summed in units of "
     "1e-9); NaN when none, or when a turn's SD exceeds 1e9"},
    {"n_partly_rated", TL_COL_I64,
     "turns with a rating in some samples and none in others (not in the compared share)"},
};
enum { SC_PARSER, SC_MODEL, SC_VAR, SC_SEED, SC_K, SC_TURNS, SC_CMP, SC_CHG, SC_SHARE, SC_MSPR, SC_XSPR, SC_SD, SC_PART,
       SC__N };

/* One row from the counters st[TL_MTB_ST__N] and the negated max spread. */
static tl_status stab_row(const tl_mtb_stab_ctx *x, tl_table *t, int k, const char *model, int64_t seed,
                          const int64_t *st, int64_t negmax) {
  size_t r = tl_table_add_row(t);
  if (r == (size_t)-1 || tl_table_set_str(t, r, SC_PARSER, mode_name(x, k)) ||
      tl_table_set_str(t, r, SC_MODEL, model) ||
      tl_table_set_str(t, r, SC_VAR, x->variant))
    return TL_ENOMEM;
  const int64_t c = st[TL_MTB_ST_COMPARED];
  tl_table_set_i64(t, r, SC_SEED, seed);
  tl_table_set_i64(t, r, SC_K, x->nsamples);
  tl_table_set_i64(t, r, SC_TURNS, st[TL_MTB_ST_TURNS]);
  tl_table_set_i64(t, r, SC_CMP, c);
  tl_table_set_i64(t, r, SC_CHG, st[TL_MTB_ST_CHANGED]);
  tl_table_set_f64(t, r, SC_SHARE, c ? (double)st[TL_MTB_ST_CHANGED] / (double)c : NAN);
  tl_table_set_f64(t, r, SC_MSPR, c ? (double)st[TL_MTB_ST_SPREAD] / TL_MTB_RATING_SCALE / (double)c : NAN);
  tl_table_set_f64(t, r, SC_XSPR, c && negmax != INT64_MAX ? (double)-negmax / TL_MTB_RATING_SCALE : NAN);
  tl_table_set_f64(t, r, SC_SD,
                   c && !st[TL_MTB_ST_SDBIG] ? (double)st[TL_MTB_ST_SDFIX] / TL_MTB_SD_FIX / (double)c : NAN);
  tl_table_set_i64(t, r, SC_PART, st[TL_MTB_ST_PARTLY]);
  return TL_OK;
}

/* judge_stability: per mode, its cfgs' rows, then each model's pooled row (seed -1). */
static tl_status stability(const tl_mtb_stab_ctx *x, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc,
                           tl_table *t) {
  if (tl_table_add_cols(t, STAB_COLS, SC__N)) return TL_ENOMEM;
  tl_status st = TL_OK;
  for (int k = 0; !st && k < x->nmodes; k++) {
    const int64_t *s = acc[2 * k + 1] + x->sum_off, *mx = acc[2 * k] + x->min_off;
    for (size_t c = 0; !st && c < ncfgs; c++)
      st = stab_row(x, t, k, cfgs[c].model, cfgs[c].seed, s + c * TL_MTB_ST__N, mx[c]);
    for (size_t c0 = 0; !st && c0 < ncfgs;) { /* a model's seeds are adjacent (cfgs in key order) */
      int64_t pool[TL_MTB_ST__N] = {0}, pmax = INT64_MAX;
      size_t c1 = c0;
      while (c1 < ncfgs && !strcmp(cfgs[c1].model, cfgs[c0].model) && cfgs[c1].variant == cfgs[c0].variant) {
        for (int i = 0; i < TL_MTB_ST__N; i++) pool[i] += s[c1 * TL_MTB_ST__N + i];
        if (mx[c1] < pmax) pmax = mx[c1];
        c1++;
      }
      st = stab_row(x, t, k, cfgs[c0].model, -1, pool, pmax);
      c0 = c1;
    }
  }
  return st;
}

/* ---- parser swap ---- */

/* Dialogue i's score state under mode k, cfg c, policy pol (0 exclude, 1 fail): 1 and the least
 * rating (1/rscale units) in *v when it has a score, else 0. Exact: read from the integers. */
static int dlg_score(const tl_mtb_stab_ctx *x, int64_t *const *acc, int k, size_t c, size_t i, int pol, int64_t *v) {
  const size_t di = c * x->n + i;
  const int64_t ok = acc[2 * k + 1][2 * di], no = acc[2 * k + 1][2 * di + 1], mn = acc[2 * k][di];
  if (ok <= 0 || mn == INT64_MAX || (pol == 1 && no != 0)) return 0;
  *v = mn;
  return 1;
}

/* One model's scores (cfgs c0..c1, one per seed) under mode k and policy pol into s[1 + NTASK]:
 * s[0] the overall (the mean of its task scores), s[1 + t] task t's (the mean of its dialogues'
 * scores), each then the mean over the seeds where it is defined; NaN where never defined. The
 * module's across_seeds means, by the same definitions. */
static void model_scores(const tl_mtb_stab_ctx *x, int64_t *const *acc, int k, int pol, size_t c0, size_t c1,
                         double *s) {
  double sum[1 + NTASK] = {0};
  int nseed[1 + NTASK] = {0};
  for (size_t c = c0; c < c1; c++) {
    double tsum[NTASK] = {0};
    int64_t tn[NTASK] = {0};
    for (size_t i = 0; i < x->n; i++) {
      int64_t v;
      if (!dlg_score(x, acc, k, c, i, pol, &v)) continue;
      tsum[x->d[i].task] += (double)v / (double)x->rscale;
      tn[x->d[i].task]++;
    }
    double o = 0;
    int no = 0;
    for (int t = 0; t < NTASK; t++) {
      if (!tn[t]) continue;
      const double ts = tsum[t] / (double)tn[t];
      sum[1 + t] += ts;
      nseed[1 + t]++;
      o += ts;
      no++;
    }
    if (no) {
      sum[0] += o / no;
      nseed[0]++;
    }
  }
  for (int g = 0; g <= NTASK; g++) s[g] = nseed[g] ? sum[g] / nseed[g] : NAN;
}

static const tl_col_spec SWAP_COLS[] = {
    {"parser", TL_COL_STR, "the compatibility parser swapped in"},
    {"primary", TL_COL_STR, "the primary parser it replaces (the job's first)"},
    {"policy", TL_COL_STR, "exclude or fail (a turn without a rating)"},
    {"n_dialogues", TL_COL_I64, "dialogue scores compared: (model, seed, dialogue)"},
    {"n_dialogues_changed", TL_COL_I64,
     "dialogue scores that differ (a score under one parser and none under the other counts)"},
    {"n_scored_both", TL_COL_I64, "dialogues with a score under both parsers"},
    {"max_abs_diff", TL_COL_F64, "largest |score difference| over the dialogues scored under both; NaN when none"},
    {"n_models", TL_COL_I64, "models ranked (a model's seeds pooled: its means over seeds)"},
    {"n_tasks", TL_COL_I64, "tasks in the run (13 for the whole benchmark)"},
    {"n_tasks_rank_changed", TL_COL_I64,
     "tasks in which some model's rank (1 = best; ties share the best rank) differs between the two parsers"},
    {"overall_rank_changed", TL_COL_I64, "1 when some model's rank by the overall score (Avg) differs, else 0"},
};
enum { WC_PARSER, WC_PRIMARY, WC_POL, WC_ND, WC_NDC, WC_NB, WC_MAXD, WC_NM, WC_NT, WC_NTC, WC_OC, WC__N };

/* Dialogue-level counts of mode k against mode 0 under policy pol: cnt[3] = (compared,
 * changed, scored under both), *maxd the largest |difference| in ratings (NaN: none). */
static void swap_dialogues(const tl_mtb_stab_ctx *x, int64_t *const *acc, size_t ncfgs, int k, int pol, int64_t *cnt,
                           double *maxd) {
  int64_t mx = -1;
  cnt[0] = cnt[1] = cnt[2] = 0;
  for (size_t c = 0; c < ncfgs; c++)
    for (size_t i = 0; i < x->n; i++) {
      int64_t a = 0, b = 0;
      const int ha = dlg_score(x, acc, 0, c, i, pol, &a), hb = dlg_score(x, acc, k, c, i, pol, &b);
      cnt[0]++;
      cnt[1] += ha != hb || (ha && a != b);
      if (ha && hb) {
        cnt[2]++;
        const int64_t d = a > b ? a - b : b - a; /* |a - b| cannot overflow: ratings are >= 0 (digits) */
        if (d > mx) mx = d;
      }
    }
  *maxd = mx < 0 ? NAN : (double)mx / (double)x->rscale;
}

/* parser_swap: per compatibility mode and policy, one row. */
static tl_status parser_swap(const tl_mtb_stab_ctx *x, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc,
                             tl_table *t) {
  if (tl_table_add_cols(t, SWAP_COLS, WC__N)) return TL_ENOMEM;
  size_t *start = malloc((ncfgs + 1) * sizeof *start); /* models: cfgs start[m] .. start[m + 1] */
  size_t nm = 0;
  for (size_t c = 0; start && c < ncfgs; c++)
    if (c == 0 || strcmp(cfgs[c].model, cfgs[c - 1].model) || cfgs[c].variant != cfgs[c - 1].variant) start[nm++] = c;
  if (start) start[nm] = ncfgs;
  double *s0 = malloc((nm ? nm : 1) * (1 + NTASK) * sizeof *s0), *sk = malloc((nm ? nm : 1) * (1 + NTASK) * sizeof *sk);
  double *col = malloc(2 * (nm ? nm : 1) * sizeof *col);
  int *r0 = malloc(2 * (nm ? nm : 1) * sizeof *r0);
  tl_status st = (!start || !s0 || !sk || !col || !r0) ? TL_ENOMEM : TL_OK;
  bool present[NTASK] = {false};
  int ntasks = 0;
  for (size_t i = 0; i < x->n; i++) present[x->d[i].task] = true;
  for (int g = 0; g < NTASK; g++) ntasks += present[g];
  for (int k = 1; !st && k < x->nmodes; k++)
    for (int pol = 0; !st && pol < 2; pol++) {
      for (size_t m = 0; m < nm; m++) {
        model_scores(x, acc, 0, pol, start[m], start[m + 1], s0 + m * (1 + NTASK));
        model_scores(x, acc, k, pol, start[m], start[m + 1], sk + m * (1 + NTASK));
      }
      int changed[1 + NTASK] = {0}; /* [0] overall, [1 + t] task t: some model's rank differs */
      for (int g = 0; g <= NTASK; g++) {
        for (size_t m = 0; m < nm; m++) {
          col[m] = s0[m * (1 + NTASK) + g];
          col[nm + m] = sk[m * (1 + NTASK) + g];
        }
        tl_mtb_stab_ranks(col, nm, r0);
        tl_mtb_stab_ranks(col + nm, nm, r0 + nm);
        for (size_t m = 0; m < nm; m++) changed[g] |= r0[m] != r0[nm + m];
      }
      int64_t cnt[3], ntc = 0;
      double maxd;
      swap_dialogues(x, acc, ncfgs, k, pol, cnt, &maxd);
      for (int g = 0; g < NTASK; g++) ntc += present[g] && changed[1 + g];
      size_t r = tl_table_add_row(t);
      if (r == (size_t)-1 || tl_table_set_str(t, r, WC_PARSER, mode_name(x, k)) ||
          tl_table_set_str(t, r, WC_PRIMARY, mode_name(x, 0)) ||
          tl_table_set_str(t, r, WC_POL, pol ? "fail" : "exclude")) {
        st = TL_ENOMEM;
        break;
      }
      tl_table_set_i64(t, r, WC_ND, cnt[0]);
      tl_table_set_i64(t, r, WC_NDC, cnt[1]);
      tl_table_set_i64(t, r, WC_NB, cnt[2]);
      tl_table_set_f64(t, r, WC_MAXD, maxd);
      tl_table_set_i64(t, r, WC_NM, (int64_t)nm);
      tl_table_set_i64(t, r, WC_NT, ntasks);
      tl_table_set_i64(t, r, WC_NTC, ntc);
      tl_table_set_i64(t, r, WC_OC, changed[0]);
    }
  free(start);
  free(s0);
  free(sk);
  free(col);
  free(r0);
  return st;
}

tl_status tl_mtb_stab_tables(const tl_mtb_stab_ctx *x, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc,
                             tl_table ***tabs, int *ntabs) {
  const int add = (x->nsamples > 1) + (x->nmodes > 1);
  if (!add) return TL_OK;
  tl_table *mine[2] = {NULL, NULL};
  int nmine = 0;
  tl_status st = TL_OK;
  if (x->nsamples > 1) {
    if (!(mine[nmine] = tl_table_new("/metrics/mtbench101/judge_stability"))) st = TL_ENOMEM;
    else st = stability(x, cfgs, ncfgs, acc, mine[nmine]);
    nmine++;
  }
  if (!st && x->nmodes > 1) {
    if (!(mine[nmine] = tl_table_new("/metrics/mtbench101/parser_swap"))) st = TL_ENOMEM;
    else st = parser_swap(x, cfgs, ncfgs, acc, mine[nmine]);
    nmine++;
  }
  tl_table **nt = st ? NULL : realloc(*tabs, (size_t)(*ntabs + nmine) * sizeof *nt);
  if (!nt) {
    for (int i = 0; i < nmine; i++) tl_table_free(mine[i]);
    return TL_ENOMEM;
  }
  for (int i = 0; i < nmine; i++) nt[*ntabs + i] = mine[i];
  *tabs = nt;
  *ntabs += nmine;
  return TL_OK;
}
