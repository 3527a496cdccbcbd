/* render.c - a report document as text, Markdown, LaTeX and CSV (tally/report.h; JSON:
 * render_json.c). The schemas and the escaping rules are in docs/REPORT.md.
 *
 * Text: every column as wide as its widest cell or header, counted in UTF-8 characters (code
 * points; a double-width character counts once), two spaces between columns: nothing is cut.
 * Markdown: GitHub pipe tables; ASCII punctuation that Markdown reads (\ ` * _ | < > [ ], and
 * $ ~ for GitHub's math and strikethrough) is backslash-escaped, line breaks become spaces.
 * LaTeX: a standalone article with booktabs tables; every special character is escaped
 * (\ & % $ # _ { } ~ ^ < > |). CSV: RFC 4180 (CRLF line ends, a field with a comma, quote, CR
 * or LF quoted, quotes doubled), one long table of every cell. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tally/report.h"

const char *const tl_report_fmt_names[] = {"text", "md", "latex", "csv", "json", "html", NULL};

/* Appends a double: "nan", "inf", "-inf", or printf's %.*f. */
static tl_status put_fixed(tl_buf *b, double v, int digits) {
  if (isnan(v)) return tl_buf_puts(b, "nan");
  if (isinf(v)) return tl_buf_puts(b, v > 0 ? "inf" : "-inf");
  return tl_buf_printf(b, "%.*f", digits, v);
}

tl_status tl_rcell_format(const tl_rcol *c, const tl_rcell *x, tl_buf *out) {
  int dg = c->digits;
  switch (x->tag) {
  case TL_CELL_MISSING: return tl_buf_puts(out, "-");
  case TL_CELL_TEXT: return tl_buf_puts(out, x->s);
  case TL_CELL_INT: return tl_buf_printf(out, "%lld", (long long)x->i);
  case TL_CELL_REAL:
    if (c->kind == TL_RC_P && x->v == 0 && c->p_floor > 0) return tl_buf_printf(out, "<%.3g", c->p_floor);
    if (c->kind == TL_RC_P && isfinite(x->v))
      return x->v > 0 && x->v < 1e-16 ? tl_buf_puts(out, "<1e-16") : tl_buf_printf(out, "%.3g", x->v);
    return put_fixed(out, x->v, dg);
  case TL_CELL_EST: {
    tl_status st = put_fixed(out, x->v, dg);
    if (!st && (isnan(x->lo) && isnan(x->hi))) return st;
    if (!st) st = tl_buf_puts(out, " [");
    if (!st) st = put_fixed(out, x->lo, dg);
    if (!st) st = tl_buf_puts(out, ", ");
    if (!st) st = put_fixed(out, x->hi, dg);
    return st ? st : tl_buf_puts(out, "]");
  }
  }
  return TL_OK;
}

/* Characters (UTF-8 code points) of s[0..n). */
static size_t width(const char *s, size_t n) {
  size_t w = 0;
  for (size_t i = 0; i < n; i++) w += ((unsigned char)s[i] & 0xC0) != 0x80;
  return w;
}

static int right_aligned(const tl_rcol *c) { return c->align == TL_AL_AUTO ? c->kind != TL_RC_TEXT : c->align == TL_AL_RIGHT; }

/* Escapes s into b for format f (text: control characters become spaces). */
static tl_status esc(tl_buf *b, const char *s, tl_report_fmt f) {
  tl_status st = TL_OK;
  for (const char *p = s; *p && !st; p++) {
    unsigned char ch = (unsigned char)*p;
    if (ch < 0x20 || ch == 0x7F) {
      st = tl_buf_puts(b, " ");
      continue;
    }
    if (f == TL_FMT_MD && strchr("\\`*_|<>[]$~", ch)) st = tl_buf_printf(b, "\\%c", ch);
    else if (f == TL_FMT_LATEX && strchr("&%$#_{}", ch)) st = tl_buf_printf(b, "\\%c", ch);
    else if (f == TL_FMT_LATEX && ch == '\\') st = tl_buf_puts(b, "\\textbackslash{}");
    else if (f == TL_FMT_LATEX && ch == '~') st = tl_buf_puts(b, "\\textasciitilde{}");
    else if (f == TL_FMT_LATEX && ch == '^') st = tl_buf_puts(b, "\\textasciicircum{}");
    else if (f == TL_FMT_LATEX && ch == '<') st = tl_buf_puts(b, "\\textless{}");
    else if (f == TL_FMT_LATEX && ch == '>') st = tl_buf_puts(b, "\\textgreater{}");
    else if (f == TL_FMT_LATEX && ch == '|') st = tl_buf_puts(b, "\\textbar{}");
    else st = tl_buf_append(b, p, 1);
  }
  return st;
}

