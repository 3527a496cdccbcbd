/* h5_read.c - reads columns of a table tally wrote back into a tl_table (h5_read.h). */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include "h5_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5_common.h"
#include "tally/str.h"

/* The rows of a 1-D dataset; -1 when it is not one. */
static hssize_t rows_of(hid_t d) {
  hid_t sp = H5Dget_space(d);
  if (sp < 0) return -1;
  hssize_t n = H5Sget_simple_extent_ndims(sp) == 1 ? H5Sget_simple_extent_npoints(sp) : -1;
  H5Sclose(sp);
  return n;
}

static int exists(hid_t g, const char *name) { return H5Lexists(g, name, H5P_DEFAULT) > 0; }

/* Reads the fixed-length string dataset d (nrows rows of `width` bytes each) into column c. */
static tl_status read_fixed(hid_t d, const char *name, size_t width, tl_table *t, int c, size_t nrows,
                            tl_err *err) {
  char *buf = malloc(nrows * width + 1), *one = malloc(width + 1);
  hid_t mt = H5Tcopy(H5T_C_S1);
  tl_status st = !buf || !one || mt < 0 ? TL_ENOMEM : TL_OK;
  if (!st && (H5Tset_size(mt, width) < 0 || H5Tset_strpad(mt, H5T_STR_NULLPAD) < 0 ||
              H5Tset_cset(mt, H5T_CSET_UTF8) < 0))
    st = tl_err_set(err, TL_EIO, "cannot read column '%s'", name);
  if (!st && nrows && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
    st = tl_err_set(err, TL_EIO, "cannot read column '%s'", name);
  for (size_t r = 0; !st && r < nrows; r++) { /* a value ends at its first NUL, or fills its width */
    const char *v = buf + r * width;
    size_t n = strnlen(v, width);
    memcpy(one, v, n);
    one[n] = '\0';
    st = tl_table_set_str(t, r, c, one);
  }
  if (mt >= 0) H5Tclose(mt);
  free(buf);
  free(one);
  return st;
}

/* Reads string column `name` of group g into column c of t (nrows rows): a fixed-length string
 * dataset (the parallel writer's short strings), a variable-length one (the serial writer), or
 * the parallel writer's name.bytes + name.offsets (its texts). */
static tl_status read_str(hid_t g, const char *name, tl_table *t, int c, size_t nrows, tl_err *err) {
  if (exists(g, name)) {
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT), ft = d >= 0 ? H5Dget_type(d) : -1;
    int str = ft >= 0 && H5Tget_class(ft) == H5T_STRING, vlen = str && H5Tis_variable_str(ft) > 0;
    size_t width = str && !vlen ? H5Tget_size(ft) : 0;
    if (ft >= 0) H5Tclose(ft);
    if (d < 0 || !str || rows_of(d) != (hssize_t)nrows || (!vlen && width == 0)) {
      if (d >= 0) H5Dclose(d);
      return tl_err_set(err, TL_EINPUT, "column '%s' is not a string column of %zu rows", name, nrows);
    }
    if (!vlen) {
      tl_status st = read_fixed(d, name, width, t, c, nrows, err);
      H5Dclose(d);
      return st;
    }
    char **v = calloc(nrows ? nrows : 1, sizeof *v);
    hid_t mt = tl_h5_str_type();
    tl_status st = v && nrows && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0
                       ? tl_err_set(err, TL_EIO, "cannot read column '%s'", name)
                       : v ? TL_OK : TL_ENOMEM;
    for (size_t r = 0; !st && r < nrows; r++)
      if (tl_table_set_str(t, r, c, v[r] ? v[r] : "")) st = TL_ENOMEM;
    if (v && nrows) {
      hid_t sp = H5Dget_space(d);
      H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, v);
      H5Sclose(sp);
    }
    free(v);
    H5Tclose(mt);
    H5Dclose(d);
    return st;
  }
  char bn[300], on[300];
  snprintf(bn, sizeof bn, "%s.bytes", name);
  snprintf(on, sizeof on, "%s.offsets", name);
  if (!exists(g, bn) || !exists(g, on)) return tl_err_set(err, TL_EINPUT, "no column '%s'", name);
  hid_t db = H5Dopen2(g, bn, H5P_DEFAULT), dof = H5Dopen2(g, on, H5P_DEFAULT);
  hssize_t nb = db >= 0 ? rows_of(db) : -1, no = dof >= 0 ? rows_of(dof) : -1;
  unsigned char *bytes = nb >= 0 ? malloc((size_t)nb + 1) : NULL;
  int64_t *off = no >= 0 ? malloc(((size_t)no + 1) * sizeof *off) : NULL;
  tl_status st = TL_OK;
  if (nb < 0 || no != (hssize_t)nrows) st = tl_err_set(err, TL_EINPUT, "column '%s': its bytes and offsets do not match the table", name);
  else if (!bytes || !off) st = TL_ENOMEM;
  else if ((nb && H5Dread(db, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes) < 0) ||
           (no && H5Dread(dof, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, off) < 0))
    st = tl_err_set(err, TL_EIO, "cannot read column '%s'", name);
  for (size_t r = 0; !st && r < nrows; r++) {
    int64_t s = off[r], e = r + 1 < nrows ? off[r + 1] : nb;
    if (s < 0 || e < s || e > nb) {
      st = tl_err_set(err, TL_EINPUT, "column '%s': offsets out of order at row %zu", name, r);
      break;
    }
    char *x = malloc((size_t)(e - s) + 1);
    if (!x) {
      st = TL_ENOMEM;
      break;
    }
    memcpy(x, bytes + s, (size_t)(e - s));
    x[e - s] = 0;
    st = tl_table_set_str(t, r, c, x);
    free(x);
  }
  free(bytes);
  free(off);
  if (db >= 0) H5Dclose(db);
  if (dof >= 0) H5Dclose(dof);
  return st;
}

