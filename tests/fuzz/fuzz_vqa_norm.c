/* fuzz_vqa_norm.c - libFuzzer target for VQA normalization and scoring (vqa_eval.h).
 *
 * Input: valid UTF-8 without NUL bytes (what the loaders let through: other inputs are rejected,
 * -1, not kept in the corpus). Every '|' splits it: the first part is the prediction, the next
 * ones (at most 16) the references; without a '|' there are no references.
 *
 * Checked, for the whole input and every part:
 *   - step 1, processPunctuation, processDigitArticle and the full normalization return TL_OK
 *     and valid UTF-8 with no NUL byte; step 1 leaves no '\n', '\t' nor outer whitespace;
 *     processPunctuation leaves none of the 21 marks and deletes at most 32 periods;
 *     processDigitArticle gives single-spaced words, none an article or a number word;
 *   - a text that is already single-spaced lower-case words, none of which processDigitArticle
 *     changes, with no mark and no '.', is left unchanged by the full normalization.
 * And for the prediction against the references, under each version:
 *   - no references: TL_EINPUT; else TL_OK, 0 <= acc <= TL_VQA_ACC_SCALE, acc is the closed form
 *     of (N, k) and exact (N <= 16), acc_py agrees with it, exact == (k > 0), one reference gives
 *     0; the soft accuracy is in [0, 1] and >= acc_py; tl_vqa_exact_match agrees with
 *     tl_vqa_score, and a second call gives the same (the workspace holds no state); for inputs
 *     up to SOFT_AGAIN_MAX bytes tl_vqa_soft agrees too and the second call repeats the soft
 *     accuracy (its edit distances are O(|a|*|b|): on longer inputs only one soft computation
 *     per version is made, so that no input nears libFuzzer's 5 s limit under ASan);
 *   - official and normalized agree whenever the prepared references are not all identical;
 *   - Python's repr of round(100*acc, 2) reads back as the same double. */
#include "fuzz_util.h"

#include <math.h>

#include "tally/str.h"
#include "vqa_eval.h"

static tl_vqa_ws *g_ws;

static void fz_free_all(void) { tl_vqa_ws_free(g_ws); }

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  tl_err err;
  if (tl_utf8_locale_check(&err) != TL_OK || !(g_ws = tl_vqa_ws_new())) {
    fprintf(stderr, "fuzz_vqa_norm: %s\n", err.msg);
    abort();
  }
  atexit(fz_free_all);
  return 0;
}

static const char MARKS[] = ";/[]\"{}()=+\\_-><@`,?!";

static int valid_text(const tl_buf *b) {
  return memchr(b->data, 0, b->len) == NULL && tl_utf8_valid(b->data, b->len, NULL) && b->data[b->len] == 0;
}

static size_t count_char(const char *s, size_t n, char c) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += s[i] == c;
  return k;
}

/* Whitespace code points of s[0..n) that are not a single ASCII space between two words. */
static int single_spaced(const char *s, size_t n) {
  size_t i = 0;
  int prev_space = 1; /* at the start, a space is not allowed */
  while (i < n) {
    uint32_t cp;
    size_t k = tl_utf8_decode(s + i, n - i, &cp);
    if (!k) return 0;
    if (tl_uni_isspace(cp)) {
      if (cp != ' ' || prev_space) return 0;
      prev_space = 1;
    } else {
      prev_space = 0;
    }
    i += k;
  }
  return n == 0 || !prev_space;
}

/* Calls fn(word) for each ' '-separated word of s[0..n); 0 as soon as one returns 0. */
static int each_word(const char *s, size_t n, int (*fn)(const char *, size_t)) {
  size_t b = 0;
  for (size_t i = 0; i <= n; i++)
    if (i == n || s[i] == ' ') {
      if (i > b && !fn(s + b, i - b)) return 0;
      b = i + 1;
    }
  return 1;
}

static int word_kept(const char *w, size_t n) {
  static const char *const BANNED[] = {"a", "an", "the", "none", "zero", "one", "two", "three", "four",
                                       "five", "six", "seven", "eight", "nine", "ten"};
  for (size_t i = 0; i < sizeof BANNED / sizeof BANNED[0]; i++)
    if (strlen(BANNED[i]) == n && !memcmp(w, BANNED[i], n)) return 0;
  return 1;
}

static int word_stays(const char *w, size_t n) { return !tl_vqa_word_changes(w, n); }

static void check_text(const char *s, size_t n) {
  tl_buf a, b, c, d;
  tl_buf_init(&a);
  tl_buf_init(&b);
  tl_buf_init(&c);
  tl_buf_init(&d);
  FZ_CHECK(tl_vqa_prepare(s, n, &a) == TL_OK && valid_text(&a));
  FZ_CHECK(!memchr(a.data, '\n', a.len) && !memchr(a.data, '\t', a.len));
  if (a.len) { /* no whitespace at either end */
    uint32_t cp;
    size_t k = tl_utf8_decode(a.data, a.len, &cp);
    FZ_CHECK(k && !tl_uni_isspace(cp));
    size_t e = a.len - 1;
    while (e > 0 && ((unsigned char)a.data[e] & 0xC0) == 0x80) e--;
    FZ_CHECK(tl_utf8_decode(a.data + e, a.len - e, &cp) && !tl_uni_isspace(cp));
  }
  FZ_CHECK(tl_vqa_punctuation(s, n, &b) == TL_OK && valid_text(&b));
  for (const char *m = MARKS; *m; m++) FZ_CHECK(!memchr(b.data, *m, b.len));
  FZ_CHECK(count_char(b.data, b.len, '.') + TL_VQA_PERIOD_COUNT >= count_char(s, n, '.'));
  FZ_CHECK(tl_vqa_digit_article(s, n, &c) == TL_OK && valid_text(&c));
  FZ_CHECK(single_spaced(c.data, c.len));
  FZ_CHECK(each_word(c.data, c.len, word_kept));
  FZ_CHECK(tl_vqa_normalize(s, n, &d) == TL_OK && valid_text(&d));
  FZ_CHECK(single_spaced(d.data, d.len));
  /* nothing to normalize: unchanged */
  char *low = tl_utf8_lower(s, n);
  FZ_CHECK(low != NULL);
  int plain = strlen(low) == n && !memcmp(low, s, n) && single_spaced(s, n) && !memchr(s, '.', n) &&
              each_word(s, n, word_stays);
  for (const char *m = MARKS; plain && *m; m++) plain = !memchr(s, *m, n);
  if (plain) FZ_CHECK(d.len == n && !memcmp(d.data, s, n));
  free(low);
  tl_buf_release(&a);
  tl_buf_release(&b);
  tl_buf_release(&c);
  tl_buf_release(&d);
}

