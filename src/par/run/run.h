/* run.h - private to src/par/run/: the state of one `tally run` (or merge, or dry run) and the
 * phases that share it. Nothing outside src/par/run includes it; the public entry is driver.h.
 *
 * Ownership: a bench_run is filled by run_bench_setup and freed by run_bench_run_release; its
 * parts (engines, spill, tally, merge) are owned by it. Each phase is a function of one file here
 * (docs/ARCHITECTURE.md "The run driver"); the functions marked "Collective" are called by every
 * rank of the run's communicator, in the same order. */
#ifndef TALLY_RUN_PRIVATE_H
#define TALLY_RUN_PRIVATE_H
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* realpath */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
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

/* ---- signals (signals.c) ---- */
extern volatile sig_atomic_t g_stop; /* the signal that asked the run to stop, 0: none */
/* The output lock's and the partial output's paths, and this rank's spilled rows and their
 * folder (rank 0), for the late signal handler (rank 0 only; "" elsewhere). */
extern char g_lock_path[4096], g_part_path[4096], g_spill_path[4096], g_rows_dir[4096];
/* After scoring: a signal ends the process (removing the partial output, lock and spill). */
void run_restore_signals(void);

/* One benchmark's finished units held by this rank, compact: no texts and no parse results,
 * only where the unit's item-table row was spilled (read back when the table is written,
 * window by window). Before the exchange in any order, afterwards exactly the rank's key block
 * in key order. rec[i * w] is the local unit index, rec[i * w + 1] the spilled row (spill.c's
 * packing: the rank whose file holds it, its frame's offset, the row's offset in the frame). */
typedef struct {
  uint64_t *rec;
  size_t n, cap;  /* units */
  int w;          /* uint64 per unit: 2 */
} held_rows;

/* A journal ref: file index (into the run's tl_jfiles) and byte offset of the record. (The
 * spilled rows' places are packed by spill.c.) */
#define JREF_OFF_BITS 40
static inline uint64_t jref(int file, uint64_t off) { return ((uint64_t)file << JREF_OFF_BITS) | off; }
static inline int jref_file(uint64_t ref) { return (int)(ref >> JREF_OFF_BITS); }
static inline uint64_t jref_off(uint64_t ref) { return ref & ((1ULL << JREF_OFF_BITS) - 1); }

/* The engines that answer the run's roles (owned; opened by setup, freed by bench_run_release). */
typedef struct {
  tl_replay *replay[TL_ROLE__N]; /* NULL: no replay files for the role */
  tl_openai *http[TL_ROLE__N];   /* the role's HTTP engine, NULL when it has none */
  tl_engine *eng[TL_ROLE__N];    /* the engine that answers the role: http's, else replay's */
  unsigned evidence;             /* bit s: stage s is answered by an HTTP engine, so the item
                                    tables get its evidence columns (tl_evidence_cols) */
} run_engines;

/* The item-table row of each finished unit, as built when it finished: each rank appends its
 * own to <output>.rows/r<rank>.bin (spill_row's format), so the tables are written without
 * reading the journal back or scoring anything again. Removed at the end of the run. */
typedef struct {
  char *rows_dir;
  FILE *spill;                   /* this rank's file, NULL when rows are not spilled (dry run) */
  char *spill_vbuf;              /* its stdio buffer (TL_JOURNAL_VBUF bytes), freed after it is closed */
  uint64_t spill_pos;            /* bytes written to it */
  tl_buf spill_blk;              /* the rows spilled since the last frame (raw): compressed and
                                    written as one frame when it holds SPILL_BLOCK bytes, and at
                                    the end of scheduling (run_spill_end); see spill.c */
  char *spill_z;                 /* the compressed frame's buffer, spill_zcap bytes */
  size_t spill_zcap;
  void *spill_zctx;              /* the ZSTD_CCtx the frames are compressed with (made once) */
  int *spill_fd;                 /* [nranks] every rank's file, opened for reading on first use */
  tl_buf spill_buf;
  held_rows *held;               /* [nb] */
  uint64_t **strb;               /* [nb][nranks * nstr[b] * 2]: of each string column of the item
                                    table, over the units this rank finished, by the rank that owns
                                    them: the bytes and the longest value's bytes (write_rows'
                                    str_stats, so the table is written in one pass, window by window) */
  int *nstr;                     /* [nb] string columns of the item table */
  tl_table **rowtab;             /* [nb] one finished unit's item-table row, cleared and filled again
                                    for each unit (its columns are made once) */
  /* The references of the replies journaled and not yet in a finished unit's row: a stage's
   * text served from a replay line (tl_reply_ref) is spilled as that reference, not copied, and
   * read back from the answers file when the table is written. Open addressing, linear probing;
   * key 1 + g * TL_MAX_STAGES + s (0: empty). */
  struct run_pref {
    uint64_t key;
    const char *text;            /* the reply's text (the row's text[s] must be this pointer) */
    tl_reply_ref ref;
  } *pref;
  size_t npref, cappref;         /* entries; slots (a power of two, or 0) */
  const char *nocopy_dir;        /* answers files under this folder are temporary (tally run's
                                    imported inputs): their replies are copied, not referenced;
                                    "" none; NULL not known yet */
  char *nocopy_own;              /* its storage */
  const char *last_path;         /* the last reference's path, and whether it is kept */
  int last_kept;
} run_spill;

