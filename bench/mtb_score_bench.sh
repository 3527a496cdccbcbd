#!/usr/bin/env bash
# MT-Bench-101 scoring at scale against pandas, every figure measured in ONE run on the machine at hand.
#
# The job: bench/mtb_gen.py's (the 1,388 dialogues of ../shared/data/mtbench101/mtbench101.jsonl,
# MODELS models x SEEDS seeds, default 20 x 3 = 216,900 judged turns, every answer and judgment
# replayed from generated files), scored with the module's four rating parsers and no model
# comparisons. Timed, REPS times in turn (A Z P A Z P ...), wall clock and CPU time (user + sys)
# of each whole process, one rank:
#   A: `tally run` of that job at its defaults (headline CIs: 1,000 cluster-bootstrap resamples
#      for each of the 3,840 (parser, model, policy, group) rows);
#   Z: the same job without the CIs ("ci_resamples": 0), the work the pandas script does;
#   P: bench/mtb_pandas.py, the same scoring as a pandas user would write it (four vectorised
#      regex parsers, dialogue minimum, task means, overall) with no CIs.
# It prints each run, the medians and the ratios P/A and P/Z (the issue's target: tally at least
# 2x faster than pandas), and checks that tally's /metrics/mtbench101/overall equals pandas'
# overall score for every (parser, model, seed, policy), to 1e-9.
#
# usage: bench/mtb_score_bench.sh [REPS=3] [MODELS=20] [SEEDS=3]
# env: BUILD (build folder, default build), PY (python with numpy, pandas and h5py, default
#      /usr/bin/python3), TALLY_SHARED_DATA (default ../shared/data), KEEP (a folder: keep the job)
NAME=mtb_score_bench PY_MODULES="numpy, pandas, h5py"
source "$(dirname "$0")/mtb_common.sh" "$@"
A=(); Z=(); P=(); AC=(); ZC=(); PC=()
for i in $(seq "$REPS"); do
  read -r a ac <<< "$(timed a "$BUILD/tally" run "$T/job_s.json" --quiet --force)"
  read -r z zc <<< "$(timed z "$BUILD/tally" run "$T/job_z.json" --quiet --force)"
  read -r p pc <<< "$(timed p "$PY" bench/mtb_pandas.py "$DATA/mtbench101/mtbench101.jsonl" "$T/answers.jsonl" \
    "$T/judgments.jsonl" "$T/pandas.csv")"
  A+=("$a"); Z+=("$z"); P+=("$p"); AC+=("$ac"); ZC+=("$zc"); PC+=("$pc")
  printf 'rep %d: tally %7.3f s wall %7.3f s CPU   tally, no CIs %7.3f s wall %7.3f s CPU   pandas %7.3f s wall %7.3f s CPU\n' \
    "$i" "$a" "$ac" "$z" "$zc" "$p" "$pc"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
ma=$(med "${A[@]}"); mz=$(med "${Z[@]}"); mp=$(med "${P[@]}")
mac=$(med "${AC[@]}"); mzc=$(med "${ZC[@]}"); mpc=$(med "${PC[@]}")
printf 'median wall: tally %.3f s, tally without CIs %.3f s, pandas %.3f s\n' "$ma" "$mz" "$mp"
printf 'median CPU:  tally %.3f s, tally without CIs %.3f s, pandas %.3f s\n' "$mac" "$mzc" "$mpc"
printf 'pandas / tally: %sx wall, %sx CPU; pandas / tally without CIs: %sx wall, %sx CPU (target >= 2x)\n' \
  "$(div "$mp" "$ma")" "$(div "$mpc" "$mac")" "$(div "$mp" "$mz")" "$(div "$mpc" "$mzc")"
"$PY" - "$T/s.h5" "$T/pandas.csv" <<'PY'
import sys

import h5py
import numpy as np
import pandas as pd

g = h5py.File(sys.argv[1], "r")["/metrics/mtbench101/overall"]
col = lambda k: [x.decode() if isinstance(x, bytes) else x for x in g[k][()]]
t = pd.DataFrame({"parser": col("parser"), "model": col("model"), "seed": g["seed"][()],
                  "exclude": g["score_exclude"][()], "fail": g["score_fail"][()]})
t = t[t["model"].notna()].melt(id_vars=["parser", "model", "seed"], var_name="policy", value_name="tally")
p = pd.read_csv(sys.argv[2])
j = p.merge(t, on=["parser", "model", "seed", "policy"], how="outer", indicator=True)
bad = j[(j["_merge"] != "both") | ~np.isclose(j["overall"], j["tally"], rtol=0, atol=1e-9, equal_nan=True)]
if len(bad):
    print("tally and pandas DIFFER on %d of %d rows:" % (len(bad), len(j)))
    print(bad.head(10).to_string())
    sys.exit(1)
print("tally's overall scores equal pandas' on all %d (parser, model, seed, policy) rows (1e-9)" % len(j))
PY
