/* Making and freeing a pipeline (pipeline.c): every queue, event and buffer is made once, at
 * create, and reused by every run. The fields are pipeline_fields.h's; what may be done with
 * them after create, pipeline_state.h's and the owners' headers. */
#ifndef SP_PIPELINE_H
#define SP_PIPELINE_H

#include "core/pipeline_state.h"

#endif
