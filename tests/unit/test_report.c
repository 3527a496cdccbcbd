/* test_report.c - the report's document model and renderers (tally/report.h, src/report/):
 *   - one small document rendered in every format, compared whole (text, Markdown) or by its
 *     lines (LaTeX, CSV, JSON): a long label is never cut and widens its column; a missing cell
 *     stays apart from NaN in every format;
 *   - escaping, table-driven: each special character of Markdown, LaTeX and CSV in a cell;
 *   - a tl_table as a document table (tl_doc_from_table): column kinds, CI columns joined into
 *     estimates (X_lo/X_hi, X_ci_lo/X_ci_hi, bare ci_lo/ci_hi), p-values;
 *   - UTF-8 cells counted in characters, not bytes, for the text columns;
 *   - the modules' report hooks: SpatialEval's layout on a small table (missing cells in its
 *     task x mode matrix, NaN std), and each hook's TL_EINPUT without its tables. */
#include <math.h>

#include <cjson/cJSON.h>

#include "testutil.h"
#include "tally/report.h"

/* The document every format renders. */
static tl_doc *sample(void) {
  tl_doc *d = tl_doc_new("demo & <report>");
  tl_section *s = tl_doc_section(d, "bench_1 | 50%");
  static const char *const N[] = {"name", "n", "acc", "est", "p"};
  static const tl_rcol_kind K[] = {TL_RC_TEXT, TL_RC_INT, TL_RC_REAL, TL_RC_EST, TL_RC_P};
  tl_rtable *t = tl_sec_table(d, s, "t_1", 5, N, K);
  size_t r = tl_rtable_row(d, t);
  tl_cell_text(d, t, r, 0, "soft_vqa_accuracy exact_match spearman");
  tl_cell_int(t, r, 1, 1234567);
  tl_cell_real(t, r, 2, 0.5);
  tl_cell_est(t, r, 3, 0.25, 0.125, 0.375);
  tl_cell_real(t, r, 4, 0.0123);
  r = tl_rtable_row(d, t);
  tl_cell_text(d, t, r, 0, "a|b");
  tl_cell_real(t, r, 2, NAN);
  tl_cell_est(t, r, 3, NAN, NAN, NAN);
  tl_cell_real(t, r, 4, 1e-20);
  tl_rtable_note(d, t, "n: units");
  tl_sec_text(d, s, "a paragraph");
  tl_chart *c = tl_sec_chart(d, s, TL_CHART_FOREST, "f", "x", "y");
  c->ref = 0;
  tl_chart_point_add(d, tl_chart_series_get(d, c, "g"), "a - b", -0.5, -1, NAN);
  assert_int_equal(tl_doc_ok(d), TL_OK);
  return d;
}

static char *render(const tl_doc *d, tl_report_fmt f) {
  tl_buf b;
  tl_buf_init(&b);
  assert_int_equal(tl_doc_render(d, f, &b), TL_OK);
  return tl_buf_detach(&b);
}

static const char TEXT[] =
    "demo & <report>\n"
    "===============\n\n"
    "bench_1 | 50%\n"
    "-------------\n\n"
    "t_1\n"
    "name                                          n     acc                      est       p\n"
    "--------------------------------------  -------  ------  -----------------------  ------\n"
    "soft_vqa_accuracy exact_match spearman  1234567  0.5000  0.2500 [0.1250, 0.3750]  0.0123\n"
    "a|b                                           -     nan                      nan  <1e-16\n"
    "n: units\n\n"
    "a paragraph\n\n";

static const char MD[] =
    "# demo & \\<report\\>\n\n"
    "## bench\\_1 \\| 50%\n\n"
    "**t\\_1**\n\n"
    "| name                                      |       n |    acc |                       est |       p |\n"
    "|:------------------------------------------|--------:|-------:|--------------------------:|--------:|\n"
    "| soft\\_vqa\\_accuracy exact\\_match spearman | 1234567 | 0.5000 | 0.2500 \\[0.1250, 0.3750\\] |  0.0123 |\n"
    "| a\\|b                                      |       - |    nan |                       nan | \\<1e-16 |\n\n"
    "n: units\n\n"
    "a paragraph\n\n";

static void test_text_md(void **state) {
  (void)state;
  tl_doc *d = sample();
  char *t = render(d, TL_FMT_TEXT), *m = render(d, TL_FMT_MD);
  assert_string_equal(t, TEXT);
  assert_string_equal(m, MD);
  free(t), free(m);
  tl_doc_free(d);
}

