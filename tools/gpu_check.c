/* gpu_check.c - checks every CUDA kernel against its core reference, then times them.
 * Built and run by tools/gpu-check.sh (see there). Without a GPU (or without nvcc) it runs the
 * CPU part: the fast exact path against the literal reference, and the CPU benchmark.
 *
 * Checks (bitwise; NaN must meet NaN):
 *   1. tl_suff_fast == tl_suff_reference on small random and tie-heavy weighted samples;
 *   2. GPU tl_cuda_resamples == CPU tl_study_resamples for random and tie-heavy studies
 *      (n from 1 to 22,050; 1 to 4 metrics; both statistics; resample ranges not starting at 0);
 * Benchmark: n = 22,050 items, 4 metrics (VQA accuracy 5 levels, soft accuracy, LAVE 3 levels,
 *   a continuous score) against a 3-level human score, B = 5,000, Spearman + Kendall tau-b:
 *   seconds on one CPU core and on the GPU (transfers included).
 * Exit status: 0 all checks passed, 1 a mismatch, 2 setup failure. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tally/boot.h"
#ifdef TALLY_HAVE_CUDA
#include "tally/cuda_boot.h"
#endif

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double unif(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int same(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return memcmp(&a, &b, sizeof a) == 0;
}

/* kind 0: 3-level human {0, .5, 1}; metric kinds: 1 VQA acc 5 levels, 2 LAVE 3 levels, 3 binary,
 * 4 continuous, 5 continuous correlated with the human. */
static void fill(double *v, uint32_t n, int kind, const double *h) {
  static const double vqa[] = {0, 0.3, 0.6, 0.9, 1};
  for (uint32_t i = 0; i < n; i++) {
    switch (kind) {
    case 0: v[i] = 0.5 * (double)(rnd() % 3); break;
    case 1: v[i] = vqa[rnd() % 5]; break;
    case 2: v[i] = (double)(rnd() % 3); break;
    case 3: v[i] = (double)(rnd() % 2); break;
    case 4: v[i] = unif(); break;
    default: v[i] = (h ? h[i] : 0) + 0.7 * unif(); break;
    }
  }
}

static int check_suff(void) {
  int bad = 0;
  for (int t = 0; t < 400; t++) {
    uint32_t n = 1 + (uint32_t)(rnd() % 60);
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    int32_t *w = malloc(n * sizeof *w);
    fill(y, n, (int)(rnd() % 2) ? 0 : 4, NULL);
    fill(x, n, 1 + (int)(rnd() % 5), y);
    for (uint32_t i = 0; i < n; i++) w[i] = (int32_t)(rnd() % 4);
    tl_dense dx, dy;
    tl_pair p;
    tl_dense_init(&dx, x, n);
    tl_dense_init(&dy, y, n);
    tl_pair_init(&p, &dx, &dy);
    tl_suff_ws *ws = tl_suff_ws_new(&p);
    tl_suff a, b, k;
    tl_suff_fast(&p, w, ws, &a);
    tl_suff_reference(x, y, w, n, &b);
    /* the kernel's own sweep (tally/boot_kernel.h), run on the host */
    int64_t *ym = malloc((dy.nlevels + 1) * sizeof *ym), *fen = malloc((dy.nlevels + 1) * sizeof *fen);
    tl_k_suff(dx.level, dy.level, p.order, n, dy.nlevels, w, ym, fen, &k);
    free(ym);
    free(fen);
    if (memcmp(&k, &b, sizeof k) != 0) {
      if (bad++ < 3) fprintf(stderr, "kernel sweep mismatch (n=%u): dis=%lld/%lld ntie=%lld/%lld sab=%lld/%lld\n", n,
                             (long long)k.dis, (long long)b.dis, (long long)k.ntie, (long long)b.ntie,
                             (long long)k.sab, (long long)b.sab);
    }
    if (memcmp(&a, &b, sizeof a) != 0) {
      if (bad++ < 3) fprintf(stderr, "suff mismatch (n=%u): fast dis=%lld ntie=%lld sab=%lld ref dis=%lld ntie=%lld sab=%lld\n",
                             n, (long long)a.dis, (long long)a.ntie, (long long)a.sab, (long long)b.dis,
                             (long long)b.ntie, (long long)b.sab);
    }
    tl_suff_ws_free(ws);
    tl_pair_release(&p);
    tl_dense_release(&dx);
    tl_dense_release(&dy);
    free(x); free(y); free(w);
  }
  printf("cpu: fast path and kernel sweep (host) vs literal reference, 400 weighted samples: %s\n", bad ? "MISMATCH" : "identical");
  return bad;
}

