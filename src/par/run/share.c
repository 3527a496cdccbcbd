/* share.c - one load of the replay files shared by the ranks (run.h run_share_replay; the steps
 * are replay.h's "one load shared by several processes"). Each rank reads and indexes its share
 * of each file's bytes and discovers the cfgs of its lines; the ranks then exchange the share's
 * line counts (so that every line has its true number), their index entries (MPI_Allgatherv of
 * TL_REPLAY_ENTRY_BYTES each: every rank sorts them and drops the later lines of a key), the cfgs
 * they found with where they were first seen (so that every rank's r->found is in the order of
 * one rank reading every line), and their input problems (reported by every rank into its log
 * in file:line order, echoed by rank 0 only). Every step ends in tl_agree. */
#include "run.h"

/* Where a cfg of found[b] was first seen on this rank: source f, line (within this rank's share;
 * shares are in rank order, so (f, rank, line) is file order). */
typedef struct {
  uint32_t f;
  long line;
} cfg_pos;

typedef struct {
  bench_run *r;
  const tl_replay_source *src;
  int nsrc, cur;     /* cur: the source being read (found from the path key_fn is given) */
  cfg_pos **pos;     /* [nb][found[b].ncfgs] */
  size_t *cap;       /* [nb] */
  int nomem;
} share_ctx;

/* run_replay_key, noting where each cfg it adds was seen. */
static int share_key(void *ctx, const tl_unit_key *k, const char *path, long line) {
  share_ctx *c = ctx;
  const int b = run_bench_index(c->r, k->bench);
  const size_t before = b >= 0 ? c->r->found[b].ncfgs : 0;
  const int rc = run_replay_key(c->r, k, path, line);
  if (b < 0 || c->r->found[b].ncfgs == before) return rc;
  for (int f = c->cur; f < c->nsrc; f++) /* sources are read in order */
    if (strcmp(c->src[f].path, path) == 0) {
      c->cur = f;
      break;
    }
  const size_t n = c->r->found[b].ncfgs;
  if (n > c->cap[b]) {
    size_t cap = 2 * n;
    cfg_pos *p = realloc(c->pos[b], cap * sizeof *p);
    if (!p) return c->nomem = 1;
    c->pos[b] = p;
    c->cap[b] = cap;
  }
  for (size_t i = before; i < n; i++) c->pos[b][i] = (cfg_pos){(uint32_t)c->cur, line};
  return rc;
}

/* Collective: every rank's n elements of `size` bytes (mine), in rank order, into *all (malloc'd,
 * the caller frees it), with len[nranks] the elements of each. Agrees before the gather. */
static tl_status allgather_elems(const void *mine, size_t n, size_t size, int nranks, void **all, uint64_t *len,
                                 MPI_Comm comm, tl_err *err) {
  *all = NULL;
  uint64_t me = n, total = 0;
  tl_status st = TL_MPI(err, MPI_Allgather(&me, 1, MPI_UINT64_T, len, 1, MPI_UINT64_T, comm));
  if (st) return st;
  int *cnt = malloc((size_t)nranks * sizeof *cnt), *dsp = malloc((size_t)nranks * sizeof *dsp);
  for (int j = 0; cnt && dsp && j < nranks; j++) {
    if (len[j] > INT_MAX || total > INT_MAX) st = tl_err_set(err, TL_EINTERNAL, "the replay index is too large to share");
    cnt[j] = (int)len[j];
    dsp[j] = (int)total;
    total += len[j];
  }
  if (!st && (!cnt || !dsp || !(*all = malloc(total * size + 1)))) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  MPI_Datatype t = MPI_DATATYPE_NULL;
  if (!st) st = TL_MPI(err, MPI_Type_contiguous((int)size, MPI_BYTE, &t));
  if (!st) st = TL_MPI(err, MPI_Type_commit(&t));
  st = tl_agree(st, err, comm); /* (a rank without the memory must not leave the others in the gather) */
  if (!st) st = TL_MPI(err, MPI_Allgatherv(mine, (int)n, t, *all, cnt, dsp, t, comm));
  if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
  free(cnt);
  free(dsp);
  if (st) {
    free(*all);
    *all = NULL;
  }
  return st;
}

