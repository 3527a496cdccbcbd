/* benchmarks.c - the benchmarks part of a run, as a list of phases (run_benchmarks).
 *
 * It names no benchmark: every benchmark is a module (tally/bench.h) and units go through their
 * stages in the core pipeline (tally/run.h). Collective over comm (a duplicate of the caller's
 * with MPI_ERRORS_RETURN). The phases, in order:
 *  setup    every rank loads every benchmark's items and opens the replay engine of each role
 *           (an index of the answer lines, not their texts) and builds the same cfgs and units
 *           (key order); only rank 0 reports input problems (setup.c);
 *  inputs   what each input file gave, matched and rejected; too many rejected lines, or nothing
 *           to run, stop here, before any engine is asked;
 *  engines  the HTTP engines, opened on every rank, their endpoints healthy (http_run.c);
 *  spill    <output>.rows/, one file per rank, for the finished units' item-table rows (spill.c);
 *  restore  with --resume every rank reads the journals of earlier attempts and restores the
 *           units of its own key blocks (a merge: its inputs' journals) (resume.c, merge.c);
 *  attempt  this attempt's journal, and the pending units;
 *  score    the partly restored units are finished, then the pending units are dealt in chunks
 *           on demand; every stage's reply is journaled before it is used (schedule.c);
 *  flush    every rank's spilled rows on disk; the counters summed;
 *  write    per benchmark the records move to their owners (rank q owns the key block
 *           [U q / N, U (q+1) / N)), each rank writes its block of the item table window by window,
 *           the accumulators are reduced to rank 0, which builds the metric tables from the
 *           integers in key order and prints the summary (write.c);
 *  fate     a model or a judge that answered nothing fails the run (fate.c).
 * So the datasets do not depend on the rank count or on who scored what.
 *
 * The error contract: each phase returns a tl_status on every rank and ends in tl_agree (comm.h),
 * so every rank leaves the list at the same phase, with the status and message of the lowest
 * failing rank, which rank 0 prints once. A rank that fails inside a phase still takes part in
 * the phase's collectives (a failed rank 0 deals no work but answers every worker). */
#include "run.h"

#include <sys/stat.h>

/* The benchmarks part's state, shared by its phases. */
typedef struct {
  const tl_run_opts *o;
  const tl_job *job;
  tl_writer *w;
  const char *output;
  MPI_Comm comm;
  run_counts *rcnt;
  tl_tabin *stabs;           /* [n_studies] rank 0: the tables of studies over the run's own columns */
  int rank, nranks;
  bench_run r;
  tl_inlog log;
  int log_ok;
  tl_journal jn;
  uint8_t *done;             /* [U] 1: the unit needs no scheduling (restored) */
  uint64_t *pending, P;      /* the units to deal, in key order */
  char *jdir;                /* the journal folder */
  char jhash[TL_JOB_HASH_LEN];
  double t_start, t_loaded, t_scored;
  const char *hint;          /* appended to a failure's message (the same on every rank) */
} bench_ctx;

/* Rank 0: the problems `tally run` found converting a foreign input (driver.h import_problems,
 * rows kind, file, line, message) into the run's input log, unechoed (they were said). */
static tl_status run_add_problems(tl_inlog *log, const tl_table *t) {
  const int ck = tl_table_col(t, "kind"), cf = tl_table_col(t, "file"), cl = tl_table_col(t, "line"),
            cm = tl_table_col(t, "message");
  if (ck < 0 || cf < 0 || cl < 0 || cm < 0) return TL_OK;
  FILE *echo = log->echo;
  log->echo = NULL;
  tl_status st = TL_OK;
  for (size_t i = 0; !st && i < t->nrows; i++) {
    int k = 0;
    while (k < TL_IN__NKINDS && strcmp(tl_in_kind_name((tl_in_kind)k), t->cols[ck].v.s[i]) != 0) k++;
    if (k == TL_IN__NKINDS) k = TL_IN_BAD_FIELD;
    st = tl_inlog_report(log, (tl_in_kind)k, t->cols[cf].v.s[i], (long)t->cols[cl].v.i[i], "%s",
                         t->cols[cm].v.s[i]);
    if (st == TL_EINPUT) st = TL_OK; /* strict: the conversion already stopped on the first */
  }
  tl_inlog_flush(log); /* (nothing held: nothing echoed) */
  log->echo = echo;
  return st;
}

