/* convert.c - a foreign file to tally's own JSONL (tl_import_convert), and a job's foreign inputs
 * converted before the job is loaded (tl_import_job). tally/import.h states the contract.
 *
 * Answer line written (one per stage-0 record, in file order):
 *   {"id", "model", "seed", "turn_id"?, "response": str|null, "prompt"?,
 *    "harness": {"format", "task", "verdict", "metric", "extracted", "where", "extra"?}}
 * Judgment lines (stage 1) are the same. The replay engine reads id, model, seed, turn_id and
 * response and ignores the other members. Items: each distinct id once (the first kept; a later
 * different item under the same id is a duplicate reported to the input log; the same item
 * again is silent). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tally/import.h"
#include "tally/jsonl.h"
#include "tally/str.h"
#include "tally/strmap.h"

typedef struct {
  const tl_importer *imp;
  const char *path, *default_model;
  const char *id_prefix; /* put in front of every answer's and judgment's id, or NULL */
  FILE *answers, *judgments, *items;
  tl_inlog *log;
  tl_import_counts *n;
  tl_strmap ids;     /* item id -> index into ihash */
  uint64_t *ihash;   /* the printed item's hash, per distinct id */
  size_t nih, caph;
} conv;

static tl_status put_str(cJSON *o, const char *k, const char *v) {
  cJSON *s = v ? cJSON_CreateString(v) : cJSON_CreateNull();
  return s && cJSON_AddItemToObject(o, k, s) ? TL_OK : (cJSON_Delete(s), TL_ENOMEM);
}

static tl_status write_obj(FILE *f, const cJSON *o, const char *what, tl_err *err) {
  char *s = cJSON_PrintUnformatted(o);
  if (!s) return tl_err_set(err, TL_ENOMEM, "out of memory");
  const int ok = fputs(s, f) >= 0 && fputc('\n', f) != EOF;
  free(s);
  return ok ? TL_OK : tl_err_set(err, TL_EIO, "cannot write the %s: %s", what, strerror(errno ? errno : EIO));
}

/* The item of rec, once per id. */
static tl_status do_item(conv *c, const tl_imp_rec *rec, tl_err *err) {
  cJSON *it = cJSON_Duplicate(rec->item, 1);
  if (!it) return tl_err_set(err, TL_ENOMEM, "out of memory");
  if (!cJSON_GetObjectItemCaseSensitive(it, "id") && rec->id && cJSON_IsObject(it)) put_str(it, "id", rec->id);
  char *s = cJSON_PrintUnformatted(it);
  cJSON_Delete(it);
  if (!s) return tl_err_set(err, TL_ENOMEM, "out of memory");
  const char *id = rec->id ? rec->id : "";
  const uint64_t h = tl_hash64(s, strlen(s));
  bool ins = false;
  size_t old = 0;
  tl_status st = tl_strmap_put(&c->ids, id, c->nih, &ins, &old);
  if (st) {
    free(s);
    return tl_err_set(err, st, "out of memory");
  }
  if (!ins) {
    free(s);
    if (c->ihash[old] == h) return TL_OK;
    st = tl_inlog_report(c->log, TL_IN_DUPLICATE, c->path, rec->line,
                         "item '%s' given again, different from the first (%s; the first is kept)", id,
                         rec->where ? rec->where : "");
    return st == TL_EINPUT ? tl_err_set(err, st, "%s: item '%s' given twice, differently (strict input)",
                                        rec->where ? rec->where : c->path, id)
                           : st;
  }
  if (c->nih == c->caph) {
    size_t nc = c->caph ? 2 * c->caph : 256;
    uint64_t *p = realloc(c->ihash, nc * sizeof *p);
    if (!p) {
      free(s);
      return tl_err_set(err, TL_ENOMEM, "out of memory");
    }
    c->ihash = p;
    c->caph = nc;
  }
  c->ihash[c->nih++] = h;
  c->n->items++;
  int ok = 1;
  if (c->items) ok = fputs(s, c->items) >= 0 && fputc('\n', c->items) != EOF;
  free(s);
  return ok ? TL_OK : tl_err_set(err, TL_EIO, "cannot write the items: %s", strerror(errno ? errno : EIO));
}

