/* h5_parallel.c - the collective parallel-HDF5 table writer (see writer.h).
 *
 * Every rank opens the file through MPI-IO and takes part in every call. Metadata (groups,
 * datasets, attributes) is created by all ranks with the same arguments; raw data goes through
 * H5FD_MPIO_COLLECTIVE transfers, each rank writing its own hyperslab (a rank with no rows
 * selects none but still joins the transfer).
 *
 * Layout: as the serial writer (group per table, 1-D dataset per column, `doc` attribute, no
 * object timestamps, link creation order tracked, chunked + deflate (texts level 1, numbers 4) above 4096
 * elements, shuffle for numbers), except string columns, as parallel HDF5 cannot write
 * variable-length data: a short-string column (TL_COL_STR) is a fixed-length string dataset as
 * wide as its longest value over all ranks (writer.h), and a text column `c` (TL_COL_TEXT, or a
 * TL_COL_STR column wider than TL_FIXED_STR_MAX) becomes `c.bytes` (uint8, every value's UTF-8
 * bytes in global row order) and `c.offsets` (int64 [nrows], the global byte offset where each
 * value starts). The bytes of every dataset depend only on the global rows, never on the split.
 *
 * write_rows writes the same datasets window by window (rows handed out by the caller's fill
 * function), so a rank's memory is one window however many rows it holds: a first pass over the
 * windows measures the string columns (each rank's blob offset depends on the bytes of the rows
 * before its own), then every dataset is created and each window is written with one collective
 * transfer per dataset, ranks with no window left joining with empty selections.
 *
 * Failures are made collective (comm.h, the collective error contract): every step ends in
 * tl_agree, so all ranks return the status and message of the lowest failing rank and no rank is
 * left waiting in a collective call that the others skipped. The writer works over its own
 * duplicate of the caller's communicator, with MPI_ERRORS_RETURN (tl_comm_dup): a failed MPI
 * call is TL_EMPI naming the call, agreed like any other failure. */
#include <errno.h>
#include <stdarg.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/str.h"
#include "comm.h"
#include "h5_common.h"
#include "writer.h"

#define CHUNK_ABOVE 4096 /* datasets with more elements are chunked and deflated */
/* Deflate levels. With zlib, measured on the 84,000-unit SpatialEval job (bench/merge_bench.sh's,
 * 1 rank, 3 runs each), the text blobs at level 4 took 2.74-2.97 s of gather+write for a 6.98 MB
 * file, at 3 2.45-2.49 s for 7.50 MB, at 1 2.41-2.45 s for 8.47 MB, so texts were at 3. Deflate is
 * now libdeflate's (h5_deflate.c): on the 150,000-unit job's 86 MB of responses its level 1 took
 * 0.18 s for 9.44 MB, its level 3 0.29 s for 8.83 MB, zlib's level 3 0.45 s for 9.86 MB. Texts
 * are at 1: faster and smaller than before. Numbers (shuffled) stay at 4. */
#define TL_DEFLATE_TEXT 1
#define TL_DEFLATE_NUMBERS 4
/* A window's rows are held three times over (the caller's read-back rows, its table, one string
 * column packed), and every buffer of that size is touched page by page. Gather+write of the
 * 150,000-unit job on 1 rank (2 runs each): 65,536-row windows 1.26-1.28 s with 46,000 page
 * faults in the whole run, 16,384 0.97-0.99 s with 26,000, 8,192 0.96-0.97 s with 21,000. */
#define CHUNK_MAX 16384                  /* elements */
#define CHUNK_BYTES ((hsize_t)1 << 20)    /* at most, and a byte blob's (HDF5's chunk cache holds one) */
#define WINDOW_DEFAULT 16384 /* rows per write_rows window: one chunk of a numeric column */

static uint64_t g_window = WINDOW_DEFAULT;

void tl_h5_parallel_set_window(uint64_t rows) { g_window = rows ? rows : WINDOW_DEFAULT; }

typedef struct {
  tl_writer base;
  MPI_Comm comm; /* our own duplicate */
  int rank, size;
  hid_t file;
  hid_t dxpl; /* collective transfers */
  char *path;
  char *part;
  int failed; /* an HDF5 call failed on this rank (h5fail) */
} h5p;

/* The writer's agreement (comm.h tl_agree): every rank gets the status and message of the lowest
 * failing rank. Collective over the writer's communicator. */
static tl_status agreed(h5p *w, tl_status st, tl_err *e) {
  return tl_agree(st, e, w->comm);
}

/* Copies the local message to the caller's (optional) err. */
static tl_status report(tl_status st, const tl_err *e, tl_err *err) {
  if (st != TL_OK) tl_err_set(err, st, "%s", e->msg);
  return st;
}

/* A failed HDF5 call's error: the message (printf-style), the file when `named` is 0 (" of
 * 'OUT.part'"), and its cause (tl_h5_why: the errno text, "No space left on device" when the
 * file system is full). Marks the writer failed: abort_ then leaves the file to process exit. */
static tl_status h5fail(h5p *w, tl_err *e, int named, const char *fmt, ...) {
  char what[TL_ERR_MSG_MAX], why[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  tl_h5_why(w->part, why, sizeof why);
  w->failed = 1;
  if (named) return tl_err_set(e, TL_EHDF5, "%s: %s", what, why);
  return tl_err_set(e, TL_EHDF5, "%s of '%s': %s", what, w->part, why);
}

/* FNV-1a, for the cheap "same arguments on every rank" checks. */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 1099511628211ULL;
  }
  return h;
}

static uint64_t fnv_str(uint64_t h, const char *s) {
  return fnv(h, s ? s : "", (s ? strlen(s) : 0) + 1);
}

/* Collective (one MPI_Allreduce, then the agreement). TL_OK when h is the same on every rank;
 * else TL_EINTERNAL with `what` (printf-style) as the message, or TL_EMPI when MPI failed. */
__attribute__((format(printf, 4, 5)))
static tl_status same_everywhere(h5p *w, uint64_t h, tl_err *e, const char *what, ...) {
  uint64_t v[2] = {h, ~h}, m[2] = {0, 0};
  tl_status st = tl_allreduce(v, m, 2, MPI_UINT64_T, MPI_MIN, w->comm, e);
  if (st == TL_OK && !(m[0] == h && ~m[1] == h)) {
    char msg[TL_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, what);
    vsnprintf(msg, sizeof msg, what, ap);
    va_end(ap);
    st = tl_err_set(e, TL_EINTERNAL, "%s", msg);
  }
  return agreed(w, st, e);
}


/* The elements of a chunk of a dataset of n elements of esize bytes: CHUNK_MAX (a write_rows
 * window, so that a window writes whole chunks), halved while the chunk passes CHUNK_BYTES; a
 * byte blob's chunks are CHUNK_BYTES. Parallel HDF5 allocates every chunk of a filtered dataset
 * when it is created, deflating a chunk of fill values for each: with 64 KiB chunks that was 4%
 * of a replay run, for bytes the writes then replace. */
static hsize_t chunk_elems(hsize_t n, size_t esize) {
  hsize_t c = esize == 1 ? CHUNK_BYTES : CHUNK_MAX;
  while (c > 1 && c * esize > CHUNK_BYTES) c /= 2;
  return n < c ? n : c;
}

