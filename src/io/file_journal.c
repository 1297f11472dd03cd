/* The journal of a resumable output (file_journal.h): made beside the temporary output,
 * loaded and checked on resume, appended to at sync points, removed by commit. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/file_journal.h"

#define HASHED_BLOCK (64 * 1024)       /* of the input, at each end */
#define JOURNAL_MOST (64u << 20)       /* a longer file is not a journal of ours */
#define DEFAULT_SYNC_BYTES ((size_t)64 << 20)
#define DEFAULT_SYNC_MS 1000u

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int pread_all(int fd, void *dst, size_t n, off_t at)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = pread(fd, (char *)dst + got, n - got, at + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        got += (size_t)r;
    }
    return 1;
}

static int pwrite_all(int fd, const void *src, size_t n, off_t at)
{
    for (size_t put = 0; put < n;) {
        ssize_t w = pwrite(fd, (const char *)src + put, n - put, at + (off_t)put);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return 0;
        }
        put += (size_t)w;
    }
    return 1;
}

/* The input's size, modification time and a hash of its first and last blocks: a changed
 * input (rewritten, appended to, touched) is seen by one of them. */
static sp_status name_input(sp_file_io *f, sp_journal_id *id)
{
    struct stat st;
    if (fstat(f->in_fd, &st) != 0)
        return sp_file_io_fail(f, SP_ERR_BACKEND, "cannot stat the input '%s': %s", f->input,
                               strerror(errno));
    size_t size = (size_t)st.st_size, head = size < HASHED_BLOCK ? size : HASHED_BLOCK;
    uint64_t h = SP_JOURNAL_HASH_SEED;
    unsigned char *buf = malloc(HASHED_BLOCK);
    int ok = buf && pread_all(f->in_fd, buf, head, 0);
    if (ok)
        h = sp_journal_hash(h, buf, head);
    if (ok && size > head)
        ok = pread_all(f->in_fd, buf, head, (off_t)(size - head));
    if (ok && size > head)
        h = sp_journal_hash(h, buf, head);
    free(buf);
    if (!ok)
        return sp_file_io_fail(f, SP_ERR_BACKEND, "cannot read the input '%s' to name it in "
                               "the journal: %s", f->input, strerror(errno ? errno : EIO));
    id->input_size = size;
    id->input_mtime_s = (uint64_t)st.st_mtim.tv_sec;
    id->input_mtime_ns = (uint64_t)st.st_mtim.tv_nsec;
    id->input_hash = h;
    return SP_OK;
}

static sp_file_journal *journal_new(void)
{
    sp_file_journal *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->fd = -1;
    pthread_mutex_init(&j->lock, NULL);
    pthread_mutex_init(&j->sync_lock, NULL);
    sp_journal_flusher_init(&j->flusher);
    return j;
}

static void journal_free(sp_file_journal *j)
{
    if (j->fd >= 0)
        close(j->fd);
    sp_range_set_free(&j->done);
    sp_range_set_free(&j->journaled);
    sp_range_set_free(&j->snapshot);
    sp_power_cut_free(&j->cut);
    pthread_mutex_destroy(&j->lock);
    pthread_mutex_destroy(&j->sync_lock);
    sp_journal_flusher_destroy(&j->flusher);
    for (size_t i = 0; i < j->n_taken; i++)
        free(j->taken[i]);
    free(j->taken);
    free((char *)j->id.tag);
    free(j->path);
    free(j->resume_temp);
    free(j);
}

/* ".NAME.journal" beside OUTPUT, and `name` (a last component) in OUTPUT's folder. */
static char *beside_output(const char *output, const char *name)
{
    const char *base;
    char *dir = sp_file_io_folder(output, &base);
    size_t bytes = dir ? strlen(dir) + strlen(base) + strlen(name) + 16 : 0;
    char *path = bytes ? malloc(bytes) : NULL;
    if (path && name[0])
        snprintf(path, bytes, "%s/%s", dir, name);
    else if (path)
        snprintf(path, bytes, "%s/.%s.journal", dir, base);
    free(dir);
    return path;
}

