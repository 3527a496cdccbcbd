/* driver.c - `tally run` (see driver.h).
 *
 * Flow of the benchmarks part (collective over comm):
 *  1. every rank loads the items and the replay answers itself and builds the same units
 *     (cfg-major, items by id: key order); only rank 0 reports input problems;
 *  2. rank 0 reads the journals of earlier attempts (--resume) and broadcasts which units are
 *     done; their rows are rebuilt from the journal (re-parsed, no engine call);
 *  3. the pending units are dealt in chunks on demand: workers ask rank 0 for the next chunk
 *     when they finish one (answer times are uneven once engines are real). Rank 0 works too:
 *     it answers requests between its own engine polls, so no core idles on a small node and a
 *     worker waits for at most one poll interval. Every finished unit goes to the rank's
 *     journal (fsync per chunk);
 *  4. rows move to their owners - rank q owns the contiguous key block [U q / N, U (q+1) / N) -
 *     with one MPI_Alltoallv; each rank writes its block of the item table collectively
 *     (parallel HDF5 hyperslabs) and adds its integer counts; MPI_Reduce sums them on rank 0,
 *     which computes every float from the integers in key order and writes the metric tables.
 * So the datasets do not depend on the rank count or on who scored what. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
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
#include "journal.h"
#include "outsafe.h"
#include "provenance.h"
#include "replay.h"
#include "tally/boot.h"
#include "tally/inlog.h"
#include "tally/job.h"
#include "se_eval.h"
#include "tally/str.h"
#include "writer.h"

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

/* After scoring a signal ends the process at once, as the default action would, but first
 * removes the partial output and the output lock (unlink is async-signal-safe): the journal is
 * complete by then, and the next run must find neither a half file nor a stale lock. */
static void on_signal_late(int sig) {
  if (g_part_path[0]) unlink(g_part_path);
  if (g_lock_path[0]) unlink(g_lock_path);
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

typedef struct {
  const tl_job *job;
  const tl_job_bench *jb;
  tl_se_itemset items;
  tl_replay *replay;
  tl_se_cfg *cfgs;
  size_t ncfgs;
  uint64_t U;              /* units = ncfgs * items.n, key order u = cfg * items.n + item */
  tl_se_parser *parsers[TL_SE__NMODES];
  tl_se_row *rows;         /* rows this rank holds (any order) */
  uint64_t *unit;          /* their unit indices */
  size_t nrows, caprows;
  tl_strmap rules;         /* interned rule names of rows received from other ranks */
} se_run;

static void se_run_release(se_run *r) {
  for (size_t i = 0; i < r->nrows; i++) tl_se_row_release(&r->rows[i]);
  free(r->rows);
  free(r->unit);
  for (size_t i = 0; i < r->ncfgs; i++) free(r->cfgs[i].model);
  free(r->cfgs);
  if (r->replay) tl_replay_engine(r->replay)->vt->free(tl_replay_engine(r->replay));
  for (int m = 0; m < TL_SE__NMODES; m++) tl_se_parser_free(r->parsers[m]);
  tl_se_itemset_release(&r->items);
  tl_strmap_release(&r->rules);
}

/* Appends a row (taking ownership of its strings) with its unit index. */
static tl_status push_row(se_run *r, tl_se_row *row, uint64_t u) {
  if (r->nrows == r->caprows) {
    size_t cap = r->caprows ? r->caprows * 2 : 1024;
    tl_se_row *p = realloc(r->rows, cap * sizeof *p);
    if (!p) return TL_ENOMEM;
    r->rows = p;
    uint64_t *q = realloc(r->unit, cap * sizeof *q);
    if (!q) return TL_ENOMEM;
    r->unit = q;
    r->caprows = cap;
  }
  r->rows[r->nrows] = *row;
  r->unit[r->nrows++] = u;
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

/* Adds cfg (model, variant, seed) unless present. */
static tl_status add_cfg(se_run *r, tl_strmap *seen, size_t *cap, const char *model, int variant,
                         int seed) {
  tl_buf k;
  tl_buf_init(&k);
  if (tl_buf_printf(&k, "%s\x1f%d\x1f%d", model, variant, seed)) return TL_ENOMEM;
  bool ins;
  tl_status st = tl_strmap_put(seen, k.data, r->ncfgs, &ins, NULL);
  tl_buf_release(&k);
  if (st || !ins) return st;
  if (r->ncfgs == *cap) {
    *cap = *cap ? *cap * 2 : 16;
    tl_se_cfg *p = realloc(r->cfgs, *cap * sizeof *p);
    if (!p) return TL_ENOMEM;
    r->cfgs = p;
  }
  r->cfgs[r->ncfgs].model = tl_strdup(model);
  r->cfgs[r->ncfgs].variant = variant;
  r->cfgs[r->ncfgs].seed = seed;
  if (!r->cfgs[r->ncfgs].model) return TL_ENOMEM;
  r->ncfgs++;
  return TL_OK;
}

/* The cfgs of a run: the (model, variant, seed) combinations found in the answers, kept only
 * when they match the job's model/seed lists; when the job lists both models and seeds, every
 * listed combination is a cfg even without answers (its units are then counted "missing"). */
static tl_status build_cfgs(se_run *r) {
  const tl_job_bench *jb = r->jb;
  tl_strmap seen;
  tl_strmap_init(&seen);
  size_t cap = 0;
  tl_status st = TL_OK;
  size_t na = tl_replay_count(r->replay);
  for (size_t i = 0; i < na && st == TL_OK; i++) {
    const char *id, *model;
    int seed, variant;
    tl_replay_key(r->replay, i, &id, &model, &seed, &variant, NULL);
    if (variant < 0) variant = jb->variant;
    if (jb->models && !has_str(jb->models, jb->n_models, model)) continue;
    if (jb->seeds && !has_int(jb->seeds, jb->n_seeds, seed)) continue;
    st = add_cfg(r, &seen, &cap, model, variant, seed);
  }
  if (jb->models && jb->seeds) {
    for (int m = 0; m < jb->n_models && st == TL_OK; m++) {
      int any = 0;
      for (size_t c = 0; c < r->ncfgs; c++) any |= strcmp(r->cfgs[c].model, jb->models[m]) == 0;
      if (any) {
        /* every listed seed for every variant this model was seen with */
        size_t n0 = r->ncfgs;
        for (size_t c = 0; c < n0 && st == TL_OK; c++)
          if (strcmp(r->cfgs[c].model, jb->models[m]) == 0)
            for (int s = 0; s < jb->n_seeds && st == TL_OK; s++)
              st = add_cfg(r, &seen, &cap, jb->models[m], r->cfgs[c].variant, jb->seeds[s]);
      } else {
        for (int s = 0; s < jb->n_seeds && st == TL_OK; s++)
          st = add_cfg(r, &seen, &cap, jb->models[m], jb->variant, jb->seeds[s]);
      }
    }
  }
  tl_strmap_release(&seen);
  if (st == TL_OK) tl_se_cfgs_sort(r->cfgs, r->ncfgs);
  return st;
}

/* A `models` or `seeds` value that no answer has is a typo until shown otherwise: TL_EJOB naming
 * every such value and what the answers do hold (never a run of zero units or of units that are
 * all "missing"). */
static tl_status check_filters(const se_run *r, tl_err *err) {
  const tl_job_bench *jb = r->jb;
  size_t na = tl_replay_count(r->replay);
  tl_buf bad, seen;
  tl_buf_init(&bad);
  tl_buf_init(&seen);
  tl_strmap models;
  tl_strmap_init(&models);
  tl_status st = TL_OK;
  for (size_t i = 0; i < na && !st; i++) {
    const char *model;
    tl_replay_key(r->replay, i, NULL, &model, NULL, NULL, NULL);
    bool ins = false;
    st = tl_strmap_put(&models, model, 0, &ins, NULL);
    if (!st && ins && models.n <= 8) st = tl_buf_printf(&seen, "%s'%s'", seen.len ? ", " : "", model);
  }
  for (int m = 0; m < jb->n_models && !st; m++)
    if (!tl_strmap_get(&models, jb->models[m], NULL))
      st = tl_buf_printf(&bad, "%smodel '%s'", bad.len ? "; " : "", jb->models[m]);
  for (int s = 0; s < jb->n_seeds && !st; s++) {
    int any = 0;
    for (size_t i = 0; i < na && !any; i++) {
      int seed;
      tl_replay_key(r->replay, i, NULL, NULL, &seed, NULL, NULL);
      any = seed == jb->seeds[s];
    }
    if (!any) st = tl_buf_printf(&bad, "%sseed %d", bad.len ? "; " : "", jb->seeds[s]);
  }
  if (st) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  else if (bad.len)
    st = tl_err_set(err, TL_EJOB, "the job's filter names what no answer file holds: %s (the answers have "
                    "model%s %s%s); fix the \"models\"/\"seeds\" lists of the benchmark", bad.data,
                    models.n == 1 ? "" : "s", seen.data, models.n > 8 ? ", ..." : "");
  tl_buf_release(&bad);
  tl_buf_release(&seen);
  tl_strmap_release(&models);
  return st;
}

/* Splits "path:line" (the replay source) for the inlog. */
static long split_source(const char *src, char *path, size_t psz) {
  const char *c = strrchr(src, ':');
  size_t n = c ? (size_t)(c - src) : strlen(src);
  if (n >= psz) n = psz - 1;
  memcpy(path, src, n);
  path[n] = 0;
  return c ? atol(c + 1) : 0;
}


/* Rank 0: creates the journal folder (its parent is the output's folder, checked already). */
static int mkdir_p_journal(const char *dir, FILE *log) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(log, "tally: cannot create the journal folder '%s': %s\n", dir, strerror(errno));
    return 1;
  }
  return 0;
}

