/* jsonl.c - JSONL reader (see jsonl.h). Lines are read with getc-level buffering into a tl_buf;
 * an over-long line is consumed to its end without being stored. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tally/inlog.h"
#include "tally/jsonl.h"

int tl_json_is_int(const cJSON *v, double lo, double hi) {
  if (!cJSON_IsNumber(v)) return 0;
  double d = v->valuedouble;
  return d >= lo && d <= hi && d == floor(d);
}

static int cmp_keys(const void *a, const void *b) {
  return strcmp((*(cJSON *const *)a)->string, (*(cJSON *const *)b)->string);
}

void tl_json_sort_keys(cJSON *j) {
  if (!j) return;
  int n = 0;
  for (cJSON *c = j->child; c; c = c->next) {
    tl_json_sort_keys(c);
    n++;
  }
  if (!cJSON_IsObject(j) || n < 2) return;
  cJSON **v = malloc((size_t)n * sizeof *v);
  if (!v) return;
  int i = 0;
  for (cJSON *c = j->child; c; c = c->next) v[i++] = c;
  qsort(v, (size_t)n, sizeof *v, cmp_keys);
  for (i = 0; i < n; i++) {
    v[i]->prev = i ? v[i - 1] : v[n - 1]; /* cJSON: the first item's prev is the last */
    v[i]->next = i + 1 < n ? v[i + 1] : NULL;
  }
  j->child = v[0];
  free(v);
}

