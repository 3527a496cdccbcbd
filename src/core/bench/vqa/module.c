/* module.c - VQA sets as a benchmark module (tally/bench.h): the model answers each question
 * (stage 0), optionally a LAVE judge rates the answer 1-3 (stage 1), and every answer is scored
 * by VQA accuracy (the official script's rules, vqa_eval.h), soft VQA accuracy, exact match and
 * LAVE; per-unit human scores (LAVE release columns or annotator votes) ride along, so the
 * metric-vs-human study of the LAVE paper runs over the run's own columns (a job study "from":
 * "vqa"). docs/VQA.md has the contract.
 *
 * Items: one set per benchmark entry - tally's JSONL items ("items"), the official files
 * ("questions" + "annotations"), or rows in the LAVE release's columns ("release": dataset,
 * model, qid, question, references, prediction, human_score). The item id is
 * "<dataset>:<question id>" (dataset: the row's, else the entry's "dataset", default "vqa");
 * items are sorted by dataset, then by id (numerically when the set's ids are integers).
 *
 * Modes (scores, in this order): vqa_accuracy (units of 1/TL_VQA_ACC_SCALE), soft_vqa_accuracy
 * (units of 1e-9, rounded), exact_match (0/1), lave (rating - 1: halves of the score; only with
 * "lave"). A unit without an answer is status missing in every mode (never a wrong answer).
 *
 * Aggregates (blocks):
 *   mode m (0 .. nm-1): SUM [cfg][G][3] (sum of values, units scored, units not scored), then
 *     [cfg][TL_PS__COUNT] status counts; G groups: all, each dataset, each answer type, each
 *     question type (b->groups);
 *   nm: SUM [cfg][HB]: per mode (n with a human score and a metric value, human-correct with the
 *     metric < 0.5, human-wrong with the metric >= 0.5, human-correct, human-wrong), then the
 *     human score sum (units of 1e-9) and count, units with votes, and the votes' coincidence
 *     matrix [2][2] times VOTE_COINC;
 *   nm+1: MIN [cfg][nm][2]: the first item (key order) of each failure direction (INT64_MAX:
 *     none), for the examples.
 * Rank 0 builds every table from these integers in key order. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lave.h"
#include "tally/workshare.h"
#include "tally/bench.h"
#include "tally/jsonl.h"
#include "tally/report.h"
#include "tally/boot.h"
#include "tally/stats.h"
#include "tally/think.h"
#include "vqa_data.h"
#include "vqa_eval.h"

static const char *const VARIANTS[] = {"short", NULL};
static const char *const KEYS[] = {"items",      "questions",  "annotations",     "release", "dataset",
                                   "human",      "version",    "prompt_suffix",   "max_tokens",
                                   "strip_reasoning", "lave", "ci_resamples", "ci_seed", NULL};

enum { M_VQA, M_SOFT, M_EM, M_LAVE, M_LAVEX, M__N };
static const char *const MODE_NAMES[M__N] = {"vqa_accuracy", "soft_vqa_accuracy", "exact_match", "lave",
                                             "lave_expected"};
static const int64_t MODE_SCALE[M__N] = {TL_VQA_ACC_SCALE, 1000000000, 1, 2, 1000000000};
#define SOFT_SCALE 1e9
#define HUMAN_SCALE 1e9
enum { HB_PAIRS, HB_H1LO, HB_H0HI, HB_H1, HB_H0, HB__PER };
/* Unit counts per (cfg, group), block nm + 2 (docs/VQA.md, "Missing answers"): */
enum {
  K_ANSWERED,  /* a reply of the model was obtained (text[0]) */
  K_MISSING,   /* no reply and no engine failure: no answer line */
  K_EERR,      /* the model's engine gave up (error[0]) */
  K_UNPARSED,  /* answered, but VQA accuracy has no value (an unterminated reasoning block) */
  K_JEERR,     /* the LAVE judge's engine gave up (error[1]): every mode of the unit is engine_error */
  K_LUNPARSED, /* a judge reply without a usable rating (no_rating, out of range): LAVE "unparsed" */
  K_LUNJUDGED, /* answered, no judge reply and no judge failure (not judged: nothing to rate, no line) */
  K__N
};
#define HB_OFF_HUMAN(nm) ((nm) * HB__PER) /* human sum, human count, units with votes, then [2][2] */
#define HB_LEN(nm) ((nm) * HB__PER + 3 + 4)
#define VOTE_COINC 2520 /* lcm(1..9): 1/(m - 1) as an integer for up to 10 votes */
#define MAX_VOTES 10

typedef struct {
  char *id;            /* "<dataset>:<qid>" (owned) */
  const char *dataset; /* interned in b->names */
  char *qid;           /* owned */
  int64_t num;         /* numeric qid (sorting), when numeric */
  const char *question;/* borrowed from the set / release storage, or NULL */
  const char *const *refs;
  size_t nrefs;
  const char *image;   /* NULL when none */
  const char *qtype, *atype; /* NULL when none */
  int g[4], ng;        /* its groups */
} vitem;

typedef struct {
  double score;        /* human score, NaN when none */
  int votes[MAX_VOTES];
  int nvotes;          /* 0: none */
  int file;            /* index of its file in b->hf (human files, then release files) */
} human_t;

/* One "human" file's join with the run (docs/VQA.md, "Human scores"): its rows, and per model
 * the rows kept (an item of the run, first for its (item, model)). The units it matches are
 * known once the cfgs are: sum over cfgs of kept[cfg's model]. */
typedef struct {
  long rows;             /* lines read (parsed or not) */
  long kept;             /* rows joined: item known, first for its (item, model) */
  long unknown;          /* rows naming an item the items do not have (reported once) */
  long duplicate;        /* second rows for an (item, model) (reported each) */
  long first_unknown_line;
  char *first_unknown;   /* owned: the first such item id, for the message */
  tl_strmap model_ix;    /* model -> index in mname / kept_of */
  char **mname;          /* [nmodel] owned, in first-appearance order */
  long *kept_of;         /* [nmodel] rows kept per model */
  size_t nmodel, cap;
} hfile;

/* What the module learns of the run after load (written once, before any request, on the one
 * thread that drives the pipeline: see vqa_acc_layout). */
typedef struct {
  size_t ncfgs;          /* the run's cfgs, noted by acc_layout (SIZE_MAX: not yet) */
  int checked;           /* 1: the human files were checked against the cfgs */
} vqa_rt;

struct tl_bench {
  char **items_p, **quest_p, **annot_p, **rel_p, **human_p;
  int n_items_p, n_quest_p, n_annot_p, n_rel_p, n_human_p;
  char *dataset;        /* the entry's "dataset" (default "vqa") */
  tl_vqa_version version;
  char *prompt_suffix;
  int max_tokens;
  bool strip_reasoning;
  /* LAVE */
  bool lave;
  char *demos_p, *demos_bin_p;
  tl_lave_opts lopts;
  bool lave_compat;
  bool lave_expected;   /* also the expected rating from the judge's log-probabilities */
  double lave_temp;
  int lave_max_tokens;
  tl_lave_demos *demos, *demos_bin;
  /* after load */
  tl_vqa_set set;       /* items / official */
  char **rel_strs;      /* release storage: every string the release rows gave (owned) */
  size_t nrel_strs, caprel;
  const char **rel_refs;/* release reference pointers (owned array) */
  size_t nrel_refs, caprefs;
  vitem *v;
  size_t n;
  tl_strmap by_id;
  tl_strmap names;      /* interned datasets / types */
  /* groups */
  char **gkind, **gname; /* [G] "all"|"dataset"|"answer_type"|"question_type", name (owned) */
  int G;
  /* human scores: "<id>\x1f<model>" -> index */
  tl_strmap hum_of;
  human_t *hum;
  size_t nhum, caphum;
  hfile *hf;            /* [n_human_p + n_rel_p] the join of each "human" file, then of each
                           "release" file (its rows' human_score) */
  char **job_models;    /* the entry's "models" (the loader's key), NULL when absent */
  int n_job_models;
  FILE *echo;           /* rank 0's message stream (the input log's echo), NULL on other ranks */
  vqa_rt *rt;           /* owned; see vqa_rt */
  uint32_t ci_B;        /* headline CI: resamples ("ci_resamples", default 1000) */
  uint64_t ci_seed;     /* and its seed ("ci_seed", default 0) */
  int nm;               /* modes */
};

#define PROBLEM(...)              \
  do {                            \
    tl_job_problem(c, __VA_ARGS__); \
    bad++;                        \
  } while (0)

static void strs_free(char **p, int n) {
  for (int i = 0; i < n; i++) free(p[i]);
  free(p);
}

/* The path of join file f of b->hf: the human files, then the release files. */
static const char *hf_path(const tl_bench *b, int f) { return f < b->n_human_p ? b->human_p[f] : b->rel_p[f - b->n_human_p]; }

static void loaded_release(tl_bench *b) {
  for (size_t i = 0; i < b->n; i++) {
    free(b->v[i].id);
    free(b->v[i].qid);
  }
  free(b->v);
  b->v = NULL;
  b->n = 0;
  for (size_t i = 0; i < b->nrel_strs; i++) free(b->rel_strs[i]);
  free(b->rel_strs);
  b->rel_strs = NULL;
  b->nrel_strs = b->caprel = 0;
  free(b->rel_refs);
  b->rel_refs = NULL;
  b->nrel_refs = b->caprefs = 0;
  tl_vqa_set_release(&b->set);
  tl_vqa_set_init(&b->set);
  tl_strmap_release(&b->by_id);
  tl_strmap_init(&b->by_id);
  for (int g = 0; g < b->G; g++) {
    free(b->gkind[g]);
    free(b->gname[g]);
  }
  free(b->gkind);
  free(b->gname);
  b->gkind = b->gname = NULL;
  b->G = 0;
  tl_strmap_release(&b->hum_of);
  tl_strmap_init(&b->hum_of);
  free(b->hum);
  b->hum = NULL;
  b->nhum = b->caphum = 0;
  for (int f = 0; b->hf && f < b->n_human_p + b->n_rel_p; f++) {
    hfile *h = &b->hf[f];
    free(h->first_unknown);
    tl_strmap_release(&h->model_ix);
    for (size_t m = 0; m < h->nmodel; m++) free(h->mname[m]);
    free(h->mname);
    free(h->kept_of);
  }
  free(b->hf);
  b->hf = NULL;
}

static void vqa_free(tl_bench *b) {
  if (!b) return;
  loaded_release(b);
  tl_vqa_set_release(&b->set);
  tl_strmap_release(&b->by_id);
  tl_strmap_release(&b->hum_of);
  tl_strmap_release(&b->names);
  strs_free(b->items_p, b->n_items_p);
  strs_free(b->quest_p, b->n_quest_p);
  strs_free(b->annot_p, b->n_annot_p);
  strs_free(b->rel_p, b->n_rel_p);
  strs_free(b->human_p, b->n_human_p);
  strs_free(b->job_models, b->n_job_models);
  free(b->rt);
  free(b->dataset);
  free(b->prompt_suffix);
  free(b->demos_p);
  free(b->demos_bin_p);
  tl_lave_demos_free(b->demos);
  tl_lave_demos_free(b->demos_bin);
  free(b);
}

/* One path at v (a string) -> resolved, declared an input. */
static int one_path(tl_job_ctx *c, const cJSON *v, const char *where, const char *what, char **out) {
  char **p = NULL;
  int n = 0, bad = tl_job_paths(c, v, where, what, &p, &n);
  if (!bad && n != 1) {
    tl_job_problem(c, where, "must be one path");
    bad = 1;
  }
  if (!bad) *out = p[0];
  else strs_free(p, n);
  if (!bad) free(p);
  return bad;
}

static int lave_keys(tl_job_ctx *c, tl_bench *b, const cJSON *v, const char *where) {
  int bad = 0;
  char w[400];
  if (!cJSON_IsObject(v)) {
    PROBLEM(where, "must be an object {\"demos\", \"demos_binary\", ...} (docs/VQA.md)");
    return bad;
  }
  const cJSON *x;
  cJSON_ArrayForEach(x, v) {
    snprintf(w, sizeof w, "%s.%s", where, x->string);
    if (!strcmp(x->string, "demos")) bad += one_path(c, x, w, "a LAVE demonstrations file", &b->demos_p);
    else if (!strcmp(x->string, "demos_binary")) bad += one_path(c, x, w, "a LAVE demonstrations file", &b->demos_bin_p);
    else if (!strcmp(x->string, "num_shots")) {
      if (!tl_json_is_int(x, 0, 64)) PROBLEM(w, "must be an integer from 0 to 64");
      else b->lopts.num_shots = (int)x->valuedouble;
    } else if (!strcmp(x->string, "use_caption") || !strcmp(x->string, "rationalize") ||
               !strcmp(x->string, "filter_references") || !strcmp(x->string, "compat_fallback") ||
               !strcmp(x->string, "expected_rating")) {
      if (!cJSON_IsBool(x)) {
        PROBLEM(w, "must be true or false");
        continue;
      }
      int on = cJSON_IsTrue(x);
      if (!strcmp(x->string, "use_caption")) b->lopts.use_caption = on;
      else if (!strcmp(x->string, "rationalize")) b->lopts.rationalize = on;
      else if (!strcmp(x->string, "filter_references")) b->lopts.filter_refs = on;
      else if (!strcmp(x->string, "expected_rating")) b->lave_expected = on;
      else b->lave_compat = on;
    } else if (!strcmp(x->string, "temperature")) {
      if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0 && x->valuedouble <= 2)) PROBLEM(w, "must be a number from 0 to 2");
      else b->lave_temp = x->valuedouble;
    } else if (!strcmp(x->string, "max_tokens")) {
      if (!tl_json_is_int(x, 0, 1e9)) PROBLEM(w, "must be an integer >= 0 (0: the engine's default)");
      else b->lave_max_tokens = (int)x->valuedouble;
    } else {
      PROBLEM(w, "unknown key (known: demos, demos_binary, num_shots, use_caption, rationalize, filter_references, "
                 "compat_fallback, expected_rating, temperature, max_tokens)");
    }
  }
  if (!b->demos_p || !b->demos_bin_p)
    PROBLEM(where, "needs \"demos\" and \"demos_binary\": the demonstration files (the LAVE release's are not shipped: "
                   "give their paths)");
  if (b->lopts.use_caption) PROBLEM(where, "use_caption needs image captions, which VQA items do not carry yet");
  return bad;
}

