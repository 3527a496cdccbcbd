/* tabin.c - CSV / JSONL data tables (see tabin.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/jsonl.h"
#include "tally/str.h"
#include "tally/strmap.h"
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

/* ---- CSV / TSV (RFC 4180) ----
 *
 * A record is fields separated by `sep` and ended by a line break (LF, CRLF, or a lone CR) or
 * the end of the text; a final record without a line break is kept. A field is either quoted
 * ("..." with "" for a quote, which may hold separators and line breaks) or unquoted (no quote
 * at all in it). Line numbers count line breaks, inside quoted fields too, so the rows after a
 * multi-line field keep their true line numbers.
 *
 * A malformed record is reported (kind malformed_csv) at the line where the fault starts and
 * dropped; reading resumes at the start of the next line:
 *  - an unterminated quoted field: reported at the line where its quote opened; since a stray
 *    quote would otherwise take the rest of the table into one field, reading resumes at the
 *    line after the quote, so it costs one row;
 *  - text after a closing quote ("1"9): reported at the line where that quoted field opened
 *    (also resuming after that line: the quote that closed it may be a second stray quote);
 *  - a quote inside an unquoted field (1"9): reported at its line.
 * A record with the wrong number of fields is reported as bad_field at the line where it starts;
 * when it spans lines through a quoted field, reading also resumes at the line after its start.
 * Two stray quotes that pair up into a well-formed field with the right field count are legal
 * RFC 4180 and cannot be told from a real multi-line field: that row is kept as one (its cell is
 * reported if its column is numeric, as a quoted field over several lines). Under strict input
 * the first problem stops the read. */

enum { CSV_OK = 0, CSV_UNTERMINATED, CSV_AFTER_QUOTE, CSV_QUOTE_IN_FIELD };

typedef struct {
  char **f;
  int n, cap;
  int bad;            /* CSV_* */
  long bad_line;      /* the line to report */
  long close_line;    /* CSV_AFTER_QUOTE: the line of the closing quote */
  long spans;         /* line breaks inside quoted fields */
  const char *resume; /* after a bad record: the start of the line after bad_line */
} csv_rec;

/* Length of the line break at p: 2 for CRLF, 1 for LF or a lone CR, 0 for none. */
static int csv_eol(const char *p) {
  if (*p == '\r') return p[1] == '\n' ? 2 : 1;
  return *p == '\n';
}

static const char *csv_next_line(const char *p) {
  while (*p && !csv_eol(p)) p++;
  return p + csv_eol(p);
}

static void csv_rec_clear(csv_rec *r) {
  for (int i = 0; i < r->n; i++) free(r->f[i]);
  r->n = 0;
}

static tl_status csv_push(csv_rec *r, const char *s, size_t n) {
  if (r->n == r->cap) {
    int cap = r->cap ? r->cap * 2 : 16;
    char **f = realloc(r->f, (size_t)cap * sizeof *f);
    if (!f) return TL_ENOMEM;
    r->f = f;
    r->cap = cap;
  }
  if (!(r->f[r->n] = tl_strndup(s, n))) return TL_ENOMEM;
  r->n++;
  return TL_OK;
}

/* Parses the record at *pp, which is on line *line, into r (r->bad says if it is well-formed).
 * On CSV_OK *pp and *line move past the record's line break; otherwise the caller resumes at
 * r->resume on line r->bad_line + 1. */
