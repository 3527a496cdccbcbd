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
  tl_status (*write_table)(tl_writer *w, const tl_table *t, tl_err *err);
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

#endif
