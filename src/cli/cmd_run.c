/* cmd_run.c - `tally run JOB.json`: parses the options and hands the job to the driver under
 * MPI (tl_cli_with_mpi). A plain `tally run` is a one-rank run; `mpirun -n N` and
 * `srun --mpi=pmix` launch the same binary. */
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "driver.h"
#include "usage.h"

enum { O_OUT = 1, O_STRICT, O_QUIET, O_RESUME, O_KEEP, O_BREAK, O_CACHE, O_DRY, O_CELL, O_FORCE, O_HELP };
const struct option tl_opts_run[] = {
    {"output", required_argument, NULL, O_OUT},    {"out", required_argument, NULL, O_OUT},
    {"strict-input", no_argument, NULL, O_STRICT}, {"quiet", no_argument, NULL, O_QUIET},
    {"resume", no_argument, NULL, O_RESUME},       {"keep-journal", no_argument, NULL, O_KEEP},
    {"break-lock", no_argument, NULL, O_BREAK},    {"cache", required_argument, NULL, O_CACHE},
    {"dry-run", optional_argument, NULL, O_DRY},   {"cell", required_argument, NULL, O_CELL},
    {"force", no_argument, NULL, O_FORCE},         {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0}};

static int run_mpi(void *ctx, MPI_Comm comm) { return tl_run_job((const tl_run_opts *)ctx, comm); }

int tl_cmd_run(int argc, char **argv) {
  tl_run_opts o;
  memset(&o, 0, sizeof o);
  o.out = stdout;
  o.log = stderr;
  o.cell = -1;
  tl_opt_begin();
  int c;
  while ((c = getopt_long(argc, argv, ":h", tl_opts_run, NULL)) != -1) {
    switch (c) {
    case O_OUT: o.out_override = optarg; break;
    case O_STRICT: o.strict_input = 1; break;
    case O_QUIET: o.quiet = 1; break;
    case O_RESUME: o.resume = 1; break;
    case O_KEEP: o.keep_journal = 1; break;
    case O_BREAK: o.break_lock = 1; break;
    case O_FORCE: o.force = 1; break;
    case O_CACHE: o.cache_dir = optarg; break;
    case O_CELL: {
      uint64_t k;
      if (tl_opt_u64("tally run", "--cell", optarg, 0, 1u << 30, &k)) return TL_EXIT_USAGE;
      o.cell = (long)k;
      break;
    }
    case O_DRY:
      o.dry_run = 1;
      o.dry_path = optarg;
      break;
    case 'h':
    case O_HELP: return tl_usage_help("tally run", tl_usage_run);
    default: return tl_usage_bad_option("tally run", c, argv, tl_usage_run);
    }
  }
  if (optind != argc - 1) {
    if (optind >= argc) fprintf(stderr, "tally run: the job file is missing\n");
    else fprintf(stderr, "tally run: one job file, please; unexpected argument '%s'\n", argv[optind + 1]);
    return tl_usage_error(tl_usage_run);
  }
  o.job_path = argv[optind];
  if (o.cache_dir && !o.cache_dir[0]) {
    fprintf(stderr, "tally run: --cache needs a folder\n");
    return TL_EXIT_USAGE;
  }
  if (o.dry_run && o.dry_path && !o.dry_path[0]) {
    fprintf(stderr, "tally run: --dry-run=FILE needs a file path\n");
    return TL_EXIT_USAGE;
  }
  if (o.dry_run && o.resume) {
    fprintf(stderr, "tally run: --dry-run writes no output and --resume continues one: give one of them\n");
    return TL_EXIT_USAGE;
  }
  if (o.out_override && !o.out_override[0]) {
    fprintf(stderr, "tally run: --output needs a file path\n");
    return TL_EXIT_USAGE;
  }
  return tl_cli_with_mpi(&argc, &argv, "tally run", run_mpi, &o);
}
