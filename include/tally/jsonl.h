/* jsonl.h - line-oriented JSON reader with a size cap, line numbers and UTF-8 validation.
 *
 * Every problem with a line is reported with the file name and 1-based line number, and the
 * reader moves on to the next line: one bad line never loses the others. Blank lines (only
 * whitespace) are skipped and not counted as records. A trailing "\r" is dropped. */
#ifndef TALLY_JSONL_H
#define TALLY_JSONL_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "tally/err.h"
#include "tally/str.h"

#define TL_JSONL_DEFAULT_MAX_LINE (64u * 1024u * 1024u) /* 64 MiB */

typedef enum {
  TL_JL_RECORD = 0, /* *obj holds a parsed JSON value (caller owns: cJSON_Delete) */
  TL_JL_EOF = 1,
  TL_JL_BAD = 2,    /* this line is bad: err says why (with file:line); read on */
  TL_JL_IOERR = 3   /* the file cannot be read further: err says why */
} tl_jl_result;

typedef struct {
  FILE *fp;
  char *path;      /* owned copy, for messages */
  size_t max_line; /* lines longer than this are reported and skipped */
  long line_no;    /* 1-based number of the line last returned */
  long n_records;  /* lines that parsed */
  long n_bad;      /* lines reported bad */
  tl_buf line;     /* the raw text of the line last returned (valid until the next call) */
  int bad_kind;    /* after TL_JL_BAD: a tl_in_kind (malformed JSON, invalid UTF-8, too long) */
  char detail[256];/* after TL_JL_BAD: what is wrong, without the "file:line: " prefix */
  char rbuf[65536]; /* read buffer (fread), so lines with NUL bytes keep their length */
  size_t rpos, rlen;
} tl_jsonl;

/* True when v is a JSON number holding an integer in [lo, hi] exactly (checked before any cast:
 * a cast of an out-of-range double is undefined behaviour). Use hi <= 2^53 for exactness. */
int tl_json_is_int(const cJSON *v, double lo, double hi);

/* Opens `path` ("-" = stdin). Returns TL_EIO with a message when it cannot be opened. */
tl_status tl_jsonl_open(tl_jsonl *r, const char *path, size_t max_line, tl_err *err);
void tl_jsonl_close(tl_jsonl *r);

/* Reads the next non-blank line. On TL_JL_RECORD *obj is set (never NULL). */
tl_jl_result tl_jsonl_next(tl_jsonl *r, cJSON **obj, tl_err *err);

#endif
