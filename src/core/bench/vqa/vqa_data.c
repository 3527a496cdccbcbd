/* vqa_data.c - VQA question sets, results and the official report (vqa_data.h, docs/VQA.md).
 *
 * The official files are single JSON documents (often one line of 100+ MB). They are read
 * whole, then walked by a small validating scanner that finds the array the format names
 * ("questions", "annotations", or the results' top-level array) and each element's byte range
 * and starting line (vqa_scan.c). A plain element (vqa_plain_elem: no escape, valid UTF-8,
 * the expected fields with the expected types, no nested container it does not read) is read in
 * place; any other is parsed on its own with cJSON and checked with tl_json_check, which keep
 * the reference reading and every message. So a problem is reported at the line where its
 * element starts, one bad element is skipped without losing the others, and memory holds the
 * text plus one element's tree at a time. The items' strings live in the set's arena. */
#include "vqa_data.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/jsonl.h"
#include "tally/str.h"
#include "vqa_scan.h"

/* ---- reporting ----------------------------------------------------------------------------- */

/* Reports one problem; under strict input also fills err ("FILE:LINE: message (strict input)")
 * and returns TL_EINPUT. */
static tl_status problem(tl_inlog *log, tl_err *err, tl_in_kind kind, const char *path, long line,
                         const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
static tl_status problem(tl_inlog *log, tl_err *err, tl_in_kind kind, const char *path, long line,
                         const char *fmt, ...) {
  char msg[900];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  msg[tl_utf8_floor(msg, strlen(msg))] = 0;
  tl_status st = tl_inlog_report(log, kind, path, line, "%s", msg);
  if (st == TL_EINPUT) {
    if (line > 0) tl_err_set(err, TL_EINPUT, "%s:%ld: %s (strict input)", path, line, msg);
    else tl_err_set(err, TL_EINPUT, "%s: %s (strict input)", path, msg);
  } else if (st != TL_OK) {
    tl_err_set(err, st, "cannot record an input problem: %s", tl_strerror(st));
  }
  return st;
}

/* An id for messages: at most 60 bytes, cut at a character boundary. */
static const char *show(const char *s, char *buf, size_t cap) {
  size_t n = strlen(s);
  if (n > 60) n = tl_utf8_floor(s, 60);
  if (n >= cap) n = tl_utf8_floor(s, cap - 1);
  memcpy(buf, s, n);
  buf[n] = 0;
  return buf;
}


/* Lines (newlines) in s[0..n). */
static long newlines(const char *s, size_t n) {
  long k = 0;
  for (size_t i = 0; i < n; i++) k += s[i] == '\n';
  return k;
}

typedef struct {
  int kind; /* -1 none, else a tl_in_kind */
  long line;
  char detail[300];
} first_issue_ctx;

static int on_issue(void *ctx, const tl_json_issue *is) {
  first_issue_ctx *f = ctx;
  f->line = is->line;
  if (is->kind == TL_JSON_DUP_KEY) {
    f->kind = TL_IN_DUPLICATE_KEY;
    snprintf(f->detail, sizeof f->detail, "duplicate key '%.80s'%s%.80s%s", is->key,
             *is->path ? " in '" : "", is->path, *is->path ? "'" : "");
  } else {
    f->kind = TL_IN_NUL_ESCAPE;
    snprintf(f->detail, sizeof f->detail, "\\u0000 escape (a NUL character) in %s%.80s%s",
             is->key ? "a key of '" : *is->path ? "'" : "a string", is->path,
             (is->key || *is->path) ? "'" : "");
  }
  return 1;
}

/* Parses the element s[b..e) that starts on `line`: *out the tree (caller deletes), or NULL
 * when the element was reported (invalid UTF-8, a duplicate key, a \u0000 escape; cJSON
 * refusing it). `what` names the element in messages ("annotation 3"). */
static tl_status parse_elem(tl_inlog *log, tl_err *err, const char *path, vqa_jscan *c, size_t b,
                            size_t e, long line, const char *what, cJSON **out) {
  *out = NULL;
  size_t bad;
  if (!tl_utf8_valid(c->s + b, e - b, &bad))
    return problem(log, err, TL_IN_INVALID_UTF8, path, line + newlines(c->s + b, bad),
                   "invalid UTF-8 in %s (byte %zu of the file)", what, b + bad + 1);
  char save = c->s[e]; /* e <= n, and s[n] is the buffer's NUL */
  c->s[e] = 0;
  cJSON *v = cJSON_ParseWithOpts(c->s + b, NULL, 1);
  first_issue_ctx fi;
  fi.kind = -1;
  if (v) tl_json_check(c->s + b, v, on_issue, &fi);
  c->s[e] = save;
  if (!v) return problem(log, err, TL_IN_MALFORMED_JSON, path, line, "%s: cJSON cannot parse it", what);
  if (fi.kind >= 0) {
    cJSON_Delete(v);
    return problem(log, err, (tl_in_kind)fi.kind, path, line + fi.line - 1, "%s: %s", what, fi.detail);
  }
  *out = v;
  return TL_OK;
}

/* Reads `path` and walks it (vqa_sc_document). A file that cannot be walked to its end is not valid
 * JSON: TL_EINPUT with err "PATH: not valid JSON: <why> at byte N (line L)", fatal for the
 * caller (the elements before the break may have been handed to fn; the caller discards what
 * it built). An empty file or a missing array member is reported (bad input). */
static tl_status walk_file(const char *path, const char *key, vqa_elem_fn fn, void *ctx, tl_inlog *log,
                           tl_err *err, int *found) {
  tl_buf text;
  tl_buf_init(&text);
  tl_status st = tl_file_read(path, 0, &text, err);
  if (st != TL_OK) {
    tl_buf_release(&text);
    return st;
  }
  vqa_jscan c;
  memset(&c, 0, sizeof c);
  c.s = text.data;
  c.n = text.len;
  c.line = 1;
  size_t i = 0;
  while (i < c.n && c.s[i] && strchr(" \t\r\n", c.s[i])) i++;
  *found = 0;
  if (i == c.n) {
    st = problem(log, err, TL_IN_EMPTY_FILE, path, 0, "the file is empty");
  } else {
    st = vqa_sc_document(&c, key, fn, ctx, found);
    if (st == TL_OK && c.what[0]) /* a partial document is never taken for the whole */
      st = tl_err_set(err, TL_EINPUT, "%s: not valid JSON: %s at byte %zu (line %ld); the file is not used "
                      "(a file cut short, or an editing mistake?)", path, c.what, c.i + 1, c.line);
    else if (st == TL_OK && key && *found == 0)
      st = problem(log, err, TL_IN_MISSING_FIELD, path, 0, "no '%s' member in the top-level object", key);
    else if (st == TL_OK && key && *found == 2)
      st = problem(log, err, TL_IN_BAD_FIELD, path, 0, "'%s' is not an array", key);
  }
  tl_buf_release(&text);
  return st;
}

/* ---- ids and fields ------------------------------------------------------------------------ */

#define ID_LIMIT 9007199254740992.0 /* 2^53: integers exact in a double */

/* The canonical id of v: 1 for an integer (*num set), 2 for a non-empty string, 0 otherwise. */
#define ID_MAX_BYTES 1000 /* a longer string id is refused (bad_id) */

/* The canonical id of v into buf[cap] (cap > ID_MAX_BYTES): 1 for an integer (*num set), 2 for
 * a non-empty string of at most ID_MAX_BYTES bytes, 0 otherwise. */
static int id_of(const cJSON *v, char *buf, size_t cap, int64_t *num) {
  *num = 0;
  if (tl_json_is_int(v, -ID_LIMIT, ID_LIMIT)) {
    *num = (int64_t)v->valuedouble;
    char t[24];
    vqa_i64_text(*num, t);
    if (strlen(t) < cap) memcpy(buf, t, strlen(t) + 1);
    else buf[0] = 0; /* never: cap > 20 everywhere */
    return 1;
  }
  if (cJSON_IsString(v) && v->valuestring[0] && strlen(v->valuestring) <= ID_MAX_BYTES &&
      strlen(v->valuestring) < cap) {
    memcpy(buf, v->valuestring, strlen(v->valuestring) + 1);
    return 2;
  }
  return 0;
}

/* A copy of s in the set's arena (NULL: out of memory). */
static char *set_str(tl_vqa_set *set, const char *s, size_t n) { return vqa_arena_strndup(&set->arena, s, n); }

/* An optional string field: *out a copy in the set's arena (NULL when absent or null). -1:
 * present but not a string; -2: out of memory. */
static int opt_string(tl_vqa_set *set, const cJSON *o, const char *key, char **out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  *out = NULL;
  if (!v || cJSON_IsNull(v)) return 0;
  if (!cJSON_IsString(v)) return -1;
  return (*out = set_str(set, v->valuestring, strlen(v->valuestring))) ? 1 : -2;
}

/* ---- sets ------------------------------------------------------------------------------------ */

/* Forgets an item that was not kept (its strings stay in the set's arena until the set is
 * released). */
static void item_release(tl_vqa_item *it) { memset(it, 0, sizeof *it); }

void tl_vqa_set_init(tl_vqa_set *s) {
  memset(s, 0, sizeof *s);
  tl_strmap_init(&s->index);
}

void tl_vqa_set_release(tl_vqa_set *s) {
  vqa_arena_free(&s->arena);
  free(s->at);
  free(s->items);
  free(s->path);
  tl_strmap_release(&s->index);
  tl_vqa_set_init(s);
}

/* Adds *it (moved: the set owns its strings from here, also on failure). */
static tl_status set_push(tl_vqa_set *s, size_t *cap, tl_vqa_item *it) {
  if (s->n == *cap) {
    size_t nc = *cap ? *cap * 2 : 256;
    tl_vqa_item *p = realloc(s->items, nc * sizeof *p);
    if (!p) {
      item_release(it);
      return TL_ENOMEM;
    }
    s->items = p;
    *cap = nc;
  }
  it->order = s->n;
  s->items[s->n++] = *it;
  return TL_OK;
}

static int cmp_num(const void *a, const void *b) {
  const tl_vqa_item *x = a, *y = b;
  return (x->num > y->num) - (x->num < y->num);
}

static int cmp_bytes(const void *a, const void *b) {
  const tl_vqa_item *x = a, *y = b;
  return strcmp(x->id, y->id);
}

/* Sorts the items by id and maps each item's order to its new position (s->at: the index,
 * built while reading, stays as it is); counts N != 10. */
static tl_status set_finish(tl_vqa_set *s, tl_err *err) {
  s->numeric = 1;
  for (size_t i = 0; i < s->n; i++) s->numeric &= s->items[i].is_num;
  if (s->n) qsort(s->items, s->n, sizeof *s->items, s->numeric ? cmp_num : cmp_bytes);
  free(s->at);
  if (!(s->at = malloc((s->n ? s->n : 1) * sizeof *s->at)))
    return tl_err_set(err, TL_ENOMEM, "out of memory indexing the questions");
  s->n_not10 = 0;
  for (size_t i = 0; i < s->n; i++) {
    s->at[s->items[i].order] = i;
    s->n_not10 += s->items[i].n_answers != 10;
  }
  return TL_OK;
}

long tl_vqa_find(const tl_vqa_set *s, const char *id) {
  size_t v;
  return s->at && tl_strmap_get(&s->index, id, &v) && v < s->n ? (long)s->at[v] : -1;
}

/* ---- the official files ------------------------------------------------------------------------ */

typedef struct {
  char *text;  /* in the set's arena (an annotated question's item borrows it) */
  int64_t num; /* its question_id */
  long line;
  int used;
} question_rec;

typedef struct {
  tl_inlog *log;
  tl_err *err;
  const char *path;
  /* questions file */
  vqa_imap qmap;  /* question_id -> index in qs */
  question_rec *qs;
  size_t nq, qcap, q_index;
  /* annotations */
  tl_vqa_set *set;
  size_t cap, a_index;
} official_ctx;

/* Keeps question `idb` (num) with its text s[0..n) unless its id was given before (reported). */
static tl_status add_question(official_ctx *x, const char *idb, int64_t num, const char *s, size_t n, long line) {
  size_t prev;
  tl_status st = TL_OK;
  int ins = vqa_imap_put(&x->qmap, num, x->nq, &prev);
  if (ins < 0) st = TL_ENOMEM;
  else if (!ins)
    return problem(x->log, x->err, TL_IN_DUPLICATE, x->path, line,
                   "question %s given again (first at line %ld; the first is kept)", idb, x->qs[prev].line);
  if (st == TL_OK && x->nq == x->qcap) {
    size_t nc = x->qcap ? x->qcap * 2 : 256;
    question_rec *p = realloc(x->qs, nc * sizeof *p);
    if (!p) st = TL_ENOMEM;
    else {
      x->qs = p;
      x->qcap = nc;
    }
  }
  if (st == TL_OK) {
    question_rec *q = &x->qs[x->nq++];
    q->num = num;
    q->text = set_str(x->set, s, n);
    q->line = line;
    q->used = 0;
    if (!q->text) st = TL_ENOMEM;
  }
  if (st == TL_ENOMEM) tl_err_set(x->err, TL_ENOMEM, "out of memory reading '%s'", x->path);
  return st;
}

/* A plain question read in place: 1 kept (or reported as a duplicate) with *st set, 0 when
 * the element is not plain (the caller parses it). */
static int fast_question(official_ctx *x, vqa_jscan *c, size_t b, size_t e, long line, tl_status *st) {
  if (c->s[b] != '{' || !vqa_plain_elem(c->s, b, e)) return 0;
  vqa_jscan w = {.s = c->s, .n = e, .i = b, .line = line};
  vqa_member m[16];
  int k = vqa_obj_members(&w, m, 16, NULL, NULL, NULL);
  if (k < 0) return 0;
  const vqa_member *jid = vqa_member_get(m, k, "question_id"), *jq = vqa_member_get(m, k, "question");
  int64_t num;
  const char *q;
  size_t qn;
  if (!jid || !jq || !vqa_plain_int(c->s, jid, &num) || !vqa_plain_string(c->s, jq, &q, &qn)) return 0;
  for (int i = 0; i < k; i++)
    if (!vqa_plain_scalar(c->s, &m[i])) return 0;
  char idb[24];
  *st = add_question(x, vqa_i64_text(num, idb), num, q, qn, line);
  return 1;
}

static tl_status question_elem(void *ctx, vqa_jscan *c, size_t b, size_t e, long line) {
  official_ctx *x = ctx;
  tl_status st;
  size_t index = x->q_index++;
  if (fast_question(x, c, b, e, line, &st)) {
    x->set->n_plain++;
    return st;
  }
  char what[64];
  snprintf(what, sizeof what, "question %zu", index);
  cJSON *o;
  st = parse_elem(x->log, x->err, x->path, c, b, e, line, what, &o);
  if (st != TL_OK || !o) return st;
  char idb[32];
  int64_t num;
  const cJSON *jid = cJSON_GetObjectItemCaseSensitive(o, "question_id");
  const cJSON *jq = cJSON_GetObjectItemCaseSensitive(o, "question");
  if (!cJSON_IsObject(o)) st = problem(x->log, x->err, TL_IN_BAD_FIELD, x->path, line, "%s is not an object", what);
  else if (!jid) st = problem(x->log, x->err, TL_IN_MISSING_FIELD, x->path, line, "%s: no 'question_id'", what);
  else if (id_of(jid, idb, sizeof idb, &num) != 1)
    st = problem(x->log, x->err, TL_IN_BAD_ID, x->path, line, "%s: 'question_id' is not an integer", what);
  else if (!jq) st = problem(x->log, x->err, TL_IN_MISSING_FIELD, x->path, line, "question %s: no 'question'", idb);
  else if (!cJSON_IsString(jq))
    st = problem(x->log, x->err, TL_IN_BAD_FIELD, x->path, line, "question %s: 'question' is not a string", idb);
  else
    st = add_question(x, idb, num, jq->valuestring, strlen(jq->valuestring), line);
  cJSON_Delete(o);
  return st;
}

/* Reports a duplicate answer_id inside one annotation (kept: scored by position; the script
 * would leave out every identical answer dict at once). */
static tl_status check_answer_ids(official_ctx *x, const cJSON *answers, const char *idb, long line) {
  int n = cJSON_GetArraySize(answers);
  if (n > 100) return TL_OK; /* pairwise check only for realistic sizes */
  double id[100];
  int has[100];
  int i = 0;
  const cJSON *a;
  cJSON_ArrayForEach(a, answers) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, "answer_id");
    has[i] = tl_json_is_int(v, -ID_LIMIT, ID_LIMIT);
    id[i] = has[i] ? v->valuedouble : 0.0;
    for (int j = 0; has[i] && j < i; j++)
      if (has[j] && id[j] == id[i])
        return problem(x->log, x->err, TL_IN_DUPLICATE, x->path, line,
                       "question %s: answer_id %.0f given twice (scored by position)", idb, id[i]);
    i++;
  }
  return TL_OK;
}

