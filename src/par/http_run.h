/* http_run.h - the job's HTTP engines on the ranks (src/engines/openai.h): opened on every rank
 * with its place on the node, checked for health before work starts, and reported at the end
 * (counts summed over ranks; each endpoint's concurrency history as a table). */
#ifndef TALLY_HTTP_RUN_H
#define TALLY_HTTP_RUN_H

#include <mpi.h>
#include <signal.h>
#include <stdio.h>

#include "openai.h"
#include "tally/job.h"
#include "writer.h"

/* Collective. Opens an openai engine for each role of the job whose type is "openai" (out[role];
 * NULL for the others) and waits until this rank's endpoints answer their health check. The
 * local rank is SLURM_LOCALID, else OMPI_COMM_WORLD_LOCAL_RANK, else the rank on the node
 * (MPI_Comm_split_type); the local size is the ranks on the node. dry: a dry run (no health
 * wait; requests written to dry on the rank that has it, others pass NULL). Every rank reports
 * its own failure on log. Returns 0 when every rank succeeded, else the worst exit code of any
 * rank (1 failure, 2 a job problem such as an unset API key variable); out[] is then freed. */
int tl_http_open(const tl_job *job, const char *cache_dir, FILE *dry, const volatile sig_atomic_t *stop,
                 MPI_Comm comm, FILE *log, tl_openai *out[TL_ROLE__N]);

/* Collective. The engines' counts summed over ranks: as root attributes "<role>_http" (one JSON
 * object: sent, replies, cache_hits, cache_writes, retries, failed, http_429, http_5xx,
 * timeouts, conn_errors, malformed) and, unless quiet, one line each on rank 0's log; and each
 * endpoint's concurrency history as the table /engine/<role>/concurrency (rank, endpoint, t_s,
 * limit, why), gathered to rank 0. w may be NULL (a dry run): only the lines. */
tl_status tl_http_report(tl_openai *const http[TL_ROLE__N], tl_writer *w, MPI_Comm comm, FILE *log, int quiet,
                         tl_err *err);

#endif
