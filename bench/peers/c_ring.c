/* The hand-written C ring streampipe is compared with (issue 17): what a careful CUDA C
 * programmer writes without the library. K slots of pinned staging and device buffers, three
 * non-blocking streams (h2d, compute, d2h), events for every RAW and WAR, and pageable data
 * staged by OpenMP threads memcpy-ing each chunk into (and out of) the pinned buffers.
 * With --memory pinned the user's arrays are cudaHostAlloc'd and copied directly.
 *
 * Usage: c_ring WORKLOAD MEMORY [REPEAT [CHUNK_MIB [DEPTH [THREADS]]]]
 *   WORKLOAD seed | transfer | compute (as `streampipe bench`), MEMORY pageable | pinned;
 *   defaults 5 repeats, 16 MiB chunks, K = 3, omp_get_max_threads() threads.
 * Prints one JSON line. Every timed run's output is poisoned with NaN first and compared,
 * element by element and bit for bit, with the same kernel run over the whole input at once;
 * 2^16 sampled elements are checked against the C reference within the bench's tolerance.
 * Exit 1 on any mismatch or CUDA error. */
#include <cuda_runtime.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

cudaError_t peer_sinmix(const float *in, float *out, size_t n, unsigned iters, cudaStream_t s);

#define CK(call)                                                                           \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "c_ring: %s: %s\n", #call, cudaGetErrorString(e_));            \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)
#define MAX_K 16

typedef struct ring {
    size_t n, chunk; /* records (floats) */
    unsigned iters, k;
    int pinned;
    float *pin_in[MAX_K], *pin_out[MAX_K], *dev_in[MAX_K], *dev_out[MAX_K];
    cudaStream_t h2d, comp, d2h;
    cudaEvent_t h2d_done[MAX_K], comp_done[MAX_K], d2h_done[MAX_K];
} ring;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void par_memcpy(void *dst, const void *src, size_t bytes)
{
#pragma omp parallel
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        size_t part = (bytes / nt + 4095) / 4096 * 4096, lo = t * part;
        if (lo < bytes)
            memcpy((char *)dst + lo, (const char *)src + lo, lo + part > bytes ? bytes - lo : part);
    }
}

static size_t chunk_len(const ring *r, size_t i)
{
    size_t lo = i * r->chunk;
    return r->n - lo < r->chunk ? r->n - lo : r->chunk;
}

/* Chunk i-K leaves slot b: wait for its d2h, then (pageable) copy its output out. */
static void retire(ring *r, size_t j, float *out)
{
    size_t b = j % r->k;
    CK(cudaEventSynchronize(r->d2h_done[b]));
    if (!r->pinned)
        par_memcpy(out + j * r->chunk, r->pin_out[b], chunk_len(r, j) * 4);
}

static void run_ring(ring *r, const float *in, float *out)
{
    size_t chunks = (r->n + r->chunk - 1) / r->chunk;
    for (size_t i = 0; i < chunks; i++) {
        size_t b = i % r->k, len = chunk_len(r, i);
        if (i >= r->k)
            retire(r, i - r->k, out); /* its h2d and compute are done too */
        const float *src = in + i * r->chunk;
        float *dst = out + i * r->chunk;
        if (!r->pinned) {
            par_memcpy(r->pin_in[b], src, len * 4);
            src = r->pin_in[b];
            dst = r->pin_out[b];
        }
        CK(cudaMemcpyAsync(r->dev_in[b], src, len * 4, cudaMemcpyHostToDevice, r->h2d));
        CK(cudaEventRecord(r->h2d_done[b], r->h2d));
        CK(cudaStreamWaitEvent(r->comp, r->h2d_done[b], 0));
        CK(peer_sinmix(r->dev_in[b], r->dev_out[b], len, r->iters, r->comp));
        CK(cudaEventRecord(r->comp_done[b], r->comp));
        CK(cudaStreamWaitEvent(r->d2h, r->comp_done[b], 0));
        CK(cudaMemcpyAsync(dst, r->dev_out[b], len * 4, cudaMemcpyDeviceToHost, r->d2h));
        CK(cudaEventRecord(r->d2h_done[b], r->d2h));
    }
    for (size_t j = chunks > r->k ? chunks - r->k : 0; j < chunks; j++)
        retire(r, j, out);
}

static void ring_open(ring *r)
{
    CK(cudaStreamCreateWithFlags(&r->h2d, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&r->comp, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&r->d2h, cudaStreamNonBlocking));
    for (unsigned b = 0; b < r->k; b++) {
        if (!r->pinned) {
            CK(cudaHostAlloc((void **)&r->pin_in[b], r->chunk * 4, cudaHostAllocDefault));
            CK(cudaHostAlloc((void **)&r->pin_out[b], r->chunk * 4, cudaHostAllocDefault));
        }
        CK(cudaMalloc((void **)&r->dev_in[b], r->chunk * 4));
        CK(cudaMalloc((void **)&r->dev_out[b], r->chunk * 4));
        CK(cudaEventCreateWithFlags(&r->h2d_done[b], cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&r->comp_done[b], cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&r->d2h_done[b], cudaEventDisableTiming));
    }
}

