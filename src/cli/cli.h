/* cli.h - subcommands of the `tally` executable. Each returns the process exit code, one of
 * tally/exit.h's TL_EXIT_* (tl_exit_code(st) where the command ends with a tl_status). Their
 * usage texts and option tables: usage.h. */
#ifndef TALLY_CLI_H
#define TALLY_CLI_H

#include "tally/exit.h"

int tl_cmd_parse(int argc, char **argv);
int tl_cmd_run(int argc, char **argv);
int tl_cmd_correlate(int argc, char **argv);
int tl_cmd_score(int argc, char **argv); /* `tally score vqa`: cmd_score.c */
int tl_cmd_compare(int argc, char **argv); /* `tally compare RUN.h5 --models A,B`: cmd_compare.c */
int tl_cmd_slurm(int argc, char **argv); /* `tally slurm JOB.json`: cmd_slurm.c */
int tl_cmd_merge(int argc, char **argv); /* `tally merge A.h5 B.h5 -o M.h5`: cmd_merge.c */
int tl_cmd_export(int argc, char **argv); /* `tally export RUN.h5 --format eee`: cmd_export.c */
int tl_cmd_import(int argc, char **argv); /* `tally import FILE`: cmd_import.c */
int tl_cmd_report(int argc, char **argv); /* `tally report RUN.h5 [--format F]`: cmd_report.c */

/* The report of run file `path` (cmd_report.c, docs/REPORT.md): TL_EIO when it is not a readable
 * output of tally (err names it), TL_EINPUT (a table cannot be read), TL_ENOMEM. *out: caller
 * frees (tl_doc_free). One process, no MPI. */
#include "tally/report.h"
tl_status tl_report_file(const char *path, tl_doc **out, tl_err *err);
/* Renders d in format f to outp (NULL or "-": standard output; a file: written whole or not at
 * all, outsafe.h); an exit code, with the message printed after "cmd: " on failure. */
int tl_report_print(const tl_doc *d, tl_report_fmt f, const char *outp, const char *cmd);

/* Strict option values (each prints "CMD: OPT takes ..., not 'V'" on stderr and returns -1 when
 * the value is not wholly valid; the caller then exits 2). */
#include <stdint.h>
/* A decimal whole number in [lo, hi], nothing before or after it ("-1", "1e25", "5000abc",
 * "2.5" and values past 2^64-1 are refused). */
int tl_opt_u64(const char *cmd, const char *opt, const char *v, uint64_t lo, uint64_t hi, uint64_t *out);
/* A finite number strictly inside (0, 1), wholly parsed ("0.95x" is refused). */
int tl_opt_open_unit(const char *cmd, const char *opt, const char *v, double *out);
/* The index of v in names[n], exactly. */
int tl_opt_choice(const char *cmd, const char *opt, const char *v, const char *const *names, int n);
/* A comma-separated list of names, each exactly one of names[n]: bit i of *mask per names[i]. */
int tl_opt_choices(const char *cmd, const char *opt, const char *v, const char *const *names, int n,
                   unsigned *mask);
/* A value that must not be empty (a path, a column name): "CMD: OPT needs a value, not ''". */
int tl_opt_nonempty(const char *cmd, const char *opt, const char *v);
/* A comma-separated list of names, each non-empty and given once ("a,,b", "a,a" and "" are
 * refused). */
int tl_opt_names(const char *cmd, const char *opt, const char *v);
/* Starts a getopt_long parse of a new argv: optind = 0 (glibc's full reinitialisation: with
 * optind = 1 it would keep the ordering of the previous parse, the '+' of the top-level one, and
 * stop at the first operand) and opterr = 0 (the messages are tl_opt_unknown's). Every command
 * calls it before its getopt_long loop, whose optstring starts with ':'. */
void tl_opt_begin(void);
/* The message for getopt_long's return c: '?' (unknown option) or ':' (missing value);
 * arg = argv[optind-1]. */
void tl_opt_unknown(const char *cmd, int c, int optopt_c, const char *arg);

/* Runs fn(ctx, MPI_COMM_WORLD) between MPI_Init_thread and MPI_Finalize (the only place
 * MPI_COMM_WORLD is named) and returns its exit code; `what` names the command in messages. */
#include <mpi.h>
int tl_cli_with_mpi(int *argc, char ***argv, const char *what, int (*fn)(void *ctx, MPI_Comm comm),
                    void *ctx);
/* Under a launcher (mpirun, srun: its variables are set), tl_cli_with_mpi. Without one, runs
 * fn(ctx, TL_SOLO) with MPI never initialised (comm.h: fn's collectives must be comm.h's), then
 * shuts HDF5 down as tl_cli_with_mpi does. For commands that nothing but one process could
 * share without a launcher: a singleton MPI world would be one rank too. */
int tl_cli_solo_or_mpi(int *argc, char ***argv, const char *what,
                       int (*fn)(void *ctx, MPI_Comm comm), void *ctx);

#endif
