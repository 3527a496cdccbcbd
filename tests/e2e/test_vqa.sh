#!/usr/bin/env bash
# The VQA module end to end (replay for the answers and the LAVE judge):
#  1. the demo job (jobs/vqa-demo.json: 30 questions and two models' answers written for the
#     project, LAVE judge outputs, five annotators' votes, made-up LAVE demonstrations; two
#     studies over the run's own columns) prints the same summary and writes the same tables on
#     1, 2 and 4 ranks;
#  2. an independent re-computation from /items/vqa: every unit's VQA accuracy equals what
#     `tally score vqa` prints for that model's answers, the group means, the failure-mode
#     table, the human scores (5 votes: >= 4 correct -> 1, 2-3 -> 0.5) and Krippendorff's alpha
#     of the votes (pairwise, from its definition), the LAVE ratings (last rating=N);
#  3. the LAVE prompts the judge gets (a dry run with an openai judge) equal a rendering in
#     Python of the reference code's rules (sorted references, the <= 0.25 filter on the test
#     example, binary detection, demonstrations, "So rating=N", strip);
#  4. the same study from files in the LAVE release's columns, with the LAVE-vs-human agreement
#     table (kappa 0.5237, quadratic 0.7289, alpha 0.7333 as on the demo) (dataset, model, qid, question,
#     references, prediction, human_score) gives the same per-unit scores;
#  5. bad input: a human row for an unknown item, too few votes, a release row whose references
#     differ from an earlier row of its question: reported with file:line, counted; a missing
#     image: the request cannot be built, and a dry run names the image for each such unit;
#     images that can be read go out as their bytes in base64 (every length mod 3, an empty one);
#  6. the expected LAVE rating from the judge's log-probabilities (an openai judge: the test server).
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
JOB="$TALLY_SRC/jobs/vqa-demo.json"
D="$TALLY_SRC/demo/vqa"

# 1. ranks
for n in 1 2 4; do
  mpirun -n $n --oversubscribe "$TALLY_BIN" run "$JOB" --out "$WORK/d$n.h5" --quiet > "$WORK/d$n.txt" 2> "$WORK/d$n.err" ||
    { cat "$WORK/d$n.err"; fail "the demo failed on $n rank(s)"; }
  sed -i "s#$WORK/d$n.h5#OUT#" "$WORK/d$n.txt"
done
# the "by all" table: model variant group seeds n answered missing unparsed engine_error judge_engine_error
# lave_unparsed lave_unjudged lave_rated (n - rated: the unrated) vqa_accuracy [CI] std soft std exact std lave std
grep -Eq "^demo-vlm-a +short +all +1 +30 +30 +0 +0 +0 +0 +1 +0 +29 +0\.840 \[0\.707, 0\.957\] +nan +0\.881 +nan +0\.867 +nan +0\.867 +nan$" "$WORK/d1.txt" ||
  { cat "$WORK/d1.txt"; fail "no accuracy table in the summary"; }
# demo-vlm-b: one answer missing, one unterminated (unparsed): both score 0 (before: left out, 54.64 x 100)
grep -Eq "^demo-vlm-b +short +all +1 +30 +29 +1 +1 +0 +0 +1 +1 +27 +0\.510 \[0\.363, 0\.657\] +nan +0\.609 +nan +0\.733 +nan +0\.600 +nan$" "$WORK/d1.txt" ||
  { cat "$WORK/d1.txt"; fail "demo-vlm-b's missing answers do not score 0 in the summary"; }
grep -q "^  demo-vlm-b: 3 unrated = 1 missing + 0 engine_error + 0 judge engine errors + 1 no rating + 1 not judged$" "$WORK/d1.txt" ||
  { cat "$WORK/d1.txt"; fail "the LAVE unrated counts"; }
