/* h5_parallel_check.c - drives the parallel HDF5 writer (src/par/h5_parallel.c) under mpirun;
 * tests/e2e/test_h5_parallel.sh runs it on 1, 2 and 4 ranks and checks the files.
 *
 *   mpirun -n N h5_parallel_check OUT.h5 [--rows R] [--serial REF.h5] [--mismatch] [--overlap]
 *
 * Writes, collectively:
 *   /data/rows     R rows (default 70000) by write_slice, split unevenly: rank 1 has no rows,
 *                  the others have growing shares, and slices go to ranks in reverse order
 *                  (the highest rank holds the first rows). Columns: text (str, incl. empty and
 *                  non-ASCII), id (i64 = row), value (i64 incl. INT64_MIN/MAX), x (f64 incl.
 *                  NaN, +-inf, -0.0), label (str).
 *   /data/small    10 rows by write_slice (below the chunking threshold), same split.
 *   /data/empty    0 rows by write_slice (str + f64 columns).
 *   /metrics/summary  5 rows by write_table (rank 0 passes the table, the others NULL).
 *   root attributes job_name (str) and n_rows (i64).
 * Row i's values are a function of i only (tests/e2e/test_h5_parallel.sh has the same formulas
 * in Python). --serial: rank 0 also writes the same tables whole with the serial writer, for
 * comparison. --mismatch (2 or more ranks): rank 1 gives column `x` another type; every rank
 * must get the same error. --overlap: every rank passes its rows of /data/rows as starting at
 * row 0, which must be refused the same way on every rank when 2 or more ranks have rows.
 * Exit status: 0 ok, 1 when the writer reported an error (printed by every rank as
 * "h5_parallel_check: rank K: MESSAGE"), 2 on bad usage. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/str.h"
#include "tally/table.h"
#include "writer.h"

static const char *PIECES[7] = {"",         "a",        "h\xc3\xa9llo",
                                "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
                                "emoji \xf0\x9f\x98\x80", "tab\there", "quote\"back\\slash"};

static void row_text(size_t i, tl_buf *b) {
  tl_buf_reset(b);
  tl_buf_puts(b, PIECES[i % 7]);
  for (size_t k = 0; k < i % 13; k++) tl_buf_puts(b, "#");
  if (i % 5) tl_buf_printf(b, "%zu", i);
}

static int64_t row_value(size_t i) {
  if (i == 1) return INT64_MIN;
  if (i == 2) return INT64_MAX;
  return ((int64_t)((i * 7919) % 1000003) - 500000) * 1000000007LL;
}

static double row_x(size_t i) {
  if (i == 0) return -0.0;
  if (i % 17 == 3) return NAN;
  if (i % 101 == 7) return INFINITY;
  if (i % 101 == 8) return -INFINITY;
  return (double)(i * 3) / 16.0 - 50.0;
}

static const char *LABELS[3] = {"", "L1", "\xce\xbb"};

/* Rows [from, from + n) of a data table at path. */
static tl_table *data_rows(const char *path, size_t from, size_t n, int mismatch) {
  tl_table *t = tl_table_new(path);
  tl_table_add_col(t, "text", TL_COL_STR, "a string of varying length");
  tl_table_add_col(t, "id", TL_COL_I64, "the global row index");
  tl_table_add_col(t, "value", TL_COL_I64, "an int64 with extremes");
  tl_table_add_col(t, "x", mismatch ? TL_COL_I64 : TL_COL_F64, "a float64 with NaN and inf");
  tl_table_add_col(t, "label", TL_COL_STR, "");
  tl_buf b;
  tl_buf_init(&b);
  for (size_t i = from; i < from + n; i++) {
    size_t r = tl_table_add_row(t);
    row_text(i, &b);
    tl_table_set_str(t, r, 0, b.data);
    tl_table_set_i64(t, r, 1, (int64_t)i);
    tl_table_set_i64(t, r, 2, row_value(i));
    if (mismatch) tl_table_set_i64(t, r, 3, 0);
    else tl_table_set_f64(t, r, 3, row_x(i));
    tl_table_set_str(t, r, 4, LABELS[i % 3]);
  }
  tl_buf_release(&b);
  return t;
}

static tl_table *empty_table(void) {
  tl_table *t = tl_table_new("/data/empty");
  tl_table_add_col(t, "name", TL_COL_STR, "nothing");
  tl_table_add_col(t, "v", TL_COL_F64, "nothing either");
  return t;
}

static tl_table *summary_table(void) {
  static const char *names[5] = {"alpha", "\xce\xb2", "", "gamma \xce\xb3", "delta"};
  tl_table *t = tl_table_new("/metrics/summary");
  tl_table_add_col(t, "name", TL_COL_STR, "metric name");
  tl_table_add_col(t, "n", TL_COL_I64, "count");
  tl_table_add_col(t, "mean", TL_COL_F64, "mean value");
  for (size_t i = 0; i < 5; i++) {
    size_t r = tl_table_add_row(t);
    tl_table_set_str(t, r, 0, names[i]);
    tl_table_set_i64(t, r, 1, (int64_t)(i * i) - 3);
    tl_table_set_f64(t, r, 2, i == 2 ? NAN : (double)i / 4.0);
  }
  return t;
}

