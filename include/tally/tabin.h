/* tabin.h - reading a data table for `tally correlate`: CSV (RFC 4180: header row, quoted
 * fields with "" escapes that may hold separators and line breaks, CRLF or LF, a last row
 * without a line break) or JSONL (one object per line; numbers, strings, booleans; null =
 * empty). TSV is CSV with a tab. Every cell is kept as text; numeric columns are converted on
 * request with errors that name file, line and column.
 *
 * A CSV record that breaks RFC 4180 is reported (malformed_csv) at the line where the fault
 * starts and dropped, and reading resumes at the next line: an unterminated quoted field (at
 * the line where its quote opened, so a stray quote costs one row, not the rest of the table),
 * text after a closing quote, a quote inside an unquoted field. A row with the wrong number of
 * fields is bad_field. Line numbers stay right after quoted fields that span lines. The rules
 * in full are above csv_record in tabin.c. */
#ifndef TALLY_TABIN_H
#define TALLY_TABIN_H

#include <stddef.h>

#include "tally/err.h"
#include "tally/inlog.h"

/* A JSONL table has at most this many columns (distinct keys); a line that would add one more is
 * reported and skipped. Keeps reading linear in the input. */
#define TL_TABIN_MAX_COLS 1024

typedef struct {
  char *path;
  int ncols;
  char **colnames;  /* [ncols] */
  size_t nrows;
  char ***cells;    /* [nrows][ncols], "" when absent */
  long *line;       /* [nrows] 1-based source line of each row */
} tl_tabin;

/* Reads `path` (format from the extension: .csv, .tsv (tab), else JSONL). Malformed rows are
 * reported to `log` (file:line) and skipped; TL_EIO when the file cannot be read; TL_EINPUT when
 * the log is strict and reported something, or there is no header / no row. */
tl_status tl_tabin_read(const char *path, size_t max_line, tl_inlog *log, tl_tabin *t, tl_err *err);
void tl_tabin_release(tl_tabin *t);
int tl_tabin_col(const tl_tabin *t, const char *name); /* -1 when absent */

/* Converts column `col` to doubles. ok[r] = 1 when row r holds a finite number. A cell that
 * reads as NaN ("nan", "NaN": an undefined value, as the item tables write a metric a unit has
 * none of) gives ok[r] = 0 and is not reported. Otherwise the row is reported to `log` ("line
 * N: column 'x' is not a number: 'abc'") and ok[r] = 0.
 * Returns TL_EINPUT when the log is strict and reported something. */
tl_status tl_tabin_numeric(const tl_tabin *t, int col, tl_inlog *log, double *out /* [nrows] */,
                           unsigned char *ok /* [nrows] */);

/* Inner join: the rows of `left` (in its order) that have a row in `right` with the same cells
 * in the columns on[0 .. non-1], each with the right row's columns appended (those the left
 * does not have; the left's win on a name both have). A key twice in `right` is reported to
 * `log` (the first row kept). *unmatched counts the left rows with no match. TL_EJOB when a
 * join column is missing (err names it); TL_EINPUT when the log is strict and reported
 * something. out is released on failure. */
tl_status tl_tabin_join(const tl_tabin *left, const tl_tabin *right, char *const *on, int non,
                        tl_inlog *log, tl_tabin *out, size_t *unmatched, tl_err *err);

#endif