grep -q "^failure modes" "$WORK/d1.txt" || fail "no failure-mode table in the summary"
grep -q "Krippendorff's alpha (nominal) 0.459" "$WORK/d1.txt" || fail "no agreement of the votes in the summary"
grep -q "^study 'vqa_metrics_vs_human' (/items/vqa):" "$WORK/d1.txt" || fail "no study in the summary"
grep -q "^spearman x 100, by group:" "$WORK/d1.txt" || fail "no table of the study by group in the summary"
for n in 2 4; do
  cmp -s "$WORK/d1.txt" "$WORK/d$n.txt" || { diff "$WORK/d1.txt" "$WORK/d$n.txt"; fail "the summary differs on $n ranks"; }
  for obj in /items /metrics /audit /stats; do
    h5diff "$WORK/d1.h5" "$WORK/d$n.h5" "$obj" > /dev/null || fail "$obj differs on $n ranks"
  done
done

# 2. re-computation
for m in demo-vlm-a demo-vlm-b; do
  "$PY" - "$D/answers.jsonl" "$m" "$WORK/res-$m.json" <<'PY'
import json, sys
res = [{"question_id": int(r["id"].split(":")[1]), "answer": r["response"]}
       for r in map(json.loads, open(sys.argv[1])) if r["model"] == sys.argv[2] and isinstance(r["response"], str)]
json.dump(res, open(sys.argv[3], "w"))
PY
  "$TALLY_BIN" score vqa --items "$D/items.jsonl" --results "$WORK/res-$m.json" > "$WORK/score-$m.json" 2> "$WORK/score-$m.err" ||
    { cat "$WORK/score-$m.err"; fail "tally score vqa failed for $m"; }
done
"$PY" - "$WORK/d1.h5" "$WORK" "$D" <<'PY' || fail "the tables disagree with the re-computation"
import json, math, re, sys
from collections import Counter
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
h5, work, d = sys.argv[1:4]
t = tally_h5.read_table(h5, "/items/vqa")
n = len(t["id"])
think_closed = re.compile(r"<think>.*?</think>", re.S)
for i in range(n):
    m, qid = t["model"][i], t["qid"][i]
    score = json.load(open("%s/score-%s.json" % (work, m)))["perQuestion"]
    resp = t["response"][i]
    if resp == "" or ("<think>" in resp and "</think>" not in resp):
        assert math.isnan(t["vqa_accuracy"][i]) and t["vqa_status"][i] in ("missing", "unterminated_think"), i
        continue
    if "</think>" not in resp:   # the drop-in scores the raw answer; the module the visible one
        assert abs(100 * t["vqa_accuracy"][i] - score[qid]) < 0.006, (i, m, qid, t["vqa_accuracy"][i], score[qid])
    # LAVE: the last rating=N, 1-3
    j = think_closed.sub("", t["judgment"][i])
    r = re.findall(r"rating\s*=\s*(\d+)", j)
    want = int(r[-1]) if r and r[-1] in "123" else -1
    assert t["lave_rating"][i] == want, (i, t["judgment"][i], t["lave_rating"][i])
# votes -> human score
hum = {(r["qid"], r["model"]): r["votes"] for r in map(json.loads, open(d + "/human.jsonl"))}
for i in range(n):
    v = hum[(int(t["qid"][i]), t["model"][i])]
    s = sum(v)
    assert t["human"][i] == (1.0 if s >= 4 else 0.5 if s >= 2 else 0.0), i
    assert t["human_votes"][i] == ",".join(map(str, v))
# group means (level all): every unit counts, an unscored one (NaN) as 0
a = tally_h5.read_table(h5, "/metrics/vqa/accuracy")
for k in range(len(a["model"])):
    if a["level"][k] != "all":
        continue
    rows = [i for i in range(n) if t["model"][i] == a["model"][k]]
    assert a["n_items"][k] == len(rows)
    assert a["n_answered"][k] == sum(1 for i in rows if t["response"][i] != "")
    assert a["n_missing"][k] == sum(1 for i in rows if t["vqa_status"][i] == "missing")
    assert a["n_unparsed"][k] == sum(1 for i in rows if t["vqa_status"][i] == "unterminated_think")
    for col in ("vqa_accuracy", "soft_vqa_accuracy", "exact_match", "lave_score"):
        v = [0.0 if math.isnan(t[col][i]) else t[col][i] for i in rows]
        assert abs(a[col][k] - sum(v) / len(v)) < 1e-12, (col, a[col][k], sum(v) / len(v))
