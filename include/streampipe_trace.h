/*
 * streampipe trace export: the per-chunk, per-engine timeline of a pipeline's last run made
 * with a report, as a file a person or a tool can look at.
 *
 * - sp_pipeline_write_trace: Chrome trace JSON ("JSON object format"), which Perfetto
 *   (ui.perfetto.dev) and chrome://tracing open. One track per engine (stage-in, h2d, each
 *   stage, d2h, stage-out), one complete event per chunk per engine named like "h2d c12",
 *   with the chunk index, records and bytes in its args; the run's figures are in
 *   "otherData".
 * - sp_pipeline_write_svg: a self-contained SVG picture: one lane per engine, each chunk in
 *   the same colour in every lane, a time axis in milliseconds, and the report's figures
 *   (makespan, bound, efficiency, hidden transfer, bottleneck, per-engine busy time and rate).
 *
 * Times are from the run's start: device engines from a base event recorded on the h2d
 * queue as the run began, host staging from the host clock at the same moment.
 *
 * Both write to a FILE the caller opened and leave it open; they never print anywhere else.
 * Do not call them while the pipeline is running. On failure the pipeline's last error
 * (sp_pipeline_last_error) says why.
 */
#ifndef STREAMPIPE_TRACE_H
#define STREAMPIPE_TRACE_H

#include <stdio.h>

#include "streampipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the Chrome trace JSON of the pipeline's last run made with a report (a run made
 * without one leaves the timeline alone). SP_ERR_INVALID_ARGUMENT when an argument is NULL
 * or there is no such run to write: none was made, or the last one failed or had no records.
 * SP_ERR_BACKEND when writing to f fails ("writing the trace failed: <reason>"). */
SP_API sp_status sp_pipeline_write_trace(const sp_pipeline *pipeline, FILE *f);

/* Writes the SVG timeline of the same run. `report` is the report that run filled, whose
 * figures are printed beside the lanes; NULL computes the same figures from the timeline.
 * SP_ERR_INVALID_ARGUMENT as for sp_pipeline_write_trace, and when `report` is not of that
 * run (its chunk or engine counts differ); SP_ERR_BACKEND when writing fails. */
SP_API sp_status sp_pipeline_write_svg(const sp_pipeline *pipeline, const sp_report *report,
                                       FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* STREAMPIPE_TRACE_H */
