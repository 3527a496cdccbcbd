/* rx.h - PCRE2 (JIT) behind a small API that mimics Python's `re` on str patterns.
 *
 * Every pattern is compiled with PCRE2_UTF | PCRE2_UCP so \w, \d, \s and \b are Unicode-aware as
 * in Python 3; TL_RX_I is re.IGNORECASE, TL_RX_S re.DOTALL, TL_RX_M re.MULTILINE. Subjects must
 * be valid UTF-8 (inputs are validated on load; PCRE2_NO_UTF_CHECK is used when matching).
 *
 * A compiled tl_rx is immutable and may be shared by threads; match data is per call
 * (tl_rx_match holds its own and must not be shared).
 *
 * Resource limits (rx.c; every call runs under them, so no pattern or subject can run or grow
 * without bound):
 *   - match limit: TL_RX_MATCH_LIMIT_BASE + TL_RX_MATCH_LIMIT_PER_BYTE * (subject length)
 *     backtracking steps. PCRE2 counts them per start position, so a search costs at most this
 *     many steps at each start; the budget grows with the subject so that a pattern that is
 *     linear at one start (a lazy ".*?" that walks the whole subject) never trips it;
 *   - JIT stack: at most 16 MiB per thread. A match that overflows it is retried once with the
 *     interpreter, under TL_RX_DEPTH_LIMIT nested backtracking frames and TL_RX_HEAP_LIMIT_KIB
 *     KiB of heap for them.
 * A match that hits any of them returns TL_RX_LIMIT. The parsers turn that into the status
 * parse_limit (a property of the response, never an error); their patterns are written so that
 * realistic inputs, including runaway answers of many MB, stay far below the limits. */
#ifndef TALLY_RX_H
#define TALLY_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tally/err.h"

#define TL_RX_I 0x1u
#define TL_RX_S 0x2u
#define TL_RX_M 0x4u

#define TL_RX_MAX_GROUPS 16

#define TL_RX_MATCH_LIMIT_BASE 10000000u  /* PCRE2's own default */
#define TL_RX_MATCH_LIMIT_PER_BYTE 64u
#define TL_RX_DEPTH_LIMIT 1000000u
#define TL_RX_HEAP_LIMIT_KIB (64u * 1024u) /* 64 MiB */

/* Return values of tl_rx_search / tl_rx_match_at besides 1 (match) and 0 (no match). */
#define TL_RX_LIMIT (-1) /* a match, depth or heap limit was hit (after the interpreter retry) */
#define TL_RX_ERROR (-2) /* out of memory, or a PCRE2 failure that is a bug */

typedef struct tl_rx tl_rx;

/* One match: group g spans [start[g], end[g]) of the subject; start[g] == (size_t)-1 when the
 * group did not take part (Python's None). Group 0 is the whole match. */
typedef struct {
  size_t start[TL_RX_MAX_GROUPS];
  size_t end[TL_RX_MAX_GROUPS];
  int ngroups; /* number of capture groups in the pattern + 1 */
} tl_rx_match;

/* Compiles `pattern` (Python `re` syntax that PCRE2 shares). Returns NULL and fills err on
 * failure. Free with tl_rx_free (NULL ok). */
tl_rx *tl_rx_compile(const char *pattern, uint32_t flags, tl_err *err);
void tl_rx_free(tl_rx *rx);

/* re.search starting at byte offset `from`: 1 = match (m filled), 0 = no match, TL_RX_LIMIT =
 * a resource limit was hit, TL_RX_ERROR = out of memory or an internal PCRE2 failure. */
int tl_rx_search(const tl_rx *rx, const char *subj, size_t len, size_t from, tl_rx_match *m);

/* re.match: anchored at `from`. Same returns. */
int tl_rx_match_at(const tl_rx *rx, const char *subj, size_t len, size_t from, tl_rx_match *m);

/* TEST HOOK, for tests only: when limit > 0, every later match on the calling thread runs in
 * the interpreter (its count is exact, the JIT's is not) under this match limit instead of the
 * one above; limit 1 makes every match that gets past PCRE2's start-up checks (a required
 * character that is absent fails a search before any step) return TL_RX_LIMIT. 0 restores the
 * normal limits. Never called by tally itself. */
void tl_rx_test_set_match_limit(uint32_t limit);

/* True when group g took part in the match. */
static inline bool tl_rx_has(const tl_rx_match *m, int g) {
  return g < m->ngroups && m->start[g] != (size_t)-1;
}

#endif
