/* cmd_run.c - `tally run JOB.json`: parses the options and hands the job to the driver under
 * MPI (tl_cli_with_mpi). A plain `tally run` is a one-rank run; `mpirun -n N` and
 * `srun --mpi=pmix` launch the same binary. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "driver.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: tally run JOB.json [--out FILE.h5] [--resume] [--strict-input] [--quiet] [--keep-journal]\n"
          "  --out FILE      write here instead of the job's \"output\"\n"
          "  --strict-input  stop at the first bad input line (exit 3, nothing written)\n"
          "  --quiet         no progress messages\n"
          "  --resume        continue an interrupted run from its journal (FILE.h5.journal/): finished\n"
          "                  units are not asked again; any rank count\n"
          "  --keep-journal  keep the journal after a successful run\n"
          "exit codes: 0 ok (bad input lines, if any, were reported and counted), 1 runtime failure,\n"
          "            2 usage or invalid job (nothing run), 3 bad input with --strict-input,\n"
          "            4 interrupted by SIGTERM/SIGUSR1/SIGINT (run again with --resume)\n");
}

static int run_mpi(void *ctx, MPI_Comm comm) { return tl_run_job((const tl_run_opts *)ctx, comm); }

int tl_cmd_run(int argc, char **argv) {
  tl_run_opts o = {NULL, NULL, 0, 0, 0, 0, stdout, stderr};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--out") && i + 1 < argc) o.out_override = argv[++i];
    else if (!strcmp(argv[i], "--strict-input")) o.strict_input = 1;
    else if (!strcmp(argv[i], "--quiet")) o.quiet = 1;
    else if (!strcmp(argv[i], "--resume")) o.resume = 1;
    else if (!strcmp(argv[i], "--keep-journal")) o.keep_journal = 1;
    else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return 0; }
    else if (argv[i][0] == '-' || o.job_path) {
      fprintf(stderr, "tally run: unexpected argument '%s'\n", argv[i]);
      usage(stderr);
      return TL_EXIT_USAGE;
    } else o.job_path = argv[i];
  }
  if (!o.job_path) {
    usage(stderr);
    return TL_EXIT_USAGE;
  }
  return tl_cli_with_mpi(&argc, &argv, "tally run", run_mpi, &o);
}
