/* The file source and sink (include/streampipe_io.h): the handle, shared by the files of
 * src/io/. file_io.c opens, commits and closes; file_io_rw.c is the sp_io's read and write,
 * the only code that runs on the staging threads; file_output.c makes, claims and cleans up
 * temporary outputs. One writer per group of fields: the open fills everything but the
 * three run fields below, which only file_io_rw.c (and set_range, between runs) writes. */
#ifndef SP_IO_FILE_IO_H
#define SP_IO_FILE_IO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/stat.h>

#include "io/compressed.h"
#include "io/compressed_sink.h"
#include "core/block_source.h"
#include "streampipe_io.h"

struct sp_file_io {
    sp_io io;                /* what sp_file_io_get gives; user = this handle */
    int in_fd, out_fd;
    size_t in_record_bytes, out_record_bytes;
    size_t n_input;          /* records in the input */
    size_t first, count;     /* the range: the input's records [first, first + count) */
    size_t out_bytes;        /* the output's size: n_input records */
    char *input, *output;    /* the paths, copied (output: a name for messages) */
    char *temp_path;         /* the temporary output this handle made, until commit/close */
    int format_asked;        /* config.input_format */
    int input_format;        /* what the input is: SP_INPUT_FORMAT_RAW, _LZ4 or _ZSTD */
    sp_compressed *compressed; /* a compressed input's index and decoders; NULL for RAW */
    int decompress_where;    /* config.decompress (sp_decompress_where) */
    int output_format;       /* config.output_format: SP_INPUT_FORMAT_RAW, _LZ4 or _ZSTD */
    sp_compressed_sink *sink; /* a compressed output's compressor; NULL for RAW */
    int stream_input;        /* config.input_is_fd: read in order until it ends, no size */
    sp_block_source blocks;  /* the compressed input's blocks for the ring (file_blocks.c) */
    int opened;              /* the open succeeded */
    int in_place;            /* written where it is (a device, a FIFO, a descriptor) */
    int foreign_temp;        /* config.temp_output: another handle's, never renamed/removed */
    int positional;          /* pwrite at the records' offsets; 0: write(), in record order */
    int no_output;           /* config.output NULL: a source only (results go to memory) */
    int sync_output;         /* fsync it (not a FIFO or character device) */
    int committed;
    sp_status open_status;
    char **removed;          /* leftovers of killed runs the open removed */
    size_t n_removed;
    struct sp_file_journal *journal; /* config.journal: file_journal.h; NULL without */
    /* the run's: written by file_io_rw.c on the staging threads */
    atomic_size_t written;   /* records written since the range was set */
    atomic_int io_failed;    /* a read or write failed since then */
    uint64_t stream_at;      /* a stream input's bytes read (the run's thread alone reads) */
    atomic_size_t stream_read; /* ... its records read, and whether it has ended */
    atomic_int stream_ended;
    unsigned char stream_head[4]; /* its first bytes, read at open to tell a magic number */
    size_t head_len, head_used;
    pthread_mutex_t lock;    /* the first I/O error's text */
    char error[1024];
};

/* file_blocks.c: the compressed input's block source for decompression in the ring. */
const sp_block_source *sp_file_blocks_init(sp_file_io *f);

/* Sets the handle's error text (printf-style) and returns status. */
sp_status sp_file_io_fail(sp_file_io *f, sp_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* file_io_rw.c: keeps the first read or write failure's text since the range was set (the
 * handle's last error) and returns SP_ERR_STAGE_FAILED; callable from any staging thread. */
sp_status sp_file_io_fail_io(sp_file_io *f, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* file_source_stream.c: a stream input (config.input_is_fd): the open's part (a duplicate of
 * `given`, its first bytes checked for a magic number) and the sequential read of whole
 * records, `want` bytes at most, 0 records at its end. SP_OK or a failure (the handle's error;
 * a read's through sp_file_io_fail_io). */
sp_status sp_file_stream_open(sp_file_io *f, int given, struct stat *st);
sp_status sp_file_stream_read(sp_file_io *f, char *dst, size_t want, size_t *records);
/* file_io_rw.c: the sp_io's functions (user = the handle). */
sp_status sp_file_io_read(void *dst, size_t first_record, size_t max_records, size_t *records,
                          void *user);
sp_status sp_file_io_write(const void *src, size_t first_record, size_t records, void *user);

/* file_output.c. Removes the temporary outputs of OUTPUT beside it that no live handle holds
 * (adding their paths to f->removed), except the path `keep` (NULL: none); then makes f's own, claimed (its lock held), in
 * f->temp_path and f->out_fd. SP_OK or a failure with the handle's error set. */
void sp_file_io_remove_stale(sp_file_io *f, const char *output, const char *keep);
sp_status sp_file_io_make_temp(sp_file_io *f, const char *output);
/* Claims the temporary output at `path` that a resumed journal names (its lock taken):
 * SP_OK with f->temp_path and f->out_fd; *missing 1 (and SP_OK) when it is gone. Refused
 * when a live run holds it or it is not a regular file of f->out_bytes. */
sp_status sp_file_io_claim_temp(sp_file_io *f, const char *path, int *missing);
/* Flushes the folder of `path` (so that a name made or removed there survives a crash):
 * 1, or 0 and *err. */
int sp_file_io_sync_folder(const char *path, int *err);
/* OUTPUT's folder (malloc'd: "." when it names none; NULL: no memory) and, in *base, its
 * last component. */
char *sp_file_io_folder(const char *output, const char **base);
/* "a directory", "a FIFO", ...: an output's kind, for messages. */
const char *sp_file_io_kind_name(unsigned mode);

#endif /* SP_IO_FILE_IO_H */
