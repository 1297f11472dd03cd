/* Names shared by the text and JSON outputs, so both say the same thing. */
#include "bench.h"

const char *bench_memory_name(bench_memory memory)
{
    return memory == BENCH_MEMORY_PINNED ? "pinned" : "pageable";
}

const char *bench_engine_kind_name(sp_engine_kind kind)
{
    switch (kind) {
    case SP_ENGINE_STAGE_IN: return "stage-in";
    case SP_ENGINE_H2D: return "h2d";
    case SP_ENGINE_COMPUTE: return "compute";
    case SP_ENGINE_D2H: return "d2h";
    case SP_ENGINE_STAGE_OUT: return "stage-out";
    }
    return "unknown";
}
