/* Which backends this build has. The CUDA table is defined in src/backend/cuda when CUDA is
 * built; without it the core sees NULL and AUTO resolves to HOST. */
#include "backend/backend.h"

#ifndef SP_HAVE_CUDA
const sp_backend_ops *sp_backend_cuda_ops(void) { return NULL; }

sp_status sp_cuda_error_status(int cuda_error)
{
    return cuda_error == 0 ? SP_OK : SP_ERR_UNSUPPORTED;
}
#endif
