/* html.h - a self-contained HTML page: one file that needs no network (no external CSS, script,
 * font or image), with inline CSS, inline SVG charts (tally/svg.h), tables and a small inline
 * script that makes tables sortable and filterable.
 *
 * Contract (every function below):
 *  - Appends to `out` (tl_buf); on failure `out` is restored to its length before the call and
 *    TL_ENOMEM or TL_EINPUT (bad arguments, message in err) is returned.
 *  - Every text argument is UTF-8 and is escaped for HTML (& < > " ' as entities; invalid UTF-8
 *    and control characters other than TAB/LF/CR become U+FFFD): no caller text is ever markup.
 *    The one exception is tl_html_figure's svg, which must be the output of a tl_svg_* writer.
 *  - Deterministic bytes: no time, no random value; ids come from the caller.
 *  - A page is: tl_html_begin, then any sequence of sections (nested up to h4), paragraphs,
 *    figures, tables and details blocks, then tl_html_end (which writes the script). The writer
 *    does not track nesting: each tl_html_section_begin needs its tl_html_section_end.
 *
 * The script (a few KB, hand-written, in html.c; documented in docs/REPORT-HTML.md) acts on
 * every <table class="sortable">: a click (or Enter/Space: the header text is a <button>) on a
 * column header sorts the rows by that column, ascending then descending (aria-sort says
 * which); cells that start with a number compare as numbers, before text; empty, "NaN", "nan",
 * "n/a" and "-" cells sort last in both directions. A text box above the table keeps the rows
 * whose text contains what is typed (case-insensitive) and says how many are shown. Without
 * script the tables are plain tables. */
#ifndef TALLY_HTML_H
#define TALLY_HTML_H

#include <stddef.h>

#include "tally/err.h"
#include "tally/str.h"

/* <!DOCTYPE html>, <html lang="en">, <head> with <meta charset="utf-8">, the viewport, <title>
 * and the inline CSS, then <body><main><h1>title</h1>. title: non-empty. */
tl_status tl_html_begin(tl_buf *out, const char *title, tl_err *err);
/* </main>, the inline script, </body></html>. */
tl_status tl_html_end(tl_buf *out, tl_err *err);

/* <section id="ID" aria-labelledby="ID-h"><hLEVEL id="ID-h">heading</hLEVEL>; level 2..4;
 * id: [A-Za-z][A-Za-z0-9_-]{0,63}. */
tl_status tl_html_section_begin(tl_buf *out, int level, const char *id, const char *heading, tl_err *err);
tl_status tl_html_section_end(tl_buf *out, tl_err *err);

/* <p>text</p> */
tl_status tl_html_para(tl_buf *out, const char *text, tl_err *err);

/* <figure>svg<figcaption>caption</figcaption></figure>; svg: one chart from tl_svg_*, written
 * as it is (checked only to start as those charts start and to end with "</svg>\n": a check of
 * form, not a sanitizer); caption may be NULL. */
tl_status tl_html_figure(tl_buf *out, const char *svg, const char *caption, tl_err *err);

/* A table: <table id class="sortable"?><caption>caption</caption><thead> with <th
 * scope="col"> per column, <tbody> with one <tr> per row; when row_headers is 1 the first cell
 * of each row is <th scope="row">. cells: [nrows * ncols], row-major, already formatted by the
 * caller (a NaN written as "NaN", never as 0); a NULL cell is empty. numeric: [ncols] or NULL;
 * numeric[k] = 1 right-aligns column k (class "num"). */
typedef struct {
  const char *id;       /* [A-Za-z][A-Za-z0-9_-]{0,63} */
  const char *caption;  /* required */
  size_t ncols, nrows;
  const char *const *cols;  /* [ncols] */
  const char *const *cells; /* [nrows * ncols] */
  const int *numeric;       /* [ncols] or NULL */
  int row_headers;
  int sortable;
} tl_html_table;
tl_status tl_html_table_write(tl_buf *out, const tl_html_table *t, tl_err *err);

/* A collapsed block for a long raw text, as the parser audit shows a diverging example:
 * <details><summary>summary</summary><pre>raw</pre> and a table of what each parser made of
 * it: parser name, the rule that fired, the answer (all [nparsers]; a NULL answer is shown as
 * "(no answer)"). nparsers may be 0 (then only the raw text). */
typedef struct {
  const char *summary;
  const char *raw;
  size_t nparsers;
  const char *const *parsers;
  const char *const *rules;
  const char *const *answers;
} tl_html_details;
tl_status tl_html_details_write(tl_buf *out, const tl_html_details *d, tl_err *err);

/* The inline script's text (for the tests and the docs). */
const char *tl_html_script(void);

#endif