static tl_bench *vqa_create(tl_job_ctx *c, const cJSON *e, const char *where) {
  tl_bench *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  tl_vqa_set_init(&b->set);
  tl_strmap_init(&b->by_id);
  tl_strmap_init(&b->names);
  tl_strmap_init(&b->hum_of);
  b->version = TL_VQA_OFFICIAL;
  b->strip_reasoning = true;
  b->lopts = (tl_lave_opts)TL_LAVE_OPTS_DEFAULT;
  b->lave_max_tokens = 100;
  b->ci_B = 1000;
  b->ci_seed = 0;
  int bad = 0;
  if (!(b->rt = calloc(1, sizeof *b->rt))) {
    free(b);
    return NULL;
  }
  b->rt->ncfgs = SIZE_MAX;
  char w[200];
  const cJSON *v;
  struct {
    const char *key, *what;
    char ***p;
    int *n;
  } PATHS[] = {{"items", "a VQA items file", &b->items_p, &b->n_items_p},
               {"questions", "a VQA questions file", &b->quest_p, &b->n_quest_p},
               {"annotations", "a VQA annotations file", &b->annot_p, &b->n_annot_p},
               {"release", "a LAVE-release file", &b->rel_p, &b->n_rel_p},
               {"human", "a human-judgments file", &b->human_p, &b->n_human_p}};
  for (size_t i = 0; i < sizeof PATHS / sizeof *PATHS; i++)
    if ((v = cJSON_GetObjectItemCaseSensitive(e, PATHS[i].key))) {
      snprintf(w, sizeof w, "%s.%s", where, PATHS[i].key);
      bad += tl_job_paths(c, v, w, PATHS[i].what, PATHS[i].p, PATHS[i].n);
    }
  int forms = (b->n_items_p > 0) + (b->n_annot_p > 0) + (b->n_rel_p > 0);
  if (forms != 1 && !bad)
    PROBLEM(where, "give the questions in exactly one form: \"items\" (tally's JSONL), \"annotations\" (+ \"questions\": "
                   "the official files) or \"release\" (rows in the LAVE release's columns)");
  if (b->n_quest_p && !b->n_annot_p) PROBLEM(where, "\"questions\" goes with \"annotations\"");
  if (b->n_quest_p > 1 || b->n_annot_p > 1) PROBLEM(where, "one questions file and one annotations file");
  b->dataset = tl_strdup("vqa");
  if ((v = cJSON_GetObjectItemCaseSensitive(e, "dataset"))) {
    snprintf(w, sizeof w, "%s.dataset", where);
    if (!cJSON_IsString(v) || !*v->valuestring || strchr(v->valuestring, ':')) PROBLEM(w, "must be a non-empty name without ':'");
    else {
      free(b->dataset);
      b->dataset = tl_strdup(v->valuestring);
    }
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(e, "version"))) {
    snprintf(w, sizeof w, "%s.version", where);
    int x = cJSON_IsString(v) ? tl_vqa_version_from_name(v->valuestring) : -1;
    if (x < 0) PROBLEM(w, "must be one of %s", tl_vqa_version_names());
    else b->version = (tl_vqa_version)x;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(e, "prompt_suffix"))) {
    snprintf(w, sizeof w, "%s.prompt_suffix", where);
    if (!cJSON_IsString(v)) PROBLEM(w, "must be a string (\"\": the question alone)");
    else b->prompt_suffix = tl_strdup(v->valuestring);
  } else {
    b->prompt_suffix = tl_strdup("Answer the question using a single word or phrase.");
  }
  bad += tl_job_key_int(c, e, "max_tokens", where, 0, 1e9, "an integer >= 0 (0: the engine's default)", &b->max_tokens);
  bad += tl_job_key_bool(c, e, "strip_reasoning", where, &b->strip_reasoning);
  if ((v = cJSON_GetObjectItemCaseSensitive(e, "lave"))) {
    snprintf(w, sizeof w, "%s.lave", where);
    b->lave = true;
    bad += lave_keys(c, b, v, w);
  }
  b->nm = b->lave ? (b->lave_expected ? M__N : M_LAVEX) : M_LAVE;
  int ci_b = 1000;
  bad += tl_job_key_int(c, e, "ci_resamples", where, 2, 1e7, "an integer from 2 to 10,000,000", &ci_b);
  b->ci_B = (uint32_t)ci_b;
  if ((v = cJSON_GetObjectItemCaseSensitive(e, "ci_seed"))) {
    snprintf(w, sizeof w, "%s.ci_seed", where);
    if (!tl_json_is_int(v, 0, 9007199254740992.0)) PROBLEM(w, "must be an integer from 0 to 2^53");
    else b->ci_seed = (uint64_t)v->valuedouble;
  }
  /* the entry's "models" (read by the job loader too): with them the run's models are known at
   * load, and a human file that names none of them is refused before anything is asked */
  if ((v = cJSON_GetObjectItemCaseSensitive(e, "models")) && cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0) {
    const cJSON *x;
    int ok = 1;
    cJSON_ArrayForEach(x, v) ok &= cJSON_IsString(x);
    if (ok && (b->job_models = calloc((size_t)cJSON_GetArraySize(v), sizeof *b->job_models))) {
      cJSON_ArrayForEach(x, v) if ((b->job_models[b->n_job_models] = tl_strdup(x->valuestring))) b->n_job_models++;
    }
  }
  if (!b->dataset || !b->prompt_suffix) PROBLEM(where, "out of memory");
  if (bad) {
    vqa_free(b);
    return NULL;
  }
  return b;
}

static int vqa_n_stages(const tl_bench *b) { return b->lave ? 2 : 1; }
static int vqa_default_variant(const tl_bench *b) {
  (void)b;
  return 0;
}

/* ---- loading ---- */

static tl_status logged(tl_status st, tl_err *err) {
  if (st == TL_EINPUT) tl_err_set(err, st, "bad input (strict input)");
  return st;
}

static const char *intern(tl_bench *b, const char *s) {
  if (tl_strmap_put(&b->names, s, 0, NULL, NULL)) return NULL;
  return tl_strmap_stored_key(&b->names, s);
}

/* Keeps s (a copy) in the release storage; returns it or NULL. */
static char *keep_str(tl_bench *b, const char *s) {
  if (b->nrel_strs == b->caprel) {
    size_t cap = b->caprel ? 2 * b->caprel : 1024;
    char **p = realloc(b->rel_strs, cap * sizeof *p);
    if (!p) return NULL;
    b->rel_strs = p;
    b->caprel = cap;
  }
  char *d = tl_strdup(s);
  if (d) b->rel_strs[b->nrel_strs++] = d;
  return d;
}

static tl_status add_item(tl_bench *b, const char *dataset, const char *qid, int is_num, int64_t num, size_t *cap,
                          size_t *index, bool *inserted) {
  tl_buf id;
  tl_buf_init(&id);
  if (tl_buf_printf(&id, "%s:%s", dataset, qid)) return TL_ENOMEM;
  size_t existing;
  tl_status st = tl_strmap_put(&b->by_id, id.data, b->n, inserted, &existing);
  if (st || !*inserted) {
    *index = existing;
    tl_buf_release(&id);
    return st;
  }
  if (b->n == *cap) {
    size_t nc = *cap ? 2 * *cap : 1024;
    vitem *p = realloc(b->v, nc * sizeof *p);
    if (!p) {
      tl_buf_release(&id);
      return TL_ENOMEM;
    }
    b->v = p;
    *cap = nc;
  }
  vitem *x = &b->v[b->n];
  memset(x, 0, sizeof *x);
  x->id = tl_buf_detach(&id);
  x->dataset = intern(b, dataset);
  x->qid = tl_strdup(qid);
  x->num = is_num ? num : 0;
  *index = b->n++;
  return x->id && x->dataset && x->qid ? TL_OK : TL_ENOMEM;
}

typedef struct {
  tl_bench *b;
  tl_inlog *log;
  tl_err *err;
  size_t cap;
  int human_only; /* 1: a "human" file (no question/references needed) */
  int file;       /* its index in b->hf (a human file's in b->human_p; a release file's + n_human_p) */
} rel_ctx;

/* qid of a row: an integer or a non-empty string; into buf. 0 ok. */
static int row_qid(const cJSON *o, char *buf, size_t n, int *is_num, int64_t *num) {
  const cJSON *q = cJSON_GetObjectItemCaseSensitive(o, "qid");
  if (!q) q = cJSON_GetObjectItemCaseSensitive(o, "question_id");
  if (!q) q = cJSON_GetObjectItemCaseSensitive(o, "id");
  if (tl_json_is_int(q, -9007199254740992.0, 9007199254740992.0)) {
    *is_num = 1;
    *num = (int64_t)q->valuedouble;
    snprintf(buf, n, "%" PRId64, *num);
    return 0;
  }
  if (cJSON_IsString(q) && *q->valuestring && strlen(q->valuestring) < n) {
    *is_num = 0;
    *num = 0;
    snprintf(buf, n, "%s", q->valuestring);
    return 0;
  }
  return -1;
}

/* The human score of a row: human_score, else from "votes" (5 binary votes). */
static int row_human(const cJSON *o, human_t *h, char *msg, size_t msz) {
  h->score = NAN;
  h->nvotes = 0;
  const cJSON *hs = cJSON_GetObjectItemCaseSensitive(o, "human_score");
  const cJSON *vo = cJSON_GetObjectItemCaseSensitive(o, "votes");
  if (hs && !cJSON_IsNull(hs)) {
    if (!cJSON_IsNumber(hs) || !(hs->valuedouble >= 0 && hs->valuedouble <= 1))
      return snprintf(msg, msz, "field 'human_score' is not a number from 0 to 1"), -1;
    h->score = hs->valuedouble;
  }
  if (vo) {
    int n = cJSON_IsArray(vo) ? cJSON_GetArraySize(vo) : -1;
    if (n < 1 || n > MAX_VOTES) return snprintf(msg, msz, "field 'votes' is not a list of 1 to %d votes (0 or 1)", MAX_VOTES), -1;
    const cJSON *x;
    cJSON_ArrayForEach(x, vo) {
      if (!tl_json_is_int(x, 0, 1)) return snprintf(msg, msz, "field 'votes' holds a vote that is not 0 or 1"), -1;
      h->votes[h->nvotes++] = (int)x->valuedouble;
    }
    if (!hs || cJSON_IsNull(hs)) {
      h->score = tl_lave_human_from_votes(h->votes, h->nvotes);
      if (isnan(h->score))
        return snprintf(msg, msz, "field 'votes' has %d votes: a human score from votes needs 5 (or give 'human_score')",
                        h->nvotes), -1;
    }
  }
  if (isnan(h->score)) return snprintf(msg, msz, "no 'human_score' and no 'votes'"), -1;
  return 0;
}

/* Joins human score h to (id, model); *added (if non-NULL) says whether it was kept (a second
 * row for the pair is reported and dropped). */
static tl_status put_human(tl_bench *b, const char *id, const char *model, const human_t *h, const tl_jsonl *r,
                           tl_inlog *log, tl_err *err, bool *added) {
  if (added) *added = false;
  tl_buf k;
  tl_buf_init(&k);
  if (tl_buf_printf(&k, "%s\x1f%s", id, model)) return tl_err_set(err, TL_ENOMEM, "out of memory");
  bool ins;
  size_t ex;
  tl_status st = tl_strmap_put(&b->hum_of, k.data, b->nhum, &ins, &ex);
  tl_buf_release(&k);
  if (st) return tl_err_set(err, st, "out of memory");
  if (!ins)
    return logged(tl_inlog_report(log, TL_IN_DUPLICATE, r->path, r->line_no,
                                  "a second human judgment of item '%s', model '%s' (the first is kept)", id, model),
                  err);
  if (b->nhum == b->caphum) {
    size_t nc = b->caphum ? 2 * b->caphum : 1024;
    human_t *p = realloc(b->hum, nc * sizeof *p);
    if (!p) return tl_err_set(err, TL_ENOMEM, "out of memory");
    b->hum = p;
    b->caphum = nc;
  }
  b->hum[b->nhum++] = *h;
  if (added) *added = true;
  return TL_OK;
}

/* Counts a kept row of model `model` in file h. */
static tl_status hfile_kept(hfile *h, const char *model) {
  bool ins;
  size_t ix;
  if (tl_strmap_put(&h->model_ix, model, h->nmodel, &ins, &ix)) return TL_ENOMEM;
  if (ins) {
    if (h->nmodel == h->cap) {
      size_t nc = h->cap ? 2 * h->cap : 8;
      char **pn = realloc(h->mname, nc * sizeof *pn);
      if (pn) h->mname = pn;
      long *pk = pn ? realloc(h->kept_of, nc * sizeof *pk) : NULL;
      if (!pk) return TL_ENOMEM;
      h->kept_of = pk;
      h->cap = nc;
    }
    if (!(h->mname[h->nmodel] = tl_strdup(model))) return TL_ENOMEM;
    h->kept_of[h->nmodel] = 0;
    ix = h->nmodel++;
  }
  h->kept_of[ix]++;
  h->kept++;
  return TL_OK;
}

