/* err.c - tl_status texts and the message buffer. */
#include <stdarg.h>
#include <stdio.h>

#include "tally/err.h"
#include "tally/exit.h"
#include "tally/str.h"

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
  case TL_EINTR: return "interrupted by a signal";
  }
  return "unknown error";
}

tl_status tl_err_set(tl_err *err, tl_status st, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    /* A message longer than the buffer is cut at a character boundary, never inside a UTF-8
     * sequence (messages quote inputs, and end up in JSONL and HDF5 strings). */
    if (n < 0) err->msg[0] = 0;
    else if ((size_t)n >= sizeof err->msg)
      err->msg[tl_utf8_floor(err->msg, sizeof err->msg - 1)] = 0;
  }
  return st;
}

int tl_exit_code(tl_status st) {
  switch (st) {
  case TL_OK: return TL_EXIT_OK;
  case TL_EUSAGE:
  case TL_EJOB: return TL_EXIT_USAGE;
  case TL_EINPUT: return TL_EXIT_BAD_INPUT;
  case TL_EINTR: return TL_EXIT_INTERRUPTED;
  default: return TL_EXIT_FAIL;
  }
}
