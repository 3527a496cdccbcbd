/* test_vqa_eval.c - VQA accuracy (vqa_eval.h) and the VQA loaders and report (vqa_data.h).
 *
 * Fixture group: version names; the Unicode digit table against PCRE2's \d on every code point;
 * step 1, processPunctuation (conditions on the original text, commaStrip, the lookahead typo,
 * the 32-period limit, Unicode digits), processDigitArticle (manualMap, articles, the 120
 * contractions with their never-matching keys, Unicode lower-casing and whitespace); the exact
 * integer accuracy against a rational computation for every N <= 20 and k, rounding above;
 * Python's double accuracy; the per-question quirks and how the three versions differ ('Black.'
 * vs 10x 'black', 'none' vs 'none', unprepared references in 2017, single reference, N = 3 k = 2);
 * exact match; the soft accuracy and the Levenshtein distance (code points, the cut); Python's
 * round() and repr(); the loaders on small files with every kind of bad input, with their lines,
 * strict input, the JSONL item form and its id order, and the report's contents and key order.
 * Shared group: every normalization probe and accuracy case of
 * ../shared/data/vqa/vqa_eval_vectors.json and its overall; the four smallval prediction sets
 * of vqa_eval_smallval_results.json (overall, perAnswerType, first10_perQuestion), built from
 * the annotations as PROVENANCE.md describes. */
#define _POSIX_C_SOURCE 200809L /* open_memstream, mkdtemp */
#include "testutil.h"
#include "tu_tmp.h"

#include <math.h>
#include <unistd.h>

#include "tally/inlog.h"
#include "tally/rx.h"
#include "tally/str.h"
#include "vqa_data.h"
#include "vqa_eval.h"

static tl_vqa_ws *WS;

static int setup(void **state) {
  (void)state;
  tl_err err;
  if (tl_utf8_locale_check(&err) != TL_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  return (WS = tl_vqa_ws_new()) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  tl_vqa_ws_free(WS);
  return 0;
}

#define S TL_VQA_ACC_SCALE

/* ---- the workspace's memo (tl_vqa_ws_memo) ---------------------------------------------------- */

/* Scores q against a workspace with the memo and one without; every field must agree. */
static void expect_memo_same(tl_vqa_ws *memo, tl_vqa_ws *plain, tl_vqa_version v, const char *pred,
                             const char *const *refs, size_t n) {
  tl_vqa_result a, b;
  tl_err err;
  assert_int_equal(tl_vqa_score(memo, v, pred, refs, n, TL_VQA_WANT_SOFT, &a, &err), TL_OK);
  assert_int_equal(tl_vqa_score(plain, v, pred, refs, n, TL_VQA_WANT_SOFT, &b, &err), TL_OK);
  if (a.acc != b.acc || a.k != b.k || a.normalized != b.normalized || a.exact != b.exact ||
      memcmp(&a.acc_py, &b.acc_py, sizeof a.acc_py) != 0 || memcmp(&a.soft, &b.soft, sizeof a.soft) != 0)
    fail_msg("'%s' (version %d): the memo gives k %zu acc %.17g soft %.17g, without it k %zu acc %.17g soft %.17g",
             pred, (int)v, a.k, a.acc_py, a.soft, b.k, b.acc_py, b.soft);
}

/* The same questions, each asked several times in turn (hits, texts whose normalized form is
 * empty or longer, all three versions), then more distinct texts than the memo keeps (it stops
 * keeping and still gives the same values). */
static void test_memo(void **state) {
  (void)state;
  tl_vqa_ws *memo = tl_vqa_ws_new(), *plain = tl_vqa_ws_new();
  assert_non_null(memo);
  assert_non_null(plain);
  tl_vqa_ws_memo(memo);
  static const char *const R1[] = {"black", "Black.", "the black", "dark", "black", "black", "black", "none", "zero", "dont"};
  static const char *const R2[] = {"2", "two", "Two.", "2", "2", "2", "2", "2", "2", "2"};
  static const char *const R3[] = {"yes", "yes", "yes"};
  static const char *const P[] = {"black", "Black.", "the", "", "  none ", "TWO", "2", "dont know", "yes!", "x-ray, 1,000"};
  for (int round = 0; round < 3; round++)
    for (size_t p = 0; p < sizeof P / sizeof P[0]; p++)
      for (int v = 0; v < TL_VQA__COUNT; v++) {
        expect_memo_same(memo, plain, (tl_vqa_version)v, P[p], R1, 10);
        expect_memo_same(memo, plain, (tl_vqa_version)v, P[p], R2, 10);
        expect_memo_same(memo, plain, (tl_vqa_version)v, P[p], R3, 3);
      }
  char pred[64], ref[64];
  for (int i = 0; i < 140000; i++) { /* past the 131,072 texts it keeps */
    snprintf(pred, sizeof pred, "The %d-Dogs.", i);
    snprintf(ref, sizeof ref, "%d dogs", i % 9973);
    const char *refs[] = {ref, "dogs", ref};
    expect_memo_same(memo, plain, TL_VQA_OFFICIAL, pred, refs, 3);
  }
  for (size_t p = 0; p < sizeof P / sizeof P[0]; p++) expect_memo_same(memo, plain, TL_VQA_OFFICIAL, P[p], R1, 10);
  tl_vqa_ws_free(memo);
  tl_vqa_ws_free(plain);
}

/* ---- names ---------------------------------------------------------------------------------- */

static void test_names(void **state) {
  (void)state;
  for (int v = 0; v < TL_VQA__COUNT; v++)
    assert_int_equal(tl_vqa_version_from_name(tl_vqa_version_name((tl_vqa_version)v)), v);
  assert_string_equal(tl_vqa_version_name(TL_VQA_OFFICIAL), "official");
  assert_string_equal(tl_vqa_version_name(TL_VQA_2017), "2017");
  assert_string_equal(tl_vqa_version_name(TL_VQA_NORMALIZED), "normalized");
  assert_int_equal(tl_vqa_version_from_name("Official"), -1);
  assert_int_equal(tl_vqa_version_from_name("2021"), -1);
  assert_int_equal(tl_vqa_version_from_name(""), -1);
  assert_int_equal(tl_vqa_version_from_name(NULL), -1);
  assert_string_equal(tl_vqa_version_name((tl_vqa_version)7), "?");
}

/* ---- Unicode digits ---------------------------------------------------------------------- */

/* Python's \d is Unicode Nd; PCRE2 with UCP (tl_rx) is the project's model of Python's re. */
static void test_digit_table(void **state) {
  (void)state;
  tl_err err;
  tl_rx *d = tl_rx_compile("\\d", 0, &err);
  assert_non_null(d);
  tl_buf b;
  tl_buf_init(&b);
  long ndig = 0;
  for (uint32_t cp = 0; cp < 0x110000; cp++) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    tl_buf_reset(&b);
    assert_int_equal(tl_utf8_append(&b, cp), TL_OK);
    tl_rx_match m;
    int r = tl_rx_match_at(d, b.data, b.len, 0, &m);
    assert_true(r == 0 || r == 1);
    if (r != tl_vqa_is_digit(cp)) fail_msg("U+%04X: PCRE2 \\d %d, table %d", cp, r, tl_vqa_is_digit(cp));
    ndig += r;
  }
  print_message("%ld Unicode decimal digits\n", ndig);
  assert_int_equal(ndig, 660); /* Unicode 14.0: 61 runs of 10 and the 50 mathematical digits */
  tl_buf_release(&b);
  tl_rx_free(d);
}

/* ---- normalization -------------------------------------------------------------------------- */

typedef tl_status (*norm_fn)(const char *, size_t, tl_buf *);

