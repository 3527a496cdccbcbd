/* svg.c - the chart writers of tally/svg.h: deterministic SVG text from plain arrays.
 *
 * Hand-written: the charts are a few hundred lines of text output whose bytes must not change
 * between machines (golden tests); Debian has no C library that writes SVG charts (plotting
 * libraries such as PLplot or cairo draw through a backend and add their own ids, fonts and
 * floating-point noise), so nothing well-kept fits.
 *
 * Layout unit: px; one text line is 12 px sans-serif, whose width is estimated as 7 px per code
 * point (TXT_W) - an estimate used only to size label columns, never to cut a label. */
#include "tally/svg.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "svg_util.h"

#define TXT_W 7.0
#define NPAT 6

/* Okabe & Ito's colour-blind-safe palette ("Color Universal Design", 2008); patterns tell the
 * series apart as well (sv_defs), so no meaning rests on colour. */
static const char *const PALETTE[NPAT] = {"#E69F00", "#56B4E9", "#009E73",
                                          "#F0E442", "#0072B2", "#CC79A7"};

/* ---- the sticky-status writer ---- */

void sv_puts(sv_w *w, const char *s) {
  if (w->st == TL_OK) w->st = tl_buf_puts(w->b, s);
}

void sv_printf(sv_w *w, const char *fmt, ...) {
  if (w->st != TL_OK) return;
  char t[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(t, sizeof t, fmt, ap);
  va_end(ap);
  /* callers format only integers and short fixed strings here (no %f/%g: see tl_svg_num) */
  if (n < 0 || (size_t)n >= sizeof t) {
    w->st = TL_EINTERNAL;
    return;
  }
  w->st = tl_buf_append(w->b, t, (size_t)n);
}

void sv_num(sv_w *w, double v) {
  if (w->st == TL_OK) w->st = tl_svg_num(w->b, v);
}

/* a coordinate: rounded to 0.01 px, then written as a number */
void sv_xy(sv_w *w, double v) { sv_num(w, round(v * 100.0) / 100.0); }

void sv_esc(sv_w *w, const char *s) {
  if (w->st == TL_OK) w->st = tl_svg_esc(w->b, s);
}

/* ---- numbers, escaping, ticks ---- */

tl_status tl_svg_num(tl_buf *out, double v) {
  if (isnan(v)) return tl_buf_puts(out, "NaN");
  if (isinf(v)) return tl_buf_puts(out, v > 0 ? "inf" : "-inf");
  if (v == 0.0) v = 0.0; /* -0 -> 0 */
  char t[64], o[64];
  int n = snprintf(t, sizeof t, "%.6g", v);
  if (n < 0 || (size_t)n >= sizeof t) return TL_EINTERNAL;
  /* The decimal point is LC_NUMERIC's (maybe "," or several bytes): every byte that is not a
   * digit, sign or exponent letter belongs to it, and the run becomes one '.'. */
  size_t k = 0;
  int in_point = 0;
  for (int i = 0; i < n; i++) {
    char c = t[i];
    if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e' || c == 'E') {
      o[k++] = c;
      in_point = 0;
    } else if (!in_point) {
      o[k++] = '.';
      in_point = 1;
    }
  }
  return tl_buf_append(out, o, k);
}

tl_status tl_svg_esc(tl_buf *out, const char *s) {
  if (!s) return TL_OK;
  size_t n = strlen(s), i = 0;
  tl_status st = TL_OK;
  while (i < n && st == TL_OK) {
    size_t run = i; /* copy runs of plain ASCII at once */
    while (run < n && (unsigned char)s[run] >= 0x20 && (unsigned char)s[run] < 0x80 && s[run] != '&' &&
           s[run] != '<' && s[run] != '>' && s[run] != '"' && s[run] != '\'')
      run++;
    if (run > i) {
      st = tl_buf_append(out, s + i, run - i);
      i = run;
      continue;
    }
    uint32_t cp;
    size_t len = tl_utf8_decode(s + i, n - i, &cp);
    switch (cp) {
    case '&': st = tl_buf_puts(out, "&amp;"); break;
    case '<': st = tl_buf_puts(out, "&lt;"); break;
    case '>': st = tl_buf_puts(out, "&gt;"); break;
    case '"': st = tl_buf_puts(out, "&quot;"); break;
    case '\'': st = tl_buf_puts(out, "&#39;"); break;
    default:
      /* XML 1.0's Char production: TAB, LF, CR, U+0020.. minus U+FFFE/U+FFFF and surrogates
       * (tl_utf8_decode already rejects those) */
      if (len == 0 || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xFFFE || cp == 0xFFFF)
        st = tl_buf_puts(out, "\xEF\xBF\xBD");
      else
        st = tl_buf_append(out, s + i, len);
    }
    i += len ? len : 1;
  }
  return st;
}

