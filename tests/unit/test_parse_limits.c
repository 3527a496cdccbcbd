/* test_parse_limits.c - what a parse may cost, and what happens at the limits.
 *
 *   - runaway answers (1 MB of one repeated piece, the shapes a looping model writes): every
 *     parser answers in well under a second, with the same result as on a short copy, and the
 *     44 KB "A. " + "Yucca Yoga " * 4000 case that took 4 s in strict takes milliseconds;
 *   - a 5 MB pr3 answer that used to take GBs of memory (and then abort the run) parses in a few
 *     MB;
 *   - a regex resource limit is the status parse_limit in every parser (forced through the test
 *     hook tl_rx_test_set_match_limit), never an error, and se_eval counts it in its own column;
 *   - PCRE2's limits are set: a catastrophic pattern returns TL_RX_LIMIT with bounded memory;
 *   - texts are cut only at UTF-8 boundaries (tl_utf8_floor, tl_err_set);
 *   - the C.UTF-8 locale check.
 * The runaway cases run in a child process under alarm(), so that a quadratic parser fails the
 * case instead of hanging the test. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, fork, pipe */
#include "testutil.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tally/parsed.h"
#include "tally/rx.h"
#include "se_eval.h"
#include "tally/str.h"

/* SLOWDOWN and SANITIZED: testutil.h (the sanitizers make everything a few times slower). */

#define RUNAWAY_BYTES (1u << 20)  /* 1 MiB */
#define RUNAWAY_SECONDS 1.0       /* per parse, times SLOWDOWN; measured: 0.25 s at most */
#ifndef CHILD_ALARM
#define CHILD_ALARM 60            /* a case that takes this long has gone quadratic */
#endif

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long max_rss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/* ---- items ------------------------------------------------------------------------------- */

#define YUCCA_ITEM(id)                                                                         \
  "{\"id\":\"" id "\",\"text\":\"Which object is in the Southwest of Oz Oddities? Available "  \
  "options:\\nA. Yucca Yoga\\nB. Narwhal's Novelties\\nC. Police Supply Store\\nD. Ice Queen " \
  "Ice Cream.\",\"oracle_answer\":\"Yucca Yoga\",\"oracle_option\":\"A\",\"oracle_full_answer\":" \
  "\"A. Yucca Yoga\"}"

enum { IT_MAP1, IT_MAZE0, IT_MAZE1, N_IT };
static const char *const ITEM_SRC[N_IT] = {YUCCA_ITEM("spatialmap.tqa.9000.1"),
                                           YUCCA_ITEM("mazenav.tqa.9000.0"),
                                           YUCCA_ITEM("mazenav.tqa.9000.1")};

typedef struct {
  tl_se_item items[N_IT];
  tl_se_parser *p[TL_SE__NMODES];
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  assert_non_null(f);
  for (int i = 0; i < N_IT; i++) tu_item(&f->items[i], ITEM_SRC[i]);
  tl_err err;
  for (int m = 0; m < TL_SE__NMODES; m++) {
    f->p[m] = tl_se_parser_new((tl_se_mode)m, &err);
    if (!f->p[m]) fail_msg("%s", err.msg);
  }
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  for (int i = 0; i < N_IT; i++) tl_se_item_release(&f->items[i]);
  for (int m = 0; m < TL_SE__NMODES; m++) tl_se_parser_free(f->p[m]);
  free(f);
  return 0;
}

/* pre + unit * k + suf, with k the most that keeps pre + unit * k within `bytes` */
static char *build(const char *pre, const char *unit, const char *suf, size_t bytes) {
  size_t pl = strlen(pre), ul = strlen(unit), sl = strlen(suf);
  char *r = malloc(bytes + pl + sl + 1);
  if (!r) return NULL;
  memcpy(r, pre, pl);
  size_t n = pl;
  while (ul && n + ul <= bytes) {
    memcpy(r + n, unit, ul);
    n += ul;
  }
  memcpy(r + n, suf, sl);
  r[n + sl] = 0;
  return r;
}

