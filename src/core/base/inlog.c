/* inlog.c - bad-input log (see inlog.h). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tally/inlog.h"

static const char *const KINDS[] = {
    "malformed_json", "invalid_utf8", "line_too_long", "missing_field", "bad_field",
    "bad_id", "duplicate", "unknown_item", "empty_file", "malformed_csv", "nul_escape",
    "duplicate_key"};
_Static_assert(sizeof KINDS / sizeof KINDS[0] == TL_IN__NKINDS, "one name per tl_in_kind");

const char *tl_in_kind_name(tl_in_kind k) {
  return (k >= 0 && k < TL_IN__NKINDS) ? KINDS[k] : "unknown";
}

tl_status tl_inlog_init(tl_inlog *l, FILE *echo, int strict) {
  memset(l, 0, sizeof *l);
  l->echo = echo;
  l->strict = strict;
  l->table = tl_table_new("/input_problems");
  if (!l->table) return TL_ENOMEM;
  if (tl_table_add_col(l->table, "kind", TL_COL_STR, "problem kind (malformed_json, ...)") < 0 ||
      tl_table_add_col(l->table, "file", TL_COL_STR, "input file") < 0 ||
      tl_table_add_col(l->table, "line", TL_COL_I64, "1-based line (0 = whole file)") < 0 ||
      tl_table_add_col(l->table, "message", TL_COL_TEXT, "what is wrong") < 0)
    return TL_ENOMEM;
  return TL_OK;
}

void tl_inlog_release(tl_inlog *l) {
  tl_table_free(l->table);
  memset(l, 0, sizeof *l);
}

tl_status tl_inlog_report_bad_line(tl_inlog *l, const tl_jsonl *r) {
  return tl_inlog_report(l, (tl_in_kind)r->bad_kind, r->path, r->line_no, "%s", r->detail);
}

tl_status tl_inlog_report(tl_inlog *l, tl_in_kind kind, const char *file, long line,
                          const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  l->counts[kind]++;
  l->total++;
  if (l->echo) {
    if (line > 0) fprintf(l->echo, "tally: bad input: %s:%ld: %s\n", file, line, msg);
    else fprintf(l->echo, "tally: bad input: %s: %s\n", file, msg);
  }
  size_t r = tl_table_add_row(l->table);
  if (r == (size_t)-1) return TL_ENOMEM;
  if (tl_table_set_str(l->table, r, 0, tl_in_kind_name(kind)) ||
      tl_table_set_str(l->table, r, 1, file) || tl_table_set_str(l->table, r, 3, msg))
    return TL_ENOMEM;
  tl_table_set_i64(l->table, r, 2, line);
  return l->strict ? TL_EINPUT : TL_OK;
}

tl_status tl_inlog_each(tl_inlog *l, tl_jsonl *r, const char *what, tl_record_fn fn, void *ctx, tl_err *err) {
  tl_status st = TL_OK;
  cJSON *obj;
  tl_jl_result res;
  tl_err e;
  while (st == TL_OK && (res = tl_jsonl_next(r, &obj, &e)) != TL_JL_EOF) {
    if (res == TL_JL_IOERR) return tl_err_set(err, TL_EIO, "%s", e.msg);
    if (res == TL_JL_BAD) {
      if ((st = tl_inlog_report_bad_line(l, r)) == TL_EINPUT)
        tl_err_set(err, TL_EINPUT, "%s:%ld: bad line (strict input)", r->path, r->line_no);
      continue;
    }
    st = fn(ctx, obj, r);
    cJSON_Delete(obj);
  }
  if (st == TL_OK && r->n_records == 0 && r->n_bad == 0 &&
      (st = tl_inlog_report(l, TL_IN_EMPTY_FILE, r->path, 0, "no %s in this file", what)) == TL_EINPUT)
    tl_err_set(err, TL_EINPUT, "%s: no %s (strict input)", r->path, what);
  return st;
}