/* Collective-free part of the setup, run by every rank: items, answers, units, parsers.
 * Rank 0's log echoes problems; the others' logs are silent (same input, same problems). */
static tl_status se_setup(se_run *r, const tl_job *job, tl_inlog *log, tl_err *err) {
  memset(r, 0, sizeof *r);
  tl_strmap_init(&r->rules);
  r->job = job;
  r->jb = &job->benches[0];
  const tl_job_bench *jb = r->jb;
  tl_status st = tl_se_itemset_load(&r->items, jb->items, jb->n_items, job->max_line, log, err);
  if (st) return st;
  tl_replay_source *src = calloc((size_t)jb->n_answers, sizeof *src);
  if (!src) return tl_err_set(err, TL_ENOMEM, "out of memory");
  for (int i = 0; i < jb->n_answers; i++) {
    src[i].path = jb->answers[i].path;
    src[i].model = jb->answers[i].model;
    src[i].seed = jb->answers[i].seed;
    src[i].variant = jb->answers[i].variant >= 0 ? jb->answers[i].variant : jb->variant;
  }
  st = tl_replay_open(src, jb->n_answers, job->max_line, log, &r->replay, err);
  free(src);
  if (st) return st;
  tl_replay_set_latency(r->replay, job->latency_ms);
  /* Answers for items the job does not have: reported and counted, never scored. */
  size_t na = tl_replay_count(r->replay);
  for (size_t i = 0; i < na; i++) {
    const char *id, *source;
    tl_replay_key(r->replay, i, &id, NULL, NULL, NULL, &source);
    if (tl_strmap_get(&r->items.by_id, id, NULL)) continue;
    char path[4096];
    long line = split_source(source, path, sizeof path);
    if (tl_inlog_report(log, TL_IN_UNKNOWN_ITEM, path, line, "answer for unknown item '%s'", id))
      return TL_EINPUT;
  }
  if ((st = check_filters(r, err))) return st;
  if ((st = build_cfgs(r))) return tl_err_set(err, st, "out of memory");
  for (int k = 0; k < jb->n_modes; k++) {
    r->parsers[jb->modes[k]] = tl_se_parser_new(jb->modes[k], err);
    if (!r->parsers[jb->modes[k]]) return TL_EINTERNAL;
  }
  r->U = (uint64_t)r->ncfgs * r->items.n;
  return TL_OK;
}

/* Builds, scores and keeps the row of unit u from an engine reply (taking its strings). */
static tl_status finish_unit(se_run *r, uint64_t u, tl_eng_reply *rep) {
  tl_se_row row;
  tl_se_row_init(&row);
  row.cfg = (size_t)(u / r->items.n);
  row.item = (size_t)(u % r->items.n);
  row.response = rep->text;
  row.prompt = rep->prompt;
  row.source = rep->source;
  rep->text = rep->prompt = rep->source = NULL;
  tl_status st = tl_se_score_row(r->parsers, &r->items, r->cfgs, &row);
  if (!st) st = push_row(r, &row, u);
  if (st) tl_se_row_release(&row);
  return st;
}

/* ---- resume: units recorded in journals ---- */
typedef struct {
  se_run *r;
  tl_strmap cfg_of;   /* "model\x1fvariant\x1fseed" -> cfg */
  uint8_t *done;      /* [U] */
  uint64_t lo, hi;    /* this rank restores the units of its own key block only */
  uint64_t restored;
  tl_status st;
} resume_ctx;

