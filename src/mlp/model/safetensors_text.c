/*
 * The header's text, checked for what cJSON lets through without a word:
 *  - a byte-order mark or anything else before the '{' (the format says the header begins
 *    with it; cJSON skips a UTF-8 BOM);
 *  - a string holding a NUL, escaped (\u0000) or raw, or any other raw control byte: cJSON
 *    decodes it into a C string that ends early, so "fc1.bias\u0000evil" would read as
 *    "fc1.bias" and "F32\u0000" as F32;
 *  - a number that is not plain digits: cJSON turns "65536.0", "2.56e2", "-0" and "065536"
 *    into the same double as the integer. Every number of a valid header is a shape dimension
 *    or a data offset, so every number in the header must be an integer written as one.
 *
 * This runs on text cJSON has already accepted, which keeps the lexing below sound: in such
 * text every '"' outside a string opens one, a string ends at the first '"' not escaped by a
 * backslash (cJSON's own rule), and every '-' or digit outside a string starts a number that
 * runs over [0-9+-.eE] (the characters cJSON's number parser takes).
 */
#include <string.h>

#include "mlp/model/model_error.h"
#include "mlp/model/safetensors.h"

#define SHOWN_NUMBER 24 /* characters of a bad number quoted in the message */

static int is_number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* The string opening at text[*at] (a '"'); *at is left just past its closing quote. */
static sp_status check_string(const char *text, size_t length, size_t *at, char *err,
                              size_t size)
{
    size_t i = *at + 1;
    while (i < length && text[i] != '"') {
        const unsigned char c = (unsigned char)text[i];
        if (c == '\\' && i + 5 < length && text[i + 1] == 'u' &&
            memcmp(text + i + 2, "0000", 4) == 0)
            return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                                 "the header has a string holding an escaped NUL (\\u0000) at "
                                 "byte %zu, which would cut it short", i);
        if (c < 0x20)
            return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                                 "the header has a raw control byte 0x%02x in a string at byte "
                                 "%zu (JSON requires it escaped; a NUL would cut it short)",
                                 c, i);
        i += c == '\\' ? 2 : 1; /* an escape's second character is never the closing quote */
    }
    *at = i + 1;
    return SP_OK;
}

/* The number starting at text[*at]: "0" or a non-zero digit and more digits, nothing else. */
static sp_status check_number(const char *text, size_t length, size_t *at, char *err,
                              size_t size)
{
    const size_t begin = *at;
    size_t end = begin;
    while (end < length && is_number_char(text[end]))
        end++;
    *at = end;
    int plain = !(text[begin] == '0' && end > begin + 1);
    for (size_t i = begin; plain && i < end; i++)
        plain = text[i] >= '0' && text[i] <= '9';
    if (plain)
        return SP_OK;
    const size_t n = end - begin;
    return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                         "the header has the number \"%.*s%s\" at byte %zu; shapes and offsets "
                         "must be whole numbers in plain digits (no sign, fraction, exponent "
                         "or leading zero)", (int)(n < SHOWN_NUMBER ? n : SHOWN_NUMBER),
                         text + begin, n > SHOWN_NUMBER ? "..." : "", begin);
}

static sp_status check_start(const char *text, size_t length, char *err, size_t size)
{
    static const char bom[] = "\xef\xbb\xbf";
    if (length >= 3 && memcmp(text, bom, 3) == 0)
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "the header starts with a UTF-8 byte-order mark; it must start "
                             "with '{'");
    if (length == 0 || text[0] != '{')
        return sp_model_fail(err, size, SP_ERR_INVALID_ARGUMENT,
                             "the header starts with byte 0x%02x; it must start with '{'",
                             length ? (unsigned char)text[0] : 0u);
    return SP_OK;
}

sp_status sp_st_check_header_text(const char *text, size_t length, char *err, size_t size)
{
    sp_status st = check_start(text, length, err, size);
    for (size_t at = 0; st == SP_OK && at < length;) {
        const char c = text[at];
        if (c == '"')
            st = check_string(text, length, &at, err, size);
        else if (c == '-' || (c >= '0' && c <= '9'))
            st = check_number(text, length, &at, err, size);
        else
            at++;
    }
    return st;
}
