/* html.c - the self-contained HTML page writer of tally/html.h.
 *
 * Hand-written: the page is plain text output; the sorting/filtering script is ~90 lines of
 * ES5 (no library: the page must open offline and stay a few KB; the npm table-sort libraries
 * would add a vendored file to keep up to date for what fits in this one string). */
#include "tally/html.h"

#include <stdio.h>
#include <string.h>

#include "tally/svg.h" /* tl_svg_esc: the same escaping serves HTML text and attributes */

/* ---- the inline CSS ---- */
static const char CSS[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;color:#111;"
    "background:#fff;line-height:1.4}\n"
    "main{max-width:1200px;margin:0 auto;padding:1em 1.5em}\n"
    "h1{font-size:1.6em}h2{font-size:1.3em;border-bottom:1px solid #ccc}h3{font-size:1.1em}\n"
    "figure{margin:1em 0;overflow-x:auto}figcaption{font-size:.9em;color:#333}\n"
    "table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.9em}\n"
    "caption{text-align:left;font-weight:bold;padding:.3em 0}\n"
    "th,td{border:1px solid #bbb;padding:.2em .5em;vertical-align:top}\n"
    "tbody th{text-align:left}thead th{background:#eee}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "th button{font:inherit;font-weight:bold;background:none;border:0;padding:0;cursor:pointer}\n"
    "th[aria-sort=ascending] button::after{content:' \\25B2'}\n"
    "th[aria-sort=descending] button::after{content:' \\25BC'}\n"
    ".tl-filter{margin:.3em 0}.tl-filter input{font:inherit;padding:.1em .3em}\n"
    "details{margin:.4em 0;border:1px solid #ccc;padding:.3em .6em}summary{cursor:pointer}\n"
    "pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;padding:.5em;max-height:30em;"
    "overflow:auto}\n";

/* ---- the inline script (ES5, strict; documented in docs/REPORT-HTML.md) ----
 * key(cell): [0, number] for a cell whose text starts with a number, [1, text] for other text,
 * [2, ""] for a missing value (empty, NaN, nan, n/a, -): compare() orders by the class first and
 * keeps class 2 last whichever the direction. The sort is stable (index as the last key). */
static const char SCRIPT[] =
    "(function(){'use strict';\n"
    "var NUM=/^\\s*[-+]?(\\d+\\.?\\d*|\\.\\d+)(e[-+]?\\d+)?/i;\n"
    "var MISSING={'':1,'nan':1,'n/a':1,'-':1};\n"
    "function key(td){var t=(td?td.textContent:'').trim();\n"
    " if(MISSING[t.toLowerCase()])return[2,0];\n"
    " var m=NUM.exec(t);if(m)return[0,parseFloat(m[0])];return[1,t.toLowerCase()];}\n"
    "function cmp(a,b,dir){if(a[0]!==b[0]){if(a[0]===2||b[0]===2)return a[0]===2?1:-1;return (a[0]-b[0])*dir;}\n"
    " if(a[0]===2)return 0;if(a[1]<b[1])return -dir;if(a[1]>b[1])return dir;return 0;}\n"
    "function sortBy(table,col,th){var body=table.tBodies[0];if(!body)return;\n"
    " var dir=th.getAttribute('aria-sort')==='ascending'?-1:1;\n"
    " var heads=table.tHead.rows[0].cells;for(var h=0;h<heads.length;h++)heads[h].removeAttribute('aria-sort');\n"
    " th.setAttribute('aria-sort',dir===1?'ascending':'descending');\n"
    " var rows=[];for(var i=0;i<body.rows.length;i++){var r=body.rows[i];rows.push([key(r.cells[col]),i,r]);}\n"
    " rows.sort(function(a,b){return cmp(a[0],b[0],dir)||a[1]-b[1];});\n"
    " for(var j=0;j<rows.length;j++)body.appendChild(rows[j][2]);}\n"
    "function filter(table,q,out){var body=table.tBodies[0];if(!body)return;q=q.toLowerCase();var n=0;\n"
    " for(var i=0;i<body.rows.length;i++){var r=body.rows[i];\n"
    "  var show=!q||r.textContent.toLowerCase().indexOf(q)>=0;r.hidden=!show;if(show)n++;}\n"
    " out.textContent=n+' of '+body.rows.length+' rows';}\n"
    "function setup(table){if(!table.tHead||!table.tHead.rows.length)return;\n"
    " var heads=table.tHead.rows[0].cells;\n"
    " for(var k=0;k<heads.length;k++)(function(th,col){var b=document.createElement('button');\n"
    "  b.type='button';while(th.firstChild)b.appendChild(th.firstChild);th.appendChild(b);\n"
    "  b.addEventListener('click',function(){sortBy(table,col,th);});})(heads[k],k);\n"
    " var box=document.createElement('div');box.className='tl-filter';\n"
    " var inp=document.createElement('input');inp.type='search';\n"
    " var cap=table.caption?table.caption.textContent:'the table';\n"
    " inp.setAttribute('aria-label','Filter the rows of '+cap);inp.placeholder='Filter rows';\n"
    " var out=document.createElement('span');out.setAttribute('aria-live','polite');out.style.marginLeft='.5em';\n"
    " box.appendChild(inp);box.appendChild(out);table.parentNode.insertBefore(box,table);\n"
    " inp.addEventListener('input',function(){filter(table,inp.value,out);});filter(table,'',out);}\n"
    "var ts=document.querySelectorAll('table.sortable');for(var i=0;i<ts.length;i++)setup(ts[i]);\n"
    "})();\n";

const char *tl_html_script(void) { return SCRIPT; }

/* ---- helpers ---- */

typedef struct {
  tl_buf *b;
  tl_status st;
  size_t len0;
} hw;

static void hw_puts(hw *w, const char *s) {
  if (w->st == TL_OK) w->st = tl_buf_puts(w->b, s);
}
static void hw_esc(hw *w, const char *s) {
  if (w->st == TL_OK) w->st = tl_svg_esc(w->b, s);
}
static tl_status hw_done(hw *w, tl_err *err) {
  if (w->st == TL_OK) return TL_OK;
  w->b->len = w->len0;
  if (w->b->data) w->b->data[w->len0] = '\0';
  return tl_err_set(err, w->st, "html: cannot write the page: %s", tl_strerror(w->st));
}

static int id_ok(const char *id) {
  size_t n = id ? strlen(id) : 0;
  if (n < 1 || n > 64 || !((id[0] | 32) >= 'a' && (id[0] | 32) <= 'z')) return 0;
  for (size_t i = 1; i < n; i++) {
    char c = id[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return 0;
  }
  return 1;
}

/* ---- the page ---- */

tl_status tl_html_begin(tl_buf *out, const char *title, tl_err *err) {
  if (!title || !*title) return tl_err_set(err, TL_EINPUT, "html: a page needs a title");
  hw w = {out, TL_OK, out->len};
  hw_puts(&w, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
              "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
  hw_esc(&w, title);
  hw_puts(&w, "</title>\n<style>\n");
  hw_puts(&w, CSS);
  hw_puts(&w, "</style>\n</head>\n<body>\n<main>\n<h1>");
  hw_esc(&w, title);
  hw_puts(&w, "</h1>\n");
  return hw_done(&w, err);
}

tl_status tl_html_end(tl_buf *out, tl_err *err) {
  hw w = {out, TL_OK, out->len};
  hw_puts(&w, "</main>\n<script>\n");
  hw_puts(&w, SCRIPT);
  hw_puts(&w, "</script>\n</body>\n</html>\n");
  return hw_done(&w, err);
}

tl_status tl_html_section_begin(tl_buf *out, int level, const char *id, const char *heading, tl_err *err) {
  if (level < 2 || level > 4 || !id_ok(id) || !heading || !*heading)
    return tl_err_set(err, TL_EINPUT, "html: a section needs a level 2..4, an id [A-Za-z][A-Za-z0-9_-]{0,63} "
                      "and a heading (id '%.80s')", id ? id : "(null)");
  hw w = {out, TL_OK, out->len};
  char t[200];
  snprintf(t, sizeof t, "<section id=\"%s\" aria-labelledby=\"%s-h\">\n<h%d id=\"%s-h\">", id, id, level, id);
  hw_puts(&w, t);
  hw_esc(&w, heading);
  snprintf(t, sizeof t, "</h%d>\n", level);
  hw_puts(&w, t);
  return hw_done(&w, err);
}

tl_status tl_html_section_end(tl_buf *out, tl_err *err) {
  hw w = {out, TL_OK, out->len};
  hw_puts(&w, "</section>\n");
  return hw_done(&w, err);
}

tl_status tl_html_para(tl_buf *out, const char *text, tl_err *err) {
  hw w = {out, TL_OK, out->len};
  hw_puts(&w, "<p>");
  hw_esc(&w, text);
  hw_puts(&w, "</p>\n");
  return hw_done(&w, err);
}

tl_status tl_html_figure(tl_buf *out, const char *svg, const char *caption, tl_err *err) {
  /* a check of form, not a sanitizer: the text must start as tl_svg_* charts start */
  static const char head[] = "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" ";
  size_t n = svg ? strlen(svg) : 0;
  if (n < sizeof head + 7 || strncmp(svg, head, sizeof head - 1) != 0 || strcmp(svg + n - 7, "</svg>\n") != 0)
    return tl_err_set(err, TL_EINPUT, "html: a figure takes one chart written by tl_svg_*");
  hw w = {out, TL_OK, out->len};
  hw_puts(&w, "<figure>\n");
  hw_puts(&w, svg);
  if (caption) {
    hw_puts(&w, "<figcaption>");
    hw_esc(&w, caption);
    hw_puts(&w, "</figcaption>\n");
  }
  hw_puts(&w, "</figure>\n");
  return hw_done(&w, err);
}

/* <th scope="col" class="num"?>name</th> ... */
static void table_head(hw *w, const tl_html_table *t) {
  hw_puts(w, "<thead><tr>");
  for (size_t k = 0; k < t->ncols; k++) {
    hw_puts(w, t->numeric && t->numeric[k] ? "<th scope=\"col\" class=\"num\">" : "<th scope=\"col\">");
    hw_esc(w, t->cols[k]);
    hw_puts(w, "</th>");
  }
  hw_puts(w, "</tr></thead>\n");
}

tl_status tl_html_table_write(tl_buf *out, const tl_html_table *t, tl_err *err) {
  if (!t || !id_ok(t->id) || !t->caption || !*t->caption || t->ncols == 0 || !t->cols ||
      (t->nrows > 0 && !t->cells))
    return tl_err_set(err, TL_EINPUT, "html: a table needs an id [A-Za-z][A-Za-z0-9_-]{0,63}, a caption, "
                      "columns and cells (id '%.80s')", t && t->id ? t->id : "(null)");
  hw w = {out, TL_OK, out->len};
  char o[160];
  snprintf(o, sizeof o, "<table id=\"%s\"%s>\n<caption>", t->id, t->sortable ? " class=\"sortable\"" : "");
  hw_puts(&w, o);
  hw_esc(&w, t->caption);
  hw_puts(&w, "</caption>\n");
  table_head(&w, t);
  hw_puts(&w, "<tbody>\n");
  for (size_t r = 0; r < t->nrows; r++) {
    hw_puts(&w, "<tr>");
    for (size_t k = 0; k < t->ncols; k++) {
      int num = t->numeric && t->numeric[k];
      if (k == 0 && t->row_headers)
        hw_puts(&w, num ? "<th scope=\"row\" class=\"num\">" : "<th scope=\"row\">");
      else
        hw_puts(&w, num ? "<td class=\"num\">" : "<td>");
      hw_esc(&w, t->cells[r * t->ncols + k]);
      hw_puts(&w, k == 0 && t->row_headers ? "</th>" : "</td>");
    }
    hw_puts(&w, "</tr>\n");
  }
  hw_puts(&w, "</tbody>\n</table>\n");
  return hw_done(&w, err);
}

tl_status tl_html_details_write(tl_buf *out, const tl_html_details *d, tl_err *err) {
  if (!d || !d->summary || !*d->summary || !d->raw ||
      (d->nparsers > 0 && (!d->parsers || !d->rules || !d->answers)))
    return tl_err_set(err, TL_EINPUT, "html: a details block needs a summary, the raw text and, per parser, "
                      "its name, rule and answer");
  hw w = {out, TL_OK, out->len};
  hw_puts(&w, "<details>\n<summary>");
  hw_esc(&w, d->summary);
  hw_puts(&w, "</summary>\n<pre>");
  hw_esc(&w, d->raw);
  hw_puts(&w, "</pre>\n");
  if (d->nparsers > 0) {
    hw_puts(&w, "<table>\n<caption>What each parser made of it</caption>\n<thead><tr><th scope=\"col\">parser"
                "</th><th scope=\"col\">rule that fired</th><th scope=\"col\">answer</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < d->nparsers; i++) {
      hw_puts(&w, "<tr><th scope=\"row\">");
      hw_esc(&w, d->parsers[i]);
      hw_puts(&w, "</th><td>");
      hw_esc(&w, d->rules[i]);
      hw_puts(&w, "</td><td>");
      hw_esc(&w, d->answers[i] ? d->answers[i] : "(no answer)");
      hw_puts(&w, "</td></tr>\n");
    }
    hw_puts(&w, "</tbody>\n</table>\n");
  }
  hw_puts(&w, "</details>\n");
  return hw_done(&w, err);
}
