/*
 * File sources and sinks: a file of records streamed through a pipeline into another file.
 *
 * sp_file_io_open opens the input and the output and gives the sp_io to pass to
 * sp_pipeline_run_io (or sp_group_run_io): the staging threads read and write the files
 * positionally (pread, pwrite) straight into and out of pinned memory, several at once, so
 * the memory held stays the ring's whatever the files' sizes. The output is written under a
 * temporary name beside it, at its full size from the start (a disk without room fails the
 * open, before any work), and moved into place by sp_file_io_commit once the run has
 * succeeded: a failed or interrupted run never leaves a file that looks whole.
 *
 *     sp_file_io_config cfg = SP_FILE_IO_CONFIG_INIT;
 *     cfg.input = "in.f32";
 *     cfg.output = "out.f32";
 *     cfg.in_record_bytes = cfg.out_record_bytes = 4;
 *     sp_file_io *files = NULL;
 *     sp_status st = sp_file_io_open(&cfg, &files);
 *     if (st == SP_OK)
 *         st = sp_pipeline_run_io(pipeline, sp_file_io_get(files), &report);
 *     if (st == SP_OK)
 *         st = sp_file_io_commit(files);      (a failed run: close without commit)
 *     if (st != SP_OK)
 *         fprintf(stderr, "%s\n", sp_file_io_last_error(files));
 *     sp_file_io_close(files);                (removes the temporary output unless committed)
 *
 * Compressed inputs (config.input_format; by default told by the file's magic number, never
 * its name): the records are those of the decompressed stream, decompressed inside the ring
 * where it can (config.decompress, sp_decompress_where below) or on the staging threads
 * (liblz4, libzstd) straight into pinned memory (the output is raw unless output_format says
 * otherwise: "Compressed outputs" below). At open the
 * frame and block headers alone are read into a block index (src/io/block_index.h: each
 * unit's compressed offset and size, decompressed offset and size, checksum presence; the
 * table a GPU decompressor would take), every size checked against the file and against what
 * the frame declares; a read of records maps to the units it overlaps, each decoded whole on
 * the thread asking (one decompression context each, the last unit cut by a piece's edge kept
 * for the neighbouring piece).
 * - LZ4 frames (what `lz4` writes), block sizes 64 KiB to 4 MiB, with or without content
 *   size, block checksums (-BX) and content checksum, several frames concatenated. Blocks
 *   must be independent (the default): linked blocks (-BD) are refused, not decoded in
 *   order. Every block but a frame's last must hold the frame's block size (as lz4 writes
 *   them; a shorter one is refused, naming it); without a declared content size the last
 *   block is decoded once at open to size it. Block checksums are checked on every read; content checksums (XXH32, src/io/xxh32.c,
 *   written from the specification) while the blocks are decoded, out of order, for frames
 *   a run's range covers whole (sp_file_io_input.content_checked counts them).
 * - Zstandard files of several frames (pzstd, zstd's seekable format, frames concatenated),
 *   each frame decoded on its own (libzstd checks its checksum). Frames that declare no size
 *   (pzstd) are decoded once at open to size them. A file of one frame cannot be split: it is
 *   decompressed on the host as one unit, in order on one thread, and the sp_io is then
 *   sequential (sp_file_io_input.sequential, note); so are frames over 64 MiB.
 * Bad data fails the open (truncated frame, a block past the file's end, a size over what the
 * frame allows or declares, unknown magic, linked blocks, a dictionary, a decompressed size
 * that is not whole records: SP_ERR_UNSUPPORTED) or the run (a checksum that does not match,
 * a block that does not decode to its size: SP_ERR_STAGE_FAILED), the message naming the file
 * offset; nothing is committed. A build without liblz4/libzstd refuses compressed inputs
 * (SP_ERR_UNSUPPORTED, saying so). sp_file_io_input_get gives the sizes, ratio and the
 * decompression's counters for a report.
 *
 * Compressed outputs (config.output_format, 0.7): the results compressed on the staging
 * threads that write them (liblz4, libzstd; so on every backend, the device's results having
 * come back by the d2h as they always do), each piece of a chunk compressed on its own, in
 * parallel, then appended in record order, so the file is a standard one:
 * - LZ4: one frame per piece (frames concatenated, as the frame format allows; lz4 -d reads
 *   them all and lz4 -t checks them), each with its content size, independent blocks of
 *   4 MiB (the piece's last block may be shorter: it is its frame's last), each with its
 *   XXH32 block checksum, and the XXH32 content checksum of the piece; a block that does not
 *   shrink is stored as it is. This file source reads it back (in parallel, every content
 *   checksum checked where the blocks are decoded on the staging threads).
 * - Zstandard: one frame per piece (a multi-frame file, as pzstd writes; zstd -d reads it),
 *   each with its content size and checksum; this file source reads it back in parallel.
 * The output's size is not known before the run, so the temporary output is not made at full
 * size (a disk that fills fails the write that finds it full, "no space left", and nothing is
 * committed) and the sp_io writes in record order: the whole input only (no range), no
 * journal, no temp_output (SP_ERR_INVALID_ARGUMENT). sp_file_io_output_get gives the bytes
 * before and after and the ratio. A build without liblz4/libzstd refuses (SP_ERR_UNSUPPORTED).
 * (GPU compression before the d2h, nvCOMP's batched compress, would be a stage at the ring's
 * end feeding this sink whole frames; it is not built.)
 *
 * Stream inputs (config.input_is_fd, 0.7): a descriptor read in order until its end (stdin, a
 * pipe: no size, no offsets), raw records only (input_format AUTO or RAW: the compressed
 * reader indexes a file's frames by their offsets, which a pipe does not have). With AUTO the
 * open reads its first four bytes (waiting for them) and refuses an LZ4 or Zstandard magic
 * number (SP_ERR_UNSUPPORTED: decompress into the pipe), those bytes then read as records
 * as usual; RAW reads them as records without looking. The sp_io is
 * then sequential with n_records 0 (until the source ends); a part record at the end fails
 * the run naming the byte offset, and nothing is committed. Not with a range, a journal or
 * temp_output; the output is not made at full size (its size is not known), and
 * sp_file_io_records gives the records read so far.
 *
 * No output (config.output NULL, 0.7): the handle is a source only, for a run whose results
 * go to memory: its sp_io's write is NULL, to be replaced by sp_io.out (streampipe.h), e.g.
 *     sp_io io = *sp_file_io_get(files);    (positional reads, n_records of the range)
 *     io.out = device_buffer;                (sp_device_alloc, a CUDA tensor's memory)
 *     st = sp_pipeline_run_io(pipeline, &io, &report);
 * reads the file straight into pinned staging and the results into device memory: no sink,
 * no device-to-host copy. Commit has nothing to move (it returns SP_OK); a journal,
 * temp_output or regular_output needs an output and is refused without one.
 *
 * The output, by what OUTPUT names:
 * - a new name or a regular file: the temporary output ".NAME.partial-XXXXXX" in the same
 *   folder (mode 0666 less the umask, as a new file), renamed over NAME by commit;
 * - an existing FIFO or character device: written where it is, never replaced or truncated,
 *   in record order (the sp_io is then sequential: a pipe or a tty has no offsets); a block
 *   device where it is, at the records' offsets. Commit flushes (block devices) and closes.
 *   config.regular_output refuses these instead;
 * - a directory or a socket: refused.
 * An output that is the input (another name for the same file) is refused.
 *
 * Killed runs: a process holds a write lock (fcntl) on its temporary output from creation to
 * commit or close, and the kernel drops it when the process dies. Before it makes its own,
 * sp_file_io_open removes the files of OUTPUT's temporary pattern beside it that it can
 * lock (a run killed by SIGKILL, which no handler sees, leaves one) and keeps those a live
 * run holds; sp_file_io_removed names what it removed. On a file system without locks
 * nothing is removed. The locks are open file description locks (F_OFD_SETLK), so two
 * handles of one process exclude each other too; they conflict with classic fcntl locks that
 * other processes hold. (A process's own classic locks on a file are dropped by the kernel
 * whenever it closes any descriptor of that file, the cleanup's included.)
 *
 * Journals (config.journal, 0.7): a resumable output. The handle keeps ".NAME.journal" beside
 * OUTPUT, naming the temporary output, the input (size, mtime, a hash of its first and last
 * 64 KiB), journal_tag (the caller's text for the stages and their parameters), the record
 * sizes and the output format, then records of the ranges of records durably written, each
 * with a checksum. The sink notes what the staging threads write, in any order, in a small
 * set of ranges; a sync point comes once journal_sync_bytes more output were written or
 * journal_sync_ms passed (64 MiB, 1 s by default; the handle's own thread takes it, so no
 * staging thread waits for the disk), and sp_file_io_sync, commit and close make one. Its order, which makes every crash point
 * safe: the ranges written so far are taken, fdatasync(output), then their records appended
 * and fdatasync(journal); so the journal never claims what a crash could lose. A handle that
 * was opened with a journal keeps the temporary output and the journal when it is closed
 * without commit (a failed run, a stop), and a later open with resume takes them: the cleanup
 * of killed runs' leftovers spares the temporary output it names, a live handle holding it
 * refuses (SP_ERR_BACKEND), a journal made for another input, journal_tag, record sizes or
 * output size is refused with what differs (SP_ERR_INVALID_ARGUMENT: open without resume to
 * start again; the files stay), and a journal cut short or damaged is believed up to its last
 * record that checks (one whose header does not check, or none, is a fresh start). The ranges
 * it holds are not run again: sp_file_io_todo gives the gaps, set one with
 * sp_file_io_set_range and run it, in turn; commit then needs every record of the input
 * written, removes the journal and renames as usual. The result is the same bytes as one run
 * of the whole input when each record's result depends on that record alone: a gap's records
 * are numbered from the gap's start (sp_chunk.first_record). Without resume an open starts
 * afresh, replacing the journal. Not for in-place outputs.
 *
 * Several writers (0.7): handles in several processes writing one temporary output (the
 * maker's, the others with temp_output) each keep a journal of their own, named by
 * config.journal_name, which names the shared temporary output. A resume lists the journals
 * a killed job left in resume_journals: every handle takes the union of their records
 * (sp_file_io_todo_from gives all its gaps, to split between the writers, whatever their
 * number was), the maker claims the temporary output they name. Before the maker's commit
 * every writer makes its records durable (sp_file_io_sync) and the maker merges their
 * journals (sp_file_io_journal_merge): its commit then renames the output into place and
 * removes every journal it took; a writer's commit (temp_output) flushes and removes its
 * own. `streampipe run` under mpirun does this (README, "Several processes").
 *
 * Signals: the library installs no handler. A program that wants SIGINT to leave nothing
 * behind unlinks sp_file_io_temp_path in its handler (the name is complete before
 * config.temp_created is called, and stays until commit or close), then dies of the signal.
 *
 * Errors: as everywhere (streampipe.h, top), a failed open still yields a handle whose
 * sp_file_io_last_error says why, to close as usual. SP_ERR_INVALID_ARGUMENT: the config
 * itself is wrong (NULL, a record size of 0, no path, a range past the input's end, the
 * output being the input); SP_ERR_UNSUPPORTED: a file of a kind that cannot be used (an
 * input that is not a regular file or not a whole number of records, an output that is a
 * directory or a socket); SP_ERR_BACKEND: the operating system refused a call (open,
 * create, allocate, write, flush, rename), named with errno's text in the last error, "no
 * space" for a full disk or device; SP_ERR_OUT_OF_MEMORY. A read or write that fails during
 * a run fails the run with SP_ERR_STAGE_FAILED (sp_pipeline_last_error names the records);
 * the handle's last error then holds the first such failure with errno's text: "no space
 * left" for ENOSPC, EDQUOT or a device that takes no more bytes, "the file ended at byte N"
 * for an input that shrank during the run.
 *
 * Threads: the sp_io's functions are called from the staging threads, several at once; the
 * other calls on one handle must not overlap each other or a run that uses its sp_io.
 */
