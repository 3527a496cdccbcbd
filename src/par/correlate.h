/* correlate.h - `tally correlate`: bootstrap correlation studies of metrics against a human
 * score, distributed over ranks (and a GPU where one is present).
 *
 * Collective over `comm`. Rank 0 reads and validates the table, groups the rows and broadcasts
 * each group's columns; resamples [0, B) are split into contiguous blocks, one per rank; each
 * rank computes its block (CUDA when available, else the CPU path - bit-identical values);
 * MPI_Gatherv brings the values to rank 0 in resample order; rank 0 summarizes, prints and
 * writes. The output therefore does not depend on the rank count or the device. `comm` may be
 * TL_SOLO (comm.h): one process, MPI not initialised. */
#ifndef TALLY_CORRELATE_H
#define TALLY_CORRELATE_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "tally/tabin.h"

struct tl_writer;

typedef struct {
  const char *input;      /* table.csv | table.tsv | table.jsonl; with `table`, its name in messages */
  const tl_tabin *table;  /* rank 0: the table itself (a study over the run's own columns), read
                             instead of `input`; borrowed; NULL = read `input` */
  const char *human;      /* human score column */
  const char *metrics;    /* comma-separated metric columns */
  const char *group_by;   /* comma-separated columns, or NULL */
  uint64_t resamples;     /* B (ignored with --indices: B = rows of the matrix) */
  uint64_t seed;
  double ci;              /* confidence level, e.g. 0.95 */
  int method;             /* tl_ci_method */
  int stats_mask;         /* bit 0 spearman, bit 1 kendall_b */
  const char *indices;    /* explicit index matrix file, or NULL */
  const char *out;        /* HDF5 output, or NULL */
  int json;               /* print JSON instead of the table */
  int ttest_compat;       /* also print the compatibility t-test */
  int permutation;        /* run the paired permutation test (B permutations) */
  int device;             /* 0 auto, 1 cpu, 2 cuda (required) */
  int strict_input;
  int quiet;
  int break_lock;         /* --break-lock: take over a stale lock of `out` (outsafe.h) */
  int force;              /* --force: replace an existing `out` file */
  FILE *outf, *log;
  const char *label;      /* message prefix; NULL = "tally correlate" */
  /* cluster bootstrap (docs/STATISTICS.md "Cluster bootstrap"): the column whose equal values
   * form one cluster (a question), or NULL: items resampled. cluster_auto: resample clusters
   * only in the groups where some value of the column has several rows, and items where the
   * column is missing (the default of a study over a run's own columns) */
  const char *cluster;
  int cluster_auto;
  /* system-level agreement (docs/STATISTICS.md "System-level agreement"): the column naming the
   * system (model) of each row, or NULL: none. system_auto: no table when the column is absent */
  const char *system;
  int system_auto;
  /* the agreement table (correlate_agree.h): lists of rating columns, comma-separated, the
   * lists ';'-separated ("judge,human;h1,h2,h3"): every pair of a list, and Krippendorff's
   * alpha over all the columns of a list of three or more; NULL = none */
  const char *agreement;
  int agreement_scale;    /* alpha's metric: tl_kripp_metric (0 nominal, 1 ordinal, 2 interval) */
  const char *agreement_cluster; /* column whose values are resampled as clusters (e.g. the
                             question id when each question has one row per model); NULL =
                             items resampled */
} tl_corr_opts;

/* `tally correlate`: one study; writes o->out (when set) with the tables under
 * /stats/correlate. Collective. Returns the process exit code (same codes as `tally run`). */
int tl_correlate_run(const tl_corr_opts *o, MPI_Comm comm);

/* One study, collective over comm. Rank 0 prints it to o->outf (table or JSON) and, when w is
 * non-NULL (rank 0's open writer), writes its tables under `prefix` ("/stats/<name>"):
 * summary, compare, resamples, params. o->out is ignored here. Returns an exit code, the same on
 * every rank. Used by `tally correlate` and by study jobs inside `tally run`. */
int tl_corr_study(const tl_corr_opts *o, MPI_Comm comm, struct tl_writer *w, const char *prefix);

#endif
