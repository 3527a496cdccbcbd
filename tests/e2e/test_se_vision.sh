#!/usr/bin/env bash
# SpatialEval's vision modes and its summary (issue 27), against the project's test server:
#  a. every vqa / vtqa request carries its item's image as a data URL of the file's bytes (files
#     of several lengths; relative to the items file's folder, or to the job's "images" folder,
#     or absolute), every tqa request none: in dry runs, and in the requests the server logs;
#  b. the summary prints the task x mode table with seeds, n, answered, missing, unparsed,
#     engine_error and per parser the mean [95% CI] and the std (ddof 1, "nan" for one seed:
#     undefined, never 0), and the primary parser's task x mode matrix (the report's tables,
#     se_report.c, rendered as text);
#  c. /items/spatialeval has `mode`; every /metrics/spatialeval table is grouped by it;
#  d. an image that cannot be read: the unit is engine_error (the reason in the item table),
#     counted in the summary's row, in n with correct 0;
#  e. the same tables on 1 and 2 ranks;
#  f. a vision item without an image is bad input with file:line for a server (never sent
#     blind), allowed for replay; "modes" selects modes: the others' answers are neither units
#     nor unknown items; an unknown mode, or one no item has, is a job error.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
S="$WORK/se"
mkdir -p "$S/img" "$S/pics"
# items: 4 tqa, 7 vqa, 3 vtqa; images of 0, 1, 2, 3, 100 and 70,000 bytes; one vqa item's image
# does not exist (d); one vtqa image is absolute. sub/items.jsonl: the 6 readable vqa items again,
# their images named as in the folder img/ (the job's "images")
"$PY" - "$S" <<'PY'
import json, os, sys
s = sys.argv[1]
opts = "Available options:\nA. Northeast\nB. Northwest\nC. Southwest\nD. Southeast."
def item(i, img=None):
    d = {"id": i, "text": "In which direction is X relative to Y? " + opts, "oracle_answer": "Northwest",
         "oracle_option": "B", "oracle_full_answer": "B. Northwest"}
    if img is not None:
        d["image"] = img
    return d
rows = [item("spatialmap.tqa.2000.0"), item("spatialmap.tqa.2001.0"), item("mazenav.tqa.1.0"), item("mazenav.tqa.2.0")]
for k, n in enumerate([0, 1, 2, 3, 100, 70000]):
    open("%s/img/v%d.png" % (s, k), "wb").write(os.urandom(n))
    rows.append(item("spatialmap.vqa.%d.0" % (2000 + k), "img/v%d.png" % k))
rows.append(item("mazenav.vqa.7.0", "img/nonexistent.png"))          # (d) cannot be read
for k, n in enumerate([5, 6]):
    open("%s/pics/t%d.png" % (s, k), "wb").write(os.urandom(n))
    rows.append(item("mazenav.vtqa.%d.0" % k, "pics/t%d.png" % k))
