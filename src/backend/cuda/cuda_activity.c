/* Activity timing with CUPTI (the CUDA toolkit's libcupti): the start and end of every
 * kernel, copy and memset the core marks, as the GPU recorded them, with no timing events in
 * the queues. Each timed run enables the activity kinds at activity_start and disables them
 * at activity_collect, so untimed runs pay nothing.
 *
 * The core marks what it enqueues for operation `id` by pushing `id` as CUPTI's external
 * correlation id around the enqueue (push/pop are per thread); CUPTI then emits, besides each
 * kernel's or copy's record (with its correlation id), a record pairing that correlation id
 * with ours. Records arrive in buffers CUPTI hands back on its own thread; they are parsed
 * into two lists under a lock and joined at collect time.
 *
 * CUPTI's activity state is the process's: one run at a time is timed this way (a second
 * one's activity_start says SP_ERR_UNSUPPORTED and the core times it with events).
 *
 * libcupti is opened with dlopen at the first timed run that asks for it, not linked: a
 * program using the library needs it neither to link nor to start, and where it is missing
 * at run time the run is timed with events. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "backend/cuda/cuda_impl.h"

#define ACTIVITY_BUFFER_BYTES (1u << 20)
#define ACTIVITY_MAX_RECORDS (1u << 22) /* per list; beyond it records are dropped */

typedef struct activity_op {
    uint32_t correlation;
    uint64_t start, end; /* CUPTI's clock, ns */
} activity_op;

typedef struct activity_link {
    uint32_t correlation;
    uint64_t id;
} activity_link;

static struct {
    pthread_mutex_t lock;
    activity_op *ops;
    size_t n_ops, cap_ops;
    activity_link *links;
    size_t n_links, cap_links;
    size_t dropped;
} g_act = {.lock = PTHREAD_MUTEX_INITIALIZER};

static atomic_int g_busy;          /* a run is being timed */
static uint64_t g_base_ns;         /* its activity_start */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static CUptiResult g_init_result = CUPTI_SUCCESS;

/* RUNTIME and DRIVER: CUPTI emits an external correlation record only before an API record,
 * so the API records must be on although nothing else reads them; DRIVER for the kernels
 * launched through the driver API (CuPy's, cuBLASLt's), RUNTIME for cudaLaunchKernel's. */
static const CUpti_ActivityKind g_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
/* Not CUSTOM0, which the PyTorch profiler pushes too: a kernel inside a torch op would be
 * linked to its id. (Other CUPTI clients in the process still conflict: the callbacks are the
 * process's, and collect disables the kinds; README says so.) */
#define OUR_CORRELATION_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2
#define N_KINDS (sizeof g_kinds / sizeof g_kinds[0])

/* The CUPTI functions used, from the library dlopen found. */
static struct {
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                      CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*timestamp)(uint64_t *);
    CUptiResult (*push)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*pop)(CUpti_ExternalCorrelationKind, uint64_t *);
    CUptiResult (*flush)(uint32_t);
    CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*result_string)(CUptiResult, const char **);
} cupti;
static const char *g_missing; /* why CUPTI could not be used; NULL when it can */

static int grow(void **items, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 1;
    if (*cap >= ACTIVITY_MAX_RECORDS)
        return 0;
    size_t next = *cap ? 2 * *cap : 4096;
    void *grown = realloc(*items, next * size);
    if (!grown)
        return 0;
    *items = grown;
    *cap = next;
    return 1;
}

static void keep_op(uint32_t correlation, uint64_t start, uint64_t end)
{
    if (start == 0 || end < start)
        return; /* incomplete: a forced flush can hand over records not yet finished */
    if (!grow((void **)&g_act.ops, &g_act.cap_ops, g_act.n_ops, sizeof *g_act.ops)) {
        g_act.dropped++;
        return;
    }
    g_act.ops[g_act.n_ops++] = (activity_op){correlation, start, end};
}

static void keep_link(uint32_t correlation, uint64_t id)
{
    if (!grow((void **)&g_act.links, &g_act.cap_links, g_act.n_links, sizeof *g_act.links)) {
        g_act.dropped++;
        return;
    }
    g_act.links[g_act.n_links++] = (activity_link){correlation, id};
}

static void keep_record(const CUpti_Activity *rec)
{
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
        keep_op(k->correlationId, k->start, k->end);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
        keep_op(m->correlationId, m->start, m->end);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
        keep_op(m->correlationId, m->start, m->end);
        break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *x = (const CUpti_ActivityExternalCorrelation *)rec;
        if (x->externalKind == OUR_CORRELATION_KIND)
            keep_link(x->correlationId, x->externalId);
        break;
    }
    default:
        break;
    }
}

/* CUPTI's callbacks, on its own thread. A buffer that cannot be allocated drops records. */
static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, ACTIVITY_BUFFER_BYTES);
    *size = *buffer ? ACTIVITY_BUFFER_BYTES : 0;
    *max_records = 0; /* as many as fit */
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *rec = NULL;
    pthread_mutex_lock(&g_act.lock);
    while (cupti.next_record(buffer, valid, &rec) == CUPTI_SUCCESS)
        keep_record(rec);
    pthread_mutex_unlock(&g_act.lock);
    free(buffer);
}


/* The loader's names: the soname, the plain name, then where the toolkit that built the
 * library keeps it (SP_CUPTI_LIBRARY, from CMake). */
static void *open_cupti(void)
{
    static const char *const names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so",
#if defined(SP_CUPTI_LIBRARY)
                                        SP_CUPTI_LIBRARY,
#endif
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        void *lib = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);
        if (lib)
            return lib;
    }
    return NULL;
}

