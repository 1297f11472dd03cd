/* sp_report_sampled_figures: a report's full timeline's figures recomputed from the chunks
 * SP_TIMELINE_SAMPLED would have timed (timing.c's windows, kept with the timeline), over a
 * copy of it. Reads the report alone: the pipeline may be gone. */
#include <string.h>

#include "core/report_timeline.h"
#include "core/timing.h"

#define FN "sp_report_sampled_figures"

/* Every chunk of a full timeline has its GPU spans (h2d, the stages, d2h). */
static int timed_whole(const sp_report *report, const sp_timeline *t)
{
    return t->complete && t->chunks > 0 && t->engines > SP_TL_GPU(0) &&
           sp_report_timeline_whole(report) && sp_timeline_timed_chunks(t) == t->chunks;
}

/* The copy's GPU spans of the chunks outside the sampled windows, unrecorded. */
static void keep_windows(sp_timeline *copy, const sp_sample_windows *w)
{
    size_t stage_out = copy->engines - 1; /* the GPU engines lie between stage-in and it */
    for (size_t c = 0; c < copy->chunks; c++)
        for (size_t g = 0; !sp_timing_in_sample(c, copy->chunks, w) && SP_TL_GPU(g) < stage_out;
             g++)
            copy->spans[SP_TL_GPU(g) * copy->chunks + c] = (sp_span){0.0, -1.0};
}

sp_status sp_report_sampled_figures(const sp_report *report, sp_report *out)
{
    const sp_timeline *t = NULL;
    if (!out)
        return sp_report_fail(SP_ERR_INVALID_ARGUMENT, FN ": out is NULL");
    sp_status st = sp_report_timeline_get(report, FN, &t);
    if (st != SP_OK)
        return st;
    if (!timed_whole(report, t))
        return sp_report_fail(SP_ERR_INVALID_ARGUMENT, FN ": the report's run kept no full "
                              "timeline (run with a report, keep_timeline and "
                              "SP_TIMELINE_EVENTS or SP_TIMELINE_CUPTI first)");
    sp_timeline copy;
    memset(&copy, 0, sizeof copy);
    st = sp_timeline_copy(&copy, t);
    if (st == SP_OK) {
        sp_sample_windows w = sp_report_timeline_sample(report);
        keep_windows(&copy, &w);
        sp_report figures = *report;
        figures.timeline = out == report ? report->timeline : NULL; /* one owner */
        sp_timeline_figures(&copy, &figures);
        *out = figures;
    }
    sp_timeline_free(&copy);
    return st == SP_OK ? SP_OK
                       : sp_report_fail(st, FN ": no memory for a copy of the timeline");
}