/* Fills it->answers from an annotation's "answers" array; a problem is reported and returns
 * 1 in *bad. */
static tl_status take_answers(official_ctx *x, const cJSON *answers, const char *idb, long line,
                              tl_vqa_item *it, int *bad) {
  *bad = 1;
  int n = cJSON_GetArraySize(answers);
  if (n == 0) return problem(x->log, x->err, TL_IN_BAD_FIELD, x->path, line, "question %s: no answers", idb);
  if (n > TL_VQA_MAX_REFS)
    return problem(x->log, x->err, TL_IN_BAD_FIELD, x->path, line, "question %s: %d answers (at most %d)",
                   idb, n, TL_VQA_MAX_REFS);
  it->answers = vqa_arena_alloc(&x->set->arena, (size_t)n * sizeof *it->answers);
  if (!it->answers) return TL_ENOMEM;
  int i = 0;
  const cJSON *a;
  cJSON_ArrayForEach(a, answers) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(a, "answer");
    if (!cJSON_IsObject(a) || !cJSON_IsString(t))
      return problem(x->log, x->err, !cJSON_IsObject(a) || t ? TL_IN_BAD_FIELD : TL_IN_MISSING_FIELD,
                     x->path, line, "question %s: answers[%d] %s", idb, i,
                     !cJSON_IsObject(a) ? "is not an object" : t ? "'answer' is not a string" : "has no 'answer'");
    if (!(it->answers[i] = set_str(x->set, t->valuestring, strlen(t->valuestring)))) return TL_ENOMEM;
    it->n_answers = (size_t)++i;
  }
  *bad = 0;
  return check_answer_ids(x, answers, idb, line);
}

