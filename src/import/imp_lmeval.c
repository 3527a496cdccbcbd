/* imp_lmeval.c - lm-evaluation-harness saved samples (--log_samples): samples_<task>_<date>.jsonl
 * lines, and the same sample objects embedded in a results_<date>.json under "samples": {task:
 * [...]} (a results file without them reads the samples files beside it). The per-sample mapping
 * (tl_lme_sample) is shared with lmms-eval (lmeval.h). Fields: ../shared/spec/harness-formats.md.
 *
 * One record per (doc, repeat): the answer is keyed by the doc's own id ("id", else
 * "question_id", else doc_id as text); a task written under several filters is read under the
 * FIRST filter met in the file (lm-eval writes all docs of one filter, then the next; the raw
 * response is the same text under each). A pre-pass notes what the other filters extracted and
 * scored, and the record of the chosen filter carries it (extra.filters). A generation sample's
 * item has the target as its "answer" and a "question" (the gen module's items, docs/GEN.md). */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lmeval.h"
#include "tally/jsonl.h"
#include "tally/str.h"

void tl_lme_init(tl_lme_state *s, const char *format) {
  memset(s, 0, sizeof *s);
  s->format = format;
  tl_strmap_init(&s->filters);
  tl_strmap_init(&s->odocs);
}

void tl_lme_release(tl_lme_state *s) {
  for (size_t i = 0; i < s->n; i++) free(s->chosen[i]);
  free(s->chosen);
  tl_strmap_release(&s->filters);
  for (size_t i = 0; i < s->nothers; i++) {
    cJSON_Delete(s->others[i]);
    free(s->okey[i]);
  }
  free(s->others);
  free(s->oline);
  free(s->okey);
  free(s->oused);
  tl_strmap_release(&s->odocs);
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

char *tl_lme_task_from_name(const char *path) {
  const char *b = base_name(path);
  size_t n = strlen(b);
  if (n > 6 && !strcmp(b + n - 6, ".jsonl")) n -= 6;
  else if (n > 5 && !strcmp(b + n - 5, ".json")) n -= 5;
  /* lmms-eval: 20240901_101010_samples_TASK */
  if (n > 24 && !strncmp(b + 15, "_samples_", 9) && isdigit((unsigned char)b[0]) && b[8] == '_')
    return tl_strndup(b + 24, n - 24);
  /* lm-eval: samples_TASK_YYYY-MM-DDT... */
  if (n > 8 && !strncmp(b, "samples_", 8)) {
    for (size_t i = n; i-- > 8;)
      if (b[i] == '_' && i + 5 < n && isdigit((unsigned char)b[i + 1]) && isdigit((unsigned char)b[i + 4]) &&
          b[i + 5] == '-')
        return tl_strndup(b + 8, i - 8);
    return tl_strndup(b + 8, n - 8);
  }
  return tl_strndup(b, n);
}

char *tl_lme_model_from_args(const char *args) {
  const char *p = args ? strstr(args, "pretrained=") : NULL;
  if (!p) p = args ? strstr(args, "model=") : NULL;
  if (!p) return NULL;
  p = strchr(p, '=') + 1;
  return tl_strndup(p, strcspn(p, ","));
}

tl_status tl_lme_read_json(const char *path, cJSON **out, tl_err *err) {
  tl_buf b;
  tl_buf_init(&b);
  tl_status st = tl_file_read(path, 0, &b, err);
  *out = NULL;
  if (!st) {
    *out = cJSON_ParseWithLength(b.data ? b.data : "", b.len);
    if (!*out) st = tl_err_set(err, TL_EINPUT, "'%s' is not JSON (cut short, or not a results file)", path);
  }
  tl_buf_release(&b);
  return st;
}

/* A log-likelihood pair [loglik, is_greedy] (numbers or strings such as "-3.21", "False"). */
static int ll_pair(const cJSON *p, double *ll, int *greedy) {
  if (!cJSON_IsArray(p) || cJSON_GetArraySize(p) != 2) return 0;
  const cJSON *a = p->child, *g = a->next;
  if (cJSON_IsNumber(a)) *ll = a->valuedouble;
  else if (cJSON_IsString(a)) {
    char *end;
    errno = 0;
    *ll = strtod(a->valuestring, &end);
    if (end == a->valuestring || *end || errno == ERANGE) return 0;
  } else return 0;
  if (cJSON_IsBool(g)) *greedy = cJSON_IsTrue(g);
  else if (cJSON_IsString(g) && !strcmp(g->valuestring, "True")) *greedy = 1;
  else if (cJSON_IsString(g) && !strcmp(g->valuestring, "False")) *greedy = 0;
  else return 0;
  return 1;
}

/* resps (lm-eval: [[[ll, g]], ...] per choice) or filtered_resps ([[ll, g], ...]) as a loglik list:
 * n choices into ll/greedy arrays (cJSON arrays built by the caller). 0: not a loglik shape. */
static int loglik_list(const cJSON *r, int nested, cJSON *lls, cJSON *grs) {
  if (!cJSON_IsArray(r) || !r->child) return 0;
  for (const cJSON *c = r->child; c; c = c->next) {
    const cJSON *p = nested ? (cJSON_IsArray(c) ? c->child : NULL) : c;
    double ll;
    int g;
    if (!p || !ll_pair(p, &ll, &g)) return 0;
    cJSON_AddItemToArray(lls, cJSON_CreateNumber(ll));
    cJSON_AddItemToArray(grs, cJSON_CreateBool(g));
  }
  return 1;
}

/* The first string inside v (v itself, v[0], v[0][0]); NULL for none; *is_null when it is null. */
static const cJSON *first_leaf(const cJSON *v) {
  for (int d = 0; d < 3 && cJSON_IsArray(v); d++) v = v->child;
  return v;
}

static const char *const KNOWN[] = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter",
                                    "metrics", "doc_hash", "prompt_hash", "target_hash", "input", "task_name",
                                    NULL};
