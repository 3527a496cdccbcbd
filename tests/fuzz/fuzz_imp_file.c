/* fuzz_imp_file.c - libFuzzer target for the readers of other harnesses' files that read a whole
 * file or folder (src/import/imp_opencompass.c, imp_vlmevalkit.c, imp_inspect.c's JSON logs,
 * imp_helm.c): the reader named by FUZZ_IMP (a compile definition: its tl_importer name as a bare word) reads
 * the input written where that harness writes it, then tl_import_convert converts it again to
 * /dev/null (answers, judgments and items), as `tally import` would.
 *
 * Input: one control byte, then the file's bytes, as they are (a file is untrusted: any bytes,
 * NUL and bad UTF-8 included, reach the reader, which must refuse or report them). Control bit 0
 * makes the input log strict; bits 1-3 pick where the file goes:
 *   opencompass: 0 predictions/toy/mtbench101.json, 1 results/toy_judged-by--j/mtbench101.json,
 *                2 predictions/toy/gsm8k_0.json (a split task), 3 the folder predictions/toy/
 *                given instead of the file; bit 3 (+4) names the dataset "demo" instead;
 *   vlmevalkit:  0 toy/T20250101-120000/toy_DS.tsv, 1 .csv, 2 .json, 3 the judge's result table
 *                toy_DS_exact_matching_result.tsv; bit 3 (+4) names the dataset SpatialEval;
 *   inspect:     log.json;
 *   helm:        a run folder: the bytes up to the first NUL are scenario_state.json, up to the
 *                second run_spec.json, the rest per_instance_stats.json (a part not reached is
 *                not written: a missing file).
 * Every record emitted must have an id, a where, a stage 0 or 1, a seed >= -1, a turn_id of -1
 * or from 1, its item (when any) an object, and a finite verdict; the reader's and the
 * conversion's status is OK, TL_EINPUT, TL_EIO or TL_ENOMEM. */
#include "fuzz_util.h"

#include <math.h>
#include <sys/stat.h>

#include "tally/import.h"
#include "tally/str.h"

#ifndef FUZZ_IMP
#error "FUZZ_IMP names the reader (its tl_importer name, a bare word: FUZZ_IMP=helm)"
#endif
#define FZ_STR2(x) #x
#define FZ_STR(x) FZ_STR2(x)

static tl_status fz_emit(void *ctx, const tl_imp_rec *r, tl_err *err) {
  (void)err;
  long *n = ctx;
  (*n)++;
  FZ_CHECK(r->id && r->id[0] && r->where && (r->stage == 0 || r->stage == 1) && r->seed >= -1);
  FZ_CHECK(r->turn_id == -1 || r->turn_id >= 1);
  FZ_CHECK(!r->item || cJSON_IsObject(r->item));
  FZ_CHECK(!r->has_verdict || isfinite(r->verdict));
  if (r->response) (void)strlen(r->response);
  if (r->prompt) (void)strlen(r->prompt);
  char *s = r->extra ? cJSON_PrintUnformatted(r->extra) : NULL;
  free(s);
  return TL_OK;
}

/* The files and folders this input made, removed in reverse order after it. */
static char made[8][512];
static int nmade;

static void fz_mkdir(const char *p) {
  FZ_CHECK(nmade < 8);
  FZ_CHECK(mkdir(p, 0700) == 0);
  snprintf(made[nmade++], sizeof made[0], "%s", p);
}

static void fz_file(const char *p, const uint8_t *d, size_t n) {
  FZ_CHECK(nmade < 8);
  fz_write(p, d, n);
  snprintf(made[nmade++], sizeof made[0], "%s", p);
}

static void fz_unmake(void) {
  while (nmade > 0) {
    const char *p = made[--nmade];
    struct stat st;
    if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) rmdir(p);
    else unlink(p);
  }
}

