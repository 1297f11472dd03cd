/* The group's insides, shared by its files:
 *   group.c        creation over opened or given contexts, destruction, accessors, errors
 *   group_run.c    one run: the unit counter, a thread per device, failure and drain
 *   group_report.c a device's reports summed over its units, and the merged report */
#ifndef SP_GROUP_H
#define SP_GROUP_H

#include <pthread.h>
#include <stdatomic.h>

#include "streampipe_group.h"

#define SP_GROUP_ERROR_TEXT 512

/* One device of the group. */
typedef struct sp_group_member {
    sp_context *ctx;
    int owns_ctx;             /* the group opened it and destroys it */
    sp_pipeline *pipeline;
    sp_group_device_stats stats;
    sp_report report;         /* its units' figures summed (group_report.c) */
    char error[SP_GROUP_ERROR_TEXT]; /* its failure in the last run */
} sp_group_member;

struct sp_group {
    size_t n;                 /* 0 when creation failed (create_status says how) */
    sp_group_member *members;
    sp_status create_status;
    size_t unit_records;      /* 0: choose */
    int failed_device;        /* -1: none */
    atomic_int running;       /* a run holds the group */
    char error[SP_GROUP_ERROR_TEXT];
};

/* Records the group's failure text ("<fmt>") and returns status. */
sp_status sp_group_fail(sp_group *g, sp_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* group_report.c: a member's figures restart; a unit's report is added to them; the merged
 * member's derived figures are made once its units are done; the merged report of the
 * group is made from the members' and the run's wall time. */
void sp_group_report_reset(sp_group_member *m);
void sp_group_report_add(sp_report *sum, const sp_report *unit);
void sp_group_report_finish_member(sp_group_member *m);
void sp_group_report_merge(const sp_group *g, double wall_s, sp_report *out);

#endif