static int is_known(const char *k) {
  for (int i = 0; KNOWN[i]; i++)
    if (!strcmp(k, KNOWN[i])) return 1;
  return 0;
}

static tl_status bad(tl_inlog *log, tl_in_kind k, const char *path, long line, const char *where, tl_err *err,
                     const char *msg) {
  tl_status st = tl_inlog_report(log, k, path, line, "%s", msg);
  if (st == TL_EINPUT) tl_err_set(err, st, "%s: %s (strict input)", where, msg);
  return st;
}

/* The chosen filter of task; 1 when filter is it (the first met becomes it). */
static int filter_ok(tl_lme_state *s, const char *task, const char *filter, const char **chosen) {
  size_t i;
  if (tl_strmap_get(&s->filters, task, &i)) {
    *chosen = s->chosen[i];
    return !strcmp(s->chosen[i], filter);
  }
  if (s->n == s->cap) {
    size_t nc = s->cap ? 2 * s->cap : 8;
    char **p = realloc(s->chosen, nc * sizeof *p);
    if (!p) return 1;
    s->chosen = p;
    s->cap = nc;
  }
  s->chosen[s->n] = tl_strdup(filter);
  if (!s->chosen[s->n] || tl_strmap_put(&s->filters, task, s->n, NULL, NULL)) {
    free(s->chosen[s->n]);
    return 1;
  }
  *chosen = s->chosen[s->n++];
  return 1;
}

/* doc_id as text into buf; 0 when missing or not an integer/string. */
static int doc_id_text(const cJSON *o, char *buf, size_t n) {
  const cJSON *jd = cJSON_GetObjectItemCaseSensitive(o, "doc_id");
  if (tl_json_is_int(jd, -9007199254740992.0, 9007199254740992.0)) snprintf(buf, n, "%.0f", jd->valuedouble);
  else if (cJSON_IsString(jd) && jd->valuestring[0] && strlen(jd->valuestring) < n) snprintf(buf, n, "%s", jd->valuestring);
  else return 0;
  return 1;
}

/* The harness's verdict: the first metric named in "metrics" that the line holds as a number;
 * else the first other numeric member. NULL when none. */
static const char *verdict_of(const cJSON *o, double *verdict) {
  const cJSON *jm = cJSON_GetObjectItemCaseSensitive(o, "metrics");
  for (const cJSON *m = cJSON_IsArray(jm) ? jm->child : NULL; m; m = m->next) {
    const cJSON *v = cJSON_IsString(m) ? cJSON_GetObjectItemCaseSensitive(o, m->valuestring) : NULL;
    if (cJSON_IsNumber(v) || cJSON_IsBool(v)) {
      *verdict = cJSON_IsNumber(v) ? v->valuedouble : cJSON_IsTrue(v);
      return m->valuestring;
    }
  }
  for (const cJSON *m = o->child; m; m = m->next)
    if (!is_known(m->string) && (cJSON_IsNumber(m) || cJSON_IsBool(m))) {
      *verdict = cJSON_IsNumber(m) ? m->valuedouble : cJSON_IsTrue(m);
      return m->string;
    }
  return NULL;
}

static char *doc_key(const char *task, const char *docid) {
  tl_buf b;
  tl_buf_init(&b);
  tl_buf_printf(&b, "%s\x1f%s", task ? task : "", docid);
  return tl_buf_detach(&b);
}