static sp_status check_journal_config(sp_file_io *f, const sp_file_io_config *c)
{
    if (c->output_is_fd || (c->temp_output && !c->journal_name))
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "a journal needs a temporary "
                               "output (not %s)", c->output_is_fd ? "output_is_fd"
                               : "temp_output without a journal_name of its own");
    if (c->journal_name && (!c->journal_name[0] || strchr(c->journal_name, '/') ||
                            strcmp(c->journal_name, ".") == 0 ||
                            strcmp(c->journal_name, "..") == 0))
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "the journal_name '%s' is not a "
                               "file name (it goes in the output's folder)", c->journal_name);
    struct stat st;
    if (stat(f->output, &st) == 0 && !S_ISREG(st.st_mode))
        return sp_file_io_fail(f, SP_ERR_UNSUPPORTED, "the output '%s' is %s: a journal "
                               "needs a regular file or a new name", f->output,
                               sp_file_io_kind_name(st.st_mode));
    if (c->journal_tag && strlen(c->journal_tag) > SP_JOURNAL_TEXT_MAX)
        return sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "the journal_tag is longer than "
                               "%d bytes", SP_JOURNAL_TEXT_MAX);
    return SP_OK;
}

static sp_status load_journals(sp_file_io *f, sp_file_journal *j, const sp_file_io_config *c);

sp_status sp_file_journal_prepare(sp_file_io *f, const sp_file_io_config *c)
{
    if (!c->journal)
        return c->resume ? sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "resume without "
                                           "journal: there is nothing to resume from")
                         : SP_OK;
    sp_status st = check_journal_config(f, c);
    if (st != SP_OK)
        return st;
    sp_file_journal *j = f->journal = journal_new();
    if (!j)
        return sp_file_io_fail(f, SP_ERR_OUT_OF_MEMORY, "no memory for the journal");
    j->path = beside_output(f->output, c->journal_name ? c->journal_name : "");
    j->id.tag = strdup(c->journal_tag ? c->journal_tag : "");
    if (!j->path || !j->id.tag)
        return sp_file_io_fail(f, SP_ERR_OUT_OF_MEMORY, "no memory for the journal");
    j->id.tag_len = strlen(j->id.tag);
    j->id.in_record_bytes = f->in_record_bytes;
    j->id.out_record_bytes = f->out_record_bytes;
    j->id.n_records = f->n_input;
    j->id.out_bytes = f->out_bytes;
    j->id.format = SP_JOURNAL_FORMAT_RAW;
    int defaults = c->journal_sync_bytes == 0 && c->journal_sync_ms == 0;
    j->sync_bytes = defaults ? DEFAULT_SYNC_BYTES : c->journal_sync_bytes;
    j->sync_s = 1e-3 * (defaults ? DEFAULT_SYNC_MS : c->journal_sync_ms);
    if (j->sync_bytes == 0)
        j->sync_bytes = SIZE_MAX; /* by time alone */
    if (j->sync_s == 0)
        j->sync_s = 1e30; /* by bytes alone */
    j->last_sync_s = now_s();
    sp_power_cut_init(&j->cut, c->test_power_cut, c->test_power_cut_at);
    if ((st = name_input(f, &j->id)) != SP_OK)
        return st;
    return c->resume ? load_journals(f, j, c) : SP_OK;
}

/* The first way the loaded journal differs from this open's, or NULL. */
static const char *differs(const sp_journal_id *was, const sp_journal_id *now)
{
    if (was->input_size != now->input_size)
        return "the input's size";
    if (was->input_mtime_s != now->input_mtime_s || was->input_mtime_ns != now->input_mtime_ns)
        return "the input's modification time";
    if (was->input_hash != now->input_hash)
        return "the input's first and last blocks";
    if (was->in_record_bytes != now->in_record_bytes ||
        was->out_record_bytes != now->out_record_bytes)
        return "the record sizes";
    if (was->n_records != now->n_records || was->out_bytes != now->out_bytes)
        return "the output's size";
    if (was->format != now->format)
        return "the output format";
    if (was->tag_len != now->tag_len || memcmp(was->tag, now->tag, now->tag_len) != 0)
        return "the stages (journal_tag)";
    return NULL;
}

/* The records that check, up to the first that does not; *valid_end: where it ends. */
static int read_records(sp_file_journal *j, uint64_t key, const unsigned char *buf, size_t n,
                        size_t from, size_t *valid_end)
{
    size_t at = from;
    for (; n - at >= SP_JOURNAL_RECORD_BYTES; at += SP_JOURNAL_RECORD_BYTES) {
        size_t first, end;
        if (!sp_journal_record_decode(key, buf + at, j->id.n_records, &first, &end))
            break;
        if (!sp_range_set_add(&j->done, first, end))
            return 0;
    }
    *valid_end = at;
    return 1;
}

/* The journal's bytes (malloc'd, *n): NULL with *n 0 and errno ENOENT when there is none. */
static unsigned char *read_journal(int fd, size_t *n)
{
    struct stat st;
    *n = 0;
    if (fstat(fd, &st) != 0)
        return NULL;
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > JOURNAL_MOST) {
        errno = EINVAL;
        return NULL;
    }
    unsigned char *buf = malloc((size_t)st.st_size + 1);
    if (buf && !pread_all(fd, buf, (size_t)st.st_size, 0)) {
        free(buf);
        return NULL;
    }
    *n = (size_t)st.st_size;
    return buf;
}

