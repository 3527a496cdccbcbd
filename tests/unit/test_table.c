/* test_table.c - the column table (include/tally/table.h, src/core/base/table.c): a new table
 * (path copied, no columns, no rows); tables with 0 rows; columns of every type (STR and TEXT
 * hold char *, I64 int64, F64 double) and their empty cells ("" / 0 / NaN, lengths 0); string
 * cells copied and measured (len), set again, set to "" or NULL; columns added after rows;
 * growth through many rows with values kept; borrowed cells (tl_table_ref_str/_strn);
 * tl_table_clear (rows dropped, columns and capacity kept, borrowing reset); column lookup.
 *
 * The column cases are table-driven: one spec list, and per type the empty cell and a set
 * value read back. Leaks and double frees show under the sanitizer build (LSan). */
#include <math.h>

#include "testutil.h"
#include "tally/table.h"

static const tl_col_spec SPEC[] = {
    {"id", TL_COL_STR, "the unit's id"},
    {"n", TL_COL_I64, "a count"},
    {"x", TL_COL_F64, "a value (unit: none)"},
    {"reply", TL_COL_TEXT, "a long text"},
    {"nodoc", TL_COL_I64, NULL},
};
enum { NSPEC = sizeof SPEC / sizeof SPEC[0] };

/* The empty cell of column c at row r. */
static void assert_empty_cell(const tl_table *t, int c, size_t r) {
  const tl_col *col = &t->cols[c];
  switch (col->type) {
  case TL_COL_STR:
  case TL_COL_TEXT:
    assert_non_null(col->v.s[r]);
    if (col->v.s[r][0]) fail_msg("column %s row %zu: '%s', want \"\"", col->name, r, col->v.s[r]);
    assert_int_equal(col->len[r], 0);
    break;
  case TL_COL_I64:
    if (col->v.i[r] != 0) fail_msg("column %s row %zu: %lld, want 0", col->name, r, (long long)col->v.i[r]);
    break;
  case TL_COL_F64:
    if (!isnan(col->v.f[r])) fail_msg("column %s row %zu: %g, want NaN", col->name, r, col->v.f[r]);
    break;
  }
}

/* Sets cell (r, c) to a value derived from r (for the string columns, one of length r % 50). */
static void set_cell(tl_table *t, int c, size_t r) {
  const tl_col *col = &t->cols[c];
  char buf[64];
  switch (col->type) {
  case TL_COL_STR:
  case TL_COL_TEXT:
    memset(buf, 'a' + (int)(r % 26), sizeof buf);
    buf[r % 50] = 0;
    assert_int_equal(tl_table_set_str(t, r, c, buf), TL_OK);
    break;
  case TL_COL_I64:
    tl_table_set_i64(t, r, c, (int64_t)r * -1000003 + INT64_C(1) * c);
    break;
  case TL_COL_F64:
    tl_table_set_f64(t, r, c, (double)r / 8.0 + c);
    break;
  }
}

static void assert_cell(const tl_table *t, int c, size_t r) {
  const tl_col *col = &t->cols[c];
  char buf[64];
  switch (col->type) {
  case TL_COL_STR:
  case TL_COL_TEXT:
    memset(buf, 'a' + (int)(r % 26), sizeof buf);
    buf[r % 50] = 0;
    if (strcmp(col->v.s[r], buf) != 0) fail_msg("column %s row %zu: '%s', want '%s'", col->name, r, col->v.s[r], buf);
    assert_int_equal(col->len[r], r % 50);
    break;
  case TL_COL_I64:
    assert_true(col->v.i[r] == (int64_t)r * -1000003 + INT64_C(1) * c);
    break;
  case TL_COL_F64:
    assert_true(col->v.f[r] == (double)r / 8.0 + c);
    break;
  }
}

static void test_new(void **state) {
  (void)state;
  char path[32] = "/items/x";
  tl_table *t = tl_table_new(path);
  assert_non_null(t);
  strcpy(path, "/changed");
  assert_string_equal(t->path, "/items/x"); /* copied */
  assert_int_equal(t->ncols, 0);
  assert_int_equal(t->nrows, 0);
  assert_int_equal(tl_table_col(t, "id"), -1);
  tl_table_clear(t); /* nothing to drop */
  assert_int_equal(t->nrows, 0);
  tl_table_free(t);
  tl_table_free(NULL); /* free(NULL) is a no-op */
}

/* Rows with no columns: a row count only. */
static void test_rows_no_columns(void **state) {
  (void)state;
  tl_table *t = tl_table_new("/t");
  for (size_t r = 0; r < 100; r++) assert_int_equal(tl_table_add_row(t), r);
  assert_int_equal(t->nrows, 100);
  /* a column added now has 100 empty cells */
  int c = tl_table_add_col(t, "late", TL_COL_STR, "d");
  assert_int_equal(c, 0);
  for (size_t r = 0; r < 100; r++) assert_empty_cell(t, c, r);
  tl_table_free(t);
}

