/* h5_parallel_check.c - drives the parallel HDF5 writer (src/par/h5p_*.c) under mpirun;
 * tests/e2e/test_h5_parallel.sh runs it on 1, 2 and 4 ranks and checks the files.
 *
 *   mpirun -n N h5_parallel_check OUT.h5 [--rows R] [--serial REF.h5] [--mismatch] [--overlap]
 *
 * Writes, collectively:
 *   /data/rows     R rows (default 70000) by write_slice, split unevenly: rank 1 has no rows,
 *                  the others have growing shares, and slices go to ranks in reverse order
 *                  (the highest rank holds the first rows). Columns: text (text, incl. empty
 *                  and non-ASCII), id (i64 = row), value (i64 incl. INT64_MIN/MAX), x (f64 incl.
 *                  NaN, +-inf, -0.0), label (short str, incl. non-ASCII: fixed-length), tag
 *                  (short str, 2 bytes, except row 4100's 300: fixed-length in a table of up
 *                  to 4100 rows, bytes + offsets in a longer one).
 *   /data/small    10 rows by write_slice (below the chunking threshold), same split.
 *   /data/empty    0 rows by write_slice (str + f64 columns).
 *   /metrics/summary  5 rows by write_table (rank 0 passes the table, the others NULL).
 *   root attributes job_name (str) and n_rows (i64).
 * Row i's values are a function of i only (tests/e2e/test_h5_parallel.sh has the same formulas
 * in Python). --serial: rank 0 also writes the same tables whole with the serial writer, for
 * comparison. --mismatch (2 or more ranks): rank 1 gives column `x` another type; every rank
 * must get the same error. --overlap: every rank passes its rows of /data/rows as starting at
 * row 0, which must be refused the same way on every rank when 2 or more ranks have rows.
 * Exit status: 0 ok, 1 when the writer reported an error (printed by every rank as
 * "h5_parallel_check: rank K: MESSAGE"), 2 on bad usage.
 *
 *   mpirun -n N h5_parallel_check OUT.h5 --matrix [--sizes N1,N2,..] [--windows W1,W2,..]
 *                 [--max-windows M] [--bad-fill rows|longer|null|shorter] [--serial REF.h5]
 *
 * The windowed writer (write_rows) against write_slice: for every size N (default
 * 0,1,5,4097,70000,200000) writes /ref/nN (the data_rows columns, split as above) by write_slice
 * and, for every window W (default 1,7,4096,65536,0; 0 = the writer's default, group
 * "wdefault"), /wW/nN with the same rows by write_rows, the rows handed out window by window by
 * a fill function (it checks that every window is at most W rows and that the windows come in
 * order, twice at most). A pair (N, W) with more than M windows (default 5000) is left out
 * (said on stdout: "skip nN wW"): each window rewrites a compressed chunk of every column.
 * --bad-fill: the rank holding row 0 misbehaves from its second window on: a window one row
 * short in the measuring pass (rows), a longer or an emptied string when writing (longer,
 * shorter), or no table when writing (null); every rank must get the same error. The script
 * compares the groups with h5diff and h5py. --serial: rank 0 also writes REF.h5 with the serial
 * writer, /ref/nN by write_table and /rows/nN by write_rows.
 *
 *   mpirun -n N h5_parallel_check OUT.h5 --bench ROWS [--bytes B] --mode slice|rows [--window W]
 *
 * Memory and time: /bench/t of ROWS rows (id i64, x f64, text str of B bytes, default 500),
 * split evenly, written by write_slice (the rank's whole slice built first) or by write_rows
 * (windows of W rows, default the writer's). Prints per rank
 *   bench MODE rank R: rss_before_kib A peak_kib P
 * (A: VmRSS just before the write call, with the slice's table built for slice; P: VmHWM after
 * it) and on rank 0
 *   bench MODE ranks N rows ROWS: write_s T fill_s F cpu_s max C sum S
 * (T: the write call, the slowest rank; F: the most time a rank spent making rows: building the
 * slice's table for slice, before the write call; inside fill for rows, within T; C, S: CPU
 * seconds of the write call, the most of one rank and the sum over ranks; MPI waits spin, so
 * these include waiting). */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "tally/str.h"
