/* test_strmap.c - the string -> size_t map (include/tally/strmap.h, src/core/base/strmap.c):
 * an empty map; put (new key, duplicate key: left as it is, the old value reported; NULL out
 * parameters); get; the stored key (the map's own copy, stable while the map grows); add
 * (counting: a new key starts at 0); keys copied from the caller; growth through many
 * rehashes checked against a plain list; long keys, the empty key, keys that are prefixes of
 * one another or differ in their last byte only; release and reuse.
 *
 * The script cases (table-driven) run one operation a row on one map and check every result. */
#include "testutil.h"
#include "tally/strmap.h"

/* ---- table-driven script ---- */
typedef enum { OP_PUT, OP_ADD, OP_GET } op_kind;
typedef struct {
  op_kind op;
  const char *key;
  size_t val;       /* PUT: the value; ADD: the increment */
  bool want_hit;    /* PUT: inserted; GET: found */
  size_t want_val;  /* PUT, not inserted: *existing; ADD: *now; GET (found): *val */
  size_t want_n;    /* m.n after the operation */
} step;

static const step SCRIPT[] = {
    {OP_GET, "a", 0, false, 0, 0},          /* empty map: nothing found */
    {OP_GET, "", 0, false, 0, 0},
    {OP_PUT, "a", 1, true, 0, 1},           /* a new key */
    {OP_GET, "a", 0, true, 1, 1},
    {OP_PUT, "a", 7, false, 1, 1},          /* duplicate: left as it is, old value reported */
    {OP_GET, "a", 0, true, 1, 1},           /* ... and unchanged */
    {OP_PUT, "ab", 2, true, 0, 2},          /* a key the first is a prefix of */
    {OP_PUT, "", 3, true, 0, 3},            /* the empty key is a key */
    {OP_GET, "", 0, true, 3, 3},
    {OP_GET, "b", 0, false, 0, 3},
    {OP_GET, "A", 0, false, 0, 3},          /* case matters */
    {OP_ADD, "a", 5, true, 6, 3},           /* add to a put key */
    {OP_ADD, "n", 4, true, 4, 4},           /* a new key starts at 0, then gets d */
    {OP_ADD, "n", 0, true, 4, 4},
    {OP_ADD, "z", 0, true, 0, 5},           /* add 0 still stores the key */
    {OP_GET, "z", 0, true, 0, 5},
    {OP_PUT, "n", 100, false, 4, 5},        /* put after add: the count stays */
    {OP_ADD, "ab", (size_t)-1, true, 1, 5}, /* wraps like size_t: 2 + (SIZE_MAX) = 1 */
};

static void test_script(void **state) {
  (void)state;
  tl_strmap m;
  tl_strmap_init(&m);
  for (size_t i = 0; i < sizeof SCRIPT / sizeof SCRIPT[0]; i++) {
    const step *s = &SCRIPT[i];
    size_t v = 12345;
    bool hit = !s->want_hit;
    switch (s->op) {
    case OP_PUT:
      assert_int_equal(tl_strmap_put(&m, s->key, s->val, &hit, &v), TL_OK);
      if (hit != s->want_hit) fail_msg("step %zu: put '%s': inserted %d", i, s->key, hit);
      if (!hit && v != s->want_val) fail_msg("step %zu: put '%s': existing %zu, want %zu", i, s->key, v, s->want_val);
      break;
    case OP_ADD:
      assert_int_equal(tl_strmap_add(&m, s->key, s->val, &v), TL_OK);
      if (v != s->want_val) fail_msg("step %zu: add '%s': now %zu, want %zu", i, s->key, v, s->want_val);
      break;
    case OP_GET:
      hit = tl_strmap_get(&m, s->key, &v);
      if (hit != s->want_hit) fail_msg("step %zu: get '%s': found %d", i, s->key, hit);
      if (hit && v != s->want_val) fail_msg("step %zu: get '%s': %zu, want %zu", i, s->key, v, s->want_val);
      break;
    }
    if (m.n != s->want_n) fail_msg("step %zu: n %zu, want %zu", i, m.n, s->want_n);
  }
  tl_strmap_release(&m);
}

/* An empty map allocates nothing, finds nothing, and releases. */
static void test_empty(void **state) {
  (void)state;
  tl_strmap m;
  tl_strmap_init(&m);
  assert_int_equal(m.n, 0);
  assert_int_equal(m.cap, 0);
  size_t v = 9;
  assert_false(tl_strmap_get(&m, "x", &v));
  assert_int_equal(v, 9); /* untouched */
  assert_false(tl_strmap_get(&m, "", NULL));
  assert_null(tl_strmap_stored_key(&m, "x"));
  tl_strmap_release(&m);
  tl_strmap_release(&m); /* twice: released is empty */
  assert_int_equal(m.cap, 0);
}

