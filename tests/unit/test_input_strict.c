/* test_input_strict.c - input that earlier versions read silently wrong:
 *  - CSV/TSV as RFC 4180: an unterminated quote (a stray ") used to swallow the rest of the
 *    table; a quote inside an unquoted field; CRLF, lone CR, quoted line breaks and the line
 *    numbers after them; a final row without a line break;
 *  - \u0000 escapes, which cJSON cuts strings at (kind nul_escape);
 *  - duplicate keys in one object, of which cJSON keeps the first (kind duplicate_key), in
 *    JSONL lines (items, answers, tables) and in the job file;
 *  - empty item / answer sets and an empty cfg list (qsort must not get NULL: run under
 *    -DTALLY_SANITIZE=ON, UBSan stops on "null pointer passed as argument 1"). */
#define _DEFAULT_SOURCE /* mkstemps */
#include <unistd.h>

#include "testutil.h"
#include "replay.h"
#include "tally/run.h"
#include "tally/inlog.h"
#include "tally/job.h"
#include "se_eval.h"
#include "tally/tabin.h"

/* Writes content to a fresh temp file whose name ends in `ext` (".csv", ".jsonl", ...). */
static char *write_tmp_ext(const char *content, size_t n, const char *ext) {
  char tmpl[64];
  snprintf(tmpl, sizeof tmpl, "/tmp/tally-strict-XXXXXX%s", ext);
  char *path = strdup(tmpl);
  int fd = mkstemps(path, (int)strlen(ext));
  assert_true(fd >= 0);
  assert_int_equal(write(fd, content, n), (ssize_t)n);
  close(fd);
  return path;
}

static char *write_tmp_str(const char *content, const char *ext) {
  return write_tmp_ext(content, strlen(content), ext);
}

/* The i-th recorded problem of a log. */
static const char *log_kind(const tl_inlog *l, size_t i) { return l->table->cols[0].v.s[i]; }
static long log_line(const tl_inlog *l, size_t i) { return (long)l->table->cols[2].v.i[i]; }
static const char *log_msg(const tl_inlog *l, size_t i) { return l->table->cols[3].v.s[i]; }

/* A SpatialEval replay source's variant names. */
static const char *const SE_VARIANTS[] = {"reason", "letter", NULL};

/* ---- CSV / TSV ---- */

typedef struct {
  const char *kind; /* inlog kind name */
  long line;
  const char *needle; /* in the message */
} want_prob;

static const struct {
  const char *name, *ext, *text;
  size_t nrows;
  long lines[6];        /* source line of each kept row */
  const char *cell[3];  /* {row, col} checks below: cell[k] = expected text of row k, column 1 */
  int nprob;
  want_prob prob[3];
} CSV[] = {
    {"stray quote opens a field that never closes", ".csv", "a,b\n1,2\n3,\"4\n5,6\n7,8\n", 3, {2, 4, 5},
     {"2", "6", "8"}, 1, {{"malformed_csv", 3, "unterminated quoted field: the quote opened on this line"}}},
    {"quote inside an unquoted field", ".csv", "a,b\n1,2\n3,4\"5\n6,7\n", 2, {2, 4}, {"2", "7"}, 1,
     {{"malformed_csv", 3, "quote inside an unquoted field"}}},
    {"text after a closing quote (kept)", ".csv", "a,b\n\"1\"9,2\n3,4\n", 1, {3}, {"4"}, 1,
     {{"malformed_csv", 2, "text after a closing quote"}}},
    {"CRLF", ".csv", "a,b\r\n1,2\r\n3,4\r\n", 2, {2, 3}, {"2", "4"}, 0, {{0}}},
    {"lone CR line ends", ".csv", "a,b\r1,2\r3,4", 2, {2, 3}, {"2", "4"}, 0, {{0}}},
    {"quoted line breaks are legal; later line numbers stay right", ".csv",
     "a,b\n1,\"x\ny\"\n2,\"p\"\"q\"\n\"3\r\n\",\"z,w\"\n4,5\n", 4, {2, 4, 5, 7}, {"x\ny", "p\"q", "z,w"}, 0, {{0}}},
    {"final row without a line break", ".csv", "a,b\n1,2\n3,4", 2, {2, 3}, {"2", "4"}, 0, {{0}}},
    {"blank lines are skipped but counted", ".csv", "a,b\n\n1,2\r\n\r\n3,4\n", 2, {3, 5}, {"2", "4"}, 0, {{0}}},
    {"empty quoted field and empty last field", ".csv", "a,b\n\"\",\n", 1, {2}, {""}, 0, {{0}}},
    {"two stray quotes: each costs its own row", ".csv", "a,b\n1,\"2\n3,4\n5,\"6\n7,8\n", 2, {3, 5}, {"4", "8"}, 2,
     {{"malformed_csv", 2, "closes on line 4"}, {"malformed_csv", 4, "unterminated quoted field"}}},
    {"multi-line record with a wrong field count resumes on the next line", ".csv",
     "a,b\n1,\"2\n3\",4\n5,6\n", 1, {4}, {"6"}, 2,
     {{"bad_field", 2, "3 fields, the header has 2 (the record spans lines"},
      {"malformed_csv", 3, "quote inside an unquoted field"}}},
    {"wrong field count", ".csv", "a,b\n1\n2,3\n", 1, {3}, {"3"}, 1, {{"bad_field", 2, "1 fields, the header has 2"}}},
    {"tsv: stray quote", ".tsv", "a\tb\n1\t\"2\n3\t4\n", 1, {3}, {"4"}, 1,
     {{"malformed_csv", 2, "unterminated quoted field"}}},
    {"tsv: quoted tab, CRLF", ".tsv", "a\tb\r\n1\t\"x\ty\"\r\n2\t3", 2, {2, 3}, {"x\ty", "3"}, 0, {{0}}},
};

