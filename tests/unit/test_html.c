/* test_html.c - the self-contained HTML page writer (include/tally/html.h, src/report/html.c):
 * a whole page's structure (doctype, <meta charset>, title, inline CSS and script, nothing
 * fetched from the network), the escaping of every text (title, headings, paragraphs, captions,
 * header and body cells, details' raw text and parser rows: < & > quotes, non-ASCII kept,
 * invalid bytes replaced), tables (caption, th scope col/row, class sortable, num columns),
 * figures that take only a tl_svg_* chart, bad arguments refused with the buffer left as it
 * was, the script under 4 KB, the same bytes twice (a golden page:
 * tests/fixtures/svg/page.html, TALLY_UPDATE_GOLDEN=1 rewrites it). */
#include <math.h>

#include "testutil.h"
#include "tally/html.h"
#include "tally/svg.h"

#define NASTY "<b>x</b> & \"q\" 'a' \xC3\xA9\xFF"
#define NASTY_ESC "&lt;b&gt;x&lt;/b&gt; &amp; &quot;q&quot; &#39;a&#39; \xC3\xA9\xEF\xBF\xBD"

static size_t count(const char *s, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* a page with one of everything, every text NASTY */
static void build_page(tl_buf *p) {
  tl_err err;
  tl_buf svg;
  tl_buf_init(&svg);
  tl_svg_forest f = {{"f1", NASTY, NASTY, NASTY, 0}, 2, (const char *const[]){NASTY, "b"},
                     (const double[]){0.1, NAN}, (const double[]){0.0, NAN}, (const double[]){0.2, NAN}, 0.0};
  assert_int_equal(tl_svg_forest_write(&svg, &f, &err), TL_OK);
  const char *const cols[] = {NASTY, "n"};
  const char *const cells[] = {NASTY, "1", "x", "NaN", NULL, "2"};
  tl_html_table t = {"t1", NASTY, 2, 3, cols, cells, (const int[]){0, 1}, 1, 1};
  tl_html_details d = {NASTY, NASTY "\nline 2", 2, (const char *const[]){NASTY, "p2"},
                       (const char *const[]){NASTY, "r2"}, (const char *const[]){NASTY, NULL}};
  assert_int_equal(tl_html_begin(p, NASTY, &err), TL_OK);
  assert_int_equal(tl_html_section_begin(p, 2, "s1", NASTY, &err), TL_OK);
  assert_int_equal(tl_html_para(p, NASTY, &err), TL_OK);
  assert_int_equal(tl_html_figure(p, svg.data, NASTY, &err), TL_OK);
  assert_int_equal(tl_html_table_write(p, &t, &err), TL_OK);
  assert_int_equal(tl_html_details_write(p, &d, &err), TL_OK);
  assert_int_equal(tl_html_section_end(p, &err), TL_OK);
  assert_int_equal(tl_html_end(p, &err), TL_OK);
  tl_buf_release(&svg);
}

static void test_page(void **state) {
  (void)state;
  tl_buf p, q;
  tl_buf_init(&p);
  tl_buf_init(&q);
  build_page(&p);
  build_page(&q);
  assert_string_equal(p.data, q.data); /* deterministic */
  const char *s = p.data;
  assert_true(strncmp(s, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n", 61) == 0);
  assert_non_null(strstr(s, "<title>" NASTY_ESC "</title>"));
  assert_non_null(strstr(s, "<h1>" NASTY_ESC "</h1>"));
  assert_non_null(strstr(s, "<section id=\"s1\" aria-labelledby=\"s1-h\">\n<h2 id=\"s1-h\">" NASTY_ESC "</h2>"));
  assert_non_null(strstr(s, "<p>" NASTY_ESC "</p>"));
  assert_non_null(strstr(s, "<figcaption>" NASTY_ESC "</figcaption>"));
  assert_int_equal(count(s, "<style>"), 1);
  assert_int_equal(count(s, "<script>"), 1);
  assert_non_null(strstr(s, tl_html_script()));
  size_t n = strlen(s), k = strlen("</script>\n</body>\n</html>\n");
  assert_true(n > k && strcmp(s + n - k, "</script>\n</body>\n</html>\n") == 0);
  /* self-contained: nothing that makes a browser fetch (the SVG namespace is a name, not a
   * fetch) */
  assert_null(strstr(s, "<link"));
  assert_null(strstr(s, " src="));
  assert_null(strstr(s, "@import"));
  assert_null(strstr(s, "url(http"));
  assert_int_equal(count(s, "http"), count(s, "xmlns=\"http://www.w3.org/2000/svg\""));
  /* no raw caller text anywhere: NASTY's tags never appear unescaped */
  assert_null(strstr(s, "<b>x</b>"));
  assert_null(strstr(s, "\xFF"));
  /* the text of every kind was written escaped: title, h1, h2, p, figcaption, caption, th col,
   * th row, summary, pre, parser th, rule td, answer td (13), and the SVG's title, desc, visible
   * title, value label, row label and the estimate's hover title (6) */
  assert_int_equal(count(s, NASTY_ESC), 19);
  tl_buf_release(&p);
  tl_buf_release(&q);
}

static void test_table(void **state) {
  (void)state;
  tl_buf b;
  tl_buf_init(&b);
  const char *const cols[] = {"model", "acc"};
  const char *const cells[] = {"a", "0.5", "b", "NaN"};
  tl_html_table t = {"tab", "Cap", 2, 2, cols, cells, (const int[]){0, 1}, 1, 1};
  assert_int_equal(tl_html_table_write(&b, &t, NULL), TL_OK);
  assert_string_equal(b.data,
                      "<table id=\"tab\" class=\"sortable\">\n<caption>Cap</caption>\n"
                      "<thead><tr><th scope=\"col\">model</th><th scope=\"col\" class=\"num\">acc</th></tr></thead>\n"
                      "<tbody>\n"
                      "<tr><th scope=\"row\">a</th><td class=\"num\">0.5</td></tr>\n"
                      "<tr><th scope=\"row\">b</th><td class=\"num\">NaN</td></tr>\n"
                      "</tbody>\n</table>\n");
  tl_buf_reset(&b);
  t.sortable = 0;
  t.row_headers = 0;
  t.numeric = NULL;
  assert_int_equal(tl_html_table_write(&b, &t, NULL), TL_OK);
  assert_non_null(strstr(b.data, "<table id=\"tab\">\n"));
  assert_non_null(strstr(b.data, "<tr><td>a</td><td>0.5</td></tr>"));
  tl_buf_release(&b);
}

static void test_details(void **state) {
  (void)state;
  tl_buf b;
  tl_buf_init(&b);
  tl_html_details d = {"item 7", "raw\n  text", 0, NULL, NULL, NULL};
  assert_int_equal(tl_html_details_write(&b, &d, NULL), TL_OK);
  assert_string_equal(b.data, "<details>\n<summary>item 7</summary>\n<pre>raw\n  text</pre>\n</details>\n");
  tl_buf_reset(&b);
  d.nparsers = 1;
  d.parsers = (const char *const[]){"strict"};
  d.rules = (const char *const[]){"final line"};
  d.answers = (const char *const[]){NULL};
  assert_int_equal(tl_html_details_write(&b, &d, NULL), TL_OK);
  assert_non_null(strstr(b.data, "<tr><th scope=\"row\">strict</th><td>final line</td><td>(no answer)</td></tr>"));
  tl_buf_release(&b);
}

/* bad arguments: TL_EINPUT, a message, the buffer as it was */
static void test_bad_args(void **state) {
  (void)state;
  tl_buf b;
  tl_buf_init(&b);
  tl_buf_puts(&b, "keep");
  tl_err err;
  const char *const cols[] = {"c"};
  tl_html_table t = {"1bad", "Cap", 1, 0, cols, NULL, NULL, 0, 0};
  assert_int_equal(tl_html_table_write(&b, &t, &err), TL_EINPUT);
  assert_non_null(strstr(err.msg, "1bad"));
  t.id = "ok";
  t.caption = "";
  assert_int_equal(tl_html_table_write(&b, &t, &err), TL_EINPUT);
  assert_int_equal(tl_html_begin(&b, "", &err), TL_EINPUT);
  assert_int_equal(tl_html_section_begin(&b, 1, "s", "h", &err), TL_EINPUT);
  assert_int_equal(tl_html_section_begin(&b, 5, "s", "h", &err), TL_EINPUT);
  assert_int_equal(tl_html_section_begin(&b, 2, "s\"x", "h", &err), TL_EINPUT);
  assert_int_equal(tl_html_figure(&b, "<script>alert(1)</script>", NULL, &err), TL_EINPUT);
  assert_int_equal(tl_html_figure(&b, "<svg onload=x></svg>\n", NULL, &err), TL_EINPUT);
  assert_int_equal(tl_html_figure(&b, NULL, NULL, &err), TL_EINPUT);
  tl_html_details d = {"s", "raw", 1, NULL, NULL, NULL};
  assert_int_equal(tl_html_details_write(&b, &d, &err), TL_EINPUT);
  assert_string_equal(b.data, "keep");
  tl_buf_release(&b);
}

static void test_script_size(void **state) {
  (void)state;
  size_t n = strlen(tl_html_script());
  print_message("inline script: %zu bytes\n", n);
  assert_true(n > 500 && n < 4096);
  assert_null(strstr(tl_html_script(), "</")); /* nothing that could close the <script> element */
}

static void check_golden_page(void **state) {
  (void)state;
  tl_buf p;
  tl_buf_init(&p);
  build_page(&p);
  const char *path = TALLY_SOURCE_DIR "/tests/fixtures/svg/page.html";
  const char *upd = getenv("TALLY_UPDATE_GOLDEN");
  if (upd && *upd == '1') {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p.data, 1, p.len, f), p.len);
    assert_int_equal(fclose(f), 0);
  } else {
    tl_buf g;
    tl_buf_init(&g);
    tl_err err;
    if (tl_file_read(path, 0, &g, &err) != TL_OK) fail_msg("%s", err.msg);
    assert_int_equal(g.len, p.len);
    assert_memory_equal(g.data, p.data, p.len);
    tl_buf_release(&g);
  }
  tl_buf_release(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_page),        cmocka_unit_test(test_table),    cmocka_unit_test(test_details),
      cmocka_unit_test(test_bad_args),    cmocka_unit_test(test_script_size), cmocka_unit_test(check_golden_page),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