/* The fields of one annotation into *it; *bad when it was reported and is left out. */
static tl_status take_annotation(official_ctx *x, const cJSON *o, const char *what, long line,
                                 tl_vqa_item *it, int *bad) {
  *bad = 1;
  if (!cJSON_IsObject(o)) return problem(x->log, x->err, TL_IN_BAD_FIELD, x->path, line, "%s is not an object", what);
  const cJSON *jid = cJSON_GetObjectItemCaseSensitive(o, "question_id");
  if (!jid) return problem(x->log, x->err, TL_IN_MISSING_FIELD, x->path, line, "%s: no 'question_id'", what);
  char idb[32];
  if (id_of(jid, idb, sizeof idb, &it->num) != 1)
    return problem(x->log, x->err, TL_IN_BAD_ID, x->path, line, "%s: 'question_id' is not an integer", what);
  it->is_num = 1;
  static const char *const KEYS[] = {"question_type", "answer_type"};
  char **dst[] = {&it->question_type, &it->answer_type};
  for (int k = 0; k < 2; k++) {
    int r = opt_string(x->set, o, KEYS[k], dst[k]);
    if (r == -2) return TL_ENOMEM;
    if (r <= 0)
      return problem(x->log, x->err, r == 0 ? TL_IN_MISSING_FIELD : TL_IN_BAD_FIELD, x->path, line,
                     "question %s: %s '%s'", idb, r == 0 ? "no" : "not a string:", KEYS[k]);
  }
  const cJSON *ja = cJSON_GetObjectItemCaseSensitive(o, "answers");
  if (!ja) return problem(x->log, x->err, TL_IN_MISSING_FIELD, x->path, line, "question %s: no 'answers'", idb);
  if (!cJSON_IsArray(ja))
    return problem(x->log, x->err, TL_IN_BAD_FIELD, x->path, line, "question %s: 'answers' is not an array", idb);
  tl_status st = take_answers(x, ja, idb, line, it, bad);
  if (st != TL_OK || *bad) return st;
  if (!(it->id = set_str(x->set, idb, strlen(idb)))) return TL_ENOMEM;
  it->line = line;
  return TL_OK;
}

