/* opts.c - strict numeric option values for every subcommand (contracts in cli.h). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int tl_opt_u64(const char *cmd, const char *opt, const char *v, uint64_t lo, uint64_t hi, uint64_t *out) {
  const char *p = v;
  while (*p == ' ' || *p == '\t') p++;
  if (*p < '0' || *p > '9') { /* strtoull would take "-1" as 2^64-1 and skip "+" */
    fprintf(stderr, "%s: %s takes a whole number in [%llu, %llu], not '%s'\n", cmd, opt,
            (unsigned long long)lo, (unsigned long long)hi, v);
    return -1;
  }
  errno = 0;
  char *end;
  unsigned long long x = strtoull(p, &end, 10);
  if (errno == ERANGE || *end != 0 || x < lo || x > hi) {
    fprintf(stderr, "%s: %s takes a whole number in [%llu, %llu], not '%s'\n", cmd, opt,
            (unsigned long long)lo, (unsigned long long)hi, v);
    return -1;
  }
  *out = x;
  return 0;
}

int tl_opt_open_unit(const char *cmd, const char *opt, const char *v, double *out) {
  errno = 0;
  char *end;
  double x = strtod(v, &end);
  if (end == v || *end != 0 || errno == ERANGE || !isfinite(x) || !(x > 0 && x < 1)) {
    fprintf(stderr, "%s: %s takes a number strictly between 0 and 1 (e.g. 0.95), not '%s'\n", cmd, opt, v);
    return -1;
  }
  *out = x;
  return 0;
}

int tl_opt_choice(const char *cmd, const char *opt, const char *v, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(v, names[i]) == 0) return i;
  char list[256] = "";
  for (int i = 0; i < n; i++) {
    if (i) strncat(list, n > 2 && i == n - 1 ? ", or " : i == n - 1 ? " or " : ", ", sizeof list - strlen(list) - 1);
    strncat(list, names[i], sizeof list - strlen(list) - 1);
  }
  fprintf(stderr, "%s: %s takes %s, not '%s'\n", cmd, opt, list, v);
  return -1;
}

int tl_opt_choices(const char *cmd, const char *opt, const char *v, const char *const *names, int n,
                   unsigned *mask) {
  *mask = 0;
  const char *p = v;
  for (;;) {
    const char *c = strchr(p, ',');
    size_t len = c ? (size_t)(c - p) : strlen(p);
    int hit = -1;
    for (int i = 0; i < n && hit < 0; i++)
      if (strlen(names[i]) == len && strncmp(p, names[i], len) == 0) hit = i;
    if (hit < 0) {
      fprintf(stderr, "%s: %s takes a comma-separated list of", cmd, opt);
      for (int i = 0; i < n; i++) fprintf(stderr, "%s %s", i ? (i == n - 1 ? " and" : ",") : "", names[i]);
      fprintf(stderr, "; '%.*s' in '%s' is none of them\n", (int)len, p, v);
      return -1;
    }
    *mask |= 1u << hit;
    if (!c) break;
    p = c + 1;
  }
  return 0;
}

void tl_opt_begin(void) {
  optind = 0;
  opterr = 0;
}

void tl_opt_unknown(const char *cmd, int c, int optopt_c, const char *arg) {
  char name[16];
  if (optopt_c > ' ' && optopt_c < 127) snprintf(name, sizeof name, "-%c", optopt_c);
  const char *what = optopt_c > ' ' && optopt_c < 127 ? name : arg ? arg : "?";
  if (c == ':') fprintf(stderr, "%s: option '%s' needs a value\n", cmd, what);
  else fprintf(stderr, "%s: unknown option '%s'\n", cmd, what);
}

int tl_opt_nonempty(const char *cmd, const char *opt, const char *v) {
  if (v && *v) return 0;
  fprintf(stderr, "%s: %s needs a value, not ''\n", cmd, opt);
  return -1;
}

int tl_opt_names(const char *cmd, const char *opt, const char *v) {
  if (tl_opt_nonempty(cmd, opt, v)) return -1;
  for (const char *p = v;;) {
    const char *c = strchr(p, ',');
    size_t len = c ? (size_t)(c - p) : strlen(p);
    if (len == 0) {
      fprintf(stderr, "%s: %s takes a comma-separated list of names; '%s' has an empty one\n", cmd, opt, v);
      return -1;
    }
    for (const char *q = v; q < p;) { /* every earlier name */
      const char *qc = strchr(q, ',');
      size_t ql = (size_t)(qc - q);
      if (ql == len && strncmp(q, p, len) == 0) {
        fprintf(stderr, "%s: %s names '%.*s' twice\n", cmd, opt, (int)len, p);
        return -1;
      }
      q = qc + 1;
    }
    if (!c) break;
    p = c + 1;
  }
  return 0;
}