# failure modes, pooled
f = tally_h5.read_table(h5, "/metrics/vqa/failure_modes")
for k in range(len(f["metric"])):
    if f["seed"][k] != -1:
        continue
    col = {"lave": "lave_score"}.get(f["metric"][k], f["metric"][k])
    both = [i for i in range(n) if not math.isnan(t[col][i])]
    lo = [i for i in both if t["human"][i] == 1 and t[col][i] < 0.5]
    hi = [i for i in both if t["human"][i] == 0 and t[col][i] >= 0.5]
    assert f["n_units"][k] == len(both) and f["n_correct_metric_low"][k] == len(lo) and f["n_wrong_metric_high"][k] == len(hi), k
    first = lambda l: min((int(t["qid"][i]), t["id"][i]) for i in l)[1] if l else ""
    assert f["example_correct_metric_low"][k] == first(lo) and f["example_wrong_metric_high"][k] == first(hi), k
# Krippendorff's alpha (nominal) of the votes, pairwise
units = [list(map(int, t["human_votes"][i].split(","))) for i in range(n)]
allv = [x for u in units for x in u]
N, c = len(allv), Counter(allv)
do = sum(sum(1 for p in range(len(u)) for q in range(len(u)) if p != q and u[p] != u[q]) / (len(u) - 1) for u in units) / N
de = sum(c[x] * c[y] for x in c for y in c if x != y) / (N * (N - 1))
h = tally_h5.read_table(h5, "/metrics/vqa/human")
k = list(h["model"]).index("all")
assert abs(h["alpha_nominal"][k] - (1 - do / de)) < 1e-12, (h["alpha_nominal"][k], 1 - do / de)
print("vqa demo: %d units re-computed" % n)
PY

# 3. LAVE prompts through a dry run, against the reference code's rules in Python
"$PY" - "$JOB" "$WORK/dry.json" <<'PY'
import json, os, sys
j = json.load(open(sys.argv[1]))
src = os.path.dirname(os.path.abspath(sys.argv[1]))
fix = lambda p: os.path.normpath(os.path.join(src, p))
b = j["benchmarks"][0]
del b["judgments"], j["studies"]
for k in ("items", "answers", "human"):
    b[k] = fix(b[k])
b["lave"]["demos"], b["lave"]["demos_binary"] = fix(b["lave"]["demos"]), fix(b["lave"]["demos_binary"])
j["engines"] = {"judge": {"type": "openai", "url": "http://127.0.0.1:9/v1", "model": "judge"}}
json.dump(j, open(sys.argv[2], "w"))
PY
"$TALLY_BIN" run "$WORK/dry.json" --dry-run="$WORK/req.jsonl" --out "$WORK/dry.h5" > /dev/null 2> "$WORK/dry.err" ||
  { cat "$WORK/dry.err"; fail "the LAVE dry run failed"; }
"$PY" - "$WORK/req.jsonl" "$D" <<'PY' || fail "a LAVE prompt differs from the reference rendering"
import json, re, sys
from collections import Counter
req, d = sys.argv[1:3]
items = {"demo:%d" % o["question_id"]: o for o in map(json.loads, open(d + "/items.jsonl"))}
answers = {(o["id"], o["model"]): o["response"] for o in map(json.loads, open(d + "/answers.jsonl"))}
gen, binr = json.load(open(d + "/lave_demos_general.json")), json.load(open(d + "/lave_demos_binary.json"))
TASK = ("You are given a question, a set of gold-standard reference answers written by experts, and a candidate answer. "
        "Please rate the accuracy of the candidate answer for the question considering the reference answers. Use a scale "
        "of 1-3, with 1 indicating an incorrect or irrelevant answer, 2 indicating an ambiguous or incomplete answer, and 3 "
        "indicating a correct answer. Give the rationale before rating.\n\nTHIS IS VERY IMPORTANT: A binary question should "
        "only be answered with 'yes' or 'no', otherwise the candidate answer is incorrect (rating=1).")
