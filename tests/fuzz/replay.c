/* fuzz_safetensors_replay FILE...: feeds each file to the fuzz target once, as libFuzzer does
 * with files on its command line, for builds without libFuzzer (gcc). ctest runs it over the
 * committed model; a crash the fuzzer found can be replayed here under gdb or valgrind. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The whole file (malloc'd), or NULL. */
static unsigned char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t capacity = 1 << 16, used = 0;
    unsigned char *buf = malloc(capacity);
    while (buf != NULL) {
        used += fread(buf + used, 1, capacity - used, f);
        if (used < capacity)
            break;
        unsigned char *bigger = realloc(buf, capacity * 2);
        if (bigger == NULL)
            free(buf);
        buf = bigger;
        capacity *= 2;
    }
    if (buf != NULL && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = used;
    return buf;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        size_t size = 0;
        unsigned char *bytes = read_all(argv[i], &size);
        if (bytes == NULL) {
            fprintf(stderr, "fuzz_safetensors_replay: cannot read '%s'\n", argv[i]);
            return 1;
        }
        LLVMFuzzerTestOneInput(bytes, size);
        free(bytes);
        printf("%s: %zu bytes, no crash\n", argv[i], size);
    }
    return 0;
}
