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

static int run_job(const tl_run_opts *o, MPI_Comm comm);

int tl_run_job(const tl_run_opts *o, MPI_Comm comm_in) {
  MPI_Comm comm;
  if (MPI_Comm_dup(comm_in, &comm) != MPI_SUCCESS) {
    fprintf(o->log, "tally: MPI_Comm_dup failed\n");
    return TL_EXIT_FAIL;
  }
  int rc = run_job(o, comm);
  MPI_Comm_free(&comm);
  return rc;
}

static int run_job(const tl_run_opts *o, MPI_Comm comm) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  run_install_signals();
  int rc = TL_EXIT_OK;
  tl_job job;
  memset(&job, 0, sizeof job);
  tl_buf probs;
  tl_buf_init(&probs);
  int nprob = 0;
  /* Rank 0 validates the job and reports every problem before any rank works. */
  if (rank == 0 && tl_job_load_in(o->job_path, o->job_dir, &job, &probs, &nprob) != TL_OK) {
    fprintf(o->log, "tally: invalid job '%s' (%d problem%s); nothing was run:\n%s", o->job_path,
            nprob, nprob == 1 ? "" : "s", probs.data);
    rc = TL_EXIT_USAGE;
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
  if (rc == TL_EXIT_OK && rank != 0) {
    /* the job was valid on rank 0: the other ranks read the same file */
    tl_buf_reset(&probs);
    if (tl_job_load_in(o->job_path, o->job_dir, &job, &probs, &nprob) != TL_OK) {
      fprintf(o->log, "tally: rank %d cannot read the job file '%s'\n", rank, o->job_path);
      rc = TL_EXIT_FAIL;
    }
  }
  tl_buf_release(&probs);
  rc = run_agree(rc, comm);
  if (rc) {
    tl_job_release(&job);
    return rc;
  }
  if (rc == TL_EXIT_OK && o->cell >= 0) rc = run_agree(restrict_to_cell(o, &job, rank), comm);
  if (rc) {
    tl_job_release(&job);
    return rc;
  }
  const char *output = o->out_override ? o->out_override : job.output;
  if (o->dry_run) {
    rc = job.n_benches ? run_dry(o, &job, output, comm) : TL_EXIT_OK;
    if (!job.n_benches && rank == 0) fprintf(o->log, "tally: the job has no benchmarks: no request to write\n");
    tl_job_release(&job);
    return rc;
  }
  tl_out_lock lock = {NULL, -1, 0};
  int nothing = 0;
  if (rank == 0) rc = run_prepare_output(o, &job, output, &lock, &nothing);
  if (rank == 0 && rc == TL_EXIT_OK && !nothing) rc = run_check_output(o, output);
  rc = run_agree(rc, comm);
  MPI_Bcast(&nothing, 1, MPI_INT, 0, comm);
  if (rc == TL_EXIT_OK && nothing) {
    tl_out_lock_release(&lock);
    tl_job_release(&job);
    return TL_EXIT_OK;
  }
  tl_writer *w = NULL;
  run_counts rcnt;
  memset(&rcnt, 0, sizeof rcnt);
  provenance_job prov;
  memset(&prov, 0, sizeof prov);
  if (rc == TL_EXIT_OK) rc = run_open_output(o, &job, output, comm, &w, &prov);
  rc = run_agree(rc, comm);
  tl_tabin *stabs = calloc((size_t)job.n_studies + 1, sizeof *stabs);
  if (!stabs) rc = TL_EXIT_FAIL;
  rc = run_agree(rc, comm);
  if (rc == TL_EXIT_OK && job.n_benches > 0) rc = run_benchmarks(o, &job, w, output, comm, &rcnt, stabs);
  /* Studies: collective, resamples split over every rank. */
  for (int i = 0; i < job.n_studies && rc == TL_EXIT_OK; i++) rc = run_study(o, &job.studies[i], comm, w, &stabs[i]);
  for (int i = 0; stabs && i < job.n_studies; i++) tl_tabin_release(&stabs[i]);
  free(stabs);
  rc = run_agree(rc, comm);
  if (w && rc == TL_EXIT_OK) rc = run_agree(run_provenance_write(o, &job, &prov, w, comm), comm); /* collective */
  run_provenance_end(&prov); /* a run that failed: the thread is joined, nothing written */
  if (w) {
    tl_err err = {{0}};
    tl_status st = TL_OK;
    if (rc == TL_EXIT_OK && job.n_benches > 0) {
      /* stage 0 as "units_resumed" and "engine_calls"; a judge stage as "judge_*" */
      st = w->vt->attr_i64(w, "units", (int64_t)rcnt.units, &err);
      if (!st) st = w->vt->attr_i64(w, "units_resumed", (int64_t)rcnt.resumed[0], &err);
      if (!st) st = w->vt->attr_i64(w, "engine_calls", (int64_t)rcnt.calls[0], &err);
      if (!st && rcnt.nstages > 1) st = w->vt->attr_i64(w, "judge_calls", (int64_t)rcnt.judge_calls, &err);
      if (!st && rcnt.nstages > 1) st = w->vt->attr_i64(w, "judge_resumed", (int64_t)rcnt.judge_resumed, &err);
      if (!st && rcnt.nstages > 1) st = w->vt->attr_i64(w, "judge_skipped", (int64_t)rcnt.judge_skips, &err);
    }
    if (rc == TL_EXIT_OK && !st) {
      st = w->vt->close(w, &err);
      if (st) {
        if (rank == 0) fprintf(o->log, "tally: %s (the journal is kept: free space and run again with --resume)\n", err.msg);
        rc = TL_EXIT_FAIL;
      }
    } else {
      if (st && rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
      if (st) rc = TL_EXIT_FAIL;
      w->vt->abort(w);
    }
  }
  rc = run_agree(rc, comm);
  if (rc == TL_EXIT_FAIL && rank == 0 && job.n_benches > 0) {
    char *jdir = tl_journal_dir(output);
    if (tl_journal_exists(jdir))
      fprintf(o->log, "tally: the journal '%s' keeps every finished unit: fix the problem and run "
                      "again with --resume (no finished unit is asked again)\n", jdir);
    free(jdir);
  }
  if (rc == TL_EXIT_OK && rank == 0) {
    if (job.n_benches > 0 && !o->keep_journal) {
      char *jdir = tl_journal_dir(output);
      tl_err err;
      if (tl_journal_remove(jdir, &err) != TL_OK) fprintf(o->log, "tally: %s\n", err.msg);
      free(jdir);
    }
    if (job.n_benches > 0 && !o->quiet)
      fprintf(o->log, "tally: %llu units, %llu from the journal, %llu engine calls, %d rank%s; "
              "load %.3f s, score %.3f s, gather+write %.3f s; %llu chunks, scheduling messages "
              "%.2f us/unit\n",
              (unsigned long long)rcnt.units, (unsigned long long)rcnt.resumed[0], (unsigned long long)rcnt.calls[0],
              nranks, nranks == 1 ? "" : "s", rcnt.load_s, rcnt.score_s, rcnt.write_s, (unsigned long long)rcnt.chunks,
              rcnt.calls[0] ? 1e6 * rcnt.sched_s / (double)rcnt.calls[0] : 0.0);
    if (job.n_benches > 0 && !o->quiet && rcnt.nstages > 1)
      fprintf(o->log, "tally: judge stage: %llu calls, %llu from the journal, %llu skipped (nothing to judge)\n",
              (unsigned long long)rcnt.judge_calls, (unsigned long long)rcnt.judge_resumed, (unsigned long long)rcnt.judge_skips);
    fprintf(o->out, "wrote %s\n", output);
    if (fflush(o->out) != 0 || ferror(o->out)) {
      fprintf(o->log, "tally: cannot write the summary to standard output: %s (the output file '%s' is "
                      "complete)\n", strerror(errno), output);
      rc = TL_EXIT_FAIL;
    }
  }
  g_lock_path[0] = g_part_path[0] = 0;
  tl_out_lock_release(&lock);
  tl_job_release(&job);
  return rc;
}

int tl_par_shutdown(void) {
  if (tl_h5_broken()) return 0;
  H5close();
  return 1;
}
