/* str.h - growable byte buffer and the UTF-8 helpers the parsers need.
 *
 * tl_buf: `data` is never NULL after tl_buf_init and is always NUL-terminated; `len` excludes
 * the NUL. A failed append leaves the buffer as it was and returns TL_ENOMEM. tl_buf_release
 * frees the storage and re-inits; tl_buf_detach hands the storage to the caller (free(3)). */
#ifndef TALLY_STR_H
#define TALLY_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tally/err.h"

typedef struct {
  char *data;
  size_t len;
  size_t cap;
} tl_buf;

void tl_buf_init(tl_buf *b);
void tl_buf_release(tl_buf *b);
void tl_buf_reset(tl_buf *b); /* len = 0, keeps storage */
tl_status tl_buf_append(tl_buf *b, const char *s, size_t n);
/* Makes room for n more bytes (and the NUL) without changing the contents: appends of up to n
 * bytes then allocate nothing. */
tl_status tl_buf_reserve(tl_buf *b, size_t n);
/* Adds n bytes to the length, their contents unset (the caller fills them), NUL after them. */
tl_status tl_buf_extend(tl_buf *b, size_t n);
tl_status tl_buf_puts(tl_buf *b, const char *s);
tl_status tl_buf_printf(tl_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
char *tl_buf_detach(tl_buf *b); /* OUT: caller owns; b is re-inited */

/* Reads a whole file into b (appended, NUL-terminated). TL_EIO with "cannot open/read 'path':
 * reason" in err, TL_EINPUT when it is larger than max bytes (0 = no cap), TL_ENOMEM. */
tl_status tl_file_read(const char *path, size_t max, tl_buf *b, tl_err *err);

/* A 64-bit hash of s[0..n), 8 bytes at a time (multiply-rotate rounds, MurmurHash3's finalizer):
 * for in-memory tables and change detection, never written to a file (it may change between
 * versions). */
uint64_t tl_hash64(const void *s, size_t n);

/* strdup / strndup that return NULL only on allocation failure. */
char *tl_strdup(const char *s);
char *tl_strndup(const char *s, size_t n);

/* True when s[0..n) is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
 * On failure *bad_offset (if non-NULL) is the byte offset of the first bad sequence. */
bool tl_utf8_valid(const char *s, size_t n, size_t *bad_offset);

/* The largest length k <= n such that s[0..k) does not end inside a UTF-8 sequence: n itself
 * when s[n-1] ends a character, else the start of the character that s[n-1] belongs to. Use it
 * to cut a valid UTF-8 string to at most n bytes ("cut only at character boundaries"). Reads
 * only s[0..n); s[0..n) is assumed to be a prefix of valid UTF-8 (on other bytes it returns n,
 * or the start of an incomplete lead sequence, and never more than n). */
size_t tl_utf8_floor(const char *s, size_t n);

/* Decodes one code point at s (n bytes available); returns its length in bytes (>=1), or 0 on
 * malformed input (then *cp = U+FFFD). */
size_t tl_utf8_decode(const char *s, size_t n, uint32_t *cp);

/* Appends the UTF-8 encoding of cp. */
tl_status tl_utf8_append(tl_buf *b, uint32_t cp);

/* Checks that glibc's C.UTF-8 locale, which the case mapping and classification below use, can
 * be loaded. TL_OK, or TL_EINTERNAL with "the C.UTF-8 locale is not available: <reason>". The
 * parsers' constructors call it and fail without it; the CLI calls it at start-up. Without the
 * locale the functions below would treat every non-ASCII character as caseless, non-alphanumeric
 * and non-space, which changes results, so nothing may run without this check passing. */
tl_status tl_utf8_locale_check(tl_err *err);

/* Unicode simple lower-casing of a UTF-8 string, as Python's str.lower() does for everything
 * but the few full-case-mapping specials (U+0130). Returns a malloc'd string (caller frees),
 * NULL on allocation failure. Malformed bytes are copied through unchanged. */
char *tl_utf8_lower(const char *s, size_t n);

/* Unicode-aware classification of one code point, as Python's str methods see it. */
bool tl_uni_isalnum(uint32_t cp);  /* str.isalnum() / regex \w minus '_' */
bool tl_uni_isspace(uint32_t cp);  /* str.isspace() */
/* The first index >= i of s[0..n) that does not start a code point for which str.isspace()
 * holds (Python's str.lstrip() from i); n when none. */
size_t tl_utf8_skip_space(const char *s, size_t n, size_t i);

#endif
