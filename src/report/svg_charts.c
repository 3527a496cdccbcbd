/* svg_charts.c - the five chart kinds of tally/svg.h on the primitives of svg.c.
 * Geometry in px; ROW_H-high rows; one label column on the left sized to the longest label
 * (estimated, never cut); the value text on the right of each mark. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "svg_util.h"

#define ROW_H 20.0
#define BAR_H 14.0
#define TITLE_H 28.0
#define VALUE_W 200.0 /* room right of the plot for "est [lo, hi]" */
#define NPAT 6

static double dmax(double a, double b) { return a > b ? a : b; }

static double frame_width(const tl_svg_frame *f) { return f->width > 0 ? f->width : 720; }

/* "url(#ID-pK)" for series s */
static void pat_ref(char *t, size_t n, const char *id, size_t s) {
  snprintf(t, n, "url(#%s-p%d)", id, (int)(s % NPAT));
}

/* The hover/screen-reader text of one mark: "group / series: value". */
static void mark_title(sv_w *w, tl_buf *t, const char *group, const char *series, const tl_buf *val) {
  tl_buf_reset(t);
  sv_tputs(w, t, group ? group : "");
  if (series) {
    sv_tputs(w, t, " / ");
    sv_tputs(w, t, series);
  }
  sv_tputs(w, t, ": ");
  sv_tputs(w, t, val->data);
}

static tl_status check_bars(const tl_svg_bars *c, tl_err *err) {
  tl_status st = sv_check_frame(&c->frame, err);
  if (st != TL_OK) return st;
  if (c->ngroups == 0 || c->nseries == 0 || !c->groups || !c->series || !c->est)
    return tl_err_set(err, TL_EINPUT, "svg '%s': bars need groups, series and estimates", c->frame.id);
  if ((c->lo == NULL) != (c->hi == NULL))
    return tl_err_set(err, TL_EINPUT, "svg '%s': give both CI bounds or neither", c->frame.id);
  if (c->ngroups > 10000 || c->nseries > 1000)
    return tl_err_set(err, TL_EINPUT, "svg '%s': too many bars", c->frame.id);
  return TL_OK;
}

/* One horizontal bar row at y (top of the row): the bar from 0 to est, its whisker, its text. */
static void hbar_row(sv_w *w, const tl_svg_bars *c, const sv_axis *ax, size_t i, size_t s, double y,
                     const char *label, double label_x, tl_buf *val, tl_buf *tt) {
  char fill[96];
  pat_ref(fill, sizeof fill, c->frame.id, s);
  double est = c->est[i], x0 = sv_map(ax, 0.0), right = x0;
  sv_text(w, label_x, y + 14, "start", "", label);
  sv_value_text(w, val, est, c->lo, c->hi, i);
  if (isnan(est)) { /* the labelled gap */
    sv_text(w, x0 + 4, y + 14, "start", " font-style=\"italic\"", "n/a (missing)");
    return;
  }
  double x1 = sv_map(ax, est);
  mark_title(w, tt, c->groups[i / c->nseries], c->nseries > 1 ? c->series[s] : NULL, val);
  sv_rect(w, x0, y + 3, x1 - x0, BAR_H, fill, tt->data);
  right = dmax(right, x1);
  if (c->lo && isfinite(c->lo[i]) && isfinite(c->hi[i])) {
    double a = sv_map(ax, c->lo[i]), b = sv_map(ax, c->hi[i]);
    sv_whisker(w, 1, a, b, y + 3 + BAR_H / 2, 4);
    right = dmax(right, dmax(a, b));
  }
  sv_text(w, right + 6, y + 14, "start", "", val->data);
}

static void bars_h(sv_w *w, const tl_svg_bars *c) {
  size_t ng = c->ngroups, ns = c->nseries, n = ng * ns;
  double labw = 0;
  for (size_t g = 0; g < ng; g++) labw = dmax(labw, sv_text_w(c->groups[g]) * 1.1);
  for (size_t s = 0; ns > 1 && s < ns; s++) labw = dmax(labw, sv_text_w(c->series[s]) + 12);
  double left = labw + 16, width = dmax(frame_width(&c->frame), left + 240 + VALUE_W);
  size_t nrows = ns == 1 ? ng : ng * (ns + 1);
  double top = TITLE_H + 8, bottom = top + (double)nrows * ROW_H;
  sv_axis ax;
  sv_axis_fit(&ax, c->est, c->lo, c->hi, n, 0.0, c->axis_min, c->axis_max);
  ax.p0 = left;
  ax.p1 = width - VALUE_W;
  sv_open(w, &c->frame, width, bottom + 44);
  sv_axis_draw(w, &ax, 1, bottom, top, bottom, c->frame.value_label);
  tl_buf val, tt;
  tl_buf_init(&val);
  tl_buf_init(&tt);
  double y = top;
  for (size_t g = 0; g < ng; g++) {
    if (ns > 1) {
      sv_text(w, 8, y + 14, "start", " font-weight=\"bold\"", c->groups[g]);
      y += ROW_H;
    }
    for (size_t s = 0; s < ns; s++, y += ROW_H)
      hbar_row(w, c, &ax, g * ns + s, s, y, ns > 1 ? c->series[s] : c->groups[g], ns > 1 ? 20 : 8, &val, &tt);
  }
  tl_buf_release(&val);
  tl_buf_release(&tt);
}

