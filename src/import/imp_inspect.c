/* imp_inspect.c - inspect_ai logs (../shared/spec/harness-formats.md, "inspect_ai"): the `.json`
 * log (one object: version, status, eval, plan, results, stats, samples[]) and the `.eval` log (a
 * ZIP holding header.json and samples/<id>_epoch_<n>.json, read with zip.c).
 *
 * One record per sample and epoch: id = the sample id as text, seed = epoch - 1, model =
 * eval.model, task = eval.task, response = output.completion (else the first output choice's
 * message text, else the last assistant message's: a content list gives its text parts joined by
 * newlines), prompt = the input (a string as is; a message list as its JSON text), item = {"id",
 * "question": the input's text (user messages joined by a blank line), "choices", "answer": the
 * target (a string, or a list kept as a list), ...the sample's metadata}, verdict = the first
 * scorer's value (C 1, I 0, P 0.5, N 0, true/false, numbers as they are) named by the scorer,
 * extracted = its answer. extra: the scorer's explanation (when it is not the response itself: a
 * model-graded scorer's reasoning), its metadata, its value when it is no number (a dict), the
 * other scorers' values, the sample's error.
 *
 * Strings "attachment://<hash>" anywhere in the sample but its events are replaced by the text
 * of the sample's attachments; one whose hash is not there is reported (bad_field) and kept.
 * A sample with `error` set is emitted with a null response (the harness got no answer; tally
 * scores it as a null reply) and its error in extra.error: it is the run's outcome, not bad
 * input, so it is not reported. A log without samples (a header only) is refused. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/import.h"
#include "tally/jsonl.h"
#include "tally/str.h"
#include "zip.h"

#define INSPECT_MAX_JSON ((size_t)4 << 30)    /* a .json log */
#define INSPECT_MAX_ENTRY ((uint64_t)1 << 30) /* one entry of a .eval log */

typedef struct {
  const char *path;
  tl_inlog *log;
  tl_imp_emit emit;
  void *ctx;
  const char *task, *model;
  long rec;      /* records met, from 1 */
  long emitted;
} insp;

/* ---- text helpers ---- */

static const cJSON *obj_get(const cJSON *o, const char *k) {
  return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}