/* One row of a release or human file. */
static tl_status rel_line(void *vctx, const cJSON *o, const tl_jsonl *r) {
  rel_ctx *c = vctx;
  tl_bench *b = c->b;
  char qid[256], msg[200];
  int is_num;
  int64_t num;
  if (!cJSON_IsObject(o)) return logged(tl_inlog_report(c->log, TL_IN_BAD_FIELD, r->path, r->line_no, "not a JSON object"), c->err);
  const cJSON *ds = cJSON_GetObjectItemCaseSensitive(o, "dataset");
  const cJSON *model = cJSON_GetObjectItemCaseSensitive(o, "model");
  if (ds && (!cJSON_IsString(ds) || !*ds->valuestring || strchr(ds->valuestring, ':')))
    return logged(tl_inlog_report(c->log, TL_IN_BAD_FIELD, r->path, r->line_no, "field 'dataset' is not a name without ':'"), c->err);
  if (row_qid(o, qid, sizeof qid, &is_num, &num))
    return logged(tl_inlog_report(c->log, TL_IN_MISSING_FIELD, r->path, r->line_no,
                                  "no 'qid' (an integer or a non-empty string; 'question_id' and 'id' are read too)"),
                  c->err);
  if (!cJSON_IsString(model) || !*model->valuestring)
    return logged(tl_inlog_report(c->log, TL_IN_MISSING_FIELD, r->path, r->line_no, "no 'model' (a non-empty string)"), c->err);
  const char *dataset = ds ? ds->valuestring : b->dataset;
  human_t h;
  int hbad = row_human(o, &h, msg, sizeof msg);
  size_t ix;
  if (c->human_only) {
    if (hbad) return logged(tl_inlog_report(c->log, TL_IN_BAD_FIELD, r->path, r->line_no, "%s", msg), c->err);
    tl_buf id;
    tl_buf_init(&id);
    if (tl_buf_printf(&id, "%s:%s", dataset, qid)) return tl_err_set(c->err, TL_ENOMEM, "out of memory");
    hfile *hf = &b->hf[c->file];
    bool known = tl_strmap_get(&b->by_id, id.data, &ix), added = false;
    tl_status st = TL_OK;
    h.file = c->file;
    if (known) {
      st = put_human(b, id.data, model->valuestring, &h, r, c->log, c->err, &added);
      if (!st && added && hfile_kept(hf, model->valuestring)) st = tl_err_set(c->err, TL_ENOMEM, "out of memory");
      if (!added) hf->duplicate++;
    } else if (!hf->unknown++) { /* counted; reported once when the file ends (human_file_done) */
      hf->first_unknown_line = r->line_no;
      if (!(hf->first_unknown = tl_strdup(id.data))) st = tl_err_set(c->err, TL_ENOMEM, "out of memory");
    }
    tl_buf_release(&id);
    return st;
  }
  /* a release row: the item (first row of a qid defines it), then its human score */
  const cJSON *qu = cJSON_GetObjectItemCaseSensitive(o, "question");
  const cJSON *refs = cJSON_GetObjectItemCaseSensitive(o, "references");
  int nref = cJSON_IsArray(refs) ? cJSON_GetArraySize(refs) : 0;
  if (!cJSON_IsString(qu)) return logged(tl_inlog_report(c->log, TL_IN_MISSING_FIELD, r->path, r->line_no, "no 'question' (a string)"), c->err);
  if (nref < 1 || nref > TL_VQA_MAX_REFS)
    return logged(tl_inlog_report(c->log, TL_IN_BAD_FIELD, r->path, r->line_no, "field 'references' is not a list of 1 or more strings"), c->err);
  const cJSON *x;
  cJSON_ArrayForEach(x, refs) if (!cJSON_IsString(x))
    return logged(tl_inlog_report(c->log, TL_IN_BAD_FIELD, r->path, r->line_no, "field 'references' holds a non-string"), c->err);
  bool ins;
  tl_status st = add_item(b, dataset, qid, is_num, num, &c->cap, &ix, &ins);
  if (st) return tl_err_set(c->err, st, "out of memory");
  vitem *it = &b->v[ix];
  if (ins) {
    if (!(it->question = keep_str(b, qu->valuestring))) return tl_err_set(c->err, TL_ENOMEM, "out of memory");
    if (b->nrel_refs + (size_t)nref > b->caprefs) { /* refs are stored as offsets until load ends */
      size_t nc = b->caprefs ? 2 * b->caprefs : 4096;
      while (nc < b->nrel_refs + (size_t)nref) nc *= 2;
      const char **p = realloc(b->rel_refs, nc * sizeof *p);
      if (!p) return tl_err_set(c->err, TL_ENOMEM, "out of memory");
      b->rel_refs = p;
      b->caprefs = nc;
    }
    it->refs = (const char *const *)(uintptr_t)b->nrel_refs; /* offset, fixed up in fix_refs() */
    it->nrefs = (size_t)nref;
    cJSON_ArrayForEach(x, refs) {
      if (!(b->rel_refs[b->nrel_refs++] = keep_str(b, x->valuestring))) return tl_err_set(c->err, TL_ENOMEM, "out of memory");
    }
  } else {
    size_t off = (size_t)(uintptr_t)it->refs;
    int same = !strcmp(it->question, qu->valuestring) && it->nrefs == (size_t)nref;
    int j = 0;
    cJSON_ArrayForEach(x, refs) {
      if (same && strcmp(b->rel_refs[off + (size_t)j], x->valuestring)) same = 0;
      j++;
    }
    if (!same && (st = logged(tl_inlog_report(c->log, TL_IN_BAD_FIELD, r->path, r->line_no,
                                              "item '%s': its question or references differ from an earlier row's "
                                              "(the first row's are kept)", it->id),
                              c->err)))
      return st;
  }
  if (hbad) return logged(tl_inlog_report(c->log, TL_IN_BAD_FIELD, r->path, r->line_no, "%s", msg), c->err);
  h.file = c->file;
  bool added;
  hfile *hf = &b->hf[c->file];
  if ((st = put_human(b, it->id, model->valuestring, &h, r, c->log, c->err, &added))) return st;
  if (!added) hf->duplicate++;
  else if (hfile_kept(hf, model->valuestring)) return tl_err_set(c->err, TL_ENOMEM, "out of memory");
  return TL_OK;
}

static void fix_refs(tl_bench *b) {
  for (size_t i = 0; i < b->n; i++) b->v[i].refs = b->rel_refs + (size_t)(uintptr_t)b->v[i].refs;
}

static int cmp_vitem(const void *x, const void *y) {
  const vitem *a = x, *c = y;
  int d = strcmp(a->dataset, c->dataset);
  if (d) return d;
  if (a->num != c->num) return (a->num > c->num) - (a->num < c->num);
  return strcmp(a->qid, c->qid);
}

/* Groups: all, datasets, answer types, question types (each sorted by name). */
static tl_status build_groups(tl_bench *b) {
  static const char *const KIND[] = {"dataset", "answer_type", "question_type"};
  tl_strmap seen[3];
  for (int k = 0; k < 3; k++) tl_strmap_init(&seen[k]);
  tl_status st = TL_OK;
  char **names[3] = {NULL, NULL, NULL};
  size_t nn[3] = {0, 0, 0};
  for (size_t i = 0; !st && i < b->n; i++) {
    const char *v3[3] = {b->v[i].dataset, b->v[i].atype, b->v[i].qtype};
    for (int k = 0; !st && k < 3; k++) {
      bool ins;
      if (!v3[k] || (st = tl_strmap_put(&seen[k], v3[k], 0, &ins, NULL)) || !ins) continue;
      char **p = realloc(names[k], (nn[k] + 1) * sizeof *p);
      if (!p) st = TL_ENOMEM;
      else (names[k] = p)[nn[k]++] = (char *)v3[k];
    }
  }
  size_t G = 1 + nn[0] + nn[1] + nn[2];
  if (!st && (!(b->gkind = calloc(G, sizeof *b->gkind)) || !(b->gname = calloc(G, sizeof *b->gname)))) st = TL_ENOMEM;
  if (!st) {
    b->gkind[0] = tl_strdup("all");
    b->gname[0] = tl_strdup("all");
    b->G = 1;
  }
  for (int k = 0; !st && k < 3; k++) {
    for (size_t a = 1; a < nn[k]; a++) /* insertion sort by name: few groups */
      for (size_t j = a; j > 0 && strcmp(names[k][j - 1], names[k][j]) > 0; j--) {
        char *t = names[k][j];
        names[k][j] = names[k][j - 1];
        names[k][j - 1] = t;
      }
    for (size_t j = 0; j < nn[k]; j++) {
      b->gkind[b->G] = tl_strdup(KIND[k]);
      b->gname[b->G] = tl_strdup(names[k][j]);
      b->G++;
    }
  }
  for (int g = 0; !st && g < b->G; g++)
    if (!b->gkind[g] || !b->gname[g]) st = TL_ENOMEM;
  for (size_t i = 0; !st && i < b->n; i++) {
    vitem *x = &b->v[i];
    const char *v3[3] = {x->dataset, x->atype, x->qtype};
    x->ng = 0;
    x->g[x->ng++] = 0;
    for (int k = 0; k < 3; k++)
      if (v3[k])
        for (int g = 1; g < b->G; g++)
          if (!strcmp(b->gkind[g], KIND[k]) && !strcmp(b->gname[g], v3[k])) x->g[x->ng++] = g;
  }
  for (int k = 0; k < 3; k++) {
    free(names[k]);
    tl_strmap_release(&seen[k]);
  }
  return st;
}

/* "[a, b, c, ...]" of up to 6 names into out. */
static void name_list(tl_buf *out, char *const *names, size_t n) {
  tl_buf_puts(out, "[");
  for (size_t i = 0; i < n && i < 6; i++) tl_buf_printf(out, "%s%s", i ? ", " : "", names[i]);
  tl_buf_puts(out, n > 6 ? ", ...]" : "]");
}

/* The first ids of the items, "'demo:101', 'demo:102'" into out (an example of the run's keys). */
static void item_examples(const tl_bench *b, tl_buf *out) {
  for (size_t i = 0; i < b->n && i < 2; i++) tl_buf_printf(out, "%s'%s'", i ? ", " : "", b->v[i].id);
}

/* After human file f is read: its rows naming unknown items reported once (collapsed), and a
 * file that joins nothing refused - no item of the run, or (when the entry lists "models") no
 * model of the run. TL_EJOB with err naming the file and an example key of each side. */
static tl_status human_file_done(tl_bench *b, int f, const tl_jsonl *r, tl_inlog *log, tl_err *err) {
  hfile *h = &b->hf[f];
  const char *path = b->human_p[f];
  h->rows = r->n_records + r->n_bad;
  tl_buf ex, a;
  tl_buf_init(&ex);
  tl_buf_init(&a);
  item_examples(b, &ex);
  tl_status st = TL_OK;
  if (h->unknown)
    st = logged(tl_inlog_report(log, TL_IN_UNKNOWN_ITEM, path, h->first_unknown_line,
                                "a human judgment of item '%s', which the items do not have (%ld row%s of this file "
                                "name such items, reported here once; the items' ids look like %s)",
                                h->first_unknown, h->unknown, h->unknown == 1 ? "" : "s", ex.data ? ex.data : ""),
                err);
  if (!st && !h->kept) {
    if (h->unknown)
      st = tl_err_set(err, TL_EJOB, "vqa: no row of %s matches an item of this run: its %ld rows name items such as "
                      "'%s', the run's items are %s, ... (ids are <dataset>:<qid>; the entry's dataset is '%s')",
                      path, h->rows, h->first_unknown, ex.data ? ex.data : "", b->dataset);
    else
      st = tl_err_set(err, TL_EJOB, "vqa: no row of %s could be joined: %ld rows, none usable (see the bad-input "
                      "messages above)", path, h->rows);
  }
  if (!st && b->job_models) { /* the run's models are the entry's "models" (or a subset): check now */
    int any = 0;
    for (int m = 0; m < b->n_job_models && !any; m++) any = tl_strmap_get(&h->model_ix, b->job_models[m], NULL);
    if (!any) {
      name_list(&a, h->mname, h->nmodel);
      tl_buf jm;
      tl_buf_init(&jm);
      name_list(&jm, b->job_models, (size_t)b->n_job_models);
      st = tl_err_set(err, TL_EJOB, "vqa: no row of %s matches a unit of this run: its models are %s, the run's are %s",
                      path, a.data ? a.data : "[]", jm.data ? jm.data : "[]");
      tl_buf_release(&jm);
    }
  }
  tl_buf_release(&ex);
  tl_buf_release(&a);
  return st;
}

/* The units of the run that human file h matches (each cfg: the rows kept for its model), and
 * the rows whose model no cfg has (*rows_out). cfgs: the run's ncfgs cfgs. */
static int64_t human_units(const hfile *h, const tl_cfg *cfgs, size_t ncfgs, long *rows_out) {
  int64_t units = 0;
  long rows_in = 0;
  for (size_t c = 0; c < ncfgs; c++) {
    size_t ix;
    if (!tl_strmap_get(&h->model_ix, cfgs[c].model, &ix)) continue;
    units += h->kept_of[ix];
    int first = 1; /* a model's rows counted once, at its first cfg */
    for (size_t q = 0; q < c && first; q++) first = strcmp(cfgs[q].model, cfgs[c].model) != 0;
    if (first) rows_in += h->kept_of[ix];
  }
  if (rows_out) *rows_out = h->kept - rows_in;
  return units;
}

