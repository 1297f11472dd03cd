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

/* An engine on several queues has a lane (SVG) or track (JSON) per queue. */
#define MAX_LANES (SP_MAX_ENGINES * SP_MAX_STAGE_STREAMS)

static unsigned lanes_of(const trace_expect *x, size_t e)
{
    return x->streams[e] > 1 ? x->streams[e] : 1u;
}

/* The first lane of engine e, counting every engine's lanes in pipeline order. */
static size_t first_lane(const trace_expect *x, size_t e)
{
    size_t lane = 0;
    for (size_t i = 0; i < e; i++)
        lane += lanes_of(x, i);
    return lane;
}

/* "<engine>" for an engine on one queue, "<engine> q<k>" for queue k of one on several. */
static const char *lane_name(const trace_expect *x, size_t e, unsigned k, char out[64])
{
    if (lanes_of(x, e) > 1)
        snprintf(out, 64, "%s q%u", x->names[e], k);
    else
        snprintf(out, 64, "%s", x->names[e]);
    return out;
}

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
    size_t n, want;
    long tid[MAX_LANES];
    size_t engine[MAX_LANES]; /* the engine and queue each track must be */
    unsigned queue[MAX_LANES];
    int processes;
} json_tracks;

/* The tracks the file must name, in order: each engine's, one per queue. */
static void expect_tracks(const trace_expect *x, json_tracks *tracks)
{
    memset(tracks, 0, sizeof *tracks);
    for (size_t e = 0; e < x->n_engines; e++)
        for (unsigned k = 0; k < lanes_of(x, e) && tracks->want < MAX_LANES; k++) {
            tracks->engine[tracks->want] = e;
            tracks->queue[tracks->want++] = k;
        }
}

/* First pass: the process name and each track's name, in order; track i must be the i-th
 * expected one. */
static void read_tracks(const cJSON *events, const trace_expect *x, json_tracks *tracks)
{
    expect_tracks(x, tracks);
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
        } else if (strcmp(name, "thread_name") == 0 && tracks->n < MAX_LANES) {
            size_t i = tracks->n++;
            tracks->tid[i] = (long)json_num(ev, "tid");
            char want[64] = "(no such track)";
            if (i < tracks->want)
                lane_name(x, tracks->engine[i], tracks->queue[i], want);
            CHECK_MSG(i < tracks->want && value && strcmp(value, want) == 0,
                      "track %zu is named \"%s\", want \"%s\"", i, value ? value : "(none)",
                      want);
        }
    }
    CHECK_EQ(tracks->processes, 1);
    CHECK_EQ(tracks->n, tracks->want);
}