tl_status tl_lme_note(tl_lme_state *s, const cJSON *o, const char *task, long line) {
  s->noted = 1;
  char docid[64];
  if (!cJSON_IsObject(o) || !doc_id_text(o, docid, sizeof docid)) return TL_OK;
  const cJSON *jf = cJSON_GetObjectItemCaseSensitive(o, "filter");
  if (jf && !cJSON_IsString(jf)) return TL_OK;
  const char *filter = jf ? jf->valuestring : "none", *chosen = filter;
  if (filter_ok(s, task ? task : "", filter, &chosen)) return TL_OK;
  char *key = doc_key(task, docid);
  if (!key) return TL_ENOMEM;
  size_t i;
  if (!tl_strmap_get(&s->odocs, key, &i)) {
    if (s->nothers == s->capothers) {
      size_t nc = s->capothers ? 2 * s->capothers : 64;
      cJSON **a = realloc(s->others, nc * sizeof *a);
      if (a) s->others = a;
      long *l = realloc(s->oline, nc * sizeof *l);
      if (l) s->oline = l;
      char **k = realloc(s->okey, nc * sizeof *k);
      if (k) s->okey = k;
      int *u = realloc(s->oused, nc * sizeof *u);
      if (u) s->oused = u;
      if (!a || !l || !k || !u) {
        free(key);
        return TL_ENOMEM;
      }
      s->capothers = nc;
    }
    i = s->nothers;
    s->others[i] = cJSON_CreateObject();
    s->oline[i] = line;
    s->okey[i] = key;
    s->oused[i] = 0;
    if (!s->others[i] || tl_strmap_put(&s->odocs, key, i, NULL, NULL)) {
      cJSON_Delete(s->others[i]);
      free(key);
      return TL_ENOMEM;
    }
    s->nothers++;
  } else {
    free(key);
  }
  cJSON *od = s->others[i];
  if (cJSON_GetObjectItemCaseSensitive(od, filter)) return TL_OK; /* a duplicate line: the first kept */
  cJSON *f = cJSON_CreateObject();
  const cJSON *fl = first_leaf(cJSON_GetObjectItemCaseSensitive(o, "filtered_resps"));
  double v = 0;
  const char *m = verdict_of(o, &v);
  if (!f) return TL_ENOMEM;
  if (cJSON_IsString(fl)) cJSON_AddStringToObject(f, "extracted", fl->valuestring);
  else cJSON_AddNullToObject(f, "extracted");
  if (m) cJSON_AddNumberToObject(f, "verdict", v);
  else cJSON_AddNullToObject(f, "verdict");
  if (m) cJSON_AddStringToObject(f, "metric", m);
  cJSON_AddItemToObject(od, filter, f);
  return TL_OK;
}

tl_status tl_lme_note_file(tl_lme_state *s, const char *path, const char *task, tl_err *err) {
  tl_jsonl r;
  tl_status st = tl_jsonl_open(&r, path, 0, err);
  if (st) return st;
  cJSON *o;
  tl_jl_result res;
  while (!st && (res = tl_jsonl_next(&r, &o, err)) != TL_JL_EOF) {
    if (res == TL_JL_IOERR) st = TL_EIO;
    else if (res == TL_JL_RECORD) {
      st = tl_lme_note(s, o, task, r.line_no);
      if (st) tl_err_set(err, st, "out of memory");
      cJSON_Delete(o);
    }
  }
  tl_jsonl_close(&r);
  if (!st) { /* the emitting pass chooses again, in the same order */
    for (size_t i = 0; i < s->n; i++) free(s->chosen[i]);
    s->n = 0;
    tl_strmap_release(&s->filters);
    tl_strmap_init(&s->filters);
  }
  s->noted = 1;
  return st;
}

tl_status tl_lme_finish(tl_lme_state *s, const char *path, tl_inlog *log, tl_err *err) {
  for (size_t i = 0; i < s->nothers; i++) {
    if (s->oused[i]) continue;
    const char *sep = strchr(s->okey[i], '\x1f');
    const cJSON *f = s->others[i]->child;
    tl_status st = tl_inlog_report(log, TL_IN_MISSING_FIELD, path, s->oline[i],
                                   "doc %s of task '%.*s': a line under filter '%s' but none under the filter read "
                                   "(the first in the file): not imported",
                                   sep + 1, (int)(sep - s->okey[i]), s->okey[i], f ? f->string : "");
    if (st == TL_EINPUT) return tl_err_set(err, st, "%s:%ld: doc %s has no line under the filter read (strict input)",
                                           path, s->oline[i], sep + 1);
    if (st) return st;
  }
  return TL_OK;
}

/* The item id of sample o: the dataset's own (doc.id, doc.question_id, or the question_id of a
 * VQA task's metric object when lmms-eval 0.4 dropped the doc), else docid; idbuf[64] holds a
 * numeric one. */
static const char *sample_id(const cJSON *o, const cJSON *doc, const char *docid, char idbuf[64]) {
  const cJSON *did = cJSON_IsObject(doc) ? cJSON_GetObjectItemCaseSensitive(doc, "id") : NULL;
  if (!did && cJSON_IsObject(doc)) did = cJSON_GetObjectItemCaseSensitive(doc, "question_id");
  /* lmms-eval 0.4 drops the doc; a VQA task's metric object (its "submission") still names the
   * question: the id VQA's annotations key it by */
  for (const cJSON *m = o->child; !did && m; m = m->next)
    if (cJSON_IsObject(m) && strcmp(m->string, "doc") != 0 && strcmp(m->string, "arguments") != 0)
      did = cJSON_GetObjectItemCaseSensitive(m, "question_id");
  if (cJSON_IsString(did) && did->valuestring[0]) return did->valuestring;
  if (tl_json_is_int(did, -9007199254740992.0, 9007199254740992.0)) {
    snprintf(idbuf, 64, "%.0f", did->valuedouble);
    return idbuf;
  }
  return docid;
}

