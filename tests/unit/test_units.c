/* test_units.c - the benchmarks of a run and their unit numbering (include/tally/run.h,
 * src/core/run/units.c), on a fake module whose items have a chosen number of units each:
 * tl_rb_units (sub_off, S, U, nmodes, nstages, from the module and ncfgs; again after a change);
 * tl_rb_unit / tl_rb_index (inverse of each other, key order: cfg, then item, then sub; items
 * with no units; the one-unit-per-item case); tl_rb_find over benchmarks with empty ones among
 * them; the cfgs (tl_cfgs_add: duplicates left out, growth; tl_cfgs_sort: model, variant,
 * seed); tl_rb_score (the module's score, then every mode engine_error when the engine gave up
 * on a stage); tl_rb_release.
 *
 * The numbering cases are table-driven: per case the items' unit counts, ncfgs and the
 * expected S and U; every unit is checked against a brute-force enumeration in key order. */
#include "testutil.h"
#include "tally/run.h"

/* ---- a fake module: items with n_subs from a list ---- */
struct tl_bench {
  const uint32_t *subs; /* [n] units of each item */
  size_t n;
  int nmodes;
  int nstages;          /* 0: vt->nstages (no n_stages answer) */
  tl_status score_st;   /* what score returns */
  int scored;           /* score calls */
};

static size_t fk_n_items(const tl_bench *b) { return b->n; }
static uint32_t fk_n_subs(const tl_bench *b, size_t i) { return b->subs[i]; }
static int fk_n_modes(const tl_bench *b) { return b->nmodes; }
static int fk_n_stages(const tl_bench *b) { return b->nstages ? b->nstages : 2; }
static tl_status fk_score(const tl_bench *b, const tl_cfg *cfgs, const tl_unit *u, tl_row *r, tl_err *err) {
  (void)cfgs;
  (void)u;
  ((tl_bench *)b)->scored++;
  if (b->score_st) return tl_err_set(err, b->score_st, "fake score failed");
  for (int m = 0; m < b->nmodes; m++) {
    tl_parsed_release(&r->res[m]);
    r->res[m].status = TL_PS_OK;
    r->res[m].rule = "fake";
    r->res[m].correct = 1;
    r->res[m].value = 10 + m;
    r->res[m].answer = tl_strdup("A");
  }
  return TL_OK;
}

static const char *const FK_VARIANTS[] = {"v0", NULL};
static const tl_bench_vt FAKE = {
    .name = "fake",
    .nstages = 1,
    .max_modes = TL_MAX_MODES,
    .max_acc = TL_MAX_ACC,
    .variants = FK_VARIANTS,
    .n_items = fk_n_items,
    .n_subs = fk_n_subs,
    .n_modes = fk_n_modes,
    .score = fk_score,
};
static const tl_bench_vt FAKE_STAGES = { /* with n_stages: stages per module object */
    .name = "fake2",
    .nstages = 1,
    .max_modes = TL_MAX_MODES,
    .max_acc = TL_MAX_ACC,
    .variants = FK_VARIANTS,
    .n_stages = fk_n_stages,
    .n_items = fk_n_items,
    .n_subs = fk_n_subs,
    .n_modes = fk_n_modes,
    .score = fk_score,
};

/* n cfgs (model "m", seeds 0 .. n-1) into rb->cfgs, as the job gives them. */
static void give_cfgs(tl_run_bench *rb, size_t n) {
  size_t cap = 0;
  tl_strmap seen;
  tl_strmap_init(&seen);
  rb->cfgs = NULL;
  rb->ncfgs = 0;
  for (size_t i = 0; i < n; i++) assert_int_equal(tl_cfgs_add(&rb->cfgs, &rb->ncfgs, &cap, &seen, "m", 0, (int)i), TL_OK);
  tl_strmap_release(&seen);
}

/* ---- numbering, table-driven ---- */
typedef struct {
  const char *what;
  uint32_t subs[8];
  size_t nitems;
  size_t ncfgs;
  uint64_t S, U;
} numbering_case;

static const numbering_case NUMBERING[] = {
    {"one unit per item", {1, 1, 1, 1}, 4, 3, 4, 12},
    {"dialogues of several turns", {3, 1, 2}, 3, 2, 6, 12},
    {"items with no units among them", {0, 2, 0, 0, 3, 0}, 6, 2, 5, 10},
    {"the first and last items empty", {0, 1, 1, 0}, 4, 5, 2, 10},
    {"a single item, a single cfg", {7}, 1, 1, 7, 7},
    {"no cfgs", {2, 2}, 2, 0, 4, 0},
    {"no items", {0}, 0, 3, 0, 0},
    {"every item empty", {0, 0, 0}, 3, 4, 0, 0},
    {"big counts", {8, 8, 8, 8, 8, 8, 8, 8}, 8, 1000, 64, 64000},
};

