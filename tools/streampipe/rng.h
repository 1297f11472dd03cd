/* A small seeded generator (xorshift64*) for input data and sample indices. Not for crypto. */
#ifndef SP_CLI_RNG_H
#define SP_CLI_RNG_H

typedef struct rng {
    unsigned long long state; /* never 0 */
} rng;

/* Streams for different `stream` values of one seed are unrelated: blocks of the input are
 * filled from their own streams so the data does not depend on the thread count. */
rng rng_seeded(unsigned long long seed, unsigned long long stream);
unsigned long long rng_next(rng *r);
/* Uniform in [0, 1) with 24 random bits: exact in a float. */
float rng_unit_float(rng *r);
/* Uniform in [0, n), n > 0. */
unsigned long long rng_below(rng *r, unsigned long long n);

#endif /* SP_CLI_RNG_H */
