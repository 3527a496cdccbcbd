#!/usr/bin/env bash
# MT-Bench-101 judge stability and parser swap (docs/MTBENCH101.md, "Judge stability"):
#  1. hand-made judge replies whose answer is known (two samples per turn, the four parsers):
#     a turn rated 7 then 8 changes; "For example [[10]] ... Rating: [[4]]" is read 10 by
#     FastChat's and OpenCompass's first match and 4 by tally's primary (one dialogue changes,
#     MR's ranking and the overall ranking flip); "Rating: [[7]] ... e.g. [[10]]" is read 7 by
#     the primary and FastChat, 10 by JudgeArena's last match; /metrics/mtbench101/judge_stability,
#     /metrics/mtbench101/parser_swap and the summary lines hold the numbers worked out below;
#  2. the demo job (one judge sample, four parsers) prints both parts of the summary;
#  3. the demo with three judge samples derived per turn, on 1, 2 and 4 ranks: the two tables
#     and the summary are identical, and equal an independent re-computation from the
#     per-sample columns of /items/mtbench101.
. "$(dirname "$0")/common.sh"
need_python
D="$TALLY_SRC/demo/mtbench101"

# ---- 1. hand-made replies ----
H="$WORK/hand"
mkdir -p "$H"
cat > "$H/dialogues.jsonl" <<'EOF'
{"task": "GR", "id": 1, "history": [{"user": "Who is the youngest of Ann (30) and Ben (20)?", "bot": "Ben."}]}
{"task": "MR", "id": 2, "history": [{"user": "What is 2 + 3?", "bot": "5"}]}
{"task": "IC", "id": 3, "history": [{"user": "Book me a table.", "bot": "Where and when?"}]}
{"task": "TS", "id": 4, "history": [{"user": "Name a colour.", "bot": "Blue."}]}
EOF
"$PY" - "$H" <<'PY'
import json, sys
h = sys.argv[1]
# (model, dialogue) -> the replies of judge samples 0 and 1
J = {("m-a", 1): ("Rating: [[7]]", "Rating: [[8]]"),          # 7 then 8: changes (spread 1)
     ("m-a", 2): ("Rating: [[6]]", "Rating: [[6]]"),
     ("m-a", 3): ("Rating: [[5]]", "Rating: [[5]]"),
     ("m-a", 4): ("Rating: [[6]]", "I cannot decide."),       # one rated sample: partly rated
     ("m-b", 1): ("Rating: [[7]]", "Rating: [[7]]"),
     ("m-b", 2): ("For example [[10]] is a perfect answer. Rating: [[4]]",) * 2,
     ("m-b", 3): ("Rating: [[7]]. A perfect answer would get e.g. [[10]].",) * 2,
     ("m-b", 4): ("Rating: [[3]]", "Rating: [[9]]")}          # 3 then 9: spread 6
with open(h + "/answers.jsonl", "w") as a, open(h + "/judgments.jsonl", "w") as j:
    for (m, d), rep in J.items():
        a.write(json.dumps({"id": str(d), "model": m, "seed": 0, "turn": 0, "response": "An answer."}) + "\n")
        for s, r in enumerate(rep):
            j.write(json.dumps({"id": str(d), "model": m, "seed": 0, "turn": 0, "sample": s, "response": r}) + "\n")
PY
cat > "$H/job.json" <<JOB
{"name": "stability-hand", "output": "$H/out.h5",
 "benchmarks": [{"benchmark": "mtbench101", "items": "$H/dialogues.jsonl", "answers": "$H/answers.jsonl",
   "judgments": "$H/judgments.jsonl", "judge_samples": 2, "ci_resamples": 0, "comparison": {"resamples": 0},
   "parsers": ["mtbench101", "mtbench101-opencompass", "fastchat", "judgearena"]}]}