#ifndef STREAMPIPE_IO_H
#define STREAMPIPE_IO_H

#include "streampipe.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sp_file_io sp_file_io;

/* What the input holds (sp_file_io_config.input_format). AUTO reads the file's first four
 * bytes: the LZ4 frame magic (04 22 4D 18) or the Zstandard one (28 B5 2F FD) make it
 * compressed, anything else raw; the name plays no part. RAW, LZ4 and ZSTD say so instead (a
 * raw file that happens to begin with a magic number). */
typedef enum sp_input_format {
    SP_INPUT_FORMAT_AUTO = 0,
    SP_INPUT_FORMAT_RAW = 1,
    SP_INPUT_FORMAT_LZ4 = 2,
    SP_INPUT_FORMAT_ZSTD = 3
} sp_input_format;

/* Sized (streampipe.h, top): SP_FILE_IO_CONFIG_INIT; size 0 stands for the first layout
 * (0.6, through temp_created_user), fixed for good; the 0.7 fields are seen only with a size
 * that covers them. */
typedef struct sp_file_io_config {
    size_t size;             /* sizeof(sp_file_io_config) as built */
    const char *input;       /* a regular file of whole in_record_bytes records */
    const char *output;      /* where the results go (see the top; NULL: no output, the
                                handle is a source only, 0.7); with output_is_fd, only
                                the name messages give the descriptor */
    size_t in_record_bytes;  /* > 0 */
    size_t out_record_bytes; /* > 0 */
    size_t first_record;     /* the records run: the input's [first_record, +n_records), the */
    size_t n_records;        /* run's record i being the input's first_record + i, written at
                                the output's first_record + i; 0, 0: the whole input. The
                                output is always sized for the whole input (records outside
                                the range are left as they are: zeros in a new output), so
                                that several handles, in several processes, can each run a
                                range of one output. sp_file_io_set_range changes it later */
    const char *temp_output; /* write this temporary output, made at full size by another
                                handle's open (its sp_file_io_temp_path, e.g. in another
                                process), instead of making one: OUTPUT is then only checked
                                against the input. This handle's commit only flushes its
                                writes (the maker commits, once every writer has), its close
                                removes nothing, and it removes no leftovers */
    int regular_output;      /* 1: refuse an output that exists and is not a regular file
                                (SP_ERR_UNSUPPORTED), as several writers need */
    int output_is_fd;        /* 1: write output_fd instead of opening OUTPUT (stdout, a pipe),
                                in place; a duplicate is taken, the caller's stays open. Written
                                in record order (it may be in append mode, where pwrite
                                appends); flushed by commit when it is a block device or a
                                regular file */
    int output_fd;
    /* Called on the opening thread as soon as the temporary output exists and this handle
       holds its lock, before it is sized: where a signal handler that unlinks it is armed
       (the name is sp_file_io_temp_path's). NULL: none. */
    void (*temp_created)(const char *temp_path, void *user);
    void *temp_created_user;
    /* 0.7, seen only with a size that covers them: */
    int input_format;        /* sp_input_format; 0 (AUTO): by the file's magic */
    /* journals (see "Journals" at the top): */
    int journal;             /* 1: keep the journal ".NAME.journal" beside OUTPUT; needs a
                                temporary output of this handle's (not output_is_fd,
                                temp_output, or an existing non-regular OUTPUT) */
    int resume;              /* 1 (with journal): carry on from the journal there, if any */
    const char *journal_tag; /* the stages and their parameters as the caller writes them
                                down (at most 4096 bytes); a resume must give the same text.
                                NULL: "" */
    size_t journal_sync_bytes;   /* a journal record once this much more output is written */
    unsigned journal_sync_ms;    /* ... or this long after the last one; 0, 0: 64 MiB, 1000 */
    /* For tests only: a simulated power cut once test_power_cut_at bytes of output were
       written (in the order the writes come). That write fails the run and later ones are
       dropped; the power goes during the next flush of the output (a sync point, or the
       close's): what was written since the last flush that completed is overwritten with
       0xA5 bytes, as a cut may lose it, and nothing is written or flushed after. */
    int test_power_cut;
    unsigned long long test_power_cut_at;
    /* 0.7: where a compressed input is decompressed (sp_decompress_where) */
    int decompress;
    /* 0.7: several writers of one output (mpirun's ranks), each keeping a journal of its own
       (see "Several writers" at the top): */
    const char *journal_name; /* the journal's file name in OUTPUT's folder (no '/'); NULL:
                                 ".NAME.journal". Needed for a journal with temp_output */
    const char *const *resume_journals; /* with resume: other journals of this output (paths,
                                 NULL-terminated: another run's writers) whose records are
                                 taken too, each checked as the handle's own; all must name
                                 the same work and temporary output. Removed by commit */
    /* 0.7: what the output holds (see "Compressed outputs" at the top): SP_INPUT_FORMAT_RAW,
       _LZ4 or _ZSTD (sp_input_format's names serve both ends); 0 (AUTO): RAW. Never told by
       the output's name */
    int output_format;
    /* 0.7: read input_fd instead of opening INPUT (stdin, a pipe): a stream of raw records
       until its end (see "Stream inputs" at the top); a duplicate is taken, the caller's
       stays open; INPUT, when given, only names it in messages */
    int input_is_fd;
    int input_fd;
} sp_file_io_config;

