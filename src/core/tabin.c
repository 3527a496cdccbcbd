/* tabin.c - CSV / JSONL data tables (see tabin.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/jsonl.h"
#include "tally/str.h"
#include "tally/tabin.h"

static int ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

static tl_status add_row(tl_tabin *t, char **cells, long line, size_t *cap) {
  if (t->nrows == *cap) {
    size_t c = *cap ? *cap * 2 : 1024;
    char ***p = realloc(t->cells, c * sizeof *p);
    long *l = p ? realloc(t->line, c * sizeof *l) : NULL;
    if (!p || !l) {
      if (p) t->cells = p;
      return TL_ENOMEM;
    }
    t->cells = p;
    t->line = l;
    *cap = c;
  }
  t->cells[t->nrows] = cells;
  t->line[t->nrows++] = line;
  return TL_OK;
}

/* Splits one CSV record starting at *pp (may span lines inside quotes). Returns the fields in
 * a malloc'd array (*nf), advancing *pp and *line; NULL with *bad = 1 on an unterminated quote;
 * the fields with *bad = 2 when text follows a closing quote ("1"9): the caller reports it. */
static char **csv_record(const char **pp, char sep, int *nf, long *line, int *bad) {
  const char *p = *pp;
  int n = 0, cap = 8;
  char **f = malloc((size_t)cap * sizeof *f);
  tl_buf b;
  tl_buf_init(&b);
  *bad = 0;
  for (;;) {
    tl_buf_reset(&b);
    if (*p == '"') {
      p++;
      for (;;) {
        if (!*p) { *bad = 1; break; }
        if (*p == '"' && p[1] == '"') { tl_buf_append(&b, "\"", 1); p += 2; continue; }
        if (*p == '"') { p++; break; }
        if (*p == '\n') (*line)++;
        tl_buf_append(&b, p, 1);
        p++;
      }
      if (*p && *p != sep && *p != '\n' && *p != '\r') *bad = 2; /* text after a closing quote */
      while (*p && *p != sep && *p != '\n' && *p != '\r') p++;
    } else {
      const char *s = p;
      while (*p && *p != sep && *p != '\n' && *p != '\r') p++;
      tl_buf_append(&b, s, (size_t)(p - s));
    }
    if (n == cap) f = realloc(f, (size_t)(cap *= 2) * sizeof *f);
    f[n++] = tl_strndup(b.data, b.len);
    if (*bad == 1) break;
    if (*p == sep) { p++; continue; }
    if (*p == '\r') p++;
    if (*p == '\n') p++;
    break;
  }
  tl_buf_release(&b);
  *nf = n;
  *pp = p;
  if (*bad == 1) {
    for (int i = 0; i < n; i++) free(f[i]);
    free(f);
    return NULL;
  }
  return f;
}

static tl_status read_all(const char *path, char **out, size_t *len, tl_err *err) {
  tl_buf b;
  tl_buf_init(&b);
  tl_status st = tl_file_read(path, 0, &b, err);
  if (st) {
    tl_buf_release(&b);
    return st;
  }
  *len = b.len;
  *out = tl_buf_detach(&b);
  return TL_OK;
}