/* tally merge only: every input's journal files are r->jf's files (the same list on every rank,
 * input after input, each input's in name order); each rank scans its share of them once and
 * keeps where each record is, for its owner. */
struct mrec {                    /* a record this rank scanned */
  uint32_t lcfg, item, sub;      /* lcfg: index in lcfg_key */
  uint16_t stage, bench;
  uint32_t file;
  uint64_t offset;
};
typedef struct {
  tl_buf merge_msg;              /* why an input's journal cannot be merged */
  int *file_input;               /* [jf.n] the input of each file */
  struct mrec *mrecs;
  size_t nmrecs, capmrecs;
  tl_strmap lcfg_of;             /* "bench\x1fmodel\x1fvariant index\x1fseed" -> index in lcfg_key */
  char **lcfg_key;
  size_t nlcfg, caplcfg;
  long m_nrec, m_nskip;          /* records and skipped lines this rank scanned */
} run_merge;

/* What this rank's finished units add up to: accumulators, fates, failures, counters. */
typedef struct {
  tl_acc_block (*lay)[TL_MAX_ACC]; /* [nb] each benchmark's accumulator layout */
  int *nblk;                /* [nb] */
  int64_t *(*acc)[TL_MAX_ACC]; /* [nb][nblk] this rank's accumulators (units added as they finish) */
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
} run_tally;

/* The harness audit of imported answers (audit.c): the harness's own verdict of each unit and
 * how tally's primary mode compares, counted where units finish. Not in a merge or a dry run. */
typedef struct {
  int8_t *v;              /* [U] the harness's verdict: -1 none, 0, 1, 2 neither (NULL: no audit) */
  char **fmt, **metric;   /* [nb] the harness (import format) and its metric, first seen; owned */
  long *lines;            /* [nb] answer lines carrying a "harness" member */
  uint64_t **cnt;         /* [nb][ncfgs * AU_N] this rank's counts (NULL: no harness lines) */
  uint64_t **first;       /* [nb][ncfgs * 2] the first unit flipping up, down (UINT64_MAX: none) */
  int *mode;              /* [nb] tally's mode compared: the one named as the harness's metric, else 0 */
} run_audit;

/* The run of the job's benchmarks on this rank. */
typedef struct {
  const tl_job *job;
  tl_run_bench *rbs;        /* [nb], bases in job order */
  size_t nb;
  uint64_t U;               /* units of every benchmark */
  run_engines en;
  int dry;                       /* a dry run: nothing journaled */
  int merging;                   /* tally merge: every reply comes from the inputs' journals */
  run_merge *m;                  /* merging only (else NULL) */
  FILE *msg;                     /* this rank's messages (stderr) */
  run_spill sp;
  tl_pipe *pipe;
  struct found {            /* [nb] what the answers (stage 0) hold, seen as the replay loads */
    tl_cfg *cfgs;           /* distinct (model, variant, seed) */
    size_t ncfgs, cap;
    tl_strmap seen;         /* cfg key -> index */
    tl_strmap models;       /* distinct models */
    char *last_model;       /* the (model, variant, seed) of the last answer seen, owned: lines of */
    int last_variant, last_seed; /* one file mostly share it, and it is already in cfgs */
  } *found;
  tl_inlog *log;            /* for the replay's discovery callback */
  tl_journal *jn;           /* this attempt's journal (scheduling) */
  tl_jfiles jf;             /* every journal file of the run: earlier attempts', then one per rank */
  int rank, nranks;
  run_tally tal;
  run_audit au;
} bench_run;

