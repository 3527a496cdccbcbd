/* h5_serial.c - the serial HDF5 table writer (see writer.h).
 *
 * Layout: each tl_table becomes a group at t->path; each column a 1-D dataset named after the
 * column: strings (TL_COL_STR and TL_COL_TEXT alike) as variable-length UTF-8 (h5py:
 * `.asstr()[()]`), int64 as <i8, double as <f8. (The parallel writer, which `tally run` uses,
 * writes short strings as fixed-length ones; this writer serves tests and small tools.)
 * Columns of more than 4096 rows are chunked and deflate-compressed (level 4, shuffle for
 * numbers). Object modification times are not stored, so the same results give the same bytes.
 * Each dataset carries a "doc" attribute. write_rows writes the same datasets window by window
 * (65536 rows a window, each filled once) as hyperslabs of the same types; it needs no string
 * statistics (str_stats is ignored). */
#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/str.h"
#include "h5_common.h"
#include "writer.h"

typedef struct {
  tl_writer base;
  hid_t file;
  char *path;
  char *part;
} h5w;

/* A failed HDF5 call: what, the file and its cause (tl_h5_why: the errno text). */
static tl_status h5err(const h5w *w, tl_err *err, const char *what, const char *name) {
  char why[256];
  tl_h5_why(w->part, why, sizeof why);
  return tl_err_set(err, TL_EHDF5, "HDF5: cannot %s '%s' of '%s': %s", what, name, w->part, why);
}


/* Creates the group of a table. */
static hid_t create_group(h5w *w, const char *path) {
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  H5Pset_obj_track_times(gcpl, 0);
  H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
  hid_t g = H5Gcreate2(w->file, path, lcpl, gcpl, H5P_DEFAULT);
  H5Pclose(gcpl);
  H5Pclose(lcpl);
  return g;
}

/* Creates the dataset of column col, n rows, in g; *mt gets its memory type (caller closes it
 * with H5Tclose; -1 when the dataset could not be created). */
static hid_t create_col(hid_t g, const tl_col *col, hsize_t n, hid_t *mt) {
  hid_t sp = H5Screate_simple(1, &n, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_obj_track_times(dcpl, 0);
  if (n > 4096) {
    hsize_t chunk = n < 65536 ? n : 65536;
    H5Pset_chunk(dcpl, 1, &chunk);
    if (!tl_col_is_str(col->type)) H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, 4);
  }
  hid_t ft;
  if (tl_col_is_str(col->type)) {
    ft = tl_h5_str_type();
    *mt = H5Tcopy(ft);
  } else if (col->type == TL_COL_I64) {
    ft = H5Tcopy(H5T_STD_I64LE);
    *mt = H5Tcopy(H5T_NATIVE_INT64);
  } else {
    ft = H5Tcopy(H5T_IEEE_F64LE);
    *mt = H5Tcopy(H5T_NATIVE_DOUBLE);
  }
  hid_t d = H5Dcreate2(g, col->name, ft, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Tclose(ft);
  H5Pclose(dcpl);
  H5Sclose(sp);
  if (d < 0) {
    H5Tclose(*mt);
    *mt = -1;
  }
  return d;
}

static const void *col_data(const tl_col *col) {
  return tl_col_is_str(col->type) ? (const void *)col->v.s
         : col->type == TL_COL_I64 ? (const void *)col->v.i
                                   : (const void *)col->v.f;
}

static tl_status write_table(tl_writer *w_, const tl_table *t, tl_err *err) {
  h5w *w = (h5w *)w_;
  tl_status st = TL_OK;
  hid_t g = create_group(w, t->path);
  if (g < 0) return h5err(w, err, "create group", t->path);
  hsize_t n = t->nrows;
  for (int c = 0; c < t->ncols && st == TL_OK; c++) {
    const tl_col *col = &t->cols[c];
    hid_t mt;
    hid_t d = create_col(g, col, n, &mt);
    if (d < 0) {
      st = h5err(w, err, "create dataset", col->name);
    } else {
      if (n > 0 && H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, col_data(col)) < 0)
        st = h5err(w, err, "write dataset", col->name);
      if (st == TL_OK && col->doc && *col->doc && tl_h5_attr_str(d, "doc", col->doc) != TL_OK)
        st = h5err(w, err, "write attribute of", col->name);
      H5Dclose(d);
      H5Tclose(mt);
    }
  }
  H5Gclose(g);
  return st;
}

/* Writes rows [start, start + count) of d from buf (count > 0). */
static herr_t write_part(hid_t d, hid_t mt, hsize_t start, hsize_t count, const void *buf) {
  hid_t fs = H5Dget_space(d);
  if (fs < 0) return -1;
  hid_t ms = H5Screate_simple(1, &count, NULL);
  herr_t rc = ms < 0 ? -1 : H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
  if (rc >= 0) rc = H5Dwrite(d, mt, ms, fs, H5P_DEFAULT, buf);
  if (ms >= 0) H5Sclose(ms);
  H5Sclose(fs);
  return rc;
}

#define WINDOW 65536 /* rows per write_rows window */

/* The serial write_rows: every dataset is created as write_table creates it, then each window
 * is filled once and written as one hyperslab per column (strings stay variable-length). */
