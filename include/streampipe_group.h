/*
 * Groups: one run spread over several devices of one process.
 *
 * A group holds one context and one pipeline (the same config) per device. A run is cut into
 * work units of a few chunks each; every device has a thread that takes the next unit from one
 * shared counter and runs it on its own pipeline, so a slower device simply takes fewer units.
 * Each unit reads and writes its own slice of the input and output, so records land in order
 * whichever device ran them. Stages see the records' numbers within the whole run
 * (sp_chunk.first_record); sp_chunk.index counts the chunks its device has run in this run.
 * An array run's units flow through each device's ring one after another without draining it
 * between them, so a group of one device runs as fast as its pipeline alone; such a run
 * records no per-operation timings (the report has the counts, shares and times of each
 * device, not engine busy times). A source's units (sp_group_run_io) are a timed run each.
 *
 * Threads: a group runs on one thread at a time; its stage functions run as in sp_pipeline_run
 * of each member pipeline, on that member's thread (CUDA) or workers (HOST), several devices at
 * once: a stage's `user` must tolerate calls from several threads at once (the MLP's stage
 * sets do not: they serve one pipeline at a time, so a group of several members cannot share
 * one; streampipe_mlp.h).
 */
#ifndef STREAMPIPE_GROUP_H
#define STREAMPIPE_GROUP_H

#include "streampipe.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sp_group sp_group;

/* What one device did in the last run. Fixed (streampipe.h, top). */
typedef struct sp_group_device_stats {
    int device;       /* the device number given at creation (HOST: its position) */
    size_t units;     /* work units it took (after a failed run: those it had taken when the
                         failure stopped it, the failed one and any not yet started included) */
    size_t records;   /* records of those units */
    double busy_s;    /* host seconds its thread spent running units */
    sp_status status; /* SP_OK, or why its last unit failed */
} sp_group_device_stats;

/* Opens a context and a pipeline per device. devices NULL, n_devices 0 or {-1}: every visible
 * GPU for CUDA (devices 0, 1, ... until one does not exist), one HOST backend for HOST; for
 * HOST, n_devices > 0 opens that many host backends (the device numbers are not used), so the
 * group's scheduling is tested without a GPU. AUTO resolves as sp_context_create does.
 * config is sized (streampipe.h, top). config->staging_threads is the total for the group: each device gets total / n (at least 1;
 * 0 lets each pipeline choose for itself, divided by n likewise).
 * Whether or not it succeeds, *out is a handle to destroy (NULL only when there was no memory
 * for it: SP_ERR_OUT_OF_MEMORY); a failed one says why in sp_group_last_error (naming the
 * device), has no members, and its runs return the status creation failed with. */
SP_API sp_status sp_group_create(sp_backend_kind kind, const int *devices, size_t n_devices,
                                 const sp_pipeline_config *config, sp_group **out);
/* The same over contexts the caller opened (e.g. with sp_context_create_fault): the group
 * takes a pipeline on each and does not destroy them; destroy them after the group, or before
 * (a context lives on while a pipeline of it remains: sp_context_destroy). Fails, and
 * yields a handle, as sp_group_create. */
SP_API sp_status sp_group_create_contexts(sp_context *const *contexts, size_t n_contexts,
                                          const sp_pipeline_config *config, sp_group **out);
/* Frees the pipelines, and the contexts the group opened. NULL is a no-op. */
SP_API void sp_group_destroy(sp_group *group);

SP_API size_t sp_group_size(const sp_group *group);
/* Member k's pipeline (for its out record size, chunk choice, ...); NULL when k is out of
 * range. It stays the group's: sp_pipeline_destroy refuses it (the group destroys it), and it
 * must not be run, nor a stream opened on it, while the group runs; a group run that finds a
 * member busy fails with the member's reason. */
SP_API sp_pipeline *sp_group_pipeline(const sp_group *group, size_t k);
/* Records per work unit; 0 (the default) = choose: 4 chunks of what a device's share of the
 * run would be cut into. Fewer records per unit balance better and drain the ring oftener. */
SP_API void sp_group_set_unit_records(sp_group *group, size_t unit_records);

/* Runs n_records from `in` into `out` as sp_pipeline_run does, over every device. On failure
 * the failing device's error is kept (sp_group_last_error, sp_group_failed_device), the other
 * devices take no new units and finish the ones they hold, and the run returns the failing
 * device's status; what `out` holds is then undefined. The group can run again afterwards.
 * `report` may be NULL; when given it holds the merged figures (below). */
SP_API sp_status sp_group_run(sp_group *group, const void *in, size_t n_records, void *out,
                              sp_report *report);
/* The same over a source and sink: positional io only (io->positional, io->n_records known),
 * since units of several devices read and write at once. Each unit's run is asked for the
 * records of its slice, numbered within the whole io. */
SP_API sp_status sp_group_run_io(sp_group *group, const sp_io *io, sp_report *report);

/* The merged report of a run: records and chunks are sums, makespan_s is the wall time of
 * the whole run, engines[] are each engine's sums over devices (max_chunk_s the largest),
 * bound_s the largest device busy time, efficiency bound_s / makespan_s, staging_threads and
 * pinned_bytes sums; serial_s, model_s, submit_s and wait_s sums; batches the units run.
 *
 * sp_group_device_report: device k's figures over its units, merged the same way but with
 * makespan_s its busy time. SP_ERR_INVALID_ARGUMENT for k out of range. */
SP_API sp_status sp_group_device_report(const sp_group *group, size_t k, sp_report *out);
SP_API sp_status sp_group_device_stats_get(const sp_group *group, size_t k,
                                           sp_group_device_stats *out);

/* What the last failed call on the group did wrong, its creation included, with the device
 * index ("device 2: ..."); "" when nothing has failed. Valid until the next call on the
 * group. */
SP_API const char *sp_group_last_error(const sp_group *group);
/* The member index whose failure failed the last run; -1 when none did. */
SP_API int sp_group_failed_device(const sp_group *group);

#ifdef __cplusplus
}
#endif

#endif /* STREAMPIPE_GROUP_H */
