/* driver.c - `tally run` (see driver.h). It names no benchmark: every benchmark is a module
 * (tally/bench.h) and units go through their stages in the core pipeline (tally/run.h).
 *
 * Flow of the benchmarks part (collective over comm, a duplicate of the caller's):
 *  1. every rank loads every benchmark's items and opens the replay engine of each role (an
 *     index of the answer lines, not their texts) and builds the same cfgs and units (key
 *     order); only rank 0 reports input problems;
 *  2. with --resume every rank reads the journals of earlier attempts and restores the units of
 *     its own key blocks: fully journaled ones are scored, half-done ones (generated, not
 *     judged) start at their next stage; the done flags are combined;
 *  3. the pending units are dealt in chunks on demand: workers ask rank 0 for the next chunk
 *     when they finish one. Rank 0 works too: it answers requests between its own engine polls,
 *     so no core idles on a small node. Every stage's reply is journaled before it is used
 *     (fsync at most every 0.5 s); a finished unit is added to the accumulators and kept only
 *     as where its replies are journaled;
 *  4. per benchmark, those records move to their owners - rank q owns the key block
 *     [U q / N, U (q+1) / N) - with one MPI_Alltoallv; each rank writes its block of the item
 *     table window by window (texts read back from the journal, rows scored again), and the
 *     accumulators are reduced to rank 0 (sum, min, max), which builds the metric tables from
 *     the integers in key order.
 * So the datasets do not depend on the rank count or on who scored what. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* realpath */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include <hdf5.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "correlate.h"
#include "driver.h"
#include "h5_common.h"
#include "http_run.h"
#include "journal.h"
#include "outsafe.h"
#include "provenance.h"
#include "rdahead.h"
#include "replay.h"
#include "tally/boot.h"
#include "tally/inlog.h"
#include "tally/job.h"
#include "tally/run.h"
#include "tally/str.h"
#include "writer.h"
#include "tally_git.h" /* generated: TALLY_GIT_COMMIT */

/* Collective. Every rank agrees on the code: the highest (worst) code of any rank. */
static int agree(int rc, MPI_Comm comm) {
  int all = rc;
  MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, comm);
  return all;
}

/* ---- moving rows to their owners ---- */
static uint64_t block_lo(uint64_t U, int q, int nranks) {
  return (uint64_t)(((unsigned __int128)U * (unsigned)q) / (unsigned)nranks);
}
static int owner_of(uint64_t u, uint64_t U, int nranks) {
  /* the q with block_lo(q) <= u < block_lo(q + 1) */
  int q = (int)(((unsigned __int128)u * (unsigned)nranks) / U);
  while (q + 1 < nranks && block_lo(U, q + 1, nranks) <= u) q++;
  while (q > 0 && block_lo(U, q, nranks) > u) q--;
  return q;
}

/* ---- signals: SIGTERM (SLURM preemption, scancel), SIGUSR1 (sbatch --signal), SIGINT ---- */
static volatile sig_atomic_t g_stop = 0;
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
static void install_signals(void) {
  set_stop_handler(on_signal);
  /* A file-size limit (ulimit -f) or quota must give an error we can report, not a kill. */
  signal(SIGXFSZ, SIG_IGN);
}

/* The output lock's and the partial output's paths, for the handler below (rank 0 only; ""
 * elsewhere). */
static char g_lock_path[4096], g_part_path[4096];
static char g_spill_path[4096], g_rows_dir[4096]; /* this rank's spilled rows; their folder (rank 0) */

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
static void restore_signals(void) { set_stop_handler(on_signal_late); }

/* Fault injection, for the tests of signals and kills in each phase (tests/e2e/test_kill_phases.sh)
 * and nothing else: with TALLY_TEST_PAUSE=PHASE in the environment, rank 0 prints "tally: test
 * pause at PHASE" on stderr and sleeps 5 s when it reaches PHASE: "write" (the item table is
 * written, the metric tables are not) or "study" (before the first study). Unset: no effect. */
static void test_pause(int rank, const char *phase, FILE *log) {
  const char *v = getenv("TALLY_TEST_PAUSE");
  if (rank != 0 || !v || strcmp(v, phase) != 0) return;
  fprintf(log, "tally: test pause at %s\n", phase);
  fflush(log);
  struct timespec ts = {5, 0};
  nanosleep(&ts, NULL);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One benchmark's finished units held by this rank, compact: no texts and no parse results,
 * only where the unit's item-table row was spilled (read back when the table is written,
 * window by window). Before the exchange in any order, afterwards exactly the rank's key block
 * in key order. rec[i * w] is the local unit index, rec[i * w + 1] the spilled row (jref():
 * the rank whose file holds it, the offset). */
typedef struct {
  uint64_t *rec;
  size_t n, cap;  /* units */
  int w;          /* uint64 per unit: 2 */
} held_rows;

/* A journal ref: file index (into the run's tl_jfiles) and byte offset of the line. */
#define JREF_OFF_BITS 40
static uint64_t jref(int file, uint64_t off) { return ((uint64_t)file << JREF_OFF_BITS) | off; }
static int jref_file(uint64_t ref) { return (int)(ref >> JREF_OFF_BITS); }
static uint64_t jref_off(uint64_t ref) { return ref & ((1ULL << JREF_OFF_BITS) - 1); }

/* The run of the job's benchmarks on this rank. */
typedef struct {
  const tl_job *job;
  tl_run_bench *rbs;        /* [nb], bases in job order */
  size_t nb;
  uint64_t U;               /* units of every benchmark */
  tl_replay *replay[TL_ROLE__N]; /* NULL: no replay files for the role */
  tl_openai *http[TL_ROLE__N];   /* the role's HTTP engine, NULL when it has none */
  tl_engine *eng[TL_ROLE__N];    /* the engine that answers the role: http's, else replay's */
  unsigned evidence;             /* bit s: stage s is answered by an HTTP engine, so the item
                                    tables get its evidence columns (tl_evidence_cols) */
  int dry;                       /* a dry run: nothing journaled */
  int merging;                   /* tally merge: every reply comes from the inputs' journals */
  FILE *msg;                     /* this rank's messages (stderr) */
  tl_buf merge_msg;              /* merge: why an input's journal cannot be merged */
  /* merge: every input's journal files are r->jf's files (the same list on every rank, input
   * after input, each input's in name order); each rank scans its share of them once and keeps
   * where each record is, for its owner */
  int *file_input;               /* [jf.n] the input of each file */
  struct mrec {                  /* a record this rank scanned */
    uint32_t lcfg, item, sub;    /* lcfg: index in lcfg_key */
    uint16_t stage, bench;
    uint32_t file;
    uint64_t offset;
  } *mrecs;
  size_t nmrecs, capmrecs;
  tl_strmap lcfg_of;             /* "bench\x1fmodel\x1fvariant index\x1fseed" -> index in lcfg_key */
  char **lcfg_key;
  size_t nlcfg, caplcfg;
  long m_nrec, m_nskip;          /* records and skipped lines this rank scanned */
  /* The item-table row of each finished unit, as built when it finished: each rank appends its
   * own to <output>.rows/r<rank>.bin (spill_row's format), so the tables are written without
   * reading the journal back or scoring anything again. Removed at the end of the run. */
  char *rows_dir;
  FILE *spill;                   /* this rank's file, NULL when rows are not spilled (dry run) */
  char *spill_vbuf;              /* its stdio buffer (TL_JOURNAL_VBUF bytes), freed after it is closed */
  uint64_t spill_pos;            /* bytes written to it */
  int *spill_fd;                 /* [nranks] every rank's file, opened for reading on first use */
  tl_buf spill_buf;
  tl_pipe *pipe;
  held_rows *held;          /* [nb] */
  struct found {            /* [nb] what the answers (stage 0) hold, seen as the replay loads */
    tl_cfg *cfgs;           /* distinct (model, variant, seed) */
    size_t ncfgs, cap;
    tl_strmap seen;         /* cfg key -> index */
    tl_strmap models;       /* distinct models */
    tl_buf model_list;      /* the first 8, quoted, for messages */
    char *last_model;       /* the (model, variant, seed) of the last answer seen, owned: lines of */
    int last_variant, last_seed; /* one file mostly share it, and it is already in cfgs */
  } *found;
  tl_inlog *log;            /* for the replay's discovery callback */
  tl_journal *jn;           /* this attempt's journal (scheduling) */
  tl_jfiles jf;             /* every journal file of the run: earlier attempts', then one per rank */
  int jf_mine;              /* the index of this rank's file of this attempt */
  tl_acc_block (*lay)[TL_MAX_ACC]; /* [nb] each benchmark's accumulator layout */
  int *nblk;                /* [nb] */
  int64_t *(*acc)[TL_MAX_ACC]; /* [nb][nblk] this rank's accumulators (units added as they finish) */
  int rank, nranks;
  uint64_t **strb;          /* [nb][nranks * nstr[b] * 2]: of each string column of the item
                               table, over the units this rank finished, by the rank that owns
                               them: the bytes and the longest value's bytes (write_rows'
                               str_stats, so the table is written in one pass, window by window) */
  int *nstr;                /* [nb] string columns of the item table */
  tl_table **rowtab;        /* [nb] one finished unit's item-table row, cleared and filled again
                               for each unit (its columns are made once) */
  uint64_t finished, failed;/* units finished by this rank in this attempt; of which unanswered */
  /* [nb][ncfgs * FATE_N]: per cfg, the units this rank finished and how their stages ended
   * (fate_check reduces them: a model or judge with no answer at all fails the run) */
  uint64_t **fate;
  char *first_error[TL_ROLE__N]; /* owned: the first engine failure this rank saw, per role */
  tl_strmap reasons[TL_ROLE__N]; /* the engine failures' reasons this rank saw -> units, per role
                                    (the attempts left out of the text); at most MAX_REASONS */
  int reasons_init;
  uint64_t restored;        /* units whose every stage came from the journal */
  uint64_t resumed[TL_MAX_STAGES]; /* stages taken from the journal, by stage */
} bench_run;

static void bench_run_release(bench_run *r) {
  tl_pipe_free(r->pipe);
  for (size_t b = 0; r->held && b < r->nb; b++) free(r->held[b].rec);
  free(r->held);
  for (size_t b = 0; r->found && b < r->nb; b++) {
    tl_cfgs_free(r->found[b].cfgs, r->found[b].ncfgs);
    tl_strmap_release(&r->found[b].seen);
    tl_strmap_release(&r->found[b].models);
    tl_buf_release(&r->found[b].model_list);
    free(r->found[b].last_model);
  }
  free(r->found);
  for (size_t b = 0; r->fate && b < r->nb; b++) free(r->fate[b]);
  free(r->fate);
  for (int k = 0; k < TL_ROLE__N; k++) free(r->first_error[k]);
  for (int k = 0; r->reasons_init && k < TL_ROLE__N; k++) tl_strmap_release(&r->reasons[k]);
  for (size_t b = 0; r->acc && b < r->nb; b++)
    for (int k = 0; k < TL_MAX_ACC; k++) free(r->acc[b][k]);
  for (size_t b = 0; r->strb && b < r->nb; b++) free(r->strb[b]);
  free(r->strb);
  for (size_t b = 0; r->rowtab && b < r->nb; b++) tl_table_free(r->rowtab[b]);
  free(r->rowtab);
  free(r->nstr);
  free(r->acc);
  free(r->lay);
  free(r->nblk);
  tl_jfiles_release(&r->jf);
  tl_buf_release(&r->merge_msg);
  if (r->spill) fclose(r->spill);
  free(r->spill_vbuf);
  for (int q = 0; r->spill_fd && q < r->nranks; q++)
    if (r->spill_fd[q] >= 0) close(r->spill_fd[q]);
  free(r->spill_fd);
  free(r->rows_dir);
  tl_buf_release(&r->spill_buf);
  free(r->file_input);
  free(r->mrecs);
  tl_strmap_release(&r->lcfg_of);
  for (size_t i = 0; i < r->nlcfg; i++) free(r->lcfg_key[i]);
  free(r->lcfg_key);
  for (size_t b = 0; r->rbs && b < r->nb; b++) tl_rb_release(&r->rbs[b]);
  free(r->rbs);
  for (int k = 0; k < TL_ROLE__N; k++) {
    if (r->replay[k]) tl_replay_engine(r->replay[k])->vt->free(tl_replay_engine(r->replay[k]));
    if (r->http[k]) tl_openai_engine(r->http[k])->vt->free(tl_openai_engine(r->http[k]));
  }
}

/* Benchmark b's item table of n rows (units[i], rows[i]; n = 0 and NULL: the schema): the
 * module's columns, then the evidence of the stages HTTP engines answer. */
static tl_table *items_table(const bench_run *r, size_t b, const tl_unit *units, const tl_row *rows, size_t n,
                             tl_table *into) {
  const tl_run_bench *rb = &r->rbs[b];
  tl_table *t = rb->vt->items_table(rb->b, rb->cfgs, units, rows, n, into);
  unsigned mask = r->evidence & ((1u << rb->nstages) - 1);
  if (t && mask && tl_evidence_cols(t, rows, n, mask) != TL_OK) {
    if (t != into) tl_table_free(t);
    t = NULL;
  }
  return t;
}

/* Keeps unit u (local index) of a finished row: its journal refs only. */
static tl_status push_row(held_rows *h, uint64_t u, uint64_t spilled) {
  if (h->n == h->cap) {
    size_t cap = h->cap ? h->cap * 2 : 1024;
    uint64_t *p = realloc(h->rec, cap * (size_t)h->w * sizeof *p);
    if (!p) return TL_ENOMEM;
    h->rec = p;
    h->cap = cap;
  }
  uint64_t *x = h->rec + h->n * (size_t)h->w;
  x[0] = u;
  x[1] = spilled;
  h->n++;
  return TL_OK;
}

static int has_str(char *const *l, int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (strcmp(l[i], s) == 0) return 1;
  return 0;
}
static int has_int(const int *l, int n, int v) {
  for (int i = 0; i < n; i++)
    if (l[i] == v) return 1;
  return 0;
}

/* The key of a replay source's default variant: the source's, else the benchmark's. */
static const char *default_variant(const tl_job_bench *jb, const tl_job_answers *a) {
  return a->variant ? a->variant : jb->vt->variants[jb->vt->default_variant(jb->mod)];
}

/* The cfgs of benchmark b: the (model, variant, seed) combinations found in its answers (stage
 * 0), kept only when they match the job's model/seed lists; when the job lists both models and
 * seeds, every listed combination is a cfg even without answers (its units are then counted
 * "missing"). */
static tl_status build_cfgs(bench_run *r, size_t b) {
  const tl_job_bench *jb = &r->job->benches[b];
  tl_run_bench *rb = &r->rbs[b];
  tl_strmap seen;
  tl_strmap_init(&seen);
  size_t cap = 0;
  tl_status st = TL_OK;
  const struct found *fd = &r->found[b];
  const int dv = jb->vt->default_variant(jb->mod);
  for (size_t i = 0; i < fd->ncfgs && st == TL_OK; i++) {
    const tl_cfg *k = &fd->cfgs[i];
    if (jb->models && !has_str(jb->models, jb->n_models, k->model)) continue;
    if (jb->seeds && !has_int(jb->seeds, jb->n_seeds, k->seed)) continue;
    st = tl_cfgs_add(&rb->cfgs, &rb->ncfgs, &cap, &seen, k->model, k->variant, k->seed);
  }
  if (jb->models && jb->seeds && !r->merging) { /* (a merge's cfgs are what its inputs ran) */
    for (int m = 0; m < jb->n_models && st == TL_OK; m++) {
      int any = 0;
      for (size_t c = 0; c < rb->ncfgs; c++) any |= strcmp(rb->cfgs[c].model, jb->models[m]) == 0;
      if (any) {
        /* every listed seed for every variant this model was seen with */
        size_t n0 = rb->ncfgs;
        for (size_t c = 0; c < n0 && st == TL_OK; c++)
          if (strcmp(rb->cfgs[c].model, jb->models[m]) == 0)
            for (int s = 0; s < jb->n_seeds && st == TL_OK; s++)
              st = tl_cfgs_add(&rb->cfgs, &rb->ncfgs, &cap, &seen, jb->models[m], rb->cfgs[c].variant, jb->seeds[s]);
      } else {
        for (int s = 0; s < jb->n_seeds && st == TL_OK; s++)
          st = tl_cfgs_add(&rb->cfgs, &rb->ncfgs, &cap, &seen, jb->models[m], dv, jb->seeds[s]);
      }
    }
  }
  tl_strmap_release(&seen);
  if (st == TL_OK) tl_cfgs_sort(rb->cfgs, rb->ncfgs);
  return st;
}

/* A `models` or `seeds` value that no answer of the benchmark has is a typo until shown
 * otherwise: TL_EJOB naming every such value and what the answers do hold (never a run of zero
 * units or of units that are all "missing"). */
static tl_status check_filters(const bench_run *r, size_t b, tl_err *err) {
  const tl_job_bench *jb = &r->job->benches[b];
  const struct found *fd = &r->found[b];
  tl_buf bad;
  tl_buf_init(&bad);
  tl_status st = TL_OK;
  for (int m = 0; m < jb->n_models && !st; m++)
    if (!tl_strmap_get(&fd->models, jb->models[m], NULL))
      st = tl_buf_printf(&bad, "%smodel '%s'", bad.len ? "; " : "", jb->models[m]);
  for (int s = 0; s < jb->n_seeds && !st; s++) {
    int any = 0;
    for (size_t i = 0; i < fd->ncfgs && !any; i++) any = fd->cfgs[i].seed == jb->seeds[s];
    if (!any) st = tl_buf_printf(&bad, "%sseed %d", bad.len ? "; " : "", jb->seeds[s]);
  }
  if (st) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  else if (bad.len)
    st = tl_err_set(err, TL_EJOB, "the job's filter names what no answer file holds: %s (the answers have "
                    "model%s %s%s); fix the \"models\"/\"seeds\" lists of the benchmark", bad.data,
                    fd->models.n == 1 ? "" : "s", fd->model_list.data ? fd->model_list.data : "",
                    fd->models.n > 8 ? ", ..." : "");
  tl_buf_release(&bad);
  return st;
}

/* Rank 0: creates the journal folder (its parent is the output's folder, checked already). */
static int mkdir_p_journal(const char *dir, FILE *log) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(log, "tally: cannot create the journal folder '%s': %s\n", dir, strerror(errno));
    return 1;
  }
  return 0;
}

/* The benchmark of a run named `name`, or -1. */
static int bench_index(const bench_run *r, const char *name) {
  for (size_t b = 0; b < r->nb; b++)
    if (strcmp(r->rbs[b].vt->name, name) == 0) return (int)b;
  return -1;
}

/* The replay's discovery callback, once per accepted line: a reply for an item the job does
 * not have is reported and counted, never scored; the answers' (model, variant, seed) and
 * models are noted for the cfgs and the filter checks. Nonzero stops loading (strict input). */
static int on_replay_key(void *ctx, const tl_unit_key *k, const char *path, long line) {
  bench_run *r = ctx;
  int b = bench_index(r, k->bench);
  size_t item;
  if (b < 0 || !r->rbs[b].vt->item_find(r->rbs[b].b, k->id, &item))
    return tl_inlog_report(r->log, TL_IN_UNKNOWN_ITEM, path, line, "%s for unknown item '%s'",
                           k->stage == 0 ? "answer" : "judgment", k->id) != TL_OK;
  /* an item the module leaves out (found at index n_items: SpatialEval's unselected modes) */
  if (item >= r->rbs[b].vt->n_items(r->rbs[b].b)) return 0;
  struct found *fd = &r->found[b];
  if (k->stage != 0) { /* a judgment matches when its model answered (the answers load first) */
    if ((fd->models.n == 0 || tl_strmap_get(&fd->models, k->model, NULL)) && tl_inlog_matched(r->log, path, 1)) return 1;
    return 0;
  }
  if (tl_inlog_matched(r->log, path, 1)) return 1;
  const int variant = tl_bench_variant(r->rbs[b].vt, k->variant);
  if (fd->last_model && fd->last_variant == variant && fd->last_seed == k->seed && strcmp(fd->last_model, k->model) == 0)
    return 0; /* the configuration of the line before */
  bool ins = false;
  if (tl_strmap_put(&fd->models, k->model, 0, &ins, NULL)) return 1;
  if (ins && fd->models.n <= 8 && tl_buf_printf(&fd->model_list, "%s'%s'", fd->model_list.len ? ", " : "", k->model))
    return 1;
  if (tl_cfgs_add(&fd->cfgs, &fd->ncfgs, &fd->cap, &fd->seen, k->model, variant, k->seed) != TL_OK) return 1;
  char *m = tl_strdup(k->model);
  if (!m) return 1;
  free(fd->last_model);
  fd->last_model = m;
  fd->last_variant = variant;
  fd->last_seed = k->seed;
  return 0;
}

