/* h5p_rows.c - the parallel writer's write_rows (writer.h, h5p_int.h): the datasets of
 * write_slice, written window by window. */
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

static uint64_t g_window = WINDOW_DEFAULT;

void tl_h5_parallel_set_window(uint64_t rows) { g_window = rows ? rows : WINDOW_DEFAULT; }

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
  tl_status st = h5p_layout_alloc(&r->l, r->s, size, e);
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
  h5p_layout_free(&r->l);
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
    h5p_layout_measure(&r->l, t);
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
    } else if (h5p_is_fixed(col, r->l.width[k], r->l.blob_total[k], r->total)) {
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
  tl_status st = h5p_create_group(w, s->path, &r->g, e);
  tl_buf name;
  tl_buf_init(&name);
  for (int j = 0; j < r->nds && st == TL_OK; j++) {
    rows_ds *ds = &r->ds[j];
    const tl_col *col = &s->cols[ds->col];
    static const char *const suffix[] = {"", "", ".bytes", ".offsets", ""};
    tl_buf_reset(&name);
    if (tl_buf_printf(&name, "%s%s", col->name, suffix[ds->kind]) != TL_OK)
      st = tl_err_set(e, TL_ENOMEM, "out of memory");
    if (ds->kind == DS_FIXED && st == TL_OK && (ds->mt = h5p_fixed_type(r->l.width[ds->str])) < 0)
      st = tl_err_set(e, TL_EHDF5, "HDF5: cannot make a string type for '%s'", col->name);
    if ((st = h5p_agreed(w, st, e)) != TL_OK) break;
    hid_t ft = ds->kind == DS_F64     ? H5T_IEEE_F64LE
               : ds->kind == DS_BYTES ? H5T_STD_U8LE
               : ds->kind == DS_FIXED ? ds->mt
                                      : H5T_STD_I64LE;
    hsize_t n = ds->kind == DS_BYTES ? r->l.blob_total[ds->str] : r->total;
    ds->d = h5p_create_ds(r->g, name.data, ft, n, ds->kind != DS_BYTES && ds->kind != DS_FIXED);
    if (ds->d < 0)
      st = h5p_fail(w, e, 0, "HDF5: cannot create dataset '%s/%s'", s->path, name.data);
    if ((st = h5p_agreed(w, st, e)) != TL_OK) break;
    if (col->doc && *col->doc) {
      if (tl_h5_attr_str(ds->d, "doc", col->doc) != TL_OK)
        st = h5p_fail(w, e, 0, "HDF5: cannot write attribute 'doc' of '%s/%s'", s->path,
                      name.data);
      st = h5p_agreed(w, st, e);
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
    if (h5p_is_fixed(&s->cols[c], l->width[q], l->blob_total[q], r->total))
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
  const uint64_t blob = r->l.blob_total[q], cb = blob ? h5p_chunk_elems(blob, 1) : 1, end = base + *at;
  uint64_t upto = k + 1 >= r->nwin ? end : end / cb * cb;
  if (upto < r->wpos[q]) upto = r->wpos[q];
  if (blob > 0) rc = h5p_write_part(w, ds->d, H5T_NATIVE_UINT8, r->wpos[q], upto - r->wpos[q], bytes);
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
      if (total > 0) rc = h5p_write_part(w, ds->d, H5T_NATIVE_INT64, at0, n, col ? col->v.i : NULL);
      break;
    case DS_F64:
      if (total > 0) rc = h5p_write_part(w, ds->d, H5T_NATIVE_DOUBLE, at0, n, col ? col->v.f : NULL);
      break;
    case DS_BYTES:
      rc = rows_write_bytes(w, r, ds, k, col, t ? t->nrows : 0, &at);
      break;
    case DS_OFFSETS:
      if (total > 0) rc = h5p_write_part(w, ds->d, H5T_NATIVE_INT64, at0, n, r->offs_buf);
      r->done[ds->str] += at;
      break;
    case DS_FIXED:
      at = 0;
      for (size_t i = 0; col && i < t->nrows; i++) at += col->len[i];
      if (col) h5p_pack_fixed(bytes, col, t->nrows, r->l.width[ds->str]);
      if (total > 0) rc = h5p_write_part(w, ds->d, ds->mt, at0, n, bytes);
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
    st = h5p_fail(w, e, 0, "HDF5: cannot write dataset '%s/%s%s'", r->s->path, col->name, suffix);
  }
  return h5p_agreed(w, st, e);
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
    if ((st = h5p_agreed(w, st, e)) != TL_OK) break;
    st = rows_window_write(w, r, k, t, first, n, e);
    first += n;
  }
  for (int q = 0; q < r->l.nstr && st == TL_OK; q++)
    if (r->done[q] != r->l.mine[2 + 2 * q] || r->seen[q] != r->l.mine[3 + 2 * q])
      st = tl_err_set(e, TL_EINTERNAL,
                      "parallel writer: fill gave shorter strings in '%s' when writing than when "
                      "measuring (both passes must give the same rows)",
                      r->s->path);
  return h5p_agreed(w, st, e);
}

/* Local. Closes r's datasets, string types and group; a failed dataset close becomes st's
 * failure when st is TL_OK. */
static tl_status rows_close(h5p *w, rows_job *r, tl_status st, tl_err *e) {
  for (int j = 0; r->ds && j < r->nds; j++) {
    if (r->ds[j].d >= 0 && H5Dclose(r->ds[j].d) < 0 && st == TL_OK)
      st = h5p_fail(w, e, 0, "HDF5: cannot close a dataset of table '%s'", r->s->path);
    if (r->ds[j].mt >= 0) H5Tclose(r->ds[j].mt);
  }
  if (r->g >= 0) H5Gclose(r->g);
  return st;
}

/* Collective (writer.h). Rows [offset, offset + nrows) of `total`, handed out window by window
 * by fill. Steps: the call checks; pass 1 (string measures); the layout exchange and the most
 * windows of any rank; the datasets planned and created; pass 2 (the windows); closing. Each
 * collective step ends agreed. */
tl_status h5p_write_rows(tl_writer *w_, const tl_table *s, uint64_t offset, uint64_t nrows,
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
  tl_status st = h5p_check_call(w, s, !fill, "write_rows called without a schema or a fill function",
                                offset, nrows, total, r.win, "docs, total rows or window", &e);
  if (st != TL_OK) return h5p_report(st, &e, err);
  st = rows_alloc(&r, w->size, &e);
  r.nwin = window_count(offset, nrows, r.win);
  if (st == TL_OK) st = rows_measure(&r, str_stats, &e);
  st = h5p_layout_exchange(w, &r.l, st, offset, nrows, total, s->path, &e);
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
  return h5p_report(h5p_agreed(w, st, &e), &e, err);
}
