/* output.c - the output: its place and lock before any work, the file and its root attributes, the input hashes. */
#include "run.h"
#include "tally_git.h" /* generated: TALLY_GIT_COMMIT */

/* Rank 0: the output must be creatable before any work starts (a clear error now, not after
 * hours of scoring). */
int run_check_output(const tl_run_opts *o, const char *output) {
  tl_buf p;
  tl_buf_init(&p);
  tl_buf_printf(&p, "%s.part", output);
  FILE *f = fopen(p.data, "ab");
  int ok = f != NULL;
  if (!ok) fprintf(o->log, "tally: cannot create output '%s': %s\n", p.data, strerror(errno));
  if (f) {
    fclose(f);
    remove(p.data);
  }
  tl_buf_release(&p);
  return ok ? TL_EXIT_OK : TL_EXIT_FAIL;
}

/* Every file the job reads, with what it is for messages: the job file, then the job's inputs
 * (items, answers, judgments, study tables) in job order. *in is malloc'd (its strings are the
 * job's); returns the count, or -1 when out of memory. */
int run_job_inputs(const tl_run_opts *o, const tl_job *job, tl_path_role **in) {
  *in = calloc((size_t)job->n_inputs + 1, sizeof **in);
  if (!*in) return -1;
  (*in)[0] = (tl_path_role){o->job_path, "the job file"};
  for (int i = 0; i < job->n_inputs; i++) (*in)[i + 1] = (tl_path_role){job->inputs[i].path, job->inputs[i].what};
  return job->n_inputs + 1;
}

/* Rank 0, before anything is opened for writing: the output's place, output vs every input
 * (the job file, items, answers, study tables) and standard output vs every input, then the
 * output lock; a `--resume` of a finished output (no journal, the file exists) sets *nothing.
 * Returns an exit code; on TL_EXIT_OK the lock is held (released by the caller). */
int run_prepare_output(const tl_run_opts *o, const tl_job *job, const char *output, tl_out_lock *lock,
                          int *nothing) {
  tl_err err = {{0}};
  tl_path_role *in;
  int k = run_job_inputs(o, job, &in);
  if (k < 0) {
    fprintf(o->log, "tally: out of memory\n");
    return TL_EXIT_FAIL;
  }
  int rc = TL_EXIT_OK;
  for (int i = 1; i < k; i++) /* [0] the job file: ph_job has checked it */
    if (in[i].path && tl_in_once(in[i].path)) {
      fprintf(o->log, "tally: %s '%s' is a pipe or a device, which can be read once: a run reads its inputs again "
                      "(replies are read back from their place in their files, at the write and on --resume); "
                      "write it to a file first; nothing was run\n", in[i].what, in[i].path);
      rc = TL_EXIT_USAGE;
    }
  if (rc) {
    free(in);
    return rc;
  }
  tl_status st = tl_out_check_place(output, &err);
  if (!st) st = tl_out_check_inputs(output, "the output", in, k, &err);
  if (!st) st = tl_stdout_check_inputs(in, k, &err);
  if (!st && !o->resume) st = tl_out_check_replace(output, o->force, &err); /* --resume continues it */
  if (st) {
    fprintf(o->log, "tally: %s; nothing was run\n", err.msg);
    rc = st == TL_EUSAGE ? TL_EXIT_USAGE : TL_EXIT_FAIL;
  }
  free(in);
  if (rc) return rc;
  if ((st = tl_out_lock_take(lock, output, o->break_lock, o->log, &err))) {
    fprintf(o->log, "tally: %s; nothing was run or removed\n", err.msg);
    char *jdir = tl_journal_dir(output);
    if (jdir && !lock->live && tl_journal_exists(jdir) && !o->resume)
      fprintf(o->log, "tally: the journal '%s' keeps the finished units of that run: add --resume to "
                      "continue from them\n", jdir);
    free(jdir);
    return st == TL_EUSAGE ? TL_EXIT_USAGE : TL_EXIT_FAIL;
  }
  snprintf(g_lock_path, sizeof g_lock_path, "%s", lock->path);
  snprintf(g_part_path, sizeof g_part_path, "%s.part", output);
  if (o->resume) {
    char *jdir = tl_journal_dir(output);
    struct stat sb;
    if (jdir && !tl_journal_exists(jdir) && stat(output, &sb) == 0) {
      fprintf(o->log, "tally: nothing to resume: '%s' is complete (it has no journal '%s'); run without "
                      "--resume (with --force) to score the job again\n", output, jdir);
      *nothing = 1;
    }
    free(jdir);
  }
  return TL_EXIT_OK;
}



