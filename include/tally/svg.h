/* svg.h - charts written by tally as SVG text: grouped bars with CI whiskers, forest plots,
 * correlation bars, heatmaps (confusion matrices), strip plots (one dot per seed).
 *
 * Contract (every writer below):
 *  - Input is plain arrays owned by the caller; nothing is kept after the call.
 *  - The SVG is APPENDED to `out` (a tl_buf, tally/str.h). On failure (TL_ENOMEM, or TL_EINPUT
 *    for bad arguments, with a message in err) `out` is restored to its length before the call.
 *  - Bytes are deterministic: the same arguments give the same bytes on any machine, locale and
 *    run. Numbers are written by tl_svg_num ("%.6g"-like, '.' as the decimal point whatever
 *    LC_NUMERIC says, "-0" written as "0"); no time, no random id, no pointer value. Every id
 *    in the SVG starts with the caller's prefix (frame.id), so several charts share one page.
 *  - Accessible: <svg role="img" aria-labelledby="ID-title ID-desc"> with <title> and <desc>;
 *    every value is also written as text beside its mark, CIs are drawn as lines with end caps,
 *    series are told apart by fill patterns (hatching) and a legend, never by colour alone.
 *  - A NaN estimate (missing or undefined) is drawn as a labelled gap ("n/a"), never as a bar
 *    of length 0; a NaN CI bound leaves that whisker out and the value text says "CI n/a".
 *  - Text (titles, labels) is UTF-8; it is escaped for XML (& < > " ') and any byte sequence
 *    that is not valid UTF-8, or a control character XML 1.0 forbids, becomes U+FFFD.
 *  - Value axes use "nice numbers" (Heckbert, "Nice numbers for graph labels", Graphics Gems,
 *    1990): the tick step is 1, 2 or 5 times a power of ten, chosen so that about 5 ticks span
 *    the data; the axis runs from the step multiple at or below the smallest value (and 0 for
 *    bars) to the one at or above the largest. See tl_svg_nice_ticks. */
#ifndef TALLY_SVG_H
#define TALLY_SVG_H

#include <stddef.h>

#include "tally/err.h"
#include "tally/str.h"

/* What every chart has. id: [A-Za-z][A-Za-z0-9_-]{0,63} (checked: TL_EINPUT otherwise).
 * title, desc: required, non-empty (the text alternative). value_label: the value axis' name
 * (may be NULL). width: px, 0 = 720; the height follows from the contents. */
typedef struct {
  const char *id;
  const char *title;
  const char *desc;
  const char *value_label;
  int width;
} tl_svg_frame;

/* Grouped bars: ngroups groups (tasks) of nseries bars each (models, or model x mode: the
 * caller names each series, e.g. "gpt-4o / cot"). est, lo, hi: [ngroups * nseries], group-major
 * (est[g * nseries + s]); lo and hi may be NULL (no whiskers). horizontal: 1 = bars grow to the
 * right, one row per bar (long labels fit); 0 = vertical bars. The value axis always holds 0;
 * axis_min < axis_max fixes the axis instead (e.g. 0..1 for accuracies, -1..1 for r), unless a
 * value or CI bound lies outside it: then the axis is widened (nice ends) to hold them all. */
typedef struct {
  tl_svg_frame frame;
  int horizontal;
  size_t ngroups, nseries;
  const char *const *groups; /* [ngroups] */
  const char *const *series; /* [nseries] */
  const double *est, *lo, *hi;
  double axis_min, axis_max; /* used when axis_min < axis_max */
} tl_svg_bars;
tl_status tl_svg_bars_write(tl_buf *out, const tl_svg_bars *c, tl_err *err);

/* Forest plot: one row per comparison (label[i]), a point at est[i] with its CI [lo[i], hi[i]]
 * as a line, and a dashed vertical line at ref (0 for differences). lo/hi may be NULL. */
typedef struct {
  tl_svg_frame frame;
  size_t n;
  const char *const *labels; /* [n] */
  const double *est, *lo, *hi;
  double ref;
} tl_svg_forest;
tl_status tl_svg_forest_write(tl_buf *out, const tl_svg_forest *c, tl_err *err);

/* Correlation bars: one horizontal bar per metric (labels[i]), r[i] with CI [lo[i], hi[i]], on a
 * fixed -1..1 axis with a line at 0. A grouped-bar chart with one series, written as such. */
tl_status tl_svg_corr_write(tl_buf *out, const tl_svg_frame *frame, size_t n,
                            const char *const *labels, const double *r, const double *lo,
                            const double *hi, tl_err *err);

/* Heatmap (confusion matrix): nrows x ncols cells, counts[r * ncols + c] (NaN = missing: a
 * hatched cell labelled "n/a"). Every cell shows its count as text; the shade (darker = more,
 * relative to the largest count) only repeats it. row_label / col_label: the axes' names
 * (e.g. "human", "judge"; may be NULL). */
typedef struct {
  tl_svg_frame frame;
  size_t nrows, ncols;
  const char *const *rows; /* [nrows] */
  const char *const *cols; /* [ncols] */
  const double *counts;    /* [nrows * ncols] */
  const char *row_label, *col_label;
} tl_svg_heatmap;
tl_status tl_svg_heatmap_write(tl_buf *out, const tl_svg_heatmap *c, tl_err *err);

/* Strip plot: one row per series (model), one dot per value (seed): series s has the values
 * vals[off[s] .. off[s+1]) (off: [nseries + 1], off[0] = 0). A short vertical tick marks the
 * mean of the finite values, written as text with the count; NaN values are not drawn but
 * counted ("k n/a"); a series with no finite value is a labelled gap. */
typedef struct {
  tl_svg_frame frame;
  size_t nseries;
  const char *const *series; /* [nseries] */
  const size_t *off;         /* [nseries + 1] */
  const double *vals;
} tl_svg_strip;
tl_status tl_svg_strip_write(tl_buf *out, const tl_svg_strip *c, tl_err *err);

/* ---- building blocks, public for the HTML writer and the tests ---- */

/* Appends v as "%.6g" would in the C locale ('.' decimal point), "-0" as "0", NaN as "NaN",
 * infinities as "inf" / "-inf". */
tl_status tl_svg_num(tl_buf *out, double v);
/* Appends s with & < > " ' escaped for XML; invalid UTF-8 and XML-forbidden control characters
 * (all below U+0020 but TAB, LF, CR) become U+FFFD. NULL is written as "". */
tl_status tl_svg_esc(tl_buf *out, const char *s);

/* Nice ticks (Heckbert 1990) for the data range [lo, hi] (lo <= hi, both finite), about
 * `target` ticks (>= 2): sets *step (1, 2 or 5 x 10^k) and the axis ends *amin = floor(lo /
 * step) * step, *amax = ceil(hi / step) * step; returns the tick count (amax - amin) / step + 1.
 * lo == hi is widened to a unit range around it first. */
int tl_svg_nice_ticks(double lo, double hi, int target, double *amin, double *amax, double *step);

#endif