/* A unit's fate, counted per cfg (bench_run.fate). */
enum { FATE_UNITS, FATE_ANSWERED, FATE_ENGINE_ERROR, FATE_JUDGED, FATE_JUDGE_ERROR, FATE_N };

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
  uint64_t stale;     /* records whose referenced answers line changed since (resume: done again) */
  const char *last_ref_path; /* the answers file of the last restored reference (the engine's
                                name) and its source number there (note_restored_ref) */
  uint32_t last_ref_src;
  tl_buf stale_example; /* the first of them: its answers file and line */
  const tl_merge_input *inputs;
} resume_ctx;

/* ---- progress (rank 0) ---- */
typedef struct {
  FILE *f;
  int tty, quiet;
  uint64_t total, resumed, done, failed;
  double t0, last;
} progress;

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
    int col[64];      /* item table columns the study names (metrics, human, group_by, join, cluster, system, agreement) found */
    tl_buf cells;     /* this rank's rows in key order, each cell NUL-terminated */
  } *sc;
  tl_buf arena;       /* the window's spilled rows, read back; its strings are the table's cells */
  tl_buf raw;         /* one spilled row as read (its referenced texts not yet read back) */
  tl_table *win;      /* the window's rows (cells borrowed from the arena): one table, cleared for
                         each window, so its columns are allocated (and their pages touched) once */
  size_t *at;         /* [at_cap] each row's start in the arena */
  size_t at_cap;
  tl_rdahead ra;      /* a window's rows lie in its ranks' spill files mostly in file order (a
                         rank spills its units as they finish, chunk by chunk in key order):
                         one pread serves hundreds of rows instead of two preads a row. Its key:
                         the rank whose file it holds */
} window_ctx;

/* The run's counters, summed over ranks (rank 0 writes them as root attributes). */
typedef struct {
  uint64_t units, calls[TL_MAX_STAGES], resumed[TL_MAX_STAGES], skips[TL_MAX_STAGES];
  uint64_t judge_calls, judge_resumed, judge_skips; /* summed over stages 1.. (every judge sample) */
  int nstages;                 /* the most stages of any benchmark */
  double load_s, score_s, write_s, sched_s;
  uint64_t chunks;
  uint64_t scratch_bytes;      /* this attempt's journal and spill bytes, summed over the ranks */
} run_counts;

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

/* ---- the phases and their helpers, by file ---- */

/* audit.c */
/* Every rank, after the units are built: the harness verdicts of the imported answer lines. */
tl_status run_audit_load(bench_run *r, tl_err *err);
/* A finished unit (global g) of benchmark b: counted against its harness verdict, if any. */
void run_audit_note(bench_run *r, size_t b, uint64_t g, const tl_unit *u, const tl_row *row);
/* Collective (agreed status): the counts reduced, /audit/harness/<bench> written, rank 0's
 * summary lines printed. */
tl_status run_audit_write(const tl_run_opts *o, bench_run *r, tl_writer *w, MPI_Comm comm, tl_err *err);
void run_audit_release(run_audit *au, size_t nb);
/* benchmarks.c */
/* Collective. The failure is said on rank 0 (err left empty). */
tl_status run_benchmarks(const tl_run_opts *o, const tl_job *job, tl_writer *w, const char *output, MPI_Comm comm, run_counts *rcnt, tl_tabin *stabs, tl_err *err);

/* dry.c */
int run_dry(const tl_run_opts *o, const tl_job *job, const char *output, MPI_Comm comm);

/* exchange.c */
int run_agree(int rc, MPI_Comm comm);
/* The status of a failure that has been reported already (its exit code; err->msg emptied, so
 * nothing more is printed): tl_exit_code(run_said(c)) == c. */
tl_status run_said(int exit_code, tl_err *err);
tl_status run_redistribute(const tl_run_bench *rb, held_rows *h, MPI_Comm comm, tl_err *err);
/* Collective: the accumulators summed (or MIN/MAX, per block) into tot on rank 0, or on every
 * rank when all is 1. */