/* Where a compressed input's blocks are decompressed (sp_file_io_config.decompress).
 * AUTO: inside the ring when it can (below), else on the staging threads; STAGING: always on
 * the staging threads; RING: inside the ring, the run failing where it cannot. In the ring,
 * the staging threads read each chunk's compressed blocks into pinned memory (checking block
 * checksums there), the h2d copies those, and the device decompresses them into the first
 * stage's input (CUDA: nvCOMP, sp_nvcomp_load; HOST: liblz4/libzstd on the stage's queue),
 * never copied back. It needs chunks of whole blocks: the run rounds its chunk down to a
 * multiple of the block size in records (a chunk that still cuts a block, or a file whose
 * blocks differ in size, is decoded on the staging threads); and at least one stage. A chunk
 * the pipeline's config left to the library (chunk_records 0) is then re-picked as the run
 * starts: 4096 blocks (a GPU's batched decompressor wants thousands a batch), at most 512 MiB
 * of the widest record, or the whole input when smaller, within the memory budget; the ring is
 * made anew for it once and the change listed (sp_pipeline_tune_changes).
 * Content checksums (LZ4 -C), over decompressed bytes the host never sees, are not checked
 * in the ring: the input's note says so. */
typedef enum sp_decompress_where {
    SP_DECOMPRESS_AUTO = 0,
    SP_DECOMPRESS_STAGING = 1,
    SP_DECOMPRESS_RING = 2
} sp_decompress_where;

