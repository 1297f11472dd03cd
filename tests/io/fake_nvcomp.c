/* A stand-in for libnvcomp with every symbol the loader looks up (src/backend/nvcomp_load.c)
 * and a version it must refuse (FAKE_NVCOMP_VERSION, as major * 1000 + minor * 100 + patch):
 * test_ring_decompress's check that an unsupported nvCOMP is named and not used. Nothing
 * here is ever called but the version query. */
#include <stddef.h>
#include <stdint.h>

typedef struct fake_properties {
    uint32_t version, cudart_version;
} fake_properties;

int nvcompGetProperties(fake_properties *out);
int nvcompGetProperties(fake_properties *out)
{
    out->version = FAKE_NVCOMP_VERSION;
    out->cudart_version = 13000;
    return 0;
}

/* present for dlsym only: the loader refuses this library before any is called */
int nvcompBatchedLZ4DecompressGetTempSize(void);
int nvcompBatchedLZ4DecompressGetTempSize(void) { return 1; }
int nvcompBatchedZstdDecompressGetTempSize(void);
int nvcompBatchedZstdDecompressGetTempSize(void) { return 1; }
int nvcompBatchedLZ4DecompressAsync(void);
int nvcompBatchedLZ4DecompressAsync(void) { return 1; }
int nvcompBatchedZstdDecompressAsync(void);
int nvcompBatchedZstdDecompressAsync(void) { return 1; }