/* ---- runaway answers ---------------------------------------------------------------------- */

typedef struct {
  tl_pstatus st;
  const char *rule;
  const char *answer; /* the answer starts with this; NULL: there is none */
} want;

typedef struct {
  const char *name;
  const char *pre, *unit, *suf;
  int item;
  const char *model;
  want w[TL_SE__NMODES]; /* strict, pr3, legacy */
} runaway;

#define W(st, rule, ans) {TL_PS_##st, rule, ans}
#define NONE_ W(NO_ANSWER, "map_q1_none", "none")

/* Expected results: those of the parsers before this work on a 3 KB copy of each shape (the
 * results do not depend on the length), except "Answer + blanks + x", where strict used to fail
 * with a regex error. */
static const runaway RUNAWAY[] = {
    {"repeated option text", "A. ", "Yucca Yoga ", "", IT_MAP1, "",
     {W(OK, "opening_letter", "A"), W(OK, "no_tag_first_letter", "A"),
      W(OK, "map_q1_letter_rest", "yucca yoga yucca yoga")}},
    {"repeated Answer: A", "", "Answer: A ", "", IT_MAP1, "",
     {W(OK, "explicit_answer_letter", "A"), W(OK, "answer_tag_letter", "A"), NONE_}},
    {"repeated <think>", "", "<think>", "", IT_MAP1, "",
     {W(UNTERMINATED, "unterminated_think", NULL), W(NO_ANSWER, "no_tag_no_letter", NULL), NONE_}},
    {"one line without newline", "", "Yucca Yoga is northeast of Oz Oddities and ", "", IT_MAP1, "",
     {W(OK, "first_sentence_text", "A"), W(OK, "no_tag_first_letter", "C"),
      W(OK, "map_q1_is_phrase", "northeast of oz oddities and yucca")}},
    {"blanks", "", " ", "", IT_MAP1, "",
     {W(NO_ANSWER, "empty", NULL), W(NO_ANSWER, "no_tag_no_letter", NULL), NONE_}},
    {"newlines", "", "\n", "", IT_MAP1, "",
     {W(NO_ANSWER, "empty", NULL), W(NO_ANSWER, "no_tag_no_letter", NULL), NONE_}},
    {"A or B", "", "A or B, ", "", IT_MAP1, "",
     {W(NO_ANSWER, "none", NULL), W(OK, "no_tag_first_letter", "A"),
      W(OK, "map_q1_letter_token", "b")}},
    {"markdown answer headings", "", "### Answer\n", "", IT_MAP1, "",
     {W(NO_ANSWER, "none", NULL), W(OK, "no_tag_first_letter", "A"), NONE_}},
    {"repeated </think>", "", "</think>", "", IT_MAP1, "",
     {W(NO_ANSWER, "empty", NULL), W(NO_ANSWER, "no_tag_no_letter", NULL), NONE_}},
    {"think block then answer", "<think>", "x", "</think>Answer: A", IT_MAP1, "",
     {W(OK, "explicit_answer_letter", "A"), W(OK, "answer_tag_letter", "A"), NONE_}},
    {"the answer is ...", "", "the answer is ", "", IT_MAP1, "",
     {W(NO_ANSWER, "none", NULL), W(OK, "no_tag_first_letter", "A"),
      W(OK, "map_q1_is_phrase", "the answer is the answer")}},
    {"bold answers on one line", "", "**Answer:** A ", "", IT_MAP1, "",
     {W(OK, "explicit_answer_letter", "A"), W(OK, "answer_tag_letter", "A"), NONE_}},
    {"the answer isn't ...", "", "the answer isn't ", "", IT_MAP1, "",
     {W(NO_ANSWER, "none", NULL), W(OK, "no_tag_first_letter", "A"), NONE_}},
    {"Answer + blanks + x", "Answer", " ", "x", IT_MAP1, "",
     {W(NO_ANSWER, "none", NULL), W(OK, "no_tag_first_letter", "A"), NONE_}},
    {"answers quoting the placeholder", "", "Answer: ",
     "<A single letter option that best answers the question>", IT_MAP1, "",
     {W(NO_ANSWER, "none", NULL), W(OK, "no_tag_first_letter", "A"), NONE_}},
    {"stars", "", "*", "", IT_MAP1, "",
     {W(NO_ANSWER, "empty", NULL), W(NO_ANSWER, "no_tag_no_letter", NULL), NONE_}},
    {"one long token after Answer:", "Answer: ", "x", "", IT_MAP1, "",
     {W(NO_ANSWER, "none", NULL), W(NO_ANSWER, "answer_tag_no_letter", NULL), NONE_}},
    {"x + blanks + x", "x", " ", "x", IT_MAP1, "",
     {W(NO_ANSWER, "none", NULL), W(NO_ANSWER, "no_tag_no_letter", NULL), NONE_}},
    {"is + blanks + a line", "is", " ", "xxxx\nx", IT_MAP1, "",
     {W(NO_ANSWER, "none", NULL), W(NO_ANSWER, "no_tag_no_letter", NULL), NONE_}},
    {"(a) + blanks + a line", "x(a)", " ", "xxxx\nx", IT_MAP1, "",
     {W(NO_ANSWER, "none", NULL), W(OK, "no_tag_first_letter", "A"), NONE_}},
    {"repeated Answer: option text", "", "Answer: Yucca Yoga ", "", IT_MAP1, "",
     {W(OK, "explicit_answer_text", "A"), W(NO_ANSWER, "answer_tag_no_letter", NULL), NONE_}},
    {"repeated negated answers", "", "the answer is not Yucca Yoga ", "", IT_MAP1, "",
     {W(NO_ANSWER, "explicit_answer_text", NULL), W(OK, "no_tag_first_letter", "A"),
      W(OK, "map_q1_is_phrase", "not yucca yoga the answer")}},
    {"answer is: + newlines (maze q0)", "answer is:", "\n", "x", IT_MAZE0, "",
     {W(NO_ANSWER, "none", NULL), W(OK, "no_tag_first_letter", "A"),
      W(NO_ANSWER, "maze_none", "none")}},
    {"answer is: + blank lines (maze q1)", "answer is:", " \n", "x", IT_MAZE1, "",
     {W(NO_ANSWER, "none", NULL), W(OK, "no_tag_first_letter", "A"),
      W(NO_ANSWER, "maze_none", "none")}},
    {"Concise Answer: + blanks (gpt4o)", "Concise Answer:", " ", "is located southeast", IT_MAP1,
     "gpt4o",
     {W(NO_ANSWER, "none", NULL), W(NO_ANSWER, "answer_tag_no_letter", NULL),
      W(OK, "map_q1_gpt4o", " ")}},
    {"**Answer:** + blanks (geminiv)", "**Answer:**", " ", "x", IT_MAP1, "geminiv",
     {W(NO_ANSWER, "none", NULL), W(NO_ANSWER, "answer_tag_no_letter", NULL),
      W(OK, "map_q1_geminiv", "x")}},
};
#define N_RUNAWAY (sizeof RUNAWAY / sizeof RUNAWAY[0])