#define SP_FILE_IO_CONFIG_INIT {.size = sizeof(sp_file_io_config)}

/* A compressed input's shape and what the runs since the open (or the last set_range) did
 * with it, for the report. Room to grow: the library fills all of it, reserved words zero. */
typedef struct sp_file_io_input {
    int format;                 /* sp_input_format: RAW, LZ4 or ZSTD (never AUTO) */
    int sequential;             /* 1: decompressed in order on one thread (a single
                                   Zstandard frame, which cannot be split); note says so */
    uint64_t file_bytes;        /* the input file's size */
    uint64_t stream_bytes;      /* its decompressed size (file_bytes for RAW) */
    uint64_t frames, blocks;    /* units of decompression in the block index */
    uint64_t block_checksums;   /* units with a checksum of their own (LZ4 -BX, zstd --check) */
    uint64_t content_checksums; /* LZ4 frames with a content checksum */
    /* the runs': counters the staging threads add to */
    uint64_t bytes_read;        /* compressed bytes read from the file */
    uint64_t bytes_decompressed;
    uint64_t blocks_decompressed;
    uint64_t blocks_reused;     /* a block cut by a piece's boundary, taken from the cache of
                                   the decompression context that had just decoded it */
    uint64_t content_checked;   /* LZ4 content checksums found correct */
    double decompress_s;        /* time in the decompressors, summed over the threads */
    char note[192];             /* how it is read, in words ("" for RAW); after a run, where
                                   its blocks were decompressed and why */
    /* 0.7: decompression in the ring (sp_decompress_where), added up as the counters above */
    uint64_t ring_chunks;       /* chunks whose compressed blocks went through the ring */
    uint64_t ring_blocks;       /* units decompressed there */
    uint64_t ring_bytes_in;     /* compressed bytes the h2d carried for them */
    uint64_t ring_bytes_out;    /* bytes they decompressed to */
    double ring_busy_s;         /* the decompression's time on its queue (a timed run: one
                                   with a report; else 0) */
    uint64_t staging_chunks;    /* chunks decoded on the staging threads in that run */
    uint64_t reserved[2];
} sp_file_io_input;

