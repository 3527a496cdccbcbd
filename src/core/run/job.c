/* job.c - job file loading and validation (see job.h and docs/JOBS.md). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/job.h"
#include "tally/registry.h"
#include "tally/jsonl.h"

typedef struct tl_job_ctx {
  tl_buf *out;
  int n;
  const char *file;
  const char *dir;   /* the job file's folder */
  tl_job *job;       /* where declared inputs go */
} problems;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void problem(problems *p, const char *where, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tl_buf_printf(p->out, "%s: %s%s%s\n", p->file, where, *where ? ": " : "", msg);
  p->n++;
}

const char *tl_job_engine_type(const tl_job_ctx *c, tl_role role) {
  const char *t = c && c->job && role >= 0 && role < TL_ROLE__N ? c->job->engines[role].type : NULL;
  return t ? t : "replay";
}

char *tl_job_resolve(const tl_job_ctx *c, const char *path) { return tl_path_resolve(c->dir, path); }

void tl_job_problem(tl_job_ctx *c, const char *where, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  problem(c, where, "%s", msg);
}

/* The typed keys of a benchmark entry (tally/bench.h): absent -> 0 and *out untouched. */
int tl_job_key_int(tl_job_ctx *c, const cJSON *e, const char *key, const char *where, double lo, double hi,
                   const char *what, int *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
  if (!v) return 0;
  if (!tl_json_is_int(v, lo, hi)) {
    char w[256];
    snprintf(w, sizeof w, "%s.%s", where, key);
    problem(c, w, "must be %s", what);
    return 1;
  }
  *out = (int)v->valuedouble;
  return 0;
}

int tl_job_key_num(tl_job_ctx *c, const cJSON *e, const char *key, const char *where, double lo, double hi,
                   double *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
  if (!v) return 0;
  if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi)) {
    char w[256];
    snprintf(w, sizeof w, "%s.%s", where, key);
    problem(c, w, "must be a number from %g to %g", lo, hi);
    return 1;
  }
  *out = v->valuedouble;
  return 0;
}

int tl_job_key_bool(tl_job_ctx *c, const cJSON *e, const char *key, const char *where, bool *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
  if (!v) return 0;
  if (!cJSON_IsBool(v)) {
    char w[256];
    snprintf(w, sizeof w, "%s.%s", where, key);
    problem(c, w, "must be true or false");
    return 1;
  }
  *out = cJSON_IsTrue(v);
  return 0;
}

/* Declares an input file of the job (a copy of path is kept). */
static void add_input(problems *p, const char *path, const char *what) {
  tl_job *job = p->job;
  tl_job_input *in = realloc(job->inputs, (size_t)(job->n_inputs + 1) * sizeof *in);
  if (!in) return;
  job->inputs = in;
  in[job->n_inputs].path = tl_strdup(path);
  in[job->n_inputs].what = tl_strdup(what);
  if (in[job->n_inputs].path && in[job->n_inputs].what) job->n_inputs++;
  else {
    free(in[job->n_inputs].path);
    free(in[job->n_inputs].what);
  }
}

/* Lexical clean-up of a path: drops "." segments and folds "name/.." pairs (never a leading
 * ".." of a relative path). "jobs/../out/x.h5" -> "out/x.h5". Works in place. */
static void path_clean(char *p) {
  int abs = p[0] == '/';
  char *seg[512];
  int n = 0;
  char *save = NULL;
  for (char *t = strtok_r(p, "/", &save); t && n < 512; t = strtok_r(NULL, "/", &save)) {
    if (strcmp(t, ".") == 0) continue;
    if (strcmp(t, "..") == 0 && n > 0 && strcmp(seg[n - 1], "..") != 0) {
      n--;
      continue;
    }
    if (strcmp(t, "..") == 0 && abs && n == 0) continue;
    seg[n++] = t;
  }
  tl_buf b;
  tl_buf_init(&b);
  for (int i = 0; i < n; i++) tl_buf_printf(&b, "%s%s", (i || abs) ? "/" : "", seg[i]);
  const char *r = b.len ? b.data : abs ? "/" : ".";
  memmove(p, r, strlen(r) + 1); /* never longer than the input */
  tl_buf_release(&b);
}

char *tl_path_resolve(const char *dir, const char *path) {
  tl_buf b;
  tl_buf_init(&b);
  tl_status st = (path[0] == '/' || !dir || !*dir) ? tl_buf_puts(&b, path)
                                                   : tl_buf_printf(&b, "%s/%s", dir, path);
  if (st != TL_OK) {
    tl_buf_release(&b);
    return NULL;
  }
  char *out = tl_buf_detach(&b);
  path_clean(out);
  return out;
}

static char *read_file(const char *path, size_t *len, tl_err *err) {
  tl_buf b;
  tl_buf_init(&b);
  tl_status st = tl_file_read(path, 16u * 1024 * 1024, &b, err);
  if (st == TL_EINPUT) tl_err_set(err, TL_EINPUT, "'%s' is not a job file (over 16 MiB)", path);
  if (st) {
    tl_buf_release(&b);
    return NULL;
  }
  *len = b.len;
  return tl_buf_detach(&b);
}

/* What cJSON would read silently wrong (duplicate keys, \u0000 escapes): job problems, with
 * the line and the key path. */
static int json_issue(void *ctx, const tl_json_issue *is) {
  problems *p = ctx;
  if (is->kind == TL_JSON_DUP_KEY)
    problem(p, is->path, "duplicate key '%s' at line %ld (a key may appear once in an object)",
            is->key, is->line);
  else if (is->key)
    problem(p, is->path, "\\u0000 escape (a NUL character) in a key at line %ld", is->line);
  else
    problem(p, is->path, "\\u0000 escape (a NUL character) at line %ld", is->line);
  return 0;
}

static int check_keys(problems *p, const cJSON *obj, const char *where, const char *const *allowed) {
  int bad = 0;
  for (const cJSON *c = obj->child; c; c = c->next) {
    int ok = 0;
    for (const char *const *a = allowed; *a; a++)
      if (strcmp(c->string, *a) == 0) ok = 1;
    if (!ok) {
      problem(p, where, "unknown key '%s'", c->string);
      bad = 1;
    }
  }
  return bad;
}