static tl_status on_journal_rec(void *vctx, const tl_journal_rec *rec) {
  resume_ctx *c = vctx;
  se_run *r = c->r;
  if (strcmp(rec->bench, "spatialeval") != 0) return TL_OK;
  int variant = tl_se_prompt_from_name(rec->variant);
  tl_buf k;
  tl_buf_init(&k);
  tl_buf_printf(&k, "%s\x1f%d\x1f%d", rec->model, variant, rec->seed);
  size_t cfg, item;
  int known = tl_strmap_get(&c->cfg_of, k.data, &cfg) && tl_strmap_get(&r->items.by_id, rec->id, &item);
  tl_buf_release(&k);
  if (!known) return TL_OK; /* not a unit of this job any more: ignored */
  uint64_t u = (uint64_t)cfg * r->items.n + item;
  if (u < c->lo || u >= c->hi) return TL_OK; /* another rank's block: it restores this one */
  if (c->done[u]) return TL_OK; /* recorded twice (a unit redone after a kill): first kept */
  tl_eng_reply rep = {u, rec->text ? tl_strdup(rec->text) : NULL, rec->prompt ? tl_strdup(rec->prompt) : NULL,
                      rec->source ? tl_strdup(rec->source) : NULL, NULL};
  tl_status st = finish_unit(r, u, &rep);
  tl_eng_reply_release(&rep);
  if (st) return st;
  c->done[u] = 1;
  c->restored++;
  return TL_OK;
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
    fprintf(p->f, "\r[%s] %llu/%llu units  %.0f/s  ETA %.0fs  failures %llu%s", bar,
            (unsigned long long)p->done, (unsigned long long)p->total, rate, eta,
            (unsigned long long)p->failed, final ? "\n" : "");
  } else {
    fprintf(p->f, "tally: progress %llu/%llu units (%.1f%%), %.1f units/s, ETA %.0f s, failures %llu\n",
            (unsigned long long)p->done, (unsigned long long)p->total,
            p->total ? 100.0 * (double)p->done / (double)p->total : 100.0, rate, eta,
            (unsigned long long)p->failed);
  }
  fflush(p->f);
}

/* ---- the scheduler ---- */
enum { TAG_REQ = 101, TAG_ASSIGN = 102 };

/* One rank's current chunk: pending[a..b) submitted progressively, replies scored. */
typedef struct {
  const uint64_t *pending;
  uint64_t a, b, next_submit;
  size_t in_flight;
  uint64_t finished;   /* units finished by this rank in this attempt */
  uint64_t failed;     /* of which without an answer */
  uint64_t since_report;
} chunk_state;

/* Submits what is left of the chunk and collects ready replies (waiting at most timeout_ms). */
static tl_status chunk_step(se_run *r, chunk_state *cs, tl_journal *jn, int timeout_ms, int maxrep,
                            tl_err *err) {
  tl_engine *eng = tl_replay_engine(r->replay);
  tl_status st = TL_OK;
  while (cs->next_submit < cs->b && st == TL_OK) {
    uint64_t u = cs->pending[cs->next_submit++];
    const tl_se_cfg *c = &r->cfgs[u / r->items.n];
    tl_eng_request q = {u, r->items.items[u % r->items.n].id, c->model, c->seed, c->variant, NULL};
    st = eng->vt->submit(eng, &q);
    cs->in_flight++;
  }
  if (st) return tl_err_set(err, st, "engine: cannot submit a request");
  tl_eng_reply rep[256];
  int k = eng->vt->poll(eng, rep, maxrep < 256 ? maxrep : 256, timeout_ms);
  for (int i = 0; i < k; i++) {
    uint64_t u = rep[i].tag;
    const tl_se_cfg *c = &r->cfgs[u / r->items.n];
    if (st == TL_OK)
      st = tl_journal_add(jn, "spatialeval", c->model, tl_se_prompt_name((tl_se_prompt_kind)c->variant),
                          c->seed, r->items.items[u % r->items.n].id, &rep[i], err);
    cs->failed += rep[i].text == NULL;
    if (st == TL_OK) {
      char src[512];
      snprintf(src, sizeof src, "%s", rep[i].source ? rep[i].source : "no source");
      if ((st = finish_unit(r, u, &rep[i])) != TL_OK) /* the unit is journaled: resume retries it */
        tl_err_set(err, st, "scoring item '%s' of model '%s' (seed %d; answer from %s) failed: %s",
                   r->items.items[u % r->items.n].id, c->model, c->seed, src, tl_strerror(st));
    }
    tl_eng_reply_release(&rep[i]);
    cs->in_flight--;
    cs->finished++;
    cs->since_report++;
  }
  if (st == TL_OK && k > 0) st = tl_journal_batch_done(jn, err); /* fsync at most every 0.5 s */
  return st;
}

static int chunk_done(const chunk_state *cs) { return cs->in_flight == 0 && cs->next_submit == cs->b; }

/* Chunk size: about 8 chunks per rank (load balance at the end of the run), at least 1, at
 * most 1024 units (one request per 1024 units keeps the scheduling cost per unit small). */
static uint64_t chunk_size(uint64_t P, int nranks) {
  uint64_t c = P / ((uint64_t)nranks * 8u);
  return c < 1 ? 1 : c > 1024 ? 1024 : c;
}

/* Runs every pending unit. Collective. Returns TL_OK, or an error; *interrupted = 1 when a
 * signal stopped this rank (its finished units are journaled). */
