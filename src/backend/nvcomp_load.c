/* sp_nvcomp_load and sp_nvcomp_status (streampipe.h): dlopen of libnvcomp, its symbols and
 * its version checked once; the table kept for the process (nvcomp_load.h). The library
 * reads no environment: where to look is the caller's (the CLI, the Python package). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend/nvcomp_load.h"
#include "streampipe.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static sp_nvcomp_api g_api;
static int g_loaded;
static char g_why[256] = "not loaded (sp_nvcomp_load was not called)";

/* The majors whose batched API is the one declared in nvcomp_load.h. */
static int supported(unsigned version) { return version / 1000 == 5 || version / 1000 == 6; }

static sp_status load_locked(const char *path, char *why, size_t n)
{
    const char *name = path ? path : "libnvcomp.so.6";
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(why, n, "nvCOMP not found: dlopen(\"%s\"): %s", name, e ? e : "failed");
        return SP_ERR_UNSUPPORTED;
    }
    static const char *const names[] = {
        "nvcompGetProperties", "nvcompBatchedLZ4DecompressGetTempSize",
        "nvcompBatchedZstdDecompressGetTempSize", "nvcompBatchedLZ4DecompressAsync",
        "nvcompBatchedZstdDecompressAsync"};
    void *sym[5];
    for (size_t k = 0; k < 5; k++)
        if (!(sym[k] = dlsym(lib, names[k]))) {
            snprintf(why, n, "nvCOMP at \"%s\" lacks %s (not nvCOMP 5 or 6?)", name, names[k]);
            dlclose(lib);
            return SP_ERR_UNSUPPORTED;
        }
    sp_nvcomp_properties props = {0};
    sp_nvcomp_properties_fn get_props;
    memcpy(&get_props, &sym[0], sizeof get_props); /* dlsym's object pointer to a function's */
    if (get_props(&props) != 0 || !supported(props.version)) {
        snprintf(why, n, "nvCOMP at \"%s\" is version %u.%u.%u: this streampipe supports "
                 "majors 5 and 6", name, props.version / 1000, props.version % 1000 / 100,
                 props.version % 100);
        dlclose(lib);
        return SP_ERR_UNSUPPORTED;
    }
    g_api.version = props.version;
    memcpy(&g_api.lz4_temp, &sym[1], sizeof g_api.lz4_temp);
    memcpy(&g_api.zstd_temp, &sym[2], sizeof g_api.zstd_temp);
    memcpy(&g_api.lz4_decompress, &sym[3], sizeof g_api.lz4_decompress);
    memcpy(&g_api.zstd_decompress, &sym[4], sizeof g_api.zstd_decompress);
    return SP_OK; /* the library stays open for the process */
}

sp_status sp_nvcomp_load(const char *path, char *why, size_t why_size)
{
    char local[256];
    pthread_mutex_lock(&g_lock);
    sp_status st = SP_OK;
    if (!g_loaded) {
        st = load_locked(path, local, sizeof local);
        g_loaded = st == SP_OK;
        if (st != SP_OK)
            snprintf(g_why, sizeof g_why, "%s", local);
    }
    if (why && why_size)
        snprintf(why, why_size, "%s", st == SP_OK ? "" : local);
    pthread_mutex_unlock(&g_lock);
    return st;
}

int sp_nvcomp_status(unsigned *version, char *why, size_t why_size)
{
    pthread_mutex_lock(&g_lock);
    int loaded = g_loaded;
    if (version)
        *version = loaded ? g_api.version : 0;
    if (why && why_size)
        snprintf(why, why_size, "%s", loaded ? "" : g_why);
    pthread_mutex_unlock(&g_lock);
    return loaded;
}

const sp_nvcomp_api *sp_nvcomp_api_get(char *why, size_t why_size)
{
    pthread_mutex_lock(&g_lock);
    const sp_nvcomp_api *api = g_loaded ? &g_api : NULL;
    if (!api && why && why_size)
        snprintf(why, why_size, "%s", g_why);
    pthread_mutex_unlock(&g_lock);
    return api;
}
