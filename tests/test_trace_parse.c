/* Reads the trace files back with real parsers (cJSON, libxml2) and checks what they say
 * against what the run must have produced. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "harness.h"
#include "test_trace.h"

/* ---- JSON -------------------------------------------------------------------------------- */

static double json_num(const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(item) ? item->valuedouble : NAN;
}

static const char *json_str(const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

typedef struct json_tracks {
    size_t n;
    long tid[SP_MAX_ENGINES];
    int processes;
} json_tracks;

/* First pass: the process name and each track's name, in order; track i must be engine i. */
static void read_tracks(const cJSON *events, const trace_expect *x, json_tracks *tracks)
{
    memset(tracks, 0, sizeof *tracks);
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        const char *ph = json_str(ev, "ph"), *name = json_str(ev, "name");
        if (!ph || strcmp(ph, "M") != 0 || !name)
            continue;
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
        const char *value = json_str(args, "name");
        if (strcmp(name, "process_name") == 0) {
            tracks->processes++;
            CHECK(value && strstr(value, "streampipe") != NULL);
        } else if (strcmp(name, "thread_name") == 0 && tracks->n < SP_MAX_ENGINES) {
            size_t i = tracks->n++;
            tracks->tid[i] = (long)json_num(ev, "tid");
            CHECK_MSG(i < x->n_engines && value && strcmp(value, x->names[i]) == 0,
                      "track %zu is named \"%s\", want \"%s\"", i, value ? value : "(none)",
                      i < x->n_engines ? x->names[i] : "(no such engine)");
        }
    }
    CHECK_EQ(tracks->processes, 1);
    CHECK_EQ(tracks->n, x->n_engines);
}

static size_t engine_of_tid(const json_tracks *tracks, long tid)
{
    for (size_t i = 0; i < tracks->n; i++)
        if (tracks->tid[i] == tid)
            return i;
    return SIZE_MAX;
}

typedef struct json_span {
    unsigned count;
    double ts, dur;
} json_span;

/* One complete event: its track, name, args and place inside the run. */
static void read_chunk_event(const cJSON *ev, const json_tracks *tracks, const trace_expect *x,
                             json_span *spans)
{
    size_t e = engine_of_tid(tracks, (long)json_num(ev, "tid"));
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    double chunk = json_num(args, "chunk");
    if (!CHECK_MSG(e != SIZE_MAX && chunk >= 0 && chunk < (double)x->chunks,
                   "event on tid %g for chunk %g", json_num(ev, "tid"), chunk))
        return;
    size_t c = (size_t)chunk;
    size_t records = c + 1 < x->chunks ? x->chunk_records : x->records - c * x->chunk_records;
    char want[64];
    snprintf(want, sizeof want, "%s c%zu", x->names[e], c);
    const char *name = json_str(ev, "name");
    CHECK_MSG(name && strcmp(name, want) == 0, "event \"%s\", want \"%s\"", name ? name : "",
              want);
    CHECK_EQ(json_num(args, "records"), records);
    CHECK_EQ(json_num(args, "bytes"), records * x->record_bytes[e]);
    CHECK(json_num(ev, "pid") == 1.0 && json_str(ev, "cat") != NULL);
    json_span *s = &spans[e * x->chunks + c];
    s->count++;
    s->ts = json_num(ev, "ts");
    s->dur = json_num(ev, "dur");
    double makespan_us = x->report->makespan_s * 1e6;
    CHECK_MSG(s->ts >= 0.0 && s->dur >= 0.0 && s->ts + s->dur <= makespan_us + 100.0,
              "%s: ts %.3f dur %.3f outside the makespan %.3f us", want, s->ts, s->dur,
              makespan_us);
}

/* Each engine is one queue: its chunks run one at a time, in order. */
static void check_spans(const json_span *spans, const trace_expect *x)
{
    for (size_t e = 0; e < x->n_engines; e++)
        for (size_t c = 0; c < x->chunks; c++) {
            const json_span *s = &spans[e * x->chunks + c];
            CHECK_MSG(s->count == 1, "%s c%zu has %u events, want 1", x->names[e], c, s->count);
            if (c > 0 && s->count == 1 && s[-1].count == 1)
                CHECK_MSG(s->ts >= s[-1].ts + s[-1].dur - 0.002,
                          "%s: c%zu starts at %.3f before c%zu ends at %.3f", x->names[e], c,
                          s->ts, c - 1, s[-1].ts + s[-1].dur);
        }
}