/* In a child: parses `resp` and checks the result and the time. Exit codes: 0 ok, 1 wrong
 * result, 2 too slow, 3 out of memory building the input; killed by SIGALRM: far too slow. */
static int child_check(const fixture *f, int item, const char *model, int mode, const char *resp,
                       const want *w, double max_s, double *secs) {
  tl_parsed out;
  tl_parsed_init(&out);
  double t0 = now();
  tl_status st = tl_se_parse(f->p[mode], &f->items[item], NULL, resp, model, &out);
  *secs = now() - t0;
  int bad = st != TL_OK || out.status != w->st || strcmp(out.rule, w->rule) != 0 ||
            (w->answer ? !out.answer || strncmp(out.answer, w->answer, strlen(w->answer)) != 0
                       : out.answer != NULL);
  if (bad)
    fprintf(stderr, "  %s: rc=%d status=%s rule=%s answer=%.40s; want %s %s %s\n",
            tl_se_mode_name((tl_se_mode)mode), st, tl_pstatus_name(out.status), out.rule,
            out.answer ? out.answer : "NULL", tl_pstatus_name(w->st), w->rule,
            w->answer ? w->answer : "NULL");
  tl_parsed_release(&out);
  if (bad) return 1;
  return *secs > max_s ? 2 : 0;
}

