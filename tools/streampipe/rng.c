#include "rng.h"

/* splitmix64: spreads nearby seeds (1, 2, 3...) into unrelated starting states. */
static unsigned long long splitmix64(unsigned long long x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

rng rng_seeded(unsigned long long seed, unsigned long long stream)
{
    rng r = {splitmix64(seed ^ splitmix64(stream))};
    if (r.state == 0)
        r.state = 1; /* xorshift stays at 0 forever */
    return r;
}

unsigned long long rng_next(rng *r)
{
    unsigned long long x = r->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

float rng_unit_float(rng *r)
{
    return (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

unsigned long long rng_below(rng *r, unsigned long long n)
{
    /* The modulo bias is below n / 2^64: irrelevant for picking sample indices. */
    return rng_next(r) % n;
}
