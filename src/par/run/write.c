/* write.c - per benchmark: rows to their owners, accumulators reduced, item and metric tables written, study columns gathered. */
#include "run.h"

#include <limits.h>

#include "tally/workshare.h"

/* Appends the cells of table t's columns (as text) to each study's collector. */
void run_collect_cells(window_ctx *c, const tl_table *t) {
  for (int k = 0; k < c->nstudy && !c->st; k++) {
    struct study_cols *x = &c->sc[k];
    for (size_t r = 0; r < t->nrows && !c->st; r++)
      for (int j = 0; j < x->ncols && !c->st; j++) {
        const tl_col *col = &t->cols[x->col[j]];
        char num[40];
        const char *v = num;
        if (tl_col_is_str(col->type)) v = col->v.s[r];
        else if (col->type == TL_COL_I64) snprintf(num, sizeof num, "%lld", (long long)col->v.i[r]);
        else snprintf(num, sizeof num, "%.17g", col->v.f[r]);
        if (tl_buf_append(&x->cells, v, strlen(v) + 1)) c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory");
      }
  }
}

/* The item table columns study js needs (those of its columns the table has): in x. */
static void study_columns(const tl_job_study *js, const tl_table *schema, struct study_cols *x) {
  x->ncols = 0;
  const char *lists[8] = {js->metrics, js->human, js->group_by, js->on,
                          js->cluster ? js->cluster : "id", js->system ? js->system : "model",
                          js->agreement, js->agreement_cluster};
  for (int l = 0; l < 8; l++) {
    const char *p = lists[l];
    while (p && *p) {
      const char *e = strpbrk(p, ",;"); /* (agreement: lists ';'-joined) */
      size_t n = e ? (size_t)(e - p) : strlen(p);
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)(n < 255 ? n : 255), p);
      int c = tl_table_col(schema, name), dup = 0;
      for (int j = 0; j < x->ncols; j++) dup |= x->col[j] == c;
      if (c >= 0 && !dup && x->ncols < 64) x->col[x->ncols++] = c;
      p = e ? e + 1 : NULL;
    }
  }
}

/* Collective: study k's cells of every rank to rank 0 (rank order is key order), as a table. */
static tl_status gather_study(const struct study_cols *x, const tl_table *schema, const char *bench, uint64_t U,
                              MPI_Comm comm, tl_tabin *out, tl_err *err) {
  const int rank = tl_comm_rank(comm);
  memset(out, 0, sizeof *out);
  char what[300], *all = NULL;
  size_t total = 0;
  snprintf(what, sizeof what, "the study's columns of '%s'", bench);
  tl_status st = run_gather_bytes(x->cells.data, x->cells.len, what, comm, &all, &total, err);
  if (!st && rank == 0) {
    tl_buf p;
    tl_buf_init(&p);
    tl_buf_printf(&p, "/items/%s", bench);
    out->path = tl_buf_detach(&p);
    out->ncols = x->ncols;
    out->colnames = calloc((size_t)x->ncols + 1, sizeof *out->colnames);
    out->cells = calloc(U ? U : 1, sizeof *out->cells);
    out->line = calloc(U ? U : 1, sizeof *out->line);
    if (!out->path || !out->colnames || !out->cells || !out->line) st = tl_err_set(err, TL_ENOMEM, "out of memory");
    for (int j = 0; !st && j < x->ncols; j++)
      if (!(out->colnames[j] = tl_strdup(schema->cols[x->col[j]].name))) st = TL_ENOMEM;
    const char *c = all, *end = all + total;
    for (uint64_t r = 0; !st && r < U; r++) {
      char **row = calloc((size_t)x->ncols + 1, sizeof *row);
      if (!row) { st = TL_ENOMEM; break; }
      out->cells[out->nrows] = row;
      out->line[out->nrows] = (long)(r + 1); /* "line" = the unit's row in /items/<bench>, from 1 */
      out->nrows++;
      for (int j = 0; j < x->ncols && !st; j++) {
        if (c >= end) { st = TL_EINTERNAL; break; }
        size_t n = strlen(c);
        if (!(row[j] = tl_strndup(c, n))) st = TL_ENOMEM;
        c += n + 1;
      }
    }
    if (st) {
      tl_err_set(err, st, "cannot build the study table of '%s'", bench);
      tl_tabin_release(out);
    }
  }
  free(all);
  return st;
}