static tl_status csv_record(const char **pp, long *line, char sep, csv_rec *r) {
  const char *p = *pp;
  long ln = *line;
  tl_buf b;
  tl_buf_init(&b);
  tl_status st = TL_OK;
  csv_rec_clear(r);
  r->bad = CSV_OK;
  r->spans = 0;
  for (;;) {
    tl_buf_reset(&b);
    if (*p == '"') {
      const char *q = p;
      long qline = ln;
      p++;
      for (;;) {
        if (!*p) {
          r->bad = CSV_UNTERMINATED;
          break;
        }
        if (*p == '"' && p[1] == '"') {
          st |= tl_buf_append(&b, "\"", 1);
          p += 2;
          continue;
        }
        if (*p == '"') {
          p++;
          break;
        }
        int e = csv_eol(p);
        if (e) ln++, r->spans++;
        else e = 1;
        st |= tl_buf_append(&b, p, (size_t)e);
        p += e;
      }
      if (!r->bad && *p && *p != sep && !csv_eol(p)) {
        r->bad = CSV_AFTER_QUOTE;
        r->close_line = ln;
      }
      if (r->bad) {
        r->bad_line = qline;
        r->resume = csv_next_line(q);
        break;
      }
    } else {
      const char *s = p;
      while (*p && *p != sep && !csv_eol(p) && *p != '"') p++;
      if (*p == '"') {
        r->bad = CSV_QUOTE_IN_FIELD;
        r->bad_line = ln;
        r->resume = csv_next_line(p);
        break;
      }
      st |= tl_buf_append(&b, s, (size_t)(p - s));
    }
    if (st || (st = csv_push(r, b.data, b.len))) break;
    if (*p == sep) {
      p++;
      continue;
    }
    if (csv_eol(p)) {
      p += csv_eol(p);
      ln++;
    }
    break;
  }
  tl_buf_release(&b);
  if (st) return TL_ENOMEM;
  if (r->bad) {
    csv_rec_clear(r);
  } else {
    *pp = p;
    *line = ln;
  }
  return TL_OK;
}

