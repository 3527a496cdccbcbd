/* xlsx.c - the first worksheet of an xlsx workbook as a text table (contracts in xlsx.h). */
#include "xlsx.h"

#include <libxml/xmlreader.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tally/str.h"
#include "zip.h"

#define PART_MAX (1ull << 30) /* bytes of one XML part */
#define COL_MAX 16384         /* XFD: the last column of a worksheet */

typedef struct {
  char **s;
  size_t n, cap;
} strs;

static void strs_release(strs *v) {
  for (size_t i = 0; i < v->n; i++) free(v->s[i]);
  free(v->s);
  memset(v, 0, sizeof *v);
}

static tl_status strs_push(strs *v, char *s) { /* takes s */
  if (!s) return TL_ENOMEM;
  if (v->n == v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 64;
    char **p = realloc(v->s, cap * sizeof *p);
    if (!p) {
      free(s);
      return TL_ENOMEM;
    }
    v->s = p, v->cap = cap;
  }
  v->s[v->n++] = s;
  return TL_OK;
}

/* One cell of a row being read: its column and its text (owned). */
typedef struct {
  uint32_t col;
  char *text;
} cell;

typedef struct {
  cell *c;
  size_t n, cap;
  long line; /* the spreadsheet's row number */
} row;

typedef struct {
  const char *file;
  tl_err *err;
  long xml_line; /* the first XML error's line in the part being read */
  strs shared;  /* the shared strings */
  row *rows;    /* every row read, header first */
  size_t nrows, caprows;
  uint32_t ncols;
} book;

static void row_release(row *r) {
  for (size_t i = 0; i < r->n; i++) free(r->c[i].text);
  free(r->c);
  memset(r, 0, sizeof *r);
}

static void book_release(book *b) {
  strs_release(&b->shared);
  for (size_t i = 0; i < b->nrows; i++) row_release(&b->rows[i]);
  free(b->rows);
}

/* The part `name` of the archive into *buf (NULL when absent and not required). */
static tl_status read_part(const tl_zip *z, const char *file, const char *name, int required, unsigned char **buf,
                           size_t *n, tl_err *err) {
  *buf = NULL, *n = 0;
  const tl_zip_entry *e = tl_zip_find(z, name);
  if (!e)
    return required ? tl_err_set(err, TL_EINPUT, "'%s': no part '%s': not an xlsx workbook", file, name) : TL_OK;
  return tl_zip_read(z, e, PART_MAX, buf, n, err);
}

/* libxml2 prints its parse errors on stderr unless a reader has a handler: the first one's line
 * is kept instead, for the message that names the part. */
static void quiet_error(void *arg, const char *msg, xmlParserSeverities sev, xmlTextReaderLocatorPtr loc) {
  (void)msg;
  long *line = arg;
  if (line && *line == 0 && (sev == XML_PARSER_SEVERITY_ERROR || sev == XML_PARSER_SEVERITY_VALIDITY_ERROR))
    *line = xmlTextReaderLocatorLineNumber(loc);
}

/* A reader over an XML part: no network, entities left unexpanded (no XML_PARSE_NOENT), no
 * DTD loading, errors kept quiet (quiet_error). */
static xmlTextReaderPtr reader_of(const unsigned char *buf, size_t n, const char *name, long *eline) {
  xmlInitParser();
  xmlTextReaderPtr rd = xmlReaderForMemory((const char *)buf, (int)n, name, NULL, XML_PARSE_NONET | XML_PARSE_COMPACT);
  *eline = 0;
  if (rd) xmlTextReaderSetErrorHandler(rd, quiet_error, eline);
  return rd;
}

static int is(xmlTextReaderPtr rd, const char *local) {
  const xmlChar *l = xmlTextReaderConstLocalName(rd);
  return l && strcmp((const char *)l, local) == 0;
}

static int is_text(int type) {
  return type == XML_READER_TYPE_TEXT || type == XML_READER_TYPE_CDATA || type == XML_READER_TYPE_WHITESPACE ||
         type == XML_READER_TYPE_SIGNIFICANT_WHITESPACE;
}

