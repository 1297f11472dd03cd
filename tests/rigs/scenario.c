/* Running one scenario and checking every byte and every countable report figure. */
#include "scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t shape_in[SHAPES] = {4, 1, 12};
static const size_t shape_out[SHAPES][CHAIN_MAX] = {
    {12, 3, 8, 8}, {7, 16, 5, 2}, {3, 8, 64, 13}};
/* For in-place runs: in_rec 8, and the last stage comes back to 8. */
static const size_t in_place_out[CHAIN_MAX + 1][CHAIN_MAX] = {
    {0, 0, 0, 0}, {8, 0, 0, 0}, {12, 8, 0, 0}, {3, 64, 8, 0}, {12, 3, 5, 8}};

void scenario_shape(scenario *sc, unsigned shape)
{
    sc->in_rec = shape_in[shape % SHAPES];
    memcpy(sc->out_recs, shape_out[shape % SHAPES], sizeof sc->out_recs);
}

void scenario_shape_in_place(scenario *sc)
{
    sc->in_rec = 8;
    memcpy(sc->out_recs, in_place_out[sc->n_stages], sizeof sc->out_recs);
    sc->in_place = 1;
    sc->out_kind = sc->in_kind;
}

void scenario_describe(const scenario *sc, const char *prefix)
{
    char recs[64];
    int len = snprintf(recs, sizeof recs, "%zu", sc->in_rec);
    for (size_t s = 0; s < sc->n_stages && len > 0 && (size_t)len < sizeof recs; s++)
        len += snprintf(recs + len, sizeof recs - (size_t)len, "->%zu", sc->out_recs[s]);
    harness_context("%s n=%zu chunk=%zu depth=%u stages=%zu records=%s in=%s out=%s%s%s "
                    "staging_threads=%u streams=%u piece=%zu%s%s",
                    prefix, sc->n, sc->chunk, sc->depth, sc->n_stages, recs,
                    mem_kind_name(sc->in_kind), mem_kind_name(sc->out_kind),
                    sc->in_place ? " in-place" : "", sc->serial ? " serial" : "",
                    sc->staging_threads, sc->streams, sc->copy_piece_bytes,
                    sc->no_report ? " no-report" : "",
                    sc->copy_by_kernel ? " kernel-copies" : "");
}

/* ---- buffers ----------------------------------------------------------------------------- */

typedef struct io_bufs {
    test_buf in, out;          /* out unused in place */
    unsigned char *expected;   /* the reference output */
    unsigned char *input_copy; /* to prove the input was not written */
} io_bufs;

static void io_free(io_bufs *io)
{
    buf_free(&io->in);
    buf_free(&io->out);
    free(io->expected);
    free(io->input_copy);
}

static int io_alloc(io_bufs *io, sp_context *ctx, const scenario *sc, size_t out_rec)
{
    size_t in_bytes = sc->n * sc->in_rec, out_bytes = sc->n * out_rec;
    memset(io, 0, sizeof *io);
    sp_status st = buf_alloc(&io->in, ctx, sc->in_kind, in_bytes);
    if (!CHECK_STATUS(st, SP_OK, sp_context_last_error(ctx)))
        return 0;
    if (!sc->in_place) {
        st = buf_alloc(&io->out, ctx, sc->out_kind, out_bytes);
        if (!CHECK_STATUS(st, SP_OK, sp_context_last_error(ctx))) {
            io_free(io);
            return 0;
        }
    }
    io->expected = malloc(out_bytes + 1);
    io->input_copy = malloc(in_bytes + 1);
    if (!CHECK(io->expected != NULL && io->input_copy != NULL)) {
        io_free(io);
        return 0;
    }
    return 1;
}

/* ---- the report -------------------------------------------------------------------------- */

static const sp_engine_report *find_engine(const sp_report *rep, const char *name)
{
    for (size_t e = 0; e < rep->n_engines && e < SP_MAX_ENGINES; e++)
        if (strcmp(rep->engines[e].name, name) == 0)
            return &rep->engines[e];
    return NULL;
}

