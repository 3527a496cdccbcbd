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
#include "tally/bench.h"
#include "tally/jsonl.h"
#include "tally/stats.h"
#include "tally/think.h"
#include "vqa_data.h"
#include "vqa_eval.h"

static const char *const VARIANTS[] = {"short", NULL};
static const char *const KEYS[] = {"items", "questions", "annotations", "release", "dataset", "human", "version",
                                   "prompt_suffix", "max_tokens", "strip_reasoning", "lave", NULL};

enum { M_VQA, M_SOFT, M_EM, M_LAVE, M_LAVEX, M__N };
static const char *const MODE_NAMES[M__N] = {"vqa_accuracy", "soft_vqa_accuracy", "exact_match", "lave",
                                             "lave_expected"};
static const int64_t MODE_SCALE[M__N] = {TL_VQA_ACC_SCALE, 1000000000, 1, 2, 1000000000};
#define SOFT_SCALE 1e9
#define HUMAN_SCALE 1e9
enum { HB_PAIRS, HB_H1LO, HB_H0HI, HB_H1, HB_H0, HB__PER };
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
} human_t;

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
  int bad = 0;
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

static tl_status put_human(tl_bench *b, const char *id, const char *model, const human_t *h, const tl_jsonl *r,
                           tl_inlog *log, tl_err *err) {
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
    bool known = tl_strmap_get(&b->by_id, id.data, &ix);
    tl_status st = known ? put_human(b, id.data, model->valuestring, &h, r, c->log, c->err)
                         : logged(tl_inlog_report(c->log, TL_IN_UNKNOWN_ITEM, r->path, r->line_no,
                                                  "a human judgment of item '%s', which the items do not have", id.data),
                                  c->err);
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
  return put_human(b, it->id, model->valuestring, &h, r, c->log, c->err);
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

static tl_status vqa_load(tl_bench *b, size_t max_line, tl_inlog *log, tl_err *err) {
  loaded_release(b);
  tl_status st = TL_OK;
  size_t cap = 0;
  if (b->lave && !b->demos) {
    if ((st = tl_lave_demos_load(b->demos_p, &b->demos, err))) return st;
    if ((st = tl_lave_demos_load(b->demos_bin_p, &b->demos_bin, err))) return st;
  }
  if (b->n_rel_p) {
    rel_ctx c = {b, log, err, 0, 0};
    for (int f = 0; !st && f < b->n_rel_p; f++) {
      tl_jsonl r;
      if ((st = tl_jsonl_open(&r, b->rel_p[f], max_line, err))) break;
      st = tl_inlog_each(log, &r, "rows", rel_line, &c, err);
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
  rel_ctx hc = {b, log, err, 0, 1};
  for (int f = 0; !st && f < b->n_human_p; f++) {
    tl_jsonl r;
    if ((st = tl_jsonl_open(&r, b->human_p[f], max_line, err))) break;
    st = tl_inlog_each(log, &r, "human judgments", rel_line, &hc, err);
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
  tl_vqa_ws *ws = tl_vqa_ws_new();
  tl_vqa_result q;
  tl_status st = ws ? tl_vqa_score(ws, b->version, pred, x->refs, x->nrefs, TL_VQA_WANT_SOFT, &q, err) : TL_ENOMEM;
  tl_vqa_ws_free(ws);
  if (!st) {
    const int64_t v3[3] = {q.acc, (int64_t)llround(q.soft * SOFT_SCALE), q.exact ? 1 : 0};
    for (int k = 0; !st && k < 3; k++) {
      r->res[k].status = TL_PS_OK;
      r->res[k].value = v3[k];
      r->res[k].correct = k == M_EM ? q.exact : 0;
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

static int vqa_acc_layout(const tl_bench *b, size_t ncfgs, tl_acc_block *out) {
  for (int k = 0; k < b->nm; k++) out[k] = (tl_acc_block){mode_len(b, ncfgs), TL_ACC_SUM, 0};
  out[b->nm] = (tl_acc_block){ncfgs * HB_LEN(b->nm), TL_ACC_SUM, 0};
  out[b->nm + 1] = (tl_acc_block){ncfgs * (size_t)b->nm * 2, TL_ACC_MIN, INT64_MAX};
  return b->nm + 2;
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

enum { T_ACC, T_FAIL, T_HUMAN, T_AUDIT, T_SETTINGS, T_ACROSS, T__N };

static const tl_col_spec ACC_COLS[] = {
    {"model", TL_COL_STR, "model under test"},
    {"prompt_variant", TL_COL_STR, "prompt variant"},
    {"seed", TL_COL_I64, "sampling seed"},
    {"level", TL_COL_STR, "all, dataset, answer_type or question_type"},
    {"group", TL_COL_STR, "the group's name (\"all\" for level all)"},
    {"n_items", TL_COL_I64, "units (questions) in the group"},
    {"n_scored", TL_COL_I64, "units with an answer (the others are missing or engine_error: never wrong)"},
    {"vqa_accuracy", TL_COL_F64, "mean VQA accuracy over the scored units, in [0, 1] (the official script prints 100x)"},
    {"soft_vqa_accuracy", TL_COL_F64, "mean soft VQA accuracy over the scored units"},
    {"exact_match", TL_COL_F64, "share of the scored units whose answer equals a reference"},
    {"n_lave_rated", TL_COL_I64, "units with a LAVE rating (0 without a LAVE judge)"},
    {"n_lave_unrated", TL_COL_I64, "units without one: no answer, no judgment, no rating in the reply, ..."},
    {"lave_score", TL_COL_F64, "mean LAVE score (rating - 1) / 2 over the rated units; NaN when none"},
    {"lave_expected", TL_COL_F64, "mean expected LAVE score from log-probabilities (expected_rating); NaN when none"},
};
enum { AC_MODEL, AC_VAR, AC_SEED, AC_LEVEL, AC_GROUP, AC_N, AC_NS, AC_VQA, AC_SOFT, AC_EM, AC_NLR, AC_NLU, AC_LAVE,
       AC_LAVEX, AC__N };

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
  char num[4][64];
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
                         {"lave_max_tokens", b->lave ? num[3] : ""}};
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

static tl_status vqa_tables(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, int64_t *const *acc, tl_table ***out,
                            int *nout) {
  static const char *const PATHS[T__N] = {"/metrics/vqa/accuracy", "/metrics/vqa/failure_modes", "/metrics/vqa/human",
                                          "/audit/vqa/statuses", "/metrics/vqa/settings", "/metrics/vqa/across_seeds"};
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
      for (int k = 0; k < 3; k++)
        tl_table_set_f64(t[T_ACC], r, AC_VQA + k,
                         cell[k][1] ? (double)cell[k][0] / (double)MODE_SCALE[k] / (double)cell[k][1] : NAN);
      tl_table_set_i64(t[T_ACC], r, AC_NLR, b->lave ? cell[M_LAVE][1] : 0);
      tl_table_set_i64(t[T_ACC], r, AC_NLU, b->lave ? cell[M_LAVE][2] : 0);
      tl_table_set_f64(t[T_ACC], r, AC_LAVE,
                       b->lave && cell[M_LAVE][1] ? (double)cell[M_LAVE][0] / 2.0 / (double)cell[M_LAVE][1] : NAN);
      tl_table_set_f64(t[T_ACC], r, AC_LAVEX,
                       b->lave_expected && cell[M_LAVEX][1]
                           ? (double)cell[M_LAVEX][0] / (double)MODE_SCALE[M_LAVEX] / (double)cell[M_LAVEX][1]
                           : NAN);
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
  if (st) {
    for (int i = 0; t && i < T__N; i++) tl_table_free(t[i]);
    free(t);
    return st;
  }
  *out = t;
  *nout = T__N;
  return TL_OK;
}

static void vqa_summary(const tl_bench *b, const tl_cfg *cfgs, size_t ncfgs, uint64_t units, tl_table *const *tables,
                        int n, int64_t *const *acc, FILE *out) {
  (void)cfgs;
  (void)acc;
  if (n != T__N) return;
  fprintf(out, "vqa: %zu questions, %llu units over %zu model/seed configs; VQA accuracy version %s; LAVE %s\n", b->n,
          (unsigned long long)units, ncfgs, tl_vqa_version_name(b->version), b->lave ? "on" : "off");
  const tl_table *a = tables[T_ACC];
  fprintf(out, "\n%-20s %4s %-24s %6s %6s %7s %7s %7s %7s\n", "model", "seed", "group", "n", "scored", "VQA acc",
          "soft", "EM", "LAVE");
  for (size_t r = 0; r < a->nrows; r++) {
    if (strcmp(a->cols[AC_LEVEL].v.s[r], "all") && strcmp(a->cols[AC_LEVEL].v.s[r], "dataset") &&
        strcmp(a->cols[AC_LEVEL].v.s[r], "answer_type"))
      continue;
    char grp[64];
    snprintf(grp, sizeof grp, "%s%s%s", strcmp(a->cols[AC_LEVEL].v.s[r], "all") ? a->cols[AC_LEVEL].v.s[r] : "",
             strcmp(a->cols[AC_LEVEL].v.s[r], "all") ? "=" : "", a->cols[AC_GROUP].v.s[r]);
    fprintf(out, "%-20s %4lld %-24.24s %6lld %6lld %7.2f %7.2f %7.2f", a->cols[AC_MODEL].v.s[r],
            (long long)a->cols[AC_SEED].v.i[r], grp, (long long)a->cols[AC_N].v.i[r], (long long)a->cols[AC_NS].v.i[r],
            100 * a->cols[AC_VQA].v.f[r], 100 * a->cols[AC_SOFT].v.f[r], 100 * a->cols[AC_EM].v.f[r]);
    if (isnan(a->cols[AC_LAVE].v.f[r])) fprintf(out, " %7s\n", "-");
    else fprintf(out, " %7.2f\n", 100 * a->cols[AC_LAVE].v.f[r]);
  }
  fprintf(out, "(x100; by question type: /metrics/vqa/accuracy)\n");
  const tl_table *f = tables[T_FAIL];
  if (f->nrows) {
    fprintf(out, "\nfailure modes (every model and seed): humans say correct (score 1) but the metric < 0.5, and humans "
                 "say wrong (score 0) but the metric >= 0.5\n");
    fprintf(out, "%-18s %8s %18s %18s  %s\n", "metric", "units", "correct, low", "wrong, high", "first examples");
    for (size_t r = 0; r < f->nrows; r++) {
      if (f->cols[FC_SEED].v.i[r] != -1) continue;
      char c1[40], c0[40];
      snprintf(c1, sizeof c1, "%lld/%lld (%.1f%%)", (long long)f->cols[FC_H1LO].v.i[r], (long long)f->cols[FC_H1].v.i[r],
               100 * f->cols[FC_S1].v.f[r]);
      snprintf(c0, sizeof c0, "%lld/%lld (%.1f%%)", (long long)f->cols[FC_H0HI].v.i[r], (long long)f->cols[FC_H0].v.i[r],
               100 * f->cols[FC_S0].v.f[r]);
      fprintf(out, "%-18s %8lld %18s %18s  %s %s\n", f->cols[FC_METRIC].v.s[r], (long long)f->cols[FC_N].v.i[r], c1, c0,
              *f->cols[FC_E1].v.s[r] ? f->cols[FC_E1].v.s[r] : "-", *f->cols[FC_E0].v.s[r] ? f->cols[FC_E0].v.s[r] : "-");
    }
    const tl_table *h = tables[T_HUMAN];
    for (size_t r = 0; r < h->nrows; r++)
      if (h->cols[1].v.i[r] == -1)
        fprintf(out, "human scores: %lld units, mean %.3f; annotator votes on %lld units, Krippendorff's alpha "
                     "(nominal) %.3f\n",
                (long long)h->cols[2].v.i[r], h->cols[3].v.f[r], (long long)h->cols[4].v.i[r], h->cols[5].v.f[r]);
  }
}

const tl_bench_vt tl_bench_vqa = {
    .name = "vqa",
    .about = "VQA sets: VQA accuracy (official rules), soft VQA accuracy, exact match, LAVE; human scores for studies",
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
};