/* The legend of a vertical chart: swatch + series name, wrapped to the width; returns its height. */
static double legend(sv_w *w, const tl_svg_bars *c, double y, double width, int draw) {
  double x = 8, h = c->nseries > 1 ? 20 : 0;
  char fill[96];
  for (size_t s = 0; c->nseries > 1 && s < c->nseries; s++) {
    double iw = 16 + sv_text_w(c->series[s]) + 16;
    if (x > 8 && x + iw > width - 8) {
      x = 8;
      y += 20;
      h += 20;
    }
    if (draw) {
      pat_ref(fill, sizeof fill, c->frame.id, s);
      sv_rect(w, x, y + 2, 12, 12, fill, NULL);
      sv_text(w, x + 16, y + 12, "start", "", c->series[s]);
    }
    x += iw;
  }
  return h;
}

/* One vertical bar at x (left edge) of width bw: bar, whisker, the estimate written above. */
static void vbar(sv_w *w, const tl_svg_bars *c, const sv_axis *ax, size_t i, double x, double bw,
                 tl_buf *val, tl_buf *tt) {
  size_t s = i % c->nseries;
  char fill[96];
  pat_ref(fill, sizeof fill, c->frame.id, s);
  double est = c->est[i], y0 = sv_map(ax, 0.0), top = y0;
  sv_value_text(w, val, est, c->lo, c->hi, i);
  if (!isnan(est)) {
    double y1 = sv_map(ax, est);
    mark_title(w, tt, c->groups[i / c->nseries], c->nseries > 1 ? c->series[s] : NULL, val);
    sv_rect(w, x, y1, bw, y0 - y1, fill, tt->data);
    top = y1 < top ? y1 : top;
    if (c->lo && isfinite(c->lo[i]) && isfinite(c->hi[i])) {
      double a = sv_map(ax, c->lo[i]), b = sv_map(ax, c->hi[i]);
      sv_whisker(w, 0, a, b, x + bw / 2, 3);
      top = a < top ? a : top;
      top = b < top ? b : top;
    }
    tl_buf_reset(val);
    sv_tnum(w, val, est);
  }
  sv_puts(w, "<text transform=\"translate(");
  sv_xy(w, x + bw / 2 + 4);
  sv_puts(w, ",");
  sv_xy(w, top - 4);
  sv_printf(w, ") rotate(-90)\" text-anchor=\"start\"%s>", isnan(est) ? " font-style=\"italic\"" : "");
  sv_esc(w, isnan(est) ? "n/a (missing)" : val->data);
  sv_puts(w, "</text>\n");
}

