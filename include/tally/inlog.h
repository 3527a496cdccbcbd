/* inlog.h - the bad-input log. Every problem with an input line is reported here with its file
 * and line, counted by kind, and kept for the output file (/input_problems). It is echoed to a
 * stream as it happens ("tally: bad input: FILE:LINE: message"), collapsed when it repeats: the
 * first TL_INLOG_ECHO_SAME of one (file, kind, message) and the first TL_INLOG_ECHO_KIND of one
 * (file, kind) are echoed; tl_inlog_flush then says what was held back ("... and 86 more like
 * this"). Every problem is still in the table. In strict mode the first problem makes
 * tl_inlog_report return TL_EINPUT so the caller stops at once.
 *
 * Per input file the log also counts the lines its reader gave (tl_inlog_each notes them), the
 * lines it rejected (lines with at least one problem), and the lines a caller says matched
 * something of the run (tl_inlog_matched); tl_inlog_files prints them and holds the rejected
 * share to a bound. */
#ifndef TALLY_INLOG_H
#define TALLY_INLOG_H

#include <stdio.h>

#include "tally/err.h"
#include "tally/jsonl.h"
#include "tally/strmap.h"
#include "tally/table.h"

/* The kinds, as named in messages' counts and in the "kind" column of /input_problems: */
typedef enum {
  TL_IN_MALFORMED_JSON = 0, /* malformed_json: cJSON cannot parse the line; a NUL byte in it */
  TL_IN_INVALID_UTF8,       /* invalid_utf8 */
  TL_IN_LINE_TOO_LONG,      /* line_too_long: over the per-line byte cap */
  TL_IN_MISSING_FIELD,      /* missing_field */
  TL_IN_BAD_FIELD,          /* bad_field: a field of the wrong type or value; a table row with
                             * the wrong number of fields; a cell that is not a number */
  TL_IN_BAD_ID,             /* bad_id: an item id that does not parse */
  TL_IN_DUPLICATE,          /* duplicate: a second item with the same id, a second answer for
                             * the same unit (the first is kept) */
  TL_IN_UNKNOWN_ITEM,       /* unknown_item: an answer for an item not in the item files */
  TL_IN_EMPTY_FILE,         /* empty_file: no records at all (line 0) */
  TL_IN_MALFORMED_CSV,      /* malformed_csv: a CSV/TSV record that breaks RFC 4180: an
                             * unterminated quoted field ("unterminated quoted field: the
                             * quote opened on this line is never closed"), text after a
                             * closing quote, a quote inside an unquoted field; a NUL byte */
  TL_IN_NUL_ESCAPE,         /* nul_escape: a \u0000 escape in a JSON string or key, which
                             * cJSON would silently cut there ("\u0000 escape (a NUL character)
                             * in 'response' at byte 40") */
  TL_IN_DUPLICATE_KEY,      /* duplicate_key: a key given twice in one JSON object, at any
                             * depth, of which cJSON would silently keep the first ("duplicate
                             * key 'id' at byte 31", "duplicate key 'x' in 'item' at byte 9") */
  TL_IN__NKINDS
} tl_in_kind;

const char *tl_in_kind_name(tl_in_kind k); /* "malformed_json", ... */

#define TL_INLOG_ECHO_SAME 3  /* identical problems (file, kind, message) echoed before collapsing */
#define TL_INLOG_ECHO_KIND 10 /* problems of one kind in one file echoed before collapsing */

/* One input file's counts (lines < 0: no reader noted the file's lines). */
typedef struct {
  char *path;          /* owned */
  char *what;          /* owned: "answers", "items", ... (the reader's noun); NULL when unknown */
  long lines;          /* lines the reader gave (records and bad lines) */
  long rejected;       /* distinct lines with a problem */
  long matched;        /* lines a caller matched to the run (tl_inlog_matched) */
  int joins;           /* a caller matches this file's lines (tl_inlog_matched was called) */
  long last_line;      /* the last rejected line (a line with two problems counts once) */
} tl_inlog_file;

typedef struct {
  FILE *echo;          /* where messages go as they happen (NULL = silent) */
  int strict;          /* 1 = --strict-input */
  long counts[TL_IN__NKINDS];
  long total;
  tl_table *table;     /* kind, file, line, message (owned) */
  tl_strmap same;      /* "kind\x1ffile\x1fmessage" and "kind\x1ffile" -> problems so far */
  long held;           /* problems not echoed yet (collapsed) */
  tl_inlog_file *files;/* [nfiles], owned, in the order first seen */
  size_t nfiles, capfiles;
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

/* Echoes what collapsing held back since the last flush: per (file, kind, message) and per
 * (file, kind), "tally: bad input: FILE: ... and N more like this: MESSAGE" /
 * "... and N more <kind> problems" (all of them are in /input_problems). Idempotent. */
void tl_inlog_flush(tl_inlog *l);

/* Notes that `n` more lines of `file` matched a unit, an item or a row of the run. */
tl_status tl_inlog_matched(tl_inlog *l, const char *file, long n);
/* Notes that the reader of `file` gave `lines` lines in all (tl_inlog_each does). */
tl_status tl_inlog_lines(tl_inlog *l, const char *file, const char *what, long lines);
/* The file's counts, or NULL when the log has none for it. */
const tl_inlog_file *tl_inlog_file_get(const tl_inlog *l, const char *file);
/* Prints one line per file whose reader noted its lines, to `out` (NULL: print nothing):
 * "tally: input FILE (answers): 1500 lines, 1480 matched, 20 rejected (1.3%)". Returns the
 * number of files whose rejected share is over max_share (each named on `err_out`, when not
 * NULL, with its counts and the bound); max_share < 0 checks nothing. Only files with at least
 * one line count. */
int tl_inlog_files(const tl_inlog *l, FILE *out, FILE *err_out, double max_share);

/* Records the bad line a tl_jsonl reader just returned (TL_JL_BAD), with its kind and detail.
 * Same returns as tl_inlog_report. */
tl_status tl_inlog_report_bad_line(tl_inlog *l, const tl_jsonl *r);

/* One record of a JSONL file: obj is borrowed (freed after the call); r says where it is
 * (path, line_no, line_off). TL_OK goes on; anything else stops the file with that status. */
typedef tl_status (*tl_record_fn)(void *ctx, const cJSON *obj, const tl_jsonl *r);
/* Reads every record of the open reader r into fn, the one loop of every JSONL loader: a read
 * error is TL_EIO (err says it); a bad line is reported, and under strict input stops with
 * TL_EINPUT ("PATH:LINE: bad line (strict input)" in err); a file with no line at all is
 * reported as "no <what> in this file" (TL_EINPUT when strict). The caller opens and closes r. */
tl_status tl_inlog_each(tl_inlog *l, tl_jsonl *r, const char *what, tl_record_fn fn, void *ctx, tl_err *err);

#endif