/* Writes the input where the format's harness writes it; returns the path to read. */
static const char *lay_out(const char *fmt, int where, const uint8_t *d, size_t n) {
  static char path[512];
  char a[512], b[512];
  if (!strcmp(fmt, "opencompass")) {
    const int judged = (where & 3) == 1;
    snprintf(a, sizeof a, "%s", fz_path(judged ? "results" : "predictions"));
    fz_mkdir(a);
    snprintf(b, sizeof b, "%s/%s", a, judged ? "toy_judged-by--j" : "toy");
    fz_mkdir(b);
    const char *ds = where & 4 ? "demo" : (where & 3) == 2 ? "gsm8k_0" : "mtbench101";
    snprintf(path, sizeof path, "%s/%s.json", b, ds);
    fz_file(path, d, n);
    if ((where & 3) == 3) snprintf(path, sizeof path, "%s", b);
  } else if (!strcmp(fmt, "vlmevalkit")) {
    snprintf(a, sizeof a, "%s", fz_path("toy"));
    fz_mkdir(a);
    snprintf(b, sizeof b, "%s/T20250101-120000", a);
    fz_mkdir(b);
    static const char *const EXT[] = {"tsv", "csv", "json", "tsv"};
    snprintf(path, sizeof path, "%s/toy_%s%s.%s", b, where & 4 ? "SpatialEval" : "MMBench_DEV_EN",
             (where & 3) == 3 ? "_exact_matching_result" : "", EXT[where & 3]);
    fz_file(path, d, n);
  } else if (!strcmp(fmt, "helm")) {
    snprintf(path, sizeof path, "%s", fz_path("run"));
    fz_mkdir(path);
    static const char *const NAMES[] = {"scenario_state.json", "run_spec.json", "per_instance_stats.json"};
    size_t at = 0;
    for (int k = 0; k < 3 && at <= n; k++) {
      const uint8_t *z = k < 2 ? memchr(d + at, 0, n - at) : NULL;
      const size_t end = z ? (size_t)(z - d) : n;
      snprintf(a, sizeof a, "%s/%s", path, NAMES[k]);
      fz_file(a, d + at, end - at);
      if (!z) break;
      at = end + 1;
    }
  } else {
    snprintf(path, sizeof path, "%s", fz_path("log.json"));
    fz_file(path, d, n);
  }
  return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return -1;
  const uint8_t ctl = data[0];
  const tl_importer *imp = tl_importer_find(FZ_STR(FUZZ_IMP));
  FZ_CHECK(imp != NULL);
  const char *path = lay_out(imp->name, (ctl >> 1) & 7, data + 1, size - 1);
  struct stat sb;
  FZ_CHECK(stat(path, &sb) == 0);
  (void)imp->detect(path, S_ISDIR(sb.st_mode), S_ISDIR(sb.st_mode) ? NULL : data + 1,
                    S_ISDIR(sb.st_mode) ? 0 : (size - 1 < TL_IMPORT_HEAD ? size - 1 : TL_IMPORT_HEAD));
  tl_inlog log;
  FZ_CHECK(tl_inlog_init(&log, NULL, ctl & 1) == TL_OK);
  long emitted = 0;
  tl_err err = {0};
  tl_status st = imp->read(path, &log, fz_emit, &emitted, &err);
  FZ_CHECK(st == TL_OK || st == TL_EINPUT || st == TL_EIO || st == TL_ENOMEM);
  tl_inlog_release(&log);
  /* the conversion `tally import` does, to /dev/null */
  FILE *null = fopen("/dev/null", "w");
  FZ_CHECK(null != NULL);
  FZ_CHECK(tl_inlog_init(&log, NULL, ctl & 1) == TL_OK);
  tl_import_counts cnt = {0};
  st = tl_import_convert(imp, path, NULL, ctl & 16 ? "p:" : NULL, null, null, null, &log, &cnt, &err);
  FZ_CHECK(st == TL_OK || st == TL_EINPUT || st == TL_EIO || st == TL_ENOMEM);
  FZ_CHECK(cnt.answers + cnt.judgments <= cnt.records);
  tl_inlog_release(&log);
  fclose(null);
  fz_unmake();
  return 0;
}
