/* report.h - the report's document model and its renderers (src/report/; docs/REPORT.md).
 *
 * A document (tl_doc) is a title and titled sections; a section is an ordered list of blocks,
 * each a table (typed columns, typed cells) or a chart spec. Charts are DATA (series of
 * (label, value, lo, hi) points), never pre-rendered text: the renderers here write them in JSON,
 * and the HTML renderer draws them as SVG (tally/svg.h) from the same structure.
 *
 * Tier: pure C11 on cJSON and core's tl_buf (no MPI, HDF5, curl). The sources are compiled into
 * tally_core's archive, so a benchmark module's optional `report` hook (bench_vt.h) may build
 * blocks of a document from its tables.
 *
 * Cells keep "missing" (no value: printed "-" in text, Markdown and LaTeX, "" in CSV, null in
 * JSON) apart from an undefined statistic (NaN: printed "nan", "NaN" in JSON as a string, never
 * 0).
 *
 * Ownership: the document owns every block, column, cell and string in it (copied on set);
 * tl_doc_free frees all. Functions returning a pointer return NULL on allocation failure, and a
 * later call given that NULL does nothing (so a builder may check once at the end with
 * tl_doc_ok). Not thread-safe: one document, one thread. */
#ifndef TALLY_REPORT_H
#define TALLY_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tally/err.h"
#include "tally/str.h"
#include "tally/table.h"

/* A column's kind: how its cells print. */
typedef enum {
  TL_RC_TEXT = 0, /* a label: left-aligned */
  TL_RC_INT = 1,  /* a count */
  TL_RC_REAL = 2, /* a number, `digits` decimals */
  TL_RC_EST = 3,  /* an estimate with its CI: "0.512 [0.401, 0.620]" */
  TL_RC_P = 4     /* a p-value: 3 significant digits, "<1e-16" for one above 0 and below it */
} tl_rcol_kind;

typedef enum { TL_AL_AUTO = 0, TL_AL_LEFT = 1, TL_AL_RIGHT = 2 } tl_ralign;

/* A cell's tag. MISSING: nothing there (a row lacking that column). */
typedef enum { TL_CELL_MISSING = 0, TL_CELL_TEXT, TL_CELL_INT, TL_CELL_REAL, TL_CELL_EST } tl_cell_tag;

typedef struct {
  tl_cell_tag tag;
  char *s;          /* TEXT: owned */
  int64_t i;        /* INT */
  double v, lo, hi; /* REAL: v; EST: v [lo, hi] (any may be NaN) */
} tl_rcell;

typedef struct {
  char *name;
  tl_rcol_kind kind;
  tl_ralign align; /* AUTO: left for TEXT, right otherwise */
  int digits;      /* REAL, EST: decimals (default 4) */
  double p_floor;  /* P: the resolution of a resampling p-value (1/B): a 0 prints "<p_floor" in
                    * text, Markdown, LaTeX and HTML (none of the B draws was as extreme); CSV and
                    * JSON keep the 0. 0 (default): a 0 prints as 0 */
} tl_rcol;

typedef struct {
  char *title; /* may be "" */
  char *note;  /* one line under the table, or NULL */
  int ncols;
  tl_rcol *cols;
  size_t nrows, cap;
  tl_rcell *cells; /* [nrows][ncols], row-major */
} tl_rtable;

typedef enum { TL_CHART_BARS_CI = 0, TL_CHART_FOREST = 1, TL_CHART_HEATMAP = 2, TL_CHART_STRIP = 3 } tl_chart_kind;

typedef struct {
  char *label;
  double value, lo, hi; /* lo, hi NaN when the point has no interval */
} tl_chart_point;

typedef struct {
  char *name; /* the series (a model, a mode; a heatmap's row) */
  size_t n, cap;
  tl_chart_point *pts; /* a heatmap's cells: label = the column */
} tl_chart_series;

