/* resume.c - restoring units from the journals of earlier attempts (and of a merge's inputs); this attempt's journal. */
#include "run.h"

static void resume_ctx_release(resume_ctx *c, size_t nb) {
  for (size_t b = 0; b < nb; b++) {
    if (c->part && c->part[b])
      for (uint64_t i = 0; i < c->hi[b] - c->lo[b]; i++)
        if (c->mask[b][i]) tl_row_release(&c->part[b][i]);
    if (c->part) free(c->part[b]);
    if (c->mask) free(c->mask[b]);
    if (c->from) free(c->from[b]);
    if (c->ovl) free(c->ovl[b]);
    if (c->cfg_of) tl_strmap_release(&c->cfg_of[b]);
  }
  free(c->part);
  free(c->mask);
  free(c->from);
  free(c->ovl);
  tl_buf_release(&c->example);
  tl_buf_release(&c->stale_example);
  free(c->cfg_of);
  free(c->lo);
  free(c->hi);
  memset(c, 0, sizeof *c);
}

/* The context of reading: this rank's key blocks, their rows and masks, the cfgs by key. An
 * allocation failure is TL_ENOMEM (the context is then released by the caller all the same). */
static tl_status ctx_init(resume_ctx *c, const tl_run_opts *o, bench_run *r, uint8_t *done, tl_err *err) {
  memset(c, 0, sizeof *c);
  c->r = r;
  c->done = done;
  c->merge = r->merging;
  c->overlap = o->overlap;
  c->inputs = o->merge;
  tl_buf_init(&c->example);
  tl_buf_init(&c->stale_example);
  c->cfg_of = calloc(r->nb, sizeof *c->cfg_of);
  c->lo = calloc(r->nb, sizeof *c->lo);
  c->hi = calloc(r->nb, sizeof *c->hi);
  c->part = calloc(r->nb, sizeof *c->part);
  c->mask = calloc(r->nb, sizeof *c->mask);
  c->from = calloc(r->nb, sizeof *c->from);
  c->ovl = calloc(r->nb, sizeof *c->ovl);
  int bad = !c->cfg_of || !c->lo || !c->hi || !c->part || !c->mask || !c->from || !c->ovl;
  for (size_t b = 0; !bad && b < r->nb; b++) {
    const tl_run_bench *rb = &r->rbs[b];
    tl_strmap_init(&c->cfg_of[b]);
    c->lo[b] = tl_block_lo(rb->U, r->rank, r->nranks);
    c->hi[b] = tl_block_lo(rb->U, r->rank + 1, r->nranks);
    size_t n = (size_t)(c->hi[b] - c->lo[b]);
    c->part[b] = calloc(n ? n : 1, sizeof **c->part);
    c->mask[b] = calloc(n ? n : 1, 1);
    bad |= !c->part[b] || !c->mask[b];
    if (c->merge) {
      c->from[b] = calloc(n ? n : 1, sizeof **c->from);
      c->ovl[b] = calloc(n ? n : 1, 1);
      bad |= !c->from[b] || !c->ovl[b];
    }
    for (size_t k = 0; !bad && k < rb->ncfgs; k++) {
      tl_buf kb;
      tl_buf_init(&kb);
      bad |= tl_buf_printf(&kb, "%s\x1f%d\x1f%d", rb->cfgs[k].model, rb->cfgs[k].variant, rb->cfgs[k].seed) != TL_OK ||
             tl_strmap_put(&c->cfg_of[b], kb.data, k, NULL, NULL) != TL_OK;
      tl_buf_release(&kb);
    }
  }
  return bad ? tl_err_set(err, TL_ENOMEM, "out of memory reading the journal") : TL_OK;
}

/* Collective: the earlier attempts' journal folders dirs[d] (job hashes hashes[d]), read by every
 * rank (each keeps the records of its own key blocks). Counts into nf, nrec, nskip. Agreed. */
static tl_status read_dirs(const tl_run_opts *o, resume_ctx *c, const char *const *dirs, const char *const *hashes,
                           int ndirs, long *nf, long *nrec, long *nskip, MPI_Comm comm, tl_err *err) {
  bench_run *r = c->r;
  tl_status st = TL_OK;
  for (int d = 0; d < ndirs && !st; d++) {
    /* the earlier attempts' files, numbered as tl_journal_read_all numbers them */
    int nold = 0;
    char **old = NULL;
    st = tl_journal_files(dirs[d], &old, &nold, err);
    c->input = d;
    c->file_base = r->jf.n;
    for (int i = 0; i < nold && !st; i++)
      if (tl_jfiles_add(&r->jf, old[i], NULL)) st = tl_err_set(err, TL_ENOMEM, "out of memory reading the journal");
    for (int i = 0; i < nold; i++) free(old[i]);
    free(old);
    if ((st = tl_agree(st, err, comm))) return st;
    long f1 = 0, n1 = 0, k1 = 0;
    tl_err e = {{0}};
    st = tl_journal_read_all(dirs[d], hashes[d], run_on_journal_rec, c, &f1, &n1, &k1, &e);
    *nf += f1;
    *nrec += n1;
    *nskip += k1;
    if (st)
      tl_err_set(err, st, "%s%s%s", c->merge ? o->merge[d].name : "", c->merge ? ": " : "", e.msg[0] ? e.msg : tl_strerror(st));
    st = tl_agree(st, err, comm);
  }
  return st;
}