/* Lines each format must hold (whole lines, in this order). */
static const struct {
  tl_report_fmt f;
  const char *line;
} LINES[] = {
    {TL_FMT_LATEX, "\\usepackage{booktabs}\n\\usepackage{graphicx}\n"},
    {TL_FMT_LATEX, "\\tallyfit{\\begin{tabular}{lrrrr}\n"},
    {TL_FMT_LATEX, "\\title{demo \\& \\textless{}report\\textgreater{}}\n"},
    {TL_FMT_LATEX, "\\section*{bench\\_1 \\textbar{} 50\\%}\n"},
    {TL_FMT_LATEX, "\\caption{t\\_1}\n"},
    {TL_FMT_LATEX, "\\begin{tabular}{lrrrr}\n\\toprule\nname & n & acc & est & p \\\\\n\\midrule\n"},
    {TL_FMT_LATEX,
     "soft\\_vqa\\_accuracy exact\\_match spearman & 1234567 & 0.5000 & 0.2500 [0.1250, 0.3750] & 0.0123 \\\\\n"},
    {TL_FMT_LATEX, "a\\textbar{}b & - & nan & nan & \\textless{}1e-16 \\\\\n\\bottomrule\n\\end{tabular}}\n"},
    {TL_FMT_LATEX, "\\end{document}\n"},
    {TL_FMT_CSV, "section,table,row,column,kind,value,lo,hi\r\n"},
    {TL_FMT_CSV, "bench_1 | 50%,t_1,1,name,text,soft_vqa_accuracy exact_match spearman,,\r\n"},
    {TL_FMT_CSV, "bench_1 | 50%,t_1,1,est,estimate,0.25,0.125,0.375\r\n"},
    {TL_FMT_CSV, "bench_1 | 50%,t_1,2,n,int,,,\r\n"},     /* missing: empty */
    {TL_FMT_CSV, "bench_1 | 50%,t_1,2,acc,real,NaN,,\r\n"}, /* NaN: NaN */
    {TL_FMT_CSV, "bench_1 | 50%,t_1,2,est,estimate,NaN,NaN,NaN\r\n"},
    {TL_FMT_CSV, "bench_1 | 50%,t_1,2,p,p,1e-20,,\r\n"},
};

static void test_lines(void **state) {
  (void)state;
  tl_doc *d = sample();
  for (size_t i = 0; i < sizeof LINES / sizeof *LINES; i++) {
    char *s = render(d, LINES[i].f);
    if (!strstr(s, LINES[i].line)) fail_msg("%s lacks the line(s) '%s':\n%s", tl_report_fmt_names[LINES[i].f], LINES[i].line, s);
    free(s);
  }
  tl_doc_free(d);
}

/* JSON: the schema's members, a missing cell null, NaN "NaN", estimates objects, the chart. */
static void test_json(void **state) {
  (void)state;
  tl_doc *d = sample();
  char *s = render(d, TL_FMT_JSON);
  cJSON *o = cJSON_Parse(s);
  assert_non_null(o);
  assert_string_equal(cJSON_GetObjectItem(o, "schema")->valuestring, "tally-report/1");
  cJSON *sec = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "sections"), 0);
  cJSON *bl = cJSON_GetObjectItem(sec, "blocks");
  assert_int_equal(cJSON_GetArraySize(bl), 3);
  cJSON *t = cJSON_GetArrayItem(bl, 0), *rows = cJSON_GetObjectItem(t, "rows");
  cJSON *r0 = cJSON_GetArrayItem(rows, 0), *r1 = cJSON_GetArrayItem(rows, 1);
  assert_string_equal(cJSON_GetArrayItem(r0, 0)->valuestring, "soft_vqa_accuracy exact_match spearman");
  assert_true(cJSON_GetArrayItem(r0, 1)->valuedouble == 1234567);
  assert_true(cJSON_GetObjectItem(cJSON_GetArrayItem(r0, 3), "lo")->valuedouble == 0.125);
  assert_true(cJSON_IsNull(cJSON_GetArrayItem(r1, 1)));
  assert_string_equal(cJSON_GetArrayItem(r1, 2)->valuestring, "NaN");
  assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(r1, 3), "hi")->valuestring, "NaN");
  assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "columns"), 3), "kind")->valuestring,
                      "estimate");
  cJSON *ch = cJSON_GetArrayItem(bl, 2);
  assert_string_equal(cJSON_GetObjectItem(ch, "kind")->valuestring, "forest");
  assert_true(cJSON_GetObjectItem(ch, "ref")->valuedouble == 0);
  cJSON *pt = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(ch, "series"), 0), "points"), 0);
  assert_string_equal(cJSON_GetObjectItem(pt, "label")->valuestring, "a - b");
  assert_true(cJSON_GetObjectItem(pt, "lo")->valuedouble == -1);
  assert_string_equal(cJSON_GetObjectItem(pt, "hi")->valuestring, "NaN");
  cJSON_Delete(o);
  free(s);
  tl_doc_free(d);
}