static void expect_norm(norm_fn f, const char *name, const char *in, const char *want) {
  tl_buf b;
  tl_buf_init(&b);
  assert_int_equal(f(in, strlen(in), &b), TL_OK);
  if (strcmp(b.data, want) != 0) fail_msg("%s('%s') = '%s', want '%s'", name, in, b.data, want);
  assert_int_equal(b.len, strlen(want));
  tl_buf_release(&b);
}

static void test_prepare(void **state) {
  (void)state;
  static const char *const C[][2] = {
      {"  yes\n", "yes"}, {"a\tb", "a b"}, {"a\nb", "a b"}, {"\t\n ", ""}, {"", ""},
      {"a\rb", "a\rb"},                                  /* only \n and \t are replaced */
      {"\xe3\x80\x80x\xc2\xa0", "x"},                    /* U+3000, U+00A0: Unicode strip() */
      {"\x1f" "x" "\x1c", "x"},                          /* Python counts U+001C..U+001F */
      {"\xe2\x80\x8bx", "\xe2\x80\x8bx"},                /* U+200B is not whitespace */
      {"\xc2\xa0x y", "x y"},                            /* a Unicode space, then an ASCII end */
      {" x\xc3\xa9", "x\xc3\xa9"},                          /* a non-ASCII end that is no space */
      {"\n", ""}, {" \xc2\xa0", ""}, {"x ", "x"},
  };
  for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) expect_norm(tl_vqa_prepare, "prepare", C[i][0], C[i][1]);
}

static void test_punctuation(void **state) {
  (void)state;
  static const char *const C[][2] = {
      {"Black.", "Black"}, {"yes!", "yes "}, {"what?!", "what  "}, {"1,000", "1000"},
      {"red,white", "red white"}, {"red, white", "red white"}, {"yes ,no", "yes no"},
      {"x-ray", "x ray"}, {"3/4", "3 4"}, {"(left)", " left "}, {"10:30", "10:30"},
      {"50%", "50%"}, {"$5", "$5"}, {"a&w", "a&w"}, {"it's", "it's"}, {"#1", "#1"},
      /* periodStrip's lookahead typo: a '.' goes unless a digit follows it */
      {"2.5", "2.5"}, {"3.", "3"}, {"3.5.", "3.5"}, {"a.m.", "am"}, {"U.S.A.", "USA"},
      {"..", ""}, {"..5", ".5"}, {".5.", ".5"},
      /* conditions test the ORIGINAL text: ';' becomes ' ', and the resulting " _" does not
       * make '_' deleted */
      {"a;_b", "a  b"}, {"a-b c -d", "ab c d"}, {"a- b-c", "a bc"},
      /* one digit,digit anywhere deletes every mark */
      {"1,2 (x)-y", "12 xy"}, {"a,b", "a b"},
      /* Unicode digits (Python's \d): Arabic-Indic 1,2 and a '.' before a fullwidth 3 */
      {"\xd9\xa1,\xd9\xa2 (x)", "\xd9\xa1\xd9\xa2 x"}, {"x.\xef\xbc\x93.", "x.\xef\xbc\x93"},
      /* non-ASCII and marks outside the list are kept */
      {"caf\xc3\xa9!", "caf\xc3\xa9 "}, {"a'b:c*d^e~f|g", "a'b:c*d^e~f|g"},
      {"{a}[b]<c>=d+e\\f_g@h`i\"j", " a  b  c  d e f g h i j"},
  };
  for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) expect_norm(tl_vqa_punctuation, "punct", C[i][0], C[i][1]);
  /* at most 32 periods: 40 of them leave 8 */
  char in[64];
  memset(in, '.', 40);
  in[40] = 0;
  expect_norm(tl_vqa_punctuation, "punct", in, "........");
  /* 34 "x." tokens keep the last two periods */
  tl_buf b, want;
  tl_buf_init(&b);
  tl_buf_init(&want);
  for (int i = 0; i < 34; i++) tl_buf_puts(&b, i ? " x." : "x.");
  for (int i = 0; i < 34; i++) tl_buf_puts(&want, i ? (i >= 32 ? " x." : " x") : "x");
  expect_norm(tl_vqa_punctuation, "punct", b.data, want.data);
  tl_buf_release(&b);
  tl_buf_release(&want);
}

static void test_digit_article(void **state) {
  (void)state;
  static const char *const C[][2] = {
      {"The Cat", "cat"}, {"a dog", "dog"}, {"an apple", "apple"}, {"the", ""}, {"a", ""},
      {"none", "0"}, {"zero", "0"}, {"Two dogs", "2 dogs"}, {"ten", "10"}, {"eleven", "eleven"},
      {"one one", "1 1"}, {"dont know", "don't know"}, {"Dont", "don't"}, {"hes here", "he's here"},
      {"I'm", "i'm"}, {"Im", "im"}, {"Ive", "ive"}, {"I'dve", "i'dve"}, {"Id've", "id've"},
      {"somebody'd", "somebodyd"}, {"twas", "'twas"}, {"yall'd've", "y'all'd've"},
      {"let's", "let's"}, {"ow's'at", "'ow's'at"}, {"youve", "you've"}, {"aint", "ain't"},
      {"  a  b \t c  ", "b c"}, {"x\xc2\xa0y\xe3\x80\x80z", "x y z"}, /* Unicode whitespace */
      {"\xc3\x89" "COLE", "\xc3\xa9" "cole"}, {"\xc4\xb0", "i\xcc\x87"}, /* É, İ as Python */
      {"\xce\x91\xce\x92", "\xce\xb1\xce\xb2"},                        /* Greek */
      {"THE NONE", "0"}, {"An", ""},
  };
  for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) expect_norm(tl_vqa_digit_article, "digit_article", C[i][0], C[i][1]);
  expect_norm(tl_vqa_normalize, "normalize", "  The Cat.\n", "cat");
  expect_norm(tl_vqa_normalize, "normalize", "one.", "1");
  expect_norm(tl_vqa_normalize, "normalize", "e.g. this", "eg this");
  /* the word classifier used by the fuzz target */
  assert_true(tl_vqa_word_changes("none", 4));
  assert_true(tl_vqa_word_changes("the", 3));
  assert_true(tl_vqa_word_changes("dont", 4));
  assert_false(tl_vqa_word_changes("let's", 5)); /* maps to itself */
  assert_false(tl_vqa_word_changes("im", 2));    /* the key "Im" never matches */
  assert_false(tl_vqa_word_changes("cat", 3));
  assert_false(tl_vqa_word_changes("eleven", 6));
}

/* ---- accuracy -------------------------------------------------------------------------------- */

static uint64_t gcd64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* For every N <= 20 and k: the units equal the rational mean over i of min(1, (k-e_i)/3),
 * computed here as an exact fraction; above 20, rounding half to even with the flag. */
