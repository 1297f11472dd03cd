// Which shape of the sinmix kernel is fastest on this GPU, and how close each stays to the C
// reference (issue 17). Standalone: nvcc -O3 -arch=sm_90 bench/sinmix_variants.cu -o sv
//
// Every variant computes v = x*0.5 + x*x*0.1, then `iters` times v += sinf(v*0.01), over
// 2^27 random floats cut into 2^21-element chunks launched one after another on one stream,
// as the pipeline's compute queue does. Output is poisoned with NaN before each run; every
// element is compared with the plain variant's (within the bench's tolerance) and 2^16
// sampled elements with the C reference (the fraction of the tolerance used is printed).
// Times: CUDA events around all chunks, median of 7 after a warm-up.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,                  \
                    cudaGetErrorString(e_));                                               \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

// Rounded step by step, as the library's kernel is today.
static __device__ __forceinline__ float value_rn(float x, unsigned iters)
{
    float v = __fadd_rn(__fmul_rn(x, 0.5f), __fmul_rn(__fmul_rn(x, x), 0.1f));
    for (unsigned k = 0; k < iters; k++)
        v = __fadd_rn(v, sinf(__fmul_rn(v, 0.01f)));
    return v;
}

// As CUDA compiles the plain expression (x*0.5f + x*x*0.1f contracts to an FMA).
static __device__ __forceinline__ float value_plain(float x, unsigned iters)
{
    float v = x * 0.5f + x * x * 0.1f;
    for (unsigned k = 0; k < iters; k++)
        v += sinf(v * 0.01f);
    return v;
}

// Only the first line rounded step by step; the loop has nothing to contract anyway.
static __device__ __forceinline__ float value_head_rn(float x, unsigned iters)
{
    float v = __fadd_rn(__fmul_rn(x, 0.5f), __fmul_rn(__fmul_rn(x, x), 0.1f));
    for (unsigned k = 0; k < iters; k++)
        v += sinf(v * 0.01f);
    return v;
}

template <int RN> static __device__ __forceinline__ float value(float x, unsigned iters)
{
    if (RN == 1)
        return value_rn(x, iters);
    if (RN == 2)
        return value_head_rn(x, iters);
    return value_plain(x, iters);
}

template <int RN> __global__ void one_per_thread(const float *in, float *out, size_t n, unsigned iters)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = value<RN>(in[i], iters);
}

template <int RN> __global__ void grid_stride4(const float4 *in, float4 *out, size_t n4, unsigned iters)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += (size_t)gridDim.x * blockDim.x) {
        float4 v = in[i];
        v.x = value<RN>(v.x, iters);
        v.y = value<RN>(v.y, iters);
        v.z = value<RN>(v.z, iters);
        v.w = value<RN>(v.w, iters);
        out[i] = v;
    }
}

template <int RN> __global__ void grid_stride1(const float *in, float *out, size_t n, unsigned iters)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = value<RN>(in[i], iters);
}

template <int RN> __global__ void two_per_thread(const float2 *in, float2 *out, size_t n2, unsigned iters)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) {
        float2 v = in[i];
        v.x = value<RN>(v.x, iters);
        v.y = value<RN>(v.y, iters);
        out[i] = v;
    }
}

static int g_sms;

static unsigned blocks_for(size_t items, unsigned threads) { return (unsigned)((items + threads - 1) / threads); }
static unsigned capped(size_t items, unsigned threads)
{
    return std::min<unsigned>(blocks_for(items, threads), (unsigned)g_sms * 8u);
}

// One variant: launches its kernel over [in, in+n) on stream s.
typedef void (*launch_fn)(const float *in, float *out, size_t n, unsigned iters, cudaStream_t s);

static void plain_1(const float *in, float *out, size_t n, unsigned it, cudaStream_t s)
{ one_per_thread<0><<<blocks_for(n, 256), 256, 0, s>>>(in, out, n, it); }
static void plain_1_b128(const float *in, float *out, size_t n, unsigned it, cudaStream_t s)
{ one_per_thread<0><<<blocks_for(n, 128), 128, 0, s>>>(in, out, n, it); }
static void current(const float *in, float *out, size_t n, unsigned it, cudaStream_t s)
{ grid_stride4<1><<<capped(n / 4, 256), 256, 0, s>>>((const float4 *)in, (float4 *)out, n / 4, it); }
static void current_plain(const float *in, float *out, size_t n, unsigned it, cudaStream_t s)
{ grid_stride4<0><<<capped(n / 4, 256), 256, 0, s>>>((const float4 *)in, (float4 *)out, n / 4, it); }
static void rn_1(const float *in, float *out, size_t n, unsigned it, cudaStream_t s)
{ one_per_thread<1><<<blocks_for(n, 256), 256, 0, s>>>(in, out, n, it); }
static void head_rn_1(const float *in, float *out, size_t n, unsigned it, cudaStream_t s)
{ one_per_thread<2><<<blocks_for(n, 256), 256, 0, s>>>(in, out, n, it); }
static void rn_4_full(const float *in, float *out, size_t n, unsigned it, cudaStream_t s)
{ grid_stride4<1><<<blocks_for(n / 4, 256), 256, 0, s>>>((const float4 *)in, (float4 *)out, n / 4, it); }
static void rn_1_capped(const float *in, float *out, size_t n, unsigned it, cudaStream_t s)
{ grid_stride1<1><<<capped(n, 256), 256, 0, s>>>(in, out, n, it); }
static void rn_1_stride_full(const float *in, float *out, size_t n, unsigned it, cudaStream_t s)
{ grid_stride1<1><<<blocks_for(n, 256), 256, 0, s>>>(in, out, n, it); }
static void rn_2(const float *in, float *out, size_t n, unsigned it, cudaStream_t s)
{ two_per_thread<1><<<blocks_for(n / 2, 256), 256, 0, s>>>((const float2 *)in, (float2 *)out, n / 2, it); }

