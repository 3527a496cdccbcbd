/* inlog.c - bad-input log (see inlog.h). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tally/str.h"

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
  tl_strmap_init(&l->same);
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
  tl_inlog_flush(l);
  tl_table_free(l->table);
  tl_strmap_release(&l->same);
  for (size_t i = 0; i < l->nfiles; i++) free(l->files[i].path), free(l->files[i].what);
  free(l->files);
  memset(l, 0, sizeof *l);
}

/* The counts of `file`, added when new; NULL out of memory. Files are few (the job's inputs):
 * a linear search from the last one found. */
static tl_inlog_file *file_of(tl_inlog *l, const char *file) {
  for (size_t k = l->nfiles; k-- > 0;)
    if (strcmp(l->files[k].path, file) == 0) return &l->files[k];
  if (l->nfiles == l->capfiles) {
    size_t nc = l->capfiles ? 2 * l->capfiles : 8;
    tl_inlog_file *nf = realloc(l->files, nc * sizeof *nf);
    if (!nf) return NULL;
    l->files = nf;
    l->capfiles = nc;
  }
  tl_inlog_file *f = &l->files[l->nfiles];
  memset(f, 0, sizeof *f);
  f->lines = -1;
  if (!(f->path = tl_strdup(file))) return NULL;
  l->nfiles++;
  return f;
}

const tl_inlog_file *tl_inlog_file_get(const tl_inlog *l, const char *file) {
  for (size_t k = 0; k < l->nfiles; k++)
    if (strcmp(l->files[k].path, file) == 0) return &l->files[k];
  return NULL;
}

tl_status tl_inlog_matched(tl_inlog *l, const char *file, long n) {
  tl_inlog_file *f = file_of(l, file);
  if (!f) return TL_ENOMEM;
  f->matched += n;
  f->joins = 1;
  return TL_OK;
}

tl_status tl_inlog_lines(tl_inlog *l, const char *file, const char *what, long lines) {
  tl_inlog_file *f = file_of(l, file);
  if (!f) return TL_ENOMEM;
  f->lines = lines;
  if (what && !f->what && !(f->what = tl_strdup(what))) return TL_ENOMEM;
  return TL_OK;
}

int tl_inlog_files(const tl_inlog *l, FILE *out, FILE *err_out, double max_share) {
  int over = 0;
  for (size_t k = 0; k < l->nfiles; k++) {
    const tl_inlog_file *f = &l->files[k];
    if (f->lines <= 0) continue;
    double share = (double)f->rejected / (double)f->lines;
    if (out && f->joins)
      fprintf(out, "tally: input %s (%s): %ld line%s, %ld matched, %ld rejected (%.1f%%)\n", f->path,
              f->what ? f->what : "?", f->lines, f->lines == 1 ? "" : "s", f->matched, f->rejected, 100.0 * share);
    else if (out)
      fprintf(out, "tally: input %s (%s): %ld line%s, %ld rejected (%.1f%%)\n", f->path, f->what ? f->what : "?",
              f->lines, f->lines == 1 ? "" : "s", f->rejected, 100.0 * share);
    if (max_share >= 0 && share > max_share) {
      over++;
      if (err_out)
        fprintf(err_out, "tally: %s: %ld of its %ld lines were rejected (%.1f%%), over the bound of %.1f%% "
                         "(\"limits\": {\"max_rejected\": ...} in the job); see the problems above. Nothing was run\n",
                f->path, f->rejected, f->lines, 100.0 * share, 100.0 * max_share);
    }
  }
  return over;
}

/* The echo's bookkeeping in l->same, keys "T<kind>\x1f<file>[\x1f<message>]" (problems in all)
 * and "S..." (echoed). add(): adds d to key's value and returns the new value; 0 when it cannot
 * count (memory: the problem is echoed). */
static size_t add(tl_strmap *m, const char *key, size_t d) {
  size_t now = 0;
  return tl_strmap_add(m, key, d, &now) == TL_OK ? now : 0;
}

