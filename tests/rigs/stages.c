/* Host side of the mix test stages, and the reference for whole chains of them. */
#include "stages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FNV_OFFSET 2166136261u
#define FNV_PRIME 16777619u

/* Kept in step with the device copy in stages_cuda.cu. */
static uint32_t record_hash(const uint8_t *in, size_t n, uint32_t salt, uint64_t index)
{
    uint32_t h = FNV_OFFSET ^ salt;
    for (unsigned k = 0; k < 8; k++)
        h = (h ^ (uint8_t)(index >> (8 * k))) * FNV_PRIME;
    for (size_t i = 0; i < n; i++)
        h = (h ^ in[i]) * FNV_PRIME;
    return h;
}

static uint8_t spread_byte(uint32_t h, size_t j)
{
    uint32_t x = h + (uint32_t)j * 0x9e3779b9u;
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    x ^= x >> 16;
    return (uint8_t)x;
}

void mix_record(const uint8_t *in, size_t in_rec, uint8_t *out, size_t out_rec, uint32_t salt,
                uint64_t index)
{
    uint32_t h = record_hash(in, in_rec, salt, index); /* read all before writing: in == out ok */
    for (size_t j = 0; j < out_rec; j++)
        out[j] = spread_byte(h, j);
}

void mix_stage_init(mix_stage *m, const char *name, size_t in_rec, size_t out_rec,
                    uint32_t salt)
{
    snprintf(m->name, sizeof m->name, "%s", name);
    m->in_rec = in_rec;
    m->out_rec = out_rec;
    m->salt = salt;
    m->expect_chunk_records = 0;
    m->position_free = 0;
    atomic_init(&m->fail_chunk, -1);
    atomic_init(&m->calls, 0);
    atomic_init(&m->violations, 0);
}

void mix_stage_reset_counts(mix_stage *m)
{
    atomic_store(&m->calls, 0);
    atomic_store(&m->violations, 0);
}

static int ranges_overlap(const void *a, size_t a_len, const void *b, size_t b_len)
{
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return pa < pb + b_len && pb < pa + a_len;
}

/* Counts what breaks sp_chunk's contract; returns 0 when the chunk cannot be used at all. */
static int check_chunk(mix_stage *m, const sp_chunk *c, int on_cuda)
{
    int usable = c->records > 0 && c->in != NULL && c->out != NULL;
    int bad = !usable;
    size_t in_len = c->records * m->in_rec, out_len = c->records * m->out_rec;
    if (m->expect_chunk_records > 0)
        bad |= c->records > m->expect_chunk_records ||
               c->first_record != c->index * m->expect_chunk_records;
    if (ranges_overlap(c->in, in_len, c->out, out_len))
        bad |= !(c->in == c->out && m->in_rec == m->out_rec);
    bad |= on_cuda ? (uintptr_t)c->stream <= 2 /* NULL, legacy or per-thread default */
                   : c->stream != NULL;
    if (bad)
        atomic_fetch_add(&m->violations, 1);
    return usable;
}

static int should_fail(mix_stage *m, const sp_chunk *c)
{
    long k = atomic_load(&m->fail_chunk);
    return k >= 0 && (size_t)k == c->index;
}

static sp_status mix_host(const sp_chunk *c, void *user)
{
    mix_stage *m = user;
    atomic_fetch_add(&m->calls, 1);
    if (!check_chunk(m, c, 0) || should_fail(m, c))
        return SP_ERR_INVALID_ARGUMENT;
    const uint8_t *in = c->in;
    uint8_t *out = c->out;
    for (size_t r = 0; r < c->records; r++)
        mix_record(in + r * m->in_rec, m->in_rec, out + r * m->out_rec, m->out_rec, m->salt,
                   (m->position_free ? 0 : c->first_record) + r);
    return SP_OK;
}

#ifdef SP_HAVE_CUDA
static sp_status mix_cuda(const sp_chunk *c, void *user)
{
    mix_stage *m = user;
    atomic_fetch_add(&m->calls, 1);
    if (!check_chunk(m, c, 1) || should_fail(m, c))
        return SP_ERR_INVALID_ARGUMENT;
    int err = sp_test_mix_cuda(c->in, c->out, c->records, m->in_rec, m->out_rec, m->salt,
                               m->position_free ? 0 : c->first_record, c->stream);
    return err == 0 ? SP_OK : SP_ERR_BACKEND;
}
#endif

sp_status copy4_host(const sp_chunk *c, void *user)
{
    (void)user;
    memcpy(c->out, c->in, c->records * 4);
    return SP_OK;
}

