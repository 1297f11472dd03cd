/* Opening, committing and closing the file source and sink (include/streampipe_io.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h> /* TMPFS_MAGIC */
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/sized.h"
#include "io/file_io.h"
#include "io/file_journal.h"

/* What size 0 stands for: the first layout (0.6), fixed for good. */
#define SP_FILE_IO_CONFIG_SIZE_0_6 SP_SIZE_THROUGH(sp_file_io_config, temp_created_user)

sp_status sp_file_io_fail(sp_file_io *f, sp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->error, sizeof f->error, fmt, ap);
    va_end(ap);
    return status;
}

static sp_status os_fail(sp_file_io *f, const char *what, const char *path, int err)
{
    return sp_file_io_fail(f, SP_ERR_BACKEND, "%s '%s': %s", what, path, strerror(err));
}

/* Non-blocking, so that a FIFO cannot hang the open; regular files of whole records only. */
static sp_status open_input(sp_file_io *f, struct stat *st)
{
    f->in_fd = open(f->input, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (f->in_fd < 0)
        return os_fail(f, "cannot open the input", f->input, errno);
    if (fstat(f->in_fd, st) != 0)
        return os_fail(f, "cannot stat the input", f->input, errno);
    if (!S_ISREG(st->st_mode))
        return sp_file_io_fail(f, SP_ERR_UNSUPPORTED, "the input '%s' is not a regular file",
                               f->input);
    uint64_t bytes = (uint64_t)st->st_size;
    sp_status status = sp_compressed_format(f, f->format_asked, bytes, &f->input_format);
    if (status == SP_OK && f->input_format != SP_INPUT_FORMAT_RAW)
        status = sp_compressed_open(f, f->input_format, bytes, &bytes);
    if (status != SP_OK)
        return status;
    if (bytes > SIZE_MAX || bytes % f->in_record_bytes != 0)
        return sp_file_io_fail(f, SP_ERR_UNSUPPORTED, "the input '%s' holds %llu bytes%s, not "
                               "a whole number of %zu-byte records (a part record from offset "
                               "%llu%s)", f->input, (unsigned long long)bytes,
                               f->compressed ? " once decompressed" : "", f->in_record_bytes,
                               (unsigned long long)(bytes - bytes % f->in_record_bytes),
                               f->compressed ? " of the decompressed stream" : "");
    f->n_input = (size_t)(bytes / f->in_record_bytes);
    return SP_OK;
}

static sp_status check_range(sp_file_io *f, size_t first, size_t n)
{
    if (f->stream_input && (first != 0 || n != 0))
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "records %zu..+%zu of '%s': a "
                               "stream input is read whole, from its start (0, 0)", first, n,
                               f->input);
    if (first == 0 && n == 0)
        n = f->n_input;
    if (f->sink && (first != 0 || n != f->n_input))
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "records %zu..+%zu: a compressed "
                               "output '%s' is written whole, in record order (0, 0)", first,
                               n, f->output);
    if (f->sink && sp_compressed_sink_reset(f) != SP_OK)
        return SP_ERR_INVALID_ARGUMENT;
    if (first > f->n_input || n > f->n_input - first)
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "records %zu..+%zu are past the "
                               "end of '%s' (%zu records)", first, n, f->input, f->n_input);
    f->first = first;
    f->count = n;
    f->io.n_records = n;
    if (f->compressed) /* the range's bytes, which fit: the stream's size is a size_t */
        sp_compressed_reset(f->compressed, (uint64_t)first * f->in_record_bytes,
                            (uint64_t)(first + n) * f->in_record_bytes);
    atomic_store(&f->written, 0);
    atomic_store(&f->io_failed, 0);
    return SP_OK;
}

/* The output may not be the input under another name: it would be truncated before it was
 * read (or, written in place, overwritten while it is read). */
static sp_status check_not_input(sp_file_io *f, const sp_file_io_config *c,
                                 const struct stat *in)
{
    struct stat out;
    int found = c->output_is_fd ? fstat(c->output_fd, &out) : stat(c->output, &out);
    if (found == 0 && out.st_dev == in->st_dev && out.st_ino == in->st_ino)
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "the output '%s' is the input file",
                               f->output);
    if (__builtin_mul_overflow(f->n_input, f->out_record_bytes, &f->out_bytes) ||
        f->out_bytes > (size_t)INT64_MAX)
        return os_fail(f, "the output would be too large", f->output, EFBIG);
    return SP_OK;
}

