/* sp_pipeline_sampled_figures: the last full timeline's figures recomputed from the chunks
 * SP_TIMELINE_SAMPLED would have timed (timing.c's windows), over a copy of it. */
#include <string.h>

#include "core/pipeline_state.h"
#include "core/timeline.h"
#include "core/timing.h"

/* t copied into *copy (spans, records and the engines' facts). */
static sp_status copy_timeline(sp_timeline *copy, const sp_timeline *t)
{
    sp_status st = sp_timeline_reset(copy, t->engines, t->chunks);
    if (st != SP_OK)
        return st;
    sp_span *spans = copy->spans;
    size_t *records = copy->records, capacity = copy->capacity;
    size_t records_capacity = copy->records_capacity;
    *copy = *t; /* the engines' facts, then its own arrays back */
    copy->spans = spans;
    copy->records = records;
    copy->capacity = capacity;
    copy->records_capacity = records_capacity;
    memcpy(spans, t->spans, t->engines * t->chunks * sizeof *spans);
    if (t->chunks)
        memcpy(records, t->records, t->chunks * sizeof *records);
    return SP_OK;
}

/* Every chunk of a full timeline has its GPU spans (h2d, the stages, d2h). */
static int timed_whole(const sp_pipeline *p, const sp_timeline *t)
{
    return t->complete && t->chunks > 0 && t->engines > SP_TL_GPU(0) &&
           sp_timing_windows(p).first == 0 && sp_timeline_timed_chunks(t) == t->chunks;
}

sp_status sp_pipeline_sampled_figures(sp_pipeline *p, sp_report *report)
{
    if (!p || !report)
        return SP_ERR_INVALID_ARGUMENT;
    sp_status st = sp_pipeline_claim(p, "sp_pipeline_sampled_figures");
    if (st != SP_OK)
        return st;
    const sp_timeline *t = &p->timeline;
    if (!timed_whole(p, t)) {
        sp_pipeline_release(p);
        return sp_pipeline_fail(p, SP_ERR_INVALID_ARGUMENT, "sp_pipeline_sampled_figures: "
                                "the last run kept no full timeline (run with a report and "
                                "SP_TIMELINE_EVENTS or SP_TIMELINE_CUPTI first)");
    }
    sp_timeline copy;
    memset(&copy, 0, sizeof copy);
    st = copy_timeline(&copy, t);
    if (st == SP_OK) {
        sp_sample_windows w = sp_timing_sample_windows(p);
        for (size_t c = 0; c < copy.chunks; c++)
            for (size_t g = 0; !sp_timing_in_sample(c, copy.chunks, &w) &&
                               SP_TL_GPU(g) < SP_TL_STAGE_OUT(p); g++)
                copy.spans[SP_TL_GPU(g) * copy.chunks + c] = (sp_span){0.0, -1.0};
        sp_timeline_figures(&copy, report);
    }
    sp_timeline_free(&copy);
    sp_pipeline_release(p);
    return st == SP_OK ? SP_OK
                       : sp_pipeline_fail(p, st, "sp_pipeline_sampled_figures: no memory for "
                                          "a copy of the timeline");
}