/* A compressed output's figures (config.output_format), for the report: the runs' since the
 * open. Room to grow: the library fills all of it, reserved words zero. */
typedef struct sp_file_io_output {
    int format;                  /* sp_input_format: RAW, LZ4 or ZSTD */
    uint64_t file_bytes;         /* bytes written to the output (compressed, framing included) */
    uint64_t stream_bytes;       /* the results' bytes before compression */
    uint64_t frames, blocks;     /* frames (one per piece, either format; one empty frame for
                                    no results); LZ4 blocks (Zstandard: its frames) */
    uint64_t blocks_stored;      /* LZ4 blocks kept uncompressed (they did not shrink) */
    double compress_s;           /* time in the compressors, summed over the staging threads */
    char note[160];              /* where and how it was compressed, in words ("" for RAW) */
    uint64_t reserved[4];
} sp_file_io_output;

/* Opens the files as the top of this file says. Whether or not it succeeds, *out is a handle
 * to close with sp_file_io_close (NULL only for SP_ERR_OUT_OF_MEMORY, no memory for the
 * handle, or out NULL: SP_ERR_INVALID_ARGUMENT). A failed open leaves no temporary output
 * and an existing output as it was. A FIFO's open waits for a reader, as any writer's. */
SP_API sp_status sp_file_io_open(const sp_file_io_config *config, sp_file_io **out);
/* The source and sink over the files, for sp_pipeline_run_io: positional (n_records the
 * range's), or sequential for an output written in record order. Valid until commit or
 * close; NULL for a handle whose open failed or that was committed. The same sp_io may run
 * again (after a failed run, set the range again first: commit counts the records written).
 * A range of 0 records has nothing to run (sp_pipeline_run_io refuses a positional sp_io of
 * 0 records): commit it as it is. */