/* Written where it is: positional for block devices, in record order otherwise (a tty or a
 * pipe has no offsets, and a descriptor may be in append mode, where pwrite appends). */
static sp_status set_up_in_place(sp_file_io *f, int fd, const struct stat *st, int is_fd)
{
    f->out_fd = fd;
    f->in_place = 1;
    f->positional = !is_fd && S_ISBLK(st->st_mode);
    f->sync_output = S_ISBLK(st->st_mode) || S_ISREG(st->st_mode); /* the others can't */
    return SP_OK;
}

static sp_status open_descriptor(sp_file_io *f, int given)
{
    struct stat st;
    int fd = fcntl(given, F_DUPFD_CLOEXEC, 3);
    if (fd < 0 || fstat(fd, &st) != 0) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return os_fail(f, "cannot write", f->output, err);
    }
    return set_up_in_place(f, fd, &st, 1);
}

/* No O_CREAT, O_TRUNC or fallocate: the node stays what it is. A FIFO's open waits for a
 * reader, as any writer's does. */
static sp_status open_node(sp_file_io *f, const struct stat *named)
{
    int fd = open(f->output, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return os_fail(f, "cannot open the output", f->output, err);
    }
    if ((st.st_mode & S_IFMT) != (named->st_mode & S_IFMT)) { /* replaced since the stat */
        close(fd);
        return sp_file_io_fail(f, SP_ERR_UNSUPPORTED, "the output '%s' is %s: it changed while "
                               "it was being opened", f->output,
                               sp_file_io_kind_name(named->st_mode));
    }
    return set_up_in_place(f, fd, &st, 0);
}

static const char *last_part(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* A writer's own journal beside another handle's temporary output: the journals it resumed
 * from must name that output (or their records describe another file), and its own is made
 * naming it, unless it resumed its own. */
static sp_status journal_foreign_temp(sp_file_io *f, const char *temp)
{
    sp_file_journal *j = f->journal;
    if (j->resume_temp && strcmp(last_part(j->resume_temp), last_part(temp)) != 0)
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "cannot resume '%s': its journals "
                               "name the temporary output '%s', not '%s'", f->output,
                               j->resume_temp, temp);
    return j->fd < 0 ? sp_file_journal_create(f, temp) : SP_OK;
}

/* Another handle's temporary output, made at full size: written at the records' offsets. */
static sp_status open_foreign_temp(sp_file_io *f, const char *temp)
{
    struct stat st;
    f->foreign_temp = 1;
    f->positional = f->sync_output = 1;
    f->out_fd = open(temp, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (f->out_fd < 0)
        return os_fail(f, "cannot open the temporary output", temp, errno);
    if (fstat(f->out_fd, &st) != 0)
        return os_fail(f, "cannot stat the temporary output", temp, errno);
    if (!S_ISREG(st.st_mode) || (size_t)st.st_size < f->out_bytes)
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "the temporary output '%s' is not "
                               "a regular file of %zu bytes (the whole output)", temp,
                               f->out_bytes);
    return f->journal ? journal_foreign_temp(f, temp) : SP_OK;
}

/* The temporary output a resumed journal names, claimed as it is (already at full size);
 * *fresh 1 when it is gone and a new one must be made. */
static sp_status claim_resumed(sp_file_io *f, const sp_file_io_config *c, int *fresh)
{
    sp_file_journal *j = f->journal;
    *fresh = 1;
    if (!j || !j->resume_temp)
        return SP_OK;
    sp_file_io_remove_stale(f, f->output, j->resume_temp);
    sp_status st = sp_file_io_claim_temp(f, j->resume_temp, fresh);
    if (st != SP_OK)
        return st;
    if (*fresh) {
        sp_file_journal_forget(j); /* its records describe a file that is gone */
        return SP_OK;
    }
    if (c->temp_created)
        c->temp_created(f->temp_path, c->temp_created_user);
    /* the records came from other writers' journals alone (journal_name, resume_journals):
     * this handle's own is made now, naming the output it claimed */
    return j->fd < 0 ? sp_file_journal_create(f, f->temp_path) : SP_OK;
}

