/* The slots as a whole: reset when a run or a stream starts, and found busy or oldest (the
 * per-chunk bookkeeping and the dependency rules are ring.h's inline functions). */
#include <string.h>

#include "core/ring.h"

void sp_ring_reset(sp_pipeline *p) { memset(p->slots, 0, sizeof p->slots); }

unsigned sp_ring_busy(const sp_pipeline *p)
{
    unsigned n = 0;
    for (unsigned b = 0; b < p->depth; b++)
        n += p->slots[b].busy != 0;
    return n;
}

int sp_ring_oldest(const sp_pipeline *p)
{
    int best = -1;
    for (unsigned b = 0; b < p->depth; b++)
        if (p->slots[b].busy && (best < 0 || p->slots[b].chunk < p->slots[best].chunk))
            best = (int)b;
    return best;
}