/* Escaping: one cell, one format, the row as rendered must contain `want`. */
static const struct {
  tl_report_fmt f;
  const char *cell, *want;
} ESC[] = {
    {TL_FMT_MD, "a|b", "a\\|b"},         {TL_FMT_MD, "x_y*z", "x\\_y\\*z"},   {TL_FMT_MD, "`c`", "\\`c\\`"},
    {TL_FMT_MD, "<b>", "\\<b\\>"},       {TL_FMT_MD, "[l](u)", "\\[l\\](u)"}, {TL_FMT_MD, "back\\slash", "back\\\\slash"},
    {TL_FMT_MD, "$x$ ~~s~~", "\\$x\\$ \\~\\~s\\~\\~"}, {TL_FMT_MD, "two\nlines", "two lines"},
    {TL_FMT_LATEX, "\\", "\\textbackslash{}"}, {TL_FMT_LATEX, "&", "\\&"}, {TL_FMT_LATEX, "%", "\\%"},
    {TL_FMT_LATEX, "$", "\\$"},          {TL_FMT_LATEX, "#", "\\#"},          {TL_FMT_LATEX, "_", "\\_"},
    {TL_FMT_LATEX, "{}", "\\{\\}"},      {TL_FMT_LATEX, "~", "\\textasciitilde{}"},
    {TL_FMT_LATEX, "^", "\\textasciicircum{}"}, {TL_FMT_LATEX, "a<b>c", "a\\textless{}b\\textgreater{}c"},
    {TL_FMT_LATEX, "|", "\\textbar{}"},
    {TL_FMT_CSV, "plain", ",plain,,\r\n"}, {TL_FMT_CSV, "a,b", ",\"a,b\",,\r\n"},
    {TL_FMT_CSV, "say \"hi\"", ",\"say \"\"hi\"\"\",,\r\n"}, {TL_FMT_CSV, "l1\nl2", ",\"l1\nl2\",,\r\n"},
    {TL_FMT_CSV, "cr\r", ",\"cr\r\",,\r\n"},
    {TL_FMT_TEXT, "tab\there", "tab here"},
};

static void test_escaping(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof ESC / sizeof *ESC; i++) {
    tl_doc *d = tl_doc_new("t");
    static const char *const N[] = {"c"};
    static const tl_rcol_kind K[] = {TL_RC_TEXT};
    tl_rtable *t = tl_sec_table(d, tl_doc_section(d, "s"), "x", 1, N, K);
    tl_cell_text(d, t, tl_rtable_row(d, t), 0, ESC[i].cell);
    char *s = render(d, ESC[i].f);
    if (!strstr(s, ESC[i].want)) fail_msg("case %zu (%s): '%s' lacks '%s':\n%s", i, tl_report_fmt_names[ESC[i].f], ESC[i].cell, ESC[i].want, s);
    free(s);
    tl_doc_free(d);
  }
}

/* A text column holding UTF-8 is as wide as its characters: "é" pads like one letter. */
static void test_utf8_width(void **state) {
  (void)state;
  tl_doc *d = tl_doc_new("t");
  static const char *const N[] = {"name", "n"};
  static const tl_rcol_kind K[] = {TL_RC_TEXT, TL_RC_INT};
  tl_rtable *t = tl_sec_table(d, tl_doc_section(d, "s"), "", 2, N, K);
  size_t r = tl_rtable_row(d, t);
  tl_cell_text(d, t, r, 0, "caf\xc3\xa9s"), tl_cell_int(t, r, 1, 7);
  r = tl_rtable_row(d, t);
  tl_cell_text(d, t, r, 0, "abc"), tl_cell_int(t, r, 1, 10);
  tl_buf b;
  tl_buf_init(&b);
  assert_int_equal(tl_rtable_render(t, TL_FMT_TEXT, &b), TL_OK);
  assert_string_equal(b.data, "name    n\n-----  --\ncaf\xc3\xa9s   7\nabc    10\n");
  tl_buf_release(&b);
  tl_doc_free(d);
}