def fmt(refs): return ", ".join("'" + r + "'" for r in sorted(refs))
def ex(q, refs, pred, out): return "Question: '%s'\nReference answers: %s\nCandidate answer: '%s'\nOutput: %s" % (q, fmt(refs), pred, out)
def prompt(q, refs, pred):
    c = Counter(refs); mx = max(c.values())
    binary = Counter(refs).most_common(1)[0][0].lower().rstrip(".") in ("yes", "no")
    demos = (binr if binary else gen)[:3]
    p = TASK + "\n\n"
    for x in demos:
        p += ex(x["question"], x["references"], x["prediction"], "%s So rating=%s" % (x["explanation"], x["output"])) + "\n\n"
    p += ex(q, [r for r in refs if c[r] / mx > 0.25], pred, "")
    return p.strip()
seen = 0
for l in open(req):
    r = json.loads(l)
    if r["role"] != "judge":
        continue
    k = r["key"].split("/")
    it = items[k[1]]
    pred = re.sub(r"<think>.*?</think>", "", answers[(k[1], k[2])], flags=re.S)
    want = prompt(it["question"], it["answers"], pred)
    got = r["body"]["messages"][0]["content"]
    assert got == want, (k, got[-300:], want[-300:])
    seen += 1
assert seen == 58, seen
print("LAVE prompts: %d equal the reference rendering" % seen)
PY

# 4. the LAVE release's columns
"$PY" - "$D" "$WORK/release.jsonl" "$WORK/h1.jsonl" <<'PY'
import json, sys
d = sys.argv[1]
items = {o["question_id"]: o for o in map(json.loads, open(d + "/items.jsonl"))}
hum = {(r["qid"], r["model"]): r["votes"] for r in map(json.loads, open(d + "/human.jsonl"))}
with open(sys.argv[2], "w") as f:
    for a in map(json.loads, open(d + "/answers.jsonl")):
        q = int(a["id"].split(":")[1])
        v = sum(hum[(q, a["model"])])
        f.write(json.dumps({"dataset": "demo", "model": a["model"], "qid": q, "question": items[q]["question"],
                            "references": items[q]["answers"], "prediction": a["response"],
                            "human_score": 1.0 if v >= 4 else 0.5 if v >= 2 else 0.0}) + "\n")
PY
cat > "$WORK/rel.json" <<JOB
{"name": "rel", "output": "$WORK/rel.h5",
 "benchmarks": [{"benchmark": "vqa", "release": "$WORK/release.jsonl", "answers": "$WORK/release.jsonl",
   "judgments": "$D/judgments.jsonl",
   "lave": {"demos": "$D/lave_demos_general.json", "demos_binary": "$D/lave_demos_binary.json", "num_shots": 3}}],
 "studies": [{"name": "release_study", "from": "vqa", "human": "human", "group_by": ["dataset"],
   "metrics": ["vqa_accuracy", "soft_vqa_accuracy", "exact_match", "lave_score"], "resamples": 2000,
   "agreement": [["lave_score", "human"]], "agreement_scale": "ordinal"}]}
JOB
"$TALLY_BIN" run "$WORK/rel.json" > "$WORK/rel.txt" 2> "$WORK/rel.err" || { cat "$WORK/rel.err"; fail "the release job failed"; }
grep -q "^study 'release_study' (/items/vqa):" "$WORK/rel.txt" || { cat "$WORK/rel.txt"; fail "no study over the release files"; }
# the LAVE-vs-human agreement table over the release files (issue 32): the demo's 56 rated units,
# questions resampled together; kappa, weighted kappa and alpha as on the demo's own files
grep -q "lave_score vs human: n = 56 items" "$WORK/rel.txt" || { cat "$WORK/rel.txt"; fail "no agreement table over the release files"; }
for stat in "kappa  *0.5237" "kappa_quadratic  *0.7289" "alpha  *0.7333"; do
  grep -Eq "^ +$stat " "$WORK/rel.txt" || { cat "$WORK/rel.txt"; fail "release files: agreement '$stat' not found"; }
