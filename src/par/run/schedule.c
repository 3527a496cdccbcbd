/* schedule.c - scoring: the pipeline callbacks, the engines' polling and journaling, chunks dealt on demand, progress. */
#include "run.h"

/* Pipeline callbacks: requests to the role's engine; finished rows kept by this rank. */
tl_status run_on_submit(void *ctx, tl_role role, const tl_eng_request *rq) {
  bench_run *r = ctx;
  if (r->merging) { /* a stage no input recorded, and not one the module skips */
    fprintf(r->msg, "tally: rank %d: cannot merge: no input records stage %d of %s unit (item '%s', model '%s', "
                    "variant '%s', seed %d, sub %d); was its run finished?\n", r->rank, rq->key.stage,
            rq->key.bench, rq->key.id, rq->key.model, rq->key.variant, rq->key.seed, rq->key.sub);
    return TL_EJOB;
  }
  tl_engine *e = r->en.eng[role];
  if (!e) return TL_EINTERNAL; /* the job loader requires judgments for a replay judge */
  return e->vt->submit(e, rq);
}

/* A finished, scored unit: added to the accumulators, then kept as its journal refs only. */
enum { MAX_REASONS = 64 };
/* Counts an engine failure's reason: its text without " (gave up after N attempts)". */
static tl_status note_reason(bench_run *r, int role, const char *why) {
  if (!r->tal.reasons_init) {
    for (int k = 0; k < TL_ROLE__N; k++) tl_strmap_init(&r->tal.reasons[k]);
    r->tal.reasons_init = 1;
  }
  const char *g = strstr(why, " (gave up after ");
  char *key = g ? tl_strndup(why, (size_t)(g - why)) : tl_strdup(why);
  if (!key) return TL_ENOMEM;
  if (r->tal.reasons[role].n >= MAX_REASONS && !tl_strmap_get(&r->tal.reasons[role], key, NULL)) {
    free(key);
    key = tl_strdup("(other reasons)");
    if (!key) return TL_ENOMEM;
  }
  tl_status st = tl_strmap_add(&r->tal.reasons[role], key, 1, NULL);
  free(key);
  return st;
}

static tl_status note_fate(bench_run *r, size_t b, const tl_unit *u, const tl_row *row) {
  const tl_run_bench *rb = &r->rbs[b];
  if (!r->tal.fate && !(r->tal.fate = calloc(r->nb, sizeof *r->tal.fate))) return TL_ENOMEM;
  if (!r->tal.fate[b] && !(r->tal.fate[b] = calloc(rb->ncfgs * FATE_N + 1, sizeof **r->tal.fate))) return TL_ENOMEM;
  uint64_t *f = r->tal.fate[b] + (size_t)u->cfg * FATE_N;
  int judged = 0, jerr = 0;
  for (int s = 1; s < rb->nstages; s++) judged |= row->text[s] != NULL, jerr |= row->error[s] != NULL;
  f[FATE_UNITS]++;
  f[FATE_ANSWERED] += row->text[0] != NULL;
  f[FATE_ENGINE_ERROR] += row->error[0] != NULL;
  f[FATE_JUDGED] += judged;
  f[FATE_JUDGE_ERROR] += jerr;
  for (int s = 0; s < rb->nstages; s++) {
    int role = s ? TL_ROLE_JUDGE : TL_ROLE_MODEL;
    if (row->error[s] && !r->tal.first_error[role] && !(r->tal.first_error[role] = tl_strdup(row->error[s]))) return TL_ENOMEM;
    if (row->error[s] && note_reason(r, role, row->error[s])) return TL_ENOMEM;
  }
  return TL_OK;
}

tl_status run_on_unit_done(void *ctx, size_t b, uint64_t g, tl_row *row) {
  bench_run *r = ctx;
  const tl_run_bench *rb = &r->rbs[b];
  r->tal.finished++;
  r->tal.failed += row->text[0] == NULL;
  tl_unit u = tl_rb_unit(rb, g - rb->base);
  if (note_fate(r, b, &u, row)) return TL_ENOMEM;
  run_audit_note(r, b, g, &u, row);
  rb->vt->acc_add(rb->b, rb->cfgs, rb->ncfgs, &u, row, r->tal.acc[b]);
  if (r->sp.rowtab[b]) tl_table_clear(r->sp.rowtab[b]);
  tl_table *t = run_items_table(r, b, &u, row, 1, r->sp.rowtab[b]); /* the module's columns and the evidence */
  if (!t) return TL_ENOMEM;
  r->sp.rowtab[b] = t;
  uint64_t spilled = TL_REF_NONE;
  tl_status st = TL_OK;
  tl_reply_ref refv[TL_MAX_STAGES];
  const tl_reply_ref *refs[TL_MAX_STAGES] = {NULL};
  for (int s = 0; s < rb->nstages && s < TL_MAX_STAGES; s++) { /* the stages' texts that lie in answers files */
    const char *text = NULL;
    if (run_pref_take(&r->sp, g, s, &text, &refv[s]) && text && text == row->text[s]) refs[s] = &refv[s];
  }
  if (r->sp.spill) { /* its row, and its share of the table's string bytes and longest values for its owner */
    uint64_t *sb = r->sp.strb[b] + (size_t)tl_block_owner(g - rb->base, rb->U, r->nranks) * (size_t)r->sp.nstr[b] * 2;
    st = run_spill_row(t, 0, row, refs, &r->sp.spill_buf, sb);
    if (!st) st = run_spill_put(r, &r->sp.spill_buf, &spilled);
  }
  tl_table_clear(t); /* it borrows the row's texts, which are freed next */
  if (st) return st;
  return run_push_row(&r->sp.held[b], g - rb->base, spilled);
}