#include "tally/table.h"
#include "h5_common.h"
#include "writer.h"

static const char *PIECES[7] = {"",         "a",        "h\xc3\xa9llo",
                                "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
                                "emoji \xf0\x9f\x98\x80", "tab\there", "quote\"back\\slash"};

static void row_text(size_t i, tl_buf *b) {
  tl_buf_reset(b);
  tl_buf_puts(b, PIECES[i % 7]);
  for (size_t k = 0; k < i % 13; k++) tl_buf_puts(b, "#");
  if (i % 5) tl_buf_printf(b, "%zu", i);
}

static int64_t row_value(size_t i) {
  if (i == 1) return INT64_MIN;
  if (i == 2) return INT64_MAX;
  return ((int64_t)((i * 7919) % 1000003) - 500000) * 1000000007LL;
}

static double row_x(size_t i) {
  if (i == 0) return -0.0;
  if (i % 17 == 3) return NAN;
  if (i % 101 == 7) return INFINITY;
  if (i % 101 == 8) return -INFINITY;
  return (double)(i * 3) / 16.0 - 50.0;
}

static const char *LABELS[3] = {"", "L1", "\xce\xbb"};

/* Rows [from, from + n) of a data table at path. */
static tl_table *data_rows(const char *path, size_t from, size_t n, int mismatch) {
  tl_table *t = tl_table_new(path);
  tl_table_add_col(t, "text", TL_COL_TEXT, "a string of varying length");
  tl_table_add_col(t, "id", TL_COL_I64, "the global row index");
  tl_table_add_col(t, "value", TL_COL_I64, "an int64 with extremes");
  tl_table_add_col(t, "x", mismatch ? TL_COL_I64 : TL_COL_F64, "a float64 with NaN and inf");
  tl_table_add_col(t, "label", TL_COL_STR, "");
  tl_table_add_col(t, "tag", TL_COL_STR, "a short string but one");
  char tag[301];
  tl_buf b;
  tl_buf_init(&b);
  for (size_t i = from; i < from + n; i++) {
    size_t r = tl_table_add_row(t);
    row_text(i, &b);
    tl_table_set_str(t, r, 0, b.data);
    tl_table_set_i64(t, r, 1, (int64_t)i);
    tl_table_set_i64(t, r, 2, row_value(i));
    if (mismatch) tl_table_set_i64(t, r, 3, 0);
    else tl_table_set_f64(t, r, 3, row_x(i));
    tl_table_set_str(t, r, 4, LABELS[i % 3]);
    if (i == 4100) {
      memset(tag, 'w', 300);
      tag[300] = '\0';
    } else {
      snprintf(tag, sizeof tag, "t%d", (int)(i % 5));
    }
    tl_table_set_str(t, r, 5, tag);
  }
  tl_buf_release(&b);
  return t;
}

static tl_table *empty_table(void) {
  tl_table *t = tl_table_new("/data/empty");
  tl_table_add_col(t, "name", TL_COL_STR, "nothing");
  tl_table_add_col(t, "v", TL_COL_F64, "nothing either");
  return t;
}

static tl_table *summary_table(void) {
  static const char *names[5] = {"alpha", "\xce\xb2", "", "gamma \xce\xb3", "delta"};
  tl_table *t = tl_table_new("/metrics/summary");
  tl_table_add_col(t, "name", TL_COL_STR, "metric name");
  tl_table_add_col(t, "n", TL_COL_I64, "count");
  tl_table_add_col(t, "mean", TL_COL_F64, "mean value");
  for (size_t i = 0; i < 5; i++) {
    size_t r = tl_table_add_row(t);
    tl_table_set_str(t, r, 0, names[i]);
    tl_table_set_i64(t, r, 1, (int64_t)(i * i) - 3);
    tl_table_set_f64(t, r, 2, i == 2 ? NAN : (double)i / 4.0);
  }
  return t;
}

