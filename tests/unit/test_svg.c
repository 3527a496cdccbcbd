/* test_svg.c - the SVG chart writers (include/tally/svg.h, src/report/svg.c, svg_charts.c):
 * number formatting ("%.6g", -0, NaN, whatever LC_NUMERIC says), XML escaping (< & > quotes,
 * non-ASCII kept, invalid UTF-8 and control characters replaced), the nice-number ticks
 * (table-driven), golden bytes of one small chart of each kind (tests/fixtures/svg/NAME.svg;
 * TALLY_UPDATE_GOLDEN=1 rewrites them - then look at them), NaN drawn as a labelled gap and
 * never written as a number, ids all under the caller's prefix, bad arguments refused with the
 * buffer left as it was, the same bytes twice. */
#include <locale.h>
#include <math.h>

#include "testutil.h"
#include "tally/svg.h"

#define GOLDEN_DIR TALLY_SOURCE_DIR "/tests/fixtures/svg/"

/* ---- numbers ---- */
typedef struct {
  double v;
  const char *want;
} num_case;

static const num_case NUMS[] = {
    {0.0, "0"},        {-0.0, "0"},          {0.1, "0.1"},          {0.30000000000000004, "0.3"},
    {-1.5, "-1.5"},    {123456.0, "123456"}, {1234567.0, "1.23457e+06"}, {1e-7, "1e-07"},
    {0.6180339887, "0.618034"}, {NAN, "NaN"}, {INFINITY, "inf"}, {-INFINITY, "-inf"},
};

static void num_all(void) {
  tl_buf b;
  tl_buf_init(&b);
  for (size_t i = 0; i < sizeof NUMS / sizeof NUMS[0]; i++) {
    tl_buf_reset(&b);
    assert_int_equal(tl_svg_num(&b, NUMS[i].v), TL_OK);
    assert_string_equal(b.data, NUMS[i].want);
  }
  tl_buf_release(&b);
}

static void test_num(void **state) {
  (void)state;
  num_all();
  /* a locale whose decimal point is ',' must not change a byte (skipped where none is
   * installed: the C and C.UTF-8 locales both use '.') */
  static const char *const comma[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "de_DE"};
  int tried = 0;
  for (size_t i = 0; i < sizeof comma / sizeof comma[0] && !tried; i++)
    if (setlocale(LC_NUMERIC, comma[i])) {
      tried = 1;
      num_all();
    }
  setlocale(LC_NUMERIC, "C");
  if (!tried) print_message("no decimal-comma locale installed: the LC_NUMERIC part did not run\n");
}

/* ---- escaping ---- */
typedef struct {
  const char *in, *want;
} esc_case;

static const esc_case ESC[] = {
    {"plain", "plain"},
    {"a<b & c>d", "a&lt;b &amp; c&gt;d"},
    {"\"q\" 'a'", "&quot;q&quot; &#39;a&#39;"},
    {"&amp;", "&amp;amp;"},                                  /* escaped once more, not trusted */
    {"\xC3\xA9t\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x98\x80", "\xC3\xA9t\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x98\x80"},
    {"tab\there\nline\r", "tab\there\nline\r"},              /* XML allows these */
    {"bell\x07", "bell\xEF\xBF\xBD"},                        /* XML 1.0 forbids the rest below 0x20 */
    {"bad\xFF" "byte", "bad\xEF\xBF\xBD" "byte"},            /* invalid UTF-8 */
    {"cut\xC3", "cut\xEF\xBF\xBD"},                          /* a sequence cut short */
    {"\xEF\xBF\xBF", "\xEF\xBF\xBD"},                        /* U+FFFF is not an XML Char */
    {"", ""},
};

static void test_escape(void **state) {
  (void)state;
  tl_buf b;
  tl_buf_init(&b);
  for (size_t i = 0; i < sizeof ESC / sizeof ESC[0]; i++) {
    tl_buf_reset(&b);
    assert_int_equal(tl_svg_esc(&b, ESC[i].in), TL_OK);
    assert_string_equal(b.data, ESC[i].want);
  }
  tl_buf_reset(&b);
  assert_int_equal(tl_svg_esc(&b, NULL), TL_OK);
  assert_string_equal(b.data, "");
  tl_buf_release(&b);
}

/* ---- nice ticks ---- */
typedef struct {
  double lo, hi;
  int target;
  double amin, amax, step;
  int n;
} tick_case;

