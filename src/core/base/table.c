/* table.c - column tables (see table.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tally/str.h"
#include "tally/table.h"

static char EMPTY[1] = "";

tl_table *tl_table_new(const char *path) {
  tl_table *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->path = tl_strdup(path);
  if (!t->path) {
    free(t);
    return NULL;
  }
  return t;
}

void tl_table_free(tl_table *t) {
  if (!t) return;
  for (int c = 0; c < t->ncols; c++) {
    tl_col *col = &t->cols[c];
    if (tl_col_is_str(col->type)) {
      for (size_t r = 0; !col->borrowed && r < t->nrows; r++)
        if (col->v.s[r] != EMPTY) free(col->v.s[r]);
      free(col->v.s);
      free(col->len);
    } else if (col->type == TL_COL_I64) {
      free(col->v.i);
    } else {
      free(col->v.f);
    }
    free(col->name);
    free(col->doc);
  }
  free(t->cols);
  free(t->path);
  free(t);
}

void tl_table_clear(tl_table *t) {
  for (int c = 0; c < t->ncols; c++) {
    tl_col *col = &t->cols[c];
    if (tl_col_is_str(col->type)) {
      for (size_t r = 0; !col->borrowed && r < t->nrows; r++)
        if (col->v.s[r] != EMPTY) free(col->v.s[r]);
      col->borrowed = 0;
    }
  }
  t->nrows = 0;
}

int tl_table_add_col(tl_table *t, const char *name, tl_col_type type, const char *doc) {
  tl_col *c = realloc(t->cols, (size_t)(t->ncols + 1) * sizeof *c);
  if (!c) return -1;
  t->cols = c;
  tl_col *col = &t->cols[t->ncols];
  memset(col, 0, sizeof *col);
  col->name = tl_strdup(name);
  col->doc = tl_strdup(doc ? doc : "");
  col->type = type;
  if (!col->name || !col->doc) {
    free(col->name);
    free(col->doc);
    return -1;
  }
  if (t->cap) { /* rows exist already: the new column's cells start empty */
    void *p = calloc(t->cap, tl_col_is_str(col->type) ? sizeof(char *) : 8);
    size_t *len = tl_col_is_str(type) ? calloc(t->cap, sizeof *len) : NULL;
    if (!p || (tl_col_is_str(type) && !len)) {
      free(p);
      free(len);
      free(col->name);
      free(col->doc);
      return -1;
    }
    col->len = len;
    if (tl_col_is_str(type)) col->v.s = p;
    else if (type == TL_COL_I64) col->v.i = p;
    else col->v.f = p;
    for (size_t r = 0; r < t->nrows; r++) {
      if (tl_col_is_str(type)) col->v.s[r] = EMPTY;
      else if (type == TL_COL_F64) col->v.f[r] = NAN;
    }
  }
  return t->ncols++;
}

int tl_table_add_cols(tl_table *t, const tl_col_spec *spec, int n) {
  for (int i = 0; i < n; i++)
    if (tl_table_add_col(t, spec[i].name, spec[i].type, spec[i].doc) < 0) return -1;
  return 0;
}

int tl_table_col(const tl_table *t, const char *name) {
  for (int c = 0; c < t->ncols; c++)
    if (strcmp(t->cols[c].name, name) == 0) return c;
  return -1;
}

size_t tl_table_add_row(tl_table *t) {
  if (t->nrows == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    for (int c = 0; c < t->ncols; c++) {
      tl_col *col = &t->cols[c];
      size_t sz = tl_col_is_str(col->type) ? sizeof(char *) : 8;
      void *old = tl_col_is_str(col->type) ? (void *)col->v.s
                  : col->type == TL_COL_I64 ? (void *)col->v.i : (void *)col->v.f;
      void *p = realloc(old, cap * sz);
      if (!p) return (size_t)-1;
      if (tl_col_is_str(col->type)) {
        col->v.s = p;
        size_t *len = realloc(col->len, cap * sizeof *len);
        if (!len) return (size_t)-1; /* v.s grew; the capacity stays: a later call retries */
        col->len = len;
      }
      else if (col->type == TL_COL_I64) col->v.i = p;
      else col->v.f = p;
    }
    t->cap = cap;
  }
  size_t r = t->nrows++;
  for (int c = 0; c < t->ncols; c++) {
    tl_col *col = &t->cols[c];
    if (tl_col_is_str(col->type)) {
      col->v.s[r] = EMPTY;
      col->len[r] = 0;
    } else if (col->type == TL_COL_I64) col->v.i[r] = 0;
    else col->v.f[r] = NAN;
  }
  return r;
}

tl_status tl_table_set_str(tl_table *t, size_t row, int col, const char *s) {
  size_t n = s ? strlen(s) : 0;
  char *d = n ? tl_strndup(s, n) : EMPTY;
  if (!d) return TL_ENOMEM;
  char **slot = &t->cols[col].v.s[row];
  if (*slot != EMPTY) free(*slot);
  *slot = d;
  t->cols[col].len[row] = n;
  return TL_OK;
}

void tl_table_ref_strn(tl_table *t, size_t row, int col, const char *s, size_t n) {
  t->cols[col].borrowed = 1;
  t->cols[col].v.s[row] = (s && n) ? (char *)s : EMPTY;
  t->cols[col].len[row] = s ? n : 0;
}

void tl_table_ref_str(tl_table *t, size_t row, int col, const char *s) {
  tl_table_ref_strn(t, row, col, s, s ? strlen(s) : 0);
}

void tl_table_set_i64(tl_table *t, size_t row, int col, int64_t v) { t->cols[col].v.i[row] = v; }
void tl_table_set_f64(tl_table *t, size_t row, int col, double v) { t->cols[col].v.f[row] = v; }
