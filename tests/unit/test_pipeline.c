/* test_pipeline.c - the pipeline that drives units through their stages (include/tally/run.h,
 * src/core/run/pipeline.c), with a fake engine (the submit callback records each request; the
 * test answers them through tl_pipe_reply, in any order) and the two-stage test module
 * src/core/bench/test_judged (stage 0 asks the model, stage 1 the judge; the judge stage is
 * skipped when there is no answer):
 *  - stage transitions, table-driven: a unit's replies (text, none, engine gave up with or
 *    without a reason) at each stage -> which stages were asked or skipped, the row handed to
 *    `done` and its scoring (ok, no_rating, missing, no_judgment, engine_error);
 *  - the requests: tag = g * TL_MAX_STAGES + stage, the unit key, the role, the messages, the
 *    seed; the reply's strings taken into the row, the caller's ref kept;
 *  - restored rows (tl_pipe_start with row->done > 0): the stages done are not asked again;
 *  - errors: a reply nobody asked for, a reply for the wrong stage, a unit started twice, a
 *    submit that fails (the row stays in flight and tl_pipe_free drops it), a `done` that fails;
 *  - two benchmarks and 18,006 units answered in a shuffled order, 2,040 at most in flight (the
 *    in-flight map grows, and deletes in every order near its highest load): each unit
 *    finishes once, in its own benchmark, with its own reply.
 * Leaks and double frees show under the sanitizer build (LSan). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <unistd.h>

#include "testutil.h"
#include "tally/run.h"
#include "test_judged.h"

static const tl_bench_vt *const VT = &tl_bench_test_judged;

/* ---- the module: items written to a temp folder, loaded ---- */
typedef struct {
  char dir[64];
  char path[2][128];
  tl_bench *b[2];
  tl_inlog log;
  tl_run_bench rb[2];
  int nb;
} world;

/* Bench k of the world: the items file `content`, the cfgs (m1, seed 0) and (m2, seed 5). */
static void world_bench(world *w, const char *content, int ncfgs) {
  int k = w->nb++;
  char tmp[sizeof w->path[0]]; /* not straight into w: the folder's name is in w too */
  snprintf(tmp, sizeof tmp, "%s/items%d.jsonl", w->dir, k);
  memcpy(w->path[k], tmp, sizeof tmp);
  FILE *f = fopen(w->path[k], "wb");
  assert_non_null(f);
  fputs(content, f);
  assert_int_equal(fclose(f), 0);
  char *paths[1] = {w->path[k]};
  w->b[k] = tl_test_judged_open_paths(paths, 1);
  assert_non_null(w->b[k]);
  tl_err err;
  err.msg[0] = 0;
  if (VT->load(w->b[k], 0, &w->log, &err) != TL_OK) fail_msg("load: %s", err.msg);
  tl_run_bench *rb = &w->rb[k];
  memset(rb, 0, sizeof *rb);
  rb->vt = VT;
  rb->b = w->b[k];
  size_t cap = 0;
  tl_strmap seen;
  tl_strmap_init(&seen);
  static const char *const MODELS[] = {"m2", "m1", "m3"};
  static const int SEEDS[] = {5, 0, 9};
  for (int c = 0; c < ncfgs; c++)
    assert_int_equal(tl_cfgs_add(&rb->cfgs, &rb->ncfgs, &cap, &seen, MODELS[c], 0, SEEDS[c]), TL_OK);
  tl_strmap_release(&seen);
  tl_cfgs_sort(rb->cfgs, rb->ncfgs);
  assert_int_equal(tl_rb_units(rb), TL_OK);
  rb->base = k ? w->rb[k - 1].base + w->rb[k - 1].U : 0;
}

static void world_init(world *w) {
  memset(w, 0, sizeof *w);
  snprintf(w->dir, sizeof w->dir, "/tmp/tally-pipe-XXXXXX");
  assert_non_null(mkdtemp(w->dir));
  assert_int_equal(tl_inlog_init(&w->log, NULL, 0), TL_OK);
}

static void world_release(world *w) {
  for (int k = 0; k < w->nb; k++) {
    tl_rb_release(&w->rb[k]);
    VT->free(w->b[k]);
    unlink(w->path[k]);
  }
  tl_inlog_release(&w->log);
  rmdir(w->dir);
}