/* A cfg as exchanged: where it was seen, its value and its model's name. */
typedef struct {
  uint32_t b, f;
  int64_t line;
  int32_t variant, seed;
  uint32_t rank, mlen;
  const char *model;
} cfg_rec;

static int cmp_cfg(const void *a, const void *b) { /* benchmark, then file order */
  const cfg_rec *x = a, *y = b;
  if (x->b != y->b) return (x->b > y->b) - (x->b < y->b);
  if (x->f != y->f) return (x->f > y->f) - (x->f < y->f);
  if (x->rank != y->rank) return (x->rank > y->rank) - (x->rank < y->rank);
  return (x->line > y->line) - (x->line < y->line);
}

/* This rank's cfgs, serialized: per cfg uint32 b, f; int64 line; int32 variant, seed; uint32
 * model bytes; the model (no NUL). */
static tl_status cfgs_out(const share_ctx *c, tl_buf *out) {
  const bench_run *r = c->r;
  for (size_t b = 0; b < r->nb; b++)
    for (size_t i = 0; i < r->found[b].ncfgs; i++) {
      const tl_cfg *g = &r->found[b].cfgs[i];
      const uint32_t bf[2] = {(uint32_t)b, c->pos[b][i].f}, ml = (uint32_t)strlen(g->model);
      const int64_t line = c->pos[b][i].line;
      const int32_t vs[2] = {g->variant, g->seed};
      if (tl_buf_append(out, (const char *)bf, sizeof bf) || tl_buf_append(out, (const char *)&line, sizeof line) ||
          tl_buf_append(out, (const char *)vs, sizeof vs) || tl_buf_append(out, (const char *)&ml, sizeof ml) ||
          tl_buf_append(out, g->model, ml))
        return TL_ENOMEM;
    }
  return TL_OK;
}

/* Every rank's cfgs (blobs, len[j] bytes each) parsed and sorted into *out. */
static tl_status cfgs_parse(const char *blobs, const uint64_t *len, int nranks, size_t nb, cfg_rec **out, size_t *nout) {
  size_t n = 0, cap = 16;
  cfg_rec *v = malloc(cap * sizeof *v);
  if (!v) return TL_ENOMEM;
  const char *p = blobs;
  for (int j = 0; j < nranks; j++)
    for (const char *end = p + len[j]; p < end;) {
      cfg_rec c;
      const size_t head = 2 * sizeof(uint32_t) + sizeof(int64_t) + 2 * sizeof(int32_t) + sizeof(uint32_t);
      if ((size_t)(end - p) < head) return free(v), TL_EINTERNAL;
      memcpy(&c.b, p, 4);
      memcpy(&c.f, p + 4, 4);
      memcpy(&c.line, p + 8, 8);
      memcpy(&c.variant, p + 16, 4);
      memcpy(&c.seed, p + 20, 4);
      memcpy(&c.mlen, p + 24, 4);
      p += head;
      if ((size_t)(end - p) < c.mlen || c.b >= nb) return free(v), TL_EINTERNAL;
      c.model = p;
      c.rank = (uint32_t)j;
      p += c.mlen;
      if (n == cap) {
        cfg_rec *q = realloc(v, 2 * cap * sizeof *q);
        if (!q) return free(v), TL_ENOMEM;
        v = q;
        cap *= 2;
      }
      v[n++] = c;
    }
  qsort(v, n, sizeof *v, cmp_cfg);
  *out = v;
  *nout = n;
  return TL_OK;
}

/* r->found becomes the union of every rank's, in the order of first sight in the files (the
 * order run_replay_key gives them on one rank). */
