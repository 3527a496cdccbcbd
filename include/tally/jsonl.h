/* jsonl.h - line-oriented JSON reader with a size cap, line numbers and UTF-8 validation.
 *
 * Every problem with a line is reported with the file name and 1-based line number, and the
 * reader moves on to the next line: one bad line never loses the others. Blank lines (only
 * whitespace) are skipped and not counted as records. A trailing "\r" is dropped.
 *
 * Besides what cJSON rejects, a line is bad when cJSON would read it silently wrong (see
 * tl_json_check): a key given twice in one object, at any depth (cJSON keeps the first value:
 * kind duplicate_key), or a \u0000 escape in a string or key (cJSON cuts the string there:
 * kind nul_escape). Such lines are reported and skipped like malformed ones. */
#ifndef TALLY_JSONL_H
#define TALLY_JSONL_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "tally/err.h"
#include "tally/str.h"

#define TL_JSONL_DEFAULT_MAX_LINE (64u * 1024u * 1024u) /* 64 MiB */
#define TL_JSONL_TOP 16 /* members of a record whose value spans are kept (tl_jsonl_span) */

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
  uint64_t line_off; /* byte offset in the file where that line starts (for a later pread) */
  uint64_t pos;    /* bytes consumed so far */
  long n_records;  /* lines that parsed */
  long n_bad;      /* lines reported bad */
  tl_buf line;     /* the raw text of the line last returned (valid until the next call) */
  int bad_kind;    /* after TL_JL_BAD: a tl_in_kind (malformed JSON, invalid UTF-8, too long,
                    * duplicate key, \u0000 escape) */
  char detail[256];/* after TL_JL_BAD: what is wrong, without the "file:line: " prefix */
  char rbuf[65536]; /* read buffer (fread), so lines with NUL bytes keep their length */
  size_t rpos, rlen;
  /* after TL_JL_RECORD whose value is an object: where the values of its first TL_JSONL_TOP
   * members lie in `line` (tl_jsonl_span) */
  struct tl_jsonl_top {
    const cJSON *node;
    size_t off, len;
  } top[TL_JSONL_TOP];
  int ntop;
} tl_jsonl;

/* True when v is a JSON number holding an integer in [lo, hi] exactly (checked before any cast:
 * a cast of an out-of-range double is undefined behaviour). Use hi <= 2^53 for exactness. */
int tl_json_is_int(const cJSON *v, double lo, double hi);

/* Sorts the keys of every object in j, recursively (byte order): the canonical form tally
 * hashes (reply cache keys, the journal's job identity). Keys are unique (tl_json_check). */
void tl_json_sort_keys(cJSON *j);

/* What cJSON parses without complaint but tally refuses (tl_json_check). */
typedef enum {
  TL_JSON_DUP_KEY = 1,   /* a key that appeared before in the same object */
  TL_JSON_NUL_ESCAPE = 2 /* a \u0000 escape (a real escape: "\\u0000" is not one) */
} tl_json_issue_kind;

typedef struct {
  tl_json_issue_kind kind;
  long line;        /* 1-based line of the text where it is (of the repeated key; of the escape) */
  size_t byte;      /* 1-based byte offset in the text */
  const char *path; /* where: "" = the top level, else like "benchmarks[0].answers[1]": the object
                     * holding the duplicate key, or the string value (or the object whose key)
                     * holding the \u0000 */
  const char *key;  /* DUP_KEY: the key; NUL_ESCAPE: the key holding it (as cJSON cut it), or
                     * NULL when the escape is in a value */
} tl_json_issue;

/* Called once per issue, in text order; return nonzero to stop the walk. */
typedef int (*tl_json_issue_fn)(void *ctx, const tl_json_issue *issue);

/* Walks `text` (NUL-terminated JSON that cJSON parsed into `root`) alongside the tree and calls
 * `fn` for each duplicate key and each \u0000 escape. Linear in the text: keys of small
 * objects are compared pairwise, those of large ones after sorting. Returns the number of
 * issues reported (0 also when the text does not match the tree, which cannot happen for the
 * text cJSON parsed). */
long tl_json_check(const char *text, const cJSON *root, tl_json_issue_fn fn, void *ctx);

/* Opens `path` ("-" = stdin). Returns TL_EIO with a message when it cannot be opened. */
tl_status tl_jsonl_open(tl_jsonl *r, const char *path, size_t max_line, tl_err *err);
void tl_jsonl_close(tl_jsonl *r);

/* Reads the next non-blank line. On TL_JL_RECORD *obj is set (never NULL). */
tl_jl_result tl_jsonl_next(tl_jsonl *r, cJSON **obj, tl_err *err);

/* After TL_JL_RECORD: when `node` is the value of one of the first TL_JSONL_TOP members of the
 * record (a top-level object), sets *off and *len to where its JSON text lies in r->line (for a
 * string: from its opening quote to its closing one, both included) and returns 1; else 0.
 * The JSON text of a string value parses alone (cJSON_ParseWithLength) to the same string. */
int tl_jsonl_span(const tl_jsonl *r, const cJSON *node, size_t *off, size_t *len);

#endif