/* Runs one parse of a fresh response in a forked child (see child_check); returns its exit
 * code, or 9 when it was killed, and its time through *secs. */
static int in_child(const fixture *f, int item, const char *model, int mode, const char *pre,
                    const char *unit, const char *suf, size_t bytes, const want *w, double max_s,
                    double *secs) {
  int fd[2];
  if (pipe(fd) != 0) fail_msg("pipe failed");
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) fail_msg("fork failed");
  if (pid == 0) {
    close(fd[0]);
    alarm(CHILD_ALARM * (unsigned)SLOWDOWN);
    double t = 0;
    char *r = build(pre, unit, suf, bytes);
    int code = r ? child_check(f, item, model, mode, r, w, max_s, &t) : 3;
    free(r);
    if (write(fd[1], &t, sizeof t) != (ssize_t)sizeof t) code = 3;
    _exit(code);
  }
  close(fd[1]);
  int ws = 0;
  waitpid(pid, &ws, 0);
  *secs = -1;
  if (read(fd[0], secs, sizeof *secs) != (ssize_t)sizeof *secs) *secs = -1;
  close(fd[0]);
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 9;
}

static void test_runaway_answers(void **state) {
  const fixture *f = *state;
  int failed = 0;
  for (size_t k = 0; k < N_RUNAWAY; k++) {
    const runaway *c = &RUNAWAY[k];
    for (int m = 0; m < TL_SE__NMODES; m++) {
      double secs;
      int code = in_child(f, c->item, c->model, m, c->pre, c->unit, c->suf, RUNAWAY_BYTES, &c->w[m],
                          RUNAWAY_SECONDS * SLOWDOWN, &secs);
      if (code) {
        print_error("runaway '%s', %s: %s (%.3f s)\n", c->name, tl_se_mode_name((tl_se_mode)m),
                    code == 1 ? "wrong result" : code == 2 ? "too slow" : code == 9 ? "killed (hung)"
                                                                       : "no memory",
                    secs);
        failed++;
      }
    }
  }
  assert_int_equal(failed, 0);
}

/* The case of the report: "A. " + "Yucca Yoga " * 4000 (44 KB) took 4.3 s in strict. */
static void test_strict_44kb(void **state) {
  const fixture *f = *state;
  const want w = W(OK, "opening_letter", "A");
  double secs;
  int code = in_child(f, IT_MAP1, "", TL_SE_STRICT, "A. ", "Yucca Yoga ", "", 3 + 4000 * 11, &w,
                      0.2 * SLOWDOWN, &secs); /* measured: 1 ms */
  if (code) print_error("44 KB strict: exit %d after %.3f s\n", code, secs);
  assert_int_equal(code, 0);
}

/* 5 MB answers: pr3 used to need 1.3-2.6 GB (a backtracking frame per character for its
 * group-repeat \s classes) and then failed the run with a regex error. Memory must stay a small
 * multiple of the answer. */
