/* boot_floor.c - the hardware floor of a bootstrap correlation study, next to tally's own
 * resampling, measured in one process on the machine at hand (bench/correlate_bench.sh runs it).
 *
 * The floor is the work no implementation of this study can skip, done the plain way:
 *   per resample r: the n Philox4x32-10 index draws of the study (the same stream as tally's,
 *   bit-identical; the AVX2 code when the CPU has it), then ONE counting pass per metric over
 *   the drawn indices, cnt_k[cell_k[idx[j]]]++, into that metric's table of distinct
 *   (metric level, human level) cells (int32, zeroed per resample).
 * It computes no statistic: every correct study needs at least these draws and, per metric, the
 * weights of its cells (the data of every rank statistic of the resample).
 * The FUSED floor is tighter: the same draws and ONE counting pass for all metrics (per item one
 * record of its M cell positions in one uint8 table, item-major, as tally counts), no statistic;
 * its counts may wrap (it keeps no spill): the least work a fused count can be.
 * Both are printed with tally's ratio to each. Last, the B x K values of tally's fast paths are
 * compared bit for bit with those of its scalar Fenwick sweep (tl_study_set_simd off).
 *
 * Against it, in the same process and with the same clock: tally's tl_study_resamples over the
 * same table (all B resamples, Spearman + Kendall tau-b). Each is run REPS times, alternating
 * floor / tally; time is this thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so time the scheduler
 * gives to other processes is not counted. On a shared machine the memory-bound counting passes
 * still slow down by several times while neighbours run, so the least disturbed run (the
 * minimum) is what the ratio is taken from; the medians are printed beside it.
 *
 * usage: boot_floor TABLE.csv HUMAN M1,M2,... [B=5000] [REPS=5] [SEED=1]
 * TABLE.csv: a header line and numeric columns (as bench/correlate_bench.sh writes it). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "boot_int.h"
#include "tally/boot.h"

static double cpu_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double minv(const double *v, int n) {
  double m = v[0];
  for (int i = 1; i < n; i++) m = v[i] < m ? v[i] : m;
  return m;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Reads the named numeric columns of a simple CSV (no quotes) into col[c][row]. */
static int read_csv(const char *path, int nc, char **names, double **col, uint32_t *nrows) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  static char line[1 << 16];
  if (!fgets(line, sizeof line, f)) return -1;
  int pos[64], nh = 0;
  for (int c = 0; c < nc; c++) pos[c] = -1;
  for (char *tok = strtok(line, ",\r\n"); tok; tok = strtok(NULL, ",\r\n"), nh++)
    for (int c = 0; c < nc; c++)
      if (strcmp(tok, names[c]) == 0) pos[c] = nh;
  for (int c = 0; c < nc; c++)
    if (pos[c] < 0) {
      fprintf(stderr, "boot_floor: no column '%s'\n", names[c]);
      return -1;
    }
  uint32_t cap = 1024, n = 0;
  for (int c = 0; c < nc; c++) col[c] = malloc(cap * sizeof **col);
  while (fgets(line, sizeof line, f)) {
    if (n == cap) {
      cap *= 2;
      for (int c = 0; c < nc; c++) col[c] = realloc(col[c], cap * sizeof **col);
    }
    double v[64];
    int k = 0;
    for (char *tok = strtok(line, ",\r\n"); tok && k < 64; tok = strtok(NULL, ",\r\n")) v[k++] = strtod(tok, NULL);
    if (k < nh) continue;
    for (int c = 0; c < nc; c++) col[c][n] = v[pos[c]];
    n++;
  }
  fclose(f);
  *nrows = n;
  return 0;
}

/* One counting pass over the n draws: cnt[cl[idx[j]]]++, in the fastest plain way for the
 * table's size (a floor must not be slower than it needs to be):
 *  - a table of few cells (<= SMALL) is counted in SUB interleaved int32 copies (draw j into
 *    copy j % SUB, summed afterwards): increments of one cell by consecutive draws would otherwise
 *    wait on each other through memory (store-to-load forwarding);
 *  - a larger table (a continuous metric: about one cell per item) is counted in uint8, so that
 *    it stays in the L1 cache, and checked: it must sum to n (a cell drawn 256 times wraps and
 *    loses 256), else it is counted again in int32;
 *  - the cell of each item is read from a uint16 array when the cells fit (half the cache lines).
 * sub ([SUB][SUBPAD] int32) and c8 ([nc] uint8) are the caller's scratch. Returns one count, so
 * that nothing is optimised away. */
