/* Fault configuration and counters; see fault_state.h. The counters are atomics because
 * queues of one context are driven from several threads; the delay settings share a mutex
 * with the random state so that each draw sees one consistent configuration. */
#include "backend/fault/fault_state.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"

/* splitmix64: spreads any seed, 0 included, over the state space. */
static uint64_t mix_seed(unsigned long seed)
{
    uint64_t z = (uint64_t)seed + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return z ? z : 0x2545f4914f6cdd1dull; /* xorshift must not start at 0 */
}

static uint64_t next_random(fault_state *state)
{
    uint64_t x = state->random;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    state->random = x;
    return x;
}

sp_status sp_fault_state_init(fault_state *state, const sp_fault_config *cfg)
{
    memset(state, 0, sizeof *state);
    atomic_init(&state->fail_call, 0ul);
    atomic_init(&state->fail_persist, 0);
    atomic_init(&state->fail_status, (int)SP_ERR_BACKEND);
    atomic_init(&state->calls, 0ul);
    atomic_init(&state->injected, 0ul);
    atomic_init(&state->delays, 0ul);
    atomic_init(&state->live_objects, 0l);
    if (pthread_mutex_init(&state->lock, NULL) != 0) {
        sp_backend_fail("fault backend: pthread_mutex_init failed");
        return SP_ERR_BACKEND;
    }
    sp_status status = sp_fault_state_configure(state, cfg);
    if (status != SP_OK)
        sp_fault_state_destroy(state);
    return status;
}

void sp_fault_state_destroy(fault_state *state)
{
    pthread_mutex_destroy(&state->lock);
    free(state->delay_queue);
    state->delay_queue = NULL;
}

/* A private copy of the prefix: the caller's string need not outlive the call. */
static sp_status copy_prefix(const char *prefix, char **out)
{
    *out = NULL;
    if (!prefix)
        return SP_OK;
    size_t bytes = strlen(prefix) + 1;
    *out = malloc(bytes);
    if (!*out) {
        sp_backend_fail("fault configure: out of memory copying delay_queue; delays are off");
        return SP_ERR_OUT_OF_MEMORY;
    }
    memcpy(*out, prefix, bytes);
    return SP_OK;
}

sp_status sp_fault_state_configure(fault_state *state, const sp_fault_config *cfg)
{
    const sp_fault_config none = {0};
    if (!cfg)
        cfg = &none;
    char *prefix;
    sp_status status = copy_prefix(cfg->delay_queue, &prefix);
    pthread_mutex_lock(&state->lock);
    free(state->delay_queue);
    state->delay_queue = prefix;
    state->delay_us = status == SP_OK ? cfg->delay_us : 0;
    state->random_delay_us = status == SP_OK ? cfg->random_delay_us : 0;
    state->random = mix_seed(cfg->seed);
    pthread_mutex_unlock(&state->lock);
    atomic_store(&state->fail_status, (int)(cfg->fail_status ? cfg->fail_status
                                                             : SP_ERR_BACKEND));
    atomic_store(&state->fail_call, cfg->fail_call);
    atomic_store(&state->fail_persist, cfg->fail_persist != 0);
    snprintf(state->fail_op, sizeof state->fail_op, "%s", cfg->fail_op ? cfg->fail_op : "");
    pthread_mutex_lock(&state->lock);
    snprintf(state->delay_op, sizeof state->delay_op, "%s", cfg->delay_op ? cfg->delay_op : "");
    pthread_mutex_unlock(&state->lock);
    atomic_store(&state->calls, 0ul);
    return status;
}

/* Whether `op` is one of the comma-separated names in `list`. */
static int op_listed(const char *list, const char *op)
{
    size_t len = strlen(op);
    for (const char *name = list; *name != '\0';) {
        size_t name_len = strcspn(name, ",");
        if (name_len == len && strncmp(name, op, len) == 0)
            return 1;
        name += name_len;
        name += *name == ',';
    }
    return 0;
}

/* Whether call number `call` is one fail_call and fail_persist choose. */
static int call_chosen(fault_state *state, unsigned long call)
{
    unsigned long chosen = atomic_load(&state->fail_call);
    if (chosen == 0)
        return 0;
    return call == chosen || (atomic_load(&state->fail_persist) && call > chosen);
}

static sp_status inject(fault_state *state, unsigned long call, const char *op)
{
    atomic_fetch_add(&state->injected, 1ul);
    if (call == 0)
        sp_backend_fail("fault injected: %s failed", op);
    else
        sp_backend_fail("fault injected: call %lu (%s) failed", call, op);
    return (sp_status)atomic_load(&state->fail_status);
}

sp_status sp_fault_state_count_call(fault_state *state, const char *op)
{
    unsigned long call = atomic_fetch_add(&state->calls, 1ul) + 1ul;
    if (!call_chosen(state, call) && !op_listed(state->fail_op, op))
        return SP_OK;
    return inject(state, call, op);
}

sp_status sp_fault_state_named_failure(fault_state *state, const char *op)
{
    return op_listed(state->fail_op, op) ? inject(state, 0, op) : SP_OK;
}

unsigned sp_fault_state_next_delay(fault_state *state, const char *queue_name, const char *op)
{
    unsigned long long delay = 0;
    pthread_mutex_lock(&state->lock);
    const char *prefix = state->delay_queue;
    int op_delayed = state->delay_op[0] == '\0' || op_listed(state->delay_op, op);
    if (op_delayed && (!prefix || strncmp(queue_name, prefix, strlen(prefix)) == 0)) {
        delay = state->delay_us;
        if (state->random_delay_us > 0)
            delay += next_random(state) % ((unsigned long long)state->random_delay_us + 1);
    }
    pthread_mutex_unlock(&state->lock);
    return delay > UINT_MAX ? UINT_MAX : (unsigned)delay;
}

void sp_fault_state_count_delay(fault_state *state) { atomic_fetch_add(&state->delays, 1ul); }

void sp_fault_state_count_live(fault_state *state, long change)
{
    atomic_fetch_add(&state->live_objects, change);
}

void sp_fault_state_read(fault_state *state, sp_fault_stats *out)
{
    out->calls = atomic_load(&state->calls);
    out->injected = atomic_load(&state->injected);
    out->delays = atomic_load(&state->delays);
    out->live_objects = atomic_load(&state->live_objects);
}
