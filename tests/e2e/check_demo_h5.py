"""Checks the demo's HDF5 output like a user would: tables read into pandas in one call, metric
tables recomputed from the item rows, the audit recomputed, evidence kept for every row."""
import json
import sys

import numpy as np

path, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, src + "/tools")
import tally_h5  # noqa: E402

attrs = tally_h5.attrs(path)
job = json.loads(attrs["job"])
assert job["name"] == "demo", job
assert attrs["parsers"] == "strict,pr3,legacy", attrs["parsers"]
# Provenance: the SHA-256 of every input file the job read, keyed by its path as the job names it
# (relative paths resolve against the job file's folder).
import hashlib, os  # noqa: E402
sha = json.loads(attrs["input_sha256"])
assert len(sha) == 5, sha
for p, h in sha.items():
    f = p if os.path.isabs(p) or os.path.exists(p) else os.path.join(src, "jobs", p)
    assert hashlib.sha256(open(f, "rb").read()).hexdigest() == h, (p, h)
assert any(p.endswith("items.jsonl") for p in sha) and any(p.endswith("vqa_judgments.csv") for p in sha), sha
# ... the build's git commit and every engine's settings
import re  # noqa: E402
assert re.fullmatch(r"([0-9a-f]{40}(-dirty)?|unknown)", attrs["tally_commit"]), attrs["tally_commit"]
eng = json.loads(attrs["engines"])
assert eng["model"]["type"] == "replay" and eng["judge"]["type"] == "replay", eng
assert attrs["engine"] == "replay", attrs["engine"]
assert attrs["deflate"].startswith("libdeflate "), attrs["deflate"]  # h5_deflate.c's compress2
tables = set(tally_h5.tables(path))
for t in ["/items/spatialeval", "/metrics/spatialeval/strict", "/metrics/spatialeval/pr3",
          "/metrics/spatialeval/legacy", "/metrics/spatialeval/strict_across_seeds",
          "/audit/spatialeval"]:
    assert t in tables, (t, tables)

# Short-string columns are fixed-length strings, except one that would be mostly padding
# (h5p_ds.c h5p_is_fixed): the demo's answer_legacy is 42 bytes at most and 5 on average, so
# it is a text column (bytes + offsets); status_strict (18 at most, 3 on average) stays fixed.
import h5py  # noqa: E402
with h5py.File(path, "r") as f:
    g = f["/items/spatialeval"]
    assert "answer_legacy.bytes" in g and "answer_legacy" not in g, list(g)
    assert g["status_strict"].dtype.kind == "S" and g["answer_strict"].dtype.kind == "S"

items = tally_h5.read_table(path, "/items/spatialeval")
n_items = sum(1 for _ in open(src + "/demo/spatialeval/items.jsonl"))
assert len(items) % n_items == 0 and len(items) > 0, (len(items), n_items)

# Row order is key order: (model, prompt_variant, seed, id).
key = list(zip(items.model, items.prompt_variant, items.seed, items.id))
variant_rank = {"reason": 0, "letter": 1}
sortkey = [(m, variant_rank[v], s, i) for m, v, s, i in key]
assert sortkey == sorted(sortkey), "item rows are not in key order"

# Evidence: every row with a response keeps it and its source; statuses are known words.
known = {"ok", "no_answer", "ambiguous", "conflict", "out_of_range", "unterminated_think",
         "skipped", "no_options", "missing"}
for mode in ["strict", "pr3", "legacy"]:
    assert set(items["status_" + mode]) <= known, set(items["status_" + mode])
    assert ((items.has_response == 0) == (items["status_" + mode] == "missing")).all()
    assert (items[items["status_" + mode] != "missing"]["rule_" + mode] != "").all()
assert (items[items.has_response == 1].source.str.contains(":")).all()
# strict: correct exactly when the extracted letter is the oracle letter.
s_ok = items.answer_strict == items.oracle_option
assert (items.correct_strict == s_ok.astype(int)).all()