tl_status run_reduce_acc(const tl_acc_block *lay, int nblk, int64_t *const *acc, int64_t *const *tot, int all,
                         MPI_Comm comm, tl_err *err);
tl_status run_sum_counts(const bench_run *r, run_counts *rcnt, MPI_Comm comm, tl_err *err);
/* Collective: the len bytes at mine (NULL when len is 0) of every rank to rank 0, in rank
 * order. Rank 0 gets them in *all (malloc'd, a NUL after the last byte; the caller frees) and
 * their count in *total; the other ranks get NULL and 0. what names the bytes in a message.
 * Agreed before each collective and at the end: a rank out of memory, or over 2 GiB on one rank
 * or in all (MPI counts are int), fails every rank with TL_ENOMEM and gathers nothing. */
tl_status run_gather_bytes(const void *mine, size_t len, const char *what, MPI_Comm comm, char **all, size_t *total,
                           tl_err *err);
tl_status run_to_ranks(const uint64_t *rec, size_t n, size_t w, const int *dest, MPI_Comm comm, uint64_t **out, size_t *nout, tl_err *err);

/* fate.c */
/* Collective (agreed status). */
tl_status run_fate_check(const tl_run_opts *o, bench_run *r, MPI_Comm comm, tl_err *err);

/* merge.c */
/* Collective (agreed status). */
tl_status run_merge_exchange(const tl_run_opts *o, bench_run *r, resume_ctx *c, MPI_Comm comm, long *nf, long *nrec, long *nskip, tl_err *err);
tl_status run_merge_scan(const tl_run_opts *o, bench_run *r, MPI_Comm comm, tl_err *err);

/* output.c */
int run_check_output(const tl_run_opts *o, const char *output);
int run_job_inputs(const tl_run_opts *o, const tl_job *job, tl_path_role **in);
/* Collective (agreed status). */
tl_status run_open_output(const tl_run_opts *o, const tl_job *job, const char *output, MPI_Comm comm, tl_writer **wout, provenance_job *prov, tl_err *err);
int run_prepare_output(const tl_run_opts *o, const tl_job *job, const char *output, tl_out_lock *lock, int *nothing);
void run_provenance_end(provenance_job *p);
/* Collective (agreed status). */
tl_status run_provenance_write(const tl_run_opts *o, const tl_job *job, provenance_job *p, tl_writer *w, MPI_Comm comm, tl_err *err);

/* restore.c */
tl_status run_on_journal_rec(void *vctx, const tl_journal_rec *rec);

/* resume.c */
/* Collective (agreed status). */
tl_status run_open_attempt(bench_run *r, tl_journal *jn, const char *jdir, const char *jhash, MPI_Comm comm, tl_err *err);
/* Collective (agreed status). */
tl_status run_resume_read(const tl_run_opts *o, bench_run *r, const char *const *dirs, const char *const *hashes, int ndirs, uint8_t *done, MPI_Comm comm, tl_err *err);

/* schedule.c */
tl_status run_drain_restored(bench_run *r, tl_err *err);
tl_status run_on_submit(void *ctx, tl_role role, const tl_eng_request *rq);
tl_status run_on_unit_done(void *ctx, size_t b, uint64_t g, tl_row *row);
tl_status run_poll_engines(bench_run *r, int timeout_ms, int maxrep, int *nrep, tl_err *err);
void run_progress_show(progress *p, int final);
tl_status run_schedule(bench_run *r, const uint64_t *pending, uint64_t P, progress *pg, MPI_Comm comm, int *interrupted, double *sched_s /* OUT: seconds this rank spent on scheduling messages */, uint64_t *nchunks, tl_err *err);

/* setup.c */
tl_status run_bench_setup(const tl_run_opts *o, bench_run *r, const tl_job *job, int rank, int nranks, MPI_Comm comm, tl_inlog *log, tl_err *err);
void run_nothing_to_run(FILE *log, const bench_run *r, const tl_inlog *in);
/* setup.c: the replay's discovery callback (a tl_replay_key_fn on a bench_run: the cfgs found,
 * unknown items reported to r->log) and its sub of a line (a tl_replay_sub_fn). */
