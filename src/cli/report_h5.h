/* report_h5.h - listing the tables of a run file for `tally report` (report_h5.c). Not
 * collective: one process. */
#ifndef TALLY_REPORT_H5_H
#define TALLY_REPORT_H5_H

#include "tally/err.h"

/* One table of a file: its group and its columns in the order they were written. */
typedef struct {
  char *group;
  int ncols;
  char **cols;
} rpt_tab;

typedef struct {
  rpt_tab *v;
  int n;
} rpt_tabs;

/* Every table at or below group `root` of file `path`, depth first (a group's own columns, then
 * its subgroups in creation order, else by name). A missing root gives none. TL_EIO naming the
 * file, TL_ENOMEM. */
tl_status rpt_list(const char *path, const char *root, rpt_tabs *out, tl_err *err);
void rpt_tabs_free(rpt_tabs *t);
/* The names of the subgroups of `root` (by name), malloc'd (each and the array); none when the
 * root is absent. */
tl_status rpt_children(const char *path, const char *root, char ***names, int *n, tl_err *err);

#endif
