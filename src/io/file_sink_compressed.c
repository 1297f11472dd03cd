/* The compressed output (compressed_sink.h): each piece compressed on the staging thread that
 * writes it, in parallel with the others, into one whole frame of its own (encode.h: LZ4 or
 * Zstandard, each with its content size and checksum), then appended in record order, so the
 * file is the pieces' frames concatenated. A piece that comes
 * before its turn is held (compressed) until the pieces before it are appended; whichever
 * thread appends the piece whose turn it is appends the held ones that follow. No thread
 * waits for another, so the staging threads cannot block each other; what is held is bounded
 * by the ring's chunks in flight. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/compressed_sink.h"
#include "io/encode.h"
#include "io/file_io.h"

/* A compressed piece that came before its turn. */
typedef struct held_piece {
    size_t first, records;
    unsigned char *bytes;
    sp_encoded enc;
    size_t raw_bytes;
    struct held_piece *next; /* by first record */
} held_piece;

struct sp_compressed_sink {
    int format;
    pthread_mutex_t lock;    /* all below */
    size_t next_record;      /* the run's records appended so far: the next turn */
    uint64_t at;             /* bytes in the output */
    held_piece *held;
    sp_file_io_output fig;   /* the figures (format, bytes, blocks, time) */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* n bytes at the output's end (pwrite at s->at for a file, write() for a pipe or a tty):
 * 0, or the errno (ENOSPC for a device that takes no more). Under the lock. */
static int append(sp_file_io *f, sp_compressed_sink *s, const void *src, size_t n)
{
    for (size_t put = 0; put < n;) {
        ssize_t w = f->positional ? pwrite(f->out_fd, (const char *)src + put, n - put,
                                           (off_t)(s->at + put))
                                  : write(f->out_fd, (const char *)src + put, n - put);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : ENOSPC;
        put += (size_t)w;
    }
    s->at += n;
    return 0;
}

static sp_status append_failed(sp_file_io *f, const sp_compressed_sink *s, int err)
{
    if (err == ENOSPC || err == EDQUOT)
        return sp_file_io_fail_io(f, "writing '%s': no space left at byte %llu (%s)",
                                  f->output, (unsigned long long)s->at, strerror(err));
    return sp_file_io_fail_io(f, "writing '%s': %s", f->output, strerror(err));
}

sp_status sp_compressed_sink_open(sp_file_io *f, int format)
{
    char why[256];
    if (sp_encode_available(why, sizeof why) != SP_OK)
        return sp_file_io_fail(f, SP_ERR_UNSUPPORTED, "a compressed output for '%s': %s",
                               f->output, why);
    sp_compressed_sink *s = calloc(1, sizeof *s);
    if (!s)
        return sp_file_io_fail(f, SP_ERR_OUT_OF_MEMORY, "no memory for the compressed output");
    pthread_mutex_init(&s->lock, NULL);
    s->format = s->fig.format = format;
    sp_compressed_sink_where(s, 1);
    f->sink = s;
    return SP_OK;
}

void sp_compressed_sink_where(sp_compressed_sink *s, int parallel)
{
    snprintf(s->fig.note, sizeof s->fig.note, "compressed on the host's %s (%s), %s",
             parallel ? "staging threads" : "run thread, in order (a sequential sp_io)",
             s->format == SP_INPUT_FORMAT_LZ4 ? "liblz4" : "libzstd",
             s->format == SP_INPUT_FORMAT_LZ4 ? "a frame per piece, of independent 4 MiB "
                                                "blocks, with its size and checksums"
                                              : "a frame per piece with its size and checksum");
}

static void free_piece(held_piece *p)
{
    if (p)
        free(p->bytes);
    free(p);
}

static void hold(sp_compressed_sink *s, held_piece *p)
{
    held_piece **at = &s->held;
    while (*at && (*at)->first < p->first)
        at = &(*at)->next;
    p->next = *at;
    *at = p;
}

/* Appends the held pieces whose turn has come, in order. Under the lock. */
static sp_status drain(sp_file_io *f, sp_compressed_sink *s)
{
    while (s->held && s->held->first == s->next_record) {
        held_piece *p = s->held;
        int err = append(f, s, p->bytes, p->enc.bytes);
        if (err)
            return append_failed(f, s, err); /* held: next_record stays, nothing after it */
        s->held = p->next;
        s->next_record += p->records;
        s->fig.stream_bytes += p->raw_bytes;
        s->fig.blocks += p->enc.blocks;
        s->fig.blocks_stored += p->enc.stored;
        s->fig.frames += p->enc.frames;
        atomic_fetch_add(&f->written, p->records);
        free_piece(p);
    }
    return SP_OK;
}

sp_status sp_compressed_sink_write(sp_file_io *f, const void *src, size_t first,
                                   size_t records)
{
    sp_compressed_sink *s = f->sink;
    size_t raw = records * f->out_record_bytes; /* fits: the span was checked */
    size_t room = sp_encode_bound(s->format, raw);
    held_piece *p = calloc(1, sizeof *p);
    if (p && room)
        p->bytes = malloc(room);
    if (!p || !p->bytes) {
        free_piece(p);
        return sp_file_io_fail_io(f, "writing '%s': no memory to compress records %zu..+%zu",
                                  f->output, first, records);
    }
    char why[256];
    double t0 = now_s();
    sp_status st = sp_encode_piece(s->format, src, raw, p->bytes, room, &p->enc, why,
                                   sizeof why);
    double took = now_s() - t0;
    if (st != SP_OK) {
        free_piece(p);
        return sp_file_io_fail_io(f, "writing '%s': records %zu..+%zu: %s", f->output, first,
                                  records, why);
    }
    p->first = first, p->records = records, p->raw_bytes = raw;
    pthread_mutex_lock(&s->lock);
    s->fig.compress_s += took;
    hold(s, p);
    st = drain(f, s);
    pthread_mutex_unlock(&s->lock);
    return st;
}

static void drop_held(sp_compressed_sink *s)
{
    while (s->held) {
        held_piece *p = s->held;
        s->held = p->next;
        free_piece(p);
    }
}

sp_status sp_compressed_sink_reset(sp_file_io *f)
{
    sp_compressed_sink *s = f->sink;
    pthread_mutex_lock(&s->lock);
    drop_held(s);
    int appended = s->next_record > 0;
    pthread_mutex_unlock(&s->lock);
    return appended ? sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "the compressed output '%s' "
                                      "was written already: it is written once, in order "
                                      "(open it again to start over)", f->output)
                    : SP_OK;
}