int run_replay_key(void *ctx, const tl_unit_key *k, const char *path, long line);
int run_replay_sub(void *ctx, const char *bench, const char *id, int64_t turn, int64_t turn_id, uint32_t *sub,
                   char *msg, size_t msz);
/* share.c: collective over comm (nranks > 1). tl_replay_open_subs(src, n, max_line, log,
 * run_replay_key, r, run_replay_sub, r, out) with each rank reading a share of each file's
 * bytes (replay.h "one load shared"): every rank ends with the same engine in *out, the same
 * r->found (in the same order) and the same problems in log as one rank reading every line.
 * Every step ends in tl_agree: a failure is every rank's (*out NULL). */
tl_status run_share_replay(bench_run *r, const tl_replay_source *src, int n, size_t max_line, tl_inlog *log,
                           MPI_Comm comm, tl_replay **out, tl_err *err);

/* signals.c */
void run_install_signals(void);
double run_now_s(void);
void run_test_pause(int rank, const char *phase, FILE *log);
/* Fault injection for the tests of the collective error contract (tests/e2e/test_fail_ranks.sh)
 * and nothing else: with TALLY_TEST_FAIL=PHASE:RANK set, 1 on rank RANK at PHASE, which then
 * fails as a full disk would make it fail: "spill" (its spill file cannot be created), "restore"
 * (while it finishes the partly restored units of a resume), "write" (its block of the item
 * table); "share-read", "share-index", "share-report" (the steps of the shared replay load,
 * share.c: its share cannot be read, its index cannot be built, its problems cannot be
 * reported). Unset: 0. */
int run_test_fail(const char *phase, int rank);

/* spill.c */
/* Collective (agreed status). */
tl_status run_open_spill(bench_run *r, const char *output, MPI_Comm comm, tl_err *err);
void run_remove_spill(const char *dir, FILE *log);
/* The spilled form of row `row` of t (the unit's tl_row `ur`, NULL: none; refs[s], NULL or the
 * reference of ur->text[s]): see spill.c. */
tl_status run_spill_row(const tl_table *t, size_t row, const tl_row *ur, const tl_reply_ref *const *refs, tl_buf *out,
                        uint64_t *sb);
/* Appends a spilled row (run_spill_row's form) to this rank's spill; *ref: where it lies
 * (spill.c's packing of rank, frame and offset in the frame). TL_EIO when the file cannot be
 * written or is past the packing's limits. */
tl_status run_spill_put(bench_run *r, const tl_buf *row, uint64_t *ref);
/* The last frame written and the frame buffers freed: after the last row (end of scheduling). */
tl_status run_spill_end(bench_run *r);
/* The frame buffers and the compression context freed (idempotent: also when a run stops
 * before its scheduling ends). */
void run_spill_frames_release(run_spill *sp);
/* The references table (run_spill.pref): note the reference of unit g's stage s reply (its
 * text pointer), take it back (removed; 0 when there is none), free the table. */
tl_status run_pref_note(run_spill *sp, uint64_t g, int s, const char *text, const tl_reply_ref *ref);
int run_pref_take(run_spill *sp, uint64_t g, int s, const char **text, tl_reply_ref *ref);
void run_pref_release(run_spill *sp);
tl_table *run_window_fill(void *vctx, uint64_t first, uint64_t n);

/* state.c */
int run_bench_index(const bench_run *r, const char *name);
void run_bench_run_release(bench_run *r);
tl_table *run_items_table(const bench_run *r, size_t b, const tl_unit *units, const tl_row *rows, size_t n, tl_table *into);
tl_status run_push_row(held_rows *h, uint64_t u, uint64_t spilled);
tl_unit_key run_unit_key(const bench_run *r, uint64_t g, int s);

/* studies.c */
int run_study(const tl_run_opts *o, const tl_job_study *js, MPI_Comm comm, tl_writer *w, tl_tabin *stab);

/* write.c */
void run_collect_cells(window_ctx *c, const tl_table *t);
void run_modes_attr(const bench_run *r, tl_buf *out);
void run_print_input_problems(FILE *out, const tl_inlog *log);
/* Collective (agreed status). */
tl_status run_write_bench(const tl_run_opts *o, bench_run *r, size_t b, tl_writer *w, MPI_Comm comm, tl_table ***tabs, int *ntabs, int64_t **tot, int *nblk, tl_tabin *stabs, tl_err *err);

#endif
