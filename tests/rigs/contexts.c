/* Contexts the tests share (contexts.h). */
#include <string.h>

#include "contexts.h"
#include "harness.h"
#include "streampipe_fault.h"
#include "testbuf.h"

sp_context *rig_open_plain(sp_backend_kind kind)
{
    sp_context *ctx = NULL;
    CHECK_STATUS(sp_context_create(kind, 0, &ctx), SP_OK, sp_context_last_error(ctx));
    return ctx;
}

sp_context *rig_open_delayed(sp_backend_kind kind, uint64_t seed)
{
    sp_fault_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.delay_us = 20;
    cfg.random_delay_us = 150;
    cfg.seed = (unsigned long)seed;
    sp_context *ctx = NULL;
    CHECK_STATUS(sp_context_create_fault(kind, 0, &cfg, &ctx), SP_OK, sp_context_last_error(ctx));
    return ctx;
}

int rig_open_or_skip(sp_backend_kind kind, sp_context **ctx)
{
    *ctx = NULL;
    sp_status st = sp_context_create(kind, 0, ctx);
    if (kind == SP_BACKEND_CUDA && st == SP_ERR_UNSUPPORTED) {
        harness_skip_reason("no CUDA backend here: %s", sp_context_last_error(*ctx));
        sp_context_destroy(*ctx);
        *ctx = NULL;
        return TEST_SKIP;
    }
    if (!CHECK_STATUS(st, SP_OK, sp_context_last_error(*ctx))) {
        sp_context_destroy(*ctx);
        *ctx = NULL;
        return TEST_FAIL;
    }
    return TEST_OK;
}