/* tl_doc_from_table: kinds, and the CI columns joined into estimates. */
static void test_from_table(void **state) {
  (void)state;
  tl_table *t = tl_table_new("/stats/s/summary");
  static const tl_col_spec SPEC[] = {
      {"metric", TL_COL_STR, NULL}, {"n", TL_COL_I64, NULL},     {"estimate", TL_COL_F64, NULL},
      {"se", TL_COL_F64, NULL},     {"ci_lo", TL_COL_F64, NULL}, {"ci_hi", TL_COL_F64, NULL},
      {"win_rate", TL_COL_F64, NULL}, {"win_rate_lo", TL_COL_F64, NULL}, {"win_rate_hi", TL_COL_F64, NULL},
      {"acc", TL_COL_F64, NULL},    {"acc_ci_lo", TL_COL_F64, NULL}, {"acc_ci_hi", TL_COL_F64, NULL},
      {"p_boot", TL_COL_F64, NULL}, {"mean", TL_COL_F64, NULL},
  };
  assert_int_equal(tl_table_add_cols(t, SPEC, (int)(sizeof SPEC / sizeof *SPEC)), 0);
  size_t r = tl_table_add_row(t);
  tl_table_set_str(t, r, 0, "lave");
  tl_table_set_i64(t, r, 1, 200);
  for (int c = 2; c < t->ncols; c++) tl_table_set_f64(t, r, c, c / 100.0);
  tl_doc *d = tl_doc_new("t");
  tl_rtable *x = tl_doc_from_table(d, tl_doc_section(d, "s"), t, NULL);
  assert_non_null(x);
  static const struct {
    const char *name;
    tl_rcol_kind kind;
  } WANT[] = {{"metric", TL_RC_TEXT}, {"n", TL_RC_INT},  {"estimate", TL_RC_EST}, {"se", TL_RC_REAL},
              {"win_rate", TL_RC_EST}, {"acc", TL_RC_EST}, {"p_boot", TL_RC_P},    {"mean", TL_RC_REAL}};
  assert_int_equal(x->ncols, (int)(sizeof WANT / sizeof *WANT));
  for (int c = 0; c < x->ncols; c++) {
    assert_string_equal(x->cols[c].name, WANT[c].name);
    if (x->cols[c].kind != WANT[c].kind) fail_msg("column %s: kind %d, want %d", WANT[c].name, x->cols[c].kind, WANT[c].kind);
  }
  assert_string_equal(x->title, "/stats/s/summary");
  const tl_rcell *e = tl_rtable_cell(x, 0, 2);
  assert_true(e->tag == TL_CELL_EST && e->v == 0.02 && e->lo == 0.04 && e->hi == 0.05);
  e = tl_rtable_cell(x, 0, 5);
  assert_true(e->v == 0.09 && e->lo == 0.10 && e->hi == 0.11);
  tl_doc_free(d);
  tl_table_free(t);
}

/* The modules' report hooks (se_report.c, mtb_report.c, vqa_report.c), declared here as their
 * module.c files do. */
tl_status tl_se_report(tl_table *const *tables, int n, struct tl_doc *doc);
tl_status tl_mtb_report(tl_table *const *tables, int n, struct tl_doc *doc);
tl_status tl_vqa_doc_report(tl_table *const *tables, int n, struct tl_doc *doc);

/* SpatialEval's hook on a small across-seeds table: the accuracy table keeps the whole-task rows
 * (qid -1) only, the matrix has a column per mode with a missing cell ("-") where a task lacks
 * a mode and no row for "all", the chart one point per whole-task row. Without the table each
 * hook says TL_EINPUT (the report then goes generic) and adds nothing. */
