/*
 * Test stages whose every output byte can be checked. A "mix" stage turns each input record
 * into an output record of another size: a 32-bit FNV-1a hash of the whole input record, the
 * stage's salt and the record's absolute index, spread over the output bytes by a finalizer.
 * Any single changed input byte changes the hash, so stale, torn or misplaced data shows.
 *
 * Each stage has a host function and, when CUDA is built, a CUDA function (kernels in
 * stages_cuda.cu). A stage can be told to fail at one chunk, counts its calls, and counts the
 * contract breaches it sees in the sp_chunk it is given.
 */
#ifndef SP_TEST_STAGES_H
#define SP_TEST_STAGES_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "streampipe.h"

#define MIX_MAX_RECORD 64

typedef struct mix_stage {
    char name[24];
    size_t in_rec;              /* bytes of each input record */
    size_t out_rec;             /* bytes of each output record */
    uint32_t salt;
    size_t expect_chunk_records;/* when > 0, first_record must be index * this */
    int position_free;          /* hash each record's index within its chunk rather than
                                   within the run: what graph mode can replay */
    atomic_long fail_chunk;     /* return an error for this chunk index; -1: never */
    atomic_ulong calls;         /* calls of either function */
    atomic_ulong violations;    /* sp_chunk contents that break the contract */
} mix_stage;

/* Sets every field; fail_chunk -1, counters 0. in_rec, out_rec in 1..MIX_MAX_RECORD. */
void mix_stage_init(mix_stage *m, const char *name, size_t in_rec, size_t out_rec,
                    uint32_t salt);
/* The sp_stage for m (user = m): host function always, CUDA function when built. */
sp_stage mix_stage_desc(mix_stage *m);
void mix_stage_reset_counts(mix_stage *m);

/* One record through one stage, as both the host stage and the reference compute it. */
void mix_record(const uint8_t *in, size_t in_rec, uint8_t *out, size_t out_rec, uint32_t salt,
                uint64_t index);

/* What a chain of n_stages mix stages makes of n_records records (n_stages 0: a copy).
 * Records are numbered from first_record. out has room for n_records * the last out_rec. */
void mix_reference(const mix_stage *stages, size_t n_stages, size_t in_rec, const void *in,
                   size_t n_records, size_t first_record, void *out);
/* The same for a run cut into chunks of chunk_records: position-free stages number records
 * from 0 in every chunk, the others through the whole run. */
void mix_reference_run(const mix_stage *stages, size_t n_stages, size_t in_rec, const void *in,
                       size_t n_records, size_t chunk_records, void *out);

/* A chain of up to 4 mix stages named alpha, bravo, charlie, delta (no name is a prefix of
 * another or of "h2d"/"d2h", so fault delays can target each queue alone). */
#define CHAIN_MAX 4
typedef struct mix_chain {
    size_t in_rec;
    size_t n_stages;
    mix_stage stages[CHAIN_MAX];
    sp_stage descs[CHAIN_MAX];
} mix_chain;

/* out_recs[s] is stage s's output record size; salts come from seed. */
void mix_chain_init(mix_chain *c, size_t in_rec, size_t n_stages, const size_t *out_recs,
                    uint32_t seed);
size_t mix_chain_out_rec(const mix_chain *c);
/* The name stage s of any chain gets. */
const char *mix_chain_name(size_t s);
/* A pipeline config for the chain (the 0.7 layout), timed as test_timeline_mode says. */
sp_pipeline_config mix_chain_config(const mix_chain *c, size_t chunk_records, unsigned depth);
/* The timeline the tests' pipelines ask for: SP_TEST_TIMELINE=cupti in the environment (the
 * GPU check's second ctest pass) makes it CUPTI's activity records, else events. A test-only
 * knob: the library reads no environment. */
sp_timeline_mode test_timeline_mode(void);
/* Makes every stage of the chain position-free (see mix_stage). */
void mix_chain_position_free(mix_chain *c);
/* Sets expect_chunk_records on every stage and zeroes the counters. */
void mix_chain_arm(mix_chain *c, size_t chunk_records);
unsigned long mix_chain_violations(const mix_chain *c);

/* The plainest HOST stage: copies 4-byte records (floats, uint32s) as they are; user unused.
 * For tests of the engine's timing, configs and structs, where what the stage computes does
 * not matter. */
sp_status copy4_host(const sp_chunk *c, void *user);

#ifdef SP_HAVE_CUDA
/* Enqueues the mix kernel on `stream` (a cudaStream_t). Returns 0 or a cudaError_t value. */
int sp_test_mix_cuda(const void *in, void *out, size_t records, size_t in_rec, size_t out_rec,
                     uint32_t salt, size_t first_record, void *stream);
/* A consumer's own CUDA stream (the hand-off tests), a copy on it and a sync: 0 or a
 * cudaError_t value. */
int sp_test_stream_new(void **stream);
int sp_test_copy_async(void *dst, const void *src, size_t bytes, void *stream);
int sp_test_stream_sync(void *stream);
void sp_test_stream_free(void *stream);
#endif

#endif /* SP_TEST_STAGES_H */
