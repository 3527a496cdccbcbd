#!/usr/bin/env python3
"""Writes a replayed MT-Bench-101 job at scale, for bench/mtb_compare_bench.sh and bench/mtb_score_bench.sh.

usage: mtb_gen.py MTBENCH101.jsonl OUT MODELS SEEDS [PARSERS]

Deterministic (numpy seed 101): model m's ratings centre on a level of its own, 1% of the
judgments carry no rating, 0.5% of the answers are null, so both policies and the `missing`
counts are exercised. Writes OUT/answers.jsonl, OUT/judgments.jsonl and three jobs:
  job_a.json  the module's defaults (comparisons on);
  job_b.json  the same with "comparison": false;
  job_s.json  "comparison": false and the rating parsers PARSERS (comma-separated; default the
              four of the module), for the scoring benchmark;
  job_z.json  job_s without the headline CIs ("ci_resamples": 0).
"""
import json
import os
import sys

import numpy as np

src, out, M, S = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
parsers = (sys.argv[5] if len(sys.argv) > 5 else
           "mtbench101,mtbench101-opencompass,fastchat,judgearena").split(",")
SKIP_FIRST = {"FR", "CR", "AR", "SA", "SC", "CM"}  # turn 1 is context only (docs/MTBENCH101.md)
dlg = [json.loads(l) for l in open(src)]
turns = [(str(d["id"]), len(d["history"]) - (d["task"] in SKIP_FIRST)) for d in dlg]
rng = np.random.default_rng(101)
units = 0
with open(out + "/answers.jsonl", "w") as fa, open(out + "/judgments.jsonl", "w") as fj:
    for m in range(M):
        name = "model-%02d" % m
        centre = 3.0 + 6.0 * m / max(M - 1, 1)
        for s in range(S):
            for i, k in turns:
                r = np.clip(np.rint(rng.normal(centre, 2.0, k)), 1, 10).astype(int)
                u = rng.random((k, 2))
                for t in range(k):
                    units += 1
                    base = {"id": i, "model": name, "seed": s, "turn": t}
                    ans = None if u[t, 0] < 0.005 else "Answer %d of %s to turn %d of dialogue %s." % (s, name, t, i)
                    fa.write(json.dumps(dict(base, response=ans)) + "\n")
                    if ans is None:
                        continue
                    j = "The answer is adequate." if u[t, 1] < 0.01 else \
                        "The answer follows the instruction. Rating: [[%d]]" % r[t]
                    fj.write(json.dumps(dict(base, response=j)) + "\n")
for tag, extra in (("a", {}), ("b", {"comparison": False}), ("s", {"comparison": False, "parsers": parsers}),
                   ("z", {"comparison": False, "parsers": parsers, "ci_resamples": 0})):
    b = {"benchmark": "mtbench101", "items": src, "answers": out + "/answers.jsonl",
         "judgments": out + "/judgments.jsonl"}
    b.update(extra)
    json.dump({"name": "mtb-" + tag, "output": out + "/" + tag + ".h5", "benchmarks": [b]},
              open(out + "/job_" + tag + ".json", "w"), indent=1)
print("generated: %d models x %d seeds x %d dialogues = %d judged turns" % (M, S, len(dlg), units))
