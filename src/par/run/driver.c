/* driver.c - `tally run` (driver.h): the job, the output, the benchmarks, the studies, the close, as a list of phases. */
#include "run.h"

/* --cell K: every benchmark keeps model K / n_seeds and seed K % n_seeds of its lists, which
 * must be given and the same in every entry (a sweep). Returns an exit code; rank 0 says why. */
static int restrict_to_cell(const tl_run_opts *o, tl_job *job, int rank) {
  const long ncell = tl_job_sweep_cells(job);
  if (!ncell) {
    if (rank == 0)
      fprintf(o->log, "tally: --cell needs a sweep: every benchmark of the job lists the same \"models\" and "
                      "\"seeds\" (the cells are their pairs)\n");
    return TL_EXIT_USAGE;
  }
  const tl_job_bench *b0 = &job->benches[0];
  if (o->cell >= ncell) {
    if (rank == 0)
      fprintf(o->log, "tally: --cell %ld: the job's sweep has %ld cells (%d models x %d seeds), 0 to %ld\n", o->cell,
              ncell, b0->n_models, b0->n_seeds, ncell - 1);
    return TL_EXIT_USAGE;
  }
  const int m = (int)(o->cell / b0->n_seeds), sd = (int)(o->cell % b0->n_seeds);
  for (int b = 0; b < job->n_benches; b++) {
    tl_job_bench *jb = &job->benches[b];
    for (int i = 0; i < jb->n_models; i++)
      if (i != m) free(jb->models[i]);
    jb->models[0] = jb->models[m];
    jb->n_models = 1;
    jb->seeds[0] = jb->seeds[sd];
    jb->n_seeds = 1;
  }
  return TL_EXIT_OK;
}

/* The run's state, shared by its phases. */
typedef struct {
  const tl_run_opts *o;
  MPI_Comm comm;
  int rank, nranks;
  tl_job job;
  const char *output;
  tl_out_lock lock;
  int nothing;            /* --resume of a finished output: nothing to do */
  int done;               /* the phases so far did the whole run (a dry run) */
  tl_writer *w;
  provenance_job prov;
  run_counts rcnt;
  tl_tabin *stabs;        /* [n_studies] rank 0: the tables of studies over the run's own columns */
} job_ctx;

/* Rank 0 validates the job and reports every problem before any rank works; the others then
 * read the same file. */
static tl_status ph_job(job_ctx *c, tl_err *err) {
  const tl_run_opts *o = c->o;
  tl_buf probs;
  tl_buf_init(&probs);
  int nprob = 0;
  tl_status st = TL_OK;
  if (tl_in_once(o->job_path)) { /* every rank reads it, and it is hashed for the provenance */
    if (c->rank == 0)
      fprintf(o->log, "tally: the job file '%s' is a pipe or a device, which can be read once: every rank reads the "
                      "job; write it to a file first; nothing was run\n", o->job_path);
    return run_said(TL_EXIT_USAGE, err);
  }
  if (c->rank == 0 && tl_job_load_in(o->job_path, o->job_dir, &c->job, &probs, &nprob) != TL_OK) {
    fprintf(o->log, "tally: invalid job '%s' (%d problem%s); nothing was run:\n%s", o->job_path, nprob,
            nprob == 1 ? "" : "s", probs.data ? probs.data : "");
    st = run_said(TL_EXIT_USAGE, err);
  }
  if ((st = tl_agree(st, err, c->comm)) == TL_OK && c->rank != 0) {
    tl_buf_reset(&probs);
    if (tl_job_load_in(o->job_path, o->job_dir, &c->job, &probs, &nprob) != TL_OK)
      st = tl_err_set(err, TL_EIO, "cannot read the job file '%s'", o->job_path);
  }
  tl_buf_release(&probs);
  if (!st) c->output = o->out_override ? o->out_override : c->job.output;
  return st;
}

static tl_status ph_cell(job_ctx *c, tl_err *err) {
  return c->o->cell >= 0 ? run_said(restrict_to_cell(c->o, &c->job, c->rank), err) : TL_OK;
}

static tl_status ph_dry(job_ctx *c, tl_err *err) {
  if (!c->o->dry_run) return TL_OK;
  c->done = 1;
  if (!c->job.n_benches) {
    if (c->rank == 0) fprintf(c->o->log, "tally: the job has no benchmarks: no request to write\n");
    return TL_OK;
  }
  return run_said(run_dry(c->o, &c->job, c->output, c->comm), err); /* (agreed) */
}

