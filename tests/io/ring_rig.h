/*
 * The rig of the ring's decompression tests on HOST (test_ring_chunk, test_ring_budget): a
 * Zstandard file of 1 KiB frames (libzstd, one frame per 64 records of 16 bytes) in a
 * directory of its own, run through a mix stage that widens the records to 64 bytes, so that
 * the library's default chunk (8 MiB of 64-byte records) holds 2048 frames, and every output
 * record checked against the reference.
 */
#ifndef SP_TEST_RING_RIG_H
#define SP_TEST_RING_RIG_H

#include <stddef.h>

#include "stages.h"
#include "streampipe.h"
#include "streampipe_io.h"
#include "testbuf.h"

#define IN_REC 16
#define OUT_REC 64
#define FRAME 1024                  /* bytes of records a frame */
#define PER (FRAME / IN_REC)        /* records a frame */
#define DEFAULT_UNITS 2048          /* 8 MiB / OUT_REC / PER: the default chunk's frames */
#define RING_BLOCKS 4096            /* plan.h's SP_RING_DECODE_BLOCKS */

/* The directory (1 when made) and, after, its files and itself removed. */
int ring_rig_open(void);
void ring_rig_close(void);
/* n records in runs of small integers (they compress), written to the file `name` as frames
 * of FRAME bytes; the records (malloc'd), or NULL after a failed check. */
unsigned char *ring_rig_file(test_rng *rng, size_t n, const char *name);
/* The same with frames [noisy_first, + noisy_frames) random bytes (they do not compress),
 * each frame's compressed bytes in frame_bytes[] when not NULL (n / PER + 1 of them). */
unsigned char *ring_rig_file_noisy(test_rng *rng, size_t n, const char *name,
                                   size_t noisy_first, size_t noisy_frames, size_t *frame_bytes);

/* The rig's chain (a mix stage IN_REC -> OUT_REC), which its runs check against: its
 * descs[0] may be swapped for a wrapper (stage_wrap.h) before a pipeline is made of it. */
mix_chain *ring_rig_chain(void);
/* A pipeline of the chain with chunk_records and depth (0: the library's) and the budget. */
sp_pipeline *ring_rig_pipeline(sp_context *ctx, size_t chunk_records, unsigned depth,
                               size_t max_pinned, size_t max_device);

typedef struct chunk_run {
    sp_report report;
    sp_file_io_input in;
    sp_tune_change change[4];
    size_t changes;           /* the pipeline's changes so far */
} chunk_run;

/* The file's records from `first` on through p with `decompress` (sp_decompress_mode): the
 * run must end with `want`; when SP_OK, every record is checked, and with first 0 and
 * SP_DECOMPRESS_RING every chunk must have gone through the ring. 1 when the run ended as
 * wanted (its output checked when it succeeded). */
int ring_rig_run(sp_pipeline *p, const char *name, const unsigned char *in, size_t n,
                 size_t first, int decompress, sp_status want, chunk_run *r);

#endif /* SP_TEST_RING_RIG_H */