/* A string or a list of strings -> resolved paths, each declared an input. */
int tl_job_paths(tl_job_ctx *p, const cJSON *v, const char *where, const char *what, char ***out,
                 int *n) {
  const char *dir = p->dir;
  int n0 = p->n;
  *out = NULL;
  *n = 0;
  if (!v) {
    problem(p, where, "missing (a path or a list of paths)");
    return p->n - n0;
  }
  int cnt = cJSON_IsString(v) || cJSON_IsObject(v) ? 1 : cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
  if (cnt <= 0) {
    problem(p, where, "must be a path or a non-empty list of paths");
    return p->n - n0;
  }
  *out = calloc((size_t)cnt, sizeof **out);
  if (!*out) {
    problem(p, where, "out of memory");
    return p->n - n0;
  }
  for (int i = 0; i < cnt; i++) {
    const cJSON *e = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, i) : v;
    if (cJSON_IsObject(e) && cJSON_GetObjectItemCaseSensitive(e, "path")) { /* tally/import.h */
      problem(p, where, "a file of another harness ({\"format\"?, \"path\"}) is converted by `tally run` only: "
              "convert it first with `tally import FILE --items ITEMS.jsonl` and name that file here");
      continue;
    }
    if (!cJSON_IsString(e) || !*e->valuestring) {
      problem(p, where, "entry %d is not a path", i);
      continue;
    }
    char *path = tl_path_resolve(dir, e->valuestring);
    if (!path) {
      problem(p, where, "out of memory");
      continue;
    }
    (*out)[(*n)++] = path;
    add_input(p, path, what);
  }
  return p->n - n0;
}

/* "\"a\"", "\"a\" or \"b\"", "\"a\", \"b\" or \"c\"" into out (the names of a list). */
static void or_list(tl_buf *out, const char *const *names) {
  int n = 0;
  while (names[n]) n++;
  for (int i = 0; i < n; i++)
    tl_buf_printf(out, "%s\"%s\"", i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i]);
}

/* A prompt variant name the module knows -> a copy; NULL with a problem otherwise. */
static char *get_variant(problems *p, const tl_bench_vt *vt, const cJSON *v, const char *where) {
  if (cJSON_IsString(v) && vt && tl_bench_variant(vt, v->valuestring) >= 0) return tl_strdup(v->valuestring);
  if (vt) {
    tl_buf l;
    tl_buf_init(&l);
    or_list(&l, vt->variants);
    problem(p, where, "prompt_variant must be %s", l.data ? l.data : "");
    tl_buf_release(&l);
  }
  return NULL;
}

/* "answers" or "judgments": a path, an object {path, model, seed, prompt_variant}, or a list. */
static void get_sources(problems *p, const tl_bench_vt *vt, const cJSON *ans, const char *w2,
                        const char *what, tl_job_answers **out, int *nout) {
  int na = !ans ? 0 : cJSON_IsArray(ans) ? cJSON_GetArraySize(ans) : 1;
  *out = calloc((size_t)(na ? na : 1), sizeof **out);
  *nout = 0;
  if (!*out) return;
  for (int i = 0; i < na; i++) {
    const cJSON *e = cJSON_IsArray(ans) ? cJSON_GetArrayItem(ans, i) : ans;
    char w3[160];
    snprintf(w3, sizeof w3, "%s[%d]", w2, i);
    tl_job_answers *a = &(*out)[*nout];
    if (cJSON_IsString(e)) {
      a->path = tl_path_resolve(p->dir, e->valuestring);
    } else if (cJSON_IsObject(e)) {
      static const char *const AK[] = {"path", "model", "seed", "prompt_variant", NULL};
      if (cJSON_GetObjectItemCaseSensitive(e, "format")) { /* tally/import.h: tally run converts these */
        problem(p, w3, "a file of another harness ({\"format\", \"path\"}) is converted by `tally run` only: "
                "convert it first with `tally import FILE --output ANSWERS.jsonl` and name that file here");
        continue;
      }
      check_keys(p, e, w3, AK);
      const cJSON *f = cJSON_GetObjectItemCaseSensitive(e, "path");
      if (!cJSON_IsString(f)) {
        problem(p, w3, "missing \"path\"");
        continue;
      }
      a->path = tl_path_resolve(p->dir, f->valuestring);
      f = cJSON_GetObjectItemCaseSensitive(e, "model");
      if (f && !cJSON_IsString(f)) problem(p, w3, "\"model\" must be a string");
      else if (f) a->model = tl_strdup(f->valuestring);
      f = cJSON_GetObjectItemCaseSensitive(e, "seed");
      if (f && !tl_json_is_int(f, INT_MIN, INT_MAX))
        problem(p, w3, "\"seed\" must be an integer");
      else if (f) a->seed = (int)f->valuedouble;
      f = cJSON_GetObjectItemCaseSensitive(e, "prompt_variant");
      if (f) a->variant = get_variant(p, vt, f, w3);
    } else {
      problem(p, w3, "must be a path or an object");
      continue;
    }
    if (a->path) add_input(p, a->path, what);
    (*nout)++;
  }
}

/* The keys every benchmark entry has; the module reads the others (vt->keys). */
static const char *const BENCH_KEYS[] = {"benchmark", "answers", "judgments", "models", "seeds", NULL};