/* Creates a 1-D dataset of n elements (collective). */
static hid_t create_ds(hid_t g, const char *name, hid_t ftype, hsize_t n, int shuffle) {
  hid_t sp = H5Screate_simple(1, &n, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_obj_track_times(dcpl, 0);
  if (n > CHUNK_ABOVE) {
    hsize_t chunk = chunk_elems(n, H5Tget_size(ftype));
    H5Pset_chunk(dcpl, 1, &chunk);
    if (shuffle) H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, shuffle ? TL_DEFLATE_NUMBERS : TL_DEFLATE_TEXT);
  }
  hid_t d = H5Dcreate2(g, name, ftype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(sp);
  return d;
}

/* Fault injection, for the tests of the collective error contract and nothing else: with
 * TALLY_TEST_H5_FAIL=R in the environment, every dataset write of rank R reports a failure
 * after it took part in the collective transfer (as a full disk makes one fail). Unset: no
 * effect. */
static int test_write_fails(const h5p *w) {
  const char *v = getenv("TALLY_TEST_H5_FAIL");
  return v && *v && atoi(v) == w->rank;
}

/* Collective write of elements [start, start + count) of d from buf; count may be 0. */
static herr_t write_part(h5p *w, hid_t d, hid_t mtype, hsize_t start, hsize_t count,
                         const void *buf) {
  static const unsigned char none[8];
  hid_t fs = H5Dget_space(d);
  if (fs < 0) return -1;
  hid_t ms;
  herr_t rc;
  if (count > 0) {
    rc = H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
    ms = H5Screate_simple(1, &count, NULL);
  } else {
    hsize_t one = 1;
    rc = H5Sselect_none(fs);
    ms = H5Screate_simple(1, &one, NULL);
    if (ms >= 0) H5Sselect_none(ms);
    buf = none;
  }
  if (rc >= 0 && ms >= 0) rc = H5Dwrite(d, mtype, ms, fs, w->dxpl, buf);
  else rc = -1;
  if (ms >= 0) H5Sclose(ms);
  H5Sclose(fs);
  return test_write_fails(w) ? -1 : rc;
}

/* Creates, writes and documents one dataset; all ranks call it with the same name, type, n and
 * doc. Returns the agreed status. */
static tl_status put_ds(h5p *w, hid_t g, const char *path, const char *name, hid_t ftype,
                        hid_t mtype, int shuffle, hsize_t n, hsize_t start, hsize_t count,
                        const void *buf, const char *doc, tl_err *e) {
  tl_status st = TL_OK;
  hid_t d = create_ds(g, name, ftype, n, shuffle);
  if (d < 0) st = h5fail(w, e, 0, "HDF5: cannot create dataset '%s/%s'", path, name);
  if ((st = agreed(w, st, e)) != TL_OK) {
    if (d >= 0) H5Dclose(d);
    return st;
  }
  if (n > 0 && write_part(w, d, mtype, start, count, buf) < 0)
    st = h5fail(w, e, 0, "HDF5: cannot write dataset '%s/%s'", path, name);
  st = agreed(w, st, e);
  if (st == TL_OK && doc && *doc) {
    if (tl_h5_attr_str(d, "doc", doc) != TL_OK)
      st = h5fail(w, e, 0, "HDF5: cannot write attribute 'doc' of '%s/%s'", path, name);
    st = agreed(w, st, e);
  }
  if (H5Dclose(d) < 0 && st == TL_OK)
    st = h5fail(w, e, 0, "HDF5: cannot close dataset '%s/%s'", path, name);
  return agreed(w, st, e);
}

static uint64_t schema_hash(const tl_table *t, uint64_t total) {
  uint64_t h = 14695981039346656037ULL;
  h = fnv_str(h, t->path);
  h = fnv(h, &total, sizeof total);
  h = fnv(h, &t->ncols, sizeof t->ncols);
  for (int c = 0; c < t->ncols; c++) {
    int type = (int)t->cols[c].type;
    h = fnv_str(h, t->cols[c].name);
    h = fnv(h, &type, sizeof type);
    h = fnv_str(h, t->cols[c].doc);
  }
  return h;
}

/* Creates the group of a table (collective); returns the agreed status. */
static tl_status create_group(h5p *w, const char *path, hid_t *g, tl_err *e) {
  tl_status st = TL_OK;
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  H5Pset_obj_track_times(gcpl, 0);
  H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
  *g = H5Gcreate2(w->file, path, lcpl, gcpl, H5P_DEFAULT);
  H5Pclose(gcpl);
  H5Pclose(lcpl);
  if (*g < 0) st = h5fail(w, e, 0, "HDF5: cannot create group '%s'", path);
  return agreed(w, st, e);
}

/* Orders (offset, nrows) pairs by offset. */
static int cmp_slice(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* From every rank's (offset, nrows, then for each of the nstr string columns its bytes and its
 * longest value's bytes), `per` = 2 + 2 nstr numbers a rank in `all`: checks that the non-empty
 * slices tile [0, total) exactly, sums each string column's bytes over all ranks (blob_total)
 * and over the slices before this rank's, which starts at `offset` (blob_start: in row order,
 * not rank order, so any assignment of slices to ranks gives the same file), and takes each
 * string column's longest value over all ranks (width). slices: scratch of 2 * size. Every rank
 * computes the same result from the same data, so the status needs no agreement. */
static tl_status tile(h5p *w, const uint64_t *all, int per, int nstr, const char *path,
                      uint64_t offset, uint64_t total, uint64_t *slices, uint64_t *blob_total,
                      uint64_t *blob_start, uint64_t *width, tl_err *e) {
  uint64_t covered = 0, cursor = 0;
  int nslices = 0;
  for (int r = 0; r < w->size; r++) {
    const uint64_t *a = all + (size_t)r * (size_t)per;
    covered += a[1];
    if (a[1] > 0) {
      slices[2 * nslices] = a[0];
      slices[2 * nslices + 1] = a[1];
      nslices++;
    }
    for (int k = 0; k < nstr; k++) {
      blob_total[k] += a[2 + 2 * k];
      if (a[1] > 0 && a[0] < offset) blob_start[k] += a[2 + 2 * k];
      if (a[3 + 2 * k] > width[k]) width[k] = a[3 + 2 * k];
    }
  }
  qsort(slices, (size_t)nslices, 2 * sizeof *slices, cmp_slice);
  for (int q = 0; q < nslices && cursor != UINT64_MAX; q++)
    cursor = slices[2 * q] == cursor ? cursor + slices[2 * q + 1] : UINT64_MAX;
  if (cursor != total)
    return tl_err_set(e, TL_EINTERNAL,
                      "parallel writer: the ranks' slices of '%s' do not cover [0, %llu) exactly "
                      "once (%llu rows given in all)",
                      path, (unsigned long long)total, (unsigned long long)covered);
  return TL_OK;
}

/* 1 when string column col, whose longest value over all ranks has `width` bytes and whose
 * `bytes` over all `rows` rows, is written as one fixed-length string dataset; 0 when as bytes +
 * offsets (table.h: TL_COL_STR and TL_COL_TEXT). A short-string column goes the text way when
 * its longest value passes TL_FIXED_STR_MAX, or passes TL_FIXED_STR_PAD bytes and would be
 * mostly padding (width x rows over TL_FIXED_STR_SPREAD times its bytes): the 150,000-unit
 * SpatialEval job's answer_legacy (a few long answers the legacy parser extracts, 236 bytes, 21
 * on average) was 35 MB of NULs to pack and deflate, 0.14 s of libdeflate alone, and is 3 MB as
 * text. Every rank decides the same from the same totals. */
#define TL_FIXED_STR_PAD 32
#define TL_FIXED_STR_SPREAD 8
static int is_fixed(const tl_col *col, uint64_t width, uint64_t bytes, uint64_t rows) {
  if (col->type != TL_COL_STR || width > TL_FIXED_STR_MAX) return 0;
  return width <= TL_FIXED_STR_PAD || width * rows <= TL_FIXED_STR_SPREAD * bytes;
}

/* The file and memory type of a fixed-length string column of `width` bytes (0 -> 1): UTF-8,
 * padded with NULs, so h5py reads it as numpy bytes ('S<width>', trailing NULs dropped) and
 * `.asstr()` as str. The caller closes it. */
static hid_t fixed_type(uint64_t width) {
  hid_t t = H5Tcopy(H5T_C_S1);
  if (t < 0) return -1;
  if (H5Tset_size(t, width ? (size_t)width : 1) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0 ||
      H5Tset_strpad(t, H5T_STR_NULLPAD) < 0) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

/* Packs n values into buf (n * width bytes), each padded with NULs; every value has at most
 * width bytes. */
static void pack_fixed(unsigned char *buf, const tl_col *col, size_t n, uint64_t width) {
  const size_t wd = width ? (size_t)width : 1;
  memset(buf, 0, n * wd);
  for (size_t r = 0; r < n; r++) memcpy(buf + r * wd, col->v.s[r], col->len[r]);
}

/* One string column's local part: the concatenated bytes and each row's global start (or, for a
 * fixed-length column, the packed values). */
typedef struct {
  unsigned char *bytes;
  int64_t *offsets;
  uint64_t nbytes;
} strpart;

/* Where one table's rows and string bytes go, the same on every rank once layout_exchange has
 * run (write_slice and write_rows). Arrays are owned (layout_free); nstr = the table's string
 * columns, k below = a string column's index among them. */
typedef struct {
  int nstr, per;         /* per = 2 + 2 nstr: the numbers one rank contributes */
  uint64_t *mine;        /* [per]: offset, nrows, then per string column its bytes and longest value */
  uint64_t *all;         /* [per * size]: every rank's `mine`, in rank order */
  uint64_t *blob_total;  /* [nstr + 1]: a string column's bytes over all ranks */
  uint64_t *blob_start;  /* [nstr + 1]: its bytes in the slices before this rank's (row order) */
  uint64_t *width;       /* [nstr + 1]: its longest value over all ranks */
  uint64_t *slices;      /* [2 size]: tile's scratch */
} layout;

/* Local. Allocates l's arrays (zeroed) for the string columns of table s over `size` ranks.
 * TL_ENOMEM (message in e) when out of memory; l is then still safe to layout_free. */
static tl_status layout_alloc(layout *l, const tl_table *s, int size, tl_err *e) {
  memset(l, 0, sizeof *l);
  for (int c = 0; c < s->ncols; c++) l->nstr += tl_col_is_str(s->cols[c].type);
  l->per = 2 + 2 * l->nstr;
  const size_t k = (size_t)l->nstr + 1;
  l->mine = calloc((size_t)l->per, sizeof *l->mine);
  l->all = calloc((size_t)l->per * (size_t)size, sizeof *l->all);
  l->blob_total = calloc(k, sizeof *l->blob_total);
  l->blob_start = calloc(k, sizeof *l->blob_start);
  l->width = calloc(k, sizeof *l->width);
  l->slices = calloc(2 * (size_t)size, sizeof *l->slices);
  if (!l->mine || !l->all || !l->blob_total || !l->blob_start || !l->width || !l->slices)
    return tl_err_set(e, TL_ENOMEM, "out of memory");
  return TL_OK;
}

static void layout_free(layout *l) {
  free(l->mine);
  free(l->all);
  free(l->blob_total);
  free(l->blob_start);
  free(l->width);
  free(l->slices);
  memset(l, 0, sizeof *l);
}

/* Local. Adds the bytes and the longest value of each string column of t (rows of this rank)
 * to l->mine. */
static void layout_measure(layout *l, const tl_table *t) {
  for (int c = 0, k = 0; c < t->ncols; c++) {
    const tl_col *col = &t->cols[c];
    if (!tl_col_is_str(col->type)) continue;
    for (size_t r = 0; r < t->nrows; r++) {
      uint64_t len = col->len[r];
      l->mine[2 + 2 * k] += len;
      if (len > l->mine[3 + 2 * k]) l->mine[3 + 2 * k] = len;
    }
    k++;
  }
}

/* Collective. Agrees on st (this rank's outcome so far); then every rank's (offset, nrows and
 * string measures in l->mine) goes to every rank (MPI_Allgather, agreed), and tile checks that
 * the slices cover [0, total) and fills blob_total, blob_start and width. Returns the agreed
 * status (tile's is the same on every rank: it reads the same data). */
static tl_status layout_exchange(h5p *w, layout *l, tl_status st, uint64_t offset, uint64_t nrows,
                                 uint64_t total, const char *path, tl_err *e) {
  if (st == TL_OK) {
    l->mine[0] = offset;
    l->mine[1] = nrows;
  }
  if ((st = agreed(w, st, e)) != TL_OK) return st;
  st = tl_allgather(l->mine, l->per, MPI_UINT64_T, l->all, w->comm, e);
  if ((st = agreed(w, st, e)) != TL_OK) return st;
  return tile(w, l->all, l->per, l->nstr, path, offset, total, l->slices, l->blob_total,
              l->blob_start, l->width, e);
}

/* Collective. The checks every table write starts with: the rows [offset, offset + nrows) of s
 * lie in [0, total) (`what` names the call in the message when s is NULL or `bad` is set), then
 * the same path, columns, types, docs and total (hashed with `extra`) on every rank. */
static tl_status check_call(h5p *w, const tl_table *s, int bad, const char *what, uint64_t offset,
                            uint64_t nrows, uint64_t total, uint64_t extra, const char *differ,
                            tl_err *e) {
  tl_status st = TL_OK;
  if (!s || bad)
    st = tl_err_set(e, TL_EINTERNAL, "parallel writer: %s", what);
  else if (offset > total || nrows > total - offset)
    st = tl_err_set(e, TL_EINTERNAL,
                    "parallel writer: rows [%llu, %llu) of '%s' lie outside [0, %llu)",
                    (unsigned long long)offset, (unsigned long long)(offset + nrows), s->path,
                    (unsigned long long)total);
  if ((st = agreed(w, st, e)) != TL_OK) return st;
  return same_everywhere(w, fnv(schema_hash(s, total), &extra, sizeof extra), e,
                         "parallel writer: the ranks passed different tables for '%s' (path, "
                         "columns, types, %s differ)",
                         s->path, differ);
}

/* Local. The string parts of this rank's rows of t (sp[nstr], owned by the caller, zeroed): a
 * fixed-length column's packed values, another string column's bytes and global offsets. */
static tl_status pack_parts(const tl_table *t, const layout *l, uint64_t total, strpart *sp,
                            tl_err *e) {
  for (int c = 0, k = 0; c < t->ncols; c++) {
    const tl_col *col = &t->cols[c];
    if (!tl_col_is_str(col->type)) continue;
    if (is_fixed(col, l->width[k], l->blob_total[k], total)) {
      const size_t wd = l->width[k] ? (size_t)l->width[k] : 1;
      sp[k].nbytes = t->nrows * wd;
      if (!(sp[k].bytes = malloc(sp[k].nbytes ? sp[k].nbytes : 1)))
        return tl_err_set(e, TL_ENOMEM, "out of memory");
      pack_fixed(sp[k].bytes, col, t->nrows, l->width[k]);
      k++;
      continue;
    }
    sp[k].nbytes = l->mine[2 + 2 * k];
    sp[k].bytes = malloc(sp[k].nbytes ? sp[k].nbytes : 1);
    sp[k].offsets = malloc(t->nrows ? t->nrows * sizeof(int64_t) : 1);
    if (!sp[k].bytes || !sp[k].offsets) return tl_err_set(e, TL_ENOMEM, "out of memory");
    uint64_t at = 0;
    for (size_t r = 0; r < t->nrows; r++) {
      size_t n = col->len[r];
      sp[k].offsets[r] = (int64_t)(l->blob_start[k] + at);
      memcpy(sp[k].bytes + at, col->v.s[r], n);
      at += n;
    }
    k++;
  }
  return TL_OK;
}

/* Collective. The group of t, then its columns in order, each created, written (this rank's rows
 * from `offset`; string parts from sp) and documented by put_ds; every step agreed. */
static tl_status put_columns(h5p *w, const tl_table *t, const layout *l, const strpart *sp,
                             uint64_t offset, uint64_t total, tl_err *e) {
  hid_t g = -1;
  tl_status st = create_group(w, t->path, &g, e);
  tl_buf name;
  tl_buf_init(&name);
  for (int c = 0, k = 0; c < t->ncols && st == TL_OK; c++) {
    const tl_col *col = &t->cols[c];
    if (col->type == TL_COL_I64) {
      st = put_ds(w, g, t->path, col->name, H5T_STD_I64LE, H5T_NATIVE_INT64, 1, total, offset,
                  t->nrows, col->v.i, col->doc, e);
    } else if (col->type == TL_COL_F64) {
      st = put_ds(w, g, t->path, col->name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, total, offset,
                  t->nrows, col->v.f, col->doc, e);
    } else if (is_fixed(col, l->width[k], l->blob_total[k], total)) {
      hid_t ft = fixed_type(l->width[k]);
      if (ft < 0) st = tl_err_set(e, TL_EHDF5, "HDF5: cannot make a string type for '%s'", col->name);
      if ((st = agreed(w, st, e)) != TL_OK) break;
      st = put_ds(w, g, t->path, col->name, ft, ft, 0, total, offset, t->nrows, sp[k].bytes,
                  col->doc, e);
      H5Tclose(ft);
      k++;
    } else {
      tl_buf_reset(&name);
      if (tl_buf_printf(&name, "%s.bytes", col->name) != TL_OK)
        st = tl_err_set(e, TL_ENOMEM, "out of memory");
      if ((st = agreed(w, st, e)) != TL_OK) break;
      st = put_ds(w, g, t->path, name.data, H5T_STD_U8LE, H5T_NATIVE_UINT8, 0, l->blob_total[k],
                  l->blob_start[k], sp[k].nbytes, sp[k].bytes, col->doc, e);
      if (st != TL_OK) break;
      tl_buf_reset(&name);
      if (tl_buf_printf(&name, "%s.offsets", col->name) != TL_OK)
        st = tl_err_set(e, TL_ENOMEM, "out of memory");
      if ((st = agreed(w, st, e)) != TL_OK) break;
      st = put_ds(w, g, t->path, name.data, H5T_STD_I64LE, H5T_NATIVE_INT64, 1, total, offset,
                  t->nrows, sp[k].offsets, col->doc, e);
      k++;
    }
  }
  tl_buf_release(&name);
  if (g >= 0) H5Gclose(g);
  return st;
}

/* Collective. This rank's rows of table t at global rows [offset, offset + t->nrows) of `total`
 * (writer.h). Steps: the call checks; the layout (measure, exchange, tile); the string parts;
 * the group and the datasets. Each step ends agreed. */
static tl_status write_slice(tl_writer *w_, const tl_table *t, uint64_t offset, uint64_t total,
                             tl_err *err) {
  h5p *w = (h5p *)w_;
  tl_err e = {{0}};
  tl_status st = check_call(w, t, 0, "write_slice called without a table", offset,
                            t ? t->nrows : 0, total, 0, "docs or total rows", &e);
  if (st != TL_OK) return report(st, &e, err);
  layout l;
  strpart *sp = NULL;
  st = layout_alloc(&l, t, w->size, &e);
  if (st == TL_OK && !(sp = calloc((size_t)l.nstr + 1, sizeof *sp)))
    st = tl_err_set(&e, TL_ENOMEM, "out of memory");
  if (st == TL_OK) layout_measure(&l, t);
  st = layout_exchange(w, &l, st, offset, t->nrows, total, t->path, &e);
  if (st == TL_OK) st = agreed(w, pack_parts(t, &l, total, sp, &e), &e);
  if (st == TL_OK) st = put_columns(w, t, &l, sp, offset, total, &e);
  for (int k = 0; sp && k < l.nstr; k++) {
    free(sp[k].bytes);
    free(sp[k].offsets);
  }
  free(sp);
  layout_free(&l);
  return report(st, &e, err);
}

/* ---- write_rows: the same datasets as write_slice, window by window ---- */

/* Windows end on global row multiples of win: the window starting at slice row `first` of a
 * slice at global row `offset`, with `left` rows left, has this many rows. */
static uint64_t window_len(uint64_t offset, uint64_t first, uint64_t left, uint64_t win) {
  uint64_t room = win - (offset + first) % win;
  return room < left ? room : left;
}

static uint64_t window_count(uint64_t offset, uint64_t nrows, uint64_t win) {
  return nrows ? (offset + nrows - 1) / win - offset / win + 1 : 0;
}

/* Checks what fill returned for slice rows [first, first + n) against the schema. */
static tl_status check_fill(const tl_table *s, const tl_table *t, uint64_t offset,
                            uint64_t first, uint64_t n, tl_err *e) {
  unsigned long long a = offset + first, b = offset + first + n;
  if (!t)
    return tl_err_set(e, TL_ENOMEM,
                      "parallel writer: fill gave no table for rows [%llu, %llu) of '%s' "
                      "(out of memory?)",
                      a, b, s->path);
  if (t->nrows != n || t->ncols != s->ncols)
    return tl_err_set(e, TL_EINTERNAL,
                      "parallel writer: fill gave %zu rows of %d columns for rows [%llu, %llu) "
                      "of '%s', not %llu rows of %d columns",
                      t->nrows, t->ncols, a, b, s->path, (unsigned long long)n, s->ncols);
  for (int c = 0; c < s->ncols; c++)
    if (t->cols[c].type != s->cols[c].type || strcmp(t->cols[c].name, s->cols[c].name) != 0)
      return tl_err_set(e, TL_EINTERNAL,
                        "parallel writer: fill gave column %d of '%s' as '%s' (type %d), the "
                        "schema has '%s' (type %d)",
                        c, s->path, t->cols[c].name, (int)t->cols[c].type, s->cols[c].name,
                        (int)s->cols[c].type);
  return TL_OK;
}

/* Grows *buf to at least n bytes; 0 when out of memory. */
static int grow(void **buf, size_t *cap, size_t n) {
  if (n <= *cap) return 1;
  void *p = realloc(*buf, n);
  if (!p) return 0;
  *buf = p;
  *cap = n;
  return 1;
}

/* One dataset of a write_rows table: a numeric column, a fixed-length string column, or a
 * string column's bytes or offsets. */
typedef enum { DS_I64, DS_F64, DS_BYTES, DS_OFFSETS, DS_FIXED } ds_kind;
typedef struct {
  ds_kind kind;
  int col; /* column of the table */
  int str; /* DS_BYTES, DS_OFFSETS, DS_FIXED: index among the string columns */
  hid_t d;
  hid_t mt; /* DS_FIXED: its string type (file and memory), else -1 */
} rows_ds;

/* One write_rows call's state on this rank (arrays owned; rows_free). */
typedef struct {
  const tl_table *s;          /* the schema (borrowed) */
  uint64_t offset, nrows, total, win;
  uint64_t nwin, maxwin;      /* this rank's windows; the most of any rank (collective rounds) */
  tl_fill_fn fill;
  void *ctx;
  layout l;
  uint64_t *done;             /* [nstr + 1]: bytes written so far, per string column */
  uint64_t *seen;             /* [nstr + 1]: longest value written, per string column */
  /* A text column's bytes are written in whole chunks of its blob: a window's bytes after the
   * last chunk boundary they reach wait in carry[q] (carry_n[q] bytes, from global byte
   * wpos[q]) for the next window, so that no chunk is written twice by one rank (HDF5 would
   * inflate it, merge and deflate it again: with 16,384-row windows, 4% of a replay run went
   * to inflate). A rank's last window writes what is left. */
  unsigned char **carry;      /* [nstr + 1] */
  uint64_t *carry_n, *wpos;   /* [nstr + 1] */
  rows_ds *ds;                /* [nds]: the datasets, in write_slice's order */
  int nds;
  hid_t g;                    /* the table's group, or -1 */
  void *bytes_buf, *offs_buf; /* one window's scratch: a string part, a text column's offsets */
  size_t bytes_cap, offs_cap;
} rows_job;

/* Local. Allocates r's arrays for schema s (layout included); TL_ENOMEM in e when out of memory
 * (r is then still safe to rows_free). */
static tl_status rows_alloc(rows_job *r, int size, tl_err *e) {
  tl_status st = layout_alloc(&r->l, r->s, size, e);
  const size_t k = (size_t)r->l.nstr + 1;
  r->done = calloc(k, sizeof *r->done);
  r->seen = calloc(k, sizeof *r->seen);
  r->carry = calloc(k, sizeof *r->carry);
  r->carry_n = calloc(k, sizeof *r->carry_n);
  r->wpos = calloc(k, sizeof *r->wpos);
  r->ds = calloc((size_t)r->s->ncols + k, sizeof *r->ds);
  if (st == TL_OK && (!r->done || !r->seen || !r->carry || !r->carry_n || !r->wpos || !r->ds))
    st = tl_err_set(e, TL_ENOMEM, "out of memory");
  return st;
}

static void rows_free(rows_job *r) {
  for (int q = 0; r->carry && q < r->l.nstr; q++) free(r->carry[q]);
  free(r->carry);
  free(r->carry_n);
  free(r->wpos);
  free(r->done);
  free(r->seen);
  free(r->ds);
  free(r->bytes_buf);
  free(r->offs_buf);
  layout_free(&r->l);
}

/* Local. Pass 1: this slice's bytes and longest value of each string column into r->l.mine -
 * given by the caller (str_stats), or measured window by window through fill. */
static tl_status rows_measure(rows_job *r, const uint64_t *str_stats, tl_err *e) {
  const int nstr = r->l.nstr;
  if (str_stats) {
    for (int k = 0; k < 2 * nstr; k++) r->l.mine[2 + k] = str_stats[k];
    return TL_OK;
  }
  for (uint64_t first = 0; nstr > 0 && first < r->nrows;) {
    uint64_t n = window_len(r->offset, first, r->nrows - first, r->win);
    tl_table *t = r->fill(r->ctx, first, n);
    tl_status st = check_fill(r->s, t, r->offset, first, n, e);
    if (st != TL_OK) return st;
    layout_measure(&r->l, t);
    first += n; /* t is fill's: not ours to free */
  }
  return TL_OK;
}

/* Local. The datasets, in write_slice's order: a fixed-length string column is one dataset,
 * another string column its bytes, then its offsets. Needs the exchanged layout. */
static void rows_plan(rows_job *r) {
  const tl_table *s = r->s;
  for (int c = 0, k = 0; c < s->ncols; c++) {
    const tl_col *col = &s->cols[c];
    if (col->type == TL_COL_I64 || col->type == TL_COL_F64) {
      r->ds[r->nds++] = (rows_ds){col->type == TL_COL_I64 ? DS_I64 : DS_F64, c, -1, -1, -1};
    } else if (is_fixed(col, r->l.width[k], r->l.blob_total[k], r->total)) {
      r->ds[r->nds++] = (rows_ds){DS_FIXED, c, k++, -1, -1};
    } else {
      r->ds[r->nds++] = (rows_ds){DS_BYTES, c, k, -1, -1};
      r->ds[r->nds++] = (rows_ds){DS_OFFSETS, c, k++, -1, -1};
    }
  }
}

/* Collective. The group and every dataset with its doc, created as write_slice creates them
 * (r->g, r->ds[j].d; closed by rows_close); every step agreed. */
static tl_status rows_create(h5p *w, rows_job *r, tl_err *e) {
  const tl_table *s = r->s;
  tl_status st = create_group(w, s->path, &r->g, e);
  tl_buf name;
  tl_buf_init(&name);
  for (int j = 0; j < r->nds && st == TL_OK; j++) {
    rows_ds *ds = &r->ds[j];
    const tl_col *col = &s->cols[ds->col];
    static const char *const suffix[] = {"", "", ".bytes", ".offsets", ""};
    tl_buf_reset(&name);
    if (tl_buf_printf(&name, "%s%s", col->name, suffix[ds->kind]) != TL_OK)
      st = tl_err_set(e, TL_ENOMEM, "out of memory");
    if (ds->kind == DS_FIXED && st == TL_OK && (ds->mt = fixed_type(r->l.width[ds->str])) < 0)
      st = tl_err_set(e, TL_EHDF5, "HDF5: cannot make a string type for '%s'", col->name);
    if ((st = agreed(w, st, e)) != TL_OK) break;
    hid_t ft = ds->kind == DS_F64     ? H5T_IEEE_F64LE
               : ds->kind == DS_BYTES ? H5T_STD_U8LE
               : ds->kind == DS_FIXED ? ds->mt
                                      : H5T_STD_I64LE;
    hsize_t n = ds->kind == DS_BYTES ? r->l.blob_total[ds->str] : r->total;
    ds->d = create_ds(r->g, name.data, ft, n, ds->kind != DS_BYTES && ds->kind != DS_FIXED);
    if (ds->d < 0)
      st = h5fail(w, e, 0, "HDF5: cannot create dataset '%s/%s'", s->path, name.data);
    if ((st = agreed(w, st, e)) != TL_OK) break;
    if (col->doc && *col->doc) {
      if (tl_h5_attr_str(ds->d, "doc", col->doc) != TL_OK)
        st = h5fail(w, e, 0, "HDF5: cannot write attribute 'doc' of '%s/%s'", s->path,
                    name.data);
      st = agreed(w, st, e);
    }
  }
  tl_buf_release(&name);
  return st;
}

/* Local. Checks window t (n rows) of pass 2 against pass 1's measures, notes its longest values
 * in r->seen, and grows the scratch buffers to the window's largest string part (carried bytes
 * included) and its offsets. */
static tl_status rows_window_prepare(rows_job *r, const tl_table *t, uint64_t n, tl_err *e) {
  const tl_table *s = r->s;
  const layout *l = &r->l;
  uint64_t most = 0; /* the scratch buffer's bytes: the largest string part of this window */
  for (int c = 0, q = 0; c < s->ncols; c++) {
    if (!tl_col_is_str(s->cols[c].type)) continue;
    uint64_t b = 0, longest = 0;
    for (size_t i = 0; i < t->nrows; i++) {
      uint64_t len = t->cols[c].len[i];
      b += len;
      if (len > longest) longest = len;
    }
    if (b > l->mine[2 + 2 * q] - r->done[q] || longest > l->mine[3 + 2 * q])
      return tl_err_set(e, TL_EINTERNAL,
                        "parallel writer: fill gave longer strings in column '%s' of '%s' "
                        "when writing than when measuring (both passes must give the same "
                        "rows)",
                        s->cols[c].name, s->path);
    if (longest > r->seen[q]) r->seen[q] = longest;
    if (is_fixed(&s->cols[c], l->width[q], l->blob_total[q], r->total))
      b = n * (l->width[q] ? l->width[q] : 1);
    else b += r->carry_n[q]; /* the bytes carried from the last window go first */
    if (b > most) most = b;
    q++;
  }
  if (!grow(&r->bytes_buf, &r->bytes_cap, most ? most : 1) ||
      (l->nstr > 0 && !grow(&r->offs_buf, &r->offs_cap, n * sizeof(int64_t))))
    return tl_err_set(e, TL_ENOMEM, "out of memory");
  return TL_OK;
}

/* Collective (one transfer). A text column's bytes in window k of this rank (col NULL, t NULL:
 * no window left): the carried bytes, then the window's values (their global offsets into the
 * offsets scratch), written up to the last chunk boundary reached - all of it in the rank's
 * last window; the rest is carried. *at = the window's own bytes. <0 when it failed. */
static herr_t rows_write_bytes(h5p *w, rows_job *r, const rows_ds *ds, uint64_t k,
                               const tl_col *col, size_t nrows, uint64_t *at) {
  const int q = ds->str;
  unsigned char *bytes = r->bytes_buf;
  int64_t *offs = r->offs_buf;
  herr_t rc = 0;
  const uint64_t base = r->l.blob_start[q] + r->done[q];
  if (k == 0) r->wpos[q] = base;
  const uint64_t cn = r->carry_n[q]; /* carried bytes: [wpos, base) */
  if (cn) memcpy(bytes, r->carry[q], cn);
  *at = 0;
  for (size_t i = 0; col && i < nrows; i++) {
    size_t len = col->len[i];
    offs[i] = (int64_t)(base + *at);
    memcpy(bytes + cn + *at, col->v.s[i], len);
    *at += len;
  }
  /* up to the last chunk boundary reached, or all of it in the rank's last window */
  const uint64_t blob = r->l.blob_total[q], cb = blob ? chunk_elems(blob, 1) : 1, end = base + *at;
  uint64_t upto = k + 1 >= r->nwin ? end : end / cb * cb;
  if (upto < r->wpos[q]) upto = r->wpos[q];
  if (blob > 0) rc = write_part(w, ds->d, H5T_NATIVE_UINT8, r->wpos[q], upto - r->wpos[q], bytes);
  const uint64_t keep = end - upto;
  if (keep > cn) { /* carry grows: at most a chunk */
    unsigned char *p = realloc(r->carry[q], keep);
    if (!p) rc = -1;
    else r->carry[q] = p;
  }
  if (rc >= 0) {
    if (keep) memmove(r->carry[q], bytes + (upto - r->wpos[q]), keep);
    r->carry_n[q] = keep;
    r->wpos[q] = upto;
  }
  return rc;
}

/* Collective (one transfer per dataset, then the agreement). Window k of this rank: t (n rows
 * from slice row `first`), or t NULL and n 0 when the rank has no window k left (empty
 * selections). A string column's window goes to the rank's blob start plus the bytes of its
 * earlier windows; one scratch buffer serves every string column in turn. */
static tl_status rows_window_write(h5p *w, rows_job *r, uint64_t k, const tl_table *t,
                                   uint64_t first, uint64_t n, tl_err *e) {
  unsigned char *bytes = r->bytes_buf;
  const uint64_t at0 = r->offset + first, total = r->total;
  int bad = -1;    /* first dataset this rank could not write */
  uint64_t at = 0; /* the current string column's bytes in this window */
  for (int j = 0; j < r->nds; j++) {
    const rows_ds *ds = &r->ds[j];
    const tl_col *col = t ? &t->cols[ds->col] : NULL;
    herr_t rc = 0;
    switch (ds->kind) {
    case DS_I64:
      if (total > 0) rc = write_part(w, ds->d, H5T_NATIVE_INT64, at0, n, col ? col->v.i : NULL);
      break;
    case DS_F64:
      if (total > 0) rc = write_part(w, ds->d, H5T_NATIVE_DOUBLE, at0, n, col ? col->v.f : NULL);
      break;
    case DS_BYTES:
      rc = rows_write_bytes(w, r, ds, k, col, t ? t->nrows : 0, &at);
      break;
    case DS_OFFSETS:
      if (total > 0) rc = write_part(w, ds->d, H5T_NATIVE_INT64, at0, n, r->offs_buf);
      r->done[ds->str] += at;
      break;
    case DS_FIXED:
      at = 0;
      for (size_t i = 0; col && i < t->nrows; i++) at += col->len[i];
      if (col) pack_fixed(bytes, col, t->nrows, r->l.width[ds->str]);
      if (total > 0) rc = write_part(w, ds->d, ds->mt, at0, n, bytes);
      r->done[ds->str] += at;
      break;
    }
    if (rc < 0 && bad < 0) bad = j;
  }
  tl_status st = TL_OK;
  if (bad >= 0) {
    const tl_col *col = &r->s->cols[r->ds[bad].col];
    const char *suffix = r->ds[bad].kind == DS_BYTES     ? ".bytes"
                         : r->ds[bad].kind == DS_OFFSETS ? ".offsets"
                                                         : "";
    st = h5fail(w, e, 0, "HDF5: cannot write dataset '%s/%s%s'", r->s->path, col->name, suffix);
  }
  return agreed(w, st, e);
}

/* Collective. Pass 2: window k of every rank in collective round k, k < maxwin (a rank with no
 * window k left joins with empty selections); then the check that pass 2 gave the strings pass
 * 1 measured (shorter strings would leave a gap in the blob, or a fixed-length column wider
 * than its values). Every round agreed. */
static tl_status rows_pass2(h5p *w, rows_job *r, tl_err *e) {
  tl_status st = TL_OK;
  uint64_t first = 0;
  for (uint64_t k = 0; k < r->maxwin && st == TL_OK; k++) {
    tl_table *t = NULL;
    uint64_t n = 0;
    if (k < r->nwin) {
      n = window_len(r->offset, first, r->nrows - first, r->win);
      t = r->fill(r->ctx, first, n);
      st = check_fill(r->s, t, r->offset, first, n, e);
      if (st == TL_OK) st = rows_window_prepare(r, t, n, e);
    }
    if ((st = agreed(w, st, e)) != TL_OK) break;
    st = rows_window_write(w, r, k, t, first, n, e);
    first += n;
  }
  for (int q = 0; q < r->l.nstr && st == TL_OK; q++)
    if (r->done[q] != r->l.mine[2 + 2 * q] || r->seen[q] != r->l.mine[3 + 2 * q])
      st = tl_err_set(e, TL_EINTERNAL,
                      "parallel writer: fill gave shorter strings in '%s' when writing than when "
                      "measuring (both passes must give the same rows)",
                      r->s->path);
  return agreed(w, st, e);
}

/* Local. Closes r's datasets, string types and group; a failed dataset close becomes st's
 * failure when st is TL_OK. */
static tl_status rows_close(h5p *w, rows_job *r, tl_status st, tl_err *e) {
  for (int j = 0; r->ds && j < r->nds; j++) {
    if (r->ds[j].d >= 0 && H5Dclose(r->ds[j].d) < 0 && st == TL_OK)
      st = h5fail(w, e, 0, "HDF5: cannot close a dataset of table '%s'", r->s->path);
    if (r->ds[j].mt >= 0) H5Tclose(r->ds[j].mt);
  }
  if (r->g >= 0) H5Gclose(r->g);
  return st;
}

/* Collective (writer.h). Rows [offset, offset + nrows) of `total`, handed out window by window
 * by fill. Steps: the call checks; pass 1 (string measures); the layout exchange and the most
 * windows of any rank; the datasets planned and created; pass 2 (the windows); closing. Each
 * collective step ends agreed. */
static tl_status write_rows(tl_writer *w_, const tl_table *s, uint64_t offset, uint64_t nrows,
                            uint64_t total, const uint64_t *str_stats, tl_fill_fn fill, void *ctx,
                            tl_err *err) {
  h5p *w = (h5p *)w_;
  tl_err e = {{0}};
  rows_job r;
  memset(&r, 0, sizeof r);
  r.s = s;
  r.offset = offset;
  r.nrows = nrows;
  r.total = total;
  r.win = g_window;
  r.fill = fill;
  r.ctx = ctx;
  r.g = -1;
  tl_status st = check_call(w, s, !fill, "write_rows called without a schema or a fill function",
                            offset, nrows, total, r.win, "docs, total rows or window", &e);
  if (st != TL_OK) return report(st, &e, err);
  st = rows_alloc(&r, w->size, &e);
  r.nwin = window_count(offset, nrows, r.win);
  if (st == TL_OK) st = rows_measure(&r, str_stats, &e);
  st = layout_exchange(w, &r.l, st, offset, nrows, total, s->path, &e);
  for (int q = 0; st == TL_OK && q < w->size; q++) {
    const uint64_t *a = r.l.all + (size_t)q * (size_t)r.l.per;
    uint64_t m = window_count(a[0], a[1], r.win);
    if (m > r.maxwin) r.maxwin = m;
  }
  if (st == TL_OK) {
    rows_plan(&r);
    st = rows_create(w, &r, &e);
  }
  if (st == TL_OK) st = rows_pass2(w, &r, &e);
  st = rows_close(w, &r, st, &e);
  rows_free(&r);
  return report(agreed(w, st, &e), &e, err);
}

/* Rank 0's table schema (path, total rows, column names, types and docs), sent to all. */
static tl_status bcast_schema(h5p *w, const tl_table *t, tl_table **out, uint64_t *nrows,
                              tl_err *e) {
  tl_status st = TL_OK;
  tl_buf b;
  tl_buf_init(&b);
  uint64_t len = 0;
  if (w->rank == 0 && t) {
    uint64_t n = t->nrows;
    int32_t nc = t->ncols;
    st = tl_buf_append(&b, (const char *)&n, sizeof n);
    if (st == TL_OK) st = tl_buf_append(&b, (const char *)&nc, sizeof nc);
    if (st == TL_OK) st = tl_buf_append(&b, t->path, strlen(t->path) + 1);
    for (int c = 0; c < t->ncols && st == TL_OK; c++) {
      char type = (char)t->cols[c].type;
      const char *doc = t->cols[c].doc ? t->cols[c].doc : "";
      st = tl_buf_append(&b, &type, 1);
      if (st == TL_OK) st = tl_buf_append(&b, t->cols[c].name, strlen(t->cols[c].name) + 1);
      if (st == TL_OK) st = tl_buf_append(&b, doc, strlen(doc) + 1);
    }
    if (st != TL_OK) tl_err_set(e, st, "out of memory");
    else if (b.len > (1u << 30))
      st = tl_err_set(e, TL_EINTERNAL, "table schema too large ('%s')", t->path);
    len = b.len;
  } else if (w->rank == 0) {
    st = tl_err_set(e, TL_EINTERNAL,
                    "parallel writer: write_table called without a table on rank 0");
  }
  if ((st = agreed(w, st, e)) != TL_OK) {
    tl_buf_release(&b);
    return st;
  }
  st = tl_bcast(&len, 1, MPI_UINT64_T, 0, w->comm, e);
  if (st == TL_OK && w->rank != 0) { /* checked, and agreed before the next broadcast */
    b.len = 0;
    char *p = malloc(len + 1);
    if (!p) st = tl_err_set(e, TL_ENOMEM, "out of memory");
    else {
      tl_buf_release(&b);
      p[len] = '\0';
      b.data = p;
      b.cap = len + 1;
      b.len = len;
    }
  }
  if ((st = agreed(w, st, e)) != TL_OK) {
    tl_buf_release(&b);
    return st;
  }
  st = tl_bcast(b.data, (int)len, MPI_CHAR, 0, w->comm, e);
  if (st != TL_OK) {
    /* this rank's broadcast failed: nothing to decode */
  } else if (w->rank != 0) {
    const char *p = b.data, *end = b.data + len;
    uint64_t n;
    int32_t nc;
    memcpy(&n, p, sizeof n);
    p += sizeof n;
    memcpy(&nc, p, sizeof nc);
    p += sizeof nc;
    tl_table *s = tl_table_new(p);
    p += strlen(p) + 1;
    if (!s) st = tl_err_set(e, TL_ENOMEM, "out of memory");
    for (int c = 0; c < nc && st == TL_OK && p < end; c++) {
      tl_col_type type = (tl_col_type)p[0];
      const char *cname = p + 1;
      const char *doc = cname + strlen(cname) + 1;
      p = doc + strlen(doc) + 1;
      if (tl_table_add_col(s, cname, type, doc) < 0) st = tl_err_set(e, TL_ENOMEM, "out of memory");
    }
    *out = s;
    *nrows = n;
  } else {
    *nrows = t->nrows;
  }
  tl_buf_release(&b);
  return agreed(w, st, e);
}

static tl_status write_table(tl_writer *w_, const tl_table *t, tl_err *err) {
  h5p *w = (h5p *)w_;
  tl_err e = {{0}};
  tl_table *schema = NULL;
  uint64_t nrows = 0;
  tl_status st = bcast_schema(w, t, &schema, &nrows, &e);
  if (st == TL_OK) st = write_slice(w_, w->rank == 0 ? t : schema, 0, nrows, &e);
  tl_table_free(schema);
  return report(st, &e, err);
}

static tl_status attr_check(h5p *w, const char *name, const void *value, size_t n, tl_err *e) {
  uint64_t h = fnv(fnv_str(14695981039346656037ULL, name), value, n);
  return same_everywhere(w, h, e,
                         "parallel writer: the ranks passed different values for attribute '%s'",
                         name);
}

static tl_status attr_str(tl_writer *w_, const char *name, const char *value, tl_err *err) {
  h5p *w = (h5p *)w_;
  tl_err e = {{0}};
  tl_status st = attr_check(w, name, value, strlen(value), &e);
  if (st == TL_OK) {
    if (tl_h5_attr_str(w->file, name, value) != TL_OK)
      st = h5fail(w, &e, 0, "HDF5: cannot write attribute '%s'", name);
    st = agreed(w, st, &e);
  }
  return report(st, &e, err);
}

static tl_status attr_i64(tl_writer *w_, const char *name, int64_t value, tl_err *err) {
  h5p *w = (h5p *)w_;
  tl_err e = {{0}};
  tl_status st = attr_check(w, name, &value, sizeof value, &e);
  if (st == TL_OK) {
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(w->file, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = a < 0 ? -1 : H5Awrite(a, H5T_NATIVE_INT64, &value);
    if (a >= 0) H5Aclose(a);
    H5Sclose(sp);
    if (rc < 0) st = h5fail(w, &e, 0, "HDF5: cannot write attribute '%s'", name);
    st = agreed(w, st, &e);
  }
  return report(st, &e, err);
}

/* Local. Frees the writer and its communicator; TL_EMPI in e when MPI_Comm_free failed (this
 * rank's only: no collective follows). */
static tl_status destroy(h5p *w, tl_err *e) {
  tl_status st = TL_OK;
  if (!w) return st;
  if (w->comm != MPI_COMM_NULL) st = TL_MPI(e, MPI_Comm_free(&w->comm));
  free(w->path);
  free(w->part);
  free(w);
  return st;
}

/* Set when H5Fclose failed (disk full while flushing): HDF5 1.10 then still holds the file and
 * crashes when it closes it at library shutdown, so the process must not shut HDF5 down. */
static int g_hdf5_broken = 0;
int tl_h5_broken(void) { return g_hdf5_broken; }

static tl_status close_(tl_writer *w_, tl_err *err) {
  h5p *w = (h5p *)w_;
  tl_err e = {{0}};
  tl_status st = TL_OK;
  H5Pclose(w->dxpl);
  if (H5Fclose(w->file) < 0) {
    g_hdf5_broken = 1;
    st = h5fail(w, &e, 0, "HDF5: cannot finish the file");
  }
  st = agreed(w, st, &e);
  /* Every rank has closed: rank 0 publishes (or drops) the file and tells the others. */
  if (w->rank == 0) {
    if (st != TL_OK) remove(w->part);
    else if (rename(w->part, w->path) != 0)
      st = tl_err_set(&e, TL_EIO, "cannot rename '%s' to '%s': %s", w->part, w->path,
                      strerror(errno));
  }
  st = agreed(w, st, &e);
  tl_status freed = destroy(w, &e);
  return report(st != TL_OK ? st : freed, &e, err);
}

static void abort_(tl_writer *w_) {
  h5p *w = (h5p *)w_;
  H5Pclose(w->dxpl);
  /* After a failed write (a full disk) the ranks' metadata caches may disagree about what is
   * left to flush, and a collective H5Fclose then waits forever (one rank in the cache's sync
   * point, another in MPI_File_close: seen on 2 ranks, also when the journal filled the disk and
   * no dataset write failed). The file is being dropped: leave it
   * open on every rank and let the process end without shutting HDF5 down (tl_h5_broken). */
  int failed = w->failed || tl_fs_full(w->part), any = 0;
  /* when MPI itself fails here, the file is left open as after a failed write */
  if (tl_allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, w->comm, NULL) != TL_OK) any = 1;
  if (any) g_hdf5_broken = 1;
  else if (H5Fclose(w->file) < 0) g_hdf5_broken = 1;
  /* An abort reports nothing (the caller already has its failure): a failed barrier or
   * MPI_Comm_free changes nothing of what is left to do. */
  (void)tl_barrier(w->comm, NULL);
  if (w->rank == 0) remove(w->part);
  (void)destroy(w, NULL);
}

static const tl_writer_vtbl VT = {write_table, write_slice, write_rows, attr_str, attr_i64, close_,
                                   abort_};

tl_writer *tl_h5_parallel_open(const char *path, MPI_Comm comm, tl_err *err) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are reported by us, with names */
  int rank = tl_comm_rank(comm), size = tl_comm_size(comm), solo = comm == TL_SOLO;
  tl_err e = {{0}};
  tl_status st = TL_OK;
  h5p *w = calloc(1, sizeof *w);
  if (w) {
    w->base.vt = &VT;
    w->comm = MPI_COMM_NULL;
    w->file = -1;
    w->dxpl = -1;
    w->rank = rank;
    w->size = size;
    w->path = tl_strdup(path);
    tl_buf b;
    tl_buf_init(&b);
    if (tl_buf_printf(&b, "%s.part", path) == TL_OK) w->part = tl_buf_detach(&b);
    tl_buf_release(&b);
  }
  if (!w || !w->path || !w->part) st = tl_err_set(&e, TL_ENOMEM, "out of memory");
  /* Rank 0 tries the path with plain stdio first: it says why in the user's terms, and every
   * rank learns of it before any collective HDF5 call. */
  if (st == TL_OK && rank == 0) {
    FILE *f = fopen(w->part, "wb");
    if (!f) st = tl_err_set(&e, TL_EIO, "cannot create output '%s': %s", w->part, strerror(errno));
    else fclose(f);
  }
  if ((st = tl_agree(st, &e, comm)) != TL_OK) {
    (void)destroy(w, NULL);
    report(st, &e, err);
    return NULL;
  }
  /* Our own duplicate, whose MPI calls return their errors (TL_EMPI) instead of aborting the
   * job; solo: w->comm stays TL_SOLO. */
  if (!solo) st = tl_comm_dup(comm, &w->comm, &e);
  if ((st = tl_agree(st, &e, comm)) != TL_OK) {
    if (rank == 0) remove(w->part);
    (void)destroy(w, NULL);
    report(st, &e, err);
    return NULL;
  }

  /* One process without MPI (TL_SOLO) writes through HDF5's default POSIX driver: the same
   * datasets, types, chunks and filters as over MPI-IO. */
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (!solo) {
    H5Pset_fapl_mpio(fapl, w->comm, MPI_INFO_NULL);
    H5Pset_all_coll_metadata_ops(fapl, 1);
    H5Pset_coll_metadata_write(fapl, 1);
  }
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
  w->file = H5Fcreate(w->part, H5F_ACC_TRUNC, fcpl, fapl);
  H5Pclose(fcpl);
  H5Pclose(fapl);
  w->dxpl = H5Pcreate(H5P_DATASET_XFER);
  if (w->file < 0)
    st = h5fail(w, &e, 1, "HDF5: cannot create '%s'%s", w->part, solo ? "" : " with MPI-IO");
  else if (w->dxpl < 0 || (!solo && H5Pset_dxpl_mpio(w->dxpl, H5FD_MPIO_COLLECTIVE) < 0))
    st = h5fail(w, &e, 1, "HDF5: cannot set up collective transfers for '%s'", w->part);
  if ((st = agreed(w, st, &e)) != TL_OK) {
    /* Close only when every rank opened (H5Fclose is collective); a file opened on some ranks
     * only is left to process exit rather than risk a hang. */
    int opened = w->file >= 0, all_opened = 0;
    if (tl_allreduce(&opened, &all_opened, 1, MPI_INT, MPI_LAND, w->comm, NULL) != TL_OK)
      all_opened = 0; /* not known everywhere: leave the file to process exit */
    if (all_opened) H5Fclose(w->file);
    if (w->dxpl >= 0) H5Pclose(w->dxpl);
    (void)tl_barrier(w->comm, NULL); /* failing already: nothing more to report */
    if (rank == 0) remove(w->part);
    (void)destroy(w, NULL);
    report(st, &e, err);
    return NULL;
  }
  return &w->base;
}