static void check_engine(const sp_report *rep, const char *name, sp_engine_kind kind,
                         size_t bytes)
{
    const sp_engine_report *e = find_engine(rep, name);
    if (!CHECK_MSG(e != NULL, "report has no engine named \"%s\"", name))
        return;
    CHECK_EQ(e->kind, kind);
    CHECK_EQ(e->bytes, bytes);
    CHECK(e->busy_s >= 0.0 && e->max_chunk_s >= 0.0 && e->max_chunk_s <= e->busy_s * 1.0001);
}

/* Chunks per graph at this depth (submit_graph.c): the largest power of two up to 16 that
 * divides it and leaves two groups. */
static size_t graph_group(size_t depth)
{
    size_t g = 16;
    while (g > 1 && (depth % g != 0 || depth / g < 2))
        g /= 2;
    return g;
}

static void check_depth(const sp_report *rep, const scenario *sc)
{
    if (sc->depth == 0)
        CHECK(rep->depth >= 1 && rep->depth <= SP_MAX_DEPTH);
    else if (rep->chunks >= sc->depth)
        CHECK_EQ(rep->depth, sc->depth);
    else /* a ring deeper than the run has chunks may be trimmed */
        CHECK(rep->depth >= 1 && rep->depth <= sc->depth);
}

static void check_engines(const sp_report *rep, const scenario *sc, const mix_chain *chain,
                          int serial)
{
    size_t out_rec = mix_chain_out_rec(chain);
    CHECK(rep->n_engines >= sc->n_stages + 2 && rep->n_engines <= SP_MAX_ENGINES);
    check_engine(rep, "h2d", SP_ENGINE_H2D, sc->n * sc->in_rec);
    check_engine(rep, "d2h", SP_ENGINE_D2H, sc->n * out_rec);
    for (size_t s = 0; s < chain->n_stages; s++)
        check_engine(rep, chain->stages[s].name, SP_ENGINE_COMPUTE,
                     sc->n * chain->stages[s].in_rec);
    /* The library names the host's two staging directions together (one thread drives both),
     * as the header's "engine" does not say; accepted while staging is active. */
    int staging_total = (rep->staged_in || rep->staged_out) &&
                        strncmp(rep->bottleneck, "host staging", sizeof rep->bottleneck) == 0;
    CHECK_MSG(staging_total || find_engine(rep, rep->bottleneck) != NULL,
              "bottleneck \"%.32s\" is no engine", rep->bottleneck);
    if (serial)
        return;
    CHECK_EQ(rep->staged_in, sc->in_kind == MEM_PAGEABLE);
    CHECK_EQ(rep->staged_out, sc->out_kind == MEM_PAGEABLE);
    if (rep->staged_in)
        check_engine(rep, "stage-in", SP_ENGINE_STAGE_IN, sc->n * sc->in_rec);
    if (rep->staged_out)
        check_engine(rep, "stage-out", SP_ENGINE_STAGE_OUT, sc->n * out_rec);
}

static int g_graph; /* scenario_set_graph */

void scenario_set_graph(int on) { g_graph = on; }
int scenario_graph(void) { return g_graph; }

int scenario_graph_replays(const scenario *sc)
{
    return !sc->copy_by_kernel || (sc->in_kind == MEM_PAGEABLE && sc->out_kind == MEM_PAGEABLE);
}