/* Appends s, decoding OOXML's _xHHHH_ escapes (ECMA-376 Part 1, 22.9.2.19 ST_Xstring: a
 * character XML cannot hold, written as its UTF-16 code unit in hex) to UTF-8. */
static tl_status append_xstring(tl_buf *b, const char *s) {
  size_t len = strlen(s);
  for (size_t i = 0; i < len;) {
    unsigned v = 0;
    int ok = i + 7 <= len && s[i] == '_' && s[i + 1] == 'x' && s[i + 6] == '_';
    for (int k = 2; ok && k < 6; k++) {
      char ch = s[i + (size_t)k];
      int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                                                : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
      if (d < 0) ok = 0;
      else v = v * 16 + (unsigned)d;
    }
    if (!ok || (v >= 0xD800 && v <= 0xDFFF) || v == 0) { /* not an escape (or a lone surrogate, NUL: kept) */
      if (tl_buf_append(b, s + i, 1)) return TL_ENOMEM;
      i++;
      continue;
    }
    char u[3];
    size_t un = 0;
    if (v < 0x80) u[un++] = (char)v;
    else if (v < 0x800) u[un++] = (char)(0xC0 | (v >> 6)), u[un++] = (char)(0x80 | (v & 0x3F));
    else u[un++] = (char)(0xE0 | (v >> 12)), u[un++] = (char)(0x80 | ((v >> 6) & 0x3F)), u[un++] = (char)(0x80 | (v & 0x3F));
    if (tl_buf_append(b, u, un)) return TL_ENOMEM;
    i += 7;
  }
  return TL_OK;
}

static tl_status xml_fail(const book *b, const char *part) {
  return tl_err_set(b->err, TL_EINPUT, "'%s': part '%s' is not well-formed XML (line %ld of the part)", b->file,
                    part, b->xml_line);
}

/* xl/sharedStrings.xml: each <si>'s <t> texts joined, <rPh> (phonetic guides) left out. */
static tl_status read_shared(book *b, const unsigned char *buf, size_t n) {
  xmlTextReaderPtr rd = reader_of(buf, n, "xl/sharedStrings.xml", &b->xml_line);
  if (!rd) return TL_ENOMEM;
  tl_buf t;
  tl_buf_init(&t);
  int in_si = 0, in_rph = 0, in_t = 0, r;
  tl_status st = TL_OK;
  while (!st && (r = xmlTextReaderRead(rd)) == 1) {
    int type = xmlTextReaderNodeType(rd), empty = xmlTextReaderIsEmptyElement(rd) == 1;
    if (type == XML_READER_TYPE_ELEMENT && is(rd, "si")) {
      tl_buf_reset(&t);
      if (empty) st = strs_push(&b->shared, tl_strdup(""));
      else in_si = 1;
    } else if (type == XML_READER_TYPE_ELEMENT && is(rd, "rPh")) {
      in_rph = !empty;
    } else if (type == XML_READER_TYPE_ELEMENT && is(rd, "t")) {
      in_t = in_si && !in_rph && !empty;
    } else if (type == XML_READER_TYPE_END_ELEMENT && is(rd, "si")) {
      if (in_si) st = strs_push(&b->shared, tl_strndup(t.data, t.len));
      in_si = 0;
    } else if (type == XML_READER_TYPE_END_ELEMENT && is(rd, "rPh")) {
      in_rph = 0;
    } else if (type == XML_READER_TYPE_END_ELEMENT && is(rd, "t")) {
      in_t = 0;
    } else if (in_t && is_text(type)) {
      st = append_xstring(&t, (const char *)xmlTextReaderConstValue(rd));
    }
  }
  if (!st && r < 0) st = xml_fail(b, "xl/sharedStrings.xml");
  tl_buf_release(&t);
  xmlFreeTextReader(rd);
  return st;
}

/* The value of attribute `local` (any namespace prefix) of the current element, owned; NULL when
 * absent. want_prefixed: 1 = only a prefixed one (r:id), 0 = only an unprefixed one. */