/* Two items sorted: "a" (1 turn), "b" (2 turns): S = 3; cfgs m1 (seed 0), m2 (seed 5): U = 6.
 * g = cfg * 3 + sub_off[item] + sub: g 0 = (m1, a, 0), 1 = (m1, b, 0), 2 = (m1, b, 1), 3.. m2. */
static const char ITEMS[] =
    "{\"id\":\"b\",\"question\":\"Qb\",\"turns\":2}\n"
    "{\"id\":\"a\",\"question\":\"Qa\",\"turns\":1}\n";

/* ---- the fake engine and the done callback ---- */
typedef struct {
  uint64_t tag;
  tl_role role;
  char bench[32], id[32], model[32], variant[32];
  int seed, key_seed, stage;
  uint32_t sub;
  int nmsg;
  char last_msg[512]; /* the last message's content */
  char first_role[16];
} sent_req;

typedef struct {
  size_t bench;
  uint64_t g;
  tl_pstatus status;
  char rule[32];
  int64_t value;
  int correct;
  char text0[64], error0[64];
  int has_text0, has_error0;
  uint8_t done;
} done_rec;

typedef struct {
  sent_req *sent;
  size_t nsent, capsent;
  done_rec *done;
  size_t ndone, capdone;
  tl_status submit_st; /* what submit returns */
  tl_status done_st;   /* what done returns */
} fake;

static tl_status fk_submit(void *ctx, tl_role role, const tl_eng_request *rq) {
  fake *f = ctx;
  if (f->submit_st) return f->submit_st;
  if (f->nsent == f->capsent) {
    f->capsent = f->capsent ? f->capsent * 2 : 64;
    f->sent = realloc(f->sent, f->capsent * sizeof *f->sent);
    assert_non_null(f->sent);
  }
  sent_req *s = &f->sent[f->nsent++];
  memset(s, 0, sizeof *s);
  s->tag = rq->tag;
  s->role = role;
  snprintf(s->bench, sizeof s->bench, "%s", rq->key.bench);
  snprintf(s->id, sizeof s->id, "%s", rq->key.id);
  snprintf(s->model, sizeof s->model, "%s", rq->key.model);
  snprintf(s->variant, sizeof s->variant, "%s", rq->key.variant);
  s->seed = rq->seed;
  s->key_seed = rq->key.seed;
  s->stage = rq->key.stage;
  s->sub = rq->key.sub;
  s->nmsg = rq->nmsg;
  if (rq->nmsg > 0) {
    snprintf(s->last_msg, sizeof s->last_msg, "%s", rq->msgs[rq->nmsg - 1].content);
    snprintf(s->first_role, sizeof s->first_role, "%s", rq->msgs[0].role);
  }
  return TL_OK;
}

static tl_status fk_done(void *ctx, size_t bench, uint64_t g, tl_row *row) {
  fake *f = ctx;
  if (f->done_st) return f->done_st;
  if (f->ndone == f->capdone) {
    f->capdone = f->capdone ? f->capdone * 2 : 64;
    f->done = realloc(f->done, f->capdone * sizeof *f->done);
    assert_non_null(f->done);
  }
  done_rec *d = &f->done[f->ndone++];
  memset(d, 0, sizeof *d);
  d->bench = bench;
  d->g = g;
  d->status = row->res[0].status;
  snprintf(d->rule, sizeof d->rule, "%s", row->res[0].rule);
  d->value = row->res[0].value;
  d->correct = row->res[0].correct;
  d->has_text0 = row->text[0] != NULL;
  if (row->text[0]) snprintf(d->text0, sizeof d->text0, "%s", row->text[0]);
  d->has_error0 = row->error[0] != NULL;
  if (row->error[0]) snprintf(d->error0, sizeof d->error0, "%s", row->error[0]);
  d->done = row->done;
  return TL_OK;
}

static void fake_release(fake *f) {
  free(f->sent);
  free(f->done);
  memset(f, 0, sizeof *f);
}