/* Heckbert's nicenum: the 1, 2, 5 x 10^k number near x (round = 1) or at or above it. */
static double nicenum(double x, int round_it) {
  double e = floor(log10(x));
  double p = pow(10.0, e);
  double f = x / p, nf;
  if (round_it)
    nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
  else
    nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return nf * p;
}

int tl_svg_nice_ticks(double lo, double hi, int target, double *amin, double *amax, double *step) {
  if (target < 2) target = 2;
  if (!(hi > lo)) { /* one value: a unit range around it */
    double c = lo;
    lo = c - 0.5;
    hi = c + 0.5;
  }
  double range = nicenum(hi - lo, 0);
  double d = nicenum(range / (target - 1), 1);
  *step = d;
  *amin = floor(lo / d) * d;
  *amax = ceil(hi / d) * d;
  if (*amin == 0.0) *amin = 0.0;
  return (int)llround((*amax - *amin) / d) + 1;
}

/* ---- shared pieces ---- */

double sv_text_w(const char *s) {
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
    if ((*p & 0xC0) != 0x80) n++;
  return (double)n * TXT_W;
}

tl_status sv_check_frame(const tl_svg_frame *f, tl_err *err) {
  if (!f || !f->id || !f->title || !*f->title || !f->desc || !*f->desc)
    return tl_err_set(err, TL_EINPUT, "svg: a chart needs an id, a title and a description");
  size_t n = strlen(f->id);
  int ok = n >= 1 && n <= 64 && ((f->id[0] | 32) >= 'a' && (f->id[0] | 32) <= 'z');
  for (size_t i = 1; ok && i < n; i++) {
    char c = f->id[i];
    ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  }
  if (!ok) return tl_err_set(err, TL_EINPUT, "svg: id '%.80s' is not [A-Za-z][A-Za-z0-9_-]{0,63}", f->id);
  if (f->width < 0 || f->width > 20000) return tl_err_set(err, TL_EINPUT, "svg: width %d out of 0..20000", f->width);
  return TL_OK;
}