#define SUB 4
#define SMALL 1024
#define SUBPAD (SMALL + 48) /* copies not 4 KiB apart (a load of one copy would falsely wait on a
                               store to another at the same address modulo 4 KiB) */
static uint64_t count_pass(const uint32_t *cl, const uint16_t *cl16, uint32_t nc, const uint32_t *idx,
                           uint32_t n, int32_t *cnt, int32_t *sub, uint8_t *c8, uint64_t r) {
  if (nc <= SMALL && cl16) {
    memset(sub, 0, SUB * SUBPAD * sizeof *sub);
    uint32_t j = 0;
    for (; j + SUB <= n; j += SUB)
      for (int u = 0; u < SUB; u++) sub[u * SUBPAD + cl16[idx[j + u]]]++;
    for (; j < n; j++) sub[cl16[idx[j]]]++;
    for (uint32_t q = 0; q < nc; q++) cnt[q] = sub[q] + sub[SUBPAD + q] + sub[2 * SUBPAD + q] + sub[3 * SUBPAD + q];
    return (uint64_t)cnt[r % nc];
  }
  if (cl16) {
    memset(c8, 0, nc);
    for (uint32_t j = 0; j < n; j++) c8[cl16[idx[j]]]++;
    uint64_t sum = 0;
    for (uint32_t q = 0; q < nc; q++) sum += c8[q];
    if (sum == n) return (uint64_t)c8[r % nc];
  }
  memset(cnt, 0, nc * sizeof *cnt); /* wrapped, or more than 65536 cells */
  for (uint32_t j = 0; j < n; j++) cnt[cl[idx[j]]]++;
  return (uint64_t)cnt[r % nc];
}

/* The fused floor's counting pass: per drawn item its record of M positions (uint16 when the
 * table has at most 65,536 cells, else uint32) in one uint8 table (counts may wrap). */
