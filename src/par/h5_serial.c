/* h5_serial.c - the serial HDF5 table writer (see writer.h).
 *
 * Layout: each tl_table becomes a group at t->path; each column a 1-D dataset named after the
 * column: strings as variable-length UTF-8 (h5py: `.asstr()[()]`), int64 as <i8, double as <f8.
 * Columns of more than 4096 rows are chunked and deflate-compressed (level 4, shuffle for
 * numbers). Object modification times are not stored, so the same results give the same bytes.
 * Each dataset carries a "doc" attribute. */
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

static tl_status h5err(tl_err *err, const char *what, const char *name) {
  return tl_err_set(err, TL_EHDF5, "HDF5: cannot %s '%s'", what, name);
}


static tl_status write_table(tl_writer *w_, const tl_table *t, tl_err *err) {
  h5w *w = (h5w *)w_;
  tl_status st = TL_OK;
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  H5Pset_obj_track_times(gcpl, 0);
  H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
  hid_t g = H5Gcreate2(w->file, t->path, lcpl, gcpl, H5P_DEFAULT);
  H5Pclose(gcpl);
  if (g < 0) {
    H5Pclose(lcpl);
    return h5err(err, "create group", t->path);
  }
  hsize_t n = t->nrows;
  for (int c = 0; c < t->ncols && st == TL_OK; c++) {
    const tl_col *col = &t->cols[c];
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0);
    if (n > 4096) {
      hsize_t chunk = n < 65536 ? n : 65536;
      H5Pset_chunk(dcpl, 1, &chunk);
      if (col->type != TL_COL_STR) H5Pset_shuffle(dcpl);
      H5Pset_deflate(dcpl, 4);
    }
    hid_t ft, mt;
    const void *buf;
    if (col->type == TL_COL_STR) {
      ft = tl_h5_str_type();
      mt = H5Tcopy(ft);
      buf = col->v.s;
    } else if (col->type == TL_COL_I64) {
      ft = H5Tcopy(H5T_STD_I64LE);
      mt = H5Tcopy(H5T_NATIVE_INT64);
      buf = col->v.i;
    } else {
      ft = H5Tcopy(H5T_IEEE_F64LE);
      mt = H5Tcopy(H5T_NATIVE_DOUBLE);
      buf = col->v.f;
    }
    hid_t d = H5Dcreate2(g, col->name, ft, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (d < 0) {
      st = h5err(err, "create dataset", col->name);
    } else {
      if (n > 0 && H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        st = h5err(err, "write dataset", col->name);
      if (st == TL_OK && col->doc && *col->doc && tl_h5_attr_str(d, "doc", col->doc) != TL_OK)
        st = h5err(err, "write attribute of", col->name);
      H5Dclose(d);
    }
    H5Tclose(ft);
    H5Tclose(mt);
    H5Pclose(dcpl);
    H5Sclose(sp);
  }
  H5Gclose(g);
  H5Pclose(lcpl);
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
  if (tl_h5_attr_str(w->file, name, value) != TL_OK) return h5err(err, "write attribute", name);
  return TL_OK;
}

static tl_status attr_i64(tl_writer *w_, const char *name, int64_t value, tl_err *err) {
  h5w *w = (h5w *)w_;
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(w->file, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, H5T_NATIVE_INT64, &value);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  return rc < 0 ? h5err(err, "write attribute", name) : TL_OK;
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
    st = tl_err_set(err, TL_EHDF5, "HDF5: cannot finish '%s' (disk full?)", w->part);
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

static const tl_writer_vtbl VT = {write_table, write_slice, attr_str, attr_i64, close_, abort_};

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