static void free_tables(tl_table **t, int n) {
  for (int k = 0; t && k < n; k++) tl_table_free(t[k]);
  free(t);
}

/* The message of a failed tables hook: TL_ENOMEM; TL_EINTERNAL when the ranks' shared tasks
 * disagree (tally/workshare.h); any other status is the module's, which said why on rank 0's
 * stream. */
static tl_status tables_failed(tl_status st, tl_err *err) {
  if (st == TL_EINTERNAL)
    return tl_err_set(err, st, "internal error: the result tables asked for other tasks on rank 0 than on the ranks "
                               "that computed them (tally/workshare.h)");
  if (st == TL_ENOMEM) return tl_err_set(err, st, "out of memory building result tables");
  return tl_err_set(err, st, "the result tables cannot be built (the reason is above)");
}

/* Collective: benchmark b's accumulators reduced (tot[k], *nblk blocks; every rank allocates
 * them; rank 0's hold the sums, every rank's on 2 or more ranks) and its metric tables built on
 * rank 0 (*tabs, *ntabs). On 2 or more ranks the costly steps of the module's tables hook (headline
 * CIs, model comparisons) are shared (tally/workshare.h): every rank gets the counts and runs the
 * hook, computing its share of the tasks (its tables are dropped); the results are gathered to
 * rank 0, whose second run of the hook replays them. The tables are the same bits as one rank's.
 * Agreed status. */
static tl_status reduce_tables(bench_run *r, size_t b, MPI_Comm comm, tl_table ***tabs, int *ntabs, int64_t **tot,
                               int *nblk, tl_err *err) {
  const tl_run_bench *rb = &r->rbs[b];
  const tl_acc_block *lay = r->tal.lay[b];
  const int shared = r->nranks > 1;
  *nblk = r->tal.nblk[b];
  tl_status st = TL_OK;
  for (int k = 0; k < *nblk; k++)
    if (!(tot[k] = malloc((lay[k].len ? lay[k].len : 1) * sizeof **tot))) st = tl_err_set(err, TL_ENOMEM, "out of memory for the counts");
  if ((st = tl_agree(st, err, comm))) return st; /* before the collective reduce below */
  if ((st = tl_agree(run_reduce_acc(lay, *nblk, r->tal.acc[b], tot, shared, comm, err), err, comm))) return st;
  if (!shared) {
    if ((st = rb->vt->tables(rb->b, rb->cfgs, rb->ncfgs, tot, tabs, ntabs)) != TL_OK) st = tables_failed(st, err);
    return tl_agree(st, err, comm);
  }
  /* pass 1, every rank: its share of the tasks */
  unsigned char *kept = NULL;
  size_t nkept = 0;
  tl_table **t1 = NULL;
  int n1 = 0;
  st = tl_ws_begin(TL_WS_COMPUTE, r->rank, r->nranks, NULL, 0);
  if (!st) st = rb->vt->tables(rb->b, rb->cfgs, rb->ncfgs, tot, &t1, &n1);
  tl_status st2 = tl_ws_end(&kept, &nkept);
  free_tables(t1, n1);
  if (!st) st = st2;
  if (st) st = tables_failed(st, err);
  /* the kept results to rank 0 */
  char *all = NULL;
  size_t total = 0;
  if (!(st = tl_agree(st, err, comm))) st = run_gather_bytes(kept, nkept, "the tables' shared results", comm, &all, &total, err);
  free(kept);
  /* pass 2, rank 0: the tables, every task replayed */
  if (!st && r->rank == 0) {
    st = tl_ws_begin(TL_WS_REPLAY, 0, r->nranks, (const unsigned char *)all, total);
    if (!st) st = rb->vt->tables(rb->b, rb->cfgs, rb->ncfgs, tot, tabs, ntabs);
    st2 = tl_ws_end(NULL, NULL);
    if (!st) st = st2;
    if (st) {
      free_tables(*tabs, *ntabs);
      *tabs = NULL;
      *ntabs = 0;
      st = tables_failed(st, err);
    }
  }
  free(all);
  return tl_agree(st, err, comm);
}