/* The temporary output a journal names, as a path beside OUTPUT (NULL: not a plain name,
 * or no memory). */
static char *named_temp(const sp_file_io *f, const sp_journal_id *was)
{
    char name[SP_JOURNAL_TEXT_MAX + 1];
    memcpy(name, was->temp_name, was->name_len);
    name[was->name_len] = '\0';
    if (strchr(name, '/') || name[0] == '\0' || !strcmp(name, ".") || !strcmp(name, ".."))
        return NULL;
    return beside_output(f->output, name);
}

static int note_taken(sp_file_journal *j, const char *path)
{
    char **grown = realloc(j->taken, (j->n_taken + 1) * sizeof *grown);
    if (!grown)
        return 0;
    j->taken = grown;
    return (j->taken[j->n_taken] = strdup(path)) != NULL && ++j->n_taken;
}

/* One journal's bytes read and checked against this open: its records into j->done (under
 * j->lock), *valid_end where the ones that check end. The first journal read names the
 * temporary output (j->resume_temp); every later one must name the same. 0 with SP_OK in
 * *st: no header that checks (nothing to believe, nothing wrong). */
static size_t take_records(sp_file_io *f, sp_file_journal *j, const char *path,
                           const unsigned char *buf, size_t n, size_t *valid_end,
                           uint64_t *key, sp_status *st)
{
    sp_journal_id was;
    size_t header = sp_journal_header_decode(buf, n, &was, key);
    *st = SP_OK;
    if (header == 0)
        return 0;
    const char *why = differs(&was, &j->id);
    char *temp = why ? NULL : named_temp(f, &was);
    if (!why && !temp)
        why = "the temporary output it names";
    else if (!why && j->resume_temp && strcmp(temp, j->resume_temp) != 0)
        why = "the temporary output it names, which another journal of this resume does not";
    if (why) {
        free(temp);
        *st = sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "cannot resume '%s': the journal "
                              "'%s' was written for other work (%s differs); open without "
                              "resume to start again", f->output, path, why);
        return 0;
    }
    if (!j->resume_temp)
        j->resume_temp = temp;
    else
        free(temp);
    pthread_mutex_lock(&j->lock); /* each journal's records are seeded by its own header */
    int ok = read_records(j, *key, buf, n, header, valid_end);
    pthread_mutex_unlock(&j->lock);
    if (!ok)
        *st = sp_file_io_fail(f, SP_ERR_OUT_OF_MEMORY, "no memory for the journal");
    return ok ? header : 0;
}

/* The handle's own journal, when there is one: taken, its torn or damaged tail cut off (so
 * that new records follow the valid ones), its descriptor kept for appending. */
