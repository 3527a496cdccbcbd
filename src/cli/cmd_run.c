/* cmd_run.c - `tally run JOB.json`: parses the options and hands the job to the driver under
 * MPI (tl_cli_with_mpi). A plain `tally run` is a one-rank run; `mpirun -n N` and
 * `srun --mpi=pmix` launch the same binary. */
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "driver.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: tally run JOB.json [--out FILE.h5] [--resume] [--strict-input] [--quiet] [--keep-journal]\n"
          "                          [--break-lock] [--force] [--cache DIR] [--dry-run[=FILE]] [--cell K]\n"
          "  --out FILE      write here instead of the job's \"output\" (an HDF5 file: a regular file, never '-')\n"
          "  --force         replace the output when it exists (a finished run's; --resume needs no --force)\n"
          "  --strict-input  stop at the first bad input line (exit 3, nothing written)\n"
          "  --quiet         no progress messages\n"
          "  --resume        continue an interrupted run from its journal (FILE.h5.journal/): finished\n"
          "                  units are not asked again; any rank count\n"
          "  --keep-journal  keep the journal after a successful run\n"
          "  --break-lock    take over the lock (FILE.h5.lock) of an earlier run on another host (a run\n"
          "                  that ended on this host is taken over without it)\n"
          "  --cache DIR     keep every reply of an HTTP engine (openai) in DIR, shared by ranks and jobs;\n"
          "                  a request whose reply is there is not sent again\n"
          "  --dry-run[=FILE]  write every request the job would send (to the model, and to the judge\n"
          "                  where the answers are known) as JSONL to FILE (default OUTPUT.requests.jsonl;\n"
          "                  '-' is standard output), send none, write no output\n"
          "  --cell K        run only cell K of the job's sweep (every benchmark lists the same models and\n"
          "                  seeds; cell K = model K / n_seeds, seed K %% n_seeds): one array task of\n"
          "                  `tally slurm --array`; `tally merge` joins the cells' outputs\n"
          "exit codes: 0 ok (bad input lines, if any, were reported and counted), 1 runtime failure,\n"
          "            2 usage or invalid job (nothing run), 3 bad input with --strict-input,\n"
          "            4 interrupted by SIGTERM/SIGUSR1/SIGINT (run again with --resume)\n");
}

static int run_mpi(void *ctx, MPI_Comm comm) { return tl_run_job((const tl_run_opts *)ctx, comm); }

int tl_cmd_run(int argc, char **argv) {
  tl_run_opts o;
  memset(&o, 0, sizeof o);
  o.out = stdout;
  o.log = stderr;
  o.cell = -1;
  enum { O_OUT = 1, O_STRICT, O_QUIET, O_RESUME, O_KEEP, O_BREAK, O_CACHE, O_DRY, O_CELL, O_FORCE, O_HELP };
  static const struct option LONG[] = {
      {"out", required_argument, NULL, O_OUT},       {"strict-input", no_argument, NULL, O_STRICT},
      {"quiet", no_argument, NULL, O_QUIET},         {"resume", no_argument, NULL, O_RESUME},
      {"keep-journal", no_argument, NULL, O_KEEP},   {"break-lock", no_argument, NULL, O_BREAK},
      {"cache", required_argument, NULL, O_CACHE},   {"dry-run", optional_argument, NULL, O_DRY},
      {"cell", required_argument, NULL, O_CELL},     {"force", no_argument, NULL, O_FORCE},
      {"help", no_argument, NULL, O_HELP},
      {NULL, 0, NULL, 0}};
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":h", LONG, NULL)) != -1) {
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
    case O_HELP: usage(stdout); return 0;
    default:
      tl_opt_unknown("tally run", c, optopt, argv[optind - 1]);
      usage(stderr);
      return TL_EXIT_USAGE;
    }
  }
  if (optind != argc - 1) {
    if (optind >= argc) fprintf(stderr, "tally run: the job file is missing\n");
    else fprintf(stderr, "tally run: one job file, please; unexpected argument '%s'\n", argv[optind + 1]);
    usage(stderr);
    return TL_EXIT_USAGE;
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
    fprintf(stderr, "tally run: --out needs a file path\n");
    return TL_EXIT_USAGE;
  }
  return tl_cli_with_mpi(&argc, &argv, "tally run", run_mpi, &o);
}
