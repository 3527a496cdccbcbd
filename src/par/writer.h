/* writer.h - where result tables go, behind one interface so the serial HDF5 writer used now
 * can be replaced by the collective parallel-HDF5 writer without touching callers.
 *
 * Contract: tables are written whole (one group per table, one 1-D dataset per column, equal
 * lengths), from one table (write_table, write_slice) or window by window (write_rows);
 * attributes are strings or int64 on the file root. Nothing is visible at the final path
 * until close() succeeds: the file is written as "<path>.part" and renamed, so a crash
 * never leaves a half-written result that looks complete. */
#ifndef TALLY_WRITER_H
#define TALLY_WRITER_H

#include <stdint.h>

#include "tally/err.h"
#include "tally/table.h"

typedef struct tl_writer tl_writer;

/* Hands out rows for write_rows: a table holding rows first .. first + n - 1 of the caller's
 * slice (0-based within the slice), or NULL when it cannot (the writer then fails the call).
 * The table stays the caller's: the writer reads it until the next fill call or until
 * write_rows returns, and never frees it (so one table can serve every window). */
typedef tl_table *(*tl_fill_fn)(void *ctx, uint64_t first, uint64_t n);

typedef struct {
  /* Serial writer: writes t. Parallel writer: collective; rank 0 passes the table, the other
   * ranks pass NULL (the writer broadcasts what the others need to create the datasets). */
  tl_status (*write_table)(tl_writer *w, const tl_table *t, tl_err *err);
  /* Collective (parallel writer; the serial writer accepts offset 0 and total == t->nrows): every
   * rank passes its own rows of one table (same path and columns on every rank, possibly 0
   * rows) and the global index of its first row; ranks' slices are disjoint and cover
   * [0, total). The file holds the rows in global order. */
  tl_status (*write_slice)(tl_writer *w, const tl_table *t, uint64_t offset, uint64_t total,
                           tl_err *err);
  /* Collective. Like write_slice, for a slice of nrows rows starting at global row `offset` of
   * a table of `total` rows, but the rows come from fill, window by window: fill(ctx, first, n)
   * returns a table (still the caller's; see tl_fill_fn) holding the slice's rows
   * first .. first + n - 1 (0-based within this rank's slice), with exactly the columns of
   * `schema` (a table with the path, column names, types and docs, and no rows; the same on
   * every rank). str_stats, when not NULL, gives two numbers for each string column of schema
   * (TL_COL_STR or TL_COL_TEXT), in column order: this slice's bytes of the column, and its
   * longest value's bytes: then fill is called exactly once per window, in row order, and a
   * number that does not match what fill gives fails the call on every rank. Otherwise fill is
   * called at most twice per window (a first pass measures the string
   * columns, the second writes; a table without string columns is filled once) and the strings
   * of the table it returns need only stay valid until the next fill call; both passes must
   * give the same rows. Windows are taken in row order, each of at most window_rows rows
   * (16384; tl_h5_parallel_set_window changes it for tests), with their boundaries on global row
   * multiples of window_rows (so at the default a 16384-element chunk of a numeric column is
   * written in one go); a rank's first and last window may be shorter. Every rank takes part
   * in as many collective rounds as the rank with the most windows. The file holds exactly what
   * write_slice writes for the same rows: same datasets in the same order, values, types,
   * chunking, filters, docs and compressed chunk sizes; only where chunks lie in the file, and
   * so the file's size, may differ (a chunk shared by two windows is rewritten, and much
   * smaller windows than a chunk leave freed space behind). A fill that returns NULL, or a
   * table of other columns or another row count, or strings whose sizes changed between the
   * passes, fails the call on every rank (TL_ENOMEM for NULL, TL_EINTERNAL otherwise). Memory:
   * one window (window_rows rows: the filled table, plus one string column's bytes and
   * offsets, plus HDF5's buffers for the chunks the window touches) plus O(1) per column,
   * whatever nrows. The serial writer accepts offset 0 and nrows == total only, fills each
   * window once and writes what write_table writes for the same rows, except that a string
   * column's compressed size may differ (its chunks hold references into the global heap,
   * filled row by row over all columns). */
  tl_status (*write_rows)(tl_writer *w, const tl_table *schema, uint64_t offset, uint64_t nrows,
                          uint64_t total, const uint64_t *str_stats, tl_fill_fn fill, void *ctx,
                          tl_err *err);
  tl_status (*attr_str)(tl_writer *w, const char *name, const char *value, tl_err *err);
  tl_status (*attr_i64)(tl_writer *w, const char *name, int64_t value, tl_err *err);
  /* Finishes and publishes the file. Frees w whatever the result. */
  tl_status (*close)(tl_writer *w, tl_err *err);
  /* Drops the partial file and frees w (error paths). */
  void (*abort)(tl_writer *w);
} tl_writer_vtbl;

struct tl_writer {
  const tl_writer_vtbl *vt;
};

/* Serial HDF5 writer (one process writes). Returns NULL and fills err on failure. */
tl_writer *tl_h5_serial_open(const char *path, tl_err *err);

/* Parallel HDF5 writer (MPI-IO), collective over comm: every rank calls open, write_table,
 * write_slice, write_rows, attr_* (same name and value on every rank) and close/abort
 * together. Returns NULL on every rank, with err filled, when the file cannot be created (the
 * ranks agree). comm may be TL_SOLO (comm.h: one process, MPI not initialised): the file is
 * then written through HDF5's POSIX driver, with the same datasets as over MPI-IO.
 * Layout differences from the serial writer (parallel HDF5 cannot write variable-length
 * strings):
 *  - a TL_COL_STR column is one fixed-length string dataset `c` (UTF-8, NUL-padded) whose width
 *    is its longest value's bytes over all rows of all ranks (at least 1), so the width, like
 *    every byte of the file, does not depend on the split; h5py reads it as numpy bytes and
 *    `.asstr()` as str, pandas takes it as is. A TL_COL_STR column whose longest value passes
 *    TL_FIXED_STR_MAX bytes, or passes 32 bytes while the column would be more than 8 times its
 *    bytes with the padding, is written as a TL_COL_TEXT column (so a stray long value cannot
 *    make a window of rows cost rows x width bytes; the totals are agreed over the ranks);
 *  - a TL_COL_TEXT column `c` becomes datasets `c.bytes` (uint8, all values' UTF-8 bytes
 *    concatenated in row order) and `c.offsets` (int64 [nrows], start of each value; a value
 *    ends where the next starts, the last at the blob's end).
 * tools/tally_h5.py reads every layout into the same DataFrame. */
#include <mpi.h>
tl_writer *tl_h5_parallel_open(const char *path, MPI_Comm comm, tl_err *err);
/* Tests and benchmarks only: the window of the parallel writer's write_rows, in rows, for every
 * later call (the same on every rank); 0 restores the default (16384). The serial writer
 * always uses 65536. */
void tl_h5_parallel_set_window(uint64_t rows);
/* 1 when a file could not be closed (disk full): HDF5 must then not be shut down (see
 * tl_par_shutdown). */
int tl_h5_broken(void);

#endif
