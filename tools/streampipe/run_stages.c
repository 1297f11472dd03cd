/* `streampipe run --stages LIST`: the stage chain a file is streamed through. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "cli.h"
#include "run_cmd.h"

static int parse_sinmix(const char *spec, run_stage_list *list)
{
    unsigned long long iters = 100;
    const char *params = spec + strlen("sinmix");
    if (*params == ':') {
        if (strncmp(params + 1, "iters=", 6) != 0)
            return cli_usage_error("--stages: '%s': sinmix takes iters=N", spec);
        if (cli_parse_count(params + 7, CLI_SINMIX_MAX_ITERS, &iters) != 0)
            return cli_usage_error("--stages: '%s': iters is not a count up to %llu", spec,
                                   CLI_SINMIX_MAX_ITERS);
    } else if (*params != '\0') {
        return cli_usage_error("--stages: unknown stage '%s'", spec);
    }
    if (list->n >= SP_MAX_STAGES) /* before sinmix[n] and stages[n] are written */
        return cli_usage_error("--stages: more than %d stages (a pipeline's most, "
                               "SP_MAX_STAGES)", SP_MAX_STAGES);
    if (list->n > 0 && list->out_record_bytes != sizeof(float))
        return cli_usage_error("--stages: sinmix takes float records, but the stage before it "
                               "gives %zu-byte records", list->out_record_bytes);
    list->sinmix[list->n].iters = (unsigned)iters;
    list->stages[list->n] = sp_sinmix_stage(&list->sinmix[list->n]);
    if (list->n == 0)
        list->in_record_bytes = sizeof(float);
    list->out_record_bytes = sizeof(float);
    list->n++;
    return CLI_EXIT_OK;
}

/* "mlp:PATH" or "mlp:PATH:fp32|tf32"; the stages are built once the context is open. */
static int parse_mlp(char *spec, run_stage_list *list)
{
    if (list->mlp_path)
        return cli_usage_error("--stages: one mlp stage at most");
    if (list->n > 0)
        return cli_usage_error("--stages: mlp reads 64-byte images, so it must come first");
    if (list->n + SP_MLP_STAGES > SP_MAX_STAGES)
        return cli_usage_error("--stages: more than %d stages (a pipeline's most, "
                               "SP_MAX_STAGES)", SP_MAX_STAGES);
    char *path = spec + strlen("mlp:");
    char *precision = strrchr(path, ':');
    list->mlp_precision = SP_MLP_FP32;
    if (precision && (strcmp(precision, ":fp32") == 0 || strcmp(precision, ":tf32") == 0)) {
        list->mlp_precision = strcmp(precision, ":tf32") == 0 ? SP_MLP_TF32 : SP_MLP_FP32;
        *precision = '\0';
    }
    if (*path == '\0')
        return cli_usage_error("--stages: mlp needs a model file: mlp:MODEL.safetensors");
    list->mlp_path = path;
    list->mlp_at = list->n;
    list->n += SP_MLP_STAGES; /* filled by run_build_stages */
    list->in_record_bytes = SP_MLP_INPUTS;
    list->out_record_bytes = 0; /* the head's, known once built */
    return CLI_EXIT_OK;
}

static int parse_one(char *spec, run_stage_list *list)
{
    if (strncmp(spec, "sinmix", 6) == 0)
        return parse_sinmix(spec, list);
    if (strncmp(spec, "mlp:", 4) == 0)
        return parse_mlp(spec, list);
    return cli_usage_error("--stages: unknown stage '%s' (sinmix:iters=N, mlp:MODEL)", spec);
}

/* Split by hand, not with strtok, which skips empty entries: ",", "a,,b" and "a," name no
 * stage where one was meant, and a list of none has no record size to read the input by. */
int run_parse_stages(const char *text, run_stage_list *list)
{
    memset(list, 0, sizeof *list);
    static char copy[4096]; /* the MLP path points into it; one run per process */
    if (!text || text[0] == '\0')
        return cli_usage_error("--stages: give a list such as sinmix:iters=100");
    if (strlen(text) >= sizeof copy)
        return cli_usage_error("--stages: the list is longer than %zu characters",
                               sizeof copy - 1);
    strcpy(copy, text);
    for (char *spec = copy, *comma; spec; spec = comma ? comma + 1 : NULL) {
        comma = strchr(spec, ',');
        if (comma)
            *comma = '\0';
        if (*spec == '\0')
            return cli_usage_error("--stages: '%s' has an empty entry: name a stage between "
                                   "each ',' (sinmix:iters=N, mlp:MODEL)", text);
        int rc = parse_one(spec, list);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (list->mlp_path && list->n > SP_MLP_STAGES)
        return cli_usage_error("--stages: nothing may follow mlp (its head gives labels)");
    return CLI_EXIT_OK;
}

/* SP_OK, or the chunk failed when it holds record fail_at. */
static sp_status fail_if_held(const run_stage_list *list, const sp_chunk *chunk)
{
    if (list->fail_at < chunk->first_record ||
        list->fail_at - chunk->first_record >= chunk->records)
        return SP_OK;
    return sp_chunk_fail(chunk, SP_ERR_STAGE_FAILED, "failing on purpose at record %llu "
                         "(STREAMPIPE_TEST_FAIL_AT_RECORD)", list->fail_at);
}

static sp_status fail_host(const sp_chunk *chunk, void *user)
{
    run_stage_list *list = user;
    sp_status st = fail_if_held(list, chunk);
    return st != SP_OK ? st : list->fail_inner.host(chunk, list->fail_inner.user);
}

static sp_status fail_cuda(const sp_chunk *chunk, void *user)
{
    run_stage_list *list = user;
    sp_status st = fail_if_held(list, chunk);
    return st != SP_OK ? st : list->fail_inner.cuda(chunk, list->fail_inner.user);
}

/* The test hook of run_stage_list.fail_at, around the last stage. */
static void wrap_failing(run_stage_list *list)
{
    const char *v = getenv("STREAMPIPE_TEST_FAIL_AT_RECORD");
    if (!v || !*v || list->n == 0)
        return;
    list->fail_at = strtoull(v, NULL, 10);
    sp_stage *last = &list->stages[list->n - 1];
    list->fail_inner = *last;
    last->user = list;
    last->host = list->fail_inner.host ? fail_host : NULL;
    last->cuda = list->fail_inner.cuda ? fail_cuda : NULL;
}

int run_build_stages(run_stage_list *list, sp_context *ctx)
{
    int rc = list->mlp_path ? run_mlp_build(list, ctx) : CLI_EXIT_OK;
    if (rc == CLI_EXIT_OK)
        wrap_failing(list);
    return rc;
}