/* The replay's sub of a line (a tl_replay_sub_fn, given to tl_replay_open_subs): "turn" is the
 * unit's sub (from 0) and must be one of the item's; "turn_id" is the item's 1-based turn, which
 * the module maps to its sub (vt->turn_sub; without one turn t is sub t - 1); with both they
 * must agree. A line that
 * names no unit is a bad line (file:line), never a reply that is silently never asked for. An
 * item the job does not have passes: on_replay_key reports it. */
static int replay_sub(void *ctx, const char *bench, const char *id, int64_t turn, int64_t turn_id, uint32_t *sub,
                      char *msg, size_t msz) {
  const bench_run *r = ctx;
  int b = bench_index(r, bench);
  size_t item;
  *sub = turn >= 0 ? (uint32_t)turn : 0;
  if (b < 0 || !r->rbs[b].vt->item_find(r->rbs[b].b, id, &item)) return 0;
  if (item >= r->rbs[b].vt->n_items(r->rbs[b].b)) return 0; /* left out by the module: no unit */
  const tl_bench_vt *vt = r->rbs[b].vt;
  const uint32_t n = vt->n_subs(r->rbs[b].b, item);
  if (turn_id >= 0) {
    uint32_t s = (uint32_t)(turn_id - 1);
    char why[256];
    if (vt->turn_sub && vt->turn_sub(r->rbs[b].b, item, (uint64_t)turn_id, &s, why, sizeof why) != 0)
      return snprintf(msg, msz, "field 'turn_id' is %lld: %s", (long long)turn_id, why), -1;
    if (!vt->turn_sub && turn_id > (int64_t)n)
      return snprintf(msg, msz, "field 'turn_id' is %lld but item '%s' has %u turn%s (turn_id counts from 1)",
                      (long long)turn_id, id, (unsigned)n, n == 1 ? "" : "s"), -1;
    if (turn >= 0 && (uint32_t)turn != s)
      return snprintf(msg, msz, "fields 'turn' (%lld: the judged-turn index, from 0) and 'turn_id' (%lld: the "
                      "dialogue's turn, from 1) name different turns of item '%s' (turn_id %lld is 'turn' %u)",
                      (long long)turn, (long long)turn_id, id, (long long)turn_id, (unsigned)s), -1;
    *sub = s;
    return 0;
  }
  if (*sub >= n)
    return snprintf(msg, msz, "field 'turn' is %lld but item '%s' has %u judged turn%s, 'turn' 0 to %u ('turn' is "
                    "the judged-turn index, from 0; the dialogue's turn, from 1, is 'turn_id')",
                    (long long)turn, id, (unsigned)n, n == 1 ? "" : "s", n ? (unsigned)n - 1 : 0u), -1;
  return 0;
}

/* Opens the replay engine of each role from the benchmarks' files (answers: stage 0 for the
 * model; judgments: stage 1 for the judge). */
static tl_status open_replays(bench_run *r, tl_inlog *log, tl_err *err) {
  const tl_job *job = r->job;
  r->log = log;
  for (int role = 0; role < TL_ROLE__N; role++) {
    int n = 0;
    for (int b = 0; b < job->n_benches; b++)
      n += role == TL_ROLE_MODEL ? job->benches[b].n_answers : job->benches[b].n_judgments;
    if (n == 0) continue;
    tl_replay_source *src = calloc((size_t)n, sizeof *src);
    if (!src) return tl_err_set(err, TL_ENOMEM, "out of memory");
    int k = 0;
    for (int b = 0; b < job->n_benches; b++) {
      const tl_job_bench *jb = &job->benches[b];
      const tl_job_answers *a = role == TL_ROLE_MODEL ? jb->answers : jb->judgments;
      int na = role == TL_ROLE_MODEL ? jb->n_answers : jb->n_judgments;
      for (int i = 0; i < na; i++, k++) {
        src[k].path = a[i].path;
        src[k].bench = jb->benchmark;
        src[k].stage = role == TL_ROLE_MODEL ? 0 : 1;
        src[k].model = a[i].model;
        src[k].seed = a[i].seed;
        src[k].variant = default_variant(jb, &a[i]);
        src[k].variants = jb->vt->variants;
      }
    }
    tl_status st = TL_OK;
    for (int i = 0; i < n && !st; i++) /* their lines are matched to units: counted as such */
      if (tl_inlog_matched(log, src[i].path, 0)) st = tl_err_set(err, TL_ENOMEM, "out of memory");
    if (!st)
      st = tl_replay_open_subs(src, n, job->max_line, log, on_replay_key, r, replay_sub, r, &r->replay[role], err);
    free(src);
    if (st) return st;
    tl_replay_set_latency(r->replay[role], job->engines[role].latency_ms);
  }
  return TL_OK;
}

static tl_status on_unit_done(void *ctx, size_t b, uint64_t g, tl_row *row);

/* Collective-free part of the setup, run by every rank: items, replies, cfgs, units, pipeline.
 * Rank 0's log echoes problems; the others' logs are silent (same input, same problems). */
/* tally merge, the scan (each rank its share of the files): a record's unit key is noted with
 * where the record is, and each stage-0 record's (model, variant, seed) is a cfg of its
 * benchmark, as the replay's discovery makes one of each answer. A record for an item the
 * benchmark does not have means the inputs ran on other items: TL_EJOB with the reason. */
static tl_status on_merge_scan(void *ctx, const tl_journal_rec *rec) {
  bench_run *r = ctx;
  const tl_unit_key *k = &rec->key;
  int b = bench_index(r, k->bench);
  size_t item;
  if (b < 0) return TL_OK; /* the merged job lists every input's benchmarks: not reached */
  if (!r->rbs[b].vt->item_find(r->rbs[b].b, k->id, &item)) {
    tl_buf_printf(&r->merge_msg, "its journal records %s item '%s', which the items of the job do not have",
                  k->bench, k->id);
    return TL_EJOB;
  }
  r->m_nrec++;
  if (k->stage < 0 || k->stage >= TL_MAX_STAGES) return TL_OK; /* not of this job */
  if (item >= r->rbs[b].vt->n_items(r->rbs[b].b)) return TL_OK; /* an item the module leaves out */
  tl_buf kb;
  tl_buf_init(&kb);
  if (tl_buf_printf(&kb, "%d\x1f%s\x1f%d\x1f%d", b, k->model, tl_bench_variant(r->rbs[b].vt, k->variant), k->seed))
    return TL_ENOMEM;
  size_t id;
  if (!tl_strmap_get(&r->lcfg_of, kb.data, &id)) {
    if (r->nlcfg == r->caplcfg) {
      size_t nc = r->caplcfg ? 2 * r->caplcfg : 64;
      char **nk = realloc(r->lcfg_key, nc * sizeof *nk);
      if (!nk) return tl_buf_release(&kb), TL_ENOMEM;
      r->lcfg_key = nk;
      r->caplcfg = nc;
    }
    id = r->nlcfg;
    r->lcfg_key[r->nlcfg++] = tl_buf_detach(&kb);
    if (tl_strmap_put(&r->lcfg_of, r->lcfg_key[id], id, NULL, NULL)) return TL_ENOMEM;
  }
  tl_buf_release(&kb);
  if (k->stage == 0) {
    struct found *fd = &r->found[b];
    tl_status st = tl_cfgs_add(&fd->cfgs, &fd->ncfgs, &fd->cap, &fd->seen, k->model,
                               tl_bench_variant(r->rbs[b].vt, k->variant), k->seed);
    if (st) return st;
  }
  if (r->nmrecs == r->capmrecs) {
    size_t nc = r->capmrecs ? 2 * r->capmrecs : 1024;
    struct mrec *nm = realloc(r->mrecs, nc * sizeof *nm);
    if (!nm) return TL_ENOMEM;
    r->mrecs = nm;
    r->capmrecs = nc;
  }
  r->mrecs[r->nmrecs++] = (struct mrec){(uint32_t)id, (uint32_t)item, k->sub, (uint16_t)k->stage, (uint16_t)b,
                                        (uint32_t)rec->file, rec->offset};
  return TL_OK;
}

/* Collective. The merge's scan: every rank lists every input's journal files (r->jf, the same
 * on every rank), reads its share (file f on rank f mod N) once, and the stage-0 cfgs found
 * are gathered on every rank (build_cfgs then sorts them: the same cfgs everywhere). */
static tl_status merge_scan(const tl_run_opts *o, bench_run *r, MPI_Comm comm, tl_err *err) {
  tl_status st = TL_OK;
  int *fi = NULL;
  for (int d = 0; d < o->n_merge && !st; d++) {
    int n = 0;
    char **names = tl_journal_list(o->merge[d].journal_dir, &n);
    int *g = realloc(fi, (size_t)(r->jf.n + n + 1) * sizeof *g);
    if (!g) st = TL_ENOMEM;
    else fi = g;
    for (int i = 0; i < n && !st; i++) {
      fi[r->jf.n] = d;
      st = tl_jfiles_add(&r->jf, names[i], NULL);
    }
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
  }
  r->file_input = fi;
  if (st) return tl_err_set(err, TL_ENOMEM, "out of memory listing the journals");
  long *per = calloc((size_t)o->n_merge, sizeof *per), *all = calloc((size_t)o->n_merge, sizeof *all);
  if (!per || !all) st = TL_ENOMEM;
  for (int f = r->rank; f < r->jf.n && !st; f += r->nranks) {
    const tl_merge_input *in = &o->merge[r->file_input[f]];
    long before = r->m_nrec;
    tl_buf_reset(&r->merge_msg);
    st = tl_journal_read_file(r->jf.paths[f], in->journal_dir, f, in->job_hash, on_merge_scan, r, &(long){0},
                              &r->m_nskip, err);
    if (st == TL_EJOB && r->merge_msg.len)
      tl_err_set(err, TL_EJOB, "cannot merge '%s': %s", in->name, r->merge_msg.data);
    else if (st == TL_EJOB)
      tl_err_set(err, TL_EJOB, "cannot merge '%s': %s", in->name, err->msg);
    per[r->file_input[f]] += r->m_nrec - before;
  }
  /* every rank agrees before anything collective that depends on the scan */
  int bad = st != TL_OK, anybad = 0;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
  if (anybad) {
    free(per);
    free(all);
    if (st == TL_ENOMEM) tl_err_set(err, TL_ENOMEM, "out of memory reading the journals");
    /* only rank 0 prints a TL_EJOB's message: another rank says its own here */
    if (st == TL_EJOB && r->rank != 0) fprintf(o->log, "tally: rank %d: %s\n", r->rank, err->msg);
    if (st) return st;
    return tl_err_set(err, TL_EJOB, "another rank could not read its share of the journals (its message is above)");
  }
  MPI_Allreduce(per, all, o->n_merge, MPI_LONG, MPI_SUM, comm);
  for (int d = 0; d < o->n_merge && !st; d++)
    if (all[d] == 0)
      st = tl_err_set(err, TL_EJOB, "cannot merge '%s': its journal '%s' records no unit", o->merge[d].name,
                      o->merge[d].journal_dir);
  free(per);
  free(all);
  if (st) return st;
  /* the stage-0 cfgs of every rank, to every rank: "bench\x1fmodel\x1fvariant\x1fseed\n" */
  tl_buf mine;
  tl_buf_init(&mine);
  for (size_t b = 0; b < r->nb; b++)
    for (size_t i = 0; i < r->found[b].ncfgs; i++) {
      const tl_cfg *c = &r->found[b].cfgs[i];
      if (tl_buf_printf(&mine, "%zu\x1f%s\x1f%d\x1f%d\n", b, c->model, c->variant, c->seed)) st = TL_ENOMEM;
    }
  int len = st || mine.len > INT_MAX ? -1 : (int)mine.len, minlen = 0;
  MPI_Allreduce(&len, &minlen, 1, MPI_INT, MPI_MIN, comm);
  if (minlen < 0) {
    tl_buf_release(&mine);
    return tl_err_set(err, TL_ENOMEM, "out of memory gathering the cfgs");
  }
  int *lens = calloc((size_t)r->nranks, sizeof *lens), *offs = calloc((size_t)r->nranks, sizeof *offs);
  MPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, comm);
  long long tot = 0;
  for (int q = 0; q < r->nranks; q++) offs[q] = (int)tot, tot += lens[q];
  char *every = tot < INT_MAX ? malloc((size_t)tot + 1) : NULL;
  int ok = every != NULL, allok = 0;
  MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, comm);
  if (allok) MPI_Allgatherv(mine.data ? mine.data : "", len, MPI_CHAR, every, lens, offs, MPI_CHAR, comm);
  tl_buf_release(&mine);
  free(lens);
  free(offs);
  if (!allok) {
    free(every);
    return tl_err_set(err, TL_ENOMEM, "out of memory gathering the cfgs");
  }
  every[tot] = 0;
  for (char *line = every; *line && !st;) {
    char *nl = strchr(line, '\n');
    *nl = 0;
    char *f1 = strchr(line, '\x1f'), *f3 = strrchr(line, '\x1f');
    *f1 = 0;
    *f3 = 0;
    char *f2 = strrchr(f1 + 1, '\x1f');
    *f2 = 0;
    size_t b = (size_t)strtoul(line, NULL, 10);
    struct found *fd = &r->found[b];
    st = tl_cfgs_add(&fd->cfgs, &fd->ncfgs, &fd->cap, &fd->seen, f1 + 1, atoi(f2 + 1), atoi(f3 + 1));
    line = nl + 1;
  }
  free(every);
  return st ? tl_err_set(err, TL_ENOMEM, "out of memory gathering the cfgs") : TL_OK;
}

static tl_status bench_setup(const tl_run_opts *o, bench_run *r, const tl_job *job, int rank, int nranks,
                             MPI_Comm comm, tl_inlog *log, tl_err *err) {
  memset(r, 0, sizeof *r);
  r->merging = o->n_merge > 0;
  r->msg = o->log;
  tl_strmap_init(&r->lcfg_of);
  tl_buf_init(&r->merge_msg);
  r->rank = rank;
  r->nranks = nranks;
  r->job = job;
  r->nb = (size_t)job->n_benches;
  r->rbs = calloc(r->nb, sizeof *r->rbs);
  r->held = calloc(r->nb, sizeof *r->held);
  r->lay = calloc(r->nb, sizeof *r->lay);
  r->nblk = calloc(r->nb, sizeof *r->nblk);
  r->acc = calloc(r->nb, sizeof *r->acc);
  r->found = calloc(r->nb, sizeof *r->found);
  r->strb = calloc(r->nb, sizeof *r->strb);
  r->nstr = calloc(r->nb, sizeof *r->nstr);
  r->rowtab = calloc(r->nb, sizeof *r->rowtab);
  for (size_t b = 0; r->found && b < r->nb; b++) {
    tl_strmap_init(&r->found[b].seen);
    tl_strmap_init(&r->found[b].models);
    tl_buf_init(&r->found[b].model_list);
  }
  tl_jfiles_init(&r->jf);
  if (!r->rbs || !r->held || !r->lay || !r->nblk || !r->acc || !r->found || !r->strb || !r->nstr || !r->rowtab)
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  tl_status st;
  for (size_t b = 0; b < r->nb; b++) {
    const tl_job_bench *jb = &job->benches[b];
    r->rbs[b].vt = jb->vt;
    r->rbs[b].b = jb->mod;
    if ((st = jb->vt->load(jb->mod, job->max_line, log, err))) return st;
  }
  if (r->merging) {
    if ((st = merge_scan(o, r, comm, err))) return st;
  } else if ((st = open_replays(r, log, err))) {
    return st;
  }
  for (int k = 0; k < TL_ROLE__N; k++) {
    if (r->replay[k]) r->eng[k] = tl_replay_engine(r->replay[k]);
    if (job->engines[k].type && strcmp(job->engines[k].type, "replay")) r->evidence |= k == TL_ROLE_MODEL ? 1u : ((1u << TL_MAX_STAGES) - 2u); /* the judge: every judge stage (sample) */
  }
  const int model_http = r->evidence & 1u; /* the cfgs are the job's models x seeds */
  uint64_t base = 0;
  for (size_t b = 0; b < r->nb; b++) {
    if (!model_http && !r->merging && (st = check_filters(r, b, err))) return st;
    if ((st = build_cfgs(r, b)) || (st = tl_rb_units(&r->rbs[b]))) return tl_err_set(err, st, "out of memory");
    if (r->rbs[b].vt->check_cfgs && !r->merging &&
        (st = r->rbs[b].vt->check_cfgs(r->rbs[b].b, r->rbs[b].cfgs, r->rbs[b].ncfgs, err)))
      return st;
    r->rbs[b].base = base;
    base += r->rbs[b].U;
    r->held[b].w = 2; /* unit, where its item-table row was spilled */
    tl_table *schema = items_table(r, b, NULL, NULL, 0, NULL);
    if (!schema) return tl_err_set(err, TL_ENOMEM, "out of memory");
    for (int c = 0; c < schema->ncols; c++) r->nstr[b] += tl_col_is_str(schema->cols[c].type);
    tl_table_free(schema);
    if (!(r->strb[b] = calloc((size_t)r->nranks * (size_t)r->nstr[b] * 2 + 1, sizeof **r->strb)))
      return tl_err_set(err, TL_ENOMEM, "out of memory");
    /* this rank's accumulators: units are added as they finish */
    r->nblk[b] = r->rbs[b].vt->acc_layout(r->rbs[b].b, r->rbs[b].ncfgs, r->lay[b]);
    for (int k = 0; k < r->nblk[b]; k++) {
      const tl_acc_block *l = &r->lay[b][k];
      if (!(r->acc[b][k] = malloc((l->len ? l->len : 1) * sizeof **r->acc[b]))) return tl_err_set(err, TL_ENOMEM, "out of memory");
      for (size_t i = 0; i < l->len; i++) r->acc[b][k][i] = l->init;
    }
  }
  r->U = base;
  return TL_OK;
}

/* The key of stage s of global unit g (strings borrowed from the run). */
static tl_unit_key unit_key(const bench_run *r, uint64_t g, int s) {
  size_t b = tl_rb_find(r->rbs, r->nb, g);
  const tl_run_bench *rb = &r->rbs[b];
  tl_unit u = tl_rb_unit(rb, g - rb->base);
  const tl_cfg *c = &rb->cfgs[u.cfg];
  tl_unit_key k = {rb->vt->name, rb->vt->item_id(rb->b, u.item), c->model, rb->vt->variants[c->variant],
                   c->seed, u.sub, s};
  return k;
}

/* Pipeline callbacks: requests to the role's engine; finished rows kept by this rank. */
static tl_status on_submit(void *ctx, tl_role role, const tl_eng_request *rq) {
  bench_run *r = ctx;
  if (r->merging) { /* a stage no input recorded, and not one the module skips */
    fprintf(r->msg, "tally: rank %d: cannot merge: no input records stage %d of %s unit (item '%s', model '%s', "
                    "variant '%s', seed %d, sub %d); was its run finished?\n", r->rank, rq->key.stage,
            rq->key.bench, rq->key.id, rq->key.model, rq->key.variant, rq->key.seed, rq->key.sub);
    return TL_EJOB;
  }
  tl_engine *e = r->eng[role];
  if (!e) return TL_EINTERNAL; /* the job loader requires judgments for a replay judge */
  return e->vt->submit(e, rq);
}

/* "<dir>/r<rank, 5 digits>.bin" (malloc'd): rank q's spilled rows. */
static char *spill_path(const char *dir, int q) {
  tl_buf p;
  tl_buf_init(&p);
  tl_buf_printf(&p, "%s/r%05d.bin", dir, q);
  return tl_buf_detach(&p);
}