/* The track with this tid, or SIZE_MAX. */
static size_t track_of_tid(const json_tracks *tracks, long tid)
{
    for (size_t i = 0; i < tracks->n && i < tracks->want; i++)
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
    size_t track = track_of_tid(tracks, (long)json_num(ev, "tid"));
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    double chunk = json_num(args, "chunk");
    if (!CHECK_MSG(track != SIZE_MAX && chunk >= 0 && chunk < (double)x->chunks,
                   "event on tid %g for chunk %g", json_num(ev, "tid"), chunk))
        return;
    size_t e = tracks->engine[track], c = (size_t)chunk;
    CHECK_MSG(tracks->queue[track] == c % lanes_of(x, e),
              "%s c%zu is on the track of queue %u, want queue %zu", x->names[e], c,
              tracks->queue[track], c % lanes_of(x, e));
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

/* Each queue runs its chunks one at a time, in order: chunk c after chunk c - queues, and not
 * even a nanosecond before it ends: Perfetto drops a complete event that starts inside the
 * one before it on its track without ending inside it too (its stat
 * slice_drop_overlapping_complete_event). The times are whole nanoseconds, so half of one is
 * room enough for the reading of the decimals. */
static void check_spans(const json_span *spans, const trace_expect *x)
{
    for (size_t e = 0; e < x->n_engines; e++)
        for (size_t c = 0, q = lanes_of(x, e); c < x->chunks; c++) {
            const json_span *s = &spans[e * x->chunks + c];
            CHECK_MSG(s->count == 1, "%s c%zu has %u events, want 1", x->names[e], c, s->count);
            const json_span *before = c >= q ? s - q : NULL;
            if (before && s->count == 1 && before->count == 1)
                CHECK_MSG(s->ts >= before->ts + before->dur - 0.0005,
                          "%s: c%zu starts at %.3f before c%zu (same queue) ends at %.3f",
                          x->names[e], c, s->ts, c - q, before->ts + before->dur);
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

typedef struct svg_text {
    char *content;
    double x, y;
} svg_text;

typedef struct svg_seen {
    const trace_expect *x;
    unsigned *bars;   /* per engine per chunk */
    double *bar_mid;  /* per engine per chunk: the bar's vertical middle */
    double bars_left; /* the least x of any bar: lane labels are left of it */
    char (*fill)[8];  /* per chunk, "" until seen */
    svg_text *texts;  /* every <text>: content and place */
    size_t n_texts, cap_texts;
} svg_seen;

/* A number attribute of node; NAN when missing. */
static double number_prop(xmlNode *node, const char *name)
{
    xmlChar *value = xmlGetProp(node, (const xmlChar *)name);
    double number = value ? strtod((const char *)value, NULL) : NAN;
    xmlFree(value);
    return number;
}

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
        double y = number_prop(rect, "y"), x = number_prop(rect, "x");
        seen->bar_mid[e * seen->x->chunks + c] = y + number_prop(rect, "height") / 2.0;
        seen->bars_left = fmin(seen->bars_left, x);
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
        svg_text *grown = realloc(seen->texts, cap * sizeof *grown);
        if (!CHECK(grown != NULL))
            return;
        seen->texts = grown;
        seen->cap_texts = cap;
    }
    svg_text *text = &seen->texts[seen->n_texts++];
    text->content = (char *)xmlNodeGetContent(node);
    text->x = number_prop(node, "x");
    text->y = number_prop(node, "y");
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
        if (seen->texts[i].content && strcmp(seen->texts[i].content, want) == 0)
            return 1;
    return 0;
}

/* The y of the lane label `want`: the one text left of every bar that says it; NAN (after a
 * failed check) when there is not exactly one. */
static double lane_label_y(const svg_seen *seen, const char *want)
{
    size_t found = 0;
    double y = NAN;
    for (size_t i = 0; i < seen->n_texts; i++) {
        const svg_text *t = &seen->texts[i];
        if (t->content && t->x < seen->bars_left && strcmp(t->content, want) == 0) {
            found++;
            y = t->y;
        }
    }
    CHECK_MSG(found == 1, "%zu lane labels \"%s\", want 1", found, want);
    return found == 1 ? y : NAN;
}

/* The lane whose label is nearest to y (labels not found are NAN and never nearest). */
static size_t nearest_lane(const double *label_y, size_t lanes, double y)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < lanes; i++)
        if (!isnan(label_y[i]) &&
            (best == SIZE_MAX || fabs(label_y[i] - y) < fabs(label_y[best] - y)))
            best = i;
    return best;
}

/* A label per lane, top to bottom in pipeline order, and each bar in the lane of its engine
 * and queue: a stage's chunks on one lane would overlap and hide each other. */
static void check_lanes(const svg_seen *seen, const trace_expect *x)
{
    double label_y[MAX_LANES], above = -INFINITY;
    size_t lanes = 0;
    for (size_t e = 0; e < x->n_engines; e++)
        for (unsigned k = 0; k < lanes_of(x, e) && lanes < MAX_LANES; k++) {
            char want[64];
            double y = label_y[lanes++] = lane_label_y(seen, lane_name(x, e, k, want));
            if (isnan(y))
                continue;
            CHECK_MSG(y > above, "lane \"%s\" is not below the lanes before it", want);
            above = y;
        }
    for (size_t e = 0; e < x->n_engines; e++)
        for (size_t c = 0; c < x->chunks; c++) {
            size_t want = first_lane(x, e) + c % lanes_of(x, e);
            if (seen->bars[e * x->chunks + c] != 1 || want >= lanes)
                continue; /* reported elsewhere */
            size_t got = nearest_lane(label_y, lanes, seen->bar_mid[e * x->chunks + c]);
            CHECK_MSG(got == want, "%s c%zu's bar is in lane %zu, want lane %zu (queue %zu)",
                      x->names[e], c, got, want, c % lanes_of(x, e));
        }
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
    check_lanes(seen, x);
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
    size_t spans = x->n_engines * x->chunks + 1;
    svg_seen seen = {x, calloc(spans, sizeof(unsigned)), calloc(spans, sizeof(double)),
                     INFINITY, calloc(x->chunks + 1, sizeof(char[8])), NULL, 0, 0};
    if (CHECK(seen.bars && seen.bar_mid && seen.fill)) {
        walk(&seen, root);
        check_svg_contents(&seen, x);
    }
    for (size_t i = 0; i < seen.n_texts; i++)
        xmlFree(seen.texts[i].content);
    free(seen.texts);
    free(seen.bars);
    free(seen.bar_mid);
    free(seen.fill);
    xmlFreeDoc(doc);
}
