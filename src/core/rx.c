/* rx.c - PCRE2 wrapper with JIT, configured to behave like Python 3 `re` on str patterns:
 * UTF + UCP (Unicode \w \d \s \b), newline = LF only ('.' excludes just "\n", '$' matches at the
 * end or before a final "\n"), leftmost-first backtracking. Match data and the JIT stack are
 * per thread (C11 _Thread_local) and created on first use; they live until thread exit.
 * Environment: TALLY_NO_JIT=1 disables the JIT (for valgrind runs). */
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

static int ensure_thread_state(void) {
  if (!t_md) t_md = pcre2_match_data_create(TL_RX_MAX_GROUPS, NULL);
  if (!t_mc) {
    t_mc = pcre2_match_context_create(NULL);
    t_js = pcre2_jit_stack_create(64 * 1024, 16 * 1024 * 1024, NULL);
    if (t_mc && t_js) pcre2_jit_stack_assign(t_mc, NULL, t_js);
  }
  return t_md && t_mc;
}

static int run(const tl_rx *rx, const char *subj, size_t len, size_t from, uint32_t mopts,
               tl_rx_match *m) {
  if (!ensure_thread_state()) return -1;
  int rc = pcre2_match(rx->code, (PCRE2_SPTR)subj, len, from, mopts | PCRE2_NO_UTF_CHECK, t_md,
                       t_mc);
  if (rc == PCRE2_ERROR_NOMATCH) return 0;
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT || rc == PCRE2_ERROR_MATCHLIMIT ||
      rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT) {
    /* Retry with the interpreter, which does not use the JIT stack. */
    rc = pcre2_match(rx->code, (PCRE2_SPTR)subj, len, from,
                     mopts | PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, t_md, NULL);
    if (rc == PCRE2_ERROR_NOMATCH) return 0;
  }
  if (rc < 0) return -1;
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
