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

struct tl_doc;
/* The parser audit's diverging examples of benchmark `bench` (report_examples.c): a section with,
 * for the primary parser against each other parser of /items/<bench>'s correct_<mode> columns,
 * the first 5 units in key order scored differently, their raw reply (first 400 bytes) and each
 * parser's rule and answer. Nothing when the table has fewer than two such modes or no reply;
 * a line instead of the tables when it has more than 200,000 rows. TL_OK, TL_EIO, TL_EINPUT,
 * TL_ENOMEM (err says why). */
tl_status rpt_examples(const char *path, const char *bench, struct tl_doc *d, tl_err *err);

#endif