/* This rank's slice of n rows: ranks in reverse order, rank 1 empty, shares (r + 1)^2. */
static void split(size_t n, int rank, int size, size_t *from, size_t *count) {
  if (size == 1) {
    *from = 0;
    *count = n;
    return;
  }
  size_t wsum = 0;
  for (int r = 0; r < size; r++) wsum += r == 1 ? 0 : (size_t)(r + 1) * (size_t)(r + 1);
  size_t at = 0;
  for (int r = size - 1; r >= 0; r--) {
    size_t c = r == 1 ? 0 : n * (size_t)(r + 1) * (size_t)(r + 1) / wsum;
    if (r == 0) c = n - at; /* rank 0 holds the last rows and the remainder */
    if (r == rank) {
      *from = at;
      *count = c;
    }
    at += c;
  }
}

static int fail(int rank, const tl_err *e) {
  fprintf(stderr, "h5_parallel_check: rank %d: %s\n", rank, e->msg);
  return 1;
}

/* Writes everything through w; returns 0 or 1 (error, w aborted). */
static int write_all(tl_writer *w, size_t nrows, int rank, int size, int mismatch, int overlap) {
  tl_err e = {{0}};
  tl_status st = TL_OK;
  size_t from, n;
  split(nrows, rank, size, &from, &n);
  tl_table *t = data_rows("/data/rows", from, n, mismatch && rank == 1);
  st = w->vt->write_slice(w, t, overlap ? 0 : from, nrows, &e);
  tl_table_free(t);
  if (st == TL_OK) {
    split(10, rank, size, &from, &n);
    t = data_rows("/data/small", from, n, 0);
    st = w->vt->write_slice(w, t, from, 10, &e);
    tl_table_free(t);
  }
  if (st == TL_OK) {
    t = empty_table();
    st = w->vt->write_slice(w, t, 0, 0, &e);
    tl_table_free(t);
  }
  if (st == TL_OK) {
    t = rank == 0 ? summary_table() : NULL;
    st = w->vt->write_table(w, t, &e);
    tl_table_free(t);
  }
  if (st == TL_OK) st = w->vt->attr_str(w, "job_name", "h5 parallel check \xe2\x9c\x93", &e);
  if (st == TL_OK) st = w->vt->attr_i64(w, "n_rows", (int64_t)nrows, &e);
  if (st != TL_OK) {
    w->vt->abort(w);
    return fail(rank, &e);
  }
  if (w->vt->close(w, &e) != TL_OK) return fail(rank, &e);
  return 0;
}

static int write_serial(const char *path, size_t nrows) {
  tl_err e = {{0}};
  tl_writer *w = tl_h5_serial_open(path, &e);
  if (!w) return fail(0, &e);
  tl_table *t[4] = {data_rows("/data/rows", 0, nrows, 0), data_rows("/data/small", 0, 10, 0),
                    empty_table(), summary_table()};
  tl_status st = TL_OK;
  for (int k = 0; k < 4 && st == TL_OK; k++) st = w->vt->write_table(w, t[k], &e);
  for (int k = 0; k < 4; k++) tl_table_free(t[k]);
  if (st == TL_OK) st = w->vt->attr_str(w, "job_name", "h5 parallel check \xe2\x9c\x93", &e);
  if (st == TL_OK) st = w->vt->attr_i64(w, "n_rows", (int64_t)nrows, &e);
  if (st != TL_OK) {
    w->vt->abort(w);
    return fail(0, &e);
  }
  return w->vt->close(w, &e) == TL_OK ? 0 : fail(0, &e);
}

/* ---- --matrix: write_rows against write_slice ---- */

