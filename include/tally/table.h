/* table.h - a column table: what tally writes (one HDF5 group per table, one dataset per column,
 * all of equal length) and prints. Core builds tables; par writes them; cli prints them.
 *
 * Ownership: the table owns its columns and every string in them (tl_table_free frees all).
 * Columns are appended to row by row with tl_table_add_row + tl_table_set_*; cells not set are
 * "" / 0 / NaN. */
#ifndef TALLY_TABLE_H
#define TALLY_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "tally/err.h"

/* Column types. STR and TEXT hold the same thing in memory (char *, UTF-8); they differ in how
 * they are written:
 *   TL_COL_STR   a short string (an id, a model, a task, a status, a rule): written as a
 *                fixed-length string dataset whose width is the longest value's bytes, agreed
 *                over the ranks (h5py and pandas read it as is); a column whose longest value
 *                passes TL_FIXED_STR_MAX bytes, or that would be mostly padding, is written
 *                as a TEXT column is (writer.h);
 *   TL_COL_TEXT  a text of any length (the evidence: replies, judgments, questions): the
 *                parallel writer stores it as a byte blob plus offsets. */
typedef enum { TL_COL_STR = 0, TL_COL_I64 = 1, TL_COL_F64 = 2, TL_COL_TEXT = 3 } tl_col_type;

/* The widest TL_COL_STR column written as fixed-length strings, in bytes. */
#define TL_FIXED_STR_MAX 256

/* 1 for the two string types (cells in v.s). */
static inline int tl_col_is_str(tl_col_type t) { return t == TL_COL_STR || t == TL_COL_TEXT; }

typedef struct {
  char *name;
  tl_col_type type;
  char *doc;      /* one line: meaning and unit; written as the dataset's "doc" attribute */
  int borrowed;   /* STR, TEXT only: cells point into strings the caller keeps alive (set with
                     tl_table_ref_str); the table never frees them */
  union {
    char **s;     /* STR, TEXT: [nrows] owned strings, never NULL */
    int64_t *i;   /* [nrows] */
    double *f;    /* [nrows] */
  } v;
  size_t *len;    /* STR, TEXT: [nrows] each cell's bytes (strlen(v.s[r])), kept by the setters
                     so that writers measure no string twice; NULL for numeric columns */
} tl_col;

typedef struct {
  char *path;     /* HDF5 group path, e.g. "/items/spatialeval" */
  int ncols;
  tl_col *cols;
  size_t nrows;
  size_t cap;
} tl_table;

tl_table *tl_table_new(const char *path);
void tl_table_free(tl_table *t);
/* Drops every row (frees the strings the table owns), keeping the columns and their capacity:
 * a table filled again and again (one unit's row at a time) allocates its columns once. */
void tl_table_clear(tl_table *t);
/* Adds a column; on a table with rows already, their cells of it are empty ("" / 0 / NaN).
 * Returns its index, -1 on allocation failure. */
int tl_table_add_col(tl_table *t, const char *name, tl_col_type type, const char *doc);
/* A column's declaration, for tables whose columns are a static list. */
typedef struct {
  const char *name;
  tl_col_type type;
  const char *doc;
} tl_col_spec;
/* Adds the n columns of spec, in order (tl_table_add_col each). 0, or -1 on allocation failure. */
int tl_table_add_cols(tl_table *t, const tl_col_spec *spec, int n);
/* Index of a column by name, -1 when absent. */
int tl_table_col(const tl_table *t, const char *name);
/* Appends an empty row; returns its index, or (size_t)-1 on allocation failure. */
size_t tl_table_add_row(tl_table *t);
tl_status tl_table_set_str(tl_table *t, size_t row, int col, const char *s); /* copies s */
/* Borrowing variant for big texts (responses): the cell points at s, which must outlive the
 * table; the column becomes a borrowing column (all its cells must be set this way). */
void tl_table_ref_str(tl_table *t, size_t row, int col, const char *s);
/* tl_table_ref_str for a caller that knows strlen(s) (n). */
void tl_table_ref_strn(tl_table *t, size_t row, int col, const char *s, size_t n);
void tl_table_set_i64(tl_table *t, size_t row, int col, int64_t v);
void tl_table_set_f64(tl_table *t, size_t row, int col, double v);

#endif
