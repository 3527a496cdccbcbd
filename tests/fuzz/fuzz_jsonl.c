/* fuzz_jsonl.c - libFuzzer target for the JSONL line reader (tl_jsonl_open / tl_jsonl_next) and
 * the bad-input log it feeds (tl_inlog_report_bad_line).
 *
 * Input: one control byte, then the file's bytes (written to a memfd and read through
 * /proc/self/fd/N, every line to EOF). Control bits 0-1 pick the per-line cap: the default,
 * 8, 100 or 4096 bytes; bit 2 makes the log strict (the caller stops at the first report). */
#include "fuzz_util.h"

#include <sys/mman.h>

#include "tally/inlog.h"
#include "tally/jsonl.h"

static int g_fd = -1;
static char g_path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const size_t CAPS[4] = {0, 8, 100, 4096};
  if (size < 1) return -1;
  if (g_fd < 0) {
    g_fd = memfd_create("tally-fuzz-jsonl", 0);
    if (g_fd < 0) {
      perror("memfd_create");
      abort();
    }
    snprintf(g_path, sizeof g_path, "/proc/self/fd/%d", g_fd);
  }
  const uint8_t *body = data + 1;
  size_t n = size - 1;
  FZ_CHECK(ftruncate(g_fd, 0) == 0);
  FZ_CHECK(pwrite(g_fd, body, n, 0) == (ssize_t)n);
  long newlines = 0;
  for (size_t i = 0; i < n; i++) newlines += body[i] == '\n';

  tl_inlog log;
  FZ_CHECK(tl_inlog_init(&log, NULL, (data[0] & 4) != 0) == TL_OK);
  tl_jsonl r;
  tl_err err;
  FZ_CHECK(tl_jsonl_open(&r, g_path, CAPS[data[0] & 3], &err) == TL_OK);
  long records = 0, bad = 0, last_line = 0;
  for (;;) {
    cJSON *obj = NULL;
    tl_jl_result res = tl_jsonl_next(&r, &obj, &err);
    if (res == TL_JL_EOF || res == TL_JL_IOERR) {
      FZ_CHECK(obj == NULL);
      break;
    }
    FZ_CHECK(r.line_no > last_line && r.line_no <= newlines + 1);
    last_line = r.line_no;
    if (res == TL_JL_RECORD) {
      FZ_CHECK(obj != NULL);
      records++;
      cJSON_Delete(obj);
    } else {
      FZ_CHECK(res == TL_JL_BAD && obj == NULL);
      FZ_CHECK(r.bad_kind >= 0 && r.bad_kind < TL_IN__NKINDS);
      bad++;
      if (tl_inlog_report_bad_line(&log, &r) != TL_OK) break; /* strict: the caller stops */
    }
  }
  FZ_CHECK(r.n_records == records);
  FZ_CHECK(r.n_bad == bad);
  tl_jsonl_close(&r);
  tl_inlog_release(&log);
  return 0;
}