#define FAST_MAX_ANSWERS 64 /* a plain annotation has 1..64 answers (VQA v2: 10) */

typedef struct {
  const char *ans[FAST_MAX_ANSWERS]; /* each answer's bytes in the text */
  size_t alen[FAST_MAX_ANSWERS];
  int n;
} fast_ans;

/* The answers of a plain annotation (the value at w->i) into x (a fast_ans), as a vqa_inner_fn:
 * 0 when the value is not plain: not an array of 1..FAST_MAX_ANSWERS objects, each with a
 * string "answer", scalar members only, integer "answer_id"s (when numbers) given once each. */
static int fast_answers(void *ctx, vqa_jscan *w) {
  fast_ans *x = ctx;
  const char **ans = x->ans;
  size_t *alen = x->alen;
  int64_t ids[FAST_MAX_ANSWERS];
  int has[FAST_MAX_ANSWERS], n = 0;
  x->n = 0;
  if (w->s[w->i] != '[') return 0;
  w->i++; /* '[' */
  for (;;) {
    vqa_sc_ws(w);
    if (w->s[w->i] == ']') {
      w->i++;
      break;
    }
    if (n) {
      w->i++; /* ',' */
      vqa_sc_ws(w);
    }
    if (n == FAST_MAX_ANSWERS || w->s[w->i] != '{') return 0;
    vqa_member m[16];
    int k = vqa_obj_members(w, m, 16, NULL, NULL, NULL);
    if (k < 0) return 0;
    const vqa_member *t = vqa_member_get(m, k, "answer"), *aid = vqa_member_get(m, k, "answer_id");
    if (!t || !vqa_plain_string(w->s, t, &ans[n], &alen[n])) return 0;
    for (int i = 0; i < k; i++)
      if (!vqa_plain_scalar(w->s, &m[i])) return 0;
    char ch = aid ? w->s[aid->vb] : 0;
    has[n] = ch == '-' || (ch >= '0' && ch <= '9'); /* a number: it must read as an integer */
    if (has[n] && !vqa_plain_int(w->s, aid, &ids[n])) return 0;
    for (int j = 0; has[n] && j < n; j++)
      if (has[j] && ids[j] == ids[n]) return 0; /* cJSON's path reports it */
    n++;
  }
  x->n = n;
  return n > 0;
}

/* A plain annotation read in place into *it (strings in the set's arena): 1 read, 0 not plain
 * (the caller parses it with cJSON, which reports what is wrong), -1 out of memory. */
static int fast_annotation(official_ctx *x, vqa_jscan *c, size_t b, size_t e, long line, tl_vqa_item *it) {
  if (c->s[b] != '{' || !vqa_plain_elem(c->s, b, e)) return 0;
  vqa_jscan w = {.s = c->s, .n = e, .i = b, .line = line};
  vqa_member m[32];
  fast_ans fa;
  fa.n = 0;
  int k = vqa_obj_members(&w, m, 32, "answers", fast_answers, &fa);
  if (k < 0) return 0;
  const vqa_member *jid = vqa_member_get(m, k, "question_id"), *qt = vqa_member_get(m, k, "question_type"),
                   *at = vqa_member_get(m, k, "answer_type"), *ja = vqa_member_get(m, k, "answers");
  const char *qs, *as;
  size_t qn, an;
  if (!jid || !qt || !at || !ja || !vqa_plain_int(c->s, jid, &it->num) || !vqa_plain_string(c->s, qt, &qs, &qn) ||
      !vqa_plain_string(c->s, at, &as, &an) || c->s[ja->vb] != '[')
    return 0;
  for (int i = 0; i < k; i++)
    if (&m[i] != ja && !vqa_plain_scalar(c->s, &m[i])) return 0;
  const char *const *ans = fa.ans;
  const size_t *alen = fa.alen;
  int n = fa.n; /* >= 1: "answers" was read */
  char idb[24];
  tl_vqa_set *s = x->set;
  it->is_num = 1;
  it->line = line;
  vqa_i64_text(it->num, idb);
  it->id = set_str(s, idb, strlen(idb));
  it->question_type = set_str(s, qs, qn);
  it->answer_type = set_str(s, as, an);
  it->answers = vqa_arena_alloc(&s->arena, (size_t)n * sizeof *it->answers);
  if (!it->id || !it->question_type || !it->answer_type || !it->answers) return -1;
  for (int i = 0; i < n; i++)
    if (!(it->answers[i] = set_str(s, ans[i], alen[i]))) return -1;
  it->n_answers = (size_t)n;
  return 1;
}

