/* test_cfgs.c - the driver's pure arithmetic and selections, moved to core (include/tally/run.h):
 * key blocks (tl_block_lo, tl_block_owner: every unit in exactly one block, blocks differ by at
 * most one unit, ownership inverse of the blocks), chunk sizes (tl_chunk_size: about 8 per rank,
 * 1..1024), the cfgs a job's lists select (tl_cfgs_select: filtering, the listed models x seeds
 * added for a run but not for a merge, the default variant for a model never seen, key order)
 * and the filter check (tl_cfgs_check_filter: a typo names itself and what the answers hold).
 * Table-driven. */
#include "testutil.h"
#include "tally/run.h"

static void test_blocks(void **state) {
  (void)state;
  static const struct {
    uint64_t U;
    int n;
  } cases[] = {{1, 1}, {1, 4}, {3, 4}, {7, 2}, {8, 4}, {1000, 3}, {1000, 7}, {5, 5}, {17, 16}, {(uint64_t)1 << 40, 6}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    const uint64_t U = cases[k].U;
    const int n = cases[k].n;
    assert_int_equal(tl_block_lo(U, 0, n), 0);
    assert_true(tl_block_lo(U, n, n) == U);
    for (int q = 0; q < n; q++) {
      const uint64_t lo = tl_block_lo(U, q, n), hi = tl_block_lo(U, q + 1, n);
      assert_true(lo <= hi);
      assert_true(hi - lo == U / (uint64_t)n || hi - lo == U / (uint64_t)n + 1); /* balanced */
      /* ownership is the inverse: the ends of every block (the whole range when it is small) */
      if (U <= 1000) {
        for (uint64_t u = lo; u < hi; u++) assert_int_equal(tl_block_owner(u, U, n), q);
      } else if (hi > lo) {
        assert_int_equal(tl_block_owner(lo, U, n), q);
        assert_int_equal(tl_block_owner(hi - 1, U, n), q);
      }
    }
  }
}

static void test_chunks(void **state) {
  (void)state;
  static const struct {
    uint64_t P;
    int n;
    uint64_t want;
  } cases[] = {{0, 1, 1}, {7, 1, 1}, {8, 1, 1}, {80, 1, 10}, {80, 2, 5}, {1000, 4, 31}, {1u << 20, 1, 1024},
               {1u << 20, 64, 1024}, {100000, 64, 195}, {15, 2, 1}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    assert_true(tl_chunk_size(cases[k].P, cases[k].n) == cases[k].want);
}

/* The cfgs as "model/variant/seed" joined by spaces. */
static void cfgs_text(const tl_cfg *c, size_t n, char *out, size_t cap) {
  out[0] = 0;
  for (size_t i = 0; i < n; i++) {
    size_t l = strlen(out);
    snprintf(out + l, cap - l, "%s%s/%d/%d", i ? " " : "", c[i].model, c[i].variant, c[i].seed);
  }
}

static void test_select(void **state) {
  (void)state;
  const tl_cfg found[] = {{"m-b", 0, 1}, {"m-a", 1, 0}, {"m-a", 0, 0}, {"m-c", 0, 2}};
  char *ab[] = {"m-a", "m-b"}, *az[] = {"m-a", "m-z"};
  const int s01[] = {0, 1}, s1[] = {1};
  const struct {
    char **models;
    int nm;
    const int *seeds;
    int ns;
    int list_all;
    const char *want;
  } cases[] = {
      {NULL, 0, NULL, 0, 1, "m-a/0/0 m-a/1/0 m-b/0/1 m-c/0/2"},           /* no lists: all, key order */
      {ab, 2, NULL, 0, 1, "m-a/0/0 m-a/1/0 m-b/0/1"},                     /* models only */
      {NULL, 0, s1, 1, 1, "m-b/0/1"},                                     /* seeds only */
      {ab, 2, s01, 2, 1, "m-a/0/0 m-a/0/1 m-a/1/0 m-a/1/1 m-b/0/0 m-b/0/1"}, /* models x seeds, each variant seen */
      {ab, 2, s01, 2, 0, "m-a/0/0 m-a/1/0 m-b/0/1"},                      /* a merge: only what was run */
      {az, 2, s1, 1, 1, "m-a/3/1 m-z/3/1"}, /* no kept cfg of the model (m-a has no seed 1): the default variant */
      {az, 2, s01, 2, 1, "m-a/0/0 m-a/0/1 m-a/1/0 m-a/1/1 m-z/3/0 m-z/3/1"}, /* m-z never seen */
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    tl_cfg *out = NULL;
    size_t n = 0;
    assert_int_equal(tl_cfgs_select(found, 4, cases[k].models, cases[k].nm, cases[k].seeds, cases[k].ns, 3,
                                    cases[k].list_all, &out, &n),
                     TL_OK);
    char got[512];
    cfgs_text(out, n, got, sizeof got);
    assert_string_equal(got, cases[k].want);
    tl_cfgs_free(out, n);
  }
}

static void test_filter_check(void **state) {
  (void)state;
  const tl_cfg found[] = {{"m-b", 0, 1}, {"m-a", 1, 0}, {"m-a", 0, 0}};
  char *ok[] = {"m-a"}, *typo[] = {"m-a", "m_b"};
  const int s0[] = {0}, s9[] = {9, 1};
  tl_err err = {{0}};
  assert_int_equal(tl_cfgs_check_filter(found, 3, ok, 1, s0, 1, &err), TL_OK);
  assert_int_equal(tl_cfgs_check_filter(found, 3, NULL, 0, NULL, 0, &err), TL_OK);
  assert_int_equal(tl_cfgs_check_filter(found, 3, typo, 2, s9, 2, &err), TL_EJOB);
  assert_non_null(strstr(err.msg, "model 'm_b'; seed 9 (the answers have models 'm-b', 'm-a')"));
  assert_null(strstr(err.msg, "seed 1"));
  /* more than 8 models held: the first 8, then "..." */
  tl_cfg many[10];
  char names[10][8];
  for (int i = 0; i < 10; i++) {
    snprintf(names[i], sizeof names[i], "x%d", i);
    many[i] = (tl_cfg){names[i], 0, 0};
  }
  assert_int_equal(tl_cfgs_check_filter(many, 10, typo, 1, NULL, 0, &err), TL_EJOB);
  assert_non_null(strstr(err.msg, "'x7', ...)"));
  assert_null(strstr(err.msg, "'x8'"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_blocks),
      cmocka_unit_test(test_chunks),
      cmocka_unit_test(test_select),
      cmocka_unit_test(test_filter_check),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