/* A spilled row: uint32 byte count of what follows, then each cell in column order: a string as
 * uint32 length, its bytes and a NUL; an int64 or a double as its 8 bytes. Each string cell's
 * length is added to sb[2k] and raised into sb[2k + 1] (k: its index among the string columns;
 * write_rows' str_stats). */
static tl_status spill_row(const tl_table *t, size_t row, tl_buf *out, uint64_t *sb) {
  tl_buf_reset(out);
  uint32_t len = 0;
  tl_status st = tl_buf_append(out, (const char *)&len, 4);
  for (int c = 0; c < t->ncols && !st; c++) {
    const tl_col *col = &t->cols[c];
    if (tl_col_is_str(col->type)) {
      const char *v = col->v.s[row];
      const size_t vl = col->len[row];
      sb[0] += vl;
      if (vl > sb[1]) sb[1] = vl;
      sb += 2;
      uint32_t n = (uint32_t)vl;
      st = tl_buf_append(out, (const char *)&n, 4);
      if (!st) st = tl_buf_append(out, v, (size_t)n + 1);
    } else {
      st = tl_buf_append(out, col->type == TL_COL_I64 ? (const char *)&col->v.i[row] : (const char *)&col->v.f[row], 8);
    }
  }
  if (!st && out->len - 4 > UINT32_MAX) st = TL_EINTERNAL;
  len = (uint32_t)(out->len - 4);
  if (!st) memcpy(out->data, &len, 4);
  return st;
}

/* A finished, scored unit: added to the accumulators, then kept as its journal refs only. */
enum { MAX_REASONS = 64 };
/* Counts an engine failure's reason: its text without " (gave up after N attempts)". */
static tl_status note_reason(bench_run *r, int role, const char *why) {
  if (!r->reasons_init) {
    for (int k = 0; k < TL_ROLE__N; k++) tl_strmap_init(&r->reasons[k]);
    r->reasons_init = 1;
  }
  const char *g = strstr(why, " (gave up after ");
  char *key = g ? tl_strndup(why, (size_t)(g - why)) : tl_strdup(why);
  if (!key) return TL_ENOMEM;
  if (r->reasons[role].n >= MAX_REASONS && !tl_strmap_get(&r->reasons[role], key, NULL)) {
    free(key);
    key = tl_strdup("(other reasons)");
    if (!key) return TL_ENOMEM;
  }
  tl_status st = tl_strmap_add(&r->reasons[role], key, 1, NULL);
  free(key);
  return st;
}

/* A unit's fate, counted per cfg (bench_run.fate). */
enum { FATE_UNITS, FATE_ANSWERED, FATE_ENGINE_ERROR, FATE_JUDGED, FATE_JUDGE_ERROR, FATE_N };

static tl_status note_fate(bench_run *r, size_t b, const tl_unit *u, const tl_row *row) {
  const tl_run_bench *rb = &r->rbs[b];
  if (!r->fate && !(r->fate = calloc(r->nb, sizeof *r->fate))) return TL_ENOMEM;
  if (!r->fate[b] && !(r->fate[b] = calloc(rb->ncfgs * FATE_N + 1, sizeof **r->fate))) return TL_ENOMEM;
  uint64_t *f = r->fate[b] + (size_t)u->cfg * FATE_N;
  int judged = 0, jerr = 0;
  for (int s = 1; s < rb->nstages; s++) judged |= row->text[s] != NULL, jerr |= row->error[s] != NULL;
  f[FATE_UNITS]++;
  f[FATE_ANSWERED] += row->text[0] != NULL;
  f[FATE_ENGINE_ERROR] += row->error[0] != NULL;
  f[FATE_JUDGED] += judged;
  f[FATE_JUDGE_ERROR] += jerr;
  for (int s = 0; s < rb->nstages; s++) {
    int role = s ? TL_ROLE_JUDGE : TL_ROLE_MODEL;
    if (row->error[s] && !r->first_error[role] && !(r->first_error[role] = tl_strdup(row->error[s]))) return TL_ENOMEM;
    if (row->error[s] && note_reason(r, role, row->error[s])) return TL_ENOMEM;
  }
  return TL_OK;
}

static tl_status on_unit_done(void *ctx, size_t b, uint64_t g, tl_row *row) {
  bench_run *r = ctx;
  const tl_run_bench *rb = &r->rbs[b];
  r->finished++;
  r->failed += row->text[0] == NULL;
  tl_unit u = tl_rb_unit(rb, g - rb->base);
  if (note_fate(r, b, &u, row)) return TL_ENOMEM;
  rb->vt->acc_add(rb->b, rb->cfgs, rb->ncfgs, &u, row, r->acc[b]);
  if (r->rowtab[b]) tl_table_clear(r->rowtab[b]);
  tl_table *t = items_table(r, b, &u, row, 1, r->rowtab[b]); /* the module's columns and the evidence */
  if (!t) return TL_ENOMEM;
  r->rowtab[b] = t;
  uint64_t spilled = TL_REF_NONE;
  tl_status st = TL_OK;
  if (r->spill) { /* its row, and its share of the table's string bytes and longest values for its owner */
    uint64_t *sb = r->strb[b] + (size_t)owner_of(g - rb->base, rb->U, r->nranks) * (size_t)r->nstr[b] * 2;
    st = spill_row(t, 0, &r->spill_buf, sb);
    if (!st && fwrite(r->spill_buf.data, 1, r->spill_buf.len, r->spill) != r->spill_buf.len) st = TL_EIO;
    if (!st) {
      spilled = jref(r->rank, r->spill_pos);
      r->spill_pos += r->spill_buf.len;
    }
  }
  tl_table_clear(t); /* it borrows the row's texts, which are freed next */
  if (st) return st;
  return push_row(&r->held[b], g - rb->base, spilled);
}

/* ---- resume: stages recorded in journals ---- */
typedef struct {
  bench_run *r;
  tl_strmap *cfg_of;  /* [nb] "model\x1fvariant\x1fseed" -> cfg */
  uint8_t *done;      /* [U] 1: some stage of the unit is recorded */
  uint64_t *lo, *hi;  /* [nb] this rank restores the units of its own key blocks only */
  tl_row **part;      /* [nb][hi - lo] rows being restored (NULL: none) */
  uint8_t **mask;     /* [nb][hi - lo] bit s: stage s recorded */
  tl_status st;
  /* tally merge */
  int merge, overlap; /* TL_OVERLAP_* */
  int input;          /* the input being read (its index in the merge list) */
  int file_base;      /* index in r->jf of that input's first journal file */
  uint32_t **from;    /* [nb][hi - lo] 1 + the input whose records the row holds, 0: none */
  uint8_t **ovl;      /* [nb][hi - lo] 1: a second input holds the unit too (counted) */
  uint64_t overlaps, conflicts; /* units held by two inputs; of which (identical) differ */
  tl_buf example;     /* the first overlap or conflict, for the message */
  const tl_merge_input *inputs;
} resume_ctx;

/* tally merge: a record of unit (b, local u) from input c->input, which another input already
 * gave. Returns 1 to store the record (the caller goes on), 0 to drop it. */
static int merge_overlap(resume_ctx *c, size_t b, size_t i, const tl_journal_rec *rec) {
  const uint32_t in1 = (uint32_t)c->input + 1;
  uint32_t *fr = &c->from[b][i];
  if (!*fr) {
    *fr = in1;
    return 1;
  }
  if (*fr == in1) return 1;
  const tl_unit_key *k = &rec->key;
  const int s = k->stage;
  tl_row *row = &c->part[b][i];
  int differ = 0;
  if (c->overlap == TL_OVERLAP_IDENTICAL && (c->mask[b][i] & (1u << s))) {
    const char *t = row->text[s];
    differ = (t == NULL) != (rec->text == NULL) || (t && strcmp(t, rec->text) != 0) ||
             (row->error[s] != NULL) != (rec->failed != 0);
  }
  if (!c->ovl[b][i] || differ) {
    if (!c->ovl[b][i]) c->overlaps++;
    if (differ) c->conflicts++;
    if (!c->example.len || (differ && c->conflicts == 1)) {
      tl_buf_reset(&c->example);
      tl_buf_printf(&c->example, "'%s' and '%s' both hold %s item '%s' (model '%s', variant '%s', seed %d, sub %d)%s",
                    c->inputs[*fr - 1].name, c->inputs[c->input].name, k->bench, k->id, k->model, k->variant, k->seed,
                    k->sub, differ ? ", with different replies" : "");
    }
    c->ovl[b][i] = 1;
  }
  switch (c->overlap) {
  case TL_OVERLAP_LAST: /* the later input replaces the unit's records */
    if (c->mask[b][i]) tl_row_release(row);
    c->mask[b][i] = 0;
    *fr = in1;
    return 1;
  case TL_OVERLAP_IDENTICAL: return !(c->mask[b][i] & (1u << s)); /* a stage the first lacked */
  default: return 0; /* first: kept; error: counted, reported after reading */
  }
}

static tl_status on_journal_rec(void *vctx, const tl_journal_rec *rec) {
  resume_ctx *c = vctx;
  bench_run *r = c->r;
  const tl_unit_key *k = &rec->key;
  int b = bench_index(r, k->bench);
  if (b < 0 || k->stage < 0 || k->stage >= r->rbs[b].nstages) return TL_OK; /* not of this job */
  const tl_run_bench *rb = &r->rbs[b];
  tl_buf kb;
  tl_buf_init(&kb);
  tl_buf_printf(&kb, "%s\x1f%d\x1f%d", k->model, tl_bench_variant(rb->vt, k->variant), k->seed);
  size_t cfg, item;
  int known = kb.data && tl_strmap_get(&c->cfg_of[b], kb.data, &cfg) && rb->vt->item_find(rb->b, k->id, &item) &&
              item < rb->vt->n_items(rb->b) && k->sub < rb->vt->n_subs(rb->b, item);
  tl_buf_release(&kb);
  if (!known) return TL_OK; /* not a unit of this job any more: ignored */
  if (rec->failed && !c->merge) return TL_OK; /* the engine gave up on it: asked again (a merge keeps
                                                   the failure: the unit stays engine_error) */
  tl_unit x = {(uint32_t)cfg, (uint32_t)item, k->sub};
  uint64_t u = tl_rb_index(rb, &x);
  c->done[rb->base + u] = 1;
  if (u < c->lo[b] || u >= c->hi[b]) return TL_OK; /* another rank's block: it restores this one */
  size_t i = (size_t)(u - c->lo[b]);
  if (c->merge && !merge_overlap(c, (size_t)b, i, rec)) return TL_OK;
  if (c->mask[b][i] & (1u << k->stage)) return TL_OK; /* recorded twice (redone after a kill): first kept */
  tl_row *row = &c->part[b][i];
  if (!c->mask[b][i]) tl_row_init(row);
  int s = k->stage;
  row->text[s] = rec->text ? tl_strdup(rec->text) : NULL;
  row->prompt[s] = rec->prompt ? tl_strdup(rec->prompt) : NULL;
  row->source[s] = rec->source ? tl_strdup(rec->source) : NULL;
  row->meta[s] = rec->meta ? cJSON_PrintUnformatted(rec->meta) : NULL;
  row->error[s] = rec->failed ? tl_strdup(rec->error ? rec->error : "the engine gave up") : NULL;
  if ((rec->text && !row->text[s]) || (rec->prompt && !row->prompt[s]) || (rec->source && !row->source[s]) ||
      (rec->meta && !row->meta[s]) || (rec->failed && !row->error[s]))
    return TL_ENOMEM;
  c->mask[b][i] |= (uint8_t)(1u << s);
  return TL_OK;
}

static void resume_ctx_release(resume_ctx *c, size_t nb) {
  for (size_t b = 0; b < nb; b++) {
    if (c->part && c->part[b])
      for (uint64_t i = 0; i < c->hi[b] - c->lo[b]; i++)
        if (c->mask[b][i]) tl_row_release(&c->part[b][i]);
    if (c->part) free(c->part[b]);
    if (c->mask) free(c->mask[b]);
    if (c->from) free(c->from[b]);
    if (c->ovl) free(c->ovl[b]);
    if (c->cfg_of) tl_strmap_release(&c->cfg_of[b]);
  }
  free(c->part);
  free(c->mask);
  free(c->from);
  free(c->ovl);
  tl_buf_release(&c->example);
  free(c->cfg_of);
  free(c->lo);
  free(c->hi);
  memset(c, 0, sizeof *c);
}

/* ---- progress (rank 0) ---- */
typedef struct {
  FILE *f;
  int tty, quiet;
  uint64_t total, resumed, done, failed;
  double t0, last;
} progress;

static void progress_show(progress *p, int final) {
  if (p->quiet) return;
  double t = now_s();
  if (!final && t - p->last < (p->tty ? 0.5 : 30.0)) return;
  p->last = t;
  uint64_t now_done = p->done - p->resumed;
  double rate = t > p->t0 ? (double)now_done / (t - p->t0) : 0;
  uint64_t left = p->total - p->done;
  double eta = rate > 0 ? (double)left / rate : 0;
  if (p->tty) {
    int w = 30, fill = p->total ? (int)((double)w * (double)p->done / (double)p->total) : w;
    char bar[40];
    for (int i = 0; i < w; i++) bar[i] = i < fill ? '=' : (i == fill ? '>' : ' ');
    bar[w] = 0;
    fprintf(p->f, "\r[%s] %llu/%llu units  %.0f/s  ETA %.0fs  no answer %llu%s", bar,
            (unsigned long long)p->done, (unsigned long long)p->total, rate, eta,
            (unsigned long long)p->failed, final ? "\n" : "");
  } else {
    fprintf(p->f, "tally: progress %llu/%llu units (%.1f%%), %.1f units/s, ETA %.0f s, no answer %llu (missing or engine_error)\n",
            (unsigned long long)p->done, (unsigned long long)p->total,
            p->total ? 100.0 * (double)p->done / (double)p->total : 100.0, rate, eta,
            (unsigned long long)p->failed);
  }
  fflush(p->f);
}

/* ---- the scheduler ---- */
enum { TAG_REQ = 101, TAG_ASSIGN = 102 };
/* What a worker's request carries in delta[2]. */
enum { REQ_OK = 0, REQ_SIGNALLED = 1, REQ_FAILED = 2 };

/* One rank's current chunk: pending[a..b) started progressively through the pipeline. */
typedef struct {
  const uint64_t *pending;
  uint64_t a, b, next_submit;
  uint64_t since_report, failed_report;
  uint64_t C;  /* the chunk size */
  int more;    /* another chunk can be had: with room for it, a step does not wait for replies */
} chunk_state;

/* The requests this rank's HTTP engines would hold in flight now: the sum of their endpoints'
 * current limits (tl_openai_capacity); 0 without HTTP engines. */
static uint64_t http_capacity(const bench_run *r) {
  uint64_t cap = 0;
  for (int k = 0; k < TL_ROLE__N; k++)
    if (r->http[k]) cap += tl_openai_capacity(r->http[k]);
  return cap;
}

/* The in-flight bound for taking a chunk: the chunk size C, or the requests this rank's HTTP
 * engines would hold now (their endpoints' current limits) when that is more. A small job has
 * small chunks (about 8 per rank), and two of them would leave most of a server's concurrency
 * unused; the current limits, not the bounds, so a rank whose server has backed off does not
 * hoard units the other ranks could answer. */
static uint64_t room_bound(const bench_run *r, uint64_t C) {
  const uint64_t cap = http_capacity(r);
  return cap > C ? cap : C;
}

/* The in-flight bound for starting a chunk's units: with HTTP engines, the requests they would
 * hold now (their endpoints' current limits), a quarter more and 16, so the engines have the
 * next requests built when slots free; without (replay), none: the chunk starts at once.
 * A unit's request body is built when the unit starts, so starting a whole chunk at once (up to
 * 1,024 units) held that many bodies, a base64 image each in a VQA job: bench/http_images.sh,
 * 8,000 requests with 256 KiB images at 64 in flight, peaked at 962 MiB; started in step with
 * the replies, at 88 MiB. */
static uint64_t start_bound(const bench_run *r) {
  const uint64_t cap = http_capacity(r);
  return cap ? cap + cap / 4 + 16 : UINT64_MAX;
}

/* Polls every engine once and feeds the replies to the pipeline, journaling each first.
 * Returns the number of replies (waiting at most timeout_ms for the first of one engine). */
static tl_status poll_engines(bench_run *r, int timeout_ms, int maxrep, int *nrep, tl_err *err) {
  tl_status st = TL_OK;
  *nrep = 0;
  for (int role = 0; role < TL_ROLE__N; role++) {
    tl_engine *eng = r->eng[role];
    if (!eng || !eng->vt->in_flight(eng)) continue;
    tl_eng_reply rep[256];
    int k = eng->vt->poll(eng, rep, maxrep < 256 ? maxrep : 256, timeout_ms);
    for (int i = 0; i < k; i++) {
      uint64_t g = tl_tag_unit(rep[i].tag);
      int s = tl_tag_stage(rep[i].tag);
      tl_unit_key key = unit_key(r, g, s);
      uint64_t off = 0;
      if (st == TL_OK && !r->dry) st = tl_journal_add(r->jn, &key, &rep[i], &off, err);
      if (st == TL_OK) {
        char src[512]; /* for the message: the pipeline takes the reply's strings */
        const char *sp = rep[i].source ? rep[i].source : "no source";
        const size_t sn = strnlen(sp, sizeof src - 1);
        memcpy(src, sp, sn);
        src[sn] = 0;
        tl_err e2 = {{0}};
        if ((st = tl_pipe_reply(r->pipe, &rep[i], jref(r->jf_mine, off), &e2)) != TL_OK) /* journaled: resume retries it */
          tl_err_set(err, st, "item '%s' of model '%s' (seed %d, stage %d; reply from %s): %s", key.id, key.model,
                     key.seed, s, src, e2.msg[0] ? e2.msg : tl_strerror(st));
      }
      tl_eng_reply_release(&rep[i]);
    }
    *nrep += k;
  }
  if (st == TL_OK && *nrep > 0 && !r->dry) st = tl_journal_batch_done(r->jn, err); /* fsync at most every 0.5 s */
  return st;
}

/* Starts what is left of the chunk and collects ready replies (waiting at most timeout_ms). */
static tl_status chunk_step(bench_run *r, chunk_state *cs, int timeout_ms, int maxrep, tl_err *err) {
  tl_status st = TL_OK;
  uint64_t f0 = r->finished, x0 = r->failed;
  const uint64_t sb = start_bound(r);
  while (cs->next_submit < cs->b && st == TL_OK && tl_pipe_in_flight(r->pipe) < sb)
    st = tl_pipe_start(r->pipe, cs->pending[cs->next_submit++], NULL, err);
  if (st) return st;
  int k = 0;
  if (cs->more && cs->next_submit == cs->b && tl_pipe_in_flight(r->pipe) < room_bound(r, cs->C))
    timeout_ms = 0; /* room for the next chunk: the caller takes it before waiting */
  if (tl_pipe_in_flight(r->pipe)) st = poll_engines(r, timeout_ms, maxrep, &k, err);
  cs->since_report += r->finished - f0;
  cs->failed_report += r->failed - x0;
  return st;
}

static int chunk_done(const bench_run *r, const chunk_state *cs) {
  return tl_pipe_in_flight(r->pipe) == 0 && cs->next_submit == cs->b;
}

/* Room for the next chunk: the current one is all submitted and fewer than room_bound units are
 * in flight. So a rank holds at most that many units and a chunk, and its engines never run dry
 * between chunks (an HTTP engine keeps its requests in flight across the boundary). */
static int chunk_room(const bench_run *r, const chunk_state *cs, uint64_t C) {
  return cs->next_submit == cs->b && tl_pipe_in_flight(r->pipe) < room_bound(r, C);
}

/* Chunk size: about 8 chunks per rank (load balance at the end of the run), at least 1, at
 * most 1024 units (one request per 1024 units keeps the scheduling cost per unit small). */