JOB
"$TALLY_BIN" run "$H/job.json" > "$H/out.txt" 2> "$H/err.txt" || { cat "$H/err.txt"; fail "the hand-made job failed"; }
# Turn ratings (median of two = their mean):   GR   MR   IC   TS    Avg
#   primary, judgearena on m-a:               7.5   6    5    6    6.125
#   primary on m-b:                             7   4    7    6    6
#   opencompass, fastchat on m-b:               7  10    7    6    7.5   (MR ranking flips)
#   judgearena on m-b:                          7   4   10    6    6.75  (IC: m-b first either way)
"$PY" - "$H/out.h5" <<'PY' || fail "the hand-made tables are not the worked-out ones"
import math, sys
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
w = tally_h5.read_table(sys.argv[1], "/metrics/mtbench101/parser_swap")
rows = {(p, pol): i for i, (p, pol) in enumerate(zip(w["parser"], w["policy"]))}
want = {"mtbench101-opencompass": (1, 6.0, 1, 1), "fastchat": (1, 6.0, 1, 1), "judgearena": (1, 3.0, 0, 1)}
assert len(rows) == 6, rows
for p, (ndc, maxd, ntc, oc) in want.items():
    for pol in ("exclude", "fail"):
        i = rows[(p, pol)]
        got = (w["n_dialogues_changed"][i], w["max_abs_diff"][i], w["n_tasks_rank_changed"][i], w["overall_rank_changed"][i])
        assert got == (ndc, maxd, ntc, oc), (p, pol, got)
        assert w["primary"][i] == "mtbench101" and w["n_dialogues"][i] == 8 and w["n_scored_both"][i] == 8
        assert w["n_tasks"][i] == 4 and w["n_models"][i] == 2
s = tally_h5.read_table(sys.argv[1], "/metrics/mtbench101/judge_stability")
sd79 = math.sqrt(0.5)          # SD (ddof 1) of 7 and 8
sd39 = math.sqrt(18)           # of 3 and 9
want = {"m-a": (4, 3, 1, 1, 1 / 3, 1.0, sd79 / 3), "m-b": (4, 4, 1, 0, 6 / 4, 6.0, sd39 / 4)}
n = 0
for i in range(len(s["model"])):
    t, c, ch, part, ms, mx, msd = want[s["model"][i]]
    got = (s["n_turns"][i], s["n_turns_compared"][i], s["n_changed"][i], s["n_partly_rated"][i])
    assert got == (t, c, ch, part), (s["parser"][i], s["model"][i], got)
    assert abs(s["share_changed"][i] - ch / c) < 1e-12 and abs(s["mean_spread"][i] - ms) < 1e-12
    assert s["max_spread"][i] == mx and abs(s["mean_sd"][i] - msd) < 1e-9, (s["mean_sd"][i], msd)
    assert s["samples"][i] == 2 and s["seed"][i] in (0, -1)
    n += 1
assert n == 4 * 2 * 2, n   # 4 parsers x 2 models x (seed 0, pooled)
print("hand-made: parser_swap and judge_stability as worked out")
PY
grep -q "^judge stability over 2 samples (every parser; seed -1: the model's seeds pooled)" "$H/out.txt" || { cat "$H/out.txt"; fail "no stability line"; }
# the row of the primary parser, seeds pooled: parser model variant seed samples n_turns compared changed share
# mean_spread max_spread mean_sd partly_rated
grep -Eq "^mtbench101 +m-a +[^ ]+ +-1 +2 +[0-9]+ +3 +1 +0\.333 +0\.333 +1\.000 +0\.236 +1$" "$H/out.txt" ||
  { cat "$H/out.txt"; fail "m-a's stability line"; }
# parser primary policy n_dialogues changed scored_both max_abs_diff n_models n_tasks tasks_rank_changed overall_changed
grep -Eq "^fastchat +mtbench101 +exclude +8 +1 +[0-9]+ +6\.000 +[0-9]+ +4 +1 +1$" "$H/out.txt" || { cat "$H/out.txt"; fail "fastchat's swap line"; }
grep -Eq "^judgearena +mtbench101 +exclude +8 +1 +[0-9]+ +3\.000 +[0-9]+ +4 +0 +1$" "$H/out.txt" || { cat "$H/out.txt"; fail "judgearena's swap line"; }

# ---- 2. the demo job prints both parts ----
"$TALLY_BIN" run "$TALLY_SRC/jobs/mtbench101-demo.json" --out "$WORK/demo.h5" > "$WORK/demo.txt" 2> "$WORK/demo.err" ||
  { cat "$WORK/demo.err"; fail "the demo failed"; }
grep -q "^judge stability: one judge sample per turn (judge_samples 1): no repeats to compare$" "$WORK/demo.txt" ||
  { cat "$WORK/demo.txt"; fail "the demo prints no stability line"; }
