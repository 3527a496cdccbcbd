/* benchmarks.c - the benchmarks part of a run, phase after phase: setup, restore/resume, schedule, write. */
#include "run.h"
int run_benchmarks(const tl_run_opts *o, const tl_job *job, tl_writer *w, const char *output,
                          MPI_Comm comm, run_counts *rcnt, tl_tabin *stabs /* [n_studies]: rank 0, the tables
                          of studies over the run's own columns */) {
  double t_start = run_now_s(), t_scored = 0;
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  int rc = TL_EXIT_OK;
  tl_err err = {{0}};
  tl_inlog log;
  bench_run r;
  memset(&r, 0, sizeof r);
  uint8_t *done = NULL;
  uint64_t *pending = NULL;
  char *jdir = tl_journal_dir(output);
  char jhash[TL_JOB_HASH_LEN];
  tl_journal_job_hash(job->json, jhash);
  tl_journal jn;
  memset(&jn, 0, sizeof jn);
  r.jn = &jn;
  if (run_agree(tl_inlog_init(&log, rank == 0 ? o->log : NULL, o->strict_input) != TL_OK, comm)) {
    free(jdir);
    tl_inlog_release(&log);
    return TL_EXIT_FAIL;
  }

  /* 1. inputs and units, on every rank */
  tl_status st = run_bench_setup(o, &r, job, rank, nranks, comm, &log, &err);
  r.jn = &jn;
  if (!st && !(r.pipe = tl_pipe_new(r.rbs, r.nb, run_on_submit, run_on_unit_done, &r))) st = tl_err_set(&err, TL_ENOMEM, "out of memory");
  if (st == TL_EINPUT) {
    if (rank == 0) fprintf(o->log, "tally: stopped at the first input problem (--strict-input); nothing written\n");
    rc = TL_EXIT_BAD_INPUT;
  } else if (st == TL_EJOB) {
    if (rank == 0) fprintf(o->log, "tally: %s; nothing was run\n", err.msg);
    rc = TL_EXIT_USAGE;
  } else if (st) {
    if (rank) fprintf(o->log, "tally: rank %d: %s\n", rank, err.msg[0] ? err.msg : tl_strerror(st));
    else fprintf(o->log, "tally: %s\n", err.msg[0] ? err.msg : tl_strerror(st));
    rc = TL_EXIT_FAIL;
  }
  rc = run_agree(rc, comm);
  if (rc) goto done;
  /* what each input file gave, matched and rejected; too many rejected lines, or nothing to
   * run, stop here, before any engine is asked (every rank read the same inputs: the same
   * decision everywhere, no collective needed) */
  if (rank == 0) tl_inlog_flush(&log);
  if (!r.merging) {
    if (tl_inlog_files(&log, rank == 0 && !o->quiet ? o->log : NULL, rank == 0 ? o->log : NULL, job->max_rejected)) {
      rc = TL_EXIT_BAD_INPUT;
      goto done;
    }
    if (r.U == 0) {
      if (rank == 0) run_nothing_to_run(o->log, &r, &log);
      rc = TL_EXIT_BAD_INPUT;
      goto done;
    }
  }
  /* the HTTP engines: opened on every rank, their endpoints healthy before any work starts */
  if (!r.merging && (rc = tl_http_open(job, o->cache_dir, NULL, &g_stop, comm, o->log, r.en.http))) goto done;
  for (int k = 0; k < TL_ROLE__N; k++)
    if (r.en.http[k]) r.en.eng[k] = tl_openai_engine(r.en.http[k]);
  {
    uint64_t mine[2] = {r.U, 0}, lo[2], hi[2];
    for (size_t b = 0; b < r.nb; b++) mine[1] += r.rbs[b].ncfgs;
    MPI_Allreduce(mine, lo, 2, MPI_UINT64_T, MPI_MIN, comm);
    MPI_Allreduce(mine, hi, 2, MPI_UINT64_T, MPI_MAX, comm);
    if (lo[0] != hi[0] || lo[1] != hi[1]) {
      if (rank == 0) fprintf(o->log, "tally: the ranks read different inputs (files changed during start-up?)\n");
      rc = TL_EXIT_FAIL;
      goto done;
    }
  }
  /* the spilled item-table rows: <output>.rows/, one file per rank (before any unit finishes:
   * a resume scores the restored ones while it reads the journal) */
  if ((rc = run_open_spill(o, &r, output, comm))) goto done;
  /* 2. journals of earlier attempts */
  done = calloc(r.U ? r.U : 1, 1);
  rc = run_agree(done ? TL_EXIT_OK : TL_EXIT_FAIL, comm);
  if (rc) goto done;
  if (rank == 0 && !o->resume && !r.merging && tl_journal_exists(jdir)) {
    fprintf(o->log, "tally: '%s' holds the journal of an earlier, unfinished run of this output: "
                    "run with --resume to continue it, or remove the folder to start over\n", jdir);
    rc = TL_EXIT_USAGE;
  }
  rc = run_agree(rc, comm);
  if (rc) goto done;
  if (r.merging) {
    const char **dirs = calloc((size_t)o->n_merge, sizeof *dirs), **hs = calloc((size_t)o->n_merge, sizeof *hs);
    rc = run_agree(!dirs || !hs, comm) ? TL_EXIT_FAIL : TL_EXIT_OK;
    for (int d = 0; !rc && d < o->n_merge; d++) {
      dirs[d] = o->merge[d].journal_dir;
      hs[d] = o->merge[d].job_hash;
    }
    if (!rc) rc = run_resume_read(o, &r, dirs, hs, o->n_merge, done, comm);
    free(dirs);
    free(hs);
    if (rc) goto done;
  } else if (o->resume && (rc = run_resume_read(o, &r, (const char *const[]){jdir}, (const char *const[]){jhash}, 1, done,
                                            comm))) {
    goto done;
  }
  /* 3. this attempt's journal and the pending units */
  if (!r.merging && (rc = run_open_attempt(o, &r, &jn, jdir, jhash, comm))) goto done;
  uint64_t P = 0;
  pending = malloc((r.U ? r.U : 1) * sizeof *pending);
  if (run_agree(pending == NULL, comm)) {
    if (rank == 0) fprintf(o->log, "tally: out of memory for the unit list\n");
    rc = TL_EXIT_FAIL;
    goto done;
  }
  for (uint64_t u = 0; u < r.U; u++)
    if (!done[u]) pending[P++] = u;
  if (r.merging && P) { /* a cfg's unit that no input recorded: its run did not finish */
    if (rank == 0) {
      tl_unit_key k = run_unit_key(&r, pending[0], 0);
      fprintf(o->log, "tally: cannot merge: %llu unit%s of the merged job %s no record in any input (the first: "
                      "%s item '%s', model '%s', variant '%s', seed %d, sub %d); were those runs finished?\n",
              (unsigned long long)P, P == 1 ? "" : "s", P == 1 ? "has" : "have", k.bench, k.id, k.model, k.variant,
              k.seed, k.sub);
    }
    rc = TL_EXIT_USAGE;
    goto done;
  }
  /* 4. score: first the partly restored units of this rank, then the pending ones, dealt */
  double t_loaded = run_now_s();
  int interrupted = 0;
  uint64_t nchunks = 0;
  double sched_s = 0;
  st = run_drain_restored(&r, &err);
  progress pg = {o->log, isatty(fileno(o->log)), o->quiet || rank != 0, r.U, 0, 0, 0, run_now_s(), run_now_s()};
  if (rank == 0) pg.resumed = pg.done = r.U - P;
  if (st) { /* a rank that failed here still joins the run_schedule, so no rank waits on it */
    if (rank == 0) rc = TL_EXIT_FAIL;
  }
  {
    /* every rank: rank 0, failed, deals nothing (P = 0) and answers each worker's request with
     * "no more work", so the workers leave the run_schedule (it once skipped it, and a worker
     * waited for its answer while rank 0 waited in the next collective) */
    tl_status s2 = run_schedule(&r, pending, rank == 0 && st ? 0 : P, &pg, comm, &interrupted, &sched_s, &nchunks,
                            st ? &(tl_err){{0}} : &err);
    if (!st) st = s2;
  }
  if (g_stop && !st) interrupted = 1;
  {
    /* the last progress line: every rank's finished units (a worker finishes what it has in
     * flight after its last report to rank 0), each unit counted once where it finished */
    uint64_t mine[2] = {r.tal.finished, r.tal.failed}, all[2] = {0, 0};
    MPI_Reduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, 0, comm);
    if (rank == 0) {
      pg.done = all[0] > pg.done ? all[0] : pg.done;
      pg.failed = all[1];
      run_progress_show(&pg, 1);
    }
    double all_s = 0;
    MPI_Reduce(&sched_s, &all_s, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    rcnt->chunks = nchunks;
    rcnt->sched_s = all_s;
  }
  if (st) {
    fprintf(o->log, "tally: rank %d: %s%s\n", rank, err.msg,
            r.merging ? "" : " (finished units are in the journal; fix it and run with --resume)");
    rc = TL_EXIT_FAIL;
  }
  if (interrupted) rc = rc ? rc : TL_EXIT_INTERRUPTED;
  {
    int sig = (int)g_stop, maxsig = 0;
    MPI_Allreduce(&sig, &maxsig, 1, MPI_INT, MPI_MAX, comm);
    rc = run_agree(rc, comm);
    if (rc == TL_EXIT_INTERRUPTED && rank == 0 && r.merging)
      fprintf(o->log, "tally: interrupted by signal %d: nothing was written; run the merge again\n", maxsig);
    else if (rc == TL_EXIT_INTERRUPTED && rank == 0)
      fprintf(o->log, "tally: interrupted by signal %d: finished units are in '%s'; run again with --resume\n",
              maxsig, jdir);
  }
  /* Scoring is over: from here on a signal ends the process at once (the journal is complete,
   * so --resume redoes only the writing and the studies, with no engine call). */
  run_restore_signals();
  if (rc) goto done;
  /* every rank's rows on disk before any rank reads another's (a shared file system: the files
   * are flushed and synced, and opened for reading only after the collectives below) */
  {
    int bad = r.sp.spill && (fflush(r.sp.spill) != 0 || fsync(fileno(r.sp.spill)) != 0);
    if (bad) fprintf(o->log, "tally: rank %d: cannot write '%s': %s\n", rank, r.sp.rows_dir, strerror(errno));
    if ((rc = run_agree(bad ? TL_EXIT_FAIL : TL_EXIT_OK, comm))) goto done;
  }
  t_scored = run_now_s();
  run_sum_counts(&r, rcnt, comm);
  /* 5. per benchmark: rows to their owners, counts reduced, tables written */
  tl_buf modes;
  tl_buf_init(&modes);
  run_modes_attr(&r, &modes);
  int64_t nbad = log.total;
  MPI_Bcast(&nbad, 1, MPI_INT64_T, 0, comm);
  st = w->vt->attr_str(w, "parsers", modes.data ? modes.data : "", &err);
  tl_buf_release(&modes);
  if (!st) st = w->vt->attr_i64(w, "n_bad_input", nbad, &err);
  if (st) {
    if (rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
    rc = TL_EXIT_FAIL;
    goto done;
  }
  for (size_t b = 0; b < r.nb && !rc; b++) {
    tl_table **tabs = NULL;
    int ntabs = 0, nblk = 0;
    int64_t *tot[TL_MAX_ACC] = {0};
    rc = run_write_bench(o, &r, b, w, comm, &tabs, &ntabs, tot, &nblk, stabs);
    const tl_run_bench *rb = &r.rbs[b];
    if (!rc && rank == 0) {
      if (b) fprintf(o->out, "\n");
      rb->vt->summary(rb->b, rb->cfgs, rb->ncfgs, rb->U, tabs, ntabs, tot, o->out);
    }
    for (int k = 0; k < ntabs; k++) tl_table_free(tabs[k]);
    free(tabs);
    for (int k = 0; k < nblk; k++) free(tot[k]);
  }
  if (rc) goto done;
  st = w->vt->write_table(w, rank == 0 ? log.table : NULL, &err);
  if (st) {
    if (rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
    rc = TL_EXIT_FAIL;
    goto done;
  }
  if (rank == 0) run_print_input_problems(o->out, &log);
  if (tl_http_report(r.en.http, w, comm, o->log, o->quiet, &err) != TL_OK) {
    if (rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
    rc = TL_EXIT_FAIL;
    goto done;
  }
  if ((rc = run_fate_check(o, &r, comm))) goto done;
  rcnt->load_s = t_loaded - t_start;
  rcnt->score_s = t_scored - t_loaded;
  rcnt->write_s = run_now_s() - t_scored;
done:
  tl_journal_close(&jn);
  free(done);
  free(pending);
  free(jdir);
  char *rows_dir = r.sp.rows_dir ? tl_strdup(r.sp.rows_dir) : NULL;
  run_bench_run_release(&r); /* (closes this rank's spill files) */
  tl_inlog_release(&log);
  rc = run_agree(rc, comm);
  if (rank == 0 && rows_dir) run_remove_spill(rows_dir, o->log);
  g_spill_path[0] = g_rows_dir[0] = 0;
  free(rows_dir);
  return rc;
}
