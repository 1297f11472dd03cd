/* Reading the caller's pipeline config (config_read.c). */
#ifndef SP_CONFIG_READ_H
#define SP_CONFIG_READ_H

#include "core/context.h"

/* Reads the caller's config (sized: streampipe.h) into c and checks its stages' reserved
 * words; fails, with the context's error, when either is refused. */
sp_status sp_pipeline_config_read(sp_context *ctx, const sp_pipeline_config *given,
                                  sp_pipeline_config *c);

#endif