/* Collective, tally merge: units two inputs hold are said, and refused (TL_EUSAGE, said here)
 * unless the user chose which to keep. */
static tl_status merge_overlaps(const tl_run_opts *o, resume_ctx *c, MPI_Comm comm, tl_err *err) {
  const int rank = c->r->rank, nranks = c->r->nranks;
  uint64_t mine[2] = {c->overlaps, c->conflicts}, all[2];
  int who = c->example.len ? rank : nranks, first = nranks;
  tl_status st = TL_MPI(err, MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, comm));
  if (!st) st = TL_MPI(err, MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, comm));
  if (st) return st; /* (an MPI failure is the same on every rank) */
  const int refuse = (all[0] && o->overlap == TL_OVERLAP_ERROR) || all[1];
  if (all[0] && rank == first)
    fprintf(o->log, "tally: %s: %s%s\n", refuse ? "cannot merge" : "merge", c->example.data,
            refuse && !all[1] ? "; pass --overlap first|last|identical to say which to keep" : "");
  if (all[0] && rank == 0)
    fprintf(o->log, "tally: merge: %llu unit%s held by more than one input (--overlap %s)\n",
            (unsigned long long)all[0], all[0] == 1 ? "" : "s",
            (const char *const[]){"error", "first", "last", "identical"}[o->overlap]);
  if (all[1] && rank == 0) fprintf(o->log, "tally: merge: %llu of them with different replies (--overlap identical "
                                           "keeps only copies that agree)\n", (unsigned long long)all[1]);
  return refuse ? TL_EUSAGE : TL_OK; /* (the same on every rank: err stays empty, said above) */
}

/* Collective: the records whose answers line changed since they were journaled (their units are
 * done again), said once on the log: how many, and the first rank's first one. Agreed. */
static tl_status said_stale(const tl_run_opts *o, resume_ctx *c, MPI_Comm comm, tl_err *err) {
  uint64_t all = 0;
  int who = c->stale ? c->r->rank : c->r->nranks, first = c->r->nranks;
  tl_status st = TL_MPI(err, MPI_Allreduce(&c->stale, &all, 1, MPI_UINT64_T, MPI_SUM, comm));
  if (!st) st = TL_MPI(err, MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, comm));
  if (!st && all && c->r->rank == first)
    fprintf(o->log, "tally: resume: %llu journaled repl%s changed in the answers file since (first: %s): %s done "
                    "again\n", (unsigned long long)all, all == 1 ? "y" : "ies",
            c->stale_example.data ? c->stale_example.data : "?", all == 1 ? "its unit is" : "their units are");
  return tl_agree(st, err, comm);
}

/* This rank's restored rows: the fully recorded units are scored at once, the partly recorded
 * ones started at their next stage (their replies come during scheduling); a unit with only a
 * later stage recorded is dealt again (done[g] = 0). Local. */
static tl_status restore_rows(resume_ctx *c, uint8_t *done, tl_err *err) {
  bench_run *r = c->r;
  tl_status st = TL_OK;
  for (size_t b = 0; b < r->nb && !st; b++) {
    const int ns = r->rbs[b].nstages;
    for (uint64_t i = 0; i < c->hi[b] - c->lo[b] && !st; i++) {
      uint8_t m = c->mask[b][i];
      if (!m) continue;
      tl_row *row = &c->part[b][i];
      int d = 0;
      while (d < ns && (m & (1u << d))) d++;
      for (int s = d; s < ns; s++) { /* a later stage without the ones before it: asked again */
        const char *t0;
        tl_reply_ref r0;
        run_pref_take(&r->sp, r->rbs[b].base + c->lo[b] + i, s, &t0, &r0); /* its reference goes too */
        free(row->text[s]);
        free(row->prompt[s]);
        free(row->source[s]);
        row->text[s] = row->prompt[s] = row->source[s] = NULL;
      }
      c->mask[b][i] = 0; /* the row is taken below */
      uint64_t g = r->rbs[b].base + c->lo[b] + i;
      if (d == 0) {
        done[g] = 0; /* nothing usable: dealt again (every rank computes the same) */
        for (int s = 0; s < ns; s++) { /* (the texts freed with the row: their references go) */
          const char *t0;
          tl_reply_ref r0;
          run_pref_take(&r->sp, g, s, &t0, &r0);
        }
        tl_row_release(row);
        continue;
      }
      row->done = (uint8_t)d;
      for (int s = 0; s < d; s++) r->tal.resumed[s]++;
      if (d == ns) r->tal.restored++;
      st = tl_pipe_start(r->pipe, g, row, err);
      if (st && !err->msg[0]) tl_err_set(err, st, "%s", tl_strerror(st));
    }
  }
  return st;
}