static void check_probs(const tl_inlog *log, const want_prob *want, int n, const char *path, const char *name) {
  if (log->total != n) {
    for (long i = 0; i < log->total; i++) print_message("  %s:%ld: %s\n", log_kind(log, (size_t)i), log_line(log, (size_t)i), log_msg(log, (size_t)i));
    fail_msg("%s: %ld problems, want %d", name, log->total, n);
  }
  for (int i = 0; i < n; i++) {
    if (strcmp(log_kind(log, (size_t)i), want[i].kind) || log_line(log, (size_t)i) != want[i].line ||
        !strstr(log_msg(log, (size_t)i), want[i].needle))
      fail_msg("%s: problem %d is %s at line %ld: '%s'; want %s at line %ld with '%s'", name, i,
               log_kind(log, (size_t)i), log_line(log, (size_t)i), log_msg(log, (size_t)i), want[i].kind,
               want[i].line, want[i].needle);
    assert_string_equal(log->table->cols[1].v.s[i], path);
  }
}

static void test_csv_rfc4180(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof CSV / sizeof CSV[0]; k++) {
    char *path = write_tmp_str(CSV[k].text, CSV[k].ext);
    tl_inlog log;
    assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
    tl_tabin t;
    tl_err err;
    tl_status st = tl_tabin_read(path, 0, &log, &t, &err);
    if (st != TL_OK) fail_msg("%s: status %d: %s", CSV[k].name, st, err.msg);
    assert_int_equal(t.ncols, 2);
    assert_string_equal(t.colnames[0], "a");
    assert_string_equal(t.colnames[1], "b");
    if (t.nrows != CSV[k].nrows) fail_msg("%s: %zu rows, want %zu", CSV[k].name, t.nrows, CSV[k].nrows);
    for (size_t r = 0; r < t.nrows; r++) {
      if (t.line[r] != CSV[k].lines[r]) fail_msg("%s: row %zu at line %ld, want %ld", CSV[k].name, r, t.line[r], CSV[k].lines[r]);
      if (r < 3 && CSV[k].cell[r] && strcmp(t.cells[r][1], CSV[k].cell[r]))
        fail_msg("%s: row %zu column b is '%s', want '%s'", CSV[k].name, r, t.cells[r][1], CSV[k].cell[r]);
    }
    check_probs(&log, CSV[k].prob, CSV[k].nprob, path, CSV[k].name);
    tl_tabin_release(&t);
    tl_inlog_release(&log);
    /* strict input stops at the first problem */
    if (CSV[k].nprob) {
      assert_int_equal(tl_inlog_init(&log, NULL, 1), TL_OK);
      if (tl_tabin_read(path, 0, &log, &t, &err) != TL_EINPUT) fail_msg("%s: strict read did not stop", CSV[k].name);
      check_probs(&log, CSV[k].prob, 1, path, CSV[k].name);
      tl_inlog_release(&log);
    }
    unlink(path);
    free(path);
  }
}

