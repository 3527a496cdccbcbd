/* correlate.c - `tally correlate` (see correlate.h): the study from start to end, and the
 * command's checks and output file. The study's parts are in correlate_load.c,
 * correlate_compute.c and correlate_write.c (correlate_int.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "correlate_agree.h"
#include "correlate_int.h"
#include "driver.h"
#include "outsafe.h"
#include "tally/str.h"

/* Frees everything d owns (correlate_int.h), whatever step the study ended at. */
static void corr_release(corr_data *d) {
  for (int i = 0; i < d->M; i++) free(d->names ? d->names[i] : NULL);
  free(d->names);
  for (int k = 0; k < d->ngroups; k++) {
    group *g = &d->g[k];
    free(g->key); free(g->human); free(g->metric); free(g->full); free(g->per); free(g->cmp);
    free(g->vals);
  }
  free(d->g);
  free(d->indices);
  memset(d, 0, sizeof *d);
}

/* The study (tl_corr_study) as a status, the same on every rank; every failure is reported
 * once, on rank 0's log. */
static tl_status corr_study(const tl_corr_opts *o, MPI_Comm comm, tl_writer *w, const char *prefix) {
  study s;
  memset(&s, 0, sizeof s);
  s.o = o;
  s.rank = tl_comm_rank(comm);
  s.nranks = tl_comm_size(comm);
  for (int q = 0; q < TL_STAT__N; q++)
    if (o->stats_mask & (1 << q)) s.d.stats[s.d.nstats++] = (tl_stat)q;
  tl_inlog log;
  tl_inlog_init(&log, o->log, o->strict_input);
  tl_err err = {{0}};
  tl_status st = corr_study_comm(&s, comm, &err);
  if (st != TL_OK && s.rank == 0) fprintf(o->log, "%s: %s\n", LABEL(o), err.msg);
  if (st == TL_OK) st = corr_study_share(&s, &log, &err);
  for (int k = 0; st == TL_OK && k < s.d.ngroups; k++) st = corr_study_group(&s, k, &err);
  if (st == TL_OK) st = corr_study_report(&s, &log, &err);
  if (st == TL_OK) st = corr_agreement(o, s.c, s.rank, w, prefix); /* collective; agreed */
  if (st == TL_OK && w) {
    st = corr_write_tables(o, &s.d, w, prefix, s.rank, s.c, &err);
    if (st != TL_OK && s.rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
  }
  if (s.c != TL_SOLO && TL_MPI(&err, MPI_Comm_free(&s.c)) != TL_OK && st == TL_OK) {
    st = TL_EMPI; /* this rank's only: nothing collective follows in the study */
    fprintf(o->log, "%s: %s\n", LABEL(o), err.msg);
  }
  corr_release(&s.d);
  tl_inlog_release(&log);
  return st;
}

int tl_corr_study(const tl_corr_opts *o, MPI_Comm comm, tl_writer *w, const char *prefix) {
  return tl_exit_code(corr_study(o, comm, w, prefix));
}

/* Rank 0, before anything is opened for writing: the output is no input and has a writable
 * place, standard output is no input, and the output lock is held to the end (lock). Reports
 * its failure ("nothing was run"). */
static tl_status corr_checks(const tl_corr_opts *o, tl_out_lock *lock, tl_err *err) {
  tl_path_role in[2] = {{o->input, "the input table"}, {o->indices, "the index file"}};
  tl_status st = tl_stdout_check_inputs(in, 2, err);
  if (!st && o->out) st = tl_out_check_place(o->out, err);
  if (!st && o->out) st = tl_out_check_inputs(o->out, "the output", in, 2, err);
  if (!st && o->out) st = tl_out_check_replace(o->out, o->force, err);
  if (!st && o->out) st = tl_out_lock_take(lock, o->out, o->break_lock, o->log, err);
  if (st) fprintf(o->log, "%s: %s; nothing was run\n", LABEL(o), err->msg);
  return st;
}

/* Collective. The output file of `tally correlate` opened with its root attributes; *w NULL
 * when it failed (rank 0 reports it). The writer agrees on its failures. */
static tl_status corr_open(const tl_corr_opts *o, MPI_Comm comm, tl_writer **w, tl_err *err) {
  int rank = tl_comm_rank(comm), nranks = tl_comm_size(comm);
  tl_status st = TL_OK;
  *w = tl_h5_parallel_open(o->out, comm, err); /* collective */
  if (!*w) st = TL_EHDF5;
  else if ((st = (*w)->vt->attr_str(*w, "tally_version", TALLY_VERSION, err)) == TL_OK &&
           (st = (*w)->vt->attr_str(*w, "command", "correlate", err)) == TL_OK)
    st = (*w)->vt->attr_i64(*w, "n_ranks", nranks, err);
  if (st != TL_OK && rank == 0) fprintf(o->log, "%s: %s\n", LABEL(o), err->msg);
  return st;
}

int tl_correlate_run(const tl_corr_opts *o, MPI_Comm comm) {
  int rank = tl_comm_rank(comm);
  tl_writer *w = NULL;
  tl_err err = {{0}};
  tl_out_lock lock = {NULL, -1, 0};
  tl_status st = rank == 0 ? corr_checks(o, &lock, &err) : TL_OK;
  if ((st = tl_agree(st, &err, comm)) != TL_OK) return tl_exit_code(st);
  if (o->out) st = corr_open(o, comm, &w, &err);
  if (st == TL_OK) st = corr_study(o, comm, w, "/stats/correlate");
  if (w) {
    if (st == TL_OK) {
      if ((st = w->vt->close(w, &err)) != TL_OK && rank == 0) fprintf(o->log, "%s: %s\n", LABEL(o), err.msg);
    } else {
      w->vt->abort(w);
    }
  }
  if (rank == 0 && st == TL_OK && (fflush(o->outf) != 0 || ferror(o->outf))) {
    fprintf(o->log, "%s: cannot write the results to standard output: %s\n", LABEL(o), strerror(errno));
    st = TL_EIO;
  }
  tl_out_lock_release(&lock);
  err.msg[0] = '\0';
  return tl_exit_code(tl_agree(st, &err, comm));
}