/* The prompt of sample o (the first request's arg_0, else "input") and, in choices, every
 * request's arg_1 (the choice texts of log-likelihood requests). */
static const char *sample_prompt(const cJSON *o, cJSON *choices) {
  const char *prompt = NULL;
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(o, "arguments");
  for (const cJSON *a = cJSON_IsObject(args) ? args->child : NULL; a; a = a->next) {
    const cJSON *a0 = cJSON_GetObjectItemCaseSensitive(a, "arg_0"), *a1 = cJSON_GetObjectItemCaseSensitive(a, "arg_1");
    if (!prompt && cJSON_IsString(a0)) prompt = a0->valuestring;
    if (cJSON_IsString(a1)) cJSON_AddItemToArray(choices, cJSON_CreateString(a1->valuestring));
  }
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(o, "input");
  if (!prompt && cJSON_IsString(in)) prompt = in->valuestring;
  return prompt;
}

/* Fills extra with the sample's doc_id, filter, what the task's other filters made of it (once
 * noted), target and its metrics (when more than the verdict); *vname and *verdict: the
 * harness's verdict (verdict_of), vname NULL when none. */
static void sample_extra(tl_lme_state *s, const cJSON *o, const char *task, const char *docid, const char *filter,
                         cJSON *extra, const char **vname, double *verdict) {
  const cJSON *target = cJSON_GetObjectItemCaseSensitive(o, "target");
  cJSON *mets = cJSON_CreateObject();
  *verdict = 0;
  *vname = verdict_of(o, verdict);
  for (const cJSON *m = o->child; m; m = m->next)
    if (!is_known(m->string)) cJSON_AddItemToObject(mets, m->string, cJSON_Duplicate(m, 1));
  cJSON_AddStringToObject(extra, "doc_id", docid);
  cJSON_AddStringToObject(extra, "filter", filter);
  if (s->noted) { /* what the task's other filters made of this doc */
    char *key = doc_key(task, docid);
    size_t oi;
    if (key && tl_strmap_get(&s->odocs, key, &oi)) {
      cJSON_AddItemToObject(extra, "filters", cJSON_Duplicate(s->others[oi], 1));
      s->oused[oi] = 1;
    }
    free(key);
  }
  if (target) cJSON_AddItemToObject(extra, "target", cJSON_Duplicate(target, 1));
  if (cJSON_GetArraySize(mets) > 1 || (cJSON_GetArraySize(mets) == 1 && !*vname)) {
    cJSON_AddItemToObject(extra, "metrics", mets);
    mets = NULL;
  }
  cJSON_Delete(mets);
}

/* Whether the sample's replies are log-likelihoods: then *lls and *grs (new arrays, the
 * caller's) hold them and their is_greedy flags (from resps, else filtered_resps). */
static int sample_loglik(const cJSON *resps, const cJSON *fresps, cJSON **lls, cJSON **grs) {
  *lls = cJSON_CreateArray();
  *grs = cJSON_CreateArray();
  int is_ll = resps ? loglik_list(resps, 1, *lls, *grs) : 0;
  if (!is_ll && !resps) is_ll = loglik_list(fresps, 0, *lls, *grs);
  if (!is_ll && resps) { /* resps of another shape: maybe filtered_resps is a loglik list */
    cJSON_Delete(*lls);
    cJSON_Delete(*grs);
    *lls = cJSON_CreateArray();
    *grs = cJSON_CreateArray();
    if (cJSON_IsArray(resps) && cJSON_IsArray(resps->child) && cJSON_IsArray(resps->child->child))
      is_ll = loglik_list(fresps, 0, *lls, *grs);
  }
  return is_ll;
}

/* The generation item's "answer" (the target; a doc's other answer kept as "doc_answer") and
 * "question" (when absent: the doc's "problem", else the prompt). */
static void gen_item(cJSON *item, const cJSON *target, const char *prompt) {
  cJSON *ans = cJSON_GetObjectItemCaseSensitive(item, "answer");
  if (ans && !cJSON_Compare(ans, target, 1) && !cJSON_GetObjectItemCaseSensitive(item, "doc_answer")) {
    cJSON_DetachItemViaPointer(item, ans);
    cJSON_AddItemToObject(item, "doc_answer", ans);
    cJSON_AddItemToObject(item, "answer", cJSON_Duplicate(target, 1));
  }
  if (cJSON_GetObjectItemCaseSensitive(item, "question")) return;
  const cJSON *pb = cJSON_GetObjectItemCaseSensitive(item, "problem");
  if (cJSON_IsString(pb)) cJSON_AddStringToObject(item, "question", pb->valuestring);
  else if (prompt) cJSON_AddStringToObject(item, "question", prompt);
}