static void *provenance_main(void *arg) {
  provenance_job *p = arg;
  p->st = tl_sha256_files_json(p->paths, p->whats, p->n, &p->sha, &p->files, &p->err);
  return NULL;
}

/* Rank 0: starts hashing the job's inputs (the job file and every file it reads). Returns 0, or
 * -1 when the thread cannot start (nothing to join then). */
static int provenance_start(const tl_run_opts *o, const tl_job *job, provenance_job *p) {
  memset(p, 0, sizeof *p);
  tl_buf_init(&p->sha);
  tl_buf_init(&p->files);
  tl_path_role *in;
  int k = run_job_inputs(o, job, &in);
  if (k <= 0) return -1;
  p->paths = calloc((size_t)k, sizeof *p->paths);
  p->whats = calloc((size_t)k, sizeof *p->whats);
  for (int i = 0; p->paths && p->whats && i < k; i++) p->paths[i] = in[i].path, p->whats[i] = in[i].what;
  free(in); /* the strings are the job's and the options' */
  p->n = k;
  if (!p->paths || !p->whats || pthread_create(&p->th, NULL, provenance_main, p) != 0) {
    free(p->paths);
    free(p->whats);
    p->paths = p->whats = NULL;
    return -1;
  }
  p->started = 1;
  return 0;
}

/* Joins the thread (when it runs) and frees p. */
void run_provenance_end(provenance_job *p) {
  if (p->started) pthread_join(p->th, NULL);
  p->started = 0;
  free(p->paths);
  free(p->whats);
  p->paths = p->whats = NULL;
  tl_buf_release(&p->sha);
  tl_buf_release(&p->files);
}

/* Collective: waits for rank 0's hashes and writes the root attributes input_sha256,
 * input_files and job_dir (the same value on every rank: broadcast from rank 0). sha:
 * {"<path as given>": sha256}; files: [{path (absolute), what, sha256}] of the same files (tally
 * merge checks the items it re-scores against them); jdir: the job file's folder, absolute
 * (where the job's relative paths point). One buffer, NUL-separated. Frees p. */
