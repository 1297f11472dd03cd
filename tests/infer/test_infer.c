/*
 * test_infer host|cuda [filter]: the digits MLP's stages against a double-precision reference.
 *
 * Every predicted label must be the reference's argmax, except where the top two logits are
 * within rounding of each other (relative gap 1e-4 for fp32, 1e-2 for tf32; see
 * digits_label_acceptable), and the accuracy on the held-out images must be at least 95%.
 * The pipelines run the held-out images replicated into long streams, over chunk sizes that
 * cut them unevenly (1, primes, a short last chunk), several ring depths, pageable and pinned
 * memory, with the output poisoned before every run. Exits 77 when the backend is absent.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digits_data.h"
#include "harness.h"
#include "mlp/mlp_host.h"
#include "streampipe.h"
#include "streampipe_fault.h"
#include "streampipe_mlp.h"
#include "testbuf.h"

#define MIN_ACCURACY 0.95
#define FP32_TOLERANCE 1e-4
#define TF32_TOLERANCE 1e-2
#define POISON_BYTE 0x7f

static sp_backend_kind g_kind;
static digits_data g_data;

static double tolerance_of(sp_mlp_precision precision)
{
    /* HOST computes float32 whatever the precision asked */
    return precision == SP_MLP_TF32 && g_kind == SP_BACKEND_CUDA ? TF32_TOLERANCE
                                                                  : FP32_TOLERANCE;
}

/* ---- the references ----------------------------------------------------------------------- */

TEST(references_agree_and_are_accurate)
{
    double lib[SP_MLP_CLASSES];
    size_t correct = 0;
    double worst = 0.0;
    for (size_t i = 0; i < g_data.n; i++) {
        const double *mine = g_data.logits + i * SP_MLP_CLASSES;
        sp_mlp_reference_logits(g_data.model, g_data.images + i * SP_MLP_INPUTS, 1, lib);
        for (size_t c = 0; c < SP_MLP_CLASSES; c++)
            worst = fmax(worst, fabs(lib[c] - mine[c]) / fmax(1.0, fabs(mine[c])));
        correct += digits_argmax(mine, SP_MLP_CLASSES) == g_data.labels[i];
    }
    double accuracy = (double)correct / (double)g_data.n;
    printf("  reference: %zu of %zu held-out images right (%.2f%%); library vs test reference "
           "differ by %.2g at most\n", correct, g_data.n, 100.0 * accuracy, worst);
    CHECK_MSG(worst < 1e-12, "the two double references differ by %g", worst);
    CHECK_MSG(accuracy >= MIN_ACCURACY, "accuracy %.4f", accuracy);
    return TEST_OK;
}

TEST(host_functions_match_reference)
{
    const size_t n = g_data.n;
    float *x = malloc(n * SP_MLP_INPUTS * sizeof *x);
    float *h1 = malloc(n * SP_MLP_HIDDEN * sizeof *h1);
    float *h2 = malloc(n * SP_MLP_HIDDEN * sizeof *h2);
    int32_t *labels = malloc(n * sizeof *labels);
    if (CHECK(x && h1 && h2 && labels)) {
        sp_mlp_preprocess_host(g_data.images, x, n);
        for (size_t i = 0; i < n * SP_MLP_INPUTS; i++)
            if (!CHECK_MSG(x[i] == (float)(g_data.images[i] / 16.0), "pixel %zu", i))
                break;
        const sp_mlp_layer fc1 = sp_mlp_layer_at(g_data.model, 0);
        const sp_mlp_layer fc2 = sp_mlp_layer_at(g_data.model, 1);
        const sp_mlp_layer fc3 = sp_mlp_layer_at(g_data.model, 2);
        sp_mlp_dense_relu_host(&fc1, x, h1, n);
        sp_mlp_dense_relu_host(&fc2, h1, h2, n);
        sp_mlp_head_host(&fc3, h2, labels, n);
        for (size_t i = 0; i < n; i++)
            if (!CHECK_MSG(digits_label_acceptable(g_data.logits + i * SP_MLP_CLASSES,
                                                   labels[i], FP32_TOLERANCE),
                           "image %zu: host label %d, reference %d", i, labels[i],
                           digits_argmax(g_data.logits + i * SP_MLP_CLASSES, SP_MLP_CLASSES)))
                break;
    }
    free(x);
    free(h1);
    free(h2);
    free(labels);
    return TEST_OK;
}

/* ---- the stages through pipelines ---------------------------------------------------------- */

