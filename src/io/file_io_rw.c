/* The file source and sink's read and write (file_io.h): pread and pwrite loops that take
 * short counts and EINTR, called from the staging threads, several at once; write() in record
 * order for an output that has no offsets. A compressed input's reads go to
 * file_source_compressed.c, with the same offsets in its decompressed stream, a stream
 * input's to file_source_stream.c; a compressed output's writes to file_sink_compressed.c.
 * The first failure's text is kept for the handle's last error; the run's own error names
 * the records. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io/file_io.h"
#include "io/file_journal.h"

sp_status sp_file_io_fail_io(sp_file_io *f, const char *fmt, ...)
{
    pthread_mutex_lock(&f->lock);
    if (!atomic_load(&f->io_failed)) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->error, sizeof f->error, fmt, ap);
        va_end(ap);
        atomic_store(&f->io_failed, 1);
    }
    pthread_mutex_unlock(&f->lock);
    return SP_ERR_STAGE_FAILED;
}

/* Byte offset and length of `records` records of `rec` bytes from the run's record `first`
 * (the file's first + f->first): 0 when they do not fit the file's range or an off_t. */
static int span(const sp_file_io *f, size_t first, size_t records, size_t rec, off_t *at,
                size_t *bytes)
{
    size_t record, end, offset;
    if (__builtin_add_overflow(first, f->first, &record) ||
        __builtin_add_overflow(record, records, &end) ||
        (!f->stream_input && end > f->first + f->count) || /* a stream has no end known */
        __builtin_mul_overflow(record, rec, &offset) ||
        __builtin_mul_overflow(records, rec, bytes) || offset > (size_t)INT64_MAX ||
        *bytes > (size_t)INT64_MAX - offset)
        return 0;
    *at = (off_t)offset;
    return 1;
}

sp_status sp_file_io_read(void *dst, size_t first_record, size_t max_records, size_t *records,
                          void *user)
{
    sp_file_io *f = user;
    if (f->stream_input)
        return sp_file_stream_read(f, dst, max_records * f->in_record_bytes, records);
    off_t at;
    size_t want, got = 0;
    if (!span(f, first_record, max_records, f->in_record_bytes, &at, &want))
        return sp_file_io_fail_io(f, "reading '%s': records %zu..+%zu are outside the range of %zu",
                         f->input, first_record, max_records, f->count);
    if (f->compressed) { /* decompressed on this thread (file_source_compressed.c) */
        sp_status st = sp_compressed_read(f, dst, (uint64_t)at, want);
        *records = st == SP_OK ? max_records : 0;
        return st;
    }
    while (got < want) {
        ssize_t n = pread(f->in_fd, (char *)dst + got, want - got, at + (off_t)got);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return sp_file_io_fail_io(f, "reading '%s': %s", f->input, strerror(errno));
        if (n == 0)
            return sp_file_io_fail_io(f, "reading '%s': the file ended at byte %lld (it shrank during "
                             "the run)", f->input, (long long)(at + (off_t)got));
        got += (size_t)n;
    }
    *records = max_records;
    return SP_OK;
}

/* Through the tests' power cut (file_power_cut.c): written, or the cut. */
static sp_status write_through_cut(sp_file_io *f, const void *src, size_t want, off_t at)
{
    int err = sp_power_cut_pwrite(&f->journal->cut, f->out_fd, src, want, at);
    if (err < 0)
        return sp_file_io_fail_io(f, "writing '%s': the power was cut at byte %llu (simulated)",
                         f->output, (unsigned long long)f->journal->cut.at);
    if (err > 0)
        return sp_file_io_fail_io(f, "writing '%s': %s", f->output, strerror(err));
    return SP_OK;
}

/* With a journal: the records noted as written, a sync point when one is due. */
static sp_status journal_written(sp_file_io *f, size_t first_record, size_t records,
                                 size_t bytes)
{
    const char *what = "";
    int err = sp_file_journal_note(f, f->first + first_record, records, bytes, &what);
    return err ? sp_file_io_fail_io(f, "%s '%s': %s", what, f->output, strerror(err)) : SP_OK;
}

sp_status sp_file_io_write(const void *src, size_t first_record, size_t records, void *user)
{
    sp_file_io *f = user;
    off_t at;
    size_t want, put = 0;
    if (!span(f, first_record, records, f->out_record_bytes, &at, &want))
        return sp_file_io_fail_io(f, "writing '%s': records %zu..+%zu are outside the range of %zu",
                         f->output, first_record, records, f->count);
    if (f->sink) /* compressed here, appended in record order (file_sink_compressed.c) */
        return sp_compressed_sink_write(f, src, first_record, records);
    if (f->journal && f->journal->cut.armed) {
        sp_status st = write_through_cut(f, src, want, at);
        put = want;
        if (st != SP_OK)
            return st;
    }
    while (put < want) { /* a short count is retried: the next call says why it was short */
        const char *from = (const char *)src + put;
        ssize_t n = f->positional ? pwrite(f->out_fd, from, want - put, at + (off_t)put)
                                  : write(f->out_fd, from, want - put);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != ENOSPC && errno != EDQUOT)
            return sp_file_io_fail_io(f, "writing '%s': %s", f->output, strerror(errno));
        if (n <= 0)
            return sp_file_io_fail_io(f, "writing '%s': no space left at byte %lld (%s)", f->output,
                             (long long)(at + (off_t)put),
                             n < 0 ? strerror(errno) : "the device took no more bytes");
        put += (size_t)n;
    }
    atomic_fetch_add(&f->written, records);
    return f->journal ? journal_written(f, first_record, records, want) : SP_OK;
}