grep -q "^parser swap: the primary mtbench101 parser replaced by each compatibility parser" "$WORK/demo.txt" ||
  fail "the demo prints no parser swap"
[ "$(grep -cE '^(mtbench101-opencompass|fastchat|judgearena) +mtbench101 +(exclude|fail) +104 +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9]+ +13 +[0-9]+ +[01]$' "$WORK/demo.txt")" = 6 ] ||
  { cat "$WORK/demo.txt"; fail "the demo's swap table lacks rows"; }

# ---- 3. three judge samples on 1, 2, 4 ranks, against a re-computation ----
command -v mpirun >/dev/null || { echo "skipped the rank check: no mpirun"; exit 77; }
"$PY" - "$D/judgments.jsonl" "$WORK/j3.jsonl" <<'PY'
import json, re, sys, zlib
out = open(sys.argv[2], "w")
for n, l in enumerate(open(sys.argv[1]), 1):
    o = json.loads(l)
    out.write(json.dumps(o) + "\n")
    for j in (1, 2):
        h = zlib.crc32(("%d/%d" % (n, j)).encode()) % 7
        s = dict(o, sample=j)
        if isinstance(o["response"], str):
            if h == 6:
                s["response"] = "I cannot decide on this one."
            else:
                d = (-2, 0, 0, 1, 0, 3)[h]
                s["response"] = re.sub(r"\[\[\s*(\d+)\s*\]\]",
                                       lambda m: "[[%d]]" % min(10, max(1, int(m.group(1)) + d)), o["response"])
        out.write(json.dumps(s) + "\n")
PY
cat > "$WORK/r.json" <<JOB
{"name": "stability-ranks", "output": "$WORK/r.h5",
 "benchmarks": [{"benchmark": "mtbench101", "items": "$D/dialogues.jsonl", "answers": "$D/answers.jsonl",
   "judgments": "$WORK/j3.jsonl", "judge_samples": 3, "comparison": {"resamples": 100}, "ci_resamples": 100,
   "parsers": ["mtbench101", "mtbench101-opencompass", "fastchat", "judgearena"]}]}
JOB
for n in 1 2 4; do
  mpirun --allow-run-as-root --oversubscribe -np $n "$TALLY_BIN" run "$WORK/r.json" --out "$WORK/r$n.h5" --quiet \
    > "$WORK/r$n.txt" 2> "$WORK/r$n.err" || { cat "$WORK/r$n.err"; fail "the three-sample job failed on $n rank(s)"; }
  sed -i "s#$WORK/r$n.h5#OUT#" "$WORK/r$n.txt"
done
grep -q "^judge stability over 3 samples" "$WORK/r1.txt" || { cat "$WORK/r1.txt"; fail "no stability line"; }
for n in 2 4; do
  cmp -s "$WORK/r1.txt" "$WORK/r$n.txt" || { diff "$WORK/r1.txt" "$WORK/r$n.txt"; fail "the summary differs on $n ranks"; }
  for obj in /metrics/mtbench101/judge_stability /metrics/mtbench101/parser_swap; do
    h5diff "$WORK/r1.h5" "$WORK/r$n.h5" "$obj" > /dev/null || fail "$obj differs on $n ranks"
  done
done
"$PY" - "$WORK/r4.h5" <<'PY' || fail "the tables disagree with the re-computation"
import math, sys
from collections import defaultdict
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
path = sys.argv[1]
t = tally_h5.read_table(path, "/items/mtbench101")
K = 3
PARSERS = ["mtbench101", "mtbench101-opencompass", "fastchat", "judgearena"]
TASKS = "CM SI AR TS CC CR FR SC SA MR GR IC PI".split()
pre = lambda p: "" if p == "mtbench101" else p.replace("-", "_") + "_"
N = len(t["id"])
# judge stability, from each sample's rating and status
st = tally_h5.read_table(path, "/metrics/mtbench101/judge_stability")
row = {(p, m, int(s)): i for i, (p, m, s) in enumerate(zip(st["parser"], st["model"], st["seed"]))}
acc = defaultdict(lambda: [0, 0, 0, 0, 0, 0.0, 0.0])   # turns, compared, changed, partly, sum spread, max, sum sd
for p in PARSERS:
    for i in range(N):
        v = [float(t[pre(p) + "rating_%d" % j][i]) for j in range(K) if t[pre(p) + "status_%d" % j][i] == "ok"]
        for key in ((p, t["model"][i], int(t["seed"][i])), (p, t["model"][i], -1)):
            a = acc[key]
            a[0] += 1
            a[3] += 0 < len(v) < K
            if len(v) >= 2:
                mu = sum(v) / len(v)
                a[1] += 1
                a[2] += max(v) != min(v)
                a[4] += max(v) - min(v)
                a[5] = max(a[5], max(v) - min(v))
                a[6] += math.sqrt(sum((x - mu) ** 2 for x in v) / (len(v) - 1))