static void test_numbering(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof NUMBERING / sizeof NUMBERING[0]; k++) {
    const numbering_case *c = &NUMBERING[k];
    tl_bench b = {.subs = c->subs, .n = c->nitems, .nmodes = 2};
    tl_run_bench rb;
    memset(&rb, 0, sizeof rb);
    rb.vt = &FAKE;
    rb.b = &b;
    give_cfgs(&rb, c->ncfgs);
    assert_int_equal(tl_rb_units(&rb), TL_OK);
    if (rb.S != c->S || rb.U != c->U)
      fail_msg("%s: S %llu U %llu, want %llu %llu", c->what, (unsigned long long)rb.S, (unsigned long long)rb.U,
               (unsigned long long)c->S, (unsigned long long)c->U);
    assert_int_equal(rb.nitems, c->nitems);
    assert_int_equal(rb.nmodes, 2);
    assert_int_equal(rb.nstages, 1);
    /* sub_off: units of the items before, nitems + 1 entries */
    uint64_t s = 0;
    for (size_t i = 0; i < c->nitems; i++) {
      assert_int_equal(rb.sub_off[i], s);
      s += c->subs[i];
    }
    assert_int_equal(rb.sub_off[c->nitems], s);
    /* every unit, in key order (cfg, item, sub), is u = 0, 1, 2, ... */
    uint64_t u = 0;
    for (uint32_t cfg = 0; cfg < c->ncfgs; cfg++)
      for (uint32_t item = 0; item < c->nitems; item++)
        for (uint32_t sub = 0; sub < c->subs[item]; sub++, u++) {
          tl_unit x = tl_rb_unit(&rb, u);
          if (x.cfg != cfg || x.item != item || x.sub != sub)
            fail_msg("%s: unit %llu is (%u, %u, %u), want (%u, %u, %u)", c->what, (unsigned long long)u, x.cfg,
                     x.item, x.sub, cfg, item, sub);
          tl_unit y = {cfg, item, sub};
          assert_int_equal(tl_rb_index(&rb, &y), u);
        }
    assert_int_equal(u, c->U);
    tl_rb_release(&rb); /* cfgs NULL, ncfgs -> 0; sub_off freed */
    assert_null(rb.sub_off);
    assert_null(rb.cfgs);
    assert_int_equal(rb.ncfgs, 0);
  }
}

/* tl_rb_units again after the module changed (reloaded items): the numbers follow, the old
 * sub_off is freed (LSan); nstages from the module object's n_stages. */
static void test_units_again(void **state) {
  (void)state;
  uint32_t subs1[] = {1, 2}, subs2[] = {3, 3, 3};
  tl_bench b = {.subs = subs1, .n = 2, .nmodes = 1, .nstages = 5};
  tl_run_bench rb;
  memset(&rb, 0, sizeof rb);
  rb.vt = &FAKE_STAGES;
  rb.b = &b;
  give_cfgs(&rb, 2);
  assert_int_equal(tl_rb_units(&rb), TL_OK);
  assert_int_equal(rb.S, 3);
  assert_int_equal(rb.nstages, 5);
  b.subs = subs2;
  b.n = 3;
  b.nstages = 3;
  tl_cfgs_free(rb.cfgs, rb.ncfgs);
  give_cfgs(&rb, 4);
  assert_int_equal(tl_rb_units(&rb), TL_OK);
  assert_int_equal(rb.nitems, 3);
  assert_int_equal(rb.S, 9);
  assert_int_equal(rb.U, 36);
  assert_int_equal(rb.nstages, 3);
  tl_unit x = tl_rb_unit(&rb, 35);
  assert_true(x.cfg == 3 && x.item == 2 && x.sub == 2);
  tl_rb_release(&rb);
}

/* tl_rb_find: the benchmark whose [base, base + U) holds g, with empty benchmarks (U = 0)
 * sharing their base with the next one. */
