/* spill.c - the spilled item-table rows: written as units finish, read back window by window when the tables are written. */
#include "run.h"

/* "<dir>/r<rank, 5 digits>.bin" (malloc'd): rank q's spilled rows. */
static char *spill_path(const char *dir, int q) {
  tl_buf p;
  tl_buf_init(&p);
  tl_buf_printf(&p, "%s/r%05d.bin", dir, q);
  return tl_buf_detach(&p);
}

/* A spilled row: uint32 byte count of what follows, then each cell in column order: a string as
 * uint32 length, its bytes and a NUL; an int64 or a double as its 8 bytes. Each string cell's
 * length is added to sb[2k] and raised into sb[2k + 1] (k: its index among the string columns;
 * write_rows' str_stats). */
tl_status run_spill_row(const tl_table *t, size_t row, tl_buf *out, uint64_t *sb) {
  tl_buf_reset(out);
  uint32_t len = 0;
  tl_status st = tl_buf_append(out, (const char *)&len, 4);
  for (int c = 0; c < t->ncols && !st; c++) {
    const tl_col *col = &t->cols[c];
    if (tl_col_is_str(col->type)) {
      const char *v = col->v.s[row];
      const size_t vl = col->len[row];
      sb[0] += vl;
      if (vl > sb[1]) sb[1] = vl;
      sb += 2;
      uint32_t n = (uint32_t)vl;
      st = tl_buf_append(out, (const char *)&n, 4);
      if (!st) st = tl_buf_append(out, v, (size_t)n + 1);
    } else {
      st = tl_buf_append(out, col->type == TL_COL_I64 ? (const char *)&col->v.i[row] : (const char *)&col->v.f[row], 8);
    }
  }
  if (!st && out->len - 4 > UINT32_MAX) st = TL_EINTERNAL;
  len = (uint32_t)(out->len - 4);
  if (!st) memcpy(out->data, &len, 4);
  return st;
}

/* Reads n bytes at off of rank q's spill file (descriptor fd) into dst, through the
 * read-ahead. 0 ok, -1 on a read error, a file cut short or no memory. */
static int spill_read(window_ctx *c, int q, int fd, uint64_t off, void *dst, size_t n) {
  int nomem;
  const char *p = tl_rdahead_at(&c->ra, q, fd, off, n, &nomem);
  if (!p) return -1;
  memcpy(dst, p, n);
  return 0;
}

/* The window's rows from the spilled item-table rows (every unit of the window has one): read
 * into the arena, then the cells borrowed from it. */
static tl_table *window_from_spill(window_ctx *c, uint64_t first, uint64_t n) {
  bench_run *r = c->r;
  const int w = c->h->w;
  tl_buf_reset(&c->arena);
  if (n > c->at_cap) {
    size_t *p = realloc(c->at, n * sizeof *p);
    if (!p) {
      c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory for a window of rows");
      return NULL;
    }
    c->at = p;
    c->at_cap = n;
  }
  size_t *at = c->at;
  for (uint64_t i = 0; i < n && !c->st; i++) {
    const uint64_t ref = c->h->rec[(first + i) * (uint64_t)w + 1];
    const int q = jref_file(ref);
    const uint64_t off = jref_off(ref);
    if (r->sp.spill_fd[q] < 0) {
      char *p = spill_path(r->sp.rows_dir, q);
      r->sp.spill_fd[q] = p ? open(p, O_RDONLY) : -1;
      if (r->sp.spill_fd[q] < 0)
        c->st = tl_err_set(&c->err, TL_EIO, "cannot read the rows of rank %d ('%s'): %s", q, p ? p : "?", strerror(errno));
      free(p);
      if (c->st) break;
    }
    uint32_t len;
    if (spill_read(c, q, r->sp.spill_fd[q], off, &len, 4) != 0) {
      c->st = tl_err_set(&c->err, TL_EIO, "the rows of rank %d are cut short", q);
      break;
    }
    at[i] = c->arena.len;
    if (tl_buf_extend(&c->arena, len) != TL_OK) { /* the bytes are read next */
      c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory for a window of rows");
      break;
    }
    if (spill_read(c, q, r->sp.spill_fd[q], off + 4, c->arena.data + at[i], len) != 0)
      c->st = tl_err_set(&c->err, TL_EIO, "the rows of rank %d are cut short", q);
  }
  if (!c->st && c->win) tl_table_clear(c->win);
  else if (!c->st) c->win = run_items_table(r, (size_t)(c->rb - r->rbs), NULL, NULL, 0, NULL);
  tl_table *t = c->st ? NULL : c->win;
  if (!c->st && !t) c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory building the item table");
  for (uint64_t i = 0; t && i < n && !c->st; i++) {
    size_t row = tl_table_add_row(t);
    if (row == (size_t)-1) {
      c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory building the item table");
      break;
    }
    const char *p = c->arena.data + at[i];
    for (int k = 0; k < t->ncols; k++) {
      if (tl_col_is_str(t->cols[k].type)) {
        uint32_t sl;
        memcpy(&sl, p, 4);
        tl_table_ref_strn(t, row, k, p + 4, sl);
        p += 4 + (size_t)sl + 1;
      } else if (t->cols[k].type == TL_COL_I64) {
        int64_t v;
        memcpy(&v, p, 8);
        tl_table_set_i64(t, row, k, v);
        p += 8;
      } else {
        double v;
        memcpy(&v, p, 8);
        tl_table_set_f64(t, row, k, v);
        p += 8;
      }
    }
  }
  if (c->st) return NULL; /* c->win is freed with the context */
  if (c->collect) run_collect_cells(c, t);
  return t;
}