static void test_acc_units(void **state) {
  (void)state;
  for (size_t n = 1; n <= TL_VQA_EXACT_REFS; n++)
    for (size_t k = 0; k <= n; k++) {
      /* sum over i of min(3, k - e_i) / (3n): k terms with e_i = 1, n - k with e_i = 0 */
      uint64_t num = 0;
      for (size_t i = 0; i < n; i++) {
        size_t c = k - (i < k ? 1 : 0);
        num += c < 3 ? c : 3;
      }
      uint64_t den = 3 * n, g = gcd64(num, den);
      uint64_t p = num / g, q = den / g; /* acc = p/q in lowest terms */
      int rounded = -1;
      int64_t u = tl_vqa_acc_units(n, k, &rounded);
      assert_int_equal(rounded, 0);
      assert_true((uint64_t)S % q == 0);                 /* exact: q divides the scale */
      assert_int_equal((uint64_t)u * q, (uint64_t)S * p); /* u / S == p / q */
      /* Python's doubles agree to the last bits */
      unsigned char eq[20];
      for (size_t i = 0; i < n; i++) eq[i] = i >= n - k; /* matches last: another order */
      double py = tl_vqa_acc_python(eq, n);
      assert_true(fabs(py - (double)u / (double)S) < 1e-15);
    }
  /* the closed forms of the spec */
  for (size_t k = 0; k <= 10; k++) {
    int64_t want = k >= 4 ? S : (int64_t)k * (S * 3 / 10);
    assert_int_equal(tl_vqa_acc_units(10, k, NULL), want); /* min(1, 0.3k) */
  }
  assert_int_equal(tl_vqa_acc_units(3, 2, NULL), S * 4 / 9);
  assert_int_equal(tl_vqa_acc_units(1, 1, NULL), 0);
  assert_int_equal(tl_vqa_acc_units(1, 0, NULL), 0);
  assert_int_equal(tl_vqa_acc_units(0, 0, NULL), -1);
  assert_int_equal(tl_vqa_acc_units(3, 4, NULL), -1);
  assert_int_equal(tl_vqa_acc_units(TL_VQA_MAX_REFS + 1, 1, NULL), -1);
  /* above 20: exact where 3N divides the scale (N = 21, 24), else rounded half to even */
  for (size_t n = 21; n <= 200; n++)
    for (size_t k = 0; k <= n; k++) {
      uint64_t t = k ? k * (k - 1 < 3 ? k - 1 : 3) + (n - k) * (k < 3 ? k : 3) : 0;
      uint64_t d = 3 * n, whole = (uint64_t)S * t / d, rem = (uint64_t)S * t % d;
      uint64_t want = whole + (2 * rem > d || (2 * rem == d && (whole & 1)));
      int rounded;
      assert_int_equal(tl_vqa_acc_units(n, k, &rounded), (int64_t)want);
      assert_int_equal(rounded, rem != 0);
    }
  int rounded;
  tl_vqa_acc_units(21, 1, &rounded);
  assert_int_equal(rounded, 0);
  tl_vqa_acc_units(23, 1, &rounded);
  assert_int_equal(rounded, 1);
  /* Python's order: acc_i summed left to right */
  unsigned char eq3[] = {1, 1, 0};
  assert_true(tl_vqa_acc_python(eq3, 3) == ((0.0 + 1.0 / 3.0) + 1.0 / 3.0 + 2.0 / 3.0) / 3.0);
  assert_true(tl_vqa_acc_python(eq3, 0) == 0.0);
}

/* Scores pred against refs under v, checking the units and the exact-match flag. */
static void expect_score(tl_vqa_version v, const char *pred, const char *const *refs, size_t n,
                         int64_t units, int exact, const char *where) {
  tl_vqa_result r;
  tl_err err;
  assert_int_equal(tl_vqa_score(WS, v, pred, refs, n, TL_VQA_WANT_SOFT, &r, &err), TL_OK);
  if (r.acc != units || r.exact != exact)
    fail_msg("%s (%s): acc %lld exact %d, want %lld exact %d", where, tl_vqa_version_name(v),
             (long long)r.acc, r.exact, (long long)units, exact);
  assert_true(fabs(r.acc_py - (double)r.acc / (double)S) < 1e-15);
  assert_true(r.soft >= r.acc_py && r.soft <= 1.0);
  int m;
  assert_int_equal(tl_vqa_exact_match(WS, v, pred, refs, n, &m, &err), TL_OK);
  assert_int_equal(m, exact);
}

static void test_quirks(void **state) {
  (void)state;
  const char *black10[10], *none10[10];
  for (int i = 0; i < 10; i++) {
    black10[i] = "black";
    none10[i] = "none";
  }
  /* all-identical references are not normalized by the official script */
  expect_score(TL_VQA_OFFICIAL, "Black.", black10, 10, 0, 0, "Black. vs 10x black");
  expect_score(TL_VQA_2017, "Black.", black10, 10, S, 1, "Black. vs 10x black");
  expect_score(TL_VQA_NORMALIZED, "Black.", black10, 10, S, 1, "Black. vs 10x black");
  expect_score(TL_VQA_OFFICIAL, "black", black10, 10, S, 1, "black vs 10x black");
  const char *black9[] = {"black", "black", "black", "black", "black", "black", "black", "black", "black", "dark"};
  expect_score(TL_VQA_OFFICIAL, "Black.", black9, 10, S, 1, "Black. vs 9x black");
  /* 'none' -> '0': 2017 never matched an identical 'none' (VQA issue #7) */
  expect_score(TL_VQA_OFFICIAL, "none", none10, 10, S, 1, "none vs 10x none");
  expect_score(TL_VQA_2017, "none", none10, 10, 0, 0, "none vs 10x none");
  expect_score(TL_VQA_NORMALIZED, "none", none10, 10, S, 1, "none vs 10x none");
  const char *nz[] = {"none", "zero", "zero", "nothing", "nothing", "nothing", "nothing", "nothing", "nothing", "nothing"};
  expect_score(TL_VQA_OFFICIAL, "none", nz, 10, S * 9 / 10, 1, "none vs none/zero/nothing");
  expect_score(TL_VQA_2017, "none", nz, 10, 0, 0, "none vs none/zero/nothing");
  /* 2017 does not prepare the references: ' yes' stays ' yes' */
  const char *sp[] = {" yes", " yes", " yes", "no"};
  expect_score(TL_VQA_OFFICIAL, "yes", sp, 4, S * 3 / 4, 1, "yes vs ' yes'");
  expect_score(TL_VQA_2017, "yes", sp, 4, 0, 0, "yes vs ' yes'");
  expect_score(TL_VQA_NORMALIZED, "yes", sp, 4, S * 3 / 4, 1, "yes vs ' yes'");
  /* 2017: references get processPunctuation only (no lower-casing, no articles) */
  const char *cap[] = {"Yes", "Yes", "Yes", "no"};
  expect_score(TL_VQA_2017, "Yes", cap, 4, 0, 0, "Yes vs Yes (2017 lower-cases the prediction only)");
  expect_score(TL_VQA_OFFICIAL, "Yes", cap, 4, S * 3 / 4, 1, "Yes vs Yes");
  /* a single reference always scores 0, even when it matches */
  const char *one[] = {"cat"};
  for (int v = 0; v < TL_VQA__COUNT; v++) expect_score((tl_vqa_version)v, "cat", one, 1, 0, 1, "single reference");
  /* N = 3, k = 2: 4/9 */
  const char *three[] = {"cat", "cat", "dog"};
  expect_score(TL_VQA_OFFICIAL, "cat", three, 3, S * 4 / 9, 1, "N=3 k=2");
  /* 1,000 normalizes to 1000; digit words */
  const char *th[] = {"1000", "1000", "1000", "one thousand", "one thousand", "one thousand", "one thousand", "one thousand", "one thousand", "one thousand"};
  expect_score(TL_VQA_OFFICIAL, "1,000", th, 10, S * 9 / 10, 1, "1,000");
  const char *two[] = {"two", "two", "2", "three", "three", "three", "three", "three", "three", "three"};
  expect_score(TL_VQA_OFFICIAL, "2", two, 10, S * 9 / 10, 1, "2 vs two");
  expect_score(TL_VQA_2017, "2", two, 10, S * 3 / 10, 1, "2 vs two (2017: GT digit words kept)");
  /* contractions */
  const char *dk[] = {"don't know", "don't know", "don't know", "unknown", "unknown", "unknown", "unknown", "unknown", "unknown", "unknown"};
  expect_score(TL_VQA_OFFICIAL, "Dont know", dk, 10, S * 9 / 10, 1, "Dont know");
  /* step 1 on the prediction */
  const char *yes10[] = {"yes", "yes", "yes", "yes", "yes", "Yes", "Yes", "Yes", "Yes", "Yes"};
  expect_score(TL_VQA_OFFICIAL, "  yes\n", yes10, 10, S, 1, "whitespace");
  /* errors */
  tl_vqa_result r;
  tl_err err;
  assert_int_equal(tl_vqa_score(WS, TL_VQA_OFFICIAL, "x", one, 0, 0, &r, &err), TL_EINPUT);
  assert_non_null(strstr(err.msg, "no reference"));
  const char *withnull[] = {"a", NULL};
  assert_int_equal(tl_vqa_score(WS, TL_VQA_OFFICIAL, "x", withnull, 2, 0, &r, &err), TL_EINPUT);
  assert_int_equal(tl_vqa_score(WS, TL_VQA_OFFICIAL, NULL, one, 1, 0, &r, &err), TL_EINPUT);
  assert_int_equal(tl_vqa_score(WS, (tl_vqa_version)9, "x", one, 1, 0, &r, &err), TL_EINPUT);
}