typedef struct {
  tl_chart_kind kind;
  char *title, *x, *y; /* y: the value axis's label; x: the categories' */
  double ref;          /* a reference line (0 for a forest of differences), NaN: none */
  int nseries;
  tl_chart_series *series;
} tl_chart;

typedef enum { TL_BLOCK_TABLE = 0, TL_BLOCK_CHART = 1, TL_BLOCK_TEXT = 2 } tl_block_kind;

typedef struct {
  tl_block_kind kind;
  tl_rtable *table;
  tl_chart *chart;
  char *text; /* TEXT: a paragraph */
} tl_block;

typedef struct {
  char *title;
  int nblocks;
  tl_block *blocks;
} tl_section;

typedef struct tl_doc {
  char *title;
  int nsec;
  tl_section *secs;
  int oom; /* 1 after any failed allocation: the document is incomplete */
} tl_doc;

/* ---- building ---- */
tl_doc *tl_doc_new(const char *title);
void tl_doc_free(tl_doc *d);
/* TL_OK, or TL_ENOMEM when any allocation failed while building. */
tl_status tl_doc_ok(const tl_doc *d);
tl_section *tl_doc_section(tl_doc *d, const char *title);
tl_status tl_sec_text(tl_doc *d, tl_section *s, const char *text);
/* A new table in section s with ncols columns declared by name/kind (align AUTO, digits 4). */
tl_rtable *tl_sec_table(tl_doc *d, tl_section *s, const char *title, int ncols, const char *const *names,
                        const tl_rcol_kind *kinds);
void tl_rtable_note(tl_doc *d, tl_rtable *t, const char *note);
/* Appends a row of missing cells; its index, or (size_t)-1 on failure. */
size_t tl_rtable_row(tl_doc *d, tl_rtable *t);
tl_rcell *tl_rtable_cell(tl_rtable *t, size_t row, int col);
void tl_cell_text(tl_doc *d, tl_rtable *t, size_t row, int col, const char *s);
void tl_cell_int(tl_rtable *t, size_t row, int col, int64_t v);
void tl_cell_real(tl_rtable *t, size_t row, int col, double v);
void tl_cell_est(tl_rtable *t, size_t row, int col, double v, double lo, double hi);
tl_chart *tl_sec_chart(tl_doc *d, tl_section *s, tl_chart_kind kind, const char *title, const char *x,
                       const char *y);
/* The chart's series `name`, created on first use. */
tl_chart_series *tl_chart_series_get(tl_doc *d, tl_chart *c, const char *name);
void tl_chart_point_add(tl_doc *d, tl_chart_series *s, const char *label, double v, double lo, double hi);

/* A tl_table (a /metrics, /audit or /stats table as written) as a document table, generically:
 * string columns TEXT, int64 INT, double REAL; a double column X with columns X_lo and X_hi
 * (or X_ci_lo, X_ci_hi) becomes one EST column X, and bare ci_lo, ci_hi go with the first of
 * estimate, delta, Avg, mean; a double column named p, starting "p_" or ending "_p", "_pvalue",
 * "_p_value" is P. `title` NULL: the table's path. */
tl_rtable *tl_doc_from_table(tl_doc *d, tl_section *s, const tl_table *t, const char *title);
/* tl_doc_from_table limited to the rows whose string column `col` equals `val` (col NULL: every
 * row), leaving out the columns named in `drop` (NULL-terminated; NULL: none). NULL when col is
 * not a string column of t. */
tl_rtable *tl_doc_from_table_where(tl_doc *d, tl_section *s, const tl_table *t, const char *title, const char *col,
                                   const char *val, const char *const *drop);
/* The table of `tables[0..n)` whose path is `path`, or NULL (for report hooks). */
const tl_table *tl_report_find(tl_table *const *tables, int n, const char *path);

/* ---- a study's tables (src/report/study.c) ----
 * One code path for what `tally correlate` / a job's study prints and the studies' section of
 * `tally report`: each builder reads one of the study's output tables (a tl_table with the
 * columns of /stats/<name>/summary, /compare, /system/summary, /agreement, /confusion;
 * docs/STATISTICS.md) and appends a report table to section s. NULL, adding nothing, when a
 * column it needs is absent (the caller prints the table generically); NULL with d marked out
 * of memory when an allocation failed (tl_doc_ok). */