typedef struct {
  const char *path;
  size_t from;          /* the slice's first global row */
  uint64_t window;      /* the largest window allowed */
  uint64_t next, pass;  /* the next expected first row, and passes begun */
  int bad;
  int sabotage;         /* --bad-fill: 1 rows, 2 longer, 3 null, 4 shorter (this rank only) */
  tl_table *last;       /* the table fill gave last: ours (tl_fill_fn), freed at the next call */
} fill_ctx;

static tl_table *make_rows(fill_ctx *c, uint64_t first, uint64_t n);

/* write_rows' fill: the table it gave last is freed here, and the last one after write_rows. */
static tl_table *fill_rows(void *ctx_, uint64_t first, uint64_t n) {
  fill_ctx *c = ctx_;
  tl_table_free(c->last);
  return c->last = make_rows(c, first, n);
}

static tl_table *make_rows(fill_ctx *c, uint64_t first, uint64_t n) {
  if (first == 0) c->pass++, c->next = 0;
  if (first != c->next || n == 0 || n > c->window || c->pass > 2) {
    fprintf(stderr, "h5_parallel_check: fill(%llu, %llu) of %s: expected first %llu, at most "
            "%llu rows, pass %llu\n", (unsigned long long)first, (unsigned long long)n, c->path,
            (unsigned long long)c->next, (unsigned long long)c->window,
            (unsigned long long)c->pass);
    c->bad = 1;
  }
  c->next = first + n;
  if (c->sabotage == 1 && c->pass == 1 && first > 0) /* a window one row short */
    return data_rows(c->path, c->from + first, n - 1, 0);
  if (c->sabotage == 3 && c->pass == 2 && first > 0) return NULL;
  tl_table *t = data_rows(c->path, c->from + first, n, 0);
  if (c->sabotage == 2 && c->pass == 2 && first > 0) { /* the text grows between the passes */
    tl_buf b;
    tl_buf_init(&b);
    tl_buf_printf(&b, "%s+", t->cols[0].v.s[0]);
    tl_table_set_str(t, 0, 0, b.data);
    tl_buf_release(&b);
  }
  if (c->sabotage == 4 && c->pass == 2 && first > 0) tl_table_set_str(t, 0, 0, "");
  return t;
}

static size_t parse_list(const char *s, uint64_t *v, size_t max) {
  size_t n = 0;
  while (s && *s && n < max) {
    char *end;
    v[n++] = strtoull(s, &end, 10);
    s = *end == ',' ? end + 1 : end;
    if (end == s && *s) break;
  }
  return n;
}