/* A human file that matches no unit of the run is an error: TL_EJOB naming the file and the
 * models of both sides. */
static tl_status human_check(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, tl_err *err) {
  for (int f = 0; f < b->n_human_p + b->n_rel_p; f++) {
    const hfile *h = &b->hf[f];
    if (f >= b->n_human_p && !h->kept) continue; /* a release without human scores (each row reported) */
    if (human_units(h, cfgs, ncfgs, NULL) > 0) continue;
    tl_buf a, m;
    tl_buf_init(&a);
    tl_buf_init(&m);
    name_list(&a, h->mname, h->nmodel);
    char *names[7];
    size_t k = 0;
    for (size_t c = 0; c < ncfgs && k < 7; c++)
      if (!c || strcmp(cfgs[c].model, cfgs[c - 1].model)) names[k++] = cfgs[c].model;
    name_list(&m, names, k);
    tl_status st = tl_err_set(err, TL_EJOB, "vqa: no row of %s matches a unit of this run: its models are %s, the "
                              "run's are %s", hf_path(b, f), a.data ? a.data : "[]", m.data ? m.data : "[]");
    tl_buf_release(&a);
    tl_buf_release(&m);
    return st;
  }
  return TL_OK;
}

/* The check of the run's cfgs against the human files (human_check), once: the driver calls it
 * through vt->check_cfgs on every rank when the cfgs are known, before anything is asked or a
 * journal started; vqa_request calls it too when no driver did (a caller of the module alone). */
static tl_status vqa_check_cfgs(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, tl_err *err) {
  tl_status st = human_check(b, cfgs, ncfgs, err);
  if (!st) b->rt->checked = 1;
  return st;
}

static tl_status vqa_load(tl_bench *b, size_t max_line, tl_inlog *log, tl_err *err) {
  loaded_release(b);
  tl_status st = TL_OK;
  size_t cap = 0;
  if (b->lave && !b->demos) {
    if ((st = tl_lave_demos_load(b->demos_p, &b->demos, err))) return st;
    if ((st = tl_lave_demos_load(b->demos_bin_p, &b->demos_bin, err))) return st;
  }
  const int nhf = b->n_human_p + b->n_rel_p;
  if (nhf && !(b->hf = calloc((size_t)nhf, sizeof *b->hf))) return tl_err_set(err, TL_ENOMEM, "out of memory");
  for (int f = 0; f < nhf; f++) tl_strmap_init(&b->hf[f].model_ix);
  if (b->n_rel_p) {
    rel_ctx c = {b, log, err, 0, 0, 0};
    for (int f = 0; !st && f < b->n_rel_p; f++) {
      tl_jsonl r;
      if ((st = tl_jsonl_open(&r, b->rel_p[f], max_line, err))) break;
      c.file = b->n_human_p + f;
      st = tl_inlog_each(log, &r, "rows", rel_line, &c, err);
      b->hf[c.file].rows = r.n_records + r.n_bad;
      tl_jsonl_close(&r);
    }
    if (!st) fix_refs(b);
  } else {
    if (b->n_annot_p) st = tl_vqa_load_official(&b->set, b->n_quest_p ? b->quest_p[0] : NULL, b->annot_p[0], log, err);
    for (int f = 0; !st && f < b->n_items_p; f++) {
      if (f) {
        st = tl_err_set(err, TL_EJOB, "vqa: one items file per benchmark entry (give one, or a release file)");
        break;
      }
      st = tl_vqa_load_items(&b->set, b->items_p[f], log, err);
    }
    for (size_t i = 0; !st && i < b->set.n; i++) {
      const tl_vqa_item *q = &b->set.items[i];
      size_t ix;
      bool ins;
      if ((st = add_item(b, b->dataset, q->id, q->is_num, q->num, &cap, &ix, &ins))) break;
      vitem *x = &b->v[ix];
      x->question = q->question;
      x->refs = (const char *const *)q->answers;
      x->nrefs = q->n_answers;
      if (q->image && q->image[0] != '/' && b->n_items_p) { /* relative to the items file's folder */
        const char *f = b->items_p[0], *sl = strrchr(f, '/');
        tl_buf pb;
        tl_buf_init(&pb);
        if (tl_buf_printf(&pb, "%.*s%s", sl ? (int)(sl - f + 1) : 0, f, q->image) || !(x->image = keep_str(b, pb.data)))
          st = TL_ENOMEM;
        tl_buf_release(&pb);
      } else {
        x->image = q->image;
      }
      if (q->question_type && !(x->qtype = intern(b, q->question_type))) st = TL_ENOMEM;
      if (q->answer_type && !(x->atype = intern(b, q->answer_type))) st = TL_ENOMEM;
    }
    if (st == TL_ENOMEM) return tl_err_set(err, st, "out of memory");
  }
  if (st) return st;
  if (b->n == 0) return tl_err_set(err, TL_EJOB, "vqa: no usable question in the items (see the bad-input messages)");
  qsort(b->v, b->n, sizeof *b->v, cmp_vitem);
  tl_strmap_release(&b->by_id);
  tl_strmap_init(&b->by_id);
  for (size_t i = 0; i < b->n; i++)
    if (tl_strmap_put(&b->by_id, b->v[i].id, i, NULL, NULL)) return tl_err_set(err, TL_ENOMEM, "out of memory");
  if ((st = build_groups(b))) return tl_err_set(err, st, "out of memory");
  b->echo = log->echo;
  b->rt->ncfgs = SIZE_MAX;
  b->rt->checked = 0;
  rel_ctx hc = {b, log, err, 0, 1, 0};
  for (int f = 0; !st && f < b->n_human_p; f++) {
    tl_jsonl r;
    if ((st = tl_jsonl_open(&r, b->human_p[f], max_line, err))) break;
    hc.file = f;
    st = tl_inlog_each(log, &r, "human judgments", rel_line, &hc, err);
    if (!st) st = human_file_done(b, f, &r, log, err);
    tl_jsonl_close(&r);
  }
  return st;
}

static size_t vqa_n_items(const tl_bench *b) { return b->n; }
static const char *vqa_item_id(const tl_bench *b, size_t i) { return i < b->n ? b->v[i].id : NULL; }
static int vqa_item_find(const tl_bench *b, const char *id, size_t *i) { return tl_strmap_get(&b->by_id, id, i); }
static uint32_t vqa_n_subs(const tl_bench *b, size_t i) {
  (void)b;
  (void)i;
  return 1;
}
static int vqa_n_modes(const tl_bench *b) { return b->nm; }
static const char *vqa_mode_name(const tl_bench *b, int k) { return k >= 0 && k < b->nm ? MODE_NAMES[k] : NULL; }

/* ---- requests ---- */

/* The answer as scored: the reply with its reasoning blocks dropped (strip_reasoning), into buf.
 * Returns 0 ok, 1 when a <think> never closes (no answer), -1 out of memory. */
static int visible_answer(const tl_bench *b, const char *text, tl_buf *buf, const char **out) {
  *out = text;
  if (!b->strip_reasoning) return 0;
  const char *v;
  size_t vl;
  int th = tl_think_strip(text, strlen(text), buf, &v, &vl);
  if (th == TL_THINK_NOMEM) return -1;
  if (th == TL_THINK_UNTERMINATED) return 1;
  if (v != text || vl != strlen(text)) {
    tl_buf tmp;
    tl_buf_init(&tmp);
    if (tl_buf_append(&tmp, v, vl) || tl_buf_append(&tmp, "", 1)) {
      tl_buf_release(&tmp);
      return -1;
    }
    tl_buf_release(buf);
    *buf = tmp;
    *out = buf->data;
  }
  return 0;
}

static tl_status vqa_request(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, int s, const tl_row *r,
                             tl_buf *arena, tl_bench_req *out, tl_err *err) {
  (void)cfgs;
  memset(out, 0, sizeof *out);
  out->temperature = -1;
  if (u->item >= b->n) return tl_err_set(err, TL_EINTERNAL, "vqa: item %" PRIu32 " out of range", u->item);
  const vitem *x = &b->v[u->item];
  if (s == 0 && !b->rt->checked && b->rt->ncfgs != SIZE_MAX) {
    /* the first request of this rank: the cfgs are known now (acc_layout noted their count),
     * and nothing of this benchmark was asked yet - a human file that matches no unit stops here */
    tl_status st = vqa_check_cfgs(b, cfgs, b->rt->ncfgs, err);
    if (st) return st;
  }
  if (s == 0) {
    size_t off = arena->len;
    tl_status st = tl_buf_puts(arena, x->question ? x->question : "");
    if (!st && *b->prompt_suffix) st = tl_buf_printf(arena, "\n%s", b->prompt_suffix);
    if (!st) st = tl_buf_append(arena, "", 1);
    if (st) return tl_err_set(err, st, "out of memory");
    if (!x->question) return tl_err_set(err, TL_EINPUT, "vqa: item %s has no question text to ask (the questions file "
                                                        "did not give one)", x->id);
    out->role = TL_ROLE_MODEL;
    out->msgs[0].role = "user";
    out->msgs[0].content = arena->data + off;
    out->nmsg = 1;
    if (x->image) {
      out->images[0] = x->image;
      out->nimages = 1;
    }
    out->max_tokens = b->max_tokens;
    return TL_OK;
  }
  if (s != 1 || !b->lave) return tl_err_set(err, TL_EINTERNAL, "vqa: no stage %d", s);
  if (!r->text[0]) {
    out->skip = 1;
    return TL_OK;
  }
  tl_buf vis;
  tl_buf_init(&vis);
  const char *pred;
  int va = visible_answer(b, r->text[0], &vis, &pred);
  if (va < 0) return tl_err_set(err, TL_ENOMEM, "out of memory");
  if (va == 1) {
    tl_buf_release(&vis);
    out->skip = 1; /* the answer never left its reasoning: nothing to rate */
    return TL_OK;
  }
  size_t off = arena->len;
  tl_status st = tl_lave_prompt(&b->lopts, b->demos, b->demos_bin, x->question ? x->question : "", x->refs, x->nrefs,
                                pred, NULL, arena, NULL, err);
  tl_buf_release(&vis);
  if (!st) st = tl_buf_append(arena, "", 1);
  if (st) return err && err->msg[0] ? st : tl_err_set(err, st, "vqa: LAVE prompt of %s", x->id);
  out->role = TL_ROLE_JUDGE;
  out->msgs[0].role = "user";
  out->msgs[0].content = arena->data + off;
  out->nmsg = 1;
  out->temperature = b->lave_temp;
  out->max_tokens = b->lave_max_tokens;
  return TL_OK;
}

/* ---- scoring ---- */

static tl_status set_answer(tl_parsed *p, const char *s) {
  free(p->answer);
  p->answer = s ? tl_strdup(s) : NULL;
  return s && !p->answer ? TL_ENOMEM : TL_OK;
}

/* The scoring workspace of this thread, with its memo of normalized texts (tl_vqa_ws_memo: a
 * run's human answers repeat from unit to unit), made on first use and kept until the thread
 * ends, as rx.c keeps its match data: the module object stays immutable and may be shared by
 * threads. NULL when out of memory. */
static tl_vqa_ws *thread_ws(void) {
  static _Thread_local tl_vqa_ws *ws;
  if (!ws && (ws = tl_vqa_ws_new()) != NULL) tl_vqa_ws_memo(ws);
  return ws;
}

static tl_status vqa_score(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, tl_row *r, tl_err *err) {
  (void)cfgs;
  const vitem *x = &b->v[u->item];
  for (int k = 0; k < b->nm; k++) {
    tl_parsed_release(&r->res[k]);
    r->res[k].status = TL_PS_MISSING;
    r->res[k].rule = "";
  }
  if (!r->text[0]) {
    if (b->lave) r->res[M_LAVE].rule = "no_answer";
    return TL_OK;
  }
  tl_buf vis;
  tl_buf_init(&vis);
  const char *pred;
  int va = visible_answer(b, r->text[0], &vis, &pred);
  if (va < 0) return tl_err_set(err, TL_ENOMEM, "out of memory");
  if (va == 1) {
    for (int k = 0; k < b->nm; k++) {
      r->res[k].status = TL_PS_UNTERMINATED;
      r->res[k].rule = "unterminated_answer";
    }
    tl_buf_release(&vis);
    return TL_OK;
  }
  tl_vqa_ws *ws = thread_ws();
  tl_vqa_result q;
  tl_status st = ws ? tl_vqa_score(ws, b->version, pred, x->refs, x->nrefs, TL_VQA_WANT_SOFT, &q, err) : TL_ENOMEM;
  if (!st) {
    const int64_t v3[3] = {q.acc, (int64_t)llround(q.soft * SOFT_SCALE), q.exact ? 1 : 0};
    for (int k = 0; !st && k < 3; k++) {
      r->res[k].status = TL_PS_OK;
      r->res[k].value = v3[k];
      /* "correct": a 0/1 reading of each mode, what 0/1 comparisons (the harness audit) use:
       * exact match itself; a graded mode at half credit or more (metric_hi's rule) */
      r->res[k].correct = k == M_EM ? q.exact : 2 * v3[k] >= MODE_SCALE[k];
      r->res[k].rule = k == M_VQA ? (q.normalized ? "normalized" : "raw") : k == M_SOFT ? (q.soft_cut ? "cut" : "soft")
                                                                         : "exact";
      st = set_answer(&r->res[k], pred);
    }
  }
  tl_buf_release(&vis);
  if (st) return err && err->msg[0] ? st : tl_err_set(err, st, "vqa: scoring %s", x->id);
  if (b->lave) {
    tl_parsed *p = &r->res[M_LAVE];
    if (!r->text[1]) {
      p->status = TL_PS_MISSING;
      p->rule = "no_judgment";
    } else {
      tl_lave_rating lr;
      if ((st = tl_lave_rate(r->text[1], b->lave_compat, &lr))) return tl_err_set(err, st, "out of memory");
      p->status = lr.status;
      p->rule = lr.rule;
      if (lr.status == TL_PS_OK) p->value = lr.rating - 1;
      if (lr.status == TL_PS_OK) p->correct = 2 * p->value >= MODE_SCALE[M_LAVE]; /* (as above) */
      if ((st = set_answer(p, lr.answer))) return tl_err_set(err, st, "out of memory");
    }
  }
  if (b->lave_expected) { /* E[rating] from the rating token's top log-probabilities (the meta) */
    tl_parsed *p = &r->res[M_LAVEX];
    cJSON *m = r->text[1] && r->meta[1] ? cJSON_Parse(r->meta[1]) : NULL;
    const cJSON *lp = m ? cJSON_GetObjectItemCaseSensitive(m, "logprobs") : NULL;
    if (!r->text[1]) {
      p->status = TL_PS_MISSING;
      p->rule = "no_judgment";
    } else if (!cJSON_IsArray(lp)) {
      p->status = TL_PS_MISSING;
      p->rule = "no_logprobs"; /* replay, or a judge engine without "logprobs": true */
    } else {
      tl_lave_expected ex;
      tl_err e2 = {{0}};
      st = tl_lave_expected_from_content(lp, &ex, NULL, &e2);
      if (st == TL_ENOMEM) {
        cJSON_Delete(m);
        return tl_err_set(err, st, "out of memory");
      }
      p->status = st ? TL_PS_NO_ANSWER : ex.status;
      p->rule = st ? "bad_logprobs" : ex.rule;
      if (!st && ex.status == TL_PS_OK) p->value = (int64_t)llround(ex.score * SOFT_SCALE);
      st = TL_OK;
    }
    cJSON_Delete(m);
  }
  return TL_OK;
}