/* ---- soft accuracy --------------------------------------------------------------------------- */

static void test_levenshtein(void **state) {
  (void)state;
  struct {
    const char *a, *b;
    size_t d, lb;
  } C[] = {{"kitten", "sitting", 3, 7}, {"", "", 0, 0}, {"abc", "", 3, 0}, {"", "abc", 3, 3},
           {"na\xc3\xafve", "naive", 1, 5},               /* code points, not bytes */
           {"\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5", 1, 1}, {"flaw", "lawn", 2, 4},
           {"abc", "abc", 0, 3}};
  for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
    size_t d, lb;
    int cut = -1;
    assert_int_equal(tl_vqa_levenshtein(WS, C[i].a, strlen(C[i].a), C[i].b, strlen(C[i].b), &d, &lb, &cut), TL_OK);
    if (d != C[i].d || lb != C[i].lb) fail_msg("lev('%s','%s') = %zu/%zu", C[i].a, C[i].b, d, lb);
    assert_int_equal(cut, 0);
    assert_int_equal(tl_vqa_levenshtein(WS, C[i].b, strlen(C[i].b), C[i].a, strlen(C[i].a), &d, &lb, &cut), TL_OK);
    assert_int_equal(d, C[i].d); /* symmetric */
  }
  /* the cut: both strings past 4096 code points compare their first 4096 */
  size_t n = TL_VQA_LEV_MAX_CP + 100;
  char *a = malloc(n + 1), *b = malloc(n + 1);
  memset(a, 'a', n);
  memset(b, 'a', n);
  a[n] = b[n] = 0;
  b[n - 1] = 'b';
  size_t d, lb;
  int cut;
  assert_int_equal(tl_vqa_levenshtein(WS, a, n, b, n, &d, &lb, &cut), TL_OK);
  assert_int_equal(d, 0);
  assert_int_equal(lb, TL_VQA_LEV_MAX_CP);
  assert_int_equal(cut, 1);
  b[10] = 'c';
  assert_int_equal(tl_vqa_levenshtein(WS, a, n, b, 20, &d, &lb, &cut), TL_OK);
  assert_int_equal(d, TL_VQA_LEV_MAX_CP - 19);
  free(a);
  free(b);
}

static void test_soft(void **state) {
  (void)state;
  double s;
  int cut;
  tl_err err;
  /* cats vs {cat, dog, dog}: s = {2/3, 0, 0} */
  const char *r1[] = {"cat", "dog", "dog"};
  assert_int_equal(tl_vqa_soft(WS, TL_VQA_OFFICIAL, "cats", r1, 3, &s, &cut, &err), TL_OK);
  double s0 = 1.0 - 1.0 / 3.0;
  double want = ((0.0 + s0 / 3.0) + s0 / 3.0) / 3.0;
  assert_true(s == want);
  assert_int_equal(cut, 0);
  /* identical strings: the exact accuracy */
  const char *r2[] = {"cat", "cat", "dog"};
  assert_int_equal(tl_vqa_soft(WS, TL_VQA_OFFICIAL, "cat", r2, 3, &s, &cut, &err), TL_OK);
  unsigned char eq[] = {1, 1, 0};
  assert_true(s == tl_vqa_acc_python(eq, 3)); /* s_dog = 0: lev(cat, dog) = 3 */
  /* empty references: s = 1 only for an empty prediction */
  const char *r3[] = {"", "", "x"};
  assert_int_equal(tl_vqa_soft(WS, TL_VQA_OFFICIAL, "", r3, 3, &s, NULL, &err), TL_OK);
  assert_true(s == (0.0 + 1.0 / 3.0 + 1.0 / 3.0 + 2.0 / 3.0) / 3.0 || fabs(s - 4.0 / 9.0) < 1e-15);
  assert_int_equal(tl_vqa_soft(WS, TL_VQA_OFFICIAL, "y", r3, 3, &s, NULL, &err), TL_OK);
  assert_true(s == 0.0); /* lev(y, x) = 1 = len: 0; empty refs: 0 */
  /* one reference: 0 */
  assert_int_equal(tl_vqa_soft(WS, TL_VQA_OFFICIAL, "cat", r1, 1, &s, NULL, &err), TL_OK);
  assert_true(s == 0.0);
  /* the version's normalization applies: 'Black.' vs 10x 'black' is raw under official */
  const char *b10[10];
  for (int i = 0; i < 10; i++) b10[i] = "black";
  assert_int_equal(tl_vqa_soft(WS, TL_VQA_OFFICIAL, "Black.", b10, 10, &s, NULL, &err), TL_OK);
  assert_true(s == 1.0); /* s_j = 1 - 2/5: nine of them is over 3 */
  const char *b3[] = {"black", "white", "white", "white"};
  assert_int_equal(tl_vqa_soft(WS, TL_VQA_OFFICIAL, "blac", b3, 4, &s, NULL, &err), TL_OK);
  assert_true(fabs(s - 0.8 / 3.0 * 3.0 / 4.0) < 1e-15); /* three of i see 0.8, one sees 0 */
  assert_int_equal(tl_vqa_soft(WS, TL_VQA_OFFICIAL, "x", r1, 0, &s, NULL, &err), TL_EINPUT);
  /* >= the exact accuracy on generated cases */
  static const char *const W[] = {"cat", "cats", "dog", "", "The cat", "a", "c4t", "cat."};
  uint32_t seed = 12345;
  for (int t = 0; t < 2000; t++) {
    const char *refs[12];
    size_t n = 1 + (seed >> 7) % 12;
    for (size_t i = 0; i < n; i++) {
      seed = seed * 1103515245u + 12345u;
      refs[i] = W[(seed >> 9) % 8];
    }
    seed = seed * 1103515245u + 12345u;
    const char *pred = W[(seed >> 9) % 8];
    for (int v = 0; v < TL_VQA__COUNT; v++) {
      tl_vqa_result r;
      assert_int_equal(tl_vqa_score(WS, (tl_vqa_version)v, pred, refs, n, TL_VQA_WANT_SOFT, &r, &err), TL_OK);
      assert_true(r.soft >= r.acc_py && r.soft <= 1.0 && r.soft >= 0.0);
      double alone;
      assert_int_equal(tl_vqa_soft(WS, (tl_vqa_version)v, pred, refs, n, &alone, NULL, &err), TL_OK);
      assert_true(alone == r.soft);
    }
  }
}

/* ---- Python numbers --------------------------------------------------------------------------- */

