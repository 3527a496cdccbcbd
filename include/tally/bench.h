/* bench.h - a benchmark is one module behind one function table: the umbrella of its parts
 * (core tier: no MPI/HDF5/curl).
 *
 *   tally/row.h       cfgs, units and rows: what the run path keeps per unit (src/core/run/row.c)
 *   tally/bench_vt.h  the module contract: the function table, its request, accumulator and
 *                     hook types (types only)
 *   tally/job.h       the job loader, and its services to a module reading its keys
 *                     (src/core/run/job.c)
 *   tally/registry.h  the known modules and the lookups over their hooks (src/core/run/registry.c)
 *
 * A new benchmark is a folder src/core/bench/<name>/ (CMake finds it) with one tl_bench_vt, plus
 * one line in the registry; docs/ARCHITECTURE.md ("Benchmark modules") says what goes where. */
#ifndef TALLY_BENCH_H
#define TALLY_BENCH_H

#include "tally/bench_vt.h"
#include "tally/job.h"
#include "tally/registry.h"
#include "tally/row.h"
#include "tally/strmap.h"

#endif