typedef struct infer_case {
    sp_mlp_precision precision;
    size_t copies;  /* the held-out set, this many times over */
    size_t chunk;
    unsigned depth;
    mem_kind in_kind, out_kind;
} infer_case;

/* Checks every label of one run; returns how many were near ties decided the other way. */
static size_t check_labels(const int32_t *labels, size_t records, double tolerance,
                           size_t *correct)
{
    size_t near_ties = 0;
    *correct = 0;
    for (size_t r = 0; r < records; r++) {
        const size_t image = r % g_data.n;
        const double *logits = g_data.logits + image * SP_MLP_CLASSES;
        if (!CHECK_MSG(digits_label_acceptable(logits, labels[r], tolerance),
                       "record %zu (image %zu): label %d, reference %d", r, image, labels[r],
                       digits_argmax(logits, SP_MLP_CLASSES)))
            break;
        near_ties += labels[r] != digits_argmax(logits, SP_MLP_CLASSES);
        *correct += labels[r] == g_data.labels[image];
    }
    return near_ties;
}

static void fill_input(test_buf *in, size_t copies)
{
    const size_t image_bytes = g_data.n * SP_MLP_INPUTS;
    for (size_t c = 0; c < copies; c++)
        memcpy(in->data + c * image_bytes, g_data.images, image_bytes);
}

/* How the chunks of a case run side by side: queues per stage and graph mode. */
typedef struct infer_overlap {
    unsigned streams;
    sp_graph_mode graph;
} infer_overlap;

static void run_case(sp_context *ctx, const sp_mlp_stages *stages, const infer_case *ic,
                     infer_overlap overlap)
{
    const size_t records = g_data.n * ic->copies;
    harness_context("%s, %zu records, chunk %zu, depth %u, in %s, out %s, streams %u, graph %d",
                    sp_mlp_precision_name(ic->precision), records, ic->chunk, ic->depth,
                    mem_kind_name(ic->in_kind), mem_kind_name(ic->out_kind), overlap.streams,
                    (int)overlap.graph);
    sp_stage list[SP_MLP_STAGES];
    memcpy(list, sp_mlp_stages_list(stages), sizeof list);
    for (size_t s = 0; s < SP_MLP_STAGES; s++)
        list[s].streams = overlap.streams;
    sp_pipeline_config config = {.in_record_bytes = SP_MLP_INPUTS,
                                 .stages = list,
                                 .n_stages = SP_MLP_STAGES,
                                 .chunk_records = ic->chunk,
                                 .depth = ic->depth,
                                 .graph = overlap.graph};
    sp_pipeline *pipeline = NULL;
    test_buf in = {0}, out = {0};
    if (CHECK_STATUS(sp_pipeline_create(ctx, &config, &pipeline), SP_OK,
                     sp_context_last_error(ctx)) &&
        CHECK_EQ(sp_pipeline_out_record_bytes(pipeline), sizeof(int32_t)) &&
        CHECK_STATUS(buf_alloc(&in, ctx, ic->in_kind, records * SP_MLP_INPUTS), SP_OK, "") &&
        CHECK_STATUS(buf_alloc(&out, ctx, ic->out_kind, records * sizeof(int32_t)), SP_OK, "")) {
        fill_input(&in, ic->copies);
        buf_poison(&out, POISON_BYTE);
        sp_report report;
        sp_status st = sp_pipeline_run(pipeline, in.data, records, out.data, &report);
        if (CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(pipeline))) {
            int32_t *labels = malloc(records * sizeof *labels);
            if (CHECK(labels != NULL)) {
                memcpy(labels, out.data, records * sizeof *labels);
                size_t correct = 0;
                size_t near_ties = check_labels(labels, records, tolerance_of(ic->precision),
                                                &correct);
                CHECK_MSG((double)correct >= MIN_ACCURACY * (double)records,
                          "accuracy %zu of %zu", correct, records);
                if (near_ties > 0)
                    printf("  %zu near ties went the other way (%s)\n", near_ties,
                           sp_mlp_precision_name(ic->precision));
            }
            free(labels);
            CHECK(buf_guards_intact(&out));
            CHECK_EQ(report.records, records);
        }
    }
    buf_free(&in);
    buf_free(&out);
    sp_pipeline_destroy(pipeline);
    harness_context("%s", "");
}

static sp_context *open_context(void)
{
    sp_context *ctx = NULL;
    sp_status st = sp_context_create(g_kind, 0, &ctx);
    CHECK_STATUS(st, SP_OK, sp_context_last_error(ctx));
    return ctx;
}