static void test_python_numbers(void **state) {
  (void)state;
  struct {
    double x, r;
  } R[] = {{0.125, 0.12}, {0.375, 0.38}, {2.675, 2.67}, {100.0 / 3.0, 33.33}, {200.0 / 3.0, 66.67},
           {44.444444444444, 44.44}, {0.005, 0.01}, {0.015, 0.01}, {1.005, 1.0}, {-0.001, -0.0},
           {100.0, 100.0}, {0.0, 0.0}};
  for (size_t i = 0; i < sizeof R / sizeof R[0]; i++)
    if (tl_vqa_py_round2(R[i].x) != R[i].r) fail_msg("round(%.17g, 2) = %.17g", R[i].x, tl_vqa_py_round2(R[i].x));
  struct {
    double x;
    const char *s;
  } P[] = {{84.33, "84.33"}, {100.0, "100.0"}, {0.0, "0.0"}, {-0.0, "-0.0"}, {44.44, "44.44"},
           {0.1, "0.1"}, {1e16, "1e+16"}, {1e-05, "1e-05"}, {0.0001, "0.0001"}, {1.5e-07, "1.5e-07"},
           {123456789.0, "123456789.0"}, {1.5e300, "1.5e+300"}, {-2.5, "-2.5"}, {1e22, "1e+22"},
           {9999999999999998.0, "9999999999999998.0"}, {0.30000000000000004, "0.30000000000000004"},
           {5e-324, "5e-324"}, {1.7976931348623157e308, "1.7976931348623157e+308"}, {96.2, "96.2"},
           {NAN, "NaN"}, {INFINITY, "Infinity"}, {-INFINITY, "-Infinity"}};
  for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
    char buf[64];
    int n = tl_vqa_py_repr(P[i].x, buf, sizeof buf);
    if (strcmp(buf, P[i].s) != 0) fail_msg("repr(%.17g) = '%s', want '%s'", P[i].x, buf, P[i].s);
    assert_int_equal(n, (int)strlen(P[i].s));
  }
}

/* ---- loaders ----------------------------------------------------------------------------------- */


/* 1 when the log has a problem of kind `kind` at `line` whose message holds `sub`. */
static int has_problem(const tl_inlog *l, const char *kind, long line, const char *sub) {
  const tl_table *t = l->table;
  for (size_t r = 0; r < t->nrows; r++)
    if (!strcmp(t->cols[0].v.s[r], kind) && t->cols[2].v.i[r] == line && strstr(t->cols[3].v.s[r], sub)) return 1;
  return 0;
}

#define EXPECT_PROBLEM(log, kind, line, sub)                                                  \
  do {                                                                                        \
    if (!has_problem(&(log), kind, line, sub)) {                                              \
      for (size_t r_ = 0; r_ < (log).table->nrows; r_++)                                      \
        print_message("  have %s %ld %s\n", (log).table->cols[0].v.s[r_],                     \
                      (long)(log).table->cols[2].v.i[r_], (log).table->cols[3].v.s[r_]);      \
      fail_msg("no %s problem at line %d with '%s'", kind, (int)(line), sub);                 \
    }                                                                                         \
  } while (0)

static const char *ANN_BAD =
    "{\"info\": {\"x\": [1, {\"y\": null}]},\n"
    " \"annotations\": [\n"
    "  {\"question_id\": 3, \"question_type\": \"what\", \"answer_type\": \"other\",\n"
    "   \"answers\": [{\"answer\": \"b\", \"answer_id\": 1}, {\"answer\": \"b\", \"answer_id\": 2},\n"
    "                {\"answer\": \"c\", \"answer_id\": 3}]},\n"
    "  {\"question_id\": 1, \"question_type\": \"is\", \"answer_type\": \"yes/no\", \"answers\": []},\n"
    "  {\"question_id\": 2, \"question_type\": \"is\", \"answer_type\": \"yes/no\",\n"
    "   \"answers\": [{\"answer\": \"yes\"}, {\"answer\": \"yes\"}, {\"answer\": \"no\"}]},\n"
    "  {\"question_id\": 3, \"question_type\": \"what\", \"answer_type\": \"other\", \"answers\": [{\"answer\": \"z\"}]},\n"
    "  {\"question_id\": 4, \"question_type\": \"what\", \"answers\": [{\"answer\": \"z\"}]},\n"
    "  {\"question_id\": \"5\", \"question_type\": \"what\", \"answer_type\": \"other\", \"answers\": [{\"answer\": \"z\"}]},\n"
    "  {\"question_id\": 6, \"question_type\": \"what\", \"answer_type\": \"other\", \"answers\": [{\"answer\": \"z\"}, 7]},\n"
    "  {\"question_id\": 7, \"question_type\": \"what\", \"answer_type\": \"other\", \"answers\": [{\"answer\": \"z\"}], \"question_id\": 8},\n"
    "  {\"question_id\": 9, \"question_type\": \"how\", \"answer_type\": \"number\",\n"
    "   \"answers\": [{\"answer\": \"2\", \"answer_id\": 1}, {\"answer\": \"two\", \"answer_id\": 1}]},\n"
    "  [1, 2],\n"
    "  {\"question_id\": 10, \"question_type\": \"what\", \"answer_type\": \"other\", \"answers\": [{\"answer\": \"a\\u0000b\"}]}\n"
    " ]}\n";

static const char *QUE =
    "{\"questions\": [\n"
    "  {\"image_id\": 1, \"question\": \"Q3?\", \"question_id\": 3},\n"
    "  {\"image_id\": 1, \"question\": \"Q2?\", \"question_id\": 2},\n"
    "  {\"image_id\": 1, \"question\": \"Q11?\", \"question_id\": 11},\n"
    "  {\"image_id\": 1, \"question\": \"Q3 again\", \"question_id\": 3},\n"
    "  {\"image_id\": 1, \"question\": 5, \"question_id\": 12}\n"
    "]}\n";