SP_API const sp_io *sp_file_io_get(const sp_file_io *f);
/* The records to run from now on (as config.first_record, n_records; 0, 0: all). Resets the
 * count of records written and the I/O error that commit checks. SP_ERR_INVALID_ARGUMENT for
 * a range past the input's end, or a handle whose open failed. Not during a run. */
SP_API sp_status sp_file_io_set_range(sp_file_io *f, size_t first_record, size_t n_records);
/* Records in the whole input (0 for a handle whose open failed). */
SP_API size_t sp_file_io_records(const sp_file_io *f);
/* The input's format, sizes and decompression counters (see sp_file_io_input), also after
 * commit, until close: SP_OK, or SP_ERR_INVALID_ARGUMENT for NULL or a handle whose open
 * failed. During a run it gives the counters so far (they are atomic); a run's are complete
 * once it has returned. */
SP_API sp_status sp_file_io_input_get(const sp_file_io *f, sp_file_io_input *out);
/* The output's format and, for a compressed one, its figures (see sp_file_io_output), as
 * sp_file_io_input_get: also after commit, until close. SP_OK, or SP_ERR_INVALID_ARGUMENT for
 * NULL or a handle whose open failed. */
SP_API sp_status sp_file_io_output_get(const sp_file_io *f, sp_file_io_output *out);
/* Flushes the writes so far to disk (fsync; nothing for a FIFO or character device). */
SP_API sp_status sp_file_io_sync(sp_file_io *f);
/* Only after a run of the range that succeeded: flushes the output to disk, renames the
 * temporary output into place and flushes the folder (an output written in place is
 * flushed and closed; with temp_output, only flushed). Refused (SP_ERR_INVALID_ARGUMENT)
 * while fewer records were written than the range holds or after a read or write failed
 * (the handle cannot tell a rerun's records from new ones: set the range again before a
 * rerun), or twice. Should the rename's last steps fail, the output is removed again. */