static void test_find(void **state) {
  (void)state;
  static const uint64_t U[] = {10, 0, 15, 1, 0, 0, 7};
  enum { NB = sizeof U / sizeof U[0] };
  tl_run_bench rbs[NB];
  memset(rbs, 0, sizeof rbs);
  uint64_t base = 0;
  for (size_t i = 0; i < NB; i++) {
    rbs[i].base = base;
    rbs[i].U = U[i];
    base += U[i];
  }
  for (uint64_t g = 0; g < base; g++) {
    size_t want = NB;
    for (size_t i = 0; i < NB; i++)
      if (g >= rbs[i].base && g < rbs[i].base + rbs[i].U) want = i;
    size_t got = tl_rb_find(rbs, NB, g);
    if (got != want) fail_msg("unit %llu: benchmark %zu, want %zu", (unsigned long long)g, got, want);
  }
  /* one benchmark: always 0 */
  assert_int_equal(tl_rb_find(rbs, 1, 0), 0);
  assert_int_equal(tl_rb_find(rbs, 1, 9), 0);
}

/* ---- cfgs ---- */
typedef struct {
  const char *model;
  int variant, seed;
} cfg_in;

/* Added in this order (duplicates among them); sorted: model (strcmp), variant, seed. */
static const cfg_in CFG_IN[] = {
    {"m-b", 0, 1}, {"m-a", 1, 0}, {"m-b", 0, 1}, {"m-a", 0, 2}, {"m-a", 0, -3}, {"M-z", 0, 0},
    {"m-a", 1, 0}, {"m-a", 0, 2}, {"m-a", 0, 10}, {"m-a\x1f" "0", 0, 0}, {"m-b", 0, 0}, {"", 0, 0},
};
static const cfg_in CFG_SORTED[] = {
    {"", 0, 0}, {"M-z", 0, 0}, {"m-a", 0, -3}, {"m-a", 0, 2}, {"m-a", 0, 10}, {"m-a", 1, 0},
    {"m-a\x1f" "0", 0, 0}, {"m-b", 0, 0}, {"m-b", 0, 1},
};

static void test_cfgs(void **state) {
  (void)state;
  tl_cfg *cfgs = NULL;
  size_t n = 0, cap = 0;
  tl_strmap seen;
  tl_strmap_init(&seen);
  for (size_t i = 0; i < sizeof CFG_IN / sizeof CFG_IN[0]; i++)
    assert_int_equal(tl_cfgs_add(&cfgs, &n, &cap, &seen, CFG_IN[i].model, CFG_IN[i].variant, CFG_IN[i].seed), TL_OK);
  assert_int_equal(n, sizeof CFG_SORTED / sizeof CFG_SORTED[0]);
  /* in the order first added, the model copied */
  assert_string_equal(cfgs[0].model, "m-b");
  assert_ptr_not_equal(cfgs[0].model, CFG_IN[0].model);
  assert_string_equal(cfgs[1].model, "m-a");
  assert_int_equal(cfgs[1].variant, 1);
  tl_cfgs_sort(cfgs, n);
  for (size_t i = 0; i < n; i++)
    if (strcmp(cfgs[i].model, CFG_SORTED[i].model) || cfgs[i].variant != CFG_SORTED[i].variant ||
        cfgs[i].seed != CFG_SORTED[i].seed)
      fail_msg("sorted cfg %zu: (%s, %d, %d), want (%s, %d, %d)", i, cfgs[i].model, cfgs[i].variant, cfgs[i].seed,
               CFG_SORTED[i].model, CFG_SORTED[i].variant, CFG_SORTED[i].seed);
  tl_cfgs_free(cfgs, n);
  tl_strmap_release(&seen);

  /* many cfgs: growth; each added once however often it is offered */
  cfgs = NULL;
  n = cap = 0;
  tl_strmap_init(&seen);
  for (int r = 0; r < 2; r++)
    for (int s = 0; s < 300; s++) {
      char model[16];
      snprintf(model, sizeof model, "m%d", s % 7);
      assert_int_equal(tl_cfgs_add(&cfgs, &n, &cap, &seen, model, s % 3, s), TL_OK);
    }
  assert_int_equal(n, 300);
  assert_true(cap >= n);
  tl_cfgs_sort(cfgs, n);
  for (size_t i = 1; i < n; i++) {
    int c = strcmp(cfgs[i - 1].model, cfgs[i].model);
    assert_true(c < 0 || (c == 0 && (cfgs[i - 1].variant < cfgs[i].variant ||
                                     (cfgs[i - 1].variant == cfgs[i].variant && cfgs[i - 1].seed < cfgs[i].seed))));
  }
  tl_cfgs_free(cfgs, n);
  tl_strmap_release(&seen);
  tl_cfgs_sort(NULL, 0); /* nothing to sort */
  tl_cfgs_free(NULL, 0);
}

