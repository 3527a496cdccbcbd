#!/usr/bin/env bash
# tally merge: the runs of a sweep as one file that equals a single run over all of them.
#  1. SpatialEval split by seeds ({0}, {1, 2}): merged on 1, 2 and 4 ranks, every dataset equals
#     one run over all three seeds (studies included), and a merge run twice gives the same bytes;
#  2. MT-Bench-101 (two stages: answers and judgments) and VQA with LAVE split by model: the
#     merged file equals one run of both models (the between-model tables appear only there);
#  3. an input that was interrupted (kill -9 on 2 ranks) and resumed on 4 merges the same;
#  4. overlap: a unit two inputs hold is refused (exit 2, naming both); --overlap first / last /
#     identical merge it, and identical refuses copies that differ;
#  5. refusals, each exit 2 with nothing written: a setting that differs (named), an input
#     without its journal, items changed since the run, the output being an input, a typo in
#     --overlap;
#  6. sweep cells merge to the whole sweep; 7. some cells of a sweep are refused unless --partial,
#     and a partial output says so (attributes, summary); 8. jobs in different folders merge when
#     their paths name the same files; --break-lock; a file that is not a tally output is
#     "cannot open FILE: why" (merge and compare), without HDF5's diagnostics.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
MPI=(mpirun --oversubscribe)
cd "$WORK"
# job variants in one folder ($WORK), the demo's relative paths made absolute
variant() { # SRC_JOB OUT_NAME PYTHON_EXPR_ON_j
  sed "s#\"\\.\\./demo/#\"$TALLY_SRC/demo/#g" "$1" > "$WORK/src.json"
  "$PY" - "$WORK/src.json" "$WORK/$2" "$3" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["output"] = sys.argv[2] + ".h5"
b = j["benchmarks"][0]
exec(sys.argv[3])
json.dump(j, open(sys.argv[2] + ".json", "w"), indent=1)
PY
}
same() { "$PY" "$TALLY_SRC/tools/h5_same.py" "$1" "$2" / || fail "$3"; }

# 1. seeds
variant "$TALLY_SRC/jobs/demo.json" all 'b["seeds"] = [0, 1, 2]'
variant "$TALLY_SRC/jobs/demo.json" s0 'b["seeds"] = [0]'
variant "$TALLY_SRC/jobs/demo.json" s12 'b["seeds"] = [1, 2]'
"$TALLY_BIN" run all.json --quiet --keep-journal > /dev/null || fail "the whole run failed"
cp all.h5 nj.h5 # the same output without its journal
"$TALLY_BIN" run s0.json --quiet --keep-journal > /dev/null || fail "seed 0 failed"
"${MPI[@]}" -n 2 "$TALLY_BIN" run s12.json --quiet --keep-journal > /dev/null || fail "seeds 1-2 failed"
for n in 1 2 4; do
  "${MPI[@]}" -n $n "$TALLY_BIN" merge s0.h5 s12.h5 -o m$n.h5 --quiet > m$n.txt 2> m$n.err ||
    { cat m$n.err; fail "merge on $n ranks failed"; }
  same all.h5 m$n.h5 "the merge on $n ranks differs from one run over every seed"
done
[ ! -e m1.h5.merge-job.json ] || fail "the merged job file was left behind"
[ ! -e m1.h5.journal ] || fail "a merge left a journal of its own"
"$PY" - <<'PY' || fail "the merged file's attributes"
import h5py, json
f = h5py.File("m1.h5", "r")
j = json.loads(f.attrs["job"])
assert sorted(j["benchmarks"][0]["seeds"]) == [0, 1, 2], j["benchmarks"][0]
assert f.attrs["units"] == 252 and f.attrs["units_resumed"] == 252 and f.attrs["engine_calls"] == 0, dict(f.attrs)
PY
cp m1.h5 m1_first.h5
set +e
"$TALLY_BIN" merge s0.h5 s12.h5 -o m1.h5 --quiet > /dev/null 2> again.err; rc=$?
set -e
[ $rc -eq 2 ] && grep -q -- "--force" again.err || { cat again.err; fail "merging over a finished output without --force: exit $rc"; }
cmp -s m1.h5 m1_first.h5 || fail "a refused merge changed the output"
"$TALLY_BIN" merge s0.h5 s12.h5 -o m1.h5 --quiet --force > /dev/null 2>&1 || fail "merging again over the output (--force) failed"
cmp -s m1.h5 m1_first.h5 || fail "merging twice gives different bytes"
# tally compare on the merged sweep says what it says on the single run
"$TALLY_BIN" compare all.h5 --models toy-llm-b,toy-vlm-a --resamples 300 | sed "s#all.h5#RUN#" > c_all.txt ||
  fail "compare on the single run failed"
