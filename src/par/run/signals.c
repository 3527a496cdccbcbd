/* signals.c - signals (SIGTERM, SIGUSR1, SIGINT) before and after scoring, the test hooks, the clock. */
#include "run.h"

/* ---- signals: SIGTERM (SLURM preemption, scancel), SIGUSR1 (sbatch --signal), SIGINT ---- */
volatile sig_atomic_t g_stop = 0;
static void on_signal(int sig) { g_stop = sig; }
/* Sets handler for SIGTERM, SIGUSR1 and SIGINT. */
static void set_stop_handler(void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
}
void run_install_signals(void) {
  set_stop_handler(on_signal);
  /* A file-size limit (ulimit -f) or quota must give an error we can report, not a kill. */
  signal(SIGXFSZ, SIG_IGN);
}

/* The output lock's and the partial output's paths, for the handler below (rank 0 only; ""
 * elsewhere). */
char g_lock_path[4096], g_part_path[4096];
char g_spill_path[4096], g_rows_dir[4096]; /* this rank's spilled rows; their folder (rank 0) */

/* After scoring a signal ends the process at once, as the default action would, but first
 * removes the partial output and the output lock (unlink is async-signal-safe): the journal is
 * complete by then, and the next run must find neither a half file nor a stale lock. */
static void on_signal_late(int sig) {
  if (g_part_path[0]) unlink(g_part_path);
  if (g_lock_path[0]) unlink(g_lock_path);
  if (g_spill_path[0]) unlink(g_spill_path);
  if (g_rows_dir[0]) rmdir(g_rows_dir); /* (empty only once every rank has removed its file) */
  signal(sig, SIG_DFL);
  raise(sig);
}

/* After scoring: a signal ends the process (on_signal_late). */
void run_restore_signals(void) { set_stop_handler(on_signal_late); }

/* Fault injection, for the tests of signals and kills in each phase (tests/e2e/test_kill_phases.sh)
 * and nothing else: with TALLY_TEST_PAUSE=PHASE in the environment, rank 0 prints "tally: test
 * pause at PHASE" on stderr and sleeps 5 s when it reaches PHASE: "write" (the item table is
 * written, the metric tables are not) or "study" (before the first study). Unset: no effect. */
void run_test_pause(int rank, const char *phase, FILE *log) {
  const char *v = getenv("TALLY_TEST_PAUSE");
  if (rank != 0 || !v || strcmp(v, phase) != 0) return;
  fprintf(log, "tally: test pause at %s\n", phase);
  fflush(log);
  struct timespec ts = {5, 0};
  nanosleep(&ts, NULL);
}

double run_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Fault injection, for the tests of the collective error contract (tests/e2e/test_fail_ranks.sh)
 * and nothing else: with TALLY_TEST_FAIL=PHASE:RANK in the environment, rank RANK fails at PHASE
 * as a full disk or a lost file would make it fail. Unset, or another phase or rank: 0. */
int run_test_fail(const char *phase, int rank) {
  const char *v = getenv("TALLY_TEST_FAIL");
  if (!v) return 0;
  const char *colon = strchr(v, ':');
  if (!colon || (size_t)(colon - v) != strlen(phase) || strncmp(v, phase, strlen(phase)) != 0) return 0;
  return atoi(colon + 1) == rank;
}
