/*
 * A count of the core library's live handles, for the test suite: the runner reads it before
 * and after every test, so a test (or a library path) that leaves a context, pipeline, stream
 * or group behind fails where it happens, not as a slow leak found later. Internal: not part
 * of the public API, not declared in include/. (The MLP library, a user of the public API
 * only, has no count here; ASan's leak check covers its models and stage sets.)
 *
 * The counts are atomic, so handles may come and go on any thread. Each create adds one only
 * once the object exists (its destroy will run), and each destroy takes one off when the
 * object is freed, so a failed create counts nothing.
 */
#ifndef SP_CORE_LIVE_OBJECTS_H
#define SP_CORE_LIVE_OBJECTS_H

typedef enum sp_live_kind {
    SP_LIVE_CONTEXT = 0,
    SP_LIVE_PIPELINE,
    SP_LIVE_STREAM,
    SP_LIVE_GROUP,
    SP_LIVE_KINDS
} sp_live_kind;

/* One object of `kind` was made (+1) or freed (-1). */
void sp_live_object_add(sp_live_kind kind, int delta);
/* Live objects of every kind together. */
long sp_live_objects(void);
/* Live objects of one kind. */
long sp_live_objects_of(sp_live_kind kind);
/* "context", "pipeline", ...: for messages. */
const char *sp_live_kind_name(sp_live_kind kind);

#endif /* SP_CORE_LIVE_OBJECTS_H */