/* The item of the sample (the doc, else {} when there is a target; NULL when neither), with
 * "id", "answer" (the target) and, for log-likelihood requests, "choices" added when absent.
 * For a generation request (generate_until, scored against the target: the gen module's items)
 * the answer is the target even when the doc has another "answer" (kept as "doc_answer"), and
 * "question", when the doc has none, is the doc's "problem" (MATH's), else the prompt.
 * Choices in the Hugging Face datasets' object form ({"text": [...], "label": [...]}, ARC's) are
 * given as the generic modules read them: "choices" the texts, the object kept as
 * "choices_hf". */
static cJSON *sample_item(const cJSON *doc, const cJSON *target, const char *id, int is_ll, const cJSON *choices,
                          const char *prompt) {
  cJSON *item = NULL;
  if (cJSON_IsObject(doc)) item = cJSON_Duplicate(doc, 1);
  else if (target) item = cJSON_CreateObject();
  if (item) {
    if (!cJSON_GetObjectItemCaseSensitive(item, "id")) cJSON_AddStringToObject(item, "id", id);
    if (!is_ll && target) gen_item(item, target, prompt);
    if (target && !cJSON_GetObjectItemCaseSensitive(item, "answer"))
      cJSON_AddItemToObject(item, "answer", cJSON_Duplicate(target, 1));
    if (is_ll && cJSON_GetArraySize(choices) && !cJSON_GetObjectItemCaseSensitive(item, "choices"))
      cJSON_AddItemToObject(item, "choices", cJSON_Duplicate(choices, 1));
    cJSON *hf = cJSON_GetObjectItemCaseSensitive(item, "choices");
    const cJSON *text = cJSON_IsObject(hf) ? cJSON_GetObjectItemCaseSensitive(hf, "text") : NULL;
    if (cJSON_IsArray(text)) {
      cJSON *texts = cJSON_Duplicate(text, 1);
      cJSON_DetachItemViaPointer(item, hf);
      cJSON_AddItemToObject(item, "choices_hf", hf);
      if (texts) cJSON_AddItemToObject(item, "choices", texts);
    }
  }
  return item;
}

/* Emits r for a log-likelihood sample: response = the text of the most likely choice (else its
 * index), extracted = that index; *lls, *grs and (when it names every choice) *choices move
 * into extra and are set NULL. */
static tl_status emit_loglik(tl_imp_rec *r, cJSON *extra, cJSON **lls, cJSON **grs, cJSON **choices,
                             tl_imp_emit emit, void *ctx, tl_err *err) {
  const int n = cJSON_GetArraySize(*lls);
  int best = 0;
  for (int i = 1; i < n; i++)
    if (cJSON_GetArrayItem(*lls, i)->valuedouble > cJSON_GetArrayItem(*lls, best)->valuedouble) best = i;
  char ex[32];
  snprintf(ex, sizeof ex, "%d", best);
  cJSON_AddItemToObject(extra, "loglik", *lls);
  cJSON_AddItemToObject(extra, "is_greedy", *grs);
  *lls = *grs = NULL;
  if (cJSON_GetArraySize(*choices) == n) {
    cJSON_AddItemToObject(extra, "choices", *choices);
    r->response = cJSON_GetArrayItem(*choices, best)->valuestring;
    *choices = NULL;
  } else {
    r->response = ex; /* no choice texts saved (lmms-eval 0.4 drops "arguments"): the index */
  }
  r->extracted = ex;
  r->seed = 0;
  return emit(ctx, r, err);
}

/* Emits r once per repeat of a generation sample (seed = the repeat's index; the harness's
 * verdict, extraction and the item on the first only); a reply that is not text is reported. */