/* The reported case: one stray quote in a 600-row table must cost one row, not 599. */
static void test_csv_stray_quote_600(void **state) {
  (void)state;
  tl_buf b;
  tl_buf_init(&b);
  tl_buf_puts(&b, "human,m\n");
  for (int i = 0; i < 600; i++) tl_buf_printf(&b, i == 4 ? "%d,\"%d\n" : "%d,%d\n", i % 7, (i * 3) % 11);
  char *path = write_tmp_ext(b.data, b.len, ".csv");
  tl_buf_release(&b);
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_tabin t;
  tl_err err;
  assert_int_equal(tl_tabin_read(path, 0, &log, &t, &err), TL_OK);
  assert_int_equal(t.nrows, 599);
  assert_int_equal(log.total, 1);
  assert_string_equal(log_kind(&log, 0), "malformed_csv");
  assert_int_equal(log_line(&log, 0), 6); /* header is line 1, row i is line i + 2 */
  assert_int_equal(t.line[3], 5);
  assert_int_equal(t.line[4], 7);
  assert_int_equal(t.line[598], 601);
  tl_tabin_release(&t);
  tl_inlog_release(&log);
  unlink(path);
  free(path);
}

static void test_csv_header_and_numeric(void **state) {
  (void)state;
  /* an unterminated quote in the header: the table cannot be read; file:line named */
  char *path = write_tmp_str("\"a,b\n1,2\n", ".csv");
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_tabin t;
  tl_err err;
  assert_int_equal(tl_tabin_read(path, 0, &log, &t, &err), TL_EINPUT);
  char where[128];
  snprintf(where, sizeof where, "%s:1: header row: unterminated quoted field", path);
  assert_non_null(strstr(err.msg, where));
  assert_int_equal(log.counts[TL_IN_MALFORMED_CSV], 1);
  tl_inlog_release(&log);
  unlink(path);
  free(path);
  /* two stray quotes that pair up into a well-formed field: legal RFC 4180, kept as one row,
   * but its numeric cell says what it is instead of printing the lines */
  path = write_tmp_str("h,m\n1,\"2\n3,4\"\n5,6\n", ".csv");
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  assert_int_equal(tl_tabin_read(path, 0, &log, &t, &err), TL_OK);
  assert_int_equal(t.nrows, 2);
  assert_int_equal(t.line[1], 4);
  double v[2];
  unsigned char ok[2];
  assert_int_equal(tl_tabin_numeric(&t, 1, &log, v, ok), TL_OK);
  assert_int_equal(ok[0], 0);
  assert_int_equal(ok[1], 1);
  assert_int_equal(log.total, 1);
  assert_int_equal(log_line(&log, 0), 2);
  assert_non_null(strstr(log_msg(&log, 0), "a quoted field over 2 lines"));
  tl_tabin_release(&t);
  tl_inlog_release(&log);
  unlink(path);
  free(path);
}

/* ---- JSONL: \u0000 escapes and duplicate keys ---- */

