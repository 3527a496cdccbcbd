/* h5_read.h - reading tables back from an output tally wrote (serial or parallel writer). */
#ifndef TALLY_H5_READ_H
#define TALLY_H5_READ_H

#include <stdint.h>

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
/* The file's root integer attribute `name` into *out. TL_EIO, TL_EINPUT as above. */
tl_status tl_h5_read_attr_i64(const char *path, const char *name, int64_t *out, tl_err *err);
/* Checks that `path` is a readable output of tally before anything else reads it: it exists, is
 * a regular file, can be opened, is an HDF5 file that HDF5 can open (not truncated or damaged) and
 * carries tally's root attribute `tally_version`. TL_EIO with err = "cannot open 'PATH': WHY"
 * (No such file or directory, Is a directory, Permission denied, not an HDF5 file, a truncated or
 * damaged HDF5 file, an HDF5 file but not an output of tally). HDF5's own error stack is never
 * printed by this file's functions. Not collective. */
tl_status tl_h5_check_output(const char *path, tl_err *err);

#endif
