/* The contexts the stream and device-end tests open: the backend under test as it is, and
 * the same behind the fault backend with random delays before every operation on every
 * queue (which turns a missing wait into a wrong output). A failure to open is a failed
 * check; the context (a handle even so) is returned for the caller to destroy. */
#ifndef SP_TEST_CONTEXTS_H
#define SP_TEST_CONTEXTS_H

#include <stdint.h>

#include "streampipe.h"

sp_context *rig_open_plain(sp_backend_kind kind);
/* A context of `kind` in *ctx: TEST_OK; TEST_SKIP with the reason when it is CUDA and this
 * build or machine has none; TEST_FAIL (a failed check) otherwise. *ctx is NULL unless OK. */
int rig_open_or_skip(sp_backend_kind kind, sp_context **ctx);
/* 20 us before every operation plus up to 150 us more, drawn from `seed`. */
sp_context *rig_open_delayed(sp_backend_kind kind, uint64_t seed);

#endif
