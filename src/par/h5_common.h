/* h5_common.h - HDF5 pieces both table writers use (serial and parallel). */
#ifndef TALLY_H5_COMMON_H
#define TALLY_H5_COMMON_H

#include <hdf5.h>

#include "tally/err.h"

/* Variable-length UTF-8 string type (caller closes it with H5Tclose). */
hid_t tl_h5_str_type(void);
/* Writes a scalar string attribute on obj (collective under the parallel driver). */
tl_status tl_h5_attr_str(hid_t obj, const char *name, const char *value);

/* What compresses HDF5's deflate chunks in this process: "libdeflate <version>" when
 * h5_deflate.c's compress2 is the one the dynamic linker resolves (the executable defines it),
 * else "zlib <version>". The same zlib streams either way; recorded in the output's root
 * attribute `deflate`. */
const char *tl_h5_deflate_name(void);

#endif
