/* main.c - the `tally` executable: subcommand dispatch. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <unistd.h>
#include <string.h>

#include "cli.h"
#include "driver.h"

static void usage(FILE *f) {
  fprintf(f,
          "tally %s - evaluation studies for LLMs and VLMs on HPC clusters\n"
          "usage: tally <command> [options]\n"
          "  run JOB.json    score a job (replay engine), write HDF5, print the summary\n"
          "  parse           run one answer parser over JSONL lines (inspection)\n"
          "  correlate       bootstrap Spearman/Kendall studies of metrics vs a human score\n"
          "  version         print the version\n"
          "`tally <command> --help` for a command's options.\n",
          TALLY_VERSION);
}

int tl_cli_with_mpi(int *argc, char ***argv, const char *what, int (*fn)(void *ctx, MPI_Comm comm),
                    void *ctx) {
  int provided;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "%s: MPI_Init failed\n", what);
    return TL_EXIT_FAIL;
  }
  int rc = fn(ctx, MPI_COMM_WORLD);
  fflush(stdout);
  if (!tl_par_shutdown()) { /* HDF5 holds a file it could not close: see driver.h */
    fflush(stderr);
    _exit(rc);
  }
  MPI_Finalize();
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "run")) return tl_cmd_run(argc - 1, argv + 1);
  if (!strcmp(argv[1], "parse")) return tl_cmd_parse(argc - 1, argv + 1);
  if (!strcmp(argv[1], "correlate")) return tl_cmd_correlate(argc - 1, argv + 1);
  if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
    printf("tally %s\n", TALLY_VERSION);
    return 0;
  }
  if (!strcmp(argv[1], "help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    usage(stdout);
    return 0;
  }
  fprintf(stderr, "tally: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