/* Answers the request with tag `tag`: text (NULL: no reply), failed with error (NULL: none). */
static tl_status reply(tl_pipe *p, uint64_t tag, const char *text, int failed, const char *error,
                       uint64_t ref, tl_err *err) {
  tl_eng_reply rep;
  memset(&rep, 0, sizeof rep);
  rep.tag = tag;
  rep.text = text ? tl_strdup(text) : NULL;
  rep.source = tl_strdup("fake:1");
  rep.failed = failed;
  rep.error = error ? tl_strdup(error) : NULL;
  err->msg[0] = 0;
  (void)ref; /* (rows keep no journal reference) */
  tl_status st = tl_pipe_reply(p, &rep, err);
  if (st == TL_OK) { /* taken */
    assert_null(rep.text);
    assert_null(rep.source);
    if (failed) assert_null(rep.error);
  }
  tl_eng_reply_release(&rep);
  return st;
}

/* ---- stage transitions, table-driven ---- */
typedef struct {
  const char *what;
  const char *t0; int f0; const char *e0;  /* stage 0's reply */
  const char *t1; int f1; const char *e1;  /* stage 1's reply, when it is asked */
  int judge_asked;                          /* 1: stage 1 submitted; 0: skipped */
  tl_pstatus status;
  const char *rule;
  int64_t value;
  int correct;
  const char *error0;                       /* row->error[0], NULL: none */
} transition;

static const transition TRANSITIONS[] = {
    {"answered and judged", "an answer", 0, NULL, "Good. Rating: [[7]]", 0, NULL, 1, TL_PS_OK, "last_rating", 7, 1, NULL},
    {"a low rating", "an answer", 0, NULL, "Rating: [[3]]", 0, NULL, 1, TL_PS_OK, "last_rating", 3, 0, NULL},
    {"the judge gave no rating", "an answer", 0, NULL, "no verdict", 0, NULL, 1, TL_PS_NO_ANSWER, "no_rating", 0, 0, NULL},
    {"a rating out of range", "an answer", 0, NULL, "Rating: [[11]]", 0, NULL, 1, TL_PS_OUT_OF_RANGE, "rating_range", 0, 0, NULL},
    {"the judge replied nothing", "an answer", 0, NULL, NULL, 0, NULL, 1, TL_PS_MISSING, "no_judgment", 0, 0, NULL},
    {"no answer: nothing to judge", NULL, 0, NULL, NULL, 0, NULL, 0, TL_PS_MISSING, "", 0, 0, NULL},
    {"the engine gave up on the answer", NULL, 1, "HTTP 500 x3", NULL, 0, NULL, 0, TL_PS_ENGINE_ERROR, "engine_error", 0, 0, "HTTP 500 x3"},
    {"it gave up and said nothing", NULL, 1, NULL, NULL, 0, NULL, 0, TL_PS_ENGINE_ERROR, "engine_error", 0, 0, "the engine gave up"},
    {"a text with the failure", "partial", 1, "cut", NULL, 0, NULL, 0, TL_PS_ENGINE_ERROR, "engine_error", 0, 0, "cut"},
    {"the judge gave up", "an answer", 0, NULL, NULL, 1, "HTTP 429", 1, TL_PS_ENGINE_ERROR, "engine_error", 0, 0, NULL},
    {"the judge failed with a verdict", "an answer", 0, NULL, "Rating: [[9]]", 1, "late", 1, TL_PS_ENGINE_ERROR, "engine_error", 0, 0, NULL},
};