static void test_hooks(void **state) {
  (void)state;
  tl_table *t = tl_table_new("/metrics/spatialeval/strict_across_seeds");
  static const tl_col_spec SPEC[] = {
      {"model", TL_COL_STR, NULL},  {"prompt_variant", TL_COL_STR, NULL}, {"task", TL_COL_STR, NULL},
      {"mode", TL_COL_STR, NULL},   {"qid", TL_COL_I64, NULL},            {"n_seeds", TL_COL_I64, NULL},
      {"n", TL_COL_I64, NULL},      {"answered", TL_COL_I64, NULL},       {"missing", TL_COL_I64, NULL},
      {"unparsed", TL_COL_I64, NULL}, {"engine_error", TL_COL_I64, NULL}, {"mean", TL_COL_F64, NULL},
      {"std", TL_COL_F64, NULL},    {"ci_lo", TL_COL_F64, NULL},          {"ci_hi", TL_COL_F64, NULL},
  };
  assert_int_equal(tl_table_add_cols(t, SPEC, (int)(sizeof SPEC / sizeof *SPEC)), 0);
  static const struct {
    const char *task, *mode;
    int64_t qid;
    double mean;
  } ROWS[] = {{"spatialmap", "tqa", -1, 0.5}, {"spatialmap", "tqa", 0, 0.25}, {"spatialmap", "vqa", -1, 0.75},
              {"spatialreal", "tqa", -1, 1.0}, {"all", "all", -1, 0.625}};
  for (size_t i = 0; i < sizeof ROWS / sizeof *ROWS; i++) {
    size_t r = tl_table_add_row(t);
    tl_table_set_str(t, r, 0, "m"), tl_table_set_str(t, r, 1, "reason");
    tl_table_set_str(t, r, 2, ROWS[i].task), tl_table_set_str(t, r, 3, ROWS[i].mode);
    tl_table_set_i64(t, r, 4, ROWS[i].qid);
    for (int c = 5; c <= 10; c++) tl_table_set_i64(t, r, c, c);
    tl_table_set_f64(t, r, 11, ROWS[i].mean), tl_table_set_f64(t, r, 12, NAN);
    tl_table_set_f64(t, r, 13, ROWS[i].mean - 0.125), tl_table_set_f64(t, r, 14, ROWS[i].mean + 0.125);
  }
  tl_doc *d = tl_doc_new("t");
  assert_int_equal(tl_se_report(&t, 1, d), TL_OK);
  assert_int_equal(d->nsec, 1);
  const tl_section *s = &d->secs[0];
  assert_int_equal(s->nblocks, 3); /* accuracy, matrix, chart (no audit table given) */
  assert_int_equal(s->blocks[0].table->nrows, 4);
  const tl_rtable *m = s->blocks[1].table;
  assert_int_equal(m->ncols, 5); /* model, variant, task, tqa, vqa */
  assert_int_equal(m->nrows, 2);
  assert_int_equal(tl_rtable_cell((tl_rtable *)m, 1, 4)->tag, TL_CELL_MISSING); /* spatialreal has no vqa */
  assert_true(tl_rtable_cell((tl_rtable *)m, 0, 4)->v == 0.75);
  tl_buf b;
  tl_buf_init(&b);
  assert_int_equal(tl_rtable_render(m, TL_FMT_TEXT, &b), TL_OK);
  assert_non_null(strstr(b.data, "m      reason   spatialreal  1.000      -\n"));
  tl_buf_reset(&b);
  assert_int_equal(tl_rtable_render(s->blocks[0].table, TL_FMT_TEXT, &b), TL_OK);
  assert_non_null(strstr(b.data, "0.750 [0.625, 0.875]         nan\n")); /* the std of one seed: nan */
  tl_buf_release(&b);
  const tl_chart *c = s->blocks[2].chart;
  assert_int_equal(c->kind, TL_CHART_BARS_CI);
  assert_int_equal(c->nseries, 1);
  assert_int_equal(c->series[0].n, 4);
  assert_string_equal(c->series[0].pts[3].label, "all / all");
  tl_doc_free(d);
  tl_status (*const hooks[])(tl_table *const *, int, struct tl_doc *) = {tl_se_report, tl_mtb_report, tl_vqa_doc_report};
  tl_table *other = tl_table_new("/metrics/x/y");
  for (size_t i = 0; i < sizeof hooks / sizeof *hooks; i++) {
    d = tl_doc_new("t");
    assert_int_equal(hooks[i](&other, 1, d), TL_EINPUT);
    assert_int_equal(d->nsec, 0);
    tl_doc_free(d);
  }
  tl_table_free(other);
  tl_table_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_text_md),  cmocka_unit_test(test_lines),      cmocka_unit_test(test_json),
      cmocka_unit_test(test_escaping), cmocka_unit_test(test_utf8_width), cmocka_unit_test(test_from_table),
      cmocka_unit_test(test_hooks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