done
"$PY" - "$WORK/d1.h5" "$WORK/rel.h5" <<'PY' || fail "the release files give other scores"
import math, sys
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
a, b = (tally_h5.read_table(p, "/items/vqa") for p in sys.argv[1:3])
assert list(a["id"]) == list(b["id"]) and list(a["model"]) == list(b["model"])
for col in ("vqa_accuracy", "soft_vqa_accuracy", "exact_match", "lave_score", "human"):
    for x, y in zip(a[col], b[col]):
        assert (math.isnan(x) and math.isnan(y)) or x == y, col
print("release files: the same %d unit scores" % len(a["id"]))
PY

# 5. bad input
cp "$D/human.jsonl" "$WORK/hbad.jsonl"
printf '{"dataset": "demo", "qid": 999, "model": "demo-vlm-a", "votes": [1,1,1,1,1]}\n{"dataset": "demo", "qid": 101, "model": "demo-vlm-x", "votes": [1,0,1]}\n' >> "$WORK/hbad.jsonl"
head -2 "$WORK/release.jsonl" > "$WORK/rbad.jsonl"
sed -n 1p "$WORK/release.jsonl" | sed 's/"model": "demo-vlm-a"/"model": "demo-vlm-c"/; s/"yellow and black"/"black"/' >> "$WORK/rbad.jsonl"
cat > "$WORK/bad.json" <<JOB
{"name": "bad", "output": "$WORK/bad.h5",
 "benchmarks": [{"benchmark": "vqa", "dataset": "demo", "items": "$D/items.jsonl", "answers": "$D/answers.jsonl", "human": "$WORK/hbad.jsonl"}]}
JOB
cat > "$WORK/bad2.json" <<JOB
{"name": "bad2", "output": "$WORK/bad2.h5", "limits": {"max_rejected": 1},
 "benchmarks": [{"benchmark": "vqa", "release": "$WORK/rbad.jsonl", "answers": "$WORK/rbad.jsonl"}]}
JOB
"$TALLY_BIN" run "$WORK/bad.json" > "$WORK/bad.txt" 2> "$WORK/bad.err" || fail "a run with bad human rows stopped"
"$TALLY_BIN" run "$WORK/bad2.json" > "$WORK/bad2.txt" 2>> "$WORK/bad.err" || fail "a run with a bad release row stopped"
grep -q "bad input lines: 2" "$WORK/bad.txt" || { cat "$WORK/bad.txt"; fail "the bad human rows are not counted"; }
for want in "hbad.jsonl:61: a human judgment of item 'demo:999', which the items do not have" \
            "hbad.jsonl:62: field 'votes' has 3 votes" "rbad.jsonl:3: item 'demo:101': its question or references differ"; do
  grep -q "$want" "$WORK/bad.err" || { cat "$WORK/bad.err"; fail "no message '$want'"; }
done
# a missing image: the request cannot be built; a dry run shows why, for every such unit
cat > "$WORK/img.json" <<JOB
{"name": "img", "output": "$WORK/img.h5", "engines": {"model": {"type": "openai", "url": "http://127.0.0.1:9/v1", "model": "m"}},
 "benchmarks": [{"benchmark": "vqa", "dataset": "demo", "items": "$D/items.jsonl", "models": ["m"]}]}
JOB
"$TALLY_BIN" run "$WORK/img.json" --dry-run="$WORK/img.jsonl" > "$WORK/img.txt" 2>&1 || { cat "$WORK/img.txt"; fail "the image dry run failed"; }
grep -q "dry run: 30 requests could not be built" "$WORK/img.txt" || { cat "$WORK/img.txt"; fail "unbuilt requests are not counted"; }
grep -q "\"key\":\"vqa/demo:101/m/short/0/0/0\",\"error\":\"cannot read the image '$D/images/101.jpg'" "$WORK/img.jsonl" ||
  { head -2 "$WORK/img.jsonl"; fail "the missing image is not named"; }
# images go out as base64 data URLs (RFC 4648, '=' padded) of the files' bytes: files of every
# length mod 3, one empty, one over the reader's 64 KiB chunk; a dry run shows them
"$PY" - "$WORK" <<'PY'
import json, os, sys
w = sys.argv[1]
os.makedirs(w + "/b64", exist_ok=True)
with open(w + "/b64/items.jsonl", "w") as f:
    for i, n in enumerate([0, 1, 2, 3, 4, 5, 100, 65536 + 2]):
        with open("%s/b64/%d.png" % (w, i), "wb") as g:
            g.write(os.urandom(n))
        f.write(json.dumps({"question_id": 900 + i, "question": "Q?", "answers": ["a"] * 10,
                            "image": "%d.png" % i, "answer_type": "other"}) + "\n")