/* Rank 0: the output's place and lock, before anything is opened for writing. */
static tl_status ph_place(job_ctx *c, tl_err *err) {
  int rc = TL_EXIT_OK;
  c->lock = (tl_out_lock){NULL, -1, 0};
  if (c->rank == 0) rc = run_prepare_output(c->o, &c->job, c->output, &c->lock, &c->nothing);
  if (c->rank == 0 && rc == TL_EXIT_OK && !c->nothing) rc = run_check_output(c->o, c->output);
  tl_status st = tl_agree(run_said(rc, err), err, c->comm);
  if (!st) st = TL_MPI(err, MPI_Bcast(&c->nothing, 1, MPI_INT, 0, c->comm));
  if (!st && c->nothing) c->done = 1;
  return st;
}

static tl_status ph_open(job_ctx *c, tl_err *err) {
  tl_status st = run_open_output(c->o, &c->job, c->output, c->comm, &c->w, &c->prov, err); /* (agreed) */
  if (st) return st;
  c->stabs = calloc((size_t)c->job.n_studies + 1, sizeof *c->stabs);
  return c->stabs ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory");
}

static tl_status ph_benchmarks(job_ctx *c, tl_err *err) {
  if (!c->job.n_benches) return TL_OK;
  return run_benchmarks(c->o, &c->job, c->w, c->output, c->comm, &c->rcnt, c->stabs, err);
}

/* Studies: collective, resamples split over every rank. */
static tl_status ph_studies(job_ctx *c, tl_err *err) {
  tl_status st = TL_OK;
  for (int i = 0; i < c->job.n_studies && !st; i++)
    st = tl_agree(run_said(run_study(c->o, &c->job.studies[i], c->comm, c->w, &c->stabs[i]), err), err, c->comm);
  return st;
}

static tl_status ph_provenance(job_ctx *c, tl_err *err) {
  return run_provenance_write(c->o, &c->job, &c->prov, c->w, c->comm, err); /* (agreed) */
}

/* The run's counters as root attributes: stage 0 as "units_resumed" and "engine_calls"; a judge
 * stage as "judge_*". */
static tl_status ph_counters(job_ctx *c, tl_err *err) {
  const run_counts *n = &c->rcnt;
  tl_writer *w = c->w;
  if (!c->job.n_benches) return TL_OK;
  tl_status st = w->vt->attr_i64(w, "units", (int64_t)n->units, err);
  if (!st) st = w->vt->attr_i64(w, "units_resumed", (int64_t)n->resumed[0], err);
  if (!st) st = w->vt->attr_i64(w, "engine_calls", (int64_t)n->calls[0], err);
  if (!st && n->nstages > 1) st = w->vt->attr_i64(w, "judge_calls", (int64_t)n->judge_calls, err);
  if (!st && n->nstages > 1) st = w->vt->attr_i64(w, "judge_resumed", (int64_t)n->judge_resumed, err);
  if (!st && n->nstages > 1) st = w->vt->attr_i64(w, "judge_skipped", (int64_t)n->judge_skips, err);
  return st;
}

/* Collective: the output closed (renamed into place), or, after a failure, aborted. */
static tl_status close_output(job_ctx *c, tl_status st, tl_err *err) {
  if (!c->w) return st;
  tl_writer *w = c->w;
  c->w = NULL;
  if (st) {
    w->vt->abort(w);
    return st;
  }
  tl_err e = {{0}};
  if ((st = w->vt->close(w, &e))) /* (agreed inside) */
    tl_err_set(err, st, "%s (the journal is kept: free space and run again with --resume)", e.msg);
  return tl_agree(st, err, c->comm);
}

/* Rank 0, the run done: the journal goes (unless --keep-journal), the counters are said, and
 * "wrote OUTPUT". */
