/* The flight recorder's ring (flight.h). */
#include <stdlib.h>
#include <string.h>

#include "core/flight.h"
#include "streampipe.h"

sp_flight *sp_flight_create(double seconds, int *failed)
{
    *failed = 0;
    if (!(seconds > 0.0))
        return NULL;
    sp_flight *f = calloc(1, sizeof *f);
    sp_flight_span *spans = f ? malloc(SP_FLIGHT_CAPACITY * sizeof *spans) : NULL;
    if (!spans || pthread_mutex_init(&f->lock, NULL) != 0) {
        free(spans);
        free(f);
        *failed = 1;
        return NULL;
    }
    f->seconds = seconds;
    f->spans = spans;
    return f;
}

void sp_flight_destroy(sp_flight *f)
{
    if (!f)
        return;
    pthread_mutex_destroy(&f->lock);
    free(f->spans);
    free(f);
}

size_t sp_flight_bytes(const sp_flight *f)
{
    return f ? sizeof *f + SP_FLIGHT_CAPACITY * sizeof(sp_flight_span) : 0;
}

void sp_flight_push(sp_flight *f, const sp_flight_span *spans, size_t n)
{
    pthread_mutex_lock(&f->lock);
    for (size_t k = 0; k < n; k++) {
        if (f->count == SP_FLIGHT_CAPACITY) {
            const sp_flight_span *old = &f->spans[f->next];
            if (old->end >= spans[k].end - f->seconds)
                f->dropped++; /* still young: the capacity, not the seconds, let it go */
        } else {
            f->count++;
        }
        f->spans[f->next] = spans[k];
        f->next = (f->next + 1) % SP_FLIGHT_CAPACITY;
    }
    pthread_mutex_unlock(&f->lock);
}

int sp_flight_copy_recent(sp_flight *f, sp_flight_span **out, size_t *n, uint64_t *dropped)
{
    *out = NULL;
    *n = 0;
    sp_flight_span *copy = malloc((SP_FLIGHT_CAPACITY + 1) * sizeof *copy);
    if (!copy)
        return SP_ERR_OUT_OF_MEMORY;
    pthread_mutex_lock(&f->lock);
    size_t first = (f->next + SP_FLIGHT_CAPACITY - f->count) % SP_FLIGHT_CAPACITY;
    double newest = -1e300;
    for (size_t k = 0; k < f->count; k++) {
        const sp_flight_span *s = &f->spans[(first + k) % SP_FLIGHT_CAPACITY];
        if (s->end > newest)
            newest = s->end;
    }
    size_t m = 0;
    for (size_t k = 0; k < f->count; k++) {
        const sp_flight_span *s = &f->spans[(first + k) % SP_FLIGHT_CAPACITY];
        if (s->end >= newest - f->seconds)
            copy[m++] = *s;
    }
    *dropped = f->dropped;
    pthread_mutex_unlock(&f->lock);
    *out = copy;
    *n = m;
    return SP_OK;
}
