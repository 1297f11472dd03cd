/*
 * Buffers for pipeline tests: pageable, pinned (sp_host_alloc) or registered (malloc +
 * sp_host_register), each with guard bytes on both sides so that a write outside the range
 * shows; poisoning; record-by-record comparison that says where the first difference is.
 */
#ifndef SP_TEST_TESTBUF_H
#define SP_TEST_TESTBUF_H

#include <stddef.h>

#include "harness.h"
#include "streampipe.h"

typedef enum mem_kind { MEM_PAGEABLE = 0, MEM_PINNED, MEM_REGISTERED, MEM_KINDS } mem_kind;

const char *mem_kind_name(mem_kind kind);

#define BUF_GUARD 64
#define BUF_GUARD_BYTE 0xE7

typedef struct test_buf {
    sp_context *ctx;
    mem_kind kind;
    unsigned char *base; /* the allocation: guard, data, guard */
    unsigned char *data; /* `bytes` usable bytes */
    size_t bytes;
} test_buf;

/* bytes may be 0 (the guards are still there, so data is never NULL). */
sp_status buf_alloc(test_buf *b, sp_context *ctx, mem_kind kind, size_t bytes);
void buf_free(test_buf *b);
/* Fills the data with `byte` and rewrites the guards. */
void buf_poison(test_buf *b, unsigned char byte);
/* 1 when neither guard was written. */
int buf_guards_intact(const test_buf *b);

/* Compares n_records records of rec bytes; reports the first difference and the count through
 * the harness (as a failed check) and returns the number of records that differ. */
size_t compare_records(const void *want, const void *got, size_t n_records, size_t rec,
                       const char *what);

/* Reports got != want with both status names and the error text. Returns 1 when equal. */
int check_status(sp_status got, sp_status want, const char *errtext, const char *expr,
                 const char *file, int line);
#define CHECK_STATUS(got, want, errtext) \
    check_status((got), (want), (errtext), #got, __FILE__, __LINE__)

/* argv[1] is "host" or "cuda"; otherwise prints usage and returns 0. */
int parse_backend_arg(int argc, char **argv, sp_backend_kind *kind);
/* A test's setup: TEST_OK when a context of `kind` opens here; TEST_SKIP (with the reason)
 * when CUDA is absent (SP_ERR_UNSUPPORTED); else a failed check and TEST_FAIL. */
int backend_available(sp_backend_kind kind);
/* main() of a test binary run per backend: `prog host|cuda [filter]`. Sets *kind and runs the
 * tests, each skipped (77 when all are) where the backend is absent. */
int run_tests_on_backend(int argc, char **argv, const test_case *tests, size_t n_tests,
                         sp_backend_kind *kind);

#endif /* SP_TEST_TESTBUF_H */