/* Room for `bytes` more on the file system of fd (0: errno says why not, ENOSPC if short). */
static int has_room(int fd, unsigned long long bytes)
{
    struct statvfs v;
    if (fstatvfs(fd, &v) != 0)
        return 0;
    unsigned long long unit = v.f_frsize ? v.f_frsize : v.f_bsize;
    if (unit && v.f_bavail < bytes / unit + (bytes % unit != 0)) {
        errno = ENOSPC;
        return 0;
    }
    return 1;
}

/* The temporary output at its full size, its space reserved. On tmpfs, posix_fallocate gives
 * every page on one thread, zeroed, before the writers fill them again: on this project's
 * 2-core machine (2026-12-05, 4 GiB in 8 MiB pwrites from 2 threads) 0.96 s to size and 1.5 s to
 * write, 2.47 s in all, against 1.8-2.2 s for writes that take their pages as they go (and
 * 2.9 s when 2 threads populate a mapping first). So there the free space is checked instead;
 * a write that finds the space gone since fails the run, and the temporary output is never
 * renamed into place. */
static sp_status size_output(sp_file_io *f)
{
    struct statfs fs;
    if (fstatfs(f->out_fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC) {
        if (!has_room(f->out_fd, f->out_bytes))
            return os_fail(f, "no space for the output", f->output, errno);
        if (ftruncate(f->out_fd, (off_t)f->out_bytes) != 0)
            return os_fail(f, "cannot size the output", f->output, errno);
        return SP_OK;
    }
    int err = posix_fallocate(f->out_fd, 0, (off_t)f->out_bytes);
    if (err != 0 && err != EOPNOTSUPP && err != EINVAL)
        return os_fail(f, "no space for the output", f->output, err);
    if (err != 0 && ftruncate(f->out_fd, (off_t)f->out_bytes) != 0)
        return os_fail(f, "cannot size the output", f->output, errno);
    return SP_OK;
}

/* A temporary output beside OUTPUT at its full size, after removing killed runs' leftovers
 * (before ours exists, so that it is never a candidate); with a journal, the journal beside
 * it once it is sized (a journal never names an output that could still fail to be made). */
static sp_status create_temp(sp_file_io *f, const sp_file_io_config *c)
{
    f->positional = f->sync_output = 1;
    int fresh;
    sp_status st = claim_resumed(f, c, &fresh);
    if (st != SP_OK || !fresh)
        return st;
    sp_file_io_remove_stale(f, f->output, NULL);
    st = sp_file_io_make_temp(f, f->output);
    if (st != SP_OK)
        return st;
    if (c->temp_created)
        c->temp_created(f->temp_path, c->temp_created_user);
    if (f->out_bytes > 0 && f->output_format == SP_INPUT_FORMAT_RAW) { /* else of unknown size */
        st = size_output(f);
        if (st != SP_OK)
            return st;
    }
    return f->journal ? sp_file_journal_create(f, f->temp_path) : SP_OK;
}

static sp_status open_output(sp_file_io *f, const sp_file_io_config *c)
{
    if (c->output_is_fd)
        return open_descriptor(f, c->output_fd);
    if (c->temp_output)
        return open_foreign_temp(f, c->temp_output);
    struct stat st;
    if (stat(f->output, &st) != 0 || S_ISREG(st.st_mode))
        return create_temp(f, c); /* a new name or a file: written beside it, then renamed */
    if (S_ISDIR(st.st_mode) || S_ISSOCK(st.st_mode))
        return sp_file_io_fail(f, SP_ERR_UNSUPPORTED, "the output '%s' is %s: not written",
                               f->output, sp_file_io_kind_name(st.st_mode));
    if (c->regular_output)
        return sp_file_io_fail(f, SP_ERR_UNSUPPORTED, "the output '%s' is %s: it must be a "
                               "regular file or a new name (regular_output)", f->output,
                               sp_file_io_kind_name(st.st_mode));
    return open_node(f, &st);
}

static sp_status check_config(sp_file_io *f, const sp_file_io_config *c)
{
    if (!c->input && !c->input_is_fd)
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "no input path");
    /* no output at all: the handle is a source for a run whose results go to memory */
    f->no_output = !c->output && !c->output_is_fd;
    if (f->no_output && (c->temp_output || c->journal || c->regular_output))
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "no output path, but %s asks for "
                               "one", c->temp_output ? "temp_output" : c->journal ? "journal"
                                                                                 : "regular_output");
    if (c->in_record_bytes == 0 || c->out_record_bytes == 0)
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "a record size of 0 bytes");
    if (c->output_is_fd && (c->temp_output || c->regular_output))
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "output_is_fd with %s: several "
                               "writers need a named output",
                               c->temp_output ? "temp_output" : "regular_output");
    char fd_name[32], in_name[32];
    snprintf(fd_name, sizeof fd_name, "descriptor %d", c->output_fd);
    snprintf(in_name, sizeof in_name, "descriptor %d", c->input_fd);
    f->input = strdup(c->input ? c->input : in_name);
    f->output = strdup(c->output ? c->output : f->no_output ? "(no output)" : fd_name);
    if (!f->input || !f->output)
        return sp_file_io_fail(f, SP_ERR_OUT_OF_MEMORY, "no memory for the paths");
    return SP_OK;
}