/* The studies over benchmark rb's own columns: what each needs of the item table (schema). */
static tl_status studies_init(window_ctx *wc, const tl_job *job, const tl_table *schema, tl_err *err) {
  wc->sc = calloc((size_t)job->n_studies + 1, sizeof *wc->sc);
  if (!wc->sc) return tl_err_set(err, TL_ENOMEM, "out of memory");
  for (int k = 0; k < job->n_studies; k++)
    if (job->studies[k].from && strcmp(job->studies[k].from, wc->rb->vt->name) == 0) {
      struct study_cols *x = &wc->sc[wc->nstudy++];
      x->study = k;
      tl_buf_init(&x->cells);
      study_columns(&job->studies[k], schema, x);
    }
  return TL_OK;
}

static void window_ctx_release(window_ctx *wc) {
  for (int k = 0; wc->sc && k < wc->nstudy; k++) tl_buf_release(&wc->sc[k].cells);
  free(wc->sc);
  tl_buf_release(&wc->arena);
  tl_table_free(wc->win);
  free(wc->at);
  tl_rdahead_release(&wc->ra);
}

/* Collective: this block's string bytes (summed) and longest values (the largest) over the
 * ranks that finished its units, for write_rows' str_stats (one pass): *sb (malloc'd, 2 nstr
 * values; the caller frees it). Agreed status. */
static tl_status str_stats(bench_run *r, size_t b, MPI_Comm comm, uint64_t **sbp, tl_err *err) {
  const int ns = 2 * r->sp.nstr[b];
  uint64_t *sb = calloc((size_t)ns + 1, sizeof *sb), *mx = calloc((size_t)ns + 1, sizeof *mx);
  tl_status st = !sb || !mx ? tl_err_set(err, TL_ENOMEM, "out of memory") : TL_OK;
  if (!(st = tl_agree(st, err, comm)) && ns) {
    st = TL_MPI(err, MPI_Reduce_scatter_block(r->sp.strb[b], sb, ns, MPI_UINT64_T, MPI_SUM, comm));
    if (!st) st = TL_MPI(err, MPI_Reduce_scatter_block(r->sp.strb[b], mx, ns, MPI_UINT64_T, MPI_MAX, comm));
    for (int k = 1; !st && k < ns; k += 2) sb[k] = mx[k];
    st = tl_agree(st, err, comm);
  }
  free(mx);
  if (st) free(sb), sb = NULL;
  *sbp = sb;
  return st;
}

/* Collective: benchmark b's item table, written window by window from the spilled rows, and the
 * columns of the studies over it gathered to rank 0 (stabs[study]). Agreed status. */