static const tick_case TICKS[] = {
    {0, 0.72, 6, 0, 0.8, 0.2, 5},       /* range 0.72 -> nice 1, step 1/5 -> 0.2 */
    {0, 1, 6, 0, 1, 0.2, 6},
    {-0.11, 0.14, 6, -0.2, 0.2, 0.1, 5}, /* 0.25 -> 0.5, 0.1 */
    {-1, 1, 6, -1, 1, 0.5, 5},          /* 2 -> 2, 0.4 -> 0.5 */
    {0.5, 0.64, 6, 0.5, 0.65, 0.05, 4}, /* 0.14 -> 0.2, 0.04 -> 0.05 */
    {0, 47, 6, 0, 50, 10, 6},           /* 47 -> 50, 50/5 = 10 -> 10 */
    {3, 3, 6, 2.4, 3.6, 0.2, 7},        /* one value: 2.5..3.5 first */
    {0, 12345, 6, 0, 15000, 5000, 4},   /* 12345 -> 20000, 4000 -> 5000 */
};

static void test_ticks(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof TICKS / sizeof TICKS[0]; i++) {
    const tick_case *t = &TICKS[i];
    double amin, amax, step;
    int n = tl_svg_nice_ticks(t->lo, t->hi, t->target, &amin, &amax, &step);
    print_message("ticks [%g, %g]: %g..%g step %g, %d ticks\n", t->lo, t->hi, amin, amax, step, n);
    assert_true(fabs(step - t->step) < 1e-12);
    assert_true(fabs(amin - t->amin) < 1e-12);
    assert_true(fabs(amax - t->amax) < 1e-12);
    assert_int_equal(n, t->n);
    assert_true(amin <= t->lo && amax >= t->hi);
  }
}

/* ---- the charts ---- */
static const char *const G[] = {"task <a>", "task & b"};
static const char *const S[] = {"model \"x\"", "mod\xC3\xA8le y"};
static const double EST[4] = {0.5, NAN, 0.25, -0.1};
static const double LO[4] = {0.4, NAN, NAN, -0.2};
static const double HI[4] = {0.6, NAN, 0.3, 0.05};

typedef tl_status (*chart_fn)(tl_buf *out, const char *id, tl_err *err);

static tl_status bars_v(tl_buf *out, const char *id, tl_err *err) {
  tl_svg_bars c = {{id, "Bars <v>", "desc & more", "accuracy", 400}, 0, 2, 2, G, S, EST, LO, HI, 0, 0};
  return tl_svg_bars_write(out, &c, err);
}
static tl_status bars_h(tl_buf *out, const char *id, tl_err *err) {
  tl_svg_bars c = {{id, "Bars h", "d", NULL, 400}, 1, 2, 2, G, S, EST, LO, HI, 0, 1};
  return tl_svg_bars_write(out, &c, err);
}
static tl_status forest(tl_buf *out, const char *id, tl_err *err) {
  tl_svg_forest c = {{id, "Forest", "d", "difference", 400}, 4, (const char *const[]){"a", "b", "c", "d"},
                     EST, LO, HI, 0.0};
  return tl_svg_forest_write(out, &c, err);
}
static tl_status corr(tl_buf *out, const char *id, tl_err *err) {
  tl_svg_frame f = {id, "Corr", "d", "r", 400};
  return tl_svg_corr_write(out, &f, 4, (const char *const[]){"m1", "m2", "m3", "m4"}, EST, LO, HI, err);
}
static tl_status heat(tl_buf *out, const char *id, tl_err *err) {
  tl_svg_heatmap c = {{id, "Heat", "d", NULL, 0}, 2, 2, G, S, (const double[]){10, 0, NAN, 3}, "rows", "cols"};
  return tl_svg_heatmap_write(out, &c, err);
}
static tl_status strip(tl_buf *out, const char *id, tl_err *err) {
  tl_svg_strip c = {{id, "Strip", "d", "acc", 400}, 2, S, (const size_t[]){0, 3, 4},
                    (const double[]){0.5, 0.52, NAN, NAN}};
  return tl_svg_strip_write(out, &c, err);
}

typedef struct {
  const char *name;
  chart_fn fn;
  int gaps; /* "n/a" texts the NaNs above must give */
} chart_case;

static const chart_case CHARTS[] = {
    {"bars_v", bars_v, 1}, {"bars_h", bars_h, 1}, {"forest", forest, 1},
    {"corr", corr, 1},     {"heat", heat, 1},     {"strip", strip, 1},
};

static size_t count(const char *s, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

static void check_golden(const char *name, const tl_buf *b) {
  char path[512];
  snprintf(path, sizeof path, GOLDEN_DIR "%s.svg", name);
  const char *upd = getenv("TALLY_UPDATE_GOLDEN");
  if (upd && *upd == '1') {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b->data, 1, b->len, f), b->len);
    assert_int_equal(fclose(f), 0);
    print_message("rewrote %s\n", path);
    return;
  }
  tl_buf g;
  tl_buf_init(&g);
  tl_err err;
  if (tl_file_read(path, 0, &g, &err) != TL_OK) fail_msg("%s", err.msg);
  if (g.len != b->len || memcmp(g.data, b->data, b->len) != 0) {
    size_t i = 0;
    while (i < g.len && i < b->len && g.data[i] == b->data[i]) i++;
    fail_msg("%s differs from its golden file at byte %zu: got '%.60s', want '%.60s'", name, i, b->data + i,
             g.data + i);
  }
  tl_buf_release(&g);
}

