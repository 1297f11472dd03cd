/*
 * test_graph host|cuda [filter]: graph mode beyond the conformance suite (which runs whole in
 * graph mode as conformance_graph_*): host memory recycled between replays, captures and
 * updates made to fail, a stage that graphs cannot replay, AUTO's choice, and the report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef SP_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "harness.h"
#include "stages.h"
#include "streampipe.h"
#include "streampipe_fault.h"
#include "testbuf.h"

static sp_backend_kind g_kind;

enum { IN_REC = 8, CHUNK = 32, DEPTH = 3 };

typedef struct rig {
    sp_context *ctx;
    mix_chain chain;
    sp_pipeline *p;
} rig;

/* Two mix stages (8 -> 12 -> 8 bytes) on a fault context with `faults` (NULL: none). */
static int rig_open_with(rig *r, sp_graph_mode mode, size_t chunk, int position_free,
                         unsigned depth, const sp_fault_config *faults)
{
    memset(r, 0, sizeof *r);
    if (!CHECK_STATUS(sp_context_create_fault(g_kind, 0, faults, &r->ctx), SP_OK,
                      sp_context_last_error(r->ctx)))
        return 0;
    static const size_t outs[2] = {12, IN_REC};
    mix_chain_init(&r->chain, IN_REC, 2, outs, (uint32_t)harness_seed());
    if (position_free)
        mix_chain_position_free(&r->chain);
    sp_pipeline_config cfg = mix_chain_config(&r->chain, chunk, depth);
    cfg.graph = mode;
    return CHECK_STATUS(sp_pipeline_create(r->ctx, &cfg, &r->p), SP_OK,
                        sp_context_last_error(r->ctx));
}

static int rig_open(rig *r, sp_graph_mode mode, size_t chunk, int position_free)
{
    return rig_open_with(r, mode, chunk, position_free, DEPTH, NULL);
}

static void rig_close(rig *r)
{
    sp_pipeline_destroy(r->p);
    sp_context_destroy(r->ctx);
}

/* One run over n fresh random records in buffers of the given kinds, every byte checked;
 * the report goes to *rep. Returns 1 when the run succeeded and was right. */
static int checked_run(rig *r, mem_kind in_kind, mem_kind out_kind, size_t n, sp_report *rep,
                       test_rng *rng)
{
    test_buf in, out;
    size_t in_bytes = n * IN_REC, out_bytes = n * IN_REC;
    if (!CHECK_EQ(buf_alloc(&in, r->ctx, in_kind, in_bytes), SP_OK))
        return 0;
    if (!CHECK_EQ(buf_alloc(&out, r->ctx, out_kind, out_bytes), SP_OK)) {
        buf_free(&in);
        return 0;
    }
    unsigned char *want = malloc(out_bytes ? out_bytes : 1);
    rng_fill(rng, in.data, in_bytes);
    buf_poison(&out, 0xA5);
    mix_reference_run(r->chain.stages, 2, IN_REC, in.data, n,
                      sp_pipeline_chunk_records(r->p, n), want);
    sp_status st = sp_pipeline_run(r->p, in.data, n, out.data, rep);
    int ok = CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(r->p)) &&
             compare_records(want, out.data, n, IN_REC, "output") == 0 &&
             CHECK(buf_guards_intact(&out));
    free(want);
    buf_free(&out);
    buf_free(&in);
    return ok;
}

/* Each run gets new buffers (the old ones freed first, so their addresses may come back):
 * a replay must read and write only the memory of its own run. */
TEST(replays_follow_recycled_host_memory)
{
    test_rng rng;
    rng_init(&rng, harness_seed());
    static const mem_kind kinds[] = {MEM_PINNED, MEM_REGISTERED, MEM_PAGEABLE};
    for (size_t k = 0; k < ARRAY_LEN(kinds); k++) {
        rig r;
        if (!rig_open(&r, SP_GRAPH_ON, CHUNK, 1))
            return TEST_FAIL;
        harness_context("memory %s", mem_kind_name(kinds[k]));
        for (int run = 0; run < 4; run++) {
            sp_report rep;
            size_t n = CHUNK * (2 * DEPTH + 2) + (size_t)run; /* a short tail on runs 1..3 */
            if (!checked_run(&r, kinds[k], kinds[k], n, &rep, &rng))
                break;
            CHECK_MSG(rep.graph == 1, "run %d: no graph (notes: %s)", run, rep.notes);
            CHECK_HAS(rep.notes, "replayed");
            CHECK(rep.submit_s > 0.0 && rep.submit_s <= rep.makespan_s);
        }
        rig_close(&r);
    }
    return TEST_OK;
}