sp_stage mix_stage_desc(mix_stage *m)
{
    sp_stage s;
    memset(&s, 0, sizeof s);
    s.name = m->name;
    s.out_record_bytes = m->out_rec;
    s.host = mix_host;
#ifdef SP_HAVE_CUDA
    s.cuda = mix_cuda;
#endif
    s.user = m;
    return s;
}

void mix_reference(const mix_stage *stages, size_t n_stages, size_t in_rec, const void *in,
                   size_t n_records, size_t first_record, void *out)
{
    const uint8_t *src = in;
    uint8_t *dst = out;
    size_t out_rec = n_stages > 0 ? stages[n_stages - 1].out_rec : in_rec;
    for (size_t r = 0; r < n_records; r++) {
        uint8_t a[MIX_MAX_RECORD], b[MIX_MAX_RECORD];
        memcpy(a, src + r * in_rec, in_rec);
        size_t cur = in_rec;
        for (size_t s = 0; s < n_stages; s++) {
            mix_record(a, cur, b, stages[s].out_rec, stages[s].salt, first_record + r);
            cur = stages[s].out_rec;
            memcpy(a, b, cur);
        }
        memcpy(dst + r * out_rec, a, out_rec);
    }
}

void mix_reference_run(const mix_stage *stages, size_t n_stages, size_t in_rec, const void *in,
                       size_t n_records, size_t chunk_records, void *out)
{
    if (n_stages == 0 || !stages[0].position_free || chunk_records == 0) {
        mix_reference(stages, n_stages, in_rec, in, n_records, 0, out);
        return;
    }
    size_t out_rec = stages[n_stages - 1].out_rec;
    for (size_t first = 0; first < n_records; first += chunk_records) {
        size_t n = n_records - first < chunk_records ? n_records - first : chunk_records;
        mix_reference(stages, n_stages, in_rec, (const uint8_t *)in + first * in_rec, n, 0,
                      (uint8_t *)out + first * out_rec);
    }
}

/* ---- chains ------------------------------------------------------------------------------ */

static const char *const chain_names[CHAIN_MAX] = {"alpha", "bravo", "charlie", "delta"};

void mix_chain_init(mix_chain *c, size_t in_rec, size_t n_stages, const size_t *out_recs,
                    uint32_t seed)
{
    memset(c, 0, sizeof *c);
    c->in_rec = in_rec;
    c->n_stages = n_stages;
    size_t cur = in_rec;
    for (size_t s = 0; s < n_stages; s++) {
        uint32_t salt = (seed + (uint32_t)s * 0x51ed27u) * 2654435761u;
        mix_stage_init(&c->stages[s], chain_names[s], cur, out_recs[s], salt);
        c->descs[s] = mix_stage_desc(&c->stages[s]);
        cur = out_recs[s];
    }
}

const char *mix_chain_name(size_t s) { return s < CHAIN_MAX ? chain_names[s] : "?"; }

size_t mix_chain_out_rec(const mix_chain *c)
{
    return c->n_stages > 0 ? c->stages[c->n_stages - 1].out_rec : c->in_rec;
}

void mix_chain_position_free(mix_chain *c)
{
    for (size_t s = 0; s < c->n_stages; s++)
        c->stages[s].position_free = 1;
}

sp_pipeline_config mix_chain_config(const mix_chain *c, size_t chunk_records, unsigned depth)
{
    sp_pipeline_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.in_record_bytes = c->in_rec;
    cfg.stages = c->n_stages > 0 ? c->descs : NULL;
    cfg.n_stages = c->n_stages;
    cfg.chunk_records = chunk_records;
    cfg.depth = depth;
    cfg.size = sizeof cfg;
    cfg.timeline = test_timeline_mode();
    return cfg;
}

sp_timeline_mode test_timeline_mode(void)
{
    const char *mode = getenv("SP_TEST_TIMELINE");
    return mode && strcmp(mode, "cupti") == 0 ? SP_TIMELINE_CUPTI : SP_TIMELINE_EVENTS;
}

void mix_chain_arm(mix_chain *c, size_t chunk_records)
{
    for (size_t s = 0; s < c->n_stages; s++) {
        c->stages[s].expect_chunk_records = chunk_records;
        mix_stage_reset_counts(&c->stages[s]);
    }
}

unsigned long mix_chain_violations(const mix_chain *c)
{
    unsigned long v = 0;
    for (size_t s = 0; s < c->n_stages; s++)
        v += atomic_load(&c->stages[s].violations);
    return v;
}