static tl_status ph_setup(bench_ctx *c, tl_err *err) {
  bench_run *r = &c->r;
  if (tl_inlog_init(&c->log, c->rank == 0 ? c->o->log : NULL, c->o->strict_input) != TL_OK)
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  c->log_ok = 1;
  if (c->rank == 0 && c->o->import_problems && run_add_problems(&c->log, c->o->import_problems))
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  tl_status st = run_bench_setup(c->o, r, c->job, c->rank, c->nranks, c->comm, &c->log, err);
  r->jn = &c->jn;
  if (!st && !(r->pipe = tl_pipe_new(r->rbs, r->nb, run_on_submit, run_on_unit_done, r)))
    st = tl_err_set(err, TL_ENOMEM, "out of memory");
  if (st == TL_EINPUT) tl_err_set(err, st, "stopped at the first input problem (--strict-input); nothing written");
  else if (st == TL_EJOB && err->msg[0]) c->hint = "; nothing was run";
  else if (st && !err->msg[0]) tl_err_set(err, st, "%s", tl_strerror(st));
  return st;
}

/* (Every rank read the same inputs: the same decision everywhere.) */
static tl_status ph_inputs(bench_ctx *c, tl_err *err) {
  const tl_run_opts *o = c->o;
  if (c->rank == 0) tl_inlog_flush(&c->log);
  if (c->r.merging) return TL_OK;
  if (tl_inlog_files(&c->log, c->rank == 0 && !o->quiet ? o->log : NULL, c->rank == 0 ? o->log : NULL,
                     c->job->max_rejected))
    return run_said(TL_EXIT_BAD_INPUT, err);
  if (c->r.U == 0) {
    if (c->rank == 0) run_nothing_to_run(o->log, &c->r, &c->log);
    return run_said(TL_EXIT_BAD_INPUT, err);
  }
  return TL_OK;
}

static tl_status ph_engines(bench_ctx *c, tl_err *err) {
  bench_run *r = &c->r;
  if (!r->merging) {
    int rc = tl_http_open(c->job, c->o->cache_dir, NULL, &g_stop, c->comm, c->o->log, r->en.http); /* (agreed) */
    if (rc) return run_said(rc, err);
  }
  for (int k = 0; k < TL_ROLE__N; k++)
    if (r->en.http[k]) r->en.eng[k] = tl_openai_engine(r->en.http[k]);
  uint64_t mine[2] = {r->U, 0}, lo[2], hi[2];
  for (size_t b = 0; b < r->nb; b++) mine[1] += r->rbs[b].ncfgs;
  tl_status st = TL_MPI(err, MPI_Allreduce(mine, lo, 2, MPI_UINT64_T, MPI_MIN, c->comm));
  if (!st) st = TL_MPI(err, MPI_Allreduce(mine, hi, 2, MPI_UINT64_T, MPI_MAX, c->comm));
  if (!st && (lo[0] != hi[0] || lo[1] != hi[1]))
    st = tl_err_set(err, TL_EIO, "the ranks read different inputs (files changed during start-up?)");
  return st;
}

/* (Before any unit finishes: a resume scores the restored ones while it reads the journal.) */
static tl_status ph_spill(bench_ctx *c, tl_err *err) { return run_open_spill(&c->r, c->output, c->comm, err); }

