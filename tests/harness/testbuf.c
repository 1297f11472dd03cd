/* Guarded test buffers and comparisons; see testbuf.h. */
#include "testbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

const char *mem_kind_name(mem_kind kind)
{
    switch (kind) {
    case MEM_PAGEABLE: return "pageable";
    case MEM_PINNED: return "pinned";
    case MEM_REGISTERED: return "registered";
    default: return "?";
    }
}

sp_status buf_alloc(test_buf *b, sp_context *ctx, mem_kind kind, size_t bytes)
{
    size_t total = bytes + 2 * BUF_GUARD;
    void *base = NULL;
    sp_status st = SP_OK;
    memset(b, 0, sizeof *b);
    if (kind == MEM_PINNED) {
        st = sp_host_alloc(ctx, total, &base);
    } else {
        base = malloc(total);
        if (base == NULL)
            return SP_ERR_OUT_OF_MEMORY;
        if (kind == MEM_REGISTERED)
            st = sp_host_register(ctx, base, total);
        if (st != SP_OK)
            free(base);
    }
    if (st != SP_OK)
        return st;
    b->ctx = ctx;
    b->kind = kind;
    b->base = base;
    b->data = b->base + BUF_GUARD;
    b->bytes = bytes;
    buf_poison(b, 0);
    return SP_OK;
}

void buf_free(test_buf *b)
{
    if (b->base == NULL)
        return;
    if (b->kind == MEM_PINNED) {
        sp_host_free(b->ctx, b->base);
    } else {
        if (b->kind == MEM_REGISTERED)
            CHECK_EQ(sp_host_unregister(b->ctx, b->base), SP_OK);
        free(b->base);
    }
    memset(b, 0, sizeof *b);
}

void buf_poison(test_buf *b, unsigned char byte)
{
    memset(b->base, BUF_GUARD_BYTE, BUF_GUARD);
    memset(b->data, byte, b->bytes);
    memset(b->data + b->bytes, BUF_GUARD_BYTE, BUF_GUARD);
}

int buf_guards_intact(const test_buf *b)
{
    for (size_t i = 0; i < BUF_GUARD; i++)
        if (b->base[i] != BUF_GUARD_BYTE || b->data[b->bytes + i] != BUF_GUARD_BYTE)
            return 0;
    return 1;
}

size_t compare_records(const void *want, const void *got, size_t n_records, size_t rec,
                       const char *what)
{
    const unsigned char *w = want, *g = got;
    size_t bad = 0, first = 0, last = 0;
    for (size_t r = 0; r < n_records; r++) {
        if (memcmp(w + r * rec, g + r * rec, rec) == 0)
            continue;
        if (bad == 0)
            first = r;
        last = r;
        bad++;
    }
    if (bad == 0)
        return 0;
    size_t j = 0;
    while (w[first * rec + j] == g[first * rec + j])
        j++;
    harness_fail(__FILE__, __LINE__,
                 "%s: %zu of %zu records differ (records %zu..%zu); first at record %zu byte "
                 "%zu: want 0x%02x got 0x%02x",
                 what, bad, n_records, first, last, first, j, w[first * rec + j],
                 g[first * rec + j]);
    return bad;
}

int check_status(sp_status got, sp_status want, const char *errtext, const char *expr,
                 const char *file, int line)
{
    if (got == want)
        return 1;
    return harness_fail(file, line, "%s: got %s (%d), want %s; error text: \"%s\"", expr,
                        sp_status_name(got), (int)got, sp_status_name(want),
                        errtext != NULL ? errtext : "(null)");
}

int parse_backend_arg(int argc, char **argv, sp_backend_kind *kind)
{
    if (argc >= 2 && strcmp(argv[1], "host") == 0) {
        *kind = SP_BACKEND_HOST;
        return 1;
    }
    if (argc >= 2 && strcmp(argv[1], "cuda") == 0) {
        *kind = SP_BACKEND_CUDA;
        return 1;
    }
    fprintf(stderr, "usage: %s host|cuda [test-name-filter]\n", argc > 0 ? argv[0] : "test");
    return 0;
}

/* Opened in each test's process, never in the runner's: a CUDA context does not survive fork. */
int backend_available(sp_backend_kind kind)
{
    sp_context *ctx = NULL;
    sp_status st = sp_context_create(kind, 0, &ctx);
    if (st == SP_OK) {
        sp_context_destroy(ctx);
        return TEST_OK;
    }
    if (kind == SP_BACKEND_CUDA && st == SP_ERR_UNSUPPORTED) {
        harness_skip_reason("no CUDA backend here: %s", sp_context_last_error(ctx));
        sp_context_destroy(ctx); /* a failed open still yields a handle */
        return TEST_SKIP;
    }
    harness_fail(__FILE__, __LINE__, "cannot open the %s backend: %s: %s",
                 sp_backend_name(kind), sp_status_name(st), sp_context_last_error(ctx));
    sp_context_destroy(ctx);
    return TEST_FAIL;
}

static sp_backend_kind setup_kind;

static int backend_setup(void) { return backend_available(setup_kind); }

int run_tests_on_backend(int argc, char **argv, const test_case *tests, size_t n_tests,
                         sp_backend_kind *kind)
{
    if (!parse_backend_arg(argc, argv, kind))
        return 2;
    setup_kind = *kind;
    harness_set_setup(backend_setup, NULL);
    return harness_run(tests, n_tests, argc > 2 ? argv[2] : NULL);
}
