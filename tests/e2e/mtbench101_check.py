"""mtbench101_check.py OUT.h5 - recomputes MT-Bench-101's metric tables from the turns table.

An independent re-implementation of the aggregation (docs/MTBENCH101.md): dialogue score = min
over the rated turns (policy exclude) or, when a turn is unrated, none (policy fail); task =
mean of its dialogues' scores; overall (Avg) = mean of the task scores; ability and domain =
mean of their task scores; per dialogue pref = sigmoid(0.3 (score_B - score_A)), wins when
pref < 0.5, win rate (W + T/2) / (W + L + T), soft win rate mean(1 - pref). Every table row is
compared with what tally wrote (floats to 1e-12); exits 1 on the first difference."""
import math
import sys

sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(__file__), "..", "..", "tools"))
import h5py  # noqa: E402
import tally_h5  # noqa: E402

TASKS = "CM SI AR TS CC CR FR SC SA MR GR IC PI".split()
ABILITY = {"CM": "memory", "SI": "understanding", "AR": "understanding", "TS": "interference",
           "CC": "interference", "CR": "rephrasing", "FR": "rephrasing", "SC": "reflection",
           "SA": "reflection", "MR": "reasoning", "GR": "reasoning", "IC": "questioning", "PI": "questioning"}
DOMAIN = {"memory": "perceptivity", "understanding": "perceptivity", "interference": "perceptivity",
          "rephrasing": "adaptability", "reflection": "adaptability", "reasoning": "adaptability",
          "questioning": "interactivity"}


def close(a, b):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return abs(a - b) <= 1e-12 * max(1.0, abs(a))


def mean(v):
    v = [x for x in v if not math.isnan(x)]
    return sum(v) / len(v) if v else float("nan")