static char *attr(xmlTextReaderPtr rd, const char *local, int want_prefixed) {
  char *v = NULL;
  if (xmlTextReaderMoveToFirstAttribute(rd) != 1) return NULL;
  do {
    const xmlChar *l = xmlTextReaderConstLocalName(rd), *p = xmlTextReaderConstPrefix(rd);
    if (l && strcmp((const char *)l, local) == 0 && (p != NULL) == want_prefixed) {
      v = tl_strdup((const char *)xmlTextReaderConstValue(rd));
      break;
    }
  } while (xmlTextReaderMoveToNextAttribute(rd) == 1);
  xmlTextReaderMoveToElement(rd);
  return v;
}

/* The first worksheet's part name (owned): the first <sheet> of xl/workbook.xml, through its
 * relationship; "xl/worksheets/sheet1.xml" when the workbook or its relationships say nothing. */
static char *first_sheet(const tl_zip *z, const char *file, tl_err *err) {
  unsigned char *wb = NULL, *rels = NULL;
  size_t nwb = 0, nrels = 0;
  char *rid = NULL, *target = NULL;
  if (read_part(z, file, "xl/workbook.xml", 0, &wb, &nwb, err) == TL_OK && wb) {
    long eline;
    xmlTextReaderPtr rd = reader_of(wb, nwb, "xl/workbook.xml", &eline);
    while (rd && !rid && xmlTextReaderRead(rd) == 1)
      if (xmlTextReaderNodeType(rd) == XML_READER_TYPE_ELEMENT && is(rd, "sheet")) rid = attr(rd, "id", 1);
    if (rd) xmlFreeTextReader(rd);
  }
  if (rid && read_part(z, file, "xl/_rels/workbook.xml.rels", 0, &rels, &nrels, err) == TL_OK && rels) {
    long eline;
    xmlTextReaderPtr rd = reader_of(rels, nrels, "xl/_rels/workbook.xml.rels", &eline);
    while (rd && !target && xmlTextReaderRead(rd) == 1) {
      if (xmlTextReaderNodeType(rd) != XML_READER_TYPE_ELEMENT || !is(rd, "Relationship")) continue;
      char *id = attr(rd, "Id", 0);
      if (id && strcmp(id, rid) == 0) target = attr(rd, "Target", 0);
      free(id);
    }
    if (rd) xmlFreeTextReader(rd);
  }
  free(wb);
  free(rels);
  free(rid);
  err->msg[0] = '\0'; /* an unreadable workbook part: the default sheet is tried */
  char *name = NULL;
  if (target && target[0] == '/') name = tl_strdup(target + 1); /* absolute in the package */
  else if (target) {
    tl_buf p;
    tl_buf_init(&p);
    name = tl_buf_printf(&p, "xl/%s", target) ? NULL : tl_buf_detach(&p);
  } else {
    name = tl_strdup("xl/worksheets/sheet1.xml");
  }
  free(target);
  return name;
}

/* A cell reference's column ("BC12" -> 54), 0-based; -1 when it names none or one past XFD. */
static long ref_col(const char *r) {
  long c = 0;
  int k = 0;
  for (; r[k] >= 'A' && r[k] <= 'Z'; k++) {
    c = c * 26 + (r[k] - 'A' + 1);
    if (c > COL_MAX) return -1;
  }
  return k ? c - 1 : -1;
}

/* Column letters of 0-based column c into out[8]. */
static void col_name(uint32_t c, char out[8]) {
  char tmp[8];
  int n = 0;
  for (uint32_t v = c + 1; v && n < 7; v = (v - 1) / 26) tmp[n++] = (char)('A' + (v - 1) % 26);
  for (int i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
  out[n] = '\0';
}

static tl_status row_put(row *r, uint32_t col, char *text) { /* takes text */
  if (!text) return TL_ENOMEM;
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 16;
    cell *p = realloc(r->c, cap * sizeof *p);
    if (!p) {
      free(text);
      return TL_ENOMEM;
    }
    r->c = p, r->cap = cap;
  }
  r->c[r->n++] = (cell){col, text};
  return TL_OK;
}

