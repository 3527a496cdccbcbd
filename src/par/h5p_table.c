/* h5p_table.c - the parallel writer's write_slice (writer.h, h5p_int.h), and the layout and
 * call checks write_rows shares. */
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

/* Creates, writes and documents one dataset; all ranks call it with the same name, type, n and
 * doc. Returns the agreed status. */
static tl_status put_ds(h5p *w, hid_t g, const char *path, const char *name, hid_t ftype,
                        hid_t mtype, int shuffle, hsize_t n, hsize_t start, hsize_t count,
                        const void *buf, const char *doc, tl_err *e) {
  tl_status st = TL_OK;
  hid_t d = h5p_create_ds(g, name, ftype, n, shuffle);
  if (d < 0) st = h5p_fail(w, e, 0, "HDF5: cannot create dataset '%s/%s'", path, name);
  if ((st = h5p_agreed(w, st, e)) != TL_OK) {
    if (d >= 0) H5Dclose(d);
    return st;
  }
  if (n > 0 && h5p_write_part(w, d, mtype, start, count, buf) < 0)
    st = h5p_fail(w, e, 0, "HDF5: cannot write dataset '%s/%s'", path, name);
  st = h5p_agreed(w, st, e);
  if (st == TL_OK && doc && *doc) {
    if (tl_h5_attr_str(d, "doc", doc) != TL_OK)
      st = h5p_fail(w, e, 0, "HDF5: cannot write attribute 'doc' of '%s/%s'", path, name);
    st = h5p_agreed(w, st, e);
  }
  if (H5Dclose(d) < 0 && st == TL_OK)
    st = h5p_fail(w, e, 0, "HDF5: cannot close dataset '%s/%s'", path, name);
  return h5p_agreed(w, st, e);
}

static uint64_t schema_hash(const tl_table *t, uint64_t total) {
  uint64_t h = 14695981039346656037ULL;
  h = h5p_fnv_str(h, t->path);
  h = h5p_fnv(h, &total, sizeof total);
  h = h5p_fnv(h, &t->ncols, sizeof t->ncols);
  for (int c = 0; c < t->ncols; c++) {
    int type = (int)t->cols[c].type;
    h = h5p_fnv_str(h, t->cols[c].name);
    h = h5p_fnv(h, &type, sizeof type);
    h = h5p_fnv_str(h, t->cols[c].doc);
  }
  return h;
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

/* One string column's local part: the concatenated bytes and each row's global start (or, for a
 * fixed-length column, the packed values). */
typedef struct {
  unsigned char *bytes;
  int64_t *offsets;
  uint64_t nbytes;
} strpart;

/* Local. Allocates l's arrays (zeroed) for the string columns of table s over `size` ranks.
 * TL_ENOMEM (message in e) when out of memory; l is then still safe to layout_free. */
tl_status h5p_layout_alloc(layout *l, const tl_table *s, int size, tl_err *e) {
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

void h5p_layout_free(layout *l) {
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
void h5p_layout_measure(layout *l, const tl_table *t) {
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
tl_status h5p_layout_exchange(h5p *w, layout *l, tl_status st, uint64_t offset, uint64_t nrows,
                              uint64_t total, const char *path, tl_err *e) {
  if (st == TL_OK) {
    l->mine[0] = offset;
    l->mine[1] = nrows;
  }
  if ((st = h5p_agreed(w, st, e)) != TL_OK) return st;
  st = tl_allgather(l->mine, l->per, MPI_UINT64_T, l->all, w->comm, e);
  if ((st = h5p_agreed(w, st, e)) != TL_OK) return st;
  return tile(w, l->all, l->per, l->nstr, path, offset, total, l->slices, l->blob_total,
              l->blob_start, l->width, e);
}

/* Collective. The checks every table write starts with: the rows [offset, offset + nrows) of s
 * lie in [0, total) (`what` names the call in the message when s is NULL or `bad` is set), then
 * the same path, columns, types, docs and total (hashed with `extra`) on every rank. */
tl_status h5p_check_call(h5p *w, const tl_table *s, int bad, const char *what, uint64_t offset,
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
  if ((st = h5p_agreed(w, st, e)) != TL_OK) return st;
  return h5p_same_everywhere(w, h5p_fnv(schema_hash(s, total), &extra, sizeof extra), e,
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
    if (h5p_is_fixed(col, l->width[k], l->blob_total[k], total)) {
      const size_t wd = l->width[k] ? (size_t)l->width[k] : 1;
      sp[k].nbytes = t->nrows * wd;
      if (!(sp[k].bytes = malloc(sp[k].nbytes ? sp[k].nbytes : 1)))
        return tl_err_set(e, TL_ENOMEM, "out of memory");
      h5p_pack_fixed(sp[k].bytes, col, t->nrows, l->width[k]);
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
  tl_status st = h5p_create_group(w, t->path, &g, e);
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
    } else if (h5p_is_fixed(col, l->width[k], l->blob_total[k], total)) {
      hid_t ft = h5p_fixed_type(l->width[k]);
      if (ft < 0) st = tl_err_set(e, TL_EHDF5, "HDF5: cannot make a string type for '%s'", col->name);
      if ((st = h5p_agreed(w, st, e)) != TL_OK) break;
      st = put_ds(w, g, t->path, col->name, ft, ft, 0, total, offset, t->nrows, sp[k].bytes,
                  col->doc, e);
      H5Tclose(ft);
      k++;
    } else {
      tl_buf_reset(&name);
      if (tl_buf_printf(&name, "%s.bytes", col->name) != TL_OK)
        st = tl_err_set(e, TL_ENOMEM, "out of memory");
      if ((st = h5p_agreed(w, st, e)) != TL_OK) break;
      st = put_ds(w, g, t->path, name.data, H5T_STD_U8LE, H5T_NATIVE_UINT8, 0, l->blob_total[k],
                  l->blob_start[k], sp[k].nbytes, sp[k].bytes, col->doc, e);
      if (st != TL_OK) break;
      tl_buf_reset(&name);
      if (tl_buf_printf(&name, "%s.offsets", col->name) != TL_OK)
        st = tl_err_set(e, TL_ENOMEM, "out of memory");
      if ((st = h5p_agreed(w, st, e)) != TL_OK) break;
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
tl_status h5p_write_slice(tl_writer *w_, const tl_table *t, uint64_t offset, uint64_t total,
                          tl_err *err) {
  h5p *w = (h5p *)w_;
  tl_err e = {{0}};
  tl_status st = h5p_check_call(w, t, 0, "write_slice called without a table", offset,
                                t ? t->nrows : 0, total, 0, "docs or total rows", &e);
  if (st != TL_OK) return h5p_report(st, &e, err);
  layout l;
  strpart *sp = NULL;
  st = h5p_layout_alloc(&l, t, w->size, &e);
  if (st == TL_OK && !(sp = calloc((size_t)l.nstr + 1, sizeof *sp)))
    st = tl_err_set(&e, TL_ENOMEM, "out of memory");
  if (st == TL_OK) h5p_layout_measure(&l, t);
  st = h5p_layout_exchange(w, &l, st, offset, t->nrows, total, t->path, &e);
  if (st == TL_OK) st = h5p_agreed(w, pack_parts(t, &l, total, sp, &e), &e);
  if (st == TL_OK) st = put_columns(w, t, &l, sp, offset, total, &e);
  for (int k = 0; sp && k < l.nstr; k++) {
    free(sp[k].bytes);
    free(sp[k].offsets);
  }
  free(sp);
  h5p_layout_free(&l);
  return h5p_report(st, &e, err);
}