static void test_charts(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof CHARTS / sizeof CHARTS[0]; i++) {
    tl_buf a, b;
    tl_buf_init(&a);
    tl_buf_init(&b);
    tl_err err;
    assert_int_equal(tl_buf_puts(&a, "prefix|"), TL_OK);
    if (CHARTS[i].fn(&a, "c1", &err) != TL_OK) fail_msg("%s: %s", CHARTS[i].name, err.msg);
    assert_int_equal(CHARTS[i].fn(&b, "c1", &err), TL_OK);
    assert_string_equal(a.data + 7, b.data);                /* appended; the same bytes twice */
    const char *s = b.data;
    assert_true(strncmp(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" ", 51) == 0);
    assert_non_null(strstr(s, "aria-labelledby=\"c1-title c1-desc\""));
    assert_non_null(strstr(s, "<title id=\"c1-title\">"));
    assert_non_null(strstr(s, "<desc id=\"c1-desc\">"));
    /* every id under the prefix */
    for (const char *p = strstr(s, " id=\""); p; p = strstr(p + 1, " id=\"")) assert_true(strncmp(p + 5, "c1-", 3) == 0);
    /* NaN: a labelled gap, never a number in the markup */
    assert_null(strstr(s, "NaN"));
    assert_null(strstr(s, "nan"));
    assert_true(count(s, "n/a") >= (size_t)CHARTS[i].gaps);
    /* text escaped: no raw '<' but tags, no raw '&' but entities */
    assert_null(strstr(s, "<a>"));
    assert_null(strstr(s, "& "));
    check_golden(CHARTS[i].name, &b);
    tl_buf_release(&a);
    tl_buf_release(&b);
  }
}

/* the gap, precisely: the NaN bar has no <rect> of its own (3 finite estimates, 3 bars) and the
 * finite ones have theirs; the legend of the vertical chart adds one swatch per series */
static void test_nan_gap(void **state) {
  (void)state;
  tl_buf b;
  tl_buf_init(&b);
  assert_int_equal(bars_h(&b, "h", NULL), TL_OK);
  assert_int_equal(count(b.data, "fill=\"url(#h-p"), 3);
  assert_int_equal(count(b.data, ">n/a (missing)</text>"), 1);
  assert_non_null(strstr(b.data, ">0.25 (CI n/a)</text>")); /* a NaN bound: no whisker, said so */
  tl_buf_reset(&b);
  assert_int_equal(bars_v(&b, "v", NULL), TL_OK);
  assert_int_equal(count(b.data, "fill=\"url(#v-p"), 3 + 2);
  tl_buf_release(&b);
}

/* bad arguments: TL_EINPUT with a message, the buffer as it was */
static void test_bad_args(void **state) {
  (void)state;
  tl_buf b;
  tl_buf_init(&b);
  tl_buf_puts(&b, "keep");
  tl_err err;
  static const char *const bad_ids[] = {"", "1abc", "a b", "a\"b", "a<b", "x123456789012345678901234567890123456789012345678901234567890abcd"};
  for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++)
    for (size_t k = 0; k < sizeof CHARTS / sizeof CHARTS[0]; k++) {
      err.msg[0] = '\0';
      assert_int_equal(CHARTS[k].fn(&b, bad_ids[i], &err), TL_EINPUT);
      assert_string_equal(b.data, "keep");
      assert_non_null(strstr(err.msg, "id"));
    }
  tl_svg_bars c = {{"ok", "", "d", NULL, 0}, 0, 2, 2, G, S, EST, LO, HI, 0, 0}; /* no title */
  assert_int_equal(tl_svg_bars_write(&b, &c, &err), TL_EINPUT);
  c.frame.title = "t";
  c.hi = NULL; /* one bound alone */
  assert_int_equal(tl_svg_bars_write(&b, &c, &err), TL_EINPUT);
  tl_svg_strip s = {{"s", "t", "d", NULL, 0}, 2, S, (const size_t[]){0, 3, 2}, EST};
  assert_int_equal(tl_svg_strip_write(&b, &s, &err), TL_EINPUT); /* offsets decrease */
  assert_string_equal(b.data, "keep");
  tl_buf_release(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_num),    cmocka_unit_test(test_escape),  cmocka_unit_test(test_ticks),
      cmocka_unit_test(test_charts), cmocka_unit_test(test_nan_gap), cmocka_unit_test(test_bad_args),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