static const cJSON *as_arr(const cJSON *o) { return cJSON_IsArray(o) ? o : NULL; }
static const cJSON *as_obj(const cJSON *o) { return cJSON_IsObject(o) ? o : NULL; }
static const char *str_get(const cJSON *o, const char *k) {
  const cJSON *v = obj_get(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The text of a message content: a string, or the "text" parts of a list joined by newlines
 * (reasoning, images and tool parts left out). NULL when there is none; caller frees. */
static char *content_text(const cJSON *c) {
  if (cJSON_IsString(c)) return tl_strdup(c->valuestring);
  if (!cJSON_IsArray(c)) return NULL;
  tl_buf b;
  tl_buf_init(&b);
  int parts = 0;
  const cJSON *p;
  cJSON_ArrayForEach(p, c) {
    const char *type = str_get(p, "type"), *text = str_get(p, "text");
    if (!text || (type && strcmp(type, "text") != 0)) continue;
    if ((parts++ && tl_buf_puts(&b, "\n") != TL_OK) || tl_buf_puts(&b, text) != TL_OK) {
      tl_buf_release(&b);
      return NULL;
    }
  }
  if (!parts) {
    tl_buf_release(&b);
    return NULL;
  }
  return tl_buf_detach(&b);
}

/* The sample id as text: a string as is, an integer without decimals. NULL: none. */
static char *id_text(const cJSON *id) {
  if (cJSON_IsString(id)) return tl_strdup(id->valuestring);
  if (!cJSON_IsNumber(id)) return NULL;
  char b[64];
  double v = id->valuedouble;
  if (v == floor(v) && fabs(v) < 9e15)
    snprintf(b, sizeof b, "%.0f", v);
  else
    snprintf(b, sizeof b, "%.17g", v);
  return tl_strdup(b);
}

/* ---- attachments ---- */

typedef struct {
  insp *in;
  const cJSON *att;
  const char *where;
  long line;
  tl_status st;
} att_ctx;

static void resolve(att_ctx *a, cJSON *node) {
  for (cJSON *c = node ? node->child : NULL; c && a->st == TL_OK; c = c->next) {
    if (cJSON_IsObject(node) && c->string &&
        (strcmp(c->string, "events") == 0 || strcmp(c->string, "attachments") == 0))
      continue;
    if (cJSON_IsString(c) && strncmp(c->valuestring, "attachment://", 13) == 0) {
      const char *hash = c->valuestring + 13;
      const char *text = str_get(a->att, hash);
      if (text) {
        if (!cJSON_SetValuestring(c, text)) a->st = TL_ENOMEM;
      } else {
        a->st = tl_inlog_report(a->in->log, TL_IN_BAD_FIELD, a->in->path, a->line,
                                "%s: 'attachment://%s' is not in the sample's attachments: kept as it is", a->where,
                                hash);
      }
    } else if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
      resolve(a, c);
    }
  }
}

/* ---- scores ---- */

/* inspect's value_to_float: 1 yes, 0 no number (*v unset). */
static int score_number(const cJSON *val, double *v) {
  if (cJSON_IsNumber(val)) return *v = val->valuedouble, 1;
  if (cJSON_IsBool(val)) return *v = cJSON_IsTrue(val) ? 1.0 : 0.0, 1;
  if (!cJSON_IsString(val)) return 0;
  const char *s = val->valuestring;
  static const struct {
    const char *s;
    double v;
  } named[] = {{"C", 1}, {"I", 0}, {"P", 0.5}, {"N", 0}, {"yes", 1}, {"no", 0}, {"true", 1}, {"false", 0}};
  for (size_t i = 0; i < sizeof named / sizeof *named; i++)
    if (strcmp(s, named[i].s) == 0) return *v = named[i].v, 1;
  char *end;
  double d = strtod(s, &end);
  if (end != s && *end == '\0' && isfinite(d)) return *v = d, 1;
  return 0;
}

/* ---- one sample ---- */

static tl_status add_ref(cJSON *o, const char *k, const cJSON *v) {
  cJSON *d = cJSON_Duplicate(v, 1);
  if (!d || !cJSON_AddItemToObject(o, k, d)) {
    cJSON_Delete(d);
    return TL_ENOMEM;
  }
  return TL_OK;
}

/* The question: the input string, or its user messages' text joined by a blank line. */
static char *input_text(const cJSON *input) {
  if (cJSON_IsString(input)) return tl_strdup(input->valuestring);
  if (!cJSON_IsArray(input)) return NULL;
  tl_buf b;
  tl_buf_init(&b);
  int n = 0;
  const cJSON *m;
  cJSON_ArrayForEach(m, input) {
    const char *role = str_get(m, "role");
    if (role && strcmp(role, "user") != 0) continue;
    char *t = content_text(obj_get(m, "content"));
    if (!t) continue;
    tl_status st = n++ ? tl_buf_puts(&b, "\n\n") : TL_OK;
    if (st == TL_OK) st = tl_buf_puts(&b, t);
    free(t);
    if (st != TL_OK) {
      tl_buf_release(&b);
      return NULL;
    }
  }
  if (!n) {
    tl_buf_release(&b);
    return NULL;
  }
  return tl_buf_detach(&b);
}

/* The response: output.completion, else the first output choice's text, else the last assistant
 * message's. *found 0 when the sample has none of them. */
static char *response_text(const cJSON *s, int *found) {
  const cJSON *out = obj_get(s, "output");
  *found = 1;
  const cJSON *comp = obj_get(out, "completion");
  if (cJSON_IsString(comp)) return tl_strdup(comp->valuestring);
  const cJSON *ch = obj_get(out, "choices");
  if (cJSON_IsArray(ch) && cJSON_GetArraySize(ch) > 0) {
    char *t = content_text(obj_get(obj_get(cJSON_GetArrayItem(ch, 0), "message"), "content"));
    if (t) return t;
  }
  const cJSON *msgs = obj_get(s, "messages"), *last = NULL, *m;
  cJSON_ArrayForEach(m, as_arr(msgs)) {
    const char *role = str_get(m, "role");
    if (role && strcmp(role, "assistant") == 0) last = m;
  }
  if (last) {
    char *t = content_text(obj_get(last, "content"));
    if (t) return t;
    return tl_strdup(""); /* an assistant turn with no text (tool calls only) */
  }
  *found = 0;
  return NULL;
}

/* Adds to item the sample's "choices", its target as "answer" (unless null) and each metadata
 * member item does not hold yet. TL_ENOMEM only. */
static tl_status item_fields(const cJSON *s, cJSON *item) {
  tl_status st = TL_OK;
  const cJSON *choices = obj_get(s, "choices"), *target = obj_get(s, "target");
  if (cJSON_IsArray(choices) && (st = add_ref(item, "choices", choices)) != TL_OK) return st;
  if (target && !cJSON_IsNull(target) && (st = add_ref(item, "answer", target)) != TL_OK) return st;
  const cJSON *md;
  cJSON_ArrayForEach(md, as_obj(obj_get(s, "metadata"))) {
    if (md->string && !obj_get(item, md->string) && (st = add_ref(item, md->string, md)) != TL_OK) return st;
  }
  return TL_OK;
}

/* The harness's verdict from the sample's first score (its name, its value when a number, its
 * answer as r->extracted); in extra: a non-numeric value, the explanation (unless it is the
 * response), the score's metadata and the other scores' values. TL_ENOMEM only. */
static tl_status add_scores(const cJSON *s, tl_imp_rec *r, cJSON *extra) {
  tl_status st = TL_OK;
  const cJSON *scores = obj_get(s, "scores");
  const cJSON *first = cJSON_IsObject(scores) ? scores->child : NULL;
  if (!first || !first->string) return TL_OK;
  const cJSON *val = obj_get(first, "value");
  r->verdict_metric = first->string;
  r->has_verdict = score_number(val, &r->verdict);
  if (!r->has_verdict && val && (st = add_ref(extra, "score_value", val)) != TL_OK) return st;
  r->extracted = str_get(first, "answer");
  const char *expl = str_get(first, "explanation");
  if (expl && (!r->response || strcmp(expl, r->response) != 0) &&
      !cJSON_AddStringToObject(extra, "explanation", expl))
    return TL_ENOMEM;
  const cJSON *smd = obj_get(first, "metadata");
  if (cJSON_IsObject(smd) && smd->child && (st = add_ref(extra, "score_metadata", smd)) != TL_OK) return st;
  if (first->next) {
    cJSON *others = cJSON_AddObjectToObject(extra, "scores");
    if (!others) return TL_ENOMEM;
    for (const cJSON *o = first->next; o; o = o->next)
      if (o->string && (st = add_ref(others, o->string, obj_get(o, "value"))) != TL_OK) return st;
  }
  return TL_OK;
}

/* Maps one parsed sample (modified in place: attachments resolved) and emits it. */
static tl_status do_sample(insp *in, cJSON *s, const char *entry, tl_err *err) {
  long line = ++in->rec;
  char where[512];
  if (entry)
    snprintf(where, sizeof where, "%s: entry '%s'", in->path, entry);
  else
    snprintf(where, sizeof where, "%s: sample %ld", in->path, line);
  if (!cJSON_IsObject(s))
    return tl_inlog_report(in->log, TL_IN_BAD_FIELD, in->path, line, "%s: not a JSON object", where);
  char *id = id_text(obj_get(s, "id"));
  const cJSON *ep = obj_get(s, "epoch");
  int epoch = cJSON_IsNumber(ep) && ep->valuedouble >= 1 && ep->valuedouble < 1e9 ? (int)ep->valuedouble : 1;
  if (!id)
    return tl_inlog_report(in->log, TL_IN_MISSING_FIELD, in->path, line, "%s: no sample 'id' (a string or a number)",
                           where);
  snprintf(where, sizeof where, "%s: sample '%s' epoch %d", in->path, id, epoch);

  tl_status st = TL_OK;
  char *question = NULL, *response = NULL, *prompt_json = NULL;
  cJSON *item = NULL, *extra = NULL;
  att_ctx a = {in, obj_get(s, "attachments"), where, line, TL_OK};
  resolve(&a, s);
  if ((st = a.st) != TL_OK) goto done;

  const cJSON *input = obj_get(s, "input");
  question = input_text(input);
  const char *prompt = cJSON_IsString(input) ? input->valuestring : NULL;
  if (cJSON_IsArray(input)) prompt = prompt_json = cJSON_PrintUnformatted(input);
  if (!question && (st = tl_inlog_report(in->log, TL_IN_MISSING_FIELD, in->path, line,
                                         "%s: no 'input' text (a string or user messages)", where)) != TL_OK)
    goto done;

  extra = cJSON_CreateObject();
  item = cJSON_CreateObject();
  if (!extra || !item || !cJSON_AddStringToObject(item, "id", id) ||
      (question && !cJSON_AddStringToObject(item, "question", question))) {
    st = TL_ENOMEM;
    goto done;
  }
  if ((st = item_fields(s, item)) != TL_OK) goto done;

  const cJSON *error = obj_get(s, "error");
  int errored = error && !cJSON_IsNull(error);
  if (errored) {
    const char *msg = cJSON_IsString(error) ? error->valuestring : str_get(error, "message");
    if (msg ? !cJSON_AddStringToObject(extra, "error", msg) : (st = add_ref(extra, "error", error)) != TL_OK) {
      st = TL_ENOMEM;
      goto done;
    }
  } else {
    int found;
    response = response_text(s, &found);
    if (!found && (st = tl_inlog_report(in->log, TL_IN_MISSING_FIELD, in->path, line,
                                        "%s: no output.completion, output choice or assistant message: a null reply",
                                        where)) != TL_OK)
      goto done;
  }

  tl_imp_rec r = {0};
  r.where = where;
  r.line = line;
  r.task = in->task;
  r.id = id;
  r.model = in->model;
  r.seed = epoch - 1;
  r.turn_id = -1;
  r.stage = 0;
  r.response = response;
  r.prompt = prompt;
  r.item = item;

  if ((st = add_scores(s, &r, extra)) != TL_OK) goto done;
  r.extra = extra->child ? extra : NULL;
  st = in->emit(in->ctx, &r, err);
  if (st == TL_OK) in->emitted++;
done:
  free(id);
  free(question);
  free(response);
  free(prompt_json);
  cJSON_Delete(item);
  cJSON_Delete(extra);
  return st;
}

static void set_eval(insp *in, const cJSON *header) {
  const cJSON *ev = obj_get(header, "eval");
  in->task = str_get(ev, "task");
  in->model = str_get(ev, "model");
}

/* ---- what cJSON takes silently (tl_json_check) ---- */

typedef struct {
  insp *in;
  const char *entry;   /* the .eval entry, or NULL for a whole .json log */
  long line;           /* the entry's record number (.eval) */
  unsigned char *bad;  /* .json: samples[k] had an issue -> bad[k] = 1 (k < nbad) */
  long nbad;
  long issues;
  tl_status st;
} chk_ctx;

/* Reports one duplicate key or \u0000 escape; a sample holding one is skipped like a malformed
 * line (which of the two values cJSON kept is not the harness's business to guess). */
static int on_issue(void *ctx, const tl_json_issue *is) {
  chk_ctx *c = ctx;
  long rec = c->line;
  if (!c->entry) {
    rec = 0;
    if (strncmp(is->path, "samples[", 8) == 0) {
      long k = strtol(is->path + 8, NULL, 10);
      if (k >= 0 && k < c->nbad) c->bad[k] = 1, rec = k + 1;
    }
  }
  c->issues++;
  char where[400];
  if (c->entry)
    snprintf(where, sizeof where, "%s: entry '%s'", c->in->path, c->entry);
  else
    snprintf(where, sizeof where, "%s", c->in->path);
  const char *at = is->path[0] ? is->path : "the top level";
  if (is->kind == TL_JSON_DUP_KEY)
    c->st = tl_inlog_report(c->in->log, TL_IN_DUPLICATE_KEY, c->in->path, rec,
                            "%s: duplicate key '%s' in '%s' at byte %zu%s", where, is->key ? is->key : "", at, is->byte,
                            rec > 0 ? ": the sample is skipped" : "");
  else
    c->st = tl_inlog_report(c->in->log, TL_IN_NUL_ESCAPE, c->in->path, rec,
                            "%s: \\u0000 escape (a NUL character) in '%s' at byte %zu%s", where, at, is->byte,
                            rec > 0 ? ": the sample is skipped" : "");
  return c->st != TL_OK;
}

/* ---- .json ---- */

static tl_status read_json(insp *in, tl_err *err) {
  tl_buf b;
  tl_buf_init(&b);
  tl_status st = tl_file_read(in->path, INSPECT_MAX_JSON, &b, err);
  if (st != TL_OK) {
    tl_buf_release(&b);
    return st;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(b.data, b.len, &end, 0);
  if (!root) {
    size_t at = end && end >= b.data ? (size_t)(end - b.data) : 0;
    tl_buf_release(&b);
    return tl_err_set(err, TL_EINPUT, "'%s': not valid JSON (at byte %zu): not an inspect_ai log", in->path, at);
  }
  if (strlen(b.data) != b.len) {
    tl_buf_release(&b);
    cJSON_Delete(root);
    return tl_err_set(err, TL_EINPUT, "'%s': a NUL byte in the file: not an inspect_ai log", in->path);
  }
  cJSON *samples = cJSON_GetObjectItemCaseSensitive(root, "samples");
  long nsamp = cJSON_IsArray(samples) ? cJSON_GetArraySize(samples) : 0;
  chk_ctx chk = {in, NULL, 0, calloc(nsamp ? (size_t)nsamp : 1, 1), nsamp, 0, TL_OK};
  if (!chk.bad) {
    tl_buf_release(&b);
    cJSON_Delete(root);
    return TL_ENOMEM;
  }
  tl_json_check(b.data, root, on_issue, &chk);
  tl_buf_release(&b);
  if ((st = chk.st) != TL_OK) {
    free(chk.bad);
    cJSON_Delete(root);
    if (err && !err->msg[0]) tl_err_set(err, st, "'%s': bad sample (strict input)", in->path);
    return st;
  }
  set_eval(in, root);
  if (!cJSON_IsArray(samples)) {
    const cJSON *tot = obj_get(obj_get(root, "results"), "total_samples");
    char said[96] = "";
    if (cJSON_IsNumber(tot)) snprintf(said, sizeof said, " (its results count %.0f)", tot->valuedouble);
    st = tl_err_set(err, TL_EINPUT,
                    "'%s': an inspect_ai log without samples%s: a header only; give the full log (the .eval, or "
                    "`inspect log convert --to json` of it)",
                    in->path, said);
    cJSON_Delete(root);
    free(chk.bad);
    return st;
  }
  if (cJSON_GetArraySize(samples) == 0)
    st = tl_inlog_report(in->log, TL_IN_EMPTY_FILE, in->path, 0, "%s: an inspect_ai log with no samples", in->path);
  long k = 0;
  for (cJSON *s = samples->child; s && st == TL_OK; s = s->next, k++) {
    if (k < nsamp && chk.bad[k])
      in->rec++; /* reported */
    else
      st = do_sample(in, s, NULL, err);
  }
  if (st == TL_EINPUT && err && !err->msg[0]) tl_err_set(err, st, "'%s': bad sample (strict input)", in->path);
  free(chk.bad);
  cJSON_Delete(root);
  return st;
}

/* ---- .eval ---- */

static int is_sample_entry(const char *name) {
  size_t n = strlen(name);
  return strncmp(name, "samples/", 8) == 0 && n > 13 && strcmp(name + n - 5, ".json") == 0;
}

static tl_status read_eval(insp *in, tl_err *err) {
  tl_zip z;
  tl_status st = tl_zip_open(&z, in->path, err);
  if (st != TL_OK) {
    tl_zip_close(&z);
    return st;
  }
  cJSON *header = NULL;
  const tl_zip_entry *he = tl_zip_find(&z, "header.json");
  if (!he) he = tl_zip_find(&z, "_journal/start.json");
  if (!he) {
    st = tl_inlog_report(in->log, TL_IN_MISSING_FIELD, in->path, 0,
                         "%s: no header.json or _journal/start.json in the log: task and model unknown", in->path);
  } else {
    unsigned char *data;
    size_t n;
    tl_err sub = {{0}};
    tl_status rs = tl_zip_read(&z, he, INSPECT_MAX_ENTRY, &data, &n, &sub);
    if (rs == TL_OK) {
      header = cJSON_ParseWithLength((const char *)data, n);
      free(data);
      if (!header)
        st = tl_inlog_report(in->log, TL_IN_MALFORMED_JSON, in->path, 0, "%s: entry '%s' is not valid JSON", in->path,
                             he->name);
    } else if (rs == TL_EINPUT) {
      st = tl_inlog_report(in->log, TL_IN_BAD_FIELD, in->path, 0, "%s", sub.msg);
    } else {
      st = rs;
      if (err) *err = sub;
    }
  }
  if (header) set_eval(in, header);
  long nsamples = 0;
  for (size_t i = 0; i < z.n && st == TL_OK; i++) {
    const tl_zip_entry *e = &z.e[i];
    if (!is_sample_entry(e->name)) continue;
    nsamples++;
    unsigned char *data;
    size_t n;
    tl_err sub = {{0}};
    tl_status rs = tl_zip_read(&z, e, INSPECT_MAX_ENTRY, &data, &n, &sub);
    if (rs == TL_EINPUT) {
      st = tl_inlog_report(in->log, TL_IN_BAD_FIELD, in->path, ++in->rec, "%s", sub.msg);
      continue;
    }
    if (rs != TL_OK) {
      st = rs;
      if (err) *err = sub;
      break;
    }
    if (strlen((const char *)data) != n) {
      free(data);
      st = tl_inlog_report(in->log, TL_IN_MALFORMED_JSON, in->path, ++in->rec, "%s: entry '%s' holds a NUL byte",
                           in->path, e->name);
      continue;
    }
    cJSON *s = cJSON_ParseWithLength((const char *)data, n);
    if (!s) {
      free(data);
      st = tl_inlog_report(in->log, TL_IN_MALFORMED_JSON, in->path, ++in->rec, "%s: entry '%s' is not valid JSON",
                           in->path, e->name);
      continue;
    }
    chk_ctx chk = {in, e->name, in->rec + 1, NULL, 0, 0, TL_OK};
    tl_json_check((const char *)data, s, on_issue, &chk);
    free(data);
    if (chk.issues || chk.st != TL_OK) {
      in->rec++;
      st = chk.st;
      cJSON_Delete(s);
      continue;
    }
    st = do_sample(in, s, e->name, err);
    cJSON_Delete(s);
  }
  if (st == TL_OK && nsamples == 0)
    st = tl_inlog_report(in->log, TL_IN_EMPTY_FILE, in->path, 0, "%s: an inspect_ai .eval log with no samples/ entries",
                         in->path);
  if (st == TL_EINPUT && err && !err->msg[0]) tl_err_set(err, st, "'%s': bad sample (strict input)", in->path);
  cJSON_Delete(header);
  tl_zip_close(&z);
  return st;
}

/* ---- the importer ---- */

/* The first key of the JSON object that head starts with, into k (cut to ksize). 0: none. */
static int first_key(const unsigned char *head, size_t n, char *k, size_t ksize) {
  size_t i = 0;
  if (n >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF) i = 3;
  while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r')) i++;
  if (i >= n || head[i++] != '{') return 0;
  while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r')) i++;
  if (i >= n || head[i++] != '"') return 0;
  size_t j = 0;
  while (i < n && head[i] != '"' && j + 1 < ksize) k[j++] = (char)head[i++];
  k[j] = '\0';
  return i < n && head[i] == '"';
}

static int has(const unsigned char *head, size_t n, const char *s) {
  size_t m = strlen(s);
  for (size_t i = 0; i + m <= n; i++)
    if (head[i] == (unsigned char)s[0] && memcmp(head + i, s, m) == 0) return 1;
  return 0;
}

static int inspect_detect(const char *path, int is_dir, const unsigned char *head, size_t n) {
  if (is_dir) return 0;
  if (tl_zip_magic(head, n)) {
    tl_zip z;
    int yes = tl_zip_open(&z, path, NULL) == TL_OK &&
              (tl_zip_find(&z, "header.json") || tl_zip_find(&z, "_journal/start.json"));
    tl_zip_close(&z);
    return yes;
  }
  char k[32];
  if (!first_key(head, n, k, sizeof k)) return 0;
  /* inspect writes "version" first; a header-only dump starts with "status" */
  if (strcmp(k, "version") != 0 && strcmp(k, "status") != 0) return 0;
  return has(head, n, "\"eval\"") && has(head, n, "\"task\"");
}

static tl_status inspect_read(const char *path, tl_inlog *log, tl_imp_emit emit, void *ctx, tl_err *err) {
  insp in = {path, log, emit, ctx, NULL, NULL, 0, 0};
  unsigned char head[4] = {0};
  FILE *f = fopen(path, "rb");
  if (!f) return tl_err_set(err, TL_EIO, "cannot open '%s': %s", path, strerror(errno));
  size_t n = fread(head, 1, sizeof head, f);
  fclose(f);
  return tl_zip_magic(head, n) ? read_eval(&in, err) : read_json(&in, err);
}

const tl_importer tl_imp_inspect = {
    "inspect",
    "inspect_ai logs: .json (version, eval, samples[]) and .eval zips (header.json, samples/*.json)",
    inspect_detect,
    inspect_read,
};