typedef struct {
  uint32_t n;
  int M;
  double *h, *m[4];
  const char *names[4];
} study_data;

static void make_study(study_data *d, uint32_t n, int M, int tie_heavy) {
  static const char *nm[4] = {"a", "b", "c", "d"};
  d->n = n;
  d->M = M;
  d->h = malloc((n ? n : 1) * sizeof(double));
  fill(d->h, n, tie_heavy ? 0 : 4, NULL);
  static const int kinds_tie[4] = {1, 2, 3, 5}, kinds_cont[4] = {4, 5, 4, 5};
  for (int k = 0; k < M; k++) {
    d->m[k] = malloc((n ? n : 1) * sizeof(double));
    fill(d->m[k], n, tie_heavy ? kinds_tie[k] : kinds_cont[k], d->h);
    d->names[k] = nm[k];
  }
}

static void free_study(study_data *d) {
  free(d->h);
  for (int k = 0; k < d->M; k++) free(d->m[k]);
}

static tl_study *build(const study_data *d, uint64_t B, uint64_t seed, tl_study_in *in) {
  memset(in, 0, sizeof *in);
  in->n = d->n;
  in->human = d->h;
  in->nmetrics = d->M;
  in->metric = (const double *const *)d->m;
  in->names = d->names;
  in->nstats = 2;
  in->stats[0] = TL_STAT_SPEARMAN;
  in->stats[1] = TL_STAT_KENDALL_B;
  in->seed = seed;
  in->B = B;
  tl_study *s = NULL;
  tl_err err;
  if (tl_study_new(in, &s, &err)) {
    fprintf(stderr, "tl_study_new: %s\n", err.msg);
    exit(2);
  }
  return s;
}

#ifdef TALLY_HAVE_CUDA
/* GPU values of resamples [r0, r1) of a study. */
static int gpu_values(const tl_study_in *in, uint64_t r0, uint64_t r1, double *out, double *secs) {
  tl_dense hy, hx[4];
  tl_pair pr[4];
  const uint32_t *xl[4], *ord[4];
  tl_dense_init(&hy, in->human, in->n);
  for (int m = 0; m < in->nmetrics; m++) {
    tl_dense_init(&hx[m], in->metric[m], in->n);
    tl_pair_init(&pr[m], &hx[m], &hy);
    xl[m] = hx[m].level;
    ord[m] = pr[m].order;
  }
  tl_cuda_study cs = {in->n, hy.nlevels, hy.level, in->nmetrics, xl, ord, 2,
                      {TL_STAT_SPEARMAN, TL_STAT_KENDALL_B}, in->seed};
  tl_err err;
  double t0 = now();
  tl_status st = tl_cuda_resamples(&cs, r0, r1, out, &err);
  if (secs) *secs = now() - t0;
  if (st) fprintf(stderr, "tl_cuda_resamples: %s\n", err.msg);
  for (int m = 0; m < in->nmetrics; m++) { tl_pair_release(&pr[m]); tl_dense_release(&hx[m]); }
  tl_dense_release(&hy);
  return st == TL_OK ? 0 : -1;
}
#endif