static void run_cases_on(sp_context *ctx, const infer_case *cases, size_t n,
                         sp_mlp_precision precision, infer_overlap overlap)
{
    sp_mlp_stages *stages = NULL;
    if (ctx != NULL && CHECK_STATUS(sp_mlp_stages_create(ctx, g_data.model, precision, &stages),
                                    SP_OK, sp_mlp_stages_last_error(stages))) {
        for (size_t i = 0; i < n; i++)
            if (cases[i].precision == precision)
                run_case(ctx, stages, &cases[i], overlap);
    }
    sp_mlp_stages_destroy(stages);
}

static void run_cases(const infer_case *cases, size_t n, sp_mlp_precision precision)
{
    sp_context *ctx = open_context();
    run_cases_on(ctx, cases, n, precision, (infer_overlap){1, SP_GRAPH_OFF});
    sp_context_destroy(ctx);
}

/* The GEMM stages' chunks side by side, on three queues per stage and in graph mode, with
 * random delays before every queued operation: each GEMM chunk in flight must have a
 * cuBLASLt workspace of its own (its slot's scratch), or they would share one. */
TEST(side_by_side_chunks_have_their_own_workspace)
{
    sp_fault_config delays = {.random_delay_us = 200, .seed = harness_seed()};
    sp_context *ctx = NULL;
    if (!CHECK_STATUS(sp_context_create_fault(g_kind, 0, &delays, &ctx), SP_OK,
                      sp_context_last_error(ctx)))
        return TEST_FAIL;
    sp_mlp_stages *stages = NULL;
    if (CHECK_STATUS(sp_mlp_stages_create(ctx, g_data.model, SP_MLP_TF32, &stages), SP_OK,
                     sp_mlp_stages_last_error(stages))) {
        const sp_stage *list = sp_mlp_stages_list(stages);
        size_t want = g_kind == SP_BACKEND_CUDA ? (size_t)32 << 20 : 0; /* HOST needs none */
        CHECK_EQ(list[1].scratch_bytes, want);
        CHECK_EQ(list[2].scratch_bytes, want);
        CHECK_EQ(list[0].scratch_bytes + list[3].scratch_bytes, 0);
    }
    sp_mlp_stages_destroy(stages);
    const infer_case cases[] = {
        {SP_MLP_FP32, 6, 97, 8, MEM_PINNED, MEM_PINNED},
        {SP_MLP_TF32, 6, 97, 8, MEM_PAGEABLE, MEM_PINNED},
        {SP_MLP_FP32, 4, 360, 4, MEM_PINNED, MEM_PAGEABLE},
    };
    for (int precision = 0; precision < 2; precision++) {
        sp_mlp_precision p = precision ? SP_MLP_TF32 : SP_MLP_FP32;
        run_cases_on(ctx, cases, ARRAY_LEN(cases), p, (infer_overlap){3, SP_GRAPH_OFF});
        run_cases_on(ctx, cases, ARRAY_LEN(cases), p, (infer_overlap){1, SP_GRAPH_ON});
    }
    sp_context_destroy(ctx);
    return TEST_OK;
}

TEST(pipelines_match_reference)
{
    const int cuda = g_kind == SP_BACKEND_CUDA;
    const int quick = harness_quick();
    static const size_t chunks[] = {1, 7, 97, 360, 1000};
    static const unsigned depths[] = {1, 2, 3, 5, 8};
    infer_case cases[32];
    size_t n = 0;
    for (size_t i = 0; i < ARRAY_LEN(chunks); i++) {
        cases[n++] = (infer_case){SP_MLP_FP32, chunks[i] == 1 ? 2 : quick ? 2 : 4, chunks[i],
                                  depths[i], (mem_kind)(i % MEM_KINDS),
                                  (mem_kind)((i + 1) % MEM_KINDS)};
        cases[n] = cases[n - 1];
        cases[n++].precision = SP_MLP_TF32;
    }
    if (cuda) { /* long streams in big chunks, as the benchmarks run them */
        cases[n++] = (infer_case){SP_MLP_FP32, 1000, 65536, 4, MEM_PINNED, MEM_PINNED};
        cases[n++] = (infer_case){SP_MLP_TF32, 1000, 65536, 4, MEM_PINNED, MEM_PINNED};
        cases[n++] = (infer_case){SP_MLP_TF32, 300, 40000, 3, MEM_PAGEABLE, MEM_PAGEABLE};
    }
    run_cases(cases, n, SP_MLP_FP32);
    run_cases(cases, n, SP_MLP_TF32);
    return TEST_OK;
}

/* Two pipelines of different chunk sizes from one set of stages, run in turn and again: the
 * GEMM stages see several record counts (each with its own cached cuBLASLt algorithm). */