static void load_bench(problems *p, const cJSON *b, int bi, tl_job_bench *jb) {
  char where[96];
  snprintf(where, sizeof where, "benchmarks[%d]", bi);
  if (!cJSON_IsObject(b)) {
    problem(p, where, "must be an object");
    return;
  }
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(b, "benchmark");
  const tl_bench_vt *vt = NULL;
  tl_buf known;
  tl_buf_init(&known);
  tl_bench_known(&known);
  if (!cJSON_IsString(name)) {
    problem(p, where, "missing \"benchmark\" (one of: %s)", known.data ? known.data : "");
  } else if (!(vt = tl_bench_find(name->valuestring))) {
    problem(p, where, "unknown benchmark '%s' (known: %s)", name->valuestring, known.data ? known.data : "");
  } else {
    jb->benchmark = tl_strdup(name->valuestring);
    jb->vt = vt;
  }
  tl_buf_release(&known);
  /* unknown keys: neither the loader's nor the module's */
  for (const cJSON *c = b->child; c; c = c->next) {
    int ok = 0;
    for (const char *const *k = BENCH_KEYS; *k && !ok; k++) ok = strcmp(c->string, *k) == 0;
    for (const char *const *k = vt ? vt->keys : NULL; k && *k && !ok; k++) ok = strcmp(c->string, *k) == 0;
    if (!ok && vt) problem(p, where, "unknown key '%s'", c->string);
  }
  if (vt) jb->mod = vt->create(p, b, where);
  if (jb->mod) { /* what the run path sizes by a constant (tally/registry.h), per module object */
    const int nm = vt->n_modes(jb->mod), ns = vt->n_stages ? vt->n_stages(jb->mod) : vt->nstages;
    if (nm < 1 || nm > vt->max_modes)
      problem(p, where, "internal error: benchmark module '%s' runs %d scoring modes, outside 1..%d (its max_modes)",
              vt->name, nm, vt->max_modes);
    if (ns < 1 || ns > TL_MAX_STAGES)
      problem(p, where, "internal error: benchmark module '%s' has %d stages, outside 1..%d (TL_MAX_STAGES)", vt->name,
              ns, TL_MAX_STAGES);
  }

  char w2[128];
  snprintf(w2, sizeof w2, "%s.answers", where);
  const cJSON *ans = cJSON_GetObjectItemCaseSensitive(b, "answers");
  const char *mtype = p->job->engines[TL_ROLE_MODEL].type;
  const int model_http = mtype && strcmp(mtype, "replay") != 0;
  if (model_http && ans)
    problem(p, w2, "the model engine is '%s': answers come from the server (drop \"answers\", or use the "
            "replay engine to score answer files)", mtype);
  else if (!model_http && (!ans || (cJSON_IsArray(ans) && cJSON_GetArraySize(ans) == 0)))
    problem(p, w2, "missing (a path, an object {path, model, seed, prompt_variant}, or a list of them)");
  else if (ans)
    get_sources(p, vt, ans, w2, "an answers file", &jb->answers, &jb->n_answers);
  if (model_http && !cJSON_GetObjectItemCaseSensitive(b, "models"))
    problem(p, where, "the model engine is '%s': list the models under test in \"models\" (and the "
            "seeds in \"seeds\"; default [0])", mtype);
  const cJSON *jd = cJSON_GetObjectItemCaseSensitive(b, "judgments");
  snprintf(w2, sizeof w2, "%s.judgments", where);
  if (jd && vt && (jb->mod ? tl_bench_nstages(vt, jb->mod) : vt->nstages) < 2)
    problem(p, w2, "benchmark '%s' has no judge stage%s", vt->name,
            vt->nstages > 1 ? " in this entry (a judge is configured by the benchmark's own keys)" : "");
  else if (jd && p->job->engines[TL_ROLE_JUDGE].type && strcmp(p->job->engines[TL_ROLE_JUDGE].type, "replay"))
    problem(p, w2, "the judge engine is '%s': judgments come from the server (drop \"judgments\")",
            p->job->engines[TL_ROLE_JUDGE].type);
  else if (jd)
    get_sources(p, vt, jd, w2, "a judgments file", &jb->judgments, &jb->n_judgments);

  const cJSON *ms = cJSON_GetObjectItemCaseSensitive(b, "models");
  if (ms) {
    snprintf(w2, sizeof w2, "%s.models", where);
    if (!cJSON_IsArray(ms) || cJSON_GetArraySize(ms) == 0) {
      problem(p, w2, "must be a non-empty list of model names");
    } else {
      jb->models = calloc((size_t)cJSON_GetArraySize(ms), sizeof *jb->models);
      const cJSON *e;
      cJSON_ArrayForEach(e, ms) {
        if (!cJSON_IsString(e)) problem(p, w2, "entries must be strings");
        else jb->models[jb->n_models++] = tl_strdup(e->valuestring);
      }
    }
  }
  const cJSON *ss = cJSON_GetObjectItemCaseSensitive(b, "seeds");
  if (ss) {
    snprintf(w2, sizeof w2, "%s.seeds", where);
    if (!cJSON_IsArray(ss) || cJSON_GetArraySize(ss) == 0) {
      problem(p, w2, "must be a non-empty list of integers");
    } else {
      jb->seeds = calloc((size_t)cJSON_GetArraySize(ss), sizeof *jb->seeds);
      const cJSON *e;
      cJSON_ArrayForEach(e, ss) {
        if (!tl_json_is_int(e, INT_MIN, INT_MAX))
          problem(p, w2, "entries must be integers");
        else jb->seeds[jb->n_seeds++] = (int)e->valuedouble;
      }
    }
  } else if (model_http) { /* the server is asked with seed 0 */
    jb->seeds = calloc(1, sizeof *jb->seeds);
    if (jb->seeds) jb->n_seeds = 1;
  }
}

/* A list of strings -> comma-joined (NULL when absent). Entries must be non-empty strings
 * without commas. */
static char *get_names(problems *p, const cJSON *v, const char *where, int required) {
  if (!v) {
    if (required) problem(p, where, "missing (a list of column names)");
    return NULL;
  }
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0) {
    problem(p, where, "must be a non-empty list of column names");
    return NULL;
  }
  tl_buf b;
  tl_buf_init(&b);
  const cJSON *e;
  cJSON_ArrayForEach(e, v) {
    if (!cJSON_IsString(e) || !*e->valuestring || strchr(e->valuestring, ',')) {
      problem(p, where, "entries must be non-empty column names without commas");
      continue;
    }
    tl_buf_printf(&b, "%s%s", b.len ? "," : "", e->valuestring);
  }
  return tl_buf_detach(&b);
}

/* A study's "agreement": [["judge", "human"], ["h1", "h2", "h3"]] -> "judge,human;h1,h2,h3" (each
 * list two column names or more), with "agreement_scale" (nominal | ordinal | interval) and
 * "agreement_cluster" (a column), which go with it. Whether the columns exist is checked when the
 * study reads its table (an unknown one is an error naming it). */
static void load_study_agreement(problems *p, const cJSON *o, const char *where, tl_job_study *st) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "agreement");
  const cJSON *sc = cJSON_GetObjectItemCaseSensitive(o, "agreement_scale");
  const cJSON *cl = cJSON_GetObjectItemCaseSensitive(o, "agreement_cluster");
  if (!v) {
    if (sc || cl) problem(p, where, "\"agreement_scale\" and \"agreement_cluster\" go with \"agreement\"");
    return;
  }
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0) {
    problem(p, where, "\"agreement\" must be a non-empty list of column lists, e.g. [[\"judge\", \"human\"]]");
    return;
  }
  tl_buf b;
  tl_buf_init(&b);
  const cJSON *e;
  int i = 0;
  cJSON_ArrayForEach(e, v) {
    char w2[96];
    snprintf(w2, sizeof w2, "%s.agreement[%d]", where, i++);
    char *names = get_names(p, e, w2, 1);
    if (names && !strchr(names, ','))
      problem(p, w2, "needs two columns or more (the columns whose agreement is measured)");
    else if (names)
      tl_buf_printf(&b, "%s%s", b.len ? ";" : "", names);
    free(names);
  }
  st->agreement = tl_buf_detach(&b);
  static const char *const SCALES[] = {"nominal", "ordinal", "interval"};
  st->agreement_scale = 0;
  if (sc) {
    int k = -1;
    for (int j = 0; j < 3 && cJSON_IsString(sc); j++)
      if (!strcmp(sc->valuestring, SCALES[j])) k = j;
    if (k < 0) problem(p, where, "\"agreement_scale\" must be \"nominal\", \"ordinal\" or \"interval\"");
    else st->agreement_scale = k;
  }
  if (cl && (!cJSON_IsString(cl) || !*cl->valuestring))
    problem(p, where, "\"agreement_cluster\" must be a column name");
  else if (cl)
    st->agreement_cluster = tl_strdup(cl->valuestring);
}