typedef struct {
  uint64_t B;       /* resamples: the p_floor (1/B) of p_boot and p_perm; 0: none */
  int permutation;  /* 0: the permutation test did not run: p_perm cells missing ("-") */
  int ttest_compat; /* 1: the COMPAT p_ttest column (p_ttest_compat) is shown */
} tl_study_fmt;
/* The summary rows of `group` (metric, statistic, estimate [CI], SE, undefined); group NULL:
 * every row, with the group and its n in front. */
tl_rtable *tl_study_summary(tl_doc *d, tl_section *s, const tl_table *sum, const char *group, const char *title);
/* The comparisons of `group` (a, b, statistic, delta [CI], p_boot, p_williams, p_perm, p_holm,
 * p_bh, mde80); group NULL: every row, with the group in front. p_williams missing for a
 * statistic other than spearman. */
tl_rtable *tl_study_compare(tl_doc *d, tl_section *s, const tl_table *cmp, const char *group, const tl_study_fmt *f,
                            const char *title);
/* The LAVE paper's layout: one row per metric, one column per group, `statistic` x 100 (2
 * decimals; a group without that row: missing). */
tl_rtable *tl_study_by_group(tl_doc *d, tl_section *s, const tl_table *sum, const char *statistic, const char *title);
/* The agreement of columns a and b (b "": the multi-rater alpha of the columns a), titled with
 * its n and the rows left out: statistic, estimate [bootstrap CI], SE, count of, Wilson,
 * Jeffreys (the last four for the proportions alone). NULL also when the pair has no row. */
tl_rtable *tl_study_agreement(tl_doc *d, tl_section *s, const tl_table *ag, const char *a, const char *b);
/* The confusion matrix of a (rows) and b (columns) from the long confusion table. */
tl_rtable *tl_study_confusion(tl_doc *d, tl_section *s, const tl_table *conf, const char *a, const char *b);
/* Prints t as the text renderer writes it, each line after `indent` (NULL: none). TL_EIO when
 * writing failed, TL_ENOMEM. */
tl_status tl_rtable_fprint(const tl_rtable *t, FILE *f, const char *indent);

/* ---- rendering ---- */
/* HTML: one self-contained page (render_html.c), its charts drawn as SVG (tally/svg.h). */
typedef enum {
  TL_FMT_TEXT = 0, TL_FMT_MD = 1, TL_FMT_LATEX = 2, TL_FMT_CSV = 3, TL_FMT_JSON = 4, TL_FMT_HTML = 5
} tl_report_fmt;
/* "text", "md", "latex", "csv", "json", "html" (NULL-terminated, index = tl_report_fmt). */
extern const char *const tl_report_fmt_names[];

/* Appends the whole document in format f to out. TL_ENOMEM only. Deterministic bytes: the same
 * document gives the same output. */
tl_status tl_doc_render(const tl_doc *d, tl_report_fmt f, tl_buf *out);
/* A module's run summary (bench_vt.h `summary`) from its report hook's document: every table and
 * paragraph of every section in order, as text, without the section headings and without the
 * charts (each block after a blank line; consecutive paragraphs together). built: the hook's
 * status; when it (or the rendering) failed, one line says so and points at `tally report`.
 * Takes doc (freed; may be NULL). */
void tl_doc_summary_print(struct tl_doc *doc, tl_status built, FILE *out);
/* One table alone (text: as in a document, without the section heading). */
tl_status tl_rtable_render(const tl_rtable *t, tl_report_fmt f, tl_buf *out);
/* A cell as text, as the text renderer prints it (missing "-", NaN "nan"). */
tl_status tl_rcell_format(const tl_rcol *c, const tl_rcell *x, tl_buf *out);

#endif