static tl_status on_rec(void *ctx, const tl_imp_rec *rec, tl_err *err) {
  conv *c = ctx;
  c->n->records++;
  tl_status st = TL_OK;
  if (rec->item && (st = do_item(c, rec, err)) != TL_OK) return st;
  FILE *out = rec->stage == 1 ? c->judgments : c->answers;
  if (rec->stage == 1 && !c->judgments)
    return tl_err_set(err, TL_EINPUT, "%s: a judge's reply: this file holds judgments (give it as \"judgments\")",
                      rec->where ? rec->where : c->path);
  if (rec->stage == 1) c->n->judgments++;
  else c->n->answers++;
  if (rec->has_verdict) c->n->verdicts++;
  if (!out) return TL_OK;
  cJSON *o = cJSON_CreateObject(), *h = cJSON_CreateObject();
  if (!o || !h) {
    cJSON_Delete(o);
    cJSON_Delete(h);
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  const char *model = rec->model ? rec->model : c->default_model ? c->default_model : "unknown";
  /* response before the long members: the replay engine's fast path looks at the first ones */
  if (c->id_prefix) {
    tl_buf idb;
    tl_buf_init(&idb);
    st |= tl_buf_printf(&idb, "%s%s", c->id_prefix, rec->id ? rec->id : "");
    st |= idb.data ? put_str(o, "id", idb.data) : TL_ENOMEM;
    tl_buf_release(&idb);
  } else {
    st |= put_str(o, "id", rec->id ? rec->id : "");
  }
  st |= put_str(o, "model", model);
  if (!cJSON_AddNumberToObject(o, "seed", rec->seed < 0 ? 0 : rec->seed)) st = TL_ENOMEM;
  if (rec->turn_id >= 1 && !cJSON_AddNumberToObject(o, "turn_id", rec->turn_id)) st = TL_ENOMEM;
  /* a log-likelihood answer (lm-eval's multiple choice): the numbers, which the multiple-choice
   * module scores itself (acc, acc_norm), instead of a response text */
  const cJSON *ll = rec->extra ? cJSON_GetObjectItemCaseSensitive(rec->extra, "loglik") : NULL;
  if (cJSON_IsArray(ll) && cJSON_GetArraySize(ll) > 0) {
    cJSON *l2 = cJSON_Duplicate(ll, 1);
    if (!l2 || !cJSON_AddItemToObject(o, "loglik", l2)) cJSON_Delete(l2), st = TL_ENOMEM;
  } else {
    st |= put_str(o, "response", rec->response);
  }
  if (rec->prompt) st |= put_str(o, "prompt", rec->prompt);
  st |= put_str(h, "format", c->imp->name);
  st |= put_str(h, "task", rec->task);
  if (rec->has_verdict) {
    if (!cJSON_AddNumberToObject(h, "verdict", rec->verdict)) st = TL_ENOMEM;
  } else if (!cJSON_AddNullToObject(h, "verdict")) st = TL_ENOMEM;
  st |= put_str(h, "metric", rec->verdict_metric);
  st |= put_str(h, "extracted", rec->extracted);
  st |= put_str(h, "where", rec->where);
  if (rec->extra) {
    cJSON *x = cJSON_Duplicate(rec->extra, 1);
    if (!x || !cJSON_AddItemToObject(h, "extra", x)) {
      cJSON_Delete(x);
      st = TL_ENOMEM;
    }
  }
  if (!cJSON_AddItemToObject(o, "harness", h)) {
    cJSON_Delete(h);
    st = TL_ENOMEM;
  }
  if (st) {
    cJSON_Delete(o);
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  st = write_obj(out, o, rec->stage == 1 ? "judgments" : "answers", err);
  cJSON_Delete(o);
  return st;
}

tl_status tl_import_convert(const tl_importer *imp, const char *path, const char *default_model,
                            const char *id_prefix, FILE *answers,
                            FILE *judgments, FILE *items, tl_inlog *log, tl_import_counts *n, tl_err *err) {
  conv c = {imp, path, default_model, id_prefix, answers, judgments, items, log, n, {0}, NULL, 0, 0};
  memset(n, 0, sizeof *n);
  tl_strmap_init(&c.ids);
  tl_status st = imp->read(path, log, on_rec, &c, err);
  tl_strmap_release(&c.ids);
  free(c.ihash);
  return st;
}

/* ---- tl_import_job ---- */

typedef struct {
  const char *job_dir, *tmpdir;
  tl_inlog *in;
  FILE *log;
  int nfile; /* files made so far (their names) */
} jobctx;

static char *join_path(const char *dir, const char *p) {
  tl_buf b;
  tl_buf_init(&b);
  if (p[0] == '/' || !dir || !*dir) tl_buf_puts(&b, p);
  else tl_buf_printf(&b, "%s/%s", dir, p);
  return tl_buf_detach(&b);
}

static void known(tl_buf *b) {
  int n = 0;
  const tl_importer *const *all = tl_importers(&n);
  for (int i = 0; i < n; i++) tl_buf_printf(b, "%s%s", i ? ", " : "", all[i]->name);
  if (!n) tl_buf_puts(b, "none");
}

static FILE *open_tmp(jobctx *j, const char *kind, char **path, tl_err *err) {
  tl_buf b;
  tl_buf_init(&b);
  tl_buf_printf(&b, "%s/%02d.%s.jsonl", j->tmpdir, j->nfile++, kind);
  *path = tl_buf_detach(&b);
  if (!*path) {
    tl_err_set(err, TL_ENOMEM, "out of memory");
    return NULL;
  }
  FILE *f = fopen(*path, "w");
  if (!f) tl_err_set(err, TL_EIO, "cannot create '%s': %s", *path, strerror(errno));
  return f;
}

static tl_status close_tmp(FILE *f, const char *path, tl_status st, tl_err *err) {
  if (!f) return st;
  const int bad = ferror(f) | (fflush(f) != 0);
  const int e = errno;
  if (fclose(f) != 0 || bad)
    if (!st) st = tl_err_set(err, TL_EIO, "cannot write '%s': %s", path, strerror(bad ? e : errno));
  return st;
}

/* One entry e of bench[key] (where: "benchmarks[0].answers[1]"). *repl: what replaces it (NULL:
 * keep it); *items_out / *judg_out: the items / judgments the conversion found (paths, malloc'd)
 * for the entry's other keys, NULL when none. */
static tl_status one_entry(jobctx *j, const cJSON *e, const char *key, const char *where, cJSON **repl,
                           char **items_out, char **judg_out, tl_err *err) {
  *repl = NULL;
  if (!cJSON_IsObject(e)) return TL_OK;
  const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(e, "format");
  const cJSON *pth = cJSON_GetObjectItemCaseSensitive(e, "path");
  const cJSON *mdl = cJSON_GetObjectItemCaseSensitive(e, "model");
  const cJSON *pfx = cJSON_GetObjectItemCaseSensitive(e, "id_prefix");
  const int is_items = strcmp(key, "items") == 0;
  if (!fmt && !is_items) { /* tally's own {path, model, ...}, unless a reader claims the file */
    if (!cJSON_IsString(pth) || !pth->valuestring[0]) return TL_OK;
  }
  if (fmt && !cJSON_IsString(fmt))
    return tl_err_set(err, TL_EJOB, "%s: \"format\" must be a format's name", where);
  if (!cJSON_IsString(pth) || !pth->valuestring[0])
    return tl_err_set(err, TL_EJOB, "%s: missing \"path\" (the file of another harness to convert)", where);
  if (mdl && !cJSON_IsString(mdl)) return tl_err_set(err, TL_EJOB, "%s: \"model\" must be a string", where);
  if (pfx && !cJSON_IsString(pfx)) return tl_err_set(err, TL_EJOB, "%s: \"id_prefix\" must be a string", where);
  char *path = join_path(j->job_dir, pth->valuestring);
  if (!path) return tl_err_set(err, TL_ENOMEM, "out of memory");
  const tl_importer *imp = NULL;
  tl_status st = TL_OK;
  if (fmt) {
    imp = tl_importer_find(fmt->valuestring);
    if (!imp) {
      tl_buf b;
      tl_buf_init(&b);
      known(&b);
      st = tl_err_set(err, TL_EJOB, "%s: unknown format '%s' (known: %s)", where, fmt->valuestring,
                      b.data ? b.data : "");
      tl_buf_release(&b);
    } else {
      tl_err e2 = {{0}};
      const tl_importer *seen = tl_importer_detect(path, &e2);
      if (seen && seen != imp)
        st = tl_err_set(err, TL_EJOB, "%s: '%s' is a file of format '%s', not '%s'", where, path, seen->name, imp->name);
    }
  } else {
    tl_err e2 = {{0}};
    imp = tl_importer_detect(path, &e2);
    if (!imp && is_items) st = tl_err_set(err, TL_EJOB, "%s: %s", where, e2.msg);
    else if (!imp) { /* not a foreign file: tally's own answers (the loader reads it) */
      free(path);
      return TL_OK;
    }
  }
  if (st) {
    free(path);
    return st;
  }
  char *pa = NULL, *pj = NULL, *pi = NULL;
  FILE *fa = open_tmp(j, "answers", &pa, err), *fj = fa ? open_tmp(j, "judgments", &pj, err) : NULL,
       *fi = fj ? open_tmp(j, "items", &pi, err) : NULL;
  tl_import_counts n = {0};
  const long bad0 = j->in ? j->in->total : 0;
  st = fi ? tl_import_convert(imp, path, mdl ? mdl->valuestring : NULL, pfx ? pfx->valuestring : NULL, fa, fj, fi,
                                  j->in, &n, err) : TL_EIO;
  if (!fi && !st) st = TL_EIO;
  st = close_tmp(fa, pa, st, err);
  st = close_tmp(fj, pj, st, err);
  st = close_tmp(fi, pi, st, err);
  if (!st && j->log) {
    const long bad = j->in ? j->in->total - bad0 : 0;
    fprintf(j->log, "tally: import: %s (%s): %ld answers, ", path, imp->name, n.answers);
    if (n.judgments) fprintf(j->log, "%ld judgments, ", n.judgments);
    fprintf(j->log, "%ld items, %ld harness verdicts", n.items, n.verdicts);
    if (bad) fprintf(j->log, "; %ld records not mapped", bad);
    fputc('\n', j->log);
  }
  if (!st) {
    const int is_judg = strcmp(key, "judgments") == 0;
    const char *mine = is_items ? pi : is_judg ? pj : pa;
    if (is_items) {
      *repl = cJSON_CreateString(mine);
    } else { /* the entry's other keys kept: {path, model, seed, prompt_variant} */
      *repl = cJSON_Duplicate(e, 1);
      if (*repl) {
        cJSON_DeleteItemFromObjectCaseSensitive(*repl, "format");
        cJSON_DeleteItemFromObjectCaseSensitive(*repl, "id_prefix");
        cJSON *s = cJSON_CreateString(mine);
        if (!s || !cJSON_ReplaceItemInObjectCaseSensitive(*repl, "path", s)) {
          cJSON_Delete(s);
          cJSON_Delete(*repl);
          *repl = NULL;
        }
      }
    }
    if (!*repl) st = tl_err_set(err, TL_ENOMEM, "out of memory");
    if (!is_items && n.items) *items_out = tl_strdup(pi);
    if (!is_judg && n.judgments) *judg_out = tl_strdup(pj);
  }
  free(pa);
  free(pj);
  free(pi);
  free(path);
  return st;
}

tl_status tl_import_job(cJSON *job, const char *job_dir, const char *tmpdir, tl_inlog *in, FILE *log, tl_err *err) {
  static const char *const KEYS[] = {"answers", "judgments", "items"};
  jobctx j = {job_dir, tmpdir, in, log, 0};
  cJSON *benches = cJSON_GetObjectItemCaseSensitive(job, "benchmarks");
  if (!cJSON_IsArray(benches)) return TL_OK; /* the loader says what is wrong */
  int bi = 0;
  for (cJSON *b = benches->child; b; b = b->next, bi++) {
    if (!cJSON_IsObject(b)) continue;
    cJSON *items_found = cJSON_CreateArray(), *judg_found = cJSON_CreateArray();
    tl_status st = items_found && judg_found ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory");
    for (int k = 0; k < 3 && !st; k++) {
      cJSON *v = cJSON_GetObjectItemCaseSensitive(b, KEYS[k]);
      if (!v) continue;
      const int arr = cJSON_IsArray(v);
      int i = 0;
      for (cJSON *e = arr ? v->child : v; e && !st; i++) {
        cJSON *next = arr ? e->next : NULL, *repl = NULL;
        char where[128];
        if (arr) snprintf(where, sizeof where, "benchmarks[%d].%s[%d]", bi, KEYS[k], i);
        else snprintf(where, sizeof where, "benchmarks[%d].%s", bi, KEYS[k]);
        char *fi = NULL, *fj = NULL;
        st = one_entry(&j, e, KEYS[k], where, &repl, &fi, &fj, err);
        if (!st && repl) {
          if (arr) cJSON_ReplaceItemViaPointer(v, e, repl);
          else cJSON_ReplaceItemInObjectCaseSensitive(b, KEYS[k], repl);
        }
        if (fi && !cJSON_AddItemToArray(items_found, cJSON_CreateString(fi))) st = TL_ENOMEM;
        if (fj && !cJSON_AddItemToArray(judg_found, cJSON_CreateString(fj))) st = TL_ENOMEM;
        free(fi);
        free(fj);
        if (st == TL_ENOMEM) tl_err_set(err, st, "out of memory");
        e = next;
      }
    }
    /* the items (and judgments) an answers file held serve the entry when it names none */
    if (!st && cJSON_GetArraySize(items_found) && !cJSON_GetObjectItemCaseSensitive(b, "items")) {
      cJSON_AddItemToObject(b, "items", items_found);
      items_found = NULL;
    }
    if (!st && cJSON_GetArraySize(judg_found) && !cJSON_GetObjectItemCaseSensitive(b, "judgments")) {
      cJSON_AddItemToObject(b, "judgments", judg_found);
      judg_found = NULL;
    }
    cJSON_Delete(items_found);
    cJSON_Delete(judg_found);
    if (st) return st;
  }
  return TL_OK;
}