static tl_status annotation_elem(void *ctx, vqa_jscan *c, size_t b, size_t e, long line) {
  official_ctx *x = ctx;
  size_t index = x->a_index++;
  tl_vqa_item it;
  memset(&it, 0, sizeof it);
  int bad = 0;
  tl_status st = TL_OK;
  int fast = fast_annotation(x, c, b, e, line, &it);
  x->set->n_plain += fast > 0;
  if (fast < 0) st = TL_ENOMEM;
  else if (fast == 0) {
    memset(&it, 0, sizeof it);
    char what[64];
    snprintf(what, sizeof what, "annotation %zu", index);
    cJSON *o;
    st = parse_elem(x->log, x->err, x->path, c, b, e, line, what, &o);
    if (st != TL_OK) return st;
    if (!o) {
      x->set->n_dropped++;
      return TL_OK;
    }
    st = take_annotation(x, o, what, line, &it, &bad);
    cJSON_Delete(o);
  }
  if (st == TL_OK && !bad) {
    bool inserted;
    size_t prev;
    if (tl_strmap_put(&x->set->index, it.id, x->set->n, &inserted, &prev) != TL_OK) st = TL_ENOMEM;
    else if (!inserted) {
      bad = 1;
      st = problem(x->log, x->err, TL_IN_DUPLICATE, x->path, line,
                   "question %s annotated again (first at line %ld; the first is kept)", it.id,
                   x->set->items[prev].line);
    } else {
      st = set_push(x->set, &x->cap, &it); /* owns it from here */
      memset(&it, 0, sizeof it);
    }
  }
  if (bad) x->set->n_dropped++;
  item_release(&it);
  if (st == TL_ENOMEM) tl_err_set(x->err, TL_ENOMEM, "out of memory reading '%s'", x->path);
  return st;
}

/* Attaches the question texts; reports annotations without a question and questions without
 * an annotation. */
static tl_status cross_check(official_ctx *x, const char *qpath, const char *apath) {
  tl_vqa_set *s = x->set;
  tl_status st = TL_OK;
  for (size_t i = 0; i < s->n && st == TL_OK; i++) {
    size_t q;
    if (vqa_imap_get(&x->qmap, s->items[i].num, &q)) { /* official ids are integers */
      x->qs[q].used = 1;
      s->items[i].question = x->qs[q].text; /* both in the set's arena */
    } else {
      s->n_no_question++;
      st = problem(x->log, x->err, TL_IN_UNKNOWN_ITEM, apath, s->items[i].line,
                   "question %s is annotated but not in the questions file '%s' (scored)",
                   s->items[i].id, qpath);
    }
  }
  for (size_t q = 0; q < x->nq && st == TL_OK; q++) {
    if (x->qs[q].used) continue;
    s->n_no_annotation++;
    char idb[24];
    st = problem(x->log, x->err, TL_IN_UNKNOWN_ITEM, qpath, x->qs[q].line,
                 "question %s has no annotation in '%s' (left out)", vqa_i64_text(x->qs[q].num, idb), apath);
  }
  if (st == TL_ENOMEM) tl_err_set(x->err, TL_ENOMEM, "out of memory");
  return st;
}

tl_status tl_vqa_load_official(tl_vqa_set *s, const char *questions, const char *annotations,
                               tl_inlog *log, tl_err *err) {
  tl_vqa_set_init(s);
  s->official = 1;
  official_ctx x;
  memset(&x, 0, sizeof x);
  x.log = log;
  x.err = err;
  x.set = s;
  vqa_imap_init(&x.qmap);
  int found;
  tl_status st = TL_OK;
  if (!(s->path = tl_strdup(annotations))) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  if (st == TL_OK && questions) {
    x.path = questions;
    st = walk_file(questions, "questions", question_elem, &x, log, err, &found);
  }
  if (st == TL_OK) {
    x.path = annotations;
    st = walk_file(annotations, "annotations", annotation_elem, &x, log, err, &found);
  }
  if (st == TL_OK && questions) st = cross_check(&x, questions, annotations);
  if (st == TL_OK) st = set_finish(s, err);
  if (st == TL_OK && s->n == 0)
    st = tl_err_set(err, TL_EINPUT, "'%s': no usable annotation", annotations);
  free(x.qs); /* the texts live in the set's arena */
  vqa_imap_release(&x.qmap);
  return st;
}

/* ---- the JSONL item form ---------------------------------------------------------------------- */

typedef struct {
  tl_inlog *log;
  tl_err *err;
  tl_vqa_set *set;
  size_t cap;
} items_ctx;

/* The id of a JSONL item or result: "id" or "question_id" (exactly one). 0 and a report when
 * it is missing or bad; 1/2 as id_of. */
static int jsonl_id(tl_inlog *log, tl_err *err, const cJSON *o, const tl_jsonl *r, char *buf,
                    size_t cap, int64_t *num, tl_status *st) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "id");
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "question_id");
  *st = TL_OK;
  if (a && b) {
    *st = problem(log, err, TL_IN_BAD_FIELD, r->path, r->line_no, "both 'id' and 'question_id' given");
    return 0;
  }
  const cJSON *v = a ? a : b;
  if (!v) {
    *st = problem(log, err, TL_IN_MISSING_FIELD, r->path, r->line_no, "no 'id' (or 'question_id')");
    return 0;
  }
  int k = id_of(v, buf, cap, num);
  if (k == 0) {
    *st = problem(log, err, TL_IN_BAD_ID, r->path, r->line_no,
                  "'%s' is neither an integer nor a non-empty string of at most %d bytes",
                  a ? "id" : "question_id", ID_MAX_BYTES);
    return 0;
  }
  return k;
}

/* The "answers" array of strings into it; *bad after a report. */
static tl_status item_answers(items_ctx *x, const cJSON *o, const tl_jsonl *r, tl_vqa_item *it, int *bad) {
  *bad = 1;
  const cJSON *ja = cJSON_GetObjectItemCaseSensitive(o, "answers");
  if (!ja) return problem(x->log, x->err, TL_IN_MISSING_FIELD, r->path, r->line_no, "no 'answers'");
  if (!cJSON_IsArray(ja))
    return problem(x->log, x->err, TL_IN_BAD_FIELD, r->path, r->line_no, "'answers' is not an array");
  int n = cJSON_GetArraySize(ja);
  if (n == 0) return problem(x->log, x->err, TL_IN_BAD_FIELD, r->path, r->line_no, "no answers ('answers' is empty)");
  if (n > TL_VQA_MAX_REFS)
    return problem(x->log, x->err, TL_IN_BAD_FIELD, r->path, r->line_no, "%d answers (at most %d)", n, TL_VQA_MAX_REFS);
  if (!(it->answers = vqa_arena_alloc(&x->set->arena, (size_t)n * sizeof *it->answers))) return TL_ENOMEM;
  const cJSON *a;
  int i = 0;
  cJSON_ArrayForEach(a, ja) {
    if (!cJSON_IsString(a))
      return problem(x->log, x->err, TL_IN_BAD_FIELD, r->path, r->line_no, "answers[%d] is not a string", i);
    if (!(it->answers[i] = set_str(x->set, a->valuestring, strlen(a->valuestring)))) return TL_ENOMEM;
    it->n_answers = (size_t)++i;
  }
  *bad = 0;
  return TL_OK;
}