/* The state of the sheet's reading. */
typedef struct {
  book *b;
  const char *part;
  row cur;
  long last_line;  /* the previous row's number */
  long col;        /* the current cell's column, or the previous cell's */
  char *type;      /* the current cell's t attribute (owned; NULL = number) */
  tl_buf v;        /* its <v> text, or its inline string */
  int in_v, in_is, in_t, in_rph;
} sheet;

static tl_status sheet_fail(sheet *s, const char *what) {
  return tl_err_set(s->b->err, TL_EINPUT, "'%s': %s, row %ld: %s", s->b->file, s->part, s->cur.line, what);
}

/* The end of a cell: its text by type (xlsx.h). */
static tl_status cell_end(sheet *s) {
  const char *t = s->type;
  char *text = NULL;
  if (t && strcmp(t, "s") == 0) {
    char *end = NULL;
    unsigned long long i = strtoull(s->v.data, &end, 10);
    if (!s->v.len || *end || i >= s->b->shared.n) return sheet_fail(s, "a shared-string index out of range");
    text = tl_strdup(s->b->shared.s[i]);
  } else if (t && strcmp(t, "b") == 0) {
    text = tl_strdup(strcmp(s->v.data, "1") == 0 ? "True" : "False"); /* as pandas writes a bool */
  } else {
    text = tl_strndup(s->v.data, s->v.len); /* n, str, e, inlineStr */
  }
  if ((uint32_t)s->col + 1 > s->b->ncols) s->b->ncols = (uint32_t)s->col + 1;
  return row_put(&s->cur, (uint32_t)s->col, text);
}

/* The end of a row: kept when it has a cell (or when the header was read: an empty row of the
 * table is a row of empty cells). */
static tl_status row_end(sheet *s) {
  book *b = s->b;
  if (!s->cur.n && !b->nrows) return TL_OK; /* blank rows above the header */
  if (b->nrows == b->caprows) {
    size_t cap = b->caprows ? b->caprows * 2 : 256;
    row *p = realloc(b->rows, cap * sizeof *p);
    if (!p) return TL_ENOMEM;
    b->rows = p, b->caprows = cap;
  }
  b->rows[b->nrows++] = s->cur;
  memset(&s->cur, 0, sizeof s->cur);
  return TL_OK;
}

static tl_status sheet_element(sheet *s, xmlTextReaderPtr rd, int empty) {
  tl_status st = TL_OK;
  if (is(rd, "row")) {
    char *r = attr(rd, "r", 0);
    long line = r ? strtol(r, NULL, 10) : s->last_line + 1;
    free(r);
    row_release(&s->cur);
    s->cur.line = line;
    if (line <= s->last_line || line > 1048576) return sheet_fail(s, "a row out of order, or past row 1,048,576");
    s->last_line = line, s->col = -1;
    if (empty) st = row_end(s);
  } else if (is(rd, "c")) {
    char *r = attr(rd, "r", 0);
    long col = r ? ref_col(r) : s->col + 1;
    free(r);
    if (col < 0 || col >= COL_MAX || col <= s->col) return sheet_fail(s, "a cell reference out of order or past XFD");
    s->col = col;
    free(s->type);
    s->type = attr(rd, "t", 0);
    tl_buf_reset(&s->v);
    if (empty) st = cell_end(s);
  } else if (is(rd, "v")) {
    s->in_v = !empty;
  } else if (is(rd, "is")) {
    s->in_is = !empty;
  } else if (is(rd, "rPh")) {
    s->in_rph = !empty;
  } else if (is(rd, "t")) {
    s->in_t = s->in_is && !s->in_rph && !empty;
  }
  return st;
}

static tl_status sheet_end_element(sheet *s, xmlTextReaderPtr rd) {
  if (is(rd, "v")) s->in_v = 0;
  else if (is(rd, "is")) s->in_is = 0;
  else if (is(rd, "rPh")) s->in_rph = 0;
  else if (is(rd, "t")) s->in_t = 0;
  else if (is(rd, "c")) return cell_end(s);
  else if (is(rd, "row")) return row_end(s);
  return TL_OK;
}

