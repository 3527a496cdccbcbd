/* rx.c - PCRE2 wrapper with JIT, configured to behave like Python 3 `re` on str patterns:
 * UTF + UCP (Unicode \w \d \s \b), newline = LF only ('.' excludes just "\n", '$' matches at the
 * end or before a final "\n"), leftmost-first backtracking. Match data, the match context and
 * the JIT stack are per thread (C11 _Thread_local) and created on first use; they live until
 * thread exit.
 *
 * Limits (rx.h): each call sets the match limit to TL_RX_MATCH_LIMIT_BASE +
 * TL_RX_MATCH_LIMIT_PER_BYTE * length; the JIT stack grows to 16 MiB. Only a JIT stack overflow
 * is retried, with the interpreter (which keeps its backtracking frames on the heap instead),
 * under TL_RX_DEPTH_LIMIT and TL_RX_HEAP_LIMIT_KIB; a match limit hit by the JIT is final,
 * because the interpreter counts the same steps more strictly and would only hit it again,
 * later. Environment: TALLY_NO_JIT=1 disables the JIT (for valgrind runs). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "tally/rx.h"

struct tl_rx {
  pcre2_code *code;
  int jit; /* 1 when JIT compilation succeeded */
};

tl_rx *tl_rx_compile(const char *pattern, uint32_t flags, tl_err *err) {
  uint32_t opts = PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK;
  if (flags & TL_RX_I) opts |= PCRE2_CASELESS;
  if (flags & TL_RX_S) opts |= PCRE2_DOTALL;
  if (flags & TL_RX_M) opts |= PCRE2_MULTILINE;
  pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
  if (!cc) {
    tl_err_set(err, TL_ENOMEM, "out of memory compiling a pattern");
    return NULL;
  }
  pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
  int ec;
  PCRE2_SIZE eo;
  pcre2_code *code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts, &ec, &eo, cc);
  pcre2_compile_context_free(cc);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(ec, msg, sizeof msg);
    tl_err_set(err, TL_EREGEX, "cannot compile pattern '%s' at offset %zu: %s", pattern,
               (size_t)eo, (const char *)msg);
    return NULL;
  }
  uint32_t ncap = 0;
  pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &ncap);
  if (ncap + 1 > TL_RX_MAX_GROUPS) {
    pcre2_code_free(code);
    tl_err_set(err, TL_EREGEX, "pattern '%s' has %u groups, more than %d", pattern, ncap,
               TL_RX_MAX_GROUPS - 1);
    return NULL;
  }
  tl_rx *rx = malloc(sizeof *rx);
  if (!rx) {
    pcre2_code_free(code);
    tl_err_set(err, TL_ENOMEM, "out of memory compiling a pattern");
    return NULL;
  }
  rx->code = code;
  /* TALLY_NO_JIT=1 turns the JIT off (valgrind cannot see into JIT code). */
  const char *nojit = getenv("TALLY_NO_JIT");
  rx->jit = (nojit && *nojit && *nojit != '0') ? 0 : pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  return rx;
}

void tl_rx_free(tl_rx *rx) {
  if (!rx) return;
  pcre2_code_free(rx->code);
  free(rx);
}

static _Thread_local pcre2_match_data *t_md;
static _Thread_local pcre2_match_context *t_mc;
static _Thread_local pcre2_jit_stack *t_js;
static _Thread_local uint32_t t_test_limit; /* tl_rx_test_set_match_limit; 0 = off */

static int ensure_thread_state(void) {
  if (!t_md) t_md = pcre2_match_data_create(TL_RX_MAX_GROUPS, NULL);
  if (!t_mc) {
    t_mc = pcre2_match_context_create(NULL);
    if (!t_mc) return 0;
    pcre2_set_depth_limit(t_mc, TL_RX_DEPTH_LIMIT);
    pcre2_set_heap_limit(t_mc, TL_RX_HEAP_LIMIT_KIB);
    t_js = pcre2_jit_stack_create(64 * 1024, 16 * 1024 * 1024, NULL);
    if (t_js) pcre2_jit_stack_assign(t_mc, NULL, t_js);
  }
  return t_md && t_mc;
}

void tl_rx_test_set_match_limit(uint32_t limit) { t_test_limit = limit; }

static int is_limit(int rc) {
  return rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
         rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT;
}

static int copy_groups(const tl_rx *rx, int rc, tl_rx_match *m);

static int run(const tl_rx *rx, const char *subj, size_t len, size_t from, uint32_t mopts,
               tl_rx_match *m) {
  if (!ensure_thread_state()) return TL_RX_ERROR;
  uint64_t lim = (uint64_t)TL_RX_MATCH_LIMIT_BASE + (uint64_t)TL_RX_MATCH_LIMIT_PER_BYTE * len;
  if (lim > UINT32_MAX) lim = UINT32_MAX;
  if (t_test_limit) lim = t_test_limit;
  pcre2_set_match_limit(t_mc, (uint32_t)lim);
  uint32_t o = mopts | PCRE2_NO_UTF_CHECK;
  if (t_test_limit) o |= PCRE2_NO_JIT; /* the test hook wants the interpreter's strict count */
  int interp = (o & PCRE2_NO_JIT) || !rx->jit;
  int rc = pcre2_match(rx->code, (PCRE2_SPTR)subj, len, from, o, t_md, t_mc);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT) { /* the interpreter keeps its frames on the heap */
    interp = 1;
    rc = pcre2_match(rx->code, (PCRE2_SPTR)subj, len, from, o | PCRE2_NO_JIT, t_md, t_mc);
  }
  rc = copy_groups(rx, rc, m);
  if (interp) { /* PCRE2 keeps the interpreter's heap frames (up to the heap limit) in the match
                  * data: let them go, so that memory stays bounded by the answer at hand */
    pcre2_match_data_free(t_md);
    t_md = NULL;
  }
  return rc;
}

/* Copies the groups of a successful match into m; maps PCRE2's return code to ours. */
static int copy_groups(const tl_rx *rx, int rc, tl_rx_match *m) {
  if (rc == PCRE2_ERROR_NOMATCH) return 0;
  if (is_limit(rc)) return TL_RX_LIMIT;
  if (rc < 0) return TL_RX_ERROR; /* PCRE2_ERROR_NOMEMORY, or a bug */
  uint32_t ncap = 0;
  pcre2_pattern_info(rx->code, PCRE2_INFO_CAPTURECOUNT, &ncap);
  PCRE2_SIZE *ov = pcre2_get_ovector_pointer(t_md);
  m->ngroups = (int)ncap + 1;
  for (int g = 0; g < m->ngroups; g++) {
    if (g < rc && ov[2 * g] != PCRE2_UNSET) {
      m->start[g] = ov[2 * g];
      m->end[g] = ov[2 * g + 1];
    } else {
      m->start[g] = (size_t)-1;
      m->end[g] = (size_t)-1;
    }
  }
  return 1;
}

int tl_rx_search(const tl_rx *rx, const char *subj, size_t len, size_t from, tl_rx_match *m) {
  return run(rx, subj, len, from, 0, m);
}

int tl_rx_match_at(const tl_rx *rx, const char *subj, size_t len, size_t from, tl_rx_match *m) {
  return run(rx, subj, len, from, PCRE2_ANCHORED, m);
}