static void test_jsonl_nul_and_dup(void **state) {
  (void)state;
  static const struct {
    const char *line;
    int kind; /* -1 = a good record */
    const char *needle;
  } L[] = {
      {"{\"id\":\"a\",\"id\":\"b\"}", TL_IN_DUPLICATE_KEY, "duplicate key 'id' at byte 11"},
      {"{\"item\":{\"x\":1,\"y\":2,\"x\":3}}", TL_IN_DUPLICATE_KEY, "duplicate key 'x' in 'item'"},
      {"{\"a\":[{\"k\":1},{\"k\":2,\"k\":3}]}", TL_IN_DUPLICATE_KEY, "duplicate key 'k' in 'a[1]'"},
      {"{\"a\":{\"x\":1},\"b\":{\"x\":1},\"c\":[{\"x\":1},{\"x\":2}]}", -1, NULL}, /* same key, other objects */
      {"{\"\\u0061\":1,\"a\":2}", TL_IN_DUPLICATE_KEY, "duplicate key 'a'"},   /* the same key, escaped */
      {"{\"A\":1,\"a\":2}", -1, NULL},                                             /* keys are case-sensitive */
      {"{\"response\":\"ab\\u0000cd\"}", TL_IN_NUL_ESCAPE, "\\u0000 escape (a NUL character) in 'response' at byte 16"},
      {"{\"response\":\"ab\\\\u0000cd\"}", -1, NULL}, /* an escaped backslash, then plain text */
      {"{\"response\":\"ab\\\\\\u0000cd\"}", TL_IN_NUL_ESCAPE, "in 'response'"},
      {"{\"a\\u0000b\":1}", TL_IN_NUL_ESCAPE, "in a key at byte 4"},
      {"{\"m\":{\"q\":[\"x\",\"\\u0000\"]}}", TL_IN_NUL_ESCAPE, "in 'm.q[1]'"},
      {"\"\\u0000\"", TL_IN_NUL_ESCAPE, "in a string at byte 2"},
      {"{\"x\":\"\\u0001\\u00e9\\n\"}", -1, NULL},
      {"{\"a\":\"\\u0000\",\"a\":1}", TL_IN_NUL_ESCAPE, "in 'a'"}, /* the first issue in text order */
      {"\xef\xbb\xbf{\"b\":1,\"b\":2}", TL_IN_DUPLICATE_KEY, "duplicate key 'b'"},
      {" { \"s\" : \"}\\\"{\" , \"n\" : -1.5e3 , \"t\" : true , \"z\" : null , \"s\" : [ ] } ", TL_IN_DUPLICATE_KEY,
       "duplicate key 's' at byte 60"},
  };
  const size_t NL = sizeof L / sizeof L[0];
  tl_buf b;
  tl_buf_init(&b);
  for (size_t i = 0; i < NL; i++) tl_buf_printf(&b, "%s\n", L[i].line);
  /* large objects (sorted path): 40 distinct keys, then 40 keys with one repeated */
  tl_buf_puts(&b, "{");
  for (int k = 0; k < 40; k++) tl_buf_printf(&b, "%s\"k%02d\":%d", k ? "," : "", (k * 17) % 40, k);
  tl_buf_puts(&b, "}\n{");
  for (int k = 0; k < 40; k++) tl_buf_printf(&b, "%s\"k%02d\":%d", k ? "," : "", k == 33 ? 7 : k, k);
  tl_buf_puts(&b, "}\n");
  char *path = write_tmp_ext(b.data, b.len, ".jsonl");
  tl_buf_release(&b);
  tl_jsonl r;
  tl_err err;
  assert_int_equal(tl_jsonl_open(&r, path, 0, &err), TL_OK);
  for (size_t i = 0; i < NL + 2; i++) {
    cJSON *o = NULL;
    tl_jl_result res = tl_jsonl_next(&r, &o, &err);
    int kind = i < NL ? L[i].kind : i == NL ? -1 : TL_IN_DUPLICATE_KEY;
    const char *needle = i < NL ? L[i].needle : "duplicate key 'k07'";
    assert_int_equal(r.line_no, (long)i + 1);
    if (kind < 0) {
      if (res != TL_JL_RECORD) fail_msg("line %zu: %s", i + 1, err.msg);
    } else {
      if (res != TL_JL_BAD) fail_msg("line %zu: not reported", i + 1);
      assert_int_equal(r.bad_kind, kind);
      char where[4200];
      snprintf(where, sizeof where, "%s:%zu: ", path, i + 1);
      if (strncmp(err.msg, where, strlen(where)) || !strstr(err.msg, needle))
        fail_msg("line %zu: '%s', want '%s%s'", i + 1, err.msg, where, needle);
    }
    if (i == 7) assert_string_equal(cJSON_GetObjectItemCaseSensitive(o, "response")->valuestring, "ab\\u0000cd");
    cJSON_Delete(o);
  }
  cJSON *o = NULL;
  assert_int_equal(tl_jsonl_next(&r, &o, &err), TL_JL_EOF);
  tl_jsonl_close(&r);
  unlink(path);
  free(path);
  assert_string_equal(tl_in_kind_name(TL_IN_NUL_ESCAPE), "nul_escape");
  assert_string_equal(tl_in_kind_name(TL_IN_DUPLICATE_KEY), "duplicate_key");
}

/* tl_json_check lists every issue, with lines, in text order. */
typedef struct {
  int n;
  char got[8][160];
} issues;