static tl_status take_item(items_ctx *x, const cJSON *o, const tl_jsonl *r, tl_vqa_item *it, int *bad) {
  *bad = 1;
  if (!cJSON_IsObject(o)) return problem(x->log, x->err, TL_IN_BAD_FIELD, r->path, r->line_no, "the line is not an object");
  char idb[1024];
  tl_status st;
  int k = jsonl_id(x->log, x->err, o, r, idb, sizeof idb, &it->num, &st);
  if (!k) return st;
  it->is_num = k == 1;
  int q = opt_string(x->set, o, "question", &it->question);
  if (q == -2) return TL_ENOMEM;
  if (q <= 0)
    return problem(x->log, x->err, q == 0 ? TL_IN_MISSING_FIELD : TL_IN_BAD_FIELD, r->path, r->line_no,
                   q == 0 ? "no 'question'" : "'question' is not a string");
  static const char *const OPT[] = {"image", "question_type", "answer_type"};
  char **dst[] = {&it->image, &it->question_type, &it->answer_type};
  for (int i = 0; i < 3; i++) {
    int v = opt_string(x->set, o, OPT[i], dst[i]);
    if (v == -2) return TL_ENOMEM;
    if (v < 0) return problem(x->log, x->err, TL_IN_BAD_FIELD, r->path, r->line_no, "'%s' is not a string", OPT[i]);
  }
  if ((st = item_answers(x, o, r, it, bad)) != TL_OK || *bad) return st;
  if (!(it->id = set_str(x->set, idb, strlen(idb)))) return TL_ENOMEM;
  it->line = r->line_no;
  return TL_OK;
}

static tl_status item_record(void *ctx, const cJSON *o, const tl_jsonl *r) {
  items_ctx *x = ctx;
  tl_vqa_item it;
  memset(&it, 0, sizeof it);
  int bad;
  tl_status st = take_item(x, o, r, &it, &bad);
  if (st == TL_OK && !bad) {
    bool inserted;
    size_t prev;
    char sb[64];
    if (tl_strmap_put(&x->set->index, it.id, x->set->n, &inserted, &prev) != TL_OK) st = TL_ENOMEM;
    else if (!inserted) {
      bad = 1;
      st = problem(x->log, x->err, TL_IN_DUPLICATE, r->path, r->line_no,
                   "id '%s' given again (first at line %ld; the first is kept)", show(it.id, sb, sizeof sb),
                   x->set->items[prev].line);
    } else {
      st = set_push(x->set, &x->cap, &it);
      memset(&it, 0, sizeof it);
    }
  }
  if (bad) x->set->n_dropped++;
  item_release(&it);
  if (st == TL_ENOMEM) tl_err_set(x->err, TL_ENOMEM, "out of memory reading '%s'", r->path);
  return st;
}

tl_status tl_vqa_load_items(tl_vqa_set *s, const char *path, tl_inlog *log, tl_err *err) {
  tl_vqa_set_init(s);
  if (!(s->path = tl_strdup(path))) return tl_err_set(err, TL_ENOMEM, "out of memory");
  tl_jsonl r;
  tl_status st = tl_jsonl_open(&r, path, 0, err);
  if (st != TL_OK) return st;
  items_ctx x = {log, err, s, 0};
  st = tl_inlog_each(log, &r, "items", item_record, &x, err);
  tl_jsonl_close(&r);
  if (st == TL_OK) st = set_finish(s, err);
  if (st == TL_OK && s->n == 0) st = tl_err_set(err, TL_EINPUT, "'%s': no usable item", path);
  return st;
}

/* ---- results ------------------------------------------------------------------------------------ */

tl_status tl_vqa_results_init(tl_vqa_results *r, const tl_vqa_set *s) {
  memset(r, 0, sizeof *r);
  r->n = s->n;
  if (s->n && !(r->answer = calloc(s->n, sizeof *r->answer))) return TL_ENOMEM;
  return TL_OK;
}

void tl_vqa_results_release(tl_vqa_results *r) {
  for (size_t i = 0; i < r->n; i++) free(r->answer[i]);
  free(r->answer);
  memset(r, 0, sizeof *r);
}

/* tl_vqa_results_set with the answer's length given (answer[0..n), no NUL needed). */
static tl_status results_set_n(tl_vqa_results *r, size_t i, const char *answer, size_t n) {
  char *c = malloc(n + 1);
  if (!c) return TL_ENOMEM;
  memcpy(c, answer, n);
  c[n] = 0;
  if (r->answer[i]) free(r->answer[i]);
  else r->n_given++;
  r->answer[i] = c;
  return TL_OK;
}

tl_status tl_vqa_results_set(tl_vqa_results *r, size_t i, const char *answer) {
  return results_set_n(r, i, answer, strlen(answer));
}

typedef struct {
  tl_inlog *log;
  tl_err *err;
  const char *path;
  const tl_vqa_set *set;
  tl_vqa_results *res;
  long *line_of; /* [set->n]: where each item's result was given */
  size_t index;
} results_ctx;

/* Takes the result `answer`[0..n) for question idb, given on `line`: reported when the set
 * does not have the question or when it had a result already. */
static tl_status put_result(results_ctx *x, const char *idb, const char *answer, size_t n, long line) {
  char sb[64];
  long i = tl_vqa_find(x->set, idb);
  if (i < 0) {
    x->res->n_unknown++;
    return problem(x->log, x->err, TL_IN_UNKNOWN_ITEM, x->path, line,
                   "a result for question %s, which the questions do not have (ignored)", show(idb, sb, sizeof sb));
  }
  if (x->res->answer[i]) {
    x->res->n_duplicate++;
    return problem(x->log, x->err, TL_IN_DUPLICATE, x->path, line,
                   "a second result for question %s (first at line %ld; the first is kept)",
                   show(idb, sb, sizeof sb), x->line_of[i]);
  }
  x->line_of[i] = line;
  if (results_set_n(x->res, (size_t)i, answer, n) != TL_OK)
    return tl_err_set(x->err, TL_ENOMEM, "out of memory reading '%s'", x->path);
  return TL_OK;
}

