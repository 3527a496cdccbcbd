/* render_html.c - a document (tally/report.h) as one self-contained HTML page: its sections,
 * paragraphs and tables through the page writer (tally/html.h: escaped text, sortable and
 * filterable tables, no network), its charts drawn as SVG by tally (tally/svg.h). Deterministic
 * bytes: ids come from the section and block indices ("s2-b3"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tally/html.h"
#include "tally/report.h"
#include "tally/svg.h"

/* Distinct strings in first-seen order (a chart's categories). */
typedef struct {
  const char **v;
  size_t n, cap;
} labels;

static size_t label_index(labels *l, const char *s) { /* (size_t)-1: out of memory */
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->v[i], s) == 0) return i;
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 16;
    const char **p = realloc(l->v, cap * sizeof *p);
    if (!p) return (size_t)-1;
    l->v = p, l->cap = cap;
  }
  l->v[l->n] = s;
  return l->n++;
}

/* The chart's text alternative: what it plots, over what. */
static tl_status chart_desc(const tl_chart *c, tl_buf *d) {
  const char *kind = c->kind == TL_CHART_FOREST    ? "Forest plot"
                     : c->kind == TL_CHART_HEATMAP ? "Heatmap"
                     : c->kind == TL_CHART_STRIP   ? "Strip plot"
                                                   : "Bars with confidence intervals";
  tl_status st = tl_buf_printf(d, "%s of %s", kind, c->y && *c->y ? c->y : "the values");
  if (!st && c->x && *c->x) st = tl_buf_printf(d, " by %s", c->x);
  if (!st && c->nseries) st = tl_buf_printf(d, "; %d series", c->nseries);
  if (!st) st = tl_buf_puts(d, "; every value is also written as text beside its mark.");
  return st;
}

/* Bars (and a heatmap's cells): the chart's points as a [groups x series] grid, NaN where a
 * series has no point of that group. */
static tl_status grid(const tl_chart *c, labels *g, double **est, double **lo, double **hi) {
  *est = *lo = *hi = NULL;
  for (int s = 0; s < c->nseries; s++)
    for (size_t p = 0; p < c->series[s].n; p++)
      if (label_index(g, c->series[s].pts[p].label) == (size_t)-1) return TL_ENOMEM;
  size_t ns = (size_t)c->nseries, n = g->n * ns > 0 ? g->n * ns : 1;
  *est = malloc(n * sizeof **est), *lo = malloc(n * sizeof **lo), *hi = malloc(n * sizeof **hi);
  if (!*est || !*lo || !*hi) return TL_ENOMEM;
  for (size_t i = 0; i < n; i++) (*est)[i] = (*lo)[i] = (*hi)[i] = NAN;
  for (size_t s = 0; s < ns; s++)
    for (size_t p = 0; p < c->series[s].n; p++) {
      const tl_chart_point *q = &c->series[s].pts[p];
      size_t k = label_index(g, q->label) * ns + s;
      (*est)[k] = q->value, (*lo)[k] = q->lo, (*hi)[k] = q->hi;
    }
  return TL_OK;
}

static tl_status chart_svg(const tl_chart *c, const char *id, tl_buf *svg, tl_err *err) {
  tl_buf desc;
  tl_buf_init(&desc);
  tl_status st = chart_desc(c, &desc);
  tl_svg_frame fr = {id, c->title && *c->title ? c->title : "Chart", desc.data, c->y, 0};
  labels g = {0};
  double *est = NULL, *lo = NULL, *hi = NULL;
  const char **names = malloc((c->nseries ? (size_t)c->nseries : 1) * sizeof *names);
  if (!names) st = TL_ENOMEM;
  for (int s = 0; !st && s < c->nseries; s++) names[s] = c->series[s].name;
  if (!st) st = grid(c, &g, &est, &lo, &hi);
  if (st || !g.n || !c->nseries) {
    if (!st) st = tl_err_set(err, TL_EINPUT, "chart '%s' has no point", fr.title);
  } else if (c->kind == TL_CHART_HEATMAP) { /* rows = series, columns = labels: transpose */
    size_t nr = (size_t)c->nseries, nc = g.n;
    double *cnt = malloc(nr * nc * sizeof *cnt);
    if (!cnt) st = TL_ENOMEM;
    for (size_t r = 0; !st && r < nr; r++)
      for (size_t k = 0; k < nc; k++) cnt[r * nc + k] = est[k * nr + r];
    tl_svg_heatmap h = {fr, nr, nc, names, g.v, cnt, c->y, c->x};
    if (!st) st = tl_svg_heatmap_write(svg, &h, err);
    free(cnt);
  } else if (c->kind == TL_CHART_FOREST && c->nseries == 1) {
    tl_svg_forest f = {fr, g.n, g.v, est, lo, hi, isnan(c->ref) ? 0 : c->ref};
    st = tl_svg_forest_write(svg, &f, err);
  } else if (c->kind == TL_CHART_STRIP) {
    size_t ns = (size_t)c->nseries, tot = 0;
    for (size_t s = 0; s < ns; s++) tot += c->series[s].n;
    size_t *off = malloc((ns + 1) * sizeof *off);
    double *vals = malloc((tot ? tot : 1) * sizeof *vals);
    if (!off || !vals) st = TL_ENOMEM;
    for (size_t s = 0, k = 0; !st && s < ns; s++) {
      off[s] = k;
      for (size_t p = 0; p < c->series[s].n; p++) vals[k++] = c->series[s].pts[p].value;
      off[s + 1] = k;
    }
    tl_svg_strip sp = {fr, ns, names, off, vals};
    if (!st) st = tl_svg_strip_write(svg, &sp, err);
    free(off);
    free(vals);
  } else { /* bars with CIs (and a forest of several series, drawn as bars around its reference) */
    tl_svg_bars b = {fr, 1, g.n, (size_t)c->nseries, g.v, names, est, lo, hi, 0, 0};
    st = tl_svg_bars_write(svg, &b, err);
  }
  free(names);
  free(g.v);
  free(est);
  free(lo);
  free(hi);
  tl_buf_release(&desc);
  return st;
}

