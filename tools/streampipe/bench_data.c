/* The job's memory and its random data: the input, and the indices a sampled check looks at
 * (a small seeded generator, xorshift64*; not for crypto). */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "par_for.h"

/* Input is generated in blocks with a stream each, so it is the same at any thread count. */
#define FILL_BLOCK_RECORDS ((size_t)1 << 16)
/* Sample indices come from a stream of the seed that input blocks never use. */
#define SAMPLE_STREAM (~0ULL)

typedef struct rng {
    unsigned long long state; /* never 0 */
} rng;

/* splitmix64: spreads nearby seeds (1, 2, 3...) into unrelated starting states. */
static unsigned long long splitmix64(unsigned long long x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* Streams for different `stream` values of one seed are unrelated: blocks of the input are
 * filled from their own streams so the data does not depend on the thread count. */
static rng rng_seeded(unsigned long long seed, unsigned long long stream)
{
    rng r = {splitmix64(seed ^ splitmix64(stream))};
    if (r.state == 0)
        r.state = 1; /* xorshift stays at 0 forever */
    return r;
}

static unsigned long long rng_next(rng *r)
{
    unsigned long long x = r->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [0, 1) with 24 random bits: exact in a float. */
static float rng_unit_float(rng *r)
{
    return (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

static unsigned long long rng_below(rng *r, unsigned long long n)
{
    /* The modulo bias is below n / 2^64: irrelevant for picking sample indices. */
    return rng_next(r) % n;
}

static sp_status alloc_floats(sp_context *ctx, bench_memory memory, size_t n, float **out)
{
    size_t bytes = 0;
    *out = NULL;
    if (__builtin_mul_overflow(n, sizeof(float), &bytes))
        return SP_ERR_INVALID_ARGUMENT;
    if (memory == BENCH_MEMORY_PINNED) {
        void *pinned = NULL;
        sp_status status = sp_host_alloc(ctx, bytes, &pinned);
        *out = pinned;
        return status;
    }
    *out = malloc(bytes);
    return *out != NULL ? SP_OK : SP_ERR_OUT_OF_MEMORY;
}

static void free_floats(sp_context *ctx, bench_memory memory, float *ptr)
{
    if (memory == BENCH_MEMORY_PINNED)
        sp_host_free(ctx, ptr);
    else
        free(ptr);
}

static int alloc_or_report(bench_buffers *b, bench_memory memory, float **out, const char *what)
{
    sp_status status = alloc_floats(b->ctx, memory, b->records, out);
    if (status == SP_OK)
        return CLI_EXIT_OK;
    return cli_report_failure(what, status, sp_context_last_error(b->ctx));
}

/* --in/--out device: the device end beside its host copy. */
static int alloc_device(bench_buffers *b, int wanted, float **out, const char *what)
{
    void *ptr = NULL;
    *out = NULL;
    if (!wanted)
        return CLI_EXIT_OK;
    sp_status status = sp_device_alloc(b->ctx, b->records * sizeof(float), &ptr);
    *out = ptr;
    return status == SP_OK ? CLI_EXIT_OK
                           : cli_report_failure(what, status, sp_context_last_error(b->ctx));
}

int bench_buffers_alloc(sp_context *ctx, const bench_plan *plan, bench_buffers *b)
{
    memset(b, 0, sizeof *b);
    b->ctx = ctx;
    b->records = plan->records;
    b->memory = plan->memory;
    int rc = alloc_or_report(b, b->memory, &b->in, "allocating the input");
    if (rc == CLI_EXIT_OK)
        rc = alloc_or_report(b, b->memory, &b->out, "allocating the output");
    if (rc == CLI_EXIT_OK)
        rc = alloc_device(b, plan->in_device, &b->device_in, "allocating the device input");
    if (rc == CLI_EXIT_OK)
        rc = alloc_device(b, plan->out_device, &b->device_out, "allocating the device output");
    /* Pinned user memory is what the ceiling check needs anyway, and rows of lists or a
     * group run no ceiling: either way the job's own buffers stand in. */
    int own_ceiling = plan->memory == BENCH_MEMORY_PAGEABLE && !plan->rows && !plan->group;
    if (rc != CLI_EXIT_OK || !own_ceiling) {
        b->ceiling_in = b->in;
        b->ceiling_out = b->out;
        return rc;
    }
    rc = alloc_or_report(b, BENCH_MEMORY_PINNED, &b->ceiling_in, "allocating pinned memory");
    if (rc == CLI_EXIT_OK)
        rc = alloc_or_report(b, BENCH_MEMORY_PINNED, &b->ceiling_out, "allocating pinned memory");
    return rc;
}

void bench_buffers_free(bench_buffers *b)
{
    if (b->ceiling_in != b->in)
        free_floats(b->ctx, BENCH_MEMORY_PINNED, b->ceiling_in);
    if (b->ceiling_out != b->out)
        free_floats(b->ctx, BENCH_MEMORY_PINNED, b->ceiling_out);
    free_floats(b->ctx, b->memory, b->in);
    free_floats(b->ctx, b->memory, b->out);
    sp_device_free(b->ctx, b->device_in);
    sp_device_free(b->ctx, b->device_out);
    memset(b, 0, sizeof *b);
}

typedef struct fill_job {
    float *in;
    size_t n;
    unsigned long long seed;
} fill_job;

static void fill_blocks(size_t first_block, size_t end_block, unsigned worker, void *arg)
{
    const fill_job *job = arg;
    (void)worker;
    for (size_t block = first_block; block < end_block; block++) {
        rng r = rng_seeded(job->seed, block);
        size_t begin = block * FILL_BLOCK_RECORDS;
        size_t end = begin + FILL_BLOCK_RECORDS < job->n ? begin + FILL_BLOCK_RECORDS : job->n;
        for (size_t i = begin; i < end; i++)
            job->in[i] = rng_unit_float(&r) * 4.0f - 2.0f;
    }
}

void bench_fill_input(float *in, size_t n, unsigned long long seed, unsigned workers)
{
    fill_job job = {in, n, seed};
    size_t blocks = (n + FILL_BLOCK_RECORDS - 1) / FILL_BLOCK_RECORDS;
    par_for(blocks, workers, fill_blocks, &job);
}

void bench_choose_samples(unsigned long long seed, size_t records, size_t *index, size_t n)
{
    rng r = rng_seeded(seed, SAMPLE_STREAM);
    for (size_t k = 0; k < n; k++)
        index[k] = n == records ? k : (size_t)rng_below(&r, records);
}
