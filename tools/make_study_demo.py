#!/usr/bin/python3
"""Writes demo/stats/vqa_judgments.csv: a small synthetic metric-vs-human table for the demo's
correlation study (written for the project; no real judgments). Deterministic (seeded).
Columns: dataset (vqav2 | okvqa), question_id, human (mean of 5 binary votes -> 0, .2, ..., 1
collapsed to the 3 LAVE-style levels 0, .5, 1), vqa_acc (the 5 levels 0, .3, .6, .9, 1),
soft_acc (continuous in [0, 1]), lave (1-3 rating mapped to 0, .5, 1).
usage: tools/make_study_demo.py [OUT.csv]"""
import random
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "demo/stats/vqa_judgments.csv"
rnd = random.Random(20261130)
rows = []
for dataset, n in (("vqav2", 400), ("okvqa", 200)):
    for q in range(n):
        truth = rnd.random()                      # latent answer quality
        human = 0.0 if truth < 0.35 else (0.5 if truth < 0.6 else 1.0)
        k = min(10, max(0, int(round(truth * 10 + rnd.gauss(0, 2.5)))))
        vqa = min(1.0, 0.3 * (k // 2)) if k < 10 else 1.0
        vqa = min([0.0, 0.3, 0.6, 0.9, 1.0], key=lambda v: abs(v - vqa))
        soft = round(min(1.0, max(0.0, truth + rnd.gauss(0, 0.2))), 3)
        lave_raw = truth + rnd.gauss(0, 0.15)
        lave = 0.0 if lave_raw < 0.33 else (0.5 if lave_raw < 0.66 else 1.0)
        rows.append((dataset, "%s-%04d" % (dataset, q), human, vqa, soft, lave))
with open(out, "w") as f:
    f.write("dataset,question_id,human,vqa_acc,soft_acc,lave\n")
    for r in rows:
        f.write("%s,%s,%g,%g,%g,%g\n" % r)
print("wrote %s (%d rows)" % (out, len(rows)))
