/* A device's figures over its units, and the group's over its devices. Units of one member
 * run the same pipeline, and members share one config, so engine e is the same engine in
 * every report added together: its times and bytes are summed. */
#include <stdio.h>
#include <string.h>

#include "group/group.h"

void sp_group_report_reset(sp_group_member *m)
{
    memset(&m->report, 0, sizeof m->report);
    m->stats.units = m->stats.records = 0;
    m->stats.busy_s = 0.0;
    m->stats.status = SP_OK;
    m->error[0] = '\0';
}

static void add_engines(sp_report *sum, const sp_report *unit)
{
    for (size_t e = 0; e < unit->n_engines && e < SP_MAX_ENGINES; e++) {
        sp_engine_report *to = &sum->engines[e];
        const sp_engine_report *from = &unit->engines[e];
        if (e >= sum->n_engines) {
            *to = *from;
            continue;
        }
        to->busy_s += from->busy_s;
        to->bytes += from->bytes;
        if (from->max_chunk_s > to->max_chunk_s)
            to->max_chunk_s = from->max_chunk_s;
    }
    if (unit->n_engines > sum->n_engines)
        sum->n_engines = unit->n_engines;
}

/* hidden_transfer is kept weighted by makespan until sp_group_report_finish divides. */
void sp_group_report_add(sp_report *sum, const sp_report *unit)
{
    sum->records += unit->records;
    sum->chunks += unit->chunks;
    if (unit->chunk_records > sum->chunk_records)
        sum->chunk_records = unit->chunk_records;
    /* the pipeline's figures, the same in every unit: the largest, since a member that took
     * no unit has a zeroed report, and merging the members adds theirs */
    if (unit->depth > sum->depth)
        sum->depth = unit->depth;
    sum->staging_threads = unit->staging_threads;
    sum->staged_in |= unit->staged_in;
    sum->staged_out |= unit->staged_out;
    sum->makespan_s += unit->makespan_s;
    add_engines(sum, unit);
    sum->serial_s += unit->serial_s;
    sum->model_s += unit->model_s;
    sum->hidden_transfer += unit->hidden_transfer * unit->makespan_s;
    sum->graph |= unit->graph;
    sum->submit_s += unit->submit_s;
    sum->wait_s += unit->wait_s;
    if (unit->pinned_bytes > sum->pinned_bytes)
        sum->pinned_bytes = unit->pinned_bytes;
    if (unit->slot_records > sum->slot_records)
        sum->slot_records = unit->slot_records;
    sum->batches += unit->batches;
    if (!sum->notes[0])
        memcpy(sum->notes, unit->notes, sizeof sum->notes);
}

/* The figures derived from the sums: bound, efficiency, rates, bottleneck. */
static void report_finish(sp_report *r, double weight_s)
{
    r->hidden_transfer = weight_s > 0.0 ? r->hidden_transfer / weight_s : 0.0;
    size_t top = 0;
    r->bound_s = 0.0;
    r->h2d_gbps = r->d2h_gbps = 0.0;
    for (size_t e = 0; e < r->n_engines; e++) {
        const sp_engine_report *en = &r->engines[e];
        if (en->busy_s > r->bound_s) {
            r->bound_s = en->busy_s;
            top = e;
        }
        double gbps = en->busy_s > 0.0 ? (double)en->bytes / en->busy_s / 1e9 : 0.0;
        if (en->kind == SP_ENGINE_H2D)
            r->h2d_gbps = gbps;
        if (en->kind == SP_ENGINE_D2H)
            r->d2h_gbps = gbps;
    }
    if (r->n_engines)
        snprintf(r->bottleneck, sizeof r->bottleneck, "%s", r->engines[top].name);
    r->efficiency = r->makespan_s > 0.0 ? r->bound_s / r->makespan_s : 0.0;
}

void sp_group_report_finish_member(sp_group_member *m)
{
    sp_report *r = &m->report;
    /* without a report the units measured nothing, but the counts are the group's own */
    r->records = m->stats.records;
    r->batches = m->stats.units;
    report_finish(r, r->makespan_s);
}

void sp_group_report_merge(const sp_group *g, double wall_s, sp_report *out)
{
    memset(out, 0, sizeof *out);
    double busiest = 0.0, weight = 0.0, hidden = 0.0;
    unsigned threads = 0;
    size_t pinned = 0;
    for (size_t k = 0; k < g->n; k++) {
        const sp_group_member *m = &g->members[k];
        sp_group_report_add(out, &m->report);
        hidden += m->report.hidden_transfer * m->report.makespan_s;
        weight += m->report.makespan_s;
        if (m->stats.busy_s > busiest)
            busiest = m->stats.busy_s;
        threads += m->report.staging_threads;
        pinned += m->report.pinned_bytes;
    }
    out->hidden_transfer = hidden;
    report_finish(out, weight);
    out->makespan_s = wall_s;
    out->staging_threads = threads;
    out->pinned_bytes = pinned;
    out->bound_s = busiest; /* the slowest device bounds the group */
    out->efficiency = wall_s > 0.0 ? busiest / wall_s : 0.0;
    char member_notes[sizeof out->notes];
    memcpy(member_notes, out->notes, sizeof member_notes);
    snprintf(out->notes, sizeof out->notes, "group of %zu devices (per device: "
             "sp_group_device_report)%s%.180s", g->n, member_notes[0] ? "; " : "",
             member_notes);
}