static int write_matrix(tl_writer *w, const uint64_t *sizes, size_t nsizes,
                        const uint64_t *windows, size_t nwindows, uint64_t max_windows,
                        int sabotage, int rank, int size) {
  tl_err e = {{0}};
  tl_status st = TL_OK;
  tl_buf path;
  tl_buf_init(&path);
  int bad = 0;
  for (size_t i = 0; i < nsizes && st == TL_OK; i++) {
    size_t from, n;
    split(sizes[i], rank, size, &from, &n);
    tl_buf_reset(&path);
    tl_buf_printf(&path, "/ref/n%llu", (unsigned long long)sizes[i]);
    tl_table *t = data_rows(path.data, from, n, 0);
    st = w->vt->write_slice(w, t, from, sizes[i], &e);
    tl_table_free(t);
    for (size_t k = 0; k < nwindows && st == TL_OK; k++) {
      uint64_t win = windows[k] ? windows[k] : 16384; /* the writer's default */
      if ((sizes[i] + win - 1) / win > max_windows) {
        if (rank == 0) printf("skip n%llu w%llu\n", (unsigned long long)sizes[i],
                              (unsigned long long)windows[k]);
        continue;
      }
      tl_buf_reset(&path);
      if (windows[k]) tl_buf_printf(&path, "/w%llu/n%llu", (unsigned long long)windows[k],
                                    (unsigned long long)sizes[i]);
      else tl_buf_printf(&path, "/wdefault/n%llu", (unsigned long long)sizes[i]);
      tl_h5_parallel_set_window(windows[k]);
      t = data_rows(path.data, 0, 0, 0); /* the schema */
      /* --bad-fill: the rank holding row 0 (the highest rank with rows) misbehaves */
      fill_ctx c = {path.data, from, win, 0, 0, 0, from == 0 && n > 0 ? sabotage : 0, NULL};
      /* every other window size: the string bytes given (one pass), else measured (two) */
      uint64_t sb[16] = {0}; /* per string column: bytes, longest value */
      int given = k % 2 == 1 && !sabotage;
      if (given) {
        tl_table *all = data_rows(path.data, from, n, 0);
        for (int col = 0, q = 0; all && col < all->ncols && q < 8; col++)
          if (tl_col_is_str(all->cols[col].type)) {
            for (size_t r = 0; r < all->nrows; r++) {
              uint64_t len = strlen(all->cols[col].v.s[r]);
              sb[2 * q] += len;
              if (len > sb[2 * q + 1]) sb[2 * q + 1] = len;
            }
            q++;
          }
        tl_table_free(all);
      }
      st = w->vt->write_rows(w, t, from, n, sizes[i], given ? sb : NULL, fill_rows, &c, &e);
      tl_table_free(t);
      tl_table_free(c.last);
      bad |= c.bad;
      if (given && n > 0 && c.pass != 1) {
        fprintf(stderr, "h5_parallel_check: %s: string bytes given, yet %llu fill passes\n", path.data,
                (unsigned long long)c.pass);
        bad = 1;
      }
    }
  }
  tl_h5_parallel_set_window(0);
  tl_buf_release(&path);
  if (st != TL_OK) {
    w->vt->abort(w);
    return fail(rank, &e);
  }
  if (w->vt->close(w, &e) != TL_OK) return fail(rank, &e);
  if (bad) fprintf(stderr, "h5_parallel_check: rank %d: fill called out of order\n", rank);
  return bad;
}

static int write_serial_matrix(const char *path, const uint64_t *sizes, size_t nsizes) {
  tl_err e = {{0}};
  tl_writer *w = tl_h5_serial_open(path, &e);
  if (!w) return fail(0, &e);
  tl_status st = TL_OK;
  tl_buf p;
  tl_buf_init(&p);
  for (size_t i = 0; i < nsizes && st == TL_OK; i++) {
    tl_buf_reset(&p);
    tl_buf_printf(&p, "/ref/n%llu", (unsigned long long)sizes[i]);
    tl_table *t = data_rows(p.data, 0, sizes[i], 0);
    st = w->vt->write_table(w, t, &e);
    tl_table_free(t);
    if (st != TL_OK) break;
    tl_buf_reset(&p);
    tl_buf_printf(&p, "/rows/n%llu", (unsigned long long)sizes[i]);
    t = data_rows(p.data, 0, 0, 0);
    fill_ctx c = {p.data, 0, 65536, 0, 0, 0, 0, NULL};
    st = w->vt->write_rows(w, t, 0, sizes[i], sizes[i], NULL, fill_rows, &c, &e);
    tl_table_free(t);
    tl_table_free(c.last);
    if (c.bad) st = tl_err_set(&e, TL_EINTERNAL, "serial fill called out of order");
  }
  tl_buf_release(&p);
  if (st != TL_OK) {
    w->vt->abort(w);
    return fail(0, &e);
  }
  return w->vt->close(w, &e) == TL_OK ? 0 : fail(0, &e);
}

/* ---- --bench: memory and time of write_slice against write_rows ---- */

static char g_pool[8192];

static void make_pool(void) {
  static const char *words[8] = {"the ", "model ", "answer ", "is ", "option ", "B ",
                                 "because ", "left "};
  uint64_t x = 88172645463325252ULL;
  size_t at = 0;
  while (at + 9 < sizeof g_pool) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const char *wd = words[x % 8];
    size_t n = strlen(wd);
    memcpy(g_pool + at, wd, n);
    at += n;
  }
  g_pool[at] = '\0';
}

typedef struct {
  size_t from, bytes;
  char *text; /* one row's text */
} bench_ctx;

