/* main.c - the `tally` executable: its own options (getopt_long, up to the command's name) and
 * the dispatch to the command (usage.c's tl_cli_cmds), which parses the rest. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"
#include "comm.h"
#include "driver.h"
#include "writer.h" /* tl_h5_broken */
#include "tally/str.h"
#include "usage.h"

/* True when a launcher started this process (mpirun/mpiexec, srun --mpi=pmix, or another PMI):
 * each sets its own variables in the ranks' environment. */
static int launched(void) {
  static const char *const VARS[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                                     "PMI_FD", "MPI_LOCALNRANKS"};
  for (size_t i = 0; i < sizeof VARS / sizeof *VARS; i++)
    if (getenv(VARS[i])) return 1;
  return 0;
}

/* A plain `tally ...` is a one-rank (singleton) MPI run. Open MPI's defaults cost ~0.3 s there:
 * a singleton asks for a runtime daemon and initialises the UCX transport for peers it will never
 * have. With no launcher, these defaults (Open MPI's MCA variables, and hwloc's) are set unless
 * the user set them; under mpirun or srun nothing is changed. They stay in the environment
 * (taking them out while Open MPI's threads run would race with its getenv calls); the
 * commands that initialise MPI (run and merge; correlate only under a launcher) start no other
 * program. Components are left out by exclusion lists (`^name`), which Open MPI accepts when a
 * named component does not exist, so another build of Open MPI reads them too. */
static const char *const SINGLETON_ENV[][2] = {
    /* an isolated singleton (no daemon); the ob1 messaging layer over the `self` transport */
    {"OMPI_MCA_ess_singleton_isolated", "1"},
    {"OMPI_MCA_pml", "ob1"},
    {"OMPI_MCA_btl", "self"},
    {"OMPI_MCA_mtl", "^ofi"},
    /* Components a one-process world never selects, each otherwise loaded (dlopen) and
     * queried: the collectives for shared memory, topologies and intercommunicators, one-sided
     * transports (tally makes no MPI_Win), the launcher-side error and state managers, the
     * netlink reachability probe, POSIX and SysV shared memory, the AVX reduction operators.
     * About 6 ms of MPI_Init here. (The `schizo` and `allocator` components cannot be left out:
     * MPI_Init then fails.) */
    {"OMPI_MCA_coll", "^adapt,han,monitoring,sm,sync,tuned,inter"},
    {"OMPI_MCA_osc", "^monitoring,rdma,pt2pt,ucx,sm"},
    {"OMPI_MCA_errmgr", "^default_hnp,default_orted,default_tool"},
    {"OMPI_MCA_state", "^hnp,novm,orted,tool"},
    {"OMPI_MCA_reachable", "^netlink"},
    {"OMPI_MCA_shmem", "^posix,sysv"},
    {"OMPI_MCA_op", "^avx"},
    /* Open MPI's hwloc reads every PCI device's config space, and loads its PCI, OpenCL, GL and
     * libxml2 plugins (with libX11, libOpenCL, libicu and libxml2 behind them), to place network
     * devices a singleton never uses: about 16 ms of MPI_Init here. tally itself does not use
     * hwloc. */
    {"HWLOC_COMPONENTS", "-linuxio,-pci,-opencl,-gl"},
    {"HWLOC_PLUGINS_BLACKLIST", "hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_xml_libxml"},
};
#define N_SINGLETON_ENV (sizeof SINGLETON_ENV / sizeof *SINGLETON_ENV)

/* Sets the singleton defaults the user did not set (none under a launcher). */
static void singleton_defaults(void) {
  if (launched()) return;
  for (size_t i = 0; i < N_SINGLETON_ENV; i++) setenv(SINGLETON_ENV[i][0], SINGLETON_ENV[i][1], 0);
}

int tl_cli_with_mpi(int *argc, char ***argv, const char *what, int (*fn)(void *ctx, MPI_Comm comm),
                    void *ctx) {
  int provided;
  singleton_defaults();
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "%s: MPI_Init failed\n", what);
    return TL_EXIT_FAIL;
  }
  int rc = fn(ctx, MPI_COMM_WORLD);
  fflush(stdout);
  /* HDF5 holds a file some rank could not close (see driver.h): every rank then ends without
   * MPI_Finalize, and all together (the reduction), so that no rank is killed by the launcher
   * while it is still reporting (a rank that left early once took its peers with it) */
  int broken = tl_h5_broken(), any = broken;
  MPI_Allreduce(&broken, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any || !tl_par_shutdown()) {
    fflush(stderr);
    _exit(rc);
  }
  MPI_Finalize();
  return rc;
}