/* A failed capture, update or launch setup falls back to stream mode with the reason in the
 * report; the output is right either way, and the pipeline stays in stream mode after. */
TEST(failures_fall_back_to_stream_mode)
{
    test_rng rng;
    rng_init(&rng, harness_seed() + 1);
    static const char *const ops[] = {"capture_begin", "capture_end", "graph_rebase"};
    for (size_t k = 0; k < ARRAY_LEN(ops); k++) {
        rig r;
        if (!rig_open(&r, SP_GRAPH_ON, CHUNK, 1))
            return TEST_FAIL;
        harness_context("failing %s", ops[k]);
        sp_fault_config cfg = {.fail_op = ops[k]};
        CHECK_EQ(sp_fault_set(r.ctx, &cfg), SP_OK);
        sp_report rep;
        if (checked_run(&r, MEM_PINNED, MEM_PINNED, CHUNK * 8, &rep, &rng)) {
            CHECK_HAS(rep.notes, "graph mode off");
            CHECK_HAS(rep.notes, ops[k]);
            if (strcmp(ops[k], "graph_rebase") != 0) /* a rebase fails after some replays */
                CHECK_EQ(rep.graph, 0);
            CHECK(rep.n_engines == 0 || rep.graph == 0);
        }
        CHECK_EQ(sp_fault_set(r.ctx, NULL), SP_OK);
        if (checked_run(&r, MEM_PINNED, MEM_PINNED, CHUNK * 8, &rep, &rng)) {
            CHECK_EQ(rep.graph, 0);
            CHECK_HAS(rep.notes, "graph mode off");
        }
        rig_close(&r);
    }
    return TEST_OK;
}

/* A stage whose work depends on chunk->first_record cannot be replayed: the check against
 * stream mode catches it on the first replay of another chunk, and the output is still
 * right. */
TEST(a_stage_that_depends_on_the_chunk_is_caught)
{
    test_rng rng;
    rng_init(&rng, harness_seed() + 2);
    static const mem_kind kinds[] = {MEM_PINNED, MEM_PAGEABLE};
    for (size_t k = 0; k < ARRAY_LEN(kinds); k++) {
        rig r;
        if (!rig_open(&r, SP_GRAPH_ON, CHUNK, 0))
            return TEST_FAIL;
        harness_context("memory %s", mem_kind_name(kinds[k]));
        sp_report rep;
        if (checked_run(&r, kinds[k], kinds[k], CHUNK * (3 * DEPTH) + 5, &rep, &rng)) {
            CHECK_HAS(rep.notes, "differs");
            CHECK_HAS(rep.notes, "first_record");
        }
        rig_close(&r);
    }
    return TEST_OK;
}

/* Depth 8: graphs of 4 chunks. 13 full chunks make 3 replays, then a full chunk and a short
 * one in stream mode, in slots a replay held last. With the graph queues slowed down, a
 * stream chunk whose host turn did not wait for that replay would overwrite buffers the
 * replay still uses. */
TEST(stream_chunks_after_groups_wait_for_them)
{
    test_rng rng;
    rng_init(&rng, harness_seed() + 5);
    static const mem_kind kinds[] = {MEM_PINNED, MEM_PAGEABLE};
    for (size_t k = 0; k < ARRAY_LEN(kinds); k++) {
        rig r;
        memset(&r, 0, sizeof r);
        sp_fault_config slow = {.delay_us = 3000, .delay_queue = "graph"};
        if (!CHECK_EQ(sp_context_create_fault(g_kind, 0, &slow, &r.ctx), SP_OK))
            return TEST_FAIL;
        static const size_t outs[2] = {12, IN_REC};
        mix_chain_init(&r.chain, IN_REC, 2, outs, (uint32_t)harness_seed());
        mix_chain_position_free(&r.chain);
        sp_pipeline_config cfg = mix_chain_config(&r.chain, CHUNK, 8);
        cfg.graph = SP_GRAPH_ON;
        harness_context("memory %s", mem_kind_name(kinds[k]));
        sp_report rep;
        for (int run = 0; run < 2 && CHECK_EQ(sp_pipeline_create(r.ctx, &cfg, &r.p), SP_OK);
             run++) {
            if (checked_run(&r, kinds[k], kinds[k], CHUNK * 13 + 7, &rep, &rng))
                CHECK_MSG(rep.graph == 1, "no graph (notes: %s)", rep.notes);
            sp_pipeline_destroy(r.p);
            r.p = NULL;
        }
        rig_close(&r);
    }
    return TEST_OK;
}