/* Rows first .. first + n - 1 of the block. */
tl_table *run_window_fill(void *vctx, uint64_t first, uint64_t n) {
  window_ctx *c = vctx;
  return c->st ? NULL : window_from_spill(c, first, n);
}

/* Collective: rank 0 creates <output>.rows/ (its parent, the output's folder, is checked), then
 * every rank creates its file there (truncated: what an earlier, killed attempt left is
 * replaced) and notes every rank's (read when the tables are written). */
tl_status run_open_spill(bench_run *r, const char *output, MPI_Comm comm, tl_err *err) {
  tl_buf d;
  tl_buf_init(&d);
  tl_buf_printf(&d, "%s.rows", output);
  r->sp.rows_dir = tl_buf_detach(&d);
  tl_status st = r->sp.rows_dir ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory");
  if (!st && r->rank == 0 && mkdir(r->sp.rows_dir, 0777) != 0 && errno != EEXIST)
    st = tl_err_set(err, TL_EIO, "cannot create the folder '%s': %s", r->sp.rows_dir, strerror(errno));
  if ((st = tl_agree(st, err, comm))) return st;
  char *p = spill_path(r->sp.rows_dir, r->rank);
  r->sp.spill = p && !run_test_fail("spill", r->rank) ? fopen(p, "wb") : NULL;
  if (r->sp.spill && (r->sp.spill_vbuf = malloc(TL_JOURNAL_VBUF))) /* a row per unit: few, large writes */
    setvbuf(r->sp.spill, r->sp.spill_vbuf, _IOFBF, TL_JOURNAL_VBUF);
  if (r->sp.spill) { /* a signal after scoring removes it (on_signal_late) */
    snprintf(g_spill_path, sizeof g_spill_path, "%s", p);
    if (r->rank == 0) snprintf(g_rows_dir, sizeof g_rows_dir, "%s", r->sp.rows_dir);
  }
  r->sp.spill_fd = malloc((size_t)r->nranks * sizeof *r->sp.spill_fd);
  for (int q = 0; r->sp.spill_fd && q < r->nranks; q++) r->sp.spill_fd[q] = -1;
  if (!r->sp.spill || !r->sp.spill_fd)
    st = tl_err_set(err, TL_EIO, "cannot create '%s': %s", p ? p : r->sp.rows_dir, strerror(errno));
  free(p);
  return tl_agree(st, err, comm);
}

/* Rank 0, once every rank has closed its file: the spilled rows and their folder go. */
void run_remove_spill(const char *dir, FILE *log) {
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n > 4 && strcmp(e->d_name + n - 4, ".bin") == 0) {
      tl_buf p;
      tl_buf_init(&p);
      tl_buf_printf(&p, "%s/%s", dir, e->d_name);
      if (p.data && unlink(p.data) != 0) fprintf(log, "tally: cannot remove '%s': %s\n", p.data, strerror(errno));
      tl_buf_release(&p);
    }
  }
  if (d) closedir(d);
  if (rmdir(dir) != 0 && errno != ENOENT) fprintf(log, "tally: cannot remove the folder '%s': %s\n", dir, strerror(errno));
}
