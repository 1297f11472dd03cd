/*
 * streampipe trace export: the per-chunk, per-engine timeline of one run, as a file a person
 * or a tool can look at. 0.8: written from the run's report, which holds its own copy of
 * the timeline when the pipeline's config sets keep_timeline (sp_report.timeline), so that
 * the pipeline may be gone by then; 0.7's sp_pipeline_write_trace and sp_pipeline_write_svg,
 * which read the pipeline's last run, are gone.
 *
 * - sp_report_write_trace: Chrome trace JSON ("JSON object format"), which Perfetto
 *   (ui.perfetto.dev) and chrome://tracing open. One track per engine (stage-in, h2d, each
 *   stage, d2h, stage-out), one complete event per chunk per engine named like "h2d c12",
 *   with the chunk index, records and bytes in its args; the run's figures are in
 *   "otherData".
 * - sp_report_write_svg: a self-contained SVG picture: one lane per engine, each chunk in
 *   the same colour in every lane, a time axis in milliseconds, and the report's figures
 *   (makespan, bound, efficiency, hidden transfer, bottleneck, per-engine busy time and rate).
 *
 * Times are from the run's start: device engines from a base event recorded on the h2d
 * queue as the run began, host staging from the host clock at the same moment.
 *
 * Both write to a FILE the caller opened and leave it open; they never print anywhere else.
 * They only read the report, so several threads may write one report's files at once. On
 * failure sp_report_last_error (the calling thread's) says why.
 */
#ifndef STREAMPIPE_TRACE_H
#define STREAMPIPE_TRACE_H

#include <stdio.h>

#include "streampipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0.8: writes the Chrome trace JSON of the report's run from its timeline
 * (sp_report.timeline). SP_ERR_INVALID_ARGUMENT when an argument is NULL or the report has
 * no timeline (set keep_timeline in the pipeline's config, run with a report, and the run
 * must have succeeded with records, timed: its timeline mode not SP_TIMELINE_OFF);
 * SP_ERR_BACKEND when writing to f fails ("writing the trace failed: <reason>"). */
SP_API sp_status sp_report_write_trace(const sp_report *report, FILE *f);

/* 0.8: writes the SVG timeline of the report's run, with the report's figures beside the
 * lanes. SP_ERR_INVALID_ARGUMENT and SP_ERR_BACKEND as for sp_report_write_trace, and
 * SP_ERR_INVALID_ARGUMENT when the report's figures are not of its timeline's run (its
 * chunk or engine counts differ: a report changed by hand). */
SP_API sp_status sp_report_write_svg(const sp_report *report, FILE *f);

/* 0.7: writes the flight recorder's spans (sp_pipeline_config.flight_recorder_s > 0) as a
 * Chrome trace JSON file at `path`, which Perfetto (its UI and trace processor) loads: the
 * spans of every engine that ended within flight_recorder_s of the newest one kept, on the
 * host's monotonic clock in microseconds, from runs made with a report (the timeline mode's
 * chunks: the sampled windows' GPU operations by default, every one with EVENTS; host
 * staging always; not graph replays, streams or serial runs, which record no spans). The
 * recorder is a ring of 65536 spans (2 MiB), fixed at creation (sp_report.flight_recorder_bytes
 * says its size); GPU spans enter as their chunks leave the ring, host spans as they
 * happen, and a failed run's last chunks after its drain. Any thread, any time, during a run
 * too (it copies the ring under a lock held for that copy alone); the library writes no file
 * unless this is called. It writes no error text (it may run beside a run that owns it):
 * SP_ERR_INVALID_ARGUMENT for NULL or a pipeline without a recorder, SP_ERR_OUT_OF_MEMORY,
 * SP_ERR_BACKEND when the file cannot be written (errno says why). */
SP_API sp_status sp_pipeline_dump_recent(const sp_pipeline *pipeline, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* STREAMPIPE_TRACE_H */