static void test_5mb_memory(void **state) {
  const fixture *f = *state;
  static const struct {
    const char *pre, *unit, *suf;
    want w[TL_SE__NMODES];
  } C[] = {
      {"Answer: ", "x", "",
       {W(NO_ANSWER, "none", NULL), W(NO_ANSWER, "answer_tag_no_letter", NULL), NONE_}},
      {"Answer:", " ", "x",
       {W(NO_ANSWER, "none", NULL), W(NO_ANSWER, "answer_tag_no_letter", NULL), NONE_}},
      {"Answer: A ", "x", "",
       {W(OK, "explicit_answer_letter", "A"), W(OK, "answer_tag_letter", "A"), NONE_}},
  };
  const size_t bytes = 5u << 20;
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++)
    for (int m = 0; m < TL_SE__NMODES; m++) {
      int fd[2];
      assert_int_equal(pipe(fd), 0);
      fflush(NULL);
      pid_t pid = fork();
      assert_true(pid >= 0);
      if (pid == 0) {
        close(fd[0]);
        alarm(CHILD_ALARM * (unsigned)SLOWDOWN);
        char *r = build(C[k].pre, C[k].unit, C[k].suf, bytes);
        long before = max_rss_kb();
        double t = 0;
        int code = r ? child_check(f, IT_MAP1, "", m, r, &C[k].w[m], 2.0 * SLOWDOWN, &t) : 3;
        long grew = max_rss_kb() - before;
        free(r);
        if (write(fd[1], &grew, sizeof grew) != (ssize_t)sizeof grew) code = 3;
        _exit(code);
      }
      close(fd[1]);
      int ws = 0;
      waitpid(pid, &ws, 0);
      long grew = -1;
      if (read(fd[0], &grew, sizeof grew) != (ssize_t)sizeof grew) grew = -1;
      close(fd[0]);
      int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 9;
      if (code || grew < 0) print_error("5 MB case %zu, %s: exit %d\n", k, tl_se_mode_name(m), code);
      assert_int_equal(code, 0);
      /* at most 16 bytes per answer byte (measured: below 4); sanitizers add their own */
      if (!SANITIZED && grew > (long)(16 * bytes / 1024))
        fail_msg("5 MB case %zu, %s: memory grew by %ld KB", k, tl_se_mode_name(m), grew);
    }
}

/* ---- parse_limit ---------------------------------------------------------------------------- */

static void test_status_names(void **state) {
  (void)state;
  assert_int_equal(TL_PS__COUNT, 11);
  assert_int_equal(TL_PS_PARSE_LIMIT, 9);
  assert_int_equal(TL_PS_ENGINE_ERROR, 10); /* appended */
  assert_string_equal(tl_pstatus_name(TL_PS_ENGINE_ERROR), "engine_error");
  assert_int_equal(tl_pstatus_from_name("engine_error"), TL_PS_ENGINE_ERROR);
  assert_string_equal(tl_pstatus_name(TL_PS_PARSE_LIMIT), "parse_limit");
  assert_int_equal(tl_pstatus_from_name("parse_limit"), TL_PS_PARSE_LIMIT);
  assert_int_equal(TL_PS_MISSING, 8); /* the old numbers stay */
  assert_string_equal(tl_pstatus_name(TL_PS_MISSING), "missing");
}

/* Every parser: a regex resource limit gives TL_OK, status parse_limit, no answer, correct 0,
 * rule "parse_limit". Forced with the test hook (match limit 1 in the interpreter). */