/* One result object, from line `line`. */
static tl_status take_result(results_ctx *x, const cJSON *o, long line, const char *what) {
  if (!cJSON_IsObject(o)) {
    x->res->n_bad++;
    return problem(x->log, x->err, TL_IN_BAD_FIELD, x->path, line, "%s is not an object", what);
  }
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "question_id");
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "id");
  const cJSON *ans = cJSON_GetObjectItemCaseSensitive(o, "answer");
  const cJSON *v = a ? a : b;
  char idb[1024];
  int64_t num;
  int k = v && !(a && b) ? id_of(v, idb, sizeof idb, &num) : 0;
  tl_status st = TL_OK;
  if (a && b) st = problem(x->log, x->err, TL_IN_BAD_FIELD, x->path, line, "%s: both 'question_id' and 'id' given", what);
  else if (!v) st = problem(x->log, x->err, TL_IN_MISSING_FIELD, x->path, line, "%s: no 'question_id'", what);
  else if (k == 0 || (k == 2 && x->set->official))
    st = problem(x->log, x->err, TL_IN_BAD_ID, x->path, line, "%s: 'question_id' is not %s", what,
                 x->set->official ? "an integer" : "an integer or a non-empty string");
  else if (!ans) st = problem(x->log, x->err, TL_IN_MISSING_FIELD, x->path, line, "%s: no 'answer'", what);
  else if (!cJSON_IsString(ans))
    st = problem(x->log, x->err, TL_IN_BAD_FIELD, x->path, line, "%s: 'answer' is not a string", what);
  else
    return put_result(x, idb, ans->valuestring, strlen(ans->valuestring), line);
  x->res->n_bad++;
  return st;
}

/* A plain result read in place: 1 taken (put_result's status in *st), 0 when the element is
 * not plain (the caller parses it): an object with one of "question_id" and "id" (an integer
 * of at most 15 digits, or for a non-official set a string of 1..ID_MAX_BYTES bytes), a string
 * "answer", and scalar members only. */
static int fast_result(results_ctx *x, vqa_jscan *c, size_t b, size_t e, long line, tl_status *st) {
  if (c->s[b] != '{' || !vqa_plain_elem(c->s, b, e)) return 0;
  vqa_jscan w = {.s = c->s, .n = e, .i = b, .line = line};
  vqa_member m[16];
  int k = vqa_obj_members(&w, m, 16, NULL, NULL, NULL);
  if (k < 0) return 0;
  const vqa_member *a = vqa_member_get(m, k, "question_id"), *bb = vqa_member_get(m, k, "id"),
                   *ans = vqa_member_get(m, k, "answer"), *v = a ? a : bb;
  const char *as, *is;
  size_t an, in;
  int64_t num;
  char idb[ID_MAX_BYTES + 1];
  if ((a && bb) || !v || !ans || !vqa_plain_string(c->s, ans, &as, &an)) return 0;
  for (int i = 0; i < k; i++)
    if (!vqa_plain_scalar(c->s, &m[i])) return 0;
  if (vqa_plain_int(c->s, v, &num)) vqa_i64_text(num, idb);
  else if (!x->set->official && vqa_plain_string(c->s, v, &is, &in) && in > 0 && in <= ID_MAX_BYTES) {
    memcpy(idb, is, in);
    idb[in] = 0;
  } else {
    return 0;
  }
  *st = put_result(x, idb, as, an, line);
  return 1;
}

static tl_status result_elem(void *ctx, vqa_jscan *c, size_t b, size_t e, long line) {
  results_ctx *x = ctx;
  size_t index = x->index++;
  tl_status st;
  if (fast_result(x, c, b, e, line, &st)) {
    x->res->n_plain++;
    return st;
  }
  char what[64];
  snprintf(what, sizeof what, "result %zu", index);
  cJSON *o;
  st = parse_elem(x->log, x->err, x->path, c, b, e, line, what, &o);
  if (st != TL_OK) return st;
  if (!o) {
    x->res->n_bad++;
    return TL_OK;
  }
  st = take_result(x, o, line, what);
  cJSON_Delete(o);
  return st;
}

static tl_status result_record(void *ctx, const cJSON *o, const tl_jsonl *r) {
  results_ctx *x = ctx;
  char what[64];
  snprintf(what, sizeof what, "result %zu", x->index++);
  return take_result(x, o, r->line_no, what);
}

