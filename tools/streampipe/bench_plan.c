/* Preset jobs and the defaults that depend on the backend. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "clock.h"
#include "par_for.h"

typedef struct bench_workload {
    const char *name;
    unsigned long long records;
    unsigned iters;
    unsigned long long chunk_records; /* 0 = library's choice */
    const char *about;
} bench_workload;

static const bench_workload workloads[] = {
    {"seed", 1ULL << 27, 100, 0, "copies and a moderate kernel (default on cuda)"},
    {"transfer", 1ULL << 28, 0, 0, "1 GiB each way, next to no compute"},
    {"compute", 1ULL << 27, 1000, 0, "a heavy kernel: compute-bound"},
    {"tiny", 1ULL << 24, 0, 16384, "64 KiB chunks: per-copy overhead shows"},
    {"small", 1ULL << 22, 10, 0, "seconds on two CPU cores (default on host)"},
};

#define N_WORKLOADS (sizeof workloads / sizeof workloads[0])
#define DEFAULT_CUDA_WORKLOAD 0
#define DEFAULT_HOST_WORKLOAD 4

/* The textbook serial loop copies 16M records (64 MiB of floats) per synchronous step. */
#define CUDA_SERIAL_CHUNK_RECORDS ((size_t)16 << 20)

int bench_find_workload(const char *name)
{
    for (size_t i = 0; i < N_WORKLOADS; i++)
        if (strcmp(workloads[i].name, name) == 0)
            return (int)i;
    return -1;
}

void bench_print_workloads(FILE *out)
{
    fputs("workloads (float32 sinmix):\n", out);
    for (size_t i = 0; i < N_WORKLOADS; i++) {
        const bench_workload *w = &workloads[i];
        char chunk[32] = "chosen";
        if (w->chunk_records != 0)
            snprintf(chunk, sizeof chunk, "%llu", w->chunk_records);
        fprintf(out, "  %-9s records %-10llu iters %-5u chunk %-7s %s\n", w->name, w->records,
                w->iters, chunk, w->about);
    }
}

/* Appends a sentence to the plan's notes, "; " between sentences. */
static void add_note(bench_plan *plan, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void add_note(bench_plan *plan, const char *fmt, ...)
{
    size_t used = strlen(plan->notes);
    if (used > 0 && used + 2 < sizeof plan->notes) {
        memcpy(plan->notes + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(plan->notes + used, sizeof plan->notes - used, fmt, ap);
    va_end(ap);
}

/* The library allocates a pipeline's whole chunk, for every slot, when it is created: it
 * cannot know that no run will have that many records. A chunk above the records runs as one
 * chunk of the records either way, so it is cut to them rather than allocated (2^40 records
 * of floats are 4 TiB), and the notes say so. */
static void clamp_chunk(bench_plan *plan, const char *what, size_t *chunk_records)
{
    if (*chunk_records <= plan->records)
        return;
    add_note(plan, "%s %zu records is more than the %zu records: cut to %zu (one chunk)", what,
             *chunk_records, plan->records, plan->records);
    *chunk_records = plan->records;
}

static void clamp_chunks(bench_plan *plan)
{
    clamp_chunk(plan, "chunk", &plan->chunk_records);
    clamp_chunk(plan, "serial chunk", &plan->serial_chunk_records);
    size_t above = bench_sweep_clamp_chunks(&plan->sweep, plan->records);
    if (above > 0)
        add_note(plan, "%zu swept chunk value%s above the %zu records ran as %zu (one chunk)",
                 above, above == 1 ? "" : "s", plan->records, plan->records);
}

void bench_plan_resolve(bench_plan *plan, sp_backend_kind backend)
{
    int on_cuda = backend == SP_BACKEND_CUDA;
    int index = plan->workload_index;
    if (index < 0)
        index = on_cuda ? DEFAULT_CUDA_WORKLOAD : DEFAULT_HOST_WORKLOAD;
    const bench_workload *w = &workloads[index];

    plan->workload = w->name;
    plan->workload_changed = plan->records != BENCH_UNSET_SIZE ||
                             plan->iters != BENCH_UNSET_UINT ||
                             plan->chunk_records != BENCH_UNSET_SIZE;
    plan->backend = backend;
    if (plan->records == BENCH_UNSET_SIZE)
        plan->records = (size_t)w->records;
    if (plan->iters == BENCH_UNSET_UINT)
        plan->iters = w->iters;
    if (plan->chunk_records == BENCH_UNSET_SIZE)
        plan->chunk_records = (size_t)w->chunk_records;
    if (plan->serial_chunk_records == BENCH_UNSET_SIZE)
        plan->serial_chunk_records = on_cuda ? CUDA_SERIAL_CHUNK_RECORDS : plan->chunk_records;
    if (plan->repeat == BENCH_UNSET_UINT)
        plan->repeat = on_cuda ? 5 : 3;
    if (plan->seed == BENCH_UNSET_SEED)
        plan->seed = cli_clock_seed();
    plan->host_workers = par_default_workers();
    if (plan->sweep.n_values == 0)
        bench_sweep_default_values(backend, &plan->sweep);
    clamp_chunks(plan);
}

const char *bench_memory_name(bench_memory memory)
{
    return memory == BENCH_MEMORY_PINNED ? "pinned" : "pageable";
}
