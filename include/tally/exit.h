/* exit.h - the exit codes of every `tally` command, and the one map from a status to them.
 *
 * Never renumbered (scripts and SLURM requeue logic read them; docs/CLI.md). Every command
 * returns one of these; none writes a literal. */
#ifndef TALLY_EXIT_H
#define TALLY_EXIT_H

#include "tally/err.h"

enum {
  TL_EXIT_OK = 0,          /* finished; bad input lines, if any, were reported and counted */
  TL_EXIT_FAIL = 1,        /* runtime failure: I/O, HDF5, MPI, memory, engine, internal */
  TL_EXIT_USAGE = 2,       /* bad command line or invalid job: nothing was run */
  TL_EXIT_BAD_INPUT = 3,   /* the input cannot give a result (--strict-input and a bad line, too
                              many rejected lines, nothing to run): stopped, nothing written */
  TL_EXIT_INTERRUPTED = 4  /* SIGTERM/SIGUSR1/SIGINT: finished units are in the journal; run
                              again with --resume (a requeued SLURM job does) */
};

/* The exit code of a command that ended with status st: TL_OK -> 0; TL_EUSAGE, TL_EJOB -> 2;
 * TL_EINPUT -> 3; TL_EINTR -> 4; every other status -> 1. */
int tl_exit_code(tl_status st);

#endif
