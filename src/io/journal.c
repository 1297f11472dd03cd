/* The journal's bytes (journal.h): encoding and checking, no files. */
#include <string.h>

#include "io/journal.h"

static const char magic[8] = {'S', 'P', 'J', 'R', 'N', 'L', '0', '1'};

uint64_t sp_journal_hash(uint64_t h, const void *bytes, size_t n)
{
    const unsigned char *p = bytes;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* A cursor over a buffer that stops (ok = 0) instead of running past its end. */
typedef struct cursor {
    unsigned char *w;
    const unsigned char *r;
    size_t at, cap;
    int ok;
} cursor;

static void put(cursor *c, const void *bytes, size_t n)
{
    if (!c->ok || n > c->cap - c->at) {
        c->ok = 0;
        return;
    }
    memcpy(c->w + c->at, bytes, n);
    c->at += n;
}

static void put_u(cursor *c, uint64_t v, size_t bytes)
{
    unsigned char le[8];
    for (size_t i = 0; i < bytes; i++)
        le[i] = (unsigned char)(v >> (8 * i));
    put(c, le, bytes);
}

static const unsigned char *take(cursor *c, size_t n)
{
    if (!c->ok || n > c->cap - c->at) {
        c->ok = 0;
        return NULL;
    }
    const unsigned char *p = c->r + c->at;
    c->at += n;
    return p;
}

static uint64_t take_u(cursor *c, size_t bytes)
{
    const unsigned char *p = take(c, bytes);
    uint64_t v = 0;
    for (size_t i = 0; p && i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

size_t sp_journal_header_encode(const sp_journal_id *id, unsigned char *buf, size_t cap,
                                uint64_t *key)
{
    if (id->tag_len > SP_JOURNAL_TEXT_MAX || id->name_len > SP_JOURNAL_TEXT_MAX)
        return 0;
    size_t bytes = sizeof magic + 8 * 9 + 4 * 3 + id->tag_len + id->name_len + 8;
    cursor c = {.w = buf, .cap = cap, .ok = 1};
    put(&c, magic, sizeof magic);
    const uint64_t words[] = {bytes, id->input_size, id->input_mtime_s, id->input_mtime_ns,
                              id->input_hash, id->in_record_bytes, id->out_record_bytes,
                              id->n_records, id->out_bytes};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        put_u(&c, words[i], 8);
    put_u(&c, id->format, 4);
    put_u(&c, id->tag_len, 4);
    put(&c, id->tag, id->tag_len);
    put_u(&c, id->name_len, 4);
    put(&c, id->temp_name, id->name_len);
    *key = sp_journal_hash(SP_JOURNAL_HASH_SEED, buf, c.ok ? c.at : 0);
    put_u(&c, *key, 8);
    return c.ok && c.at == bytes ? bytes : 0;
}

size_t sp_journal_header_decode(const unsigned char *buf, size_t n, sp_journal_id *id,
                                uint64_t *key)
{
    cursor c = {.r = buf, .cap = n, .ok = 1};
    const unsigned char *m = take(&c, sizeof magic);
    if (!m || memcmp(m, magic, sizeof magic) != 0)
        return 0;
    uint64_t bytes = take_u(&c, 8);
    id->input_size = take_u(&c, 8);
    id->input_mtime_s = take_u(&c, 8);
    id->input_mtime_ns = take_u(&c, 8);
    id->input_hash = take_u(&c, 8);
    id->in_record_bytes = take_u(&c, 8);
    id->out_record_bytes = take_u(&c, 8);
    id->n_records = take_u(&c, 8);
    id->out_bytes = take_u(&c, 8);
    id->format = (uint32_t)take_u(&c, 4);
    id->tag_len = (size_t)take_u(&c, 4);
    id->tag = (const char *)take(&c, id->tag_len);
    id->name_len = (size_t)take_u(&c, 4);
    id->temp_name = (const char *)take(&c, id->name_len);
    size_t summed = c.at;
    *key = take_u(&c, 8);
    if (!c.ok || bytes != c.at || *key != sp_journal_hash(SP_JOURNAL_HASH_SEED, buf, summed))
        return 0;
    return c.at;
}

static uint64_t record_sum(uint64_t key, uint64_t first, uint64_t end)
{
    unsigned char both[16];
    for (size_t i = 0; i < 8; i++) {
        both[i] = (unsigned char)(first >> (8 * i));
        both[8 + i] = (unsigned char)(end >> (8 * i));
    }
    return sp_journal_hash(key, both, sizeof both);
}

void sp_journal_record_encode(uint64_t key, size_t first, size_t end,
                              unsigned char out[SP_JOURNAL_RECORD_BYTES])
{
    cursor c = {.w = out, .cap = SP_JOURNAL_RECORD_BYTES, .ok = 1};
    put_u(&c, first, 8);
    put_u(&c, end, 8);
    put_u(&c, record_sum(key, first, end), 8);
}

int sp_journal_record_decode(uint64_t key, const unsigned char in[SP_JOURNAL_RECORD_BYTES],
                             uint64_t n_records, size_t *first, size_t *end)
{
    cursor c = {.r = in, .cap = SP_JOURNAL_RECORD_BYTES, .ok = 1};
    uint64_t a = take_u(&c, 8), b = take_u(&c, 8), sum = take_u(&c, 8);
    if (sum != record_sum(key, a, b) || a >= b || b > n_records)
        return 0;
    *first = (size_t)a;
    *end = (size_t)b;
    return 1;
}