static tl_table *bench_rows(bench_ctx *c, size_t first, size_t n) {
  tl_table *t = tl_table_new("/bench/t");
  if (!t) return NULL;
  tl_table_add_col(t, "id", TL_COL_I64, "row");
  tl_table_add_col(t, "x", TL_COL_F64, "a float");
  tl_table_add_col(t, "text", TL_COL_TEXT, "a long text");
  size_t pool = strlen(g_pool);
  for (size_t i = c->from + first; i < c->from + first + n; i++) {
    size_t r = tl_table_add_row(t);
    if (r == (size_t)-1) {
      tl_table_free(t);
      return NULL;
    }
    int h = snprintf(c->text, c->bytes + 1, "%zu:", i);
    for (size_t k = (size_t)h, at = (i * 7919) % (pool - c->bytes); k < c->bytes; k++)
      c->text[k] = g_pool[at + k];
    c->text[c->bytes] = '\0';
    tl_table_set_i64(t, r, 0, (int64_t)i);
    tl_table_set_f64(t, r, 1, (double)i / 7.0);
    if (tl_table_set_str(t, r, 2, c->text) != TL_OK) {
      tl_table_free(t);
      return NULL;
    }
  }
  return t;
}

static double g_fill_s; /* seconds spent making rows */
static tl_table *g_bench_last; /* the table bench_fill gave last (ours: tl_fill_fn) */

static tl_table *bench_fill(void *ctx, uint64_t first, uint64_t n) {
  double t0 = MPI_Wtime();
  tl_table_free(g_bench_last);
  tl_table *t = g_bench_last = bench_rows(ctx, first, n);
  g_fill_s += MPI_Wtime() - t0;
  return t;
}

/* CPU seconds (user + system) of this process so far. */
static double cpu_s(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/* VmRSS or VmHWM of this process, KiB. */
static long vm_kib(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t n = strlen(key);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, key, n) == 0 && line[n] == ':') v = strtol(line + n + 1, NULL, 10);
  if (f) fclose(f);
  return v;
}