static void bars_v(sv_w *w, const tl_svg_bars *c) {
  size_t ng = c->ngroups, ns = c->nseries;
  const double bw = 16, gap = 24, left = 64, ph = 220;
  double gw = (double)ns * bw + gap;
  double width = dmax(frame_width(&c->frame), left + (double)ng * gw + 24);
  double lab = 0;
  for (size_t g = 0; g < ng; g++) lab = dmax(lab, sv_text_w(c->groups[g]));
  double leg = legend(w, c, 0, width, 0);
  sv_axis ax;
  sv_axis_fit(&ax, c->est, c->lo, c->hi, ng * ns, 0.0, c->axis_min, c->axis_max);
  /* room above the plot for the rotated value texts: each text starts 4 px above its bar or
   * whisker, whose distance below the plot's top is sv_map on an axis from ph (min) to 0 */
  double room = 8;
  tl_buf t;
  tl_buf_init(&t);
  ax.p0 = ph;
  ax.p1 = 0;
  for (size_t i = 0; i < ng * ns; i++) {
    double e = c->est[i], d = sv_map(&ax, isnan(e) ? 0.0 : e);
    if (!isnan(e) && c->lo && isfinite(c->lo[i]) && isfinite(c->hi[i]))
      d = fmin(d, fmin(sv_map(&ax, c->lo[i]), sv_map(&ax, c->hi[i])));
    tl_buf_reset(&t);
    if (isnan(e)) sv_tputs(w, &t, "n/a (missing)");
    else sv_tnum(w, &t, e);
    room = dmax(room, sv_text_w(t.data) + 10 - d);
  }
  tl_buf_release(&t);
  double top = TITLE_H + leg + room;
  double axis_y = top + ph, height = axis_y + 16 + lab * 0.58 + 12;
  ax.p0 = axis_y;
  ax.p1 = top;
  sv_open(w, &c->frame, width, height);
  legend(w, c, TITLE_H, width, 1);
  sv_axis_draw(w, &ax, 0, left, left, width - 16, c->frame.value_label);
  tl_buf val, tt;
  tl_buf_init(&val);
  tl_buf_init(&tt);
  for (size_t g = 0; g < ng; g++) {
    double gx = left + gap / 2 + (double)g * gw;
    for (size_t s = 0; s < ns; s++) vbar(w, c, &ax, g * ns + s, gx + (double)s * bw, bw, &val, &tt);
    sv_puts(w, "<text transform=\"translate(");
    sv_xy(w, gx + (double)ns * bw / 2);
    sv_puts(w, ",");
    sv_xy(w, axis_y + 14);
    sv_puts(w, ") rotate(-35)\" text-anchor=\"end\">");
    sv_esc(w, c->groups[g]);
    sv_puts(w, "</text>\n");
  }
  tl_buf_release(&val);
  tl_buf_release(&tt);
}

tl_status tl_svg_bars_write(tl_buf *out, const tl_svg_bars *c, tl_err *err) {
  tl_status st = check_bars(c, err);
  if (st != TL_OK) return st;
  sv_w w = {out, TL_OK};
  size_t len0 = out->len;
  if (c->horizontal)
    bars_h(&w, c);
  else
    bars_v(&w, c);
  return sv_finish(&w, len0, err);
}

tl_status tl_svg_corr_write(tl_buf *out, const tl_svg_frame *frame, size_t n, const char *const *labels,
                            const double *r, const double *lo, const double *hi, tl_err *err) {
  static const char *const one[1] = {"r"};
  tl_svg_bars c = {*frame, 1, n, 1, labels, one, r, lo, hi, -1.0, 1.0};
  return tl_svg_bars_write(out, &c, err);
}

/* ---- forest plot ---- */

tl_status tl_svg_forest_write(tl_buf *out, const tl_svg_forest *c, tl_err *err) {
  tl_status st = sv_check_frame(&c->frame, err);
  if (st != TL_OK) return st;
  if (c->n == 0 || !c->labels || !c->est || (c->lo == NULL) != (c->hi == NULL) || !isfinite(c->ref))
    return tl_err_set(err, TL_EINPUT, "svg '%s': a forest plot needs labels, estimates, both CI bounds or "
                      "neither, and a finite reference", c->frame.id);
  sv_w w = {out, TL_OK};
  size_t len0 = out->len;
  double labw = 0;
  for (size_t i = 0; i < c->n; i++) labw = dmax(labw, sv_text_w(c->labels[i]));
  double left = labw + 16, width = dmax(frame_width(&c->frame), left + 240 + VALUE_W);
  double top = TITLE_H + 8, bottom = top + (double)c->n * ROW_H;
  sv_axis ax;
  sv_axis_fit(&ax, c->est, c->lo, c->hi, c->n, c->ref, 0, 0);
  ax.p0 = left;
  ax.p1 = width - VALUE_W;
  sv_open(&w, &c->frame, width, bottom + 44);
  sv_axis_draw(&w, &ax, 1, bottom, top, bottom, c->frame.value_label);
  double xr = sv_map(&ax, c->ref);
  sv_line(&w, xr, top, xr, bottom, " stroke-width=\"1.5\" stroke-dasharray=\"4 3\"");
  tl_buf val;
  tl_buf_init(&val);
  for (size_t i = 0; i < c->n; i++) {
    double y = top + (double)i * ROW_H, cy = y + 10, right = xr;
    sv_text(&w, 8, y + 14, "start", "", c->labels[i]);
    sv_value_text(&w, &val, c->est[i], c->lo, c->hi, i);
    if (isnan(c->est[i])) {
      sv_text(&w, xr + 4, y + 14, "start", " font-style=\"italic\"", "n/a (missing)");
      continue;
    }
    if (c->lo && isfinite(c->lo[i]) && isfinite(c->hi[i])) {
      double a = sv_map(&ax, c->lo[i]), b = sv_map(&ax, c->hi[i]);
      sv_whisker(&w, 1, a, b, cy, 5);
      right = dmax(right, dmax(a, b));
    }
    double x = sv_map(&ax, c->est[i]);
    right = dmax(right, x);
    sv_puts(&w, "<rect x=\"");
    sv_xy(&w, x - 4); /* the estimate: a 8 px square, so it is not confused with the caps */
    sv_puts(&w, "\" y=\"");
    sv_xy(&w, cy - 4);
    sv_puts(&w, "\" width=\"8\" height=\"8\" fill=\"#000\"><title>");
    sv_esc(&w, c->labels[i]);
    sv_puts(&w, ": ");
    sv_esc(&w, val.data);
    sv_puts(&w, "</title></rect>\n");
    sv_text(&w, right + 8, y + 14, "start", "", val.data);
  }
  tl_buf_release(&val);
  return sv_finish(&w, len0, err);
}