/* Every group size (depth 2..64: groups of 1..16 chunks), each chunk of a group a branch of
 * the graph on a queue of its own, with those queues delayed at random (on CUDA the branches
 * then finish in any order; HOST launches alternate between running the branches and the
 * group's copies as early as the graph's edges allow, so a missing fork or join shows on
 * HOST too). Chunks of 32 records fill their slots, so a group moves with one
 * copy each way; chunks of 33 do not, so each chunk has its copies. Each run has two and a
 * half depths of full chunks (whole groups, then chunks short of a group in stream mode) and
 * a short tail; the note says how many were replayed and how. */
TEST(groups_of_every_size)
{
    test_rng rng;
    rng_init(&rng, harness_seed() + 6);
    static const unsigned depths[] = {2, 4, 8, 16, 32, 64};
    static const mem_kind kinds[] = {MEM_PINNED, MEM_PAGEABLE};
    static const size_t chunks[] = {CHUNK, CHUNK + 1};
    sp_fault_config shaken = {.random_delay_us = 200, .seed = harness_seed(),
                              .delay_queue = "graph"};
    for (size_t d = 0; d < ARRAY_LEN(depths); d++)
        for (size_t c = 0; c < ARRAY_LEN(chunks) * ARRAY_LEN(kinds); c++) {
            rig r;
            size_t chunk = chunks[c % 2];
            mem_kind kind = kinds[c / 2];
            if (!rig_open_with(&r, SP_GRAPH_ON, chunk, 1, depths[d], &shaken))
                return TEST_FAIL;
            harness_context("depth %u, chunk %zu, memory %s", depths[d], chunk,
                            mem_kind_name(kind));
            size_t group = depths[d] / 2 < 16 ? (depths[d] > 1 ? depths[d] / 2 : 1) : 16;
            size_t full = 2 * depths[d] + depths[d] / 2 + 1;
            char want[160];
            snprintf(want, sizeof want, "graph mode: %zu of %zu chunks replayed, in groups of "
                     "%zu with %s", full / group * group, full + 1, group,
                     group > 1 && chunk == CHUNK ? "one copy each way per group"
                                                 : "copies per chunk");
            for (int run = 0; run < 2; run++) { /* the second run replays checked graphs */
                sp_report rep;
                if (!checked_run(&r, kind, kind, chunk * full + 7, &rep, &rng))
                    break;
                CHECK_HAS(rep.notes, want);
            }
            rig_close(&r);
        }
    return TEST_OK;
}

/* Runs over a window that slides by one chunk through one pinned buffer: each chunk's new
 * memory is the previous chunk's old memory, so a rebase that matched the copies' current
 * addresses would move a copy twice (found in review: SP_OK with chunks never written). */
TEST(a_window_sliding_by_one_chunk)
{
    test_rng rng;
    rng_init(&rng, harness_seed() + 6);
    rig r;
    memset(&r, 0, sizeof r);
    if (!CHECK_EQ(sp_context_create(g_kind, 0, &r.ctx), SP_OK))
        return TEST_FAIL;
    static const size_t outs[2] = {12, IN_REC};
    mix_chain_init(&r.chain, IN_REC, 2, outs, (uint32_t)harness_seed());
    mix_chain_position_free(&r.chain);
    sp_pipeline_config cfg = mix_chain_config(&r.chain, CHUNK, 8); /* graphs of 4 chunks */
    cfg.graph = SP_GRAPH_ON;
    enum { RUNS = 4, N = CHUNK * 8 }; /* each group of slots used once a run */
    void *in = NULL, *out = NULL;
    size_t bytes = (size_t)(N + CHUNK * RUNS) * IN_REC;
    unsigned char *want = malloc(N * IN_REC);
    if (CHECK_EQ(sp_pipeline_create(r.ctx, &cfg, &r.p), SP_OK) &&
        CHECK_EQ(sp_host_alloc(r.ctx, bytes, &in), SP_OK) &&
        CHECK_EQ(sp_host_alloc(r.ctx, bytes, &out), SP_OK) && CHECK(want != NULL)) {
        for (size_t run = 0; run < RUNS; run++) {
            unsigned char *from = (unsigned char *)in + run * CHUNK * IN_REC;
            unsigned char *to = (unsigned char *)out + run * CHUNK * IN_REC;
            rng_fill(&rng, from, N * IN_REC);
            memset(to, 0xA5, N * IN_REC);
            mix_reference_run(r.chain.stages, 2, IN_REC, from, N, CHUNK, want);
            sp_report rep;
            harness_context("run %zu", run);
            if (CHECK_STATUS(sp_pipeline_run(r.p, from, N, to, &rep), SP_OK,
                             sp_pipeline_last_error(r.p)))
                CHECK(compare_records(want, to, N, IN_REC, "output") == 0 && rep.graph == 1);
        }
    }
    free(want);
    sp_host_free(r.ctx, in);
    sp_host_free(r.ctx, out);
    rig_close(&r);
    return TEST_OK;
}

