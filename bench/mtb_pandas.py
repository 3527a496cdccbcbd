#!/usr/bin/env python3
"""The MT-Bench-101 scoring a researcher fluent in pandas would write, for bench/mtb_score_bench.sh.

usage: mtb_pandas.py MTBENCH101.jsonl ANSWERS.jsonl JUDGMENTS.jsonl OUT.csv

Reads the dialogues, the replayed answers and judgments (tally's replay lines: id, model, seed,
turn, response), reads each judgment with four rating parsers as vectorised pandas regexes (the
rules of docs/MTBENCH101.md, "Rating parsers": mtbench101 = the last "Rating: [[n]]", else the
last "[[n]]", integers 1-10; mtbench101-opencompass = the first "[n]"; fastchat = the first
"[[x]]", else the first "[x]"; judgearena = the last "[[n]]" in 1-10; no reasoning blocks here, so
none are dropped), and aggregates as the module does: dialogue score = min over its judged turns
(policy exclude: unrated turns left out; fail: no score when one is unrated), task = mean of its
dialogues, overall = the unweighted mean of the 13 task means, per (parser, model, seed). Writes
one CSV row per (parser, model, seed, policy) with the overall score; no bootstrap CIs.
"""
import sys

import numpy as np
import pandas as pd

SKIP_FIRST = {"FR", "CR", "AR", "SA", "SC", "CM"}
src, ans_path, jud_path, out = sys.argv[1:5]

dlg = pd.read_json(src, lines=True)[["id", "task"]]
dlg["id"] = dlg["id"].astype(str)
ans = pd.read_json(ans_path, lines=True, dtype={"id": str})
jud = pd.read_json(jud_path, lines=True, dtype={"id": str})
key = ["id", "model", "seed", "turn"]
turns = ans[key + ["response"]].rename(columns={"response": "answer"}).merge(
    jud[key + ["response"]].rename(columns={"response": "judgment"}), on=key, how="left")
turns = turns.merge(dlg, on="id", how="left")
text = turns["judgment"].fillna("")
answered = turns["answer"].notna() & turns["judgment"].notna()


def num(s):
    return pd.to_numeric(s, errors="coerce")


def last(pattern):
    m = text.str.extractall(pattern)[0]
    return num(m.groupby(level=0).last()).reindex(text.index)


def first(pattern):
    return num(text.str.extract(pattern, expand=False))


INT = r"\[\[\s*0*(\d+)\s*\]\]"
ours = last(r"Rating:\s*" + INT).fillna(last(INT))
ratings = {
    "mtbench101": ours.where((ours >= 1) & (ours <= 10)),
    "mtbench101-opencompass": first(r"\[(\d+\.?\d*)\]"),
    "fastchat": first(r"\[\[(\d+\.?\d*)\]\]").fillna(first(r"\[(\d+\.?\d*)\]")),
    "judgearena": last(r"\[\[(\d+)\]\]").where(lambda r: (r >= 1) & (r <= 10)),
}
rows = []
for parser, r in ratings.items():
    t = turns[["id", "task", "model", "seed"]].copy()
    t["rating"] = r.where(answered)
    t["unrated"] = t["rating"].isna()
    d = t.groupby(["model", "seed", "task", "id"], sort=False).agg(score=("rating", "min"), unrated=("unrated", "any"))
    d["fail"] = d["score"].where(~d["unrated"])
    for policy, col in (("exclude", "score"), ("fail", "fail")):
        task = d.groupby(["model", "seed", "task"])[col].mean()
        overall = task.groupby(["model", "seed"]).mean()
        for (model, seed), v in overall.items():
            rows.append((parser, model, seed, policy, v))
res = pd.DataFrame(rows, columns=["parser", "model", "seed", "policy", "overall"])
res.to_csv(out, index=False, float_format="%.12g")
print("pandas: %d turns, %d rows" % (len(turns), len(res)))
