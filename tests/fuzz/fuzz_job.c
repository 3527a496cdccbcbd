/* fuzz_job.c - libFuzzer target for the job loader (tl_job_load): the input is the job file,
 * written to a temporary folder (relative paths in it resolve there). Every problem is listed:
 * a failed load has at least one, each line naming the job file; a loaded job has none. */
#include "fuzz_util.h"

#include "tally/job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fz_path("job.json");
  fz_write(path, data, size);
  tl_job job;
  tl_buf probs;
  tl_buf_init(&probs);
  int n = -1;
  tl_status st = tl_job_load(path, &job, &probs, &n);
  if (st == TL_OK) {
    FZ_CHECK(n == 0);
    FZ_CHECK(job.output != NULL);
    FZ_CHECK(job.n_benches + job.n_studies > 0);
    tl_job_release(&job);
  } else {
    FZ_CHECK(st == TL_EJOB || st == TL_EIO || st == TL_ENOMEM);
    if (st == TL_EJOB) {
      FZ_CHECK(n > 0);
      FZ_CHECK(strstr(probs.data, path) != NULL);
    }
  }
  tl_buf_release(&probs);
  return 0;
}