static uint64_t chunk_size(uint64_t P, int nranks) {
  uint64_t c = P / ((uint64_t)nranks * 8u);
  return c < 1 ? 1 : c > 1024 ? 1024 : c;
}

/* Runs every pending unit (and finishes the partly restored units this rank started).
 * Collective. Returns TL_OK, or an error; *interrupted = 1 when a signal stopped this rank (its
 * finished stages are journaled). A worker that fails tells rank 0, which stops dealing: the
 * job stops rather than the failed rank taking (and dropping) the rest of the queue. */
static tl_status schedule(bench_run *r, const uint64_t *pending, uint64_t P, progress *pg, MPI_Comm comm,
                          int *interrupted, double *sched_s /* OUT: seconds this rank spent on scheduling messages */,
                          uint64_t *nchunks, tl_err *err) {
  *sched_s = 0;
  *nchunks = 0;
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  const uint64_t C = chunk_size(P, nranks);
  chunk_state cs;
  memset(&cs, 0, sizeof cs);
  cs.pending = pending;
  cs.C = C;
  tl_status st = TL_OK;
  *interrupted = 0;
  if (rank == 0) {
    uint64_t next = 0;
    int active = nranks - 1; /* workers not yet told to stop */
    int remote_stop = 0;
    while (st == TL_OK) {
      if (g_stop || remote_stop) {
        *interrupted = remote_stop != REQ_FAILED;
        break;
      }
      /* answer every waiting request */
      int flag = 1;
      while (active > 0) {
        MPI_Status ms;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQ, comm, &flag, &ms);
        if (!flag) break;
        int64_t delta[3];
        double t0 = now_s();
        MPI_Recv(delta, 3, MPI_INT64_T, ms.MPI_SOURCE, TAG_REQ, comm, MPI_STATUS_IGNORE);
        pg->done += (uint64_t)delta[0];
        pg->failed += (uint64_t)delta[1];
        if (delta[2] && !remote_stop) remote_stop = (int)delta[2]; /* signalled or failed: stop dealing */
        uint64_t as[2] = {next, 0};
        if (!g_stop && !remote_stop && next < P) {
          as[1] = P - next < C ? P - next : C;
          next += as[1];
        }
        MPI_Send(as, 2, MPI_UINT64_T, ms.MPI_SOURCE, TAG_ASSIGN, comm);
        *sched_s += now_s() - t0;
        if (as[1]) (*nchunks)++;
        if (!as[1]) active--;
      }
      if (chunk_room(r, &cs, C) && next < P && !remote_stop) { /* rank 0's own next chunk */
        cs.a = cs.next_submit = next;
        cs.b = next + (P - next < C ? P - next : C);
        next = cs.b;
        (*nchunks)++;
      }
      if (!chunk_done(r, &cs)) {
        uint64_t f0 = cs.since_report, x0 = cs.failed_report;
        cs.more = next < P && !remote_stop;
        /* with workers waiting on us, take few replies per step so requests are answered fast */
        st = chunk_step(r, &cs, nranks > 1 ? 1 : 50, nranks > 1 ? 16 : 256, err);
        pg->done += cs.since_report - f0;
        pg->failed += cs.failed_report - x0;
      } else if (active > 0 && !remote_stop) {
        /* nothing of our own left: wait for the next request */
        MPI_Status ms;
        MPI_Probe(MPI_ANY_SOURCE, TAG_REQ, comm, &ms);
      } else {
        break;
      }
      progress_show(pg, 0);
    }
    /* tell every worker still asking that there is no more work */
    while (active > 0) {
      int64_t delta[3];
      MPI_Status ms;
      MPI_Recv(delta, 3, MPI_INT64_T, MPI_ANY_SOURCE, TAG_REQ, comm, &ms);
      pg->done += (uint64_t)delta[0];
      uint64_t as[2] = {0, 0};
      MPI_Send(as, 2, MPI_UINT64_T, ms.MPI_SOURCE, TAG_ASSIGN, comm);
      active--;
    }
  } else {
    for (;;) {
      int flag = g_stop ? REQ_SIGNALLED : st ? REQ_FAILED : REQ_OK;
      int64_t delta[3] = {(int64_t)cs.since_report, (int64_t)cs.failed_report, flag};
      cs.since_report = cs.failed_report = 0;
      double t0 = now_s();
      MPI_Send(delta, 3, MPI_INT64_T, 0, TAG_REQ, comm);
      uint64_t as[2];
      MPI_Recv(as, 2, MPI_UINT64_T, 0, TAG_ASSIGN, comm, MPI_STATUS_IGNORE);
      *sched_s += now_s() - t0;
      if (!as[1]) break;
      if (flag) continue; /* told to stop only by the next answer: take no more work */
      cs.a = cs.next_submit = as[0];
      cs.b = as[0] + as[1];
      cs.more = 1;
      while (!chunk_room(r, &cs, C) && st == TL_OK && !g_stop) st = chunk_step(r, &cs, 50, 256, err);
    }
    /* no more work: finish what is in flight */
    cs.more = 0;
    while (!chunk_done(r, &cs) && st == TL_OK && !g_stop) st = chunk_step(r, &cs, 50, 256, err);
    if (g_stop) *interrupted = 1;
  }
  tl_err e2;
  tl_journal_sync(r->jn, &e2); /* finished stages of an interrupted chunk are kept too */
  return st;
}

/* Finishes the partly restored units this rank started (their next stage is in flight). */
static tl_status drain_restored(bench_run *r, tl_err *err) {
  tl_status st = TL_OK;
  while (st == TL_OK && tl_pipe_in_flight(r->pipe) && !g_stop) {
    int k;
    st = poll_engines(r, 50, 256, &k, err);
  }
  return st;
}

/* Collective: record i of rec (n records of w uint64) to rank dest[i] (-1: to none), in one
 * MPI_Alltoallv. *out (malloc'd, caller frees) gets the records sent to this rank, in rank
 * order, *nout of them. A failure (memory, or over 2^31 values to one rank: MPI counts are
 * int) is TL_ENOMEM on every rank. */
static tl_status to_ranks(const uint64_t *rec, size_t n, size_t w, const int *dest, MPI_Comm comm, uint64_t **out,
                          size_t *nout, tl_err *err) {
  int nranks;
  MPI_Comm_size(comm, &nranks);
  *out = NULL;
  *nout = 0;
  int *scount = calloc((size_t)nranks, sizeof *scount), *rcount = calloc((size_t)nranks, sizeof *rcount);
  int *sdisp = calloc((size_t)nranks + 1, sizeof *sdisp), *rdisp = calloc((size_t)nranks + 1, sizeof *rdisp);
  int64_t *cnt = calloc((size_t)nranks, sizeof *cnt), *at = calloc((size_t)nranks, sizeof *at);
  uint64_t *sbuf = NULL, *rbuf = NULL;
  int bad = !scount || !rcount || !sdisp || !rdisp || !cnt || !at;
  for (size_t i = 0; !bad && i < n; i++)
    if (dest[i] >= 0) cnt[dest[i]]++;
  for (int q = 0; !bad && q < nranks; q++) {
    if ((int64_t)sdisp[q] + cnt[q] * (int64_t)w > 0x7fffffff) bad = 1;
    else scount[q] = (int)(cnt[q] * (int64_t)w), sdisp[q + 1] = sdisp[q] + scount[q];
  }
  if (!bad && !(sbuf = malloc(((size_t)sdisp[nranks] + 1) * sizeof *sbuf))) bad = 1;
  for (size_t i = 0; !bad && i < n; i++) {
    if (dest[i] < 0) continue;
    memcpy(sbuf + sdisp[dest[i]] + at[dest[i]], rec + i * w, w * sizeof *sbuf);
    at[dest[i]] += (int64_t)w;
  }
  tl_status st = TL_OK;
  if (agree(bad, comm)) {
    st = tl_err_set(err, TL_ENOMEM, "cannot exchange records (memory, or over 2^31 values per rank): use more ranks");
    goto done;
  }
  MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm);
  int64_t rtotal = 0;
  for (int q = 0; q < nranks; q++) rdisp[q] = (int)rtotal, rtotal += rcount[q];
  bad = rtotal > 0x7fffffff || !(rbuf = malloc(((size_t)rtotal + 1) * sizeof *rbuf));
  if (agree(bad, comm)) {
    st = tl_err_set(err, TL_ENOMEM, "cannot exchange records (memory, or over 2^31 values per rank): use more ranks");
    goto done;
  }
  MPI_Alltoallv(sbuf, scount, sdisp, MPI_UINT64_T, rbuf, rcount, rdisp, MPI_UINT64_T, comm);
  *out = rbuf;
  *nout = (size_t)rtotal / w;
  rbuf = NULL;
done:
  free(scount);
  free(rcount);
  free(sdisp);
  free(rdisp);
  free(cnt);
  free(at);
  free(sbuf);
  free(rbuf);
  return st;
}

/* Collective. Afterwards h holds exactly this rank's key block of benchmark rb, in key order
 * (rank q owns local units [U q / N, U (q + 1) / N)): the fixed-size records, one exchange. */
static tl_status redistribute(const tl_run_bench *rb, held_rows *h, MPI_Comm comm, tl_err *err) {
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  const size_t w = (size_t)h->w;
  const uint64_t lo = block_lo(rb->U, rank, nranks), hi = block_lo(rb->U, rank + 1, nranks);
  const size_t nblk = (size_t)(hi - lo);
  int *dest = malloc((h->n ? h->n : 1) * sizeof *dest);
  for (size_t i = 0; dest && i < h->n; i++) dest[i] = owner_of(h->rec[i * w], rb->U, nranks);
  if (agree(!dest, comm)) {
    free(dest);
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  uint64_t *rbuf = NULL;
  size_t nr = 0;
  tl_status st = to_ranks(h->rec, h->n, w, dest, comm, &rbuf, &nr, err);
  free(dest);
  if (st) return st;
  if (agree(nr != nblk, comm)) {
    free(rbuf);
    return tl_err_set(err, TL_EINTERNAL, "redistribution: a rank would receive the wrong number of units");
  }
  /* into key order, each unit exactly once */
  free(h->rec);
  h->rec = calloc((nblk ? nblk : 1) * w, sizeof *h->rec);
  uint8_t *seen = calloc(nblk ? nblk : 1, 1);
  h->n = h->cap = 0;
  if (!h->rec || !seen) st = tl_err_set(err, TL_ENOMEM, "out of memory for this rank's block of units");
  for (size_t i = 0; !st && i < nblk; i++) {
    uint64_t u = rbuf[i * w];
    if (u < lo || u >= hi || seen[u - lo]) {
      st = tl_err_set(err, TL_EINTERNAL, "redistribution: unit %llu arrived at the wrong rank, or twice", (unsigned long long)u);
      break;
    }
    memcpy(h->rec + (u - lo) * w, rbuf + i * w, w * sizeof *rbuf);
    seen[u - lo] = 1;
  }
  if (!st) h->n = h->cap = nblk;
  free(seen);
  free(rbuf);
  return st;
}

/* Rank 0: the output must be creatable before any work starts (a clear error now, not after
 * hours of scoring). */
static int check_output(const tl_run_opts *o, const char *output) {
  tl_buf p;
  tl_buf_init(&p);
  tl_buf_printf(&p, "%s.part", output);
  FILE *f = fopen(p.data, "ab");
  int ok = f != NULL;
  if (!ok) fprintf(o->log, "tally: cannot create output '%s': %s\n", p.data, strerror(errno));
  if (f) {
    fclose(f);
    remove(p.data);
  }
  tl_buf_release(&p);
  return ok ? TL_EXIT_OK : TL_EXIT_FAIL;
}

/* Every file the job reads, with what it is for messages: the job file, then the job's inputs
 * (items, answers, judgments, study tables) in job order. *in is malloc'd (its strings are the
 * job's); returns the count, or -1 when out of memory. */
static int job_inputs(const tl_run_opts *o, const tl_job *job, tl_path_role **in) {
  *in = calloc((size_t)job->n_inputs + 1, sizeof **in);
  if (!*in) return -1;
  (*in)[0] = (tl_path_role){o->job_path, "the job file"};
  for (int i = 0; i < job->n_inputs; i++) (*in)[i + 1] = (tl_path_role){job->inputs[i].path, job->inputs[i].what};
  return job->n_inputs + 1;
}

/* Rank 0, before anything is opened for writing: the output's place, output vs every input
 * (the job file, items, answers, study tables) and standard output vs every input, then the
 * output lock; a `--resume` of a finished output (no journal, the file exists) sets *nothing.
 * Returns an exit code; on TL_EXIT_OK the lock is held (released by the caller). */
static int prepare_output(const tl_run_opts *o, const tl_job *job, const char *output, tl_out_lock *lock,
                          int *nothing) {
  tl_err err = {{0}};
  tl_path_role *in;
  int k = job_inputs(o, job, &in);
  if (k < 0) {
    fprintf(o->log, "tally: out of memory\n");
    return TL_EXIT_FAIL;
  }
  int rc = TL_EXIT_OK;
  tl_status st = tl_out_check_place(output, &err);
  if (!st) st = tl_out_check_inputs(output, "the output", in, k, &err);
  if (!st) st = tl_stdout_check_inputs(in, k, &err);
  if (!st && !o->resume) st = tl_out_check_replace(output, o->force, &err); /* --resume continues it */
  if (st) {
    fprintf(o->log, "tally: %s; nothing was run\n", err.msg);
    rc = st == TL_EUSAGE ? TL_EXIT_USAGE : TL_EXIT_FAIL;
  }
  free(in);
  if (rc) return rc;
  if ((st = tl_out_lock_take(lock, output, o->break_lock, o->log, &err))) {
    fprintf(o->log, "tally: %s; nothing was run or removed\n", err.msg);
    char *jdir = tl_journal_dir(output);
    if (jdir && !lock->live && tl_journal_exists(jdir) && !o->resume)
      fprintf(o->log, "tally: the journal '%s' keeps the finished units of that run: add --resume to "
                      "continue from them\n", jdir);
    free(jdir);
    return st == TL_EUSAGE ? TL_EXIT_USAGE : TL_EXIT_FAIL;
  }
  snprintf(g_lock_path, sizeof g_lock_path, "%s", lock->path);
  snprintf(g_part_path, sizeof g_part_path, "%s.part", output);
  if (o->resume) {
    char *jdir = tl_journal_dir(output);
    struct stat sb;
    if (jdir && !tl_journal_exists(jdir) && stat(output, &sb) == 0) {
      fprintf(o->log, "tally: nothing to resume: '%s' is complete (it has no journal '%s'); run without "
                      "--resume (with --force) to score the job again\n", output, jdir);
      *nothing = 1;
    }
    free(jdir);
  }
  return TL_EXIT_OK;
}



/* Collective. Reads the journals of earlier attempts: every rank rebuilds the rows of its own
 * key blocks (so no rank holds, or sends, the whole restored run); the done-bitmaps are OR-ed.
 * Fully recorded units are scored at once; partly recorded ones are started at their next stage
 * (their replies come during scheduling). */
/* Orders merge records (2 uint64: file, offset) by file, then offset. */
static int cmp_file_offset(const void *a, const void *b) {
  const uint64_t *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return x[1] < y[1] ? -1 : x[1] > y[1];
}

static int merge_exchange(const tl_run_opts *o, bench_run *r, resume_ctx *c, MPI_Comm comm, long *nf, long *nrec,
                          long *nskip) {
  tl_err err = {{0}};
  int rc = TL_EXIT_OK;
  /* each scanned cfg's index among the run's cfgs (-1: not a cfg of the run) */
  long *gcfg = malloc((r->nlcfg ? r->nlcfg : 1) * sizeof *gcfg);
  int *dest = malloc((r->nmrecs ? r->nmrecs : 1) * sizeof *dest);
  uint64_t *sbuf = malloc((r->nmrecs ? r->nmrecs : 1) * 2 * sizeof *sbuf), *rbuf = NULL;
  int bad = !gcfg || !dest || !sbuf;
  for (size_t i = 0; !bad && i < r->nlcfg; i++) {
    char *k = r->lcfg_key[i], *sep = strchr(k, '\x1f');
    int b = atoi(k);
    size_t gi;
    gcfg[i] = sep && tl_strmap_get(&c->cfg_of[b], sep + 1, &gi) ? (long)gi : -1;
  }
  /* each record's owner (-1: no unit of the run) and where it is */
  for (size_t i = 0; !bad && i < r->nmrecs; i++) {
    const struct mrec *m = &r->mrecs[i];
    const tl_run_bench *rb = &r->rbs[m->bench];
    dest[i] = -1;
    sbuf[2 * i] = m->file;
    sbuf[2 * i + 1] = m->offset;
    if (gcfg[m->lcfg] < 0 || m->stage >= rb->nstages || m->sub >= rb->vt->n_subs(rb->b, m->item)) continue;
    tl_unit x = {(uint32_t)gcfg[m->lcfg], m->item, m->sub};
    dest[i] = owner_of(tl_rb_index(rb, &x), rb->U, r->nranks);
  }
  const size_t nm = r->nmrecs;
  free(r->mrecs); /* the scan's notes are spent */
  r->mrecs = NULL;
  r->nmrecs = r->capmrecs = 0;
  if (agree(bad, comm)) {
    if (r->rank == 0) fprintf(o->log, "tally: out of memory placing the merge's records\n");
    rc = TL_EXIT_FAIL;
    goto done;
  }
  size_t n = 0;
  if (to_ranks(sbuf, nm, 2, dest, comm, &rbuf, &n, &err)) {
    if (r->rank == 0) fprintf(o->log, "tally: placing the merge's records: %s\n", err.msg);
    rc = TL_EXIT_FAIL;
    goto done;
  }
  qsort(rbuf, n, 2 * sizeof *rbuf, cmp_file_offset);
  tl_status st = TL_OK;
  for (size_t i = 0; i < n && !st; i++) {
    const uint64_t *e = rbuf + 2 * i;
    tl_journal_rec rec;
    cJSON *obj = NULL;
    st = tl_jfiles_read(&r->jf, (int)e[0], e[1], &rec, &obj, &err);
    if (!st) {
      c->input = r->file_input[e[0]];
      c->file_base = 0;
      st = on_journal_rec(c, &rec);
      if (st && !err.msg[0]) tl_err_set(&err, st, "%s", tl_strerror(st));
    }
    cJSON_Delete(obj);
  }
  if (st) {
    fprintf(o->log, "tally: rank %d: %s\n", r->rank, err.msg);
    rc = TL_EXIT_FAIL;
  }
  {
    long mine[2] = {r->m_nrec, r->m_nskip}, tot[2];
    MPI_Allreduce(mine, tot, 2, MPI_LONG, MPI_SUM, comm);
    *nf = r->jf.n;
    *nrec = tot[0];
    *nskip = tot[1];
  }
done:
  free(gcfg);
  free(dest);
  free(sbuf);
  free(rbuf);
  return agree(rc, comm);
}

/* (tally merge reads every input's journal, in the merge's order, the same way: the records of
 * o->merge[d] come from dirs[d] with hashes[d]; a record of a unit that an earlier input holds
 * is an overlap, handled by o->overlap.) */
static int resume_read(const tl_run_opts *o, bench_run *r, const char *const *dirs, const char *const *hashes,
                       int ndirs, uint8_t *done, MPI_Comm comm) {
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  int rc = TL_EXIT_OK;
  tl_err err = {{0}};
  resume_ctx c;
  memset(&c, 0, sizeof c);
  c.r = r;
  c.done = done;
  c.cfg_of = calloc(r->nb, sizeof *c.cfg_of);
  c.lo = calloc(r->nb, sizeof *c.lo);
  c.hi = calloc(r->nb, sizeof *c.hi);
  c.part = calloc(r->nb, sizeof *c.part);
  c.mask = calloc(r->nb, sizeof *c.mask);
  c.merge = r->merging;
  c.overlap = o->overlap;
  c.inputs = o->merge;
  tl_buf_init(&c.example);
  c.from = calloc(r->nb, sizeof *c.from);
  c.ovl = calloc(r->nb, sizeof *c.ovl);
  int bad = !c.cfg_of || !c.lo || !c.hi || !c.part || !c.mask || !c.from || !c.ovl;
  for (size_t b = 0; !bad && b < r->nb; b++) {
    const tl_run_bench *rb = &r->rbs[b];
    tl_strmap_init(&c.cfg_of[b]);
    c.lo[b] = block_lo(rb->U, rank, nranks);
    c.hi[b] = block_lo(rb->U, rank + 1, nranks);
    size_t n = (size_t)(c.hi[b] - c.lo[b]);
    c.part[b] = calloc(n ? n : 1, sizeof **c.part);
    c.mask[b] = calloc(n ? n : 1, 1);
    bad |= !c.part[b] || !c.mask[b];
    if (c.merge) {
      c.from[b] = calloc(n ? n : 1, sizeof **c.from);
      c.ovl[b] = calloc(n ? n : 1, 1);
      bad |= !c.from[b] || !c.ovl[b];
    }
    for (size_t k = 0; !bad && k < rb->ncfgs; k++) {
      tl_buf kb;
      tl_buf_init(&kb);
      bad |= tl_buf_printf(&kb, "%s\x1f%d\x1f%d", rb->cfgs[k].model, rb->cfgs[k].variant, rb->cfgs[k].seed) != TL_OK ||
             tl_strmap_put(&c.cfg_of[b], kb.data, k, NULL, NULL) != TL_OK;
      tl_buf_release(&kb);
    }
  }
  if (agree(bad, comm)) {
    if (rank == 0) fprintf(o->log, "tally: out of memory reading the journal\n");
    resume_ctx_release(&c, r->nb);
    return TL_EXIT_FAIL;
  }
  long nf = 0, nrec = 0, nskip = 0;
  tl_status st = TL_OK;
  if (c.merge) {
    rc = merge_exchange(o, r, &c, comm, &nf, &nrec, &nskip);
    ndirs = 0; /* (the inputs' records are placed: no folder is read below) */
  }
  for (int d = 0; d < ndirs && !rc; d++) {
    /* the earlier attempts' files, numbered as tl_journal_read_all numbers them */
    int nold = 0;
    char **old = tl_journal_list(dirs[d], &nold);
    c.input = d;
    c.file_base = r->jf.n;
    for (int i = 0; i < nold && !st; i++) st = tl_jfiles_add(&r->jf, old[i], NULL);
    for (int i = 0; i < nold; i++) free(old[i]);
    free(old);
    if (agree(st != TL_OK, comm)) {
      if (rank == 0) fprintf(o->log, "tally: out of memory reading the journal\n");
      resume_ctx_release(&c, r->nb);
      return TL_EXIT_FAIL;
    }
    long f1 = 0, n1 = 0, k1 = 0;
    st = tl_journal_read_all(dirs[d], hashes[d], on_journal_rec, &c, &f1, &n1, &k1, &err);
    nf += f1;
    nrec += n1;
    nskip += k1;
    if (st) {
      if (rank == 0 || st != TL_EJOB)
        fprintf(o->log, "tally: %s%s%s\n", c.merge ? o->merge[d].name : "", c.merge ? ": " : "",
                err.msg[0] ? err.msg : tl_strerror(st));
      rc = st == TL_EJOB ? TL_EXIT_USAGE : TL_EXIT_FAIL;
    }
    rc = agree(rc, comm);
  }
  if (!rc && c.merge) { /* units two inputs hold: said, and refused unless the user chose */
    uint64_t mine[2] = {c.overlaps, c.conflicts}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, comm);
    int who = c.example.len ? rank : nranks, first = nranks;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, comm);
    const int refuse = (all[0] && o->overlap == TL_OVERLAP_ERROR) || all[1];
    if (all[0] && rank == first)
      fprintf(o->log, "tally: %s: %s%s\n", refuse ? "cannot merge" : "merge", c.example.data,
              refuse && !all[1] ? "; pass --overlap first|last|identical to say which to keep" : "");
    if (all[0] && rank == 0)
      fprintf(o->log, "tally: merge: %llu unit%s held by more than one input (--overlap %s)\n",
              (unsigned long long)all[0], all[0] == 1 ? "" : "s",
              (const char *const[]){"error", "first", "last", "identical"}[o->overlap]);
    if (all[1] && rank == 0) fprintf(o->log, "tally: merge: %llu of them with different replies (--overlap identical "
                                             "keeps only copies that agree)\n", (unsigned long long)all[1]);
    if (refuse) rc = TL_EXIT_USAGE;
  }
  rc = agree(rc, comm);
  if (rc) {
    resume_ctx_release(&c, r->nb);
    return rc;
  }
  for (uint64_t off = 0; off < r->U; off += (1u << 30)) {
    uint64_t k = r->U - off < (1u << 30) ? r->U - off : (1u << 30);
    MPI_Allreduce(MPI_IN_PLACE, done + off, (int)k, MPI_UINT8_T, MPI_BOR, comm);
  }
  /* score the fully recorded units; start the partly recorded ones */
  for (size_t b = 0; b < r->nb && !st; b++) {
    const int ns = r->rbs[b].nstages;
    for (uint64_t i = 0; i < c.hi[b] - c.lo[b] && !st; i++) {
      uint8_t m = c.mask[b][i];
      if (!m) continue;
      tl_row *row = &c.part[b][i];
      int d = 0;
      while (d < ns && (m & (1u << d))) d++;
      for (int s = d; s < ns; s++) { /* a later stage without the ones before it: asked again */
        free(row->text[s]);
        free(row->prompt[s]);
        free(row->source[s]);
        row->text[s] = row->prompt[s] = row->source[s] = NULL;
      }
      c.mask[b][i] = 0; /* the row is taken below */
      uint64_t g = r->rbs[b].base + c.lo[b] + i;
      if (d == 0) {
        done[g] = 0; /* nothing usable: dealt again (every rank computes the same) */
        tl_row_release(row);
        continue;
      }
      row->done = (uint8_t)d;
      for (int s = 0; s < d; s++) r->resumed[s]++;
      if (d == ns) r->restored++;
      st = tl_pipe_start(r->pipe, g, row, &err);
    }
  }
  if (st) fprintf(o->log, "tally: rank %d: %s\n", rank, err.msg[0] ? err.msg : tl_strerror(st));
  resume_ctx_release(&c, r->nb);
  rc = agree(st ? TL_EXIT_FAIL : TL_EXIT_OK, comm);
  /* a unit with only a later stage recorded is dealt again: every rank must agree on done[] */
  for (uint64_t off = 0; !rc && off < r->U; off += (1u << 30)) {
    uint64_t k = r->U - off < (1u << 30) ? r->U - off : (1u << 30);
    MPI_Allreduce(MPI_IN_PLACE, done + off, (int)k, MPI_UINT8_T, MPI_BAND, comm);
  }
  uint64_t restored = r->restored, all = 0;
  MPI_Allreduce(&restored, &all, 1, MPI_UINT64_T, MPI_SUM, comm);
  if (!rc && rank == 0 && !o->quiet)
    fprintf(o->log, "tally: %s: %llu of %llu units %s (%ld journal file%s, %ld line%s skipped)\n",
            r->merging ? "merge" : "resume", (unsigned long long)all, (unsigned long long)r->U,
            r->merging ? "recorded" : "already done", nf, nf == 1 ? "" : "s", nskip, nskip == 1 ? "" : "s");
  return rc;
}