/* ---- aggregates ---- */

static const human_t *human_of(const tl_bench *b, const tl_cfg *c, const vitem *x) {
  tl_buf k;
  tl_buf_init(&k);
  size_t i;
  bool ok = !tl_buf_printf(&k, "%s\x1f%s", x->id, c->model) && tl_strmap_get(&b->hum_of, k.data, &i);
  tl_buf_release(&k);
  return ok ? &b->hum[i] : NULL;
}

static size_t mode_len(const tl_bench *b, size_t ncfgs) { return ncfgs * (size_t)b->G * 3 + ncfgs * TL_PS__COUNT; }
/* Block nm + 2: [cfg][G][K__N] unit counts, then [cfg][item] each unit's VQA accuracy (units of
 * 1/TL_VQA_ACC_SCALE, 0 when unscored): the clusters of the headline CI (rank 0 sums a model's
 * seeds per item). */
static size_t count_len(const tl_bench *b, size_t ncfgs) { return ncfgs * (size_t)b->G * K__N + ncfgs * b->n; }

/* Called once by the run (after load and the cfgs, before any request, on the thread that will
 * make the requests): ncfgs is noted in b->rt so that the first request can check the human
 * files against the cfgs (vqa_request; bench.h gives request the cfgs but not their count). */
static int vqa_acc_layout(const tl_bench *b, size_t ncfgs, tl_acc_block *out) {
  b->rt->ncfgs = ncfgs;
  b->rt->checked = 0;
  for (int k = 0; k < b->nm; k++) out[k] = (tl_acc_block){mode_len(b, ncfgs), TL_ACC_SUM, 0};
  out[b->nm] = (tl_acc_block){ncfgs * HB_LEN(b->nm), TL_ACC_SUM, 0};
  out[b->nm + 1] = (tl_acc_block){ncfgs * (size_t)b->nm * 2, TL_ACC_MIN, INT64_MAX};
  out[b->nm + 2] = (tl_acc_block){count_len(b, ncfgs), TL_ACC_SUM, 0};
  return b->nm + 3;
}

/* Whether metric value v of mode k is "correct" (>= 0.5): 2 v >= scale, in integers. */
static int metric_hi(int k, int64_t v) { return 2 * v >= MODE_SCALE[k]; }

static void vqa_acc_add(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, const tl_unit *u, const tl_row *r,
                        int64_t *const *acc) {
  if (u->cfg >= ncfgs || u->item >= b->n) return;
  const vitem *x = &b->v[u->item];
  const int nm = b->nm;
  for (int k = 0; k < nm; k++) {
    const tl_parsed *p = &r->res[k];
    int64_t *a = acc[k];
    for (int j = 0; j < x->ng; j++) {
      int64_t *cell = a + ((size_t)u->cfg * (size_t)b->G + (size_t)x->g[j]) * 3;
      if (p->status == TL_PS_OK) {
        cell[0] += p->value;
        cell[1]++;
      } else {
        cell[2]++;
      }
    }
    if (p->status >= 0 && p->status < TL_PS__COUNT) a[ncfgs * (size_t)b->G * 3 + (size_t)u->cfg * TL_PS__COUNT + p->status]++;
  }
  { /* the unit counts of the summary, and the unit's VQA accuracy for the CI */
    int64_t k[K__N] = {0};
    const int answered = r->text[0] != NULL;
    k[K_ANSWERED] = answered;
    k[K_MISSING] = !answered && !r->error[0];
    k[K_EERR] = r->error[0] != NULL;
    k[K_UNPARSED] = answered && r->res[M_VQA].status != TL_PS_OK && r->res[M_VQA].status != TL_PS_ENGINE_ERROR;
    if (b->lave) {
      const tl_pstatus ls = r->res[M_LAVE].status;
      k[K_JEERR] = r->error[1] != NULL;
      k[K_LUNPARSED] = r->text[1] && !r->error[1] && ls != TL_PS_OK && ls != TL_PS_ENGINE_ERROR;
      k[K_LUNJUDGED] = answered && !r->text[1] && !r->error[1];
    }
    int64_t *cnt = acc[nm + 2];
    for (int j = 0; j < x->ng; j++) {
      int64_t *cell = cnt + ((size_t)u->cfg * (size_t)b->G + (size_t)x->g[j]) * K__N;
      for (int q = 0; q < K__N; q++) cell[q] += k[q];
    }
    if (r->res[M_VQA].status == TL_PS_OK)
      cnt[ncfgs * (size_t)b->G * K__N + (size_t)u->cfg * b->n + u->item] += r->res[M_VQA].value;
  }
  /* the human side: failure modes per metric, the human score, the votes' coincidences */
  const human_t *h = human_of(b, &cfgs[u->cfg], x);
  if (!h) return;
  int64_t *hb = acc[nm] + (size_t)u->cfg * HB_LEN(nm);
  int64_t *first = acc[nm + 1] + (size_t)u->cfg * (size_t)nm * 2;
  const int h1 = h->score == 1.0, h0 = h->score == 0.0;
  for (int k = 0; k < nm; k++) {
    const tl_parsed *p = &r->res[k];
    if (p->status != TL_PS_OK) continue;
    int64_t *f = hb + k * HB__PER;
    const int hi = metric_hi(k, p->value);
    f[HB_PAIRS]++;
    f[HB_H1] += h1;
    f[HB_H0] += h0;
    if (h1 && !hi) {
      f[HB_H1LO]++;
      if ((int64_t)u->item < first[2 * k]) first[2 * k] = (int64_t)u->item;
    }
    if (h0 && hi) {
      f[HB_H0HI]++;
      if ((int64_t)u->item < first[2 * k + 1]) first[2 * k + 1] = (int64_t)u->item;
    }
  }
  int64_t *hh = hb + HB_OFF_HUMAN(nm);
  hh[0] += (int64_t)llround(h->score * HUMAN_SCALE);
  hh[1]++;
  if (h->nvotes >= 1) hh[2]++;
  if (h->nvotes >= 2) {
    int c1 = 0;
    for (int j = 0; j < h->nvotes; j++) c1 += h->votes[j];
    const int c0 = h->nvotes - c1, w = VOTE_COINC / (h->nvotes - 1);
    /* ordered pairs within the unit: (0,0) c0(c0-1), (0,1) and (1,0) c0 c1, (1,1) c1(c1-1) */
    hh[3] += (int64_t)c0 * (c0 - 1) * w;
    hh[4] += (int64_t)c0 * c1 * w;
    hh[5] += (int64_t)c1 * c0 * w;
    hh[6] += (int64_t)c1 * (c1 - 1) * w;
  }
}

static double metric_value(int k, int64_t v) { return (double)v / (double)MODE_SCALE[k]; }

/* ---- tables ---- */

static const tl_col_spec ITEM_COLS[] = {
    {"model", TL_COL_STR, "model under test"},
    {"prompt_variant", TL_COL_STR, "prompt variant (short: the question and the prompt suffix)"},
    {"seed", TL_COL_I64, "sampling seed of the model under test"},
    {"id", TL_COL_STR, "item id: <dataset>:<question id>"},
    {"dataset", TL_COL_STR, "dataset name"},
    {"qid", TL_COL_STR, "question id, as the dataset gives it"},
    {"question_type", TL_COL_STR, "question type (\"\" when the items give none)"},
    {"answer_type", TL_COL_STR, "answer type (\"\" when none)"},
    {"question", TL_COL_TEXT, "the question"},
    {"references", TL_COL_TEXT, "the reference answers, as a JSON list, in the file's order"},
    {"n_references", TL_COL_I64, "number of references"},
    {"response", TL_COL_TEXT, "the model's answer as received (\"\" when none)"},
    {"judgment", TL_COL_TEXT, "the LAVE judge's reply (\"\" when none, or no judge)"},
    {"vqa_accuracy", TL_COL_F64, "VQA accuracy (the official script's rules, version of the job), NaN when unscored"},
    {"soft_vqa_accuracy", TL_COL_F64, "soft VQA accuracy (tally's definition, docs/VQA.md), NaN when unscored"},
    {"exact_match", TL_COL_F64, "1 when the answer equals a reference after the version's normalization, else 0; NaN when unscored"},
    {"vqa_status", TL_COL_STR, "ok, missing (no answer), unterminated_think, engine_error"},
    {"vqa_rule", TL_COL_STR, "normalized (the references were normalized) or raw (they were all equal: compared as is)"},
    {"lave_rating", TL_COL_I64, "LAVE rating 1-3; -1 when none (see lave_status)"},
    {"lave_score", TL_COL_F64, "(rating - 1) / 2; NaN when no rating"},
    {"lave_status", TL_COL_STR, "ok, no_answer (no rating in the reply), out_of_range, missing, ..."},
    {"lave_rule", TL_COL_STR, "rating_eq, last_char, compat_fallback_2, no_rating, ..."},
    {"lave_expected", TL_COL_F64, "(E[rating] - 1) / 2 from the rating token's top log-probabilities (expected_rating); NaN when none"},
    {"lave_expected_rule", TL_COL_STR, "logprob_expectation, no_rating_token, no_logprobs (replay, or no logprobs asked), ... (\"\" when off)"},
    {"human", TL_COL_F64, "the human score of this answer (0, 0.5, 1 from 5 votes, or the release's); NaN when none"},
    {"human_votes", TL_COL_STR, "the annotators' votes, comma-separated (\"\" when none)"},
};
enum { IC_MODEL, IC_VAR, IC_SEED, IC_ID, IC_DS, IC_QID, IC_QT, IC_AT, IC_Q, IC_REFS, IC_NREF, IC_RESP, IC_JUDG, IC_VQA,
       IC_SOFT, IC_EM, IC_VST, IC_VRULE, IC_LR, IC_LS, IC_LST, IC_LRULE, IC_LX, IC_LXRULE, IC_HUM, IC_VOTES, IC__N };

static tl_status refs_json(const vitem *x, tl_buf *out) {
  cJSON *a = cJSON_CreateArray();
  if (!a) return TL_ENOMEM;
  for (size_t j = 0; j < x->nrefs; j++) cJSON_AddItemToArray(a, cJSON_CreateString(x->refs[j]));
  char *s = cJSON_PrintUnformatted(a);
  cJSON_Delete(a);
  if (!s) return TL_ENOMEM;
  tl_buf_reset(out);
  tl_status st = tl_buf_puts(out, s);
  free(s);
  return st;
}