static sp_status load_own(sp_file_io *f, sp_file_journal *j)
{
    int fd = open(j->path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
    if (fd < 0 && errno == ENOENT)
        return SP_OK;
    if (fd < 0)
        return sp_file_io_fail(f, SP_ERR_BACKEND, "cannot open the journal '%s': %s", j->path,
                               strerror(errno));
    size_t n, valid_end = 0;
    unsigned char *buf = read_journal(fd, &n);
    sp_status st = SP_OK;
    size_t header = buf ? take_records(f, j, j->path, buf, n, &valid_end, &j->key, &st) : 0;
    free(buf);
    if (header == 0) { /* unreadable (refused: st says why): nothing taken from it */
        close(fd);
        return st;
    }
    j->fd = fd; /* appended to under its own header's key */
    if (valid_end < n && (ftruncate(j->fd, (off_t)valid_end) != 0 || fdatasync(j->fd) != 0))
        return sp_file_io_fail(f, SP_ERR_BACKEND, "cannot cut the damaged end off the journal "
                               "'%s': %s", j->path, strerror(errno));
    j->end = (off_t)valid_end;
    return SP_OK;
}

/* Another writer's journal: its records taken, the file left as it is (commit removes it).
 * A missing one is nothing to take. */
static sp_status load_other(sp_file_io *f, sp_file_journal *j, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
    if (fd < 0 && errno == ENOENT)
        return SP_OK;
    if (fd < 0)
        return sp_file_io_fail(f, SP_ERR_BACKEND, "cannot open the journal '%s': %s", path,
                               strerror(errno));
    size_t n, valid_end;
    uint64_t key;
    unsigned char *buf = read_journal(fd, &n);
    close(fd);
    sp_status st = SP_OK;
    if (buf)
        take_records(f, j, path, buf, n, &valid_end, &key, &st);
    free(buf);
    if (st == SP_OK && !note_taken(j, path))
        st = sp_file_io_fail(f, SP_ERR_OUT_OF_MEMORY, "no memory for the journal");
    return st;
}

/* With resume: the handle's own journal and the other writers' (resume_journals), taken if
 * they were made for this very output; one made for another input, stages or format refuses
 * the open; none, or one whose header does not check, is nothing to take. */
static sp_status load_journals(sp_file_io *f, sp_file_journal *j, const sp_file_io_config *c)
{
    sp_status st = load_own(f, j);
    for (size_t i = 0; st == SP_OK && c->resume_journals && c->resume_journals[i]; i++)
        if (strcmp(c->resume_journals[i], j->path) != 0)
            st = load_other(f, j, c->resume_journals[i]);
    if (st != SP_OK)
        return st;
    j->resumed = sp_range_set_count(&j->done);
    return sp_range_set_copy(&j->journaled, &j->done)
               ? SP_OK
               : sp_file_io_fail(f, SP_ERR_OUT_OF_MEMORY, "no memory for the journal");
}

sp_status sp_file_journal_merge(sp_file_io *f, const char *path)
{
    /* the records it holds are durable (its writer synced before saying so): noted as
     * written, so that the commit finds every record of the input */
    return load_other(f, f->journal, path);
}

void sp_file_journal_forget(sp_file_journal *j)
{
    if (j->fd >= 0)
        close(j->fd);
    j->fd = -1;
    j->done.n = j->journaled.n = 0;
    j->resumed = 0;
    free(j->resume_temp);
    j->resume_temp = NULL;
}

/* Made with O_EXCL after removing the old one, so that two opens never share a file: a live
 * run whose journal is replaced goes on appending to its own (now nameless) one. */
static int make_file(const char *path)
{
    for (int tries = 0; tries < 16; tries++) {
        if (unlink(path) != 0 && errno != ENOENT)
            return -1;
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

sp_status sp_file_journal_create(sp_file_io *f, const char *temp_path)
{
    sp_file_journal *j = f->journal;
    const char *slash = strrchr(temp_path, '/');
    j->id.temp_name = slash ? slash + 1 : temp_path;
    j->id.name_len = strlen(j->id.temp_name);
    unsigned char *header = malloc(2 * SP_JOURNAL_TEXT_MAX + 256);
    size_t bytes = header ? sp_journal_header_encode(&j->id, header, 2 * SP_JOURNAL_TEXT_MAX +
                                                     256, &j->key)
                          : 0;
    j->id.temp_name = NULL; /* it pointed into temp_path */
    if (bytes == 0) {
        free(header);
        return sp_file_io_fail(f, SP_ERR_OUT_OF_MEMORY, "no memory for the journal");
    }
    j->fd = make_file(j->path);
    j->created = j->fd >= 0;
    int err = 0, folder_err = 0;
    if (j->fd < 0 || !pwrite_all(j->fd, header, bytes, 0) || fdatasync(j->fd) != 0)
        err = errno;
    else if (!sp_file_io_sync_folder(j->path, &folder_err)) /* its name and the output's */
        err = folder_err;
    free(header);
    j->end = (off_t)bytes;
    return err ? sp_file_io_fail(f, SP_ERR_BACKEND, "cannot write the journal '%s': %s",
                                 j->path, strerror(err))
               : SP_OK;
}

static int sync_point(sp_file_io *f, const char **what);

int sp_file_journal_due(const sp_file_journal *j, double *at)
{
    *at = INFINITY;
    if (j->pending >= j->sync_bytes)
        return 1;
    if (j->pending == 0 || j->sync_s > 1e15) /* nothing to time, or by bytes alone */
        return 0;
    *at = j->last_sync_s + j->sync_s;
    return now_s() >= *at;
}

int sp_file_journal_note(sp_file_io *f, size_t first, size_t records, size_t bytes,
                         const char **what)
{
    sp_file_journal *j = f->journal;
    pthread_mutex_lock(&j->lock);
    int added = sp_range_set_add(&j->done, first, first + records);
    int first_since_sync = j->pending == 0; /* the flusher starts timing sync_ms */
    j->pending += bytes;
    double at;
    int due = sp_file_journal_due(j, &at);
    int failed = sp_journal_flusher_failed(&j->flusher, what);
    int flusher_takes = !failed && sp_journal_flusher_kick(f, due || first_since_sync);
    pthread_mutex_unlock(&j->lock);
    if (!added) {
        *what = "noting the records written";
        return ENOMEM;
    }
    if (failed)
        return failed;
    if (!due || flusher_takes || pthread_mutex_trylock(&j->sync_lock) != 0)
        return 0; /* another thread is at the sync point: it or the next one takes these */
    return sync_point(f, what);
}

/* Step 3: a record for each range of the snapshot that the journal does not yet hold (a
 * range grown since the last sync point is written again whole: overlaps are harmless). */
static int append_records(sp_file_journal *j, const char **what)
{
    size_t n = 0;
    unsigned char *buf = malloc(j->snapshot.n * SP_JOURNAL_RECORD_BYTES + 1);
    if (!buf) {
        *what = "writing the journal";
        return ENOMEM;
    }
    for (size_t i = 0; i < j->snapshot.n; i++) {
        sp_range r = j->snapshot.r[i];
        if (!sp_range_set_covers(&j->journaled, r.first, r.end))
            sp_journal_record_encode(j->key, r.first, r.end,
                                     buf + SP_JOURNAL_RECORD_BYTES * n++);
    }
    int err = 0;
    if (n && (!pwrite_all(j->fd, buf, n * SP_JOURNAL_RECORD_BYTES, j->end) ||
              fdatasync(j->fd) != 0))
        err = errno;
    free(buf);
    if (err) {
        *what = "writing the journal";
        return err;
    }
    j->end += (off_t)(n * SP_JOURNAL_RECORD_BYTES);
    return sp_range_set_copy(&j->journaled, &j->snapshot) ? 0 : ENOMEM;
}

/* Steps 1-3 (file_journal.h), with sync_lock held (released here). */
static int sync_point(sp_file_io *f, const char **what)
{
    sp_file_journal *j = f->journal;
    if (atomic_load(&j->cut.fired)) { /* the power is off: nothing more reaches the disk */
        pthread_mutex_unlock(&j->sync_lock);
        return 0;
    }
    pthread_mutex_lock(&j->lock); /* step 1 */
    int copied = sp_range_set_copy(&j->snapshot, &j->done);
    j->pending = 0;
    j->last_sync_s = now_s();
    pthread_mutex_unlock(&j->lock);
    int err = copied ? 0 : ENOMEM;
    *what = "flushing the output";
    sp_power_cut_flush_begin(&j->cut, f->out_fd);
    if (!err && fdatasync(f->out_fd) != 0) /* step 2 */
        err = errno;
    if (!err && sp_power_cut_flush_end(&j->cut))
        err = append_records(j, what); /* step 3 */
    pthread_mutex_unlock(&j->sync_lock);
    return err;
}

int sp_file_journal_sync(sp_file_io *f, const char **what)
{
    pthread_mutex_lock(&f->journal->lock);
    int failed = sp_journal_flusher_failed(&f->journal->flusher, what);
    pthread_mutex_unlock(&f->journal->lock);
    if (failed) /* a later fdatasync may not report what an earlier one lost */
        return failed;
    pthread_mutex_lock(&f->journal->sync_lock);
    return sync_point(f, what);
}

int sp_file_journal_settle(sp_file_io *f, const char **what)
{
    (void)sp_journal_flusher_stop(f, what); /* its failure stays: the sync returns it */
    return sp_file_journal_sync(f, what);
}

int sp_file_journal_complete(sp_file_journal *j, size_t n_input)
{
    pthread_mutex_lock(&j->lock);
    int all = sp_range_set_covers(&j->done, 0, n_input);
    pthread_mutex_unlock(&j->lock);
    return all;
}

void sp_file_journal_committed(sp_file_io *f, int taken)
{
    sp_file_journal *j = f->journal;
    unlink(j->path); /* the caller's flush of the folder makes it stay removed */
    for (size_t i = 0; taken && i < j->n_taken; i++) /* the other writers' (a writer's own */
        unlink(j->taken[i]);                         /* commit may have removed it first) */
    if (j->fd >= 0)
        close(j->fd);
    j->fd = -1;
    j->keep = j->created = 0;
}

void sp_file_journal_close(sp_file_io *f)
{
    sp_file_journal *j = f->journal;
    if (!j)
        return;
    const char *what;
    (void)sp_journal_flusher_stop(f, &what); /* before the files close under it */
    if (j->keep && j->fd >= 0 && f->out_fd >= 0)
        (void)sp_file_journal_sync(f, &what); /* what is durable, journaled; a failure only
                                                 leaves the journal shorter */
    if (j->created && !j->keep)
        unlink(j->path);
    journal_free(j);
    f->journal = NULL;
}
