/* The SVG timeline of a report's run, from its timeline: one lane per engine (a stage on several
 * queues gets one per queue, "name q0", "name q1", ..., so chunks running side by side do not
 * hide each other), one bar per chunk in that chunk's colour (the same in every lane, so a
 * chunk can be followed down the pipeline), a millisecond axis with a grid, lines at the
 * bound and the makespan, and the report's figures in a panel on the right. Self-contained:
 * no scripts, fonts or links; each bar has a <title> tooltip with its exact times and size. */
#include <math.h>

#include "core/timeline.h" /* SP_TL_GPU(0): the h2d engine, which every run has */
#include "trace/trace_svg.h"
#include "streampipe_trace.h"

static size_t active_engines(const sp_timeline *t)
{
    size_t n = 0;
    for (size_t e = 0; e < t->engines; e++)
        n += t->active[e] != 0;
    return n;
}

/* Height of engine e's lanes, without the gap below them. */
static double engine_height(const sp_timeline *t, size_t e)
{
    double lanes = (double)sp_trace_lanes(t, e);
    return lanes * SVG_LANE_H + (lanes - 1.0) * SVG_SUBLANE_GAP;
}

/* Top of lane k of an engine whose first lane's top is y. */
static double lane_y(double y, unsigned k)
{
    return y + (double)k * (SVG_LANE_H + SVG_SUBLANE_GAP);
}

/* The picture spans the makespan, or the latest span end if one lies beyond it (the device
 * clock and the host clock start a few microseconds apart). */
static double latest_time(const sp_timeline *t, const sp_report *r)
{
    double latest = r->makespan_s;
    for (size_t i = 0; i < t->engines * t->chunks; i++)
        if (t->spans[i].end >= t->spans[i].start && t->spans[i].end > latest)
            latest = t->spans[i].end;
    return latest;
}

static svg_layout make_layout(const sp_timeline *t, const sp_report *r)
{
    svg_layout l;
    l.plot_x = SVG_MARGIN + SVG_LABEL_W;
    l.span_s = latest_time(t, r);
    l.lanes_bottom = SVG_TOP;
    for (size_t e = 0; e < t->engines; e++)
        if (t->active[e])
            l.lanes_bottom += engine_height(t, e) + SVG_LANE_GAP;
    l.panel_x = l.plot_x + SVG_PLOT_W + 2.0 * SVG_MARGIN;
    double axis_bottom = l.lanes_bottom + 64.0;
    double panel_bottom = SVG_TOP + (double)sp_svg_panel_lines(r) * SVG_LINE_H + SVG_MARGIN;
    l.height = ceil(fmax(axis_bottom, panel_bottom));
    return l;
}