/* Collective: done[] combined over the ranks with op (MPI_BOR, MPI_BAND), 2^30 bytes a call. */
static tl_status done_combine(uint8_t *done, uint64_t U, MPI_Op op, MPI_Comm comm, tl_err *err) {
  tl_status st = TL_OK;
  for (uint64_t off = 0; !st && off < U; off += (1u << 30)) {
    uint64_t k = U - off < (1u << 30) ? U - off : (1u << 30);
    st = TL_MPI(err, MPI_Allreduce(MPI_IN_PLACE, done + off, (int)k, MPI_UINT8_T, op, comm));
  }
  return st;
}

/* Collective. Reads the journals of earlier attempts: every rank rebuilds the rows of its own
 * key blocks (so no rank holds, or sends, the whole restored run); the done-bitmaps are OR-ed.
 * Fully recorded units are scored at once; partly recorded ones are started at their next stage
 * (their replies come during scheduling). (tally merge reads every input's journal, in the
 * merge's order, the same way: the records of o->merge[d] come from dirs[d] with hashes[d]; a
 * record of a unit that an earlier input holds is an overlap, handled by o->overlap.) Agreed. */
tl_status run_resume_read(const tl_run_opts *o, bench_run *r, const char *const *dirs, const char *const *hashes,
                          int ndirs, uint8_t *done, MPI_Comm comm, tl_err *err) {
  resume_ctx c;
  tl_status st = tl_agree(ctx_init(&c, o, r, done, err), err, comm);
  long nf = 0, nrec = 0, nskip = 0;
  if (!st && c.merge) st = run_merge_exchange(o, r, &c, comm, &nf, &nrec, &nskip, err); /* (agreed) */
  else if (!st) st = read_dirs(o, &c, dirs, hashes, ndirs, &nf, &nrec, &nskip, comm, err);
  if (!st && c.merge) st = merge_overlaps(o, &c, comm, err);
  if (!st) st = tl_agree(done_combine(done, r->U, MPI_BOR, comm, err), err, comm);
  if (!st) st = tl_agree(restore_rows(&c, done, err), err, comm);
  if (!st) st = said_stale(o, &c, comm, err);
  resume_ctx_release(&c, r->nb);
  /* a unit with only a later stage recorded is dealt again: every rank must agree on done[] */
  if (!st) st = tl_agree(done_combine(done, r->U, MPI_BAND, comm, err), err, comm);
  uint64_t restored = r->tal.restored, all = 0;
  if (!st) st = tl_agree(TL_MPI(err, MPI_Allreduce(&restored, &all, 1, MPI_UINT64_T, MPI_SUM, comm)), err, comm);
  if (!st && r->rank == 0 && !o->quiet)
    fprintf(o->log, "tally: %s: %llu of %llu units %s (%ld journal file%s, %ld line%s skipped)\n",
            r->merging ? "merge" : "resume", (unsigned long long)all, (unsigned long long)r->U,
            r->merging ? "recorded" : "already done", nf, nf == 1 ? "" : "s", nskip, nskip == 1 ? "" : "s");
  return st;
}

/* Collective: this attempt's journal (a new file per rank, named by rank 0's time and pid), and
 * every rank's file of it added to r->jf (the texts are read back from them when the tables are
 * written). Agreed status. */
tl_status run_open_attempt(bench_run *r, tl_journal *jn, const char *jdir, const char *jhash, MPI_Comm comm,
                           tl_err *err) {
  const int rank = r->rank, nranks = r->nranks;
  char attempt[64] = "";
  if (rank == 0) {
    time_t t = time(NULL);
    struct tm tmv;
    gmtime_r(&t, &tmv);
    char ts[32];
    strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tmv);
    snprintf(attempt, sizeof attempt, "%s-%ld", ts, (long)getpid());
  }
  tl_status st = TL_MPI(err, MPI_Bcast(attempt, sizeof attempt, MPI_CHAR, 0, comm));
  if (!st && rank == 0 && mkdir(jdir, 0777) != 0 && errno != EEXIST) /* (its parent: the output's folder, checked) */
    st = tl_err_set(err, TL_EIO, "cannot create the journal folder '%s': %s", jdir, strerror(errno));
  if ((st = tl_agree(st, err, comm))) return st;
  st = tl_journal_open(jn, jdir, attempt, rank, jhash, err);
  for (int q = 0; q < nranks && !st; q++) {
    char *path = tl_journal_path(jdir, attempt, q);
    if (!path || tl_jfiles_add(&r->jf, path, NULL)) st = tl_err_set(err, TL_ENOMEM, "out of memory");
    free(path);
  }
  return tl_agree(st, err, comm);
}