/* A document table through the page writer: its cells formatted as the text renderer formats
 * them (missing "-", NaN "nan"). */
static tl_status table_html(const tl_rtable *t, const char *id, const char *section, tl_buf *out, tl_err *err) {
  size_t nc = (size_t)t->ncols, n = t->nrows * nc;
  char **cells = calloc(n ? n : 1, sizeof *cells);
  const char **cols = malloc((nc ? nc : 1) * sizeof *cols);
  int *num = malloc((nc ? nc : 1) * sizeof *num);
  tl_status st = cells && cols && num ? TL_OK : TL_ENOMEM;
  for (size_t c = 0; !st && c < nc; c++) cols[c] = t->cols[c].name, num[c] = t->cols[c].kind != TL_RC_TEXT;
  tl_buf b;
  tl_buf_init(&b);
  for (size_t r = 0; !st && r < t->nrows; r++)
    for (size_t c = 0; !st && c < nc; c++) {
      tl_buf_reset(&b);
      st = tl_rcell_format(&t->cols[c], &t->cells[r * nc + c], &b);
      if (!st && !(cells[r * nc + c] = tl_strndup(b.data, b.len))) st = TL_ENOMEM;
    }
  tl_buf_release(&b);
  tl_html_table h = {id, t->title && *t->title ? t->title : section, nc, t->nrows, cols,
                     (const char *const *)cells, num, 0, 1};
  if (!st) st = tl_html_table_write(out, &h, err);
  if (!st && t->note && *t->note) st = tl_html_para(out, t->note, err);
  for (size_t i = 0; cells && i < n; i++) free(cells[i]);
  free(cells);
  free(cols);
  free(num);
  return st;
}

tl_status tl_doc_render_html(const tl_doc *d, tl_buf *out); /* render.c dispatches here */
tl_status tl_doc_render_html(const tl_doc *d, tl_buf *out) {
  tl_err err = {{0}};
  tl_status st = tl_html_begin(out, d->title && *d->title ? d->title : "tally report", &err);
  tl_buf svg;
  tl_buf_init(&svg);
  char id[64];
  for (int i = 0; i < d->nsec && !st; i++) {
    const tl_section *s = &d->secs[i];
    snprintf(id, sizeof id, "s%d", i);
    st = tl_html_section_begin(out, 2, id, s->title && *s->title ? s->title : "(untitled)", &err);
    for (int k = 0; k < s->nblocks && !st; k++) {
      const tl_block *bl = &s->blocks[k];
      snprintf(id, sizeof id, "s%d-b%d", i, k);
      if (bl->kind == TL_BLOCK_TEXT) {
        st = tl_html_para(out, bl->text, &err);
      } else if (bl->kind == TL_BLOCK_TABLE) {
        st = table_html(bl->table, id, s->title, out, &err);
      } else {
        tl_buf_reset(&svg);
        st = chart_svg(bl->chart, id, &svg, &err);
        if (st == TL_EINPUT) st = tl_html_para(out, err.msg, &err); /* a chart with nothing to draw: said */
        else if (!st) st = tl_html_figure(out, svg.data, bl->chart->title, &err);
      }
    }
    if (!st) st = tl_html_section_end(out, &err);
  }
  if (!st) st = tl_html_end(out, &err);
  tl_buf_release(&svg);
  return st == TL_EINPUT ? TL_EINTERNAL : st;
}