int tl_cli_solo_or_mpi(int *argc, char ***argv, const char *what,
                       int (*fn)(void *ctx, MPI_Comm comm), void *ctx) {
  if (launched()) return tl_cli_with_mpi(argc, argv, what, fn, ctx);
  int rc = fn(ctx, TL_SOLO);
  fflush(stdout);
  if (!tl_par_shutdown()) { /* as in tl_cli_with_mpi */
    fflush(stderr);
    _exit(rc);
  }
  return rc;
}

/* `tally --list-options [CMD]`: CMD's long options, one "--name" a line; without CMD, the
 * commands' names. Hidden (tests/e2e/test_cli_usage.sh, shell completion). */
static int list_options(const char *cmd) {
  const tl_cli_cmd *c = NULL;
  for (int i = 0; i < tl_n_cli_cmds; i++) {
    if (!cmd) printf("%s\n", tl_cli_cmds[i].name);
    else if (!strcmp(cmd, tl_cli_cmds[i].name)) c = &tl_cli_cmds[i];
  }
  if (cmd && !c) {
    fprintf(stderr, "tally: unknown command '%s'\n", cmd);
    return TL_EXIT_USAGE;
  }
  for (const struct option *o = c ? c->opts : NULL; o && o->name; o++) printf("--%s\n", o->name);
  return fflush(stdout) == 0 ? TL_EXIT_OK : TL_EXIT_FAIL;
}

int main(int argc, char **argv) {
  if (argc < 2) return tl_usage_error(tl_usage_tally);
  /* tally's own options, up to the command ('+': the command's options are its own) */
  enum { O_HELP = 'h', O_VERSION = 1, O_LIST };
  static const struct option LONG[] = {{"help", no_argument, NULL, O_HELP},
                                       {"version", no_argument, NULL, O_VERSION},
                                       {"list-options", no_argument, NULL, O_LIST},
                                       {NULL, 0, NULL, 0}};
  tl_opt_begin();
  int c;
  while ((c = getopt_long(argc, argv, "+:h", LONG, NULL)) != -1) {
    switch (c) {
    case O_HELP: return tl_usage_help("tally", tl_usage_tally);
    case O_VERSION: return printf("tally %s\n", TALLY_VERSION) < 0 || fflush(stdout) ? TL_EXIT_FAIL : TL_EXIT_OK;
    case O_LIST: return list_options(optind < argc ? argv[optind] : NULL);
    default: return tl_usage_bad_option("tally", c, argv, tl_usage_tally);
    }
  }
  if (optind >= argc) return tl_usage_error(tl_usage_tally); /* "tally --": no command */
  const char *name = argv[optind];
  if (!strcmp(name, "version")) return printf("tally %s\n", TALLY_VERSION) < 0 || fflush(stdout) ? TL_EXIT_FAIL : TL_EXIT_OK;
  if (!strcmp(name, "help")) return tl_usage_help("tally", tl_usage_tally);
  const tl_cli_cmd *cmd = NULL;
  for (int i = 0; i < tl_n_cli_cmds && !cmd; i++)
    if (!strcmp(name, tl_cli_cmds[i].name)) cmd = &tl_cli_cmds[i];
  if (!cmd) {
    fprintf(stderr, "tally: unknown command '%s'\n", name);
    return tl_usage_error(tl_usage_tally);
  }
  /* The parsers' case mapping needs glibc's C.UTF-8 locale: without it results would change in
   * silence (non-ASCII letters caseless), so nothing runs. */
  tl_err lerr;
  if (tl_utf8_locale_check(&lerr) != TL_OK) {
    fprintf(stderr, "tally: %s (Debian: the C.UTF-8 locale ships with libc-bin; check LOCPATH)\n", lerr.msg);
    return TL_EXIT_FAIL;
  }
  /* The replay engine keeps one descriptor per answers file open for the whole run: take the
   * hard limit of open files as the soft one (often 1024 -> 1048576), quietly, as far as allowed. */
  struct rlimit nf;
  if (getrlimit(RLIMIT_NOFILE, &nf) == 0 && nf.rlim_cur < nf.rlim_max) {
    nf.rlim_cur = nf.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nf);
  }
  return cmd->fn(argc - optind, argv + optind);
}
