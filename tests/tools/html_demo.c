/* html_demo.c - tally-html-demo OUT.html: writes one self-contained page with every chart kind
 * of tally/svg.h (vertical and horizontal grouped bars, a forest plot, correlation bars, a
 * heatmap, a strip plot; NaN gaps in each), a sortable table (numbers, text, NaN) and a parser
 * audit details block, for tests/e2e/test_html_chromium.sh. Exit 0, or 1 with a message. The
 * page's data are made up; what matters is that every construct appears once. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tally/html.h"
#include "tally/svg.h"

static const char *const TASKS[] = {"spatial-map", "maze-nav", "spatial-grid & <count>"};
static const char *const MODELS[] = {"llava-1.6 / tqa", "llava-1.6 / vqa", "qwen2-vl \xC3\xA9t\xC3\xA9 / vqa"};

static int charts(tl_buf *p, tl_err *err) {
  tl_buf s;
  tl_buf_init(&s);
  const double est[9] = {0.61, 0.55, 0.72, 0.31, NAN, 0.42, 0.48, 0.5, 0.66};
  const double lo[9] = {0.55, 0.49, 0.66, 0.25, NAN, 0.36, 0.42, NAN, 0.6};
  const double hi[9] = {0.67, 0.61, 0.78, 0.37, NAN, 0.48, 0.54, NAN, 0.72};
  tl_svg_bars b = {{"bars-v", "Accuracy by task and model", "Grouped bars with 95% CIs", "accuracy", 0},
                   0, 3, 3, TASKS, MODELS, est, lo, hi, 0, 1};
  int rc = tl_svg_bars_write(&s, &b, err) != TL_OK || tl_html_figure(p, s.data, "Vertical bars", err) != TL_OK;
  b.frame.id = "bars-h";
  b.horizontal = 1;
  tl_buf_reset(&s);
  rc = rc || tl_svg_bars_write(&s, &b, err) != TL_OK || tl_html_figure(p, s.data, "Horizontal bars", err) != TL_OK;

  const char *const cmp[] = {"qwen2-vl - llava (tqa)", "qwen2-vl - llava (vqa)", "cot - direct"};
  const double d[3] = {0.08, -0.05, NAN}, dlo[3] = {0.02, -0.11, NAN}, dhi[3] = {0.14, 0.01, NAN};
  tl_svg_forest f = {{"forest", "Paired differences", "Forest plot of paired differences with 95% CIs",
                      "difference in accuracy", 0}, 3, cmp, d, dlo, dhi, 0.0};
  tl_buf_reset(&s);
  rc = rc || tl_svg_forest_write(&s, &f, err) != TL_OK || tl_html_figure(p, s.data, "Forest plot", err) != TL_OK;

  const char *const met[] = {"soft_vqa_accuracy", "exact_match", "lave (judge)"};
  const double r[3] = {0.62, -0.12, NAN}, rlo[3] = {0.51, -0.3, NAN}, rhi[3] = {0.71, 0.07, NAN};
  tl_svg_frame cf = {"corr", "Correlation with human ratings", "Spearman r per metric with 95% CIs",
                     "Spearman r", 0};
  tl_buf_reset(&s);
  rc = rc || tl_svg_corr_write(&s, &cf, 3, met, r, rlo, rhi, err) != TL_OK ||
       tl_html_figure(p, s.data, "Correlation bars", err) != TL_OK;

  const char *const lab[] = {"1", "2", "3"};
  const double counts[9] = {40, 5, 1, 7, 22, 6, 0, NAN, 19};
  tl_svg_heatmap h = {{"heat", "Judge vs human", "Confusion matrix of judge and human ratings", NULL, 0},
                      3, 3, lab, lab, counts, "human", "judge"};
  tl_buf_reset(&s);
  rc = rc || tl_svg_heatmap_write(&s, &h, err) != TL_OK || tl_html_figure(p, s.data, "Heatmap", err) != TL_OK;

  const size_t off[4] = {0, 5, 9, 10};
  const double v[10] = {0.61, 0.63, 0.6, 0.64, 0.61, 0.52, NAN, 0.55, 0.5, NAN};
  tl_svg_strip st = {{"strip", "Seed spread", "One dot per seed per model", "accuracy", 0}, 3, MODELS, off, v};
  tl_buf_reset(&s);
  rc = rc || tl_svg_strip_write(&s, &st, err) != TL_OK || tl_html_figure(p, s.data, "Strip plot", err) != TL_OK;
  tl_buf_release(&s);
  return rc;
}

static int tables(tl_buf *p, tl_err *err) {
  const char *const cols[] = {"model", "accuracy", "n", "note"};
  const char *const cells[] = {"llava", "0.61", "120", "ok",      "qwen2-vl", "NaN", "0", "nothing scored",
                               "idefics", "0.72", "119", "1 <unparsed>", "phi-3", "0.055", "120", "x & y"};
  const int num[] = {0, 1, 1, 0};
  tl_html_table t = {"items", "Per-model accuracy", 4, 4, cols, cells, num, 1, 1};
  const char *const parsers[] = {"strict", "lenient"};
  const char *const rules[] = {"no letter in a final line", "first standalone letter"};
  const char *const answers[] = {NULL, "B"};
  tl_html_details d = {"item se-042: parsers disagree",
                       "The answer is <b>B</b> because...\n\"quoted\" & 'single'", 2, parsers, rules, answers};
  return tl_html_table_write(p, &t, err) != TL_OK || tl_html_details_write(p, &d, err) != TL_OK;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tally-html-demo OUT.html\n");
    return 2;
  }
  tl_buf p;
  tl_buf_init(&p);
  tl_err err = {{0}};
  int rc = tl_html_begin(&p, "tally HTML test page: every chart", &err) != TL_OK ||
           tl_html_section_begin(&p, 2, "charts", "Charts", &err) != TL_OK || charts(&p, &err) ||
           tl_html_section_end(&p, &err) != TL_OK ||
           tl_html_section_begin(&p, 2, "tables", "Tables and the parser audit", &err) != TL_OK ||
           tl_html_para(&p, "Click a header to sort; type to filter.", &err) != TL_OK || tables(&p, &err) ||
           tl_html_section_end(&p, &err) != TL_OK || tl_html_end(&p, &err) != TL_OK;
  if (rc) {
    fprintf(stderr, "tally-html-demo: %s\n", err.msg);
    tl_buf_release(&p);
    return 1;
  }
  FILE *f = fopen(argv[1], "wb");
  if (!f || fwrite(p.data, 1, p.len, f) != p.len || fclose(f) != 0) {
    fprintf(stderr, "tally-html-demo: cannot write '%s'\n", argv[1]);
    tl_buf_release(&p);
    return 1;
  }
  tl_buf_release(&p);
  return 0;
}
