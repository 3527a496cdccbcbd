/* driver.h - `tally run`: job -> units -> engine -> parse/score -> tables -> HDF5 + summary.
 *
 * Collective over `comm`: every rank calls it. Rank 0 validates the job (every problem reported,
 * nothing started on an invalid job); the output is opened collectively (parallel HDF5); the
 * benchmark units are dealt to the ranks in chunks on demand, journaled, moved to key-ordered
 * blocks and written collectively (the flow is at the top of driver.c and in
 * docs/ARCHITECTURE.md); then every study of the job runs collectively with its resamples split
 * over all ranks (src/par/correlate.c). Results are the same for any rank count. Only src/cli
 * touches MPI_COMM_WORLD. */
#ifndef TALLY_DRIVER_H
#define TALLY_DRIVER_H

#include <mpi.h>
#include <stdio.h>

#include "tally/table.h"
#include "tally/exit.h" /* TL_EXIT_*: the exit codes tl_run_job returns */


/* One input of `tally merge`: a finished run's output and the journal it kept. */
typedef struct {
  const char *name;        /* the input file, for messages */
  const char *journal_dir; /* its journal folder (`<file>.journal`, kept with --keep-journal) */
  const char *job_hash;    /* tl_journal_job_hash of the job that run read (the file's `job`) */
} tl_merge_input;

/* What a merge does with a unit that two inputs both hold (docs/MERGE.md). */
enum { TL_OVERLAP_ERROR = 0, TL_OVERLAP_FIRST, TL_OVERLAP_LAST, TL_OVERLAP_IDENTICAL };

typedef struct {
  const char *job_path;
  const char *job_as_written; /* when job_path is tally run's copy of the job with its foreign
                               inputs converted (tally/import.h): the job as the user wrote it.
                               The journal's job hash is taken from it (the copy names a fresh
                               folder each time, so --resume would find "another job"), and it
                               is stored as the root attribute job_as_written. NULL: job_path
                               is the user's */
  const tl_table *import_problems; /* rank 0, with job_as_written: the problems the
                               conversion reported (already echoed; the input log's table
                               layout: kind, file, line, message), added to /input_problems and
                               its counts; borrowed. NULL: none */
  const char *job_dir;      /* relative paths of the job resolve here, not in the job file's
                               folder (merge: the inputs' job folder), or NULL */
  const tl_merge_input *merge; /* tally merge: every stage of every unit comes from these
                               journals, in this order; no engine is opened and nothing is
                               journaled; the cfgs are the (model, variant, seed) they record */
  int n_merge;
  int overlap;              /* TL_OVERLAP_*: a unit recorded by two inputs */
  const char *cells_merged; /* merge of a sweep's cells: the cells the inputs hold ("0,2"), written
                               as the root attribute cells_merged with cells_missing and partial
                               (1 when cells_missing is not empty); NULL: not a sweep */
  const char *cells_missing;
  int force;                /* --force: replace an existing output (not needed with --resume) */
  long cell;                /* --cell K (>= 0): run only cell K of the job's sweep, -1: the whole job.
                               The cells are every benchmark's models x seeds (the lists must be
                               the same in every entry), model-major: K = model index * n_seeds +
                               seed index (docs/MERGE.md) */
  const char *out_override; /* --out PATH, or NULL */
  int strict_input;         /* --strict-input */
  int quiet;                /* --quiet: no progress lines */
  int resume;               /* --resume: continue from the journal of an earlier attempt */
  int keep_journal;         /* --keep-journal: keep it after a successful run */
  int break_lock;           /* --break-lock: take over a stale output lock (outsafe.h) */
  const char *cache_dir;    /* --cache DIR: the HTTP engines' reply cache, or NULL */
  int dry_run;              /* --dry-run[=FILE]: write the requests, send none, write no output */
  const char *dry_path;     /* its FILE, or NULL: <output>.requests.jsonl */
  FILE *out;                /* summary (stdout) */
  FILE *log;                /* messages (stderr) */
} tl_run_opts;

int tl_run_job(const tl_run_opts *o, MPI_Comm comm);

/* Shuts HDF5 down before MPI_Finalize; returns 1. Returns 0, touching nothing, when a file
 * could not be closed (disk full): HDF5 1.10 would crash closing it again at shutdown, so the
 * caller must then end the process without MPI_Finalize (_exit with its code; the journal and
 * every message are already out). */
int tl_par_shutdown(void);

#endif
