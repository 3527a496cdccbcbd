/* job.c - job file loading and validation (see job.h and docs/JOBS.md). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/job.h"
#include "tally/jsonl.h"

typedef struct {
  tl_buf *out;
  int n;
  const char *file;
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

/* A string or a list of strings -> resolved paths. */
static void get_paths(problems *p, const cJSON *v, const char *where, const char *dir,
                      char ***out, int *n) {
  *out = NULL;
  *n = 0;
  if (!v) {
    problem(p, where, "missing (a path or a list of paths)");
    return;
  }
  int cnt = cJSON_IsString(v) ? 1 : cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
  if (cnt <= 0) {
    problem(p, where, "must be a path or a non-empty list of paths");
    return;
  }
  *out = calloc((size_t)cnt, sizeof **out);
  for (int i = 0; i < cnt; i++) {
    const cJSON *e = cJSON_IsString(v) ? v : cJSON_GetArrayItem(v, i);
    if (!cJSON_IsString(e) || !*e->valuestring) {
      problem(p, where, "entry %d is not a path", i);
      continue;
    }
    (*out)[(*n)++] = tl_path_resolve(dir, e->valuestring);
  }
}

static int get_variant(problems *p, const cJSON *v, const char *where) {
  if (!cJSON_IsString(v) || tl_se_prompt_from_name(v->valuestring) < 0) {
    problem(p, where, "prompt_variant must be \"reason\" or \"letter\"");
    return -1;
  }
  return tl_se_prompt_from_name(v->valuestring);
}

static void load_bench(problems *p, const cJSON *b, int bi, const char *dir, tl_job_bench *jb) {
  char where[96];
  snprintf(where, sizeof where, "benchmarks[%d]", bi);
  jb->variant = TL_SE_PROMPT_REASON;
  if (!cJSON_IsObject(b)) {
    problem(p, where, "must be an object");
    return;
  }
  static const char *const KEYS[] = {"benchmark", "items", "answers", "parsers", "prompt_variant",
                                     "models", "seeds", NULL};
  check_keys(p, b, where, KEYS);
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(b, "benchmark");
  if (!cJSON_IsString(name)) {
    problem(p, where, "missing \"benchmark\" (one of: spatialeval)");
  } else if (strcmp(name->valuestring, "spatialeval") != 0) {
    problem(p, where, "benchmark '%s' is not supported yet (supported: spatialeval)",
            name->valuestring);
  } else {
    jb->benchmark = tl_strdup(name->valuestring);
  }
  char w2[128];
  snprintf(w2, sizeof w2, "%s.items", where);
  get_paths(p, cJSON_GetObjectItemCaseSensitive(b, "items"), w2, dir, &jb->items, &jb->n_items);

  const cJSON *pv = cJSON_GetObjectItemCaseSensitive(b, "prompt_variant");
  if (pv) {
    snprintf(w2, sizeof w2, "%s.prompt_variant", where);
    int v = get_variant(p, pv, w2);
    if (v >= 0) jb->variant = v;
  }

  const cJSON *ans = cJSON_GetObjectItemCaseSensitive(b, "answers");
  snprintf(w2, sizeof w2, "%s.answers", where);
  int na = !ans ? 0 : cJSON_IsArray(ans) ? cJSON_GetArraySize(ans) : 1;
  if (na == 0) problem(p, w2, "missing (a path, an object {path, model, seed, prompt_variant}, or a list of them)");
  jb->answers = calloc((size_t)(na ? na : 1), sizeof *jb->answers);
  for (int i = 0; i < na; i++) {
    const cJSON *e = cJSON_IsArray(ans) ? cJSON_GetArrayItem(ans, i) : ans;
    char w3[160];
    snprintf(w3, sizeof w3, "%s[%d]", w2, i);
    tl_job_answers *a = &jb->answers[jb->n_answers];
    a->variant = -1;
    if (cJSON_IsString(e)) {
      a->path = tl_path_resolve(dir, e->valuestring);
    } else if (cJSON_IsObject(e)) {
      static const char *const AK[] = {"path", "model", "seed", "prompt_variant", NULL};
      check_keys(p, e, w3, AK);
      const cJSON *f = cJSON_GetObjectItemCaseSensitive(e, "path");
      if (!cJSON_IsString(f)) {
        problem(p, w3, "missing \"path\"");
        continue;
      }
      a->path = tl_path_resolve(dir, f->valuestring);
      f = cJSON_GetObjectItemCaseSensitive(e, "model");
      if (f && !cJSON_IsString(f)) problem(p, w3, "\"model\" must be a string");
      else if (f) a->model = tl_strdup(f->valuestring);
      f = cJSON_GetObjectItemCaseSensitive(e, "seed");
      if (f && !tl_json_is_int(f, INT_MIN, INT_MAX))
        problem(p, w3, "\"seed\" must be an integer");
      else if (f) a->seed = (int)f->valuedouble;
      f = cJSON_GetObjectItemCaseSensitive(e, "prompt_variant");
      if (f) a->variant = get_variant(p, f, w3);
    } else {
      problem(p, w3, "must be a path or an object");
      continue;
    }
    jb->n_answers++;
  }

  const cJSON *ps = cJSON_GetObjectItemCaseSensitive(b, "parsers");
  snprintf(w2, sizeof w2, "%s.parsers", where);
  if (!ps) {
    jb->modes[0] = TL_SE_STRICT;
    jb->n_modes = 1;
  } else if (!cJSON_IsArray(ps) || cJSON_GetArraySize(ps) == 0) {
    problem(p, w2, "must be a non-empty list of \"strict\", \"pr3\", \"legacy\"");
  } else {
    const cJSON *e;
    cJSON_ArrayForEach(e, ps) {
      int m = cJSON_IsString(e) ? tl_se_mode_from_name(e->valuestring) : -1;
      if (m < 0) {
        problem(p, w2, "unknown parser %s%s%s (want strict, pr3 or legacy)",
                cJSON_IsString(e) ? "'" : "", cJSON_IsString(e) ? e->valuestring : "(not a string)",
                cJSON_IsString(e) ? "'" : "");
        continue;
      }
      int dup = 0;
      for (int k = 0; k < jb->n_modes; k++) dup |= jb->modes[k] == (tl_se_mode)m;
      if (dup) {
        problem(p, w2, "parser '%s' listed twice", e->valuestring);
        continue;
      }
      jb->modes[jb->n_modes++] = (tl_se_mode)m;
    }
  }

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
  static const char *const KEYS[] = {"name", "input", "human", "metrics", "group_by", "resamples",
                                     "seed", "ci", "method", "permutation", "stats", NULL};
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
  if (!cJSON_IsString(v) || !*v->valuestring) problem(p, where, "missing \"input\" (a .csv, .tsv or .jsonl table)");
  else st->input = tl_path_resolve(dir, v->valuestring);
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
  job->n_studies++;
}

