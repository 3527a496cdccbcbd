/* fuzz_tabin.c - libFuzzer target for the data-table reader of `tally correlate`
 * (tl_tabin_read, then tl_tabin_numeric on each of the first 16 columns: `tally correlate`
 * converts the few columns it names). The input is written as x.csv (read leniently), x.tsv
 * (strict log) and x.jsonl (lenient), and each is read. */
#include "fuzz_util.h"

#include "tally/inlog.h"
#include "tally/tabin.h"

static void read_one(const char *name, int strict, const uint8_t *data, size_t size) {
  const char *path = fz_path(name);
  fz_write(path, data, size);
  tl_inlog log;
  FZ_CHECK(tl_inlog_init(&log, NULL, strict) == TL_OK);
  tl_tabin t;
  tl_err err;
  if (tl_tabin_read(path, 0, &log, &t, &err) == TL_OK) {
    FZ_CHECK(t.ncols >= 0 && t.nrows > 0); /* {} rows in JSONL: no columns */
    for (int c = 0; c < t.ncols; c++) {
      FZ_CHECK(t.colnames[c] != NULL);
      if (c < 16) FZ_CHECK(tl_tabin_col(&t, t.colnames[c]) >= 0); /* a linear lookup */
    }
    for (size_t r = 0; r < t.nrows; r++) {
      FZ_CHECK(t.line[r] >= 1 && (r == 0 || t.line[r] > t.line[r - 1]));
      for (int c = 0; c < t.ncols; c++) FZ_CHECK(t.cells[r][c] != NULL);
    }
    double *v = malloc(t.nrows * sizeof *v);
    unsigned char *ok = malloc(t.nrows);
    FZ_CHECK(v && ok);
    for (int c = 0; c < t.ncols && c < 16; c++) { /* correlate converts the few it uses */
      tl_status st = tl_tabin_numeric(&t, c, &log, v, ok);
      FZ_CHECK(st == TL_OK || (strict && st == TL_EINPUT));
      if (st != TL_OK) break; /* strict: the caller stops */
    }
    free(v);
    free(ok);
    tl_tabin_release(&t);
  }
  tl_inlog_release(&log);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  read_one("x.csv", 0, data, size);
  read_one("x.tsv", 1, data, size);
  read_one("x.jsonl", 0, data, size);
  return 0;
}