static tl_table *vqa_items_table(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *units, const tl_row *rows,
                                 size_t n, tl_table *into) {
  tl_table *t = into ? into : tl_table_new("/items/vqa");
  tl_buf tmp;
  tl_buf_init(&tmp);
  if (!t || (!into && tl_table_add_cols(t, ITEM_COLS, IC__N))) goto fail;
  for (size_t i = 0; i < n; i++) {
    const tl_unit *u = &units[i];
    const tl_row *r = &rows[i];
    const tl_cfg *c = &cfgs[u->cfg];
    const vitem *x = &b->v[u->item];
    size_t k = tl_table_add_row(t);
    if (k == (size_t)-1 || tl_table_set_str(t, k, IC_MODEL, c->model) || tl_table_set_str(t, k, IC_VAR, VARIANTS[0]) ||
        tl_table_set_str(t, k, IC_ID, x->id) || tl_table_set_str(t, k, IC_DS, x->dataset) ||
        tl_table_set_str(t, k, IC_QID, x->qid) || tl_table_set_str(t, k, IC_QT, x->qtype ? x->qtype : "") ||
        tl_table_set_str(t, k, IC_AT, x->atype ? x->atype : "") ||
        tl_table_set_str(t, k, IC_Q, x->question ? x->question : "") || refs_json(x, &tmp) ||
        tl_table_set_str(t, k, IC_REFS, tmp.data))
      goto fail;
    tl_table_set_i64(t, k, IC_SEED, c->seed);
    tl_table_set_i64(t, k, IC_NREF, (int64_t)x->nrefs);
    tl_table_ref_str(t, k, IC_RESP, r->text[0] ? r->text[0] : "");
    tl_table_ref_str(t, k, IC_JUDG, b->lave && r->text[1] ? r->text[1] : "");
    for (int m = 0; m < 3; m++)
      tl_table_set_f64(t, k, IC_VQA + m, r->res[m].status == TL_PS_OK ? metric_value(m, r->res[m].value) : NAN);
    if (tl_table_set_str(t, k, IC_VST, tl_pstatus_name(r->res[M_VQA].status)) ||
        tl_table_set_str(t, k, IC_VRULE, r->res[M_VQA].rule ? r->res[M_VQA].rule : ""))
      goto fail;
    const tl_parsed *lp = b->lave ? &r->res[M_LAVE] : NULL;
    int ok = lp && lp->status == TL_PS_OK;
    tl_table_set_i64(t, k, IC_LR, ok ? lp->value + 1 : -1);
    tl_table_set_f64(t, k, IC_LS, ok ? metric_value(M_LAVE, lp->value) : NAN);
    if (tl_table_set_str(t, k, IC_LST, lp ? tl_pstatus_name(lp->status) : "") ||
        tl_table_set_str(t, k, IC_LRULE, lp && lp->rule ? lp->rule : ""))
      goto fail;
    const tl_parsed *xp = b->lave_expected ? &r->res[M_LAVEX] : NULL;
    tl_table_set_f64(t, k, IC_LX, xp && xp->status == TL_PS_OK ? metric_value(M_LAVEX, xp->value) : NAN);
    if (tl_table_set_str(t, k, IC_LXRULE, xp && xp->rule ? xp->rule : "")) goto fail;
    const human_t *h = human_of(b, c, x);
    tl_table_set_f64(t, k, IC_HUM, h ? h->score : NAN);
    tl_buf_reset(&tmp);
    for (int j = 0; h && j < h->nvotes; j++) tl_buf_printf(&tmp, "%s%d", j ? "," : "", h->votes[j]);
    if (tl_table_set_str(t, k, IC_VOTES, tmp.data ? tmp.data : "")) goto fail;
  }
  tl_buf_release(&tmp);
  return t;
fail:
  tl_buf_release(&tmp);
  if (t != into) tl_table_free(t);
  return NULL;
}

/* ---- metric tables (rank 0, from the reduced integers, in key order) ---- */

enum { T_ACC, T_FAIL, T_HUMAN, T_AUDIT, T_SETTINGS, T_ACROSS, T_SUM, T_JOIN, T__N };

static const tl_col_spec ACC_COLS[] = {
    {"model", TL_COL_STR, "model under test"},
    {"prompt_variant", TL_COL_STR, "prompt variant"},
    {"seed", TL_COL_I64, "sampling seed"},
    {"level", TL_COL_STR, "all, dataset, answer_type or question_type"},
    {"group", TL_COL_STR, "the group's name (\"all\" for level all)"},
    {"n_items", TL_COL_I64, "units (questions) in the group: n, what every mean divides by"},
    {"n_scored", TL_COL_I64, "units with a VQA accuracy (the others score 0: missing, unparsed, engine_error)"},
    {"vqa_accuracy", TL_COL_F64, "VQA accuracy summed over the scored units / n_items, in [0, 1] (an unscored unit "
                                 "scores 0; the official script prints 100x)"},
    {"soft_vqa_accuracy", TL_COL_F64, "soft VQA accuracy summed over the scored units / n_items"},
    {"exact_match", TL_COL_F64, "exact matches / n_items"},
    {"n_lave_rated", TL_COL_I64, "units with a LAVE rating (0 without a LAVE judge)"},
    {"n_lave_unrated", TL_COL_I64, "units without one: no answer, no judgment, no rating in the reply, ..."},
    {"lave_score", TL_COL_F64, "LAVE score (rating - 1) / 2 summed over the rated units / n_items (unrated: 0); "
                               "NaN without a LAVE judge or when no unit of the group has a rating"},
    {"lave_expected", TL_COL_F64, "expected LAVE score from log-probabilities summed / n_items (expected_rating); NaN when off"},
    {"n_answered", TL_COL_I64, "units with a reply of the model (n_items = n_answered + n_missing + n_engine_error)"},
    {"n_missing", TL_COL_I64, "units with no reply and no engine failure (no answer line)"},
    {"n_unparsed", TL_COL_I64, "answered units without a VQA accuracy (an unterminated reasoning block)"},
    {"n_engine_error", TL_COL_I64, "units whose model engine gave up"},
    {"n_judge_engine_error", TL_COL_I64, "units whose LAVE judge engine gave up (every mode of them is engine_error)"},
    {"n_lave_unparsed", TL_COL_I64, "units whose judge reply holds no usable rating (no_rating, out of range)"},
};
enum { AC_MODEL, AC_VAR, AC_SEED, AC_LEVEL, AC_GROUP, AC_N, AC_NS, AC_VQA, AC_SOFT, AC_EM, AC_NLR, AC_NLU, AC_LAVE,
       AC_LAVEX, AC_NANS, AC_NMISS, AC_NUNP, AC_NEERR, AC_NJEERR, AC_NLUNP, AC__N };

static const tl_col_spec FAIL_COLS[] = {
    {"metric", TL_COL_STR, "vqa_accuracy, soft_vqa_accuracy, exact_match, lave or lave_expected"},
    {"model", TL_COL_STR, "model under test; \"all\" for every model and seed together"},
    {"seed", TL_COL_I64, "sampling seed; -1 for the pooled row"},
    {"n_units", TL_COL_I64, "units with both a human score and a value of the metric"},
    {"n_human_correct", TL_COL_I64, "of them, human score 1 (correct)"},
    {"n_correct_metric_low", TL_COL_I64, "human score 1 but the metric below 0.5"},
    {"share_correct_metric_low", TL_COL_F64, "n_correct_metric_low / n_human_correct"},
    {"n_human_wrong", TL_COL_I64, "of them, human score 0 (incorrect)"},
    {"n_wrong_metric_high", TL_COL_I64, "human score 0 but the metric 0.5 or more"},
    {"share_wrong_metric_high", TL_COL_F64, "n_wrong_metric_high / n_human_wrong"},
    {"example_correct_metric_low", TL_COL_STR, "the first such item in key order (its rows in /items/vqa); \"\" when none"},
    {"example_wrong_metric_high", TL_COL_STR, "the first such item in key order; \"\" when none"},
};
enum { FC_METRIC, FC_MODEL, FC_SEED, FC_N, FC_H1, FC_H1LO, FC_S1, FC_H0, FC_H0HI, FC_S0, FC_E1, FC_E0, FC__N };

static const tl_col_spec HUM_COLS[] = {
    {"model", TL_COL_STR, "model under test; \"all\" for every model and seed together"},
    {"seed", TL_COL_I64, "sampling seed; -1 for the pooled row"},
    {"n_human", TL_COL_I64, "units with a human score"},
    {"human_mean", TL_COL_F64, "mean human score"},
    {"n_with_votes", TL_COL_I64, "units with annotator votes"},
    {"alpha_nominal", TL_COL_F64,
     "Krippendorff's alpha (nominal) of the annotators' votes, units as units, votes as values (Krippendorff 2011); NaN when undefined"},
};

static double ratio(int64_t a, int64_t n) { return n ? (double)a / (double)n : NAN; }

/* One row of the failure-mode table from counters f[HB__PER] and first items e[2]. */
static tl_status fail_row(const tl_bench *b, tl_table *t, int k, const char *model, int64_t seed, const int64_t *f,
                          const int64_t *e) {
  size_t r = tl_table_add_row(t);
  if (r == (size_t)-1 || tl_table_set_str(t, r, FC_METRIC, MODE_NAMES[k]) || tl_table_set_str(t, r, FC_MODEL, model) ||
      tl_table_set_str(t, r, FC_E1, e[0] == INT64_MAX ? "" : b->v[e[0]].id) ||
      tl_table_set_str(t, r, FC_E0, e[1] == INT64_MAX ? "" : b->v[e[1]].id))
    return TL_ENOMEM;
  tl_table_set_i64(t, r, FC_SEED, seed);
  tl_table_set_i64(t, r, FC_N, f[HB_PAIRS]);
  tl_table_set_i64(t, r, FC_H1, f[HB_H1]);
  tl_table_set_i64(t, r, FC_H1LO, f[HB_H1LO]);
  tl_table_set_f64(t, r, FC_S1, ratio(f[HB_H1LO], f[HB_H1]));
  tl_table_set_i64(t, r, FC_H0, f[HB_H0]);
  tl_table_set_i64(t, r, FC_H0HI, f[HB_H0HI]);
  tl_table_set_f64(t, r, FC_S0, ratio(f[HB_H0HI], f[HB_H0]));
  return TL_OK;
}

static tl_status hum_row(tl_table *t, const char *model, int64_t seed, const int64_t *hh) {
  size_t r = tl_table_add_row(t);
  if (r == (size_t)-1 || tl_table_set_str(t, r, 0, model)) return TL_ENOMEM;
  double o[4] = {(double)hh[3], (double)hh[4], (double)hh[5], (double)hh[6]};
  tl_table_set_i64(t, r, 1, seed);
  tl_table_set_i64(t, r, 2, hh[1]);
  tl_table_set_f64(t, r, 3, hh[1] ? (double)hh[0] / HUMAN_SCALE / (double)hh[1] : NAN);
  tl_table_set_i64(t, r, 4, hh[2]);
  tl_table_set_f64(t, r, 5, tl_kripp_alpha(o, 2, VOTE_COINC, TL_KRIPP_NOMINAL, NULL));
  return TL_OK;
}

static tl_status settings_table(const tl_bench *b, tl_table *t) {
  static const tl_col_spec SC[] = {{"key", TL_COL_STR, "setting"}, {"value", TL_COL_TEXT, "its value, as text"}};
  if (tl_table_add_cols(t, SC, 2)) return TL_ENOMEM;
  char num[6][64];
  snprintf(num[4], sizeof num[4], "%u", (unsigned)b->ci_B);
  snprintf(num[5], sizeof num[5], "%llu", (unsigned long long)b->ci_seed);
  snprintf(num[0], sizeof num[0], "%d", b->max_tokens);
  snprintf(num[1], sizeof num[1], "%d", b->lopts.num_shots);
  snprintf(num[2], sizeof num[2], "%.15g", b->lave_temp);
  snprintf(num[3], sizeof num[3], "%d", b->lave_max_tokens);
  const char *kv[][2] = {{"version", tl_vqa_version_name(b->version)},
                         {"prompt_suffix", b->prompt_suffix},
                         {"max_tokens", num[0]},
                         {"strip_reasoning", b->strip_reasoning ? "true" : "false"},
                         {"soft_vqa_accuracy", "tally's definition (docs/VQA.md): 1 - CER per reference, floored at 0, "
                                               "leave-one-out min(1, sum/3); unverified against Agrawal et al. 2023"},
                         {"lave", b->lave ? "on" : "off"},
                         {"lave_demos", b->lave ? b->demos_p : ""},
                         {"lave_demos_binary", b->lave ? b->demos_bin_p : ""},
                         {"lave_num_shots", b->lave ? num[1] : ""},
                         {"lave_rationalize", b->lave ? (b->lopts.rationalize ? "true" : "false") : ""},
                         {"lave_filter_references", b->lave ? (b->lopts.filter_refs ? "true" : "false") : ""},
                         {"lave_compat_fallback", b->lave ? (b->lave_compat ? "true (COMPAT: no rating -> 2)" : "false") : ""},
                         {"lave_expected_rating", b->lave ? (b->lave_expected ? "true" : "false") : ""},
                         {"lave_temperature", b->lave ? num[2] : ""},
                         {"lave_max_tokens", b->lave ? num[3] : ""},
                         {"ci_resamples", num[4]}, /* the headline CI of vqa_accuracy */
                         {"ci_seed", num[5]}};
  for (size_t i = 0; i < sizeof kv / sizeof *kv; i++) {
    size_t r = tl_table_add_row(t);
    if (r == (size_t)-1 || tl_table_set_str(t, r, 0, kv[i][0]) || tl_table_set_str(t, r, 1, kv[i][1])) return TL_ENOMEM;
  }
  return TL_OK;
}

/* Each metric's mean, std (ddof 1) and standard error over the seeds of a (model, variant,
 * level, group), from the accuracy table's rows (cfg-major: a (model, variant)'s seeds follow
 * each other, each with the same groups in the same order). Seeds whose value is NaN (no
 * scored unit, no rating) are left out and not counted. Summed in seed order. */