static void test_transitions(void **state) {
  (void)state;
  world w;
  world_init(&w);
  world_bench(&w, ITEMS, 2);
  for (size_t k = 0; k < sizeof TRANSITIONS / sizeof TRANSITIONS[0]; k++) {
    const transition *c = &TRANSITIONS[k];
    for (uint64_t g = 0; g < w.rb[0].U; g++) { /* every unit the same way */
      fake f;
      memset(&f, 0, sizeof f);
      tl_pipe *p = tl_pipe_new(w.rb, 1, fk_submit, fk_done, &f);
      assert_non_null(p);
      tl_err err;
      err.msg[0] = 0;
      assert_int_equal(tl_pipe_start(p, g, NULL, &err), TL_OK);
      assert_int_equal(f.nsent, 1);
      assert_int_equal(f.sent[0].tag, g * TL_MAX_STAGES + 0);
      assert_int_equal(f.sent[0].role, TL_ROLE_MODEL);
      assert_int_equal(tl_pipe_in_flight(p), 1);
      assert_int_equal(f.ndone, 0);
      if (reply(p, f.sent[0].tag, c->t0, c->f0, c->e0, 100 + g, &err) != TL_OK) fail_msg("%s: %s", c->what, err.msg);
      if ((size_t)c->judge_asked + 1 != f.nsent) fail_msg("%s: %zu requests, want %d", c->what, f.nsent, c->judge_asked + 1);
      if (c->judge_asked) {
        assert_int_equal(f.sent[1].tag, g * TL_MAX_STAGES + 1);
        assert_int_equal(tl_tag_unit(f.sent[1].tag), g);
        assert_int_equal(tl_tag_stage(f.sent[1].tag), 1);
        assert_int_equal(f.sent[1].role, TL_ROLE_JUDGE);
        assert_int_equal(f.ndone, 0);
        assert_int_equal(tl_pipe_in_flight(p), 1);
        if (reply(p, f.sent[1].tag, c->t1, c->f1, c->e1, 200 + g, &err) != TL_OK) fail_msg("%s: %s", c->what, err.msg);
      }
      assert_int_equal(tl_pipe_in_flight(p), 0);
      if (f.ndone != 1) fail_msg("%s: unit %llu finished %zu times", c->what, (unsigned long long)g, f.ndone);
      const done_rec *d = &f.done[0];
      assert_int_equal(d->bench, 0);
      assert_int_equal(d->g, g);
      assert_int_equal(d->done, 2);
      if (d->status != c->status || strcmp(d->rule, c->rule) || d->value != c->value || d->correct != c->correct)
        fail_msg("%s: status %d rule '%s' value %lld correct %d; want %d '%s' %lld %d", c->what, d->status, d->rule,
                 (long long)d->value, d->correct, c->status, c->rule, (long long)c->value, c->correct);
      assert_int_equal(d->has_text0, c->t0 != NULL);
      if (c->t0) assert_string_equal(d->text0, c->t0);
      assert_int_equal(d->has_error0, c->error0 != NULL);
      if (c->error0) assert_string_equal(d->error0, c->error0);
      assert_int_equal(tl_pipe_calls(p, 0), 1);
      assert_int_equal(tl_pipe_calls(p, 1), (uint64_t)c->judge_asked);
      assert_int_equal(tl_pipe_skips(p, 0), 0);
      assert_int_equal(tl_pipe_skips(p, 1), (uint64_t)!c->judge_asked);
      tl_pipe_free(p);
      fake_release(&f);
    }
  }
  world_release(&w);
}