"$TALLY_BIN" compare m2.h5 --models toy-llm-b,toy-vlm-a --resamples 300 | sed "s#m2.h5#RUN#" > c_m2.txt ||
  fail "compare on the merged file failed"
cmp -s c_all.txt c_m2.txt || { diff c_all.txt c_m2.txt; fail "compare differs between the merged file and one run"; }
grep -q "mcnemar\|McNemar" c_m2.txt || { cat c_m2.txt; fail "compare printed no McNemar test"; }
echo "merge: seeds {0} + {1,2} on 1, 2 and 4 ranks equal one run; idempotent; compare agrees on it"

# 2. two-stage benchmarks, split by model
for bn in mtbench101 vqa; do
  job="$TALLY_SRC/jobs/$bn-demo.json"
  case $bn in mtbench101) A=demo-chat-a; B=demo-chat-b ;; vqa) A=demo-vlm-a; B=demo-vlm-b ;; esac
  variant "$job" ${bn}_all 'pass'
  variant "$job" ${bn}_a "b['models'] = ['$A']"
  variant "$job" ${bn}_b "b['models'] = ['$B']"
  "$TALLY_BIN" run ${bn}_all.json --quiet > /dev/null || fail "$bn: the whole run failed"
  "$TALLY_BIN" run ${bn}_a.json --quiet --keep-journal > /dev/null || fail "$bn: model a failed"
  "$TALLY_BIN" run ${bn}_b.json --quiet --keep-journal > /dev/null || fail "$bn: model b failed"
  "${MPI[@]}" -n 2 "$TALLY_BIN" merge ${bn}_b.h5 ${bn}_a.h5 -o ${bn}_m.h5 --quiet > ${bn}_m.txt 2> ${bn}_m.err ||
    { cat ${bn}_m.err; fail "$bn: merge failed"; }
  same ${bn}_all.h5 ${bn}_m.h5 "$bn: the merge differs from one run of both models"
done
echo "merge: mtbench101 and vqa (judge stages) split by model equal one run"

# 3. an interrupted and resumed input
slow='j.pop("engines", None); j["engine"] = {"type": "replay", "latency_ms": 50}'
variant "$TALLY_SRC/jobs/demo.json" k12 "b['seeds'] = [1, 2]; $slow"
variant "$TALLY_SRC/jobs/demo.json" s0k "b['seeds'] = [0]; $slow"
"$TALLY_BIN" run s0k.json --quiet --keep-journal > /dev/null || fail "seed 0 (latency) failed"
setsid "${MPI[@]}" -n 2 "$TALLY_BIN" run k12.json --quiet --keep-journal > /dev/null 2>&1 &
SID=$!
for _ in $(seq 200); do
  [ "$(cat k12.h5.journal/*.jsonl 2>/dev/null | wc -l)" -gt 40 ] && break
  sleep 0.05
done
kill_session "$SID"
[ ! -e k12.h5 ] || fail "the killed run finished before the kill (make the latency longer)"
"${MPI[@]}" -n 4 "$TALLY_BIN" run k12.json --quiet --keep-journal --resume --break-lock > k12.out 2> k12.err || { cat k12.err; fail "the resume failed"; }
"$TALLY_BIN" merge s0k.h5 k12.h5 -o mk.h5 --quiet > /dev/null 2> mk.err || { cat mk.err; fail "merging a resumed input failed"; }
same all.h5 mk.h5 "a resumed input merges differently"
echo "merge: an input killed and resumed merges the same"

# 4. overlap
set +e
"$TALLY_BIN" merge s0.h5 all.h5 -o o.h5 --quiet > /dev/null 2> o.err; rc=$?
set -e
[ $rc -eq 2 ] || fail "an overlap gave exit $rc, not 2"
grep -q "both hold spatialeval item" o.err && grep -q -- "--overlap" o.err || { cat o.err; fail "the overlap message"; }
[ ! -e o.h5 ] || fail "a refused merge wrote its output"
for p in first last identical; do
  "$TALLY_BIN" merge s0.h5 all.h5 -o o_$p.h5 --overlap $p --quiet > /dev/null 2> o_$p.err || { cat o_$p.err; fail "--overlap $p failed"; }
  grep -q "108 units held by more than one input" o_$p.err || { cat o_$p.err; fail "--overlap $p: no count"; }
  same all.h5 o_$p.h5 "--overlap $p differs from one run"