void run_progress_show(progress *p, int final) {
  if (p->quiet) return;
  double t = run_now_s();
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
    if (r->en.http[k]) cap += tl_openai_capacity(r->en.http[k]);
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

/* 1 when a reply whose text lies in answers file `path` (tl_reply_ref.path) may be referenced
 * rather than copied: the file outlives the run. The answers tally run converted from another
 * harness's files (tally/import.h) live in a temporary folder that is made afresh for each
 * attempt ("<TMPDIR>/tally-import-XXXXXX", the folder of the job copy it runs, cmd_run.c) and
 * removed at the end: their replies are copied, or every resume would find them stale. */
static int ref_kept(bench_run *r, const char *path) {
  if (path == r->sp.last_path) return r->sp.last_kept;
  if (!r->sp.nocopy_dir) {
    const char *jp = r->job ? r->job->path : NULL; /* ".../tally-import-XXXXXX/<job file>" */
    const char *slash = jp ? strrchr(jp, '/') : NULL;
    char *jd = slash ? tl_strndup(jp, (size_t)(slash - jp)) : NULL;
    const char *base = jd ? strrchr(jd, '/') : NULL;
    base = base ? base + 1 : jd;
    r->sp.nocopy_dir = "";
    if (base && strncmp(base, "tally-import-", 13) == 0) r->sp.nocopy_dir = r->sp.nocopy_own = jd;
    else free(jd);
  }
  const size_t n = strlen(r->sp.nocopy_dir);
  r->sp.last_path = path;
  r->sp.last_kept = !n || strncmp(path, r->sp.nocopy_dir, n) != 0 || path[n] != '/';
  return r->sp.last_kept;
}

/* Polls every engine once and feeds the replies to the pipeline, journaling each first.
 * Returns the number of replies (waiting at most timeout_ms for the first of one engine). */
tl_status run_poll_engines(bench_run *r, int timeout_ms, int maxrep, int *nrep, tl_err *err) {
  tl_status st = TL_OK;
  *nrep = 0;
  for (int role = 0; role < TL_ROLE__N; role++) {
    tl_engine *eng = r->en.eng[role];
    if (!eng || !eng->vt->in_flight(eng)) continue;
    tl_eng_reply rep[256];
    int k = eng->vt->poll(eng, rep, maxrep < 256 ? maxrep : 256, timeout_ms);
    for (int i = 0; i < k; i++) {
      uint64_t g = tl_tag_unit(rep[i].tag);
      int s = tl_tag_stage(rep[i].tag);
      tl_unit_key key = run_unit_key(r, g, s);
      if (rep[i].ref.src && (r->dry || !rep[i].text || !ref_kept(r, rep[i].ref.path)))
        memset(&rep[i].ref, 0, sizeof rep[i].ref); /* copied */
      if (st == TL_OK && !r->dry) st = tl_journal_add(r->jn, &key, &rep[i], NULL, err);
      if (st == TL_OK && rep[i].ref.src && run_pref_note(&r->sp, g, s, rep[i].text, &rep[i].ref))
        st = tl_err_set(err, TL_ENOMEM, "out of memory");
      if (st == TL_OK) {
        char src[512]; /* for the message: the pipeline takes the reply's strings */
        const char *sp = rep[i].source ? rep[i].source : "no source";
        const size_t sn = strnlen(sp, sizeof src - 1);
        memcpy(src, sp, sn);
        src[sn] = 0;
        tl_err e2 = {{0}};
        if ((st = tl_pipe_reply(r->pipe, &rep[i], &e2)) != TL_OK) /* journaled: resume retries it */
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
  uint64_t f0 = r->tal.finished, x0 = r->tal.failed;
  const uint64_t sb = start_bound(r);
  while (cs->next_submit < cs->b && st == TL_OK && tl_pipe_in_flight(r->pipe) < sb)
    st = tl_pipe_start(r->pipe, cs->pending[cs->next_submit++], NULL, err);
  if (st) return st;
  int k = 0;
  if (cs->more && cs->next_submit == cs->b && tl_pipe_in_flight(r->pipe) < room_bound(r, cs->C))
    timeout_ms = 0; /* room for the next chunk: the caller takes it before waiting */
  if (tl_pipe_in_flight(r->pipe)) st = run_poll_engines(r, timeout_ms, maxrep, &k, err);
  cs->since_report += r->tal.finished - f0;
  cs->failed_report += r->tal.failed - x0;
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


/* The scheduler's state on one rank. */
typedef struct {
  bench_run *r;
  const uint64_t *pending;
  uint64_t P, C;      /* pending units; the chunk size */
  progress *pg;       /* rank 0's progress (the workers' reports add to it) */
  MPI_Comm comm;
  int nranks;
  double sched_s;     /* seconds spent on scheduling messages */
  uint64_t nchunks;   /* chunks dealt */
  chunk_state cs;     /* this rank's current chunk */
} sched;

/* Rank 0: answers one worker's request (delta: its finished and failed units since its last
 * report, and REQ_*), dealing it the next chunk, or none when there is no more work or the run
 * stops. *next: the next pending unit to deal; *active: workers not yet told to stop. */
static tl_status answer_request(sched *s, int src, const int64_t delta[3], uint64_t *next, int *active,
                                int *remote_stop, tl_err *err) {
  s->pg->done += (uint64_t)delta[0];
  s->pg->failed += (uint64_t)delta[1];
  if (delta[2] && !*remote_stop) *remote_stop = (int)delta[2]; /* signalled or failed: stop dealing */
  uint64_t as[2] = {*next, 0};
  if (!g_stop && !*remote_stop && *next < s->P) {
    as[1] = s->P - *next < s->C ? s->P - *next : s->C;
    *next += as[1];
  }
  tl_status st = TL_MPI(err, MPI_Send(as, 2, MPI_UINT64_T, src, TAG_ASSIGN, s->comm));
  if (as[1]) s->nchunks++;
  else (*active)--;
  return st;
}

/* Rank 0: deals the pending units in chunks on demand, working on its own chunks between the
 * workers' requests, then tells every worker still asking that there is no more work (also
 * after a failure of its own: no worker is left waiting for an answer). */
static tl_status deal(sched *s, int *interrupted, tl_err *err) {
  bench_run *r = s->r;
  chunk_state *cs = &s->cs;
  uint64_t next = 0;
  int active = s->nranks - 1, remote_stop = 0;
  tl_status st = TL_OK;
  while (st == TL_OK) {
    if (g_stop || remote_stop) {
      *interrupted = remote_stop != REQ_FAILED;
      break;
    }
    /* answer every waiting request */
    int flag = 1;
    while (active > 0 && !st) {
      MPI_Status ms;
      if ((st = TL_MPI(err, MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQ, s->comm, &flag, &ms))) || !flag) break;
      int64_t delta[3];
      double t0 = run_now_s();
      st = TL_MPI(err, MPI_Recv(delta, 3, MPI_INT64_T, ms.MPI_SOURCE, TAG_REQ, s->comm, MPI_STATUS_IGNORE));
      if (!st) st = answer_request(s, ms.MPI_SOURCE, delta, &next, &active, &remote_stop, err);
      s->sched_s += run_now_s() - t0;
    }
    if (st) break;
    if (chunk_room(r, cs, s->C) && next < s->P && !remote_stop) { /* rank 0's own next chunk */
      cs->a = cs->next_submit = next;
      cs->b = next + (s->P - next < s->C ? s->P - next : s->C);
      next = cs->b;
      s->nchunks++;
    }
    if (!chunk_done(r, cs)) {
      uint64_t f0 = cs->since_report, x0 = cs->failed_report;
      cs->more = next < s->P && !remote_stop;
      /* with workers waiting on us, take few replies per step so requests are answered fast */
      st = chunk_step(r, cs, s->nranks > 1 ? 1 : 50, s->nranks > 1 ? 16 : 256, err);
      s->pg->done += cs->since_report - f0;
      s->pg->failed += cs->failed_report - x0;
    } else if (active > 0 && !remote_stop) { /* nothing of our own left: wait for the next request */
      MPI_Status ms;
      st = tl_probe_idle(MPI_ANY_SOURCE, TAG_REQ, s->comm, &ms, err);
    } else {
      break;
    }
    run_progress_show(s->pg, 0);
  }
  /* tell every worker still asking that there is no more work */
  tl_err e2 = {{0}};
  tl_status s2 = TL_OK;
  while (active > 0 && !s2) {
    int64_t delta[3];
    MPI_Status ms;
    s2 = tl_probe_idle(MPI_ANY_SOURCE, TAG_REQ, s->comm, &ms, &e2);
    if (!s2) s2 = TL_MPI(&e2, MPI_Recv(delta, 3, MPI_INT64_T, ms.MPI_SOURCE, TAG_REQ, s->comm, &ms));
    s->pg->done += s2 ? 0 : (uint64_t)delta[0];
    uint64_t as[2] = {0, 0};
    if (!s2) s2 = TL_MPI(&e2, MPI_Send(as, 2, MPI_UINT64_T, ms.MPI_SOURCE, TAG_ASSIGN, s->comm));
    active--;
  }
  if (!st && s2) st = s2, *err = e2;
  return st;
}

/* A worker: asks rank 0 for chunks (reporting its finished units) and works on each until there
 * is room for the next; after a failure or a signal it says so in its next request and takes no
 * more work; then finishes what is in flight. */
static tl_status work(sched *s, int *interrupted, tl_err *err) {
  bench_run *r = s->r;
  chunk_state *cs = &s->cs;
  tl_status st = TL_OK, mpi = TL_OK;
  for (;;) {
    int flag = g_stop ? REQ_SIGNALLED : st ? REQ_FAILED : REQ_OK;
    int64_t delta[3] = {(int64_t)cs->since_report, (int64_t)cs->failed_report, flag};
    cs->since_report = cs->failed_report = 0;
    double t0 = run_now_s();
    uint64_t as[2] = {0, 0};
    tl_err e2 = {{0}};
    mpi = TL_MPI(&e2, MPI_Send(delta, 3, MPI_INT64_T, 0, TAG_REQ, s->comm));
    MPI_Request rq;
    if (!mpi) mpi = TL_MPI(&e2, MPI_Irecv(as, 2, MPI_UINT64_T, 0, TAG_ASSIGN, s->comm, &rq));
    if (!mpi) mpi = tl_wait_idle(&rq, MPI_STATUS_IGNORE, &e2); /* rank 0 answers between its own steps */
    s->sched_s += run_now_s() - t0;
    if (mpi) {
      if (!st) st = mpi, *err = e2;
      break;
    }
    if (!as[1]) break;
    if (flag) continue; /* told to stop only by the next answer: take no more work */
    cs->a = cs->next_submit = as[0];
    cs->b = as[0] + as[1];
    cs->more = 1;
    while (!chunk_room(r, cs, s->C) && st == TL_OK && !g_stop) st = chunk_step(r, cs, 50, 256, err);
  }
  /* no more work: finish what is in flight */
  cs->more = 0;
  while (!chunk_done(r, cs) && st == TL_OK && !g_stop) st = chunk_step(r, cs, 50, 256, err);
  if (g_stop) *interrupted = 1;
  return st;
}

/* Runs every pending unit (and finishes the partly restored units this rank started).
 * Collective. Returns TL_OK, or an error; *interrupted = 1 when a signal stopped this rank (its
 * finished stages are journaled). A worker that fails tells rank 0, which stops dealing: the
 * job stops rather than the failed rank taking (and dropping) the rest of the queue. */
tl_status run_schedule(bench_run *r, const uint64_t *pending, uint64_t P, progress *pg, MPI_Comm comm,
                       int *interrupted, double *sched_s /* OUT: seconds this rank spent on scheduling messages */,
                       uint64_t *nchunks, tl_err *err) {
  sched s;
  memset(&s, 0, sizeof s);
  s.r = r, s.pending = pending, s.P = P, s.pg = pg, s.comm = comm, s.nranks = r->nranks;
  s.C = tl_chunk_size(P, r->nranks);
  s.cs.pending = pending;
  s.cs.C = s.C;
  *interrupted = 0;
  tl_status st = r->rank == 0 ? deal(&s, interrupted, err) : work(&s, interrupted, err);
  tl_err e2;
  tl_journal_sync(r->jn, &e2); /* finished stages of an interrupted chunk are kept too */
  run_pref_release(&r->sp); /* (the references of stages whose units did not finish) */
  tl_status s3 = r->sp.spill ? run_spill_end(r) : TL_OK; /* every row written before the tables are */
  if (!st && s3) st = tl_err_set(err, s3, "cannot write '%s': %s", r->sp.rows_dir, strerror(errno));
  *sched_s = s.sched_s;
  *nchunks = s.nchunks;
  return st;
}

/* Finishes the partly restored units this rank started (their next stage is in flight). */
tl_status run_drain_restored(bench_run *r, tl_err *err) {
  tl_status st = TL_OK;
  while (st == TL_OK && tl_pipe_in_flight(r->pipe) && !g_stop) {
    int k;
    st = run_poll_engines(r, 50, 256, &k, err);
  }
  return st;
}
