/* report_h5.c - the tables of a run file, listed for `tally report` (report_h5.h).
 *
 * HDF5 is walked here, in the cli tier, because h5_read.h reads a table whose columns are known
 * and nothing lists them: a table is a group holding datasets (one per column; a text column is
 * `c.bytes` + `c.offsets`), listed in creation order (tally's writers track it on every table's
 * group); groups created as intermediates (/metrics) have no such index and are listed by name.
 * Not collective: one process. HDF5's error stack is silenced while walking. */
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "report_h5.h"
#include "tally/str.h"

typedef struct {
  rpt_tabs *out;
  rpt_tab cur;    /* the columns of the group being listed */
  char **kids;    /* its subgroups, in order */
  int nkids;
  int oom;
} walk_t;

static int push_str(char ***v, int *n, const char *s, size_t len) {
  char **q = realloc(*v, (size_t)(*n + 1) * sizeof *q);
  if (!q) return -1;
  *v = q;
  if (!(q[*n] = tl_strndup(s, len))) return -1;
  (*n)++;
  return 0;
}

static herr_t on_link(hid_t g, const char *name, const H5L_info_t *info, void *op) {
  walk_t *w = op;
  H5O_info_t oi;
  if (H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) < 0) return 0;
  size_t n = strlen(name);
  if (oi.type == H5O_TYPE_GROUP) {
    if (push_str(&w->kids, &w->nkids, name, n)) w->oom = 1;
  } else if (oi.type == H5O_TYPE_DATASET) {
    if (n > 8 && !strcmp(name + n - 8, ".offsets")) return 0;
    if (n > 6 && !strcmp(name + n - 6, ".bytes")) n -= 6;
    if (push_str(&w->cur.cols, &w->cur.ncols, name, n)) w->oom = 1;
  }
  return w->oom ? -1 : 0;
}

static void tab_free(rpt_tab *t) {
  for (int i = 0; i < t->ncols; i++) free(t->cols[i]);
  free(t->cols), free(t->group);
}

void rpt_tabs_free(rpt_tabs *t) {
  for (int i = 0; i < t->n; i++) tab_free(&t->v[i]);
  free(t->v);
  memset(t, 0, sizeof *t);
}

/* Lists group `path` of file f and, depth first, its subgroups. 0, or -1 on allocation failure. */
static int walk(hid_t f, const char *path, rpt_tabs *out) {
  hid_t g = H5Gopen2(f, path, H5P_DEFAULT);
  if (g < 0) return 0;
  walk_t w = {.out = out};
  hsize_t idx = 0;
  if (H5Literate(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, on_link, &w) < 0 && !w.oom) {
    for (int i = 0; i < w.nkids; i++) free(w.kids[i]);
    free(w.kids), tab_free(&w.cur);
    memset(&w, 0, sizeof w);
    idx = 0;
    H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, on_link, &w); /* no creation-order index */
  }
  H5Gclose(g);
  int rc = w.oom ? -1 : 0;
  if (!rc && w.cur.ncols) {
    rpt_tab *v = realloc(out->v, (size_t)(out->n + 1) * sizeof *v);
    if (!v || !(w.cur.group = tl_strdup(path))) rc = -1;
    if (v) out->v = v;
    if (!rc) out->v[out->n++] = w.cur, memset(&w.cur, 0, sizeof w.cur);
  }
  for (int i = 0; i < w.nkids && !rc; i++) {
    size_t n = strlen(path) + strlen(w.kids[i]) + 2;
    char *sub = malloc(n);
    if (!sub) rc = -1;
    else snprintf(sub, n, "%s%s%s", path, strcmp(path, "/") ? "/" : "", w.kids[i]), rc = walk(f, sub, out);
    free(sub);
  }
  for (int i = 0; i < w.nkids; i++) free(w.kids[i]);
  free(w.kids), tab_free(&w.cur);
  return rc;
}

tl_status rpt_list(const char *path, const char *root, rpt_tabs *out, tl_err *err) {
  memset(out, 0, sizeof *out);
  H5E_auto2_t fn;
  void *fd;
  H5Eget_auto2(H5E_DEFAULT, &fn, &fd);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  tl_status st = TL_OK;
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) st = tl_err_set(err, TL_EIO, "cannot open '%s' as an HDF5 file", path);
  else if (H5Lexists(f, root, H5P_DEFAULT) > 0 && walk(f, root, out)) st = TL_ENOMEM;
  if (f >= 0) H5Fclose(f);
  H5Eset_auto2(H5E_DEFAULT, fn, fd);
  if (st) rpt_tabs_free(out);
  return st;
}

tl_status rpt_children(const char *path, const char *root, char ***names, int *n, tl_err *err) {
  *names = NULL, *n = 0;
  H5E_auto2_t fn;
  void *fd;
  H5Eget_auto2(H5E_DEFAULT, &fn, &fd);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  tl_status st = TL_OK;
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t g = f >= 0 && H5Lexists(f, root, H5P_DEFAULT) > 0 ? H5Gopen2(f, root, H5P_DEFAULT) : -1;
  if (f < 0) st = tl_err_set(err, TL_EIO, "cannot open '%s' as an HDF5 file", path);
  if (g >= 0) {
    walk_t w = {0};
    hsize_t idx = 0;
    if (H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, on_link, &w) < 0 || w.oom) st = TL_ENOMEM;
    *names = w.kids, *n = w.nkids;
    tab_free(&w.cur);
    H5Gclose(g);
  }
  if (f >= 0) H5Fclose(f);
  H5Eset_auto2(H5E_DEFAULT, fn, fd);
  return st;
}
