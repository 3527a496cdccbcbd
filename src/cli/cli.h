/* cli.h - subcommands of the `tally` executable. Each returns the process exit code. */
#ifndef TALLY_CLI_H
#define TALLY_CLI_H

int tl_cmd_parse(int argc, char **argv);
int tl_cmd_run(int argc, char **argv);
int tl_cmd_correlate(int argc, char **argv);

/* Runs fn(ctx, MPI_COMM_WORLD) between MPI_Init_thread and MPI_Finalize (the only place
 * MPI_COMM_WORLD is named) and returns its exit code; `what` names the command in messages. */
#include <mpi.h>
int tl_cli_with_mpi(int *argc, char ***argv, const char *what, int (*fn)(void *ctx, MPI_Comm comm),
                    void *ctx);

#endif