static int collect(void *ctx, const tl_json_issue *is) {
  issues *c = ctx;
  if (c->n < 8)
    snprintf(c->got[c->n++], sizeof c->got[0], "%s %ld %zu [%s] %s", is->kind == TL_JSON_DUP_KEY ? "dup" : "nul",
             is->line, is->byte, is->path, is->key ? is->key : "-");
  return 0;
}

static void test_json_check(void **state) {
  (void)state;
  const char *text = "{\"a\": 1,\n \"b\": {\"c\": \"\\u0000\",\n  \"c\": 2, \"c\": 3},\n \"a\": [\"x\\u0000\"]}";
  cJSON *root = cJSON_Parse(text);
  assert_non_null(root);
  issues c = {0};
  assert_int_equal(tl_json_check(text, root, collect, &c), 5);
  assert_int_equal(c.n, 5);
  assert_string_equal(c.got[0], "nul 2 23 [b.c] -");
  assert_string_equal(c.got[1], "dup 3 34 [b] c");
  assert_string_equal(c.got[2], "dup 3 42 [b] c");
  assert_string_equal(c.got[3], "dup 4 52 [] a");
  assert_string_equal(c.got[4], "nul 4 60 [a[0]] -");
  cJSON_Delete(root);

  /* a path through arrays, empty keys and a key of 300 bytes: cut at 255 bytes, as written
   * step by step into the 256-byte buffer */
  char big[301];
  memset(big, 'k', 300);
  big[300] = 0;
  char deep[700];
  snprintf(deep, sizeof deep, "{\"\": {\"x\": [0, {\"%s\": {\"y\": \"\\u0000\"}}]}}", big);
  root = cJSON_Parse(deep);
  assert_non_null(root);
  issues d = {0};
  assert_int_equal(tl_json_check(deep, root, collect, &d), 1);
  char want[256]; /* "x[1]." and the key, cut at 255 bytes; the empty key adds nothing at the start */
  memcpy(want, "x[1].", 5);
  memcpy(want + 5, big, 250);
  want[255] = 0;
  char line[400];
  snprintf(line, sizeof line, "nul 1 %zu [%s] -", strstr(deep, "\\u0000") - deep + 1, want);
  line[sizeof d.got[0] - 1] = 0;
  assert_string_equal(d.got[0], line);
  assert_int_equal(strlen(want), 255);
  cJSON_Delete(root);
}

/* ---- through the loaders: items, answers, tables ---- */

#define ITEM(inst, extra)                                                                        \
  "{\"id\":\"spatialmap.tqa." inst ".0\",\"text\":\"Q? Available options:\\nA. Northeast\\nB. " \
  "Northwest.\",\"oracle_answer\":\"Northeast\",\"oracle_option\":\"A\",\"oracle_full_answer\":\"A. " \
  "Northeast\"" extra "}\n"

/* JSONL tables: sparse keys land in their columns ("" where a row lacks one), and a table with
 * more distinct keys than TL_TABIN_MAX_COLS is read in linear time: the lines that would add a
 * column past the cap are reported and skipped (the fuzzer's 4500-key input took 27 s before). */
static void test_jsonl_table_columns(void **state) {
  (void)state;
  char *path = write_tmp_str("{\"a\":1,\"b\":\"x\"}\n{\"c\":3}\n{\"b\":null,\"a\":2}\n", ".jsonl");
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_tabin t;
  tl_err err;
  assert_int_equal(tl_tabin_read(path, 0, &log, &t, &err), TL_OK);
  assert_int_equal(t.ncols, 3);
  assert_int_equal(t.nrows, 3);
  static const char *const WANT[3][3] = {{"1", "x", ""}, {"", "", "3"}, {"2", "", ""}};
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) assert_string_equal(t.cells[r][c], WANT[r][c]);
  assert_string_equal(t.colnames[2], "c");
  tl_tabin_release(&t);
  tl_inlog_release(&log);
  unlink(path);
  free(path);
  tl_buf b;
  tl_buf_init(&b);
  for (int i = 0; i < 3000; i++) tl_buf_printf(&b, "{\"c%d\":%d}\n", i, i);
  path = write_tmp_ext(b.data, b.len, ".jsonl");
  tl_buf_release(&b);
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  assert_int_equal(tl_tabin_read(path, 0, &log, &t, &err), TL_OK);
  assert_int_equal(t.ncols, TL_TABIN_MAX_COLS);
  assert_int_equal(t.nrows, TL_TABIN_MAX_COLS);
  assert_int_equal(log.total, 3000 - TL_TABIN_MAX_COLS);
  assert_string_equal(t.cells[TL_TABIN_MAX_COLS - 1][TL_TABIN_MAX_COLS - 1], "1023");
  assert_string_equal(t.cells[0][TL_TABIN_MAX_COLS - 1], "");
  assert_non_null(strstr(log_msg(&log, 0), "at most 1024 columns"));
  tl_tabin_release(&t);
  tl_inlog_release(&log);
  unlink(path);
  free(path);
}