static tl_status emit_generations(tl_imp_rec *r, cJSON *extra, const cJSON *resps, const cJSON *fresps,
                                  const char *docid, const char *path, tl_inlog *log, tl_imp_emit emit, void *ctx,
                                  tl_err *err) {
  char msg[400];
  tl_status st = TL_OK;
  /* the raw texts: resps[0] = [text, ...repeats]; lmms-eval unwraps single lists */
  const cJSON *reps = resps ? resps : fresps;
  if (cJSON_IsArray(reps) && cJSON_IsArray(reps->child)) reps = reps->child;
  const cJSON *fl = first_leaf(fresps);
  r->extracted = cJSON_IsString(fl) ? fl->valuestring : NULL;
  int nrep = cJSON_IsArray(reps) ? cJSON_GetArraySize(reps) : 1;
  if (!resps && cJSON_IsArray(reps)) nrep = 1; /* filtered_resps: one per request, not repeats */
  if (nrep == 0 || (!cJSON_IsArray(reps) && !cJSON_IsString(reps) && !cJSON_IsNull(reps))) {
    snprintf(msg, sizeof msg, "doc %s: '%s' holds no text", docid, resps ? "resps" : "filtered_resps");
    st = bad(log, TL_IN_BAD_FIELD, path, r->line, r->where, err, msg);
  }
  if (nrep > 1) cJSON_AddNumberToObject(extra, "repeats", nrep);
  for (int k = 0; k < nrep && !st; k++) {
    const cJSON *t = cJSON_IsArray(reps) ? cJSON_GetArrayItem(reps, k) : reps;
    if (!cJSON_IsString(t) && !cJSON_IsNull(t)) {
      snprintf(msg, sizeof msg, "doc %s: response %d is not a string", docid, k);
      st = bad(log, TL_IN_BAD_FIELD, path, r->line, r->where, err, msg);
      break;
    }
    r->response = cJSON_IsString(t) ? t->valuestring : NULL;
    r->seed = k;
    if (k > 0) { /* the harness's verdict is on the doc (its filter over every repeat) */
      r->has_verdict = 0;
      r->extracted = NULL;
      r->item = NULL;
    }
    st = emit(ctx, r, err);
  }
  return st;
}

tl_status tl_lme_sample(tl_lme_state *s, const cJSON *o, const char *path, const char *where, long line,
                        const char *task, const char *model, tl_inlog *log, tl_imp_emit emit, void *ctx,
                        tl_err *err) {
  char msg[400];
  if (!cJSON_IsObject(o)) return bad(log, TL_IN_BAD_FIELD, path, line, where, err, "a sample is not an object");
  const cJSON *jd = cJSON_GetObjectItemCaseSensitive(o, "doc_id");
  char docid[64];
  if (!doc_id_text(o, docid, sizeof docid))
    return bad(log, jd ? TL_IN_BAD_FIELD : TL_IN_MISSING_FIELD, path, line, where, err,
               jd ? "'doc_id' is not an integer" : "no 'doc_id' (not a sample line)");
  const cJSON *jf = cJSON_GetObjectItemCaseSensitive(o, "filter");
  if (jf && !cJSON_IsString(jf)) return bad(log, TL_IN_BAD_FIELD, path, line, where, err, "'filter' is not a string");
  const char *filter = jf ? jf->valuestring : "none", *chosen = filter;
  if (!filter_ok(s, task ? task : "", filter, &chosen)) {
    if (s->noted) return TL_OK; /* folded into the chosen filter's record (tl_lme_note) */
    snprintf(msg, sizeof msg,
             "doc %s under filter '%s' not imported: task '%s' is read under filter '%s' (the first in the file)",
             docid, filter, task ? task : "", chosen);
    return bad(log, TL_IN_DUPLICATE, path, line, where, err, msg);
  }
  const cJSON *resps = cJSON_GetObjectItemCaseSensitive(o, "resps");
  const cJSON *fresps = cJSON_GetObjectItemCaseSensitive(o, "filtered_resps");
  if (!resps && !fresps) return bad(log, TL_IN_MISSING_FIELD, path, line, where, err, "no 'resps' nor 'filtered_resps'");
  const cJSON *doc = cJSON_GetObjectItemCaseSensitive(o, "doc");
  const cJSON *target = cJSON_GetObjectItemCaseSensitive(o, "target");
  char idbuf[64];
  const char *id = sample_id(o, doc, docid, idbuf);
  cJSON *choices = cJSON_CreateArray();
  const char *prompt = sample_prompt(o, choices);
  cJSON *extra = cJSON_CreateObject(), *lls, *grs;
  double verdict;
  const char *vname;
  sample_extra(s, o, task, docid, filter, extra, &vname, &verdict);
  int is_ll = sample_loglik(resps, fresps, &lls, &grs);
  cJSON *item = sample_item(doc, target, id, is_ll, choices, prompt);
  tl_imp_rec r;
  memset(&r, 0, sizeof r);
  r.where = where;
  r.line = line;
  r.task = task;
  r.id = id;
  r.model = model;
  r.turn_id = -1;
  r.prompt = prompt;
  r.item = item;
  r.verdict_metric = vname;
  r.verdict = verdict;
  r.has_verdict = vname != NULL;
  r.extra = extra;
  tl_status st = is_ll ? emit_loglik(&r, extra, &lls, &grs, &choices, emit, ctx, err)
                       : emit_generations(&r, extra, resps, fresps, docid, path, log, emit, ctx, err);
  cJSON_Delete(lls);
  cJSON_Delete(grs);
  cJSON_Delete(choices);
  cJSON_Delete(item);
  cJSON_Delete(extra);
  return st;
}

/* ---- the lm-eval files ---- */

typedef struct {
  tl_lme_state s;
  const char *task, *model;
  tl_inlog *log;
  tl_imp_emit emit;
  void *ctx;
} lines_ctx;

