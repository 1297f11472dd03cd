/* Names shared by the text and JSON outputs, so both say the same thing. */
#include "bench.h"

const char *bench_memory_name(bench_memory memory)
{
    return memory == BENCH_MEMORY_PINNED ? "pinned" : "pageable";
}