/* ---- heatmap ---- */

static void heat_cell(sv_w *w, const tl_svg_heatmap *c, size_t r, size_t k, double x, double y, double cw,
                      double ch, double vmax, tl_buf *t) {
  double v = c->counts[r * c->ncols + k];
  tl_buf_reset(t);
  sv_tputs(w, t, c->rows[r]);
  sv_tputs(w, t, " / ");
  sv_tputs(w, t, c->cols[k]);
  sv_tputs(w, t, ": ");
  if (isnan(v)) {
    sv_tputs(w, t, "n/a");
    char gap[96];
    snprintf(gap, sizeof gap, "url(#%s-gap)", c->frame.id);
    sv_rect(w, x, y, cw, ch, gap, t->data);
    sv_text(w, x + cw / 2, y + ch / 2 + 4, "middle", " font-style=\"italic\"", "n/a");
    return;
  }
  sv_tnum(w, t, v);
  /* shade: white to #08306b in proportion to v / vmax (the count is written too) */
  double f = vmax > 0 && v > 0 ? v / vmax : 0.0;
  if (f > 1) f = 1;
  char fill[32];
  snprintf(fill, sizeof fill, "rgb(%d,%d,%d)", (int)lround(255 + f * (8 - 255)),
           (int)lround(255 + f * (48 - 255)), (int)lround(255 + f * (107 - 255)));
  sv_rect(w, x, y, cw, ch, fill, t->data);
  tl_buf_reset(t);
  sv_tnum(w, t, v);
  sv_text(w, x + cw / 2, y + ch / 2 + 4, "middle", f > 0.55 ? " fill=\"#fff\"" : "", t->data);
}

tl_status tl_svg_heatmap_write(tl_buf *out, const tl_svg_heatmap *c, tl_err *err) {
  tl_status st = sv_check_frame(&c->frame, err);
  if (st != TL_OK) return st;
  if (c->nrows == 0 || c->ncols == 0 || !c->rows || !c->cols || !c->counts || c->nrows > 1000 || c->ncols > 1000)
    return tl_err_set(err, TL_EINPUT, "svg '%s': a heatmap needs 1..1000 rows and columns with labels and counts",
                      c->frame.id);
  sv_w w = {out, TL_OK};
  size_t len0 = out->len;
  double cw = 48, ch = 32, rl = 0, vmax = 0;
  for (size_t k = 0; k < c->ncols; k++) cw = dmax(cw, sv_text_w(c->cols[k]) + 12);
  for (size_t r = 0; r < c->nrows; r++) rl = dmax(rl, sv_text_w(c->rows[r]));
  for (size_t i = 0; i < c->nrows * c->ncols; i++)
    if (isfinite(c->counts[i])) vmax = dmax(vmax, c->counts[i]);
  double left = 24 + rl + 8, top = TITLE_H + 44;
  double width = left + (double)c->ncols * cw + 16, height = top + (double)c->nrows * ch + 12;
  if (width < sv_text_w(c->frame.title) * 1.2 + 16) width = sv_text_w(c->frame.title) * 1.2 + 16;
  sv_open(&w, &c->frame, width, height);
  if (c->col_label)
    sv_text(&w, left + (double)c->ncols * cw / 2, TITLE_H + 16, "middle", " font-weight=\"bold\"", c->col_label);
  if (c->row_label) {
    sv_puts(&w, "<text transform=\"translate(14,");
    sv_xy(&w, top + (double)c->nrows * ch / 2);
    sv_puts(&w, ") rotate(-90)\" text-anchor=\"middle\" font-weight=\"bold\">");
    sv_esc(&w, c->row_label);
    sv_puts(&w, "</text>\n");
  }
  for (size_t k = 0; k < c->ncols; k++) sv_text(&w, left + ((double)k + 0.5) * cw, top - 8, "middle", "", c->cols[k]);
  tl_buf t;
  tl_buf_init(&t);
  for (size_t r = 0; r < c->nrows; r++) {
    double y = top + (double)r * ch;
    sv_text(&w, left - 8, y + ch / 2 + 4, "end", "", c->rows[r]);
    for (size_t k = 0; k < c->ncols; k++) heat_cell(&w, c, r, k, left + (double)k * cw, y, cw, ch, vmax, &t);
  }
  tl_buf_release(&t);
  return sv_finish(&w, len0, err);
}

