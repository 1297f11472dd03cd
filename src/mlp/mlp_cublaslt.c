/*
 * cuBLASLt opened at run time (mlp_cublaslt.h), as src/backend/cuda/cuda_activity.c opens
 * libcupti: so that no program needs libcublasLt to start, only the MLP's CUDA stages to be
 * made (the first sp_mlp_gemm_create). Only built with CUDA.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "mlp/mlp_cublaslt.h"
#include "mlp/model/model_error.h"

/* The loader's name, then where the toolkit that built the library keeps it. */
static const char *const g_names[] = {
    SP_MLP_CUBLASLT_SONAME,
#if defined(SP_CUBLASLT_DIR)
    SP_CUBLASLT_DIR "/" SP_MLP_CUBLASLT_SONAME,
#endif
};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static sp_mlp_cublaslt g_table;
static sp_status g_status = SP_OK;
static char g_reason[SP_MLP_ERROR_SIZE]; /* why g_status is not SP_OK */

/* Appends "; text" (or text, first) to buf[0..size), cut to fit. */
static void append(char *buf, size_t size, const char *text)
{
    size_t used = strlen(buf);
    if (used + 1 < size)
        snprintf(buf + used, size - used, "%s%s", used > 0 ? "; " : "", text);
}

/* dlsym's void * to a function pointer: POSIX allows it; ISO C has no such conversion. */
#define LOAD(name) load_symbol(lib, #name, (void **)&table->name, err, err_size)

static int load_symbol(void *lib, const char *name, void **slot, char *err, size_t err_size)
{
    (void)dlerror(); /* clear: dlsym's NULL is an error only when dlerror says so */
    *slot = dlsym(lib, name);
    if (*slot != NULL)
        return 1;
    const char *why = dlerror();
    sp_model_fail(err, err_size, SP_ERR_UNSUPPORTED,
                  "cuBLASLt (" SP_MLP_CUBLASLT_SONAME ") lacks %s, which the MLP's CUDA stages "
                  "use: %s",
                  name, why != NULL ? why : "the symbol is NULL");
    return 0;
}

static int load_all(void *lib, sp_mlp_cublaslt *table, char *err, size_t err_size)
{
    return LOAD(cublasLtCreate) && LOAD(cublasLtDestroy) && LOAD(cublasLtGetStatusName) &&
           LOAD(cublasLtGetStatusString) && LOAD(cublasLtMatmulDescCreate) &&
           LOAD(cublasLtMatmulDescDestroy) && LOAD(cublasLtMatmulDescSetAttribute) &&
           LOAD(cublasLtMatrixLayoutCreate) && LOAD(cublasLtMatrixLayoutDestroy) &&
           LOAD(cublasLtMatrixLayoutSetAttribute) && LOAD(cublasLtMatmulPreferenceCreate) &&
           LOAD(cublasLtMatmulPreferenceDestroy) &&
           LOAD(cublasLtMatmulPreferenceSetAttribute) &&
           LOAD(cublasLtMatmulAlgoGetHeuristic) && LOAD(cublasLtMatmul);
}

sp_status sp_mlp_cublaslt_open(const char *const *names, size_t n_names, sp_mlp_cublaslt *table,
                               void **library, char *err, size_t err_size)
{
    memset(table, 0, sizeof *table);
    *library = NULL;
    char tried[SP_MLP_ERROR_SIZE] = "";
    void *lib = NULL;
    for (size_t k = 0; k < n_names && lib == NULL; k++) {
        lib = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL) {
            const char *why = dlerror(); /* names the file it could not open */
            append(tried, sizeof tried, why != NULL ? why : names[k]);
        }
    }
    if (lib == NULL)
        return sp_model_fail(err, err_size, SP_ERR_UNSUPPORTED,
                             "the MLP's CUDA stages need cuBLASLt (" SP_MLP_CUBLASLT_SONAME
                             "), which dlopen could not open: %s",
                             tried[0] != '\0' ? tried : "no name to try");
    if (!load_all(lib, table, err, err_size)) {
        memset(table, 0, sizeof *table);
        dlclose(lib);
        return SP_ERR_UNSUPPORTED;
    }
    *library = lib;
    return SP_OK;
}

static void open_once(void)
{
    void *lib = NULL; /* kept open: the stages' handles use it until the process ends */
    g_status = sp_mlp_cublaslt_open(g_names, sizeof g_names / sizeof g_names[0], &g_table, &lib,
                                    g_reason, sizeof g_reason);
}

sp_status sp_mlp_cublaslt_get(const sp_mlp_cublaslt **out, char *err, size_t err_size)
{
    *out = NULL;
    pthread_once(&g_once, open_once);
    if (g_status != SP_OK)
        return sp_model_fail(err, err_size, g_status, "%s", g_reason);
    *out = &g_table;
    return SP_OK;
}