static void load_study(problems *p, const cJSON *o, int si, const char *dir, tl_job *job) {
  char where[64];
  snprintf(where, sizeof where, "studies[%d]", si);
  tl_job_study *st = &job->studies[job->n_studies];
  memset(st, 0, sizeof *st);
  st->resamples = 5000;
  st->ci = 0.95;
  st->method = 1;
  st->stats_mask = 3;
  if (!cJSON_IsObject(o)) {
    problem(p, where, "must be an object");
    return;
  }
  static const char *const KEYS[] = {"name", "input", "from", "join", "on", "human", "metrics", "group_by",
                                     "resamples", "seed", "ci", "method", "permutation", "stats", "cluster",
                                     "system", "agreement", "agreement_scale", "agreement_cluster", NULL};
  check_keys(p, o, where, KEYS);
  char w2[128];
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "name");
  if (!cJSON_IsString(v) || !*v->valuestring ||
      strspn(v->valuestring, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") !=
          strlen(v->valuestring)) {
    problem(p, where, "\"name\" must be letters, digits, '_', '.', '-' (it names /stats/<name>)");
  } else {
    for (int k = 0; k < job->n_studies; k++)
      if (job->studies[k].name && strcmp(job->studies[k].name, v->valuestring) == 0) problem(p, where, "study name '%s' is used twice", v->valuestring);
    st->name = tl_strdup(v->valuestring);
  }
  v = cJSON_GetObjectItemCaseSensitive(o, "input");
  const cJSON *from = cJSON_GetObjectItemCaseSensitive(o, "from");
  if (v && from) problem(p, where, "give \"input\" (a table file) or \"from\" (a benchmark of this run), not both");
  else if (from) {
    if (!cJSON_IsString(from) || !*from->valuestring) problem(p, where, "\"from\" must name a benchmark of the job");
    else st->from = tl_strdup(from->valuestring);
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, "join");
    if (j && (!cJSON_IsString(j) || !*j->valuestring)) problem(p, where, "\"join\" must be a path (a .csv, .tsv or .jsonl table)");
    else if (j) st->join = tl_path_resolve(dir, j->valuestring);
    snprintf(w2, sizeof w2, "%s.on", where);
    const cJSON *on = cJSON_GetObjectItemCaseSensitive(o, "on");
    st->on = on ? get_names(p, on, w2, 1) : tl_strdup("id");
  } else if (!cJSON_IsString(v) || !*v->valuestring) {
    problem(p, where, "missing \"input\" (a .csv, .tsv or .jsonl table) or \"from\" (a benchmark of this run)");
  } else {
    st->input = tl_path_resolve(dir, v->valuestring);
  }
  if (!from && (cJSON_GetObjectItemCaseSensitive(o, "join") || cJSON_GetObjectItemCaseSensitive(o, "on")))
    problem(p, where, "\"join\" and \"on\" go with \"from\"");
  v = cJSON_GetObjectItemCaseSensitive(o, "human");
  if (!cJSON_IsString(v) || !*v->valuestring) problem(p, where, "missing \"human\" (the human score column)");
  else st->human = tl_strdup(v->valuestring);
  snprintf(w2, sizeof w2, "%s.metrics", where);
  st->metrics = get_names(p, cJSON_GetObjectItemCaseSensitive(o, "metrics"), w2, 1);
  snprintf(w2, sizeof w2, "%s.group_by", where);
  st->group_by = get_names(p, cJSON_GetObjectItemCaseSensitive(o, "group_by"), w2, 0);
  v = cJSON_GetObjectItemCaseSensitive(o, "resamples");
  if (v && !tl_json_is_int(v, 2, 1e8))
    problem(p, where, "\"resamples\" must be an integer in [2, 1e8]");
  else if (v) st->resamples = (uint64_t)v->valuedouble;
  v = cJSON_GetObjectItemCaseSensitive(o, "seed");
  if (v && !tl_json_is_int(v, 0, 9007199254740992.0)) /* JSON numbers are doubles: exact to 2^53 */
    problem(p, where, "\"seed\" must be an integer in [0, 2^53]");
  else if (v) st->seed = (uint64_t)v->valuedouble;
  v = cJSON_GetObjectItemCaseSensitive(o, "ci");
  if (v && (!cJSON_IsNumber(v) || !(v->valuedouble > 0 && v->valuedouble < 1)))
    problem(p, where, "\"ci\" must be a level in (0, 1)");
  else if (v) st->ci = v->valuedouble;
  v = cJSON_GetObjectItemCaseSensitive(o, "method");
  if (v && (!cJSON_IsString(v) || (strcmp(v->valuestring, "bca") && strcmp(v->valuestring, "percentile"))))
    problem(p, where, "\"method\" must be \"bca\" or \"percentile\"");
  else if (v) st->method = strcmp(v->valuestring, "bca") == 0;
  v = cJSON_GetObjectItemCaseSensitive(o, "permutation");
  if (v && !cJSON_IsBool(v)) problem(p, where, "\"permutation\" must be true or false");
  else if (v) st->permutation = cJSON_IsTrue(v);
  v = cJSON_GetObjectItemCaseSensitive(o, "stats");
  if (v) {
    st->stats_mask = 0;
    const cJSON *e;
    if (!cJSON_IsArray(v)) problem(p, where, "\"stats\" must be a list of \"spearman\", \"kendall\"");
    else cJSON_ArrayForEach(e, v) {
      if (cJSON_IsString(e) && !strcmp(e->valuestring, "spearman")) st->stats_mask |= 1;
      else if (cJSON_IsString(e) && !strcmp(e->valuestring, "kendall")) st->stats_mask |= 2;
      else problem(p, where, "\"stats\" entries must be \"spearman\" or \"kendall\"");
    }
    if (!st->stats_mask) st->stats_mask = 3;
  }
  static const char *const IDKEYS[2] = {"cluster", "system"};
  for (int q = 0; q < 2; q++) { /* a column name, or "none" */
    v = cJSON_GetObjectItemCaseSensitive(o, IDKEYS[q]);
    if (v && (!cJSON_IsString(v) || !*v->valuestring)) problem(p, where, "\"%s\" must be a column name or \"none\"", IDKEYS[q]);
    else if (v) *(q ? &st->system : &st->cluster) = tl_strdup(v->valuestring);
  }
  load_study_agreement(p, o, where, st);
  job->n_studies++;
}