static tl_status write_items(const tl_run_opts *o, bench_run *r, size_t b, tl_writer *w, const tl_table *schema,
                             MPI_Comm comm, tl_tabin *stabs, tl_err *err) {
  (void)o;
  const tl_run_bench *rb = &r->rbs[b];
  window_ctx wc;
  memset(&wc, 0, sizeof wc);
  tl_rdahead_init(&wc.ra);
  wc.r = r;
  wc.rb = rb;
  wc.h = &r->sp.held[b];
  uint64_t *sb = NULL;
  tl_status st = tl_agree(studies_init(&wc, r->job, schema, err), err, comm);
  if (!st) st = str_stats(r, b, comm, &sb, err);
  if (!st) {
    wc.collect = 1; /* fill runs once per window */
    if (run_test_fail("write", r->rank)) wc.st = tl_err_set(&wc.err, TL_EIO, "cannot read the rows of rank %d: test failure (TALLY_TEST_FAIL)", r->rank);
    /* (a failed fill gives the writer a NULL table: the write fails on every rank, agreed inside) */
    st = w->vt->write_rows(w, schema, tl_block_lo(rb->U, r->rank, r->nranks), wc.h->n, rb->U, sb, run_window_fill, &wc, err);
    /* a failed fill is the cause, rather than what the writer then says: agreed first */
    tl_status fill = tl_agree(wc.st, &wc.err, comm);
    if (fill) *err = wc.err, st = fill;
    else st = tl_agree(st, err, comm);
  }
  free(sb);
  for (int k = 0; k < wc.nstudy && !st; k++) {
    st = gather_study(&wc.sc[k], schema, rb->vt->name, rb->U, comm, &stabs[wc.sc[k].study], err);
    st = tl_agree(st, err, comm); /* every rank stops here together */
  }
  window_ctx_release(&wc);
  return st;
}

/* Collective: benchmark b's rows to their owners, its accumulators reduced to rank 0 (tot,
 * *nblk: the caller frees tot[k]), its metric tables built there (*tabs, *ntabs: rank 0, the
 * caller frees them) and every table written. Agreed status. */
tl_status run_write_bench(const tl_run_opts *o, bench_run *r, size_t b, tl_writer *w, MPI_Comm comm,
                          tl_table ***tabs, int *ntabs, int64_t **tot, int *nblk, tl_tabin *stabs, tl_err *err) {
  held_rows *h = &r->sp.held[b];
  tl_status st = tl_agree(run_redistribute(&r->rbs[b], h, comm, err), err, comm);
  if (!st) st = reduce_tables(r, b, comm, tabs, ntabs, tot, nblk, err);
  /* the item table's schema: its columns, from a table of no rows */
  tl_table *schema = st ? NULL : run_items_table(r, b, NULL, NULL, 0, NULL);
  if (!st && !schema) st = tl_err_set(err, TL_ENOMEM, "out of memory building result tables");
  if (!(st = tl_agree(st, err, comm))) st = write_items(o, r, b, w, schema, comm, stabs, err);
  tl_table_free(schema);
  if (st) return st;
  run_test_pause(r->rank, "write", o->log);
  int nt = *ntabs;
  st = TL_MPI(err, MPI_Bcast(&nt, 1, MPI_INT, 0, comm));
  for (int k = 0; k < nt && !st; k++) st = w->vt->write_table(w, r->rank == 0 ? (*tabs)[k] : NULL, err);
  /* the units are written: they leave memory now */
  free(h->rec);
  h->rec = NULL;
  h->n = h->cap = 0;
  return tl_agree(st, err, comm);
}

/* "parsers" attribute: the modes of each benchmark, primary first ("strict,pr3,legacy"; with
 * several benchmarks "spatialeval:strict,pr3;other:rating"). */
void run_modes_attr(const bench_run *r, tl_buf *out) {
  for (size_t b = 0; b < r->nb; b++) {
    const tl_run_bench *rb = &r->rbs[b];
    if (r->nb > 1) tl_buf_printf(out, "%s%s:", b ? ";" : "", rb->vt->name);
    for (int k = 0; k < rb->nmodes; k++) tl_buf_printf(out, "%s%s", k ? "," : "", rb->vt->mode_name(rb->b, k));
  }
}

void run_print_input_problems(FILE *out, const tl_inlog *log) {
  if (log->total) {
    fprintf(out, "bad input lines: %ld (", log->total);
    int first = 1;
    for (int k = 0; k < TL_IN__NKINDS; k++)
      if (log->counts[k]) {
        fprintf(out, "%s%s=%ld", first ? "" : ", ", tl_in_kind_name((tl_in_kind)k), log->counts[k]);
        first = 0;
      }
    fprintf(out, "); see /input_problems in the output\n");
  } else {
    fprintf(out, "bad input lines: 0\n");
  }
}