assert len(row) == len(acc), (len(row), len(acc))
for key, a in acc.items():
    i = row[key]
    assert (st["n_turns"][i], st["n_turns_compared"][i], st["n_changed"][i], st["n_partly_rated"][i]) == tuple(a[:4]), (key, a)
    assert abs(st["share_changed"][i] - a[2] / a[1]) < 1e-12 and abs(st["mean_spread"][i] - a[4] / a[1]) < 1e-9, key
    assert st["max_spread"][i] == a[5] and abs(st["mean_sd"][i] - a[6] / a[1]) < 1e-8, (key, st["mean_sd"][i], a[6] / a[1])
changed_any = sum(st["n_changed"])
# parser swap, from the turn ratings: dialogue = min over its turns (exclude) or none when a turn
# is unrated (fail); task = mean of dialogues, Avg = mean of tasks, each then the mean over seeds
turns = defaultdict(list)
for i in range(N):
    turns[(t["model"][i], int(t["seed"][i]), int(t["id"][i]), t["task"][i])].append(i)
def dscores(p, pol):
    out = {}
    for k, ii in turns.items():
        ok = [float(t[pre(p) + "rating"][i]) for i in ii if t[pre(p) + "status"][i] == "ok"]
        out[k] = min(ok) if ok and (pol == "exclude" or len(ok) == len(ii)) else None
    return out
def model_scores(ds):
    per = defaultdict(lambda: defaultdict(list))   # (model) -> seed -> [(task, score)]
    for (m, s, d, task), v in sorted(ds.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        per[m][s].append((task, v))
    res = {}
    for m, seeds in per.items():
        sums, ns = defaultdict(float), defaultdict(int)
        for s in sorted(seeds):
            o, no = 0.0, 0
            for task in TASKS:
                v = [x for tk, x in seeds[s] if tk == task and x is not None]
                if not v:
                    continue
                ts = 0.0
                for x in v: ts += x
                ts /= len(v)
                sums[task] += ts; ns[task] += 1
                o += ts; no += 1
            if no:
                sums["Avg"] += o / no; ns["Avg"] += 1
        res[m] = {g: sums[g] / ns[g] if ns[g] else None for g in TASKS + ["Avg"]}
    return res
def ranks(sc):
    return {m: 0 if v is None else 1 + sum(1 for w in sc.values() if w is not None and w > v) for m, v in sc.items()}
w = tally_h5.read_table(path, "/metrics/mtbench101/parser_swap")
present = sorted(set(t["task"]))
nrows = 0
for r in range(len(w["parser"])):
    p, pol = w["parser"][r], w["policy"][r]
    a, b = dscores("mtbench101", pol), dscores(p, pol)
    ndc = sum(1 for k in a if a[k] != b[k])
    both = [abs(a[k] - b[k]) for k in a if a[k] is not None and b[k] is not None]
    ma, mb = model_scores(a), model_scores(b)
    rk = lambda ms, g: ranks({m: ms[m][g] for m in ms})
    ntc = sum(1 for g in present if rk(ma, g) != rk(mb, g))
    oc = int(rk(ma, "Avg") != rk(mb, "Avg"))
    got = (w["n_dialogues"][r], w["n_dialogues_changed"][r], w["n_scored_both"][r], w["n_tasks"][r],
           w["n_tasks_rank_changed"][r], w["overall_rank_changed"][r], w["n_models"][r])
    assert got == (len(a), ndc, len(both), len(present), ntc, oc, len(ma)), (p, pol, got)
    assert abs(w["max_abs_diff"][r] - max(both)) < 1e-12, (p, pol)
    nrows += 1
assert nrows == 6
print("three samples: %d stability rows (%d turns changed) and %d swap rows re-computed" % (len(acc), changed_any, nrows))
PY
echo "e2e mtbench101 stability: ok"
