/* What timing an operation costs the queue it runs on (issue 4: a report may move the
 * makespan by at most 1%). A chain of N operations on one stream, like one engine of a
 * pipeline, is timed with nothing between them and with each way of stamping their ends:
 *   none      nothing between operations
 *   order     an event without timing after each (what an untimed run records)
 *   timing    a timing event after each
 *   both      a timing event and an event without timing after each (a timed run today)
 *   side      an event without timing after each; a side stream waits for it and records a
 *             timing event there, so the operation's own stream records no timestamp
 * for kernels of about 240 us (the seed workload's sinmix per 8 MiB chunk) and for 8 MiB
 * host-to-device copies. Each variant runs `repeat` times, interleaved; medians are printed,
 * and for `side` how late its stamp is against a timing event recorded on the stream itself.
 * Build: nvcc -O2 -arch=sm_90 -o event_cost bench/event_cost.cu. Not part of the library. */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                         \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                   \
                    cudaGetErrorString(e_));                                                \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

enum { N = 64, REPEAT = 9, VARIANTS = 5, ELEMS = 2 << 20 };
static const char *const names[VARIANTS] = {"none", "order", "timing", "both", "side"};

/* About 240 us on an H200 for 2M floats at iters = 100 (a sinmix-like mix). */
__global__ void mix(const float *in, float *out, int n, int iters)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float x = in[i];
        for (int k = 0; k < iters; k++)
            x = __sinf(x) * 0.5f + x * 0.25f + 0.125f;
        out[i] = x;
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct rig {
    cudaStream_t s, side;
    cudaEvent_t order[N], timing[N];
    float *din, *dout, *host;
    int copies; /* 1: the operations are 8 MiB host-to-device copies */
    int iters;
} rig;

static void enqueue_op(const rig *r)
{
    if (r->copies)
        CHECK(cudaMemcpyAsync(r->din, r->host, ELEMS * sizeof(float), cudaMemcpyHostToDevice,
                              r->s));
    else
        mix<<<132 * 8, 256, 0, r->s>>>(r->din, r->dout, ELEMS, r->iters);
}

/* One chain of N operations with variant v; seconds from the first enqueue to the end. */
static double run_chain(const rig *r, int v)
{
    CHECK(cudaDeviceSynchronize());
    double t0 = now_s();
    for (int i = 0; i < N; i++) {
        enqueue_op(r);
        if (v == 2 || v == 3)
            CHECK(cudaEventRecord(r->timing[i], r->s));
        if (v == 1 || v == 3 || v == 4)
            CHECK(cudaEventRecord(r->order[i], r->s));
        if (v == 4) {
            CHECK(cudaStreamWaitEvent(r->side, r->order[i], 0));
            CHECK(cudaEventRecord(r->timing[i], r->side));
        }
    }
    CHECK(cudaStreamSynchronize(r->s));
    CHECK(cudaStreamSynchronize(r->side));
    return now_s() - t0;
}

/* Median lag of the side stream's stamp behind a timing event on the stream itself. */
static double side_lag_us(const rig *r, cudaEvent_t *direct)
{
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < N; i++) {
        enqueue_op(r);
        CHECK(cudaEventRecord(direct[i], r->s));
        CHECK(cudaEventRecord(r->order[i], r->s));
        CHECK(cudaStreamWaitEvent(r->side, r->order[i], 0));
        CHECK(cudaEventRecord(r->timing[i], r->side));
    }
    CHECK(cudaDeviceSynchronize());
    float lag[N];
    for (int i = 0; i < N; i++) {
        CHECK(cudaEventElapsedTime(&lag[i], direct[i], r->timing[i]));
        lag[i] *= 1000.0f;
    }
    for (int i = 1; i < N; i++) /* insertion sort: N is small */
        for (int j = i; j > 0 && lag[j] < lag[j - 1]; j--) {
            float t = lag[j];
            lag[j] = lag[j - 1];
            lag[j - 1] = t;
        }
    return lag[N / 2];
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void measure(rig *r, const char *what)
{
    double t[VARIANTS][REPEAT];
    for (int k = 0; k < REPEAT; k++)
        for (int v = 0; v < VARIANTS; v++)
            t[v][k] = run_chain(r, v);
    cudaEvent_t direct[N];
    for (int i = 0; i < N; i++)
        CHECK(cudaEventCreate(&direct[i]));
    double lag = side_lag_us(r, direct);
    for (int i = 0; i < N; i++)
        CHECK(cudaEventDestroy(direct[i]));
    qsort(t[0], REPEAT, sizeof t[0][0], by_value);
    double base = t[0][REPEAT / 2];
    printf("%s: %d operations, median of %d\n", what, N, REPEAT);
    for (int v = 0; v < VARIANTS; v++) {
        if (v > 0)
            qsort(t[v], REPEAT, sizeof t[v][0], by_value);
        double med = t[v][REPEAT / 2];
        printf("  %-7s %8.3f ms  %+6.2f%%  %+7.2f us per operation\n", names[v], med * 1e3,
               100.0 * (med / base - 1.0), (med - base) / N * 1e6);
    }
    printf("  side stamp lag behind the operation's end: median %.2f us\n", lag);
}

int main(void)
{
    rig r;
    memset(&r, 0, sizeof r);
    CHECK(cudaStreamCreateWithFlags(&r.s, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&r.side, cudaStreamNonBlocking));
    for (int i = 0; i < N; i++) {
        CHECK(cudaEventCreateWithFlags(&r.order[i], cudaEventDisableTiming));
        CHECK(cudaEventCreate(&r.timing[i]));
    }
    CHECK(cudaMalloc(&r.din, ELEMS * sizeof(float)));
    CHECK(cudaMalloc(&r.dout, ELEMS * sizeof(float)));
    CHECK(cudaMallocHost(&r.host, ELEMS * sizeof(float)));
    memset(r.host, 0, ELEMS * sizeof(float));
    CHECK(cudaMemset(r.din, 0, ELEMS * sizeof(float)));
    r.iters = 100;
    measure(&r, "kernels (2M floats, 100 iterations)");
    r.copies = 1;
    measure(&r, "8 MiB host-to-device copies, pinned");
    return 0;
}