static tl_status ph_restore(bench_ctx *c, tl_err *err) {
  const tl_run_opts *o = c->o;
  bench_run *r = &c->r;
  c->done = calloc(r->U ? r->U : 1, 1);
  tl_status st = c->done ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory for the unit list");
  if (!st && c->rank == 0 && !o->resume && !r->merging && tl_journal_exists(c->jdir))
    st = tl_err_set(err, TL_EUSAGE, "'%s' holds the journal of an earlier, unfinished run of this output: run with "
                    "--resume to continue it, or remove the folder to start over", c->jdir);
  if ((st = tl_agree(st, err, c->comm))) return st;
  if (r->merging) {
    const char **dirs = calloc((size_t)o->n_merge, sizeof *dirs), **hs = calloc((size_t)o->n_merge, sizeof *hs);
    st = !dirs || !hs ? tl_err_set(err, TL_ENOMEM, "out of memory") : TL_OK;
    for (int d = 0; !st && d < o->n_merge; d++) {
      dirs[d] = o->merge[d].journal_dir;
      hs[d] = o->merge[d].job_hash;
    }
    if (!(st = tl_agree(st, err, c->comm))) st = run_resume_read(o, r, dirs, hs, o->n_merge, c->done, c->comm, err);
    free(dirs);
    free(hs);
    return st;
  }
  if (!o->resume) return TL_OK;
  return run_resume_read(o, r, (const char *const[]){c->jdir}, (const char *const[]){c->jhash}, 1, c->done, c->comm,
                         err);
}