/* ---- tl_rb_score ---- */
typedef struct {
  const char *what;
  int nstages;
  int error_stage; /* -1: none */
  bool want_engine_error;
} score_case;

static const score_case SCORE[] = {
    {"no engine error", 2, -1, false},
    {"the engine gave up on stage 0", 2, 0, true},
    {"the engine gave up on the judge", 2, 1, true},
    {"on the last of 4 stages", 4, 3, true},
    {"one stage, gave up", 1, 0, true},
};

static void test_score(void **state) {
  (void)state;
  uint32_t subs[] = {1};
  for (size_t k = 0; k < sizeof SCORE / sizeof SCORE[0]; k++) {
    const score_case *c = &SCORE[k];
    tl_bench b = {.subs = subs, .n = 1, .nmodes = 3, .nstages = c->nstages};
    tl_run_bench rb;
    memset(&rb, 0, sizeof rb);
    rb.vt = &FAKE_STAGES;
    rb.b = &b;
    give_cfgs(&rb, 1);
    assert_int_equal(tl_rb_units(&rb), TL_OK);
    tl_row row;
    tl_row_init(&row);
    row.done = (uint8_t)c->nstages;
    if (c->error_stage >= 0) row.error[c->error_stage] = tl_strdup("HTTP 500");
    tl_unit u = {0, 0, 0};
    tl_err err;
    err.msg[0] = 0;
    assert_int_equal(tl_rb_score(&rb, &u, &row, &err), TL_OK);
    assert_int_equal(b.scored, 1); /* the module scored it either way */
    for (int m = 0; m < 3; m++) {
      if (c->want_engine_error) {
        if (row.res[m].status != TL_PS_ENGINE_ERROR) fail_msg("%s: mode %d status %d", c->what, m, row.res[m].status);
        assert_string_equal(row.res[m].rule, "engine_error");
        assert_int_equal(row.res[m].correct, 0);
        assert_null(row.res[m].answer); /* the module's answer released (LSan) */
      } else {
        assert_int_equal(row.res[m].status, TL_PS_OK);
        assert_string_equal(row.res[m].rule, "fake");
        assert_int_equal(row.res[m].value, 10 + m);
      }
    }
    assert_int_equal(row.res[3].status, TL_PS_NO_ANSWER); /* past nmodes: as tl_row_init left it */
    tl_row_release(&row);
    tl_rb_release(&rb);
  }
  /* the module's failure is the caller's */
  tl_bench b = {.subs = subs, .n = 1, .nmodes = 1, .score_st = TL_EINTERNAL};
  tl_run_bench rb;
  memset(&rb, 0, sizeof rb);
  rb.vt = &FAKE;
  rb.b = &b;
  give_cfgs(&rb, 1);
  assert_int_equal(tl_rb_units(&rb), TL_OK);
  tl_row row;
  tl_row_init(&row);
  row.done = 1;
  tl_unit u = {0, 0, 0};
  tl_err err;
  err.msg[0] = 0;
  assert_int_equal(tl_rb_score(&rb, &u, &row, &err), TL_EINTERNAL);
  assert_string_equal(err.msg, "fake score failed");
  tl_row_release(&row);
  tl_rb_release(&rb);
}

/* tl_rb_release frees the cfgs it owns (LSan) and leaves the module alone. */
static void test_release(void **state) {
  (void)state;
  uint32_t subs[] = {2};
  tl_bench b = {.subs = subs, .n = 1, .nmodes = 1};
  tl_run_bench rb;
  memset(&rb, 0, sizeof rb);
  rb.vt = &FAKE;
  rb.b = &b;
  size_t cap = 0;
  tl_strmap seen;
  tl_strmap_init(&seen);
  assert_int_equal(tl_cfgs_add(&rb.cfgs, &rb.ncfgs, &cap, &seen, "m", 0, 0), TL_OK);
  assert_int_equal(tl_cfgs_add(&rb.cfgs, &rb.ncfgs, &cap, &seen, "m", 0, 1), TL_OK);
  tl_strmap_release(&seen);
  assert_int_equal(tl_rb_units(&rb), TL_OK);
  assert_int_equal(rb.U, 4);
  tl_rb_release(&rb);
  assert_null(rb.cfgs);
  assert_int_equal(rb.ncfgs, 0);
  assert_ptr_equal(rb.b, &b);
  tl_rb_release(&rb); /* again: nothing left to free */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_numbering), cmocka_unit_test(test_units_again),
      cmocka_unit_test(test_find),      cmocka_unit_test(test_cfgs),
      cmocka_unit_test(test_score),     cmocka_unit_test(test_release),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