static tl_status report_done(job_ctx *c, tl_err *err) {
  const tl_run_opts *o = c->o;
  const run_counts *n = &c->rcnt;
  if (c->job.n_benches > 0 && !o->keep_journal) {
    char *jdir = tl_journal_dir(c->output);
    tl_err e;
    if (tl_journal_remove(jdir, &e) != TL_OK) fprintf(o->log, "tally: %s\n", e.msg);
    free(jdir);
  }
  if (c->job.n_benches > 0 && !o->quiet)
    fprintf(o->log, "tally: %llu units, %llu from the journal, %llu engine calls, %d rank%s; load %.3f s, score %.3f s, "
                    "gather+write %.3f s; %llu chunks, scheduling messages %.2f us/unit; scratch %.1f MiB (journal "
                    "and spilled rows), %.0f bytes/unit\n",
            (unsigned long long)n->units, (unsigned long long)n->resumed[0], (unsigned long long)n->calls[0],
            c->nranks, c->nranks == 1 ? "" : "s", n->load_s, n->score_s, n->write_s, (unsigned long long)n->chunks,
            n->calls[0] ? 1e6 * n->sched_s / (double)n->calls[0] : 0.0, (double)n->scratch_bytes / 1048576.0,
            n->units ? (double)n->scratch_bytes / (double)n->units : 0.0);
  if (c->job.n_benches > 0 && !o->quiet && n->nstages > 1)
    fprintf(o->log, "tally: judge stage: %llu calls, %llu from the journal, %llu skipped (nothing to judge)\n",
            (unsigned long long)n->judge_calls, (unsigned long long)n->judge_resumed, (unsigned long long)n->judge_skips);
  fprintf(o->out, "wrote %s\n", c->output);
  if (fflush(o->out) != 0 || ferror(o->out))
    return tl_err_set(err, TL_EIO, "cannot write the summary to standard output: %s (the output file '%s' is complete)",
                      strerror(errno), c->output);
  return TL_OK;
}

/* The phases of a run, in order; each ends agreed on every rank. */
static const struct {
  const char *name;
  tl_status (*run)(job_ctx *c, tl_err *err);
} phases[] = {
    {"job", ph_job},         {"cell", ph_cell},       {"dry run", ph_dry},
    {"place", ph_place},     {"open", ph_open},       {"benchmarks", ph_benchmarks},
    {"studies", ph_studies}, {"provenance", ph_provenance}, {"counters", ph_counters},
};

/* The run on its own communicator (a duplicate of the caller's), so that its message tags
 * never meet another library's on the caller's communicator. Collective. */
static tl_status run_job(const tl_run_opts *o, MPI_Comm comm, tl_err *err) {
  job_ctx c;
  memset(&c, 0, sizeof c);
  c.o = o;
  c.comm = comm;
  c.rank = tl_comm_rank(comm);
  c.nranks = tl_comm_size(comm);
  c.lock = (tl_out_lock){NULL, -1, 0};
  run_install_signals();
  tl_status st = TL_OK;
  for (size_t i = 0; !st && !c.done && i < sizeof phases / sizeof *phases; i++)
    st = tl_agree(phases[i].run(&c, err), err, comm);
  run_provenance_end(&c.prov); /* a run that failed: the thread is joined, nothing written */
  if (!c.done) st = close_output(&c, st, err);
  if (st && c.rank == 0 && err->msg[0]) fprintf(o->log, "tally: %s\n", err->msg);
  if (st) err->msg[0] = '\0'; /* said */
  if (tl_exit_code(st) == TL_EXIT_FAIL && c.rank == 0 && c.job.n_benches > 0 && c.output) {
    char *jdir = tl_journal_dir(c.output);
    if (jdir && tl_journal_exists(jdir))
      fprintf(o->log, "tally: the journal '%s' keeps every finished unit: fix the problem and run "
                      "again with --resume (no finished unit is asked again)\n", jdir);
    free(jdir);
  }
  if (!st && !c.done && c.rank == 0 && (st = report_done(&c, err))) fprintf(o->log, "tally: %s\n", err->msg);
  if (!st && c.nothing) st = TL_OK;
  for (int i = 0; c.stabs && i < c.job.n_studies; i++) tl_tabin_release(&c.stabs[i]);
  free(c.stabs);
  g_lock_path[0] = g_part_path[0] = 0;
  tl_out_lock_release(&c.lock);
  tl_job_release(&c.job);
  return st;
}

int tl_run_job(const tl_run_opts *o, MPI_Comm comm_in) {
  MPI_Comm comm;
  tl_err err = {{0}};
  if (tl_comm_dup(comm_in, &comm, &err) != TL_OK) {
    fprintf(o->log, "tally: %s\n", err.msg);
    return TL_EXIT_FAIL;
  }
  tl_status st = run_job(o, comm, &err);
  MPI_Comm_free(&comm);
  return tl_exit_code(st);
}

int tl_par_shutdown(void) {
  if (tl_h5_broken()) return 0;
  H5close();
  return 1;
}