static void check_report(const sp_report *rep, const scenario *sc, const mix_chain *chain,
                         int serial)
{
    CHECK_EQ(rep->records, sc->n);
    if (sc->n == 0) {
        CHECK_EQ(rep->chunks, 0);
        return;
    }
    size_t chunk = sc->chunk != 0 ? sc->chunk : rep->chunk_records;
    if (!CHECK(chunk > 0))
        return;
    CHECK_EQ(rep->chunks, (sc->n + chunk - 1) / chunk);
    if (sc->n >= chunk)
        CHECK_EQ(rep->chunk_records, chunk);
    else /* one short chunk: either figure is honest */
        CHECK(rep->chunk_records == chunk || rep->chunk_records == sc->n);
    check_depth(rep, sc);
    CHECK(rep->makespan_s > 0.0);
    if (g_graph && !serial && sc->n >= chunk && !scenario_graph_replays(sc)) {
        /* a replay cannot follow kernel copies to each chunk's memory: stream mode, noted */
        CHECK_MSG(rep->graph == 0 && strstr(rep->notes, "kernel copies") != NULL,
                  "graph %d with kernel copies of the user's memory (notes: %.256s)",
                  rep->graph, rep->notes);
    } else if (g_graph && !serial && rep->graph) { /* no per-operation times */
        CHECK_MSG(strstr(rep->notes, "graph mode off") == NULL, "notes: %.256s", rep->notes);
        CHECK_EQ(rep->n_engines, 0);
        return;
    } else if (g_graph && !serial) {
        /* a graph holds a group of chunks: a group's worth of full chunks always makes a
         * replay, fewer may not */
        CHECK_MSG(sc->n < graph_group(rep->depth) * chunk &&
                      strstr(rep->notes, "graph mode") != NULL,
                  "no graph for %zu records in chunks of %zu (notes: %.256s)", sc->n, chunk,
                  rep->notes);
    }
    check_engines(rep, sc, chain, serial);
}

/* ---- runs -------------------------------------------------------------------------------- */

static void check_stage_calls(const mix_chain *chain, size_t chunks)
{
    for (size_t s = 0; s < chain->n_stages; s++)
        CHECK_MSG(atomic_load(&chain->stages[s].calls) == chunks,
                  "stage %s called %lu times for %zu chunks", chain->stages[s].name,
                  atomic_load(&chain->stages[s].calls), chunks);
    CHECK_EQ(mix_chain_violations(chain), 0);
}

static sp_status run_pipeline(sp_pipeline *p, const void *in, size_t n, void *out,
                              sp_report *rep, int serial)
{
    return serial ? sp_pipeline_run_serial(p, in, n, out, rep)
                  : sp_pipeline_run(p, in, n, out, rep);
}

/* Bytes past the run's output that must still hold the poison. */
static void check_tail_untouched(const test_buf *out, size_t from, unsigned char poison)
{
    for (size_t i = from; i < out->bytes; i++)
        if (!CHECK_MSG(out->data[i] == poison, "byte %zu past the output was written", i - from))
            return;
}

/* Run `run` of sc, moving sc->n records (the caller sets sc->n for this run). */
static void run_once(sp_pipeline *p, mix_chain *chain, const scenario *sc, io_bufs *io,
                     int run, int serial, test_rng *rng)
{
    test_buf *out = sc->in_place ? &io->in : &io->out;
    size_t in_bytes = sc->n * sc->in_rec, out_rec = mix_chain_out_rec(chain);
    unsigned char poison = run % 2 == 0 ? 0xA5 : 0x5A;
    sp_report rep, *rp = (run % 2 == 0 || sc->chunk == 0) && !sc->no_report ? &rep : NULL;

    rng_fill(rng, io->in.data, io->in.bytes);
    memcpy(io->input_copy, io->in.data, io->in.bytes);
    mix_reference_run(chain->stages, chain->n_stages, sc->in_rec, io->in.data, sc->n,
                      sp_pipeline_chunk_records(p, sc->n), io->expected);
    if (!sc->in_place)
        buf_poison(out, poison);
    memset(&rep, 0xFF, sizeof rep); /* every figure checked must have been written */
    mix_chain_arm(chain, sc->chunk);

    sp_status st = run_pipeline(p, io->in.data, sc->n, out->data, rp, serial);
    if (!CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(p)))
        return;
    compare_records(io->expected, out->data, sc->n, out_rec, "output");
    CHECK(buf_guards_intact(&io->in));
    CHECK(buf_guards_intact(out));
    if (sc->in_place) {
        CHECK_MSG(memcmp(io->input_copy + in_bytes, io->in.data + in_bytes,
                         io->in.bytes - in_bytes) == 0, "the run wrote past its records");
    } else {
        CHECK_MSG(memcmp(io->input_copy, io->in.data, io->in.bytes) == 0,
                  "the run wrote into its input");
        check_tail_untouched(out, sc->n * out_rec, poison);
    }
    if (rp != NULL)
        check_report(rp, sc, chain, serial);
    size_t chunk = sc->chunk != 0 ? sc->chunk : (rp != NULL ? rp->chunk_records : 1);
    if (!g_graph || serial) /* replays do not call the stage functions */
        check_stage_calls(chain, sc->n == 0 ? 0 : (sc->n + chunk - 1) / chunk);
    else
        CHECK_EQ(mix_chain_violations(chain), 0);
}