static void test_load_official(void **state) {
  (void)state;
  const char *ann = tu_tmp_file("ann.json", ANN_BAD), *que = tu_tmp_file("que.json", QUE);
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_vqa_set s;
  tl_err err;
  assert_int_equal(tl_vqa_load_official(&s, que, ann, &log, &err), TL_OK);
  /* kept: 3 (first), 2, 9; sorted by id */
  assert_int_equal(s.n, 3);
  assert_string_equal(s.items[0].id, "2");
  assert_string_equal(s.items[1].id, "3");
  assert_string_equal(s.items[2].id, "9");
  assert_true(s.numeric && s.official);
  assert_int_equal(s.items[1].n_answers, 3);
  assert_string_equal(s.items[1].answers[2], "c");
  assert_string_equal(s.items[1].question, "Q3?");
  assert_int_equal(s.items[1].line, 3);
  assert_int_equal(s.items[1].order, 0);
  assert_int_equal(s.items[0].order, 1);
  assert_null(s.items[2].question);
  assert_int_equal(s.n_not10, 3);
  EXPECT_PROBLEM(log, "bad_field", 6, "question 1: no answers");
  EXPECT_PROBLEM(log, "duplicate", 9, "question 3 annotated again (first at line 3");
  EXPECT_PROBLEM(log, "missing_field", 10, "question 4: no 'answer_type'");
  EXPECT_PROBLEM(log, "bad_id", 11, "not an integer");
  EXPECT_PROBLEM(log, "bad_field", 12, "question 6: answers[1] is not an object");
  EXPECT_PROBLEM(log, "duplicate_key", 13, "duplicate key 'question_id'");
  EXPECT_PROBLEM(log, "duplicate", 14, "question 9: answer_id 1 given twice");
  EXPECT_PROBLEM(log, "bad_field", 16, "annotation 9 is not an object");
  EXPECT_PROBLEM(log, "nul_escape", 17, "\\u0000");
  EXPECT_PROBLEM(log, "unknown_item", 14, "question 9 is annotated but not in the questions file");
  EXPECT_PROBLEM(log, "unknown_item", 4, "question 11 has no annotation");
  EXPECT_PROBLEM(log, "duplicate", 5, "question 3 given again");
  EXPECT_PROBLEM(log, "bad_field", 6, "question 12: 'question' is not a string");
  assert_int_equal(log.total, 13);
  assert_int_equal(s.n_dropped, 8);
  assert_int_equal(s.n_no_question, 1);
  assert_int_equal(s.n_no_annotation, 1);

  /* results: an unknown id, a duplicate, a string id, a non-string answer; question 9 missing */
  const char *res = tu_tmp_file("res.json",
                             "[{\"question_id\": 3, \"answer\": \"B\"},\n"
                             " {\"question_id\": 77, \"answer\": \"x\"},\n"
                             " {\"question_id\": 3, \"answer\": \"c\"},\n"
                             " {\"question_id\": \"2\", \"answer\": \"yes\"},\n"
                             " {\"question_id\": 2, \"answer\": 1},\n"
                             " {\"question_id\": 2, \"answer\": \"Yes!\"}]");
  tl_vqa_results r;
  long before = log.total;
  assert_int_equal(tl_vqa_load_results(&r, &s, res, &log, &err), TL_OK);
  EXPECT_PROBLEM(log, "unknown_item", 2, "question 77");
  EXPECT_PROBLEM(log, "duplicate", 3, "a second result for question 3 (first at line 1");
  EXPECT_PROBLEM(log, "bad_id", 4, "not an integer");
  EXPECT_PROBLEM(log, "bad_field", 5, "'answer' is not a string");
  EXPECT_PROBLEM(log, "missing_field", 0, "no result for 1 of 3 questions (9)");
  assert_int_equal(log.total - before, 5);
  assert_int_equal(r.n_given, 2);
  assert_int_equal(r.n_missing, 1);
  assert_int_equal(r.n_unknown, 1);
  assert_int_equal(r.n_duplicate, 1);
  assert_int_equal(r.n_bad, 2);
  assert_string_equal(r.answer[1], "B");
  assert_string_equal(r.answer[0], "Yes!");
  assert_null(r.answer[2]);

  /* the report: file order (3 then 2), question 9 left out */
  cJSON *j;
  tl_vqa_summary sum;
  assert_int_equal(tl_vqa_report(&s, &r, TL_VQA_OFFICIAL, &j, &sum, &err), TL_OK);
  char *txt = cJSON_PrintUnformatted(j);
  /* 3: 'B' vs {b, b, c} -> 'b' after normalization: k = 2 of 3 -> 4/9; 2: 'Yes!' -> 'yes': 4/9 */
  assert_string_equal(txt, "{\"overall\":44.44,\"perQuestionType\":{\"what\":44.44,\"is\":44.44},"
                           "\"perAnswerType\":{\"other\":44.44,\"yes/no\":44.44},"
                           "\"perQuestion\":{\"3\":44.44,\"2\":44.44}}");
  free(txt);
  cJSON_Delete(j);
  assert_int_equal(sum.n_items, 3);
  assert_int_equal(sum.n_scored, 2);
  assert_int_equal(sum.n_missing, 1);
  assert_int_equal(sum.n_not10, 2);
  assert_int_equal(sum.sum_units, 2 * (S * 4 / 9));
  assert_true(sum.overall == 44.44);
  tl_vqa_results_release(&r);

  /* strict input: the first problem stops with its place */
  tl_inlog strict;
  assert_int_equal(tl_inlog_init(&strict, NULL, 1), TL_OK);
  tl_vqa_set s2;
  assert_int_equal(tl_vqa_load_official(&s2, NULL, ann, &strict, &err), TL_EINPUT);
  assert_non_null(strstr(err.msg, "ann.json:6: question 1: no answers (strict input)"));
  tl_vqa_set_release(&s2);
  tl_inlog_release(&strict);

  tl_vqa_set_release(&s);
  tl_inlog_release(&log);
}

static void test_load_malformed(void **state) {
  (void)state;
  tl_inlog log;
  tl_err err;
  tl_vqa_set s;
  struct {
    const char *text, *kind, *sub;
    long line;
    tl_status st;
    size_t n;
  } C[] = {
      /* a break in the JSON text is fatal: "PATH: not valid JSON: why at byte N (line L)" in err,
       * nothing reported to the log (kind NULL), never the elements before it as the whole */
      {"{\"annotations\": [\n{\"question_id\": 1, \"question_type\": \"a\", \"answer_type\": \"b\", "
       "\"answers\": [{\"answer\": \"x\"}]},\n{\"question_id\": 2,\n",
       NULL, "m.json: not valid JSON: unexpected end", 4, TL_EINPUT, 0},
      {"{\"annotations\": [\n{\"question_id\": 1, \"question_type\": \"a\", \"answer_type\": \"b\", "
       "\"answers\": [{\"answer\": \"x\"}]},\n{\"question_id\": 2,, }]}\n",
       NULL, "not valid JSON: expected a key", 3, TL_EINPUT, 0},
      {"{\"annotations\": {}}", "bad_field", "'annotations' is not an array", 0, TL_EINPUT, 0},
      {"{\"questions\": []}", "missing_field", "no 'annotations' member", 0, TL_EINPUT, 0},
      {"[1, 2]", NULL, "not valid JSON: the text is not a JSON object at byte 1 (line 1)", 1, TL_EINPUT, 0},
      {"  \n", "empty_file", "empty", 0, TL_EINPUT, 0},
      {"{\"annotations\": []} x", NULL, "not valid JSON: text after the JSON value at byte 21 (line 1)", 1, TL_EINPUT, 0},
      {"{\"annotations\": [\"\xff\"]}", "invalid_utf8", "invalid UTF-8", 1, TL_EINPUT, 0},
      {"{\"annotations\": [\"a\tb\"]}", NULL, "control character", 1, TL_EINPUT, 0},
      {"{\"annotations\": [01]}", NULL, "expected ',' or ']'", 1, TL_EINPUT, 0},
      {"{\"annotations\": [\"\\x\"]}", NULL, "bad escape", 1, TL_EINPUT, 0},
  };
  for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
    assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
    const char *p = tu_tmp_file("m.json", C[i].text);
    memset(&err, 0, sizeof err);
    tl_status st = tl_vqa_load_official(&s, NULL, p, &log, &err);
    if (st != C[i].st || (C[i].kind && s.n != C[i].n)) fail_msg("case %zu: status %d n %zu", i, (int)st, s.n);
    if (C[i].kind) {
      EXPECT_PROBLEM(log, C[i].kind, C[i].line, C[i].sub);
    } else {
      char want[40];
      snprintf(want, sizeof want, "(line %ld)", C[i].line);
      if (!strstr(err.msg, C[i].sub) || !strstr(err.msg, want) || !strstr(err.msg, "not valid JSON"))
        fail_msg("case %zu: err '%s', want '%s' and '%s'", i, err.msg, C[i].sub, want);
      if (log.counts[TL_IN_MALFORMED_JSON]) fail_msg("case %zu: the break was logged as bad input too", i);
    }
    tl_vqa_set_release(&s);
    tl_inlog_release(&log);
  }
  /* an unreadable file is an I/O error */
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  assert_int_equal(tl_vqa_load_official(&s, NULL, "/nonexistent/a.json", &log, &err), TL_EIO);
  tl_vqa_set_release(&s);
  tl_inlog_release(&log);
}