static void test_parse_limit_status(void **state) {
  const fixture *f = *state;
  static const struct {
    tl_se_mode mode;
    const char *response;
    tl_pstatus normal; /* the status without the hook */
  } C[] = {
      {TL_SE_STRICT, "Answer: A", TL_PS_OK},
      {TL_SE_STRICT, "The answer is (A) Yucca Yoga.", TL_PS_OK},
      {TL_SE_STRICT, "\\boxed{A}", TL_PS_OK},
      {TL_SE_PR3, "Answer: A", TL_PS_OK},
      {TL_SE_PR3, "B", TL_PS_OK},
      {TL_SE_LEGACY, "Yucca Yoga is located southeast", TL_PS_OK},
      {TL_SE_LEGACY, "A. Yucca Yoga", TL_PS_OK},
  };
  for (size_t k = 0; k < sizeof C / sizeof C[0]; k++) {
    tl_parsed out;
    tl_parsed_init(&out);
    tl_rx_test_set_match_limit(1);
    tl_status st = tl_se_parse(f->p[C[k].mode], &f->items[IT_MAP1], NULL, C[k].response, "", &out);
    tl_rx_test_set_match_limit(0);
    if (st != TL_OK || out.status != TL_PS_PARSE_LIMIT)
      fail_msg("%s '%s': rc=%d status %s (want parse_limit)", tl_se_mode_name(C[k].mode),
               C[k].response, st, tl_pstatus_name(out.status));
    assert_null(out.answer);
    assert_int_equal(out.correct, 0);
    assert_string_equal(out.rule, "parse_limit");
    /* without the hook the same parse is normal again */
    assert_int_equal(tl_se_parse(f->p[C[k].mode], &f->items[IT_MAP1], NULL, C[k].response, "", &out),
                     TL_OK);
    assert_int_equal(out.status, C[k].normal);
    tl_parsed_release(&out);
  }
}

/* The limits are set: a catastrophic pattern stops with TL_RX_LIMIT; a group repeat over 8 MB
 * (which overflows the JIT stack) stops at the interpreter's depth/heap limit, in bounded memory,
 * instead of taking GBs. */
static void test_rx_limits(void **state) {
  (void)state;
  tl_err err;
  tl_rx_match m;
  tl_rx *cat = tl_rx_compile("(a+)+$", 0, &err);
  assert_non_null(cat);
  char s[64];
  memset(s, 'a', 40);
  s[40] = 'b';
  s[41] = 0;
  double t0 = now();
  assert_int_equal(tl_rx_search(cat, s, 41, 0, &m), TL_RX_LIMIT);
  assert_true(now() - t0 < 30.0 * SLOWDOWN);
  tl_rx_free(cat);

  size_t n = 8u << 20;
  char *t = malloc(n + 1);
  assert_non_null(t);
  for (size_t i = 0; i < n; i++) t[i] = "ab"[i & 1];
  t[n] = 0;
  tl_rx *grp = tl_rx_compile("(?:(a)|b)*c", 0, &err);
  assert_non_null(grp);
  long before = max_rss_kb();
  assert_int_equal(tl_rx_search(grp, t, n, 0, &m), TL_RX_LIMIT);
  long grew = max_rss_kb() - before;
  if (!SANITIZED && grew > 2 * (long)TL_RX_HEAP_LIMIT_KIB + 64 * 1024)
    fail_msg("the interpreter retry grew memory by %ld KB", grew);
  /* and the thread's state is usable afterwards */
  tl_rx *plain = tl_rx_compile("b+c?", 0, &err);
  assert_int_equal(tl_rx_search(plain, "aabbb", 5, 0, &m), 1);
  assert_int_equal(m.start[0], 2);
  assert_int_equal(m.end[0], 5);
  tl_rx_free(plain);
  tl_rx_free(grp);
  free(t);
}

