/* h5p_ds.c - the parallel writer's primitives (h5p_int.h): the agreement and failures, the
 * same-on-every-rank checks, datasets and groups created, the collective transfer, the
 * fixed-length string columns. */
#include <stdarg.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "h5_common.h"
#include "h5p_int.h"
#include "tally/str.h"

/* The writer's agreement (comm.h tl_agree): every rank gets the status and message of the lowest
 * failing rank. Collective over the writer's communicator. */
tl_status h5p_agreed(h5p *w, tl_status st, tl_err *e) {
  return tl_agree(st, e, w->comm);
}

/* Copies the local message to the caller's (optional) err. */
tl_status h5p_report(tl_status st, const tl_err *e, tl_err *err) {
  if (st != TL_OK) tl_err_set(err, st, "%s", e->msg);
  return st;
}

/* A failed HDF5 call's error: the message (printf-style), the file when `named` is 0 (" of
 * 'OUT.part'"), and its cause (tl_h5_why: the errno text, "No space left on device" when the
 * file system is full). Marks the writer failed: abort_ then leaves the file to process exit. */
tl_status h5p_fail(h5p *w, tl_err *e, int named, const char *fmt, ...) {
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
uint64_t h5p_fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 1099511628211ULL;
  }
  return h;
}

uint64_t h5p_fnv_str(uint64_t h, const char *s) {
  return h5p_fnv(h, s ? s : "", (s ? strlen(s) : 0) + 1);
}

/* Collective (one MPI_Allreduce, then the agreement). TL_OK when h is the same on every rank;
 * else TL_EINTERNAL with `what` (printf-style) as the message, or TL_EMPI when MPI failed. */
__attribute__((format(printf, 4, 5)))
tl_status h5p_same_everywhere(h5p *w, uint64_t h, tl_err *e, const char *what, ...) {
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
  return h5p_agreed(w, st, e);
}

/* The elements of a chunk of a dataset of n elements of esize bytes: CHUNK_MAX (a write_rows
 * window, so that a window writes whole chunks), halved while the chunk passes CHUNK_BYTES; a
 * byte blob's chunks are CHUNK_BYTES. Parallel HDF5 allocates every chunk of a filtered dataset
 * when it is created, deflating a chunk of fill values for each: with 64 KiB chunks that was 4%
 * of a replay run, for bytes the writes then replace. */
hsize_t h5p_chunk_elems(hsize_t n, size_t esize) {
  hsize_t c = esize == 1 ? CHUNK_BYTES : CHUNK_MAX;
  while (c > 1 && c * esize > CHUNK_BYTES) c /= 2;
  return n < c ? n : c;
}

/* Creates a 1-D dataset of n elements (collective). */
hid_t h5p_create_ds(hid_t g, const char *name, hid_t ftype, hsize_t n, int shuffle) {
  hid_t sp = H5Screate_simple(1, &n, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_obj_track_times(dcpl, 0);
  if (n > CHUNK_ABOVE) {
    hsize_t chunk = h5p_chunk_elems(n, H5Tget_size(ftype));
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
herr_t h5p_write_part(h5p *w, hid_t d, hid_t mtype, hsize_t start, hsize_t count,
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

/* Creates the group of a table (collective); returns the agreed status. */
tl_status h5p_create_group(h5p *w, const char *path, hid_t *g, tl_err *e) {
  tl_status st = TL_OK;
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  H5Pset_obj_track_times(gcpl, 0);
  H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
  *g = H5Gcreate2(w->file, path, lcpl, gcpl, H5P_DEFAULT);
  H5Pclose(gcpl);
  H5Pclose(lcpl);
  if (*g < 0) st = h5p_fail(w, e, 0, "HDF5: cannot create group '%s'", path);
  return h5p_agreed(w, st, e);
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
int h5p_is_fixed(const tl_col *col, uint64_t width, uint64_t bytes, uint64_t rows) {
  if (col->type != TL_COL_STR || width > TL_FIXED_STR_MAX) return 0;
  return width <= TL_FIXED_STR_PAD || width * rows <= TL_FIXED_STR_SPREAD * bytes;
}

/* The file and memory type of a fixed-length string column of `width` bytes (0 -> 1): UTF-8,
 * padded with NULs, so h5py reads it as numpy bytes ('S<width>', trailing NULs dropped) and
 * `.asstr()` as str. The caller closes it. */
hid_t h5p_fixed_type(uint64_t width) {
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
void h5p_pack_fixed(unsigned char *buf, const tl_col *col, size_t n, uint64_t width) {
  const size_t wd = width ? (size_t)width : 1;
  memset(buf, 0, n * wd);
  for (size_t r = 0; r < n; r++) memcpy(buf + r * wd, col->v.s[r], col->len[r]);
}