static tl_status on_line(void *vc, const cJSON *o, const tl_jsonl *r) {
  lines_ctx *c = vc;
  char where[1200];
  snprintf(where, sizeof where, "%s:%ld", r->path, r->line_no);
  tl_err e = {{0}};
  tl_status st = tl_lme_sample(&c->s, o, r->path, where, r->line_no, c->task, c->model, c->log, c->emit, c->ctx, &e);
  if (st && st != TL_EINPUT) fprintf(stderr, "tally: import: %s\n", e.msg); /* tl_inlog_each has no err out */
  return st;
}

/* The model a results file names. malloc'd or NULL. */
static char *results_model(const cJSON *res) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(res, "model_name");
  if (cJSON_IsString(m) && m->valuestring[0]) return tl_strdup(m->valuestring);
  const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(res, "config");
  m = cJSON_GetObjectItemCaseSensitive(cfg, "model_args");
  if (cJSON_IsString(m)) return tl_lme_model_from_args(m->valuestring);
  return NULL;
}

static tl_status read_lines(const char *path, const char *task, const char *model, tl_inlog *log, tl_imp_emit emit,
                            void *ctx, tl_err *err) {
  lines_ctx c = {.task = task, .model = model, .log = log, .emit = emit, .ctx = ctx};
  tl_lme_init(&c.s, "lm-eval");
  tl_jsonl r;
  tl_status st = tl_lme_note_file(&c.s, path, task, err);
  if (!st) st = tl_jsonl_open(&r, path, 0, err);
  if (!st) {
    st = tl_inlog_each(log, &r, "samples", on_line, &c, err);
    tl_jsonl_close(&r);
  }
  if (!st) st = tl_lme_finish(&c.s, path, log, err);
  tl_lme_release(&c.s);
  return st;
}

/* "DIR/samples_T_DATE.jsonl" -> "DIR/results_DATE.json" (NULL: not that name). */
static char *sibling(const char *path, const char *from, const char *to, const char *task) {
  const char *b = base_name(path);
  size_t dl = (size_t)(b - path), n = strlen(b);
  tl_buf o;
  tl_buf_init(&o);
  if (!strcmp(from, "samples") && task && !strncmp(b, "samples_", 8) && n > 8 + strlen(task) + 7 &&
      !strncmp(b + 8, task, strlen(task)) && b[8 + strlen(task)] == '_') {
    const char *date = b + 8 + strlen(task) + 1;
    tl_buf_printf(&o, "%.*sresults_%.*s.json", (int)dl, path, (int)(n - (size_t)(date - b) - 6), date);
  } else if (!strcmp(from, "results") && !strncmp(b, "results_", 8) && n > 13) {
    tl_buf_printf(&o, "%.*ssamples_%s_%.*s.jsonl", (int)dl, path, to, (int)(n - 13), b + 8);
  } else return NULL;
  return tl_buf_detach(&o);
}

static tl_status read_results(const char *path, tl_inlog *log, tl_imp_emit emit, void *ctx, tl_err *err) {
  cJSON *res = NULL;
  tl_status st = tl_lme_read_json(path, &res, err);
  if (st) return st;
  char *model = results_model(res);
  const cJSON *samples = cJSON_GetObjectItemCaseSensitive(res, "samples");
  if (cJSON_IsObject(samples)) {
    tl_lme_state s;
    tl_lme_init(&s, "lm-eval");
    long line = 0;
    for (const cJSON *t = samples->child; t && !st; t = t->next)
      for (const cJSON *o = cJSON_IsArray(t) ? t->child : NULL; o && !st; o = o->next)
        if ((st = tl_lme_note(&s, o, t->string, ++line)) != TL_OK) tl_err_set(err, st, "out of memory");
    for (size_t i = 0; i < s.n; i++) free(s.chosen[i]); /* the emitting pass chooses again */
    s.n = 0;
    tl_strmap_release(&s.filters);
    tl_strmap_init(&s.filters);
    line = 0;
    for (const cJSON *t = samples->child; t && !st; t = t->next) {
      int i = 0;
      for (const cJSON *o = cJSON_IsArray(t) ? t->child : NULL; o && !st; o = o->next, i++) {
        char where[1200];
        snprintf(where, sizeof where, "%s: samples.%s[%d]", path, t->string, i);
        st = tl_lme_sample(&s, o, path, where, ++line, t->string, model, log, emit, ctx, err);
      }
    }
    tl_lme_release(&s);
    if (!st) st = tl_lme_finish(&s, path, log, err);
    if (!st) st = tl_inlog_lines(log, path, "samples", line);
    if (!st && line == 0) st = tl_inlog_report(log, TL_IN_EMPTY_FILE, path, 0, "no samples in this results file");
  } else {
    /* no samples inside: the samples files lm-eval wrote beside it, task by task */
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(res, "results");
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(res, "group_subtasks");
    int ntask = 0;
    for (const cJSON *t = cJSON_IsObject(rs) ? rs->child : NULL; t && !st; t = t->next) {
      const cJSON *g = cJSON_GetObjectItemCaseSensitive(groups, t->string);
      if (cJSON_GetArraySize(g) > 0) continue; /* a group: its subtasks have the samples */
      char *sp = sibling(path, "results", t->string, NULL);
      struct stat sb;
      if (sp && stat(sp, &sb) == 0) {
        ntask++;
        st = read_lines(sp, t->string, model, log, emit, ctx, err);
      } else {
        st = tl_inlog_report(log, TL_IN_MISSING_FIELD, path, 0,
                             "task '%s': no \"samples\" in this file and no %s beside it (lm-eval --log_samples)",
                             t->string, sp ? base_name(sp) : "samples file");
        if (st == TL_EINPUT) tl_err_set(err, st, "%s: task '%s' has no samples (strict input)", path, t->string);
      }
      free(sp);
    }
    if (!st && !ntask && !cJSON_GetArraySize(rs))
      st = tl_inlog_report(log, TL_IN_EMPTY_FILE, path, 0, "no samples and no tasks in this results file");
  }
  free(model);
  cJSON_Delete(res);
  return st;
}