/* The replay engine's key_fn: counts the accepted lines; with a log, reports each key whose
 * id is not in `known` as an unknown item (what the driver does) and returns what the report
 * returned, so that strict input stops the load there. */
typedef struct {
  size_t n;
  tl_inlog *log;
  const char *known;
} key_count;

static int count_key(void *ctx, const tl_unit_key *key, const char *path, long line) {
  key_count *c = ctx;
  c->n++;
  if (c->log && strcmp(key->id, c->known) != 0)
    return tl_inlog_report(c->log, TL_IN_UNKNOWN_ITEM, path, line, "answer for unknown item '%s'", key->id) != TL_OK;
  return 0;
}

static void test_loaders(void **state) {
  (void)state;
  const char *items = ITEM("2000", "")                       /* 1 ok */
      ITEM("2001", ",\"oracle_option\":\"B\"")               /* 2 duplicate key */
      ITEM("2002", ",\"meta\":{\"note\":\"a\\u0000b\"}");    /* 3 \u0000 */
  char *ipath = write_tmp_str(items, ".jsonl");
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_se_itemset s;
  tl_err err;
  assert_int_equal(tl_se_itemset_load(&s, &ipath, 1, 0, &log, &err), TL_OK);
  assert_int_equal(s.n, 1);
  assert_int_equal(log.total, 2);
  assert_int_equal(log.counts[TL_IN_DUPLICATE_KEY], 1);
  assert_int_equal(log.counts[TL_IN_NUL_ESCAPE], 1);
  assert_int_equal(log_line(&log, 0), 2);
  assert_non_null(strstr(log_msg(&log, 0), "duplicate key 'oracle_option'"));
  assert_int_equal(log_line(&log, 1), 3);
  assert_string_equal(log_kind(&log, 1), "nul_escape");
  tl_se_itemset_release(&s);
  tl_inlog_release(&log);
  assert_int_equal(tl_inlog_init(&log, NULL, 1), TL_OK); /* strict */
  assert_int_equal(tl_se_itemset_load(&s, &ipath, 1, 0, &log, &err), TL_EINPUT);
  assert_int_equal(log.total, 1);
  tl_inlog_release(&log);

  const char *answers =
      "{\"id\":\"a.1\",\"model\":\"m\",\"response\":\"R1\"}\n"                            /* 1 ok */
      "{\"id\":\"a.2\",\"model\":\"m\",\"response\":\"cut\\u0000here\"}\n"              /* 2 */
      "{\"id\":\"a.3\",\"model\":\"m\",\"response\":\"first\",\"response\":\"second\"}\n" /* 3 */
      "{\"id\":\"a.4\",\"model\":\"m\",\"response\":\"ok \\\\u0000\"}\n";                /* 4 ok */
  char *apath = write_tmp_str(answers, ".jsonl");
  tl_replay_source src = {apath, "spatialeval", 0, NULL, 0, "reason", SE_VARIANTS};
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_replay *r;
  key_count kc = {0, NULL, NULL};
  assert_int_equal(tl_replay_open(&src, 1, 0, &log, count_key, &kc, &r, &err), TL_OK);
  assert_int_equal(kc.n, 2);
  assert_int_equal(log.total, 2);
  assert_string_equal(log_kind(&log, 0), "nul_escape");
  assert_int_equal(log_line(&log, 0), 2);
  assert_non_null(strstr(log_msg(&log, 0), "in 'response'"));
  assert_string_equal(log_kind(&log, 1), "duplicate_key");
  assert_int_equal(log_line(&log, 1), 3);
  assert_non_null(strstr(log_msg(&log, 1), "duplicate key 'response'"));
  tl_engine *e = tl_replay_engine(r);
  { /* the lines kept are read back whole: "\\u0000" is text, not an escape */
    tl_eng_request q[2];
    memset(q, 0, sizeof q);
    static const char *const ID[] = {"a.1", "a.4"}, *const TEXT[] = {"R1", "ok \\u0000"};
    for (int i = 0; i < 2; i++) {
      q[i].tag = (uint64_t)i;
      q[i].key = (tl_unit_key){"spatialeval", ID[i], "m", "reason", 0, 0, 0};
      assert_int_equal(e->vt->submit(e, &q[i]), TL_OK);
    }
    tl_eng_reply rep[2];
    assert_int_equal(e->vt->poll(e, rep, 2, 0), 2);
    for (int i = 0; i < 2; i++) {
      assert_string_equal(rep[i].text, TEXT[i]);
      tl_eng_reply_release(&rep[i]);
    }
  }
  e->vt->free(e);
  tl_inlog_release(&log);
  assert_int_equal(tl_inlog_init(&log, NULL, 1), TL_OK); /* strict */
  assert_int_equal(tl_replay_open(&src, 1, 0, &log, NULL, NULL, &r, &err), TL_EINPUT);
  assert_int_equal(log.total, 1);
  tl_inlog_release(&log);
  /* strict input through key_fn: the first line for an unknown item stops the load there */
  static const struct {
    int strict;
    tl_status st;
    size_t nkeys;
    long nlog;
  } K[] = {{0, TL_OK, 2, 3}, {1, TL_EINPUT, 1, 1}};
  for (size_t c = 0; c < sizeof K / sizeof K[0]; c++) {
    assert_int_equal(tl_inlog_init(&log, NULL, K[c].strict), TL_OK);
    kc = (key_count){0, &log, "a.4"};
    r = NULL;
    tl_status st = tl_replay_open(&src, 1, 0, &log, count_key, &kc, &r, &err);
    /* not strict: line 2 nul_escape, line 3 duplicate_key, line 1 unknown item (in load order) */
    if (st != K[c].st || kc.n != K[c].nkeys || log.total != K[c].nlog)
      fail_msg("strict %d: status %d, %zu keys, %ld problems; want %d, %zu, %ld", K[c].strict, st, kc.n,
               log.total, K[c].st, K[c].nkeys, K[c].nlog);
    assert_string_equal(log_kind(&log, 0), "unknown_item");
    assert_int_equal(log_line(&log, 0), 1);
    if (st == TL_OK) {
      e = tl_replay_engine(r);
      e->vt->free(e);
    } else {
      assert_null(r);
    }
    tl_inlog_release(&log);
  }

  char *tpath = write_tmp_str("{\"h\":1,\"m\":2}\n{\"h\":2,\"m\":3,\"m\":4}\n{\"h\":3,\"m\":\"x\\u0000\"}\n{\"h\":4,\"m\":5}\n", ".jsonl");
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_tabin t;
  assert_int_equal(tl_tabin_read(tpath, 0, &log, &t, &err), TL_OK);
  assert_int_equal(t.nrows, 2);
  assert_int_equal(t.line[1], 4);
  assert_int_equal(log.counts[TL_IN_DUPLICATE_KEY], 1);
  assert_int_equal(log.counts[TL_IN_NUL_ESCAPE], 1);
  tl_tabin_release(&t);
  tl_inlog_release(&log);
  unlink(ipath);
  unlink(apath);
  unlink(tpath);
  free(ipath);
  free(apath);
  free(tpath);
}