/* dlsym's void * to a function pointer: POSIX allows it; ISO C has no such conversion. */
#define LOAD(field, symbol) \
    (*(void **)&cupti.field = dlsym(lib, symbol)) != NULL

static void init_once(void)
{
    void *lib = open_cupti();
    if (!lib) {
        g_missing = "libcupti was not found by dlopen";
        return;
    }
    if (!(LOAD(register_callbacks, "cuptiActivityRegisterCallbacks") &&
          LOAD(enable, "cuptiActivityEnable") && LOAD(disable, "cuptiActivityDisable") &&
          LOAD(timestamp, "cuptiGetTimestamp") &&
          LOAD(push, "cuptiActivityPushExternalCorrelationId") &&
          LOAD(pop, "cuptiActivityPopExternalCorrelationId") &&
          LOAD(flush, "cuptiActivityFlushAll") &&
          LOAD(next_record, "cuptiActivityGetNextRecord") &&
          LOAD(result_string, "cuptiGetResultString"))) {
        g_missing = "libcupti lacks a function the timeline uses";
        return;
    }
    g_init_result = cupti.register_callbacks(buffer_requested, buffer_completed);
}

static sp_status cupti_fail(CUptiResult r, const char *what)
{
    const char *text = NULL;
    if (cupti.result_string(r, &text) != CUPTI_SUCCESS || !text)
        text = "unknown CUPTI error";
    sp_backend_fail("%s: %s", what, text);
    return SP_ERR_UNSUPPORTED;
}

/* Enables (on = 1) or disables every kind; on failure what was enabled is disabled again. */
static CUptiResult set_kinds(int on)
{
    CUptiResult r = CUPTI_SUCCESS;
    size_t k = 0;
    for (; k < N_KINDS && r == CUPTI_SUCCESS; k++)
        r = on ? cupti.enable(g_kinds[k]) : cupti.disable(g_kinds[k]);
    if (r != CUPTI_SUCCESS && on)
        while (k-- > 0)
            (void)cupti.disable(g_kinds[k]);
    return r;
}

static void clear_records(void)
{
    pthread_mutex_lock(&g_act.lock);
    g_act.n_ops = g_act.n_links = g_act.dropped = 0;
    pthread_mutex_unlock(&g_act.lock);
}

sp_status sp_cuda_activity_start(void *impl)
{
    (void)impl;
    pthread_once(&g_once, init_once);
    if (g_missing) {
        sp_backend_fail("%s", g_missing);
        return SP_ERR_UNSUPPORTED;
    }
    if (g_init_result != CUPTI_SUCCESS)
        return cupti_fail(g_init_result, "CUPTI activity callbacks");
    int idle = 0;
    if (!atomic_compare_exchange_strong(&g_busy, &idle, 1)) {
        sp_backend_fail("another run is being timed with CUPTI");
        return SP_ERR_UNSUPPORTED;
    }
    clear_records();
    /* the base first: the run's host spans start before this call, and enabling takes time */
    CUptiResult r = cupti.timestamp(&g_base_ns);
    if (r == CUPTI_SUCCESS)
        r = set_kinds(1);
    if (r != CUPTI_SUCCESS) {
        (void)set_kinds(0);
        atomic_store(&g_busy, 0);
        return cupti_fail(r, "enabling CUPTI activity records");
    }
    return SP_OK;
}

sp_status sp_cuda_activity_push(void *impl, uint64_t id)
{
    (void)impl;
    CUptiResult r = cupti.push(OUR_CORRELATION_KIND, id);
    return r == CUPTI_SUCCESS ? SP_OK : cupti_fail(r, "marking an operation for CUPTI");
}

void sp_cuda_activity_pop(void *impl)
{
    (void)impl;
    uint64_t id = 0;
    (void)cupti.pop(OUR_CORRELATION_KIND, &id);
}

static int by_correlation(const void *a, const void *b)
{
    uint32_t x = ((const activity_link *)a)->correlation, y = ((const activity_link *)b)->correlation;
    return (x > y) - (x < y);
}

/* Every kept operation whose correlation id has a link, handed to fn in seconds after the
 * start; then the lists are emptied. */
static sp_status deliver(sp_activity_fn fn, void *user)
{
    pthread_mutex_lock(&g_act.lock);
    qsort(g_act.links, g_act.n_links, sizeof *g_act.links, by_correlation);
    size_t dropped = g_act.dropped;
    for (size_t k = 0; k < g_act.n_ops; k++) {
        const activity_op *op = &g_act.ops[k];
        activity_link key = {op->correlation, 0};
        const activity_link *link = bsearch(&key, g_act.links, g_act.n_links,
                                            sizeof *g_act.links, by_correlation);
        if (link)
            fn(user, link->id, 1e-9 * (double)(int64_t)(op->start - g_base_ns),
               1e-9 * (double)(int64_t)(op->end - g_base_ns));
    }
    g_act.n_ops = g_act.n_links = g_act.dropped = 0;
    pthread_mutex_unlock(&g_act.lock);
    if (!dropped)
        return SP_OK;
    sp_backend_fail("%zu CUPTI records dropped (no memory, or more than %u)", dropped,
                    ACTIVITY_MAX_RECORDS);
    return SP_ERR_OUT_OF_MEMORY;
}

sp_status sp_cuda_activity_collect(void *impl, sp_activity_fn fn, void *user)
{
    (void)impl;
    CUptiResult r = cupti.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    CUptiResult off = set_kinds(0);
    sp_status st = r == CUPTI_SUCCESS ? deliver(fn, user) : cupti_fail(r, "flushing CUPTI records");
    atomic_store(&g_busy, 0);
    if (st == SP_OK && off != CUPTI_SUCCESS)
        st = cupti_fail(off, "disabling CUPTI activity records");
    return st;
}