static int ends_with(const char *s, const char *e) {
  size_t n = strlen(s), m = strlen(e);
  return n >= m && !strcmp(s + n - m, e);
}

static tl_status lm_read(const char *path, tl_inlog *log, tl_imp_emit emit, void *ctx, tl_err *err) {
  if (!ends_with(path, ".jsonl")) {
    /* a results file: one JSON object whose first key is "results" */
    FILE *f = fopen(path, "rb");
    if (!f) return tl_err_set(err, TL_EIO, "cannot open '%s': %s", path, strerror(errno));
    int ch;
    while ((ch = fgetc(f)) != EOF && isspace(ch)) {
    }
    int ch2;
    while ((ch2 = fgetc(f)) != EOF && isspace(ch2)) {
    }
    fclose(f);
    if (ch == '{' && ch2 == '"') return read_results(path, log, emit, ctx, err);
  }
  char *task = tl_lme_task_from_name(path);
  char *rp = sibling(path, "samples", NULL, task), *model = NULL;
  cJSON *res = NULL;
  tl_err e2;
  struct stat sb;
  if (rp && stat(rp, &sb) == 0 && tl_lme_read_json(rp, &res, &e2) == TL_OK) model = results_model(res);
  cJSON_Delete(res);
  tl_status st = read_lines(path, task, model, log, emit, ctx, err);
  free(model);
  free(rp);
  free(task);
  return st;
}

/* The top-level keys of the first line of head, parsed when the line is whole; NULL otherwise. */
static cJSON *first_line(const unsigned char *head, size_t n) {
  const unsigned char *nl = memchr(head, '\n', n);
  if (!nl && n >= TL_IMPORT_HEAD) return NULL;
  size_t len = nl ? (size_t)(nl - head) : n;
  return cJSON_ParseWithLength((const char *)head, len);
}

static int mem_has(const unsigned char *h, size_t n, const char *needle) {
  const size_t m = strlen(needle);
  for (size_t i = 0; i + m <= n; i++)
    if (h[i] == (unsigned char)needle[0] && !memcmp(h + i, needle, m)) return 1;
  return 0;
}

static int has(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k) != NULL; }

static int lm_detect(const char *path, int is_dir, const unsigned char *head, size_t n) {
  if (is_dir || n == 0) return 0;
  size_t i = 0;
  while (i < n && isspace(head[i])) i++;
  if (i == n || head[i] != '{') return 0;
  const char *b = base_name(path);
  cJSON *l = first_line(head + i, n - i);
  if (cJSON_IsObject(l)) {
    const int yes = has(l, "doc_id") && has(l, "filter") &&
                    (has(l, "doc_hash") || has(l, "prompt_hash") || has(l, "target_hash")) && !has(l, "input");
    cJSON_Delete(l);
    return yes;
  }
  cJSON_Delete(l);
  if (!memchr(head + i, '\n', n - i)) /* one line longer than the head: a samples line by its name */
    return !strncmp(b, "samples_", 8) && ends_with(b, ".jsonl") && n - i > 10 && !memcmp(head + i, "{\"doc_id\"", 9);
  /* a results file: {"results": ... (pretty-printed), not lmms-eval's DATE_results.json */
  size_t j = i + 1;
  while (j < n && isspace(head[j])) j++;
  if (n - j < 10 || memcmp(head + j, "\"results\"", 9) != 0 || isdigit((unsigned char)b[0])) return 0;
  return !strncmp(b, "results", 7) || mem_has(head, n, "\"lm_eval_version\"") || mem_has(head, n, "\"n-samples\"");
}

const tl_importer tl_imp_lmeval = {
    "lm-eval",
    "lm-evaluation-harness --log_samples: samples_<task>_<date>.jsonl, or results_<date>.json (its \"samples\", "
    "else the samples files beside it)",
    lm_detect, lm_read};