/* The requests' keys, roles, messages and seeds; the judge sees the answer. */
static void test_requests(void **state) {
  (void)state;
  world w;
  world_init(&w);
  world_bench(&w, ITEMS, 2);
  fake f;
  memset(&f, 0, sizeof f);
  tl_pipe *p = tl_pipe_new(w.rb, 1, fk_submit, fk_done, &f);
  tl_err err;
  static const struct {
    const char *id, *model;
    int seed;
    uint32_t sub;
    const char *question;
  } WANT[] = {
      {"a", "m1", 0, 0, "Qa (turn 1)"}, {"b", "m1", 0, 0, "Qb (turn 1)"}, {"b", "m1", 0, 1, "Qb (turn 2)"},
      {"a", "m2", 5, 0, "Qa (turn 1)"}, {"b", "m2", 5, 0, "Qb (turn 1)"}, {"b", "m2", 5, 1, "Qb (turn 2)"},
  };
  assert_int_equal(w.rb[0].U, 6);
  for (uint64_t g = 0; g < 6; g++) assert_int_equal(tl_pipe_start(p, g, NULL, &err), TL_OK);
  assert_int_equal(tl_pipe_in_flight(p), 6);
  assert_int_equal(tl_pipe_calls(p, 0), 6);
  for (uint64_t g = 0; g < 6; g++) {
    const sent_req *s = &f.sent[g];
    assert_int_equal(s->tag, g * TL_MAX_STAGES);
    assert_string_equal(s->bench, "test_judged");
    assert_string_equal(s->id, WANT[g].id);
    assert_string_equal(s->model, WANT[g].model);
    assert_string_equal(s->variant, "plain");
    assert_int_equal(s->key_seed, WANT[g].seed);
    assert_int_equal(s->seed, WANT[g].seed); /* the cfg's seed is sent */
    assert_int_equal(s->sub, WANT[g].sub);
    assert_int_equal(s->stage, 0);
    assert_int_equal(s->nmsg, 1);
    assert_string_equal(s->first_role, "user");
    assert_string_equal(s->last_msg, WANT[g].question);
  }
  /* answer them last to first: each judge request carries its own unit's answer */
  for (uint64_t g = 6; g-- > 0;) {
    char ans[32];
    snprintf(ans, sizeof ans, "answer of %llu", (unsigned long long)g);
    assert_int_equal(reply(p, g * TL_MAX_STAGES, ans, 0, NULL, TL_REF_NONE, &err), TL_OK);
    const sent_req *s = &f.sent[f.nsent - 1];
    assert_int_equal(s->tag, g * TL_MAX_STAGES + 1);
    assert_int_equal(s->stage, 1);
    assert_int_equal(s->role, TL_ROLE_JUDGE);
    assert_string_equal(s->id, WANT[g].id);
    assert_string_equal(s->model, WANT[g].model); /* whose answer */
    assert_int_equal(s->nmsg, 2);
    assert_string_equal(s->first_role, "system");
    assert_non_null(strstr(s->last_msg, ans));
    assert_non_null(strstr(s->last_msg, WANT[g].question));
  }
  assert_int_equal(tl_pipe_calls(p, 1), 6);
  assert_int_equal(f.ndone, 0);
  assert_int_equal(tl_pipe_in_flight(p), 6);
  tl_pipe_free(p); /* six rows still in flight: dropped (LSan) */
  fake_release(&f);
  world_release(&w);
}

/* A restored row starts at row->done: the stages done are not asked again; the row is taken. */
static void test_restored(void **state) {
  (void)state;
  world w;
  world_init(&w);
  world_bench(&w, ITEMS, 2);
  fake f;
  memset(&f, 0, sizeof f);
  tl_pipe *p = tl_pipe_new(w.rb, 1, fk_submit, fk_done, &f);
  tl_err err;
  /* generate done: only the judge is asked */
  tl_row r;
  tl_row_init(&r);
  r.done = 1;
  r.text[0] = tl_strdup("restored answer");
  assert_int_equal(tl_pipe_start(p, 4, &r, &err), TL_OK);
  assert_null(r.text[0]); /* taken */
  assert_int_equal(r.done, 0);
  assert_int_equal(f.nsent, 1);
  assert_int_equal(f.sent[0].tag, 4 * TL_MAX_STAGES + 1);
  assert_non_null(strstr(f.sent[0].last_msg, "restored answer"));
  assert_int_equal(tl_pipe_calls(p, 0), 0);
  assert_int_equal(reply(p, f.sent[0].tag, "Rating: [[6]]", 0, NULL, 43, &err), TL_OK);
  assert_int_equal(f.ndone, 1);
  assert_int_equal(f.done[0].g, 4);
  assert_int_equal(f.done[0].value, 6);
  assert_int_equal(f.done[0].correct, 1);
  assert_string_equal(f.done[0].text0, "restored answer");
  /* both stages done: scored and handed over at once, nothing asked */
  tl_row_init(&r);
  r.done = 2;
  r.text[0] = tl_strdup("a");
  r.text[1] = tl_strdup("Rating: [[2]]");
  assert_int_equal(tl_pipe_start(p, 5, &r, &err), TL_OK);
  assert_int_equal(f.nsent, 1);
  assert_int_equal(f.ndone, 2);
  assert_int_equal(f.done[1].g, 5);
  assert_int_equal(f.done[1].value, 2);
  assert_int_equal(f.done[1].correct, 0);
  /* restored with no answer at stage 1: the judge stage is skipped */
  tl_row_init(&r);
  r.done = 1;
  assert_int_equal(tl_pipe_start(p, 0, &r, &err), TL_OK);
  assert_int_equal(f.nsent, 1);
  assert_int_equal(f.ndone, 3);
  assert_int_equal(f.done[2].status, TL_PS_MISSING);
  assert_int_equal(tl_pipe_skips(p, 1), 1);
  /* restored with the engine's failure at stage 0: skipped, engine_error */
  tl_row_init(&r);
  r.done = 1;
  r.error[0] = tl_strdup("gave up before the kill");
  assert_int_equal(tl_pipe_start(p, 1, &r, &err), TL_OK);
  assert_int_equal(f.nsent, 1);
  assert_int_equal(f.ndone, 4);
  assert_int_equal(f.done[3].status, TL_PS_ENGINE_ERROR);
  assert_string_equal(f.done[3].error0, "gave up before the kill");
  assert_int_equal(tl_pipe_skips(p, 1), 2);
  assert_int_equal(tl_pipe_in_flight(p), 0);
  tl_pipe_free(p);
  fake_release(&f);
  world_release(&w);
}

