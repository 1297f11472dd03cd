/* Creating and destroying groups. The group lives in the main library, not a target of its
 * own, because it needs two things the public API does not give: runs whose records are
 * numbered from a unit's first record (core/runs.h), and the staging pool's default thread
 * count, to split it between devices. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/live_objects.h"
#include "core/pipeline.h"
#include "core/sized.h"
#include "core/staging_pool.h"
#include "group/group.h"

/* Enough for any machine's GPUs; the probe for "every visible GPU" stops there. */
#define SP_GROUP_MAX_PROBE 1024

sp_status sp_group_fail(sp_group *g, sp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->error, sizeof g->error, fmt, ap);
    va_end(ap);
    return status;
}

/* The per-device config: the group's staging threads divided between its devices, since
 * they share the host's cores and memory bandwidth; no timeline kept for a report. */
static sp_pipeline_config member_config(const sp_pipeline_config *config, size_t n)
{
    sp_pipeline_config c; /* the library's layout; the stages are read by sp_pipeline_create */
    const char *why;
    (void)sp_sized_read(&c, sizeof c, config, SP_PIPELINE_CONFIG_SIZE_0_5, &why); /* checked */
    unsigned total = c.staging_threads ? c.staging_threads : sp_staging_pool_default_threads();
    size_t each = total / n;
    c.staging_threads = each ? (unsigned)each : 1u;
    c.keep_timeline = 0; /* the members' reports are summed, never handed out: none kept */
    return c;
}

/* The handle exists before anything is opened, so that a failed creation has a group to be
 * the last error of (as sqlite3_open's handle does). */
static sp_group *group_new(void)
{
    sp_group *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->failed_device = -1;
    sp_live_object_add(SP_LIVE_GROUP, +1); /* a failed creation's handle too */
    return g;
}

/* A pipeline on every member's context; on failure the reason names the member. */
static sp_status open_pipelines(sp_group *g, const sp_pipeline_config *config)
{
    sp_pipeline_config c = member_config(config, g->n);
    for (size_t k = 0; k < g->n; k++) {
        sp_group_member *m = &g->members[k];
        sp_status st = sp_pipeline_create(m->ctx, &c, &m->pipeline);
        if (st != SP_OK)
            return sp_group_fail(g, st, "device %zu: creating its pipeline: %s", k,
                                 sp_context_last_error(m->ctx));
        sp_pipeline_set_group_member(m->pipeline, 1); /* the user may not destroy it */
        if (m->stats.device < 0)
            m->stats.device = (int)k;
    }
    return SP_OK;
}

static void free_members(sp_group *g)
{
    for (size_t k = 0; k < g->n; k++) {
        if (g->members[k].pipeline)
            sp_pipeline_set_group_member(g->members[k].pipeline, 0);
        sp_pipeline_destroy(g->members[k].pipeline);
        if (g->members[k].owns_ctx)
            sp_context_destroy(g->members[k].ctx);
    }
    free(g->members);
    g->members = NULL;
    g->n = 0;
}

/* The end of a creation: on failure, what is left of the group is its error text and
 * status, no members. */
static sp_status creation_done(sp_group *g, sp_status status)
{
    if (status == SP_OK)
        return SP_OK;
    free_members(g);
    g->create_status = status;
    return status;
}

void sp_group_destroy(sp_group *g)
{
    if (!g)
        return;
    free_members(g);
    free(g);
    sp_live_object_add(SP_LIVE_GROUP, -1);
}

/* Members over the given contexts (not owned), each with its pipeline. */
static sp_status add_members(sp_group *g, sp_context *const *contexts, size_t n,
                             const sp_pipeline_config *config)
{
    if (!contexts || n == 0 || !config)
        return sp_group_fail(g, SP_ERR_INVALID_ARGUMENT, "sp_group_create_contexts: no "
                             "contexts or no config");
    const char *why;
    sp_pipeline_config readable;
    sp_status st = sp_sized_read(&readable, sizeof readable, config, SP_PIPELINE_CONFIG_SIZE_0_5,
                                 &why);
    if (st != SP_OK)
        return sp_group_fail(g, st, "sp_group_create: config: %s", why);
    for (size_t k = 0; k < n; k++)
        if (!contexts[k])
            return sp_group_fail(g, SP_ERR_INVALID_ARGUMENT, "sp_group_create_contexts: a "
                                 "context is NULL");
    g->members = calloc(n, sizeof *g->members);
    if (!g->members)
        return sp_group_fail(g, SP_ERR_OUT_OF_MEMORY, "sp_group_create: no memory for the "
                             "group");
    g->n = n;
    for (size_t k = 0; k < n; k++) {
        g->members[k].ctx = contexts[k];
        g->members[k].stats.device = -1;
    }
    return open_pipelines(g, config);
}