static tl_status ph_attempt(bench_ctx *c, tl_err *err) {
  bench_run *r = &c->r;
  tl_status st = r->merging ? TL_OK : run_open_attempt(r, &c->jn, c->jdir, c->jhash, c->comm, err);
  if (st) return st;
  c->pending = malloc((r->U ? r->U : 1) * sizeof *c->pending);
  if ((st = tl_agree(c->pending ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory for the unit list"), err, c->comm)))
    return st;
  for (uint64_t u = 0; u < r->U; u++)
    if (!c->done[u]) c->pending[c->P++] = u;
  if (r->merging && c->P) { /* a cfg's unit that no input recorded: its run did not finish (every rank knows) */
    tl_unit_key k = run_unit_key(r, c->pending[0], 0);
    return tl_err_set(err, TL_EUSAGE, "cannot merge: %llu unit%s of the merged job %s no record in any input (the "
                      "first: %s item '%s', model '%s', variant '%s', seed %d, sub %d); were those runs finished?",
                      (unsigned long long)c->P, c->P == 1 ? "" : "s", c->P == 1 ? "has" : "have", k.bench, k.id,
                      k.model, k.variant, k.seed, k.sub);
  }
  return TL_OK;
}

/* The last progress line: every rank's finished units (a worker finishes what it has in flight
 * after its last report to rank 0), each unit counted once where it finished; the scheduling
 * time summed into rcnt. Collective. */
static tl_status score_totals(bench_ctx *c, progress *pg, double sched_s, uint64_t nchunks, tl_err *err) {
  uint64_t mine[2] = {c->r.tal.finished, c->r.tal.failed}, all[2] = {0, 0};
  double all_s = 0;
  tl_status st = TL_MPI(err, MPI_Reduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, 0, c->comm));
  if (!st) st = TL_MPI(err, MPI_Reduce(&sched_s, &all_s, 1, MPI_DOUBLE, MPI_SUM, 0, c->comm));
  if (!st && c->rank == 0) {
    pg->done = all[0] > pg->done ? all[0] : pg->done;
    pg->failed = all[1];
    run_progress_show(pg, 1);
  }
  c->rcnt->chunks = nchunks;
  c->rcnt->sched_s = all_s;
  return st;
}

static tl_status ph_score(bench_ctx *c, tl_err *err) {
  bench_run *r = &c->r;
  const tl_run_opts *o = c->o;
  c->t_loaded = run_now_s();
  if (!r->merging) c->hint = " (finished units are in the journal; fix it and run with --resume)";
  int interrupted = 0;
  uint64_t nchunks = 0;
  double sched_s = 0;
  /* first the partly restored units of this rank, then the pending ones, dealt */
  tl_status st = run_drain_restored(r, err);
  if (!st && run_test_fail("restore", c->rank))
    st = tl_err_set(err, TL_EIO, "cannot write the journal: test failure (TALLY_TEST_FAIL)");
  progress pg = {o->log, isatty(fileno(o->log)), o->quiet || c->rank != 0, r->U, 0, 0, 0, run_now_s(), run_now_s()};
  if (c->rank == 0) pg.resumed = pg.done = r->U - c->P;
  /* every rank joins the schedule: a failed rank 0 deals nothing (P = 0) and answers each
   * worker's request with "no more work", so the workers leave it (it once skipped it, and a
   * worker waited for its answer while rank 0 waited in the next collective) */
  tl_err e2 = {{0}};
  tl_status s2 = run_schedule(r, c->pending, c->rank == 0 && st ? 0 : c->P, &pg, c->comm, &interrupted, &sched_s,
                              &nchunks, st ? &e2 : err);
  if (!st) st = s2;
  if (g_stop && !st) interrupted = 1;
  tl_status s3 = score_totals(c, &pg, sched_s, nchunks, st ? &e2 : err);
  if (!st) st = s3;
  if (!st && interrupted) st = TL_EINTR;
  int sig = (int)g_stop, maxsig = 0;
  if (MPI_Allreduce(&sig, &maxsig, 1, MPI_INT, MPI_MAX, c->comm) != MPI_SUCCESS && !st)
    st = tl_err_set(err, TL_EMPI, "MPI_Allreduce failed");
  if (st == TL_EINTR && r->merging)
    tl_err_set(err, st, "interrupted by signal %d: nothing was written; run the merge again", maxsig);
  else if (st == TL_EINTR)
    tl_err_set(err, st, "interrupted by signal %d: finished units are in '%s'; run again with --resume", maxsig, c->jdir);
  st = tl_agree(st, err, c->comm);
  if (st == TL_EINTR) c->hint = ""; /* (the message says what to do; whichever rank was signalled) */
  /* Scoring is over: from here on a signal ends the process at once (the journal is complete,
   * so --resume redoes only the writing and the studies, with no engine call). */
  run_restore_signals();
  return st;
}

/* Every rank's rows on disk before any rank reads another's (a shared file system: the files are
 * flushed and synced, and opened for reading only after the agreement). */
static tl_status ph_flush(bench_ctx *c, tl_err *err) {
  bench_run *r = &c->r;
  c->hint = "";
  tl_status st = TL_OK;
  if (r->sp.spill && (fflush(r->sp.spill) != 0 || fsync(fileno(r->sp.spill)) != 0))
    st = tl_err_set(err, TL_EIO, "cannot write '%s': %s", r->sp.rows_dir, strerror(errno));
  if ((st = tl_agree(st, err, c->comm))) return st;
  c->t_scored = run_now_s();
  return run_sum_counts(r, c->rcnt, c->comm, err);
}

/* Collective: the "parsers" and "n_bad_input" root attributes. */
static tl_status write_attrs(bench_ctx *c, tl_err *err) {
  tl_buf modes;
  tl_buf_init(&modes);
  run_modes_attr(&c->r, &modes);
  int64_t nbad = c->log.total;
  tl_status st = TL_MPI(err, MPI_Bcast(&nbad, 1, MPI_INT64_T, 0, c->comm));
  if (!st) st = c->w->vt->attr_str(c->w, "parsers", modes.data ? modes.data : "", err);
  tl_buf_release(&modes);
  if (!st) st = c->w->vt->attr_i64(c->w, "n_bad_input", nbad, err);
  return st;
}

static tl_status ph_write(bench_ctx *c, tl_err *err) {
  bench_run *r = &c->r;
  tl_status st = tl_agree(write_attrs(c, err), err, c->comm);
  for (size_t b = 0; b < r->nb && !st; b++) {
    tl_table **tabs = NULL;
    int ntabs = 0, nblk = 0;
    int64_t *tot[TL_MAX_ACC] = {0};
    st = run_write_bench(c->o, r, b, c->w, c->comm, &tabs, &ntabs, tot, &nblk, c->stabs, err); /* (agreed) */
    const tl_run_bench *rb = &r->rbs[b];
    if (!st && c->rank == 0) {
      if (b) fprintf(c->o->out, "\n");
      rb->vt->summary(rb->b, rb->cfgs, rb->ncfgs, rb->U, tabs, ntabs, tot, c->o->out);
    }
    for (int k = 0; k < ntabs; k++) tl_table_free(tabs[k]);
    free(tabs);
    for (int k = 0; k < nblk; k++) free(tot[k]);
  }
  if (!st) st = run_audit_write(c->o, r, c->w, c->comm, err); /* (agreed) */
  if (!st) st = tl_agree(c->w->vt->write_table(c->w, c->rank == 0 ? c->log.table : NULL, err), err, c->comm);
  if (!st && c->rank == 0) run_print_input_problems(c->o->out, &c->log);
  if (!st) st = tl_http_report(r->en.http, c->w, c->comm, c->o->log, c->o->quiet, err);
  return st;
}

/* This rank's scratch bytes: its journal of this attempt and its spilled rows. */
static uint64_t scratch_bytes(const bench_ctx *c) {
  uint64_t n = c->r.sp.spill_pos;
  struct stat sb;
  if (c->jn.fp) fflush(c->jn.fp);
  if (c->jn.path && stat(c->jn.path, &sb) == 0) n += (uint64_t)sb.st_size;
  return n;
}

static tl_status ph_fate(bench_ctx *c, tl_err *err) {
  tl_status st = run_fate_check(c->o, &c->r, c->comm, err); /* (agreed) */
  uint64_t mine = scratch_bytes(c), all = mine;
  if (!st) st = tl_agree(tl_allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, c->comm, err), err, c->comm);
  c->rcnt->scratch_bytes = all;
  c->rcnt->load_s = c->t_loaded - c->t_start;
  c->rcnt->score_s = c->t_scored - c->t_loaded;
  c->rcnt->write_s = run_now_s() - c->t_scored;
  return st;
}

/* The phases, in order (the comment at the top says what each does). */
static const struct {
  const char *name;
  tl_status (*run)(bench_ctx *c, tl_err *err);
} phases[] = {
    {"setup", ph_setup}, {"inputs", ph_inputs}, {"engines", ph_engines}, {"spill", ph_spill},
    {"restore", ph_restore}, {"attempt", ph_attempt}, {"score", ph_score}, {"flush", ph_flush},
    {"write", ph_write}, {"fate", ph_fate},
};

/* Collective: the benchmarks of the job, distributed; tables written through w (collective);
 * rank 0 prints the summary, or the failure (its message once, err left empty: said). */
tl_status run_benchmarks(const tl_run_opts *o, const tl_job *job, tl_writer *w, const char *output, MPI_Comm comm,
                         run_counts *rcnt, tl_tabin *stabs, tl_err *err) {
  bench_ctx c;
  memset(&c, 0, sizeof c);
  c.o = o, c.job = job, c.w = w, c.output = output, c.comm = comm, c.rcnt = rcnt, c.stabs = stabs;
  c.t_start = run_now_s();
  c.rank = tl_comm_rank(comm);
  c.nranks = tl_comm_size(comm);
  c.jdir = tl_journal_dir(output);
  c.hint = "";
  tl_journal_job_hash(o->job_as_written ? o->job_as_written : job->json, c.jhash);
  c.r.jn = &c.jn;
  tl_status st = tl_agree(c.jdir ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory"), err, comm);
  for (size_t i = 0; !st && i < sizeof phases / sizeof *phases; i++) st = tl_agree(phases[i].run(&c, err), err, comm);
  if (st && c.rank == 0 && err->msg[0]) fprintf(o->log, "tally: %s%s\n", err->msg, c.hint);
  if (st) err->msg[0] = '\0'; /* said */
  tl_journal_close(&c.jn);
  free(c.done);
  free(c.pending);
  free(c.jdir);
  char *rows_dir = c.r.sp.rows_dir ? tl_strdup(c.r.sp.rows_dir) : NULL;
  run_bench_run_release(&c.r); /* (closes this rank's spill files) */
  if (c.log_ok) tl_inlog_release(&c.log);
  tl_status end = tl_agree(TL_OK, NULL, comm); /* every rank's spill file closed before rank 0 removes them */
  if (!st && end) st = end;
  if (c.rank == 0 && rows_dir) run_remove_spill(rows_dir, o->log);
  g_spill_path[0] = g_rows_dir[0] = 0;
  free(rows_dir);
  return st;
}