int main(int argc, char **argv) {
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  int bad = check_suff();
  int have_gpu = 0;
#ifdef TALLY_HAVE_CUDA
  have_gpu = tl_cuda_devices() > 0;
  printf("cuda: %s\n", have_gpu ? tl_cuda_describe() : "built, but no usable device here");
#else
  printf("cuda: not built (no nvcc)\n");
#endif
  /* GPU vs CPU on random and tie-heavy studies */
  static const uint32_t sizes[] = {1, 2, 3, 17, 257, 1000, 22050};
  int ncmp = 0, nmis = 0;
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0] && have_gpu; si++) {
    for (int tie = 0; tie < 2; tie++) {
      study_data d;
      make_study(&d, sizes[si], 1 + (int)(si % 4), tie);
      tl_study_in in;
      uint64_t B = sizes[si] > 5000 ? 64 : 300, r0 = 1000 + si;
      tl_study *s = build(&d, r0 + B, 42 + si, &in);
      size_t K = (size_t)d.M * 2;
      double *c = malloc(B * K * sizeof *c), *g = malloc(B * K * sizeof *g);
      tl_study_resamples(s, r0, r0 + B, c);
#ifdef TALLY_HAVE_CUDA
      if (gpu_values(&in, r0, r0 + B, g, NULL)) { bad++; }
#endif
      int mis = 0;
      for (size_t i = 0; i < B * K; i++) mis += !same(c[i], g[i]);
      ncmp += (int)(B * K);
      nmis += mis;
      printf("gpu vs cpu: n=%-6u metrics=%d %-10s resamples [%llu, %llu): %s\n", sizes[si], d.M,
             tie ? "tie-heavy" : "continuous", (unsigned long long)r0, (unsigned long long)(r0 + B),
             mis ? "MISMATCH" : "bit-identical");
      free(c); free(g);
      tl_study_free(s);
      free_study(&d);
    }
  }
  if (have_gpu) printf("gpu vs cpu: %d values compared, %d differ\n", ncmp, nmis);
  bad += nmis;
  /* benchmark */
  uint64_t B = quick ? 200 : 5000;
  study_data d;
  rng_state = 7;
  d.n = 22050;
  d.M = 4;
  d.h = malloc(d.n * sizeof(double));
  fill(d.h, d.n, 0, NULL);
  static const int kinds[4] = {1, 5, 2, 4}; /* VQA acc, soft score, LAVE, continuous */
  static const char *nm[4] = {"vqa_acc", "soft_acc", "lave", "cont"};
  for (int k = 0; k < 4; k++) {
    d.m[k] = malloc(d.n * sizeof(double));
    fill(d.m[k], d.n, kinds[k], d.h);
    d.names[k] = nm[k];
  }
  tl_study_in in;
  tl_study *s = build(&d, B, 1, &in);
  double *c = malloc(B * 8 * sizeof *c);
  double t0 = now();
  tl_study_resamples(s, 0, B, c);
  double tcpu = now() - t0;
  printf("bench: n=22050, 4 metrics vs 3-level human, B=%llu, spearman+kendall_b: cpu 1 core %.3f s\n",
         (unsigned long long)B, tcpu);
#ifdef TALLY_HAVE_CUDA
  if (have_gpu) {
    double *g = malloc(B * 8 * sizeof *g), tg = 0;
    gpu_values(&in, 0, B, g, NULL); /* warm-up: context, module load */
    if (gpu_values(&in, 0, B, g, &tg) == 0) {
      int mis = 0;
      for (size_t i = 0; i < B * 8; i++) mis += !same(c[i], g[i]);
      printf("bench: gpu %.3f s (transfers included), %.1fx the 1-core cpu; values %s\n", tg, tcpu / tg,
             mis ? "DIFFER" : "bit-identical");
      bad += mis;
    } else {
      bad++;
    }
    free(g);
  }
#endif
  free(c);
  tl_study_free(s);
  free_study(&d);
  printf("gpu-check: %s\n", bad ? "FAILED" : "all checks passed");
  return bad ? 1 : 0;
}
