#!/usr/bin/env python3
# The tables of bench/correlate_bench.sh: one CSV per shape of data (columns human,m1,m2,m3,m4),
# n = 22,050 items (the LAVE test set's size), numpy's generator with a fixed seed.
#   lucky    the original benchmark: 3 human levels; m1 VQA accuracy (5 levels), m2 a soft score
#            rounded to 2 decimals, m3 LAVE (3 levels), m4 a continuous score (every value held by
#            exactly one human level: the shape the old AVX2 path needed)
#   clipped  m2 a soft accuracy clipped to [0, 1] and not rounded: wide, with ~10,000 items tied
#            at 0.0 and 1.0 across every human level (heavy cells)
#   discrete every metric discrete (m4 an exact match, 2 levels)
#   sparse   m4 continuous with sparse ties: 1% of the items copy another item's value (ties of
#            2 items, mostly across human levels)
#   h5       5 human levels, m2 clipped as in `clipped`, m4 continuous
#   h8       8 human levels, likewise
# usage: correlate_shapes.py OUTDIR
import sys
import numpy as np

out = sys.argv[1]
n = 22050


def table(name, h, cols):
    np.savetxt(f"{out}/{name}.csv", np.column_stack([h] + cols), delimiter=",",
               header="human,m1,m2,m3,m4", comments="", fmt="%.17g")


def base(rng, levels):
    h = rng.integers(0, levels, n) / (levels - 1)
    vqa = np.choose(rng.integers(0, 5, n), [0, 0.3, 0.6, 0.9, 1.0])
    soft = np.clip(h + rng.normal(0, 0.5, n), 0, 1)
    lave = np.clip(np.round(h * 2 + rng.normal(0, 0.7, n)), 0, 2) / 2
    cont = h + rng.normal(0, 0.6, n)
    return h, vqa, soft, lave, cont


rng = np.random.default_rng(2024)
h, vqa, soft, lave, cont = base(rng, 3)
table("lucky", h, [vqa, soft.round(2), lave, cont])
table("clipped", h, [vqa, soft, lave, cont])
em = (h + rng.normal(0, 0.5, n) > 0.5).astype(float)
table("discrete", h, [vqa, soft.round(2), lave, em])
sp = cont.copy()
src = rng.choice(n, n // 100, replace=False); dst = rng.choice(n, n // 100, replace=False)
sp[dst] = cont[src]
table("sparse", h, [vqa, soft.round(2), lave, sp])
for L in (5, 8):
    h, vqa, soft, lave, cont = base(np.random.default_rng(2024 + L), L)
    table(f"h{L}", h, [vqa, soft, lave, cont])