/* ---- strip plot ---- */

/* One series' row: its dots, the mean tick and the text "mean M (n=k, j n/a)". */
static void strip_row(sv_w *w, const tl_svg_strip *c, const sv_axis *ax, size_t s, double y, tl_buf *t) {
  size_t k = 0, nan = 0;
  double sum = 0, right = ax->p0;
  char num[64];
  sv_text(w, 8, y + 14, "start", "", c->series[s]);
  for (size_t i = c->off[s]; i < c->off[s + 1]; i++) {
    double v = c->vals[i];
    if (!isfinite(v)) {
      nan++;
      continue;
    }
    k++;
    sum += v;
    double x = sv_map(ax, v);
    right = dmax(right, x);
    sv_puts(w, "<circle cx=\"");
    sv_xy(w, x);
    sv_puts(w, "\" cy=\""); /* a deterministic vertical spread of 5 lanes, so equal values show */
    sv_xy(w, y + 10 + (double)((int)((i - c->off[s]) % 5) - 2) * 2.5);
    sv_puts(w, "\" r=\"3.5\" fill=\"none\" stroke=\"#000\"><title>");
    tl_buf_reset(t);
    sv_tnum(w, t, v);
    sv_esc(w, c->series[s]);
    sv_printf(w, " #%zu: ", i - c->off[s] + 1);
    sv_esc(w, t->data);
    sv_puts(w, "</title></circle>\n");
  }
  tl_buf_reset(t);
  if (k == 0) {
    sv_tputs(w, t, "n/a (no value");
  } else {
    double m = sum / (double)k, x = sv_map(ax, m);
    sv_line(w, x, y + 2, x, y + 18, " stroke-width=\"2.5\"");
    sv_tputs(w, t, "mean ");
    sv_tnum(w, t, m);
    snprintf(num, sizeof num, " (n=%zu", k);
    sv_tputs(w, t, num);
  }
  snprintf(num, sizeof num, ", %zu n/a", nan);
  if (nan) sv_tputs(w, t, num);
  sv_tputs(w, t, ")");
  sv_text(w, right + 8, y + 14, "start", k ? "" : " font-style=\"italic\"", t->data);
}

tl_status tl_svg_strip_write(tl_buf *out, const tl_svg_strip *c, tl_err *err) {
  tl_status st = sv_check_frame(&c->frame, err);
  if (st != TL_OK) return st;
  if (c->nseries == 0 || !c->series || !c->off || c->off[0] != 0 || (c->off[c->nseries] > 0 && !c->vals))
    return tl_err_set(err, TL_EINPUT, "svg '%s': a strip plot needs series, offsets from 0 and values", c->frame.id);
  for (size_t s = 0; s < c->nseries; s++)
    if (c->off[s + 1] < c->off[s])
      return tl_err_set(err, TL_EINPUT, "svg '%s': offsets decrease at series %zu", c->frame.id, s);
  sv_w w = {out, TL_OK};
  size_t len0 = out->len;
  double labw = 0;
  for (size_t s = 0; s < c->nseries; s++) labw = dmax(labw, sv_text_w(c->series[s]));
  double left = labw + 16, width = dmax(frame_width(&c->frame), left + 240 + VALUE_W);
  double top = TITLE_H + 8, bottom = top + (double)c->nseries * ROW_H;
  sv_axis ax;
  sv_axis_fit(&ax, c->vals, NULL, NULL, c->off[c->nseries], NAN, 0, 0);
  ax.p0 = left + 8;
  ax.p1 = width - VALUE_W;
  sv_open(&w, &c->frame, width, bottom + 44);
  sv_axis_draw(&w, &ax, 1, bottom, top, bottom, c->frame.value_label);
  tl_buf t;
  tl_buf_init(&t);
  for (size_t s = 0; s < c->nseries; s++) strip_row(&w, c, &ax, s, top + (double)s * ROW_H, &t);
  tl_buf_release(&t);
  return sv_finish(&w, len0, err);
}
