/* svg_util.h - private to src/report: the pieces the chart writers (svg_charts.c) share with
 * the primitives of svg.c. Not a public contract.
 *
 * sv_w is a sticky-status writer over a tl_buf: after the first failed append every call is a
 * no-op and w->st keeps the failure; sv_finish closes the <svg> and, on failure, restores the
 * buffer to len0 and fills err. */
#ifndef TALLY_SVG_UTIL_H
#define TALLY_SVG_UTIL_H

#include <stddef.h>

#include "tally/svg.h"

typedef struct {
  tl_buf *b;
  tl_status st;
} sv_w;

/* A value axis: data range [min, max] (nice ends, or the caller's fixed ones), tick step, and
 * the pixel positions p0 (min) and p1 (max); p1 < p0 for a vertical axis (y grows down). */
typedef struct {
  double min, max, step;
  double p0, p1;
} sv_axis;

void sv_puts(sv_w *w, const char *s);
void sv_printf(sv_w *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void sv_num(sv_w *w, double v);
void sv_xy(sv_w *w, double v);
void sv_esc(sv_w *w, const char *s);
double sv_text_w(const char *s);
tl_status sv_check_frame(const tl_svg_frame *f, tl_err *err);
void sv_open(sv_w *w, const tl_svg_frame *f, double width, double height);
void sv_text(sv_w *w, double x, double y, const char *anchor, const char *extra, const char *s);
void sv_line(sv_w *w, double x1, double y1, double x2, double y2, const char *extra);
/* appends to a scratch buffer t (hover titles, value texts); the first failure is kept in w->st */
void sv_tputs(sv_w *w, tl_buf *t, const char *s);
void sv_tnum(sv_w *w, tl_buf *t, double v);
void sv_value_text(sv_w *w, tl_buf *t, double est, const double *lo, const double *hi, size_t i);
void sv_axis_fit(sv_axis *ax, const double *a, const double *b, const double *c, size_t n, double with,
                 double fmin, double fmax);
double sv_map(const sv_axis *ax, double v);
void sv_axis_draw(sv_w *w, const sv_axis *ax, int along_x, double at, double g0, double g1,
                  const char *label);
void sv_whisker(sv_w *w, int along_x, double a, double b, double c, double h);
void sv_rect(sv_w *w, double x, double y, double wd, double ht, const char *fill, const char *title);
tl_status sv_finish(sv_w *w, size_t len0, tl_err *err);

#endif
