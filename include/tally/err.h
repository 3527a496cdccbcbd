/* err.h - tally's one status enum and the optional detailed-message buffer.
 *
 * Codes are never renumbered (they appear in exit codes and logs). Library functions return a
 * tl_status and, when the caller passes a non-NULL tl_err, fill it with a one-line message that
 * says what failed first, lower case, subject in quotes ("cannot open 'x.jsonl': ...").
 * Nothing in core calls exit(). */
#ifndef TALLY_ERR_H
#define TALLY_ERR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  TL_OK = 0,
  TL_ENOMEM = 1,  /* allocation failed */
  TL_EIO = 2,     /* read/write/open failed */
  TL_EINPUT = 3,  /* bad input data (malformed JSON, missing field, bad id, ...) */
  TL_EJOB = 4,    /* invalid job file */
  TL_EREGEX = 5,  /* a pattern failed to compile or match (a bug, not input) */
  TL_EUSAGE = 6,  /* bad command line */
  TL_EHDF5 = 7,   /* HDF5 library error */
  TL_EMPI = 8,    /* MPI error */
  TL_ENGINE = 9,  /* engine failure */
  TL_EINTERNAL = 10,
  TL_EINTR = 11    /* stopped by a signal (SIGTERM, SIGUSR1, SIGINT): not a failure of the work */
} tl_status;

#define TL_ERR_MSG_MAX 1024

/* Detailed message of the last failure; msg is "" when nothing failed. Plain value type. */
typedef struct {
  char msg[TL_ERR_MSG_MAX];
} tl_err;

/* Static text for a code. Never NULL. */
const char *tl_strerror(tl_status st);

/* Formats into err (if non-NULL) and returns st, so callers write `return tl_err_set(...)`.
 * A message longer than TL_ERR_MSG_MAX - 1 bytes is cut at a UTF-8 character boundary
 * (tl_utf8_floor), so a message built from valid UTF-8 stays valid UTF-8. */
tl_status tl_err_set(tl_err *err, tl_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif
