/* module.c - MT-Bench-101 as a benchmark module (tally/bench.h): golden-context generation, a
 * task-specific LLM judge, rating parsers, exact rank-invariant aggregation and model
 * comparison (../shared/spec/mtbench101.md; docs/MTBENCH101.md).
 *
 * Items are dialogues (sorted by their numeric id; the item id is its decimal text), units are
 * judged turns: sub j of a dialogue is turn first_judged + j (turn 0 of FR CR AR SA SC CM is
 * context only), so the benchmark file gives 3,615 units per (model, variant, seed).
 *
 * Stages: 0 = the model answers turn t given the golden turns before it as chat messages (never
 * its own earlier answers); 1 = the judge grades that answer (system prompt = preamble + task
 * rubric + score format; user prompt by concatenation, mtb_prompt.h). The evaluated model's
 * reasoning blocks are dropped before judging (strip_reasoning, default on); an answer whose
 * <think> never closes is not judged (status unterminated, rule "unterminated_answer").
 *
 * Modes: the job's rating parsers (mtb_rating.h), the first the primary.
 *
 * Aggregates, per mode k (blocks 2k and 2k+1):
 *   MIN [cfg][dialogue]: the least rating (thousandths) over the turns that parsed (INT64_MAX:
 *       none);
 *   SUM [cfg][dialogue][2] = (turns rated, turns not rated), then [cfg][TL_PS__COUNT] status
 *       counts, then [cfg][X__N] turns without an answer (no reply obtained from the model:
 *       no answer line, or a null one; engine errors are counted by their status), then the
 *       judge-agreement counters when the judge is sampled more than once.
 * Every score is a function of these integers (rank 0, in key order), so the tables are the same
 * on any number of ranks. Dialogue score = min over its turns; two policies for a turn without a
 * rating: "exclude" (it leaves the minimum, as the peers do) and "fail" (the dialogue has no
 * score). Task score = mean of its dialogues' scores; overall = unweighted mean of the task
 * scores (the paper's Avg); ability and domain = mean of their task scores (ours: the paper
 * reports none). Model comparison (an addition to the protocol): per dialogue
 * pref = sigmoid(0.3 (min_B - min_A)), wins/losses/ties for A, win rate with ties as half, soft
 * win rate mean(1 - pref), paired bootstrap CIs over dialogues (tl_boot_counts: resamples keyed
 * by (seed, r), so any split gives the same draws). */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtb_compare.h"
#include "mtb_data.h"
#include "mtb_prompt.h"
#include "mtb_rating.h"
#include "mtb_stability.h"
#include "tally/bench.h"
#include "tally/boot.h"
#include "tally/stats.h"
#include "tally/jsonl.h"
#include "tally/report.h"
#include "tally/think.h"

static const char *const VARIANTS[] = {"golden", NULL};
static const char *const KEYS[] = {"items", "tasks", "dialogues", "reference", "prompt_text", "system_prompt",
                                   "max_message_chars", "max_tokens", "strip_reasoning", "judge_temperature",
                                   "parsers", "comparison", "judge_samples", "judge_aggregate", "ci_resamples",
                                   "ci_seed", NULL};
enum { NM_MAX = 4 };
#define MAX_SAMPLES (TL_MAX_STAGES - 1)
/* Turn ratings (tl_parsed.value of r->res) and the MIN blocks are in units of 1/RSCALE: the
 * parsers' thousandths times AGG_F when the judge is sampled more than once, so that the mean of
 * up to 7 ratings (AGG_F = lcm(1..7)) and a median of two middle values are exact integers. With
 * one sample the parser's thousandths are kept as they are. */
#define AGG_F 420
static int64_t rscale(const tl_bench *b);
/* Agreement over judge samples (nsamples > 1), per mode and cfg, after the status counts of the
 * SUM block: AG__N counters, then the coincidence matrix [NLEV][NLEV] of the ratings on the
 * half-point grid 1, 1.5, .., 10 (level (v - 1000) / 500 of the thousandths), each ordered pair of
 * a turn's rated samples adding COINC / (m - 1) (m: its rated samples on the grid; COINC =
 * lcm(1..6) keeps that an integer). */
enum { AG_TURNS2, AG_ALLEQ, AG_RANGE, AG_SOK, AG_SNO, AG_OFFGRID, AG__N };
#define NLEV 19
#define COINC 60
#define NTASK TL_MTB__NTASKS
#define NABIL TL_MTB__NABILITIES
#define NDOM TL_MTB__NDOMAINS
#define NGROUPS (1 + NTASK + NABIL + NDOM) /* overall, tasks, abilities, domains */

struct tl_bench {
  char **paths;
  int npaths;
  bool task_on[NTASK];    /* "tasks" (all when absent) */
  bool task_filter;       /* "tasks" was given */
  int64_t *want_ids;      /* "dialogues" (NULL: all), sorted */
  size_t nwant;
  tl_mtb_ref ref;
  tl_mtb_text text;
  char *system_prompt;    /* generation system prompt, NULL = none */
  int max_msg_chars;      /* 0 = no cap */
  int max_tokens;         /* generation; 0 = the engine's default */
  bool strip_reasoning;
  double judge_temp;
  int nsamples;           /* judge_samples: the judge is asked this many times per turn (stages 1..) */
  bool agg_mean;          /* judge_aggregate: mean (else median) of the samples' ratings */
  int modes[NM_MAX], nmodes;
  tl_mtb_rater *raters[NM_MAX];
  uint64_t boot_B, boot_seed;
  double level;
  bool cmp_off;           /* "comparison": false: no comparison table */
  int ci_B;               /* ci_resamples: the headline CIs' resamples (0: none) */
  double ci_seed;         /* ci_seed: their Philox seed (an integer < 2^53) */
  /* after load: dialogues sorted by id */
  tl_mtb_dialogue *d;
  char **ids;             /* [n] decimal ids */
  size_t n;
  tl_strmap by_id;
};

static void dialogues_release(tl_bench *b) {
  for (size_t i = 0; i < b->n; i++) {
    tl_mtb_dialogue_release(&b->d[i]);
    free(b->ids[i]);
  }
  free(b->d);
  free(b->ids);
  b->d = NULL;
  b->ids = NULL;
  b->n = 0;
  tl_strmap_release(&b->by_id);
  tl_strmap_init(&b->by_id);
}

static void mtb_free(tl_bench *b) {
  if (!b) return;
  dialogues_release(b);
  for (int i = 0; i < b->npaths; i++) free(b->paths[i]);
  free(b->paths);
  free(b->want_ids);
  free(b->system_prompt);
  for (int k = 0; k < NM_MAX; k++) tl_mtb_rater_free(b->raters[k]);
  free(b);
}

#define PROBLEM(...)                \
  do {                              \
    tl_job_problem(c, __VA_ARGS__); \
    bad++;                          \
  } while (0)

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

static int64_t rscale(const tl_bench *b) { return b->nsamples > 1 ? (int64_t)TL_MTB_RATING_SCALE * AGG_F : TL_MTB_RATING_SCALE; }

static tl_bench *mtb_create(tl_job_ctx *c, const cJSON *e, const char *where) {
  tl_bench *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  tl_strmap_init(&b->by_id);
  int bad = 0;
  char w[200];
  for (int t = 0; t < NTASK; t++) b->task_on[t] = true;
  b->strip_reasoning = true;
  b->judge_temp = 0.6;
  b->nsamples = 1;
  b->boot_B = 1000;
  b->level = 0.95;
  b->ci_B = 1000;
  b->modes[0] = TL_MTB_RATE_STRICT;
  b->nmodes = 1;

  snprintf(w, sizeof w, "%s.items", where);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "items");
  if (!v) PROBLEM(w, "missing (the MT-Bench-101 file: mtbench101.jsonl, or a list of files)");
  else bad += tl_job_paths(c, v, w, "an items file", &b->paths, &b->npaths);

  if ((v = cJSON_GetObjectItemCaseSensitive(e, "tasks"))) {
    snprintf(w, sizeof w, "%s.tasks", where);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0) {
      PROBLEM(w, "must be a non-empty list of task codes (%s)", tl_mtb_task_codes());
    } else {
      for (int t = 0; t < NTASK; t++) b->task_on[t] = false;
      b->task_filter = true;
      const cJSON *x;
      cJSON_ArrayForEach(x, v) {
        int t = cJSON_IsString(x) ? tl_mtb_task_from_code(x->valuestring) : -1;
        if (t < 0) PROBLEM(w, "unknown task %s%s%s (known: %s)", cJSON_IsString(x) ? "'" : "",
                           cJSON_IsString(x) ? x->valuestring : "(not a string)", cJSON_IsString(x) ? "'" : "",
                           tl_mtb_task_codes());
        else if (b->task_on[t]) PROBLEM(w, "task '%s' listed twice", x->valuestring);
        else b->task_on[t] = true;
      }
    }
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(e, "dialogues"))) {
    snprintf(w, sizeof w, "%s.dialogues", where);
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
    if (n == 0) {
      PROBLEM(w, "must be a non-empty list of dialogue ids (integers)");
    } else if (!(b->want_ids = malloc((size_t)n * sizeof *b->want_ids))) {
      PROBLEM(w, "out of memory");
    } else {
      const cJSON *x;
      cJSON_ArrayForEach(x, v) {
        if (!tl_json_is_int(x, 1, 9007199254740992.0)) PROBLEM(w, "dialogue ids are positive integers");
        else b->want_ids[b->nwant++] = (int64_t)x->valuedouble;
      }
      qsort(b->want_ids, b->nwant, sizeof *b->want_ids, cmp_i64);
      for (size_t i = 1; i < b->nwant; i++)
        if (b->want_ids[i] == b->want_ids[i - 1]) PROBLEM(w, "dialogue %" PRId64 " listed twice", b->want_ids[i]);
    }
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(e, "reference"))) {
    snprintf(w, sizeof w, "%s.reference", where);
    int r = cJSON_IsString(v) ? tl_mtb_ref_from_name(v->valuestring) : -1;
    if (r >= 0) b->ref = (tl_mtb_ref)r;
    else PROBLEM(w, "must be \"golden\" (the current turn's golden answer) or \"opencompass\" (upstream's repr of the dialogue)");
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(e, "prompt_text"))) {
    snprintf(w, sizeof w, "%s.prompt_text", where);
    int t = cJSON_IsString(v) ? tl_mtb_text_from_name(v->valuestring) : -1;
    if (t < 0) PROBLEM(w, "must be \"verbatim\" (upstream's strings) or \"clean\" (typos fixed)");
    else b->text = (tl_mtb_text)t;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(e, "system_prompt")) && !cJSON_IsNull(v)) {
    snprintf(w, sizeof w, "%s.system_prompt", where);
    if (!cJSON_IsString(v)) PROBLEM(w, "must be a string (the generation system prompt) or null");
    else if (!(b->system_prompt = tl_strdup(v->valuestring))) PROBLEM(w, "out of memory");
  }
  bad += tl_job_key_int(c, e, "max_message_chars", where, 0, 1e9, "an integer >= 0 (0: no cap)", &b->max_msg_chars);
  bad += tl_job_key_int(c, e, "max_tokens", where, 0, 1e9, "an integer >= 0 (0: the engine's default)", &b->max_tokens);
  bad += tl_job_key_bool(c, e, "strip_reasoning", where, &b->strip_reasoning);
  bad += tl_job_key_int(c, e, "ci_resamples", where, 0, 1e7, "an integer from 0 to 10000000 (0: no CI)", &b->ci_B);
  if ((v = cJSON_GetObjectItemCaseSensitive(e, "ci_seed"))) {
    snprintf(w, sizeof w, "%s.ci_seed", where);
    if (!tl_json_is_int(v, 0, 9007199254740992.0)) PROBLEM(w, "must be an integer >= 0");
    else b->ci_seed = v->valuedouble;
  }
  if (b->ci_B == 1) PROBLEM(where, "ci_resamples: must be 0 (no CI) or at least 2");
  bad += tl_job_key_num(c, e, "judge_temperature", where, 0, 2, &b->judge_temp);
  bad += tl_job_key_int(c, e, "judge_samples", where, 1, MAX_SAMPLES, "an integer from 1 to 7 (judge calls per turn)",
                        &b->nsamples);
  if ((v = cJSON_GetObjectItemCaseSensitive(e, "judge_aggregate"))) {
    snprintf(w, sizeof w, "%s.judge_aggregate", where);
    if (!cJSON_IsString(v) || (strcmp(v->valuestring, "median") && strcmp(v->valuestring, "mean")))
      PROBLEM(w, "must be \"median\" or \"mean\" (of the judge samples' ratings)");
    else b->agg_mean = !strcmp(v->valuestring, "mean");
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(e, "parsers"))) {
    snprintf(w, sizeof w, "%s.parsers", where);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0 || cJSON_GetArraySize(v) > NM_MAX) {
      PROBLEM(w, "must be a list of 1 to 4 of \"mtbench101\", \"mtbench101-opencompass\", \"fastchat\", \"judgearena\"");
    } else {
      b->nmodes = 0;
      const cJSON *x;
      cJSON_ArrayForEach(x, v) {
        int m = cJSON_IsString(x) ? tl_mtb_rate_mode_from_name(x->valuestring) : -1;
        int dup = 0;
        for (int k = 0; k < b->nmodes; k++) dup |= b->modes[k] == m;
        if (m < 0) PROBLEM(w, "unknown parser %s%s%s (want mtbench101, mtbench101-opencompass, fastchat or judgearena)",
                           cJSON_IsString(x) ? "'" : "", cJSON_IsString(x) ? x->valuestring : "(not a string)",
                           cJSON_IsString(x) ? "'" : "");
        else if (dup) PROBLEM(w, "parser '%s' listed twice", x->valuestring);
        else b->modes[b->nmodes++] = m;
      }
    }
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(e, "comparison"))) {
    snprintf(w, sizeof w, "%s.comparison", where);
    const cJSON *x;
    if (cJSON_IsBool(v)) {
      b->cmp_off = cJSON_IsFalse(v); /* false: no comparisons; true: the defaults */
    } else if (!cJSON_IsObject(v)) {
      PROBLEM(w, "must be false (no comparisons) or an object {\"resamples\", \"seed\", \"level\"}");
    } else {
      cJSON_ArrayForEach(x, v) {
        if (!strcmp(x->string, "resamples")) {
          if (!tl_json_is_int(x, 0, 1e7)) PROBLEM(w, "resamples must be an integer from 0 to 10000000");
          else b->boot_B = (uint64_t)x->valuedouble;
        } else if (!strcmp(x->string, "seed")) {
          if (!tl_json_is_int(x, 0, 9007199254740992.0)) PROBLEM(w, "seed must be an integer >= 0");
          else b->boot_seed = (uint64_t)x->valuedouble;
        } else if (!strcmp(x->string, "level")) {
          if (!cJSON_IsNumber(x) || !(x->valuedouble > 0 && x->valuedouble < 1)) PROBLEM(w, "level must be in (0, 1)");
          else b->level = x->valuedouble;
        } else {
          PROBLEM(w, "unknown key '%s' (known: resamples, seed, level)", x->string);
        }
      }
    }
  }
  if (bad) {
    mtb_free(b);
    return NULL;
  }
  return b;
}