static float reference_one(float x, unsigned iters) /* the C reference, step by step */
{
    float half = x * 0.5f, square = x * x, tenth = square * 0.1f, v = half + tenth;
    for (unsigned k = 0; k < iters; k++) {
        float phase = v * 0.01f;
        v += sinf(phase);
    }
    return v;
}

/* Elements of `got` that differ from `want` bit for bit, plus sampled tolerance failures. */
static size_t count_bad(const float *in, const float *got, const float *want, size_t n,
                        unsigned iters)
{
    size_t bad = 0;
#pragma omp parallel for reduction(+ : bad)
    for (size_t i = 0; i < n; i++)
        bad += memcmp(&got[i], &want[i], 4) != 0;
    for (size_t k = 0; k < (1u << 16); k++) {
        size_t i = (size_t)((k * 2654435761ull) % n);
        float ref = reference_one(in[i], iters);
        double mag = fabs((double)ref) > 1.0 ? fabs((double)ref) : 1.0;
        bad += !(fabs((double)got[i] - ref) <= 1e-5 * (1.0 + iters) * mag);
    }
    return bad;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: c_ring seed|transfer|compute pageable|pinned [repeat [chunk_mib [depth [threads]]]]\n");
        return 64;
    }
    ring r = {0};
    const char *workload = argv[1];
    r.n = strcmp(workload, "transfer") == 0 ? (size_t)1 << 28 : (size_t)1 << 27;
    r.iters = strcmp(workload, "seed") == 0 ? 100 : strcmp(workload, "compute") == 0 ? 1000 : 0;
    r.pinned = strcmp(argv[2], "pinned") == 0;
    int repeat = argc > 3 ? atoi(argv[3]) : 5;
    r.chunk = (size_t)(argc > 4 ? atoi(argv[4]) : 16) << 18; /* MiB of floats */
    r.k = argc > 5 ? (unsigned)atoi(argv[5]) : 3;
    if (argc > 6)
        omp_set_num_threads(atoi(argv[6]));
    if (repeat < 1 || repeat > 64 || r.k < 1 || r.k > MAX_K || r.chunk == 0)
        return 64;
    float *in, *out, *want;
    if (r.pinned) {
        CK(cudaHostAlloc((void **)&in, r.n * 4, cudaHostAllocDefault));
        CK(cudaHostAlloc((void **)&out, r.n * 4, cudaHostAllocDefault));
    } else if (!(in = malloc(r.n * 4)) || !(out = malloc(r.n * 4))) {
        return 1;
    }
    if (!(want = malloc(r.n * 4)))
        return 1;
    unsigned long long s = 0x9E3779B97F4A7C15ull ^ (unsigned long long)time(NULL);
    for (size_t i = 0; i < r.n; i++) { /* fresh uniform data in [-4, 4) */
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        in[i] = (float)((double)(s >> 40) / (double)(1ull << 24) * 8.0 - 4.0);
    }
    ring_open(&r);
    float *d_all_in, *d_all_out; /* the reference: one launch over the whole input */
    CK(cudaMalloc((void **)&d_all_in, r.n * 4));
    CK(cudaMalloc((void **)&d_all_out, r.n * 4));
    CK(cudaMemcpy(d_all_in, in, r.n * 4, cudaMemcpyHostToDevice));
    CK(peer_sinmix(d_all_in, d_all_out, r.n, r.iters, r.comp));
    CK(cudaStreamSynchronize(r.comp)); /* cudaMemcpy does not wait for a non-blocking stream */
    CK(cudaMemcpy(want, d_all_out, r.n * 4, cudaMemcpyDeviceToHost));
    CK(cudaFree(d_all_in));
    CK(cudaFree(d_all_out));
    double secs[65];
    size_t bad = 0;
    for (int rep = -1; rep < repeat; rep++) { /* rep -1 warms up */
        memset(out, 0xFF, r.n * 4);            /* NaN poison */
        double t = now_s();
        run_ring(&r, in, out);
        double dt = now_s() - t;
        bad += count_bad(in, out, want, r.n, r.iters);
        if (rep >= 0)
            secs[rep] = dt;
    }
    qsort(secs, (size_t)repeat, sizeof secs[0], by_value);
    double med = secs[repeat / 2];
    printf("{\"peer\":\"c_ring\",\"workload\":\"%s\",\"memory\":\"%s\",\"records\":%zu,"
           "\"chunk_records\":%zu,\"depth\":%u,\"threads\":%d,\"repeat\":%d,\"median_s\":%.6f,"
           "\"gbps\":%.2f,\"bad_elements\":%zu,\"verified\":%s}\n",
           workload, argv[2], r.n, r.chunk, r.k, omp_get_max_threads(), repeat, med,
           2.0 * (double)r.n * 4 / med / 1e9, bad, bad ? "false" : "true");
    return bad ? 1 : 0;
}
