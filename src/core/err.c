/* err.c - tl_status texts and the message buffer. */
#include <stdarg.h>
#include <stdio.h>

#include "tally/err.h"

const char *tl_strerror(tl_status st) {
  switch (st) {
  case TL_OK: return "ok";
  case TL_ENOMEM: return "out of memory";
  case TL_EIO: return "input/output error";
  case TL_EINPUT: return "bad input";
  case TL_EJOB: return "invalid job";
  case TL_EREGEX: return "regular expression error";
  case TL_EUSAGE: return "usage error";
  case TL_EHDF5: return "HDF5 error";
  case TL_EMPI: return "MPI error";
  case TL_ENGINE: return "engine error";
  case TL_EINTERNAL: return "internal error";
  }
  return "unknown error";
}

tl_status tl_err_set(tl_err *err, tl_status st, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return st;
}