/* A number at o.key into *out when present: TL problems for a non-number or one out of [lo, hi]. */
static void num_in(problems *p, const cJSON *o, const char *key, const char *where, double lo, double hi,
                   int integer, double *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!v) return;
  if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi) ||
      (integer && !tl_json_is_int(v, lo, hi))) {
    char w[160];
    snprintf(w, sizeof w, "%s.%s", where, key);
    if (integer) problem(p, w, "must be a whole number in [%g, %g]", lo, hi);
    else problem(p, w, "must be a number in [%g, %g]", lo, hi);
    return;
  }
  *out = v->valuedouble;
}
static void int_in(problems *p, const cJSON *o, const char *key, const char *where, int lo, int hi, int *out) {
  double d = NAN;
  num_in(p, o, key, where, lo, hi, 1, &d);
  if (d == d) *out = (int)d;
}
static void bool_in(problems *p, const cJSON *o, const char *key, const char *where, int *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!v) return;
  if (!cJSON_IsBool(v)) problem(p, where, "\"%s\" must be true or false", key);
  else *out = cJSON_IsTrue(v);
}
/* The object at o.key, or NULL (a problem when present and not an object; its keys checked). */
static const cJSON *sub_obj(problems *p, const cJSON *o, const char *key, const char *where,
                            const char *const *keys) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!v) return NULL;
  char w[160];
  snprintf(w, sizeof w, "%s.%s", where, key);
  if (!cJSON_IsObject(v)) {
    problem(p, w, "must be an object");
    return NULL;
  }
  if (keys) check_keys(p, v, w, keys);
  return v;
}

/* The body fields tally sets itself: "extra" may not set them. */
static const char *const HTTP_OWN[] = {"model", "messages", "prompt", "temperature", "top_p", "max_tokens",
                                       "seed", "n", "stop", "logprobs", "top_logprobs", "stream", NULL};