static tl_status read_csv(const char *path, char sep, tl_inlog *log, tl_tabin *t, tl_err *err) {
  char *text;
  size_t len;
  tl_status st = read_all(path, &text, &len, err);
  if (st) return st;
  size_t bad_at;
  const char *nul = memchr(text, 0, len);
  if (nul) { /* not a text table: the parse below would stop there and lose the rest */
    long line = 1;
    for (const char *c = text; c < nul; c++) line += *c == '\n';
    free(text);
    tl_inlog_report(log, TL_IN_MALFORMED_CSV, path, line, "NUL byte: not a text table");
    return tl_err_set(err, TL_EINPUT, "%s:%ld: NUL byte: not a text table", path, line);
  }
  if (!tl_utf8_valid(text, len, &bad_at)) {
    long line = 1;
    for (size_t i = 0; i < bad_at; i++) line += text[i] == '\n';
    free(text);
    tl_inlog_report(log, TL_IN_INVALID_UTF8, path, line, "invalid UTF-8");
    return tl_err_set(err, TL_EINPUT, "%s:%ld: invalid UTF-8", path, line);
  }
  const char *p = text;
  long line = 1;
  int bad, nf;
  if (!strncmp(p, "\xef\xbb\xbf", 3)) p += 3; /* BOM */
  char **hdr = csv_record(&p, sep, &nf, &line, &bad);
  if (!hdr || nf == 0 || (nf == 1 && !hdr[0][0])) {
    free(text);
    if (hdr) { free(hdr[0]); free(hdr); }
    return tl_err_set(err, TL_EINPUT, "%s: no header row", path);
  }
  t->colnames = hdr;
  t->ncols = nf;
  size_t cap = 0;
  while (*p && st == TL_OK) {
    long at = ++line;
    if (*p == '\n' || (*p == '\r' && p[1] == '\n')) { p += *p == '\r' ? 2 : 1; continue; }
    char **f = csv_record(&p, sep, &nf, &line, &bad);
    if (!f) {
      if (tl_inlog_report(log, TL_IN_MALFORMED_CSV, path, at, "unterminated quoted field")) st = TL_EINPUT;
      break; /* the rest of the file is inside the quote */
    }
    if (bad == 2) {
      if (tl_inlog_report(log, TL_IN_MALFORMED_CSV, path, at, "text after a closing quote")) st = TL_EINPUT;
      for (int i = 0; i < nf; i++) free(f[i]);
      free(f);
      continue;
    }
    if (nf != t->ncols) {
      if (tl_inlog_report(log, TL_IN_BAD_FIELD, path, at, "%d fields, the header has %d", nf, t->ncols))
        st = TL_EINPUT;
      for (int i = 0; i < nf; i++) free(f[i]);
      free(f);
      continue;
    }
    if (add_row(t, f, at, &cap)) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  free(text);
  return st;
}

static char *cell_text(const cJSON *v) {
  char tmp[64];
  if (!v || cJSON_IsNull(v)) return tl_strdup("");
  if (cJSON_IsString(v)) return tl_strdup(v->valuestring);
  if (cJSON_IsBool(v)) return tl_strdup(cJSON_IsTrue(v) ? "1" : "0");
  if (cJSON_IsNumber(v)) {
    snprintf(tmp, sizeof tmp, "%.17g", v->valuedouble);
    return tl_strdup(tmp);
  }
  return NULL; /* arrays, objects */
}

static tl_status read_jsonl(const char *path, size_t max_line, tl_inlog *log, tl_tabin *t, tl_err *err) {
  tl_jsonl r;
  tl_status st = tl_jsonl_open(&r, path, max_line, err);
  if (st) return st;
  size_t cap = 0;
  int colcap = 0;
  cJSON *o;
  tl_jl_result res;
  tl_err e;
  while (st == TL_OK && (res = tl_jsonl_next(&r, &o, &e)) != TL_JL_EOF) {
    if (res == TL_JL_IOERR) { st = tl_err_set(err, TL_EIO, "%s", e.msg); break; }
    if (res == TL_JL_BAD) { if (tl_inlog_report_bad_line(log, &r)) st = TL_EINPUT; continue; }
    if (!cJSON_IsObject(o)) {
      if (tl_inlog_report(log, TL_IN_BAD_FIELD, r.path, r.line_no, "line is not a JSON object")) st = TL_EINPUT;
      cJSON_Delete(o);
      continue;
    }
    /* columns: the union of keys in order of first appearance */
    for (const cJSON *c = o->child; c; c = c->next) {
      if (tl_tabin_col(t, c->string) >= 0) continue;
      if (t->ncols == colcap) {
        colcap = colcap ? colcap * 2 : 16;
        t->colnames = realloc(t->colnames, (size_t)colcap * sizeof *t->colnames);
        for (size_t i = 0; i < t->nrows; i++) {
          t->cells[i] = realloc(t->cells[i], (size_t)colcap * sizeof **t->cells);
        }
      }
      t->colnames[t->ncols] = tl_strdup(c->string);
      for (size_t i = 0; i < t->nrows; i++) t->cells[i][t->ncols] = tl_strdup("");
      t->ncols++;
    }
    char **cells = malloc((size_t)(colcap ? colcap : 1) * sizeof *cells);
    int bad = 0;
    for (int c = 0; c < t->ncols; c++) {
      cells[c] = cell_text(cJSON_GetObjectItemCaseSensitive(o, t->colnames[c]));
      if (!cells[c]) {
        bad = 1;
        cells[c] = tl_strdup("");
        if (tl_inlog_report(log, TL_IN_BAD_FIELD, r.path, r.line_no, "field '%s' is an array or object",
                            t->colnames[c]))
          st = TL_EINPUT;
      }
    }
    cJSON_Delete(o);
    if (bad) {
      for (int c = 0; c < t->ncols; c++) free(cells[c]);
      free(cells);
      continue;
    }
    if (add_row(t, cells, r.line_no, &cap)) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  tl_jsonl_close(&r);
  return st;
}

tl_status tl_tabin_read(const char *path, size_t max_line, tl_inlog *log, tl_tabin *t, tl_err *err) {
  memset(t, 0, sizeof *t);
  t->path = tl_strdup(path);
  tl_status st;
  if (ends_with(path, ".csv")) st = read_csv(path, ',', log, t, err);
  else if (ends_with(path, ".tsv")) st = read_csv(path, '\t', log, t, err);
  else st = read_jsonl(path, max_line, log, t, err);
  if (st == TL_OK && t->nrows == 0) st = tl_err_set(err, TL_EINPUT, "%s: no data rows", path);
  if (st) tl_tabin_release(t);
  return st;
}

void tl_tabin_release(tl_tabin *t) {
  for (size_t r = 0; r < t->nrows; r++) {
    for (int c = 0; c < t->ncols; c++) free(t->cells[r][c]);
    free(t->cells[r]);
  }
  for (int c = 0; c < t->ncols; c++) free(t->colnames[c]);
  free(t->colnames);
  free(t->cells);
  free(t->line);
  free(t->path);
  memset(t, 0, sizeof *t);
}

int tl_tabin_col(const tl_tabin *t, const char *name) {
  for (int c = 0; c < t->ncols; c++)
    if (strcmp(t->colnames[c], name) == 0) return c;
  return -1;
}

tl_status tl_tabin_numeric(const tl_tabin *t, int col, tl_inlog *log, double *out, unsigned char *ok) {
  tl_status st = TL_OK;
  for (size_t r = 0; r < t->nrows; r++) {
    const char *s = t->cells[r][col];
    char *end = NULL;
    errno = 0;
    double v = *s ? strtod(s, &end) : NAN;
    const char *num_end = end;
    while (end && (*end == ' ' || *end == '\t')) end++;
    ok[r] = *s && end && num_end != s && *end == 0 && isfinite(v); /* blanks alone are no number */
    out[r] = ok[r] ? v : NAN;
    if (!ok[r] && tl_inlog_report(log, TL_IN_BAD_FIELD, t->path, t->line[r],
                                  "column '%s' is not a number: '%.40s'", t->colnames[col], s))
      st = TL_EINPUT;
  }
  return st;
}
