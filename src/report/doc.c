/* doc.c - building a report document (tally/report.h): sections, tables, cells, charts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tally/report.h"

/* Grows *p (n used, *cap slots of sz bytes) to hold one more; 0 or -1. */
static int grow(void **p, size_t n, size_t *cap, size_t sz) {
  if (n < *cap) return 0;
  size_t nc = *cap ? *cap * 2 : 8;
  void *q = realloc(*p, nc * sz);
  if (!q) return -1;
  memset((char *)q + *cap * sz, 0, (nc - *cap) * sz);
  *p = q, *cap = nc;
  return 0;
}

/* A copy of s ("" for NULL); sets d->oom on failure. */
static char *sdup(tl_doc *d, const char *s) {
  char *c = tl_strdup(s ? s : "");
  if (!c && d) d->oom = 1;
  return c;
}

tl_doc *tl_doc_new(const char *title) {
  tl_doc *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->title = sdup(d, title);
  if (!d->title) return free(d), NULL;
  return d;
}

static void rtable_free(tl_rtable *t) {
  if (!t) return;
  for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++) free(t->cells[i].s);
  for (int c = 0; c < t->ncols; c++) free(t->cols[c].name);
  free(t->cells), free(t->cols), free(t->title), free(t->note), free(t);
}

static void chart_free(tl_chart *c) {
  if (!c) return;
  for (int k = 0; k < c->nseries; k++) {
    for (size_t i = 0; i < c->series[k].n; i++) free(c->series[k].pts[i].label);
    free(c->series[k].pts), free(c->series[k].name);
  }
  free(c->series), free(c->title), free(c->x), free(c->y), free(c);
}

void tl_doc_free(tl_doc *d) {
  if (!d) return;
  for (int i = 0; i < d->nsec; i++) {
    tl_section *s = &d->secs[i];
    for (int b = 0; b < s->nblocks; b++) rtable_free(s->blocks[b].table), chart_free(s->blocks[b].chart), free(s->blocks[b].text);
    free(s->blocks), free(s->title);
  }
  free(d->secs), free(d->title), free(d);
}

tl_status tl_doc_ok(const tl_doc *d) { return !d || d->oom ? TL_ENOMEM : TL_OK; }

tl_section *tl_doc_section(tl_doc *d, const char *title) {
  if (!d) return NULL;
  tl_section *s = realloc(d->secs, (size_t)(d->nsec + 1) * sizeof *s);
  if (!s) return d->oom = 1, NULL;
  d->secs = s;
  s = &d->secs[d->nsec];
  memset(s, 0, sizeof *s);
  if (!(s->title = sdup(d, title))) return NULL;
  d->nsec++;
  return s;
}

/* A new block at the end of s, or NULL. */
static tl_block *add_block(tl_doc *d, tl_section *s, tl_block_kind k) {
  if (!d || !s) return NULL;
  tl_block *b = realloc(s->blocks, (size_t)(s->nblocks + 1) * sizeof *b);
  if (!b) return d->oom = 1, NULL;
  s->blocks = b;
  b = &s->blocks[s->nblocks++];
  memset(b, 0, sizeof *b);
  b->kind = k;
  return b;
}

tl_status tl_sec_text(tl_doc *d, tl_section *s, const char *text) {
  tl_block *b = add_block(d, s, TL_BLOCK_TEXT);
  if (!b || !(b->text = sdup(d, text))) return TL_ENOMEM;
  return TL_OK;
}

tl_rtable *tl_sec_table(tl_doc *d, tl_section *s, const char *title, int ncols, const char *const *names,
                        const tl_rcol_kind *kinds) {
  tl_block *b = add_block(d, s, TL_BLOCK_TABLE);
  if (!b) return NULL;
  tl_rtable *t = calloc(1, sizeof *t);
  if (!t || !(t->cols = calloc((size_t)(ncols ? ncols : 1), sizeof *t->cols))) return free(t), d->oom = 1, NULL;
  b->table = t;
  t->title = sdup(d, title);
  for (int c = 0; c < ncols; c++) {
    t->cols[c].name = sdup(d, names[c]);
    if (!t->cols[c].name) return NULL;
    t->ncols = c + 1;
    t->cols[c].kind = kinds[c];
    t->cols[c].digits = 4;
  }
  return t->title ? t : NULL;
}

void tl_rtable_note(tl_doc *d, tl_rtable *t, const char *note) {
  if (!t) return;
  free(t->note);
  t->note = sdup(d, note);
}