/* Reads numeric column `name` (int64 or double) as type `type` (TL_COL_I64 or TL_COL_F64). */
static tl_status read_num(hid_t g, const char *name, tl_table *t, int c, size_t nrows, tl_err *err) {
  hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
  if (d < 0 || rows_of(d) != (hssize_t)nrows) {
    if (d >= 0) H5Dclose(d);
    return tl_err_set(err, TL_EINPUT, "column '%s' is not a column of %zu rows", name, nrows);
  }
  hid_t mt = t->cols[c].type == TL_COL_I64 ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
  void *dst = t->cols[c].type == TL_COL_I64 ? (void *)t->cols[c].v.i : (void *)t->cols[c].v.f;
  tl_status st = nrows && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, dst) < 0
                     ? tl_err_set(err, TL_EIO, "cannot read column '%s' as a number", name)
                     : TL_OK;
  H5Dclose(d);
  return st;
}

/* The kind of column `name`: 0 string, 1 int64, 2 double, -1 absent or other. */
static int kind_of(hid_t g, const char *name) {
  char bn[300];
  snprintf(bn, sizeof bn, "%s.bytes", name);
  if (!exists(g, name)) return exists(g, bn) ? 0 : -1;
  hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
  hid_t ft = d >= 0 ? H5Dget_type(d) : -1;
  H5T_class_t cl = ft >= 0 ? H5Tget_class(ft) : H5T_NO_CLASS;
  if (ft >= 0) H5Tclose(ft);
  if (d >= 0) H5Dclose(d);
  return cl == H5T_STRING ? 0 : cl == H5T_INTEGER ? 1 : cl == H5T_FLOAT ? 2 : -1;
}