static void test_load_items(void **state) {
  (void)state;
  const char *items = tu_tmp_file("items.jsonl",
                               "{\"id\": \"b\", \"question\": \"Q?\", \"answers\": [\"x\", \"y\"], \"image\": \"i.png\"}\n"
                               "{\"id\": \"a\", \"question\": \"Q?\", \"answers\": [\"x\"], \"question_type\": \"t\"}\n"
                               "{\"id\": \"a\", \"question\": \"Q?\", \"answers\": [\"z\"]}\n"
                               "{\"id\": 10, \"question\": \"Q?\", \"answers\": [\"x\", \"x\", \"x\"], \"answer_type\": \"n\"}\n"
                               "{\"question_id\": 9, \"question\": \"Q?\", \"answers\": [\"x\", \"x\", \"x\"]}\n"
                               "{\"question\": \"Q?\", \"answers\": [\"x\"]}\n"
                               "{\"id\": 1, \"question_id\": 1, \"question\": \"Q?\", \"answers\": [\"x\"]}\n"
                               "{\"id\": 2, \"question\": \"Q?\", \"answers\": []}\n"
                               "{\"id\": 3, \"question\": \"Q?\", \"answers\": [\"x\", 4]}\n"
                               "{\"id\": 4, \"answers\": [\"x\"]}\n"
                               "{\"id\": 5, \"question\": \"Q?\", \"answers\": \"x\"}\n"
                               "{\"id\": 6, \"question\": \"Q?\", \"answers\": [\"x\"], \"image\": 3}\n"
                               "{\"id\": 1.5, \"question\": \"Q?\", \"answers\": [\"x\"]}\n"
                               "not json\n"
                               "\n"
                               "{\"id\": \"\", \"question\": \"Q?\", \"answers\": [\"x\"]}\n");
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 0), TL_OK);
  tl_vqa_set s;
  tl_err err;
  assert_int_equal(tl_vqa_load_items(&s, items, &log, &err), TL_OK);
  /* mixed ids: bytewise order "10" < "9" < "a" < "b" */
  assert_int_equal(s.n, 4);
  assert_false(s.numeric);
  assert_string_equal(s.items[0].id, "10");
  assert_string_equal(s.items[1].id, "9");
  assert_string_equal(s.items[2].id, "a");
  assert_string_equal(s.items[3].id, "b");
  assert_string_equal(s.items[3].image, "i.png");
  assert_string_equal(s.items[2].question_type, "t");
  assert_null(s.items[2].answer_type);
  assert_int_equal(s.items[0].order, 2);
  assert_int_equal(s.items[3].line, 1);
  EXPECT_PROBLEM(log, "duplicate", 3, "id 'a' given again (first at line 2");
  EXPECT_PROBLEM(log, "missing_field", 6, "no 'id'");
  EXPECT_PROBLEM(log, "bad_field", 7, "both 'id' and 'question_id'");
  EXPECT_PROBLEM(log, "bad_field", 8, "no answers");
  EXPECT_PROBLEM(log, "bad_field", 9, "answers[1] is not a string");
  EXPECT_PROBLEM(log, "missing_field", 10, "no 'question'");
  EXPECT_PROBLEM(log, "bad_field", 11, "'answers' is not an array");
  EXPECT_PROBLEM(log, "bad_field", 12, "'image' is not a string");
  EXPECT_PROBLEM(log, "bad_id", 13, "neither an integer");
  EXPECT_PROBLEM(log, "malformed_json", 14, "malformed JSON");
  EXPECT_PROBLEM(log, "bad_id", 16, "neither an integer");
  assert_int_equal(log.total, 11);

  /* JSONL results, string and integer ids matched by their canonical text */
  const char *res = tu_tmp_file("res.jsonl", "{\"id\": \"a\", \"answer\": \"x\"}\n"
                                          "{\"question_id\": \"10\", \"answer\": \"x\"}\n"
                                          "{\"question_id\": 9, \"answer\": \"y\"}\n"
                                          "{\"question_id\": \"zz\", \"answer\": \"y\"}\n");
  tl_vqa_results r;
  long before = log.total;
  assert_int_equal(tl_vqa_load_results(&r, &s, res, &log, &err), TL_OK);
  assert_int_equal(r.n_given, 3);
  EXPECT_PROBLEM(log, "unknown_item", 4, "question zz");
  EXPECT_PROBLEM(log, "missing_field", 0, "no result for 1 of 4 questions (b)");
  assert_int_equal(log.total - before, 2);
  cJSON *j;
  assert_int_equal(tl_vqa_report(&s, &r, TL_VQA_OFFICIAL, &j, NULL, &err), TL_OK);
  char *txt = cJSON_PrintUnformatted(j);
  /* a: single reference -> 0; 10: x vs 3x x -> 2/3 (each left-out view sees 2); 9: y -> 0;
   * the type tables hold only the items that have a type */
  assert_string_equal(txt, "{\"overall\":22.22,\"perQuestionType\":{\"t\":0.0},\"perAnswerType\":{\"n\":66.67},"
                           "\"perQuestion\":{\"a\":0.0,\"10\":66.67,\"9\":0.0}}");
  free(txt);
  cJSON_Delete(j);
  tl_vqa_results_release(&r);
  /* no result at all: nothing to score */
  const char *none = tu_tmp_file("none.json", "[]");
  assert_int_equal(tl_vqa_load_results(&r, &s, none, &log, &err), TL_OK);
  assert_int_equal(tl_vqa_report(&s, &r, TL_VQA_OFFICIAL, &j, NULL, &err), TL_EINPUT);
  assert_null(j);
  assert_non_null(strstr(err.msg, "no question has a result"));
  tl_vqa_results_release(&r);
  tl_vqa_set_release(&s);

  /* integer ids only: numeric order */
  const char *num = tu_tmp_file("num.jsonl", "{\"id\": 10, \"question\": \"q\", \"answers\": [\"x\"]}\n"
                                          "{\"id\": 9, \"question\": \"q\", \"answers\": [\"x\"]}\n"
                                          "{\"id\": -3, \"question\": \"q\", \"answers\": [\"x\"]}\n");
  assert_int_equal(tl_vqa_load_items(&s, num, &log, &err), TL_OK);
  assert_true(s.numeric);
  assert_string_equal(s.items[0].id, "-3");
  assert_string_equal(s.items[1].id, "9");
  assert_string_equal(s.items[2].id, "10");
  assert_int_equal(tl_vqa_find(&s, "9"), 1);
  assert_int_equal(tl_vqa_find(&s, "09"), -1);
  tl_vqa_set_release(&s);
  const char *empty = tu_tmp_file("empty.jsonl", "");
  assert_int_equal(tl_vqa_load_items(&s, empty, &log, &err), TL_EINPUT);
  tl_vqa_set_release(&s);
  tl_inlog_release(&log);
}

/* ---- shared: the reference vectors ------------------------------------------------------------- */

static cJSON *read_json(const char *path) {
  tl_buf b;
  tl_buf_init(&b);
  tl_err err;
  if (tl_file_read(path, 0, &b, &err) != TL_OK) fail_msg("%s", err.msg);
  cJSON *j = cJSON_Parse(b.data);
  tl_buf_release(&b);
  assert_non_null(j);
  return j;
}

static void test_shared_probes(void **state) {
  (void)state;
  TU_NEED_SHARED(path, "vqa/vqa_eval_vectors.json");
  cJSON *doc = read_json(path);
  const cJSON *p;
  int n = 0;
  cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(doc, "normalization_probes")) {
    const char *in = cJSON_GetObjectItemCaseSensitive(p, "input")->valuestring;
    const char *ap = cJSON_GetObjectItemCaseSensitive(p, "after_punct")->valuestring;
    const char *no = cJSON_GetObjectItemCaseSensitive(p, "normalized")->valuestring;
    expect_norm(tl_vqa_punctuation, "punct", in, ap);
    expect_norm(tl_vqa_digit_article, "digit_article", ap, no);
    expect_norm(tl_vqa_normalize, "normalize", in, no);
    n++;
  }
  print_message("%d normalization probes\n", n);
  assert_int_equal(n, 43);
  cJSON_Delete(doc);
}