/* Replies nobody asked for, a unit started twice, failing callbacks. */
static void test_errors(void **state) {
  (void)state;
  world w;
  world_init(&w);
  world_bench(&w, ITEMS, 2);
  fake f;
  memset(&f, 0, sizeof f);
  tl_pipe *p = tl_pipe_new(w.rb, 1, fk_submit, fk_done, &f);
  tl_err err;
  /* nothing in flight: a reply is an internal error, nothing finishes */
  assert_int_equal(reply(p, 3 * TL_MAX_STAGES, "x", 0, NULL, 0, &err), TL_EINTERNAL);
  assert_non_null(strstr(err.msg, "unit 3 stage 0 that was not asked"));
  assert_int_equal(tl_pipe_in_flight(p), 0);
  /* unit 2 waits on stage 0: a reply for stage 1 is refused and the row dropped */
  assert_int_equal(tl_pipe_start(p, 2, NULL, &err), TL_OK);
  assert_int_equal(tl_pipe_start(p, 1, NULL, &err), TL_OK);
  assert_int_equal(tl_pipe_in_flight(p), 2);
  assert_int_equal(reply(p, 2 * TL_MAX_STAGES + 1, "x", 0, NULL, 0, &err), TL_EINTERNAL);
  assert_non_null(strstr(err.msg, "unit 2 stage 1 that was not asked"));
  assert_int_equal(tl_pipe_in_flight(p), 1);
  assert_int_equal(f.ndone, 0);
  /* unit 1 started again while in flight */
  err.msg[0] = 0;
  assert_int_equal(tl_pipe_start(p, 1, NULL, &err), TL_EINTERNAL);
  assert_non_null(strstr(err.msg, "unit 1 started twice"));
  assert_int_equal(tl_pipe_in_flight(p), 1);
  /* ... the first is still answered normally */
  assert_int_equal(reply(p, 1 * TL_MAX_STAGES, "ans", 0, NULL, 0, &err), TL_OK);
  assert_int_equal(reply(p, 1 * TL_MAX_STAGES + 1, "Rating: [[8]]", 0, NULL, 0, &err), TL_OK);
  assert_int_equal(f.ndone, 1);
  assert_int_equal(f.done[0].g, 1);
  assert_int_equal(f.done[0].value, 8);
  /* a submit that fails: its status and a message; the row stays in flight */
  f.submit_st = TL_ENGINE;
  err.msg[0] = 0;
  assert_int_equal(tl_pipe_start(p, 0, NULL, &err), TL_ENGINE);
  assert_non_null(strstr(err.msg, "engine (model): cannot submit a request"));
  assert_int_equal(tl_pipe_in_flight(p), 1);
  f.submit_st = TL_OK;
  /* a done that fails: its status */
  f.done_st = TL_EIO;
  tl_row r;
  tl_row_init(&r);
  r.done = 2;
  r.text[0] = tl_strdup("a");
  r.text[1] = tl_strdup("Rating: [[5]]");
  assert_int_equal(tl_pipe_start(p, 5, &r, &err), TL_EIO);
  assert_int_equal(tl_pipe_in_flight(p), 1);
  tl_pipe_free(p); /* unit 0's row, still in flight, is dropped (LSan) */
  tl_pipe_free(NULL);
  fake_release(&f);
  world_release(&w);
}