static int same_result(const tl_vqa_result *x, const tl_vqa_result *y) {
  return x->acc == y->acc && x->k == y->k && x->exact == y->exact && x->normalized == y->normalized &&
         memcmp(&x->acc_py, &y->acc_py, sizeof x->acc_py) == 0 && memcmp(&x->soft, &y->soft, sizeof x->soft) == 0;
}

/* 1 when the prepared references are not all identical (official then normalizes). */
static int refs_differ(char *const *refs, size_t n) {
  tl_buf a, b;
  tl_buf_init(&a);
  tl_buf_init(&b);
  int differ = 0;
  FZ_CHECK(n == 0 || tl_vqa_prepare(refs[0], strlen(refs[0]), &a) == TL_OK);
  for (size_t i = 1; i < n && !differ; i++) {
    FZ_CHECK(tl_vqa_prepare(refs[i], strlen(refs[i]), &b) == TL_OK);
    differ = a.len != b.len || memcmp(a.data, b.data, a.len) != 0;
  }
  tl_buf_release(&a);
  tl_buf_release(&b);
  return differ;
}

#define SOFT_AGAIN_MAX 1024

static void check_score(const char *pred, char *const *refs, size_t n, size_t size) {
  const char *const *r = (const char *const *)refs;
  tl_vqa_result res[TL_VQA__COUNT];
  tl_err err;
  for (int v = 0; v < TL_VQA__COUNT; v++) {
    tl_vqa_result *x = &res[v], again;
    tl_status st = tl_vqa_score(g_ws, (tl_vqa_version)v, pred, r, n, TL_VQA_WANT_SOFT, x, &err);
    if (n == 0) {
      FZ_CHECK(st == TL_EINPUT);
      continue;
    }
    FZ_CHECK(st == TL_OK);
    FZ_CHECK(x->n_refs == n && x->k <= n && x->exact == (x->k > 0));
    FZ_CHECK(x->acc >= 0 && x->acc <= TL_VQA_ACC_SCALE && !x->rounded);
    FZ_CHECK(x->acc == tl_vqa_acc_units(n, x->k, NULL));
    FZ_CHECK(fabs(x->acc_py - (double)x->acc / (double)TL_VQA_ACC_SCALE) < 1e-12);
    if (n == 1) FZ_CHECK(x->acc == 0 && x->soft == 0.0);
    FZ_CHECK(x->soft >= 0.0 && x->soft <= 1.0 && x->soft >= x->acc_py);
    int m;
    FZ_CHECK(tl_vqa_exact_match(g_ws, (tl_vqa_version)v, pred, r, n, &m, &err) == TL_OK && m == x->exact);
    int small = size <= SOFT_AGAIN_MAX;
    if (small) {
      double soft;
      FZ_CHECK(tl_vqa_soft(g_ws, (tl_vqa_version)v, pred, r, n, &soft, NULL, &err) == TL_OK);
      FZ_CHECK(memcmp(&soft, &x->soft, sizeof soft) == 0);
    }
    FZ_CHECK(tl_vqa_score(g_ws, (tl_vqa_version)v, pred, r, n, small ? TL_VQA_WANT_SOFT : 0, &again, &err) == TL_OK);
    if (!small) again.soft = x->soft;
    FZ_CHECK(same_result(x, &again));
    char buf[64];
    double shown = tl_vqa_py_round2(100.0 * x->acc_py);
    tl_vqa_py_repr(shown, buf, sizeof buf);
    FZ_CHECK(strtod(buf, NULL) == shown);
  }
  if (n > 0 && refs_differ(refs, n))
    FZ_CHECK(same_result(&res[TL_VQA_OFFICIAL], &res[TL_VQA_NORMALIZED]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *in = (const char *)data;
  if (memchr(in, 0, size) || !tl_utf8_valid(in, size, NULL)) return -1;
  check_text(in, size);
  enum { MAX_PARTS = 17 };
  char *parts[MAX_PARTS];
  size_t np = 0, b = 0;
  for (size_t i = 0; i <= size && np < MAX_PARTS; i++)
    if (i == size || in[i] == '|') {
      parts[np] = tl_strndup(in + b, i - b);
      FZ_CHECK(parts[np] != NULL);
      check_text(parts[np], i - b);
      np++;
      b = i + 1;
    }
  check_score(parts[0], parts + 1, np - 1, size);
  for (size_t i = 0; i < np; i++) free(parts[i]);
  return 0;
}