static int bench(tl_writer *w, size_t rows, size_t bytes, int rows_mode, int rank, int size) {
  tl_err e = {{0}};
  make_pool();
  if (bytes + 32 >= strlen(g_pool)) bytes = strlen(g_pool) - 32;
  bench_ctx c = {rows / (size_t)size * (size_t)rank, bytes, malloc(bytes + 1)};
  size_t n = rank == size - 1 ? rows - c.from : rows / (size_t)size;
  tl_table *t = rows_mode ? bench_rows(&c, 0, 0) : bench_fill(&c, 0, n);
  tl_status st = t ? TL_OK : tl_err_set(&e, TL_ENOMEM, "out of memory");
  long before = vm_kib("VmRSS");
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime(), c0 = cpu_s();
  if (st == TL_OK)
    st = rows_mode ? w->vt->write_rows(w, t, c.from, n, rows, NULL, bench_fill, &c, &e)
                   : w->vt->write_slice(w, t, c.from, rows, &e);
  double dt[3] = {MPI_Wtime() - t0, g_fill_s, cpu_s() - c0}, slowest[3] = {0, 0, 0};
  double cpu_sum = 0;
  MPI_Reduce(dt, slowest, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&dt[2], &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (g_bench_last != t) tl_table_free(g_bench_last); /* write_rows' last window */
  g_bench_last = NULL;
  tl_table_free(t);
  free(c.text);
  long peak = vm_kib("VmHWM");
  const char *mode = rows_mode ? "rows" : "slice";
  for (int r = 0; r < size; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == rank)
      printf("bench %s rank %d: rss_before_kib %ld peak_kib %ld\n", mode, rank, before, peak);
    fflush(stdout);
  }
  if (rank == 0)
    printf("bench %s ranks %d rows %zu: write_s %.2f fill_s %.2f cpu_s max %.2f sum %.2f\n",
           mode, size, rows, slowest[0], slowest[1], slowest[2], cpu_sum);
  if (st != TL_OK) {
    w->vt->abort(w);
    return fail(rank, &e);
  }
  return w->vt->close(w, &e) == TL_OK ? 0 : fail(rank, &e);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* what deflates the chunks: tally's compress2 on libdeflate, as in tally itself (the test
   * script checks this line, so every chunk below is written by it and read back by zlib) */
  if (rank == 0) printf("deflate: %s\n", tl_h5_deflate_name());
  const char *out = NULL, *serial = NULL;
  size_t nrows = 70000;
  int mismatch = 0, overlap = 0, rc = 0, matrix = 0, rows_mode = -1;
  size_t bench_rows_n = 0, bytes = 500;
  uint64_t sizes[32] = {0, 1, 5, 4097, 70000, 200000}, windows[32] = {1, 7, 4096, 65536, 0};
  size_t nsizes = 6, nwindows = 5;
  uint64_t max_windows = 5000;
  int sabotage = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) nrows = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--matrix") == 0) matrix = 1;
    else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
      nsizes = parse_list(argv[++i], sizes, 32);
    else if (strcmp(argv[i], "--windows") == 0 && i + 1 < argc)
      nwindows = parse_list(argv[++i], windows, 32);
    else if (strcmp(argv[i], "--max-windows") == 0 && i + 1 < argc)
      max_windows = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--bad-fill") == 0 && i + 1 < argc) {
      i++;
      sabotage = strcmp(argv[i], "rows") == 0 ? 1 : strcmp(argv[i], "longer") == 0 ? 2
                 : strcmp(argv[i], "null") == 0 ? 3 : strcmp(argv[i], "shorter") == 0 ? 4 : -1;
    }
    else if (strcmp(argv[i], "--bench") == 0 && i + 1 < argc)
      bench_rows_n = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc)
      bytes = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--window") == 0 && i + 1 < argc)
      tl_h5_parallel_set_window(strtoull(argv[++i], NULL, 10));
    else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
      i++;
      rows_mode = strcmp(argv[i], "rows") == 0 ? 1 : strcmp(argv[i], "slice") == 0 ? 0 : -2;
    }
    else if (strcmp(argv[i], "--serial") == 0 && i + 1 < argc) serial = argv[++i];
    else if (strcmp(argv[i], "--mismatch") == 0) mismatch = 1;
    else if (strcmp(argv[i], "--overlap") == 0) overlap = 1;
    else if (!out && argv[i][0] != '-') out = argv[i];
    else out = NULL, i = argc;
  }
  if (!out || (bench_rows_n && rows_mode < 0) || sabotage < 0) {
    if (rank == 0)
      fprintf(stderr, "usage: h5_parallel_check OUT.h5 [--rows R] [--serial REF.h5] "
                      "[--mismatch] [--overlap]\n"
                      "       h5_parallel_check OUT.h5 --matrix [--sizes N,..] [--windows W,..] "
                      "[--max-windows M]\n"
                      "                 [--bad-fill rows|longer|null|shorter] [--serial REF.h5]\n"
                      "       h5_parallel_check OUT.h5 --bench ROWS [--bytes B] --mode slice|rows "
                      "[--window W]\n");
    MPI_Finalize();
    return 2;
  }
  tl_err e = {{0}};
  tl_writer *w = tl_h5_parallel_open(out, MPI_COMM_WORLD, &e);
  if (!w) rc = fail(rank, &e);
  else if (bench_rows_n) rc = bench(w, bench_rows_n, bytes, rows_mode, rank, size);
  else if (matrix)
    rc = write_matrix(w, sizes, nsizes, windows, nwindows, max_windows, sabotage, rank, size);
  else rc = write_all(w, nrows, rank, size, mismatch, overlap);
  if (rc == 0 && serial && rank == 0)
    rc = matrix ? write_serial_matrix(serial, sizes, nsizes) : write_serial(serial, nrows);
  MPI_Finalize();
  return rc;
}