tl_status tl_jsonl_open(tl_jsonl *r, const char *path, size_t max_line, tl_err *err) {
  memset(r, 0, sizeof *r);
  tl_buf_init(&r->line);
  r->max_line = max_line ? max_line : TL_JSONL_DEFAULT_MAX_LINE;
  if (strcmp(path, "-") == 0) {
    r->fp = stdin;
  } else {
    r->fp = fopen(path, "rb");
    if (!r->fp) return tl_err_set(err, TL_EIO, "cannot open '%s': %s", path, strerror(errno));
  }
  r->path = tl_strdup(strcmp(path, "-") == 0 ? "<stdin>" : path);
  if (!r->path) {
    if (r->fp != stdin) fclose(r->fp);
    r->fp = NULL;
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  return TL_OK;
}

void tl_jsonl_close(tl_jsonl *r) {
  if (r->fp && r->fp != stdin) fclose(r->fp);
  r->fp = NULL;
  free(r->path);
  r->path = NULL;
  tl_buf_release(&r->line);
}

/* Refills the read buffer; returns bytes available (0 = EOF), -1 on a read error. */
static long refill(tl_jsonl *r) {
  if (r->rpos < r->rlen) return (long)(r->rlen - r->rpos);
  r->rpos = 0;
  r->rlen = fread(r->rbuf, 1, sizeof r->rbuf, r->fp);
  if (r->rlen == 0) return ferror(r->fp) ? -1 : 0;
  return (long)r->rlen;
}

/* Reads one physical line into r->line (embedded NUL bytes kept, so they can be reported).
 * Returns 1 = got a line, 0 = EOF, -1 = read error, 2 = line over the cap (consumed, not
 * stored). */
static int read_line(tl_jsonl *r) {
  tl_buf_reset(&r->line);
  r->line_off = r->pos;
  int got = 0, over = 0;
  for (;;) {
    long avail = refill(r);
    if (avail < 0) return -1;
    if (avail == 0) break;
    got = 1;
    const char *start = r->rbuf + r->rpos;
    const char *nl = memchr(start, '\n', (size_t)avail);
    size_t n = nl ? (size_t)(nl - start) + 1 : (size_t)avail;
    if (!over) {
      if (r->line.len + n > r->max_line + 1) {
        over = 1;
        tl_buf_reset(&r->line);
      } else if (tl_buf_append(&r->line, start, n) != TL_OK) {
        return -1;
      }
    }
    r->rpos += n;
    r->pos += n;
    if (nl) break;
  }
  if (!got) return 0;
  r->line_no++;
  if (over) return 2;
  while (r->line.len && (r->line.data[r->line.len - 1] == '\n' || r->line.data[r->line.len - 1] == '\r'))
    r->line.data[--r->line.len] = 0;
  return 1;
}

/* ---- what cJSON reads silently wrong: duplicate keys, \u0000 escapes ---- */

/* The walk's path is kept as its steps and written out only when an issue is reported (a
 * member's key, or an array element's index when key is NULL): writing it at every member cost
 * a snprintf per value of every line read (7% of loading a judgments file). cJSON parses at most
 * CJSON_NESTING_LIMIT (1000) levels, so PATH_STEPS steps always hold the whole path. */
#define PATH_STEPS 1024
typedef struct {
  const char *key;
  int idx;
} path_step;

typedef struct {
  const char *text, *p;
  long line;
  char path[256];             /* the path, written by path_write when an issue is reported */
  path_step steps[PATH_STEPS];
  int nsteps;
  tl_json_issue_fn fn;
  void *ctx;
  long n;
  int stop;
  int depth;                  /* objects and arrays entered */
  struct tl_jsonl_top *top;   /* when not NULL: the spans of the root object's member values */
  int *ntop;
} json_walk;

/* w->path: the steps written one after the other as "a.b[2].c", cut to fit the buffer (each
 * step's text as far as it fits, as snprintf cuts it; nothing once the buffer is full). */
static void path_write(json_walk *w) {
  size_t plen = 0;
  w->path[0] = 0;
  for (int i = 0; i < w->nsteps && i < PATH_STEPS; i++) {
    const size_t room = sizeof w->path - plen;
    const path_step *st = &w->steps[i];
    int n = st->key ? snprintf(w->path + plen, room, "%s%s", plen ? "." : "", st->key)
                    : snprintf(w->path + plen, room, "[%d]", st->idx);
    if (n > 0) plen += (size_t)n < room ? (size_t)n : room - 1;
  }
}

static void walk_issue(json_walk *w, tl_json_issue_kind kind, long line, const char *at,
                       const char *key) {
  if (w->stop) return;
  path_write(w);
  tl_json_issue is = {kind, line, (size_t)(at - w->text) + 1, w->path, key};
  w->n++;
  if (w->fn(w->ctx, &is)) w->stop = 1;
}

static void walk_ws(json_walk *w) { /* cJSON skips every byte <= ' ' */
  while (*w->p && (unsigned char)*w->p <= ' ') {
    if (*w->p == '\n') w->line++;
    w->p++;
  }
}

/* At the opening quote: skips the string, reporting \u0000 escapes. Escapes are consumed in
 * order, so in "\\u0000" the backslash pair is one escape and "u0000" plain text. */
static int walk_string(json_walk *w, const char *key) {
  const char *p = w->p + 1;
  for (;;) {
    p += strcspn(p, "\"\\\n"); /* the next byte that matters (vectorized in glibc) */
    if (!*p) return -1;
    if (*p == '"') break;
    if (*p == '\n') w->line++;
    if (*p == '\\') {
      if (!p[1]) return -1;
      if (p[1] == 'u' && p[2] == '0' && p[3] == '0' && p[4] == '0' && p[5] == '0')
        walk_issue(w, TL_JSON_NUL_ESCAPE, w->line, p, key);
      p += 2;
      continue;
    }
    p++;
  }
  w->p = p + 1;
  return 0;
}

typedef struct {
  const char *name;
  int idx;
} key_idx;

static int key_idx_cmp(const void *a, const void *b) {
  const key_idx *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* dup[i] = 1 when child i of obj repeats the key of an earlier child. Pairwise for small
 * objects, by sorting (name, index) for large ones. Returns -1 when out of memory. */
static int find_dups(const cJSON *obj, int k, unsigned char *dup) {
  memset(dup, 0, (size_t)k);
  if (k <= 16) {
    const char *names[16];
    int i = 0;
    for (const cJSON *c = obj->child; c; c = c->next, i++) {
      names[i] = c->string ? c->string : "";
      for (int j = 0; j < i; j++)
        if (strcmp(names[j], names[i]) == 0) {
          dup[i] = 1;
          break;
        }
    }
    return 0;
  }
  key_idx *ki = malloc((size_t)k * sizeof *ki);
  if (!ki) return -1;
  int i = 0;
  for (const cJSON *c = obj->child; c; c = c->next, i++) ki[i] = (key_idx){c->string ? c->string : "", i};
  qsort(ki, (size_t)k, sizeof *ki, key_idx_cmp);
  for (i = 1; i < k; i++)
    if (strcmp(ki[i].name, ki[i - 1].name) == 0) dup[ki[i].idx] = 1;
  free(ki);
  return 0;
}

static void path_push(json_walk *w, const char *key, int idx) {
  if (w->nsteps < PATH_STEPS) w->steps[w->nsteps] = (path_step){key, idx};
  w->nsteps++;
}

static void path_pop(json_walk *w) { w->nsteps--; }

static int walk_value(json_walk *w, const cJSON *v) {
  walk_ws(w);
  if (w->stop) return 0;
  if (cJSON_IsObject(v)) {
    if (*w->p != '{') return -1;
    w->p++;
    int k = 0;
    for (const cJSON *c = v->child; c; c = c->next) k++;
    unsigned char small[64], *dup = k <= 64 ? small : malloc((size_t)k);
    if (!dup) return -1;
    if (k > 1 && find_dups(v, k, dup) != 0) memset(dup, 0, (size_t)k);
    int i = 0, rc = 0;
    for (const cJSON *c = v->child; c && !w->stop; c = c->next, i++) {
      walk_ws(w);
      if (i > 0) {
        if (*w->p != ',') { rc = -1; break; }
        w->p++;
        walk_ws(w);
      }
      if (*w->p != '"') { rc = -1; break; }
      const char *kat = w->p;
      long kline = w->line;
      if (walk_string(w, c->string ? c->string : "")) { rc = -1; break; }
      if (k > 1 && dup[i]) walk_issue(w, TL_JSON_DUP_KEY, kline, kat, c->string ? c->string : "");
      walk_ws(w);
      if (*w->p != ':') { rc = -1; break; }
      w->p++;
      path_push(w, c->string ? c->string : "", 0);
      walk_ws(w);
      const char *vat = w->p;
      w->depth++;
      rc = walk_value(w, c);
      w->depth--;
      path_pop(w);
      if (rc) break;
      if (w->top && w->depth == 0 && *w->ntop < TL_JSONL_TOP)
        w->top[(*w->ntop)++] = (struct tl_jsonl_top){c, (size_t)(vat - w->text), (size_t)(w->p - vat)};
    }
    if (dup != small) free(dup);
    if (rc || w->stop) return rc;
    walk_ws(w);
    if (*w->p != '}') return -1;
    w->p++;
    return 0;
  }
  if (cJSON_IsArray(v)) {
    if (*w->p != '[') return -1;
    w->p++;
    int i = 0;
    for (const cJSON *c = v->child; c && !w->stop; c = c->next, i++) {
      if (i > 0) {
        walk_ws(w);
        if (*w->p != ',') return -1;
        w->p++;
      }
      path_push(w, NULL, i);
      w->depth++;
      int rc = walk_value(w, c);
      w->depth--;
      path_pop(w);
      if (rc) return rc;
    }
    if (w->stop) return 0;
    walk_ws(w);
    if (*w->p != ']') return -1;
    w->p++;
    return 0;
  }
  if (cJSON_IsString(v)) return *w->p == '"' ? walk_string(w, NULL) : -1;
  /* number, true, false, null */
  const char *s = w->p;
  while (*w->p && (unsigned char)*w->p > ' ' && *w->p != ',' && *w->p != ']' && *w->p != '}') w->p++;
  return w->p > s ? 0 : -1;
}

/* tl_json_check, recording the spans of the root object's member values in top (see
 * tl_jsonl_span) when top is not NULL. */
static long check_spans(const char *text, const cJSON *root, tl_json_issue_fn fn, void *ctx,
                        struct tl_jsonl_top *top, int *ntop) {
  json_walk w; /* steps[] is written as the walk goes: only the scalars are cleared */
  w.path[0] = 0;
  w.nsteps = 0;
  w.n = 0;
  w.stop = 0;
  w.depth = 0;
  w.text = w.p = text;
  w.line = 1;
  w.fn = fn;
  w.ctx = ctx;
  w.top = top;
  w.ntop = ntop;
  if (top) *ntop = 0;
  if (!strncmp(w.p, "\xef\xbb\xbf", 3)) w.p += 3; /* cJSON skips a UTF-8 BOM too */
  if (walk_value(&w, root) != 0 && top) *ntop = 0; /* no spans from a walk that lost its way */
  return w.n;
}

long tl_json_check(const char *text, const cJSON *root, tl_json_issue_fn fn, void *ctx) {
  return check_spans(text, root, fn, ctx, NULL, NULL);
}

int tl_jsonl_span(const tl_jsonl *r, const cJSON *node, size_t *off, size_t *len) {
  for (int i = 0; node && i < r->ntop; i++)
    if (r->top[i].node == node) {
      *off = r->top[i].off;
      *len = r->top[i].len;
      return 1;
    }
  return 0;
}

/* Keeps the first issue of a line as its detail. */
static int first_issue(void *ctx, const tl_json_issue *is) {
  tl_jsonl *r = ctx;
  if (is->kind == TL_JSON_DUP_KEY) {
    r->bad_kind = TL_IN_DUPLICATE_KEY;
    snprintf(r->detail, sizeof r->detail, "duplicate key '%.80s'%s%.80s%s at byte %zu", is->key,
             *is->path ? " in '" : "", is->path, *is->path ? "'" : "", is->byte);
  } else {
    r->bad_kind = TL_IN_NUL_ESCAPE;
    if (is->key)
      snprintf(r->detail, sizeof r->detail, "\\u0000 escape (a NUL character) in a key%s%.80s%s at byte %zu",
               *is->path ? " of '" : "", is->path, *is->path ? "'" : "", is->byte);
    else
      snprintf(r->detail, sizeof r->detail, "\\u0000 escape (a NUL character) in %s%.80s%s at byte %zu",
               *is->path ? "'" : "a string", is->path, *is->path ? "'" : "", is->byte);
  }
  return 1;
}

/* Counts a bad line and formats "file:line: detail" into err. */
static tl_jl_result bad(tl_jsonl *r, int kind, tl_err *err) {
  r->n_bad++;
  r->bad_kind = kind;
  tl_err_set(err, TL_EINPUT, "%s:%ld: %s", r->path, r->line_no, r->detail);
  return TL_JL_BAD;
}

tl_jl_result tl_jsonl_next(tl_jsonl *r, cJSON **obj, tl_err *err) {
  *obj = NULL;
  r->ntop = 0;
  for (;;) {
    int rc = read_line(r);
    if (rc == 0) return TL_JL_EOF;
    if (rc < 0) {
      tl_err_set(err, TL_EIO, "%s:%ld: read error: %s", r->path, r->line_no + 1, strerror(errno));
      return TL_JL_IOERR;
    }
    if (rc == 2) {
      snprintf(r->detail, sizeof r->detail, "line longer than the %zu-byte cap", r->max_line);
      return bad(r, TL_IN_LINE_TOO_LONG, err);
    }
    const char *s = r->line.data;
    const char *nul = memchr(s, 0, r->line.len);
    if (nul) {
      snprintf(r->detail, sizeof r->detail, "NUL byte at byte %zu (not JSON text)", (size_t)(nul - s) + 1);
      return bad(r, TL_IN_MALFORMED_JSON, err);
    }
    size_t i = 0;
    while (s[i] == ' ' || s[i] == '\t') i++;
    if (s[i] == 0) continue; /* blank line */
    size_t bad_at;
    if (!tl_utf8_valid(s, r->line.len, &bad_at)) {
      snprintf(r->detail, sizeof r->detail, "invalid UTF-8 at byte %zu", bad_at + 1);
      return bad(r, TL_IN_INVALID_UTF8, err);
    }
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithOpts(s, &end, 1);
    if (!v) {
      size_t at = end ? (size_t)(end - s) : 0;
      snprintf(r->detail, sizeof r->detail, "malformed JSON near byte %zu", at + 1);
      return bad(r, TL_IN_MALFORMED_JSON, err);
    }
    r->bad_kind = -1;
    check_spans(s, v, first_issue, r, r->top, &r->ntop);
    if (r->bad_kind >= 0) {
      cJSON_Delete(v);
      return bad(r, r->bad_kind, err);
    }
    r->n_records++;
    *obj = v;
    return TL_JL_RECORD;
  }
}