tl_status tl_h5_read_table(const char *path, const char *group, const char *const *cols, int ncols, tl_table **out,
                           tl_err *err) {
  *out = NULL;
  H5E_auto2_t fn;
  void *fd;
  H5Eget_auto2(H5E_DEFAULT, &fn, &fd);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are ours to word */
  tl_status st = TL_OK;
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t g = f >= 0 && exists(f, group) ? H5Gopen2(f, group, H5P_DEFAULT) : -1;
  tl_table *t = NULL;
  if (f < 0) st = tl_err_set(err, TL_EIO, "cannot open '%s' as an HDF5 file", path);
  else if (g < 0) st = tl_err_set(err, TL_EINPUT, "'%s' has no table '%s'", path, group);
  else if (!(t = tl_table_new(group))) st = TL_ENOMEM;
  /* the row count: the first column's */
  size_t nrows = 0;
  for (int c = 0; !st && c < ncols; c++) {
    int k = kind_of(g, cols[c]);
    if (k < 0) {
      st = tl_err_set(err, TL_EINPUT, "table '%s' of '%s' has no column '%s'", group, path, cols[c]);
      break;
    }
    char nm[300];
    snprintf(nm, sizeof nm, k == 0 && !exists(g, cols[c]) ? "%s.offsets" : "%s", cols[c]);
    hid_t d = H5Dopen2(g, nm, H5P_DEFAULT);
    hssize_t n = d >= 0 ? rows_of(d) : -1;
    if (d >= 0) H5Dclose(d);
    if (n < 0) {
      st = tl_err_set(err, TL_EINPUT, "column '%s' of '%s' is not 1-D", cols[c], group);
      break;
    }
    if (c == 0) {
      nrows = (size_t)n;
      for (size_t r = 0; r < nrows; r++)
        if (tl_table_add_row(t) == (size_t)-1) st = TL_ENOMEM;
    }
    if (st) break;
    if (tl_table_add_col(t, cols[c], k == 0 ? TL_COL_STR : k == 1 ? TL_COL_I64 : TL_COL_F64, "") < 0) {
      st = TL_ENOMEM;
      break;
    }
    st = k == 0 ? read_str(g, cols[c], t, c, nrows, err) : read_num(g, cols[c], t, c, nrows, err);
  }
  if (st == TL_ENOMEM) tl_err_set(err, st, "out of memory reading '%s'", path);
  if (g >= 0) H5Gclose(g);
  if (f >= 0) H5Fclose(f);
  H5Eset_auto2(H5E_DEFAULT, fn, fd);
  if (st) {
    tl_table_free(t);
    return st;
  }
  *out = t;
  return TL_OK;
}

int tl_h5_has_column(const char *path, const char *group, const char *col) {
  H5E_auto2_t fn;
  void *fd;
  H5Eget_auto2(H5E_DEFAULT, &fn, &fd);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t g = f >= 0 && exists(f, group) ? H5Gopen2(f, group, H5P_DEFAULT) : -1;
  int k = g >= 0 ? kind_of(g, col) : -1;
  if (g >= 0) H5Gclose(g);
  if (f >= 0) H5Fclose(f);
  H5Eset_auto2(H5E_DEFAULT, fn, fd);
  return k >= 0;
}

/* HDF5 errors are ours to word: the automatic printing of the error stack is off between
 * quiet_on and quiet_off. */
typedef struct {
  H5E_auto2_t fn;
  void *data;
} quiet;
static void quiet_on(quiet *q) {
  H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}
static void quiet_off(const quiet *q) { H5Eset_auto2(H5E_DEFAULT, q->fn, q->data); }

