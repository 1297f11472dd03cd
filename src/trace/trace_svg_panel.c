/* The figures beside the SVG lanes: the run's figures of DESIGN.md section 5, then a table of
 * each engine's busy time, share of the makespan and rate, then the report's notes. */
#include <string.h>

#include "core/clock.h"
#include "trace/trace_svg.h"

#define PANEL_VALUE_X 180.0 /* right edge of the values; units and remarks follow */
#define NAME_BYTES 18       /* engine names longer than this are cut in the table */
#define NOTE_CHARS 56       /* the notes are wrapped at about this many characters */
#define NOTE_LINES 6

/* One line: label, value (with its unit) right-aligned, a remark in grey. */
static void put_figure(sp_trace_writer *w, const svg_layout *l, double y, const char *label,
                       const char *value, const char *unit, const char *remark)
{
    sp_trace_printf(w, "<text x=\"%s\" y=\"%s\">%s</text>"
                       "<text x=\"%s\" y=\"%s\" class=\"num\" style=\"font-weight:bold\">",
                    sp_trace_fixed(l->panel_x, 1).text, sp_trace_fixed(y, 1).text, label,
                    sp_trace_fixed(l->panel_x + PANEL_VALUE_X, 1).text,
                    sp_trace_fixed(y, 1).text);
    sp_trace_put_xml_text(w, value);
    sp_trace_printf(w, "%s</text><text x=\"%s\" y=\"%s\" class=\"note\">%s</text>\n", unit,
                    sp_trace_fixed(l->panel_x + PANEL_VALUE_X + 6.0, 1).text,
                    sp_trace_fixed(y, 1).text, remark);
}

static double put_figures(sp_trace_writer *w, const svg_layout *l, const sp_report *r,
                          double y)
{
    put_figure(w, l, y += SVG_LINE_H, "makespan", sp_trace_fixed(r->makespan_s * 1e3, 3).text,
               " ms", "enqueue to last completion");
    put_figure(w, l, y += SVG_LINE_H, "bound", sp_trace_fixed(r->bound_s * 1e3, 3).text, " ms",
               "busiest engine's total");
    put_figure(w, l, y += SVG_LINE_H, "efficiency", sp_trace_fixed(r->efficiency * 100.0, 1).text,
               " %", "bound / makespan");
    put_figure(w, l, y += SVG_LINE_H, "hidden transfer",
               sp_trace_fixed(r->hidden_transfer * 100.0, 1).text, " %",
               "copy time under compute");
    put_figure(w, l, y += SVG_LINE_H, "bottleneck", r->bottleneck[0] ? r->bottleneck : "-", "",
               "");
    put_figure(w, l, y += SVG_LINE_H, "model", sp_trace_fixed(r->model_s * 1e3, 3).text, " ms",
               "(N-1) x max + sum per chunk");
    put_figure(w, l, y += SVG_LINE_H, "serial sum", sp_trace_fixed(r->serial_s * 1e3, 3).text,
               " ms", "all engines, no overlap");
    return y;
}

static void put_engine_row(sp_trace_writer *w, const svg_layout *l, const sp_report *r,
                           const sp_engine_report *e, double y)
{
    double share = r->makespan_s > 0.0 ? e->busy_s / r->makespan_s * 100.0 : 0.0;
    double gbps = sp_gbps((double)e->bytes, e->busy_s);
    sp_trace_printf(w, "<text x=\"%s\" y=\"%s\">", sp_trace_fixed(l->panel_x, 1).text,
                    sp_trace_fixed(y, 1).text);
    sp_trace_put_xml_clipped(w, e->name, NAME_BYTES);
    sp_trace_printf(w, "</text><text x=\"%s\" y=\"%s\" class=\"num\">%s</text>"
                       "<text x=\"%s\" y=\"%s\" class=\"num\">%s %%</text>"
                       "<text x=\"%s\" y=\"%s\" class=\"num\">%s</text>\n",
                    sp_trace_fixed(l->panel_x + 200.0, 1).text, sp_trace_fixed(y, 1).text,
                    sp_trace_fixed(e->busy_s * 1e3, 3).text,
                    sp_trace_fixed(l->panel_x + 270.0, 1).text, sp_trace_fixed(y, 1).text,
                    sp_trace_fixed(share, 1).text, sp_trace_fixed(l->panel_x + SVG_PANEL_W, 1).text,
                    sp_trace_fixed(y, 1).text, sp_trace_fixed(gbps, 2).text);
}

