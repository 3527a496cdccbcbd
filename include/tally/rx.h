/* rx.h - PCRE2 (JIT) behind a small API that mimics Python's `re` on str patterns.
 *
 * Every pattern is compiled with PCRE2_UTF | PCRE2_UCP so \w, \d, \s and \b are Unicode-aware as
 * in Python 3; TL_RX_I is re.IGNORECASE, TL_RX_S re.DOTALL, TL_RX_M re.MULTILINE. Subjects must
 * be valid UTF-8 (inputs are validated on load; PCRE2_NO_UTF_CHECK is used when matching).
 *
 * A compiled tl_rx is immutable and may be shared by threads; match data is per call
 * (tl_rx_match holds its own and must not be shared). */
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

/* re.search starting at byte offset `from`: 1 = match (m filled), 0 = no match, -1 = matching
 * failed (resource limit; treated as an internal error by callers). */
int tl_rx_search(const tl_rx *rx, const char *subj, size_t len, size_t from, tl_rx_match *m);

/* re.match: anchored at `from`. Same returns. */
int tl_rx_match_at(const tl_rx *rx, const char *subj, size_t len, size_t from, tl_rx_match *m);

/* True when group g took part in the match. */
static inline bool tl_rx_has(const tl_rx_match *m, int g) {
  return g < m->ngroups && m->start[g] != (size_t)-1;
}

#endif
