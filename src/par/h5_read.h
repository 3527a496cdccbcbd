/* h5_read.h - reading tables back from an output tally wrote (serial or parallel writer). */
#ifndef TALLY_H5_READ_H
#define TALLY_H5_READ_H

#include "tally/err.h"
#include "tally/table.h"

/* Reads columns cols[0..ncols) of the table at HDF5 group `group` of file `path` into a new
 * table *out (caller frees): string columns as written by either writer (a variable-length
 * string dataset, or the parallel writer's `c.bytes` + `c.offsets`), int64 and double columns as
 * they are. Every column must have the first one's row count. TL_EIO (cannot open or read),
 * TL_EINPUT (no such table or column: err names it), TL_ENOMEM. Not collective: one process. */
tl_status tl_h5_read_table(const char *path, const char *group, const char *const *cols, int ncols, tl_table **out,
                           tl_err *err);
/* 1 when the table has column `col` (in either string form). */
int tl_h5_has_column(const char *path, const char *group, const char *col);
/* The file's root string attribute `name` into *out (malloc'd). TL_EIO (cannot open or read),
 * TL_EINPUT (no such attribute, or not a string: err names it). Not collective. */
tl_status tl_h5_read_attr_str(const char *path, const char *name, char **out, tl_err *err);

#endif