static const char *csv_what(const csv_rec *r, char *buf, size_t n) {
  switch (r->bad) {
  case CSV_UNTERMINATED:
    return "unterminated quoted field: the quote opened on this line is never closed";
  case CSV_AFTER_QUOTE:
    if (r->close_line == r->bad_line) return "text after a closing quote";
    snprintf(buf, n, "text after a closing quote: the quoted field opened on this line closes on line %ld",
             r->close_line);
    return buf;
  default:
    return "quote inside an unquoted field (quote the whole field and double the quote)";
  }
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
  char what[160];
  csv_rec rec = {0};
  if (!strncmp(p, "\xef\xbb\xbf", 3)) p += 3; /* BOM */
  st = csv_record(&p, &line, sep, &rec);
  if (st == TL_OK && rec.bad) {
    const char *m = csv_what(&rec, what, sizeof what);
    tl_inlog_report(log, TL_IN_MALFORMED_CSV, path, rec.bad_line, "header row: %s", m);
    st = tl_err_set(err, TL_EINPUT, "%s:%ld: header row: %s", path, rec.bad_line, m);
  } else if (st == TL_OK && (rec.n == 0 || (rec.n == 1 && !rec.f[0][0]))) {
    st = tl_err_set(err, TL_EINPUT, "%s: no header row", path);
  } else if (st) {
    st = tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  if (st) {
    csv_rec_clear(&rec);
    free(rec.f);
    free(text);
    return st;
  }
  t->colnames = rec.f;
  t->ncols = rec.n;
  rec = (csv_rec){0};
  size_t cap = 0;
  while (*p && st == TL_OK) {
    const char *start = p;
    long at = line;
    if (csv_eol(p)) { /* blank line */
      p += csv_eol(p);
      line++;
      continue;
    }
    if (csv_record(&p, &line, sep, &rec)) {
      st = tl_err_set(err, TL_ENOMEM, "out of memory");
      break;
    }
    if (rec.bad) {
      if (tl_inlog_report(log, TL_IN_MALFORMED_CSV, path, rec.bad_line, "%s", csv_what(&rec, what, sizeof what)))
        st = TL_EINPUT;
      p = rec.resume;
      line = rec.bad_line + 1;
      continue;
    }
    if (rec.n != t->ncols) {
      int multi = rec.spans > 0;
      if (tl_inlog_report(log, TL_IN_BAD_FIELD, path, at, "%d fields, the header has %d%s", rec.n, t->ncols,
                          multi ? " (the record spans lines through a quoted field; reading resumes on the next line)" : ""))
        st = TL_EINPUT;
      if (multi) {
        p = csv_next_line(start);
        line = at + 1;
      }
      csv_rec_clear(&rec);
      continue;
    }
    if (add_row(t, rec.f, at, &cap)) {
      st = tl_err_set(err, TL_ENOMEM, "out of memory");
      break;
    }
    rec = (csv_rec){0}; /* the row owns the fields now */
  }
  csv_rec_clear(&rec);
  free(rec.f);
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

/* The shared "" of the JSONL cells a row does not have (never freed: see tl_tabin_release). */
static char TABIN_EMPTY[1];

/* JSONL: the columns are the union of the keys in order of first appearance (at most
 * TL_TABIN_MAX_COLS). Linear in the input: keys are found through a hash map, each row is read
 * by walking its own members, and a row is stored at the width the table had when it was read;
 * the rows are padded to the final width once, at the end, with the shared TABIN_EMPTY. */
static tl_status read_jsonl(const char *path, size_t max_line, tl_inlog *log, tl_tabin *t, tl_err *err) {
  tl_jsonl r;
  tl_status st = tl_jsonl_open(&r, path, max_line, err);
  if (st) return st;
  size_t cap = 0, wcap = 0;
  int colcap = 0;
  int *width = NULL; /* [nrows] the number of cells row i was stored with */
  tl_strmap cols;
  tl_strmap_init(&cols);
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
    /* new columns first, so the row can be stored at its final width for now */
    int over = 0;
    for (const cJSON *c = o->child; c && st == TL_OK; c = c->next) {
      if (tl_strmap_get(&cols, c->string, NULL)) continue;
      if (t->ncols == TL_TABIN_MAX_COLS) {
        over = 1;
        if (tl_inlog_report(log, TL_IN_BAD_FIELD, r.path, r.line_no,
                            "key '%s' would be column %d of the table: at most %d columns; line skipped",
                            c->string, TL_TABIN_MAX_COLS + 1, TL_TABIN_MAX_COLS))
          st = TL_EINPUT;
        break;
      }
      if (t->ncols == colcap) {
        int nc = colcap ? colcap * 2 : 16;
        char **p = realloc(t->colnames, (size_t)nc * sizeof *p);
        if (!p) { st = tl_err_set(err, TL_ENOMEM, "out of memory"); break; }
        t->colnames = p;
        colcap = nc;
      }
      if (!(t->colnames[t->ncols] = tl_strdup(c->string)) ||
          tl_strmap_put(&cols, c->string, (size_t)t->ncols, NULL, NULL)) {
        free(t->colnames[t->ncols]);
        st = tl_err_set(err, TL_ENOMEM, "out of memory");
        break;
      }
      t->ncols++;
    }
    if (st || over) {
      cJSON_Delete(o);
      continue;
    }
    char **cells = malloc((size_t)(t->ncols ? t->ncols : 1) * sizeof *cells);
    if (!cells) {
      cJSON_Delete(o);
      st = tl_err_set(err, TL_ENOMEM, "out of memory");
      break;
    }
    for (int c = 0; c < t->ncols; c++) cells[c] = TABIN_EMPTY;
    int bad = 0;
    for (const cJSON *c = o->child; c; c = c->next) {
      size_t k = 0;
      tl_strmap_get(&cols, c->string, &k);
      char *v = cell_text(c);
      if (!v && (cJSON_IsArray(c) || cJSON_IsObject(c))) {
        bad = 1;
        if (tl_inlog_report(log, TL_IN_BAD_FIELD, r.path, r.line_no, "field '%s' is an array or object", c->string))
          st = TL_EINPUT;
        continue;
      }
      if (!v) { bad = 1; st = tl_err_set(err, TL_ENOMEM, "out of memory"); continue; }
      if (cells[k] != TABIN_EMPTY) free(cells[k]); /* duplicate keys are reported by the reader */
      cells[k] = v;
    }
    cJSON_Delete(o);
    if (!bad && t->nrows == wcap) {
      size_t nw = wcap ? wcap * 2 : 1024;
      int *p = realloc(width, nw * sizeof *p);
      if (!p) { bad = 1; st = tl_err_set(err, TL_ENOMEM, "out of memory"); }
      else { width = p; wcap = nw; }
    }
    if (!bad) {
      width[t->nrows] = t->ncols;
      if (add_row(t, cells, r.line_no, &cap)) { bad = 1; st = tl_err_set(err, TL_ENOMEM, "out of memory"); }
    }
    if (bad) {
      for (int c = 0; c < t->ncols; c++)
        if (cells[c] != TABIN_EMPTY) free(cells[c]);
      free(cells);
    }
  }
  /* pad every row to the final width (once: linear in the table's size) */
  for (size_t i = 0; i < t->nrows && st == TL_OK; i++) {
    if (width[i] == t->ncols) continue;
    char **p = realloc(t->cells[i], (size_t)t->ncols * sizeof *p);
    if (!p) { st = tl_err_set(err, TL_ENOMEM, "out of memory"); break; }
    for (int c = width[i]; c < t->ncols; c++) p[c] = TABIN_EMPTY;
    t->cells[i] = p;
    width[i] = t->ncols;
  }
  if (st) { /* drop the rows here, at their own widths, so tl_tabin_release stays safe */
    for (size_t i = 0; i < t->nrows; i++) {
      for (int c = 0; c < width[i]; c++)
        if (t->cells[i][c] != TABIN_EMPTY) free(t->cells[i][c]);
      free(t->cells[i]);
    }
    t->nrows = 0;
  }
  free(width);
  tl_strmap_release(&cols);
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
    for (int c = 0; c < t->ncols; c++)
      if (t->cells[r][c] != TABIN_EMPTY) free(t->cells[r][c]);
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
    if (ok[r]) continue;
    if (isnan(v) && end && *end == 0) continue; /* "nan": an undefined value (a metric a unit has
                                                   none of), not a bad cell: left out, unreported */
    int nl = 0; /* a quoted cell over several lines: likely two stray quotes paired up */
    for (const char *c = s; *c; c++) nl += csv_eol(c) > 0 && !(c[0] == '\r' && c[1] == '\n');
    tl_status rs = nl ? tl_inlog_report(log, TL_IN_BAD_FIELD, t->path, t->line[r],
                                        "column '%s' is not a number: a quoted field over %d lines "
                                        "(a stray quote on this line?)", t->colnames[col], nl + 1)
                      : tl_inlog_report(log, TL_IN_BAD_FIELD, t->path, t->line[r],
                                        "column '%s' is not a number: '%.40s'", t->colnames[col], s);
    if (rs) st = TL_EINPUT;
  }
  return st;
}