static tl_status cfgs_rebuild(bench_run *r, const cfg_rec *v, size_t n) {
  for (size_t b = 0; b < r->nb; b++) {
    struct found *fd = &r->found[b];
    tl_cfgs_free(fd->cfgs, fd->ncfgs);
    fd->cfgs = NULL;
    fd->ncfgs = fd->cap = 0;
    tl_strmap_release(&fd->seen);
    tl_strmap_release(&fd->models);
    tl_strmap_init(&fd->seen);
    tl_strmap_init(&fd->models);
    free(fd->last_model);
    fd->last_model = NULL;
  }
  tl_buf m;
  tl_buf_init(&m);
  tl_status st = TL_OK;
  for (size_t i = 0; i < n && !st; i++) {
    struct found *fd = &r->found[v[i].b];
    tl_buf_reset(&m);
    if (!(st = tl_buf_append(&m, v[i].model, v[i].mlen)) && !(st = tl_strmap_put(&fd->models, m.data, 0, NULL, NULL)))
      st = tl_cfgs_add(&fd->cfgs, &fd->ncfgs, &fd->cap, &fd->seen, m.data, v[i].variant, v[i].seed);
  }
  tl_buf_release(&m);
  return st;
}

/* Collective: the cfgs every rank found, unioned on every rank. */
static tl_status share_cfgs(share_ctx *c, MPI_Comm comm, tl_err *err) {
  bench_run *r = c->r;
  tl_buf mine;
  tl_buf_init(&mine);
  tl_status st = cfgs_out(c, &mine) ? tl_err_set(err, TL_ENOMEM, "out of memory") : TL_OK;
  if ((st = tl_agree(st, err, comm))) return tl_buf_release(&mine), st;
  uint64_t *len = calloc((size_t)r->nranks, sizeof *len);
  void *all = NULL;
  st = len ? allgather_elems(mine.data, mine.len, 1, r->nranks, &all, len, comm, err)
           : tl_err_set(err, TL_ENOMEM, "out of memory");
  tl_buf_release(&mine);
  cfg_rec *v = NULL;
  size_t n = 0;
  if (!st && (st = cfgs_parse(all, len, r->nranks, r->nb, &v, &n)))
    tl_err_set(err, st, st == TL_ENOMEM ? "out of memory" : "internal error: a rank's cfgs do not parse");
  if (!st && (st = cfgs_rebuild(r, v, n))) tl_err_set(err, st, "out of memory");
  free(v);
  free(all);
  free(len);
  return tl_agree(st, err, comm);
}

/* Collective: the line counts of every rank's shares; the entries. */
static tl_status share_index(tl_replay_share *sh, int nsrc, int nranks, MPI_Comm comm, tl_err *err) {
  int64_t *mine = calloc(2 * (size_t)nsrc + 1, sizeof *mine), *all = calloc((2 * (size_t)nsrc + 1) * (size_t)nranks, sizeof *all);
  tl_status st = mine && all ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory");
  if ((st = tl_agree(st, err, comm))) return free(mine), free(all), st;
  tl_replay_share_counts(sh, mine);
  st = TL_MPI(err, MPI_Allgather(mine, 2 * nsrc, MPI_INT64_T, all, 2 * nsrc, MPI_INT64_T, comm));
  if (!st) st = tl_replay_share_place(sh, all, err);
  free(mine);
  free(all);
  if ((st = tl_agree(st, err, comm))) return st;
  const void *e;
  size_t n;
  tl_replay_share_entries(sh, &e, &n);
  uint64_t *len = calloc((size_t)nranks, sizeof *len);
  void *every = NULL;
  st = len ? allgather_elems(e, n, TL_REPLAY_ENTRY_BYTES, nranks, &every, len, comm, err)
           : tl_err_set(err, TL_ENOMEM, "out of memory");
  size_t total = 0;
  for (int j = 0; !st && j < nranks; j++) total += (size_t)len[j];
  free(len);
  if (!st) st = tl_replay_share_index(sh, every, total, err); /* (takes every) */
  else free(every);
  if (!st && run_test_fail("share-index", tl_comm_rank(comm)))
    st = tl_err_set(err, TL_EIO, "the replay index cannot be built (TALLY_TEST_FAIL)");
  return tl_agree(st, err, comm);
}