/* Columns of every type, no rows: names, types, docs; lookup; a schema-only table. */
static void test_zero_rows(void **state) {
  (void)state;
  tl_table *t = tl_table_new("/metrics/m");
  assert_int_equal(tl_table_add_cols(t, SPEC, NSPEC), 0);
  assert_int_equal(t->ncols, NSPEC);
  assert_int_equal(t->nrows, 0);
  for (int c = 0; c < NSPEC; c++) {
    assert_string_equal(t->cols[c].name, SPEC[c].name);
    assert_int_equal(t->cols[c].type, SPEC[c].type);
    assert_string_equal(t->cols[c].doc, SPEC[c].doc ? SPEC[c].doc : ""); /* NULL doc -> "" */
    assert_int_equal(t->cols[c].borrowed, 0);
    assert_int_equal(tl_table_col(t, SPEC[c].name), c);
    assert_int_equal(tl_col_is_str(SPEC[c].type), SPEC[c].type == TL_COL_STR || SPEC[c].type == TL_COL_TEXT);
  }
  assert_int_equal(tl_table_col(t, "ID"), -1);   /* case matters */
  assert_int_equal(tl_table_col(t, "i"), -1);    /* no prefix match */
  assert_int_equal(tl_table_col(t, ""), -1);
  tl_table_clear(t);
  assert_int_equal(t->ncols, NSPEC);
  tl_table_free(t);
  /* add_col returns successive indices */
  t = tl_table_new("/t");
  for (int c = 0; c < 40; c++) {
    char name[16];
    snprintf(name, sizeof name, "c%d", c);
    assert_int_equal(tl_table_add_col(t, name, (tl_col_type)(c % 4), "doc"), c);
  }
  assert_int_equal(tl_table_col(t, "c39"), 39);
  tl_table_free(t);
}

/* A fresh row's cells are empty for every type; set values read back; lengths kept. */
static void test_cells(void **state) {
  (void)state;
  tl_table *t = tl_table_new("/t");
  assert_int_equal(tl_table_add_cols(t, SPEC, NSPEC), 0);
  size_t r = tl_table_add_row(t);
  assert_int_equal(r, 0);
  assert_int_equal(t->nrows, 1);
  for (int c = 0; c < NSPEC; c++) assert_empty_cell(t, c, r);
  tl_table_free(t);

  t = tl_table_new("/t");
  assert_int_equal(tl_table_add_cols(t, SPEC, NSPEC), 0);
  for (size_t k = 0; k < 8; k++) assert_int_equal(tl_table_add_row(t), k);
  for (int c = 0; c < NSPEC; c++) set_cell(t, c, 7);
  for (int c = 0; c < NSPEC; c++) {
    assert_cell(t, c, 7);
    for (size_t k = 0; k < 7; k++) assert_empty_cell(t, c, k); /* the other rows untouched */
  }
  /* string cells are copies, measured */
  char src[16] = "hello";
  assert_int_equal(tl_table_set_str(t, 3, 0, src), TL_OK);
  assert_ptr_not_equal(t->cols[0].v.s[3], src);
  strcpy(src, "bye");
  assert_string_equal(t->cols[0].v.s[3], "hello");
  assert_int_equal(t->cols[0].len[3], 5);
  /* set again: the new value (the old one freed: LSan), then "" and NULL: empty */
  assert_int_equal(tl_table_set_str(t, 3, 0, "a longer value"), TL_OK);
  assert_string_equal(t->cols[0].v.s[3], "a longer value");
  assert_int_equal(t->cols[0].len[3], 14);
  assert_int_equal(tl_table_set_str(t, 3, 0, ""), TL_OK);
  assert_empty_cell(t, 0, 3);
  assert_int_equal(tl_table_set_str(t, 3, 0, NULL), TL_OK);
  assert_empty_cell(t, 0, 3);
  assert_int_equal(tl_table_set_str(t, 3, 3, "text \xc3\xa9"), TL_OK); /* TEXT: the same in memory */
  assert_string_equal(t->cols[3].v.s[3], "text \xc3\xa9");
  assert_int_equal(t->cols[3].len[3], 7);
  /* extreme numbers */
  tl_table_set_i64(t, 1, 1, INT64_MIN);
  tl_table_set_i64(t, 2, 1, INT64_MAX);
  tl_table_set_f64(t, 1, 2, -0.0);
  tl_table_set_f64(t, 2, 2, INFINITY);
  assert_true(t->cols[1].v.i[1] == INT64_MIN && t->cols[1].v.i[2] == INT64_MAX);
  assert_true(signbit(t->cols[2].v.f[1]) && isinf(t->cols[2].v.f[2]));
  assert_null(t->cols[1].len); /* numeric columns have no lengths */
  assert_null(t->cols[2].len);
  tl_table_free(t);
}

/* Many rows (through several capacity doublings), every cell set, then read back; a column
 * added in the middle has empty cells for the rows before and takes values after. */