static void test_shared_accuracy(void **state) {
  (void)state;
  TU_NEED_SHARED(path, "vqa/vqa_eval_vectors.json");
  cJSON *doc = read_json(path);
  const cJSON *c;
  int n = 0;
  double total = 0.0;
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "accuracy_cases")) {
    const char *pred = cJSON_GetObjectItemCaseSensitive(c, "prediction")->valuestring;
    const cJSON *ans = cJSON_GetObjectItemCaseSensitive(c, "answers");
    const char *refs[16];
    size_t k = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, ans) refs[k++] = a->valuestring;
    double want = cJSON_GetObjectItemCaseSensitive(c, "official_acc_percent_rounded2")->valuedouble;
    tl_vqa_result r;
    tl_err err;
    assert_int_equal(tl_vqa_score(WS, TL_VQA_OFFICIAL, pred, refs, k, 0, &r, &err), TL_OK);
    double got = tl_vqa_py_round2(100.0 * r.acc_py);
    if (got != want) fail_msg("case %d '%s': %.17g, want %.17g", n, pred, got, want);
    assert_true(tl_vqa_py_round2(100.0 * (double)r.acc / (double)S) == want); /* the exact form too */
    total += r.acc_py;
    n++;
  }
  assert_int_equal(n, 18);
  double overall = tl_vqa_py_round2(100.0 * total / n);
  assert_true(overall == cJSON_GetObjectItemCaseSensitive(doc, "overall")->valuedouble);
  print_message("%d accuracy cases, overall %.2f\n", n, overall);
  cJSON_Delete(doc);
}

/* The prediction sets of vqa_eval_smallval_results.json, built from the annotations. */
enum { P_FIRST, P_MAJORITY, P_YES, P_UPPER, P__N };
static const char *const P_NAMES[P__N] = {"pred_first_annotator_answer", "pred_majority_raw_answer_first_max",
                                          "pred_constant_yes", "pred_first_answer_uppercased_with_period"};

/* The most frequent raw answer; ties to the one that occurs first. */
static const char *majority(const tl_vqa_item *it) {
  size_t best = 0, best_n = 0;
  for (size_t i = 0; i < it->n_answers; i++) {
    size_t c = 0;
    for (size_t j = 0; j < it->n_answers; j++) c += !strcmp(it->answers[i], it->answers[j]);
    if (c > best_n) {
      best_n = c;
      best = i;
    }
  }
  return it->answers[best];
}

static void make_prediction(int set, const tl_vqa_item *it, tl_buf *b) {
  tl_buf_reset(b);
  switch (set) {
  case P_FIRST: tl_buf_puts(b, it->answers[0]); break;
  case P_MAJORITY: tl_buf_puts(b, majority(it)); break;
  case P_YES: tl_buf_puts(b, "yes"); break;
  default: /* str.upper() + '.': the answers are ASCII (checked) */
    for (const char *p = it->answers[0]; *p; p++) {
      assert_true((unsigned char)*p < 0x80);
      char ch = (*p >= 'a' && *p <= 'z') ? (char)(*p - 32) : *p;
      tl_buf_append(b, &ch, 1);
    }
    tl_buf_puts(b, ".");
  }
}

static void expect_number(const cJSON *got, const cJSON *want, const char *where) {
  if (!cJSON_IsNumber(got) || !cJSON_IsNumber(want) || got->valuedouble != want->valuedouble)
    fail_msg("%s: got %.17g, want %.17g", where, got ? got->valuedouble : -1.0, want ? want->valuedouble : -1.0);
}

static void test_shared_smallval(void **state) {
  (void)state;
  TU_NEED_SHARED(qpath, "vqa/vqav2_smallval_questions.json");
  TU_NEED_SHARED(apath, "vqa/vqav2_smallval_annotations.json");
  TU_NEED_SHARED(rpath, "vqa/vqa_eval_smallval_results.json");
  tl_inlog log;
  assert_int_equal(tl_inlog_init(&log, NULL, 1), TL_OK); /* strict: the files are clean */
  tl_vqa_set s;
  tl_err err;
  if (tl_vqa_load_official(&s, qpath, apath, &log, &err) != TL_OK) fail_msg("%s", err.msg);
  assert_int_equal(s.n, 589);
  assert_int_equal(s.n_not10, 0);
  assert_int_equal(log.total, 0);
  for (size_t i = 0; i < s.n; i++) assert_non_null(s.items[i].question);
  cJSON *want_doc = read_json(rpath);
  tl_buf b;
  tl_buf_init(&b);
  for (int set = 0; set < P__N; set++) {
    tl_vqa_results r;
    assert_int_equal(tl_vqa_results_init(&r, &s), TL_OK);
    for (size_t i = 0; i < s.n; i++) {
      make_prediction(set, &s.items[i], &b);
      assert_int_equal(tl_vqa_results_set(&r, i, b.data), TL_OK);
    }
    cJSON *got;
    tl_vqa_summary sum;
    assert_int_equal(tl_vqa_report(&s, &r, TL_VQA_OFFICIAL, &got, &sum, &err), TL_OK);
    assert_int_equal(sum.n_scored, 589);
    /* printed and read back, as a user sees it */
    char *txt = cJSON_PrintUnformatted(got);
    cJSON *back = cJSON_Parse(txt);
    free(txt);
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(want_doc, P_NAMES[set]);
    assert_non_null(want);
    expect_number(cJSON_GetObjectItemCaseSensitive(back, "overall"), cJSON_GetObjectItemCaseSensitive(want, "overall"), P_NAMES[set]);
    const cJSON *w;
    int nt = 0;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(want, "perAnswerType")) {
      expect_number(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(back, "perAnswerType"), w->string), w, w->string);
      nt++;
    }
    assert_int_equal(nt, 3);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(back, "perAnswerType")), 3);
    int nq = 0;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(want, "first10_perQuestion")) {
      expect_number(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(back, "perQuestion"), w->string), w, w->string);
      nq++;
    }
    assert_int_equal(nq, 10);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(back, "perQuestion")), 589);
    /* the exact integer mean rounds to the same overall */
    double exact = 100.0 * (double)sum.sum_units / (double)S / 589.0;
    assert_true(tl_vqa_py_round2(exact) == sum.overall);
    print_message("%s: overall %.2f\n", P_NAMES[set], sum.overall);
    cJSON_Delete(back);
    cJSON_Delete(got);
    tl_vqa_results_release(&r);
  }
  tl_buf_release(&b);
  cJSON_Delete(want_doc);
  tl_vqa_set_release(&s);
  tl_inlog_release(&log);
}

int main(int argc, char **argv) {
  const struct CMUnitTest fixture[] = {
      cmocka_unit_test(test_names),        cmocka_unit_test(test_digit_table),
      cmocka_unit_test(test_prepare),      cmocka_unit_test(test_punctuation),
      cmocka_unit_test(test_digit_article), cmocka_unit_test(test_acc_units),
      cmocka_unit_test(test_quirks),       cmocka_unit_test(test_levenshtein),
      cmocka_unit_test(test_soft),         cmocka_unit_test(test_python_numbers),
      cmocka_unit_test(test_load_official), cmocka_unit_test(test_load_malformed),
      cmocka_unit_test(test_load_items),   cmocka_unit_test(test_memo),
  };
  const struct CMUnitTest shared[] = {
      cmocka_unit_test(test_shared_probes),
      cmocka_unit_test(test_shared_accuracy),
      cmocka_unit_test(test_shared_smallval),
  };
  int rc = TU_SHARED_GROUP(argc, argv, fixture, shared, setup, teardown);
  tu_tmp_clean(); /* the loaders' temporary files */
  return rc;
}