/* The out parameters may be NULL; a duplicate reports through *existing only. */
static void test_null_outs(void **state) {
  (void)state;
  tl_strmap m;
  tl_strmap_init(&m);
  assert_int_equal(tl_strmap_put(&m, "k", 3, NULL, NULL), TL_OK);
  assert_int_equal(tl_strmap_put(&m, "k", 4, NULL, NULL), TL_OK);
  size_t ex = 0;
  assert_int_equal(tl_strmap_put(&m, "k", 5, NULL, &ex), TL_OK);
  assert_int_equal(ex, 3);
  assert_int_equal(tl_strmap_add(&m, "k", 2, NULL), TL_OK);
  assert_true(tl_strmap_get(&m, "k", NULL));
  size_t v;
  assert_true(tl_strmap_get(&m, "k", &v));
  assert_int_equal(v, 5);
  assert_int_equal(m.n, 1);
  tl_strmap_release(&m);
}

/* Keys are copied: the caller's buffer may change or go; the stored key is the map's own. */
static void test_keys_copied(void **state) {
  (void)state;
  tl_strmap m;
  tl_strmap_init(&m);
  char buf[16];
  strcpy(buf, "alpha");
  assert_int_equal(tl_strmap_put(&m, buf, 1, NULL, NULL), TL_OK);
  const char *own = tl_strmap_stored_key(&m, "alpha");
  assert_non_null(own);
  assert_ptr_not_equal(own, buf);
  assert_string_equal(own, "alpha");
  strcpy(buf, "beta");
  assert_false(tl_strmap_get(&m, "beta", NULL));
  assert_true(tl_strmap_get(&m, "alpha", NULL));
  assert_null(tl_strmap_stored_key(&m, "beta"));
  /* counted keys are copied too */
  strcpy(buf, "gamma");
  assert_int_equal(tl_strmap_add(&m, buf, 1, NULL), TL_OK);
  strcpy(buf, "delta");
  assert_true(tl_strmap_get(&m, "gamma", NULL));
  assert_false(tl_strmap_get(&m, "delta", NULL));
  tl_strmap_release(&m);
}

/* Many keys through many rehashes (64 slots doubling to 32768): every key keeps its value,
 * the stored-key pointers stay valid and equal, the load stays at most 1/2, cap a power of 2.
 * Values are checked against the list they were put from. */
static void test_growth(void **state) {
  (void)state;
  enum { N = 12000 };
  tl_strmap m;
  tl_strmap_init(&m);
  static const char *kept[N];
  char key[32];
  for (size_t i = 0; i < N; i++) {
    snprintf(key, sizeof key, "key-%zu", i * 7919 % 100003);
    bool ins = false;
    assert_int_equal(tl_strmap_put(&m, key, i, &ins, NULL), TL_OK);
    if (!ins) fail_msg("key %zu ('%s') not inserted", i, key);
    kept[i] = tl_strmap_stored_key(&m, key);
    assert_non_null(kept[i]);
    assert_int_equal(m.n, i + 1);
    assert_true(m.cap && (m.cap & (m.cap - 1)) == 0);
    assert_true(m.n * 2 <= m.cap);
    if (i % 997 == 0) /* all earlier keys still there */
      for (size_t j = 0; j <= i; j++) {
        snprintf(key, sizeof key, "key-%zu", j * 7919 % 100003);
        size_t v = (size_t)-1;
        if (!tl_strmap_get(&m, key, &v) || v != j) fail_msg("after %zu puts: '%s' -> %zu, want %zu", i + 1, key, v, j);
      }
  }
  for (size_t i = 0; i < N; i++) {
    snprintf(key, sizeof key, "key-%zu", i * 7919 % 100003);
    size_t v = (size_t)-1;
    assert_true(tl_strmap_get(&m, key, &v));
    assert_int_equal(v, i);
    assert_ptr_equal(tl_strmap_stored_key(&m, key), kept[i]); /* stable across rehashes */
    assert_string_equal(kept[i], key);
    /* a second put of every key inserts nothing */
    bool ins = true;
    size_t ex = 0;
    assert_int_equal(tl_strmap_put(&m, key, 0, &ins, &ex), TL_OK);
    assert_false(ins);
    assert_int_equal(ex, i);
  }
  assert_int_equal(m.n, N);
  /* keys never put are absent (same prefix, numbers not in the set) */
  for (size_t i = 0; i < 1000; i++) {
    snprintf(key, sizeof key, "key-%zu", 100003 + i);
    assert_false(tl_strmap_get(&m, key, NULL));
  }
  /* counting through growth: every count is the number of adds */
  tl_strmap c;
  tl_strmap_init(&c);
  for (size_t r = 0; r < 3; r++)
    for (size_t i = 0; i < 3000; i++) {
      snprintf(key, sizeof key, "c%zu", i);
      size_t now = 0;
      assert_int_equal(tl_strmap_add(&c, key, i + 1, &now), TL_OK);
      assert_int_equal(now, (r + 1) * (i + 1));
    }
  assert_int_equal(c.n, 3000);
  tl_strmap_release(&c);
  tl_strmap_release(&m);
  assert_int_equal(m.n, 0);
}