# Metric tables recomputed from the rows (qid -1 = all qids of the task; task and mode "all" = the
# model's overall row). Every accuracy divides by n, every unit of the group.
assert set(items["mode"]) == {"tqa", "vqa"}, set(items["mode"])
assert (items["mode"] == items.id.str.split(".").str[1]).all()
for mode in ["strict", "pr3", "legacy"]:
    m = tally_h5.read_table(path, "/metrics/spatialeval/" + mode)
    assert {"mode"} <= set(m.columns) and set(m["mode"]) == {"tqa", "vqa", "all"}, set(m["mode"])
    for _, row in m.iterrows():
        sel = ((items.model == row.model) & (items.prompt_variant == row.prompt_variant) & (items.seed == row.seed))
        if row.task != "all":
            sel &= (items.task == row.task) & (items["mode"] == row["mode"])
        else:
            assert row["mode"] == "all" and row.qid == -1
        if row.qid >= 0:
            sel &= items.qid == row.qid
        sub = items[sel]
        assert row.n == len(sub), (mode, row.to_dict())
        assert row.correct == sub["correct_" + mode].sum(), (mode, row.to_dict())
        assert abs(row.accuracy - row.correct / row.n) < 1e-15
        assert row.n_ok == (sub["status_" + mode] == "ok").sum()
        assert row.n_missing == (sub["status_" + mode] == "missing").sum()
    a = tally_h5.read_table(path, "/metrics/spatialeval/%s_across_seeds" % mode)
    for _, row in a.iterrows():
        per = m[(m.model == row.model) & (m.prompt_variant == row.prompt_variant)
                & (m.task == row.task) & (m["mode"] == row["mode"]) & (m.qid == row.qid)].sort_values("seed")
        assert row.n_seeds == len(per)
        assert row.n == per.n.sum() and row.missing == per.n_missing.sum()
        assert row.answered == row.n - row.missing - row.engine_error
        assert row.unparsed == row.answered - per.n_ok.sum()
        assert abs(row["mean"] - per.accuracy.mean()) < 1e-12
        k = len(per)
        want_sd = np.std(per.accuracy.values, ddof=1) if k > 1 else float("nan")
        assert (np.isnan(row["std"]) and k == 1) or abs(row["std"] - want_sd) < 1e-12, (row.to_dict(), want_sd)
        want_se = want_sd / np.sqrt(k) if k > 1 else float("nan")
        assert (np.isnan(row.se) and k == 1) or abs(row.se - want_se) < 1e-12, (row.to_dict(), want_se)
        if row.qid != -1:
            assert np.isnan(row.ci_lo) and np.isnan(row.ci_hi)
            continue
        # the CI's clusters: the row's items, each with its seeds (num = its correct units over the
        # seeds, den = its units); the bounds hold the estimate (test_se_tables checks the draws)
        isel = (items.model == row.model) & (items.prompt_variant == row.prompt_variant)
        if row.task != "all":
            isel &= (items.task == row.task) & (items["mode"] == row["mode"])
        g = items[isel].groupby("id", sort=True)["correct_" + mode]
        num, den = g.sum().values.astype(float), g.count().values.astype(float)
        assert den.sum() == row.n
        if len(num) < 2:
            assert np.isnan(row.ci_lo)
            continue
        assert row.ci_lo <= row.pooled_accuracy <= row.ci_hi or len(set(num / den)) == 1, row.to_dict()
        assert 0 <= row.ci_lo <= row.ci_hi <= 1, row.to_dict()

audit = tally_h5.read_table(path, "/audit/spatialeval")
alln = audit[audit.task == "all"].iloc[0]
assert alln.n == len(items)
for mode in ["strict", "pr3", "legacy"]:
    assert abs(alln["accuracy_" + mode] - items["correct_" + mode].mean()) < 1e-12
d = (items.correct_strict != items.correct_legacy).sum()
assert alln.disagree_strict_legacy == d, (alln.disagree_strict_legacy, d)
assert alln.only_legacy_strict == ((items.correct_legacy == 1) & (items.correct_strict == 0)).sum()
# The demo's correlation study: 2 groups x 3 metrics x 2 statistics, CIs around the estimates.
summ = tally_h5.read_table(path, "/stats/vqa_metrics_vs_human/summary")
assert len(summ) == 12, len(summ)
assert sorted(set(summ.group)) == ["dataset=okvqa", "dataset=vqav2"]
assert ((summ.ci_lo <= summ.estimate) & (summ.estimate <= summ.ci_hi)).all(), summ
cmp = tally_h5.read_table(path, "/stats/vqa_metrics_vs_human/compare")
assert len(cmp) == 12 and ((cmp.p_boot >= 0) & (cmp.p_boot <= 1)).all()
res = tally_h5.read_table(path, "/stats/vqa_metrics_vs_human/resamples")
assert len(res) == 2 * 1000

print("check_demo_h5: %d item rows, %d tables: ok" % (len(items), len(tables)))