/* 1 when the file's first non-blank byte is '[' (the official array form). */
static int starts_with_bracket(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  int ch;
  while ((ch = fgetc(f)) != EOF && (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n')) {
  }
  if (ch == 0xEF && fgetc(f) == 0xBB && fgetc(f) == 0xBF) /* a BOM, then look again */
    while ((ch = fgetc(f)) != EOF && (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n')) {
    }
  fclose(f);
  return ch == '[';
}

/* Reports the items without a result once: the count and the first few ids. */
static tl_status report_missing(results_ctx *x) {
  const tl_vqa_set *s = x->set;
  tl_vqa_results *r = x->res;
  r->n_missing = s->n - r->n_given;
  if (!r->n_missing) return TL_OK;
  char list[400] = "", sb[64];
  size_t shown = 0, len = 0;
  for (size_t i = 0; i < s->n && shown < 5; i++) {
    if (r->answer[i]) continue;
    int k = snprintf(list + len, sizeof list - len, "%s%s", shown ? ", " : "", show(s->items[i].id, sb, sizeof sb));
    if (k < 0 || (size_t)k >= sizeof list - len) break;
    len += (size_t)k;
    shown++;
  }
  return problem(x->log, x->err, TL_IN_MISSING_FIELD, x->path, 0,
                 "no result for %zu of %zu questions (%s%s); they are left out of every accuracy",
                 r->n_missing, s->n, list, r->n_missing > shown ? ", ..." : "");
}

tl_status tl_vqa_load_results(tl_vqa_results *r, const tl_vqa_set *s, const char *path,
                              tl_inlog *log, tl_err *err) {
  if (tl_vqa_results_init(r, s) != TL_OK) return tl_err_set(err, TL_ENOMEM, "out of memory");
  results_ctx x;
  memset(&x, 0, sizeof x);
  x.log = log;
  x.err = err;
  x.path = path;
  x.set = s;
  x.res = r;
  if (s->n && !(x.line_of = calloc(s->n, sizeof *x.line_of))) return tl_err_set(err, TL_ENOMEM, "out of memory");
  tl_status st;
  if (starts_with_bracket(path)) {
    int found;
    st = walk_file(path, NULL, result_elem, &x, log, err, &found);
  } else {
    tl_jsonl jr;
    st = tl_jsonl_open(&jr, path, 0, err);
    if (st == TL_OK) {
      st = tl_inlog_each(log, &jr, "results", result_record, &x, err);
      tl_jsonl_close(&jr);
    }
  }
  if (st == TL_OK) st = report_missing(&x);
  else r->n_missing = s->n - r->n_given;
  free(x.line_of);
  return st;
}

/* ---- the official report ------------------------------------------------------------------------ */

typedef struct {
  tl_strmap map; /* type -> group */
  const char **name; /* [n] borrowed from the items */
  double *sum;
  size_t *count;
  size_t n, cap;
} groups;

static void groups_release(groups *g) {
  tl_strmap_release(&g->map);
  free(g->name);
  free(g->sum);
  free(g->count);
}

/* Adds acc to the group of `name` (made on first sight: insertion order as Python's dict). */
static tl_status groups_add(groups *g, const char *name, double acc) {
  size_t k;
  if (!tl_strmap_get(&g->map, name, &k)) {
    if (g->n == g->cap) {
      size_t nc = g->cap ? g->cap * 2 : 16;
      const char **a = realloc(g->name, nc * sizeof *a);
      if (a) g->name = a;
      double *b = realloc(g->sum, nc * sizeof *b);
      if (b) g->sum = b;
      size_t *c = realloc(g->count, nc * sizeof *c);
      if (c) g->count = c;
      if (!a || !b || !c) return TL_ENOMEM;
      g->cap = nc;
    }
    k = g->n++;
    g->name[k] = name;
    g->sum[k] = 0.0;
    g->count[k] = 0;
    if (tl_strmap_put(&g->map, name, k, NULL, NULL) != TL_OK) return TL_ENOMEM;
  }
  g->sum[k] += acc;
  g->count[k]++;
  return TL_OK;
}

/* round(100*sum/count, 2) as the script writes a group's value. */
static double group_value(double sum, size_t count) {
  return tl_vqa_py_round2(100.0 * sum / (double)count);
}

static int add_number(cJSON *obj, const char *key, double v) {
  char num[64];
  tl_vqa_py_repr(v, num, sizeof num);
  return cJSON_AddRawToObject(obj, key, num) != NULL;
}

/* perQuestion's texts: round(100 acc, 2) as Python prints it is a function of acc's bits, and a
 * question's accuracy takes few values (10 answers: 0, 0.3, 0.6, 0.9, 1), so the texts are kept
 * in a small direct-mapped table by those bits (rounding and printing a double costs ~1 us). */
typedef struct {
  uint64_t bits;
  int used;
  char text[64];
} num_memo;
#define NUM_MEMO 64

static int add_per_question(cJSON *obj, const char *key, double acc, num_memo *memo) {
  uint64_t bits;
  memcpy(&bits, &acc, sizeof bits);
  num_memo *e = &memo[(bits * 0x9e3779b97f4a7c15ULL) >> 58]; /* 64 = 2^6 entries */
  if (!e->used || e->bits != bits) {
    tl_vqa_py_repr(tl_vqa_py_round2(100.0 * acc), e->text, sizeof e->text);
    e->bits = bits;
    e->used = 1;
  }
  return cJSON_AddRawToObject(obj, key, e->text) != NULL;
}

static int add_groups(cJSON *root, const char *key, const groups *g) {
  cJSON *o = cJSON_AddObjectToObject(root, key);
  if (!o) return 0;
  for (size_t k = 0; k < g->n; k++)
    if (!add_number(o, g->name[k], group_value(g->sum[k], g->count[k]))) return 0;
  return 1;
}

static int cmp_order(const void *a, const void *b) {
  const tl_vqa_item *x = *(const tl_vqa_item *const *)a, *y = *(const tl_vqa_item *const *)b;
  return (x->order > y->order) - (x->order < y->order);
}

tl_status tl_vqa_report(const tl_vqa_set *s, const tl_vqa_results *r, tl_vqa_version v,
                        cJSON **json, tl_vqa_summary *sum, tl_err *err) {
  tl_vqa_summary sm;
  memset(&sm, 0, sizeof sm);
  sm.n_items = s->n;
  *json = NULL;
  tl_status st = TL_OK;
  const tl_vqa_item **ord = s->n ? malloc(s->n * sizeof *ord) : NULL;
  double *acc = s->n ? malloc(s->n * sizeof *acc) : NULL;
  tl_vqa_ws *ws = tl_vqa_ws_new();
  if (ws) tl_vqa_ws_memo(ws); /* the same answers come back question after question */
  cJSON *root = cJSON_CreateObject(), *perq = NULL;
  groups qt, at;
  memset(&qt, 0, sizeof qt);
  memset(&at, 0, sizeof at);
  tl_strmap_init(&qt.map);
  tl_strmap_init(&at.map);
  if ((s->n && (!ord || !acc)) || !ws || !root) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  /* the script's order: the annotations file's */
  for (size_t i = 0; st == TL_OK && i < s->n; i++) ord[i] = &s->items[i];
  if (st == TL_OK && s->n) qsort(ord, s->n, sizeof *ord, cmp_order);
  double total = 0.0;
  for (size_t j = 0; st == TL_OK && j < s->n; j++) {
    size_t i = (size_t)(ord[j] - s->items);
    const tl_vqa_item *it = ord[j];
    if (!r->answer[i]) {
      sm.n_missing++;
      continue;
    }
    tl_vqa_result res;
    st = tl_vqa_score(ws, v, r->answer[i], (const char *const *)it->answers, it->n_answers, 0, &res, err);
    if (st != TL_OK) break;
    acc[i] = res.acc_py;
    total += res.acc_py;
    sm.n_scored++;
    sm.sum_units += res.acc;
    sm.n_not10 += it->n_answers != 10;
    sm.n_rounded += (size_t)res.rounded;
    sm.n_normalized += (size_t)res.normalized;
    if (it->question_type && groups_add(&qt, it->question_type, res.acc_py) != TL_OK) st = TL_ENOMEM;
    if (it->answer_type && groups_add(&at, it->answer_type, res.acc_py) != TL_OK) st = TL_ENOMEM;
    if (st == TL_ENOMEM) tl_err_set(err, st, "out of memory");
  }
  if (st == TL_OK && sm.n_scored == 0)
    st = tl_err_set(err, TL_EINPUT, "no question has a result: nothing to score");
  if (st == TL_OK) {
    sm.overall = group_value(total, sm.n_scored);
    int ok = add_number(root, "overall", sm.overall) && add_groups(root, "perQuestionType", &qt) &&
             add_groups(root, "perAnswerType", &at) && (perq = cJSON_AddObjectToObject(root, "perQuestion"));
    num_memo memo[NUM_MEMO] = {{0}};
    for (size_t j = 0; ok && j < s->n; j++) {
      size_t i = (size_t)(ord[j] - s->items);
      if (r->answer[i]) ok = add_per_question(perq, ord[j]->id, acc[i], memo);
    }
    if (!ok) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  if (st == TL_OK) {
    *json = root;
    root = NULL;
  }
  cJSON_Delete(root);
  groups_release(&qt);
  groups_release(&at);
  tl_vqa_ws_free(ws);
  free(acc);
  free(ord);
  if (sum) *sum = sm;
  return st;
}
