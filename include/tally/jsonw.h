/* jsonw.h - JSON text written straight into a tl_buf, byte for byte as cJSON 1.7's
 * cJSON_PrintUnformatted writes the same values: strings with cJSON's escapes (\" \\ \b \f \n \r
 * \t, \u00XX for the other bytes under 0x20, every other byte as it is) and numbers in cJSON's
 * form ("null" for NaN and infinities; else %1.15g when that reads back to the same double, within
 * cJSON's tolerance, and %1.17g otherwise).
 *
 * For the lines written once per request or unit, where a cJSON tree per line costs more than
 * the work around it: request bodies (whose bytes are hashed into cache keys, so they must not
 * change when cJSON is no longer the writer), reply evidence and journal lines.
 * tests/unit/test_jsonw.c holds the identity to the linked cJSON on a table of values.
 *
 * Each call appends to b and returns TL_OK or TL_ENOMEM; after TL_ENOMEM b holds a prefix of the
 * text (tl_buf keeps what it had), so a caller checks the status of the whole line once, by
 * OR-ing the calls' results (TL_OK is 0). */
#ifndef TALLY_JSONW_H
#define TALLY_JSONW_H

#include <stddef.h>

#include "tally/str.h"

/* A JSON string holding s[0..n) ("" quoted; s may be NULL when n is 0). */
tl_status tl_json_str(tl_buf *b, const char *s, size_t n);
/* The same for a NUL-terminated s; NULL is written as null. */
tl_status tl_json_cstr(tl_buf *b, const char *s);
/* A number, in cJSON's form. */
tl_status tl_json_num(tl_buf *b, double d);
/* The number k / 1000 (a duration in ms from one in us), as tl_json_num writes it, without
 * printf. */
tl_status tl_json_milli(tl_buf *b, long long k);
/* `"key":`, preceded by a comma unless first. The key is escaped as a string is. */
tl_status tl_json_key(tl_buf *b, const char *key, int first);
/* How many bytes of s[0..n) come before the first one a JSON string cannot hold as it is (a '"',
 * a '\\' or a byte under 0x20): n when there is none. 16 bytes at a time with SSE2. For the
 * writers here and for the readers that look for a string's end (tally/oai_reply.h). */
size_t tl_json_plain_len(const char *s, size_t n);

#endif