/* Collective: every rank reduces benchmark rb's accumulator blocks (each with its operation)
 * to rank 0. acc[k] is this rank's block k (in), tot[k] rank 0's result. */
static tl_status reduce_acc(const tl_acc_block *lay, int nblk, int64_t *const *acc, int64_t *const *tot,
                            MPI_Comm comm) {
  for (int k = 0; k < nblk; k++) {
    MPI_Op op = lay[k].op == TL_ACC_MIN ? MPI_MIN : lay[k].op == TL_ACC_MAX ? MPI_MAX : MPI_SUM;
    for (size_t off = 0; off < lay[k].len; off += (1u << 28)) {
      size_t n = lay[k].len - off < (1u << 28) ? lay[k].len - off : (1u << 28);
      if (MPI_Reduce(acc[k] + off, tot[k] + off, (int)n, MPI_INT64_T, op, 0, comm) != MPI_SUCCESS)
        return TL_EINTERNAL;
    }
  }
  return TL_OK;
}

/* One window of a rank's block, for its item table: the rows spilled when its units finished,
 * read back into the arena (valid until the next fill). */
typedef struct {
  bench_run *r;
  const tl_run_bench *rb;
  const held_rows *h;
  tl_status st;       /* the first failure (the writer sees a NULL table) */
  tl_err err;
  /* studies over this benchmark's own columns: the cells they need, collected window by window */
  int collect;        /* collect the study cells in this pass (the writer fills each window twice) */
  int nstudy;
  struct study_cols {
    int study;        /* index in the job */
    int ncols;
    int col[16];      /* item table columns: metrics, human, group_by and join columns found */
    tl_buf cells;     /* this rank's rows in key order, each cell NUL-terminated */
  } *sc;
  tl_buf arena;       /* the window's spilled rows, read back; its strings are the table's cells */
  tl_table *win;      /* the window's rows (cells borrowed from the arena): one table, cleared for
                         each window, so its columns are allocated (and their pages touched) once */
  size_t *at;         /* [at_cap] each row's start in the arena */
  size_t at_cap;
  tl_rdahead ra;      /* a window's rows lie in its ranks' spill files mostly in file order (a
                         rank spills its units as they finish, chunk by chunk in key order):
                         one pread serves hundreds of rows instead of two preads a row. Its key:
                         the rank whose file it holds */
} window_ctx;

/* Appends the cells of table t's columns (as text) to each study's collector. */
static void collect_cells(window_ctx *c, const tl_table *t) {
  for (int k = 0; k < c->nstudy && !c->st; k++) {
    struct study_cols *x = &c->sc[k];
    for (size_t r = 0; r < t->nrows && !c->st; r++)
      for (int j = 0; j < x->ncols && !c->st; j++) {
        const tl_col *col = &t->cols[x->col[j]];
        char num[40];
        const char *v = num;
        if (tl_col_is_str(col->type)) v = col->v.s[r];
        else if (col->type == TL_COL_I64) snprintf(num, sizeof num, "%lld", (long long)col->v.i[r]);
        else snprintf(num, sizeof num, "%.17g", col->v.f[r]);
        if (tl_buf_append(&x->cells, v, strlen(v) + 1)) c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory");
      }
  }
}

/* The item table columns study js needs (those of its columns the table has): in x. */
static void study_columns(const tl_job_study *js, const tl_table *schema, struct study_cols *x) {
  x->ncols = 0;
  const char *lists[4] = {js->metrics, js->human, js->group_by, js->on};
  for (int l = 0; l < 4; l++) {
    const char *p = lists[l];
    while (p && *p) {
      const char *e = strchr(p, ',');
      size_t n = e ? (size_t)(e - p) : strlen(p);
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)(n < 255 ? n : 255), p);
      int c = tl_table_col(schema, name), dup = 0;
      for (int j = 0; j < x->ncols; j++) dup |= x->col[j] == c;
      if (c >= 0 && !dup && x->ncols < 16) x->col[x->ncols++] = c;
      p = e ? e + 1 : NULL;
    }
  }
}

/* Collective: study k's cells of every rank to rank 0 (rank order is key order), as a table. */
static tl_status gather_study(const struct study_cols *x, const tl_table *schema, const char *bench, uint64_t U,
                              MPI_Comm comm, tl_tabin *out, tl_err *err) {
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  memset(out, 0, sizeof *out);
  int64_t mine = (int64_t)x->cells.len;
  int64_t *lens = rank == 0 ? calloc((size_t)nranks, sizeof *lens) : NULL;
  MPI_Gather(&mine, 1, MPI_INT64_T, lens, 1, MPI_INT64_T, 0, comm);
  int *cnt = NULL, *disp = NULL;
  char *all = NULL;
  int bad = 0;
  int64_t total = 0;
  if (rank == 0) {
    cnt = calloc((size_t)nranks, sizeof *cnt);
    disp = calloc((size_t)nranks, sizeof *disp);
    for (int q = 0; lens && q < nranks; q++) total += lens[q];
    all = malloc(total ? (size_t)total : 1);
    bad = !lens || !cnt || !disp || !all || total > 0x7fffffff;
    for (int q = 0; !bad && q < nranks; q++) {
      cnt[q] = (int)lens[q];
      disp[q] = q ? disp[q - 1] + cnt[q - 1] : 0;
    }
  }
  MPI_Bcast(&bad, 1, MPI_INT, 0, comm);
  tl_status st = TL_OK;
  if (bad) st = tl_err_set(err, TL_ENOMEM, "the study's columns of '%s' do not fit in memory on rank 0 (or over 2 GiB)", bench);
  else MPI_Gatherv(x->cells.data ? x->cells.data : "", (int)mine, MPI_CHAR, all, cnt, disp, MPI_CHAR, 0, comm);
  if (!st && rank == 0) {
    tl_buf p;
    tl_buf_init(&p);
    tl_buf_printf(&p, "/items/%s", bench);
    out->path = tl_buf_detach(&p);
    out->ncols = x->ncols;
    out->colnames = calloc((size_t)x->ncols + 1, sizeof *out->colnames);
    out->cells = calloc(U ? U : 1, sizeof *out->cells);
    out->line = calloc(U ? U : 1, sizeof *out->line);
    if (!out->path || !out->colnames || !out->cells || !out->line) st = tl_err_set(err, TL_ENOMEM, "out of memory");
    for (int j = 0; !st && j < x->ncols; j++)
      if (!(out->colnames[j] = tl_strdup(schema->cols[x->col[j]].name))) st = TL_ENOMEM;
    const char *c = all, *end = all + total;
    for (uint64_t r = 0; !st && r < U; r++) {
      char **row = calloc((size_t)x->ncols + 1, sizeof *row);
      if (!row) { st = TL_ENOMEM; break; }
      out->cells[out->nrows] = row;
      out->line[out->nrows] = (long)(r + 1); /* "line" = the unit's row in /items/<bench>, from 1 */
      out->nrows++;
      for (int j = 0; j < x->ncols && !st; j++) {
        if (c >= end) { st = TL_EINTERNAL; break; }
        size_t n = strlen(c);
        if (!(row[j] = tl_strndup(c, n))) st = TL_ENOMEM;
        c += n + 1;
      }
    }
    if (st) {
      tl_err_set(err, st, "cannot build the study table of '%s'", bench);
      tl_tabin_release(out);
    }
  }
  free(lens);
  free(cnt);
  free(disp);
  free(all);
  return st;
}

/* Reads n bytes at off of rank q's spill file (descriptor fd) into dst, through the
 * read-ahead. 0 ok, -1 on a read error, a file cut short or no memory. */
static int spill_read(window_ctx *c, int q, int fd, uint64_t off, void *dst, size_t n) {
  int nomem;
  const char *p = tl_rdahead_at(&c->ra, q, fd, off, n, &nomem);
  if (!p) return -1;
  memcpy(dst, p, n);
  return 0;
}

/* The window's rows from the spilled item-table rows (every unit of the window has one): read
 * into the arena, then the cells borrowed from it. */
static tl_table *window_from_spill(window_ctx *c, uint64_t first, uint64_t n) {
  bench_run *r = c->r;
  const int w = c->h->w;
  tl_buf_reset(&c->arena);
  if (n > c->at_cap) {
    size_t *p = realloc(c->at, n * sizeof *p);
    if (!p) {
      c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory for a window of rows");
      return NULL;
    }
    c->at = p;
    c->at_cap = n;
  }
  size_t *at = c->at;
  for (uint64_t i = 0; i < n && !c->st; i++) {
    const uint64_t ref = c->h->rec[(first + i) * (uint64_t)w + 1];
    const int q = jref_file(ref);
    const uint64_t off = jref_off(ref);
    if (r->spill_fd[q] < 0) {
      char *p = spill_path(r->rows_dir, q);
      r->spill_fd[q] = p ? open(p, O_RDONLY) : -1;
      if (r->spill_fd[q] < 0)
        c->st = tl_err_set(&c->err, TL_EIO, "cannot read the rows of rank %d ('%s'): %s", q, p ? p : "?", strerror(errno));
      free(p);
      if (c->st) break;
    }
    uint32_t len;
    if (spill_read(c, q, r->spill_fd[q], off, &len, 4) != 0) {
      c->st = tl_err_set(&c->err, TL_EIO, "the rows of rank %d are cut short", q);
      break;
    }
    at[i] = c->arena.len;
    if (tl_buf_extend(&c->arena, len) != TL_OK) { /* the bytes are read next */
      c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory for a window of rows");
      break;
    }
    if (spill_read(c, q, r->spill_fd[q], off + 4, c->arena.data + at[i], len) != 0)
      c->st = tl_err_set(&c->err, TL_EIO, "the rows of rank %d are cut short", q);
  }
  if (!c->st && c->win) tl_table_clear(c->win);
  else if (!c->st) c->win = items_table(r, (size_t)(c->rb - r->rbs), NULL, NULL, 0, NULL);
  tl_table *t = c->st ? NULL : c->win;
  if (!c->st && !t) c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory building the item table");
  for (uint64_t i = 0; t && i < n && !c->st; i++) {
    size_t row = tl_table_add_row(t);
    if (row == (size_t)-1) {
      c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory building the item table");
      break;
    }
    const char *p = c->arena.data + at[i];
    for (int k = 0; k < t->ncols; k++) {
      if (tl_col_is_str(t->cols[k].type)) {
        uint32_t sl;
        memcpy(&sl, p, 4);
        tl_table_ref_strn(t, row, k, p + 4, sl);
        p += 4 + (size_t)sl + 1;
      } else if (t->cols[k].type == TL_COL_I64) {
        int64_t v;
        memcpy(&v, p, 8);
        tl_table_set_i64(t, row, k, v);
        p += 8;
      } else {
        double v;
        memcpy(&v, p, 8);
        tl_table_set_f64(t, row, k, v);
        p += 8;
      }
    }
  }
  if (c->st) return NULL; /* c->win is freed with the context */
  if (c->collect) collect_cells(c, t);
  return t;
}

/* Rows first .. first + n - 1 of the block. */
static tl_table *window_fill(void *vctx, uint64_t first, uint64_t n) {
  window_ctx *c = vctx;
  return c->st ? NULL : window_from_spill(c, first, n);
}

/* Collective: benchmark b's finished units to their owners, its item table written window by
 * window, its integers reduced and its metric tables written from rank 0; rank 0 keeps its
 * summary tables in *tabs (caller frees) and the reduced blocks in tot. */
