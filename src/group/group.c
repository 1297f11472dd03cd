/* Creating and destroying groups. The group lives in the main library, not a target of its
 * own, because it needs two things the public API does not give: runs whose records are
 * numbered from a unit's first record (core/run_at.h), and the staging pool's default thread
 * count, to split it between devices. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/staging_pool.h"
#include "core/live_objects.h"
#include "group/group.h"

/* Enough for any machine's GPUs; the probe for "every visible GPU" stops there. */
#define SP_GROUP_MAX_PROBE 1024

/* Why the last sp_group_create* on this thread failed: the group is gone by then. */
static _Thread_local char create_error[SP_GROUP_ERROR_TEXT];

const char *sp_group_last_create_error(void) { return create_error; }

static sp_status create_fail(sp_status status, const char *what, const char *reason)
{
    snprintf(create_error, sizeof create_error, "%s%s%s", what, *reason ? ": " : "", reason);
    return status;
}

sp_status sp_group_fail(sp_group *g, sp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->error, sizeof g->error, fmt, ap);
    va_end(ap);
    return status;
}

/* The per-device config: the group's staging threads divided between its devices, since
 * they share the host's cores and memory bandwidth. */
static sp_pipeline_config member_config(const sp_pipeline_config *config, size_t n)
{
    sp_pipeline_config c = *config;
    unsigned total = c.staging_threads ? c.staging_threads : sp_staging_pool_default_threads();
    size_t each = total / n;
    c.staging_threads = each ? (unsigned)each : 1u;
    return c;
}

static sp_status group_alloc(size_t n, sp_group **out)
{
    sp_group *g = calloc(1, sizeof *g);
    if (g)
        g->members = calloc(n, sizeof *g->members);
    if (!g || !g->members) {
        free(g);
        return SP_ERR_OUT_OF_MEMORY;
    }
    g->n = n;
    g->failed_device = -1;
    sp_live_object_add(SP_LIVE_GROUP, +1);
    *out = g;
    return SP_OK;
}

/* A pipeline on every member's context; on failure the reason names the member. */
static sp_status open_pipelines(sp_group *g, const sp_pipeline_config *config, char *why,
                                size_t why_size)
{
    sp_pipeline_config c = member_config(config, g->n);
    for (size_t k = 0; k < g->n; k++) {
        sp_group_member *m = &g->members[k];
        sp_status st = sp_pipeline_create(m->ctx, &c, &m->pipeline);
        if (st != SP_OK) {
            snprintf(why, why_size, "device %zu: creating its pipeline: %s", k,
                     sp_context_last_error(m->ctx));
            return st;
        }
        if (m->stats.device < 0)
            m->stats.device = (int)k;
    }
    return SP_OK;
}

void sp_group_destroy(sp_group *g)
{
    if (!g)
        return;
    for (size_t k = 0; k < g->n; k++) {
        sp_pipeline_destroy(g->members[k].pipeline);
        if (g->members[k].owns_ctx)
            sp_context_destroy(g->members[k].ctx);
    }
    free(g->members);
    free(g);
    sp_live_object_add(SP_LIVE_GROUP, -1);
}

sp_status sp_group_create_contexts(sp_context *const *contexts, size_t n,
                                   const sp_pipeline_config *config, sp_group **out)
{
    if (!out)
        return SP_ERR_INVALID_ARGUMENT;
    *out = NULL;
    create_error[0] = '\0';
    if (!contexts || n == 0 || !config)
        return create_fail(SP_ERR_INVALID_ARGUMENT, "sp_group_create_contexts: no contexts "
                           "or no config", "");
    for (size_t k = 0; k < n; k++)
        if (!contexts[k])
            return create_fail(SP_ERR_INVALID_ARGUMENT, "sp_group_create_contexts: a context "
                               "is NULL", "");
    sp_group *g;
    sp_status st = group_alloc(n, &g);
    if (st != SP_OK)
        return create_fail(st, "sp_group_create_contexts: no memory for the group", "");
    for (size_t k = 0; k < n; k++) {
        g->members[k].ctx = contexts[k];
        g->members[k].stats.device = -1;
    }
    char why[SP_GROUP_ERROR_TEXT];
    if ((st = open_pipelines(g, config, why, sizeof why)) != SP_OK) {
        sp_group_destroy(g);
        return create_fail(st, why, "");
    }
    *out = g;
    return SP_OK;
}

/* The caller named devices (not NULL, not empty, not {-1}). */
static int devices_listed(const int *devices, size_t n)
{
    return devices && n > 0 && !(n == 1 && devices[0] == -1);
}

/* How many contexts to open: the listed devices; n host backends for HOST (the stand-in for
 * n GPUs) when n > 0 and none are listed; else every GPU that opens, 0, 1, ... until one is
 * refused as not existing, or one context when the backend turned out to be HOST. */
static sp_status open_contexts(sp_backend_kind kind, const int *devices, size_t n,
                               sp_context **ctx, size_t *opened)
{
    int listed = devices_listed(devices, n);
    int probe = !listed && !(kind == SP_BACKEND_HOST && !devices && n > 0);
    size_t want = listed || !probe ? n : SP_GROUP_MAX_PROBE;
    *opened = 0;
    for (size_t k = 0; k < want; k++) {
        int device = listed ? devices[k] : (int)k;
        sp_status st = sp_context_create(kind, device, &ctx[k]);
        if (st == SP_ERR_INVALID_ARGUMENT && probe && k > 0)
            return SP_OK; /* past the last GPU */
        if (st != SP_OK) {
            char what[64];
            snprintf(what, sizeof what, "device %d: opening it", device);
            return create_fail(st, what, sp_last_open_error());
        }
        *opened = k + 1;
        if (probe && sp_context_backend(ctx[k]) == SP_BACKEND_HOST)
            return SP_OK; /* one host backend stands for "every device" */
    }
    return SP_OK;
}

sp_status sp_group_create(sp_backend_kind kind, const int *devices, size_t n,
                          const sp_pipeline_config *config, sp_group **out)
{
    if (!out)
        return SP_ERR_INVALID_ARGUMENT;
    *out = NULL;
    create_error[0] = '\0';
    if (!config)
        return create_fail(SP_ERR_INVALID_ARGUMENT, "sp_group_create: config is NULL", "");
    int listed = devices_listed(devices, n);
    size_t slots = listed || (kind == SP_BACKEND_HOST && !devices && n > 0) ? n
                                                                           : SP_GROUP_MAX_PROBE;
    sp_context **ctx = calloc(slots, sizeof *ctx);
    if (!ctx)
        return create_fail(SP_ERR_OUT_OF_MEMORY, "sp_group_create: no memory", "");
    size_t opened = 0;
    sp_status st = open_contexts(kind, devices, n, ctx, &opened);
    if (st == SP_OK)
        st = sp_group_create_contexts(ctx, opened, config, out);
    for (size_t k = 0; k < opened; k++) {
        if (st == SP_OK) {
            (*out)->members[k].owns_ctx = 1;
            (*out)->members[k].stats.device = listed ? devices[k] : (int)k;
        } else {
            sp_context_destroy(ctx[k]);
        }
    }
    free(ctx);
    return st;
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

const char *sp_group_last_error(const sp_group *g) { return g ? g->error : ""; }

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
