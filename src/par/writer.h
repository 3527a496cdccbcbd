/* writer.h - where result tables go, behind one interface so the serial HDF5 writer used now
 * can be replaced by the collective parallel-HDF5 writer without touching callers.
 *
 * Contract: tables are written whole (one group per table, one 1-D dataset per column, equal
 * lengths); attributes are strings or int64 on the file root. Nothing is visible at the final
 * path until close() succeeds: the file is written as "<path>.part" and renamed, so a crash
 * never leaves a half-written result that looks complete. */
#ifndef TALLY_WRITER_H
#define TALLY_WRITER_H

#include <stdint.h>

#include "tally/err.h"
#include "tally/table.h"

typedef struct tl_writer tl_writer;

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
 * write_slice, attr_* (same name and value on every rank) and close/abort together. Returns
 * NULL on every rank, with err filled, when the file cannot be created (the ranks agree).
 * Layout differences from the serial writer: string columns are stored as a byte blob plus
 * offsets (parallel HDF5 cannot write variable-length strings): column `c` becomes datasets
 * `c.bytes` (uint8, all values' UTF-8 bytes concatenated in row order) and `c.offsets` (int64
 * [nrows], start of each value; a value ends where the next starts, the last at the blob's
 * end). tools/tally_h5.py reads both layouts into the same DataFrame. */
#include <mpi.h>
tl_writer *tl_h5_parallel_open(const char *path, MPI_Comm comm, tl_err *err);
/* 1 when a file could not be closed (disk full): HDF5 must then not be shut down (see
 * tl_par_shutdown). */
int tl_h5_broken(void);

#endif