/* se_eval counts parse_limit in its own column. */
static void test_counts_parse_limit(void **state) {
  fixture *f = *state;
  tl_se_itemset s;
  memset(&s, 0, sizeof s);
  s.items = &f->items[IT_MAP1];
  s.n = 1;
  tl_cfg cfg = {"m", 0, 0};
  const tl_se_mode modes[1] = {TL_SE_STRICT};
  tl_row rows[3];
  const tl_unit units[3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  const tl_pstatus st[3] = {TL_PS_OK, TL_PS_PARSE_LIMIT, TL_PS_PARSE_LIMIT};
  for (int i = 0; i < 3; i++) {
    tl_row_init(&rows[i]);
    rows[i].res[0].status = st[i];
    rows[i].res[0].rule = st[i] == TL_PS_OK ? "opening_letter" : "parse_limit";
    rows[i].res[0].correct = st[i] == TL_PS_OK;
  }
  size_t len = tl_se_counts_len(1, 1);
  int64_t *c = calloc(len, sizeof *c);
  assert_non_null(c);
  tl_se_counts_add(c, &s, 1, units, rows, 3, 1);
  int64_t tot[TL_PS__COUNT];
  tl_se_status_totals(c, 1, 1, 0, tot);
  assert_int_equal(tot[TL_PS_OK], 1);
  assert_int_equal(tot[TL_PS_PARSE_LIMIT], 2);
  assert_int_equal(tot[TL_PS_MISSING], 0);
  tl_table *per_seed = NULL, *across = NULL;
  assert_int_equal(tl_se_metric_tables(c, &cfg, 1, modes, 1, 0, &per_seed, &across), TL_OK);
  int col = tl_table_col(per_seed, "n_parse_limit");
  assert_true(col >= 0);
  assert_true(tl_table_col(per_seed, "n_missing") >= 0);
  assert_int_equal(per_seed->cols[col].type, TL_COL_I64);
  assert_true(per_seed->nrows > 0);
  for (size_t r = 0; r < per_seed->nrows; r++) assert_int_equal(per_seed->cols[col].v.i[r], 2);
  tl_table_free(per_seed);
  tl_table_free(across);
  free(c);

  for (int i = 0; i < 3; i++) rows[i].res[0].rule = "";
}

/* ---- UTF-8 boundaries ------------------------------------------------------------------------ */

static void test_utf8_floor(void **state) {
  (void)state;
  static const struct {
    const char *ch; /* one character */
  } CH[] = {{"a"}, {"\xc3\xa9"}, {"\xe2\x82\xac"}, {"\xf0\x9f\x98\x80"}};
  for (size_t k = 0; k < sizeof CH / sizeof CH[0]; k++) {
    /* "xy" + ch + "z" + ch + ch: every cut point n, expected = the start of the character that
     * holds byte n-1 when n is inside it, else n */
    char s[32];
    size_t cl = strlen(CH[k].ch), n = 0, starts[8], ns = 0;
    const char *parts[] = {"x", "y", CH[k].ch, "z", CH[k].ch, CH[k].ch};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
      starts[ns++] = n;
      memcpy(s + n, parts[i], strlen(parts[i]));
      n += strlen(parts[i]);
    }
    starts[ns] = n;
    s[n] = 0;
    assert_true(tl_utf8_valid(s, n, NULL));
    for (size_t cut = 0; cut <= n; cut++) {
      size_t expect = cut;
      for (size_t i = 0; i < ns; i++)
        if (cut > starts[i] && cut < starts[i + 1]) expect = starts[i];
      if (tl_utf8_floor(s, cut) != expect)
        fail_msg("char of %zu bytes, cut %zu: got %zu, want %zu", cl, cut, tl_utf8_floor(s, cut),
                 expect);
      assert_true(tl_utf8_valid(s, tl_utf8_floor(s, cut), NULL));
    }
  }
  assert_int_equal(tl_utf8_floor("", 0), 0);
}

/* tl_err_set cuts a long message at a character boundary: at every alignment of 3- and 4-byte
 * characters against the 1 KB buffer the message stays valid UTF-8 and a prefix of the text. */