static tl_status write_rows(tl_writer *w_, const tl_table *s, uint64_t offset, uint64_t nrows,
                            uint64_t total, const uint64_t *str_stats, tl_fill_fn fill, void *ctx, tl_err *err) {
  h5w *w = (h5w *)w_;
  if (!s || !fill)
    return tl_err_set(err, TL_EINTERNAL,
                      "serial writer: write_rows called without a schema or a fill function");
  if (offset != 0 || nrows != total)
    return tl_err_set(err, TL_EINTERNAL, "the serial writer takes whole tables only ('%s')",
                      s->path);
  tl_status st = TL_OK;
  hid_t g = create_group(w, s->path);
  if (g < 0) return h5err(w, err, "create group", s->path);
  hid_t *d = malloc(((size_t)s->ncols + 1) * sizeof *d);
  hid_t *mt = malloc(((size_t)s->ncols + 1) * sizeof *mt);
  if (!d || !mt) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  int made = 0;
  for (int c = 0; c < s->ncols && st == TL_OK; c++, made++) {
    const tl_col *col = &s->cols[c];
    d[c] = create_col(g, col, nrows, &mt[c]);
    if (d[c] < 0) st = h5err(w, err, "create dataset", col->name);
    else if (col->doc && *col->doc && tl_h5_attr_str(d[c], "doc", col->doc) != TL_OK)
      st = h5err(w, err, "write attribute of", col->name);
    if (d[c] < 0) break;
  }
  for (uint64_t first = 0; first < nrows && st == TL_OK;) {
    uint64_t n = nrows - first < WINDOW ? nrows - first : WINDOW;
    tl_table *t = fill(ctx, first, n);
    if (!t) {
      st = tl_err_set(err, TL_ENOMEM,
                      "serial writer: fill gave no table for rows [%llu, %llu) of '%s' "
                      "(out of memory?)",
                      (unsigned long long)first, (unsigned long long)(first + n), s->path);
    } else if (t->nrows != n || t->ncols != s->ncols) {
      st = tl_err_set(err, TL_EINTERNAL,
                      "serial writer: fill gave %zu rows of %d columns for rows [%llu, %llu) "
                      "of '%s', not %llu rows of %d columns",
                      t->nrows, t->ncols, (unsigned long long)first,
                      (unsigned long long)(first + n), s->path, (unsigned long long)n, s->ncols);
    }
    for (int c = 0; c < s->ncols && st == TL_OK; c++) {
      const tl_col *col = &t->cols[c];
      if (col->type != s->cols[c].type || strcmp(col->name, s->cols[c].name) != 0)
        st = tl_err_set(err, TL_EINTERNAL,
                        "serial writer: fill gave column %d of '%s' as '%s' (type %d), the "
                        "schema has '%s' (type %d)",
                        c, s->path, col->name, (int)col->type, s->cols[c].name,
                        (int)s->cols[c].type);
      else if (write_part(d[c], mt[c], first, n, col_data(col)) < 0)
        st = h5err(w, err, "write dataset", col->name);
    }
    first += n; /* t is fill's: not ours to free */
  }
  for (int c = 0; c < made; c++) {
    if (d[c] < 0) continue;
    H5Dclose(d[c]);
    H5Tclose(mt[c]);
  }
  free(d);
  free(mt);
  H5Gclose(g);
  return st;
}

static tl_status write_slice(tl_writer *w_, const tl_table *t, uint64_t offset, uint64_t total,
                             tl_err *err) {
  if (offset != 0 || total != t->nrows)
    return tl_err_set(err, TL_EINTERNAL, "the serial writer takes whole tables only ('%s')", t->path);
  return write_table(w_, t, err);
}

static tl_status attr_str(tl_writer *w_, const char *name, const char *value, tl_err *err) {
  h5w *w = (h5w *)w_;
  if (tl_h5_attr_str(w->file, name, value) != TL_OK) return h5err(w, err, "write attribute", name);
  return TL_OK;
}

static tl_status attr_i64(tl_writer *w_, const char *name, int64_t value, tl_err *err) {
  h5w *w = (h5w *)w_;
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(w->file, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, H5T_NATIVE_INT64, &value);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  return rc < 0 ? h5err(w, err, "write attribute", name) : TL_OK;
}

static void destroy(h5w *w) {
  free(w->path);
  free(w->part);
  free(w);
}

static tl_status close_(tl_writer *w_, tl_err *err) {
  h5w *w = (h5w *)w_;
  tl_status st = TL_OK;
  if (H5Fclose(w->file) < 0) {
    char why[256];
    st = tl_err_set(err, TL_EHDF5, "HDF5: cannot finish '%s': %s", w->part, tl_h5_why(w->part, why, sizeof why));
    remove(w->part);
  } else if (rename(w->part, w->path) != 0) {
    st = tl_err_set(err, TL_EIO, "cannot rename '%s' to '%s': %s", w->part, w->path, strerror(errno));
  }
  destroy(w);
  return st;
}

static void abort_(tl_writer *w_) {
  h5w *w = (h5w *)w_;
  H5Fclose(w->file);
  remove(w->part);
  destroy(w);
}

static const tl_writer_vtbl VT = {write_table, write_slice, write_rows, attr_str, attr_i64, close_,
                                   abort_};

tl_writer *tl_h5_serial_open(const char *path, tl_err *err) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are reported by us, with names */
  h5w *w = calloc(1, sizeof *w);
  if (!w) {
    tl_err_set(err, TL_ENOMEM, "out of memory");
    return NULL;
  }
  w->base.vt = &VT;
  w->path = tl_strdup(path);
  tl_buf b;
  tl_buf_init(&b);
  tl_buf_printf(&b, "%s.part", path);
  w->part = tl_buf_detach(&b);
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
  w->file = H5Fcreate(w->part, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  H5Pclose(fcpl);
  if (w->file < 0) {
    /* Say why in the user's terms: try the path with plain stdio. */
    FILE *f = fopen(w->part, "wb");
    if (f) {
      fclose(f);
      remove(w->part);
      tl_err_set(err, TL_EHDF5, "HDF5: cannot create '%s'", w->part);
    } else {
      tl_err_set(err, TL_EIO, "cannot create output '%s': %s", w->part, strerror(errno));
    }
    destroy(w);
    return NULL;
  }
  return &w->base;
}
