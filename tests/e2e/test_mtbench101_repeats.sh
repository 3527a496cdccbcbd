#!/usr/bin/env bash
# MT-Bench-101 judge repeats ("judge_samples": 3), replay for both stages:
#  1. the demo's judge outputs become sample 0; samples 1 and 2 are derived here (the rating
#     moved by -1/0/+1, or no rating at all), written with "sample": 1 / 2 in one judgments file;
#  2. the run is identical on 1, 2 and 4 ranks;
#  3. an independent re-computation from the per-sample columns of /items/mtbench101: each
#     turn's rating is the median (then, in a second run, the mean) of its rated samples, and
#     /metrics/mtbench101/judge_agreement (exact agreement, mean range, Krippendorff's alpha,
#     ordinal, computed here pairwise from its definition, without a coincidence matrix);
#  4. killed (SIGKILL) while judging, --resume on 4 ranks asks no journaled sample again and
#     writes the uninterrupted run's tables;
#  5. a dry run with an openai judge sends each turn's three samples with seeds seed, seed+1,
#     seed+2, and a "sample" out of range in a judgments line is reported with file:line;
#  6. with an openai judge (the test server) every judge sample has its evidence columns.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
D="$TALLY_SRC/demo/mtbench101"

"$PY" - "$D/judgments.jsonl" "$WORK/j3.jsonl" <<'PY'
import json, re, sys, zlib
out = open(sys.argv[2], "w")
for n, l in enumerate(open(sys.argv[1]), 1):
    o = json.loads(l)
    out.write(json.dumps(o) + "\n")                    # sample 0: no "sample" field (the default)
    for j in (1, 2):
        h = zlib.crc32(("%d/%d" % (n, j)).encode()) % 7
        s = dict(o, sample=j)
        if isinstance(o["response"], str):
            if h == 6:
                s["response"] = "I cannot decide on this one."
            else:
                d = (-1, 0, 0, 1, 0, 1)[h]
                s["response"] = re.sub(r"\[\[\s*(\d+)\s*\]\]",
                                       lambda m: "[[%d]]" % min(10, max(1, int(m.group(1)) + d)), o["response"])
        out.write(json.dumps(s) + "\n")
PY
job() { # name aggregate
  cat > "$WORK/$1.json" <<JOB
{"name": "$1", "output": "$WORK/$1-default.h5",
 "benchmarks": [{"benchmark": "mtbench101", "items": "$D/dialogues.jsonl", "answers": "$D/answers.jsonl",
   "judgments": "$WORK/j3.jsonl", "judge_samples": 3, "judge_aggregate": "$2",
   "parsers": ["mtbench101", "fastchat"], "comparison": {"resamples": 200}}]}
JOB
}
job med median
job mean mean
for n in 1 2 4; do
  mpirun -n $n --oversubscribe "$TALLY_BIN" run "$WORK/med.json" --out "$WORK/m$n.h5" --quiet > "$WORK/m$n.txt" 2> "$WORK/m$n.err" ||
    { cat "$WORK/m$n.err"; fail "the repeats job failed on $n rank(s)"; }
  sed -i "s#$WORK/m$n.h5#OUT#" "$WORK/m$n.txt"
done
grep -q "^judge samples per turn: 3 (turn rating = median" "$WORK/m1.txt" || { cat "$WORK/m1.txt"; fail "no judge samples line"; }
grep -q "^judge self-agreement over 3 samples" "$WORK/m1.txt" || fail "no agreement in the summary"
for n in 2 4; do
  cmp -s "$WORK/m1.txt" "$WORK/m$n.txt" || { diff "$WORK/m1.txt" "$WORK/m$n.txt"; fail "the summary differs on $n ranks"; }
  for obj in /items /metrics /audit; do
    h5diff "$WORK/m1.h5" "$WORK/m$n.h5" "$obj" > /dev/null || fail "$obj differs on $n ranks"
  done
done
"$TALLY_BIN" run "$WORK/mean.json" --out "$WORK/mean.h5" --quiet > /dev/null 2> "$WORK/mean.err" ||
  { cat "$WORK/mean.err"; fail "the mean job failed"; }

