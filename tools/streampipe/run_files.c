/* Input and output files of `streampipe run` (run_files.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "stats.h"
#include "run_files.h"
#include "run_signal.h"

static int file_error(const char *what, const char *path, int err)
{
    fprintf(stderr, "streampipe: %s '%s': %s\n", what, path, strerror(err));
    return CLI_EXIT_FAILURE;
}

/* Non-blocking, so that a FIFO cannot hang the open; regular files only. */
static int open_input(run_files *f, const char *path, struct stat *st)
{
    f->in_fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (f->in_fd < 0)
        return file_error("cannot open the input", path, errno);
    if (fstat(f->in_fd, st) != 0)
        return file_error("cannot stat the input", path, errno);
    if (!S_ISREG(st->st_mode)) {
        fprintf(stderr, "streampipe: the input '%s' is not a regular file\n", path);
        return CLI_EXIT_FAILURE;
    }
    if ((size_t)st->st_size % f->in_record_bytes != 0) {
        fprintf(stderr, "streampipe: the input '%s' holds %lld bytes, not a whole number of "
                "%zu-byte records\n", path, (long long)st->st_size, f->in_record_bytes);
        return CLI_EXIT_FAILURE;
    }
    f->n_records = (size_t)st->st_size / f->in_record_bytes;
    return CLI_EXIT_OK;
}

/* The output may not be the input under another name: it would be truncated before read
 * (or, written in place, overwritten while it is read). "-" is stdout. */