done
# copies that differ: seed 0 answered otherwise
"$PY" - <<'PY'
import json
src = json.load(open("s0.json"))
ans = src["benchmarks"][0]["answers"]
lines = [json.loads(l) for l in open(ans[0])]
for d in lines:
    if d.get("seed") == 0 and d["model"] == "toy-llm-b":
        d["response"] = "I cannot tell."
with open("alt_answers.jsonl", "w") as f:
    for d in lines:
        f.write(json.dumps(d) + "\n")
src["benchmarks"][0]["answers"] = ["alt_answers.jsonl"] + ans[1:]
src["output"] = "alt.h5"
json.dump(src, open("alt.json", "w"))
PY
"$TALLY_BIN" run alt.json --quiet --keep-journal > /dev/null || fail "the other seed-0 run failed"
set +e
"$TALLY_BIN" merge alt.h5 s0.h5 -o oi.h5 --overlap identical --quiet > /dev/null 2> oi.err; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "with different replies" oi.err || { cat oi.err; fail "identical took differing copies (exit $rc)"; }
"$TALLY_BIN" merge alt.h5 s12.h5 s0.h5 -o ol.h5 --overlap last --quiet > /dev/null 2>&1 || fail "--overlap last (3 inputs)"
same all.h5 ol.h5 "--overlap last did not keep the last input's copy"
echo "merge: overlaps refused by default; first, last and identical do what they say"

# 5. refusals
refuse() { # NAME PATTERN ARGS...: exit 2, the pattern in stderr, no output
  local name=$1 pat=$2
  shift 2
  set +e
  "$TALLY_BIN" merge "$@" > "r_$name.out" 2> "r_$name.err"
  local rc=$?
  set -e
  [ $rc -eq 2 ] || { cat "r_$name.err"; fail "$name: exit $rc, not 2"; }
  grep -q -- "$pat" "r_$name.err" || { cat "r_$name.err"; fail "$name: the message lacks '$pat'"; }
  [ ! -e r.h5 ] || fail "$name: a refused merge wrote its output"
}
variant "$TALLY_SRC/jobs/demo.json" p12 'b["seeds"] = [1, 2]; b["parsers"] = ["strict", "pr3"]'
"$TALLY_BIN" run p12.json --quiet --keep-journal > /dev/null || fail "the parsers variant failed"
refuse settings "benchmarks\[spatialeval\].parsers" s0.h5 p12.h5 -o r.h5
refuse nojournal "kept no journal" s0.h5 nj.h5 -o r.h5
refuse output "is the same file as an input" s0.h5 s12.h5 -o s0.h5
refuse typo "overlap" s0.h5 s12.h5 -o r.h5 --overlap frist
refuse twice "given twice" s0.h5 ./s0.h5 -o r.h5
mkdir -p items && cp "$TALLY_SRC/demo/spatialeval/items.jsonl" items/items.jsonl
variant "$TALLY_SRC/jobs/demo.json" i0 "b['seeds'] = [0]; b['items'] = ['$WORK/items/items.jsonl']"
variant "$TALLY_SRC/jobs/demo.json" i12 "b['seeds'] = [1, 2]; b['items'] = ['$WORK/items/items.jsonl']"
"$TALLY_BIN" run i0.json --quiet --keep-journal > /dev/null && "$TALLY_BIN" run i12.json --quiet --keep-journal > /dev/null ||
  fail "the runs on copied items failed"
"$TALLY_BIN" merge i0.h5 i12.h5 -o r_ok.h5 --quiet > /dev/null 2>&1 || fail "the merge on copied items failed"
echo >> items/items.jsonl
refuse items "changed since" i0.h5 i12.h5 -o r.h5
echo "merge: settings, journals, items, outputs and options checked"