/* An "openai" engine's settings (tl_http_cfg). */
static void load_http(problems *p, const cJSON *v, const char *where, tl_http_cfg *h) {
  static const char *const K[] = {"type", "url", "urls", "port_base", "api", "model", "api_key_env", "sampling",
                                  "extra", "concurrency", "timeouts", "retries", "health", "think",
                                  "cache_unseeded", "key_header", "max_reply_bytes", "tls", NULL};
  check_keys(p, v, where, K);
  h->max_reply_bytes = 64.0 * 1024 * 1024;
  h->port_base = 8000;
  h->temperature = h->top_p = NAN;
  h->max_tokens = h->n = h->logprobs = h->top_logprobs = -1;
  h->send_seed = 1;
  h->conc_initial = 16;
  h->conc_min = 1;
  h->conc_max = 256;
  h->connect_timeout_s = 10;
  h->request_timeout_s = 600;
  h->max_retries = 6;
  h->backoff_s = 0.5;
  h->backoff_max_s = 60;
  h->health_wait_s = 600;
  char w[160];
  const cJSON *url = cJSON_GetObjectItemCaseSensitive(v, "url"), *urls = cJSON_GetObjectItemCaseSensitive(v, "urls");
  if (url && urls) problem(p, where, "give \"url\" (a template) or \"urls\" (a list), not both");
  else if (!url && !urls) problem(p, where, "\"url\" is missing (e.g. \"http://127.0.0.1:{port}/v1\")");
  const cJSON *list = urls ? urls : url;
  if (list && cJSON_IsString(list) && urls) list = NULL;
  if (url && !cJSON_IsString(url)) problem(p, where, "\"url\" must be a string");
  else if (urls && (!cJSON_IsArray(urls) || cJSON_GetArraySize(urls) == 0))
    problem(p, where, "\"urls\" must be a non-empty list of strings");
  else if (list) {
    int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : 1;
    h->urls = calloc((size_t)n, sizeof *h->urls);
    for (int i = 0; h->urls && i < n; i++) {
      const cJSON *u = cJSON_IsArray(list) ? cJSON_GetArrayItem(list, i) : list;
      if (!cJSON_IsString(u) || (strncmp(u->valuestring, "http://", 7) && strncmp(u->valuestring, "https://", 8)))
        problem(p, where, "URL %d must be a string starting with http:// or https://", i);
      else h->urls[h->nurls++] = tl_strdup(u->valuestring);
    }
  }
  int_in(p, v, "port_base", where, 1, 65535, &h->port_base);
  const cJSON *api = cJSON_GetObjectItemCaseSensitive(v, "api");
  if (api && (!cJSON_IsString(api) || (strcmp(api->valuestring, "chat") && strcmp(api->valuestring, "completions"))))
    problem(p, where, "\"api\" must be \"chat\" (/chat/completions) or \"completions\" (/completions, base models)");
  else if (api) h->completions = strcmp(api->valuestring, "completions") == 0;
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(v, "model");
  if (m && (!cJSON_IsString(m) || !*m->valuestring)) problem(p, where, "\"model\" must be the served model's name");
  else if (m) h->model = tl_strdup(m->valuestring);
  const cJSON *ke = cJSON_GetObjectItemCaseSensitive(v, "api_key_env");
  if (ke && (!cJSON_IsString(ke) || !*ke->valuestring))
    problem(p, where, "\"api_key_env\" must name an environment variable (the key itself never goes in a job)");
  else if (ke) h->api_key_env = tl_strdup(ke->valuestring);
  static const char *const SK[] = {"temperature", "top_p", "max_tokens", "seed", "n", "stop", "logprobs",
                                   "top_logprobs", NULL};
  snprintf(w, sizeof w, "%s.sampling", where);
  const cJSON *smp = sub_obj(p, v, "sampling", where, SK);
  if (smp) {
    num_in(p, smp, "temperature", w, 0, 100, 0, &h->temperature);
    num_in(p, smp, "top_p", w, 0, 1, 0, &h->top_p);
    int_in(p, smp, "max_tokens", w, 1, 100000000, &h->max_tokens);
    int_in(p, smp, "n", w, 1, 128, &h->n);
    int_in(p, smp, "top_logprobs", w, 0, 20, &h->top_logprobs);
    bool_in(p, smp, "seed", w, &h->send_seed);
    bool_in(p, smp, "logprobs", w, &h->logprobs);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(smp, "stop");
    if (st) {
      int n = cJSON_IsArray(st) ? cJSON_GetArraySize(st) : 1;
      if (!(cJSON_IsString(st) || cJSON_IsArray(st)) || n < 1 || n > 4) {
        problem(p, w, "\"stop\" must be a string or a list of 1 to 4 strings");
      } else {
        h->stop = calloc((size_t)n, sizeof *h->stop);
        for (int i = 0; h->stop && i < n; i++) {
          const cJSON *e = cJSON_IsArray(st) ? cJSON_GetArrayItem(st, i) : st;
          if (!cJSON_IsString(e) || !*e->valuestring) problem(p, w, "\"stop\" entries must be non-empty strings");
          else h->stop[h->nstop++] = tl_strdup(e->valuestring);
        }
      }
    }
  }
  const cJSON *ex = sub_obj(p, v, "extra", where, NULL);
  if (ex) {
    for (const cJSON *c = ex->child; c; c = c->next)
      for (const char *const *o = HTTP_OWN; *o; o++)
        if (strcmp(c->string, *o) == 0)
          problem(p, where, "\"extra\" may not set \"%s\": tally sets it (give it in \"sampling\" or leave it)", *o);
    h->extra_json = cJSON_PrintUnformatted(ex);
  }
  static const char *const CK[] = {"initial", "min", "max", NULL};
  snprintf(w, sizeof w, "%s.concurrency", where);
  const cJSON *cc = sub_obj(p, v, "concurrency", where, CK);
  if (cc) {
    int_in(p, cc, "min", w, 1, 65536, &h->conc_min);
    int_in(p, cc, "max", w, 1, 65536, &h->conc_max);
    if (!cJSON_GetObjectItemCaseSensitive(cc, "initial")) h->conc_initial = h->conc_initial < h->conc_min ? h->conc_min : h->conc_initial > h->conc_max ? h->conc_max : h->conc_initial;
    int_in(p, cc, "initial", w, 1, 65536, &h->conc_initial);
  }
  if (h->conc_min > h->conc_max || h->conc_initial < h->conc_min || h->conc_initial > h->conc_max)
    problem(p, w, "needs min <= initial <= max (now %d, %d, %d)", h->conc_min, h->conc_initial, h->conc_max);
  static const char *const TK[] = {"connect_s", "request_s", NULL};
  snprintf(w, sizeof w, "%s.timeouts", where);
  const cJSON *to = sub_obj(p, v, "timeouts", where, TK);
  if (to) {
    num_in(p, to, "connect_s", w, 0.001, 3600, 0, &h->connect_timeout_s);
    num_in(p, to, "request_s", w, 0.001, 86400, 0, &h->request_timeout_s);
  }
  static const char *const RK[] = {"max", "backoff_s", "backoff_max_s", NULL};
  snprintf(w, sizeof w, "%s.retries", where);
  const cJSON *rt = sub_obj(p, v, "retries", where, RK);
  if (rt) {
    int_in(p, rt, "max", w, 0, 100, &h->max_retries);
    num_in(p, rt, "backoff_s", w, 0, 3600, 0, &h->backoff_s);
    num_in(p, rt, "backoff_max_s", w, 0, 86400, 0, &h->backoff_max_s);
  }
  static const char *const HK[] = {"path", "wait_s", NULL};
  snprintf(w, sizeof w, "%s.health", where);
  const cJSON *hl = sub_obj(p, v, "health", where, HK);
  const cJSON *hp = hl ? cJSON_GetObjectItemCaseSensitive(hl, "path") : NULL;
  if (hp && (!cJSON_IsString(hp) || hp->valuestring[0] != '/'))
    problem(p, w, "\"path\" must start with / (e.g. \"/health\" or \"/v1/models\")");
  h->health_path = tl_strdup(cJSON_IsString(hp) && hp->valuestring[0] == '/' ? hp->valuestring : "/health");
  if (hl) num_in(p, hl, "wait_s", w, 0, 86400, 0, &h->health_wait_s);
  const cJSON *th = cJSON_GetObjectItemCaseSensitive(v, "think");
  if (th && (!cJSON_IsString(th) || (strcmp(th->valuestring, "strip") && strcmp(th->valuestring, "keep"))))
    problem(p, where, "\"think\" must be \"strip\" (scoring sees the text after </think>) or \"keep\"");
  else if (th) h->think_keep = strcmp(th->valuestring, "keep") == 0;
  bool_in(p, v, "cache_unseeded", where, &h->cache_unseeded);
  bool_in(p, v, "key_header", where, &h->key_header);
  num_in(p, v, "max_reply_bytes", where, 1024, 1e12, 0, &h->max_reply_bytes);
  static const char *const LK[] = {"ca_bundle", NULL};
  snprintf(w, sizeof w, "%s.tls", where);
  const cJSON *tls = sub_obj(p, v, "tls", where, LK);
  const cJSON *ca = tls ? cJSON_GetObjectItemCaseSensitive(tls, "ca_bundle") : NULL;
  if (ca && (!cJSON_IsString(ca) || !*ca->valuestring))
    problem(p, w, "\"ca_bundle\" must be the path of a PEM file of certificate authorities");
  else if (ca) h->ca_bundle = tl_path_resolve(p->dir, ca->valuestring);
  if (h->top_logprobs > 0 && h->logprobs != 1)
    problem(p, where, "\"sampling\".top_logprobs needs \"logprobs\": true (servers refuse it alone)");
}

static void http_release(tl_http_cfg *h) {
  for (int i = 0; i < h->nurls; i++) free(h->urls[i]);
  free(h->urls);
  for (int i = 0; i < h->nstop; i++) free(h->stop[i]);
  free(h->stop);
  free(h->model);
  free(h->api_key_env);
  free(h->extra_json);
  free(h->health_path);
  free(h->ca_bundle);
  memset(h, 0, sizeof *h);
}