/* What a stream input and a compressed output cannot do: both are written in record order
 * from the first record, with no size known before (a stream) or no offsets (compressed). */
static sp_status check_order_only(sp_file_io *f, const sp_file_io_config *c)
{
    if (c->output_format < SP_INPUT_FORMAT_AUTO || c->output_format > SP_INPUT_FORMAT_ZSTD)
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "output_format %d is not one of "
                               "sp_input_format's", c->output_format);
    f->output_format = c->output_format ? c->output_format : SP_INPUT_FORMAT_RAW;
    f->stream_input = c->input_is_fd;
    if (f->no_output && f->output_format != SP_INPUT_FORMAT_RAW)
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "output_format %d with no output: "
                               "the results go to memory, raw", c->output_format);
    const char *what = f->stream_input ? "a stream input" : "a compressed output";
    if (!f->stream_input && f->output_format == SP_INPUT_FORMAT_RAW)
        return SP_OK;
    if (c->first_record != 0 || c->n_records != 0)
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "records %zu..+%zu: %s is read "
                               "and written whole, in record order (0, 0)", c->first_record,
                               c->n_records, what);
    if (c->journal || c->temp_output)
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "%s with %s: %s is written once, "
                               "in record order, so it cannot be resumed or shared (a raw "
                               "output from a file can)", what,
                               c->journal ? "a journal" : "temp_output", what);
    if (f->stream_input && c->input_format != SP_INPUT_FORMAT_AUTO &&
        c->input_format != SP_INPUT_FORMAT_RAW)
        return sp_file_io_fail(f, SP_ERR_UNSUPPORTED, "the stream input '%s' is read raw: a "
                               "compressed input is indexed by its offsets, which a pipe "
                               "has not (decompress it into the pipe: lz4 -dc, zstd -dc)",
                               f->input);
    return SP_OK;
}

/* A compressed output's sink, once the output is open. */
static sp_status open_sink(sp_file_io *f)
{
    if (f->output_format == SP_INPUT_FORMAT_RAW)
        return SP_OK;
    return sp_compressed_sink_open(f, f->output_format);
}

static sp_status open_files(sp_file_io *f, const sp_file_io_config *config)
{
    sp_file_io_config c;
    const char *why;
    sp_status st = sp_sized_read(&c, sizeof c, config, SP_FILE_IO_CONFIG_SIZE_0_6, &why);
    if (st != SP_OK)
        return sp_file_io_fail(f, st, "the sp_file_io_config: %s", why);
    if ((st = check_config(f, &c)) != SP_OK || (st = check_order_only(f, &c)) != SP_OK)
        return st;
    f->in_record_bytes = c.in_record_bytes;
    f->out_record_bytes = c.out_record_bytes;
    f->format_asked = c.input_format;
    if (c.decompress < SP_DECOMPRESS_AUTO || c.decompress > SP_DECOMPRESS_RING)
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "decompress %d is not an "
                               "sp_decompress_where", c.decompress);
    f->decompress_where = c.decompress;
    struct stat in;
    st = f->stream_input ? sp_file_stream_open(f, c.input_fd, &in) : open_input(f, &in);
    if (st != SP_OK || (st = check_range(f, c.first_record, c.n_records)) != SP_OK)
        return st;
    if (f->no_output) {
        f->positional = 1; /* the source is read at the records' offsets, several at once */
        return SP_OK;
    }
    if ((st = check_not_input(f, &c, &in)) != SP_OK ||
        (st = sp_file_journal_prepare(f, &c)) != SP_OK || (st = open_output(f, &c)) != SP_OK)
        return st;
    return open_sink(f);
}