static void run_all(sp_pipeline *p, mix_chain *chain, const scenario *sc, io_bufs *io,
                    test_rng *rng)
{
    int runs = sc->runs > 0 ? sc->runs : 2;
    for (int r = 0; r < runs; r++) {
        scenario this_run = *sc;
        if (sc->run_sizes != NULL) {
            this_run.n = sc->run_sizes[r];
            scenario_describe(&this_run, "run");
        }
        run_once(p, chain, &this_run, io, r, sc->serial && r == runs - 1, rng);
    }
}

void scenario_run(sp_context *ctx, const scenario *sc, test_rng *rng)
{
    mix_chain chain;
    mix_chain_init(&chain, sc->in_rec, sc->n_stages, sc->out_recs, (uint32_t)rng_next(rng));
    for (size_t s = 0; s < sc->n_stages; s++)
        chain.descs[s].streams = sc->streams;
    if (g_graph)
        mix_chain_position_free(&chain);
    sp_pipeline_config cfg = mix_chain_config(&chain, sc->chunk, sc->depth);
    cfg.graph = g_graph ? SP_GRAPH_ON : SP_GRAPH_OFF;
    cfg.staging_threads = sc->staging_threads;
    cfg.copy_piece_bytes = sc->copy_piece_bytes;
    cfg.copy_by_kernel = sc->copy_by_kernel;
    sp_pipeline *p = NULL;
    sp_status st = sp_pipeline_create(ctx, &cfg, &p);
    if (!CHECK_STATUS(st, SP_OK, sp_context_last_error(ctx)))
        return;
    CHECK_EQ(sp_pipeline_out_record_bytes(p), mix_chain_out_rec(&chain));
    io_bufs io;
    if (io_alloc(&io, ctx, sc, mix_chain_out_rec(&chain))) {
        run_all(p, &chain, sc, &io, rng);
        io_free(&io);
    }
    sp_pipeline_destroy(p);
}

sp_status check_pipeline_run(sp_pipeline *p, const mix_stage *stages, size_t n_stages,
                             size_t in_rec, size_t n, test_rng *rng)
{
    size_t out_rec = n_stages > 0 ? stages[n_stages - 1].out_rec : in_rec;
    unsigned char *in = malloc(n * in_rec + 1), *out = malloc(n * out_rec + 1);
    unsigned char *want = malloc(n * out_rec + 1);
    sp_status st = SP_ERR_OUT_OF_MEMORY;
    if (CHECK(in != NULL && out != NULL && want != NULL)) {
        rng_fill(rng, in, n * in_rec);
        mix_reference(stages, n_stages, in_rec, in, n, 0, want);
        memset(out, 0xA5, n * out_rec);
        st = sp_pipeline_run(p, in, n, out, NULL);
        if (CHECK_STATUS(st, SP_OK, sp_pipeline_last_error(p)))
            compare_records(want, out, n, out_rec, "output");
    }
    free(in);
    free(out);
    free(want);
    return st;
}