tl_status tl_h5_read_attr_str(const char *path, const char *name, char **out, tl_err *err) {
  *out = NULL;
  quiet q;
  quiet_on(&q);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) {
    quiet_off(&q);
    return tl_err_set(err, TL_EIO, "cannot open '%s' as an HDF5 file", path);
  }
  tl_status st = TL_OK;
  if (H5Aexists(f, name) <= 0) {
    st = tl_err_set(err, TL_EINPUT, "'%s' has no root attribute '%s'", path, name);
  } else {
    hid_t a = H5Aopen(f, name, H5P_DEFAULT), ft = a >= 0 ? H5Aget_type(a) : -1;
    if (ft < 0 || H5Tget_class(ft) != H5T_STRING || H5Tis_variable_str(ft) <= 0) {
      st = tl_err_set(err, TL_EINPUT, "'%s': root attribute '%s' is not a string", path, name);
    } else {
      hid_t mt = tl_h5_str_type();
      char *v = NULL;
      if (H5Aread(a, mt, &v) < 0) st = tl_err_set(err, TL_EIO, "'%s': cannot read root attribute '%s'", path, name);
      else if (!(*out = tl_strdup(v ? v : ""))) st = tl_err_set(err, TL_ENOMEM, "out of memory");
      if (v) H5free_memory(v);
      H5Tclose(mt);
    }
    if (ft >= 0) H5Tclose(ft);
    if (a >= 0) H5Aclose(a);
  }
  H5Fclose(f);
  quiet_off(&q);
  return st;
}

tl_status tl_h5_read_attr_i64(const char *path, const char *name, int64_t *out, tl_err *err) {
  quiet q;
  quiet_on(&q);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  tl_status st = TL_OK;
  if (f < 0) {
    st = tl_err_set(err, TL_EIO, "cannot open '%s' as an HDF5 file", path);
  } else if (H5Aexists(f, name) <= 0) {
    st = tl_err_set(err, TL_EINPUT, "'%s' has no root attribute '%s'", path, name);
  } else {
    hid_t a = H5Aopen(f, name, H5P_DEFAULT), ft = a >= 0 ? H5Aget_type(a) : -1;
    if (ft < 0 || H5Tget_class(ft) != H5T_INTEGER || H5Aread(a, H5T_NATIVE_INT64, out) < 0)
      st = tl_err_set(err, TL_EINPUT, "'%s': root attribute '%s' is not an integer", path, name);
    if (ft >= 0) H5Tclose(ft);
    if (a >= 0) H5Aclose(a);
  }
  if (f >= 0) H5Fclose(f);
  quiet_off(&q);
  return st;
}

tl_status tl_h5_check_output(const char *path, tl_err *err) {
  struct stat s;
  if (stat(path, &s) != 0) return tl_err_set(err, TL_EIO, "cannot open '%s': %s", path, strerror(errno));
  if (S_ISDIR(s.st_mode)) return tl_err_set(err, TL_EIO, "cannot open '%s': %s", path, strerror(EISDIR));
  if (!S_ISREG(s.st_mode))
    return tl_err_set(err, TL_EIO, "cannot open '%s': not a regular file (a device, FIFO or socket)", path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return tl_err_set(err, TL_EIO, "cannot open '%s': %s", path, strerror(errno));
  close(fd);
  quiet q;
  quiet_on(&q);
  tl_status st = TL_OK;
  htri_t h5 = H5Fis_hdf5(path); /* HDF5 1.10: the signature at 0, 512, 1024, ... */
  hid_t f = h5 > 0 ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : -1;
  if (h5 <= 0 && s.st_size == 0)
    st = tl_err_set(err, TL_EIO, "cannot open '%s': the file is empty (not an HDF5 file)", path);
  else if (h5 <= 0)
    st = tl_err_set(err, TL_EIO, "cannot open '%s': not an HDF5 file (or one cut before its first bytes were "
                    "written): tally reads the HDF5 outputs of tally run, merge and correlate", path);
  else if (f < 0)
    st = tl_err_set(err, TL_EIO, "cannot open '%s': a truncated or damaged HDF5 file (HDF5 cannot read its "
                    "structure; was it copied or written only in part?)", path);
  else if (H5Aexists(f, "tally_version") <= 0)
    st = tl_err_set(err, TL_EIO, "cannot open '%s': an HDF5 file, but not an output of tally (no root attribute "
                    "'tally_version')", path);
  if (f >= 0) H5Fclose(f);
  quiet_off(&q);
  return st;
}