size_t tl_rtable_row(tl_doc *d, tl_rtable *t) {
  if (!t) return (size_t)-1;
  size_t nc = (size_t)t->ncols, cap = t->cap;
  if (t->nrows == cap) {
    size_t ncap = cap ? cap * 2 : 16;
    tl_rcell *c = realloc(t->cells, ncap * (nc ? nc : 1) * sizeof *c);
    if (!c) return d->oom = 1, (size_t)-1;
    memset(c + cap * nc, 0, (ncap - cap) * nc * sizeof *c);
    t->cells = c, t->cap = ncap;
  }
  return t->nrows++;
}

tl_rcell *tl_rtable_cell(tl_rtable *t, size_t row, int col) {
  if (!t || row >= t->nrows || col < 0 || col >= t->ncols) return NULL;
  return &t->cells[row * (size_t)t->ncols + (size_t)col];
}

/* The cell, emptied of an earlier value. */
static tl_rcell *reset(tl_rtable *t, size_t row, int col) {
  tl_rcell *x = tl_rtable_cell(t, row, col);
  if (x) free(x->s), memset(x, 0, sizeof *x);
  return x;
}

void tl_cell_text(tl_doc *d, tl_rtable *t, size_t row, int col, const char *s) {
  tl_rcell *x = reset(t, row, col);
  if (x && (x->s = sdup(d, s))) x->tag = TL_CELL_TEXT;
}
void tl_cell_int(tl_rtable *t, size_t row, int col, int64_t v) {
  tl_rcell *x = reset(t, row, col);
  if (x) x->tag = TL_CELL_INT, x->i = v;
}
void tl_cell_real(tl_rtable *t, size_t row, int col, double v) {
  tl_rcell *x = reset(t, row, col);
  if (x) x->tag = TL_CELL_REAL, x->v = v;
}
void tl_cell_est(tl_rtable *t, size_t row, int col, double v, double lo, double hi) {
  tl_rcell *x = reset(t, row, col);
  if (x) x->tag = TL_CELL_EST, x->v = v, x->lo = lo, x->hi = hi;
}

tl_chart *tl_sec_chart(tl_doc *d, tl_section *s, tl_chart_kind kind, const char *title, const char *x,
                       const char *y) {
  tl_block *b = add_block(d, s, TL_BLOCK_CHART);
  if (!b) return NULL;
  tl_chart *c = calloc(1, sizeof *c);
  if (!c) return d->oom = 1, NULL;
  b->chart = c;
  c->kind = kind, c->ref = NAN;
  c->title = sdup(d, title), c->x = sdup(d, x), c->y = sdup(d, y);
  return c->title && c->x && c->y ? c : NULL;
}

tl_chart_series *tl_chart_series_get(tl_doc *d, tl_chart *c, const char *name) {
  if (!c) return NULL;
  for (int k = 0; k < c->nseries; k++)
    if (!strcmp(c->series[k].name, name)) return &c->series[k];
  tl_chart_series *s = realloc(c->series, (size_t)(c->nseries + 1) * sizeof *s);
  if (!s) return d->oom = 1, NULL;
  c->series = s;
  s = &c->series[c->nseries];
  memset(s, 0, sizeof *s);
  if (!(s->name = sdup(d, name))) return NULL;
  c->nseries++;
  return s;
}

void tl_chart_point_add(tl_doc *d, tl_chart_series *s, const char *label, double v, double lo, double hi) {
  if (!s) return;
  if (grow((void **)&s->pts, s->n, &s->cap, sizeof *s->pts)) {
    d->oom = 1;
    return;
  }
  tl_chart_point *p = &s->pts[s->n];
  if (!(p->label = sdup(d, label))) return;
  p->value = v, p->lo = lo, p->hi = hi;
  s->n++;
}

/* ---- a tl_table as a document table ---- */

/* 1 when name ends with suffix. */
static int ends(const char *name, const char *suffix) {
  size_t n = strlen(name), k = strlen(suffix);
  return n >= k && !strcmp(name + n - k, suffix);
}

/* The index of column base+suffix of t when it is a double column, else -1. */
static int f64_col(const tl_table *t, const char *base, const char *suffix) {
  char name[512];
  if ((size_t)snprintf(name, sizeof name, "%s%s", base, suffix) >= sizeof name) return -1;
  int c = tl_table_col(t, name);
  return c >= 0 && t->cols[c].type == TL_COL_F64 ? c : -1;
}

/* The column that a table's bare "ci_lo", "ci_hi" belong to: the first double column of
 * estimate, delta, Avg, mean (the studies', comparisons', MT-Bench-101's and the across-seeds
 * tables' headline), or -1. */
static int bare_ci_owner(const tl_table *t) {
  static const char *const OWN[] = {"estimate", "delta", "Avg", "mean"};
  if (f64_col(t, "ci_lo", "") < 0 || f64_col(t, "ci_hi", "") < 0) return -1;
  for (size_t i = 0; i < sizeof OWN / sizeof *OWN; i++) {
    int c = f64_col(t, OWN[i], "");
    if (c >= 0) return c;
  }
  return -1;
}