rows.append(item("mazenav.vtqa.9.0", s + "/img/v5.png"))              # absolute
with open(s + "/items.jsonl", "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
os.makedirs(s + "/sub")
with open(s + "/sub/items.jsonl", "w") as f:
    for k in range(6):
        f.write(json.dumps(item("spatialmap.vqa.%d.0" % (2000 + k), "v%d.png" % k)) + "\n")
# expected image per item id (None: tqa)
want = {r["id"]: None for r in rows[:4]}
for k in range(6): want["spatialmap.vqa.%d.0" % (2000 + k)] = "%s/img/v%d.png" % (s, k)
want["mazenav.vqa.7.0"] = "%s/img/nonexistent.png" % s
for k in range(2): want["mazenav.vtqa.%d.0" % k] = "%s/pics/t%d.png" % (s, k)
want["mazenav.vtqa.9.0"] = s + "/img/v5.png"
json.dump(want, open(s + "/want.json", "w"))
PY
job() { # NAME URL [ITEMS ENTRY KEYS]
  local items='"items": "items.jsonl"'
  [ -z "${3:-}" ] || items=$3
  cat > "$S/$1.json" <<JOB
{"name": "$1", "output": "$S/$1.h5",
 "engines": {"model": {"type": "openai", "url": "$2", "model": "srv", "key_header": true, "health": {"wait_s": 5},
                       "retries": {"max": 6, "backoff_s": 0.01, "backoff_max_s": 0.1}}},
 "benchmarks": [{"benchmark": "spatialeval", $items, "models": ["vlm-a", "vlm-b"],
                 "seeds": [0, 1], "parsers": ["strict", "legacy"]}]}
JOB
}
# the requests of a file (dry run: {"key", "body"}; the server's log: {"key", "body"}) -> per
# request the unit key and its image data URLs; each vision request carries its image's bytes
check_images() { # FILE LABEL [EXPECT_COUNT]
  "$PY" - "$1" "$S/want.json" "$2" "${3:-}" <<'PY' || fail "$2: a request does not carry its image"
import base64, json, sys
want = json.load(open(sys.argv[2]))
n = vis = 0
keys = set()  # a request retried after a network hiccup is logged twice: units are counted once
for line in open(sys.argv[1]):
    d = json.loads(line)
    iid = d["key"].split("/")[1]
    if "error" in d:  # a dry-run request that could not be built: only the unreadable image
        assert iid == "mazenav.vqa.7.0" and "cannot read the image '%s'" % want[iid] in d["error"], d
        continue
    urls = [c["image_url"]["url"] for m in d["body"]["messages"] if isinstance(m["content"], list)
            for c in m["content"] if c.get("type") == "image_url"]
    if want[iid] is None:
        assert urls == [], (iid, "a tqa request carries an image")
    else:
        assert len(urls) == 1, (iid, len(urls))
        b = open(want[iid], "rb").read()
        assert urls[0] == "data:image/png;base64," + base64.b64encode(b).decode(), (iid, urls[0][:60])
        vis += d["key"] not in keys
    n += d["key"] not in keys
    keys.add(d["key"])
if sys.argv[4]:
    assert n == int(sys.argv[4]), (n, sys.argv[4])
print("%s: %d requests, %d with their image, the tqa ones without" % (sys.argv[3], n, vis))
PY
}

# a. dry run: 14 items x 4 cfgs, the unreadable image's 4 units not built (and named); then the
#    items of sub/ with "images": "img"
job dry "http://127.0.0.1:9/v1"
"$TALLY_BIN" run "$S/dry.json" --dry-run="$S/dry.jsonl" > "$S/dry.txt" 2>&1 || { cat "$S/dry.txt"; fail "the dry run failed"; }
grep -q "4 requests could not be built" "$S/dry.txt" || { cat "$S/dry.txt"; fail "the unreadable image's requests are not counted"; }
check_images "$S/dry.jsonl" "dry run" 52
job dir "http://127.0.0.1:9/v1" '"items": "sub/items.jsonl", "images": "img"'
"$TALLY_BIN" run "$S/dir.json" --dry-run="$S/dir.jsonl" > "$S/dir.txt" 2>&1 || { cat "$S/dir.txt"; fail "the images-folder dry run failed"; }
check_images "$S/dir.jsonl" "images folder" 24
sed 's/"images": "img"/"images": "nowhere"/' "$S/dir.json" > "$S/dir2.json"
! "$TALLY_BIN" run "$S/dir2.json" --dry-run="$S/dir2.jsonl" > "$S/dir2.txt" 2>&1 && grep -q "images folder '$S/nowhere': No such file" "$S/dir2.txt" ||
  { cat "$S/dir2.txt"; fail "a missing images folder is not an error naming it"; }

# b-e. a real run against the test server, on 1 and 2 ranks
start_testserver --log-requests "$S/log1.jsonl"
job r1 "http://127.0.0.1:$TS_PORT/v1"
"$TALLY_BIN" run "$S/r1.json" > "$S/r1.txt" 2> "$S/r1.err" || { cat "$S/r1.err"; fail "the run failed"; }
check_images "$S/log1.jsonl" "server log" 52
start_testserver
job r2 "http://127.0.0.1:$TS_PORT/v1"
mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$S/r2.json" --quiet > "$S/r2.txt" 2> "$S/r2.err" || { cat "$S/r2.err"; fail "the 2-rank run failed"; }
EVID="source finish_reason prompt_tokens completion_tokens latency_ms attempts cached served_model request_id endpoint raw_response"
SKIP=(); for c in $EVID; do SKIP+=(--skip "$c"); done
"$PY" "$TALLY_SRC/tools/h5_same.py" "$S/r1.h5" "$S/r2.h5" /items /metrics /audit "${SKIP[@]}" ||
  fail "the tables differ between 1 and 2 ranks"
sed "s#$S/r[12].h5#OUT#" "$S/r1.txt" | grep -v '^tally: ' > "$S/s1.txt"
sed "s#$S/r[12].h5#OUT#" "$S/r2.txt" | grep -v '^tally: ' > "$S/s2.txt"
cmp -s "$S/s1.txt" "$S/s2.txt" || { diff "$S/s1.txt" "$S/s2.txt"; fail "the summary differs between 1 and 2 ranks"; }

# b. the summary: the counts, the CIs, the task x mode matrix; the unreadable image's units
#    (mazenav vqa, 2 seeds per model) are engine_error in their row
cat "$S/r1.txt"
hdr='^model +variant +task +mode +seeds +n +answered +missing +unparsed +engine_error +strict +strict std +legacy +legacy std$'
grep -Eq "$hdr" "$S/r1.txt" || fail "no task x mode table with the counts and CI columns in the summary"
for m in vlm-a vlm-b; do
  grep -Eq "^$m +reason +mazenav +vqa +2 +2 +0 +0 +0 +2 +0\.000 +0\.000 " "$S/r1.txt" || # no CI: nothing scored
    fail "$m: the unreadable image's units are not engine_error in the mazenav vqa row"
  grep -Eq "^$m +reason +spatialmap +vqa +2 +12 +12 +0 +[0-9]+ +0 +[01]\.[0-9]{3} \[[01]\.[0-9]{3}, [01]\.[0-9]{3}\] +[01]\.[0-9]{3} " "$S/r1.txt" ||
    fail "$m: no spatialmap vqa row with its CI"
  grep -Eq "^$m +reason +all +all +2 +28 +26 +0 +[0-9]+ +2 " "$S/r1.txt" || fail "$m: no overall row"
  grep -Eq "^$m +reason +mazenav +[01]\.[0-9]{3} +0\.000 +[01]\.[0-9]{3}$" "$S/r1.txt" || fail "$m: no mazenav tqa/vqa/vtqa matrix row"
done
grep -Eq "^strict accuracy, task x mode" "$S/r1.txt" || fail "no task x mode matrix"
grep -Eq "^model +variant +task +tqa +vqa +vtqa$" "$S/r1.txt" || fail "the matrix has no column per mode"
grep -q "engine_error=4" "$S/r1.txt" || fail "the parse statuses do not count the 4 engine errors"

# c, d. the tables
"$PY" - "$S/r1.h5" <<'PY' || fail "the tables are not grouped by mode, or the engine errors are not counted"
import math, os, sys
sys.path.insert(0, os.environ["TALLY_SRC"] + "/tools")
import tally_h5
it = tally_h5.read_table(sys.argv[1], "/items/spatialeval")
assert list(it["mode"]) == [i.split(".")[1] for i in it["id"]]
bad = it[it.id == "mazenav.vqa.7.0"]
assert len(bad) == 4 and (bad.status_strict == "engine_error").all() and (bad.correct_strict == 0).all()
assert bad.engine_error.str.contains("cannot read the image").all(), list(bad.engine_error)
assert (it[it.id != "mazenav.vqa.7.0"].engine_error == "").all()
for p in ("strict", "legacy"):
    for t in (p, p + "_across_seeds"):
        m = tally_h5.read_table(sys.argv[1], "/metrics/spatialeval/" + t)
        assert set(m["mode"]) == {"tqa", "vqa", "vtqa", "all"}, (t, set(m["mode"]))
        for (model, task, mode), g in m[m.qid == -1].groupby(["model", "task", "mode"]):
            if task == "all":
                continue
            sub = it[(it.model == model) & (it.task == task) & (it["mode"] == mode)]
            assert g.n.sum() == len(sub) and g.correct.sum() == sub["correct_" + p].sum(), (t, model, task, mode)
    a = tally_h5.read_table(sys.argv[1], "/metrics/spatialeval/%s_across_seeds" % p)
    r = a[(a.task == "mazenav") & (a["mode"] == "vqa") & (a.qid == -1)]
    assert (r.engine_error == 2).all() and (r.n == 2).all() and (r["mean"] == 0).all(), r
    o = a[a.task == "all"]
    assert (o.n == 28).all() and (o.engine_error == 2).all() and (o.answered == 26).all()
    assert ((o.ci_lo <= o.pooled_accuracy) & (o.pooled_accuracy <= o.ci_hi)).all(), o
print("tables: grouped by mode; 4 engine_error units, in n with correct 0")
PY

# f. a vision item without an image: bad input naming file:line for a server, fine for replay
cp "$S/items.jsonl" "$S/items.good"
printf '{"id": "spatialgrid.vqa.5.1", "text": "Q? Available options:\\nA. cat\\nB. dog.", "oracle_answer": "cat", "oracle_option": "A", "oracle_full_answer": "A. cat"}\n' >> "$S/items.jsonl"
job noimg "http://127.0.0.1:9/v1"
"$TALLY_BIN" run "$S/noimg.json" --dry-run="$S/noimg.jsonl" > "$S/noimg.txt" 2>&1 || { cat "$S/noimg.txt"; fail "the dry run failed"; }
grep -q "items.jsonl:15: item 'spatialgrid.vqa.5.1' is a vqa item without an 'image'" "$S/noimg.txt" ||
  { cat "$S/noimg.txt"; fail "a vision item without an image is not bad input with file:line"; }
! grep -q "spatialgrid.vqa.5.1" "$S/noimg.jsonl" || fail "a vision item without an image was sent blind"
"$TALLY_BIN" run "$S/noimg.json" --dry-run="$S/noimg.jsonl" --strict-input > "$S/noimg2.txt" 2>&1 &&
  fail "--strict-input took a vision item without an image"
# replay: the answers exist, nothing is sent: allowed; "modes" leaves vtqa out
"$PY" - "$S/items.jsonl" "$S/answers.jsonl" <<'PY'
import json, sys
with open(sys.argv[2], "w") as f:
    for line in open(sys.argv[1]):
        i = json.loads(line)["id"]
        f.write(json.dumps({"id": i, "model": "m", "seed": 0, "response": "Answer: B"}) + "\n")
PY
cat > "$S/rep.json" <<JOB
{"name": "rep", "output": "$S/rep.h5", "benchmarks": [{"benchmark": "spatialeval", "items": "items.jsonl",
  "answers": "answers.jsonl", "modes": ["tqa", "vqa"]}]}
JOB
"$TALLY_BIN" run "$S/rep.json" > "$S/rep.txt" 2> "$S/rep.err" || { cat "$S/rep.err"; fail "the replay run with modes failed"; }
grep -q "bad input lines: 0" "$S/rep.txt" || { cat "$S/rep.txt" "$S/rep.err"; fail "the left-out modes' answers were reported"; }
grep -q "spatialeval: 12 items (tqa 4, vqa 8) x 1 model/variant/seed configs = 12 units" "$S/rep.txt" ||
  { cat "$S/rep.txt"; fail "modes did not leave vtqa out"; }
# one seed: the std is undefined, "nan", never +/- 0.000
grep -Eq "^m +reason +all +all +1 +12 +12 +0 +0 +0 +0\.917 \[0\.[0-9]{3}, 1\.000\] +nan$" "$S/rep.txt" ||
  { cat "$S/rep.txt"; fail "no overall row of the replay run with 'nan' for the std of one seed"; }
for bad in '["tqa", "vqqa"]' '["vtqa", "vtqa"]' '[]' '"tqa"'; do
  sed "s/\"modes\": \[\"tqa\", \"vqa\"\]/\"modes\": $bad/" "$S/rep.json" > "$S/bad.json"
  set +e; "$TALLY_BIN" run "$S/bad.json" > "$S/bad.txt" 2>&1; rc=$?; set -e
  [ "$rc" = 2 ] && grep -q "benchmarks\[0\].modes" "$S/bad.txt" || { cat "$S/bad.txt"; fail "modes $bad: not a job error (rc $rc)"; }
done
cp "$S/items.good" "$S/items.jsonl"
grep -v '"spatialmap.vqa\|"mazenav.vqa' "$S/items.good" > "$S/items.jsonl"
sed 's/"modes": \["tqa", "vqa"\]/"modes": ["vqa"]/' "$S/rep.json" > "$S/bad.json"
set +e; "$TALLY_BIN" run "$S/bad.json" --force > "$S/bad.txt" 2>&1; rc=$?; set -e
[ "$rc" != 0 ] && grep -q "\"modes\" names 'vqa', but the items hold no usable vqa item" "$S/bad.txt" ||
  { cat "$S/bad.txt"; fail "a mode no item has is not an error (rc $rc)"; }
echo "e2e se_vision: images sent with every vision request, task x mode summary and tables, engine errors counted, 1 = 2 ranks"
