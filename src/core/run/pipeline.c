/* pipeline.c - drives units through their stages (tally/run.h). Pure core: requests go out
 * through the submit callback, replies come in through tl_pipe_reply, finished rows leave
 * through the done callback. The rows in flight are kept in an open-addressing hash table
 * keyed by global unit index (linear probing, backward-shift deletion). */
#include <stdlib.h>
#include <string.h>

#include "tally/run.h"

struct tl_pipe {
  const tl_run_bench *rbs;
  size_t nb;
  tl_pipe_submit_fn submit;
  tl_pipe_done_fn done;
  void *ctx;
  uint64_t *keys;     /* [cap] unit + 1; 0 = empty slot */
  tl_row **vals;      /* [cap] owned rows */
  size_t cap, n;      /* cap is a power of two, n <= cap / 2 */
  tl_buf arena;       /* the strings of the request being built */
  uint64_t calls[TL_MAX_STAGES], skips[TL_MAX_STAGES];
};

static size_t slot_of(uint64_t k, size_t cap) {
  k ^= k >> 33; /* a 64-bit mix (the finalizer of MurmurHash3) */
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return (size_t)k & (cap - 1);
}

static tl_status map_grow(tl_pipe *p) {
  size_t cap = p->cap ? p->cap * 2 : 256;
  uint64_t *k = calloc(cap, sizeof *k);
  tl_row **v = calloc(cap, sizeof *v);
  if (!k || !v) {
    free(k);
    free(v);
    return TL_ENOMEM;
  }
  for (size_t i = 0; i < p->cap; i++)
    if (p->keys[i]) {
      size_t j = slot_of(p->keys[i], cap);
      while (k[j]) j = (j + 1) & (cap - 1);
      k[j] = p->keys[i];
      v[j] = p->vals[i];
    }
  free(p->keys);
  free(p->vals);
  p->keys = k;
  p->vals = v;
  p->cap = cap;
  return TL_OK;
}

static tl_status map_put(tl_pipe *p, uint64_t g, tl_row *row) {
  if ((p->n + 1) * 2 > p->cap && map_grow(p)) return TL_ENOMEM;
  uint64_t key = g + 1;
  size_t j = slot_of(key, p->cap);
  while (p->keys[j] && p->keys[j] != key) j = (j + 1) & (p->cap - 1);
  if (p->keys[j]) return TL_EINTERNAL; /* the unit is in flight already */
  p->keys[j] = key;
  p->vals[j] = row;
  p->n++;
  return TL_OK;
}

/* Removes unit g and returns its row (NULL when it is not in flight). */
static tl_row *map_take(tl_pipe *p, uint64_t g) {
  if (!p->cap) return NULL;
  uint64_t key = g + 1;
  size_t j = slot_of(key, p->cap);
  while (p->keys[j] && p->keys[j] != key) j = (j + 1) & (p->cap - 1);
  if (!p->keys[j]) return NULL;
  tl_row *row = p->vals[j];
  p->keys[j] = 0;
  p->vals[j] = NULL;
  p->n--;
  /* backward shift: move later entries of the probe run into the hole when that is nearer home */
  size_t hole = j;
  for (size_t i = (j + 1) & (p->cap - 1); p->keys[i]; i = (i + 1) & (p->cap - 1)) {
    size_t home = slot_of(p->keys[i], p->cap);
    /* the entry at i may move to hole when home is not in (hole, i] (cyclically) */
    int between = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
    if (between) continue;
    p->keys[hole] = p->keys[i];
    p->vals[hole] = p->vals[i];
    p->keys[i] = 0;
    p->vals[i] = NULL;
    hole = i;
  }
  return row;
}

tl_pipe *tl_pipe_new(const tl_run_bench *rbs, size_t nb, tl_pipe_submit_fn submit, tl_pipe_done_fn done,
                     void *ctx) {
  tl_pipe *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->rbs = rbs;
  p->nb = nb;
  p->submit = submit;
  p->done = done;
  p->ctx = ctx;
  tl_buf_init(&p->arena);
  return p;
}

void tl_pipe_free(tl_pipe *p) {
  if (!p) return;
  for (size_t i = 0; i < p->cap; i++)
    if (p->keys[i]) {
      tl_row_release(p->vals[i]);
      free(p->vals[i]);
    }
  free(p->keys);
  free(p->vals);
  tl_buf_release(&p->arena);
  free(p);
}