/* One engine of a role: "replay", or an object {"type": "replay", "latency_ms": ms} or
 * {"type": "openai", ...}; absent = replay. Its settings JSON (for the output) is kept: the
 * job's own object (it names an API key's variable, never a key). */
static void load_engine(problems *p, const cJSON *v, const char *where, tl_job_engine *e) {
  const char *type = "replay";
  if (v) {
    const cJSON *t = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "type") : v;
    if (!cJSON_IsString(t)) {
      problem(p, where, "must be \"replay\", {\"type\": \"replay\"} or {\"type\": \"openai\", \"url\": ...}");
    } else if (strcmp(t->valuestring, "openai") == 0) {
      type = "openai";
      if (!cJSON_IsObject(v)) problem(p, where, "an openai engine is an object with at least \"type\" and \"url\"");
      else load_http(p, v, where, &e->http);
    } else if (strcmp(t->valuestring, "replay") != 0) {
      problem(p, where, "unknown engine '%s' (known: replay, openai)", t->valuestring);
    } else if (cJSON_IsObject(v)) {
      static const char *const EK[] = {"type", "latency_ms", NULL};
      check_keys(p, v, where, EK);
      const cJSON *lat = cJSON_GetObjectItemCaseSensitive(v, "latency_ms");
      char w[96];
      snprintf(w, sizeof w, "%s.latency_ms", where);
      if (lat && (!cJSON_IsNumber(lat) || lat->valuedouble < 0 || lat->valuedouble > 600000))
        problem(p, w, "must be a number of milliseconds in [0, 600000]");
      else if (lat) e->latency_ms = (int)lat->valuedouble;
    }
  }
  e->type = tl_strdup(type);
  tl_buf j;
  tl_buf_init(&j);
  if (strcmp(type, "openai") == 0) {
    char *js = cJSON_PrintUnformatted(v);
    tl_buf_puts(&j, js ? js : "{}");
    free(js);
  } else {
    tl_buf_printf(&j, "{\"type\":\"%s\",\"latency_ms\":%d}", type, e->latency_ms);
  }
  e->json = tl_buf_detach(&j);
}

tl_status tl_job_load(const char *path, tl_job *job, tl_buf *problems_out, int *n_problems) {
  return tl_job_load_in(path, NULL, job, problems_out, n_problems);
}

tl_status tl_job_load_in(const char *path, const char *dir, tl_job *job, tl_buf *problems_out, int *n_problems) {
  memset(job, 0, sizeof *job);
  problems p = {problems_out, 0, path, NULL, job};
  *n_problems = 0;
  tl_err err;
  size_t len = 0;
  char *text = read_file(path, &len, &err);
  if (!text) {
    tl_buf_printf(problems_out, "%s\n", err.msg);
    *n_problems = 1;
    return TL_EJOB;
  }
  job->path = tl_strdup(path);
  const char *slash = strrchr(path, '/');
  job->dir = slash ? tl_strndup(path, (size_t)(slash - path)) : tl_strdup(".");
  if (slash == path) {
    free(job->dir);
    job->dir = tl_strdup("/");
  }
  if (dir) {
    free(job->dir);
    job->dir = tl_strdup(dir);
  }
  job->json = text;
  p.dir = job->dir;
  job->max_line = TL_JSONL_DEFAULT_MAX_LINE;
  job->max_rejected = 0.1;
  const char *end = NULL;
  cJSON *root = NULL;
  { /* the modules themselves, before any is used (tl_bench_check) */
    tl_err rerr;
    if (tl_bench_registry_check(&rerr) != TL_OK) {
      problem(&p, "", "%s", rerr.msg);
      goto done;
    }
  }
  const char *nul = memchr(text, 0, len);
  if (nul) { /* cJSON would stop there and maybe take the part before it for the whole job */
    long line = 1;
    for (const char *c = text; c < nul; c++) line += *c == '\n';
    problem(&p, "", "NUL byte at line %ld (not JSON text)", line);
    goto done;
  }
  root = cJSON_ParseWithOpts(text, &end, 1);
  if (!root) {
    long line = 1, col = 1;
    for (const char *c = text; end && c < end; c++) {
      if (*c == '\n') { line++; col = 1; } else col++;
    }
    problem(&p, "", "malformed JSON at line %ld, column %ld", line, col);
    goto done;
  }
  tl_json_check(text, root, json_issue, &p);
  if (!cJSON_IsObject(root)) {
    problem(&p, "", "the job must be a JSON object");
    goto done;
  }
  static const char *const KEYS[] = {"name", "engine", "engines", "output", "benchmarks", "studies", "limits", NULL};
  check_keys(&p, root, "", KEYS);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "name");
  if (v && !cJSON_IsString(v)) problem(&p, "name", "must be a string");
  job->name = tl_strdup(cJSON_IsString(v) ? v->valuestring : "job");
  const cJSON *eng1 = cJSON_GetObjectItemCaseSensitive(root, "engine");
  const cJSON *engs = cJSON_GetObjectItemCaseSensitive(root, "engines");
  if (eng1 && engs) problem(&p, "engines", "give \"engines\" or the older \"engine\", not both");
  if (engs && !cJSON_IsObject(engs)) {
    problem(&p, "engines", "must be an object {\"model\": {...}, \"judge\": {...}}");
    engs = NULL;
  }
  if (engs) {
    static const char *const RK[] = {"model", "judge", NULL};
    check_keys(&p, engs, "engines", RK);
  }
  for (int r = 0; r < TL_ROLE__N; r++) {
    const cJSON *e = engs ? cJSON_GetObjectItemCaseSensitive(engs, tl_role_name((tl_role)r))
                          : r == TL_ROLE_MODEL ? eng1 : NULL;
    char w[64];
    snprintf(w, sizeof w, engs ? "engines.%s" : "engine", tl_role_name((tl_role)r));
    load_engine(&p, e, w, &job->engines[r]);
  }
  v = cJSON_GetObjectItemCaseSensitive(root, "output");
  if (!cJSON_IsString(v) || !*v->valuestring) problem(&p, "output", "missing (the HDF5 file to write)");
  else job->output = tl_path_resolve(job->dir, v->valuestring);
  v = cJSON_GetObjectItemCaseSensitive(root, "limits");
  if (v) {
    const cJSON *ml = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "max_line_bytes") : NULL;
    const cJSON *mr = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "max_rejected") : NULL;
    if (!cJSON_IsObject(v)) problem(&p, "limits", "must be an object");
    else if (ml && (!cJSON_IsNumber(ml) || ml->valuedouble < 1024 || ml->valuedouble > 1e10))
      problem(&p, "limits.max_line_bytes", "must be a number of bytes >= 1024");
    else if (ml) job->max_line = (size_t)ml->valuedouble;
    if (mr && (!cJSON_IsNumber(mr) || !(mr->valuedouble >= 0 && mr->valuedouble <= 1)))
      problem(&p, "limits.max_rejected", "must be a share from 0 to 1 (0.1: at most 10%% of a file's lines rejected)");
    else if (mr) job->max_rejected = mr->valuedouble;
    for (const cJSON *c = cJSON_IsObject(v) ? v->child : NULL; c; c = c->next)
      if (strcmp(c->string, "max_line_bytes") && strcmp(c->string, "max_rejected"))
        problem(&p, "limits", "unknown key '%s' (known: max_line_bytes, max_rejected)", c->string);
  }
  const cJSON *studies = cJSON_GetObjectItemCaseSensitive(root, "studies");
  if (studies) {
    if (!cJSON_IsArray(studies) || cJSON_GetArraySize(studies) == 0) {
      problem(&p, "studies", "must be a non-empty list of study objects");
    } else {
      job->studies = calloc((size_t)cJSON_GetArraySize(studies), sizeof *job->studies);
      for (int i = 0; i < cJSON_GetArraySize(studies); i++)
        load_study(&p, cJSON_GetArrayItem(studies, i), i, job->dir, job);
    }
  }
  v = cJSON_GetObjectItemCaseSensitive(root, "benchmarks");
  if (!v && job->n_studies > 0) {
    /* a studies-only job */
  } else if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0) {
    problem(&p, "benchmarks", "missing (a non-empty list; or give \"studies\")");
  } else {
    job->n_benches = cJSON_GetArraySize(v);
    job->benches = calloc((size_t)job->n_benches, sizeof *job->benches);
    for (int i = 0; i < job->n_benches; i++)
      load_bench(&p, cJSON_GetArrayItem(v, i), i, &job->benches[i]);
    /* one entry per benchmark: /items/<name> and /metrics/<name> are the benchmark's */
    for (int i = 0; i < job->n_benches; i++)
      for (int k = 0; k < i; k++)
        if (job->benches[i].benchmark && job->benches[k].benchmark &&
            strcmp(job->benches[i].benchmark, job->benches[k].benchmark) == 0)
          problem(&p, "benchmarks", "entry %d: benchmark '%s' is already entry %d (one entry per benchmark: "
                  "list all its items and answers there)", i, job->benches[i].benchmark, k);
    /* a judge stage from replay files needs them */
    for (int i = 0; i < job->n_benches; i++) {
      const tl_job_bench *jb = &job->benches[i];
      if (jb->vt && jb->mod && tl_bench_nstages(jb->vt, jb->mod) > 1 && jb->n_judgments == 0 && job->engines[TL_ROLE_JUDGE].type &&
          strcmp(job->engines[TL_ROLE_JUDGE].type, "replay") == 0)
        problem(&p, "benchmarks", "entry %d: benchmark '%s' has a judge stage and the judge engine is replay: "
                "give \"judgments\" (the judge's replies)", i, jb->benchmark);
    }
  }
  for (int i = 0; i < job->n_studies; i++) {
    const tl_job_study *js = &job->studies[i];
    char what[160];
    snprintf(what, sizeof what, "the %s table of study '%s'", js->input ? "input" : "join", js->name ? js->name : "?");
    if (js->input) add_input(&p, js->input, what);
    if (js->join) add_input(&p, js->join, what);
    int found = !js->from;
    for (int b = 0; b < job->n_benches && !found; b++)
      found = job->benches[b].benchmark && strcmp(job->benches[b].benchmark, js->from) == 0;
    if (!found) {
      char w[64];
      snprintf(w, sizeof w, "studies[%d]", i);
      problem(&p, w, "\"from\": '%s' is not a benchmark of this job", js->from);
    }
  }