static size_t get(const tl_strmap *m, const char *key) {
  size_t v = 0;
  return tl_strmap_get(m, key, &v) ? v : 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void tl_inlog_flush(tl_inlog *l) {
  if (l->held && l->echo) {
    /* the totals' keys, sorted: per (kind, file) first, then its messages */
    size_t n = 0;
    char **keys = malloc((l->same.n ? l->same.n : 1) * sizeof *keys);
    for (size_t i = 0; keys && i < l->same.cap; i++)
      if (l->same.keys[i] && l->same.keys[i][0] == 'T') keys[n++] = l->same.keys[i];
    if (keys) qsort(keys, n, sizeof *keys, cmp_str);
    tl_buf sk;
    tl_buf_init(&sk);
    for (size_t i = 0; keys && i < n; i++) {
      const char *k = keys[i] + 1, *s1 = strchr(k, 0x1f), *s2 = s1 ? strchr(s1 + 1, 0x1f) : NULL;
      if (!s1 || s2) continue; /* a (kind, file) key; its messages follow it */
      size_t total = get(&l->same, keys[i]), shown, covered = 0;
      tl_buf_reset(&sk);
      if (tl_buf_printf(&sk, "S%s", k)) break;
      shown = get(&l->same, sk.data);
      size_t klen = strlen(keys[i]);
      for (size_t j = i + 1; j < n && strncmp(keys[j], keys[i], klen) == 0 && keys[j][klen] == 0x1f; j++) {
        size_t t = get(&l->same, keys[j]);
        tl_buf_reset(&sk);
        if (tl_buf_printf(&sk, "S%s", keys[j] + 1)) break;
        size_t sh = get(&l->same, sk.data);
        if (sh > 0 && t > sh) { /* echoed before: the rest are "like this" */
          fprintf(l->echo, "tally: bad input: %.*s: ... and %zu more like this: %s\n", (int)strlen(s1 + 1), s1 + 1,
                  t - sh, keys[j] + klen + 1);
          covered += t - sh;
        }
      }
      if (total > shown + covered)
        fprintf(l->echo, "tally: bad input: %s: ... and %zu more %.*s problem%s (every problem is in /input_problems "
                         "of the output)\n",
                s1 + 1, total - shown - covered, (int)(s1 - k), k, total - shown - covered == 1 ? "" : "s");
    }
    tl_buf_release(&sk);
    free(keys);
  }
  l->held = 0;
  /* later problems are echoed afresh */
  tl_strmap_release(&l->same);
  tl_strmap_init(&l->same);
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
  tl_inlog_file *f = line > 0 ? file_of(l, file) : NULL;
  if (f && f->last_line != line) f->rejected++, f->last_line = line;
  if (l->echo) {
    /* echoed unless TL_INLOG_ECHO_SAME identical ones or TL_INLOG_ECHO_KIND of its kind in its
     * file were echoed already (then tl_inlog_flush counts it) */
    tl_buf kk, mk;
    tl_buf_init(&kk);
    tl_buf_init(&mk);
    int echo = 1;
    if (tl_buf_printf(&kk, "T%s\x1f%s", tl_in_kind_name(kind), file) == TL_OK &&
        tl_buf_printf(&mk, "%s\x1f%s", kk.data, msg) == TL_OK) {
      add(&l->same, kk.data, 1);
      add(&l->same, mk.data, 1);
      kk.data[0] = mk.data[0] = 'S';
      echo = get(&l->same, kk.data) < TL_INLOG_ECHO_KIND && get(&l->same, mk.data) < TL_INLOG_ECHO_SAME;
      if (echo) add(&l->same, kk.data, 1), add(&l->same, mk.data, 1);
    }
    tl_buf_release(&kk);
    tl_buf_release(&mk);
    if (!echo) l->held++;
    else if (line > 0) fprintf(l->echo, "tally: bad input: %s:%ld: %s\n", file, line, msg);
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
  if (tl_inlog_lines(l, r->path, what, (long)(r->n_records + r->n_bad)) != TL_OK && st == TL_OK)
    st = tl_err_set(err, TL_ENOMEM, "out of memory");
  if (st == TL_OK && r->n_records == 0 && r->n_bad == 0 &&
      (st = tl_inlog_report(l, TL_IN_EMPTY_FILE, r->path, 0, "no %s in this file", what)) == TL_EINPUT)
    tl_err_set(err, TL_EINPUT, "%s: no %s (strict input)", r->path, what);
  return st;
}