/* Closes the files, and removes the temporary output unless committed or kept for a resume
 * (a journal's, once the open succeeded: its last sync point first, while the output is
 * open). */
static void release(sp_file_io *f)
{
    int kept = f->journal && f->journal->keep;
    sp_file_journal_close(f);
    if (f->in_fd >= 0)
        close(f->in_fd);
    if (f->out_fd >= 0)
        close(f->out_fd);
    f->in_fd = f->out_fd = -1;
    sp_compressed_close(f->compressed);
    f->compressed = NULL;
    sp_compressed_sink_free(f->sink);
    f->sink = NULL;
    if (f->temp_path && !kept)
        unlink(f->temp_path);
    free(f->temp_path);
    f->temp_path = NULL;
}

sp_status sp_file_io_open(const sp_file_io_config *config, sp_file_io **out)
{
    if (!out)
        return SP_ERR_INVALID_ARGUMENT;
    sp_file_io *f = calloc(1, sizeof *f);
    *out = f;
    if (!f)
        return SP_ERR_OUT_OF_MEMORY;
    f->in_fd = f->out_fd = -1;
    pthread_mutex_init(&f->lock, NULL);
    atomic_init(&f->written, 0);
    atomic_init(&f->io_failed, 0);
    sp_status st = config ? open_files(f, config)
                          : sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "no config");
    f->open_status = st;
    if (st != SP_OK) {
        release(f); /* nothing left behind: no temporary output, no descriptors */
        return st;
    }
    f->opened = 1;
    /* a single-frame Zstandard input is read in order, so the whole sp_io is sequential;
     * the output is still written at the records' offsets where it has them */
    int in_order = f->compressed && sp_compressed_sequential(f->compressed);
    if (f->journal)
        f->journal->keep = 1;
    f->io = (sp_io){.size = sizeof(sp_io), .read = sp_file_io_read, .read_user = f,
                    .write = f->no_output ? NULL : sp_file_io_write, .write_user = f,
                    .n_records = f->count,
                    .positional = f->positional && !in_order && !f->stream_input};
    if (f->sink)
        sp_compressed_sink_where(f->sink, f->io.positional);
    if (f->compressed) /* the ring may take its blocks (file_blocks.c) */
        f->io.blocks = sp_file_blocks_init(f);
    return SP_OK;
}

static sp_status not_open(sp_file_io *f)
{
    return f->opened ? SP_OK
                     : sp_file_io_fail(f, f->open_status ? f->open_status
                                                         : SP_ERR_INVALID_ARGUMENT,
                                       "the files are not open (the open failed, or they "
                                       "were committed)");
}

const sp_io *sp_file_io_get(const sp_file_io *f)
{
    return f && f->opened ? &f->io : NULL;
}

sp_status sp_file_io_set_range(sp_file_io *f, size_t first_record, size_t n_records)
{
    if (!f)
        return SP_ERR_INVALID_ARGUMENT;
    sp_status st = not_open(f);
    return st != SP_OK ? st : check_range(f, first_record, n_records);
}

size_t sp_file_io_records(const sp_file_io *f)
{
    if (f && f->opened && f->stream_input)
        return atomic_load(&f->stream_read); /* so far: a stream's end is not known before */
    return f && f->opened ? f->n_input : 0;
}