/* Collective: every rank's problems, reported into log by every rank. */
static tl_status share_report(tl_replay_share *sh, int nranks, tl_inlog *log, MPI_Comm comm, tl_err *err) {
  tl_buf mine;
  tl_buf_init(&mine);
  tl_status st = tl_replay_share_events(sh, &mine) ? tl_err_set(err, TL_ENOMEM, "out of memory") : TL_OK;
  if ((st = tl_agree(st, err, comm))) return tl_buf_release(&mine), st;
  uint64_t *len = calloc((size_t)nranks, sizeof *len);
  void *all = NULL;
  st = len ? allgather_elems(mine.data, mine.len, 1, nranks, &all, len, comm, err)
           : tl_err_set(err, TL_ENOMEM, "out of memory");
  tl_buf_release(&mine);
  if (!st) st = tl_replay_share_report(sh, all, len, log, err);
  if (!st && run_test_fail("share-report", tl_comm_rank(comm)))
    st = tl_err_set(err, TL_EIO, "the replay files' problems cannot be reported (TALLY_TEST_FAIL)");
  free(all);
  free(len);
  return tl_agree(st, err, comm);
}

tl_status run_share_replay(bench_run *r, const tl_replay_source *src, int n, size_t max_line, tl_inlog *log,
                           MPI_Comm comm, tl_replay **out, tl_err *err) {
  *out = NULL;
  share_ctx c = {r, src, n, 0, calloc(r->nb + 1, sizeof *c.pos), calloc(r->nb + 1, sizeof *c.cap), 0};
  tl_inlog rec;
  const int rec_ok = tl_inlog_init(&rec, NULL, 0) == TL_OK;
  tl_replay_share *sh = NULL;
  int answers = 0; /* only the answers (stage 0) add cfgs */
  for (int i = 0; i < n; i++) answers |= src[i].stage == 0;
  tl_status st = rec_ok && c.pos && c.cap ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory");
  for (size_t b = 0; !st && b < r->nb; b++) /* cfgs an earlier role found (none: answers load first) */
    if (r->found[b].ncfgs) {
      const size_t nf = r->found[b].ncfgs;
      if (!(c.pos[b] = calloc(c.cap[b] = nf, sizeof **c.pos))) st = tl_err_set(err, TL_ENOMEM, "out of memory");
      for (size_t i = 0; !st && i < nf; i++) c.pos[b][i] = (cfg_pos){0, (long)i - (long)nf}; /* before any line */
    }
  if (!st) {
    tl_inlog *saved = r->log;
    r->log = &rec; /* run_replay_key reports there */
    st = tl_replay_share_read(src, n, max_line, r->rank, r->nranks, &rec, share_key, &c, run_replay_sub, r, &sh, err);
    r->log = saved;
    if (!st && c.nomem) st = tl_err_set(err, TL_ENOMEM, "out of memory");
    if (!st && run_test_fail("share-read", r->rank)) st = tl_err_set(err, TL_EIO, "its share of the replay files cannot be read (TALLY_TEST_FAIL)");
  }
  if (!(st = tl_agree(st, err, comm)) && !(st = share_index(sh, n, r->nranks, comm, err)) &&
      !(st = answers ? share_cfgs(&c, comm, err) : TL_OK) && !(st = share_report(sh, r->nranks, log, comm, err))) {
    *out = tl_replay_share_finish(sh);
    sh = NULL;
  }
  tl_replay_share_free(sh);
  if (rec_ok) tl_inlog_release(&rec);
  for (size_t b = 0; c.pos && b < r->nb; b++) free(c.pos[b]);
  free(c.pos);
  free(c.cap);
  return st;
}
