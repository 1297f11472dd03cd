/* The live-handle counts behind live_objects.h. */
#include "core/live_objects.h"

#include <stdatomic.h>

static atomic_long live[SP_LIVE_KINDS];

void sp_live_object_add(sp_live_kind kind, int delta)
{
    if ((unsigned)kind < SP_LIVE_KINDS)
        atomic_fetch_add(&live[kind], delta);
}

long sp_live_objects(void)
{
    long total = 0;
    for (int k = 0; k < SP_LIVE_KINDS; k++)
        total += atomic_load(&live[k]);
    return total;
}

long sp_live_objects_of(sp_live_kind kind)
{
    return (unsigned)kind < SP_LIVE_KINDS ? atomic_load(&live[kind]) : 0;
}

const char *sp_live_kind_name(sp_live_kind kind)
{
    static const char *const names[SP_LIVE_KINDS] = {
        "context", "pipeline", "stream", "group",
    };
    return (unsigned)kind < SP_LIVE_KINDS ? names[kind] : "object";
}
