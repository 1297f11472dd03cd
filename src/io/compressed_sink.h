/* A compressed output behind the file sink (file_io.h, streampipe_io.h "Compressed outputs"):
 * file_io.c opens, finishes and frees it; file_io_rw.c hands it each piece of results the
 * staging threads write (file_sink_compressed.c). */
#ifndef SP_IO_COMPRESSED_SINK_H
#define SP_IO_COMPRESSED_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "streampipe_io.h"

struct sp_file_io;
typedef struct sp_compressed_sink sp_compressed_sink;

/* Makes the sink for f's open output (f->out_fd, empty) in `format` (LZ4 or ZSTD); nothing is
 * written until the first piece (each piece is a whole frame). SP_OK, or a failure with the
 * handle's error set. */
sp_status sp_compressed_sink_open(struct sp_file_io *f, int format);
/* Where the pieces are compressed, for the note: parallel, on the staging threads (a
 * positional sp_io), or on the run's thread in order (a sequential one: sp_pipeline_run_io
 * calls a sequential sink there). */
void sp_compressed_sink_where(sp_compressed_sink *s, int parallel);
/* Compresses `records` results from the run's record `first` (bytes at src) on the calling
 * staging thread, then appends, in record order, every piece whose turn has come (this one and
 * those that came early, held until then). SP_OK, or SP_ERR_STAGE_FAILED with the first
 * failure kept (sp_file_io_fail_io). Counts what it appended in f->written. */
sp_status sp_compressed_sink_write(struct sp_file_io *f, const void *src, size_t first,
                                   size_t records);
/* Before a new run of the same handle: drops held pieces; SP_OK while nothing was appended
 * yet, else SP_ERR_INVALID_ARGUMENT (a compressed output is written once, in order). */
sp_status sp_compressed_sink_reset(struct sp_file_io *f);
/* After the last piece: one empty frame when there were no results (else nothing: each
 * piece ended its frame). SP_OK, or SP_ERR_BACKEND with the handle's error set. */
sp_status sp_compressed_sink_finish(struct sp_file_io *f);
void sp_compressed_sink_figures(sp_compressed_sink *s, sp_file_io_output *out);
void sp_compressed_sink_free(sp_compressed_sink *s);

#endif /* SP_IO_COMPRESSED_SINK_H */