/* Every cell of t as escaped text for f: cells[r * ncols + c] (r = 0: the header), owned. */
static char **cell_texts(const tl_rtable *t, tl_report_fmt f) {
  size_t nc = (size_t)t->ncols, n = (t->nrows + 1) * nc;
  char **out = calloc(n ? n : 1, sizeof *out);
  tl_buf raw, e;
  tl_buf_init(&raw), tl_buf_init(&e);
  int bad = !out;
  for (size_t i = 0; i < n && !bad; i++) {
    size_t r = i / nc, c = i % nc;
    tl_buf_reset(&raw), tl_buf_reset(&e);
    bad = r ? tl_rcell_format(&t->cols[c], &t->cells[(r - 1) * nc + c], &raw) != TL_OK
            : tl_buf_puts(&raw, t->cols[c].name) != TL_OK;
    if (!bad) bad = esc(&e, raw.data, f) != TL_OK;
    if (!bad && !(out[i] = tl_strdup(e.data))) bad = 1;
  }
  tl_buf_release(&raw), tl_buf_release(&e);
  if (bad && out) {
    for (size_t i = 0; i < n; i++) free(out[i]);
    free(out);
    return NULL;
  }
  return out;
}

static void free_texts(char **x, const tl_rtable *t) {
  if (!x) return;
  for (size_t i = 0; i < (t->nrows + 1) * (size_t)t->ncols; i++) free(x[i]);
  free(x);
}

/* s padded to w characters, on the left or the right. */
static tl_status pad(tl_buf *b, const char *s, size_t w, int right, int last) {
  size_t n = width(s, strlen(s));
  tl_status st = TL_OK;
  for (size_t i = n; right && i < w && !st; i++) st = tl_buf_puts(b, " ");
  if (!st) st = tl_buf_puts(b, s);
  for (size_t i = n; !right && !last && i < w && !st; i++) st = tl_buf_puts(b, " ");
  return st;
}

/* A table as aligned text (fmt TEXT) or a Markdown pipe table (MD). */
static tl_status table_grid(const tl_rtable *t, tl_report_fmt f, tl_buf *b) {
  char **x = cell_texts(t, f);
  size_t nc = (size_t)t->ncols, *w = calloc(nc ? nc : 1, sizeof *w);
  tl_status st = x && w ? TL_OK : TL_ENOMEM;
  for (size_t i = 0; !st && i < (t->nrows + 1) * nc; i++) {
    size_t k = width(x[i], strlen(x[i]));
    if (k > w[i % nc]) w[i % nc] = k;
  }
  if (!st && t->title && *t->title) {
    if (f == TL_FMT_MD) st = tl_buf_puts(b, "**"), st = st ? st : esc(b, t->title, f), st = st ? st : tl_buf_puts(b, "**\n\n");
    else st = tl_buf_printf(b, "%s\n", t->title);
  }
  const char *sep = f == TL_FMT_MD ? " | " : "  ";
  for (size_t r = 0; !st && r <= t->nrows; r++) {
    if (f == TL_FMT_MD) st = tl_buf_puts(b, "| ");
    for (size_t c = 0; !st && c < nc; c++) {
      if (c) st = tl_buf_puts(b, sep);
      if (!st) st = pad(b, x[r * nc + c], w[c], right_aligned(&t->cols[c]), f == TL_FMT_TEXT && c + 1 == nc);
    }
    if (!st) st = tl_buf_puts(b, f == TL_FMT_MD ? " |\n" : "\n");
    if (r || st) continue;
    if (f == TL_FMT_MD) st = tl_buf_puts(b, "|");
    for (size_t c = 0; !st && c < nc; c++) { /* the rule under the header */
      int right = right_aligned(&t->cols[c]);
      if (f == TL_FMT_TEXT && c) st = tl_buf_puts(b, sep);
      size_t n = w[c] + (f == TL_FMT_MD ? 2 : 0);
      for (size_t i = 0; i < n && !st; i++)
        st = tl_buf_puts(b, f == TL_FMT_MD && ((right && i + 1 == n) || (!right && i == 0)) ? ":" : "-");
      if (!st && f == TL_FMT_MD) st = tl_buf_puts(b, "|");
    }
    if (!st) st = tl_buf_puts(b, "\n");
  }
  if (!st && t->note && *t->note) {
    if (f == TL_FMT_MD) st = tl_buf_puts(b, "\n"), st = st ? st : esc(b, t->note, f), st = st ? st : tl_buf_puts(b, "\n");
    else st = tl_buf_printf(b, "%s\n", t->note);
  }
  free_texts(x, t), free(w);
  return st;
}

