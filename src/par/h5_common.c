/* h5_common.c - see h5_common.h. */
#define _DEFAULT_SOURCE
#include "h5_common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

hid_t tl_h5_str_type(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

tl_status tl_h5_attr_str(hid_t obj, const char *name, const char *value) {
  hid_t t = tl_h5_str_type();
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, t, &value);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  return rc < 0 ? TL_EHDF5 : TL_OK;
}

/* The first errno text the error stack records, into d->buf. */
typedef struct {
  char *buf;
  size_t n;
  int found;
} why_ctx;

static herr_t why_walk(unsigned k, const H5E_error2_t *e, void *data) {
  (void)k;
  why_ctx *w = data;
  const char *m = e->desc ? strstr(e->desc, "error message = '") : NULL;
  if (w->found || !m) return 0;
  m += strlen("error message = '");
  const char *end = strchr(m, '\'');
  size_t len = end ? (size_t)(end - m) : strlen(m);
  if (len >= w->n) len = w->n - 1;
  memcpy(w->buf, m, len);
  w->buf[len] = 0;
  w->found = len > 0;
  return 0;
}

int tl_fs_full(const char *file) {
  struct statvfs v;
  if (!file || statvfs(file, &v) != 0) return 0;
  /* root may use the reserved blocks: its limit is f_bfree, everyone else's f_bavail */
  unsigned long long blocks = geteuid() == 0 ? (unsigned long long)v.f_bfree : (unsigned long long)v.f_bavail;
  unsigned long long bytes = blocks * (unsigned long long)(v.f_frsize ? v.f_frsize : v.f_bsize);
  return bytes < 64 * 1024 || (v.f_files > 0 && v.f_favail == 0);
}

const char *tl_h5_why(const char *file, char *buf, size_t n) {
  why_ctx w = {buf, n, 0};
  if (n == 0) return buf;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, why_walk, &w);
  if (w.found) return buf;
  if (tl_fs_full(file)) {
    snprintf(buf, n, "%s", strerror(ENOSPC));
    return buf;
  }
  snprintf(buf, n, "an I/O error (HDF5 gives no reason)");
  return buf;
}
