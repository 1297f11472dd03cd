/* Stream inputs (streampipe_io.h, "Stream inputs"; config.input_is_fd): a descriptor read in
 * order until it ends, stdin or a pipe, with no size and no offsets. The open takes a duplicate
 * and, for input_format AUTO, its first four bytes to refuse a compressed stream; the reads,
 * on the run's thread alone (the sp_io is sequential), give whole records as they come. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/block_index.h"
#include "io/file_io.h"

/* A descriptor in non-blocking mode has nothing yet: wait until it has. */
static void wait_readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    (void)poll(&p, 1, -1);
}

/* A stream's first four bytes (fewer if it ends first), kept for the first read: an LZ4 or
 * Zstandard magic there (AUTO) is refused rather than read as records. */
static sp_status peek_stream(sp_file_io *f)
{
    while (f->head_len < sizeof f->stream_head) {
        ssize_t n = read(f->in_fd, f->stream_head + f->head_len,
                         sizeof f->stream_head - f->head_len);
        if (n < 0 && errno == EAGAIN) {
            wait_readable(f->in_fd);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return sp_file_io_fail(f, SP_ERR_BACKEND, "cannot read the input '%s': %s",
                                   f->input, strerror(errno));
        if (n == 0)
            break;
        f->head_len += (size_t)n;
    }
    const unsigned char *h = f->stream_head;
    int skippable = f->head_len == 4 && (h[0] & 0xF0) == 0x50 && h[1] == 0x2A && h[2] == 0x4D &&
                    h[3] == 0x18; /* a skippable frame: how pzstd's files begin */
    int format = skippable ? SP_INPUT_FORMAT_ZSTD : sp_frame_format_of(h, f->head_len);
    if (format == SP_INPUT_FORMAT_RAW)
        return SP_OK;
    return sp_file_io_fail(f, SP_ERR_UNSUPPORTED, "the stream input '%s' begins with the %s "
                           "magic number: a stream is read raw (decompress it into the pipe: "
                           "%s; or give the file itself; input_format RAW reads it raw)",
                           f->input, format == SP_INPUT_FORMAT_LZ4 ? "LZ4" : "Zstandard",
                           format == SP_INPUT_FORMAT_LZ4 ? "lz4 -dc" : "zstd -dc");
}

/* A stream input (config.input_is_fd): a duplicate of the caller's descriptor, raw, its size
 * unknown until it ends. */
sp_status sp_file_stream_open(sp_file_io *f, int given, struct stat *st)
{
    f->in_fd = fcntl(given, F_DUPFD_CLOEXEC, 3);
    if (f->in_fd < 0 || fstat(f->in_fd, st) != 0)
        return sp_file_io_fail(f, SP_ERR_BACKEND, "cannot read the input '%s': %s",
                               f->input, strerror(errno));
    f->input_format = SP_INPUT_FORMAT_RAW;
    f->n_input = 0;
    return f->format_asked == SP_INPUT_FORMAT_AUTO ? peek_stream(f) : SP_OK;
}

/* A stream input (a pipe: no offsets), on the run's thread in record order: whole records as
 * they come (a short read ends at a record's edge, so no part record is carried between calls),
 * 0 at its end; a part record at the end fails, naming the offset. */
sp_status sp_file_stream_read(sp_file_io *f, char *dst, size_t want, size_t *records)
{
    size_t got = f->head_len - f->head_used, rec = f->in_record_bytes;
    got = got < want ? got : want; /* the bytes the open read to tell the magic number */
    memcpy(dst, f->stream_head + f->head_used, got);
    f->head_used += got;
    while (got < want) {
        ssize_t n = read(f->in_fd, dst + got, want - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            wait_readable(f->in_fd);
            continue;
        }
        if (n < 0)
            return sp_file_io_fail_io(f, "reading '%s': %s", f->input, strerror(errno));
        if (n == 0 && got % rec != 0)
            return sp_file_io_fail_io(f, "reading '%s': it ended at byte %llu, %zu bytes into "
                                      "record %llu: not a whole number of %zu-byte records",
                                      f->input, (unsigned long long)(f->stream_at + got),
                                      got % rec, (unsigned long long)(f->stream_at / rec +
                                                                      got / rec), rec);
        if (n == 0) {
            atomic_store(&f->stream_ended, 1);
            break;
        }
        got += (size_t)n;
        if (got % rec == 0)
            break; /* whole records: a short read, the rest asked for again */
    }
    f->stream_at += got;
    *records = got / rec;
    atomic_fetch_add(&f->stream_read, *records);
    return SP_OK;
}