static void check_other_data(const cJSON *root, const trace_expect *x)
{
    const cJSON *other = cJSON_GetObjectItemCaseSensitive(root, "otherData");
    const sp_report *r = x->report;
    if (!CHECK(cJSON_IsObject(other)))
        return;
    CHECK(fabs(json_num(other, "makespan_ms") - r->makespan_s * 1e3) < 1e-5);
    CHECK(fabs(json_num(other, "bound_ms") - r->bound_s * 1e3) < 1e-5);
    CHECK(fabs(json_num(other, "efficiency") - r->efficiency) < 1e-5);
    CHECK(fabs(json_num(other, "hidden_transfer") - r->hidden_transfer) < 1e-5);
    CHECK_EQ(json_num(other, "chunks"), x->chunks);
    const char *bottleneck = json_str(other, "bottleneck");
    CHECK_MSG(bottleneck && strcmp(bottleneck, x->bottleneck) == 0,
              "otherData's bottleneck is \"%s\", want \"%s\"", bottleneck ? bottleneck : "",
              x->bottleneck);
}

void check_trace_json(const char *text, const trace_expect *x)
{
    cJSON *root = cJSON_Parse(text);
    if (!CHECK_MSG(root != NULL, "the trace is not JSON; parsing stopped at: %.40s",
                   cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "?"))
        return;
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    json_span *spans = calloc(x->n_engines * x->chunks + 1, sizeof *spans);
    if (CHECK(cJSON_IsArray(events)) && CHECK(spans != NULL)) {
        json_tracks tracks;
        read_tracks(events, x, &tracks);
        const cJSON *ev;
        cJSON_ArrayForEach(ev, events)
        {
            const char *ph = json_str(ev, "ph");
            CHECK(ph != NULL);
            if (ph && strcmp(ph, "X") == 0)
                read_chunk_event(ev, &tracks, x, spans);
        }
        check_spans(spans, x);
        check_other_data(root, x);
    }
    free(spans);
    cJSON_Delete(root);
}

/* ---- SVG --------------------------------------------------------------------------------- */

typedef struct svg_seen {
    const trace_expect *x;
    unsigned *bars;   /* per engine per chunk */
    char (*fill)[8];  /* per chunk, "" until seen */
    char **texts;     /* every <text>'s content */
    size_t n_texts, cap_texts;
} svg_seen;

/* The engine whose name starts the bar's title "<name> c<N>: ...", and N. */
static int parse_bar_title(const trace_expect *x, const char *title, size_t *e, size_t *c)
{
    size_t best = SIZE_MAX, best_len = 0;
    for (size_t i = 0; i < x->n_engines; i++) {
        size_t len = strlen(x->names[i]);
        if (strncmp(title, x->names[i], len) == 0 && strncmp(title + len, " c", 2) == 0 &&
            len >= best_len) {
            best = i;
            best_len = len;
        }
    }
    if (best == SIZE_MAX)
        return 0;
    char *end = NULL;
    unsigned long chunk = strtoul(title + best_len + 2, &end, 10);
    *e = best;
    *c = chunk;
    return end && *end == ':' && chunk < x->chunks;
}

static void see_bar(svg_seen *seen, xmlNode *rect)
{
    xmlChar *fill = xmlGetProp(rect, (const xmlChar *)"fill");
    xmlNode *child = rect->children;
    while (child && !(child->type == XML_ELEMENT_NODE &&
                      strcmp((const char *)child->name, "title") == 0))
        child = child->next;
    xmlChar *title = child ? xmlNodeGetContent(child) : NULL;
    size_t e = 0, c = 0;
    if (CHECK_MSG(title && parse_bar_title(seen->x, (const char *)title, &e, &c),
                  "a bar's title \"%s\" names no engine and chunk",
                  title ? (const char *)title : "(none)") &&
        CHECK(fill && strlen((const char *)fill) == 7)) {
        seen->bars[e * seen->x->chunks + c]++;
        if (seen->fill[c][0] == '\0')
            memcpy(seen->fill[c], fill, 8);
        CHECK_MSG(strcmp(seen->fill[c], (const char *)fill) == 0,
                  "chunk %zu is %s in one lane and %s in another", c, seen->fill[c],
                  (const char *)fill);
    }
    xmlFree(fill);
    xmlFree(title);
}