tl_status run_provenance_write(const tl_run_opts *o, const tl_job *job, provenance_job *p, tl_writer *w,
                               MPI_Comm comm, tl_err *err) {
  const int rank = tl_comm_rank(comm);
  tl_buf all, sha, files, jdir;
  tl_buf_init(&all);
  tl_buf_init(&sha);
  tl_buf_init(&files);
  tl_buf_init(&jdir);
  int64_t len[3] = {-1, -1, -1};
  if (rank == 0) {
    if (p->started) pthread_join(p->th, NULL);
    p->started = 0;
    char *jd = o->job_dir ? realpath(o->job_dir, NULL) : realpath(job->dir, NULL);
    if (!p->paths) tl_err_set(err, TL_ENOMEM, "cannot hash the inputs: out of memory or no thread");
    else if (p->st != TL_OK) tl_err_set(err, p->st, "%s", p->err.msg);
    else {
      len[0] = (int64_t)p->sha.len;
      len[1] = (int64_t)p->files.len;
      len[2] = jd ? (int64_t)strlen(jd) : 0;
      tl_buf_append(&all, p->sha.data, p->sha.len);
      tl_buf_append(&all, p->files.data, p->files.len);
      if (jd) tl_buf_append(&all, jd, strlen(jd));
    }
    free(jd);
  }
  run_provenance_end(p);
  tl_status st = rank == 0 && len[0] < 0 ? TL_EIO : TL_OK; /* (rank 0's message is in err) */
  if (!(st = tl_agree(st, err, comm))) st = TL_MPI(err, MPI_Bcast(len, 3, MPI_INT64_T, 0, comm));
  if (!st && len[0] + len[1] + len[2] > INT_MAX) st = tl_err_set(err, TL_EINTERNAL, "the input hashes are over 2 GiB");
  if (st) {
    tl_buf_release(&all);
    return st;
  }
  int64_t tot = len[0] + len[1] + len[2];
  if (rank != 0) {
    tl_buf_reset(&all);
    for (int64_t i = 0; i < tot; i++) tl_buf_append(&all, " ", 1);
  }
  if ((st = tl_agree(all.len == (size_t)tot ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory"), err, comm)) ||
      (st = TL_MPI(err, MPI_Bcast(all.data, (int)tot, MPI_CHAR, 0, comm)))) {
    tl_buf_release(&all);
    return st;
  }
  tl_buf_append(&sha, all.data, (size_t)len[0]);
  tl_buf_append(&files, all.data + len[0], (size_t)len[1]);
  tl_buf_append(&jdir, all.data + len[0] + len[1], (size_t)len[2]);
  tl_buf_release(&all);
  st = w->vt->attr_str(w, "input_sha256", sha.data ? sha.data : "{}", err);
  if (!st) st = w->vt->attr_str(w, "input_files", files.data ? files.data : "[]", err);
  if (!st) st = w->vt->attr_str(w, "job_dir", jdir.data ? jdir.data : "", err);
  tl_buf_release(&sha);
  tl_buf_release(&files);
  tl_buf_release(&jdir);
  return tl_agree(st, err, comm);
}

/* Collective: opens the output (parallel HDF5) and writes the run's root attributes but the
 * provenance ones, whose hashing rank 0 starts here (provenance_write writes them). Whatever
 * the result, the caller ends prov (run_provenance_end). */
tl_status run_open_output(const tl_run_opts *o, const tl_job *job, const char *output, MPI_Comm comm,
                          tl_writer **wout, provenance_job *prov, tl_err *err) {
  const int nranks = tl_comm_size(comm), rank = tl_comm_rank(comm);
  memset(prov, 0, sizeof *prov);
  tl_status st = rank == 0 && provenance_start(o, job, prov) != 0
                     ? tl_err_set(err, TL_ENOMEM, "cannot start hashing the inputs (out of memory, or no thread)")
                     : TL_OK;
  if ((st = tl_agree(st, err, comm))) return st;
  tl_writer *w = tl_h5_parallel_open(output, comm, err); /* (collective; agreed inside) */
  if (!w) return err->msg[0] ? TL_EHDF5 : tl_err_set(err, TL_EHDF5, "cannot create '%s'", output);
  unsigned maj, min, rel;
  H5get_libversion(&maj, &min, &rel);
  char h5v[32];
  snprintf(h5v, sizeof h5v, "%u.%u.%u", maj, min, rel);
  st = w->vt->attr_str(w, "job", job->json, err);
  if (!st && o->job_as_written) st = w->vt->attr_str(w, "job_as_written", o->job_as_written, err);
  if (!st) st = w->vt->attr_str(w, "job_name", job->name, err);
  if (!st) st = w->vt->attr_str(w, "tally_version", TALLY_VERSION, err);
  if (!st) st = w->vt->attr_str(w, "tally_commit", TALLY_GIT_COMMIT, err);
  if (!st) st = w->vt->attr_str(w, "hdf5_version", h5v, err);
  if (!st) st = w->vt->attr_str(w, "deflate", tl_h5_deflate_name(), err);
  if (!st) st = w->vt->attr_str(w, "engine", job->engines[TL_ROLE_MODEL].type, err);
  if (!st) {
    tl_buf e;
    tl_buf_init(&e);
    tl_buf_printf(&e, "{\"model\":%s,\"judge\":%s}", job->engines[TL_ROLE_MODEL].json, job->engines[TL_ROLE_JUDGE].json);
    st = e.data ? w->vt->attr_str(w, "engines", e.data, err) : tl_err_set(err, TL_ENOMEM, "out of memory");
    tl_buf_release(&e);
  }
  if (!st) st = w->vt->attr_i64(w, "n_ranks", nranks, err);
  if (!st && o->cell >= 0) st = w->vt->attr_i64(w, "sweep_cell", o->cell, err);
  if (!st && o->merge && o->cells_merged) { /* a merge of a sweep's cells: whole or partial */
    st = w->vt->attr_i64(w, "partial", o->cells_missing && *o->cells_missing, err);
    if (!st) st = w->vt->attr_str(w, "cells_merged", o->cells_merged, err);
    if (!st) st = w->vt->attr_str(w, "cells_missing", o->cells_missing ? o->cells_missing : "", err);
  }
  if ((st = tl_agree(st, err, comm))) {
    w->vt->abort(w);
    return st;
  }
  *wout = w;
  return TL_OK;
}
