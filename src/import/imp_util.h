/* imp_util.h - helpers the import readers share (src/import only). */
#ifndef TALLY_IMP_UTIL_H
#define TALLY_IMP_UTIL_H

#include "tally/err.h"
#include "tally/str.h"

/* Appends to out a copy of the JSON text in whose NaN, Infinity and -Infinity tokens outside
 * strings are null: Python's json.dump writes them for a float that is not finite (pandas'
 * missing cells), and cJSON cannot read them. TL_ENOMEM only. */
tl_status tl_imp_nan_to_null(const tl_buf *in, tl_buf *out);

#endif