PY
cat > "$WORK/b64.json" <<JOB
{"name": "b64", "output": "$WORK/b64.h5", "engines": {"model": {"type": "openai", "url": "http://127.0.0.1:9/v1", "model": "m"}},
 "benchmarks": [{"benchmark": "vqa", "dataset": "b", "items": "$WORK/b64/items.jsonl", "models": ["m"]}]}
JOB
"$TALLY_BIN" run "$WORK/b64.json" --dry-run="$WORK/b64.jsonl" > "$WORK/b64.txt" 2>&1 || { cat "$WORK/b64.txt"; fail "the base64 dry run failed"; }
"$PY" - "$WORK/b64.jsonl" "$WORK/b64" <<'PY' || fail "an image's data URL is not its file in base64"
import base64, json, sys
seen = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    i = int(d["key"].split("/")[1].split(":")[1]) - 900
    urls = [c["image_url"]["url"] for m in d["body"]["messages"] if isinstance(m["content"], list)
            for c in m["content"] if c.get("type") == "image_url"]
    assert len(urls) == 1, d
    want = "data:image/png;base64," + base64.b64encode(open("%s/%d.png" % (sys.argv[2], i), "rb").read()).decode()
    assert urls[0] == want, (i, urls[0][:80], want[:80])
    seen += 1
assert seen == 8, seen
print("base64: 8 images sent as their files' bytes")
PY
# 6. the expected LAVE rating from log-probabilities: an openai judge (the test server, which
#    gives a rating token 1-3 the top log-probabilities d: 0.7, d mod 3 + 1: 0.2, the third: 0.1)
"$PY" - "$D/judgments.jsonl" "$WORK/jrep.jsonl" <<'PY'
import json, sys
with open(sys.argv[2], "w") as out:
    for o in map(json.loads, open(sys.argv[1])):
        out.write(json.dumps({"key": "vqa/%s/%s/short/0/0/1" % (o["id"], o["model"]), "response": o["response"]}) + "\n")
PY
start_testserver --replies "$WORK/jrep.jsonl"
PORT=$TS_PORT
cat > "$WORK/lx.json" <<JOB
{"name": "lx", "output": "$WORK/lx.h5",
 "engines": {"judge": {"type": "openai", "url": "http://127.0.0.1:$PORT/v1", "model": "judge", "key_header": true,
   "sampling": {"logprobs": true, "top_logprobs": 3}, "health": {"wait_s": 5}}},
 "benchmarks": [{"benchmark": "vqa", "dataset": "demo", "items": "$D/items.jsonl", "answers": "$D/answers.jsonl",
   "human": "$D/human.jsonl",
   "lave": {"demos": "$D/lave_demos_general.json", "demos_binary": "$D/lave_demos_binary.json", "num_shots": 3,
            "expected_rating": true}}]}
JOB
"$TALLY_BIN" run "$WORK/lx.json" --quiet > "$WORK/lx.txt" 2> "$WORK/lx.err" || { cat "$WORK/lx.err"; fail "the logprobs run failed"; }
"$PY" - "$WORK/lx.h5" "$WORK/d1.h5" <<'PY' || fail "the expected LAVE ratings are wrong"
import math, re, sys
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
t, d = tally_h5.read_table(sys.argv[1], "/items/vqa"), tally_h5.read_table(sys.argv[2], "/items/vqa")
n = ok = 0
for i in range(len(t["id"])):
    assert t["lave_rating"][i] == d["lave_rating"][i], i        # the same judge texts as the replay demo
    m = re.search(r"rating=([0-9])$", t["judgment"][i])
    dgt = int(m.group(1)) if m else 0
    if t["judgment"][i] and 1 <= dgt <= 3:
        e = 0.7 * dgt + 0.2 * (dgt % 3 + 1) + 0.1 * ((dgt + 1) % 3 + 1)
        assert abs(t["lave_expected"][i] - (e - 1) / 2) < 1e-9, (i, t["judgment"][i], t["lave_expected"][i], (e - 1) / 2)
        assert t["lave_expected_rule"][i] == "logprob_expectation"
        ok += 1
    else:
        assert math.isnan(t["lave_expected"][i]), (i, t["judgment"][i], t["lave_expected"][i])
    n += 1