static void test_err_set_utf8(void **state) {
  (void)state;
  static const char *const CH[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
  for (size_t k = 0; k < 3; k++)
    for (size_t pad = 0; pad < 4; pad++) {
      tl_buf b;
      tl_buf_init(&b);
      for (size_t i = 0; i < pad; i++) assert_int_equal(tl_buf_puts(&b, "x"), TL_OK);
      while (b.len < 3 * TL_ERR_MSG_MAX) assert_int_equal(tl_buf_puts(&b, CH[k]), TL_OK);
      tl_err err;
      assert_int_equal(tl_err_set(&err, TL_EINPUT, "cannot read '%s'", b.data), TL_EINPUT);
      size_t ml = strlen(err.msg);
      assert_true(ml < TL_ERR_MSG_MAX);
      assert_true(ml >= TL_ERR_MSG_MAX - 4);
      assert_true(tl_utf8_valid(err.msg, ml, NULL));
      assert_memory_equal(err.msg, "cannot read '", 13);
      assert_memory_equal(err.msg + 13, b.data, ml - 13);
      tl_buf_release(&b);
    }
  tl_err err;
  tl_err_set(&err, TL_EIO, "short %s", "\xe2\x82\xac");
  assert_string_equal(err.msg, "short \xe2\x82\xac");
}

/* An item whose oracle_answer is a JSON number beyond the range of long long (found by
 * fuzz_se_pr3): converting it to long long was undefined behaviour (UBSan reports it). */
static void test_item_huge_number(void **state) {
  (void)state;
  tl_se_item it;
  tu_item(&it, "{\"id\":\"spatialmap.tqa.1.2\",\"text\":\"How many? Available options:\\nA. 1\\nB. 2.\","
               "\"oracle_answer\":8.8888888888888888e114,\"oracle_option\":\"A\","
               "\"oracle_full_answer\":\"A. 1\"}");
  assert_string_equal(it.oracle_answer, "8.8888888888888891e+114");
  tl_se_item_release(&it);
  tu_item(&it, "{\"id\":\"spatialmap.tqa.1.2\",\"text\":\"How many? Available options:\\nA. 1\\nB. 2.\","
               "\"oracle_answer\":-9223372036854775808,\"oracle_option\":\"A\","
               "\"oracle_full_answer\":\"A. 1\"}");
  assert_string_equal(it.oracle_answer, "-9223372036854775808");
  tl_se_item_release(&it);
  tu_item(&it, "{\"id\":\"spatialmap.tqa.1.2\",\"text\":\"How many? Available options:\\nA. 1\\nB. 2.\","
               "\"oracle_answer\":9223372036854775808,\"oracle_option\":\"A\","
               "\"oracle_full_answer\":\"A. 1\"}");
  assert_string_equal(it.oracle_answer, "9.2233720368547758e+18");
  tl_se_item_release(&it);
}

/* ---- the C.UTF-8 locale ------------------------------------------------------------------------
 * glibc >= 2.35 builds C.UTF-8 in, so there is no clean way to make it go missing from a test:
 * only that the check passes here (and that the parsers then build) is tested. */
static void test_locale_check(void **state) {
  (void)state;
  tl_err err;
  err.msg[0] = 0;
  assert_int_equal(tl_utf8_locale_check(&err), TL_OK);
  assert_string_equal(err.msg, "");
  assert_int_equal(tl_utf8_locale_check(NULL), TL_OK);
  tl_se_strict *s = tl_se_strict_new(&err);
  assert_non_null(s);
  tl_se_strict_free(s);
  /* case folding beyond ASCII works, which it would not without the locale */
  char *low = tl_utf8_lower("CAF\xc3\x89", 5);
  assert_string_equal(low, "caf\xc3\xa9");
  free(low);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status_names),
      cmocka_unit_test_setup_teardown(test_parse_limit_status, setup, teardown),
      cmocka_unit_test(test_rx_limits),
      cmocka_unit_test_setup_teardown(test_counts_parse_limit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_strict_44kb, setup, teardown),
      cmocka_unit_test_setup_teardown(test_runaway_answers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_5mb_memory, setup, teardown),
      cmocka_unit_test(test_utf8_floor),
      cmocka_unit_test(test_err_set_utf8),
      cmocka_unit_test(test_locale_check),
      cmocka_unit_test(test_item_huge_number),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