/* ---- the job file ---- */

static void test_job_dups_and_nul(void **state) {
  (void)state;
  static const struct {
    const char *json;
    size_t len; /* 0 = strlen */
    int nprob;
    const char *needle[3];
  } T[] = {
      {"{\"output\":\"o.h5\",\n"
       " \"benchmarks\":[{\"benchmark\":\"spatialeval\",\"items\":\"i.jsonl\",\n"
       "   \"answers\":\"a.jsonl\",\"items\":\"j.jsonl\"}],\n"
       " \"output\":\"p.h5\"}",
       0, 2,
       {": benchmarks[0]: duplicate key 'items' at line 3", ": duplicate key 'output' at line 4", NULL}},
      {"{\"output\":\"o.h5\",\"studies\":[{\"name\":\"s\",\"input\":\"t.csv\",\"human\":\"h\",\"metrics\":[\"a\"],"
       "\"seed\":1,\"seed\":2}]}",
       0, 1, {": studies[0]: duplicate key 'seed' at line 1", NULL, NULL}},
      {"{\"output\":\"o\\u0000.h5\",\"benchmarks\":[{\"benchmark\":\"spatialeval\",\"items\":\"i\",\"answers\":\"a\"}]}",
       0, 1, {": output: \\u0000 escape (a NUL character) at line 1", NULL, NULL}},
      {"{\"output\":\"o.h5\",\"benchmarks\":[{\"benchmark\":\"spatialeval\",\"items\":\"i\",\"answers\":\"a\"}]}\0{\"x\":1}",
       89, 1, {": NUL byte at line 1", NULL, NULL}},
      /* the same key in two objects is fine */
      {"{\"output\":\"o.h5\",\"benchmarks\":[{\"benchmark\":\"spatialeval\",\"items\":\"i\","
       "\"answers\":[{\"path\":\"a\",\"model\":\"m\"},{\"path\":\"b\",\"model\":\"n\"}]}]}",
       0, 0, {NULL, NULL, NULL}},
  };
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
    size_t len = T[i].len ? T[i].len : strlen(T[i].json);
    char *path = write_tmp_ext(T[i].json, len, ".json");
    tl_job job;
    tl_buf probs;
    tl_buf_init(&probs);
    int n = -1;
    tl_status st = tl_job_load(path, &job, &probs, &n);
    if (n != T[i].nprob) fail_msg("case %zu: %d problems, want %d:\n%s", i, n, T[i].nprob, probs.data);
    if (n == 0) {
      assert_int_equal(st, TL_OK);
      tl_job_release(&job);
    } else {
      assert_int_equal(st, TL_EJOB);
      for (int k = 0; k < 3 && T[i].needle[k]; k++) {
        char want[4200];
        snprintf(want, sizeof want, "%s%s", path, T[i].needle[k]);
        if (!strstr(probs.data, want)) fail_msg("case %zu: no '%s' in:\n%s", i, want, probs.data);
      }
    }
    tl_buf_release(&probs);
    unlink(path);
    free(path);
  }
}

