/* registry.h - the benchmark modules tally knows (core tier; twin src/core/run/registry.c).
 *
 * One line per module in registry.c's list; the test modules (src/core/bench/test_*) are known
 * only when TALLY_TEST_MODULES=1 is in the environment, so a user's job can never name one by
 * accident. Every lookup below sees the same modules, in the same order: the list's, then the
 * test modules. Each module is checked (tl_bench_check) before any of them is used: the job
 * loader, `tally parse` and `tally compare` call tl_bench_registry_check first. */
#ifndef TALLY_REGISTRY_H
#define TALLY_REGISTRY_H

#include <stddef.h>

#include "tally/bench_vt.h"
#include "tally/err.h"
#include "tally/str.h"

/* The known modules: tl_bench_at(i) for i < tl_bench_count(), in registry order. */
size_t tl_bench_count(void);
const tl_bench_vt *tl_bench_at(size_t i);
/* The module named `name`; NULL when unknown. */
const tl_bench_vt *tl_bench_find(const char *name);
/* The known benchmarks' names, ", "-joined, into out (for "unknown benchmark" messages). */
void tl_bench_known(tl_buf *out);

/* What the run path sizes by a constant, and the hooks' tables, of one module: TL_OK, or
 * TL_EINTERNAL with err naming the module and what is wrong (a name missing, a required
 * callback NULL, nstages outside 1..TL_MAX_STAGES, max_modes outside 1..TL_MAX_MODES, max_acc
 * outside 1..TL_MAX_ACC, no variants, a format or parser without its callbacks). */
tl_status tl_bench_check(const tl_bench_vt *vt, tl_err *err);
/* tl_bench_check of every known module, and that no two share a name or a parser name. */
tl_status tl_bench_registry_check(tl_err *err);

/* The stages of module object b: vt->n_stages(b), else vt->nstages. */
int tl_bench_nstages(const tl_bench_vt *vt, const tl_bench *b);
/* Index of a variant name in vt->variants; -1 when unknown. */
int tl_bench_variant(const tl_bench_vt *vt, const char *name);

/* The first foreign answer format (registry order, each module's in its order) that claims
 * line o (a JSON object without "response"), with its module in *vt when vt is not NULL; NULL
 * when none does. */
const tl_answer_format *tl_bench_answer_format(const cJSON *o, const tl_bench_vt **vt);

/* The named parser `name` of any known module (with its module in *vt when vt is not NULL);
 * NULL when none. */
const tl_named_parser *tl_bench_parser(const char *name, const tl_bench_vt **vt);
/* Every parser's name in registry order into names[0 .. max); returns how many there are. */
int tl_bench_parser_names(const char **names, int max);
/* The usage text's parser part: the NAME lines, then each module's help block. */
void tl_bench_parser_usage(tl_buf *out);
/* The names as "--parser is required: ..." lists them (tl_parser_set.brief). */
void tl_bench_parser_list(tl_buf *out);

/* The compare defaults of the module named `name`; NULL when unknown or it has none. */
const tl_compare_defaults *tl_bench_compare_defaults(const char *name);

#endif