/* One attempt of the sweep below: fail backend call k with `fail` in a graph-mode run (depth
 * 8: groups of 4, each used twice so the check runs, then stream chunks). Returns whether the
 * fault was reached. */
static int sweep_attempt(mem_kind kind, unsigned long k, sp_status fail, test_rng *rng)
{
    sp_fault_config slow = {.delay_us = 20, .random_delay_us = 80, .seed = k,
                            .delay_queue = "graph"};
    rig r;
    memset(&r, 0, sizeof r);
    if (!CHECK_EQ(sp_context_create_fault(g_kind, 0, &slow, &r.ctx), SP_OK))
        return 0;
    static const size_t outs[2] = {12, IN_REC};
    mix_chain_init(&r.chain, IN_REC, 2, outs, (uint32_t)k);
    mix_chain_position_free(&r.chain);
    sp_pipeline_config cfg = mix_chain_config(&r.chain, CHUNK, 8);
    cfg.graph = SP_GRAPH_ON;
    cfg.copy_piece_bytes = 40 * IN_REC; /* pieces: more calls, each one failed in turn */
    size_t n = CHUNK * 17 + 5, bytes = n * IN_REC;
    test_buf in, out;
    unsigned char *want = malloc(bytes);
    int reached = 0;
    if (CHECK_EQ(sp_pipeline_create(r.ctx, &cfg, &r.p), SP_OK) && CHECK(want != NULL) &&
        CHECK_EQ(buf_alloc(&in, r.ctx, kind, bytes), SP_OK)) {
        if (CHECK_EQ(buf_alloc(&out, r.ctx, kind, bytes), SP_OK)) {
            rng_fill(rng, in.data, bytes);
            buf_poison(&out, 0xA5);
            mix_reference_run(r.chain.stages, 2, IN_REC, in.data, n, CHUNK, want);
            sp_fault_config f = slow;
            f.fail_call = k;
            f.fail_status = fail;
            CHECK_EQ(sp_fault_set(r.ctx, &f), SP_OK); /* counting starts here */
            sp_report rep;
            sp_status st = sp_pipeline_run(r.p, in.data, n, out.data, &rep);
            sp_fault_stats stats;
            sp_fault_get_stats(r.ctx, &stats);
            reached = stats.injected > 0;
            if (st == SP_OK)
                CHECK(compare_records(want, out.data, n, IN_REC, "output") == 0);
            else
                CHECK(sp_pipeline_last_error(r.p)[0] != '\0');
            /* a fallback the injected failure caused gives that failure as its reason, not a
             * later call's complaint about the state it left (found in review: a failed fork
             * was joined anyway, and that error replaced the injected one) */
            if (st == SP_OK && reached && strstr(rep.notes, "graph mode off") != NULL)
                CHECK_HAS(rep.notes, "fault injected");
            if (reached && fail == SP_ERR_DEVICE_LOST)
                CHECK_EQ(st, SP_ERR_DEVICE_LOST);
            if (fail != SP_ERR_DEVICE_LOST) { /* the pipeline works again */
                CHECK_EQ(sp_fault_set(r.ctx, &slow), SP_OK);
                buf_poison(&out, 0x5A);
                if (CHECK_STATUS(sp_pipeline_run(r.p, in.data, n, out.data, &rep), SP_OK,
                                 sp_pipeline_last_error(r.p)))
                    CHECK(compare_records(want, out.data, n, IN_REC, "rerun") == 0);
            }
            buf_free(&out);
        }
        buf_free(&in);
    }
    free(want);
    rig_close(&r);
    return reached;
}