def main(path):
    turns = tally_h5.read_table(path, "/items/mtbench101")
    n = len(turns["id"])
    # per (model, seed, dialogue): task, ratings (None = unrated)
    dlg = {}
    for i in range(n):
        k = (turns["model"][i], int(turns["seed"][i]), turns["id"][i])
        d = dlg.setdefault(k, {"task": turns["task"][i], "r": []})
        r = float(turns["rating"][i])
        d["r"].append(None if math.isnan(r) else r)
    score = {}
    for k, d in dlg.items():
        rated = [x for x in d["r"] if x is not None]
        ex = min(rated) if rated else float("nan")
        fa = ex if all(x is not None for x in d["r"]) else float("nan")
        score[k] = (ex, fa)
    cfgs = sorted({(m, s) for (m, s, _) in dlg})
    bad = 0

    def check(what, got, want):
        nonlocal bad
        if not close(got, want):
            print("%s: tally %r, recomputed %r" % (what, got, want))
            bad += 1

    # dialogues table
    dt = tally_h5.read_table(path, "/metrics/mtbench101/dialogues")
    for i in range(len(dt["id"])):
        k = (dt["model"][i], int(dt["seed"][i]), dt["id"][i])
        check("dialogue %s score_exclude" % (k,), float(dt["score_exclude"][i]), score[k][0])
        check("dialogue %s score_fail" % (k,), float(dt["score_fail"][i]), score[k][1])
        check("dialogue %s n_unrated" % (k,), int(dt["n_unrated"][i]), sum(x is None for x in dlg[k]["r"]))
    # group scores, primary parser
    groups = {}
    for (m, s) in cfgs:
        for pol in (0, 1):
            task_score = {}
            for t in TASKS:
                v = [score[k][pol] for k in score if k[0] == m and k[1] == s and dlg[k]["task"] == t]
                if v:
                    task_score[t] = mean(v)
            g = {("overall", "all"): mean(list(task_score.values()))}
            for t, v in task_score.items():
                g[("task", t)] = v
            for a in sorted(set(ABILITY.values())):
                v = [task_score[t] for t in task_score if ABILITY[t] == a]
                if v:
                    g[("ability", a)] = mean(v)
            for dm in sorted(set(DOMAIN.values())):
                v = [task_score[t] for t in task_score if DOMAIN[ABILITY[t]] == dm]
                if v:
                    g[("domain", dm)] = mean(v)
            groups[(m, s, pol)] = g
    primary = None
    for table, level in (("overall", "overall"), ("tasks", "task"), ("abilities", "ability"), ("domains", "domain")):
        t = tally_h5.read_table(path, "/metrics/mtbench101/" + table)
        primary = primary or t["parser"][0]
        rows = 0
        for i in range(len(t["group"])):
            if t["parser"][i] != primary:
                continue
            rows += 1
            m, s, grp = t["model"][i], int(t["seed"][i]), t["group"][i]
            check("%s %s/%d %s exclude" % (table, m, s, grp), float(t["score_exclude"][i]), groups[(m, s, 0)][(level, grp)])
            check("%s %s/%d %s fail" % (table, m, s, grp), float(t["score_fail"][i]), groups[(m, s, 1)][(level, grp)])
        want = sum(1 for c in cfgs for (lv, _) in groups[(c[0], c[1], 0)] if lv == level)
        check("%s rows" % table, rows, want)
    # comparisons: counts and point estimates
    ct = tally_h5.read_table(path, "/metrics/mtbench101/comparisons")
    for i in range(len(ct["group"])):
        a, b, s = ct["model_a"][i], ct["model_b"][i], int(ct["seed"][i])
        pol = 0 if ct["policy"][i] == "exclude" else 1
        lv, grp = ct["level"][i], ct["group"][i]
        W = L = T = M = 0
        soft = []
        for k in score:
            if k[0] != a or k[1] != s:
                continue
            task = dlg[k]["task"]
            inside = (lv == "overall" or (lv == "task" and task == grp) or (lv == "ability" and ABILITY[task] == grp)
                      or (lv == "domain" and DOMAIN[ABILITY[task]] == grp))
            if not inside:
                continue
            sa, sb = score[k][pol], score[(b, s, k[2])][pol]
            if math.isnan(sa) or math.isnan(sb):
                M += 1
                continue
            p = 1 / (1 + math.exp(-0.3 * (sb - sa)))
            W += p < 0.5
            L += p > 0.5
            T += p == 0.5
            soft.append(1 - p)
        what = "comparison %s vs %s seed %d %s %s/%s" % (a, b, s, ct["policy"][i], lv, grp)
        for col, want in (("wins", W), ("losses", L), ("ties", T), ("missing", M)):
            check(what + " " + col, int(ct[col][i]), want)
        N = W + L + T
        check(what + " win_rate", float(ct["win_rate"][i]), (W + 0.5 * T) / N if N else float("nan"))
        check(what + " soft_win_rate", float(ct["soft_win_rate"][i]), mean(soft))
        lo, hi = float(ct["soft_win_rate_lo"][i]), float(ct["soft_win_rate_hi"][i])
        if N and not (lo <= float(ct["soft_win_rate"][i]) + 1e-9 and float(ct["soft_win_rate"][i]) <= hi + 1e-9):
            print(what + ": soft win rate outside its CI [%r, %r]" % (lo, hi))
            bad += 1
    if not len(ct["group"]):
        print("no comparison rows")
        bad += 1
    # the summary (paper layout): mean over seeds of overall and task scores
    sm = tally_h5.read_table(path, "/metrics/mtbench101/summary")
    for i in range(len(sm["model"])):
        m, pol = sm["model"][i], 0 if sm["policy"][i] == "exclude" else 1
        seeds = [s for (mm, s) in cfgs if mm == m]
        check("summary %s Avg" % m, float(sm["Avg"][i]), mean([groups[(m, s, pol)][("overall", "all")] for s in seeds]))
        for t in TASKS:
            v = [groups[(m, s, pol)].get(("task", t), float("nan")) for s in seeds]
            check("summary %s %s" % (m, t), float(sm[t][i]), mean(v))
    with h5py.File(path, "r") as f:
        if "audit/mtbench101/parsers" not in f:
            print("no /audit/mtbench101/parsers")
            bad += 1
    print("mtbench101 check: %d turns, %d dialogues, %d comparison rows; %d differences" % (n, len(dlg), len(ct["group"]), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