/* A booktabs table. */
static tl_status table_latex(const tl_rtable *t, tl_buf *b) {
  char **x = cell_texts(t, TL_FMT_LATEX);
  size_t nc = (size_t)t->ncols;
  tl_status st = x ? tl_buf_puts(b, "\\begin{table}[htbp]\n\\centering\n\\small\n") : TL_ENOMEM;
  if (!st && t->title && *t->title) st = tl_buf_puts(b, "\\caption{"), st = st ? st : esc(b, t->title, TL_FMT_LATEX),
                                    st = st ? st : tl_buf_puts(b, "}\n");
  if (!st) st = tl_buf_puts(b, "\\tallyfit{\\begin{tabular}{");
  for (size_t c = 0; !st && c < nc; c++) st = tl_buf_puts(b, right_aligned(&t->cols[c]) ? "r" : "l");
  if (!st) st = tl_buf_puts(b, "}\n\\toprule\n");
  for (size_t r = 0; !st && r <= t->nrows; r++) {
    for (size_t c = 0; !st && c < nc; c++) st = tl_buf_printf(b, "%s%s", c ? " & " : "", x[r * nc + c]);
    if (!st) st = tl_buf_puts(b, r ? " \\\\\n" : " \\\\\n\\midrule\n");
  }
  if (!st) st = tl_buf_puts(b, "\\bottomrule\n\\end{tabular}}\n");
  if (!st && t->note && *t->note) st = tl_buf_puts(b, "\\par\\footnotesize "), st = st ? st : esc(b, t->note, TL_FMT_LATEX),
                                  st = st ? st : tl_buf_puts(b, "\n");
  if (!st) st = tl_buf_puts(b, "\\end{table}\n\n");
  free_texts(x, t);
  return st;
}

/* One CSV field (RFC 4180). */
static tl_status csv_field(tl_buf *b, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) return tl_buf_puts(b, s);
  tl_status st = tl_buf_puts(b, "\"");
  for (const char *p = s; *p && !st; p++) st = *p == '"' ? tl_buf_puts(b, "\"\"") : tl_buf_append(b, p, 1);
  return st ? st : tl_buf_puts(b, "\"");
}

static const char *const KIND[] = {"text", "int", "real", "estimate", "p"};

/* A double for scripts: the shortest of %.15g / %.17g that reads back exactly; NaN "NaN". */
static tl_status put_exact(tl_buf *b, double v) {
  if (isnan(v)) return tl_buf_puts(b, "NaN");
  if (isinf(v)) return tl_buf_puts(b, v > 0 ? "Infinity" : "-Infinity");
  char s[40];
  snprintf(s, sizeof s, "%.15g", v);
  if (strtod(s, NULL) != v) snprintf(s, sizeof s, "%.17g", v);
  return tl_buf_puts(b, s);
}

/* Every cell of t as a line section,table,row,column,kind,value,lo,hi. */
static tl_status table_csv(const char *sec, const tl_rtable *t, tl_buf *b) {
  tl_status st = TL_OK;
  for (size_t r = 0; r < t->nrows && !st; r++)
    for (int c = 0; c < t->ncols && !st; c++) {
      const tl_rcell *x = &t->cells[r * (size_t)t->ncols + (size_t)c];
      st = csv_field(b, sec);
      if (!st) st = tl_buf_puts(b, ",");
      if (!st) st = csv_field(b, t->title);
      if (!st) st = tl_buf_printf(b, ",%zu,", r + 1);
      if (!st) st = csv_field(b, t->cols[c].name);
      if (!st) st = tl_buf_printf(b, ",%s,", KIND[t->cols[c].kind]);
      if (st) break;
      if (x->tag == TL_CELL_TEXT) st = csv_field(b, x->s);
      else if (x->tag == TL_CELL_INT) st = tl_buf_printf(b, "%lld", (long long)x->i);
      else if (x->tag != TL_CELL_MISSING) st = put_exact(b, x->v);
      if (!st && x->tag == TL_CELL_EST) {
        st = tl_buf_puts(b, ",");
        if (!st) st = put_exact(b, x->lo);
        if (!st) st = tl_buf_puts(b, ",");
        if (!st) st = put_exact(b, x->hi);
      } else if (!st) st = tl_buf_puts(b, ",,");
      if (!st) st = tl_buf_puts(b, "\r\n");
    }
  return st;
}

tl_status tl_rtable_render(const tl_rtable *t, tl_report_fmt f, tl_buf *out) {
  switch (f) {
  case TL_FMT_TEXT:
  case TL_FMT_MD: return table_grid(t, f, out);
  case TL_FMT_LATEX: return table_latex(t, out);
  case TL_FMT_CSV: return table_csv("", t, out);
  case TL_FMT_JSON:
  case TL_FMT_HTML: break; /* a table alone: text formats only */
  }
  return TL_EINTERNAL;
}