/* Every backend call of a graph-mode run failed in turn, with graph queues slowed down: the
 * run either succeeds with the right output (it fell back to stream mode) or fails with a
 * reason, a lost device is never turned into a fallback, nothing is left running that could
 * write freed memory (found in review: the check's direct run, failed halfway), and the
 * pipeline works again after an ordinary failure. */
TEST(every_failed_call_fails_or_falls_back)
{
    test_rng rng;
    rng_init(&rng, harness_seed() + 7);
    static const mem_kind kinds[] = {MEM_PINNED, MEM_PAGEABLE};
    static const sp_status fails[] = {SP_ERR_BACKEND, SP_ERR_DEVICE_LOST};
    unsigned long step = harness_quick() ? 3 : 1;
    for (size_t m = 0; m < ARRAY_LEN(kinds); m++)
        for (size_t f = 0; f < ARRAY_LEN(fails); f++)
            for (unsigned long k = 1; k < 100000; k += step) {
                harness_context("memory %s, call %lu fails with %s", mem_kind_name(kinds[m]),
                                k, sp_status_name(fails[f]));
                if (!sweep_attempt(kinds[m], k, fails[f], &rng))
                    break;
            }
    return TEST_OK;
}

/* Every queue_sync fails, the graph queues slowed down by 2 ms an operation: the check of a
 * new graph cannot sync its queue after running the group directly, with that run's copy into
 * the comparison buffer still queued. The run fails with the sync's error, having waited for
 * the queue (found in issue 16: the check freed the buffer and the copy wrote into freed
 * memory, a heap-use-after-free under ASan); nothing writes the output after the return;
 * with the fault cleared the pipeline runs correctly. */
TEST(a_check_whose_syncs_fail_waits_for_its_queue)
{
    test_rng rng;
    rng_init(&rng, harness_seed() + 8);
    sp_fault_config cfg = {.delay_us = 2000, .delay_queue = "graph", .fail_op = "queue_sync"};
    rig r;
    if (!rig_open_with(&r, SP_GRAPH_ON, CHUNK, 1, DEPTH, &cfg))
        return TEST_FAIL;
    size_t n = CHUNK * 2 * DEPTH, bytes = n * IN_REC; /* groups of 1: the check at chunk 3 */
    test_buf in, out;
    if (CHECK_EQ(buf_alloc(&in, r.ctx, MEM_PINNED, bytes), SP_OK)) {
        if (CHECK_EQ(buf_alloc(&out, r.ctx, MEM_PINNED, bytes), SP_OK)) {
            rng_fill(&rng, in.data, bytes);
            buf_poison(&out, 0xA5);
            sp_status st = sp_pipeline_run(r.p, in.data, n, out.data, NULL);
            CHECK_STATUS(st, SP_ERR_BACKEND, sp_pipeline_last_error(r.p));
            CHECK_HAS(sp_pipeline_last_error(r.p), "checking a new graph: fault injected");
            unsigned char *before = malloc(bytes);
            if (CHECK(before != NULL)) {
                memcpy(before, out.data, bytes);
                struct timespec pause = {0, 20000000L}; /* more than the delays queued */
                nanosleep(&pause, NULL);
                CHECK_MSG(memcmp(before, out.data, bytes) == 0,
                          "output written after the failed run returned");
            }
            free(before);
            CHECK_EQ(sp_fault_set(r.ctx, NULL), SP_OK);
            sp_report rep;
            checked_run(&r, MEM_PINNED, MEM_PINNED, n, &rep, &rng);
            buf_free(&out);
        }
        buf_free(&in);
    }
    rig_close(&r);
    return TEST_OK;
}