/* <svg ...><title/><desc/><defs>patterns</defs> and the visible title. */
void sv_open(sv_w *w, const tl_svg_frame *f, double width, double height) {
  sv_puts(w, "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"");
  sv_xy(w, width);
  sv_puts(w, "\" height=\"");
  sv_xy(w, height);
  sv_puts(w, "\" viewBox=\"0 0 ");
  sv_xy(w, width);
  sv_puts(w, " ");
  sv_xy(w, height);
  sv_printf(w, "\" aria-labelledby=\"%s-title %s-desc\" font-family=\"sans-serif\" font-size=\"12\">\n",
            f->id, f->id);
  sv_printf(w, "<title id=\"%s-title\">", f->id);
  sv_esc(w, f->title);
  sv_printf(w, "</title>\n<desc id=\"%s-desc\">", f->id);
  sv_esc(w, f->desc);
  sv_puts(w, "</desc>\n<defs>\n");
  /* pattern k: the palette colour under a hatch of its own (none, /, \, -, |, +) */
  static const char *const hatch[NPAT] = {"", "M0,8 L8,0", "M0,0 L8,8", "M0,4 L8,4", "M4,0 L4,8",
                                          "M0,4 L8,4 M4,0 L4,8"};
  for (int k = 0; k < NPAT; k++) {
    sv_printf(w, "<pattern id=\"%s-p%d\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\">"
                 "<rect width=\"8\" height=\"8\" fill=\"%s\"/>", f->id, k, PALETTE[k]);
    if (*hatch[k]) sv_printf(w, "<path d=\"%s\" stroke=\"#000\" stroke-width=\"1\"/>", hatch[k]);
    sv_puts(w, "</pattern>\n");
  }
  sv_printf(w, "<pattern id=\"%s-gap\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
               "<path d=\"M0,6 L6,0\" stroke=\"#999\" stroke-width=\"1\"/></pattern>\n", f->id);
  sv_puts(w, "</defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n");
  sv_puts(w, "<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">");
  sv_esc(w, f->title);
  sv_puts(w, "</text>\n");
}

/* A text element: anchor "start" / "middle" / "end"; extra: more attributes or "". */
void sv_text(sv_w *w, double x, double y, const char *anchor, const char *extra, const char *s) {
  sv_puts(w, "<text x=\"");
  sv_xy(w, x);
  sv_puts(w, "\" y=\"");
  sv_xy(w, y);
  sv_printf(w, "\" text-anchor=\"%s\"%s>", anchor, extra);
  sv_esc(w, s);
  sv_puts(w, "</text>\n");
}

void sv_line(sv_w *w, double x1, double y1, double x2, double y2, const char *extra) {
  sv_puts(w, "<line x1=\"");
  sv_xy(w, x1);
  sv_puts(w, "\" y1=\"");
  sv_xy(w, y1);
  sv_puts(w, "\" x2=\"");
  sv_xy(w, x2);
  sv_puts(w, "\" y2=\"");
  sv_xy(w, y2);
  sv_printf(w, "\" stroke=\"#000\"%s/>\n", extra);
}

void sv_tputs(sv_w *w, tl_buf *t, const char *s) {
  if (w->st == TL_OK) w->st = tl_buf_puts(t, s);
}

void sv_tnum(sv_w *w, tl_buf *t, double v) {
  if (w->st == TL_OK) w->st = tl_svg_num(t, v);
}

/* Sets t (a scratch buffer) to "est [lo, hi]", "n/a" (est NaN) or "est (CI n/a)". */
void sv_value_text(sv_w *w, tl_buf *t, double est, const double *lo, const double *hi, size_t i) {
  tl_buf_reset(t);
  if (isnan(est)) {
    sv_tputs(w, t, "n/a");
    return;
  }
  sv_tnum(w, t, est);
  if (!lo || !hi) return;
  if (isnan(lo[i]) || isnan(hi[i])) {
    sv_tputs(w, t, " (CI n/a)");
    return;
  }
  sv_tputs(w, t, " [");
  sv_tnum(w, t, lo[i]);
  sv_tputs(w, t, ", ");
  sv_tnum(w, t, hi[i]);
  sv_tputs(w, t, "]");
}

/* The value axis from data: range over the finite values of a, b, c (each [n], may be NULL)
 * and `with` (NaN = nothing); fixed to [fmin, fmax] when fmin < fmax and the data lie inside,
 * else nice ends around both the data and [fmin, fmax]. */
void sv_axis_fit(sv_axis *ax, const double *a, const double *b, const double *c, size_t n, double with,
                 double fmin, double fmax) {
  double lo = with, hi = with;
  const double *arr[3] = {a, b, c};
  for (int k = 0; k < 3; k++)
    for (size_t i = 0; arr[k] && i < n; i++)
      if (isfinite(arr[k][i])) {
        if (isnan(lo) || arr[k][i] < lo) lo = arr[k][i];
        if (isnan(hi) || arr[k][i] > hi) hi = arr[k][i];
      }
  if (isnan(lo)) lo = hi = 0.0; /* nothing finite: an axis around 0 */
  if (fmin < fmax && lo >= fmin && hi <= fmax) {
    double a0, a1;
    tl_svg_nice_ticks(fmin, fmax, 6, &a0, &a1, &ax->step);
    ax->min = fmin;
    ax->max = fmax;
  } else { /* from the data, and the fixed range too when data leave it: no value is hidden */
    if (fmin < fmax) {
      lo = lo < fmin ? lo : fmin;
      hi = hi > fmax ? hi : fmax;
    }
    tl_svg_nice_ticks(lo, hi, 6, &ax->min, &ax->max, &ax->step);
  }
}

double sv_map(const sv_axis *ax, double v) {
  if (v < ax->min) v = ax->min; /* +-inf only: the axis holds every finite value */
  if (v > ax->max) v = ax->max;
  return ax->p0 + (v - ax->min) / (ax->max - ax->min) * (ax->p1 - ax->p0);
}

/* Ticks, grid lines and labels of a value axis. Horizontal axis (along x) when `along_x`, drawn
 * at y = at from y = g0 to g1 (grid); else vertical at x = at. */
void sv_axis_draw(sv_w *w, const sv_axis *ax, int along_x, double at, double g0, double g1,
                  const char *label) {
  double first = ceil(ax->min / ax->step - 1e-9) * ax->step;
  tl_buf t;
  tl_buf_init(&t);
  for (int i = 0; i < 1000; i++) {
    double v = first + i * ax->step;
    if (v > ax->max + ax->step * 1e-9) break;
    if (fabs(v) < ax->step * 1e-9) v = 0.0;
    double p = sv_map(ax, v);
    tl_buf_reset(&t);
    sv_tnum(w, &t, v);
    const char *grid = v == 0.0 ? " stroke-width=\"1\"" : " stroke-opacity=\"0.15\"";
    if (along_x) {
      sv_line(w, p, g0, p, g1, grid);
      sv_text(w, p, at + 14, "middle", "", t.data);
    } else {
      sv_line(w, g0, p, g1, p, grid);
      sv_text(w, at - 4, p + 4, "end", "", t.data);
    }
  }
  tl_buf_release(&t);
  if (label && *label) {
    if (along_x)
      sv_text(w, (ax->p0 + ax->p1) / 2, at + 30, "middle", "", label);
    else {
      sv_puts(w, "<text transform=\"translate(12,");
      sv_xy(w, (ax->p0 + ax->p1) / 2);
      sv_puts(w, ") rotate(-90)\" text-anchor=\"middle\">");
      sv_esc(w, label);
      sv_puts(w, "</text>\n");
    }
  }
}

/* A CI whisker with end caps: from a to b at c (across), caps of half-length h. */
void sv_whisker(sv_w *w, int along_x, double a, double b, double c, double h) {
  if (along_x) {
    sv_line(w, a, c, b, c, " stroke-width=\"1.5\"");
    sv_line(w, a, c - h, a, c + h, " stroke-width=\"1.5\"");
    sv_line(w, b, c - h, b, c + h, " stroke-width=\"1.5\"");
  } else {
    sv_line(w, c, a, c, b, " stroke-width=\"1.5\"");
    sv_line(w, c - h, a, c + h, a, " stroke-width=\"1.5\"");
    sv_line(w, c - h, b, c + h, b, " stroke-width=\"1.5\"");
  }
}

/* A rectangle x, y, w, h with a fill and optional title (hover text, also read by screen
 * readers that walk the SVG). */
void sv_rect(sv_w *w, double x, double y, double wd, double ht, const char *fill, const char *title) {
  if (wd < 0) {
    x += wd;
    wd = -wd;
  }
  if (ht < 0) {
    y += ht;
    ht = -ht;
  }
  sv_puts(w, "<rect x=\"");
  sv_xy(w, x);
  sv_puts(w, "\" y=\"");
  sv_xy(w, y);
  sv_puts(w, "\" width=\"");
  sv_xy(w, wd);
  sv_puts(w, "\" height=\"");
  sv_xy(w, ht);
  sv_printf(w, "\" fill=\"%s\" stroke=\"#000\" stroke-width=\"0.5\">", fill);
  if (title) {
    sv_puts(w, "<title>");
    sv_esc(w, title);
    sv_puts(w, "</title>");
  }
  sv_puts(w, "</rect>\n");
}

tl_status sv_finish(sv_w *w, size_t len0, tl_err *err) {
  sv_puts(w, "</svg>\n");
  if (w->st == TL_OK) return TL_OK;
  w->b->len = len0;
  if (w->b->data) w->b->data[len0] = '\0';
  return tl_err_set(err, w->st, "svg: cannot write the chart: %s", tl_strerror(w->st));
}
