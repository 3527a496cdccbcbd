/* h5_common.h - HDF5 pieces both table writers use (serial and parallel). */
#ifndef TALLY_H5_COMMON_H
#define TALLY_H5_COMMON_H

#include <hdf5.h>

#include "tally/err.h"

/* Variable-length UTF-8 string type (caller closes it with H5Tclose). */
hid_t tl_h5_str_type(void);
/* Writes a scalar string attribute on obj (collective under the parallel driver). */
tl_status tl_h5_attr_str(hid_t obj, const char *name, const char *value);

/* Why the HDF5 call that has just failed on `file` failed, for a message that names the cause:
 * the errno text HDF5's error stack records (its POSIX driver: "errno = 28, error message =
 * 'No space left on device'"); else, as MPI-IO records no errno, strerror(ENOSPC) when the file
 * system of `file` has no block (or no inode) left for this process (statvfs); else "an I/O
 * error (HDF5 gives no reason)". Into buf[n]; returns buf. Call it before any other HDF5 call
 * (the next call clears the stack). */
const char *tl_h5_why(const char *file, char *buf, size_t n);
/* 1 when the file system of `file` has (almost: under 64 KiB) no block, or no inode, left for
 * this process (statvfs; root counts the reserved blocks). */
int tl_fs_full(const char *file);

/* What compresses HDF5's deflate chunks in this process: "libdeflate <version>" when
 * h5_deflate.c's compress2 is the one the dynamic linker resolves (the executable defines it),
 * else "zlib <version>". The same zlib streams either way; recorded in the output's root
 * attribute `deflate`. */
const char *tl_h5_deflate_name(void);

#endif
