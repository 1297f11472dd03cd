/*
 * The one door from the tests into src/core. A white-box test, or the harness, that needs the
 * core's private structs or functions includes this header, and no file under tests/ names a
 * "core/..." header itself (tests/CMakeLists.txt refuses to configure if one does). So what
 * the tests know of the core's insides is this list, and a change to the core's private
 * headers finds its test users here. A test that needs only the public API (include/) must
 * not include it.
 *
 * Who uses what, to keep the list short (remove a header when its last user goes):
 *   clock.h         sp_now, the core's clock: test_stream_errors, test_timing_infer
 *   context.h       a context's backend table (ops): test_trace, test_ring_budget (its
 *                   stand-in decompressor); the HOST allocator's count (backend.h,
 *                   sp_backend_host_memory_held): test_tune_budget, test_ring_budget
 *   live_objects.h  the live-handle count after every test: harness_test.c
 *   pipeline.h      a pipeline's timeline and inferred starts: test_timing_infer
 *   plan.h          chunk and depth arithmetic: test_core_units
 *   runs.h          batches fed behind each other (sp_pipeline_run_feed): test_tune_run
 *   staging_pool.h  the staging threads: test_core_units
 *   timing.h        which chunks a sampled run times: test_sampled
 *   timeline.h      the timeline and its figures: test_core_units, test_timing_infer,
 *                   test_trace_figures
 *   tuner.h         the chunk and depth tuner: test_tuner
 */
#ifndef SP_TEST_CORE_DOOR_H
#define SP_TEST_CORE_DOOR_H

#include "core/clock.h"
#include "core/context.h"
#include "core/live_objects.h"
#include "core/pipeline.h"
#include "core/plan.h"
#include "core/runs.h"
#include "core/staging_pool.h"
#include "core/timeline.h"
#include "core/tuner.h"
#include "core/timing.h"

#endif /* SP_TEST_CORE_DOOR_H */
