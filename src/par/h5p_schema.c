/* h5p_schema.c - the parallel writer's write_table (writer.h, h5p_int.h): rank 0's table
 * schema broadcast, then write_slice on every rank. */
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
  if ((st = h5p_agreed(w, st, e)) != TL_OK) {
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
  if ((st = h5p_agreed(w, st, e)) != TL_OK) {
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
  return h5p_agreed(w, st, e);
}

tl_status h5p_write_table(tl_writer *w_, const tl_table *t, tl_err *err) {
  h5p *w = (h5p *)w_;
  tl_err e = {{0}};
  tl_table *schema = NULL;
  uint64_t nrows = 0;
  tl_status st = bcast_schema(w, t, &schema, &nrows, &e);
  if (st == TL_OK) st = h5p_write_slice(w_, w->rank == 0 ? t : schema, 0, nrows, &e);
  tl_table_free(schema);
  return h5p_report(st, &e, err);
}