/* Two benchmarks, 18,006 units, every reply in a shuffled order, up to W units in flight at
 * once (the in-flight map near its most loaded, 2,040 of 4,096 slots, and churned: entries
 * removed in every order, probe runs that wrap around the end of the slots among them). */
static void test_many_shuffled(void **state) {
  (void)state;
  enum { W = 2040 };
  world w;
  world_init(&w);
  /* bench 0: 3,000 items of 1..3 turns (6,000 units per cfg, 3 cfgs); bench 1: the small one */
  tl_buf items;
  tl_buf_init(&items);
  for (int i = 0; i < 3000; i++)
    assert_int_equal(tl_buf_printf(&items, "{\"id\":\"q%04d\",\"question\":\"Q%d\",\"turns\":%d}\n", i, i, 1 + i % 3), TL_OK);
  world_bench(&w, items.data, 3);
  tl_buf_release(&items);
  world_bench(&w, ITEMS, 2);
  assert_int_equal(w.rb[0].U, 18000);
  assert_int_equal(w.rb[1].base, 18000);
  uint64_t total = w.rb[0].U + w.rb[1].U;
  fake f;
  memset(&f, 0, sizeof f);
  tl_pipe *p = tl_pipe_new(w.rb, 2, fk_submit, fk_done, &f);
  tl_err err;
  /* units start in a scrambled order (a permutation: 7919 is a prime not dividing total), W at
   * most in flight; pending requests are answered picked at random until none is left */
  assert_true(total % 7919 != 0);
  uint64_t *pending = malloc(2 * total * sizeof *pending);
  assert_non_null(pending);
  size_t np = 0, seen = 0, most = 0;
  uint64_t started = 0, rng = 88172645463325252ull;
  for (;;) {
    while (started < total && tl_pipe_in_flight(p) < W) {
      uint64_t g = started++ * 7919 % total;
      if (tl_pipe_start(p, g, NULL, &err) != TL_OK) fail_msg("start %llu: %s", (unsigned long long)g, err.msg);
    }
    if (tl_pipe_in_flight(p) > most) most = tl_pipe_in_flight(p);
    while (seen < f.nsent) pending[np++] = f.sent[seen++].tag;
    if (!np) break;
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    size_t i = (size_t)(rng % np);
    uint64_t tag = pending[i];
    pending[i] = pending[--np];
    uint64_t g = tl_tag_unit(tag);
    char text[48];
    if (tl_tag_stage(tag) == 0) snprintf(text, sizeof text, "answer %llu", (unsigned long long)g);
    else snprintf(text, sizeof text, "Rating: [[%d]]", (int)(g % 10) + 1);
    if (reply(p, tag, text, 0, NULL, tag, &err) != TL_OK) fail_msg("reply %llu: %s", (unsigned long long)tag, err.msg);
  }
  free(pending);
  assert_int_equal(most, W);
  assert_int_equal(started, total);
  assert_int_equal(tl_pipe_in_flight(p), 0);
  assert_int_equal(f.nsent, 2 * total);
  assert_int_equal(f.ndone, total);
  assert_int_equal(tl_pipe_calls(p, 0), total);
  assert_int_equal(tl_pipe_calls(p, 1), total);
  /* each unit once, in its benchmark, with its own answer and rating */
  char *got = calloc(total, 1);
  assert_non_null(got);
  for (size_t i = 0; i < f.ndone; i++) {
    const done_rec *d = &f.done[i];
    assert_true(d->g < total);
    if (got[d->g]++) fail_msg("unit %llu finished twice", (unsigned long long)d->g);
    assert_int_equal(d->bench, d->g >= 18000 ? 1 : 0);
    char want[48];
    snprintf(want, sizeof want, "answer %llu", (unsigned long long)d->g);
    assert_string_equal(d->text0, want);
    assert_int_equal(d->status, TL_PS_OK);
    assert_int_equal(d->value, (int64_t)(d->g % 10) + 1);
  }
  free(got);
  tl_pipe_free(p);
  fake_release(&f);
  world_release(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_transitions), cmocka_unit_test(test_requests),
      cmocka_unit_test(test_restored),    cmocka_unit_test(test_errors),
      cmocka_unit_test(test_many_shuffled),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
