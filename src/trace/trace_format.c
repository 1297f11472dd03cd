/* Text for the trace files: escaping for JSON and XML that never lets a stage name break the
 * document, numbers written without the C locale, sizes for people, and chunk colours. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "trace/trace_common.h"

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when the bytes there are not one
 * (overlong forms and surrogates included, which strict JSON and XML readers refuse). */
static size_t utf8_length(const unsigned char *s)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xBF; /* the range allowed for the second byte */
    size_t n;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        lo = c == 0xE0 ? 0xA0 : lo;
        hi = c == 0xED ? 0x9F : hi;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        lo = c == 0xF0 ? 0x90 : lo;
        hi = c == 0xF4 ? 0x8F : hi;
    } else {
        return 0;
    }
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++) /* stops at a NUL: (0 & 0xC0) != 0x80 */
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

/* Writes the first `bytes` of text, handing each ASCII byte to `ascii` and copying valid
 * multi-byte UTF-8 as is. */
static void put_text(sp_trace_writer *w, const char *text, size_t bytes,
                     void (*ascii)(sp_trace_writer *, char))
{
    const unsigned char *s = (const unsigned char *)text, *end = s + bytes;
    while (s < end && *s && !w->error) {
        size_t n = utf8_length(s);
        if (n == 1)
            ascii(w, (char)*s);
        else if (n > 1)
            sp_trace_printf(w, "%.*s", (int)n, (const char *)s);
        else
            sp_trace_printf(w, "?");
        s += n ? n : 1;
    }
}

static void json_ascii(sp_trace_writer *w, char c)
{
    if (c == '"' || c == '\\')
        sp_trace_printf(w, "\\%c", c);
    else if ((unsigned char)c < 0x20 || c == 0x7F)
        sp_trace_printf(w, "\\u%04x", (unsigned)(unsigned char)c);
    else
        sp_trace_printf(w, "%c", c);
}

static void xml_ascii(sp_trace_writer *w, char c)
{
    switch (c) {
    case '&': sp_trace_printf(w, "&amp;"); break;
    case '<': sp_trace_printf(w, "&lt;"); break;
    case '>': sp_trace_printf(w, "&gt;"); break;
    case '"': sp_trace_printf(w, "&quot;"); break;
    case '\'': sp_trace_printf(w, "&apos;"); break;
    default: /* XML 1.0 allows no control characters but tab, newline and return */
        sp_trace_printf(w, "%c", (unsigned char)c < 0x20 || c == 0x7F ? '?' : c);
    }
}

void sp_trace_put_json_text(sp_trace_writer *w, const char *text)
{
    /* Perfetto's JSON reader takes the quote that follows an escaped backslash, as in
     * {"name":"a\\"}, for an escaped quote, and then fails to load the whole trace. A
     * backslash that ends the text (and so may end the string) is written \u005c instead,
     * which every JSON reader, Perfetto included, reads as the same backslash. */
    size_t n = strlen(text);
    int last_is_backslash = n > 0 && text[n - 1] == '\\';
    put_text(w, text, last_is_backslash ? n - 1 : n, json_ascii);
    if (last_is_backslash)
        sp_trace_printf(w, "\\u005c");
}
void sp_trace_put_xml_text(sp_trace_writer *w, const char *text)
{
    put_text(w, text, strlen(text), xml_ascii);
}

sp_trace_number sp_trace_fixed(double value, int decimals)
{
    sp_trace_number out;
    decimals = decimals < 0 ? 0 : decimals > 6 ? 6 : decimals;
    unsigned long long scale = 1;
    for (int i = 0; i < decimals; i++)
        scale *= 10;
    double scaled = isfinite(value) ? value * (double)scale : 0.0;
    scaled = fmax(-9e18, fmin(9e18, scaled)); /* inside long long, whatever came in */
    long long n = llround(scaled);
    unsigned long long magnitude = n < 0 ? 0ULL - (unsigned long long)n : (unsigned long long)n;
    const char *sign = n < 0 ? "-" : "";
    if (scale == 1)
        snprintf(out.text, sizeof out.text, "%s%llu", sign, magnitude);
    else
        snprintf(out.text, sizeof out.text, "%s%llu.%0*llu", sign, magnitude / scale,
                 decimals, magnitude % scale);
    return out;
}

sp_trace_number sp_trace_size(size_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = (double)bytes;
    size_t u = 0;
    while (value >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        value /= 1024.0;
        u++;
    }
    sp_trace_number n = sp_trace_fixed(value, u == 0 ? 0 : value < 10.0 ? 2 : value < 100.0 ? 1 : 0);
    size_t len = strlen(n.text);
    snprintf(n.text + len, sizeof n.text - len, " %s", units[u]);
    return n;
}

/* One channel of HSL -> RGB (the CSS formula), 0..255. */
static unsigned hsl_channel(double h, double s, double l, double n)
{
    double k = fmod(n + h / 30.0, 12.0);
    double a = s * fmin(l, 1.0 - l);
    double v = l - a * fmax(-1.0, fmin(fmin(k - 3.0, 9.0 - k), 1.0));
    return (unsigned)lround(v * 255.0);
}

#define CHUNK_SATURATION 0.62
#define CHUNK_LIGHTNESS 0.55

static double chunk_hue(size_t chunk) { return fmod((double)chunk * 137.50776, 360.0); }

void sp_trace_chunk_colour(size_t chunk, char out[8])
{
    double h = chunk_hue(chunk), s = CHUNK_SATURATION, l = CHUNK_LIGHTNESS;
    snprintf(out, 8, "#%02x%02x%02x", hsl_channel(h, s, l, 0.0), hsl_channel(h, s, l, 8.0),
             hsl_channel(h, s, l, 4.0));
}

int sp_trace_chunk_colour_is_dark(size_t chunk)
{
    double h = chunk_hue(chunk), s = CHUNK_SATURATION, l = CHUNK_LIGHTNESS;
    /* Rec. 709 luma of the gamma-encoded channels: rough, but enough to pick a text colour */
    double luma = 0.2126 * hsl_channel(h, s, l, 0.0) + 0.7152 * hsl_channel(h, s, l, 8.0) +
                  0.0722 * hsl_channel(h, s, l, 4.0);
    return luma < 110.0;
}

void sp_trace_put_xml_clipped(sp_trace_writer *w, const char *text, size_t max_bytes)
{
    char cut[64];
    size_t n = strlen(text);
    if (n <= max_bytes || max_bytes + 2 > sizeof cut) {
        sp_trace_put_xml_text(w, text);
        return;
    }
    n = max_bytes;
    while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80)
        n--; /* never split a UTF-8 sequence */
    memcpy(cut, text, n);
    strcpy(cut + n, "~");
    sp_trace_put_xml_text(w, cut);
}