/* Long keys (up to 1 MiB), keys differing in their last byte only, prefixes of one another. */
static void test_long_keys(void **state) {
  (void)state;
  static const size_t LENS[] = {1, 63, 64, 65, 255, 256, 4096, 65537, 1u << 20};
  enum { NL = sizeof LENS / sizeof LENS[0] };
  tl_strmap m;
  tl_strmap_init(&m);
  char *big = malloc((1u << 20) + 2);
  assert_non_null(big);
  for (size_t i = 0; i < (1u << 20) + 1; i++) big[i] = (char)('a' + i % 26);
  /* each length twice: ending in 'X' and in 'Y' */
  for (size_t k = 0; k < NL; k++)
    for (int last = 0; last < 2; last++) {
      char save = big[LENS[k]];
      big[LENS[k]] = 0;
      char save1 = big[LENS[k] - 1];
      big[LENS[k] - 1] = last ? 'Y' : 'X';
      bool ins = false;
      assert_int_equal(tl_strmap_put(&m, big, k * 2 + (size_t)last, &ins, NULL), TL_OK);
      assert_true(ins);
      big[LENS[k] - 1] = save1;
      big[LENS[k]] = save;
    }
  assert_int_equal(m.n, 2 * NL);
  for (size_t k = 0; k < NL; k++)
    for (int last = 0; last < 2; last++) {
      char save = big[LENS[k]];
      big[LENS[k]] = 0;
      char save1 = big[LENS[k] - 1];
      big[LENS[k] - 1] = last ? 'Y' : 'X';
      size_t v = (size_t)-1;
      if (!tl_strmap_get(&m, big, &v) || v != k * 2 + (size_t)last)
        fail_msg("key of %zu bytes ending %c: %zu", LENS[k], last ? 'Y' : 'X', v);
      const char *own = tl_strmap_stored_key(&m, big);
      assert_non_null(own);
      assert_int_equal(strlen(own), LENS[k]);
      assert_int_equal(memcmp(own, big, LENS[k]), 0);
      big[LENS[k] - 1] = 'Z'; /* same length, other last byte: absent */
      assert_false(tl_strmap_get(&m, big, NULL));
      big[LENS[k] - 1] = save1;
      big[LENS[k]] = save;
    }
  free(big);
  tl_strmap_release(&m);
}

/* Non-ASCII bytes are key bytes like any other (UTF-8 keys, high bytes). */
static void test_bytes(void **state) {
  (void)state;
  static const char *const K[] = {"caf\xc3\xa9", "cafe", "caf\xc3", "\xff", "\x01", "\x7f\x80"};
  enum { NK = sizeof K / sizeof K[0] };
  tl_strmap m;
  tl_strmap_init(&m);
  for (size_t i = 0; i < NK; i++) assert_int_equal(tl_strmap_put(&m, K[i], i, NULL, NULL), TL_OK);
  assert_int_equal(m.n, NK);
  for (size_t i = 0; i < NK; i++) {
    size_t v;
    assert_true(tl_strmap_get(&m, K[i], &v));
    assert_int_equal(v, i);
  }
  tl_strmap_release(&m);
}

/* A released map is empty and can be used again. */
static void test_reuse(void **state) {
  (void)state;
  tl_strmap m;
  tl_strmap_init(&m);
  for (int i = 0; i < 100; i++) {
    char k[8];
    snprintf(k, sizeof k, "%d", i);
    assert_int_equal(tl_strmap_put(&m, k, (size_t)i, NULL, NULL), TL_OK);
  }
  tl_strmap_release(&m);
  assert_int_equal(m.n, 0);
  assert_false(tl_strmap_get(&m, "5", NULL));
  bool ins = false;
  assert_int_equal(tl_strmap_put(&m, "5", 50, &ins, NULL), TL_OK);
  assert_true(ins);
  size_t v;
  assert_true(tl_strmap_get(&m, "5", &v));
  assert_int_equal(v, 50);
  assert_int_equal(m.n, 1);
  tl_strmap_release(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_script),    cmocka_unit_test(test_empty),
      cmocka_unit_test(test_null_outs), cmocka_unit_test(test_keys_copied),
      cmocka_unit_test(test_growth),    cmocka_unit_test(test_long_keys),
      cmocka_unit_test(test_bytes),     cmocka_unit_test(test_reuse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
