#!/usr/bin/python3
"""The big SpatialEval job of bench/run_scaling.sh and tools/make_reference.sh.

1,500 Spatial-Map items (DATA_DIR/spatialeval/spatialmap_tqa.jsonl) x K model configs
m000..m{K-1}, seed 0. Each unit's answer is drawn with random.Random(7) from the 323 real model
answers in DATA_DIR/spatialeval/outputs/, so the job is CPU-bound like a real one yet fixed.
The job scores with the parsers strict, pr3 and legacy.

usage: /usr/bin/python3 tools/se_scaling_job.py DATA_DIR OUT_DIR K
writes OUT_DIR/answers.jsonl and OUT_DIR/job.json (whose output is OUT_DIR/o.h5). The paths go
into job.json as given: pass OUT_DIR "." (run in that folder) for a job whose /items `source`
column does not depend on where the folder is. Keep the output byte-stable: the reference files
of tools/make_reference.sh depend on it.
"""
import json, random, sys
data, out, K = sys.argv[1], sys.argv[2], int(sys.argv[3])
pool = [json.loads(l)["raw_answer"] for l in open(data + "/spatialeval/outputs/vlm_outputs_313.jsonl")]
pool += [json.loads(l)["response"] for l in open(data + "/spatialeval/outputs/deepseek_r1_distill_qwen1.5b_spatialmap_tqa_10.jsonl")]
ids = [json.loads(l)["id"] for l in open(data + "/spatialeval/spatialmap_tqa.jsonl")]
rnd = random.Random(7)
with open(out + "/answers.jsonl", "w") as f:
    for m in range(K):
        for i in ids:
            f.write(json.dumps({"id": i, "model": "m%03d" % m, "seed": 0, "response": rnd.choice(pool)}) + "\n")
job = {"name": "scaling", "output": out + "/o.h5", "benchmarks": [{"benchmark": "spatialeval",
       "items": data + "/spatialeval/spatialmap_tqa.jsonl", "answers": out + "/answers.jsonl",
       "parsers": ["strict", "pr3", "legacy"]}]}
json.dump(job, open(out + "/job.json", "w"))