/* This rank's slice of n rows: ranks in reverse order, rank 1 empty, shares (r + 1)^2. */
static void split(size_t n, int rank, int size, size_t *from, size_t *count) {
  if (size == 1) {
    *from = 0;
    *count = n;
    return;
  }
  size_t wsum = 0;
  for (int r = 0; r < size; r++) wsum += r == 1 ? 0 : (size_t)(r + 1) * (size_t)(r + 1);
  size_t at = 0;
  for (int r = size - 1; r >= 0; r--) {
    size_t c = r == 1 ? 0 : n * (size_t)(r + 1) * (size_t)(r + 1) / wsum;
    if (r == 0) c = n - at; /* rank 0 holds the last rows and the remainder */
    if (r == rank) {
      *from = at;
      *count = c;
    }
    at += c;
  }
}

static int fail(int rank, const tl_err *e) {
  fprintf(stderr, "h5_parallel_check: rank %d: %s\n", rank, e->msg);
  return 1;
}

/* Writes everything through w; returns 0 or 1 (error, w aborted). */
static int write_all(tl_writer *w, size_t nrows, int rank, int size, int mismatch, int overlap) {
  tl_err e = {{0}};
  tl_status st = TL_OK;
  size_t from, n;
  split(nrows, rank, size, &from, &n);
  tl_table *t = data_rows("/data/rows", from, n, mismatch && rank == 1);
  st = w->vt->write_slice(w, t, overlap ? 0 : from, nrows, &e);
  tl_table_free(t);
  if (st == TL_OK) {
    split(10, rank, size, &from, &n);
    t = data_rows("/data/small", from, n, 0);
    st = w->vt->write_slice(w, t, from, 10, &e);
    tl_table_free(t);
  }
  if (st == TL_OK) {
    t = empty_table();
    st = w->vt->write_slice(w, t, 0, 0, &e);
    tl_table_free(t);
  }
  if (st == TL_OK) {
    t = rank == 0 ? summary_table() : NULL;
    st = w->vt->write_table(w, t, &e);
    tl_table_free(t);
  }
  if (st == TL_OK) st = w->vt->attr_str(w, "job_name", "h5 parallel check \xe2\x9c\x93", &e);
  if (st == TL_OK) st = w->vt->attr_i64(w, "n_rows", (int64_t)nrows, &e);
  if (st != TL_OK) {
    w->vt->abort(w);
    return fail(rank, &e);
  }
  if (w->vt->close(w, &e) != TL_OK) return fail(rank, &e);
  return 0;
}

static int write_serial(const char *path, size_t nrows) {
  tl_err e = {{0}};
  tl_writer *w = tl_h5_serial_open(path, &e);
  if (!w) return fail(0, &e);
  tl_table *t[4] = {data_rows("/data/rows", 0, nrows, 0), data_rows("/data/small", 0, 10, 0),
                    empty_table(), summary_table()};
  tl_status st = TL_OK;
  for (int k = 0; k < 4 && st == TL_OK; k++) st = w->vt->write_table(w, t[k], &e);
  for (int k = 0; k < 4; k++) tl_table_free(t[k]);
  if (st == TL_OK) st = w->vt->attr_str(w, "job_name", "h5 parallel check \xe2\x9c\x93", &e);
  if (st == TL_OK) st = w->vt->attr_i64(w, "n_rows", (int64_t)nrows, &e);
  if (st != TL_OK) {
    w->vt->abort(w);
    return fail(0, &e);
  }
  return w->vt->close(w, &e) == TL_OK ? 0 : fail(0, &e);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *out = NULL, *serial = NULL;
  size_t nrows = 70000;
  int mismatch = 0, overlap = 0, rc = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) nrows = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--serial") == 0 && i + 1 < argc) serial = argv[++i];
    else if (strcmp(argv[i], "--mismatch") == 0) mismatch = 1;
    else if (strcmp(argv[i], "--overlap") == 0) overlap = 1;
    else if (!out && argv[i][0] != '-') out = argv[i];
    else out = NULL, i = argc;
  }
  if (!out) {
    if (rank == 0)
      fprintf(stderr, "usage: h5_parallel_check OUT.h5 [--rows R] [--serial REF.h5] "
                      "[--mismatch] [--overlap]\n");
    MPI_Finalize();
    return 2;
  }
  tl_err e = {{0}};
  tl_writer *w = tl_h5_parallel_open(out, MPI_COMM_WORLD, &e);
  if (!w) rc = fail(rank, &e);
  else rc = write_all(w, nrows, rank, size, mismatch, overlap);
  if (rc == 0 && serial && rank == 0) rc = write_serial(serial, nrows);
  MPI_Finalize();
  return rc;
}
