/* jsonl.c - JSONL reader (see jsonl.h). Lines are read with getc-level buffering into a tl_buf;
 * an over-long line is consumed to its end without being stored. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tally/inlog.h"
#include "tally/jsonl.h"

int tl_json_is_int(const cJSON *v, double lo, double hi) {
  if (!cJSON_IsNumber(v)) return 0;
  double d = v->valuedouble;
  return d >= lo && d <= hi && d == floor(d);
}

tl_status tl_jsonl_open(tl_jsonl *r, const char *path, size_t max_line, tl_err *err) {
  memset(r, 0, sizeof *r);
  tl_buf_init(&r->line);
  r->max_line = max_line ? max_line : TL_JSONL_DEFAULT_MAX_LINE;
  if (strcmp(path, "-") == 0) {
    r->fp = stdin;
  } else {
    r->fp = fopen(path, "rb");
    if (!r->fp) return tl_err_set(err, TL_EIO, "cannot open '%s': %s", path, strerror(errno));
  }
  r->path = tl_strdup(strcmp(path, "-") == 0 ? "<stdin>" : path);
  if (!r->path) {
    if (r->fp != stdin) fclose(r->fp);
    r->fp = NULL;
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  return TL_OK;
}

void tl_jsonl_close(tl_jsonl *r) {
  if (r->fp && r->fp != stdin) fclose(r->fp);
  r->fp = NULL;
  free(r->path);
  r->path = NULL;
  tl_buf_release(&r->line);
}

/* Refills the read buffer; returns bytes available (0 = EOF), -1 on a read error. */
static long refill(tl_jsonl *r) {
  if (r->rpos < r->rlen) return (long)(r->rlen - r->rpos);
  r->rpos = 0;
  r->rlen = fread(r->rbuf, 1, sizeof r->rbuf, r->fp);
  if (r->rlen == 0) return ferror(r->fp) ? -1 : 0;
  return (long)r->rlen;
}

/* Reads one physical line into r->line (embedded NUL bytes kept, so they can be reported).
 * Returns 1 = got a line, 0 = EOF, -1 = read error, 2 = line over the cap (consumed, not
 * stored). */
static int read_line(tl_jsonl *r) {
  tl_buf_reset(&r->line);
  int got = 0, over = 0;
  for (;;) {
    long avail = refill(r);
    if (avail < 0) return -1;
    if (avail == 0) break;
    got = 1;
    const char *start = r->rbuf + r->rpos;
    const char *nl = memchr(start, '\n', (size_t)avail);
    size_t n = nl ? (size_t)(nl - start) + 1 : (size_t)avail;
    if (!over) {
      if (r->line.len + n > r->max_line + 1) {
        over = 1;
        tl_buf_reset(&r->line);
      } else if (tl_buf_append(&r->line, start, n) != TL_OK) {
        return -1;
      }
    }
    r->rpos += n;
    if (nl) break;
  }
  if (!got) return 0;
  r->line_no++;
  if (over) return 2;
  while (r->line.len && (r->line.data[r->line.len - 1] == '\n' || r->line.data[r->line.len - 1] == '\r'))
    r->line.data[--r->line.len] = 0;
  return 1;
}

/* Counts a bad line and formats "file:line: detail" into err. */
static tl_jl_result bad(tl_jsonl *r, int kind, tl_err *err) {
  r->n_bad++;
  r->bad_kind = kind;
  tl_err_set(err, TL_EINPUT, "%s:%ld: %s", r->path, r->line_no, r->detail);
  return TL_JL_BAD;
}

tl_jl_result tl_jsonl_next(tl_jsonl *r, cJSON **obj, tl_err *err) {
  *obj = NULL;
  for (;;) {
    int rc = read_line(r);
    if (rc == 0) return TL_JL_EOF;
    if (rc < 0) {
      tl_err_set(err, TL_EIO, "%s:%ld: read error: %s", r->path, r->line_no + 1, strerror(errno));
      return TL_JL_IOERR;
    }
    if (rc == 2) {
      snprintf(r->detail, sizeof r->detail, "line longer than the %zu-byte cap", r->max_line);
      return bad(r, TL_IN_LINE_TOO_LONG, err);
    }
    const char *s = r->line.data;
    const char *nul = memchr(s, 0, r->line.len);
    if (nul) {
      snprintf(r->detail, sizeof r->detail, "NUL byte at byte %zu (not JSON text)", (size_t)(nul - s) + 1);
      return bad(r, TL_IN_MALFORMED_JSON, err);
    }
    size_t i = 0;
    while (s[i] == ' ' || s[i] == '\t') i++;
    if (s[i] == 0) continue; /* blank line */
    size_t bad_at;
    if (!tl_utf8_valid(s, r->line.len, &bad_at)) {
      snprintf(r->detail, sizeof r->detail, "invalid UTF-8 at byte %zu", bad_at + 1);
      return bad(r, TL_IN_INVALID_UTF8, err);
    }
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithOpts(s, &end, 1);
    if (!v) {
      size_t at = end ? (size_t)(end - s) : 0;
      snprintf(r->detail, sizeof r->detail, "malformed JSON near byte %zu", at + 1);
      return bad(r, TL_IN_MALFORMED_JSON, err);
    }
    r->n_records++;
    *obj = v;
    return TL_JL_RECORD;
  }
}