# 6. sweep cells: `tally run --cell K` runs cell K = (model K / n_seeds, seed K % n_seeds); the
#    cells merged equal the whole sweep; a cell past the end, or a job that is not a sweep, is exit 2
variant "$TALLY_SRC/jobs/demo.json" sweep 'b["models"] = ["toy-llm-b", "toy-vlm-a"]; b["seeds"] = [0, 1, 2]'
"$TALLY_BIN" run sweep.json --quiet > /dev/null || fail "the sweep in one run failed"
for k in 0 1 2 3 4 5; do
  "$TALLY_BIN" run sweep.json --cell $k --out cell$k.h5 --keep-journal --quiet > /dev/null || fail "cell $k failed"
done
"$PY" - <<'PY' || fail "a cell ran the wrong (model, seed)"
import h5py, sys
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
for k in range(6):
    t = tally_h5.read_table("cell%d.h5" % k, "/items/spatialeval")
    assert set(t.model) == {["toy-llm-b", "toy-vlm-a"][k // 3]} and set(t.seed) == {k % 3}, (k, set(t.model), set(t.seed))
    assert h5py.File("cell%d.h5" % k, "r").attrs["sweep_cell"] == k
PY
"$TALLY_BIN" merge cell*.h5 -o cells.h5 --quiet > /dev/null 2>&1 || fail "merging the cells failed"
same sweep.h5 cells.h5 "the merged cells differ from the sweep in one run"
set +e
"$TALLY_BIN" run sweep.json --cell 6 --out c6.h5 > /dev/null 2> c6.err; rc6=$?
"$TALLY_BIN" run all.json --cell 0 --out c0.h5 > /dev/null 2> c0.err; rc0=$?
set -e
[ $rc6 -eq 2 ] && grep -q "has 6 cells" c6.err || { cat c6.err; fail "--cell 6 of 6: exit $rc6"; }
[ $rc0 -eq 2 ] && grep -q "needs a sweep" c0.err || { cat c0.err; fail "--cell on a job that is not a sweep: exit $rc0"; }
echo "merge: sweep cells run their (model, seed), merge to the whole sweep; bad cells refused"

# 7. a partial sweep: some cells are refused unless --partial, naming the missing ones; a partial
#    output says so in its root attributes and its summary; the whole sweep records cells_merged
set +e
"$TALLY_BIN" merge cell0.h5 cell2.h5 cell4.h5 -o part.h5 --quiet > part.out 2> part.err; rc=$?
set -e
[ $rc -eq 2 ] || { cat part.err; fail "a merge of 3 of 6 cells: exit $rc, not 2"; }
grep -q "3 of the sweep's 6 cells" part.err && grep -q 'missing: 1 (model "toy-llm-b", seed 1)' part.err &&
  grep -q -- "--partial" part.err || { cat part.err; fail "the refusal does not name the missing cells and --partial"; }
[ ! -e part.h5 ] || fail "a refused partial merge wrote its output"
"$TALLY_BIN" merge cell0.h5 cell2.h5 cell4.h5 -o part.h5 --partial --quiet > part.out 2> part.err ||
  { cat part.err; fail "merge --partial failed"; }
head -n 1 part.out | grep -q "^PARTIAL merge: 3 of the sweep's 6 cells" || { cat part.out; fail "the summary does not say partial"; }
grep -q "PARTIAL" part.err || { cat part.err; fail "--quiet hid that the output is partial"; }
"$PY" - <<'PY' || fail "the partial output's attributes"
import h5py
f = h5py.File("part.h5", "r")
a = f.attrs
assert a["partial"] == 1 and a["cells_merged"] == "0,2,4" and a["cells_missing"] == "1,3,5", dict(a)
g = h5py.File("cells.h5", "r").attrs
assert g["partial"] == 0 and g["cells_merged"] == "0,1,2,3,4,5" and g["cells_missing"] == "", dict(g)
PY
set +e
"$TALLY_BIN" merge cell0.h5 s0.h5 -o mix.h5 --quiet > /dev/null 2> mix.err; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "is not" mix.err || { cat mix.err; fail "a cell merged with a whole run: exit $rc"; }
echo "merge: a partial sweep is refused without --partial and marked partial with it"

# 8. jobs in different folders: merged when every path names the same file (absolute paths, or
#    relative ones that resolve to the same files); refused when they name different files
mkdir -p d1 d2
for d in d1 d2; do cp -r "$TALLY_SRC/demo/spatialeval" $d/se; done
variant "$TALLY_SRC/jobs/demo.json" d1/a 'b["seeds"] = [0]'
variant "$TALLY_SRC/jobs/demo.json" d2/b 'b["seeds"] = [1, 2]'
"$TALLY_BIN" run d1/a.json --out d1/a.h5 --quiet --keep-journal > /dev/null && "$TALLY_BIN" run d2/b.json --out d2/b.h5 --quiet --keep-journal > /dev/null ||
  fail "the runs in two folders failed"
"$TALLY_BIN" merge d1/a.h5 d2/b.h5 -o dirs.h5 --quiet > /dev/null 2> dirs.err || { cat dirs.err; fail "jobs in two folders with absolute paths: merge refused"; }
same all.h5 dirs.h5 "the merge of jobs in two folders differs from one run"
# relative paths: the same relative names, other files (d1/se vs d2/se, the items of d2 changed)
rel() { # DIR NAME SEEDS
  "$PY" - "$1" "$2" "$3" "$TALLY_SRC/jobs/demo.json" <<'PY'
import json, sys
d, name, seeds, src = sys.argv[1:]
j = json.load(open(src))
j.pop("studies", None)
j["output"] = name + ".h5"
b = j["benchmarks"][0]
b["items"] = ["se/items.jsonl"]
b["answers"] = ["se/answers.jsonl"]
b["seeds"] = json.loads(seeds)
json.dump(j, open(d + "/" + name + ".json", "w"))
PY
}
rel d1 r0 '[0]'
rel d2 r12 '[1, 2]'
(cd d1 && "$TALLY_BIN" run r0.json --quiet --keep-journal > /dev/null) && (cd d2 && "$TALLY_BIN" run r12.json --quiet --keep-journal > /dev/null) ||
  fail "the relative-path runs failed"
"$TALLY_BIN" merge d1/r0.h5 d2/r12.h5 -o rel_same.h5 --quiet > /dev/null 2> rel.err && { fail "relative paths naming other files (d1/se, d2/se) merged"; } || true
grep -q "differs" rel.err || { cat rel.err; fail "relative paths naming other files: the message"; }
echo "merge: jobs in other folders compare by the files their paths name"

# --break-lock: a lock left by a run on another host
printf 'tally output lock\nhost=elsewhere-node-17\npid=4242\nstarted=x\nstarted_epoch=%s\n' "$(date +%s)" > bl.h5.lock
set +e
"$TALLY_BIN" merge s0.h5 s12.h5 -o bl.h5 --quiet > /dev/null 2> bl.err; rc=$?
set -e
[ $rc -eq 2 ] && grep -q -- "--break-lock" bl.err || { cat bl.err; fail "a merge onto a lock from another host: exit $rc"; }
"$TALLY_BIN" merge s0.h5 s12.h5 -o bl.h5 --quiet --break-lock > /dev/null 2> bl.err || { cat bl.err; fail "tally merge --break-lock"; }
[ ! -e bl.h5.lock ] && [ -s bl.h5 ] || fail "merge --break-lock left its lock or wrote nothing"

# files that are not tally outputs: one line "cannot open FILE: why", exit 1, no HDF5 diagnostics
head -c 20000 all.h5 > trunc.h5
mkdir -p afolder
: > empty.h5
"$PY" -c 'import h5py; h5py.File("plain.h5", "w").create_dataset("x", data=[1])'
for bad in trunc.h5 s0.json afolder missing.h5 empty.h5 plain.h5; do
  for cmd in merge compare; do
    set +e
    if [ $cmd = merge ]; then "$TALLY_BIN" merge s0.h5 $bad -o bad.h5 --quiet > /dev/null 2> bad.err; rc=$?
    else "$TALLY_BIN" compare $bad --models toy-llm-b,toy-vlm-a > /dev/null 2> bad.err; rc=$?; fi
    set -e
    [ $rc -ne 0 ] || fail "$cmd on $bad: exit 0"
    grep -q "cannot open '$bad': " bad.err || { cat bad.err; fail "$cmd on $bad: no 'cannot open' line"; }
    [ "$(grep -c . bad.err)" = 1 ] || { cat bad.err; fail "$cmd on $bad: more than one line"; }
    ! grep -q "HDF5-DIAG" bad.err || fail "$cmd on $bad: HDF5's diagnostics reached the terminal"
  done
done
grep -q "truncated or damaged" <("$TALLY_BIN" compare trunc.h5 --models a,b 2>&1) || fail "a truncated file is not called truncated"
echo "merge: --break-lock; files that are not tally outputs are 'cannot open' with the reason"