static tl_status across_seeds(const tl_bench *b, const tl_table *acc, tl_table *t) {
  static const tl_col_spec AS_COLS[] = {
      {"model", TL_COL_STR, "model under test"},
      {"prompt_variant", TL_COL_STR, "prompt variant"},
      {"level", TL_COL_STR, "all, dataset, answer_type or question_type"},
      {"group", TL_COL_STR, "the group's name"},
      {"metric", TL_COL_STR, "vqa_accuracy, soft_vqa_accuracy, exact_match, lave_score or lave_expected"},
      {"n_seeds", TL_COL_I64, "seeds with a value of the metric in the group"},
      {"mean", TL_COL_F64, "mean of the per-seed values (/metrics/vqa/accuracy), summed in seed order"},
      {"std", TL_COL_F64, "sample standard deviation over seeds (ddof 1); NaN for one seed"},
      {"se", TL_COL_F64, "standard error of the mean, std / sqrt(n_seeds); NaN for one seed"},
  };
  static const int MCOL[] = {AC_VQA, AC_SOFT, AC_EM, AC_LAVE, AC_LAVEX};
  static const char *const MNAME[] = {"vqa_accuracy", "soft_vqa_accuracy", "exact_match", "lave_score", "lave_expected"};
  const int nmet = b->lave_expected ? 5 : b->lave ? 4 : 3;
  if (tl_table_add_cols(t, AS_COLS, 9)) return TL_ENOMEM;
  const size_t n = acc->nrows;
  double *v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return TL_ENOMEM;
  tl_status st = TL_OK;
  /* a block: the rows of one (model, variant); within it the rows of a (level, group) are those
   * with the same level and group, one per seed */
  for (size_t b0 = 0; b0 < n && !st;) {
    size_t b1 = b0 + 1;
    while (b1 < n && !strcmp(acc->cols[AC_MODEL].v.s[b1], acc->cols[AC_MODEL].v.s[b0]) &&
           !strcmp(acc->cols[AC_VAR].v.s[b1], acc->cols[AC_VAR].v.s[b0]))
      b1++;
    for (size_t r0 = b0; r0 < b1 && !st; r0++) { /* each (level, group) at its first row in the block */
      const char *lv = acc->cols[AC_LEVEL].v.s[r0], *gr = acc->cols[AC_GROUP].v.s[r0];
      int first = 1;
      for (size_t q = b0; q < r0 && first; q++)
        first = strcmp(acc->cols[AC_LEVEL].v.s[q], lv) || strcmp(acc->cols[AC_GROUP].v.s[q], gr);
      if (!first) continue;
      for (int m = 0; m < nmet && !st; m++) {
        int k = 0;
        for (size_t q = r0; q < b1; q++)
          if (!strcmp(acc->cols[AC_LEVEL].v.s[q], lv) && !strcmp(acc->cols[AC_GROUP].v.s[q], gr) &&
              !isnan(acc->cols[MCOL[m]].v.f[q]))
            v[k++] = acc->cols[MCOL[m]].v.f[q];
        if (!k) continue;
        double ss;
        const double mean = tl_mean_ss(v, (size_t)k, &ss);
        const double sd = k > 1 ? sqrt(ss / (k - 1)) : NAN;
        size_t r = tl_table_add_row(t);
        if (r == (size_t)-1 || tl_table_set_str(t, r, 0, acc->cols[AC_MODEL].v.s[r0]) ||
            tl_table_set_str(t, r, 1, acc->cols[AC_VAR].v.s[r0]) || tl_table_set_str(t, r, 2, lv) ||
            tl_table_set_str(t, r, 3, gr) || tl_table_set_str(t, r, 4, MNAME[m])) {
          st = TL_ENOMEM;
          break;
        }
        tl_table_set_i64(t, r, 5, k);
        tl_table_set_f64(t, r, 6, mean);
        tl_table_set_f64(t, r, 7, sd);
        tl_table_set_f64(t, r, 8, k > 1 ? sd / sqrt((double)k) : NAN);
      }
    }
    b0 = b1;
  }
  free(v);
  return st;
}

/* /metrics/vqa/summary: per (model, variant) and group of the levels all, dataset and
 * answer_type, over the model's seeds: the unit counts, each metric's mean over seeds (each
 * seed's value divides by its n: an unscored unit scores 0) with its std (ddof 1, NaN for one
 * seed), and the 95% CI of VQA accuracy from tl_cluster_ci (a cluster = a question with every
 * seed of it: num = its summed accuracy, den = its units). cfgs are sorted by (model, variant,
 * seed), so a (model, variant)'s cfgs are consecutive. */
static const tl_col_spec SUM_COLS[] = {
    {"model", TL_COL_STR, "model under test"},
    {"prompt_variant", TL_COL_STR, "prompt variant"},
    {"level", TL_COL_STR, "all, dataset or answer_type"},
    {"group", TL_COL_STR, "the group's name"},
    {"n_seeds", TL_COL_I64, "seeds of the model"},
    {"n", TL_COL_I64, "units asked for: questions x seeds (every mean divides by it)"},
    {"n_answered", TL_COL_I64, "units with a reply of the model (n = n_answered + n_missing + n_engine_error)"},
    {"n_missing", TL_COL_I64, "units with no reply and no engine failure: score 0"},
    {"n_unparsed", TL_COL_I64, "answered units without a VQA accuracy (an unterminated reasoning block): score 0"},
    {"n_engine_error", TL_COL_I64, "units whose model engine gave up: score 0"},
    {"n_judge_engine_error", TL_COL_I64, "units whose LAVE judge engine gave up: every mode engine_error, score 0"},
    {"n_lave_unparsed", TL_COL_I64, "judge replies without a usable rating (no_rating, out of range): LAVE score 0"},
    {"n_lave_unjudged", TL_COL_I64, "answered units without a judge reply or failure (nothing to rate, no judgment line)"},
    {"n_lave_rated", TL_COL_I64, "units with a LAVE rating (n minus every kind of unrated unit)"},
    {"vqa_accuracy", TL_COL_F64, "mean over seeds of the VQA accuracy (sum / n of each seed)"},
    {"vqa_accuracy_std", TL_COL_F64, "its standard deviation over seeds (ddof 1); NaN for one seed"},
    {"vqa_accuracy_ci_lo", TL_COL_F64, "95% percentile bootstrap CI (tl_cluster_ci over questions, seeds together): low"},
    {"vqa_accuracy_ci_hi", TL_COL_F64, "and high; NaN for fewer than 2 questions"},
    {"soft_vqa_accuracy", TL_COL_F64, "mean over seeds of the soft VQA accuracy (sum / n)"},
    {"soft_vqa_accuracy_std", TL_COL_F64, "std over seeds (ddof 1)"},
    {"exact_match", TL_COL_F64, "mean over seeds of exact matches / n"},
    {"exact_match_std", TL_COL_F64, "std over seeds (ddof 1)"},
    {"lave_score", TL_COL_F64, "mean over the seeds with a rating of the LAVE score (sum over rated units / n: "
                               "unrated 0); NaN when no unit has a rating"},
    {"lave_score_std", TL_COL_F64, "std over seeds (ddof 1)"},
};
enum { SC_MODEL, SC_VAR, SC_LEVEL, SC_GROUP, SC_NSEEDS, SC_N, SC_NANS, SC_NMISS, SC_NUNP, SC_NEERR, SC_NJEERR, SC_NLUNP,
       SC_NLUNJ, SC_NLR, SC_VQA, SC_VQASD, SC_LO, SC_HI, SC_SOFT, SC_SOFTSD, SC_EM, SC_EMSD, SC_LAVE, SC_LAVESD, SC__N };

/* mean and std (ddof 1, NaN for k < 2) of v[0..k) */
static void mean_std(const double *v, size_t k, double *mean, double *sd) {
  double ss;
  *mean = k ? tl_mean_ss(v, k, &ss) : NAN;
  *sd = k > 1 ? sqrt(ss / (double)(k - 1)) : NAN;
}

static tl_status summary_table(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc, tl_table *t) {
  if (tl_table_add_cols(t, SUM_COLS, SC__N)) return TL_ENOMEM;
  const int nm = b->nm;
  const int64_t *cnt = acc[nm + 2], *peritem = acc[nm + 2] + ncfgs * (size_t)b->G * K__N;
  double *v = malloc((ncfgs ? ncfgs : 1) * sizeof *v);
  double *num = malloc((b->n ? b->n : 1) * sizeof *num), *den = malloc((b->n ? b->n : 1) * sizeof *den);
  /* the last CI's clusters and bounds: a group with the same clusters (the level "all" and a
   * set's only dataset, or its only answer type) has the same bounds, which are not drawn again */
  double *pnum = malloc((b->n ? b->n : 1) * sizeof *pnum), *pden = malloc((b->n ? b->n : 1) * sizeof *pden);
  double plo = NAN, phi = NAN;
  uint32_t pm = UINT32_MAX;
  tl_ccis *ci = tl_ccis_new(b->ci_B, b->ci_seed); /* tl_cluster_ci's bounds, draws kept where rows share a size */
  tl_status st = v && num && den && pnum && pden && ci ? TL_OK : TL_ENOMEM;
  for (size_t c0 = 0; !st && c0 < ncfgs;) {
    size_t c1 = c0 + 1;
    while (c1 < ncfgs && !strcmp(cfgs[c1].model, cfgs[c0].model) && cfgs[c1].variant == cfgs[c0].variant) c1++;
    const size_t ns = c1 - c0;
    for (int g = 0; !st && g < b->G; g++) {
      if (strcmp(b->gkind[g], "all") && strcmp(b->gkind[g], "dataset") && strcmp(b->gkind[g], "answer_type")) continue;
      const int64_t n1 = acc[M_VQA][(c0 * (size_t)b->G + (size_t)g) * 3 + 1] + acc[M_VQA][(c0 * (size_t)b->G + (size_t)g) * 3 + 2];
      if (!n1) continue;
      size_t r = tl_table_add_row(t);
      if (r == (size_t)-1 || tl_table_set_str(t, r, SC_MODEL, cfgs[c0].model) ||
          tl_table_set_str(t, r, SC_VAR, VARIANTS[cfgs[c0].variant]) || tl_table_set_str(t, r, SC_LEVEL, b->gkind[g]) ||
          tl_table_set_str(t, r, SC_GROUP, b->gname[g])) {
        st = TL_ENOMEM;
        break;
      }
      int64_t k[K__N] = {0}, n = 0, rated = 0;
      for (size_t c = c0; c < c1; c++) {
        const int64_t *kc = cnt + (c * (size_t)b->G + (size_t)g) * K__N;
        for (int q = 0; q < K__N; q++) k[q] += kc[q];
        const int64_t *cell = acc[M_VQA] + (c * (size_t)b->G + (size_t)g) * 3;
        n += cell[1] + cell[2];
        if (b->lave) rated += acc[M_LAVE][(c * (size_t)b->G + (size_t)g) * 3 + 1];
      }
      tl_table_set_i64(t, r, SC_NSEEDS, (int64_t)ns);
      tl_table_set_i64(t, r, SC_N, n);
      static const int KCOL[][2] = {{SC_NANS, K_ANSWERED}, {SC_NMISS, K_MISSING},     {SC_NUNP, K_UNPARSED},
                                    {SC_NEERR, K_EERR},    {SC_NJEERR, K_JEERR},      {SC_NLUNP, K_LUNPARSED},
                                    {SC_NLUNJ, K_LUNJUDGED}};
      for (size_t q = 0; q < sizeof KCOL / sizeof *KCOL; q++) tl_table_set_i64(t, r, KCOL[q][0], k[KCOL[q][1]]);
      tl_table_set_i64(t, r, SC_NLR, rated);
      static const int MCOL[][2] = {{SC_VQA, M_VQA}, {SC_SOFT, M_SOFT}, {SC_EM, M_EM}, {SC_LAVE, M_LAVE}};
      for (int m = 0; m < 4; m++) {
        double mean = NAN, sd = NAN;
        if (MCOL[m][1] < nm) {
          size_t kv = 0; /* LAVE: a seed without any rating has no value (NaN in /metrics/vqa/accuracy): left out */
          for (size_t c = c0; c < c1; c++) {
            const int64_t *cell = acc[MCOL[m][1]] + (c * (size_t)b->G + (size_t)g) * 3;
            const int64_t nc = cell[1] + cell[2];
            if (MCOL[m][1] == M_LAVE && !cell[1]) continue;
            v[kv++] = nc ? (double)cell[0] / (double)MODE_SCALE[MCOL[m][1]] / (double)nc : 0.0;
          }
          mean_std(v, kv, &mean, &sd);
        }
        tl_table_set_f64(t, r, MCOL[m][0], mean);
        tl_table_set_f64(t, r, MCOL[m][0] + 1, sd);
      }
      /* the CI: clusters = the group's questions in key order, seeds summed */
      uint32_t m = 0;
      for (size_t i = 0; i < b->n; i++) {
        int in = 0;
        for (int j = 0; j < b->v[i].ng && !in; j++) in = b->v[i].g[j] == g;
        if (!in) continue;
        int64_t sum = 0;
        for (size_t c = c0; c < c1; c++) sum += peritem[c * b->n + i];
        num[m] = (double)sum / (double)TL_VQA_ACC_SCALE;
        den[m] = (double)ns;
        m++;
      }
      double lo = NAN, hi = NAN;
      if (m == pm && !memcmp(num, pnum, m * sizeof *num) && !memcmp(den, pden, m * sizeof *den)) {
        lo = plo; /* tl_cluster_ci is a function of its arguments: the same bounds */
        hi = phi;
      } else {
        st = tl_ccis_row(ci, num, den, m, 0.95, &lo, &hi);
        memcpy(pnum, num, m * sizeof *num);
        memcpy(pden, den, m * sizeof *den);
        pm = m;
        plo = lo;
        phi = hi;
      }
      tl_table_set_f64(t, r, SC_LO, lo);
      tl_table_set_f64(t, r, SC_HI, hi);
    }
    c0 = c1;
  }
  free(v);
  free(num);
  free(den);
  free(pnum);
  free(pden);
  tl_ccis_free(ci);
  return st;
}

/* /metrics/vqa/human_join: one row per "human" file, its join with the run's units; and, on
 * rank 0's message stream, one line per file ("vqa: human scores FILE: 60 rows, 60 of 60 units
 * matched"). A file that matches no unit is TL_EJOB (err names it): the check of vqa_request,
 * for a run whose units were all restored from a journal. */