/* Submits the next stage of row (unit g) that needs a request, or scores the finished row and
 * hands it over. Takes the row (heap) in every case. */
static tl_status advance(tl_pipe *p, uint64_t g, tl_row *row, tl_err *err) {
  size_t bi = tl_rb_find(p->rbs, p->nb, g);
  const tl_run_bench *rb = &p->rbs[bi];
  const tl_bench_vt *vt = rb->vt;
  tl_unit u = tl_rb_unit(rb, g - rb->base);
  tl_status st = TL_OK;
  while (row->done < rb->nstages) {
    int s = row->done;
    if (s > 0 && row->error[s - 1]) { /* the engine gave up on the stage before: nothing to go on */
      p->skips[s]++;
      row->done++;
      continue;
    }
    tl_bench_req q;
    memset(&q, 0, sizeof q);
    q.temperature = -1;
    tl_buf_reset(&p->arena);
    st = vt->request(rb->b, rb->cfgs, &u, s, row, &p->arena, &q, err);
    if (st) goto fail;
    if (q.skip) {
      p->skips[s]++;
      row->done++;
      continue;
    }
    const tl_cfg *c = &rb->cfgs[u.cfg];
    tl_eng_request rq;
    memset(&rq, 0, sizeof rq);
    rq.tag = g * TL_MAX_STAGES + (uint64_t)s;
    rq.key.bench = vt->name;
    rq.key.id = vt->item_id(rb->b, u.item);
    rq.key.model = c->model;
    rq.key.variant = vt->variants[c->variant];
    rq.key.seed = c->seed;
    rq.key.sub = u.sub;
    rq.key.stage = s;
    rq.msgs = q.msgs;
    rq.nmsg = q.nmsg;
    rq.images = q.images;
    rq.nimages = q.nimages;
    rq.temperature = q.temperature;
    rq.max_tokens = q.max_tokens;
    rq.seed = q.seed_set ? q.seed : c->seed;
    if ((st = map_put(p, g, row))) {
      tl_err_set(err, st, "pipeline: unit %llu started twice", (unsigned long long)g);
      goto fail;
    }
    p->calls[s]++;
    st = p->submit(p->ctx, q.role, &rq);
    if (st) { /* the row stays in flight and is dropped by tl_pipe_free */
      if (!err || !err->msg[0]) tl_err_set(err, st, "engine (%s): cannot submit a request", tl_role_name(q.role));
      return st;
    }
    return TL_OK;
  }
  st = tl_rb_score(rb, &u, row, err);
  if (!st) st = p->done(p->ctx, bi, g, row);
fail:
  tl_row_release(row);
  free(row);
  return st;
}

tl_status tl_pipe_start(tl_pipe *p, uint64_t g, tl_row *restored, tl_err *err) {
  tl_row *row = malloc(sizeof *row);
  if (!row) {
    if (restored) tl_row_release(restored);
    return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  if (restored) {
    *row = *restored;
    tl_row_init(restored);
  } else {
    tl_row_init(row);
  }
  return advance(p, g, row, err);
}

tl_status tl_pipe_reply(tl_pipe *p, tl_eng_reply *rep, tl_err *err) {
  uint64_t g = tl_tag_unit(rep->tag);
  int s = tl_tag_stage(rep->tag);
  tl_row *row = map_take(p, g);
  if (!row || row->done != s) {
    if (row) {
      tl_row_release(row);
      free(row);
    }
    return tl_err_set(err, TL_EINTERNAL, "pipeline: a reply for unit %llu stage %d that was not asked",
                      (unsigned long long)g, s);
  }
  row->text[s] = rep->text;
  row->prompt[s] = rep->prompt;
  row->source[s] = rep->source;
  row->meta[s] = rep->meta;
  row->ev[s] = rep->ev;
  rep->ev = NULL;
  if (rep->failed) {
    row->error[s] = rep->error ? rep->error : tl_strdup("the engine gave up");
    rep->error = NULL;
    if (!row->error[s]) return tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  rep->text = rep->prompt = rep->source = rep->meta = NULL;
  row->done++;
  return advance(p, g, row, err);
}

size_t tl_pipe_in_flight(const tl_pipe *p) { return p->n; }
uint64_t tl_pipe_calls(const tl_pipe *p, int stage) { return p->calls[stage]; }
uint64_t tl_pipe_skips(const tl_pipe *p, int stage) { return p->skips[stage]; }
