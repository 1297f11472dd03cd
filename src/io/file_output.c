/* Temporary outputs (file_io.h): ".NAME.partial-XXXXXX" beside NAME, made with O_EXCL and held
 * with a write lock from creation to commit or close, so that a later open can tell a killed
 * run's leftover (which it can lock: the kernel dropped the lock with the process) from a live
 * one's. The locks are open file description locks (F_OFD_SETLK) where the system has them,
 * so that two handles of one process exclude each other too (a process's classic fcntl locks
 * never conflict with each other); they conflict with classic locks, which other programs
 * (and earlier versions) hold. */
#define _GNU_SOURCE /* F_OFD_SETLK, F_OFD_SETLKW */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/file_io.h"

#ifdef F_OFD_SETLK
#define LOCK_TRY F_OFD_SETLK
#define LOCK_WAIT F_OFD_SETLKW
#else
#define LOCK_TRY F_SETLK
#define LOCK_WAIT F_SETLKW
#endif

#define TEMP_MARK ".partial-"
#define TEMP_LETTERS 6

const char *sp_file_io_kind_name(unsigned mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
                            : "not a regular file";
}

char *sp_file_io_folder(const char *output, const char **base)
{
    const char *slash = strrchr(output, '/');
    *base = slash ? slash + 1 : output;
    if (!slash)
        return strdup(".");
    size_t len = slash == output ? 1 : (size_t)(slash - output); /* "/x": the root */
    char *dir = malloc(len + 1);
    if (dir) {
        memcpy(dir, output, len);
        dir[len] = '\0';
    }
    return dir;
}

static char *join(const char *dir, const char *name)
{
    size_t bytes = strlen(dir) + strlen(name) + 2;
    char *path = malloc(bytes);
    if (path)
        snprintf(path, bytes, "%s/%s", dir, name);
    return path;
}

/* ".BASE.partial-" and six letters or digits: this output's temporary names. */
static int is_temp_of(const char *entry, const char *base)
{
    size_t b = strlen(base), m = strlen(TEMP_MARK);
    if (entry[0] != '.' || strncmp(entry + 1, base, b) != 0 ||
        strncmp(entry + 1 + b, TEMP_MARK, m) != 0)
        return 0;
    const char *x = entry + 1 + b + m;
    for (int i = 0; i < TEMP_LETTERS; i++)
        if (!isalnum((unsigned char)x[i]))
            return 0;
    return x[TEMP_LETTERS] == '\0';
}

static int lock_fd(int fd, int cmd)
{
    struct flock lock;
    memset(&lock, 0, sizeof lock); /* l_pid 0, as OFD locks require; the whole file */
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    return fcntl(fd, cmd, &lock);
}

static void note_removed(sp_file_io *f, const char *path)
{
    char **grown = realloc(f->removed, (f->n_removed + 1) * sizeof *grown);
    if (!grown)
        return; /* removed all the same; only not named */
    f->removed = grown;
    if ((f->removed[f->n_removed] = strdup(path)) != NULL)
        f->n_removed++;
}

/* Removed only while this handle holds the lock a writer would hold, and only if the name is
 * still that file; a lock refused (EAGAIN, EACCES): a live writer's, kept. */
static void remove_if_stale(sp_file_io *f, const char *path)
{
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return;
    struct stat by_fd, by_name;
    if (fstat(fd, &by_fd) == 0 && S_ISREG(by_fd.st_mode) && lock_fd(fd, LOCK_TRY) == 0 &&
        lstat(path, &by_name) == 0 && by_name.st_dev == by_fd.st_dev &&
        by_name.st_ino == by_fd.st_ino && unlink(path) == 0)
        note_removed(f, path);
    close(fd);
}

void sp_file_io_remove_stale(sp_file_io *f, const char *output, const char *keep)
{
    const char *base;
    char *dir = sp_file_io_folder(output, &base);
    DIR *d = dir && *base ? opendir(dir) : NULL;
    if (d) { /* else creating the temporary output says why, if it cannot be */
        for (struct dirent *e = readdir(d); e; e = readdir(d)) {
            char *path = is_temp_of(e->d_name, base) ? join(dir, e->d_name) : NULL;
            if (path && !(keep && strcmp(path, keep) == 0)) /* a resumed journal's */
                remove_if_stale(f, path);
            free(path);
        }
        closedir(d);
    }
    free(dir);
}

