/* The rig of the ring's decompression tests (ring_rig.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "harness.h"
#include "ring_rig.h"

static char dir[256];
static const char *made[16]; /* the files written, removed at close */
static size_t n_made;
static mix_chain chain;

static const char *at(const char *name)
{
    static char paths[4][512];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

int ring_rig_open(void)
{
    size_t outs[] = {OUT_REC};
    mix_chain_init(&chain, IN_REC, 1, outs, 7);
    snprintf(dir, sizeof dir, "/tmp/sp-ring-rig-XXXXXX");
    return CHECK(mkdtemp(dir) != NULL);
}

void ring_rig_close(void)
{
    for (size_t k = 0; k < n_made; k++)
        unlink(at(made[k]));
    n_made = 0;
    rmdir(dir);
}

mix_chain *ring_rig_chain(void) { return &chain; }

unsigned char *ring_rig_file(test_rng *rng, size_t n, const char *name)
{
    return ring_rig_file_noisy(rng, n, name, 0, 0, NULL);
}

unsigned char *ring_rig_file_noisy(test_rng *rng, size_t n, const char *name,
                                   size_t noisy_first, size_t noisy_frames, size_t *frame_bytes)
{
    unsigned char *in = malloc(n * IN_REC), *frame = malloc(ZSTD_compressBound(FRAME));
    for (size_t i = 0; in && i < n * IN_REC; i++)
        if (i / FRAME - noisy_first < noisy_frames) /* unsigned: below noisy_first wraps */
            in[i] = (unsigned char)rng_below(rng, 256);
        else
            in[i] = (i % 4 == 0 && rng_below(rng, 3) == 0) ? (unsigned char)rng_below(rng, 16)
                                                           : (i >= 4 ? in[i - 4] : 0);
    FILE *f = in && frame ? fopen(at(name), "wb") : NULL;
    int ok = f != NULL;
    if (ok && n_made < ARRAY_LEN(made))
        made[n_made++] = name;
    for (size_t at_byte = 0; ok && at_byte < n * IN_REC; at_byte += FRAME) {
        size_t len = n * IN_REC - at_byte < FRAME ? n * IN_REC - at_byte : FRAME;
        size_t bytes = ZSTD_compress(frame, ZSTD_compressBound(FRAME), in + at_byte, len, 1);
        ok = !ZSTD_isError(bytes) && fwrite(frame, 1, bytes, f) == bytes;
        if (frame_bytes)
            frame_bytes[at_byte / FRAME] = bytes;
    }
    if (f)
        ok = fclose(f) == 0 && ok;
    free(frame);
    if (!CHECK_MSG(ok, "writing %s", at(name))) {
        free(in);
        return NULL;
    }
    return in;
}

sp_pipeline *ring_rig_pipeline(sp_context *ctx, size_t chunk_records, unsigned depth,
                               size_t max_pinned, size_t max_device)
{
    sp_pipeline_config cfg = mix_chain_config(&chain, chunk_records, depth);
    cfg.max_pinned_bytes = max_pinned;
    cfg.max_device_bytes = max_device;
    cfg.staging_threads = 2;
    sp_pipeline *p = NULL;
    CHECK_STATUS(sp_pipeline_create(ctx, &cfg, &p), SP_OK, sp_context_last_error(ctx));
    return p;
}

/* The output file against the reference of the records from `first` on. */
static void check_output(const unsigned char *in, size_t n, size_t first, const char *name)
{
    unsigned char *want = malloc(n * OUT_REC), *got = malloc(n * OUT_REC + 1);
    FILE *out = want && got ? fopen(at("out.bin"), "rb") : NULL;
    if (CHECK(out != NULL) && CHECK_EQ(fread(got, 1, n * OUT_REC + 1, out), n * OUT_REC)) {
        /* the range's records are numbered from its start, as the stages see them */
        mix_reference(chain.stages, chain.n_stages, IN_REC, in + first * IN_REC, n - first, 0,
                      want);
        CHECK_EQ(compare_records(want, got + first * OUT_REC, n - first, OUT_REC, name), 0);
    }
    if (out)
        fclose(out);
    free(want);
    free(got);
}

int ring_rig_run(sp_pipeline *p, const char *name, const unsigned char *in, size_t n,
                 size_t first, int decompress, sp_status want, chunk_run *r)
{
    sp_file_io_config c = SP_FILE_IO_CONFIG_INIT;
    c.input = at(name);
    c.output = at("out.bin");
    c.in_record_bytes = IN_REC;
    c.out_record_bytes = OUT_REC;
    c.first_record = first;
    c.n_records = n - first;
    c.decompress = decompress;
    sp_file_io *f = NULL;
    memset(r, 0, sizeof *r);
    int ok = p && CHECK_STATUS(sp_file_io_open(&c, &f), SP_OK, sp_file_io_last_error(f)) &&
             CHECK_STATUS(sp_pipeline_run_io(p, sp_file_io_get(f), &r->report), want,
                          sp_pipeline_last_error(p)) &&
             CHECK_EQ(sp_pipeline_tune_changes(p, r->change, 4, &r->changes, NULL), SP_OK);
    int ran = ok && want == SP_OK;
    if (ran)
        ran = CHECK_STATUS(sp_file_io_commit(f), SP_OK, sp_file_io_last_error(f)) &&
              CHECK_EQ(sp_file_io_input_get(f, &r->in), SP_OK);
    if (ran)
        check_output(in, n, first, name);
    sp_file_io_close(f);
    unlink(at("out.bin"));
    if (ran && !first && decompress == SP_DECOMPRESS_RING) { /* every chunk in the ring */
        CHECK_EQ(r->in.staging_chunks, 0);
        CHECK_EQ(r->in.ring_chunks, r->report.chunks);
        CHECK_EQ(r->in.ring_blocks, (n + PER - 1) / PER);
    }
    return ok;
}