sp_status sp_group_create_contexts(sp_context *const *contexts, size_t n,
                                   const sp_pipeline_config *config, sp_group **out)
{
    if (!out)
        return SP_ERR_INVALID_ARGUMENT;
    sp_group *g = *out = group_new();
    if (!g)
        return SP_ERR_OUT_OF_MEMORY;
    return creation_done(g, add_members(g, contexts, n, config));
}

/* The caller named devices (not NULL, not empty, not {-1}). */
static int devices_listed(const int *devices, size_t n)
{
    return devices && n > 0 && !(n == 1 && devices[0] == -1);
}

/* Whether the GPUs are probed for: neither listed nor n HOST stand-ins asked for. */
static int probing(sp_backend_kind kind, const int *devices, size_t n)
{
    return !devices_listed(devices, n) && !(kind == SP_BACKEND_HOST && !devices && n > 0);
}

/* How many contexts to open: the listed devices; n host backends for HOST (the stand-in for
 * n GPUs) when n > 0 and none are listed; else every GPU that opens, 0, 1, ... until one is
 * refused as not existing, or one context when the backend turned out to be HOST. ctx has
 * room for n contexts, or SP_GROUP_MAX_PROBE when probing. */
static sp_status open_contexts(sp_group *g, sp_backend_kind kind, const int *devices, size_t n,
                               sp_context **ctx, size_t *opened)
{
    int listed = devices_listed(devices, n);
    int probe = probing(kind, devices, n);
    size_t want = probe ? SP_GROUP_MAX_PROBE : n;
    *opened = 0;
    for (size_t k = 0; k < want; k++) {
        int device = listed ? devices[k] : (int)k;
        sp_status st = sp_context_create(kind, device, &ctx[k]);
        if (st != SP_OK) {
            if (!(st == SP_ERR_INVALID_ARGUMENT && probe && k > 0))
                sp_group_fail(g, st, "device %d: opening it: %s", device,
                              sp_context_last_error(ctx[k]));
            else
                st = SP_OK; /* past the last GPU */
            sp_context_destroy(ctx[k]); /* a failed open still yields a handle */
            ctx[k] = NULL;
            return st;
        }
        *opened = k + 1;
        if (probe && sp_context_backend(ctx[k]) == SP_BACKEND_HOST)
            return SP_OK; /* one host backend stands for "every device" */
    }
    return SP_OK;
}

static sp_status create_on_devices(sp_group *g, sp_backend_kind kind, const int *devices,
                                   size_t n, const sp_pipeline_config *config)
{
    if (!config)
        return sp_group_fail(g, SP_ERR_INVALID_ARGUMENT, "sp_group_create: config is NULL");
    int listed = devices_listed(devices, n);
    sp_context **ctx = calloc(probing(kind, devices, n) ? SP_GROUP_MAX_PROBE : n, sizeof *ctx);
    if (!ctx)
        return sp_group_fail(g, SP_ERR_OUT_OF_MEMORY, "sp_group_create: no memory");
    size_t opened = 0;
    sp_status st = open_contexts(g, kind, devices, n, ctx, &opened);
    if (st == SP_OK)
        st = add_members(g, ctx, opened, config);
    for (size_t k = 0; k < opened; k++) {
        if (st == SP_OK) {
            g->members[k].owns_ctx = 1;
            g->members[k].stats.device = listed ? devices[k] : (int)k;
        } else if (k >= g->n) {
            sp_context_destroy(ctx[k]); /* not a member yet */
        } else {
            g->members[k].owns_ctx = 1; /* free_members destroys it */
        }
    }
    free(ctx);
    return st;
}

sp_status sp_group_create(sp_backend_kind kind, const int *devices, size_t n,
                          const sp_pipeline_config *config, sp_group **out)
{
    if (!out)
        return SP_ERR_INVALID_ARGUMENT;
    sp_group *g = *out = group_new();
    if (!g)
        return SP_ERR_OUT_OF_MEMORY;
    return creation_done(g, create_on_devices(g, kind, devices, n, config));
}

size_t sp_group_size(const sp_group *g) { return g ? g->n : 0; }

sp_pipeline *sp_group_pipeline(const sp_group *g, size_t k)
{
    return g && k < g->n ? g->members[k].pipeline : NULL;
}

void sp_group_set_unit_records(sp_group *g, size_t unit_records)
{
    if (g)
        g->unit_records = unit_records;
}

const char *sp_group_last_error(const sp_group *g)
{
    return g ? g->error : "no group: out of memory when it was created, or group is NULL";
}

int sp_group_failed_device(const sp_group *g) { return g ? g->failed_device : -1; }

sp_status sp_group_device_report(const sp_group *g, size_t k, sp_report *out)
{
    if (!g || k >= g->n || !out)
        return SP_ERR_INVALID_ARGUMENT;
    *out = g->members[k].report;
    return SP_OK;
}

sp_status sp_group_device_stats_get(const sp_group *g, size_t k, sp_group_device_stats *out)
{
    if (!g || k >= g->n || !out)
        return SP_ERR_INVALID_ARGUMENT;
    *out = g->members[k].stats;
    return SP_OK;
}