a = tally_h5.read_table(sys.argv[1], "/metrics/vqa/accuracy")
k = [j for j in range(len(a["model"])) if a["level"][j] == "all" and a["model"][j] == "demo-vlm-a"][0]
v = [0.0 if math.isnan(t["lave_expected"][i]) else t["lave_expected"][i] for i in range(n) if t["model"][i] == "demo-vlm-a"]
assert abs(a["lave_expected"][k] - sum(v) / len(v)) < 1e-9  # every unit counts, an unrated one as 0
print("expected LAVE ratings from logprobs: %d of %d units" % (ok, n))
PY
# across seeds: three seeds of each model (seed s answers item i with item (i + s)'s answer of
# seed 0, so the seeds differ; only seed 0 has judgments), /metrics/vqa/across_seeds equals a
# re-computation from /metrics/vqa/accuracy (NaN seeds left out, std ddof 1, se = std/sqrt(n))
"$PY" - "$TALLY_SRC/demo/vqa/answers.jsonl" "$WORK/seeds3.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r["model"], []).append(r)
with open(sys.argv[2], "w") as f:
    for m, rs in by.items():
        for s in range(3):
            for i, r in enumerate(rs):
                f.write(json.dumps(dict(r, seed=s, response=rs[(i + s) % len(rs)]["response"])) + "\n")
PY
sed -e "s#\"\.\./demo/vqa/answers\.jsonl\"#\"$WORK/seeds3.jsonl\"#" -e "s#\"\.\./#\"$TALLY_SRC/#g" \
  -e "s#\"output\": \"[^\"]*\"#\"output\": \"$WORK/s3.h5\"#" "$TALLY_SRC/jobs/vqa-demo.json" > "$WORK/s3.json"
"$TALLY_BIN" run "$WORK/s3.json" --quiet > /dev/null 2> "$WORK/s3.err" || { cat "$WORK/s3.err"; fail "the 3-seed job failed"; }
"$PY" - "$WORK/s3.h5" <<'PY' || fail "across_seeds disagrees with the re-computation"
import math, sys
from collections import defaultdict
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
acc = tally_h5.read_table(sys.argv[1], "/metrics/vqa/accuracy")
acr = tally_h5.read_table(sys.argv[1], "/metrics/vqa/across_seeds")
want = defaultdict(list)
for r in acc.itertuples():
    for m in ("vqa_accuracy", "soft_vqa_accuracy", "exact_match", "lave_score"):
        v = getattr(r, m)
        if not math.isnan(v):
            want[(r.model, r.prompt_variant, r.level, r.group, m)].append((r.seed, v))
assert len(acr) == len(want), (len(acr), len(want))
multi = 0
for r in acr.itertuples():
    vals = [v for _, v in sorted(want[(r.model, r.prompt_variant, r.level, r.group, r.metric)])]
    k = len(vals)
    mean = sum(vals) / k
    assert r.n_seeds == k and abs(r.mean - mean) < 1e-12, (r, vals)
    if k > 1:
        multi += 1
        sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (k - 1))
        assert abs(r.std - sd) < 1e-12 and abs(r.se - sd / math.sqrt(k)) < 1e-12, (r, sd)
    else:
        assert math.isnan(r.std) and math.isnan(r.se), r
lave = acr[acr.metric == "lave_score"]
assert len(lave) and (lave.n_seeds == 1).all(), lave   # only seed 0 was judged
assert multi > 0 and (acr[acr.metric == "vqa_accuracy"].n_seeds == 3).any()
print("across_seeds: %d rows re-computed, %d over several seeds" % (len(acr), multi))
PY
echo "e2e vqa: ok"
