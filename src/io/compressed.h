/* A compressed input behind the file source (file_io.h): its block index, the decompression
 * contexts, the counters the report shows. file_io.c opens and closes it; file_io_rw.c hands
 * it the decompressed byte ranges the engine asks for (file_source_compressed.c). */
#ifndef SP_IO_COMPRESSED_H
#define SP_IO_COMPRESSED_H

#include <stddef.h>
#include <stdint.h>

#include "streampipe_io.h"

struct sp_file_io;
typedef struct sp_compressed sp_compressed;

/* The input's format (SP_INPUT_FORMAT_*): `asked`, or by its first bytes for AUTO. */
sp_status sp_compressed_format(struct sp_file_io *f, int asked, uint64_t file_bytes,
                               int *format);
/* Indexes the open input (f->in_fd, file_bytes long) as `format`, into f->compressed, and
 * gives its decompressed size. SP_OK, or a failure with the handle's error set. */
sp_status sp_compressed_open(struct sp_file_io *f, int format, uint64_t file_bytes,
                             uint64_t *stream_bytes);
/* 1 when the input must be read in order (one Zstandard frame). */
int sp_compressed_sequential(const sp_compressed *z);
/* A new range, [begin, end) of the decompressed stream: counters and checks start over. */
void sp_compressed_reset(sp_compressed *z, uint64_t begin, uint64_t end);
/* Decompressed bytes [at, at + bytes) into dst, from a staging thread (positional: several
 * at once) or the run's thread (sequential). SP_OK, or SP_ERR_STAGE_FAILED with the first
 * failure's text kept (sp_file_io_fail_io). */
sp_status sp_compressed_read(struct sp_file_io *f, void *dst, uint64_t at, size_t bytes);
void sp_compressed_input(sp_compressed *z, sp_file_io_input *out);
void sp_compressed_close(sp_compressed *z);

#endif /* SP_IO_COMPRESSED_H */