/* AUTO replays small chunks and leaves large ones to stream mode. */
TEST(auto_chooses_by_chunk_size)
{
    test_rng rng;
    rng_init(&rng, harness_seed() + 3);
    static const struct { size_t chunk; int graph; } cases[] = {
        {CHUNK, 1}, {(size_t)1 << 18, 0} /* 2 MiB in + 2 MiB out: over the 2 MiB limit */};
    for (size_t k = 0; k < ARRAY_LEN(cases); k++) {
        rig r;
        if (!rig_open(&r, SP_GRAPH_AUTO, cases[k].chunk, 1))
            return TEST_FAIL;
        harness_context("chunk %zu", cases[k].chunk);
        sp_report rep;
        if (checked_run(&r, MEM_PINNED, MEM_PINNED, cases[k].chunk * 4, &rep, &rng))
            CHECK_EQ(rep.graph, cases[k].graph);
        rig_close(&r);
    }
    return TEST_OK;
}

/* A bad mode is refused at creation. */
TEST(an_unknown_mode_is_refused)
{
    rig r;
    memset(&r, 0, sizeof r);
    if (!CHECK_EQ(sp_context_create(g_kind, 0, &r.ctx), SP_OK))
        return TEST_FAIL;
    mix_chain_init(&r.chain, IN_REC, 0, NULL, 1);
    sp_pipeline_config cfg = mix_chain_config(&r.chain, CHUNK, DEPTH);
    cfg.graph = (sp_graph_mode)7;
    CHECK_EQ(sp_pipeline_create(r.ctx, &cfg, &r.p), SP_ERR_INVALID_ARGUMENT);
    CHECK_HAS(sp_context_last_error(r.ctx), "graph");
    CHECK(r.p == NULL);
    sp_context_destroy(r.ctx);
    return TEST_OK;
}

#ifdef SP_HAVE_CUDA
/* A stage that synchronizes its stream: legal (if slow) in stream mode, not in a capture. */
static sp_status syncing_stage(const sp_chunk *c, void *user)
{
    (void)cudaStreamSynchronize((cudaStream_t)c->stream); /* fails during a capture */
    mix_stage *m = user;
    int err = sp_test_mix_cuda(c->in, c->out, c->records, m->in_rec, m->out_rec, m->salt, 0,
                               c->stream);
    return err == 0 ? SP_OK : SP_ERR_BACKEND;
}
#endif

/* CUDA refuses the capture of a stage that synchronizes; the reason is CUDA's own. */
TEST(a_stage_cuda_cannot_capture_falls_back)
{
#ifndef SP_HAVE_CUDA
    harness_skip_reason("built without CUDA");
    return TEST_SKIP;
#else
    if (g_kind != SP_BACKEND_CUDA) {
        harness_skip_reason("a CUDA capture rule");
        return TEST_SKIP;
    }
    test_rng rng;
    rng_init(&rng, harness_seed() + 4);
    rig r;
    if (!rig_open(&r, SP_GRAPH_ON, CHUNK, 1))
        return TEST_FAIL;
    sp_pipeline_destroy(r.p);
    r.p = NULL;
    r.chain.descs[0].cuda = syncing_stage;
    sp_pipeline_config cfg = mix_chain_config(&r.chain, CHUNK, DEPTH);
    cfg.graph = SP_GRAPH_ON;
    sp_report rep;
    if (CHECK_EQ(sp_pipeline_create(r.ctx, &cfg, &r.p), SP_OK) &&
        checked_run(&r, MEM_PINNED, MEM_PINNED, CHUNK * 8, &rep, &rng)) {
        CHECK_EQ(rep.graph, 0);
        CHECK_HAS(rep.notes, "graph mode off");
    }
    rig_close(&r);
    return TEST_OK;
#endif
}

static const test_case tests[] = {
    TEST_ENTRY(replays_follow_recycled_host_memory),
    TEST_ENTRY(failures_fall_back_to_stream_mode),
    TEST_ENTRY(a_stage_that_depends_on_the_chunk_is_caught),
    TEST_ENTRY(stream_chunks_after_groups_wait_for_them),
    TEST_ENTRY(a_window_sliding_by_one_chunk),
    TEST_ENTRY(groups_of_every_size),
    TEST_ENTRY_T(every_failed_call_fails_or_falls_back, 600),
    TEST_ENTRY(a_check_whose_syncs_fail_waits_for_its_queue),
    TEST_ENTRY(auto_chooses_by_chunk_size),
    TEST_ENTRY(an_unknown_mode_is_refused),
    TEST_ENTRY(a_stage_cuda_cannot_capture_falls_back),
};

int main(int argc, char **argv)
{
    return run_tests_on_backend(argc, argv, tests, ARRAY_LEN(tests), &g_kind);
}
