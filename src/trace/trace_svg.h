/* The SVG timeline's geometry, shared by the lanes (trace_svg.c) and the figures panel beside
 * them (trace_svg_panel.c). Units are SVG user units (pixels at 100%). */
#ifndef SP_TRACE_SVG_H
#define SP_TRACE_SVG_H

#include "trace/trace_common.h"

#define SVG_WIDTH 1280.0
#define SVG_MARGIN 16.0
#define SVG_LABEL_W 112.0  /* lane names, left of the plot */
#define SVG_LABEL_BYTES 14 /* longer lane names are cut */
#define SVG_PLOT_W 750.0
#define SVG_PANEL_W 340.0  /* the figures, right of the plot */
#define SVG_TOP 100.0      /* below the title, the legend and the two marker labels */
#define SVG_LANE_H 26.0
#define SVG_LANE_GAP 10.0
#define SVG_SUBLANE_GAP 3.0 /* between the lanes of one stage's queues: closer, as a group */
#define SVG_LINE_H 18.0    /* one line of text in the panel */

typedef struct svg_layout {
    double plot_x;   /* left edge of time 0 */
    double span_s;   /* seconds from the left edge to the right edge of the plot */
    double lanes_bottom;
    double panel_x;
    double height;
} svg_layout;

/* x of time t (seconds from the run's start). */
static inline double svg_x(const svg_layout *l, double t)
{
    return l->plot_x + (l->span_s > 0.0 ? t / l->span_s * SVG_PLOT_W : 0.0);
}

/* Writes the figures of `r` as a panel starting at (l->panel_x, top); returns its bottom. */
double sp_svg_put_panel(sp_trace_writer *w, const svg_layout *l, const sp_report *r,
                        double top);
/* Lines the panel will take, to size the picture before writing it. */
size_t sp_svg_panel_lines(const sp_report *r);

#endif