sp_status sp_file_io_sync(sp_file_io *f)
{
    if (!f)
        return SP_ERR_INVALID_ARGUMENT;
    sp_status st = not_open(f);
    if (st == SP_OK && f->sync_output && fsync(f->out_fd) != 0)
        st = os_fail(f, "cannot write the output", f->output, errno);
    const char *what;
    int err = st == SP_OK && f->journal ? sp_file_journal_sync(f, &what) : 0;
    if (err)
        st = sp_file_io_fail(f, SP_ERR_BACKEND, "%s '%s': %s", what, f->output, strerror(err));
    if (st == SP_OK && f->journal && atomic_load(&f->journal->cut.fired))
        st = sp_file_io_fail(f, SP_ERR_BACKEND, "the output '%s' lost its power (a simulated "
                             "cut)", f->output);
    return st;
}

/* The folder of PATH flushed, so that the rename survives a crash. A file system that cannot
 * flush a folder (EINVAL) has nothing to flush. */
int sp_file_io_sync_folder(const char *path, int *err)
{
    const char *base;
    char *dir = sp_file_io_folder(path, &base);
    int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    int ok = fd >= 0 && (fsync(fd) == 0 || errno == EINVAL);
    *err = dir ? errno : ENOMEM;
    if (fd >= 0)
        close(fd);
    free(dir);
    return ok;
}

/* The temporary output renamed into place: flushed first, renamed before it is closed (the
 * close drops the lock that keeps other opens' cleanup off it). */
static sp_status rename_into_place(sp_file_io *f)
{
    if (fsync(f->out_fd) != 0)
        return os_fail(f, "cannot write the output", f->output, errno);
    if (rename(f->temp_path, f->output) != 0)
        return os_fail(f, "cannot move the output into place as", f->output, errno);
    free(f->temp_path); /* in place: nothing to remove */
    f->temp_path = NULL;
    if (f->journal) /* removed before the folder's flush, which makes both changes stay */
        sp_file_journal_committed(f, 1);
    int closed = close(f->out_fd), err = errno;
    f->out_fd = -1;
    if (closed == 0 && !sp_file_io_sync_folder(f->output, &err))
        closed = -1;
    if (closed != 0) { /* flushed, yet not surely whole or not surely there: taken back */
        unlink(f->output);
        return os_fail(f, "cannot write the output", f->output, err);
    }
    return SP_OK;
}

sp_status sp_file_io_commit(sp_file_io *f)
{
    if (!f)
        return SP_ERR_INVALID_ARGUMENT;
    sp_status st = not_open(f);
    if (st != SP_OK)
        return st;
    size_t written = atomic_load(&f->written);
    if (atomic_load(&f->io_failed)) {
        char failed[sizeof f->error];
        memcpy(failed, f->error, sizeof failed);
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "not committed: a read or write "
                               "failed (%s)", failed);
    }
    if (f->stream_input && (!atomic_load(&f->stream_ended) ||
                            written != atomic_load(&f->stream_read)))
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "not committed: the stream input "
                               "'%s' was not read to its end (%zu of its %zu records read so "
                               "far were written)", f->input, written,
                               atomic_load(&f->stream_read));
    if (f->no_output) {
        f->opened = 0; /* nothing was written here: nothing to move or flush */
        f->committed = 1;
        return SP_OK;
    }
    if (f->journal && !f->foreign_temp && !sp_file_journal_complete(f->journal, f->n_input))
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "not committed: %zu of the %zu "
                               "records were written (run each range sp_file_io_todo gives "
                               "first)", sp_file_io_done(f), f->n_input);
    const char *what = "";
    int flush_err = f->journal ? sp_file_journal_settle(f, &what) : 0;
    if (flush_err) /* the flusher's or this sync point's: the output is not surely whole */
        return sp_file_io_fail(f, SP_ERR_BACKEND, "not committed: %s '%s': %s", what,
                               f->output, strerror(flush_err));
    if (!f->journal && written < f->count) /* a writer's (temp_output) journal: the maker's
                                                 commit checks every record is written */
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "not committed: %zu of the %zu "
                               "records of the range were written (commit only after a run "
                               "that succeeded)", written, f->count);
    if (f->sink && (st = sp_compressed_sink_finish(f)) != SP_OK)
        return st; /* not moved into place: the close removes it */
    if (f->temp_path) {
        st = rename_into_place(f);
    } else { /* in place, or another handle's temporary output: flushed and closed */
        if (f->sync_output && fsync(f->out_fd) != 0)
            st = os_fail(f, "cannot write the output", f->output, errno);
        int closed = close(f->out_fd), err = errno;
        f->out_fd = -1;
        if (st == SP_OK && closed != 0)
            st = os_fail(f, "cannot write the output", f->output, err);
        if (st == SP_OK && f->journal) /* a writer's: its records are the maker's now */
            sp_file_journal_committed(f, 0);
    }
    f->opened = 0; /* committed, or failed trying: either way done */
    f->committed = st == SP_OK;
    if (st != SP_OK)
        release(f);
    return st;
}

