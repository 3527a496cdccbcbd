/* inlog.h - the bad-input log. Every problem with an input line is reported here with its file
 * and line, echoed to a stream at once ("tally: bad input: FILE:LINE: message"), counted by
 * kind, and kept for the output file (/input_problems). In strict mode the first problem makes
 * tl_inlog_report return TL_EINPUT so the caller stops at once. */
#ifndef TALLY_INLOG_H
#define TALLY_INLOG_H

#include <stdio.h>

#include "tally/err.h"
#include "tally/jsonl.h"
#include "tally/table.h"

typedef enum {
  TL_IN_MALFORMED_JSON = 0,
  TL_IN_INVALID_UTF8,
  TL_IN_LINE_TOO_LONG,
  TL_IN_MISSING_FIELD,
  TL_IN_BAD_FIELD,
  TL_IN_BAD_ID,
  TL_IN_DUPLICATE,
  TL_IN_UNKNOWN_ITEM,
  TL_IN_EMPTY_FILE,
  TL_IN_MALFORMED_CSV,
  TL_IN__NKINDS
} tl_in_kind;

const char *tl_in_kind_name(tl_in_kind k); /* "malformed_json", ... */

typedef struct {
  FILE *echo;          /* where messages go as they happen (NULL = silent) */
  int strict;          /* 1 = --strict-input */
  long counts[TL_IN__NKINDS];
  long total;
  tl_table *table;     /* kind, file, line, message (owned) */
} tl_inlog;

tl_status tl_inlog_init(tl_inlog *l, FILE *echo, int strict);
void tl_inlog_release(tl_inlog *l);
/* Records one problem. line <= 0 means "the whole file". Returns TL_EINPUT in strict mode,
 * TL_OK otherwise (TL_ENOMEM if it could not be recorded). */
tl_status tl_inlog_report(tl_inlog *l, tl_in_kind kind, const char *file, long line,
                          const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Records the bad line a tl_jsonl reader just returned (TL_JL_BAD), with its kind and detail.
 * Same returns as tl_inlog_report. */
tl_status tl_inlog_report_bad_line(tl_inlog *l, const tl_jsonl *r);

#endif