static void put_header(sp_trace_writer *w, const sp_report *r, const sp_timeline *t,
                       const svg_layout *l)
{
    sp_trace_printf(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                       "viewBox=\"0 0 %d %d\">\n",
                    (int)SVG_WIDTH, (int)l->height, (int)SVG_WIDTH, (int)l->height);
    sp_trace_printf(w, "<style>text{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;"
                       "font-size:12px;fill:#222}.title{font-size:16px;font-weight:bold}"
                       ".note{font-size:11px;fill:#555}.bar{stroke:#fff;stroke-width:0.5}"
                       ".id{font-size:10px;fill:#111;text-anchor:middle}"
                       ".grid{stroke:#ddd;stroke-width:1}.num{text-anchor:end}</style>\n");
    sp_trace_printf(w, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n");
    sp_trace_printf(w, "<text class=\"title\" x=\"%d\" y=\"28\">streampipe timeline: %s, "
                       "%zu records in %zu chunks of %zu (%s in), depth %u</text>\n",
                    (int)SVG_MARGIN, sp_report_timeline_backend(r), t->n_records, t->chunks,
                    t->chunk_records, sp_trace_size(sp_timeline_chunk_bytes(t, SP_TL_GPU(0), 0)).text,
                    sp_report_timeline_depth(r));
    sp_trace_printf(w, "<text class=\"note\" x=\"%d\" y=\"50\">One lane per engine queue "
                       "(a stage on n queues has q0, q1, ...: chunk i on q[i mod n]); one bar "
                       "per chunk, coloured by chunk, the same in every lane. Hover a bar for "
                       "its times.</text>\n",
                    (int)SVG_MARGIN);
}

/* A step of 1, 2 or 5 times a power of ten giving about 8 ticks, and the decimals it needs. */
static double tick_step_ms(double span_ms, int *decimals)
{
    double raw = span_ms / 8.0;
    double magnitude = pow(10.0, floor(log10(raw)));
    double step = magnitude * (raw <= magnitude ? 1.0 : raw <= 2.0 * magnitude ? 2.0
                                                   : raw <= 5.0 * magnitude  ? 5.0
                                                                             : 10.0);
    int d = (int)-floor(log10(step) + 1e-9);
    *decimals = d > 0 ? d : 0;
    return step;
}

static void put_axis(sp_trace_writer *w, const svg_layout *l)
{
    double span_ms = l->span_s * 1e3, y = l->lanes_bottom;
    sp_trace_printf(w, "<line class=\"grid\" x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" "
                       "style=\"stroke:#888\"/>\n", sp_trace_fixed(l->plot_x, 1).text,
                    sp_trace_fixed(y, 1).text, sp_trace_fixed(l->plot_x + SVG_PLOT_W, 1).text,
                    sp_trace_fixed(y, 1).text);
    if (!(span_ms > 0.0))
        return;
    int decimals = 0;
    double step = tick_step_ms(span_ms, &decimals);
    if (!(step > 0.0) || span_ms / step > 100.0)
        return; /* a span too small for doubles to step through: no ticks rather than a hang */
    for (double ms = 0.0; ms <= span_ms * (1.0 + 1e-9); ms += step) {
        sp_trace_number x = sp_trace_fixed(svg_x(l, ms * 1e-3), 1);
        sp_trace_printf(w, "<line class=\"grid\" x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\"/>"
                           "<text x=\"%s\" y=\"%s\" style=\"text-anchor:middle\">%s</text>\n",
                        x.text, sp_trace_fixed(SVG_TOP - 6.0, 1).text, x.text,
                        sp_trace_fixed(y + 5.0, 1).text, x.text, sp_trace_fixed(y + 19.0, 1).text,
                        sp_trace_fixed(ms, decimals).text);
    }
    sp_trace_printf(w, "<text x=\"%s\" y=\"%s\" style=\"text-anchor:middle\">time since the "
                       "run started (ms)</text>\n",
                    sp_trace_fixed(l->plot_x + SVG_PLOT_W / 2.0, 1).text,
                    sp_trace_fixed(y + 40.0, 1).text);
}

static void put_bar(sp_trace_writer *w, const svg_layout *l, const sp_timeline *t, size_t e,
                    size_t c, double y)
{
    sp_span s = t->spans[e * t->chunks + c];
    if (s.end < s.start)
        return;
    double x0 = svg_x(l, s.start), width = fmax(svg_x(l, s.end) - x0, 1.0);
    char colour[8];
    sp_trace_chunk_colour(c, colour);
    /* a white edge separates touching bars, but would wash a thin one out entirely */
    sp_trace_printf(w, "<rect class=\"bar\" x=\"%s\" y=\"%s\" width=\"%s\" height=\"%d\" "
                       "fill=\"%s\"%s><title>", sp_trace_fixed(x0, 2).text,
                    sp_trace_fixed(y, 1).text, sp_trace_fixed(width, 2).text, (int)SVG_LANE_H,
                    colour, width < 4.0 ? " style=\"stroke:none\"" : "");
    sp_trace_put_xml_text(w, t->name[e]);
    sp_trace_printf(w, " c%zu: %s to %s ms (%s ms), %zu bytes", c,
                    sp_trace_fixed(s.start * 1e3, 3).text, sp_trace_fixed(s.end * 1e3, 3).text,
                    sp_trace_fixed((s.end - s.start) * 1e3, 3).text,
                    sp_timeline_chunk_bytes(t, e, c));
    if (sp_trace_lanes(t, e) > 1)
        sp_trace_printf(w, ", queue %u", sp_trace_lane_of(t, e, c));
    sp_trace_printf(w, "</title></rect>\n");
    double digits = c < 10 ? 1.0 : c < 100 ? 2.0 : c < 1000 ? 3.0 : 4.0;
    if (width >= digits * 6.0 + 3.0) /* the chunk number, where it fits (10 px digits) */
        sp_trace_printf(w, "<text class=\"id\" x=\"%s\" y=\"%s\"%s>%zu</text>\n",
                        sp_trace_fixed(x0 + width / 2.0, 1).text,
                        sp_trace_fixed(y + SVG_LANE_H / 2.0 + 3.5, 1).text,
                        sp_trace_chunk_colour_is_dark(c) ? " style=\"fill:#fff\"" : "", c);
}

/* Lane k of engine e, its top at y: the background, the name ("name qk" when the engine has
 * several lanes; the name is cut first so that the queue stays readable) and its bars. */
static void put_lane(sp_trace_writer *w, const svg_layout *l, const sp_timeline *t, size_t e,
                     unsigned k, double y)
{
    unsigned lanes = sp_trace_lanes(t, e);
    sp_trace_printf(w, "<rect x=\"%s\" y=\"%s\" width=\"%d\" height=\"%d\" fill=\"#f2f3f5\"/>\n"
                       "<text x=\"%s\" y=\"%s\" class=\"num\" style=\"font-weight:bold\">",
                    sp_trace_fixed(l->plot_x, 1).text, sp_trace_fixed(y, 1).text,
                    (int)SVG_PLOT_W, (int)SVG_LANE_H, sp_trace_fixed(l->plot_x - 8.0, 1).text,
                    sp_trace_fixed(y + SVG_LANE_H / 2.0 + 4.0, 1).text);
    if (lanes > 1) {
        sp_trace_put_xml_clipped(w, t->name[e], SVG_LABEL_BYTES - 3); /* " q0" .. " q7" */
        sp_trace_printf(w, " q%u", k);
    } else {
        sp_trace_put_xml_clipped(w, t->name[e], SVG_LABEL_BYTES);
    }
    sp_trace_printf(w, "</text>\n");
    for (size_t c = k; c < t->chunks; c += lanes)
        put_bar(w, l, t, e, c, y);
}

/* A dashed vertical line across the lanes at time `at`, labelled above them at label_y (the
 * two markers get rows of their own, since the bound may lie close to the makespan). */
static void put_marker(sp_trace_writer *w, const svg_layout *l, double at, const char *label,
                       const char *colour, double label_y)
{
    sp_trace_number x = sp_trace_fixed(svg_x(l, at), 1);
    sp_trace_printf(w, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"%s\" "
                       "stroke-width=\"1.5\" stroke-dasharray=\"5,3\"/>"
                       "<text x=\"%s\" y=\"%s\" class=\"note\" style=\"fill:%s;"
                       "text-anchor:end\">%s %s ms</text>\n",
                    x.text, sp_trace_fixed(label_y + 3.0, 1).text, x.text,
                    sp_trace_fixed(l->lanes_bottom, 1).text, colour, x.text,
                    sp_trace_fixed(label_y, 1).text, colour, label,
                    sp_trace_fixed(at * 1e3, 3).text);
}

/* The report must be of the timeline's run: the panel would otherwise contradict the bars
 * (a report whose figures were changed by hand, or a copy given another's timeline). */
static sp_status check_report(const sp_timeline *t, const sp_report *r)
{
    if (r->chunks == t->chunks && r->n_engines == active_engines(t) &&
        r->records == t->n_records)
        return SP_OK;
    return sp_report_fail(SP_ERR_INVALID_ARGUMENT,
                          "sp_report_write_svg: the report's figures (%zu records, %zu chunks, "
                          "%zu engines) are not of its timeline's run (%zu records, %zu "
                          "chunks, %zu engines)",
                          r->records, r->chunks, r->n_engines, t->n_records, t->chunks,
                          active_engines(t));
}

sp_status sp_report_write_svg(const sp_report *report, FILE *f)
{
    sp_trace_writer w;
    const sp_timeline *t = NULL;
    sp_status st = sp_trace_begin(report, f, "sp_report_write_svg", &w, &t);
    if (st == SP_OK)
        st = check_report(t, report);
    if (st != SP_OK)
        return st;
    svg_layout l = make_layout(t, report);
    put_header(&w, report, t, &l);
    put_axis(&w, &l);
    double y = SVG_TOP;
    for (size_t e = 0; e < t->engines; e++) {
        if (!t->active[e])
            continue;
        for (unsigned k = 0; k < sp_trace_lanes(t, e); k++)
            put_lane(&w, &l, t, e, k, lane_y(y, k));
        y += engine_height(t, e) + SVG_LANE_GAP;
    }
    /* the makespan's label on the upper row: its line, right of the bound's, then crosses
     * neither label */
    if (report->bound_s > 0.0)
        put_marker(&w, &l, report->bound_s, "bound", "#c0392b", SVG_TOP - 14.0);
    put_marker(&w, &l, report->makespan_s, "makespan", "#222", SVG_TOP - 30.0);
    sp_svg_put_panel(&w, &l, report, SVG_TOP);
    sp_trace_printf(&w, "</svg>\n");
    return sp_trace_end(&w);
}