/* No results at all: one empty frame, so that lz4 -d and zstd -d read an empty file as empty
 * (zstd calls a file of no bytes truncated). */
static int empty_frame(sp_file_io *f, sp_compressed_sink *s)
{
    static const unsigned char nothing[1];
    unsigned char frame[64];
    sp_encoded enc;
    char why[128];
    if (sp_encode_piece(s->format, nothing, 0, frame, sizeof frame, &enc, why, sizeof why) !=
        SP_OK)
        return EINVAL;
    s->fig.frames = 1;
    return append(f, s, frame, enc.bytes);
}

/* Every piece is a whole frame already: only an output of no results needs one. */
sp_status sp_compressed_sink_finish(sp_file_io *f)
{
    sp_compressed_sink *s = f->sink;
    int err = s->fig.frames == 0 ? empty_frame(f, s) : 0;
    return err ? sp_file_io_fail(f, SP_ERR_BACKEND, "cannot write the output '%s': %s%s",
                                 f->output, strerror(err),
                                 err == ENOSPC ? " (no space left)" : "")
               : SP_OK;
}

void sp_compressed_sink_figures(sp_compressed_sink *s, sp_file_io_output *out)
{
    pthread_mutex_lock(&s->lock);
    *out = s->fig;
    out->file_bytes = s->at;
    pthread_mutex_unlock(&s->lock);
}

void sp_compressed_sink_free(sp_compressed_sink *s)
{
    if (!s)
        return;
    drop_held(s);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