tl_status tl_job_load(const char *path, tl_job *job, tl_buf *problems_out, int *n_problems) {
  memset(job, 0, sizeof *job);
  problems p = {problems_out, 0, path};
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
  job->json = text;
  job->max_line = TL_JSONL_DEFAULT_MAX_LINE;
  const char *end = NULL;
  cJSON *root = NULL;
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
  static const char *const KEYS[] = {"name", "engine", "output", "benchmarks", "studies", "limits", NULL};
  check_keys(&p, root, "", KEYS);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "name");
  if (v && !cJSON_IsString(v)) problem(&p, "name", "must be a string");
  job->name = tl_strdup(cJSON_IsString(v) ? v->valuestring : "job");
  v = cJSON_GetObjectItemCaseSensitive(root, "engine");
  const char *engine = "replay";
  if (v) {
    const cJSON *t = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "type") : v;
    if (cJSON_IsObject(v)) {
      static const char *const EK[] = {"type", "latency_ms", NULL};
      check_keys(&p, v, "engine", EK);
      const cJSON *lat = cJSON_GetObjectItemCaseSensitive(v, "latency_ms");
      if (lat && (!cJSON_IsNumber(lat) || lat->valuedouble < 0 || lat->valuedouble > 600000))
        problem(&p, "engine.latency_ms", "must be a number of milliseconds in [0, 600000]");
      else if (lat) job->latency_ms = (int)lat->valuedouble;
    }
    if (!cJSON_IsString(t)) problem(&p, "engine", "must be \"replay\" or {\"type\": \"replay\"}");
    else if (strcmp(t->valuestring, "replay") != 0)
      problem(&p, "engine", "engine '%s' is not available yet (available: replay)", t->valuestring);
    else engine = t->valuestring;
  }
  job->engine = tl_strdup(engine);
  v = cJSON_GetObjectItemCaseSensitive(root, "output");
  if (!cJSON_IsString(v) || !*v->valuestring) problem(&p, "output", "missing (the HDF5 file to write)");
  else job->output = tl_path_resolve(job->dir, v->valuestring);
  v = cJSON_GetObjectItemCaseSensitive(root, "limits");
  if (v) {
    const cJSON *ml = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "max_line_bytes") : NULL;
    if (!cJSON_IsObject(v)) problem(&p, "limits", "must be an object");
    else if (ml && (!cJSON_IsNumber(ml) || ml->valuedouble < 1024 || ml->valuedouble > 1e10))
      problem(&p, "limits.max_line_bytes", "must be a number of bytes >= 1024");
    else if (ml) job->max_line = (size_t)ml->valuedouble;
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
      load_bench(&p, cJSON_GetArrayItem(v, i), i, job->dir, &job->benches[i]);
    /* The run path scores one benchmark entry today; a second one must never be dropped in
     * silence (several benchmarks in one job come with the benchmark modules). */
    for (int i = 1; i < job->n_benches; i++)
      problem(&p, "benchmarks", "entry %d: one benchmark entry per job for now; put it in a job of its own", i);
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

static void free_list(char **l, int n) {
  for (int i = 0; i < n; i++) free(l[i]);
  free(l);
}

void tl_job_release(tl_job *job) {
  for (int i = 0; i < job->n_benches; i++) {
    tl_job_bench *b = &job->benches[i];
    free(b->benchmark);
    free_list(b->items, b->n_items);
    for (int k = 0; k < b->n_answers; k++) {
      free(b->answers[k].path);
      free(b->answers[k].model);
    }
    free(b->answers);
    free_list(b->models, b->n_models);
    free(b->seeds);
  }
  free(job->benches);
  for (int i = 0; i < job->n_studies; i++) {
    tl_job_study *st = &job->studies[i];
    free(st->name); free(st->input); free(st->human); free(st->metrics); free(st->group_by);
  }
  free(job->studies);
  free(job->path);
  free(job->dir);
  free(job->name);
  free(job->engine);
  free(job->output);
  free(job->json);
  memset(job, 0, sizeof *job);
}