static int write_bench(const tl_run_opts *o, bench_run *r, size_t b, tl_writer *w, MPI_Comm comm,
                       tl_table ***tabs, int *ntabs, int64_t **tot, int *nblk, tl_tabin *stabs) {
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  const tl_run_bench *rb = &r->rbs[b];
  held_rows *h = &r->held[b];
  tl_err err = {{0}};
  tl_status st = redistribute(rb, h, comm, &err);
  if (st) fprintf(o->log, "tally: rank %d: %s\n", rank, err.msg);
  if (agree(st != TL_OK, comm)) return TL_EXIT_FAIL;
  /* the integers, added as the units finished: reduced to rank 0 */
  const tl_acc_block *lay = r->lay[b];
  *nblk = r->nblk[b];
  int bad = 0;
  for (int k = 0; k < *nblk; k++) bad |= !(tot[k] = malloc((lay[k].len ? lay[k].len : 1) * sizeof **tot));
  int rc = TL_EXIT_OK;
  if (agree(bad, comm)) { /* before the collective reduce below */
    if (rank == 0) fprintf(o->log, "tally: out of memory for the counts\n");
    return TL_EXIT_FAIL;
  }
  if (agree(reduce_acc(lay, *nblk, r->acc[b], tot, comm) != TL_OK, comm)) {
    if (rank == 0) fprintf(o->log, "tally: MPI_Reduce of the counts failed\n");
    return TL_EXIT_FAIL;
  }
  int ok = 1;
  if (rank == 0) ok = rb->vt->tables(rb->b, rb->cfgs, rb->ncfgs, tot, tabs, ntabs) == TL_OK;
  /* the item table's schema: its columns, from a table of no rows */
  tl_table *schema = items_table(r, b, NULL, NULL, 0, NULL);
  ok = ok && schema;
  if (agree(!ok, comm)) {
    if (rank == 0) fprintf(o->log, "tally: out of memory building result tables\n");
    tl_table_free(schema);
    return TL_EXIT_FAIL;
  }
  window_ctx wc;
  memset(&wc, 0, sizeof wc);
  tl_rdahead_init(&wc.ra);
  wc.r = r;
  wc.rb = rb;
  wc.h = h;
  const tl_job *job = r->job;
  wc.sc = calloc((size_t)job->n_studies + 1, sizeof *wc.sc);
  for (int k = 0; wc.sc && k < job->n_studies; k++)
    if (job->studies[k].from && strcmp(job->studies[k].from, rb->vt->name) == 0) {
      struct study_cols *x = &wc.sc[wc.nstudy++];
      x->study = k;
      tl_buf_init(&x->cells);
      study_columns(&job->studies[k], schema, x);
    }
  uint64_t lo = block_lo(rb->U, rank, nranks);
  if (!wc.sc) wc.st = tl_err_set(&wc.err, TL_ENOMEM, "out of memory");
  /* this block's string bytes (summed) and longest values (the largest) over the ranks that
   * finished its units, for write_rows' str_stats: one pass */
  const int ns = 2 * r->nstr[b];
  uint64_t *sb = calloc((size_t)ns + 1, sizeof *sb), *mx = calloc((size_t)ns + 1, sizeof *mx);
  if (agree(!sb || !mx, comm)) {
    free(sb);
    sb = NULL;
    wc.st = tl_err_set(&wc.err, TL_ENOMEM, "out of memory"); /* fill fails: the write fails on every rank */
  } else if (ns) {
    MPI_Reduce_scatter_block(r->strb[b], sb, ns, MPI_UINT64_T, MPI_SUM, comm);
    MPI_Reduce_scatter_block(r->strb[b], mx, ns, MPI_UINT64_T, MPI_MAX, comm);
    for (int k = 1; k < ns; k += 2) sb[k] = mx[k];
  }
  free(mx);
  wc.collect = 1; /* fill runs once per window */
  st = w->vt->write_rows(w, schema, lo, h->n, rb->U, sb, window_fill, &wc, &err);
  free(sb);
  if (wc.st) fprintf(o->log, "tally: rank %d: %s\n", rank, wc.err.msg);
  for (int k = 0; k < wc.nstudy && !st; k++) {
    st = gather_study(&wc.sc[k], schema, rb->vt->name, rb->U, comm, &stabs[wc.sc[k].study], &err);
    if (st) fprintf(o->log, "tally: rank %d: %s\n", rank, err.msg);
    if (agree(st != TL_OK, comm) && !st) st = TL_EINTERNAL; /* every rank stops here together */
  }
  for (int k = 0; k < wc.nstudy; k++) tl_buf_release(&wc.sc[k].cells);
  free(wc.sc);
  tl_buf_release(&wc.arena);
  tl_table_free(wc.win);
  free(wc.at);
  tl_rdahead_release(&wc.ra);
  tl_table_free(schema);
  test_pause(rank, "write", o->log);
  int nt = *ntabs;
  MPI_Bcast(&nt, 1, MPI_INT, 0, comm);
  for (int k = 0; k < nt && !st; k++) st = w->vt->write_table(w, rank == 0 ? (*tabs)[k] : NULL, &err);
  if (st) {
    if (rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
    rc = TL_EXIT_FAIL;
  }
  /* the units are written: they leave memory now */
  free(h->rec);
  h->rec = NULL;
  h->n = h->cap = 0;
  return agree(rc, comm);
}

/* "parsers" attribute: the modes of each benchmark, primary first ("strict,pr3,legacy"; with
 * several benchmarks "spatialeval:strict,pr3;other:rating"). */
static void modes_attr(const bench_run *r, tl_buf *out) {
  for (size_t b = 0; b < r->nb; b++) {
    const tl_run_bench *rb = &r->rbs[b];
    if (r->nb > 1) tl_buf_printf(out, "%s%s:", b ? ";" : "", rb->vt->name);
    for (int k = 0; k < rb->nmodes; k++) tl_buf_printf(out, "%s%s", k ? "," : "", rb->vt->mode_name(rb->b, k));
  }
}

static void print_input_problems(FILE *out, const tl_inlog *log) {
  if (log->total) {
    fprintf(out, "bad input lines: %ld (", log->total);
    int first = 1;
    for (int k = 0; k < TL_IN__NKINDS; k++)
      if (log->counts[k]) {
        fprintf(out, "%s%s=%ld", first ? "" : ", ", tl_in_kind_name((tl_in_kind)k), log->counts[k]);
        first = 0;
      }
    fprintf(out, "); see /input_problems in the output\n");
  } else {
    fprintf(out, "bad input lines: 0\n");
  }
}

/* The run's counters, summed over ranks (rank 0 writes them as root attributes). */
typedef struct {
  uint64_t units, calls[TL_MAX_STAGES], resumed[TL_MAX_STAGES], skips[TL_MAX_STAGES];
  uint64_t judge_calls, judge_resumed, judge_skips; /* summed over stages 1.. (every judge sample) */
  int nstages;                 /* the most stages of any benchmark */
  double load_s, score_s, write_s, sched_s;
  uint64_t chunks;
} run_counts;

/* Collective: this attempt's journal (a new file per rank, named by rank 0's time and pid), and
 * every rank's file of it added to r->jf (the texts are read back from them when the tables are
 * written). Returns an exit code, the same on every rank. */
static int open_attempt(const tl_run_opts *o, bench_run *r, tl_journal *jn, const char *jdir, const char *jhash,
                        MPI_Comm comm) {
  int rank, nranks, rc = TL_EXIT_OK;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  tl_err err = {{0}};
  char attempt[64] = "";
  if (rank == 0) {
    time_t t = time(NULL);
    struct tm tmv;
    gmtime_r(&t, &tmv);
    char ts[32];
    strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tmv);
    snprintf(attempt, sizeof attempt, "%s-%ld", ts, (long)getpid());
  }
  MPI_Bcast(attempt, sizeof attempt, MPI_CHAR, 0, comm);
  if (rank == 0 && mkdir_p_journal(jdir, o->log)) rc = TL_EXIT_FAIL;
  if ((rc = agree(rc, comm))) return rc;
  if (tl_journal_open(jn, jdir, attempt, rank, jhash, &err) != TL_OK) {
    fprintf(o->log, "tally: rank %d: %s\n", rank, err.msg);
    rc = TL_EXIT_FAIL;
  }
  int first = r->jf.n;
  for (int q = 0; q < nranks && !rc; q++) {
    char *path = tl_journal_path(jdir, attempt, q);
    if (!path || tl_jfiles_add(&r->jf, path, NULL)) rc = TL_EXIT_FAIL;
    free(path);
  }
  r->jf_mine = first + rank;
  return agree(rc, comm);
}

/* Collective: the engine calls of this attempt, the stages taken from the journal and the stages
 * skipped, per stage, summed over ranks, into rcnt (every rank). */
static void sum_counts(const bench_run *r, run_counts *rcnt, MPI_Comm comm) {
  uint64_t mine[3 * TL_MAX_STAGES], all[3 * TL_MAX_STAGES];
  for (int s = 0; s < TL_MAX_STAGES; s++) {
    mine[s] = tl_pipe_calls(r->pipe, s);
    mine[TL_MAX_STAGES + s] = r->resumed[s];
    mine[2 * TL_MAX_STAGES + s] = tl_pipe_skips(r->pipe, s);
  }
  MPI_Allreduce(mine, all, 3 * TL_MAX_STAGES, MPI_UINT64_T, MPI_SUM, comm);
  rcnt->units = r->U;
  rcnt->nstages = 1;
  for (size_t b = 0; b < r->nb; b++)
    if (r->rbs[b].nstages > rcnt->nstages) rcnt->nstages = r->rbs[b].nstages;
  for (int s = 0; s < TL_MAX_STAGES; s++) {
    rcnt->calls[s] = all[s];
    rcnt->resumed[s] = all[TL_MAX_STAGES + s];
    rcnt->skips[s] = all[2 * TL_MAX_STAGES + s];
  }
  for (int s = 1; s < TL_MAX_STAGES; s++) { /* the judge's stages (samples): [1] holds their sum */
    rcnt->judge_calls += rcnt->calls[s];
    rcnt->judge_resumed += rcnt->resumed[s];
    rcnt->judge_skips += rcnt->skips[s];
  }
}

/* Collective: rank 0 creates <output>.rows/ (its parent, the output's folder, is checked), then
 * every rank creates its file there (truncated: what an earlier, killed attempt left is
 * replaced) and notes every rank's (read when the tables are written). */
static int open_spill(const tl_run_opts *o, bench_run *r, const char *output, MPI_Comm comm) {
  tl_buf d;
  tl_buf_init(&d);
  tl_buf_printf(&d, "%s.rows", output);
  r->rows_dir = tl_buf_detach(&d);
  int rc = r->rows_dir ? TL_EXIT_OK : TL_EXIT_FAIL;
  if (!rc && r->rank == 0 && mkdir(r->rows_dir, 0777) != 0 && errno != EEXIST) {
    fprintf(o->log, "tally: cannot create the folder '%s': %s\n", r->rows_dir, strerror(errno));
    rc = TL_EXIT_FAIL;
  }
  if ((rc = agree(rc, comm))) return rc;
  char *p = spill_path(r->rows_dir, r->rank);
  r->spill = p ? fopen(p, "wb") : NULL;
  if (r->spill && (r->spill_vbuf = malloc(TL_JOURNAL_VBUF))) /* a row per unit: few, large writes */
    setvbuf(r->spill, r->spill_vbuf, _IOFBF, TL_JOURNAL_VBUF);
  if (r->spill) { /* a signal after scoring removes it (on_signal_late) */
    snprintf(g_spill_path, sizeof g_spill_path, "%s", p);
    if (r->rank == 0) snprintf(g_rows_dir, sizeof g_rows_dir, "%s", r->rows_dir);
  }
  r->spill_fd = malloc((size_t)r->nranks * sizeof *r->spill_fd);
  for (int q = 0; r->spill_fd && q < r->nranks; q++) r->spill_fd[q] = -1;
  if (!r->spill || !r->spill_fd) {
    fprintf(o->log, "tally: rank %d: cannot create '%s': %s\n", r->rank, p ? p : r->rows_dir, strerror(errno));
    rc = TL_EXIT_FAIL;
  }
  free(p);
  return agree(rc, comm);
}

/* Rank 0, once every rank has closed its file: the spilled rows and their folder go. */
static void remove_spill(const char *dir, FILE *log) {
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n > 4 && strcmp(e->d_name + n - 4, ".bin") == 0) {
      tl_buf p;
      tl_buf_init(&p);
      tl_buf_printf(&p, "%s/%s", dir, e->d_name);
      if (p.data && unlink(p.data) != 0) fprintf(log, "tally: cannot remove '%s': %s\n", p.data, strerror(errno));
      tl_buf_release(&p);
    }
  }
  if (d) closedir(d);
  if (rmdir(dir) != 0 && errno != ENOENT) fprintf(log, "tally: cannot remove the folder '%s': %s\n", dir, strerror(errno));
}

/* Collective: the benchmarks of the job, distributed; tables written through w (collective);
 * rank 0 prints the summary. */
static void nothing_to_run(FILE *log, const bench_run *r, const tl_inlog *in);

/* Collective: each role's engine failures by reason, gathered to rank 0, which prints the
 * three commonest ("tally: model engine_error: 21 units; top reasons: 9 x ..."). */
typedef struct {
  const char *why;
  size_t n;
} reason_n;
static int cmp_reason(const void *a, const void *b) {
  const reason_n *x = a, *y = b;
  if (x->n != y->n) return x->n < y->n ? 1 : -1;
  return strcmp(x->why, y->why);
}
static int report_reasons(const tl_run_opts *o, bench_run *r, MPI_Comm comm) {
  int bad = 0;
  for (int role = 0; role < TL_ROLE__N; role++) {
    tl_buf mine;
    tl_buf_init(&mine);
    for (size_t i = 0; r->reasons_init && i < r->reasons[role].cap; i++)
      if (r->reasons[role].keys[i])
        bad |= tl_buf_printf(&mine, "%zu\x1f%s\n", r->reasons[role].vals[i], r->reasons[role].keys[i]) != TL_OK;
    int len = (int)mine.len, *lens = r->rank == 0 ? calloc((size_t)r->nranks, sizeof *lens) : NULL;
    int *disp = r->rank == 0 ? calloc((size_t)r->nranks + 1, sizeof *disp) : NULL;
    if (agree(bad || (r->rank == 0 && (!lens || !disp)), comm)) {
      free(lens), free(disp), tl_buf_release(&mine);
      return TL_EXIT_FAIL;
    }
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
    char *all = NULL;
    if (r->rank == 0) {
      for (int q = 0; q < r->nranks; q++) disp[q + 1] = disp[q] + lens[q];
      all = malloc((size_t)disp[r->nranks] + 1);
    }
    if (agree(r->rank == 0 && !all, comm)) {
      free(lens), free(disp), tl_buf_release(&mine);
      return TL_EXIT_FAIL;
    }
    MPI_Gatherv(mine.data ? mine.data : "", len, MPI_CHAR, all, lens, disp, MPI_CHAR, 0, comm);
    tl_buf_release(&mine);
    if (r->rank == 0) {
      all[disp[r->nranks]] = 0;
      tl_strmap m;
      tl_strmap_init(&m);
      size_t total = 0;
      for (char *p = all, *nl; *p; p = nl + 1) {
        nl = strchr(p, '\n');
        char *sep = strchr(p, 0x1f);
        if (!nl || !sep) break;
        *nl = 0;
        size_t n = strtoull(p, NULL, 10);
        total += n;
        tl_strmap_add(&m, sep + 1, n, NULL);
      }
      reason_n *v = malloc((m.n ? m.n : 1) * sizeof *v);
      size_t k = 0;
      for (size_t i = 0; v && i < m.cap; i++)
        if (m.keys[i]) v[k++] = (reason_n){m.keys[i], m.vals[i]};
      if (v && k) {
        qsort(v, k, sizeof *v, cmp_reason);
        fprintf(o->log, "tally: %s engine_error: %zu unit stage%s; top reason%s:", tl_role_name((tl_role)role), total,
                total == 1 ? "" : "s", k == 1 ? "" : "s");
        for (size_t i = 0; i < k && i < 3; i++) fprintf(o->log, "%s %zu x %s", i ? ";" : "", v[i].n, v[i].why);
        fprintf(o->log, "%s\n", k > 3 ? "; ... (every reason is in the item table's engine_error column)" : "");
      }
      free(v);
      tl_strmap_release(&m);
    }
    free(all), free(lens), free(disp);
  }
  return TL_EXIT_OK;
}

/* Collective, after the tables are built (the writer is then aborted: no output; the journal keeps
 * every reply and failure for --resume): a run in which no unit of a
 * model got an answer, or in which the judge answered none of the units it was asked about, has
 * scored nothing that model or judge was run for. It fails (TL_EXIT_FAIL), saying so on rank 0
 * (also under --quiet), with the first engine failure a rank saw. */
