/* correlate_int.h - what the parts of `tally correlate` share (private to src/par/correlate*.c).
 *
 * The study (correlate.h) is split by responsibility:
 *   correlate.c          the study from start to end (corr_study), `tally correlate` itself
 *                        (checks, the output file) and the study's data (corr_release);
 *   correlate_load.c     rank 0: the table read, checked and grouped (corr_load);
 *   correlate_compute.c  the collective steps: the study's communicator, the shape and each
 *                        group's rows broadcast from rank 0, resample blocks (CPU or CUDA),
 *                        the gathers, the permutation test and the BCa jackknife;
 *   correlate_write.c    rank 0's printed table or JSON, and the output tables.
 * Ownership: a corr_data owns every array it points to (corr_release frees them); a study owns
 * its corr_data and its communicator (corr_study frees both). */
#ifndef TALLY_CORRELATE_INT_H
#define TALLY_CORRELATE_INT_H

#include <mpi.h>
#include <stdint.h>

#include "correlate.h"
#include "tally/boot.h"
#include "tally/strmap.h"
#include "tally/tabin.h"
#include "writer.h"

/* The prefix of this study's messages: "tally correlate", or the job's study label. */
#define LABEL(o) ((o)->label ? (o)->label : "tally correlate")

/* One group of rows, as rank 0 prepared it and every rank received it. */
typedef struct {
  char *key;       /* "col=value,..." or "all" */
  uint32_t n;
  double *human;   /* [n] */
  double *metric;  /* [M][n] */
  /* results (rank 0) */
  double *full;    /* [K] */
  tl_boot_summary *per;  /* [K] */
  tl_boot_compare *cmp;  /* [ncmp] */
  double *vals;    /* [B][K] */
  int64_t excluded;/* rows dropped for non-numeric cells */
  /* Cluster and system ids: pointers INTO g->metric's block (allocated with it, freed with it:
   * [M][n] doubles, then cl [n], then sys [n], then the system names), not owned on their own. */
  uint32_t *cl;    /* [n] cluster of each row in [0, ncl) (first-seen order), or NULL: items */
  uint32_t ncl;    /* clusters (0 with cl NULL) */
  uint32_t *sys;   /* rank 0: [n] system of each row in [0, nsys) (first-seen order), or NULL */
  uint32_t nsys;
  const char *sysnames; /* rank 0: nsys NUL-terminated names, in id order */
  /* system-level results (rank 0, with sys): per[K .. 2K) of the same g->per block */
} group;

typedef struct {
  int M;
  char **names;     /* [M] */
  int ngroups;
  group *g;
  uint64_t B;
  uint32_t *indices;/* [B][n] or NULL */
  uint32_t idx_n;
  int nstats;
  tl_stat stats[TL_STAT__N];
} corr_data;

/* ---- the study: collective steps over the study's own communicator ----
 * Every step (correlate_compute.c's, and corr_study_report) is collective over s->c and ends in
 * one agreement (tl_agree: the status and message of the lowest failing rank, on every rank); a
 * rank whose local part failed (an allocation, a computation) still joins the agreement, so all
 * ranks leave together. After a failed step rank 0 reports the agreed message once on o->log
 * (corr_load reports its own). */
typedef struct {
  const tl_corr_opts *o;
  MPI_Comm c;          /* the study's duplicate (MPI_ERRORS_RETURN), or TL_SOLO */
  int rank, nranks;
  corr_data d;         /* rank 0: loaded; the others: received (group results on rank 0 only) */
  int has_indices;     /* the --indices matrix goes with the (single) group */
  int K, npairs;       /* values per resample (metrics x statistics); metric pairs */
  double t_res, t_sum; /* this rank's seconds computing resamples; the tests */
  int gpu_groups;      /* groups whose resamples this rank computed with CUDA */
} study;

/* correlate_load.c. Rank 0: reads the table and builds the groups into d (corr_release frees
 * them, also after a failure); every failure already reported on o->log. */
tl_status corr_load(const tl_corr_opts *o, tl_inlog *log, corr_data *d);

/* correlate_compute.c: the collective steps (each one agreed; see there). */
void corr_keep(tl_status *st, tl_status next);
tl_status corr_study_comm(study *s, MPI_Comm comm, tl_err *err);
tl_status corr_study_share(study *s, tl_inlog *log, tl_err *err);
tl_status corr_study_group(study *s, int k, tl_err *err);

/* correlate_write.c: the report (printed by rank 0) and the output tables. */
tl_status corr_study_report(study *s, const tl_inlog *log, tl_err *err);
tl_status corr_write_tables(const tl_corr_opts *o, const corr_data *d, tl_writer *w,
                            const char *prefix, int rank, MPI_Comm c, tl_err *err);

#endif