TEST(stages_serve_several_pipelines)
{
    const infer_case cases[] = {
        {SP_MLP_FP32, 3, 250, 2, MEM_PINNED, MEM_PINNED},
        {SP_MLP_FP32, 2, 33, 4, MEM_PAGEABLE, MEM_PINNED},
        {SP_MLP_FP32, 3, 250, 2, MEM_PINNED, MEM_PAGEABLE},
        {SP_MLP_FP32, 1, 360, 1, MEM_PAGEABLE, MEM_PAGEABLE},
        {SP_MLP_FP32, 1, 359, 3, MEM_PINNED, MEM_PINNED},
    };
    run_cases(cases, ARRAY_LEN(cases), SP_MLP_FP32);
    return TEST_OK;
}

TEST(stage_descriptors_and_errors)
{
    sp_context *ctx = open_context();
    if (ctx == NULL)
        return TEST_FAIL;
    sp_mlp_stages *stages = NULL;
    /* a failed creation yields stages whose last error says why, and no list */
    CHECK(sp_mlp_stages_create(NULL, g_data.model, SP_MLP_FP32, &stages) ==
          SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_mlp_stages_last_error(stages), "NULL");
    CHECK(sp_mlp_stages_list(stages) == NULL);
    sp_mlp_stages_destroy(stages);
    CHECK(sp_mlp_stages_create(ctx, NULL, SP_MLP_FP32, &stages) == SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_mlp_stages_last_error(stages), "model");
    sp_mlp_stages_destroy(stages);
    CHECK(sp_mlp_stages_create(ctx, g_data.model, (sp_mlp_precision)7, &stages) ==
          SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_mlp_stages_last_error(stages), "precision");
    sp_mlp_stages_destroy(stages);
    sp_mlp *broken = NULL; /* a model that failed to load is refused, its reason passed on */
    CHECK(sp_mlp_load_bytes("not a model", 11, &broken) != SP_OK);
    CHECK(broken != NULL && !sp_mlp_loaded(broken) && sp_mlp_last_error(broken)[0] != '\0');
    CHECK(sp_mlp_stages_create(ctx, broken, SP_MLP_FP32, &stages) == SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_mlp_stages_last_error(stages), "did not load");
    sp_mlp_stages_destroy(stages);
    sp_mlp_free(broken);
    if (CHECK(sp_mlp_stages_create(ctx, g_data.model, SP_MLP_TF32, &stages) == SP_OK)) {
        const sp_stage *list = sp_mlp_stages_list(stages);
        static const char *const names[] = {"preprocess", "fc1", "fc2", "head"};
        static const size_t out_bytes[] = {256, 1024, 1024, 4};
        for (size_t i = 0; i < SP_MLP_STAGES; i++) {
            CHECK(strcmp(list[i].name, names[i]) == 0);
            CHECK_EQ(list[i].out_record_bytes, out_bytes[i]);
            CHECK(list[i].host != NULL);
            CHECK(g_kind == SP_BACKEND_HOST || list[i].cuda != NULL);
        }
        CHECK(strcmp(sp_mlp_stages_last_error(stages), "") == 0);
    }
    CHECK(strcmp(sp_mlp_precision_name(SP_MLP_TF32), "tf32") == 0);
    sp_mlp_stages_destroy(stages);
    sp_mlp_stages_destroy(NULL);
    sp_context_destroy(ctx);
    return TEST_OK;
}

/* In each test's process: the model and data are loaded there, not in the runner. */
static int setup(void)
{
    int rc = digits_need_model_loader();
    if (rc == TEST_OK)
        rc = backend_available(g_kind);
    if (rc == TEST_OK && digits_load(&g_data) != 0) {
        printf("cannot load the digits data from %s\n", SP_MODELS_DIR);
        rc = TEST_FAIL;
    }
    return rc;
}

static void teardown(void) { digits_free(&g_data); }

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(references_agree_and_are_accurate),
        TEST_ENTRY(host_functions_match_reference),
        TEST_ENTRY(stage_descriptors_and_errors),
        TEST_ENTRY_T(pipelines_match_reference, 280),
        TEST_ENTRY(stages_serve_several_pipelines),
        TEST_ENTRY_T(side_by_side_chunks_have_their_own_workspace, 200),
    };
    if (!parse_backend_arg(argc, argv, &g_kind))
        return 2;
    harness_set_setup(setup, teardown);
    return harness_run(tests, ARRAY_LEN(tests), argc > 2 ? argv[2] : NULL);
}
