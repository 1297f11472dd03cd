/* cuBLASLt opened at run time (src/mlp/mlp_cublaslt.c), checked without a GPU: opening the
 * library and finding its functions needs neither a device nor a driver. The process's table
 * opens here from the toolkit the tests were built with; a missing library and one without
 * cuBLASLt's functions are refused with SP_ERR_UNSUPPORTED, the library and dlerror's text. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <string.h>

#include "harness.h"
#include "mlp/mlp_cublaslt.h"
#include "mlp/model/model_error.h"

/* Every entry of the table, as untyped pointers (each member is one function pointer). */
static size_t table_nulls(const sp_mlp_cublaslt *t)
{
    void (*entries[sizeof *t / sizeof(void (*)(void))])(void);
    memcpy(entries, t, sizeof entries);
    size_t nulls = 0;
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
        nulls += entries[i] == NULL;
    return nulls;
}

TEST(the_process_table_opens_once)
{
    char err[SP_MLP_ERROR_SIZE] = "";
    const sp_mlp_cublaslt *first = NULL, *again = NULL;
    if (!CHECK_MSG(sp_mlp_cublaslt_get(&first, err, sizeof err) == SP_OK,
                   "cuBLASLt did not open from the build's toolkit: %s", err))
        return TEST_FAIL;
    CHECK(first != NULL);
    CHECK_EQ(table_nulls(first), 0);
    /* functions that need no device: the names the GEMM stages' errors print */
    CHECK(strcmp(first->cublasLtGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED),
                 "CUBLAS_STATUS_NOT_SUPPORTED") == 0);
    CHECK(first->cublasLtGetStatusString(CUBLAS_STATUS_NOT_SUPPORTED) != NULL);
    CHECK_EQ(sp_mlp_cublaslt_get(&again, err, sizeof err), SP_OK);
    CHECK(again == first);
    /* from the library of the header's soname, wherever dlopen found it */
    Dl_info where;
    void *entry;
    memcpy(&entry, &first->cublasLtMatmul, sizeof entry);
    if (CHECK(dladdr(entry, &where) != 0 && where.dli_fname != NULL))
        CHECK_HAS(where.dli_fname, SP_MLP_CUBLASLT_SONAME);
    return TEST_OK;
}

#if defined(SP_CUBLASLT_DIR)
/* The toolkit's lib folder, the loader's last place, is tried when the soname is not found. */
TEST(the_toolkit_folder_is_tried_after_the_soname)
{
    static const char *const names[] = {"libcublasLt-absent.so.13",
                                        SP_CUBLASLT_DIR "/" SP_MLP_CUBLASLT_SONAME};
    char err[SP_MLP_ERROR_SIZE] = "";
    sp_mlp_cublaslt table;
    void *lib = NULL;
    if (!CHECK_MSG(sp_mlp_cublaslt_open(names, 2, &table, &lib, err, sizeof err) == SP_OK,
                   "%s", err))
        return TEST_FAIL;
    CHECK(lib != NULL);
    CHECK_EQ(table_nulls(&table), 0);
    if (lib != NULL)
        dlclose(lib);
    return TEST_OK;
}
#endif

TEST(a_missing_library_is_unsupported_naming_it)
{
    static const char *const names[] = {"libcublasLt-absent.so.13",
                                        "/nonexistent/dir/libcublasLt.so.13"};
    char err[SP_MLP_ERROR_SIZE] = "";
    sp_mlp_cublaslt table;
    memset(&table, 0xff, sizeof table);
    void *lib = &table;
    CHECK_EQ(sp_mlp_cublaslt_open(names, 2, &table, &lib, err, sizeof err), SP_ERR_UNSUPPORTED);
    CHECK(lib == NULL);
    CHECK_EQ(table_nulls(&table), sizeof table / sizeof(void (*)(void)));
    CHECK_HAS(err, "cuBLASLt (" SP_MLP_CUBLASLT_SONAME ")");
    CHECK_HAS(err, "dlopen");
    /* dlerror's text for each name tried */
    CHECK_HAS(err, "libcublasLt-absent.so.13: ");
    CHECK_HAS(err, "/nonexistent/dir/libcublasLt.so.13: ");
    return TEST_OK;
}

TEST(a_library_without_the_functions_is_unsupported)
{
    static const char *const names[] = {"libc.so.6"}; /* opens, but is no cuBLASLt */
    char err[SP_MLP_ERROR_SIZE] = "";
    sp_mlp_cublaslt table;
    void *lib = NULL;
    CHECK_EQ(sp_mlp_cublaslt_open(names, 1, &table, &lib, err, sizeof err), SP_ERR_UNSUPPORTED);
    CHECK(lib == NULL);
    CHECK_EQ(table_nulls(&table), sizeof table / sizeof(void (*)(void)));
    CHECK_HAS(err, "lacks cublasLtCreate");
    CHECK_HAS(err, "undefined symbol"); /* dlerror's */
    return TEST_OK;
}

TEST(no_name_to_try_is_unsupported)
{
    char err[SP_MLP_ERROR_SIZE] = "";
    sp_mlp_cublaslt table;
    void *lib = NULL;
    CHECK_EQ(sp_mlp_cublaslt_open(NULL, 0, &table, &lib, err, sizeof err), SP_ERR_UNSUPPORTED);
    CHECK(lib == NULL);
    CHECK_HAS(err, "no name to try");
    return TEST_OK;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST_ENTRY(the_process_table_opens_once),
#if defined(SP_CUBLASLT_DIR)
        TEST_ENTRY(the_toolkit_folder_is_tried_after_the_soname),
#endif
        TEST_ENTRY(a_missing_library_is_unsupported_naming_it),
        TEST_ENTRY(a_library_without_the_functions_is_unsupported),
        TEST_ENTRY(no_name_to_try_is_unsupported),
    };
    return harness_run(tests, ARRAY_LEN(tests), argc > 1 ? argv[1] : NULL);
}