static int mtb_n_stages(const tl_bench *b) { return 1 + b->nsamples; }

static int mtb_default_variant(const tl_bench *b) {
  (void)b;
  return 0;
}

/* ---- loading ---- */

typedef struct {
  tl_bench *b;
  size_t cap;
  tl_inlog *log;
  tl_err *err;
  tl_strmap seen; /* id -> 1 */
} loading;

static tl_status logged(tl_status st, tl_err *err) {
  if (st == TL_ENOMEM) return tl_err_set(err, TL_ENOMEM, "out of memory");
  return st; /* TL_EINPUT under strict input (the log holds the message) */
}

static bool wanted(const tl_bench *b, const tl_mtb_dialogue *d) {
  if (!b->task_on[d->task]) return false;
  return !b->want_ids || bsearch(&d->id, b->want_ids, b->nwant, sizeof *b->want_ids, cmp_i64) != NULL;
}

static tl_status dialogue_line(void *vctx, const cJSON *o, const tl_jsonl *r) {
  loading *c = vctx;
  tl_bench *b = c->b;
  tl_mtb_dialogue d;
  tl_mtb_dialogue_init(&d);
  tl_err e = {{0}};
  tl_status st = tl_mtb_dialogue_from_json(o, &d, &e);
  if (st == TL_ENOMEM) return tl_err_set(c->err, TL_ENOMEM, "out of memory");
  if (st == TL_OK) st = tl_mtb_dialogue_check(&d, &e);
  if (st) {
    tl_mtb_dialogue_release(&d);
    return logged(tl_inlog_report(c->log, TL_IN_BAD_FIELD, r->path, r->line_no, "%s", e.msg), c->err);
  }
  char id[32], uid[64];
  snprintf(id, sizeof id, "%" PRId64, d.id);
  tl_mtb_dialogue_uid(&d, uid, sizeof uid);
  bool inserted = false;
  if (tl_strmap_put(&c->seen, id, 1, &inserted, NULL)) {
    tl_mtb_dialogue_release(&d);
    return tl_err_set(c->err, TL_ENOMEM, "out of memory");
  }
  if (!inserted) {
    tl_mtb_dialogue_release(&d);
    return logged(tl_inlog_report(c->log, TL_IN_DUPLICATE, r->path, r->line_no,
                                  "duplicate dialogue id %s (%s; the first one is kept)", id, uid),
                  c->err);
  }
  if (!wanted(b, &d)) {
    tl_mtb_dialogue_release(&d);
    return TL_OK;
  }
  if (b->n == c->cap) {
    size_t nc = c->cap ? 2 * c->cap : 256;
    tl_mtb_dialogue *nd = realloc(b->d, nc * sizeof *nd);
    if (nd) b->d = nd;
    char **ni = nd ? realloc(b->ids, nc * sizeof *ni) : NULL;
    if (ni) b->ids = ni;
    if (!nd || !ni) {
      tl_mtb_dialogue_release(&d);
      return tl_err_set(c->err, TL_ENOMEM, "out of memory");
    }
    c->cap = nc;
  }
  b->d[b->n] = d;
  b->ids[b->n] = NULL;
  b->n++;
  return TL_OK;
}

static int cmp_dialogue(const void *x, const void *y) {
  const tl_mtb_dialogue *a = x, *b = y;
  return (a->id > b->id) - (a->id < b->id);
}