SP_API sp_status sp_file_io_commit(sp_file_io *f);
/* Closes the files and removes the temporary output unless it was committed (or belongs to
 * another handle: temp_output). NULL is a no-op. */
SP_API void sp_file_io_close(sp_file_io *f);
/* Why the last failed call on this handle failed, or the first read or write that failed in
 * a run, with errno's text; "" when nothing has failed. NULL gives a text saying so. */
SP_API const char *sp_file_io_last_error(const sp_file_io *f);
/* The temporary output's path, until commit or close; NULL when there is none (written in
 * place, committed, closed, or another handle's: temp_output gives it). */
SP_API const char *sp_file_io_temp_path(const sp_file_io *f);
/* The i-th leftover of a killed run that the open removed (its path), NULL past the last. */
SP_API const char *sp_file_io_removed(const sp_file_io *f, size_t i);
/* The first range of records still to run: 1 and *first_record, *n_records, or 0 when none
 * is left. With a journal, the first gap of the input's records that are neither in the
 * journal nor written since the open (a resumed handle starts with what the journal holds);
 * without, the range set while its records are not all written. A resume runs each in turn:
 *     while (sp_file_io_todo(f, &first, &n) && st == SP_OK)
 *         if ((st = sp_file_io_set_range(f, first, n)) == SP_OK)
 *             st = sp_pipeline_run_io(pipeline, sp_file_io_get(f), NULL);
 * (a run that fails leaves the gap: stop there, not loop). */
SP_API int sp_file_io_todo(const sp_file_io *f, size_t *first_record, size_t *n_records);
/* The first range still to run at or after record `from` (as sp_file_io_todo, which is
 * from 0): the gaps one by one, for a caller that splits them between several writers. */
SP_API int sp_file_io_todo_from(const sp_file_io *f, size_t from, size_t *first_record,
                                size_t *n_records);
/* Takes the records of another journal of this output (another writer's, made durable by
 * it: the path of its sp_file_io_journal_path) as written, after checking it as a resumed
 * journal is checked (the same work, the same temporary output; a damaged tail is left
 * out): the maker of a temporary output that several writers share merges theirs before
 * its commit, which needs every record written. SP_OK; SP_ERR_INVALID_ARGUMENT for a
 * journal of other work or none of this handle's; SP_ERR_BACKEND when it cannot be read.
 * Commit removes it. Not during a run. */
SP_API sp_status sp_file_io_journal_merge(sp_file_io *f, const char *path);
/* Records written: with a journal, all the output holds (the journal's and this handle's);
 * without, those since the range was set. */
SP_API size_t sp_file_io_done(const sp_file_io *f);
/* Records the journal held when a resumed open took it (0: a fresh start, or no journal). */
SP_API size_t sp_file_io_resumed(const sp_file_io *f);
/* The journal's path (".NAME.journal" beside OUTPUT) until commit; NULL without one. */
SP_API const char *sp_file_io_journal_path(const sp_file_io *f);

#ifdef __cplusplus
}
#endif

#endif /* STREAMPIPE_IO_H */