/* The writer's lock on its new temporary output: 1 when a cleanup removed the file before the
 * lock was taken (make another), else 0 (also on a file system without locks, whose
 * leftovers are then never removed). */
static int claim(int fd)
{
    while (lock_fd(fd, LOCK_WAIT) != 0)
        if (errno != EINTR)
            return 0;
    struct stat st; /* a cleanup that locked it first has unlinked it by now */
    return fstat(fd, &st) == 0 && st.st_nlink == 0;
}

/* Six letters and digits, different in every call of every process (splitmix64 over the
 * clock, the process, a counter and an address; O_EXCL makes a clash only a retry). */
static void random_letters(char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    static atomic_ulong counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
                 ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)out ^
                 ((uint64_t)atomic_fetch_add(&counter, 1) * 0x9E3779B97F4A7C15ull);
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    for (int i = 0; i < TEMP_LETTERS; i++, x /= 62)
        out[i] = abc[x % 62];
    out[TEMP_LETTERS] = '\0';
}

sp_status sp_file_io_make_temp(sp_file_io *f, const char *output)
{
    const char *base;
    char *dir = sp_file_io_folder(output, &base);
    if (!dir)
        return sp_file_io_fail(f, SP_ERR_OUT_OF_MEMORY, "no memory for the output's name");
    size_t bytes = strlen(base) + strlen(TEMP_MARK) + TEMP_LETTERS + 2;
    char *name = malloc(bytes);
    sp_status st = SP_OK;
    if (!name)
        st = sp_file_io_fail(f, SP_ERR_OUT_OF_MEMORY, "no memory for the output's name");
    for (int tries = 0; st == SP_OK && tries < 64; tries++) {
        char letters[TEMP_LETTERS + 1];
        random_letters(letters);
        snprintf(name, bytes, ".%s%s%s", base, TEMP_MARK, letters);
        free(f->temp_path);
        if (!(f->temp_path = join(dir, name))) {
            st = sp_file_io_fail(f, SP_ERR_OUT_OF_MEMORY, "no memory for the output's name");
            break;
        }
        /* 0666 less the umask: a new file's usual mode (mkstemp's 0600 would not be) */
        f->out_fd = open(f->temp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY,
                         0666);
        if (f->out_fd < 0 && errno == EEXIST)
            continue;
        if (f->out_fd < 0) {
            st = sp_file_io_fail(f, SP_ERR_BACKEND, "cannot create the output beside '%s': %s",
                                 output, strerror(errno));
            break;
        }
        if (!claim(f->out_fd))
            break; /* ours */
        close(f->out_fd); /* a cleanup took it before the lock: another name */
        f->out_fd = -1;
    }
    if (st == SP_OK && f->out_fd < 0)
        st = sp_file_io_fail(f, SP_ERR_BACKEND, "cannot keep a temporary output beside '%s': "
                             "%s", output, strerror(EAGAIN));
    if (st != SP_OK) {
        free(f->temp_path);
        f->temp_path = NULL;
    }
    free(name);
    free(dir);
    return st;
}

sp_status sp_file_io_claim_temp(sp_file_io *f, const char *path, int *missing)
{
    struct stat st;
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    *missing = fd < 0 && errno == ENOENT;
    if (*missing)
        return SP_OK;
    if (fd < 0)
        return sp_file_io_fail(f, SP_ERR_BACKEND, "cannot open the temporary output '%s' to "
                               "resume: %s", path, strerror(errno));
    sp_status status = SP_OK;
    if (lock_fd(fd, LOCK_TRY) != 0)
        status = sp_file_io_fail(f, SP_ERR_BACKEND, "cannot resume '%s': a live run is "
                                 "writing its temporary output '%s'", f->output, path);
    else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size != f->out_bytes)
        status = sp_file_io_fail(f, SP_ERR_INVALID_ARGUMENT, "cannot resume '%s': its "
                                 "temporary output '%s' is not a regular file of %zu bytes; "
                                 "open without resume to start again", f->output, path,
                                 f->out_bytes);
    else if (fstat(fd, &st) == 0 && st.st_nlink == 0) /* a cleanup took it as we locked it */
        *missing = 1;
    if (status != SP_OK || *missing) {
        close(fd);
        return status;
    }
    f->out_fd = fd;
    f->temp_path = strdup(path);
    return f->temp_path ? SP_OK
                        : sp_file_io_fail(f, SP_ERR_OUT_OF_MEMORY, "no memory for the name");
}
