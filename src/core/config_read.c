/* A caller's pipeline config, read as its size says (core/sized.h) into the library's own
 * layout, and its stages checked for fields of a newer version, before anything else looks
 * at them. */
#include "core/config_read.h"
#include "core/sized.h"

/* sp_stage keeps its size (streampipe.h): a stage from a newer header that uses one of the
 * reserved words asks for something this library cannot do. */
static sp_status check_reserved(sp_context *ctx, const sp_pipeline_config *c)
{
    for (size_t i = 0; i < c->n_stages; i++)
        for (size_t k = 0; k < sizeof c->stages[i].reserved / sizeof c->stages[i].reserved[0];
             k++)
            if (c->stages[i].reserved[k] != 0)
                return sp_context_fail(ctx, SP_ERR_UNSUPPORTED, "config: stage %zu sets a field "
                                       "this library does not know (reserved[%zu]; built "
                                       "against a newer streampipe?)", i, k);
    return SP_OK;
}

sp_status sp_pipeline_config_read(sp_context *ctx, const sp_pipeline_config *given,
                                  sp_pipeline_config *c)
{
    const char *why;
    sp_status st = sp_sized_read(c, sizeof *c, given, SP_PIPELINE_CONFIG_SIZE_0_5, &why);
    if (st != SP_OK)
        return sp_context_fail(ctx, st, "config: %s", why);
    if (c->stages == NULL || c->n_stages > SP_MAX_STAGES)
        return SP_OK; /* check_config says what is wrong, without reading the stages */
    return check_reserved(ctx, c);
}