static tl_status schedule(se_run *r, const uint64_t *pending, uint64_t P, tl_journal *jn,
                          progress *pg, MPI_Comm comm, int *interrupted, uint64_t *failed,
                          double *sched_s /* OUT: seconds this rank spent on scheduling messages */,
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
  tl_status st = TL_OK;
  *interrupted = 0;
  if (rank == 0) {
    uint64_t next = 0;
    int active = nranks - 1; /* workers not yet told to stop */
    int remote_stop = 0;
    while (st == TL_OK) {
      if (g_stop || remote_stop) { *interrupted = 1; break; }
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
        if (delta[2]) remote_stop = 1; /* a worker was signalled: stop dealing */
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
      if (chunk_done(&cs) && next < P) { /* rank 0's own next chunk */
        cs.a = cs.next_submit = next;
        cs.b = next + (P - next < C ? P - next : C);
        next = cs.b;
        (*nchunks)++;
      }
      if (!chunk_done(&cs)) {
        uint64_t f0 = cs.finished, x0 = cs.failed;
        /* with workers waiting on us, take few replies per step so requests are answered fast */
        st = chunk_step(r, &cs, jn, nranks > 1 ? 1 : 50, nranks > 1 ? 16 : 256, err);
        pg->done += cs.finished - f0;
        pg->failed += cs.failed - x0;
      } else if (active > 0) {
        /* nothing of our own left: wait for the next request */
        MPI_Status ms;
        MPI_Probe(MPI_ANY_SOURCE, TAG_REQ, comm, &ms);
      } else {
        break;
      }
      progress_show(pg, 0);
    }
    if (st != TL_OK || *interrupted) {
      /* tell every worker still asking that there is no more work */
      while (active > 0) {
        int64_t delta[3];
        MPI_Status ms;
        MPI_Recv(delta, 3, MPI_INT64_T, MPI_ANY_SOURCE, TAG_REQ, comm, &ms);
        uint64_t as[2] = {0, 0};
        MPI_Send(as, 2, MPI_UINT64_T, ms.MPI_SOURCE, TAG_ASSIGN, comm);
        active--;
      }
    }
    progress_show(pg, 1);
  } else {
    for (;;) {
      int64_t delta[3] = {(int64_t)cs.since_report, (int64_t)cs.failed, 0};
      cs.since_report = 0;
      cs.failed = 0;
      double t0 = now_s();
      MPI_Send(delta, 3, MPI_INT64_T, 0, TAG_REQ, comm);
      uint64_t as[2];
      MPI_Recv(as, 2, MPI_UINT64_T, 0, TAG_ASSIGN, comm, MPI_STATUS_IGNORE);
      *sched_s += now_s() - t0;
      if (!as[1]) break;
      cs.a = cs.next_submit = as[0];
      cs.b = as[0] + as[1];
      while (!chunk_done(&cs) && st == TL_OK && !g_stop) st = chunk_step(r, &cs, jn, 50, 256, err);
      if (st != TL_OK || g_stop) {
        if (g_stop) *interrupted = 1;
        /* keep asking until told to stop, so rank 0 is never left waiting */
        for (;;) {
          int64_t d2[3] = {(int64_t)cs.since_report, 0, g_stop ? 1 : 0};
          cs.since_report = 0;
          MPI_Send(d2, 3, MPI_INT64_T, 0, TAG_REQ, comm);
          MPI_Recv(as, 2, MPI_UINT64_T, 0, TAG_ASSIGN, comm, MPI_STATUS_IGNORE);
          if (!as[1]) break;
        }
        break;
      }
    }
  }
  tl_err e2;
  tl_journal_sync(jn, &e2); /* finished units of an interrupted chunk are kept too */
  uint64_t f = cs.failed;
  *failed = f;
  return st;
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

/* Collective. Afterwards r->rows holds exactly this rank's block, in key order. */
static tl_status redistribute(se_run *r, MPI_Comm comm, tl_err *err) {
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  const tl_job_bench *jb = r->jb;
  tl_buf *out = calloc((size_t)nranks, sizeof *out);
  int *scount = calloc((size_t)nranks, sizeof(int)), *rcount = calloc((size_t)nranks, sizeof(int));
  int *sdisp = calloc((size_t)nranks, sizeof(int)), *rdisp = calloc((size_t)nranks, sizeof(int));
  char *sbuf = NULL, *rbuf = NULL;
  tl_status st = TL_OK;
  int bad = !out || !scount || !rcount || !sdisp || !rdisp;
  for (int q = 0; out && q < nranks; q++) tl_buf_init(&out[q]);
  for (size_t i = 0; !bad && i < r->nrows; i++) {
    int q = owner_of(r->unit[i], r->U, nranks);
    if (q == rank) continue; /* our own rows move without a copy */
    if (tl_se_row_pack(&r->rows[i], r->unit[i], jb->modes, jb->n_modes, &out[q]) != TL_OK) bad = 1;
  }
  int64_t total = 0;
  for (int q = 0; !bad && q < nranks; q++) {
    if (out[q].len > (size_t)0x7fffffff) bad = 1; /* MPI counts are int */
    scount[q] = (int)out[q].len;
    sdisp[q] = (int)total;
    total += (int64_t)out[q].len;
  }
  bad |= total > 0x7fffffff;
  int anybad = 0;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
  if (anybad) {
    st = tl_err_set(err, TL_ENOMEM, "cannot pack the rows for redistribution (memory, or over 2 GiB per rank)");
    goto done;
  }
  MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm);
  int64_t rtotal = 0;
  for (int q = 0; q < nranks; q++) {
    rdisp[q] = rtotal <= 0x7fffffff ? (int)rtotal : 0;
    rtotal += rcount[q];
  }
  sbuf = malloc(total ? (size_t)total : 1);
  rbuf = rtotal <= 0x7fffffff ? malloc(rtotal ? (size_t)rtotal : 1) : NULL;
  bad = !sbuf || !rbuf; /* MPI counts are int: a block over 2 GiB cannot be received in one go */
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
  if (anybad) {
    st = tl_err_set(err, TL_ENOMEM, "cannot receive this rank's block of rows (memory, or over 2 GiB): "
                                    "use more ranks");
    goto done;
  }
  for (int q = 0; q < nranks; q++) memcpy(sbuf + sdisp[q], out[q].data, out[q].len);
  MPI_Alltoallv(sbuf, scount, sdisp, MPI_CHAR, rbuf, rcount, rdisp, MPI_CHAR, comm);
  /* our block: our own rows moved in, the others' unpacked */
  uint64_t lo = block_lo(r->U, rank, nranks), hi = block_lo(r->U, rank + 1, nranks);
  size_t nb = (size_t)(hi - lo);
  tl_se_row *blk = calloc(nb ? nb : 1, sizeof *blk);
  uint8_t *seen = calloc(nb ? nb : 1, 1);
  for (size_t i = 0; i < r->nrows; i++) {
    uint64_t u = r->unit[i];
    if (blk && seen && u >= lo && u < hi && !seen[u - lo]) {
      blk[u - lo] = r->rows[i];
      seen[u - lo] = 1;
    } else {
      tl_se_row_release(&r->rows[i]);
    }
  }
  const char *p = rbuf, *end = rbuf + rtotal;
  while (blk && seen && p < end && st == TL_OK) {
    tl_se_row row;
    uint64_t u;
    if (tl_se_row_unpack(&p, end, jb->modes, jb->n_modes, &r->rules, &row, &u) != TL_OK || u < lo || u >= hi ||
        seen[u - lo]) {
      st = tl_err_set(err, TL_EINTERNAL, "redistribution: a row arrived at the wrong rank");
      break;
    }
    row.cfg = (size_t)(u / r->items.n);
    row.item = (size_t)(u % r->items.n);
    blk[u - lo] = row;
    seen[u - lo] = 1;
  }
  for (size_t i = 0; st == TL_OK && i < nb; i++)
    if (!seen[i]) st = tl_err_set(err, TL_EINTERNAL, "redistribution: unit %llu has no row", (unsigned long long)(lo + i));
  free(r->rows);
  free(r->unit);
  r->rows = blk;
  r->nrows = r->caprows = blk ? nb : 0;
  r->unit = malloc((nb ? nb : 1) * sizeof *r->unit);
  for (size_t i = 0; r->unit && i < nb; i++) r->unit[i] = lo + i;
  if (st) {
    for (size_t i = 0; blk && i < nb; i++)
      if (seen[i]) tl_se_row_release(&blk[i]);
    memset(blk, 0, nb * sizeof *blk);
    for (size_t i = 0; blk && i < nb; i++) tl_se_row_init(&blk[i]);
  }
  free(seen);
done:
  for (int q = 0; out && q < nranks; q++) tl_buf_release(&out[q]);
  free(out);
  free(scount);
  free(rcount);
  free(sdisp);
  free(rdisp);
  free(sbuf);
  free(rbuf);
  return st;
}
static void print_summary(FILE *out, const se_run *r, tl_table *const *across, const tl_table *audit,
                          const int64_t *counts, const tl_inlog *log) {
  const tl_job_bench *jb = r->jb;
  fprintf(out, "spatialeval: %zu items x %zu model/variant/seed configs = %llu units; parsers:",
          r->items.n, r->ncfgs, (unsigned long long)r->U);
  for (int k = 0; k < jb->n_modes; k++)
    fprintf(out, " %s%s", tl_se_mode_name(jb->modes[k]), k == 0 ? " (primary)" : "");
  fprintf(out, "\n\naccuracy, mean +/- std over seeds (all questions of each task)\n");
  fprintf(out, "%-22s %-7s %-12s %5s %6s", "model", "variant", "task", "seeds", "n");
  for (int k = 0; k < jb->n_modes; k++) fprintf(out, "  %-15s", tl_se_mode_name(jb->modes[k]));
  fprintf(out, "\n");
  const tl_table *a0 = across[0];
  int cq = tl_table_col(a0, "qid");
  for (size_t row = 0; row < a0->nrows; row++) {
    if (a0->cols[cq].v.i[row] != -1) continue;
    fprintf(out, "%-22s %-7s %-12s %5lld %6lld", a0->cols[0].v.s[row], a0->cols[1].v.s[row],
            a0->cols[2].v.s[row], (long long)a0->cols[tl_table_col(a0, "n_seeds")].v.i[row],
            (long long)a0->cols[tl_table_col(a0, "n")].v.i[row]);
    for (int k = 0; k < jb->n_modes; k++) {
      const tl_table *a = across[k]; /* same groups, same order in every mode */
      fprintf(out, "  %.3f +/- %.3f  ", a->cols[tl_table_col(a, "mean")].v.f[row],
              a->cols[tl_table_col(a, "std")].v.f[row]);
    }
    fprintf(out, "\n");
  }
  if (jb->n_modes > 1) {
    fprintf(out, "\nparser audit (all models, variants and seeds): accuracy per parser; units each pair scores differently\n");
    fprintf(out, "%-12s %6s", "task", "n");
    for (int k = 0; k < jb->n_modes; k++) fprintf(out, " %8s", tl_se_mode_name(jb->modes[k]));
    for (int x = 0; x < jb->n_modes; x++)
      for (int y = x + 1; y < jb->n_modes; y++) {
        char h[64];
        snprintf(h, sizeof h, "%s|%s", tl_se_mode_name(jb->modes[x]), tl_se_mode_name(jb->modes[y]));
        fprintf(out, " %14s", h);
      }
    fprintf(out, "\n");
    for (size_t row = 0; row < audit->nrows; row++) {
      fprintf(out, "%-12s %6lld", audit->cols[0].v.s[row], (long long)audit->cols[1].v.i[row]);
      int c = 2;
      for (int k = 0; k < jb->n_modes; k++) fprintf(out, " %8.3f", audit->cols[c++].v.f[row]);
      for (int x = 0; x < jb->n_modes; x++)
        for (int y = x + 1; y < jb->n_modes; y++) {
          char h[64];
          snprintf(h, sizeof h, "%lld (%lld/%lld)", (long long)audit->cols[c].v.i[row],
                   (long long)audit->cols[c + 1].v.i[row], (long long)audit->cols[c + 2].v.i[row]);
          fprintf(out, " %14s", h);
          c += 3;
        }
      fprintf(out, "\n");
    }
    fprintf(out, "(d (a/b): d units disagree; a correct only under the first parser, b only under the second)\n");
  }
  /* Parse statuses of the primary parser. */
  int64_t st[TL_PS__COUNT];
  tl_se_status_totals(counts, r->ncfgs, jb->n_modes, 0, st);
  fprintf(out, "\n%s parse statuses:", tl_se_mode_name(jb->modes[0]));
  for (int k = 0; k < TL_PS__COUNT; k++)
    if (st[k]) fprintf(out, " %s=%lld", tl_pstatus_name((tl_pstatus)k), (long long)st[k]);
  fprintf(out, "\n");
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

/* Every file the job reads, with what it is for messages: the job file, items, answers, study
 * tables, in that order. *in and *what are malloc'd (what[i] holds in[i].what's text when it is
 * not a literal); returns the count, or -1 when out of memory. */
static int job_inputs(const tl_run_opts *o, const tl_job *job, tl_path_role **in, char (**what)[160]) {
  int n = 1;
  for (int b = 0; b < job->n_benches; b++) n += job->benches[b].n_items + job->benches[b].n_answers;
  n += job->n_studies;
  *in = calloc((size_t)n, sizeof **in);
  *what = calloc((size_t)n, sizeof **what);
  if (!*in || !*what) {
    free(*in);
    free(*what);
    *in = NULL;
    *what = NULL;
    return -1;
  }
  int k = 0;
  (*in)[k++] = (tl_path_role){o->job_path, "the job file"};
  for (int b = 0; b < job->n_benches; b++) {
    const tl_job_bench *jb = &job->benches[b];
    for (int i = 0; i < jb->n_items; i++) (*in)[k++] = (tl_path_role){jb->items[i], "an items file"};
    for (int i = 0; i < jb->n_answers; i++) (*in)[k++] = (tl_path_role){jb->answers[i].path, "an answers file"};
  }
  for (int i = 0; i < job->n_studies; i++) {
    snprintf((*what)[k], sizeof (*what)[k], "the input table of study '%s'", job->studies[i].name);
    (*in)[k] = (tl_path_role){job->studies[i].input, (*what)[k]};
    k++;
  }
  return k;
}

/* Rank 0, before anything is opened for writing: the output's place, output vs every input
 * (the job file, items, answers, study tables) and standard output vs every input, then the
 * output lock; a `--resume` of a finished output (no journal, the file exists) sets *nothing.
 * Returns an exit code; on TL_EXIT_OK the lock is held (released by the caller). */
static int prepare_output(const tl_run_opts *o, const tl_job *job, const char *output, tl_out_lock *lock,
                          int *nothing) {
  tl_err err = {{0}};
  tl_path_role *in;
  char (*what)[160];
  int k = job_inputs(o, job, &in, &what);
  if (k < 0) {
    fprintf(o->log, "tally: out of memory\n");
    return TL_EXIT_FAIL;
  }
  int rc = TL_EXIT_OK;
  tl_status st = tl_out_check_place(output, &err);
  if (!st) st = tl_out_check_inputs(output, "the output", in, k, &err);
  if (!st) st = tl_stdout_check_inputs(in, k, &err);
  if (st) {
    fprintf(o->log, "tally: %s; nothing was run\n", err.msg);
    rc = st == TL_EUSAGE ? TL_EXIT_USAGE : TL_EXIT_FAIL;
  }
  free(in);
  free(what);
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
                      "--resume to score the job again\n", output, jdir);
      *nothing = 1;
    }
    free(jdir);
  }
  return TL_EXIT_OK;
}