static uint64_t fused_pass(const uint32_t *rec, const uint16_t *rec16, int M, const uint32_t *idx, uint32_t n,
                           uint8_t *cnt8, uint32_t tot, uint64_t r) {
  memset(cnt8, 0, tot);
  if (rec16)
    for (uint32_t j = 0; j < n; j++) {
      const uint16_t *p = rec16 + (size_t)M * idx[j];
      for (int k = 0; k < M; k++) cnt8[p[k]]++;
    }
  else
    for (uint32_t j = 0; j < n; j++) {
      const uint32_t *p = rec + (size_t)M * idx[j];
      for (int k = 0; k < M; k++) cnt8[p[k]]++;
    }
  return cnt8[r % tot];
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: boot_floor TABLE.csv HUMAN M1,M2,... [B=5000] [REPS=5] [SEED=1]\n");
    return 2;
  }
  const uint64_t B = argc > 4 ? strtoull(argv[4], NULL, 10) : 5000;
  const int reps = argc > 5 ? atoi(argv[5]) : 5;
  const uint64_t seed = argc > 6 ? strtoull(argv[6], NULL, 10) : 1;
  char *names[64];
  int nc = 0;
  names[nc++] = argv[2];
  char *ml = strdup(argv[3]);
  for (char *tok = strtok(ml, ","); tok && nc < 64; tok = strtok(NULL, ",")) names[nc++] = tok;
  const int M = nc - 1;
  double *col[64];
  uint32_t n = 0;
  if (read_csv(argv[1], nc, names, col, &n) != 0 || n == 0) {
    fprintf(stderr, "boot_floor: cannot read %s\n", argv[1]);
    return 1;
  }

  /* the floor's cell tables: distinct (metric level, human level) pairs, numbered densely */
  tl_dense dh, dm[64];
  if (tl_dense_init(&dh, col[0], n) != TL_OK) return 1;
  uint32_t *cell[64], ncell[64];
  for (int k = 0; k < M; k++) {
    if (tl_dense_init(&dm[k], col[k + 1], n) != TL_OK) return 1;
    size_t L = (size_t)dm[k].nlevels * dh.nlevels;
    uint32_t *map = malloc(L * sizeof *map);
    for (size_t q = 0; q < L; q++) map[q] = 0;
    for (uint32_t i = 0; i < n; i++) map[(size_t)dm[k].level[i] * dh.nlevels + dh.level[i]] = 1;
    uint32_t c = 0;
    for (size_t q = 0; q < L; q++) map[q] = map[q] ? c++ : 0xffffffffu;
    cell[k] = malloc((size_t)n * sizeof **cell);
    for (uint32_t i = 0; i < n; i++) cell[k][i] = map[(size_t)dm[k].level[i] * dh.nlevels + dh.level[i]];
    ncell[k] = c;
    free(map);
  }
  uint32_t *idx = malloc((size_t)n * sizeof *idx);
  /* the fused floor's records and table */
  uint32_t tot = 0, *rec = malloc((size_t)n * M * sizeof *rec);
  for (int k = 0; k < M; k++) {
    for (uint32_t i = 0; i < n; i++) rec[(size_t)i * M + k] = tot + cell[k][i];
    tot += ncell[k];
  }
  uint16_t *rec16 = tot <= 65536 ? malloc((size_t)n * M * sizeof *rec16) : NULL;
  for (size_t q = 0; rec16 && q < (size_t)n * M; q++) rec16[q] = (uint16_t)rec[q];
  uint8_t *f8 = calloc(tot + 1, 1);
  int32_t *cnt[64];
  int32_t *sub = malloc(SUB * SUBPAD * sizeof *sub);
  uint8_t *c8[64];
  uint16_t *cell16[64];
  for (int k = 0; k < M; k++) {
    cnt[k] = calloc(ncell[k] + 1, sizeof **cnt);
    c8[k] = calloc(ncell[k] + 1, 1);
    cell16[k] = NULL; /* the cell of each item in 16 bits when the cells fit: half the cache lines */
    if (ncell[k] <= 65536) {
      cell16[k] = malloc((size_t)n * sizeof **cell16);
      for (uint32_t i = 0; i < n; i++) cell16[k][i] = (uint16_t)cell[k][i];
    }
  }

  /* tally's study over the same columns */
  const double *mp[64];
  for (int k = 0; k < M; k++) mp[k] = col[k + 1];
  tl_study_in in = {.n = n, .human = col[0], .nmetrics = M, .metric = mp, .nstats = 2,
                    .stats = {TL_STAT_SPEARMAN, TL_STAT_KENDALL_B}, .seed = seed, .B = B};
  tl_study *s = NULL;
  if (tl_study_new(&in, &s, NULL) != TL_OK) return 1;
  double *vals = malloc(B * (size_t)M * 2 * sizeof *vals);

  double *t_floor = malloc(sizeof(double) * reps), *t_draw = malloc(sizeof(double) * reps);
  double *t_tally = malloc(sizeof(double) * reps), *t_scalar = malloc(sizeof(double) * reps);
  double *t_fused = malloc(sizeof(double) * reps);
  uint64_t check = 0;
  double *t_pass = calloc((size_t)reps * M, sizeof *t_pass); /* [rep][metric] */
  const int simd = tl_boot_have_avx2();
  for (int rep = 0; rep < reps; rep++) {
    /* draws alone (AVX2 where the CPU has it), and the scalar draws for comparison */
    double c0 = cpu_s();
    for (uint64_t r = 0; r < B; r++) {
      tl_boot_draw_range(seed, r, n, 0, 0, n, idx, TL_BOOT_IMPL_AUTO);
      check += idx[r % n];
    }
    t_draw[rep] = cpu_s() - c0;
    c0 = cpu_s();
    for (uint64_t r = 0; r < B / 10 + 1; r++) {
      tl_boot_draw_range(seed, r, n, 0, 0, n, idx, TL_BOOT_IMPL_SCALAR);
      check += idx[r % n];
    }
    t_scalar[rep] = (cpu_s() - c0) * (double)B / (double)(B / 10 + 1);
    /* the floor: draws + one counting pass per metric */
    c0 = cpu_s();
    for (uint64_t r = 0; r < B; r++) {
      tl_boot_draw_range(seed, r, n, 0, 0, n, idx, TL_BOOT_IMPL_AUTO);
      for (int k = 0; k < M; k++) {
        double p0 = cpu_s();
        check += count_pass(cell[k], cell16[k], ncell[k], idx, n, cnt[k], sub, c8[k], r);
        t_pass[rep * M + k] += cpu_s() - p0;
      }
    }
    t_floor[rep] = cpu_s() - c0;
    /* the fused floor: draws + one counting pass for all metrics */
    c0 = cpu_s();
    for (uint64_t r = 0; r < B; r++) {
      tl_boot_draw_range(seed, r, n, 0, 0, n, idx, TL_BOOT_IMPL_AUTO);
      check += fused_pass(rec, rec16, M, idx, n, f8, tot, r);
    }
    t_fused[rep] = cpu_s() - c0;
    /* tally */
    c0 = cpu_s();
    if (tl_study_resamples(s, 0, B, vals) != TL_OK) return 1;
    t_tally[rep] = cpu_s() - c0;
    check += (uint64_t)(vals[rep % B] * 1e6);
  }
  /* the least disturbed run (min) and the median; the ratio from the mins */
  double fl = minv(t_floor, reps), ta = minv(t_tally, reps), dr = minv(t_draw, reps);
  printf("boot_floor: n = %u, %d metrics (cells:", n, M);
  for (int k = 0; k < M; k++) printf(" %u", ncell[k]);
  printf("), human levels %u, B = %llu, %d reps, AVX2 %s; thread CPU seconds, min (median):\n", dh.nlevels,
         (unsigned long long)B, reps, simd ? "yes" : "no");
  printf("  draws alone          %.3f s (%.3f)  %.2f ns per index; the scalar Philox code %.3f s\n", dr,
         median(t_draw, reps), 1e9 * dr / ((double)B * n), minv(t_scalar, reps));
  printf("  floor (draws + %d counting passes) %.3f s (%.3f); the passes:", M, fl, median(t_floor, reps));
  for (int k = 0; k < M; k++) {
    double pk = t_pass[k];
    for (int rep = 1; rep < reps; rep++) pk = t_pass[rep * M + k] < pk ? t_pass[rep * M + k] : pk;
    printf(" %.3f", pk);
  }
  printf(" s\n");
  const double ff = minv(t_fused, reps);
  printf("  fused floor (draws + one counting pass for all metrics) %.3f s (%.3f)\n", ff, median(t_fused, reps));
  printf("  tally tl_study_resamples %.3f s (%.3f)\n", ta, median(t_tally, reps));
  printf("  tally / fused floor = %.2f (medians: %.2f)\n", ta / ff, median(t_tally, reps) / median(t_fused, reps));
  printf("  tally / floor = %.2f (medians: %.2f)\n", ta / fl, median(t_tally, reps) / median(t_floor, reps));
  /* the values of the fast paths against the scalar Fenwick sweep (the reference path of the
   * engine, tl_study_set_simd off), every one of the B x K values, bit for bit */
  double *ref = malloc(B * (size_t)M * 2 * sizeof *ref);
  tl_study_set_simd(s, 0);
  if (!ref || tl_study_resamples(s, 0, B, ref) != TL_OK) return 1;
  tl_study_set_simd(s, 1);
  if (tl_study_resamples(s, 0, B, vals) != TL_OK) return 1;
  size_t ndiff = 0;
  for (size_t q = 0; q < B * (size_t)M * 2; q++) ndiff += memcmp(&vals[q], &ref[q], sizeof *vals) != 0;
  free(ref);
  printf("floor_s=%.4f tally_resample_s=%.4f draws_s=%.4f ratio=%.3f fused_s=%.4f check=%llu\n", fl, ta, dr, ta / fl, ff,
         (unsigned long long)(check & 0xff));
  if (ndiff) printf("values: %zu of %zu DIFFER from the scalar sweep\n", ndiff, B * (size_t)M * 2);
  else printf("values: identical to the scalar sweep (%zu)\n", B * (size_t)M * 2);
  free(t_pass);
  tl_study_free(s);
  tl_dense_release(&dh);
  for (int k = 0; k < M; k++) {
    tl_dense_release(&dm[k]);
    free(cell[k]);
    free(cell16[k]);
    free(cnt[k]);
    free(c8[k]);
  }
  free(sub);
  for (int c = 0; c < nc; c++) free(col[c]);
  free(ml);
  free(idx);
  free(vals);
  free(t_floor);
  free(t_draw);
  free(t_tally);
  free(t_scalar);
  free(t_fused);
  free(rec);
  free(rec16);
  free(f8);
  return 0;
}