/* ---- joins ---- */

/* The key of row r over columns cols[0 .. n-1]: the cells joined by \x1f. */
static tl_status join_key(char *const *row, const int *cols, int n, tl_buf *k) {
  tl_buf_reset(k);
  if (tl_buf_append(k, "k", 1)) return TL_ENOMEM; /* never empty: k->data is set */
  for (int i = 0; i < n; i++) {
    if (tl_buf_append(k, "\x1f", 1)) return TL_ENOMEM;
    if (tl_buf_puts(k, row[cols[i]])) return TL_ENOMEM;
  }
  return TL_OK;
}

tl_status tl_tabin_join(const tl_tabin *left, const tl_tabin *right, char *const *on, int non,
                        tl_inlog *log, tl_tabin *out, size_t *unmatched, tl_err *err) {
  memset(out, 0, sizeof *out);
  *unmatched = 0;
  int *lc = calloc((size_t)non + 1, sizeof *lc), *rc = calloc((size_t)non + 1, sizeof *rc);
  int *rmap = calloc((size_t)right->ncols + 1, sizeof *rmap); /* right col -> out col, -1 = not kept */
  tl_strmap idx;
  tl_strmap_init(&idx);
  tl_buf k;
  tl_buf_init(&k);
  tl_status st = TL_OK;
  if (!lc || !rc || !rmap) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  for (int i = 0; i < non && !st; i++) {
    lc[i] = tl_tabin_col(left, on[i]);
    rc[i] = tl_tabin_col(right, on[i]);
    if (lc[i] < 0 || rc[i] < 0)
      st = tl_err_set(err, TL_EJOB, "join column '%s' is not in %s", on[i], lc[i] < 0 ? left->path : right->path);
  }
  /* the right table's rows by key; a key given twice is a problem (first kept) */
  for (size_t r = 0; r < right->nrows && !st; r++) {
    if ((st = join_key(right->cells[r], rc, non, &k))) break;
    bool ins = false;
    size_t prev = 0;
    if ((st = tl_strmap_put(&idx, k.data, r, &ins, &prev))) break;
    if (!ins && tl_inlog_report(log, TL_IN_DUPLICATE, right->path, right->line ? right->line[r] : 0,
                                "a second row for the same join key (the row at line %ld is kept)",
                                right->line ? right->line[prev] : 0L))
      st = TL_EINPUT;
  }
  /* columns: every left column, then the right's that the left does not have */
  int ncols = left->ncols;
  for (int c = 0; c < right->ncols && !st; c++) rmap[c] = tl_tabin_col(left, right->colnames[c]) >= 0 ? -1 : ncols++;
  if (!st) {
    out->ncols = ncols;
    out->colnames = calloc((size_t)ncols, sizeof *out->colnames);
    out->cells = calloc(left->nrows ? left->nrows : 1, sizeof *out->cells);
    out->line = calloc(left->nrows ? left->nrows : 1, sizeof *out->line);
    tl_buf p;
    tl_buf_init(&p);
    tl_buf_printf(&p, "%s joined with %s", left->path ? left->path : "?", right->path ? right->path : "?");
    out->path = tl_buf_detach(&p);
    if (!out->colnames || !out->cells || !out->line || !out->path) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  for (int c = 0; c < left->ncols && !st; c++)
    if (!(out->colnames[c] = tl_strdup(left->colnames[c]))) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  for (int c = 0; c < right->ncols && !st; c++)
    if (rmap[c] >= 0 && !(out->colnames[rmap[c]] = tl_strdup(right->colnames[c]))) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  /* rows: the left's in order, those with a match */
  for (size_t r = 0; r < left->nrows && !st; r++) {
    if ((st = join_key(left->cells[r], lc, non, &k))) break;
    size_t m;
    if (!tl_strmap_get(&idx, k.data, &m)) {
      (*unmatched)++;
      continue;
    }
    char **row = calloc((size_t)ncols, sizeof *row);
    if (!row) { st = tl_err_set(err, TL_ENOMEM, "out of memory"); break; }
    out->cells[out->nrows] = row;
    out->line[out->nrows] = left->line ? left->line[r] : (long)r + 1;
    out->nrows++;
    for (int c = 0; c < left->ncols && !st; c++)
      if (!(row[c] = tl_strdup(left->cells[r][c]))) st = TL_ENOMEM;
    for (int c = 0; c < right->ncols && !st; c++)
      if (rmap[c] >= 0 && !(row[rmap[c]] = tl_strdup(right->cells[m][c]))) st = TL_ENOMEM;
    for (int c = 0; st && c < ncols; c++)
      if (!row[c]) row[c] = TABIN_EMPTY; /* so that release stays safe */
    if (st) tl_err_set(err, st, "out of memory");
  }
  if (st && out->colnames) { /* names not set yet are NULL: release frees NULL */
    tl_tabin_release(out);
  }
  tl_buf_release(&k);
  tl_strmap_release(&idx);
  free(lc);
  free(rc);
  free(rmap);
  return st;
}