static int check_output(const char *path, const struct stat *in)
{
    struct stat out;
    int found = strcmp(path, "-") == 0 ? fstat(STDOUT_FILENO, &out) : stat(path, &out);
    if (found == 0 && out.st_dev == in->st_dev && out.st_ino == in->st_ino) {
        fprintf(stderr, "streampipe: the output '%s' is the input file\n", path);
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

/* mkstemp beside PATH, then the lock that tells a later run's cleanup it is in use
 * (run_output_claim); another name when a cleanup removed it before the lock was taken.
 * Armed for the signal handler as soon as it is this process's. */
static int make_temp(run_files *f, const char *path)
{
    char dir_buf[4096];
    if (strlen(path) >= sizeof dir_buf - 32)
        return file_error("the output path is too long", path, ENAMETOOLONG);
    strcpy(dir_buf, path);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const char *dir = dirname(dir_buf);
    for (int tries = 0; tries < 8; tries++) {
        snprintf(f->temp_path, sizeof f->temp_path, "%s/.%s.partial-XXXXXX", dir, base);
        f->out_fd = mkstemp(f->temp_path);
        if (f->out_fd < 0) {
            f->temp_path[0] = '\0';
            return file_error("cannot create the output beside", path, errno);
        }
        if (!run_output_claim(f->out_fd)) {
            f->owns_temp = 1;
            run_signal_arm(f->temp_path);
            return CLI_EXIT_OK;
        }
        close(f->out_fd);
        f->out_fd = -1;
    }
    f->temp_path[0] = '\0';
    return file_error("cannot keep a temporary output beside", path, EAGAIN);
}

static int create_temp_output(run_files *f, const char *path, size_t bytes)
{
    int rc = make_temp(f, path);
    if (rc != CLI_EXIT_OK)
        return rc;
    mode_t mask = umask(0); /* mkstemp makes it 0600: give it a new file's usual mode */
    umask(mask);
    if (fchmod(f->out_fd, 0666 & ~mask) != 0)
        return file_error("cannot set the mode of the output beside", path, errno);
    if (bytes > 0) {
        int err = posix_fallocate(f->out_fd, 0, (off_t)bytes);
        if (err != 0 && err != EOPNOTSUPP && err != EINVAL)
            return file_error("no space for the output", path, err);
        if (err != 0 && ftruncate(f->out_fd, (off_t)bytes) != 0)
            return file_error("cannot size the output", path, errno);
    }
    return CLI_EXIT_OK;
}

int run_files_open_input(run_files *f, const char *input, const char *output,
                         size_t in_record_bytes, size_t out_record_bytes)
{
    memset(f, 0, sizeof *f);
    f->in_fd = f->out_fd = -1;
    f->in_record_bytes = in_record_bytes;
    f->out_record_bytes = out_record_bytes;
    f->input_path = input;
    f->output_path = output;
    f->positional = 1; /* unless it is written in place (run_output_open_in_place) */
    atomic_init(&f->written, 0);
    pthread_mutex_init(&f->lock, NULL);
    f->progress = isatty(STDERR_FILENO);
    f->started = f->shown = cli_now_s();
    struct stat st;
    int rc = open_input(f, input, &st);
    if (rc == CLI_EXIT_OK)
        rc = check_output(output, &st);
    if (rc == CLI_EXIT_OK &&
        __builtin_mul_overflow(f->n_records, out_record_bytes, &f->out_bytes))
        rc = file_error("the output would be too large", output, EFBIG);
    return rc;
}

int run_files_create_output(run_files *f)
{
    int in_place = 0;
    int rc = run_output_open_in_place(f, &in_place);
    if (rc != CLI_EXIT_OK || in_place)
        return rc;
    run_output_remove_stale(f->output_path); /* before ours exists: this process may lock it */
    run_signal_install();
    return create_temp_output(f, f->output_path, f->out_bytes);
}

int run_files_open_output(run_files *f, const char *temp_path)
{
    snprintf(f->temp_path, sizeof f->temp_path, "%s", temp_path);
    f->out_fd = open(temp_path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    return f->out_fd >= 0 ? CLI_EXIT_OK
                          : file_error("cannot open the temporary output", temp_path, errno);
}

int run_files_sync(run_files *f)
{
    return fsync(f->out_fd) == 0 ? CLI_EXIT_OK
                                 : file_error("cannot write the output", f->output_path, errno);
}

/* Keeps the first I/O failure's text; the library's error says which records. */
static sp_status io_failed(run_files *f, const char *fmt, ...)
{
    pthread_mutex_lock(&f->lock);
    if (f->io_error[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->io_error, sizeof f->io_error, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&f->lock);
    return SP_ERR_STAGE_FAILED;
}

sp_status run_files_read(void *dst, size_t first_record, size_t max_records, size_t *records,
                         void *user)
{
    run_files *f = user;
    size_t want = max_records * f->in_record_bytes, got = 0;
    off_t at = (off_t)(first_record * f->in_record_bytes);
    while (got < want) {
        ssize_t n = pread(f->in_fd, (char *)dst + got, want - got, at + (off_t)got);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return io_failed(f, "reading '%s': %s", f->input_path, strerror(errno));
        if (n == 0)
            return io_failed(f, "reading '%s': the file ended at byte %lld (it shrank during "
                             "the run)", f->input_path, (long long)(at + (off_t)got));
        got += (size_t)n;
    }
    *records = max_records;
    return SP_OK;
}

static void show_progress(run_files *f)
{
    double now = cli_now_s();
    if (pthread_mutex_trylock(&f->lock) != 0)
        return; /* another writer is showing it */
    if (now - f->shown >= 0.25) {
        f->shown = now;
        size_t done = atomic_load(&f->written);
        double mib = (double)(done * f->in_record_bytes) / (1 << 20);
        fprintf(stderr, "\rstreampipe run: %.0f of %.0f MiB (%.0f%%), %.2f GB/s    ", mib,
                (double)(f->n_records * f->in_record_bytes) / (1 << 20),
                f->n_records ? 100.0 * (double)done / (double)f->n_records : 100.0,
                cli_gbps((double)(done * f->in_record_bytes), now - f->started));
    }
    pthread_mutex_unlock(&f->lock);
}

sp_status run_files_write(const void *src, size_t first_record, size_t records, void *user)
{
    run_files *f = user;
    size_t want = records * f->out_record_bytes, put = 0;
    off_t at = (off_t)(first_record * f->out_record_bytes);
    while (put < want) { /* a short count is retried: the next call says why it was short */
        const char *from = (const char *)src + put;
        ssize_t n = f->positional ? pwrite(f->out_fd, from, want - put, at + (off_t)put)
                                  : write(f->out_fd, from, want - put);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != ENOSPC && errno != EDQUOT)
            return io_failed(f, "writing '%s': %s", f->output_path, strerror(errno));
        if (n <= 0)
            return io_failed(f, "writing '%s': no space left at byte %lld (%s)",
                             f->output_path, (long long)(at + (off_t)put),
                             n < 0 ? strerror(errno) : "the device took no more bytes");
        put += (size_t)n;
    }
    atomic_fetch_add(&f->written, records);
    if (f->progress)
        show_progress(f);
    return SP_OK;
}

/* An output written in place: flushed where that means something, and closed. */
static int finish_in_place(run_files *f)
{
    int fd = f->out_fd;
    f->out_fd = -1;
    if (f->sync_output && fsync(fd) != 0) {
        int err = errno;
        close(fd);
        return file_error("cannot write the output", f->output_path, err);
    }
    return close(fd) == 0 ? CLI_EXIT_OK
                          : file_error("cannot write the output", f->output_path, errno);
}

int run_files_commit(run_files *f)
{
    if (f->progress)
        fputs("\n", stderr);
    if (f->in_place)
        return finish_in_place(f);
    if (fsync(f->out_fd) != 0)
        return file_error("cannot write the output", f->output_path, errno);
    run_signal_disarm(); /* a signal from here on is re-raised once the run is over */
    /* renamed before closing: the close drops the lock that keeps other runs' cleanup off */
    if (rename(f->temp_path, f->output_path) != 0)
        return file_error("cannot move the output into place as", f->output_path, errno);
    f->temp_path[0] = '\0'; /* committed: nothing to remove */
    int closed = close(f->out_fd);
    f->out_fd = -1;
    if (closed != 0) { /* flushed, yet the close failed: a file that may not be whole */
        int err = errno;
        unlink(f->output_path);
        return file_error("cannot write the output", f->output_path, err);
    }
    return CLI_EXIT_OK;
}

void run_files_close(run_files *f)
{
    if (f->in_fd >= 0)
        close(f->in_fd);
    if (f->out_fd >= 0)
        close(f->out_fd);
    if (f->temp_path[0] != '\0' && f->owns_temp) {
        run_signal_disarm(); /* the handler must not unlink a name that may be reused */
        unlink(f->temp_path);
    }
    f->in_fd = f->out_fd = -1;
    pthread_mutex_destroy(&f->lock);
}