cat > "$WORK/check.py" <<'PY'
import math, sys
from collections import Counter
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
path, agg = sys.argv[1], sys.argv[2]
t = tally_h5.read_table(path, "/items/mtbench101")
K = 3
def med(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
def alpha(units):  # Krippendorff's alpha, ordinal, from its definition (pairs within units)
    units = [u for u in units if len(u) >= 2]
    allv = [v for u in units for v in u]
    n = len(allv)
    if n < 2: return float("nan")
    nc = Counter(allv); vals = sorted(nc)
    def d2(a, b):
        lo, hi = min(a, b), max(a, b)
        s = sum(nc[g] for g in vals if lo <= g <= hi) - (nc[a] + nc[b]) / 2
        return s * s
    do = sum(sum(d2(a, b) for i, a in enumerate(u) for j, b in enumerate(u) if i != j) / (len(u) - 1) for u in units) / n
    de = sum(nc[a] * nc[b] * d2(a, b) for a in vals for b in vals if a != b) / (n * (n - 1))
    return 1 - do / de if de > 0 else float("nan")
checked = 0
groups = {}
for pre in ("", "fastchat_"):
    for i in range(len(t["id"])):
        rated = [float(t[pre + "rating_%d" % j][i]) for j in range(K) if t[pre + "status_%d" % j][i] == "ok"]
        got = float(t[pre + "rating"][i])
        if rated:
            want = med(rated) if agg == "median" else sum(rated) / len(rated)
            assert t[pre + "status"][i] == "ok" and abs(got - want) < 1e-9, (i, pre, rated, got)
            checked += 1
        else:
            assert math.isnan(got) and t[pre + "status"][i] != "ok", (i, pre)
            assert t[pre + "status"][i] == t[pre + "status_0"][i]
        for key in ((pre, t["model"][i], int(t["seed"][i])), (pre, t["model"][i], -1)):
            groups.setdefault(key, []).append(rated)
a = tally_h5.read_table(path, "/metrics/mtbench101/judge_agreement")
name = {"": "mtbench101", "fastchat_": "fastchat"}
rows = {(r, m, int(s)): k for k, (r, m, s) in enumerate(zip(a["parser"], a["model"], a["seed"]))}
assert len(rows) == len(groups), (len(rows), len(groups))
for (pre, m, s), units in groups.items():
    k = rows[(name[pre], m, s)]
    multi = [u for u in units if len(u) >= 2]
    assert a["n_turns_compared"][k] == len(multi)
    assert a["n_samples_rated"][k] == sum(len(u) for u in units)
    assert a["n_samples_unrated"][k] == K * len(units) - sum(len(u) for u in units)
    ex = sum(1 for u in multi if min(u) == max(u)) / len(multi)
    rg = sum(max(u) - min(u) for u in multi) / len(multi)
    assert abs(a["exact_agreement"][k] - ex) < 1e-12 and abs(a["mean_range"][k] - rg) < 1e-12, (m, s, ex, rg)
    grid = lambda v: 1 <= v <= 10 and v * 2 == int(v * 2)
    assert a["n_off_scale"][k] == sum(1 for u in units for v in u if not grid(v))
    al = alpha([[v for v in u if grid(v)] for u in units])
    assert abs(a["alpha_ordinal"][k] - al) < 1e-9, (m, s, a["alpha_ordinal"][k], al)
s = tally_h5.read_table(path, "/metrics/mtbench101/settings")
kv = dict(zip(s["key"], s["value"]))
assert kv["judge_samples"] == "3" and kv["judge_aggregate"] == agg, kv
off = sum(a["n_off_scale"])
print("repeats (%s): %d turn ratings and %d agreement rows re-computed (%d samples off the scale)" % (agg, checked, len(groups), off))
PY
"$PY" "$WORK/check.py" "$WORK/m1.h5" median || fail "the median run disagrees with the re-computation"
"$PY" "$WORK/check.py" "$WORK/mean.h5" mean || fail "the mean run disagrees with the re-computation"

# 4. killed while judging, resumed
sed 's#"benchmarks"#"engines": {"model": {"type": "replay"}, "judge": {"type": "replay", "latency_ms": 300}}, "benchmarks"#; s#-default.h5#-slow.h5#' \
  "$WORK/med.json" > "$WORK/slow.json"
judged() { cat "$WORK"/med-slow.h5.journal/*.jsonl 2>/dev/null | grep -c '"st":[1-3],' || true; }
setsid mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$WORK/slow.json" --quiet > /dev/null 2>&1 &
PG=$!
for _ in $(seq 150); do [ "$(judged)" -ge 12 ] && break; sleep 0.2; done
kill_session "$PG"
j=$(judged)
echo "killed with $j judge samples journaled"
[ "$j" -ge 12 ] || fail "no judge samples were journaled within 30 s"
[ ! -e "$WORK/med-slow.h5" ] || fail "the killed run left a final output"
mpirun -n 4 --oversubscribe "$TALLY_BIN" run "$WORK/slow.json" --resume --break-lock --quiet > /dev/null ||
  fail "resume on 4 ranks failed"
for obj in /items /metrics /audit; do
  h5diff "$WORK/m1.h5" "$WORK/med-slow.h5" "$obj" > /dev/null || fail "$obj of the resumed run differs"
done
"$PY" - "$WORK/med-slow.h5" "$j" <<'PY' || fail "a judge sample was asked twice after the resume"
import sys, h5py
a = h5py.File(sys.argv[1], "r").attrs
u, c1, r1, s1 = int(a["units"]), int(a["judge_calls"]), int(a["judge_resumed"]), int(a["judge_skipped"])
print("units %d; judge samples: calls %d, from the journal %d, skipped %d" % (u, c1, r1, s1))
assert c1 + r1 + s1 == 3 * u and r1 >= int(sys.argv[2]) - 2, (c1, r1, s1)  # a line cut by the kill on each rank
PY

# 5. seeds per sample (dry run, openai judge) and a bad "sample"
cat > "$WORK/dry.json" <<JOB
{"name": "dry", "output": "$WORK/dry.h5",
 "engines": {"judge": {"type": "openai", "url": "http://127.0.0.1:9/v1", "model": "judge"}},
 "benchmarks": [{"benchmark": "mtbench101", "items": "$D/dialogues.jsonl", "answers": "$D/answers.jsonl",
   "judge_samples": 3}]}
JOB
"$TALLY_BIN" run "$WORK/dry.json" --dry-run="$WORK/req.jsonl" > "$WORK/dry.txt" 2> "$WORK/dry.err" ||
  { cat "$WORK/dry.err"; fail "the dry run failed"; }
"$PY" - "$WORK/req.jsonl" <<'PY' || fail "the judge samples do not carry distinct seeds"
import json, sys
by = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["role"] != "judge":
        continue
    k = r["key"].split("/")
    by.setdefault(tuple(k[:6]), []).append((int(k[6]), r["body"]["seed"], r["body"]["messages"]))
assert by
for key, v in by.items():
    v.sort()
    seed = int(key[4])
    assert [x[0] for x in v] == [1, 2, 3], (key, v)
    assert [x[1] for x in v] == [seed, seed + 1, seed + 2], (key, [x[1] for x in v])
    assert v[0][2] == v[1][2] == v[2][2]
print("dry run: %d turns, three samples each with seeds seed..seed+2" % len(by))
PY
printf '{"id": "1", "model": "demo-chat-a", "seed": 0, "turn": 0, "sample": 7, "response": "Rating: [[8]]"}\n' > "$WORK/badj.jsonl"
sed "s#$WORK/j3.jsonl#$WORK/badj.jsonl#" "$WORK/med.json" > "$WORK/badj.json"
"$TALLY_BIN" run "$WORK/badj.json" --out "$WORK/badj.h5" > /dev/null 2> "$WORK/badj.err" || true
grep -q "badj.jsonl:1: .*'sample' is not an integer from 0 to 6" "$WORK/badj.err" || { cat "$WORK/badj.err"; fail "a bad sample was not reported"; }
# an openai judge (the test server): every judge sample gets its evidence columns
start_testserver
PORT=$TS_PORT
sed "s#127.0.0.1:9/v1#127.0.0.1:$PORT/v1#; s#\"model\": \"judge\"}#\"model\": \"judge\", \"health\": {\"wait_s\": 5}}#" "$WORK/dry.json" > "$WORK/http.json"
"$TALLY_BIN" run "$WORK/http.json" --quiet > /dev/null 2> "$WORK/http.err" || { cat "$WORK/http.err"; fail "the openai-judge run failed"; }
"$PY" - "$WORK/dry.h5" <<'PY' || fail "the judge samples' evidence columns are missing"
import sys
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
t = tally_h5.read_table(sys.argv[1], "/items/mtbench101")
for pre, jc in (("judge_", "judgment"), ("judge1_", "judgment_1"), ("judge2_", "judgment_2")):
    asked = t[jc] != ""
    assert asked.sum() > 100 and (t[pre + "attempts"][asked] >= 1).all() and (t[pre + "request_id"][asked] != "").all(), pre
assert "judge3_request_id" not in t.columns
print("openai judge: evidence columns for samples 0, 1, 2")
PY
echo "e2e mtbench101 repeats: ok"