/* ---- empty sets: nothing may hand NULL to qsort/memcpy ---- */

static void test_empty_sets(void **state) {
  (void)state;
  char *empty = write_tmp_str("", ".jsonl");
  char *blank = write_tmp_str("\n  \n", ".jsonl");
  char *paths[2] = {empty, blank};
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_se_itemset s;
  tl_err err;
  assert_int_equal(tl_se_itemset_load(&s, paths, 2, 0, &log, &err), TL_OK);
  assert_int_equal(s.n, 0);
  assert_int_equal(log.counts[TL_IN_EMPTY_FILE], 2);
  tl_se_itemset_release(&s);
  assert_int_equal(tl_se_itemset_load(&s, paths, 0, 0, &log, &err), TL_OK); /* no files at all */
  assert_int_equal(s.n, 0);
  tl_se_itemset_release(&s);
  tl_replay_source src[2] = {{empty, "spatialeval", 0, "m", 0, "reason", SE_VARIANTS},
                             {blank, "spatialeval", 0, "m", 0, "reason", SE_VARIANTS}};
  tl_replay *r;
  key_count kc = {0, NULL, NULL};
  assert_int_equal(tl_replay_open(src, 2, 0, &log, count_key, &kc, &r, &err), TL_OK);
  assert_int_equal(kc.n, 0);
  assert_int_equal(tl_replay_index_bytes(r), 0);
  tl_engine *e = tl_replay_engine(r);
  tl_eng_reply rep[2];
  assert_int_equal(e->vt->poll(e, rep, 2, 0), 0);
  e->vt->free(e);
  tl_cfgs_sort(NULL, 0); /* a models/seeds filter that matches nothing */
  tl_cfg one = {(char *)"m", 0, 0};
  tl_cfgs_sort(&one, 1);
  tl_inlog_release(&log);
  unlink(empty);
  unlink(blank);
  free(empty);
  free(blank);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_csv_rfc4180),     cmocka_unit_test(test_csv_stray_quote_600),
      cmocka_unit_test(test_csv_header_and_numeric), cmocka_unit_test(test_jsonl_nul_and_dup),
      cmocka_unit_test(test_json_check),      cmocka_unit_test(test_loaders),
      cmocka_unit_test(test_job_dups_and_nul), cmocka_unit_test(test_empty_sets),
      cmocka_unit_test(test_jsonl_table_columns),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