static double put_engines(sp_trace_writer *w, const svg_layout *l, const sp_report *r,
                          double y)
{
    y += 1.5 * SVG_LINE_H;
    sp_trace_printf(w, "<g style=\"font-weight:bold\"><text x=\"%s\" y=\"%s\">engine</text>"
                       "<text x=\"%s\" y=\"%s\" class=\"num\">busy ms</text>"
                       "<text x=\"%s\" y=\"%s\" class=\"num\">busy</text>"
                       "<text x=\"%s\" y=\"%s\" class=\"num\">GB/s</text></g>\n",
                    sp_trace_fixed(l->panel_x, 1).text, sp_trace_fixed(y, 1).text,
                    sp_trace_fixed(l->panel_x + 200.0, 1).text, sp_trace_fixed(y, 1).text,
                    sp_trace_fixed(l->panel_x + 270.0, 1).text, sp_trace_fixed(y, 1).text,
                    sp_trace_fixed(l->panel_x + SVG_PANEL_W, 1).text, sp_trace_fixed(y, 1).text);
    for (size_t i = 0; i < r->n_engines && i < SP_MAX_ENGINES; i++)
        put_engine_row(w, l, r, &r->engines[i], y += SVG_LINE_H);
    sp_trace_printf(w, "<text x=\"%s\" y=\"%s\" class=\"note\">GB/s: bytes copied, or read by "
                       "a stage, per busy second</text>\n",
                    sp_trace_fixed(l->panel_x, 1).text, sp_trace_fixed(y += SVG_LINE_H, 1).text);
    return y;
}

/* Length of the next line of `text` (at most NOTE_CHARS, broken at a space if there is one). */
static size_t note_line_length(const char *text)
{
    size_t n = strlen(text);
    if (n <= NOTE_CHARS)
        return n;
    size_t cut = NOTE_CHARS;
    while (cut > NOTE_CHARS / 2 && text[cut] != ' ')
        cut--;
    if (text[cut] != ' ')
        cut = NOTE_CHARS;
    while (cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80)
        cut--; /* never split a UTF-8 sequence */
    return cut;
}

static size_t note_lines(const char *text)
{
    size_t lines = 0;
    for (; *text && lines < NOTE_LINES; lines++) {
        text += note_line_length(text);
        while (*text == ' ')
            text++;
    }
    return lines;
}

static void put_notes(sp_trace_writer *w, const svg_layout *l, const char *text, double y)
{
    char line[NOTE_CHARS + 1];
    for (size_t i = 0; *text && i < NOTE_LINES; i++) {
        size_t n = note_line_length(text);
        memcpy(line, text, n);
        line[n] = '\0';
        sp_trace_printf(w, "<text x=\"%s\" y=\"%s\" class=\"note\">",
                        sp_trace_fixed(l->panel_x, 1).text,
                        sp_trace_fixed(y += SVG_LINE_H, 1).text);
        sp_trace_put_xml_text(w, line);
        sp_trace_printf(w, "</text>\n");
        text += n;
        while (*text == ' ')
            text++;
    }
}

size_t sp_svg_panel_lines(const sp_report *r)
{
    /* heading, 7 figures, a gap and the table heading, the engines, the rate note, notes */
    return 1 + 7 + 2 + r->n_engines + 1 + note_lines(r->notes);
}

double sp_svg_put_panel(sp_trace_writer *w, const svg_layout *l, const sp_report *r,
                        double top)
{
    double y = top + 4.0;
    sp_trace_printf(w, "<text x=\"%s\" y=\"%s\" style=\"font-weight:bold;font-size:14px\">"
                       "Figures of this run</text>\n",
                    sp_trace_fixed(l->panel_x, 1).text, sp_trace_fixed(y, 1).text);
    y = put_figures(w, l, r, y);
    y = put_engines(w, l, r, y);
    put_notes(w, l, r->notes, y);
    return y + (double)note_lines(r->notes) * SVG_LINE_H;
}
