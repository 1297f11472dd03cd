/* --sweep and --sweep-values: which setting to sweep, over which values, and the default
 * values of each. Every value is range-checked here; the sweep trusts them. */
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "options.h"

/* bench_sweep_parameter's order; each swept setting is an option whose range it takes. */
static const char *const parameter_names[] = {"none", "chunk", "depth", "iters"};

#define COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

static const unsigned long long default_chunks[] = {262144, 524288, 1048576, 2097152,
                                                    4194304, 8388608};
static const unsigned long long default_depths[] = {2, 3, 4, 5, 6, 8};
static const unsigned long long default_iters_cuda[] = {0, 10, 100, 1000};
/* A tenth of the CUDA list: on two CPU cores iters 1000 takes half a minute per run of the
 * small workload, so the CUDA list would take minutes where this one takes seconds. */
static const unsigned long long default_iters_host[] = {0, 1, 10, 100};

static void print_list(const char *name, const unsigned long long *values, size_t n,
                       FILE *out)
{
    fprintf(out, "%s", name);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%c%llu", i == 0 ? ' ' : ',', values[i]);
}

void bench_sweep_print_defaults(FILE *out)
{
    print_list("  chunk ", default_chunks, COUNT_OF(default_chunks), out);
    print_list(" records\n  depth ", default_depths, COUNT_OF(default_depths), out);
    print_list("\n  iters ", default_iters_cuda, COUNT_OF(default_iters_cuda), out);
    print_list(" on cuda;", default_iters_host, COUNT_OF(default_iters_host), out);
    fputs(" on host (a CPU takes minutes at 1000)\n", out);
}

const char *bench_sweep_parameter_name(bench_sweep_parameter parameter)
{
    return parameter_names[parameter];
}

static int is_listed(const bench_sweep_request *request, unsigned long long value)
{
    for (size_t i = 0; i < request->n_values; i++)
        if (request->values[i] == value)
            return 1;
    return 0;
}

static int parse_one_value(const char *item, bench_sweep_request *request)
{
    const char *name = parameter_names[request->parameter];
    unsigned long long value = 0, min = 0, max = 0;
    bench_option_range(name, &min, &max);
    /* A chunk or depth of 0 ("library's choice") is no value to sweep: the default row
     * covers it. */
    if (request->parameter != BENCH_SWEEP_ITERS && min == 0)
        min = 1;
    if (cli_parse_count(item, max, &value) != 0 || value < min)
        return cli_usage_error("--sweep-values: '%s' is not a valid %s value (a count in "
                               "[%llu, %llu])", item, name, min, max);
    if (is_listed(request, value))
        return cli_usage_error("--sweep-values: %s %llu is listed twice", name, value);
    if (request->n_values == BENCH_SWEEP_MAX_VALUES)
        return cli_usage_error("--sweep-values: more than %d values", BENCH_SWEEP_MAX_VALUES);
    request->values[request->n_values++] = value;
    return CLI_EXIT_OK;
}

static int parse_values(const char *text, bench_sweep_request *request)
{
    const char *cursor = text;
    while (cursor != NULL) {
        char item[32];
        if (cli_next_item(&cursor, item, sizeof item) != 0)
            return cli_usage_error("--sweep-values: '%s' has an item too long to be a count",
                                   text);
        if (item[0] == '\0')
            return cli_usage_error("--sweep-values: '%s' has an empty item", text);
        int rc = parse_one_value(item, request);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    return CLI_EXIT_OK;
}

int bench_sweep_parse(const char *name, const char *values, bench_sweep_request *request)
{
    memset(request, 0, sizeof *request);
    for (size_t p = BENCH_SWEEP_CHUNK; p < COUNT_OF(parameter_names) && name != NULL; p++)
        if (strcmp(name, parameter_names[p]) == 0)
            request->parameter = (bench_sweep_parameter)p;
    if (request->parameter == BENCH_SWEEP_NONE)
        return cli_usage_error("--sweep: '%s' is not chunk, depth or iters",
                               name != NULL ? name : "");
    return values != NULL ? parse_values(values, request) : CLI_EXIT_OK;
}

static void copy_values(const unsigned long long *values, size_t n,
                        bench_sweep_request *request)
{
    memcpy(request->values, values, n * sizeof *values);
    request->n_values = n;
}

void bench_sweep_default_values(sp_backend_kind backend, bench_sweep_request *request)
{
    switch (request->parameter) {
    case BENCH_SWEEP_NONE: break;
    case BENCH_SWEEP_CHUNK:
        copy_values(default_chunks, COUNT_OF(default_chunks), request);
        break;
    case BENCH_SWEEP_DEPTH:
        copy_values(default_depths, COUNT_OF(default_depths), request);
        break;
    case BENCH_SWEEP_ITERS:
        if (backend == SP_BACKEND_CUDA)
            copy_values(default_iters_cuda, COUNT_OF(default_iters_cuda), request);
        else
            copy_values(default_iters_host, COUNT_OF(default_iters_host), request);
        break;
    }
}

size_t bench_sweep_clamp_chunks(bench_sweep_request *request, size_t records)
{
    if (request->parameter != BENCH_SWEEP_CHUNK)
        return 0;
    size_t above = 0, kept = 0, n = request->n_values;
    for (size_t i = 0; i < n; i++) {
        unsigned long long value = request->values[i];
        if (value > records) {
            above++;
            value = records;
        }
        request->n_values = kept; /* is_listed looks at the values kept so far */
        if (!is_listed(request, value))
            request->values[kept++] = value;
    }
    request->n_values = kept;
    return above;
}