struct variant { const char *name; launch_fn fn; };
static const variant VARIANTS[] = {
    {"plain: 1/thread, FMA head, 256", plain_1},
    {"plain: 1/thread, FMA head, 128", plain_1_b128},
    {"current: float4 stride, cap 8/SM, rn", current},
    {"float4 stride, cap 8/SM, FMA head", current_plain},
    {"rn: 1/thread, 256", rn_1},
    {"head rn only: 1/thread, 256", head_rn_1},
    {"rn: float4/thread, full grid", rn_4_full},
    {"rn: float stride, cap 8/SM", rn_1_capped},
    {"rn: float2/thread, full grid", rn_2},
    {"rn: float stride loop, full grid", rn_1_stride_full},
};
static const int N_VARIANTS = sizeof VARIANTS / sizeof VARIANTS[0];

static float sinmix_ref(float x, unsigned iters) // the C reference, step by step
{
    float half = x * 0.5f, square = x * x, tenth = square * 0.1f, v = half + tenth;
    for (unsigned k = 0; k < iters; k++) {
        float phase = v * 0.01f;
        v += sinf(phase);
    }
    return v;
}

static double tolerance_used(float got, float want, unsigned iters)
{
    double mag = std::max(1.0, std::fabs((double)want));
    return std::fabs((double)got - want) / (1e-5 * (1.0 + iters) * mag);
}

int main(int argc, char **argv)
{
    size_t n = (size_t)1 << 27, chunk = (size_t)1 << 21;
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    CHECK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
    std::vector<float> h_in(n), h_out(n), h_base(n);
    unsigned long long s = 0x9E3779B97F4A7C15ull ^ (unsigned long long)time(NULL);
    for (size_t i = 0; i < n; i++) { // uniform in [-4, 4), fresh each run
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        h_in[i] = (float)((s >> 40) * (1.0 / (1ull << 24)) * 8.0 - 4.0);
    }
    float *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, n * 4));
    CHECK(cudaMalloc(&d_out, n * 4));
    CHECK(cudaMemcpy(d_in, h_in.data(), n * 4, cudaMemcpyHostToDevice));
    cudaStream_t st;
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    int failed = 0;
    for (unsigned iters : {100u, 1000u}) {
        printf("iters %u, n 2^27 in chunks of 2^21, median of %d\n", iters, reps);
        printf("  %-40s %9s %7s %9s %9s\n", "variant", "ms", "vs plain", "tol used", "bad");
        double plain_ms = 0;
        for (int v = 0; v < N_VARIANTS; v++) {
            std::vector<float> ms;
            for (int r = 0; r <= reps; r++) {
                CHECK(cudaMemsetAsync(d_out, 0xFF, n * 4, st)); // NaN poison
                CHECK(cudaEventRecord(a, st));
                for (size_t off = 0; off < n; off += chunk)
                    VARIANTS[v].fn(d_in + off, d_out + off, std::min(chunk, n - off), iters, st);
                CHECK(cudaGetLastError());
                CHECK(cudaEventRecord(b, st));
                CHECK(cudaEventSynchronize(b));
                float t;
                CHECK(cudaEventElapsedTime(&t, a, b));
                if (r > 0)
                    ms.push_back(t);
            }
            std::sort(ms.begin(), ms.end());
            double med = ms[ms.size() / 2];
            if (v == 0)
                plain_ms = med;
            CHECK(cudaMemcpy(h_out.data(), d_out, n * 4, cudaMemcpyDeviceToHost));
            if (v == 0)
                h_base = h_out;
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) // every element against the plain variant
                if (!(tolerance_used(h_out[i], h_base[i], iters) <= 1.0))
                    bad++;
            double worst = 0;
            for (size_t k = 0; k < (1u << 16); k++) { // sampled against the C reference
                size_t i = (k * 2654435761u) % n;
                worst = std::max(worst, tolerance_used(h_out[i], sinmix_ref(h_in[i], iters), iters));
            }
            if (bad || !(worst <= 1.0))
                failed = 1;
            printf("  %-40s %9.3f %7.3fx %9.4f %9zu\n", VARIANTS[v].name, med, plain_ms / med, worst, bad);
            fflush(stdout);
        }
    }
    printf(failed ? "FAILED: a variant left the tolerance\n" : "all variants within tolerance\n");
    return failed;
}
