/* testutil.h - helpers shared by the cmocka tests (header-only, static functions).
 *
 * tu_shared_path("spatialeval/x.jsonl") -> path under ../shared/data (TALLY_SHARED_DATA), or
 * NULL when the folder is absent.
 *
 * Cases that need ../shared/data go in their own group, so that ctest shows them as skipped
 * (exit 77) when it is absent while the fixture cases still run and count. Such a file ends main
 * with TU_SHARED_GROUP(argc, argv, fixture_tests, shared_tests, setup, teardown):
 *  - without arguments it runs the fixture group (ctest entry NAME);
 *  - with --shared it runs the shared group (ctest entry NAME_shared, which tests/CMakeLists.txt
 *    registers for every file that uses the macro). It exits 77 at once, with a message, when
 *    the data folder is absent; when a case finds one of its files absent (TU_NEED_SHARED) that
 *    case is skipped and the run exits 77 unless a case failed: never a silent pass.
 * In a fixture-group case TU_NEED_SHARED ends the case there (it passes): a case with a fixture
 * part and a shared part is listed in both groups and its shared part runs in NAME_shared. */
#ifndef TALLY_TESTUTIL_H
#define TALLY_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tally/jsonl.h"
#include "spatialeval.h"

/* SLOWDOWN: how much slower the sanitizers make the code (for the tests' linear-time bounds);
 * SANITIZED: 1 under ASan/UBSan/TSan. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLOWDOWN 10.0
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define SLOWDOWN 10.0
#define SANITIZED 1
#endif
#endif
#ifndef SLOWDOWN
#define SLOWDOWN 1.0
#define SANITIZED 0
#endif

/* [0]: 1 in the --shared run; [1]: shared cases skipped for an absent file */
static inline int *tu_state(void) {
  static int st[2];
  return st;
}

static inline const char *tu_shared_root(void) {
  const char *root = getenv("TALLY_SHARED_DATA");
  return root && *root ? root : TALLY_SHARED_DATA;
}

static inline const char *tu_shared_path(const char *rel) {
  /* four rotating buffers: a few paths can be held at once */
  static char bufs[4][4096];
  static int next;
  char *buf = bufs[next++ & 3];
  const char *root = tu_shared_root();
  snprintf(buf, sizeof bufs[0], "%s/%s", root, rel);
  struct stat st;
  if (stat(buf, &st) != 0) return NULL;
  return buf;
}

/* In the --shared run: skips the current case (cmocka skip) with a message when the shared
 * file is absent. In the fixture run: ends the case here (the rest runs in NAME_shared). */
#define TU_NEED_SHARED(var, rel)                                                       \
  if (!tu_state()[0]) {                                                                \
    print_message("shared part (../shared/data/%s) runs under --shared\n", rel);       \
    return;                                                                            \
  }                                                                                    \
  const char *var = tu_shared_path(rel);                                               \
  if (!var) {                                                                          \
    print_message("skipped: ../shared/data/%s is absent (set TALLY_SHARED_DATA)\n", rel); \
    tu_state()[1]++;                                                                   \
    skip();                                                                            \
  }

/* 0: fixture run, 1: --shared run, -1: bad arguments (usage printed) */
static inline int tu_parse_mode(int argc, char **argv) {
  if (argc == 1) return 0;
  if (argc == 2 && strcmp(argv[1], "--shared") == 0) return tu_state()[0] = 1;
  fprintf(stderr, "usage: %s [--shared]\n", argv[0]);
  return -1;
}

static inline int tu_shared_absent(void) {
  struct stat st;
  if (stat(tu_shared_root(), &st) == 0 && S_ISDIR(st.st_mode)) return 0;
  printf("skipped: the reference data folder %s is absent (set TALLY_SHARED_DATA)\n",
         tu_shared_root());
  return 1;
}

static inline int tu_shared_result(int failed) {
  if (failed || !tu_state()[1]) return failed;
  printf("skipped: %d case(s) could not run (a file under %s or a tool is absent; see above)\n",
         tu_state()[1], tu_shared_root());
  return 77;
}

/* Skips the current case for want of a tool (python, say) with a message; the run then exits 77
 * (skipped) unless a case failed, so ctest never shows it as passed. */
#define TU_SKIP(...)          \
  do {                        \
    print_message(__VA_ARGS__); \
    tu_state()[1]++;          \
    skip();                   \
  } while (0)

#define TU_SHARED_GROUP(argc, argv, fixture, shared, setup, teardown)                 \
  (tu_parse_mode((argc), (argv)) < 0 ? 2                                              \
   : !tu_state()[0] ? tu_shared_result(cmocka_run_group_tests_name("fixture", fixture, setup, teardown)) \
   : tu_shared_absent() ? 77                                                          \
   : tu_shared_result(cmocka_run_group_tests_name("shared", shared, setup, teardown)))

/* Loads every item of a benchmark JSONL into a malloc'd array; returns the count. */
static inline int tu_load_items(const char *path, tl_se_item **out) {
  tl_jsonl r;
  tl_err err;
  assert_int_equal(tl_jsonl_open(&r, path, 0, &err), TL_OK);
  int n = 0, cap = 0;
  tl_se_item *items = NULL;
  cJSON *obj;
  tl_jl_result res;
  while ((res = tl_jsonl_next(&r, &obj, &err)) != TL_JL_EOF) {
    assert_int_equal(res, TL_JL_RECORD);
    if (n == cap) {
      cap = cap ? cap * 2 : 256;
      items = realloc(items, (size_t)cap * sizeof *items);
      assert_non_null(items);
    }
    if (tl_se_item_from_json(obj, &items[n], &err) != TL_OK) fail_msg("%s", err.msg);
    n++;
    cJSON_Delete(obj);
  }
  tl_jsonl_close(&r);
  *out = items;
  return n;
}

/* Builds an item from inline JSON (aborts the test on error). */
static inline void tu_item(tl_se_item *it, const char *json) {
  cJSON *o = cJSON_Parse(json);
  assert_non_null(o);
  tl_err err;
  if (tl_se_item_from_json(o, it, &err) != TL_OK) fail_msg("%s", err.msg);
  cJSON_Delete(o);
}

#endif