static tl_status read_sheet(book *b, const char *part, const unsigned char *buf, size_t n) {
  xmlTextReaderPtr rd = reader_of(buf, n, part, &b->xml_line);
  if (!rd) return TL_ENOMEM;
  sheet s;
  memset(&s, 0, sizeof s);
  s.b = b, s.part = part, s.col = -1;
  tl_buf_init(&s.v);
  tl_status st = TL_OK;
  int r;
  while (!st && (r = xmlTextReaderRead(rd)) == 1) {
    int type = xmlTextReaderNodeType(rd);
    if (type == XML_READER_TYPE_ELEMENT) st = sheet_element(&s, rd, xmlTextReaderIsEmptyElement(rd) == 1);
    else if (type == XML_READER_TYPE_END_ELEMENT) st = sheet_end_element(&s, rd);
    else if ((s.in_v || s.in_t) && is_text(type)) st = append_xstring(&s.v, (const char *)xmlTextReaderConstValue(rd));
  }
  if (!st && r < 0) st = xml_fail(b, part);
  row_release(&s.cur);
  free(s.type);
  tl_buf_release(&s.v);
  xmlFreeTextReader(rd);
  return st;
}

/* The rows read into a tabin: the first row is the header. */
static tl_status to_table(book *b, tl_tabin *t) {
  memset(t, 0, sizeof *t);
  if (!b->nrows) return tl_err_set(b->err, TL_EINPUT, "'%s': the first worksheet has no header row", b->file);
  size_t n = b->nrows - 1;
  t->path = tl_strdup(b->file);
  t->colnames = calloc(b->ncols, sizeof *t->colnames);
  t->cells = calloc(n ? n : 1, sizeof *t->cells);
  t->line = calloc(n ? n : 1, sizeof *t->line);
  if (!t->path || !t->colnames || !t->cells || !t->line) goto oom;
  t->ncols = (int)b->ncols;
  for (uint32_t c = 0; c < b->ncols; c++) {
    const char *h = NULL;
    for (size_t k = 0; k < b->rows[0].n; k++)
      if (b->rows[0].c[k].col == c && b->rows[0].c[k].text[0]) h = b->rows[0].c[k].text;
    char letters[8], name[32];
    col_name(c, letters);
    snprintf(name, sizeof name, "column_%s", letters);
    if (!(t->colnames[c] = tl_strdup(h ? h : name))) goto oom;
  }
  for (size_t i = 0; i < n; i++) {
    const row *r = &b->rows[i + 1];
    t->cells[i] = calloc(b->ncols ? b->ncols : 1, sizeof **t->cells);
    if (!t->cells[i]) goto oom;
    t->nrows = i + 1;
    t->line[i] = r->line;
    for (size_t k = 0; k < r->n; k++) {
      t->cells[i][r->c[k].col] = r->c[k].text; /* moved */
      r->c[k].text = NULL;
    }
    for (uint32_t c = 0; c < b->ncols; c++)
      if (!t->cells[i][c] && !(t->cells[i][c] = tl_strdup(""))) goto oom;
  }
  return TL_OK;
oom:
  tl_tabin_release(t); /* (a NULL cell is freed as NULL) */
  return tl_err_set(b->err, TL_ENOMEM, "out of memory");
}

tl_status tl_xlsx_read(const char *path, tl_tabin *t, tl_err *err) {
  memset(t, 0, sizeof *t);
  tl_zip z;
  tl_status st = tl_zip_open(&z, path, err);
  book b;
  memset(&b, 0, sizeof b);
  b.file = path, b.err = err;
  unsigned char *buf = NULL;
  size_t n = 0;
  char *part = NULL;
  if (!st) st = read_part(&z, path, "xl/sharedStrings.xml", 0, &buf, &n, err);
  if (!st && buf) st = read_shared(&b, buf, n);
  free(buf);
  buf = NULL;
  if (!st && !(part = first_sheet(&z, path, err))) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  if (!st) st = read_part(&z, path, part, 1, &buf, &n, err);
  if (!st) st = read_sheet(&b, part, buf, n);
  if (!st) st = to_table(&b, t);
  if (st == TL_ENOMEM && !err->msg[0]) tl_err_set(err, st, "out of memory");
  free(buf);
  free(part);
  book_release(&b);
  tl_zip_close(&z);
  return st;
}