static tl_status mtb_load(tl_bench *b, size_t max_line, tl_inlog *log, tl_err *err) {
  dialogues_release(b);
  loading c = {b, 0, log, err, {0}};
  tl_strmap_init(&c.seen);
  tl_status st = TL_OK;
  for (int f = 0; f < b->npaths && !st; f++) {
    tl_jsonl r;
    if ((st = tl_jsonl_open(&r, b->paths[f], max_line, err))) break;
    st = tl_inlog_each(log, &r, "dialogues", dialogue_line, &c, err);
    tl_jsonl_close(&r);
  }
  tl_strmap_release(&c.seen);
  if (!st && b->n > 1) qsort(b->d, b->n, sizeof *b->d, cmp_dialogue);
  for (size_t i = 0; !st && i < b->n; i++) {
    char id[32];
    snprintf(id, sizeof id, "%" PRId64, b->d[i].id);
    if (!(b->ids[i] = tl_strdup(id)) || tl_strmap_put(&b->by_id, id, i, NULL, NULL))
      st = tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  /* a dialogue the job names that no file holds is the user's typo, never an empty result */
  for (size_t k = 0; !st && b->want_ids && k < b->nwant; k++) {
    char id[32];
    snprintf(id, sizeof id, "%" PRId64, b->want_ids[k]);
    size_t i;
    if (!tl_strmap_get(&b->by_id, id, &i))
      st = tl_err_set(err, TL_EJOB, "\"dialogues\" names dialogue %s, which the items files do not hold%s", id,
                      b->task_filter ? " (or whose task \"tasks\" leaves out)" : "");
  }
  if (!st && b->n == 0) st = tl_err_set(err, TL_EJOB, "no MT-Bench-101 dialogue to run (the items files hold none%s)",
                                        b->want_ids ? " of the dialogues named" : " of the tasks named");
  for (int k = 0; !st && k < b->nmodes; k++)
    if (!(b->raters[k] = tl_mtb_rater_new((tl_mtb_rate_mode)b->modes[k], err))) st = TL_EINTERNAL;
  if (st) dialogues_release(b);
  return st;
}

static size_t mtb_n_items(const tl_bench *b) { return b->n; }
static const char *mtb_item_id(const tl_bench *b, size_t i) { return i < b->n ? b->ids[i] : NULL; }
static int mtb_item_find(const tl_bench *b, const char *id, size_t *i) {
  size_t k;
  if (!tl_strmap_get(&b->by_id, id, &k)) return 0;
  if (i) *i = k;
  return 1;
}
static uint32_t mtb_n_subs(const tl_bench *b, size_t i) { return i < b->n ? tl_mtb_judged_turns(&b->d[i]) : 0; }
/* The sub of the dialogue's 1-based turn turn_id (upstream's turn_id): turn_id - 1 - first
 * judged turn; a context-only turn (turn 1 of FR CR AR SA SC CM) or one past the dialogue names
 * no unit. */
static int mtb_turn_sub(const tl_bench *b, size_t i, uint64_t turn_id, uint32_t *sub, char *why, size_t nwhy) {
  if (i >= b->n) return snprintf(why, nwhy, "no such dialogue"), -1;
  const tl_mtb_dialogue *d = &b->d[i];
  const uint32_t first = tl_mtb_first_judged(d->task);
  if (turn_id < 1 || turn_id > d->nturns)
    return snprintf(why, nwhy, "dialogue %s (%s) has %u turn%s, turn_id 1 to %u", b->ids[i], tl_mtb_task_code(d->task),
                    (unsigned)d->nturns, d->nturns == 1 ? "" : "s", (unsigned)d->nturns), -1;
  if (turn_id - 1 < first)
    return snprintf(why, nwhy, "turn 1 of a %s dialogue is context only, never answered or judged (dialogue %s: "
                    "judged turn_id %u to %u)", tl_mtb_task_code(d->task), b->ids[i], (unsigned)first + 1,
                    (unsigned)d->nturns), -1;
  *sub = (uint32_t)(turn_id - 1 - first);
  return 0;
}
static int mtb_n_modes(const tl_bench *b) { return b->nmodes; }
static const char *mtb_mode_name(const tl_bench *b, int k) {
  return k >= 0 && k < b->nmodes ? tl_mtb_rate_mode_name((tl_mtb_rate_mode)b->modes[k]) : NULL;
}

/* ---- requests ---- */

/* Appends s (cut to max_chars code points when max_chars > 0) and its NUL; returns its offset. */
static tl_status put_capped(tl_buf *a, const char *s, int max_chars, size_t *off) {
  *off = a->len;
  size_t n = strlen(s);
  if (max_chars > 0) {
    size_t i = 0;
    int k = 0;
    while (i < n && k < max_chars) {
      uint32_t cp;
      size_t l = tl_utf8_decode(s + i, n - i, &cp);
      i += l ? l : 1;
      k++;
    }
    n = i;
  }
  tl_status st = tl_buf_append(a, s, n);
  return st ? st : tl_buf_append(a, "", 1);
}

/* The prediction the judge sees: the answer with its reasoning blocks dropped (malloc'd), or
 * NULL with *unterminated = 1 when a <think> never closes. */
static char *prediction(const tl_bench *b, const char *answer, int *unterminated, int *oom) {
  *unterminated = *oom = 0;
  if (!b->strip_reasoning) {
    char *p = tl_strdup(answer);
    *oom = !p;
    return p;
  }
  tl_buf buf;
  tl_buf_init(&buf);
  const char *v = NULL;
  size_t vl = 0;
  int th = tl_think_strip(answer, strlen(answer), &buf, &v, &vl);
  char *p = NULL;
  if (th == TL_THINK_UNTERMINATED) *unterminated = 1;
  else if (th == TL_THINK_NOMEM || !(p = tl_strndup(v, vl))) *oom = 1;
  tl_buf_release(&buf);
  return p;
}

static tl_status mtb_request(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, int s, const tl_row *r,
                             tl_buf *arena, tl_bench_req *out, tl_err *err) {
  memset(out, 0, sizeof *out);
  out->temperature = -1;
  if (u->item >= b->n || u->sub >= tl_mtb_judged_turns(&b->d[u->item]))
    return tl_err_set(err, TL_EINTERNAL, "mtbench101: unit (item %" PRIu32 ", sub %" PRIu32 ") out of range", u->item,
                      u->sub);
  const tl_mtb_dialogue *d = &b->d[u->item];
  const uint32_t t = tl_mtb_first_judged(d->task) + u->sub;
  if (s == 0) {
    /* system?, then user/assistant golden pairs of turns < t, then user t */
    int nmsg = (b->system_prompt ? 1 : 0) + 2 * (int)t + 1;
    if (nmsg > TL_MAX_MSGS)
      return tl_err_set(err, TL_EINPUT, "mtbench101: dialogue %s turn %u needs %d chat messages (at most %d)",
                        b->ids[u->item], t + 1, nmsg, TL_MAX_MSGS);
    size_t off[TL_MAX_MSGS];
    const char *txt[TL_MAX_MSGS], *role[TL_MAX_MSGS];
    int k = 0;
    if (b->system_prompt) {
      role[k] = "system";
      txt[k++] = b->system_prompt;
    }
    for (uint32_t i = 0; i < t; i++) {
      role[k] = "user";
      txt[k++] = d->turns[i].user;
      role[k] = "assistant";
      txt[k++] = d->turns[i].bot;
    }
    role[k] = "user";
    txt[k++] = d->turns[t].user;
    for (int i = 0; i < k; i++) {
      out->msgs[i].role = role[i];
      if (b->max_msg_chars <= 0) {
        out->msgs[i].content = txt[i]; /* the module's own strings */
      } else if (put_capped(arena, txt[i], b->max_msg_chars, &off[i])) {
        return tl_err_set(err, TL_ENOMEM, "out of memory");
      }
    }
    if (b->max_msg_chars > 0) /* pointers only now: the arena moves while it grows */
      for (int i = 0; i < k; i++) out->msgs[i].content = arena->data + off[i];
    out->nmsg = k;
    out->role = TL_ROLE_MODEL;
    out->max_tokens = b->max_tokens;
    return TL_OK;
  }
  if (s < 1 || s > b->nsamples) return tl_err_set(err, TL_EINTERNAL, "mtbench101: no stage %d", s);
  if (!r->text[0]) {
    out->skip = 1; /* no answer: nothing to judge */
    return TL_OK;
  }
  int unterminated, oom;
  char *pred = prediction(b, r->text[0], &unterminated, &oom);
  if (oom) return tl_err_set(err, TL_ENOMEM, "out of memory");
  if (unterminated) {
    out->skip = 1; /* the answer never left its reasoning: scored unterminated, not judged */
    return TL_OK;
  }
  size_t off = arena->len;
  tl_status st = tl_mtb_judge_user(d, t, pred, b->ref, b->text, arena);
  free(pred);
  if (!st) st = tl_buf_append(arena, "", 1);
  if (st) return tl_err_set(err, st, "mtbench101: judge prompt of dialogue %s turn %u: %s", b->ids[u->item], t + 1,
                            tl_strerror(st));
  out->role = TL_ROLE_JUDGE;
  out->msgs[0].role = "system";
  out->msgs[0].content = tl_mtb_judge_system(d->task, b->text);
  out->msgs[1].role = "user";
  out->msgs[1].content = arena->data + off;
  out->nmsg = 2;
  out->temperature = b->judge_temp;
  if (b->nsamples > 1) { /* sample j = s - 1 asks with seed cfg seed + j (- j where + j would overflow) */
    const int seed = cfgs[u->cfg].seed, j = s - 1;
    out->seed_set = 1;
    out->seed = seed <= INT_MAX - j ? seed + j : seed - j;
  }
  return TL_OK;
}

/* ---- scoring ---- */

/* The status every judge sample of a turn gets when the turn is not judged (no answer, or an
 * answer that never left its reasoning); 0 when it is judged. */
static int unjudged(const tl_bench *b, const tl_row *r, int *oom) {
  *oom = 0;
  if (!r->text[0]) return 1;
  if (!b->strip_reasoning) return 0;
  tl_buf buf;
  tl_buf_init(&buf);
  const char *v;
  size_t vl;
  int th = tl_think_strip(r->text[0], strlen(r->text[0]), &buf, &v, &vl);
  tl_buf_release(&buf);
  *oom = th == TL_THINK_NOMEM;
  return th == TL_THINK_UNTERMINATED ? 2 : 0;
}

/* Rates one judge reply (stage s) into p, or gives it the status of an unjudged turn. */
static tl_status rate_sample(const tl_bench *b, int k, int why, const char *judgment, tl_parsed *p) {
  tl_parsed_release(p);
  if (why == 1) {
    p->status = TL_PS_MISSING;
    p->rule = "";
  } else if (why == 2) {
    p->status = TL_PS_UNTERMINATED;
    p->rule = "unterminated_answer";
  } else if (!judgment) {
    p->status = TL_PS_MISSING;
    p->rule = "no_judgment";
  } else {
    return tl_mtb_rate(b->raters[k], judgment, p);
  }
  return TL_OK;
}

static int cmp_i64v(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, c = *(const int64_t *)y;
  return (a > c) - (a < c);
}

/* The turn's rating under mode k from its samples sp[0..ns) (ns > 1) into p: the median (or
 * mean) of the rated samples in units of 1/RSCALE; a turn with no rated sample takes sample 0's
 * status and rule. A rating too large to average exactly (beyond INT64_MAX / (AGG_F * 8)
 * thousandths, reachable only under the compatibility parsers, which check no range) counts as
 * not rated, status out_of_range, rule "too_large_to_average". */
static tl_status aggregate(const tl_bench *b, tl_parsed *sp, int ns, tl_parsed *p) {
  int64_t v[MAX_SAMPLES];
  int m = 0;
  const int64_t cap = INT64_MAX / (AGG_F * 8);
  for (int j = 0; j < ns; j++) {
    if (sp[j].status != TL_PS_OK) continue;
    if (sp[j].value > cap || sp[j].value < -cap) {
      sp[j].status = TL_PS_OUT_OF_RANGE;
      sp[j].rule = "too_large_to_average";
      continue;
    }
    v[m++] = sp[j].value;
  }
  tl_parsed_release(p);
  if (m == 0) {
    p->status = sp[0].status;
    p->rule = sp[0].rule;
    if (sp[0].answer && !(p->answer = tl_strdup(sp[0].answer))) return TL_ENOMEM;
    return TL_OK;
  }
  qsort(v, (size_t)m, sizeof *v, cmp_i64v);
  int64_t x;
  if (b->agg_mean) {
    int64_t sum = 0;
    for (int j = 0; j < m; j++) sum += v[j];
    x = sum * (AGG_F / m);
  } else {
    x = m % 2 ? v[m / 2] * AGG_F : (v[m / 2 - 1] + v[m / 2]) * (AGG_F / 2);
  }
  char txt[48];
  snprintf(txt, sizeof txt, "%.10g", (double)x / (double)rscale(b));
  p->status = TL_PS_OK;
  p->value = x;
  p->rule = b->agg_mean ? "mean_of_samples" : "median_of_samples";
  return (p->answer = tl_strdup(txt)) ? TL_OK : TL_ENOMEM;
}

/* Scores every mode. One sample: the parser's result is the turn's. More: each sample's parse
 * goes to r->extra[k * nsamples + j], the turn's rating is their aggregate (aggregate()). */
static tl_status mtb_score(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, tl_row *r, tl_err *err) {
  (void)cfgs;
  int oom, why = unjudged(b, r, &oom);
  if (oom) return tl_err_set(err, TL_ENOMEM, "out of memory");
  const int ns = b->nsamples;
  if (ns > 1 && r->nextra != b->nmodes * ns) {
    for (int i = 0; i < r->nextra; i++) tl_parsed_release(&r->extra[i]);
    free(r->extra);
    r->nextra = 0;
    if (!(r->extra = malloc((size_t)(b->nmodes * ns) * sizeof *r->extra))) return tl_err_set(err, TL_ENOMEM, "out of memory");
    r->nextra = b->nmodes * ns;
    for (int i = 0; i < r->nextra; i++) tl_parsed_init(&r->extra[i]);
  }
  for (int k = 0; k < b->nmodes; k++) {
    tl_status st = TL_OK;
    if (ns == 1) {
      st = rate_sample(b, k, why, r->text[1], &r->res[k]);
    } else {
      for (int j = 0; !st && j < ns; j++) st = rate_sample(b, k, why, r->text[1 + j], &r->extra[k * ns + j]);
      if (!st) st = aggregate(b, &r->extra[k * ns], ns, &r->res[k]);
    }
    if (st) return tl_err_set(err, st, "mtbench101: rating dialogue %s failed: %s", b->ids[u->item], tl_strerror(st));
  }
  return TL_OK;
}

/* ---- aggregates ---- */

/* The agreement part of a SUM block starts here (nsamples > 1): [cfg][AG__N + NLEV * NLEV]. */
/* Per cfg after the status counts: turns with no answer obtained (the model gave no reply line,
 * or a null one); a model's engine errors are counted by their status. */
enum { X_NOANS, X__N };
static size_t x_off(const tl_bench *b, size_t ncfgs) { return ncfgs * b->n * 2 + ncfgs * TL_PS__COUNT; }
static size_t ag_off(const tl_bench *b, size_t ncfgs) { return x_off(b, ncfgs) + ncfgs * X__N; }
static size_t ag_len(const tl_bench *b) { return b->nsamples > 1 ? AG__N + NLEV * NLEV : 0; }
static size_t st_off(const tl_bench *b, size_t ncfgs) { return ag_off(b, ncfgs) + ncfgs * ag_len(b); }
static size_t sum_len(const tl_bench *b, size_t ncfgs) { return st_off(b, ncfgs) + ncfgs * tl_mtb_stab_sum_len(b->nsamples); }
/* The judge-stability report's view of the layout (mtb_stability.h): its counters after the
 * agreement part of each SUM block, its negated max spreads after the dialogues of each MIN block. */
static tl_mtb_stab_ctx stab_ctx(const tl_bench *b, size_t ncfgs) {
  return (tl_mtb_stab_ctx){b->nmodes, b->modes, b->nsamples, rscale(b), b->n, b->d, st_off(b, ncfgs), ncfgs * b->n, VARIANTS[0]};
}

static int mtb_acc_layout(const tl_bench *b, size_t ncfgs, tl_acc_block *out) {
  for (int k = 0; k < b->nmodes; k++) {
    out[2 * k] = (tl_acc_block){ncfgs * b->n + ncfgs * tl_mtb_stab_min_len(b->nsamples), TL_ACC_MIN, INT64_MAX};
    out[2 * k + 1] = (tl_acc_block){sum_len(b, ncfgs), TL_ACC_SUM, 0};
  }
  return 2 * b->nmodes;
}

/* Adds one turn's samples sp[0..nsamples) to its cfg's agreement counters ag[AG__N + NLEV^2]:
 * turns with two or more rated samples, those where all agree, the sum of their ranges
 * (thousandths), rated and unrated samples, rated samples off the half-point grid (left out of
 * alpha), and the coincidences (see AG__N). */
static void agree_add(const tl_bench *b, const tl_parsed *sp, int64_t *ag) {
  int64_t v[MAX_SAMPLES];
  int lev[MAX_SAMPLES];
  int m = 0, ml = 0;
  for (int j = 0; j < b->nsamples; j++) {
    if (sp[j].status != TL_PS_OK) {
      ag[AG_SNO]++;
      continue;
    }
    ag[AG_SOK]++;
    v[m++] = sp[j].value;
    int64_t x = sp[j].value;
    if (x >= 1000 && x <= 10000 && x % 500 == 0) lev[ml++] = (int)((x - 1000) / 500);
    else ag[AG_OFFGRID]++;
  }
  if (m >= 2) {
    int64_t lo = v[0], hi = v[0];
    for (int j = 1; j < m; j++) {
      if (v[j] < lo) lo = v[j];
      if (v[j] > hi) hi = v[j];
    }
    ag[AG_TURNS2]++;
    ag[AG_ALLEQ] += lo == hi;
    ag[AG_RANGE] += hi - lo;
  }
  if (ml >= 2)
    for (int i = 0; i < ml; i++)
      for (int j = 0; j < ml; j++)
        if (i != j) ag[AG__N + lev[i] * NLEV + lev[j]] += COINC / (ml - 1);
}

static void mtb_acc_add(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, const tl_unit *u, const tl_row *r, int64_t *const *acc) {
  (void)cfgs;
  if (u->cfg >= ncfgs || u->item >= b->n) return;
  for (int k = 0; k < b->nmodes; k++) {
    const tl_parsed *p = &r->res[k];
    size_t di = (size_t)u->cfg * b->n + u->item;
    int64_t *sum = acc[2 * k + 1];
    if (p->status == TL_PS_OK) {
      if (p->value < acc[2 * k][di]) acc[2 * k][di] = p->value;
      sum[2 * di]++;
    } else {
      sum[2 * di + 1]++;
    }
    if (p->status >= 0 && p->status < TL_PS__COUNT) sum[ncfgs * b->n * 2 + (size_t)u->cfg * TL_PS__COUNT + p->status]++;
    if (!r->text[0] && p->status != TL_PS_ENGINE_ERROR) sum[x_off(b, ncfgs) + (size_t)u->cfg * X__N + X_NOANS]++;
    if (b->nsamples > 1 && r->nextra == b->nmodes * b->nsamples)
      agree_add(b, &r->extra[k * b->nsamples], sum + ag_off(b, ncfgs) + (size_t)u->cfg * ag_len(b));
    if (b->nsamples > 1 && r->nextra == b->nmodes * b->nsamples)
      tl_mtb_stab_add(&r->extra[k * b->nsamples], b->nsamples, sum + st_off(b, ncfgs) + (size_t)u->cfg * TL_MTB_ST__N,
                      &acc[2 * k][ncfgs * b->n + u->cfg]);
  }
}

/* Dialogue scores of one cfg under one mode: sc[2][n] (policy 0 exclude, 1 fail; NaN: none). */
static void dialogue_scores(const tl_bench *b, int64_t *const *acc, int k, size_t cfg, double *ex, double *fa) {
  const int64_t *mn = acc[2 * k], *sum = acc[2 * k + 1];
  for (size_t i = 0; i < b->n; i++) {
    size_t di = cfg * b->n + i;
    int64_t ok = sum[2 * di], no = sum[2 * di + 1];
    double v = ok > 0 && mn[di] != INT64_MAX ? (double)mn[di] / (double)rscale(b) : NAN;
    ex[i] = v;
    fa[i] = no == 0 ? v : NAN;
  }
}

/* Group g of NGROUPS: 0 overall, 1.. tasks, then abilities, then domains. */
static const char *group_level(int g) {
  return g == 0 ? "overall" : g <= NTASK ? "task" : g <= NTASK + NABIL ? "ability" : "domain";
}
static const char *group_name(int g) {
  if (g == 0) return "all";
  if (g <= NTASK) return tl_mtb_task_code(g - 1);
  if (g <= NTASK + NABIL) return tl_mtb_ability_name(g - 1 - NTASK);
  return tl_mtb_domain_name(g - 1 - NTASK - NABIL);
}
static bool task_in_group(int task, int g) {
  if (g == 0) return true;
  if (g <= NTASK) return task == g - 1;
  if (g <= NTASK + NABIL) return tl_mtb_task_ability(task) == g - 1 - NTASK;
  return tl_mtb_task_domain(task) == g - 1 - NTASK - NABIL;
}

/* Scores of every group from dialogue scores ds[n] (one policy): the mean of the dialogues of
 * each task (tscore), then overall/ability/domain = mean of the defined task scores in them.
 * gs[NGROUPS]; ndlg[NGROUPS] dialogues in the group, nsc[NGROUPS] of them with a score. */
static void group_scores(const tl_bench *b, const double *ds, double *gs, int64_t *ndlg, int64_t *nsc) {
  double tsum[NTASK] = {0};
  int64_t tn[NTASK] = {0}, tall[NTASK] = {0};
  for (size_t i = 0; i < b->n; i++) {
    int t = b->d[i].task;
    tall[t]++;
    if (!isnan(ds[i])) {
      tsum[t] += ds[i];
      tn[t]++;
    }
  }
  for (int g = 0; g < NGROUPS; g++) {
    double s = 0;
    int m = 0;
    ndlg[g] = nsc[g] = 0;
    for (int t = 0; t < NTASK; t++) {
      if (!task_in_group(t, g)) continue;
      ndlg[g] += tall[t];
      nsc[g] += tn[t];
      if (tn[t]) {
        s += tsum[t] / (double)tn[t];
        m++;
      }
    }
    gs[g] = m ? s / m : NAN;
  }
}


static const char *policy_name(int p) { return p == 0 ? "exclude" : "fail"; }

/* ---- the item table: one row per judged turn ---- */

static const tl_col_spec TURN_COLS[] = {
    {"model", TL_COL_STR, "model under test"},
    {"prompt_variant", TL_COL_STR, "prompt variant (golden: the golden history as context)"},
    {"seed", TL_COL_I64, "sampling seed of the model under test"},
    {"id", TL_COL_STR, "dialogue id (the benchmark's, as text)"},
    {"task", TL_COL_STR, "task code (CM SI AR TS CC CR FR SC SA MR GR IC PI)"},
    {"ability", TL_COL_STR, "ability of the task"},
    {"domain", TL_COL_STR, "domain of the task"},
    {"turn", TL_COL_I64, "turn of the dialogue, 1-based (upstream's turn_id); the unit's sub is the judged-turn index"},
    {"response", TL_COL_TEXT, "the model's answer to the turn (\"\" when none was obtained)"},
    {"judgment", TL_COL_TEXT, "the judge's reply (\"\" when none, or not asked)"},
};
enum { TC_MODEL, TC_VARIANT, TC_SEED, TC_ID, TC_TASK, TC_ABIL, TC_DOM, TC_TURN, TC_RESP, TC_JUDG, TC__N };

static tl_table *mtb_items_table(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *units, const tl_row *rows,
                                 size_t n, tl_table *into) {
  tl_table *t = into ? into : tl_table_new("/items/mtbench101");
  if (!t || (!into && tl_table_add_cols(t, TURN_COLS, TC__N))) goto fail;
  /* columns: TURN_COLS; per mode rating, status, rule (from base); with judge repeats, the other
   * samples' judgments and per mode per sample a rating and a status (from sbase) */
  const int base = TC__N, ns = b->nsamples, sbase = base + 3 * b->nmodes;
  for (int k = 0; !into && k < b->nmodes; k++) {
    char nm[96], doc[200];
    const char *mn = tl_mtb_rate_mode_name((tl_mtb_rate_mode)b->modes[k]);
    char pre[64];
    if (k == 0) pre[0] = 0;
    else {
      snprintf(pre, sizeof pre, "%s_", mn);
      for (char *p = pre; *p; p++)
        if (*p == '-') *p = '_';
    }
    snprintf(nm, sizeof nm, "%srating", pre);
    snprintf(doc, sizeof doc, "the rating the %s parser read (NaN when it read none: see status)", mn);
    if (tl_table_add_col(t, nm, TL_COL_F64, doc) < 0) goto fail;
    snprintf(nm, sizeof nm, "%sstatus", pre);
    snprintf(doc, sizeof doc, "parse status under %s (ok, no_answer, out_of_range, unterminated_think, missing, ...)", mn);
    if (tl_table_add_col(t, nm, TL_COL_STR, doc) < 0) goto fail;
    snprintf(nm, sizeof nm, "%srule", pre);
    snprintf(doc, sizeof doc, "the %s rule that fired", mn);
    if (tl_table_add_col(t, nm, TL_COL_STR, doc) < 0) goto fail;
  }
  /* judge repeats: the other samples' replies, then each sample's rating and status per mode */
  for (int j = 1; !into && ns > 1 && j < ns; j++) {
    char nm[32], doc[160];
    snprintf(nm, sizeof nm, "judgment_%d", j);
    snprintf(doc, sizeof doc, "the judge's reply of sample %d (seed + %d; \"\" when none); judgment is sample 0", j, j);
    if (tl_table_add_col(t, nm, TL_COL_TEXT, doc) < 0) goto fail;
  }
  for (int k = 0; !into && ns > 1 && k < b->nmodes; k++)
    for (int j = 0; j < ns; j++) {
      char nm[96], doc[200], pre[64] = "";
      const char *mn = tl_mtb_rate_mode_name((tl_mtb_rate_mode)b->modes[k]);
      if (k) {
        snprintf(pre, sizeof pre, "%s_", mn);
        for (char *p = pre; *p; p++)
          if (*p == '-') *p = '_';
      }
      snprintf(nm, sizeof nm, "%srating_%d", pre, j);
      snprintf(doc, sizeof doc, "judge sample %d: the rating the %s parser read (NaN: none)", j, mn);
      if (tl_table_add_col(t, nm, TL_COL_F64, doc) < 0) goto fail;
      snprintf(nm, sizeof nm, "%sstatus_%d", pre, j);
      snprintf(doc, sizeof doc, "judge sample %d: parse status under %s", j, mn);
      if (tl_table_add_col(t, nm, TL_COL_STR, doc) < 0) goto fail;
    }
  for (size_t i = 0; i < n; i++) {
    const tl_unit *u = &units[i];
    const tl_row *r = &rows[i];
    const tl_cfg *c = &cfgs[u->cfg];
    const tl_mtb_dialogue *d = &b->d[u->item];
    size_t k = tl_table_add_row(t);
    if (k == (size_t)-1 || tl_table_set_str(t, k, TC_MODEL, c->model) ||
        tl_table_set_str(t, k, TC_VARIANT, VARIANTS[0]) || tl_table_set_str(t, k, TC_ID, b->ids[u->item]) ||
        tl_table_set_str(t, k, TC_TASK, tl_mtb_task_code(d->task)) ||
        tl_table_set_str(t, k, TC_ABIL, tl_mtb_ability_name(tl_mtb_task_ability(d->task))) ||
        tl_table_set_str(t, k, TC_DOM, tl_mtb_domain_name(tl_mtb_task_domain(d->task))))
      goto fail;
    tl_table_set_i64(t, k, TC_SEED, c->seed);
    tl_table_set_i64(t, k, TC_TURN, tl_mtb_first_judged(d->task) + u->sub + 1);
    tl_table_ref_str(t, k, TC_RESP, r->text[0] ? r->text[0] : "");
    tl_table_ref_str(t, k, TC_JUDG, r->text[1] ? r->text[1] : "");
    for (int m = 0; m < b->nmodes; m++) {
      const tl_parsed *p = &r->res[m];
      tl_table_set_f64(t, k, base + 3 * m, p->status == TL_PS_OK ? (double)p->value / (double)rscale(b) : NAN);
      if (tl_table_set_str(t, k, base + 3 * m + 1, tl_pstatus_name(p->status)) ||
          tl_table_set_str(t, k, base + 3 * m + 2, p->rule ? p->rule : ""))
        goto fail;
    }
    if (ns > 1) {
      for (int j = 1; j < ns; j++) tl_table_ref_str(t, k, sbase + j - 1, r->text[1 + j] ? r->text[1 + j] : "");
      for (int m = 0; m < b->nmodes; m++)
        for (int j = 0; j < ns; j++) {
          const int col = sbase + (ns - 1) + 2 * (m * ns + j);
          const tl_parsed *p = r->nextra == b->nmodes * ns ? &r->extra[m * ns + j] : NULL;
          tl_table_set_f64(t, k, col, p && p->status == TL_PS_OK ? (double)p->value / TL_MTB_RATING_SCALE : NAN);
          if (tl_table_set_str(t, k, col + 1, p ? tl_pstatus_name(p->status) : "missing")) goto fail;
        }
    }
  }
  return t;
fail:
  if (t != into) tl_table_free(t);
  return NULL;
}

/* ---- metric tables ---- */

static const tl_col_spec DLG_COLS[] = {
    {"model", TL_COL_STR, "model under test"},
    {"prompt_variant", TL_COL_STR, "prompt variant"},
    {"seed", TL_COL_I64, "sampling seed"},
    {"id", TL_COL_STR, "dialogue id"},
    {"task", TL_COL_STR, "task code"},
    {"n_turns", TL_COL_I64, "judged turns of the dialogue"},
    {"n_rated", TL_COL_I64, "judged turns with a rating (primary parser)"},
    {"n_unrated", TL_COL_I64, "judged turns without one (no answer, no judgment, no rating, out of range, ...)"},
    {"score_exclude", TL_COL_F64, "least rating over the rated turns (policy exclude); NaN when none is rated"},
    {"score_fail", TL_COL_F64, "least rating when every turn is rated (policy fail); NaN otherwise"},
};

static const tl_col_spec GRP_COLS[] = {
    {"parser", TL_COL_STR, "rating parser (the first is the job's primary)"},
    {"model", TL_COL_STR, "model under test"},
    {"prompt_variant", TL_COL_STR, "prompt variant"},
    {"seed", TL_COL_I64, "sampling seed"},
    {"group", TL_COL_STR, "task code, ability or domain name; \"all\" for overall"},
    {"n_dialogues", TL_COL_I64, "dialogues in the group"},
    {"n_unrated_turns", TL_COL_I64, "judged turns in the group without a rating"},
    {"n_scored_exclude", TL_COL_I64, "dialogues with a score under policy exclude (at least one rated turn)"},
    {"n_unscored_fail", TL_COL_I64, "dialogues left without a score under policy fail (some turn unrated)"},
    {"score_exclude", TL_COL_F64,
     "task: mean of the dialogue scores; overall/ability/domain: mean of the task scores (policy exclude)"},
    {"score_fail", TL_COL_F64, "the same under policy fail"},
};
enum { GC_PARSER, GC_MODEL, GC_VARIANT, GC_SEED, GC_GROUP, GC_NDLG, GC_NUNR, GC_NSCX, GC_NUNF, GC_SCX, GC_SCF, GC__N };

static const tl_col_spec SEED_COLS[] = {
    {"parser", TL_COL_STR, "rating parser"},
    {"model", TL_COL_STR, "model under test"},
    {"prompt_variant", TL_COL_STR, "prompt variant"},
    {"policy", TL_COL_STR, "exclude or fail (a turn without a rating)"},
    {"level", TL_COL_STR, "overall, task, ability or domain"},
    {"group", TL_COL_STR, "task code, ability or domain name; \"all\""},
    {"n_seeds", TL_COL_I64, "seeds with a defined score"},
    {"mean", TL_COL_F64, "mean over seeds"},
    {"std", TL_COL_F64, "standard deviation over seeds (ddof 1; NaN for one seed)"},
    {"se", TL_COL_F64, "standard error of the mean, std / sqrt(n_seeds)"},
    {"ci_lo", TL_COL_F64,
     "lower end of the 95% percentile bootstrap CI of the score over the group's dialogues (a dialogue's "
     "seeds kept together; ci_resamples, ci_seed); NaN when under 2 dialogues have a score"},
    {"ci_hi", TL_COL_F64, "upper end"},
};

static const tl_col_spec CMP_COLS[] = {
    {"model_a", TL_COL_STR, "model A"},
    {"model_b", TL_COL_STR, "model B"},
    {"prompt_variant", TL_COL_STR, "prompt variant"},
    {"seed", TL_COL_I64, "sampling seed (the same for both)"},
    {"policy", TL_COL_STR, "dialogue scores under exclude or fail"},
    {"level", TL_COL_STR, "overall, task, ability or domain"},
    {"group", TL_COL_STR, "task code, ability or domain name; \"all\""},
    {"n_dialogues", TL_COL_I64, "dialogues in the group"},
    {"wins", TL_COL_I64, "dialogues where A's score beats B's (pref < 0.5)"},
    {"losses", TL_COL_I64, "dialogues where B's beats A's"},
    {"ties", TL_COL_I64, "equal scores"},
    {"missing", TL_COL_I64, "dialogues where either model has no score"},
    {"win_rate", TL_COL_F64, "(wins + ties/2) / (wins + losses + ties); NaN when none"},
    {"win_rate_lo", TL_COL_F64, "lower end of the paired bootstrap CI of win_rate (percentile, over dialogues)"},
    {"win_rate_hi", TL_COL_F64, "upper end"},
    {"soft_win_rate", TL_COL_F64, "mean of 1 - pref, pref = sigmoid(0.3 (score_B - score_A)), over scored dialogues"},
    {"soft_win_rate_lo", TL_COL_F64, "lower end of its paired bootstrap CI"},
    {"soft_win_rate_hi", TL_COL_F64, "upper end"},
};
enum { CC_A, CC_B, CC_VAR, CC_SEED, CC_POL, CC_LEVEL, CC_GROUP, CC_N, CC_W, CC_L, CC_T, CC_M, CC_WR, CC_WRLO, CC_WRHI,
       CC_SW, CC_SWLO, CC_SWHI, CC__N };

/* The comparison rows of one pair (cfgs a, c) from its results res[2 * NGROUPS]. */
static tl_status comparison_rows(tl_table *t, const tl_cfg *ca, const tl_cfg *cc, const tl_mtb_cmp_res *res) {
  for (int pol = 0; pol < 2; pol++)
    for (int g = 0; g < NGROUPS; g++) {
      const tl_mtb_cmp_res *o = &res[pol * NGROUPS + g];
      if (!o->m) continue;
      size_t k = tl_table_add_row(t);
      if (k == (size_t)-1 || tl_table_set_str(t, k, CC_A, ca->model) || tl_table_set_str(t, k, CC_B, cc->model) ||
          tl_table_set_str(t, k, CC_VAR, VARIANTS[0]) || tl_table_set_str(t, k, CC_POL, policy_name(pol)) ||
          tl_table_set_str(t, k, CC_LEVEL, group_level(g)) || tl_table_set_str(t, k, CC_GROUP, group_name(g)))
        return TL_ENOMEM;
      tl_table_set_i64(t, k, CC_SEED, ca->seed);
      tl_table_set_i64(t, k, CC_N, (int64_t)o->m);
      tl_table_set_i64(t, k, CC_W, o->w);
      tl_table_set_i64(t, k, CC_L, o->l);
      tl_table_set_i64(t, k, CC_T, o->t);
      tl_table_set_i64(t, k, CC_M, o->miss);
      tl_table_set_f64(t, k, CC_WR, o->wr);
      tl_table_set_f64(t, k, CC_WRLO, o->wr_lo);
      tl_table_set_f64(t, k, CC_WRHI, o->wr_hi);
      tl_table_set_f64(t, k, CC_SW, o->sw);
      tl_table_set_f64(t, k, CC_SWLO, o->sw_lo);
      tl_table_set_f64(t, k, CC_SWHI, o->sw_hi);
    }
  return TL_OK;
}

/* np pairs (cfgs pa[i], pc[i]) computed together, then their rows in order. */
static tl_status comparison_batch(tl_mtb_cmp *cmp, tl_table *t, const tl_cfg *cfgs, int np, const size_t *pa,
                                  const size_t *pc, const double *const *sa, const double *const *sb,
                                  tl_mtb_cmp_res *const *rp) {
  tl_status st = tl_mtb_cmp_pairs(cmp, np, sa, sb, rp);
  for (int i = 0; i < np && !st; i++) st = comparison_rows(t, &cfgs[pa[i]], &cfgs[pc[i]], rp[i]);
  return st;
}

/* The comparison table: every pair of cfgs with the same variant and seed and different models,
 * in (a, c) order, both policies, every group with dialogues; the statistics and their CIs are
 * mtb_compare.c's (drawn once per group size, reused by every pair; pairs computed in batches).
 * Nothing when "comparison" is false. */
static tl_status comparisons(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc, tl_table *t) {
  if (b->cmp_off) return TL_OK;
  size_t n = b->n;
  enum { P = TL_MTB_CMP_BATCH };
  double *sc = malloc((4 * P * n + 1) * sizeof *sc); /* [P][A B][2 n] dialogue scores */
  size_t *gi = malloc((NGROUPS * n + 1) * sizeof *gi), gm[NGROUPS], pa[P], pc[P];
  const size_t *gidx[NGROUPS];
  tl_mtb_cmp_res res[P][2 * NGROUPS];
  const double *sa[P], *sb[P];
  tl_mtb_cmp_res *rp[P];
  tl_mtb_cmp *cmp = NULL;
  tl_status st = (!sc || !gi) ? TL_ENOMEM : TL_OK;
  for (int g = 0; !st && g < NGROUPS; g++) {
    gidx[g] = gi + (size_t)g * n;
    gm[g] = 0;
    for (size_t i = 0; i < n; i++)
      if (task_in_group(b->d[i].task, g)) gi[(size_t)g * n + gm[g]++] = i;
  }
  if (!st && !(cmp = tl_mtb_cmp_new(n, NGROUPS, gidx, gm, b->boot_B, b->boot_seed, b->level))) st = TL_ENOMEM;
  int np = 0, batch = cmp ? tl_mtb_cmp_batch(cmp) : 1;
  for (size_t a = 0; !st && a < ncfgs; a++)
    for (size_t c = a + 1; !st && c < ncfgs; c++) {
      if (cfgs[a].variant != cfgs[c].variant || cfgs[a].seed != cfgs[c].seed || !strcmp(cfgs[a].model, cfgs[c].model))
        continue;
      double *A = sc + (size_t)np * 4 * n, *B = A + 2 * n;
      dialogue_scores(b, acc, 0, a, A, A + n);
      dialogue_scores(b, acc, 0, c, B, B + n);
      sa[np] = A;
      sb[np] = B;
      rp[np] = res[np];
      pa[np] = a;
      pc[np++] = c;
      if (np == batch) {
        st = comparison_batch(cmp, t, cfgs, np, pa, pc, sa, sb, rp);
        np = 0;
      }
    }
  if (!st && np) st = comparison_batch(cmp, t, cfgs, np, pa, pc, sa, sb, rp);
  tl_mtb_cmp_free(cmp);
  free(sc);
  free(gi);
  return st;
}

/* Tables, in this order: dialogues (primary parser), overall, tasks, abilities, domains (every
 * parser), across_seeds, summary (the paper's layout), comparisons, then the parser audit. */
enum { T_DLG, T_OVERALL, T_TASKS, T_ABIL, T_DOM, T_SEEDS, T_SUMMARY, T_CMP, T_AUDIT, T_SETTINGS, T_AGREE, T__N };

/* The judge's self-agreement over its samples (nsamples > 1): per mode and cfg, then per mode and
 * model pooled over its seeds (seed -1): the counters and coincidences of agree_add(), summed. */
static const tl_col_spec AGREE_COLS[] = {
    {"parser", TL_COL_STR, "rating parser"},
    {"model", TL_COL_STR, "model under test (whose answers were judged)"},
    {"prompt_variant", TL_COL_STR, "prompt variant"},
    {"seed", TL_COL_I64, "sampling seed; -1: the model's seeds pooled"},
    {"samples", TL_COL_I64, "judge samples per turn (judge_samples)"},
    {"n_samples_rated", TL_COL_I64, "samples with a rating under this parser"},
    {"n_samples_unrated", TL_COL_I64, "samples without one (no judgment, no rating, out of range, ...)"},
    {"n_turns_compared", TL_COL_I64, "turns with two or more rated samples"},
    {"exact_agreement", TL_COL_F64, "share of the compared turns whose rated samples are all equal"},
    {"mean_range", TL_COL_F64, "mean over the compared turns of max - min of their samples' ratings"},
    {"n_off_scale", TL_COL_I64, "rated samples off the 1-10 half-point scale, left out of alpha"},
    {"alpha_ordinal", TL_COL_F64,
     "Krippendorff's alpha, ordinal, samples as coders and turns as units (Krippendorff 2011); NaN when undefined"},
};
enum { AC_PARSER, AC_MODEL, AC_VAR, AC_SEED, AC_K, AC_SOK, AC_SNO, AC_T2, AC_EQ, AC_RANGE, AC_OFF, AC_ALPHA, AC__N };

/* One row of the agreement table from the summed counters ag[AG__N + NLEV^2]. */
static tl_status agree_row(const tl_bench *b, tl_table *t, int k, const tl_cfg *c, int pooled, const int64_t *ag) {
  size_t r = tl_table_add_row(t);
  if (r == (size_t)-1 || tl_table_set_str(t, r, AC_PARSER, tl_mtb_rate_mode_name((tl_mtb_rate_mode)b->modes[k])) ||
      tl_table_set_str(t, r, AC_MODEL, c->model) || tl_table_set_str(t, r, AC_VAR, VARIANTS[0]))
    return TL_ENOMEM;
  double o[NLEV * NLEV];
  for (int i = 0; i < NLEV * NLEV; i++) o[i] = (double)ag[AG__N + i];
  tl_table_set_i64(t, r, AC_SEED, pooled ? -1 : c->seed);
  tl_table_set_i64(t, r, AC_K, b->nsamples);
  tl_table_set_i64(t, r, AC_SOK, ag[AG_SOK]);
  tl_table_set_i64(t, r, AC_SNO, ag[AG_SNO]);
  tl_table_set_i64(t, r, AC_T2, ag[AG_TURNS2]);
  tl_table_set_f64(t, r, AC_EQ, ag[AG_TURNS2] ? (double)ag[AG_ALLEQ] / (double)ag[AG_TURNS2] : NAN);
  tl_table_set_f64(t, r, AC_RANGE,
                   ag[AG_TURNS2] ? (double)ag[AG_RANGE] / TL_MTB_RATING_SCALE / (double)ag[AG_TURNS2] : NAN);
  tl_table_set_i64(t, r, AC_OFF, ag[AG_OFFGRID]);
  tl_table_set_f64(t, r, AC_ALPHA, tl_kripp_alpha(o, NLEV, COINC, TL_KRIPP_ORDINAL, NULL));
  return TL_OK;
}

static tl_status agreement(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc, tl_table *t) {
  if (tl_table_add_cols(t, AGREE_COLS, AC__N)) return TL_ENOMEM;
  const size_t L = ag_len(b);
  int64_t *pool = malloc(L * sizeof *pool);
  if (!pool) return TL_ENOMEM;
  tl_status st = TL_OK;
  for (int k = 0; !st && k < b->nmodes; k++) {
    const int64_t *ag = acc[2 * k + 1] + ag_off(b, ncfgs);
    for (size_t c = 0; !st && c < ncfgs; c++) st = agree_row(b, t, k, &cfgs[c], 0, ag + c * L);
    for (size_t c0 = 0; !st && c0 < ncfgs;) { /* a model's seeds are adjacent (cfgs in key order) */
      size_t c1 = c0;
      memset(pool, 0, L * sizeof *pool);
      while (c1 < ncfgs && !strcmp(cfgs[c1].model, cfgs[c0].model) && cfgs[c1].variant == cfgs[c0].variant) {
        for (size_t i = 0; i < L; i++) pool[i] += ag[c1 * L + i];
        c1++;
      }
      st = agree_row(b, t, k, &cfgs[c0], 1, pool);
      c0 = c1;
    }
  }
  free(pool);
  return st;
}

/* The settings of the run, recorded: one (key, value) row each, values as text. */
static tl_status settings_table(const tl_bench *b, tl_table *t) {
  static const tl_col_spec SC[] = {{"key", TL_COL_STR, "setting"}, {"value", TL_COL_TEXT, "its value, as text"}};
  if (tl_table_add_cols(t, SC, 2)) return TL_ENOMEM;
  char num[9][64];
  snprintf(num[6], sizeof num[6], "%llu", (unsigned long long)b->boot_B);
  snprintf(num[7], sizeof num[7], "%llu", (unsigned long long)b->boot_seed);
  snprintf(num[8], sizeof num[8], "%.15g", 100 * b->level);
  snprintf(num[3], sizeof num[3], "%d", b->nsamples);
  snprintf(num[4], sizeof num[4], "%d", b->ci_B);
  snprintf(num[5], sizeof num[5], "%.0f", b->ci_seed);
  snprintf(num[0], sizeof num[0], "%d", b->max_msg_chars);
  snprintf(num[1], sizeof num[1], "%d", b->max_tokens);
  snprintf(num[2], sizeof num[2], "%.15g", b->judge_temp);
  tl_buf parsers;
  tl_buf_init(&parsers);
  for (int k = 0; k < b->nmodes; k++)
    tl_buf_printf(&parsers, "%s%s", k ? "," : "", tl_mtb_rate_mode_name((tl_mtb_rate_mode)b->modes[k]));
  const char *kv[][2] = {{"reference", tl_mtb_ref_name(b->ref)},
                         {"prompt_text", tl_mtb_text_name(b->text)},
                         {"system_prompt", b->system_prompt ? b->system_prompt : ""},
                         {"max_message_chars", num[0]},
                         {"max_tokens", num[1]},
                         {"strip_reasoning", b->strip_reasoning ? "true" : "false"},
                         {"judge_temperature", num[2]},
                         {"judge_samples", num[3]},
                         {"judge_aggregate", b->nsamples > 1 ? (b->agg_mean ? "mean" : "median") : "(one sample)"},
                         {"judge_seeds", b->nsamples > 1 ? "sample j asks with the model's seed + j (- j where + j overflows)"
                                                         : "the model's seed"},
                         {"parsers", parsers.data},
                         {"ci_resamples", num[4]},
                         {"ci_seed", num[5]},
                         {"compare_resamples", num[6]}, /* "comparison": the model comparisons' bootstrap */
                         {"compare_seed", num[7]},
                         {"compare_level", num[8]}, /* percent */
                         {"prompt_strings_source", tl_mtb_strings_source}};
  tl_status st = TL_OK;
  for (size_t i = 0; !st && i < sizeof kv / sizeof *kv; i++) {
    size_t r = tl_table_add_row(t);
    if (r == (size_t)-1 || tl_table_set_str(t, r, 0, kv[i][0]) || tl_table_set_str(t, r, 1, kv[i][1])) st = TL_ENOMEM;
  }
  tl_buf_release(&parsers);
  return st;
}

/* One model's dialogues as bootstrap clusters (mode k, policy pol; its cfgs c0..c1, one per
 * seed): num[i] = the sum over seeds of dialogue i's score, den[i] = the seeds where it has one.
 * ex, fa: [n] work space. */
static void model_clusters(const tl_bench *b, int64_t *const *acc, int k, size_t c0, size_t c1, int pol, double *ex,
                           double *fa, double *num, double *den) {
  for (size_t i = 0; i < b->n; i++) num[i] = den[i] = 0;
  for (size_t c = c0; c < c1; c++) {
    dialogue_scores(b, acc, k, c, ex, fa);
    const double *v = pol ? fa : ex;
    for (size_t i = 0; i < b->n; i++)
      if (!isnan(v[i])) {
        num[i] += v[i];
        den[i] += 1;
      }
  }
}

/* The headline CI of group g's score from a model's clusters (model_clusters): a percentile
 * bootstrap over the group's dialogues (tl_cluster_ci). Each dialogue of task t is weighted by
 * 1 / (the scored dialogue-seeds of t), so that sum(num) / sum(den) is the mean of the task
 * means, the group's score (for a task: its dialogues' mean, unweighted). cn, cd: [n] work; ci: the
 * job's (ci_resamples, ci_seed), shared by every row. */
static tl_status group_ci(const tl_bench *b, tl_ccis *ci, int g, const double *num, const double *den, double *cn,
                          double *cd, double *lo, double *hi) {
  double tden[NTASK] = {0};
  for (size_t i = 0; i < b->n; i++)
    if (task_in_group(b->d[i].task, g)) tden[b->d[i].task] += den[i];
  uint32_t m = 0;
  for (size_t i = 0; i < b->n; i++) {
    const int t = b->d[i].task;
    if (!task_in_group(t, g) || !(tden[t] > 0)) continue;
    cn[m] = num[i] / tden[t];
    cd[m++] = den[i] / tden[t];
  }
  return tl_ccis_row(ci, cn, cd, m, 0.95, lo, hi); /* tl_cluster_ci's bounds, the draws made once */
}

/* A model's judged turns (cfgs c0..c1, primary parser) as the summaries count them: n asked,
 * answered (a reply obtained), missing (none: no answer line, or a null one), unparsed (answered,
 * no rating: no judgment, no rating read, or an answer whose <think> never closes),
 * engine_error (the model's or the judge's engine gave up); n = answered + missing + engine_error. */
enum { UC_N, UC_ANSWERED, UC_MISSING, UC_UNPARSED, UC_ENGERR, UC__N };
static void unit_counts(const tl_bench *b, int64_t *const *acc, size_t ncfgs, size_t c0, size_t c1, int64_t *uc) {
  const int64_t *sum = acc[1];
  for (int j = 0; j < UC__N; j++) uc[j] = 0;
  int64_t ok = 0;
  for (size_t c = c0; c < c1; c++) {
    const int64_t *sc = sum + ncfgs * b->n * 2 + c * TL_PS__COUNT;
    for (int s = 0; s < TL_PS__COUNT; s++) uc[UC_N] += sc[s];
    ok += sc[TL_PS_OK];
    uc[UC_ENGERR] += sc[TL_PS_ENGINE_ERROR];
    uc[UC_MISSING] += sum[x_off(b, ncfgs) + c * X__N + X_NOANS];
  }
  uc[UC_ANSWERED] = uc[UC_N] - uc[UC_MISSING] - uc[UC_ENGERR];
  uc[UC_UNPARSED] = uc[UC_ANSWERED] - ok;
}

/* /metrics/mtbench101/summary: the paper's columns, then these (SM_STD ..). */
enum { SM_STD = 5 + NTASK, SM_LO, SM_HI, SM_N, SM_ANS, SM_MISS, SM_UNP, SM_EE, SM__N };

static tl_status mtb_tables(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc, tl_table ***out,
                            int *nout) {
  static const char *const PATHS[T__N] = {
      "/metrics/mtbench101/dialogues", "/metrics/mtbench101/overall", "/metrics/mtbench101/tasks",
      "/metrics/mtbench101/abilities", "/metrics/mtbench101/domains", "/metrics/mtbench101/across_seeds",
      "/metrics/mtbench101/summary",   "/metrics/mtbench101/comparisons", "/audit/mtbench101/parsers",
      "/metrics/mtbench101/settings", "/metrics/mtbench101/judge_agreement"};
  tl_table **t = calloc(T__N, sizeof *t);
  size_t n = b->n;
  double *ex = malloc((n ? n : 1) * sizeof *ex), *fa = malloc((n ? n : 1) * sizeof *fa);
  /* per mode, cfg, policy, group */
  size_t ng = (size_t)b->nmodes * ncfgs * 2 * NGROUPS;
  double *gs = malloc((ng ? ng : 1) * sizeof *gs);
  double *sv = malloc((ncfgs ? ncfgs : 1) * sizeof *sv); /* one group's values over a model's seeds */
  double *cl = malloc(4 * (n ? n : 1) * sizeof *cl);    /* a model's clusters: num, den, then work */
  tl_ccis *ci = tl_ccis_new((uint32_t)b->ci_B, (uint64_t)b->ci_seed); /* every row's CI: draws made once */
  tl_status st = (!t || !ex || !fa || !gs || !sv || !cl || !ci) ? TL_ENOMEM : TL_OK;
  for (int i = 0; !st && i < T__N; i++)
    if (!(t[i] = tl_table_new(PATHS[i]))) st = TL_ENOMEM;
  if (!st && (tl_table_add_cols(t[T_DLG], DLG_COLS, 10) || tl_table_add_cols(t[T_OVERALL], GRP_COLS, GC__N) ||
              tl_table_add_cols(t[T_TASKS], GRP_COLS, GC__N) || tl_table_add_cols(t[T_ABIL], GRP_COLS, GC__N) ||
              tl_table_add_cols(t[T_DOM], GRP_COLS, GC__N) || tl_table_add_cols(t[T_SEEDS], SEED_COLS, 12) ||
              tl_table_add_cols(t[T_CMP], CMP_COLS, CC__N)))
    st = TL_ENOMEM;
  /* the summary, in the paper's layout: model, variant, policy, seeds, Avg, then the 13 tasks */
  static const tl_col_spec SUM_COLS[] = {{"model", TL_COL_STR, "model under test"},
                                      {"prompt_variant", TL_COL_STR, "prompt variant"},
                                      {"policy", TL_COL_STR, "exclude or fail (a turn without a rating)"},
                                      {"n_seeds", TL_COL_I64, "seeds with a defined overall score"},
                                      {"Avg", TL_COL_F64, "overall score (mean of the task scores), mean over seeds"}};
  if (!st && tl_table_add_cols(t[T_SUMMARY], SUM_COLS, 5)) st = TL_ENOMEM;
  for (int g = 1; !st && g <= NTASK; g++) {
    char doc[96];
    snprintf(doc, sizeof doc, "%s (%s) task score, mean over seeds; NaN when not run", tl_mtb_task_code(g - 1),
             tl_mtb_task_name(g - 1));
    if (tl_table_add_col(t[T_SUMMARY], tl_mtb_task_code(g - 1), TL_COL_F64, doc) < 0) st = TL_ENOMEM;
  }
  static const tl_col_spec SUM_MORE[] = {
      {"std", TL_COL_F64, "standard deviation of the overall score over seeds (ddof 1; NaN for one seed)"},
      {"ci_lo", TL_COL_F64, "lower end of the 95% percentile bootstrap CI of Avg over dialogues (seeds kept together)"},
      {"ci_hi", TL_COL_F64, "upper end"},
      {"n", TL_COL_I64, "judged turns asked (every seed)"},
      {"answered", TL_COL_I64, "of those, turns with a reply from the model"},
      {"missing", TL_COL_I64, "turns without one (no answer line, or a null answer)"},
      {"unparsed", TL_COL_I64, "answered turns without a rating (no judgment, no rating read, unterminated <think>)"},
      {"engine_error", TL_COL_I64, "turns on which the model's or the judge's engine gave up"}};
  if (!st && tl_table_add_cols(t[T_SUMMARY], SUM_MORE, SM__N - SM_STD)) st = TL_ENOMEM;
  /* dialogues (primary) and group scores (every mode) */
  for (int k = 0; !st && k < b->nmodes; k++) {
    const char *pn = tl_mtb_rate_mode_name((tl_mtb_rate_mode)b->modes[k]);
    const int64_t *sum = acc[2 * k + 1];
    for (size_t c = 0; !st && c < ncfgs; c++) {
      dialogue_scores(b, acc, k, c, ex, fa);
      if (k == 0)
        for (size_t i = 0; !st && i < n; i++) {
          size_t di = c * n + i, r = tl_table_add_row(t[T_DLG]);
          if (r == (size_t)-1 || tl_table_set_str(t[T_DLG], r, 0, cfgs[c].model) ||
              tl_table_set_str(t[T_DLG], r, 1, VARIANTS[0]) || tl_table_set_str(t[T_DLG], r, 3, b->ids[i]) ||
              tl_table_set_str(t[T_DLG], r, 4, tl_mtb_task_code(b->d[i].task))) {
            st = TL_ENOMEM;
            break;
          }
          tl_table_set_i64(t[T_DLG], r, 2, cfgs[c].seed);
          tl_table_set_i64(t[T_DLG], r, 5, sum[2 * di] + sum[2 * di + 1]);
          tl_table_set_i64(t[T_DLG], r, 6, sum[2 * di]);
          tl_table_set_i64(t[T_DLG], r, 7, sum[2 * di + 1]);
          tl_table_set_f64(t[T_DLG], r, 8, ex[i]);
          tl_table_set_f64(t[T_DLG], r, 9, fa[i]);
        }
      double gx[NGROUPS], gf[NGROUPS];
      int64_t nd[NGROUPS], nsx[NGROUPS], nsf[NGROUPS], nunr[NGROUPS] = {0};
      group_scores(b, ex, gx, nd, nsx);
      group_scores(b, fa, gf, nd, nsf);
      for (size_t i = 0; i < n; i++)
        for (int g = 0; g < NGROUPS; g++)
          if (task_in_group(b->d[i].task, g)) nunr[g] += sum[2 * (c * n + i) + 1];
      for (int g = 0; g < NGROUPS; g++) {
        gs[(((size_t)k * ncfgs + c) * 2 + 0) * NGROUPS + g] = gx[g];
        gs[(((size_t)k * ncfgs + c) * 2 + 1) * NGROUPS + g] = gf[g];
        if (!nd[g]) continue; /* no dialogue of the group in this run */
        tl_table *tt = t[g == 0 ? T_OVERALL : g <= NTASK ? T_TASKS : g <= NTASK + NABIL ? T_ABIL : T_DOM];
        size_t r = tl_table_add_row(tt);
        if (r == (size_t)-1 || tl_table_set_str(tt, r, GC_PARSER, pn) || tl_table_set_str(tt, r, GC_MODEL, cfgs[c].model) ||
            tl_table_set_str(tt, r, GC_VARIANT, VARIANTS[0]) || tl_table_set_str(tt, r, GC_GROUP, group_name(g))) {
          st = TL_ENOMEM;
          break;
        }
        tl_table_set_i64(tt, r, GC_SEED, cfgs[c].seed);
        tl_table_set_i64(tt, r, GC_NDLG, nd[g]);
        tl_table_set_i64(tt, r, GC_NUNR, nunr[g]);
        tl_table_set_i64(tt, r, GC_NSCX, nsx[g]);
        tl_table_set_i64(tt, r, GC_NUNF, nd[g] - nsf[g]);
        tl_table_set_f64(tt, r, GC_SCX, gx[g]);
        tl_table_set_f64(tt, r, GC_SCF, gf[g]);
      }
    }
  }
  /* across seeds: cfgs are sorted by (model, variant, seed), so a model's seeds are adjacent */
  for (int k = 0; !st && k < b->nmodes; k++)
    for (size_t c0 = 0; !st && c0 < ncfgs;) {
      size_t c1 = c0;
      while (c1 < ncfgs && !strcmp(cfgs[c1].model, cfgs[c0].model) && cfgs[c1].variant == cfgs[c0].variant) c1++;
      for (int pol = 0; pol < 2 && !st; pol++) {
        double *num = cl, *den = cl + n;
        model_clusters(b, acc, k, c0, c1, pol, ex, fa, num, den);
        for (int g = 0; g < NGROUPS && !st; g++) {
          int64_t m = 0;
          bool present = false;
          for (size_t i = 0; i < n; i++) present |= task_in_group(b->d[i].task, g);
          if (!present) continue;
          for (size_t c = c0; c < c1; c++) {
            double v = gs[(((size_t)k * ncfgs + c) * 2 + pol) * NGROUPS + g];
            if (!isnan(v)) sv[m++] = v;
          }
          double s2 = 0;
          const double mean = m ? tl_mean_ss(sv, (size_t)m, &s2) : NAN;
          const double sd = m > 1 ? sqrt(s2 / (double)(m - 1)) : NAN;
          tl_table *tt = t[T_SEEDS];
          size_t r = tl_table_add_row(tt);
          if (r == (size_t)-1 || tl_table_set_str(tt, r, 0, tl_mtb_rate_mode_name((tl_mtb_rate_mode)b->modes[k])) ||
              tl_table_set_str(tt, r, 1, cfgs[c0].model) || tl_table_set_str(tt, r, 2, VARIANTS[0]) ||
              tl_table_set_str(tt, r, 3, policy_name(pol)) || tl_table_set_str(tt, r, 4, group_level(g)) ||
              tl_table_set_str(tt, r, 5, group_name(g))) {
            st = TL_ENOMEM;
            break;
          }
          tl_table_set_i64(tt, r, 6, m);
          tl_table_set_f64(tt, r, 7, mean);
          tl_table_set_f64(tt, r, 8, sd);
          tl_table_set_f64(tt, r, 9, m > 1 ? sd / sqrt((double)m) : NAN);
          double lo, hi;
          if ((st = group_ci(b, ci, g, num, den, cl + 2 * n, cl + 3 * n, &lo, &hi))) break;
          tl_table_set_f64(tt, r, 10, lo);
          tl_table_set_f64(tt, r, 11, hi);
          /* the paper's layout: primary parser, one row per model and policy */
          if (k == 0) {
            tl_table *sm = t[T_SUMMARY];
            if (g == 0) {
              size_t q = tl_table_add_row(sm);
              if (q == (size_t)-1 || tl_table_set_str(sm, q, 0, cfgs[c0].model) ||
                  tl_table_set_str(sm, q, 1, VARIANTS[0]) || tl_table_set_str(sm, q, 2, policy_name(pol))) {
                st = TL_ENOMEM;
                break;
              }
              tl_table_set_i64(sm, q, 3, m);
              tl_table_set_f64(sm, q, SM_STD, sd);
              tl_table_set_f64(sm, q, SM_LO, lo);
              tl_table_set_f64(sm, q, SM_HI, hi);
              int64_t uc[UC__N];
              unit_counts(b, acc, ncfgs, c0, c1, uc);
              for (int j = 0; j < UC__N; j++) tl_table_set_i64(sm, q, SM_N + j, uc[j]);
            }
            if (g <= NTASK) tl_table_set_f64(sm, sm->nrows - 1, 4 + g, mean);
          }
        }
      }
      c0 = c1;
    }
  if (!st) st = comparisons(b, cfgs, ncfgs, acc, t[T_CMP]);
  if (!st) st = settings_table(b, t[T_SETTINGS]);
  if (!st && b->nsamples > 1) st = agreement(b, cfgs, ncfgs, acc, t[T_AGREE]);
  /* parser audit: per parser and cfg, the overall scores and the statuses */
  if (!st) {
    tl_table *a = t[T_AUDIT];
    static const tl_col_spec AC[] = {{"parser", TL_COL_STR, "rating parser"},
                                  {"model", TL_COL_STR, "model under test"},
                                  {"prompt_variant", TL_COL_STR, "prompt variant"},
                                  {"seed", TL_COL_I64, "sampling seed"},
                                  {"n_turns", TL_COL_I64, "judged turns"},
                                  {"n_rated", TL_COL_I64, "turns with a rating under this parser"},
                                  {"avg_exclude", TL_COL_F64, "overall score (policy exclude)"},
                                  {"avg_fail", TL_COL_F64, "overall score (policy fail)"}};
    if (tl_table_add_cols(a, AC, 8)) st = TL_ENOMEM;
    int sbase = a->ncols;
    for (int s = 0; !st && s < TL_PS__COUNT; s++) {
      char nm[64], doc[96];
      snprintf(nm, sizeof nm, "n_%s", tl_pstatus_name((tl_pstatus)s));
      snprintf(doc, sizeof doc, "turns with parse status %s", tl_pstatus_name((tl_pstatus)s));
      if (tl_table_add_col(a, nm, TL_COL_I64, doc) < 0) st = TL_ENOMEM;
    }
    for (int k = 0; !st && k < b->nmodes; k++)
      for (size_t c = 0; !st && c < ncfgs; c++) {
        const int64_t *sum = acc[2 * k + 1], *sc = sum + ncfgs * n * 2 + c * TL_PS__COUNT;
        int64_t tot = 0;
        for (int s = 0; s < TL_PS__COUNT; s++) tot += sc[s];
        size_t r = tl_table_add_row(a);
        if (r == (size_t)-1 || tl_table_set_str(a, r, 0, tl_mtb_rate_mode_name((tl_mtb_rate_mode)b->modes[k])) ||
            tl_table_set_str(a, r, 1, cfgs[c].model) || tl_table_set_str(a, r, 2, VARIANTS[0])) {
          st = TL_ENOMEM;
          break;
        }
        tl_table_set_i64(a, r, 3, cfgs[c].seed);
        tl_table_set_i64(a, r, 4, tot);
        tl_table_set_i64(a, r, 5, sc[TL_PS_OK]);
        tl_table_set_f64(a, r, 6, gs[(((size_t)k * ncfgs + c) * 2 + 0) * NGROUPS]);
        tl_table_set_f64(a, r, 7, gs[(((size_t)k * ncfgs + c) * 2 + 1) * NGROUPS]);
        for (int s = 0; s < TL_PS__COUNT; s++) tl_table_set_i64(a, r, sbase + s, sc[s]);
      }
  }
  free(ex);
  free(fa);
  free(gs);
  free(sv);
  free(cl);
  tl_ccis_free(ci);
  if (st) {
    for (int i = 0; t && i < T__N; i++) tl_table_free(t[i]);
    free(t);
    return st;
  }
  if (b->nsamples == 1) { /* one sample: no agreement to report */
    tl_table_free(t[T_AGREE]);
    t[T_AGREE] = NULL;
  }
  *out = t;
  *nout = b->nsamples > 1 ? T__N : T__N - 1;
  const tl_mtb_stab_ctx sx = stab_ctx(b, ncfgs); /* judge_stability, parser_swap: appended */
  if (!tl_mtb_stab_tables(&sx, cfgs, ncfgs, acc, out, nout)) return TL_OK;
  for (int i = 0; i < *nout; i++) tl_table_free((*out)[i]);
  free(*out);
  *out = NULL;
  *nout = 0;
  return TL_ENOMEM;
}

tl_status tl_mtb_report(tl_table *const *tables, int n, struct tl_doc *doc); /* mtb_report.c */

/* The summary: the run's line (dialogues, turns, settings, parsers), then the module's report
 * (tl_mtb_report: Avg [95% CI] and the 13 tasks under both policies with the counts, the unrated
 * turns and the parse statuses, abilities, overall per parser, model comparisons, the parsers'
 * audit, judge agreement and stability, the parser swap) rendered as text by the report's
 * renderer: the summary and `tally report` are one code path, and no column is cut. */
static void mtb_summary(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, uint64_t units, tl_table *const *tables,
                        int n, int64_t *const *acc, FILE *out) {
  (void)cfgs;
  (void)acc;
  if (n < T_AGREE) return;
  fprintf(out, "mtbench101: %zu dialogues, %llu judged turns over %zu model/seed configs; reference %s, prompts %s, "
               "judge temperature %.2f; parsers:",
          b->n, (unsigned long long)units, ncfgs, tl_mtb_ref_name(b->ref),
          tl_mtb_text_name(b->text), b->judge_temp);
  for (int k = 0; k < b->nmodes; k++)
    fprintf(out, " %s%s", tl_mtb_rate_mode_name((tl_mtb_rate_mode)b->modes[k]), k ? "" : " (primary)");
  if (b->nsamples > 1)
    fprintf(out, "\njudge samples per turn: %d (turn rating = %s of the rated samples; sample j: seed + j)", b->nsamples,
            b->agg_mean ? "mean" : "median");
  fprintf(out, "\n");
  struct tl_doc *doc = tl_doc_new("");
  tl_doc_summary_print(doc, doc ? tl_mtb_report(tables, n, doc) : TL_ENOMEM, out); /* the report's blocks */
}

const tl_bench_vt tl_bench_mtbench101 = {
    .name = "mtbench101",
    .nstages = 2,
    .variants = VARIANTS,
    .keys = KEYS,
    .create = mtb_create,
    .free = mtb_free,
    .n_stages = mtb_n_stages,
    .default_variant = mtb_default_variant,
    .load = mtb_load,
    .n_items = mtb_n_items,
    .item_id = mtb_item_id,
    .item_find = mtb_item_find,
    .n_subs = mtb_n_subs,
    .n_modes = mtb_n_modes,
    .mode_name = mtb_mode_name,
    .request = mtb_request,
    .score = mtb_score,
    .acc_layout = mtb_acc_layout,
    .acc_add = mtb_acc_add,
    .items_table = mtb_items_table,
    .tables = mtb_tables,
    .summary = mtb_summary,
    .turn_sub = mtb_turn_sub,
    .max_modes = NM_MAX,
    .max_acc = 2 * NM_MAX,
    .parsers = &tl_mtb_parser_set,
    .compare = &tl_mtb_compare,
    .report = tl_mtb_report,
};