/* A heading: text underlined, "## " in Markdown, \section* in LaTeX. level 0: the document. */
static tl_status heading(tl_buf *b, const char *s, int level, tl_report_fmt f) {
  tl_status st = TL_OK;
  if (f == TL_FMT_MD) {
    st = tl_buf_puts(b, level ? "## " : "# ");
    if (!st) st = esc(b, s, f);
    return st ? st : tl_buf_puts(b, "\n\n");
  }
  if (f == TL_FMT_LATEX) {
    st = tl_buf_puts(b, level ? "\\section*{" : "\\title{");
    if (!st) st = esc(b, s, f);
    return st ? st : tl_buf_puts(b, level ? "}\n\n" : "}\n\\date{}\n\\begin{document}\n\\maketitle\n\n");
  }
  st = esc(b, s, f);
  if (!st) st = tl_buf_puts(b, "\n");
  for (size_t i = 0, n = width(s, strlen(s)); i < n && !st; i++) st = tl_buf_puts(b, level ? "-" : "=");
  return st ? st : tl_buf_puts(b, "\n\n");
}

tl_status tl_doc_render_json(const tl_doc *d, tl_buf *out); /* render_json.c */
tl_status tl_doc_render_html(const tl_doc *d, tl_buf *out); /* render_html.c */

tl_status tl_doc_render(const tl_doc *d, tl_report_fmt f, tl_buf *out) {
  if (tl_doc_ok(d)) return TL_ENOMEM;
  if (f == TL_FMT_JSON) return tl_doc_render_json(d, out);
  if (f == TL_FMT_HTML) return tl_doc_render_html(d, out);
  tl_status st = TL_OK;
  if (f == TL_FMT_CSV) st = tl_buf_puts(out, "section,table,row,column,kind,value,lo,hi\r\n");
  if (f == TL_FMT_LATEX)
    st = tl_buf_puts(out, "% tally report: each table below pastes into a paper that loads booktabs and graphicx\n"
                          "% and defines \\tallyfit (below: a table wider than the line is scaled down to it)\n"
                          "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage[utf8]{inputenc}\n"
                          "\\usepackage{booktabs}\n\\usepackage{graphicx}\n"
                          "\\usepackage[margin=1.5cm,landscape]{geometry}\n"
                          "\\newsavebox{\\tallybox}\n"
                          "\\newcommand{\\tallyfit}[1]{\\sbox{\\tallybox}{#1}\\ifdim\\wd\\tallybox>\\linewidth"
                          "\\resizebox{\\linewidth}{!}{\\usebox{\\tallybox}}\\else\\usebox{\\tallybox}\\fi}\n");
  if (!st && f != TL_FMT_CSV) st = heading(out, d->title, 0, f);
  for (int i = 0; i < d->nsec && !st; i++) {
    const tl_section *s = &d->secs[i];
    if (f != TL_FMT_CSV) st = heading(out, s->title, 1, f);
    for (int k = 0; k < s->nblocks && !st; k++) {
      const tl_block *bl = &s->blocks[k];
      if (bl->kind == TL_BLOCK_TABLE) {
        st = f == TL_FMT_CSV ? table_csv(s->title, bl->table, out) : tl_rtable_render(bl->table, f, out);
        if (!st && (f == TL_FMT_TEXT || f == TL_FMT_MD)) st = tl_buf_puts(out, "\n");
      } else if (bl->kind == TL_BLOCK_TEXT && f != TL_FMT_CSV) {
        st = esc(out, bl->text, f);
        if (!st) st = tl_buf_puts(out, "\n\n");
      } /* charts: JSON (and the HTML page) only */
    }
  }
  if (!st && f == TL_FMT_LATEX) st = tl_buf_puts(out, "\\end{document}\n");
  return st;
}

void tl_doc_summary_print(struct tl_doc *doc, tl_status rs, FILE *out) {
  tl_buf tb;
  tl_buf_init(&tb);
  if (!rs && !doc) rs = TL_ENOMEM;
  int prev_text = 0;
  for (int k = 0; !rs && k < doc->nsec; k++)
    for (int i = 0; !rs && i < doc->secs[k].nblocks; i++) {
      const tl_block *bl = &doc->secs[k].blocks[i];
      if (bl->kind == TL_BLOCK_CHART) continue; /* charts: JSON and HTML only */
      rs = tl_buf_puts(&tb, bl->kind == TL_BLOCK_TEXT && prev_text ? "" : "\n");
      prev_text = bl->kind == TL_BLOCK_TEXT;
      if (!rs && bl->kind == TL_BLOCK_TABLE) rs = tl_rtable_render(bl->table, TL_FMT_TEXT, &tb);
      if (!rs && bl->kind == TL_BLOCK_TEXT) rs = tl_buf_printf(&tb, "%s\n", bl->text);
    }
  if (rs) fprintf(out, "\n(the summary's tables: %s; `tally report` prints them from the file)\n", tl_strerror(rs));
  else fputs(tb.data ? tb.data : "", out);
  tl_buf_release(&tb);
  tl_doc_free(doc);
}