/* For column c of t: its CI columns (*lo, *hi) when it is an estimate, else -1s. */
static void ci_of(const tl_table *t, int c, int *lo, int *hi) {
  *lo = *hi = -1;
  if (t->cols[c].type != TL_COL_F64) return;
  if (c == bare_ci_owner(t)) {
    *lo = f64_col(t, "ci_lo", ""), *hi = f64_col(t, "ci_hi", "");
    return;
  }
  const char *n = t->cols[c].name;
  static const char *const sfx[][2] = {{"_lo", "_hi"}, {"_ci_lo", "_ci_hi"}};
  for (int k = 0; k < 2; k++) {
    int l = f64_col(t, n, sfx[k][0]), h = f64_col(t, n, sfx[k][1]);
    if (l >= 0 && h >= 0) {
      *lo = l, *hi = h;
      return;
    }
  }
}

static int is_p(const char *n) {
  return !strcmp(n, "p") || !strncmp(n, "p_", 2) || ends(n, "_p") || ends(n, "_pvalue") || ends(n, "_p_value");
}

/* 1 when name is in the NULL-terminated list v (NULL: none). */
static int listed(const char *const *v, const char *name) {
  for (; v && *v; v++)
    if (!strcmp(*v, name)) return 1;
  return 0;
}

tl_rtable *tl_doc_from_table(tl_doc *d, tl_section *s, const tl_table *t, const char *title) {
  return tl_doc_from_table_where(d, s, t, title, NULL, NULL, NULL);
}

tl_rtable *tl_doc_from_table_where(tl_doc *d, tl_section *s, const tl_table *t, const char *title, const char *where,
                                   const char *val, const char *const *drop) {
  if (!d || !s || !t) return NULL;
  int wc = where ? tl_table_col(t, where) : -1;
  if (where && (wc < 0 || !tl_col_is_str(t->cols[wc].type))) return NULL;
  int n = t->ncols, k = 0;
  int *src = calloc((size_t)(n ? n : 1), 3 * sizeof *src); /* per kept column: value, lo, hi */
  char *used = calloc((size_t)(n ? n : 1), 1);
  const char **names = calloc((size_t)(n ? n : 1), sizeof *names);
  tl_rcol_kind *kinds = calloc((size_t)(n ? n : 1), sizeof *kinds);
  tl_rtable *r = NULL;
  if (!src || !used || !names || !kinds) goto done;
  for (int c = 0; c < n; c++) { /* mark every CI column first: "x_lo" never stands alone */
    int lo, hi;
    ci_of(t, c, &lo, &hi);
    if (lo >= 0) used[lo] = used[hi] = 1;
  }
  for (int c = 0; c < n; c++) {
    if (used[c] || listed(drop, t->cols[c].name)) continue;
    int lo, hi;
    ci_of(t, c, &lo, &hi);
    const tl_col *col = &t->cols[c];
    src[3 * k] = c, src[3 * k + 1] = lo, src[3 * k + 2] = hi;
    names[k] = col->name;
    kinds[k] = lo >= 0                       ? TL_RC_EST
               : tl_col_is_str(col->type)    ? TL_RC_TEXT
               : col->type == TL_COL_I64     ? TL_RC_INT
               : is_p(col->name)             ? TL_RC_P
                                             : TL_RC_REAL;
    k++;
  }
  r = tl_sec_table(d, s, title ? title : t->path, k, names, kinds);
  for (size_t row = 0; r && row < t->nrows; row++) {
    if (wc >= 0 && strcmp(t->cols[wc].v.s[row], val)) continue;
    size_t i = tl_rtable_row(d, r);
    if (i == (size_t)-1) break;
    for (int j = 0; j < k; j++) {
      const tl_col *col = &t->cols[src[3 * j]];
      if (kinds[j] == TL_RC_EST)
        tl_cell_est(r, i, j, col->v.f[row], t->cols[src[3 * j + 1]].v.f[row], t->cols[src[3 * j + 2]].v.f[row]);
      else if (kinds[j] == TL_RC_TEXT) tl_cell_text(d, r, i, j, col->v.s[row]);
      else if (kinds[j] == TL_RC_INT) tl_cell_int(r, i, j, col->v.i[row]);
      else tl_cell_real(r, i, j, col->v.f[row]);
    }
  }
done:
  if (!src || !used || !names || !kinds) d->oom = 1;
  free(src), free(used), free(names), free(kinds);
  return r;
}

const tl_table *tl_report_find(tl_table *const *tables, int n, const char *path) {
  for (int i = 0; i < n; i++)
    if (tables[i] && tables[i]->path && !strcmp(tables[i]->path, path)) return tables[i];
  return NULL;
}