static void test_growth(void **state) {
  (void)state;
  enum { N = 5000, MID = 1234 };
  tl_table *t = tl_table_new("/items/big");
  assert_int_equal(tl_table_add_cols(t, SPEC, 4), 0);
  int late = -1;
  for (size_t r = 0; r < N; r++) {
    if (r == MID) {
      late = tl_table_add_col(t, "late", TL_COL_F64, "added at row 1234");
      assert_int_equal(late, 4);
      int late_s = tl_table_add_col(t, "late_s", TL_COL_STR, "");
      assert_int_equal(late_s, 5);
    }
    assert_int_equal(tl_table_add_row(t), r);
    assert_true(t->cap >= t->nrows);
    for (int c = 0; c < t->ncols; c++) set_cell(t, c, r);
  }
  assert_int_equal(t->nrows, N);
  for (size_t r = 0; r < N; r++)
    for (int c = 0; c < t->ncols; c++) {
      if (c >= 4 && r < MID) assert_empty_cell(t, c, r);
      else assert_cell(t, c, r);
    }
  tl_table_free(t);
}

/* Borrowed cells: the cell is the caller's pointer, its length given or measured; NULL is "". */
static void test_borrowed(void **state) {
  (void)state;
  static const char *const TEXTS[] = {"first reply", "", "third \xe2\x82\xac"};
  tl_table *t = tl_table_new("/t");
  int c = tl_table_add_col(t, "reply", TL_COL_TEXT, "doc");
  int k = tl_table_add_col(t, "id", TL_COL_STR, "doc");
  for (size_t r = 0; r < 5; r++) tl_table_add_row(t);
  tl_table_ref_str(t, 0, c, TEXTS[0]);
  tl_table_ref_str(t, 1, c, TEXTS[1]);
  tl_table_ref_strn(t, 2, c, TEXTS[2], strlen(TEXTS[2]));
  tl_table_ref_str(t, 3, c, NULL);
  tl_table_ref_strn(t, 4, c, "abcdef", 3); /* a caller-known length: kept as given */
  assert_int_equal(t->cols[c].borrowed, 1);
  assert_int_equal(t->cols[k].borrowed, 0); /* only that column */
  assert_ptr_equal(t->cols[c].v.s[0], TEXTS[0]);
  assert_int_equal(t->cols[c].len[0], strlen(TEXTS[0]));
  assert_string_equal(t->cols[c].v.s[1], "");
  assert_int_equal(t->cols[c].len[1], 0);
  assert_ptr_equal(t->cols[c].v.s[2], TEXTS[2]);
  assert_int_equal(t->cols[c].len[2], 9); /* 6 + the 3 bytes of the euro sign */
  assert_non_null(t->cols[c].v.s[3]);
  assert_string_equal(t->cols[c].v.s[3], "");
  assert_int_equal(t->cols[c].len[3], 0);
  assert_int_equal(t->cols[c].len[4], 3);
  assert_int_equal(tl_table_set_str(t, 0, k, "own"), TL_OK);
  /* clear: the borrowed strings are not freed (ASan would see a bad free), borrowing ends */
  size_t cap = t->cap;
  tl_table_clear(t);
  assert_int_equal(t->nrows, 0);
  assert_int_equal(t->ncols, 2);
  assert_int_equal(t->cap, cap);
  assert_int_equal(t->cols[c].borrowed, 0);
  /* filled again with owned strings: freed by the table */
  assert_int_equal(tl_table_add_row(t), 0);
  assert_empty_cell(t, c, 0);
  assert_empty_cell(t, k, 0);
  assert_int_equal(tl_table_set_str(t, 0, c, "owned now"), TL_OK);
  tl_table_free(t);
}

/* tl_table_clear: rows dropped, columns and capacity kept, rows added again start empty; a
 * table filled and cleared many times (one unit's rows at a time). */
static void test_clear(void **state) {
  (void)state;
  tl_table *t = tl_table_new("/t");
  assert_int_equal(tl_table_add_cols(t, SPEC, NSPEC), 0);
  for (int round = 0; round < 20; round++) {
    size_t n = (size_t)(round * 37 % 150);
    for (size_t r = 0; r < n; r++) {
      assert_int_equal(tl_table_add_row(t), r);
      for (int c = 0; c < NSPEC; c++) assert_empty_cell(t, c, r);
      for (int c = 0; c < NSPEC; c++) set_cell(t, c, r);
    }
    for (size_t r = 0; r < n; r++)
      for (int c = 0; c < NSPEC; c++) assert_cell(t, c, r);
    assert_int_equal(t->nrows, n);
    size_t cap = t->cap;
    tl_table_clear(t);
    assert_int_equal(t->nrows, 0);
    assert_int_equal(t->cap, cap);
    assert_int_equal(t->ncols, NSPEC);
    for (int c = 0; c < NSPEC; c++) assert_string_equal(t->cols[c].name, SPEC[c].name);
  }
  tl_table_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_new),     cmocka_unit_test(test_rows_no_columns),
      cmocka_unit_test(test_zero_rows), cmocka_unit_test(test_cells),
      cmocka_unit_test(test_growth),  cmocka_unit_test(test_borrowed),
      cmocka_unit_test(test_clear),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