done:
  cJSON_Delete(root);
  *n_problems = p.n;
  if (p.n) {
    tl_job_release(job);
    return TL_EJOB;
  }
  return TL_OK;
}

static void free_sources(tl_job_answers *a, int n) {
  for (int k = 0; k < n; k++) {
    free(a[k].path);
    free(a[k].model);
    free(a[k].variant);
  }
  free(a);
}

static void free_list(char **l, int n) {
  for (int i = 0; i < n; i++) free(l[i]);
  free(l);
}

void tl_job_release(tl_job *job) {
  for (int i = 0; i < job->n_benches; i++) {
    tl_job_bench *b = &job->benches[i];
    free(b->benchmark);
    if (b->vt && b->vt->free) b->vt->free(b->mod);
    free_sources(b->answers, b->n_answers);
    free_sources(b->judgments, b->n_judgments);
    free_list(b->models, b->n_models);
    free(b->seeds);
  }
  free(job->benches);
  for (int i = 0; i < job->n_studies; i++) {
    tl_job_study *st = &job->studies[i];
    free(st->name); free(st->input); free(st->human); free(st->metrics); free(st->group_by); free(st->cluster); free(st->system);
    free(st->from); free(st->join); free(st->on); free(st->agreement); free(st->agreement_cluster);
  }
  free(job->studies);
  free(job->path);
  free(job->dir);
  free(job->name);
  for (int r = 0; r < TL_ROLE__N; r++) {
    free(job->engines[r].type);
    free(job->engines[r].json);
    http_release(&job->engines[r].http);
  }
  for (int i = 0; i < job->n_inputs; i++) {
    free(job->inputs[i].path);
    free(job->inputs[i].what);
  }
  free(job->inputs);
  free(job->output);
  free(job->json);
  memset(job, 0, sizeof *job);
}

long tl_job_sweep_cells(const tl_job *job) {
  const tl_job_bench *b0 = job->n_benches ? &job->benches[0] : NULL;
  if (!b0 || !b0->models || !b0->seeds) return 0;
  for (int b = 1; b < job->n_benches; b++) {
    const tl_job_bench *jb = &job->benches[b];
    if (!jb->models || !jb->seeds || jb->n_models != b0->n_models || jb->n_seeds != b0->n_seeds) return 0;
    for (int i = 0; i < jb->n_models; i++)
      if (strcmp(jb->models[i], b0->models[i]) != 0) return 0;
    for (int i = 0; i < jb->n_seeds; i++)
      if (jb->seeds[i] != b0->seeds[i]) return 0;
  }
  return (long)b0->n_models * b0->n_seeds;
}