/* Collective. Every rank agrees on the code: the highest (worst) code of any rank. */
static int agree(int rc, MPI_Comm comm) {
  int all = rc;
  MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, comm);
  return all;
}


/* Collective: the benchmarks of the job, distributed; tables written through w (collective);
 * rank 0 prints the summary. */
static int run_benchmarks(const tl_run_opts *o, const tl_job *job, tl_writer *w, const char *output,
                          MPI_Comm comm, uint64_t *stats /* OUT [8]: units, resumed, engine calls,
                                                             load, score, gather+write (ms), chunks,
                                                             scheduling messages (us, all ranks) */) {
  double t_start = now_s(), t_scored = 0;
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  int rc = TL_EXIT_OK;
  tl_err err = {{0}};
  tl_inlog log;
  se_run r;
  memset(&r, 0, sizeof r);
  tl_strmap_init(&r.rules);
  tl_table *per_seed[TL_SE__NMODES] = {0}, *across[TL_SE__NMODES] = {0};
  tl_table *items = NULL, *audit = NULL;
  int64_t *counts = NULL, *total = NULL;
  uint8_t *done = NULL;
  uint64_t *pending = NULL;
  char *jdir = tl_journal_dir(output);
  char jhash[17];
  tl_journal_job_hash(job->json, jhash);
  tl_journal jn;
  memset(&jn, 0, sizeof jn);
  resume_ctx rc_ctx;
  memset(&rc_ctx, 0, sizeof rc_ctx);
  tl_strmap_init(&rc_ctx.cfg_of);
  if (agree(tl_inlog_init(&log, rank == 0 ? o->log : NULL, o->strict_input) != TL_OK, comm)) {
    free(jdir);
    tl_inlog_release(&log);
    tl_strmap_release(&rc_ctx.cfg_of);
    tl_strmap_release(&r.rules);
    return TL_EXIT_FAIL;
  }

  /* 1. inputs and units, on every rank */
  tl_status st = se_setup(&r, job, &log, &err);
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
  {
    uint64_t mine[2] = {r.U, r.ncfgs}, lo[2], hi[2];
    MPI_Allreduce(mine, lo, 2, MPI_UINT64_T, MPI_MIN, comm);
    MPI_Allreduce(mine, hi, 2, MPI_UINT64_T, MPI_MAX, comm);
    if (lo[0] != hi[0] || lo[1] != hi[1]) {
      if (rank == 0) fprintf(o->log, "tally: the ranks read different inputs (files changed during start-up?)\n");
      rc = TL_EXIT_FAIL;
      goto done;
    }
  }
  /* 2. journals of earlier attempts. Every rank reads them and rebuilds the rows of its own key
   * block (so no rank holds, or sends, the whole restored run); the done-bitmaps are OR-ed. */
  done = calloc(r.U ? r.U : 1, 1);
  if (!done) rc = TL_EXIT_FAIL;
  rc = agree(rc, comm);
  if (rc) goto done;
  if (rank == 0 && !o->resume && tl_journal_exists(jdir)) {
    fprintf(o->log, "tally: '%s' holds the journal of an earlier, unfinished run of this output: "
                    "run with --resume to continue it, or remove the folder to start over\n", jdir);
    rc = TL_EXIT_USAGE;
  }
  rc = agree(rc, comm);
  if (rc) goto done;
  if (o->resume) {
    rc_ctx.r = &r;
    rc_ctx.done = done;
    rc_ctx.lo = block_lo(r.U, rank, nranks);
    rc_ctx.hi = block_lo(r.U, rank + 1, nranks);
    for (size_t c = 0; c < r.ncfgs; c++) {
      tl_buf k;
      tl_buf_init(&k);
      tl_buf_printf(&k, "%s\x1f%d\x1f%d", r.cfgs[c].model, r.cfgs[c].variant, r.cfgs[c].seed);
      tl_strmap_put(&rc_ctx.cfg_of, k.data, c, NULL, NULL);
      tl_buf_release(&k);
    }
    long nf = 0, nrec = 0, nskip = 0;
    st = tl_journal_read_all(jdir, jhash, on_journal_rec, &rc_ctx, &nf, &nrec, &nskip, &err);
    if (st) {
      if (rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
      rc = st == TL_EJOB ? TL_EXIT_USAGE : TL_EXIT_FAIL;
    }
    rc = agree(rc, comm);
    if (rc) goto done;
    for (uint64_t off = 0; off < r.U; off += (1u << 30)) {
      uint64_t k = r.U - off < (1u << 30) ? r.U - off : (1u << 30);
      MPI_Allreduce(MPI_IN_PLACE, done + off, (int)k, MPI_UINT8_T, MPI_BOR, comm);
    }
    MPI_Allreduce(MPI_IN_PLACE, &rc_ctx.restored, 1, MPI_UINT64_T, MPI_SUM, comm);
    if (rank == 0 && !o->quiet)
      fprintf(o->log, "tally: resume: %llu of %llu units already done (%ld journal file%s, %ld line%s skipped)\n",
              (unsigned long long)rc_ctx.restored, (unsigned long long)r.U, nf, nf == 1 ? "" : "s",
              nskip, nskip == 1 ? "" : "s");
  }
  /* 3. this attempt's journal and the pending units */
  {
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
    rc = agree(rc, comm);
    if (rc) goto done;
    if (tl_journal_open(&jn, jdir, attempt, rank, jhash, &err) != TL_OK) {
      fprintf(o->log, "tally: rank %d: %s\n", rank, err.msg);
      rc = TL_EXIT_FAIL;
    }
    rc = agree(rc, comm);
    if (rc) goto done;
  }
  uint64_t P = 0;
  pending = malloc((r.U ? r.U : 1) * sizeof *pending);
  if (agree(pending == NULL, comm)) {
    if (rank == 0) fprintf(o->log, "tally: out of memory for the unit list\n");
    rc = TL_EXIT_FAIL;
    goto done;
  }
  for (uint64_t u = 0; u < r.U; u++)
    if (!done[u]) pending[P++] = u;
  progress pg = {o->log, isatty(fileno(o->log)), o->quiet || rank != 0, r.U, 0, 0, 0, now_s(), now_s()};
  if (rank == 0) pg.resumed = pg.done = r.U - P;
  /* 4. score */
  double t_loaded = now_s();
  int interrupted = 0;
  uint64_t failed = 0, nchunks = 0;
  double sched_s = 0;
  st = schedule(&r, pending, P, &jn, &pg, comm, &interrupted, &failed, &sched_s, &nchunks, &err);
  {
    double all_s = 0;
    MPI_Reduce(&sched_s, &all_s, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    if (rank == 0) {
      stats[6] = nchunks;
      stats[7] = (uint64_t)(1e6 * all_s);
    }
  }
  if (st) {
    fprintf(o->log, "tally: rank %d: %s (finished units are in the journal; fix it and run with --resume)\n",
            rank, err.msg);
    rc = TL_EXIT_FAIL;
  }
  if (interrupted) rc = rc ? rc : TL_EXIT_INTERRUPTED;
  {
    int sig = (int)g_stop, maxsig = 0;
    MPI_Allreduce(&sig, &maxsig, 1, MPI_INT, MPI_MAX, comm);
    rc = agree(rc, comm);
    if (rc == TL_EXIT_INTERRUPTED && rank == 0)
      fprintf(o->log, "tally: interrupted by signal %d: finished units are in '%s'; run again with --resume\n",
              maxsig, jdir);
  }
  /* Scoring is over: from here on a signal ends the process at once (the journal is complete,
   * so --resume redoes only the writing and the studies, with no engine call). */
  restore_signals();
  if (rc) goto done;
  t_scored = now_s();
  /* engine calls made in this attempt, summed over ranks (a unit is never asked twice) */
  {
    uint64_t calls = tl_replay_served(r.replay), all = 0;
    MPI_Reduce(&calls, &all, 1, MPI_UINT64_T, MPI_SUM, 0, comm);
    MPI_Bcast(&all, 1, MPI_UINT64_T, 0, comm);
    uint64_t resumed = rc_ctx.restored; /* already summed over ranks */
    stats[0] = r.U;
    stats[1] = resumed;
    stats[2] = all;
  }
  /* 5. rows to their owners, counts reduced */
  st = redistribute(&r, comm, &err);
  if (st) {
    fprintf(o->log, "tally: rank %d: %s\n", rank, err.msg);
    rc = TL_EXIT_FAIL;
  }
  rc = agree(rc, comm);
  if (rc) goto done;
  const tl_job_bench *jb = r.jb;
  size_t clen = tl_se_counts_len(r.ncfgs, jb->n_modes);
  counts = calloc(clen ? clen : 1, sizeof *counts);
  total = calloc(clen ? clen : 1, sizeof *total);
  if (agree(!counts || !total, comm)) { /* before the collective reduce below */
    if (rank == 0) fprintf(o->log, "tally: out of memory for the counts\n");
    rc = TL_EXIT_FAIL;
    goto done;
  }
  tl_se_counts_add(counts, &r.items, r.ncfgs, r.rows, r.nrows, jb->modes, jb->n_modes);
  for (size_t off = 0; off < clen; off += (1u << 28)) {
    size_t k = clen - off < (1u << 28) ? clen - off : (1u << 28);
    MPI_Reduce(counts + off, total + off, (int)k, MPI_INT64_T, MPI_SUM, 0, comm);
  }
  /* 6. tables: the item table block by block (collective), the rest from rank 0 */
  items = tl_se_items_table(&r.items, r.cfgs, r.rows, r.nrows, jb->modes, jb->n_modes);
  int ok = items != NULL;
  if (rank == 0) {
    audit = tl_se_audit_table(total, r.ncfgs, jb->modes, jb->n_modes);
    ok = ok && audit;
    for (int k = 0; k < jb->n_modes && ok; k++)
      ok = tl_se_metric_tables(total, r.cfgs, r.ncfgs, jb->modes, jb->n_modes, k, &per_seed[k], &across[k]) == TL_OK;
  }
  if (agree(!ok, comm)) {
    if (rank == 0) fprintf(o->log, "tally: out of memory building result tables\n");
    rc = TL_EXIT_FAIL;
    goto done;
  }
  char parsers[64] = "";
  for (int k = 0; k < jb->n_modes; k++) {
    if (k) strcat(parsers, ",");
    strcat(parsers, tl_se_mode_name(jb->modes[k]));
  }
  int64_t nbad = log.total;
  MPI_Bcast(&nbad, 1, MPI_INT64_T, 0, comm);
  uint64_t lo = block_lo(r.U, rank, nranks);
  st = w->vt->attr_str(w, "parsers", parsers, &err);
  if (!st) st = w->vt->attr_i64(w, "n_bad_input", nbad, &err);
  if (!st) st = w->vt->write_slice(w, items, lo, r.U, &err);
  test_pause(rank, "write", o->log);
  for (int k = 0; k < jb->n_modes && !st; k++) {
    st = w->vt->write_table(w, rank == 0 ? per_seed[k] : NULL, &err);
    if (!st) st = w->vt->write_table(w, rank == 0 ? across[k] : NULL, &err);
  }
  if (!st) st = w->vt->write_table(w, rank == 0 ? audit : NULL, &err);
  if (!st) st = w->vt->write_table(w, rank == 0 ? log.table : NULL, &err);
  if (st) {
    if (rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
    rc = TL_EXIT_FAIL;
    goto done;
  }
  if (rank == 0) print_summary(o->out, &r, across, audit, total, &log);
  stats[3] = (uint64_t)(1e3 * (t_loaded - t_start));
  stats[4] = (uint64_t)(1e3 * (t_scored - t_loaded));
  stats[5] = (uint64_t)(1e3 * (now_s() - t_scored));
done:
  tl_journal_close(&jn);
  for (int k = 0; k < TL_SE__NMODES; k++) {
    tl_table_free(per_seed[k]);
    tl_table_free(across[k]);
  }
  tl_table_free(items);
  tl_table_free(audit);
  free(counts);
  free(total);
  free(done);
  free(pending);
  free(jdir);
  tl_strmap_release(&rc_ctx.cfg_of);
  se_run_release(&r);
  tl_inlog_release(&log);
  return agree(rc, comm);
}
/* Collective. Runs one study of the job with the engine of `tally correlate`. */
static int run_study(const tl_run_opts *o, const tl_job_study *js, MPI_Comm comm, tl_writer *w) {
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
  if (rank == 0) fprintf(o->out, "\nstudy '%s' (%s):\n", js->name, js->input);
  char label[300];
  snprintf(label, sizeof label, "tally: study '%s'", js->name);
  co.label = label;
  char prefix[300];
  snprintf(prefix, sizeof prefix, "/stats/%s", js->name);
  return tl_corr_study(&co, comm, w, prefix);
}


/* Collective: opens the output (parallel HDF5) and writes the run's root attributes. */
static int open_output(const tl_run_opts *o, const tl_job *job, const char *output, MPI_Comm comm,
                       tl_writer **wout) {
  int nranks, rank;
  MPI_Comm_size(comm, &nranks);
  MPI_Comm_rank(comm, &rank);
  tl_err err = {{0}};
  /* Provenance: rank 0 hashes every input file (SHA-256); the JSON goes to every rank, because
   * attributes are written collectively with the same value. */
  tl_buf sha;
  tl_buf_init(&sha);
  int64_t len = -1;
  if (rank == 0) {
    tl_path_role *in;
    char (*what)[160];
    int k = job_inputs(o, job, &in, &what);
    const char **paths = k > 0 ? calloc((size_t)k, sizeof *paths) : NULL;
    if (paths) {
      for (int i = 0; i < k; i++) paths[i] = in[i].path;
      if (tl_sha256_files_json(paths, k, &sha, &err) == TL_OK) len = (int64_t)sha.len;
      else fprintf(o->log, "tally: %s\n", err.msg);
    } else {
      fprintf(o->log, "tally: out of memory\n");
    }
    free(paths);
    free(in);
    free(what);
  }
  MPI_Bcast(&len, 1, MPI_INT64_T, 0, comm);
  if (len < 0 || len > INT_MAX) {
    tl_buf_release(&sha);
    return TL_EXIT_FAIL;
  }
  if (rank != 0) {
    tl_buf_reset(&sha);
    for (int64_t i = 0; i < len; i++) tl_buf_append(&sha, " ", 1);
  }
  MPI_Bcast(sha.data, (int)len, MPI_CHAR, 0, comm);
  tl_writer *w = tl_h5_parallel_open(output, comm, &err);
  if (!w) {
    if (rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
    tl_buf_release(&sha);
    return TL_EXIT_FAIL;
  }
  unsigned maj, min, rel;
  H5get_libversion(&maj, &min, &rel);
  char h5v[32];
  snprintf(h5v, sizeof h5v, "%u.%u.%u", maj, min, rel);
  tl_status st = w->vt->attr_str(w, "job", job->json, &err);
  if (!st) st = w->vt->attr_str(w, "job_name", job->name, &err);
  if (!st) st = w->vt->attr_str(w, "tally_version", TALLY_VERSION, &err);
  if (!st) st = w->vt->attr_str(w, "hdf5_version", h5v, &err);
  if (!st) st = w->vt->attr_str(w, "engine", job->engine, &err);
  if (!st) st = w->vt->attr_i64(w, "n_ranks", nranks, &err);
  if (!st) st = w->vt->attr_str(w, "input_sha256", sha.data, &err);
  tl_buf_release(&sha);
  if (st) {
    fprintf(o->log, "tally: %s\n", err.msg);
    w->vt->abort(w);
    return TL_EXIT_FAIL;
  }
  *wout = w;
  return TL_EXIT_OK;
}

int tl_run_job(const tl_run_opts *o, MPI_Comm comm) {
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
  if (rank == 0 && tl_job_load(o->job_path, &job, &probs, &nprob) != TL_OK) {
    fprintf(o->log, "tally: invalid job '%s' (%d problem%s); nothing was run:\n%s", o->job_path,
            nprob, nprob == 1 ? "" : "s", probs.data);
    rc = TL_EXIT_USAGE;
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
  if (rc == TL_EXIT_OK && rank != 0) {
    /* the job was valid on rank 0: the other ranks read the same file */
    tl_buf_reset(&probs);
    if (tl_job_load(o->job_path, &job, &probs, &nprob) != TL_OK) {
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
  const char *output = o->out_override ? o->out_override : job.output;
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
  uint64_t bstats[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (rc == TL_EXIT_OK) rc = open_output(o, &job, output, comm, &w);
  rc = agree(rc, comm);
  if (rc == TL_EXIT_OK && job.n_benches > 0) rc = run_benchmarks(o, &job, w, output, comm, bstats);
  /* Studies: collective, resamples split over every rank. */
  for (int i = 0; i < job.n_studies && rc == TL_EXIT_OK; i++) rc = run_study(o, &job.studies[i], comm, w);
  if (w) {
    tl_err err = {{0}};
    tl_status st = TL_OK;
    if (rc == TL_EXIT_OK && job.n_benches > 0) {
      st = w->vt->attr_i64(w, "units", (int64_t)bstats[0], &err);
      if (!st) st = w->vt->attr_i64(w, "units_resumed", (int64_t)bstats[1], &err);
      if (!st) st = w->vt->attr_i64(w, "engine_calls", (int64_t)bstats[2], &err);
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
              (unsigned long long)bstats[0], (unsigned long long)bstats[1], (unsigned long long)bstats[2],
              nranks, nranks == 1 ? "" : "s", 1e-3 * (double)bstats[3], 1e-3 * (double)bstats[4],
              1e-3 * (double)bstats[5], (unsigned long long)bstats[6],
              bstats[2] ? (double)bstats[7] / (double)bstats[2] : 0.0);
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