static tl_status join_table(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, tl_table *t, tl_err *err) {
  static const tl_col_spec JC[] = {
      {"file", TL_COL_STR, "a \"human\" file, or a \"release\" file (its rows' human_score), resolved path"},
      {"n_rows", TL_COL_I64, "lines read"},
      {"n_rows_joined", TL_COL_I64, "rows kept: an item of the run, the first row for its (item, model)"},
      {"n_rows_unknown_item", TL_COL_I64, "rows naming an item the items do not have (reported once)"},
      {"n_rows_duplicate", TL_COL_I64, "second rows for an (item, model) (the first is kept)"},
      {"n_rows_bad", TL_COL_I64, "rows reported as bad input (no qid, no model, a bad vote list, ...)"},
      {"n_rows_other_model", TL_COL_I64, "kept rows whose model the run does not have"},
      {"models", TL_COL_STR, "the models the file's kept rows name, comma-separated (first 20)"},
      {"n_units", TL_COL_I64, "units of the run (questions x cfgs)"},
      {"n_units_matched", TL_COL_I64, "units with a human score from this file"},
  };
  if (tl_table_add_cols(t, JC, 10)) return TL_ENOMEM;
  tl_buf ms;
  tl_buf_init(&ms);
  tl_status st = TL_OK;
  for (int f = 0; !st && f < b->n_human_p + b->n_rel_p; f++) {
    const hfile *h = &b->hf[f];
    long other = 0;
    const int64_t units = (int64_t)(ncfgs * b->n), matched = human_units(h, cfgs, ncfgs, &other);
    const long bad = h->rows - h->kept - h->unknown - h->duplicate;
    tl_buf_reset(&ms);
    for (size_t m = 0; m < h->nmodel && m < 20; m++) tl_buf_printf(&ms, "%s%s", m ? "," : "", h->mname[m]);
    size_t r = tl_table_add_row(t);
    if (r == (size_t)-1 || tl_table_set_str(t, r, 0, hf_path(b, f)) || tl_table_set_str(t, r, 7, ms.data ? ms.data : "")) {
      st = TL_ENOMEM;
      break;
    }
    const int64_t iv[] = {h->rows, h->kept, h->unknown, h->duplicate, bad, other};
    for (int q = 0; q < 6; q++) tl_table_set_i64(t, r, 1 + q, iv[q]);
    tl_table_set_i64(t, r, 8, units);
    tl_table_set_i64(t, r, 9, matched);
    if (b->echo && !tl_ws_replaying()) { /* once: not again in rank 0's replay (tally/workshare.h) */
      fprintf(b->echo, "vqa: human scores %s: %ld rows, %lld of %lld units matched", hf_path(b, f), h->rows,
              (long long)matched, (long long)units);
      if (h->rows != h->kept) {
        fprintf(b->echo, "; rows not joined: %ld", h->rows - h->kept);
        const char *sep = " (";
        if (h->unknown) fprintf(b->echo, "%s%ld for unknown items", sep, h->unknown), sep = ", ";
        if (h->duplicate) fprintf(b->echo, "%s%ld second row%s", sep, h->duplicate, h->duplicate == 1 ? "" : "s"), sep = ", ";
        if (bad) fprintf(b->echo, "%s%ld bad", sep, bad), sep = ", ";
        fprintf(b->echo, "%s", *sep == ',' ? ")" : "");
      }
      if (other) fprintf(b->echo, "; %ld row%s of models the run does not have", other, other == 1 ? "" : "s");
      fprintf(b->echo, "\n");
    }
  }
  tl_buf_release(&ms);
  if (!st) st = human_check(b, cfgs, ncfgs, err);
  return st;
}

static tl_status vqa_tables(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc, tl_table ***out,
                            int *nout) {
  static const char *const PATHS[T__N] = {"/metrics/vqa/accuracy", "/metrics/vqa/failure_modes", "/metrics/vqa/human",
                                          "/audit/vqa/statuses", "/metrics/vqa/settings", "/metrics/vqa/across_seeds",
                                          "/metrics/vqa/summary", "/metrics/vqa/human_join"};
  const int nm = b->nm;
  tl_table **t = calloc(T__N, sizeof *t);
  tl_status st = t ? TL_OK : TL_ENOMEM;
  for (int i = 0; !st && i < T__N; i++)
    if (!(t[i] = tl_table_new(PATHS[i]))) st = TL_ENOMEM;
  if (!st && (tl_table_add_cols(t[T_ACC], ACC_COLS, AC__N) || tl_table_add_cols(t[T_FAIL], FAIL_COLS, FC__N) ||
              tl_table_add_cols(t[T_HUMAN], HUM_COLS, 6)))
    st = TL_ENOMEM;
  /* accuracy by group */
  for (size_t c = 0; !st && c < ncfgs; c++)
    for (int g = 0; !st && g < b->G; g++) {
      const int64_t *cell[M__N];
      for (int k = 0; k < nm; k++) cell[k] = acc[k] + (c * (size_t)b->G + (size_t)g) * 3;
      int64_t n = cell[M_VQA][1] + cell[M_VQA][2];
      if (!n) continue;
      size_t r = tl_table_add_row(t[T_ACC]);
      if (r == (size_t)-1 || tl_table_set_str(t[T_ACC], r, AC_MODEL, cfgs[c].model) ||
          tl_table_set_str(t[T_ACC], r, AC_VAR, VARIANTS[0]) || tl_table_set_str(t[T_ACC], r, AC_LEVEL, b->gkind[g]) ||
          tl_table_set_str(t[T_ACC], r, AC_GROUP, b->gname[g])) {
        st = TL_ENOMEM;
        break;
      }
      tl_table_set_i64(t[T_ACC], r, AC_SEED, cfgs[c].seed);
      tl_table_set_i64(t[T_ACC], r, AC_N, n);
      tl_table_set_i64(t[T_ACC], r, AC_NS, cell[M_VQA][1]);
      /* one missing-answer policy: every mean divides by n, an unscored unit scores 0 */
      for (int k = 0; k < 3; k++) tl_table_set_f64(t[T_ACC], r, AC_VQA + k, (double)cell[k][0] / (double)MODE_SCALE[k] / (double)n);
      tl_table_set_i64(t[T_ACC], r, AC_NLR, b->lave ? cell[M_LAVE][1] : 0);
      tl_table_set_i64(t[T_ACC], r, AC_NLU, b->lave ? cell[M_LAVE][2] : 0);
      /* LAVE: over n as well, but undefined (NaN) when no unit of the group has a rating at all
       * (no judgment was given: 0 would be a number nobody measured) */
      tl_table_set_f64(t[T_ACC], r, AC_LAVE, b->lave && cell[M_LAVE][1] ? (double)cell[M_LAVE][0] / 2.0 / (double)n : NAN);
      tl_table_set_f64(t[T_ACC], r, AC_LAVEX,
                       b->lave_expected && cell[M_LAVEX][1]
                           ? (double)cell[M_LAVEX][0] / (double)MODE_SCALE[M_LAVEX] / (double)n
                           : NAN);
      const int64_t *kc = acc[nm + 2] + (c * (size_t)b->G + (size_t)g) * K__N;
      static const int KCOL[][2] = {{AC_NANS, K_ANSWERED}, {AC_NMISS, K_MISSING}, {AC_NUNP, K_UNPARSED},
                                    {AC_NEERR, K_EERR},    {AC_NJEERR, K_JEERR},  {AC_NLUNP, K_LUNPARSED}};
      for (size_t q = 0; q < sizeof KCOL / sizeof *KCOL; q++) tl_table_set_i64(t[T_ACC], r, KCOL[q][0], kc[KCOL[q][1]]);
    }
  /* failure modes and the human side: per cfg, then pooled */
  const size_t L = HB_LEN(nm);
  int64_t *pool = calloc(L, sizeof *pool), pfirst[2 * M__N];
  for (int i = 0; i < 2 * M__N; i++) pfirst[i] = INT64_MAX;
  if (!st && !pool) st = TL_ENOMEM;
  for (size_t c = 0; !st && c < ncfgs; c++) {
    const int64_t *hb = acc[nm] + c * L, *e = acc[nm + 1] + c * (size_t)nm * 2;
    for (size_t i = 0; i < L; i++) pool[i] += hb[i];
    for (int i = 0; i < 2 * nm; i++)
      if (e[i] < pfirst[i]) pfirst[i] = e[i];
    if (!hb[HB_OFF_HUMAN(nm) + 1]) continue; /* no human score for this cfg */
    for (int k = 0; !st && k < nm; k++) st = fail_row(b, t[T_FAIL], k, cfgs[c].model, cfgs[c].seed, hb + k * HB__PER, e + 2 * k);
    if (!st) st = hum_row(t[T_HUMAN], cfgs[c].model, cfgs[c].seed, hb + HB_OFF_HUMAN(nm));
  }
  if (!st && pool[HB_OFF_HUMAN(nm) + 1]) {
    for (int k = 0; !st && k < nm; k++) st = fail_row(b, t[T_FAIL], k, "all", -1, pool + k * HB__PER, pfirst + 2 * k);
    if (!st) st = hum_row(t[T_HUMAN], "all", -1, pool + HB_OFF_HUMAN(nm));
  }
  free(pool);
  /* status audit */
  if (!st) {
    tl_table *a = t[T_AUDIT];
    static const tl_col_spec AUC[] = {{"metric", TL_COL_STR, "metric"},
                                      {"model", TL_COL_STR, "model under test"},
                                      {"seed", TL_COL_I64, "sampling seed"}};
    if (tl_table_add_cols(a, AUC, 3)) st = TL_ENOMEM;
    for (int s = 0; !st && s < TL_PS__COUNT; s++) {
      char nmx[64], doc[96];
      snprintf(nmx, sizeof nmx, "n_%s", tl_pstatus_name((tl_pstatus)s));
      snprintf(doc, sizeof doc, "units with status %s", tl_pstatus_name((tl_pstatus)s));
      if (tl_table_add_col(a, nmx, TL_COL_I64, doc) < 0) st = TL_ENOMEM;
    }
    for (int k = 0; !st && k < nm; k++)
      for (size_t c = 0; !st && c < ncfgs; c++) {
        const int64_t *sc = acc[k] + ncfgs * (size_t)b->G * 3 + c * TL_PS__COUNT;
        size_t r = tl_table_add_row(a);
        if (r == (size_t)-1 || tl_table_set_str(a, r, 0, MODE_NAMES[k]) || tl_table_set_str(a, r, 1, cfgs[c].model)) {
          st = TL_ENOMEM;
          break;
        }
        tl_table_set_i64(a, r, 2, cfgs[c].seed);
        for (int s = 0; s < TL_PS__COUNT; s++) tl_table_set_i64(a, r, 3 + s, sc[s]);
      }
  }
  if (!st) st = settings_table(b, t[T_SETTINGS]);
  if (!st) st = across_seeds(b, t[T_ACC], t[T_ACROSS]);
  if (!st) st = summary_table(b, cfgs, ncfgs, acc, t[T_SUM]);
  tl_err jerr = {{0}};
  if (!st && (st = join_table(b, cfgs, ncfgs, t[T_JOIN], &jerr)) && b->echo && !tl_ws_replaying())
    fprintf(b->echo, "tally: %s\n", jerr.msg);
  if (st) {
    for (int i = 0; t && i < T__N; i++) tl_table_free(t[i]);
    free(t);
    return st;
  }
  *out = t;
  *nout = T__N;
  return TL_OK;
}

tl_status tl_vqa_doc_report(tl_table *const *tables, int n, struct tl_doc *doc); /* vqa_report.c */

/* The summary: the run's line, then the module's report (tl_vqa_doc_report: per level the
 * counts and each metric's mean over seeds with the VQA accuracy's 95% CI; LAVE's unrated units;
 * failure modes, human scores and their join; the status audit) rendered as text by the report's
 * renderer: the summary and `tally report` are one code path, and no column is cut. */
static void vqa_summary(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, uint64_t units, tl_table *const *tables,
                        int n, int64_t *const *acc, FILE *out) {
  (void)cfgs;
  (void)acc;
  if (n != T__N) return;
  fprintf(out, "vqa: %zu questions, %llu units over %zu model/seed configs; VQA accuracy version %s; LAVE %s\n", b->n,
          (unsigned long long)units, ncfgs, tl_vqa_version_name(b->version), b->lave ? "on" : "off");
  struct tl_doc *doc = tl_doc_new("");
  tl_doc_summary_print(doc, doc ? tl_vqa_doc_report(tables, n, doc) : TL_ENOMEM, out); /* the report's blocks */
}

const tl_bench_vt tl_bench_vqa = {
    .name = "vqa",
    .nstages = 2,
    .variants = VARIANTS,
    .keys = KEYS,
    .create = vqa_create,
    .free = vqa_free,
    .n_stages = vqa_n_stages,
    .default_variant = vqa_default_variant,
    .load = vqa_load,
    .n_items = vqa_n_items,
    .item_id = vqa_item_id,
    .item_find = vqa_item_find,
    .n_subs = vqa_n_subs,
    .n_modes = vqa_n_modes,
    .mode_name = vqa_mode_name,
    .request = vqa_request,
    .score = vqa_score,
    .acc_layout = vqa_acc_layout,
    .acc_add = vqa_acc_add,
    .items_table = vqa_items_table,
    .tables = vqa_tables,
    .summary = vqa_summary,
    .check_cfgs = vqa_check_cfgs,
    .max_modes = M__N,
    .max_acc = M__N + 3,
    .formats = tl_vqa_formats,
    .parsers = &tl_vqa_parser_set,
    .compare = &tl_vqa_compare,
    .report = tl_vqa_doc_report,
};