void sp_file_io_close(sp_file_io *f)
{
    if (!f)
        return;
    release(f);
    for (size_t i = 0; i < f->n_removed; i++)
        free(f->removed[i]);
    free(f->removed);
    free(f->input);
    free(f->output);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

const char *sp_file_io_last_error(const sp_file_io *f)
{
    return f ? f->error : "no file I/O handle (sp_file_io_open ran out of memory)";
}

sp_status sp_file_io_input_get(const sp_file_io *f, sp_file_io_input *out)
{
    if (!f || !out || (!f->opened && !f->committed)) /* the figures outlive the commit */
        return SP_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (f->compressed) {
        sp_compressed_input(f->compressed, out);
        return SP_OK;
    }
    uint64_t bytes = (uint64_t)f->n_input * f->in_record_bytes;
    out->format = SP_INPUT_FORMAT_RAW;
    out->file_bytes = out->stream_bytes = bytes;
    return SP_OK;
}

sp_status sp_file_io_output_get(const sp_file_io *f, sp_file_io_output *out)
{
    if (!f || !out || (!f->opened && !f->committed))
        return SP_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->format = f->output_format;
    if (f->sink) {
        sp_compressed_sink_figures(f->sink, out);
        return SP_OK;
    }
    uint64_t bytes = (uint64_t)atomic_load(&f->written) * f->out_record_bytes;
    out->file_bytes = out->stream_bytes = bytes;
    return SP_OK;
}

const char *sp_file_io_temp_path(const sp_file_io *f)
{
    return f ? f->temp_path : NULL;
}

const char *sp_file_io_removed(const sp_file_io *f, size_t i)
{
    return f && i < f->n_removed ? f->removed[i] : NULL;
}

int sp_file_io_todo(const sp_file_io *f, size_t *first_record, size_t *n_records)
{
    return sp_file_io_todo_from(f, 0, first_record, n_records);
}

int sp_file_io_todo_from(const sp_file_io *f, size_t from, size_t *first_record,
                         size_t *n_records)
{
    if (!f || !f->opened || !first_record || !n_records)
        return 0;
    if (!f->journal) { /* no journal: the range set, until its records are written */
        size_t end = f->first + f->count, at = from > f->first ? from : f->first;
        *first_record = at;
        *n_records = at < end ? end - at : 0;
        return at < end && atomic_load(&f->written) < f->count;
    }
    sp_file_journal *j = f->journal;
    size_t first, end;
    pthread_mutex_lock(&j->lock);
    int gap = sp_range_set_gap_from(&j->done, from, f->n_input, &first, &end);
    pthread_mutex_unlock(&j->lock);
    *first_record = gap ? first : 0;
    *n_records = gap ? end - first : 0;
    return gap;
}

sp_status sp_file_io_journal_merge(sp_file_io *f, const char *path)
{
    if (!f || !path)
        return SP_ERR_INVALID_ARGUMENT;
    sp_status st = not_open(f);
    if (st == SP_OK && !f->journal)
        st = sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "no journal of this handle's to "
                             "merge '%s' into", path);
    return st != SP_OK ? st : sp_file_journal_merge(f, path);
}

size_t sp_file_io_done(const sp_file_io *f)
{
    if (!f || !f->journal)
        return f ? atomic_load(&f->written) : 0;
    pthread_mutex_lock(&f->journal->lock);
    size_t n = sp_range_set_count(&f->journal->done);
    pthread_mutex_unlock(&f->journal->lock);
    return n;
}

size_t sp_file_io_resumed(const sp_file_io *f)
{
    return f && f->journal ? f->journal->resumed : 0;
}

const char *sp_file_io_journal_path(const sp_file_io *f)
{
    return f && f->journal && f->opened ? f->journal->path : NULL;
}