static void see_text(svg_seen *seen, xmlNode *node)
{
    if (seen->n_texts == seen->cap_texts) {
        size_t cap = seen->cap_texts ? 2 * seen->cap_texts : 64;
        char **grown = realloc(seen->texts, cap * sizeof *grown);
        if (!CHECK(grown != NULL))
            return;
        seen->texts = grown;
        seen->cap_texts = cap;
    }
    seen->texts[seen->n_texts++] = (char *)xmlNodeGetContent(node);
}

static void walk(svg_seen *seen, xmlNode *node)
{
    for (; node; node = node->next) {
        if (node->type != XML_ELEMENT_NODE)
            continue;
        if (strcmp((const char *)node->name, "rect") == 0) {
            xmlChar *cls = xmlGetProp(node, (const xmlChar *)"class");
            if (cls && strcmp((const char *)cls, "bar") == 0)
                see_bar(seen, node);
            xmlFree(cls);
        } else if (strcmp((const char *)node->name, "text") == 0) {
            see_text(seen, node);
        }
        walk(seen, node->children);
    }
}

static int has_text(const svg_seen *seen, const char *want)
{
    for (size_t i = 0; i < seen->n_texts; i++)
        if (seen->texts[i] && strcmp(seen->texts[i], want) == 0)
            return 1;
    return 0;
}

static void check_svg_contents(const svg_seen *seen, const trace_expect *x)
{
    for (size_t e = 0; e < x->n_engines; e++)
        for (size_t c = 0; c < x->chunks; c++)
            CHECK_MSG(seen->bars[e * x->chunks + c] == 1, "%s c%zu has %u bars, want 1",
                      x->names[e], c, seen->bars[e * x->chunks + c]);
    for (size_t c = 1; c < x->chunks; c++)
        CHECK_MSG(strcmp(seen->fill[c], seen->fill[c - 1]) != 0, "chunks %zu and %zu are both %s",
                  c - 1, c, seen->fill[c]);
    for (size_t e = 0; e < x->n_engines; e++)
        CHECK_MSG(has_text(seen, x->names[e]), "no lane label \"%s\"", x->names[e]);
    static const char *const labels[] = {"makespan", "bound", "efficiency", "hidden transfer",
                                         "bottleneck", "model", "serial sum"};
    for (size_t i = 0; i < ARRAY_LEN(labels); i++)
        CHECK_MSG(has_text(seen, labels[i]), "no figure labelled \"%s\"", labels[i]);
    CHECK_MSG(has_text(seen, x->bottleneck), "the bottleneck \"%s\" is not shown",
              x->bottleneck);
}

void check_trace_svg(const char *text, size_t bytes, const trace_expect *x)
{
    xmlDoc *doc = xmlReadMemory(text, (int)bytes, "timeline.svg", NULL, XML_PARSE_NONET);
    if (!CHECK_MSG(doc != NULL, "the SVG is not well-formed XML"))
        return;
    xmlNode *root = xmlDocGetRootElement(doc);
    CHECK(root && strcmp((const char *)root->name, "svg") == 0);
    CHECK(root && root->ns && strcmp((const char *)root->ns->href, "http://www.w3.org/2000/svg") == 0);
    svg_seen seen = {x, calloc(x->n_engines * x->chunks + 1, sizeof(unsigned)),
                     calloc(x->chunks + 1, sizeof(char[8])), NULL, 0, 0};
    if (CHECK(seen.bars && seen.fill)) {
        walk(&seen, root);
        check_svg_contents(&seen, x);
    }
    for (size_t i = 0; i < seen.n_texts; i++)
        xmlFree(seen.texts[i]);
    free(seen.texts);
    free(seen.bars);
    free(seen.fill);
    xmlFreeDoc(doc);
}