static int fate_check(const tl_run_opts *o, bench_run *r, MPI_Comm comm) {
  int bad = 0, rank = r->rank;
  if (r->dry) return TL_EXIT_OK; /* a dry run asks nothing: no unit has an answer */
  if (report_reasons(o, r, comm)) return TL_EXIT_FAIL;
  for (size_t b = 0; b < r->nb; b++) {
    const tl_run_bench *rb = &r->rbs[b];
    size_t n = rb->ncfgs * FATE_N;
    uint64_t *all = calloc(n + 1, sizeof *all), *mine = calloc(n + 1, sizeof *mine);
    if (agree(!all || !mine, comm)) {
      free(all), free(mine);
      if (rank == 0) fprintf(o->log, "tally: out of memory\n");
      return TL_EXIT_FAIL;
    }
    if (r->fate && r->fate[b]) memcpy(mine, r->fate[b], n * sizeof *mine);
    MPI_Reduce(mine, all, (int)n, MPI_UINT64_T, MPI_SUM, 0, comm);
    /* per model (its cfgs: variants and seeds), then the judge over every cfg */
    uint64_t ju = 0, jok = 0, jerr = 0;
    for (size_t c = 0; rank == 0 && c < rb->ncfgs; c++) {
      const uint64_t *f = all + c * FATE_N;
      ju += f[FATE_UNITS], jok += f[FATE_JUDGED], jerr += f[FATE_JUDGE_ERROR];
      if (c && strcmp(rb->cfgs[c - 1].model, rb->cfgs[c].model) == 0) continue; /* sorted by model */
      uint64_t u = 0, ans = 0, err = 0, jd = 0, je = 0;
      for (size_t d = c; d < rb->ncfgs && strcmp(rb->cfgs[d].model, rb->cfgs[c].model) == 0; d++)
        u += all[d * FATE_N + FATE_UNITS], ans += all[d * FATE_N + FATE_ANSWERED],
            err += all[d * FATE_N + FATE_ENGINE_ERROR], jd += all[d * FATE_N + FATE_JUDGED],
            je += all[d * FATE_N + FATE_JUDGE_ERROR];
      if (rb->nstages > 1 && ans && !jd && !je) { /* no judgment for any of its answers */
        bad = 1;
        fprintf(o->log, "tally: %s: model '%s': none of its %llu answered units got a verdict from the judge: no "
                        "judgment matched them (check the judgments' model, seed and turn)\n",
                rb->vt->name, rb->cfgs[c].model, (unsigned long long)ans);
      }
      if (u && !ans) {
        bad = 1;
        fprintf(o->log, "tally: %s: model '%s' answered none of its %llu units (%llu engine_error, %llu missing)%s%s%s\n",
                rb->vt->name, rb->cfgs[c].model, (unsigned long long)u, (unsigned long long)err,
                (unsigned long long)(u - err), err ? "; the engine said: " : "",
                err && r->first_error[TL_ROLE_MODEL] ? r->first_error[TL_ROLE_MODEL] : "",
                err && !r->first_error[TL_ROLE_MODEL] ? "(see the item table's error column)" : "");
      }
    }
    if (rank == 0 && rb->nstages > 1 && jerr && !jok) {
      bad = 1;
      fprintf(o->log, "tally: %s: the judge answered none of the %llu units (%llu engine_error)%s%s\n", rb->vt->name,
              (unsigned long long)ju, (unsigned long long)jerr, r->first_error[TL_ROLE_JUDGE] ? "; the engine said: " : "",
              r->first_error[TL_ROLE_JUDGE] ? r->first_error[TL_ROLE_JUDGE] : "");
    }
    free(all), free(mine);
  }
  if (rank == 0 && bad)
    fprintf(o->log, "tally: the run scored nothing for the model(s) or judge above: failed, no output written (the "
                    "journal keeps every reply and failure: fix the engine, then --resume asks only the failed units)\n");
  return agree(bad ? TL_EXIT_FAIL : TL_EXIT_OK, comm);
}
static int run_benchmarks(const tl_run_opts *o, const tl_job *job, tl_writer *w, const char *output,
                          MPI_Comm comm, run_counts *rcnt, tl_tabin *stabs /* [n_studies]: rank 0, the tables
                          of studies over the run's own columns */) {
  double t_start = now_s(), t_scored = 0;
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  int rc = TL_EXIT_OK;
  tl_err err = {{0}};
  tl_inlog log;
  bench_run r;
  memset(&r, 0, sizeof r);
  uint8_t *done = NULL;
  uint64_t *pending = NULL;
  char *jdir = tl_journal_dir(output);
  char jhash[TL_JOB_HASH_LEN];
  tl_journal_job_hash(job->json, jhash);
  tl_journal jn;
  memset(&jn, 0, sizeof jn);
  r.jn = &jn;
  if (agree(tl_inlog_init(&log, rank == 0 ? o->log : NULL, o->strict_input) != TL_OK, comm)) {
    free(jdir);
    tl_inlog_release(&log);
    return TL_EXIT_FAIL;
  }

  /* 1. inputs and units, on every rank */
  tl_status st = bench_setup(o, &r, job, rank, nranks, comm, &log, &err);
  r.jn = &jn;
  if (!st && !(r.pipe = tl_pipe_new(r.rbs, r.nb, on_submit, on_unit_done, &r))) st = tl_err_set(&err, TL_ENOMEM, "out of memory");
  if (st == TL_EINPUT) {
    if (rank == 0) fprintf(o->log, "tally: stopped at the first input problem (--strict-input); nothing written\n");
    rc = TL_EXIT_BAD_INPUT;
  } else if (st == TL_EJOB) {
    if (rank == 0) fprintf(o->log, "tally: %s; nothing was run\n", err.msg);
    rc = TL_EXIT_USAGE;
  } else if (st) {
    if (rank) fprintf(o->log, "tally: rank %d: %s\n", rank, err.msg[0] ? err.msg : tl_strerror(st));
    else fprintf(o->log, "tally: %s\n", err.msg[0] ? err.msg : tl_strerror(st));
    rc = TL_EXIT_FAIL;
  }
  rc = agree(rc, comm);
  if (rc) goto done;
  /* what each input file gave, matched and rejected; too many rejected lines, or nothing to
   * run, stop here, before any engine is asked (every rank read the same inputs: the same
   * decision everywhere, no collective needed) */
  if (rank == 0) tl_inlog_flush(&log);
  if (!r.merging) {
    if (tl_inlog_files(&log, rank == 0 && !o->quiet ? o->log : NULL, rank == 0 ? o->log : NULL, job->max_rejected)) {
      rc = TL_EXIT_BAD_INPUT;
      goto done;
    }
    if (r.U == 0) {
      if (rank == 0) nothing_to_run(o->log, &r, &log);
      rc = TL_EXIT_BAD_INPUT;
      goto done;
    }
  }
  /* the HTTP engines: opened on every rank, their endpoints healthy before any work starts */
  if (!r.merging && (rc = tl_http_open(job, o->cache_dir, NULL, &g_stop, comm, o->log, r.http))) goto done;
  for (int k = 0; k < TL_ROLE__N; k++)
    if (r.http[k]) r.eng[k] = tl_openai_engine(r.http[k]);
  {
    uint64_t mine[2] = {r.U, 0}, lo[2], hi[2];
    for (size_t b = 0; b < r.nb; b++) mine[1] += r.rbs[b].ncfgs;
    MPI_Allreduce(mine, lo, 2, MPI_UINT64_T, MPI_MIN, comm);
    MPI_Allreduce(mine, hi, 2, MPI_UINT64_T, MPI_MAX, comm);
    if (lo[0] != hi[0] || lo[1] != hi[1]) {
      if (rank == 0) fprintf(o->log, "tally: the ranks read different inputs (files changed during start-up?)\n");
      rc = TL_EXIT_FAIL;
      goto done;
    }
  }
  /* the spilled item-table rows: <output>.rows/, one file per rank (before any unit finishes:
   * a resume scores the restored ones while it reads the journal) */
  if ((rc = open_spill(o, &r, output, comm))) goto done;
  /* 2. journals of earlier attempts */
  done = calloc(r.U ? r.U : 1, 1);
  rc = agree(done ? TL_EXIT_OK : TL_EXIT_FAIL, comm);
  if (rc) goto done;
  if (rank == 0 && !o->resume && !r.merging && tl_journal_exists(jdir)) {
    fprintf(o->log, "tally: '%s' holds the journal of an earlier, unfinished run of this output: "
                    "run with --resume to continue it, or remove the folder to start over\n", jdir);
    rc = TL_EXIT_USAGE;
  }
  rc = agree(rc, comm);
  if (rc) goto done;
  if (r.merging) {
    const char **dirs = calloc((size_t)o->n_merge, sizeof *dirs), **hs = calloc((size_t)o->n_merge, sizeof *hs);
    rc = agree(!dirs || !hs, comm) ? TL_EXIT_FAIL : TL_EXIT_OK;
    for (int d = 0; !rc && d < o->n_merge; d++) {
      dirs[d] = o->merge[d].journal_dir;
      hs[d] = o->merge[d].job_hash;
    }
    if (!rc) rc = resume_read(o, &r, dirs, hs, o->n_merge, done, comm);
    free(dirs);
    free(hs);
    if (rc) goto done;
  } else if (o->resume && (rc = resume_read(o, &r, (const char *const[]){jdir}, (const char *const[]){jhash}, 1, done,
                                            comm))) {
    goto done;
  }
  /* 3. this attempt's journal and the pending units */
  if (!r.merging && (rc = open_attempt(o, &r, &jn, jdir, jhash, comm))) goto done;
  uint64_t P = 0;
  pending = malloc((r.U ? r.U : 1) * sizeof *pending);
  if (agree(pending == NULL, comm)) {
    if (rank == 0) fprintf(o->log, "tally: out of memory for the unit list\n");
    rc = TL_EXIT_FAIL;
    goto done;
  }
  for (uint64_t u = 0; u < r.U; u++)
    if (!done[u]) pending[P++] = u;
  if (r.merging && P) { /* a cfg's unit that no input recorded: its run did not finish */
    if (rank == 0) {
      tl_unit_key k = unit_key(&r, pending[0], 0);
      fprintf(o->log, "tally: cannot merge: %llu unit%s of the merged job %s no record in any input (the first: "
                      "%s item '%s', model '%s', variant '%s', seed %d, sub %d); were those runs finished?\n",
              (unsigned long long)P, P == 1 ? "" : "s", P == 1 ? "has" : "have", k.bench, k.id, k.model, k.variant,
              k.seed, k.sub);
    }
    rc = TL_EXIT_USAGE;
    goto done;
  }
  /* 4. score: first the partly restored units of this rank, then the pending ones, dealt */
  double t_loaded = now_s();
  int interrupted = 0;
  uint64_t nchunks = 0;
  double sched_s = 0;
  st = drain_restored(&r, &err);
  progress pg = {o->log, isatty(fileno(o->log)), o->quiet || rank != 0, r.U, 0, 0, 0, now_s(), now_s()};
  if (rank == 0) pg.resumed = pg.done = r.U - P;
  if (st) { /* a rank that failed here still joins the schedule, so no rank waits on it */
    if (rank == 0) rc = TL_EXIT_FAIL;
  }
  {
    /* every rank: rank 0, failed, deals nothing (P = 0) and answers each worker's request with
     * "no more work", so the workers leave the schedule (it once skipped it, and a worker
     * waited for its answer while rank 0 waited in the next collective) */
    tl_status s2 = schedule(&r, pending, rank == 0 && st ? 0 : P, &pg, comm, &interrupted, &sched_s, &nchunks,
                            st ? &(tl_err){{0}} : &err);
    if (!st) st = s2;
  }
  if (g_stop && !st) interrupted = 1;
  {
    /* the last progress line: every rank's finished units (a worker finishes what it has in
     * flight after its last report to rank 0), each unit counted once where it finished */
    uint64_t mine[2] = {r.finished, r.failed}, all[2] = {0, 0};
    MPI_Reduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, 0, comm);
    if (rank == 0) {
      pg.done = all[0] > pg.done ? all[0] : pg.done;
      pg.failed = all[1];
      progress_show(&pg, 1);
    }
    double all_s = 0;
    MPI_Reduce(&sched_s, &all_s, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    rcnt->chunks = nchunks;
    rcnt->sched_s = all_s;
  }
  if (st) {
    fprintf(o->log, "tally: rank %d: %s%s\n", rank, err.msg,
            r.merging ? "" : " (finished units are in the journal; fix it and run with --resume)");
    rc = TL_EXIT_FAIL;
  }
  if (interrupted) rc = rc ? rc : TL_EXIT_INTERRUPTED;
  {
    int sig = (int)g_stop, maxsig = 0;
    MPI_Allreduce(&sig, &maxsig, 1, MPI_INT, MPI_MAX, comm);
    rc = agree(rc, comm);
    if (rc == TL_EXIT_INTERRUPTED && rank == 0 && r.merging)
      fprintf(o->log, "tally: interrupted by signal %d: nothing was written; run the merge again\n", maxsig);
    else if (rc == TL_EXIT_INTERRUPTED && rank == 0)
      fprintf(o->log, "tally: interrupted by signal %d: finished units are in '%s'; run again with --resume\n",
              maxsig, jdir);
  }
  /* Scoring is over: from here on a signal ends the process at once (the journal is complete,
   * so --resume redoes only the writing and the studies, with no engine call). */
  restore_signals();
  if (rc) goto done;
  /* every rank's rows on disk before any rank reads another's (a shared file system: the files
   * are flushed and synced, and opened for reading only after the collectives below) */
  {
    int bad = r.spill && (fflush(r.spill) != 0 || fsync(fileno(r.spill)) != 0);
    if (bad) fprintf(o->log, "tally: rank %d: cannot write '%s': %s\n", rank, r.rows_dir, strerror(errno));
    if ((rc = agree(bad ? TL_EXIT_FAIL : TL_EXIT_OK, comm))) goto done;
  }
  t_scored = now_s();
  sum_counts(&r, rcnt, comm);
  /* 5. per benchmark: rows to their owners, counts reduced, tables written */
  tl_buf modes;
  tl_buf_init(&modes);
  modes_attr(&r, &modes);
  int64_t nbad = log.total;
  MPI_Bcast(&nbad, 1, MPI_INT64_T, 0, comm);
  st = w->vt->attr_str(w, "parsers", modes.data ? modes.data : "", &err);
  tl_buf_release(&modes);
  if (!st) st = w->vt->attr_i64(w, "n_bad_input", nbad, &err);
  if (st) {
    if (rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
    rc = TL_EXIT_FAIL;
    goto done;
  }
  for (size_t b = 0; b < r.nb && !rc; b++) {
    tl_table **tabs = NULL;
    int ntabs = 0, nblk = 0;
    int64_t *tot[TL_MAX_ACC] = {0};
    rc = write_bench(o, &r, b, w, comm, &tabs, &ntabs, tot, &nblk, stabs);
    const tl_run_bench *rb = &r.rbs[b];
    if (!rc && rank == 0) {
      if (b) fprintf(o->out, "\n");
      rb->vt->summary(rb->b, rb->cfgs, rb->ncfgs, rb->U, tabs, ntabs, tot, o->out);
    }
    for (int k = 0; k < ntabs; k++) tl_table_free(tabs[k]);
    free(tabs);
    for (int k = 0; k < nblk; k++) free(tot[k]);
  }
  if (rc) goto done;
  st = w->vt->write_table(w, rank == 0 ? log.table : NULL, &err);
  if (st) {
    if (rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
    rc = TL_EXIT_FAIL;
    goto done;
  }
  if (rank == 0) print_input_problems(o->out, &log);
  if (tl_http_report(r.http, w, comm, o->log, o->quiet, &err) != TL_OK) {
    if (rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
    rc = TL_EXIT_FAIL;
    goto done;
  }
  if ((rc = fate_check(o, &r, comm))) goto done;
  rcnt->load_s = t_loaded - t_start;
  rcnt->score_s = t_scored - t_loaded;
  rcnt->write_s = now_s() - t_scored;
done:
  tl_journal_close(&jn);
  free(done);
  free(pending);
  free(jdir);
  char *rows_dir = r.rows_dir ? tl_strdup(r.rows_dir) : NULL;
  bench_run_release(&r); /* (closes this rank's spill files) */
  tl_inlog_release(&log);
  rc = agree(rc, comm);
  if (rank == 0 && rows_dir) remove_spill(rows_dir, o->log);
  g_spill_path[0] = g_rows_dir[0] = 0;
  free(rows_dir);
  return rc;
}
/* Rank 0: why a run has no unit, said plainly (a run that scores nothing never succeeds). */
static void nothing_to_run(FILE *log, const bench_run *r, const tl_inlog *in) {
  fprintf(log, "tally: nothing to run: the job has 0 units");
  for (size_t b = 0; b < r->nb; b++)
    fprintf(log, "%s %s: %zu items x %zu model/variant/seed configs", b ? ";" : " (", r->rbs[b].vt->name,
            r->rbs[b].vt->n_items(r->rbs[b].b), r->rbs[b].ncfgs);
  fprintf(log, "%s", r->nb ? ")" : "");
  if (in->total) fprintf(log, "; %ld input line%s rejected (above)", in->total, in->total == 1 ? " was" : "s were");
  fprintf(log, ". A config comes from the answer lines' (model, prompt_variant, seed), or from the \"models\" "
               "and \"seeds\" of the job with an engine; nothing was written\n");
}

/* Collective. Runs one study of the job with the engine of `tally correlate`. */
/* Rank 0, a study over the run's own columns: the benchmark's gathered item columns (left),
 * joined with the study's table when it has one. Returns an exit code. */
static int study_table(const tl_run_opts *o, const tl_job_study *js, tl_tabin *left, tl_tabin *out) {
  if (!js->join) {
    *out = *left;
    memset(left, 0, sizeof *left);
    return TL_EXIT_OK;
  }
  tl_inlog log;
  tl_err err = {{0}};
  if (tl_inlog_init(&log, o->log, o->strict_input)) return TL_EXIT_FAIL;
  tl_tabin right;
  tl_status st = tl_tabin_read(js->join, 0, &log, &right, &err);
  int rc = TL_EXIT_OK;
  if (st) {
    fprintf(o->log, "tally: study '%s': %s\n", js->name, err.msg[0] ? err.msg : tl_strerror(st));
    rc = st == TL_EINPUT && o->strict_input ? TL_EXIT_BAD_INPUT : TL_EXIT_FAIL;
  } else {
    int non = 0;
    char *on[16];
    for (const char *p = js->on; p && *p && non < 16;) {
      const char *e = strchr(p, ',');
      on[non++] = e ? tl_strndup(p, (size_t)(e - p)) : tl_strdup(p);
      p = e ? e + 1 : NULL;
    }
    size_t unmatched = 0;
    st = tl_tabin_join(left, &right, on, non, &log, out, &unmatched, &err);
    for (int i = 0; i < non; i++) free(on[i]);
    if (st) {
      fprintf(o->log, "tally: study '%s': %s\n", js->name, err.msg[0] ? err.msg : tl_strerror(st));
      rc = st == TL_EJOB ? TL_EXIT_USAGE : st == TL_EINPUT ? TL_EXIT_BAD_INPUT : TL_EXIT_FAIL;
    } else if (out->nrows == 0) {
      fprintf(o->log, "tally: study '%s': no unit of /items/%s has a row in '%s' (joined on %s)\n", js->name, js->from,
              js->join, js->on);
      tl_tabin_release(out);
      rc = TL_EXIT_USAGE;
    } else if (!o->quiet) { /* every join says what it matched */
      fprintf(o->log, "tally: study '%s': %zu of %zu units of /items/%s matched a row of '%s' (joined on %s)%s\n",
              js->name, left->nrows - unmatched, left->nrows, js->from, js->join, js->on,
              unmatched ? "; the others are left out" : "");
    }
    tl_tabin_release(&right);
  }
  tl_inlog_release(&log);
  return rc;
}

/* Collective. Runs one study of the job with the engine of `tally correlate`. stab: rank 0, the
 * gathered item columns when the study reads the run's own (taken). */
static int run_study(const tl_run_opts *o, const tl_job_study *js, MPI_Comm comm, tl_writer *w, tl_tabin *stab) {
  tl_corr_opts co;
  memset(&co, 0, sizeof co);
  co.input = js->input;
  co.human = js->human;
  co.metrics = js->metrics;
  co.group_by = js->group_by;
  co.resamples = js->resamples;
  co.seed = js->seed;
  co.ci = js->ci;
  co.method = js->method ? TL_CI_BCA : TL_CI_PERCENTILE;
  co.stats_mask = js->stats_mask;
  co.permutation = js->permutation;
  co.strict_input = o->strict_input;
  co.quiet = o->quiet;
  co.outf = o->out;
  co.log = o->log;
  int rank;
  MPI_Comm_rank(comm, &rank);
  test_pause(rank, "study", o->log);
  tl_tabin table;
  memset(&table, 0, sizeof table);
  int rc = TL_EXIT_OK;
  if (js->from && rank == 0) {
    rc = study_table(o, js, stab, &table);
    co.table = &table;
    co.input = table.path;
  }
  rc = agree(rc, comm);
  if (rc) {
    tl_tabin_release(&table);
    return rc;
  }
  if (rank == 0) fprintf(o->out, "\nstudy '%s' (%s):\n", js->name, co.input);
  char label[300];
  snprintf(label, sizeof label, "tally: study '%s'", js->name);
  co.label = label;
  char prefix[300];
  snprintf(prefix, sizeof prefix, "/stats/%s", js->name);
  rc = tl_corr_study(&co, comm, w, prefix);
  tl_tabin_release(&table);
  return rc;
}

/* The SHA-256 of every input file, computed on rank 0 by a thread of its own while the inputs
 * load and the units run (the hash of the 900,000-unit job's 596 MB answers file took 0.6 s
 * before the load could start); provenance_write joins it. */
typedef struct {
  pthread_t th;
  int started;           /* rank 0: the thread runs (join it) */
  const char **paths, **whats;
  int n;
  tl_buf sha, files;     /* its results: see provenance.h */
  tl_status st;
  tl_err err;
} provenance_job;

static void *provenance_main(void *arg) {
  provenance_job *p = arg;
  p->st = tl_sha256_files_json(p->paths, p->whats, p->n, &p->sha, &p->files, &p->err);
  return NULL;
}

/* Rank 0: starts hashing the job's inputs (the job file and every file it reads). Returns 0, or
 * -1 when the thread cannot start (nothing to join then). */
static int provenance_start(const tl_run_opts *o, const tl_job *job, provenance_job *p) {
  memset(p, 0, sizeof *p);
  tl_buf_init(&p->sha);
  tl_buf_init(&p->files);
  tl_path_role *in;
  int k = job_inputs(o, job, &in);
  if (k <= 0) return -1;
  p->paths = calloc((size_t)k, sizeof *p->paths);
  p->whats = calloc((size_t)k, sizeof *p->whats);
  for (int i = 0; p->paths && p->whats && i < k; i++) p->paths[i] = in[i].path, p->whats[i] = in[i].what;
  free(in); /* the strings are the job's and the options' */
  p->n = k;
  if (!p->paths || !p->whats || pthread_create(&p->th, NULL, provenance_main, p) != 0) {
    free(p->paths);
    free(p->whats);
    p->paths = p->whats = NULL;
    return -1;
  }
  p->started = 1;
  return 0;
}

/* Joins the thread (when it runs) and frees p. */
static void provenance_end(provenance_job *p) {
  if (p->started) pthread_join(p->th, NULL);
  p->started = 0;
  free(p->paths);
  free(p->whats);
  p->paths = p->whats = NULL;
  tl_buf_release(&p->sha);
  tl_buf_release(&p->files);
}

/* Collective: waits for rank 0's hashes and writes the root attributes input_sha256,
 * input_files and job_dir (the same value on every rank: broadcast from rank 0). sha:
 * {"<path as given>": sha256}; files: [{path (absolute), what, sha256}] of the same files (tally
 * merge checks the items it re-scores against them); jdir: the job file's folder, absolute
 * (where the job's relative paths point). One buffer, NUL-separated. Frees p. */
static int provenance_write(const tl_run_opts *o, const tl_job *job, provenance_job *p, tl_writer *w,
                            MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  tl_err err = {{0}};
  tl_buf all, sha, files, jdir;
  tl_buf_init(&all);
  tl_buf_init(&sha);
  tl_buf_init(&files);
  tl_buf_init(&jdir);
  int64_t len[3] = {-1, -1, -1};
  if (rank == 0) {
    if (p->started) pthread_join(p->th, NULL);
    p->started = 0;
    char *jd = o->job_dir ? realpath(o->job_dir, NULL) : realpath(job->dir, NULL);
    if (!p->paths) fprintf(o->log, "tally: cannot hash the inputs: out of memory or no thread\n");
    else if (p->st != TL_OK) fprintf(o->log, "tally: %s\n", p->err.msg);
    else {
      len[0] = (int64_t)p->sha.len;
      len[1] = (int64_t)p->files.len;
      len[2] = jd ? (int64_t)strlen(jd) : 0;
      tl_buf_append(&all, p->sha.data, p->sha.len);
      tl_buf_append(&all, p->files.data, p->files.len);
      if (jd) tl_buf_append(&all, jd, strlen(jd));
    }
    free(jd);
  }
  provenance_end(p);
  MPI_Bcast(len, 3, MPI_INT64_T, 0, comm);
  if (len[0] < 0 || len[0] + len[1] + len[2] > INT_MAX) {
    tl_buf_release(&all);
    return TL_EXIT_FAIL;
  }
  int64_t tot = len[0] + len[1] + len[2];
  if (rank != 0) {
    tl_buf_reset(&all);
    for (int64_t i = 0; i < tot; i++) tl_buf_append(&all, " ", 1);
  }
  MPI_Bcast(all.data, (int)tot, MPI_CHAR, 0, comm);
  tl_buf_append(&sha, all.data, (size_t)len[0]);
  tl_buf_append(&files, all.data + len[0], (size_t)len[1]);
  tl_buf_append(&jdir, all.data + len[0] + len[1], (size_t)len[2]);
  tl_buf_release(&all);
  tl_status st = w->vt->attr_str(w, "input_sha256", sha.data ? sha.data : "{}", &err);
  if (!st) st = w->vt->attr_str(w, "input_files", files.data ? files.data : "[]", &err);
  if (!st) st = w->vt->attr_str(w, "job_dir", jdir.data ? jdir.data : "", &err);
  tl_buf_release(&sha);
  tl_buf_release(&files);
  tl_buf_release(&jdir);
  if (st) {
    if (rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
    return TL_EXIT_FAIL;
  }
  return TL_EXIT_OK;
}

/* Collective: opens the output (parallel HDF5) and writes the run's root attributes but the
 * provenance ones, whose hashing rank 0 starts here (provenance_write writes them). Whatever
 * the result, the caller ends prov (provenance_end). */
static int open_output(const tl_run_opts *o, const tl_job *job, const char *output, MPI_Comm comm,
                       tl_writer **wout, provenance_job *prov) {
  int nranks, rank;
  MPI_Comm_size(comm, &nranks);
  MPI_Comm_rank(comm, &rank);
  tl_err err = {{0}};
  memset(prov, 0, sizeof *prov);
  int bad = rank == 0 && provenance_start(o, job, prov) != 0;
  MPI_Bcast(&bad, 1, MPI_INT, 0, comm);
  if (bad) {
    if (rank == 0) fprintf(o->log, "tally: cannot start hashing the inputs (out of memory, or no thread)\n");
    return TL_EXIT_FAIL;
  }
  tl_writer *w = tl_h5_parallel_open(output, comm, &err);
  if (!w) {
    if (rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
    return TL_EXIT_FAIL;
  }
  unsigned maj, min, rel;
  H5get_libversion(&maj, &min, &rel);
  char h5v[32];
  snprintf(h5v, sizeof h5v, "%u.%u.%u", maj, min, rel);
  tl_status st = w->vt->attr_str(w, "job", job->json, &err);
  if (!st) st = w->vt->attr_str(w, "job_name", job->name, &err);
  if (!st) st = w->vt->attr_str(w, "tally_version", TALLY_VERSION, &err);
  if (!st) st = w->vt->attr_str(w, "tally_commit", TALLY_GIT_COMMIT, &err);
  if (!st) st = w->vt->attr_str(w, "hdf5_version", h5v, &err);
  if (!st) st = w->vt->attr_str(w, "deflate", tl_h5_deflate_name(), &err);
  if (!st) st = w->vt->attr_str(w, "engine", job->engines[TL_ROLE_MODEL].type, &err);
  if (!st) {
    tl_buf e;
    tl_buf_init(&e);
    tl_buf_printf(&e, "{\"model\":%s,\"judge\":%s}", job->engines[TL_ROLE_MODEL].json, job->engines[TL_ROLE_JUDGE].json);
    st = e.data ? w->vt->attr_str(w, "engines", e.data, &err) : tl_err_set(&err, TL_ENOMEM, "out of memory");
    tl_buf_release(&e);
  }
  if (!st) st = w->vt->attr_i64(w, "n_ranks", nranks, &err);
  if (!st && o->cell >= 0) st = w->vt->attr_i64(w, "sweep_cell", o->cell, &err);
  if (!st && o->merge && o->cells_merged) { /* a merge of a sweep's cells: whole or partial */
    st = w->vt->attr_i64(w, "partial", o->cells_missing && *o->cells_missing, &err);
    if (!st) st = w->vt->attr_str(w, "cells_merged", o->cells_merged, &err);
    if (!st) st = w->vt->attr_str(w, "cells_missing", o->cells_missing ? o->cells_missing : "", &err);
  }
  if (st) {
    fprintf(o->log, "tally: %s\n", err.msg);
    w->vt->abort(w);
    return TL_EXIT_FAIL;
  }
  *wout = w;
  return TL_EXIT_OK;
}

/* `--dry-run`: rank 0 builds every request the job would send - to models, and to judges where
 * the answers are known (replay files, the cache) - and writes them as JSONL to the dry-run file
 * (written as FILE.part, then renamed), sending none; no output, no journal. The other ranks
 * only wait. Returns an exit code (the same on every rank). */
static int run_dry(const tl_run_opts *o, const tl_job *job, const char *output, MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  int rc = TL_EXIT_OK;
  if (rank != 0) return agree(rc, comm);
  tl_buf path;
  tl_buf_init(&path);
  if (o->dry_path && *o->dry_path) tl_buf_puts(&path, o->dry_path);
  else tl_buf_printf(&path, "%s.requests.jsonl", output);
  /* never over an input of the job, and only where it can be written: "-" is standard output
   * (the summary lines then go to the log), a device or FIFO is written in place, a file through
   * a temporary file renamed at the end (tl_out_stream) */
  tl_path_role *in = NULL;
  int k = job_inputs(o, job, &in);
  tl_err perr = {{0}};
  if (k < 0 || tl_out_check_inputs(path.data, "the dry-run file", in, k, &perr) ||
      tl_out_check_stream_place(path.data, &perr)) {
    fprintf(o->log, "tally: %s\n", k < 0 ? "out of memory" : perr.msg);
    rc = TL_EXIT_USAGE;
  }
  free(in);
  FILE *f = NULL, *sum = tl_path_is_std(path.data) ? o->log : o->out;
  tl_out_stream os;
  memset(&os, 0, sizeof os);
  if (!rc && tl_out_stream_open(&os, path.data, &perr) != TL_OK) {
    fprintf(o->log, "tally: the dry-run file: %s\n", perr.msg);
    rc = TL_EXIT_FAIL;
  }
  f = os.f;
  tl_inlog log;
  bench_run r;
  memset(&r, 0, sizeof r);
  tl_err err = {{0}};
  int log_ok = !rc && tl_inlog_init(&log, o->log, o->strict_input) == TL_OK;
  if (!rc && !log_ok) rc = TL_EXIT_FAIL;
  tl_status st = TL_OK;
  if (!rc) {
    st = bench_setup(o, &r, job, 0, 1, MPI_COMM_SELF, &log, &err);
    if (!st && !(r.pipe = tl_pipe_new(r.rbs, r.nb, on_submit, on_unit_done, &r))) st = tl_err_set(&err, TL_ENOMEM, "out of memory");
    if (st) {
      fprintf(o->log, "tally: %s\n", err.msg[0] ? err.msg : tl_strerror(st));
      rc = st == TL_EINPUT ? TL_EXIT_BAD_INPUT : st == TL_EJOB ? TL_EXIT_USAGE : TL_EXIT_FAIL;
    }
  }
  if (!rc && (rc = tl_http_open(job, o->cache_dir, f, NULL, MPI_COMM_SELF, o->log, r.http)) == 0)
    for (int q = 0; q < TL_ROLE__N; q++)
      if (r.http[q]) r.eng[q] = tl_openai_engine(r.http[q]);
  r.dry = 1;
  /* the units in key order, 1024 at a time: each one's stages as far as known replies go */
  for (uint64_t g0 = 0; !rc && g0 < r.U && !g_stop; g0 += 1024) {
    uint64_t g1 = g0 + 1024 < r.U ? g0 + 1024 : r.U;
    for (uint64_t g = g0; g < g1 && !st; g++) st = tl_pipe_start(r.pipe, g, NULL, &err);
    while (!st && tl_pipe_in_flight(r.pipe)) {
      int nrep;
      st = poll_engines(&r, 50, 256, &nrep, &err);
    }
    if (st) {
      fprintf(o->log, "tally: %s\n", err.msg);
      rc = TL_EXIT_FAIL;
    }
  }
  if (!rc && g_stop) rc = TL_EXIT_INTERRUPTED;
  uint64_t calls[TL_MAX_STAGES] = {0}, hits = 0;
  for (int s = 0; r.pipe && s < TL_MAX_STAGES; s++) calls[s] = tl_pipe_calls(r.pipe, s);
  uint64_t judge_calls = 0; /* every judge stage (sample) */
  for (int s = 1; s < TL_MAX_STAGES; s++) judge_calls += calls[s];
  for (int q = 0; q < TL_ROLE__N; q++)
    if (r.http[q]) {
      tl_openai_stats hs;
      tl_openai_stats_get(r.http[q], &hs);
      hits += hs.cache_hits;
    }
  if (f && tl_out_stream_close(&os, !rc, &perr) != TL_OK && !rc) {
    fprintf(o->log, "tally: the dry-run file: %s\n", perr.msg);
    rc = TL_EXIT_FAIL;
  }
  uint64_t unbuilt = 0; /* requests that could not be built (an unreadable image, ...): "error" lines */
  for (int q = 0; q < TL_ROLE__N; q++)
    if (r.http[q]) {
      tl_openai_stats hs;
      tl_openai_stats_get(r.http[q], &hs);
      unbuilt += hs.failed;
    }
  if (!rc)
    fprintf(sum, "dry run: %llu units; %llu requests to the model, %llu to the judge (%llu of them answered "
                    "from the cache, sent by neither); nothing was sent\n",
            (unsigned long long)r.U, (unsigned long long)calls[0], (unsigned long long)judge_calls, (unsigned long long)hits);
  if (!rc && unbuilt)
    fprintf(sum, "dry run: %llu requests could not be built: their lines carry \"error\" (why: e.g. an unreadable "
                    "image); a real run leaves those units engine_error\n", (unsigned long long)unbuilt);
  if (!rc) fprintf(sum, "wrote %s\n", tl_path_is_std(path.data) ? "the requests to standard output" : path.data);
  bench_run_release(&r);
  if (log_ok) tl_inlog_release(&log);
  tl_buf_release(&path);
  return agree(rc, comm);
}

/* The run on its own communicator (a duplicate of the caller's), so that its message tags
 * never meet another library's on the caller's communicator. Collective. */
static int run_job(const tl_run_opts *o, MPI_Comm comm);

/* --cell K: every benchmark keeps model K / n_seeds and seed K % n_seeds of its lists, which
 * must be given and the same in every entry (a sweep). Returns an exit code; rank 0 says why. */
static int restrict_to_cell(const tl_run_opts *o, tl_job *job, int rank) {
  const long ncell = tl_job_sweep_cells(job);
  if (!ncell) {
    if (rank == 0)
      fprintf(o->log, "tally: --cell needs a sweep: every benchmark of the job lists the same \"models\" and "
                      "\"seeds\" (the cells are their pairs)\n");
    return TL_EXIT_USAGE;
  }
  const tl_job_bench *b0 = &job->benches[0];
  if (o->cell >= ncell) {
    if (rank == 0)
      fprintf(o->log, "tally: --cell %ld: the job's sweep has %ld cells (%d models x %d seeds), 0 to %ld\n", o->cell,
              ncell, b0->n_models, b0->n_seeds, ncell - 1);
    return TL_EXIT_USAGE;
  }
  const int m = (int)(o->cell / b0->n_seeds), sd = (int)(o->cell % b0->n_seeds);
  for (int b = 0; b < job->n_benches; b++) {
    tl_job_bench *jb = &job->benches[b];
    for (int i = 0; i < jb->n_models; i++)
      if (i != m) free(jb->models[i]);
    jb->models[0] = jb->models[m];
    jb->n_models = 1;
    jb->seeds[0] = jb->seeds[sd];
    jb->n_seeds = 1;
  }
  return TL_EXIT_OK;
}

int tl_run_job(const tl_run_opts *o, MPI_Comm comm_in) {
  MPI_Comm comm;
  if (MPI_Comm_dup(comm_in, &comm) != MPI_SUCCESS) {
    fprintf(o->log, "tally: MPI_Comm_dup failed\n");
    return TL_EXIT_FAIL;
  }
  int rc = run_job(o, comm);
  MPI_Comm_free(&comm);
  return rc;
}

static int run_job(const tl_run_opts *o, MPI_Comm comm) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  install_signals();
  int rc = TL_EXIT_OK;
  tl_job job;
  memset(&job, 0, sizeof job);
  tl_buf probs;
  tl_buf_init(&probs);
  int nprob = 0;
  /* Rank 0 validates the job and reports every problem before any rank works. */
  if (rank == 0 && tl_job_load_in(o->job_path, o->job_dir, &job, &probs, &nprob) != TL_OK) {
    fprintf(o->log, "tally: invalid job '%s' (%d problem%s); nothing was run:\n%s", o->job_path,
            nprob, nprob == 1 ? "" : "s", probs.data);
    rc = TL_EXIT_USAGE;
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
  if (rc == TL_EXIT_OK && rank != 0) {
    /* the job was valid on rank 0: the other ranks read the same file */
    tl_buf_reset(&probs);
    if (tl_job_load_in(o->job_path, o->job_dir, &job, &probs, &nprob) != TL_OK) {
      fprintf(o->log, "tally: rank %d cannot read the job file '%s'\n", rank, o->job_path);
      rc = TL_EXIT_FAIL;
    }
  }
  tl_buf_release(&probs);
  rc = agree(rc, comm);
  if (rc) {
    tl_job_release(&job);
    return rc;
  }
  if (rc == TL_EXIT_OK && o->cell >= 0) rc = agree(restrict_to_cell(o, &job, rank), comm);
  if (rc) {
    tl_job_release(&job);
    return rc;
  }
  const char *output = o->out_override ? o->out_override : job.output;
  if (o->dry_run) {
    rc = job.n_benches ? run_dry(o, &job, output, comm) : TL_EXIT_OK;
    if (!job.n_benches && rank == 0) fprintf(o->log, "tally: the job has no benchmarks: no request to write\n");
    tl_job_release(&job);
    return rc;
  }
  tl_out_lock lock = {NULL, -1, 0};
  int nothing = 0;
  if (rank == 0) rc = prepare_output(o, &job, output, &lock, &nothing);
  if (rank == 0 && rc == TL_EXIT_OK && !nothing) rc = check_output(o, output);
  rc = agree(rc, comm);
  MPI_Bcast(&nothing, 1, MPI_INT, 0, comm);
  if (rc == TL_EXIT_OK && nothing) {
    tl_out_lock_release(&lock);
    tl_job_release(&job);
    return TL_EXIT_OK;
  }
  tl_writer *w = NULL;
  run_counts rcnt;
  memset(&rcnt, 0, sizeof rcnt);
  provenance_job prov;
  memset(&prov, 0, sizeof prov);
  if (rc == TL_EXIT_OK) rc = open_output(o, &job, output, comm, &w, &prov);
  rc = agree(rc, comm);
  tl_tabin *stabs = calloc((size_t)job.n_studies + 1, sizeof *stabs);
  if (!stabs) rc = TL_EXIT_FAIL;
  rc = agree(rc, comm);
  if (rc == TL_EXIT_OK && job.n_benches > 0) rc = run_benchmarks(o, &job, w, output, comm, &rcnt, stabs);
  /* Studies: collective, resamples split over every rank. */
  for (int i = 0; i < job.n_studies && rc == TL_EXIT_OK; i++) rc = run_study(o, &job.studies[i], comm, w, &stabs[i]);
  for (int i = 0; stabs && i < job.n_studies; i++) tl_tabin_release(&stabs[i]);
  free(stabs);
  rc = agree(rc, comm);
  if (w && rc == TL_EXIT_OK) rc = agree(provenance_write(o, &job, &prov, w, comm), comm); /* collective */
  provenance_end(&prov); /* a run that failed: the thread is joined, nothing written */
  if (w) {
    tl_err err = {{0}};
    tl_status st = TL_OK;
    if (rc == TL_EXIT_OK && job.n_benches > 0) {
      /* stage 0 as "units_resumed" and "engine_calls"; a judge stage as "judge_*" */
      st = w->vt->attr_i64(w, "units", (int64_t)rcnt.units, &err);
      if (!st) st = w->vt->attr_i64(w, "units_resumed", (int64_t)rcnt.resumed[0], &err);
      if (!st) st = w->vt->attr_i64(w, "engine_calls", (int64_t)rcnt.calls[0], &err);
      if (!st && rcnt.nstages > 1) st = w->vt->attr_i64(w, "judge_calls", (int64_t)rcnt.judge_calls, &err);
      if (!st && rcnt.nstages > 1) st = w->vt->attr_i64(w, "judge_resumed", (int64_t)rcnt.judge_resumed, &err);
      if (!st && rcnt.nstages > 1) st = w->vt->attr_i64(w, "judge_skipped", (int64_t)rcnt.judge_skips, &err);
    }
    if (rc == TL_EXIT_OK && !st) {
      st = w->vt->close(w, &err);
      if (st) {
        if (rank == 0) fprintf(o->log, "tally: %s (the journal is kept: free space and run again with --resume)\n", err.msg);
        rc = TL_EXIT_FAIL;
      }
    } else {
      if (st && rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
      if (st) rc = TL_EXIT_FAIL;
      w->vt->abort(w);
    }
  }
  rc = agree(rc, comm);
  if (rc == TL_EXIT_FAIL && rank == 0 && job.n_benches > 0) {
    char *jdir = tl_journal_dir(output);
    if (tl_journal_exists(jdir))
      fprintf(o->log, "tally: the journal '%s' keeps every finished unit: fix the problem and run "
                      "again with --resume (no finished unit is asked again)\n", jdir);
    free(jdir);
  }
  if (rc == TL_EXIT_OK && rank == 0) {
    if (job.n_benches > 0 && !o->keep_journal) {
      char *jdir = tl_journal_dir(output);
      tl_err err;
      if (tl_journal_remove(jdir, &err) != TL_OK) fprintf(o->log, "tally: %s\n", err.msg);
      free(jdir);
    }
    if (job.n_benches > 0 && !o->quiet)
      fprintf(o->log, "tally: %llu units, %llu from the journal, %llu engine calls, %d rank%s; "
              "load %.3f s, score %.3f s, gather+write %.3f s; %llu chunks, scheduling messages "
              "%.2f us/unit\n",
              (unsigned long long)rcnt.units, (unsigned long long)rcnt.resumed[0], (unsigned long long)rcnt.calls[0],
              nranks, nranks == 1 ? "" : "s", rcnt.load_s, rcnt.score_s, rcnt.write_s, (unsigned long long)rcnt.chunks,
              rcnt.calls[0] ? 1e6 * rcnt.sched_s / (double)rcnt.calls[0] : 0.0);
    if (job.n_benches > 0 && !o->quiet && rcnt.nstages > 1)
      fprintf(o->log, "tally: judge stage: %llu calls, %llu from the journal, %llu skipped (nothing to judge)\n",
              (unsigned long long)rcnt.judge_calls, (unsigned long long)rcnt.judge_resumed, (unsigned long long)rcnt.judge_skips);
    fprintf(o->out, "wrote %s\n", output);
    if (fflush(o->out) != 0 || ferror(o->out)) {
      fprintf(o->log, "tally: cannot write the summary to standard output: %s (the output file '%s' is "
                      "complete)\n", strerror(errno), output);
      rc = TL_EXIT_FAIL;
    }
  }
  g_lock_path[0] = g_part_path[0] = 0;
  tl_out_lock_release(&lock);
  tl_job_release(&job);
  return rc;
}

int tl_par_shutdown(void) {
  if (tl_h5_broken()) return 0;
  H5close();
  return 1;
}
