#!/usr/bin/env python3
"""make_demo.py - writes tally's bundled SpatialEval demo fixture, deterministically.

Run from anywhere with /usr/bin/python3 (standard library only):

    /usr/bin/python3 tools/make_demo.py            # (re)writes demo/spatialeval/*.jsonl
    /usr/bin/python3 tools/make_demo.py --check    # writes, then validates the files

Everything here was written for the project: the maps, mazes, grids and scenes are generated
from a fixed seed by this script; no benchmark row is copied. The item *format* follows the
SpatialEval benchmark (rows {id, text, oracle_answer, oracle_option, oracle_full_answer};
options embedded in `text` after "Available options:\\n", the last option carrying a trailing
"."; no trailing newline). The Spatial-Map TQA text layout follows the benchmark exactly; the
Maze-Nav / Spatial-Grid / Spatial-Real TQA layouts are our own approximations (the real rows
were not available). Every oracle is computed from the generated world, never typed in.

Outputs (demo/spatialeval/):
  items.jsonl                  36 items (all four tasks, every qid, TQA and a few VQA ids; each
                               VQA item names its picture in "image")
  images/*.png                 the VQA items' pictures, drawn from the generated world (maze and
                               grid cells, the map's objects as coloured squares; no labels)
  answers.jsonl                2 toy models x 3 seeds x 36 items, replay-engine format
  reference_eval_output.jsonl  8 lines of the ORIGINAL evaluator's input format (third model)
  answers_bad.jsonl            3 deliberately broken lines (for tests only)

The deliberate parser-audit cases are listed in DELIBERATE below and in demo/README.md.
Randomness comes from a local SplitMix64 generator keyed by label strings, so the output
does not depend on Python's `random` module or on PYTHONHASHSEED.
"""
import hashlib
import json
import os
import struct
import sys
import zlib

MASK = (1 << 64) - 1
REASON_SUFFIX = ("\nFirst, provide a concise answer in one sentence. Then, elaborate on the "
                 "reasoning behind your answer in a detailed, step-by-step explanation.")
THIRD_MODEL = "toy-vlm-c"  # model of reference_eval_output.jsonl (not written into its lines)


class Rng:
    """SplitMix64, seeded from sha256(label)."""

    def __init__(self, label):
        self.s = int.from_bytes(hashlib.sha256(label.encode()).digest()[:8], "little")

    def u64(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n):
        lim = (1 << 64) - ((1 << 64) % n)
        while True:
            v = self.u64()
            if v < lim:
                return v % n

    def chance(self, p):
        return self.u64() < int(p * (1 << 64))

    def choice(self, seq):
        return seq[self.below(len(seq))]

    def shuffle(self, seq):
        for i in range(len(seq) - 1, 0, -1):
            j = self.below(i + 1)
            seq[i], seq[j] = seq[j], seq[i]
        return seq

    def sample(self, seq, k):
        return self.shuffle(list(seq))[:k]


LETTERS = "ABCDEFGH"
ASK = " Please answer the following multiple-choice question based on the provided information. "
ASK_IMG = " Please answer the following multiple-choice question based on the provided image. "


def options_block(opts):
    return "Available options:\n" + "\n".join(
        "%s. %s" % (LETTERS[i], t) for i, t in enumerate(opts)) + "."


def make_item(iid, stem, question, opts, correct, meta):
    """One benchmark row plus generator-side metadata (kept out of the file)."""
    text = stem + question + " " + options_block(opts)
    row = {"id": iid, "text": text, "oracle_answer": opts[correct],
           "oracle_option": LETTERS[correct],
           "oracle_full_answer": LETTERS[correct] + ". " + opts[correct]}
    meta = dict(meta, opts=list(opts), correct=correct, task=iid.split(".")[0],
                mode=iid.split(".")[1], qid=int(iid.split(".")[-1]))
    return row, meta


def shuffled_options(rng, answer, distractors):
    opts = [answer] + list(distractors)
    rng.shuffle(opts)
    return opts, opts.index(answer)


# ---------------------------------------------------------------- Spatial-Map ----------------
# Object names invented for this fixture; no name is a substring of another, none contains a
# direction word or the word "is".
MAP_NAMES = [
    "Amber Anchors", "Bramble Books", "Cobalt Clocks", "Dune Donuts", "Ember Easels",
    "Fjord Fabrics", "Granite Games", "Harbor Hats", "Indigo Inks", "Juniper Jams",
    "Kestrel Kites", "Lotus Lamps", "Maple Mugs", "Nimbus Notes", "Otter's Optics",
    "Pebble Pottery", "Quartz Quills", "Robin's Rugs", "Saffron Soaps", "Tundra Teas",
    "Umber Umbrellas", "Violet Vases", "Willow Woodworks", "Yarrow Yarns",
]
DIRS = ["Northeast", "Northwest", "Southeast", "Southwest"]


def direction(a, b):
    """Direction of point a relative to point b (x grows east, y grows north)."""
    ns = "North" if a[1] > b[1] else "South"
    ew = "east" if a[0] > b[0] else "west"
    return ns + ew


def closure(n, pairs):
    """Transitive closure of a strict order given as (lo, hi) pairs over 0..n-1."""
    less = [[False] * n for _ in range(n)]
    for lo, hi in pairs:
        less[lo][hi] = True
    for k in range(n):
        for i in range(n):
            if less[i][k]:
                for j in range(n):
                    if less[k][j]:
                        less[i][j] = True
    return less


def build_map(rng, n_obj=6):
    names = rng.sample(MAP_NAMES, n_obj)
    xs = rng.shuffle(list(range(n_obj)))
    ys = rng.shuffle(list(range(n_obj)))
    pos = [(xs[i], ys[i]) for i in range(n_obj)]
    groups, xpairs, ypairs = [names[0] + " is in the map."], [], []
    for i in range(1, n_obj):
        refs = [0] if i == 1 else rng.sample(range(i), 2)
        sents = []
        for j in refs:
            sents.append("%s is to the %s of %s." % (names[i], direction(pos[i], pos[j]), names[j]))
            xpairs.append((i, j) if pos[i][0] < pos[j][0] else (j, i))
            ypairs.append((i, j) if pos[i][1] < pos[j][1] else (j, i))
        groups.append(" ".join(sents))
    xl, yl = closure(n_obj, xpairs), closure(n_obj, ypairs)

    def known(a, b):  # is the direction of a relative to b deducible from the sentences?
        return (xl[a][b] or xl[b][a]) and (yl[a][b] or yl[b][a])

    desc = "  ".join(groups)
    return names, pos, known, desc


def map_items(rng, instance, mode, want):
    """Three items (q0..q2) for one map; `want` is a predicate on (rows, metas) for retries."""
    for _ in range(50000):
        names, pos, known, desc = build_map(rng)
        n = len(names)
        if mode == "tqa":
            stem = "Consider a map with multiple objects: \n" + desc + " \n\n" + ASK
        else:
            stem = ("The figure represents a map with several labelled objects; north points "
                    "up." + ASK_IMG)
        pairs = [(a, b) for a in range(n) for b in range(n) if a != b and known(a, b)]
        a, b = rng.choice(pairs)
        dq0 = direction(pos[a], pos[b])
        opts, c = shuffled_options(rng, dq0, [d for d in DIRS if d != dq0])
        q0 = make_item("spatialmap.%s.%s.0" % (mode, instance), stem,
                       "In which direction is %s relative to %s?" % (names[a], names[b]),
                       opts, c, {"X": names[a], "Y": names[b]})
        # q1: exactly one answer among the options, all option relations deducible.
        q1c = []
        for x in range(n):
            others = [o for o in range(n) if o != x and known(o, x)]
            for d1 in DIRS:
                hits = [o for o in others if direction(pos[o], pos[x]) == d1]
                miss = [o for o in others if direction(pos[o], pos[x]) != d1]
                if len(hits) == 1 and len(miss) >= 3:
                    q1c.append((x, d1, hits[0], miss))
        # q2: every relation to x2 deducible, so the count is determined by the sentences.
        q2c = [x for x in range(n) if all(known(o, x) for o in range(n) if o != x)]
        if not q1c or not q2c:
            continue
        x, d1, hit, miss = rng.choice(q1c)
        opts, c = shuffled_options(rng, names[hit], [names[o] for o in rng.sample(miss, 3)])
        q1 = make_item("spatialmap.%s.%s.1" % (mode, instance), stem,
                       "Which object is in the %s of %s?" % (d1, names[x]), opts, c,
                       {"X": names[x], "D": d1})
        x2, d2 = rng.choice(q2c), rng.choice(DIRS)
        cnt = sum(1 for o in range(n) if o != x2 and direction(pos[o], pos[x2]) == d2)
        opts, c = shuffled_options(rng, str(cnt),
                                   [str(v) for v in rng.sample([v for v in range(6) if v != cnt], 3)])
        q2 = make_item("spatialmap.%s.%s.2" % (mode, instance), stem,
                       "How many objects are in the %s of %s?" % (d2, names[x2]), opts, c,
                       {"X": names[x2], "D": d2})
        got = [q0, q1, q2]
        if want(got):
            for _, m in got:
                m["world"] = pos
            return got
    raise SystemExit("map %s: constraints not met" % instance)


# ---------------------------------------------------------------- Maze-Nav -------------------
MAZE_Q2 = [  # (question, phrase used in answers, truth(S, E) with (row, col) positions)
    ("Is the exit (E) directly below the starting point (S), with no horizontal displacement?",
     "directly below", lambda s, e: e[0] > s[0] and e[1] == s[1]),
    ("Is the exit (E) directly to the left of the starting point (S), with no vertical "
     "displacement?", "directly to the left of", lambda s, e: e[0] == s[0] and e[1] < s[1]),
    ("Is the exit (E) to the top right of the starting point (S)?", "to the top right of",
     lambda s, e: e[0] < s[0] and e[1] > s[1]),
    ("Is the exit (E) to the bottom left of the starting point (S)?", "to the bottom left of",
     lambda s, e: e[0] > s[0] and e[1] < s[1]),
]
STEPS = [(-1, 0), (0, 1), (1, 0), (0, -1)]  # up, right, down, left (clockwise order)


def build_path(rng):
    """Self-avoiding, non-touching walk on the 5x5 interior of a 7x7 maze."""
    cur = (1 + rng.below(5), 1 + rng.below(5))
    path, target = [cur], 6 + rng.below(7)
    while len(path) < target:
        cands = []
        for dr, dc in STEPS:
            nxt = (cur[0] + dr, cur[1] + dc)
            if not (1 <= nxt[0] <= 5 and 1 <= nxt[1] <= 5) or nxt in path:
                continue
            touch = [p for p in path[:-1]
                     if abs(p[0] - nxt[0]) + abs(p[1] - nxt[1]) == 1]
            if not touch:
                cands.append(nxt)
        if not cands:
            break
        cur = rng.choice(cands)
        path.append(cur)
    return path


def turns(path):
    heads = [STEPS.index((b[0] - a[0], b[1] - a[1])) for a, b in zip(path, path[1:])]
    right = sum(1 for h0, h1 in zip(heads, heads[1:]) if h1 == (h0 + 1) % 4)
    total = sum(1 for h0, h1 in zip(heads, heads[1:]) if h1 != h0)
    return right, total


def maze_items(rng, instance, mode, qids, want):
    for _ in range(20000):
        path = build_path(rng)
        if len(path) < 5:
            continue
        right, total = turns(path)
        s, e = path[0], path[-1]
        grid = [["#"] * 7 for _ in range(7)]
        for r in range(1, 6):
            for c in range(1, 6):
                grid[r][c] = "." if rng.chance(0.4) else "#"
        for p in path:
            grid[p[0]][p[1]] = "X"
        grid[s[0]][s[1]], grid[e[0]][e[1]] = "S", "E"
        art = "\n".join("".join(row) for row in grid)
        if mode == "tqa":
            stem = ("This is a maze drawn with ASCII characters: '#' is a wall, '.' is an open "
                    "cell, 'S' is the starting point, 'E' is the exit, and 'X' marks the path "
                    "from S to E.\n" + art + "\n\n" + ASK)
            mark = "X"
        else:
            stem = ("The figure represents a maze: black cells are walls, white cells are open, "
                    "S marks the starting point, E marks the exit, and the path from S to E is "
                    "drawn in blue." + ASK_IMG)
            mark = "Blue"
        qv = rng.below(len(MAZE_Q2))
        got = []
        for q in qids:
            iid = "mazenav.%s.%s.%d" % (mode, instance, q)
            if q in (0, 1):
                val = right if q == 0 else total
                opts, c = shuffled_options(rng, str(val),
                                           [str(v) for v in rng.sample(
                                               [v for v in range(9) if v != val], 3)])
                kind = "right" if q == 0 else "total"
                got.append(make_item(iid, stem, "How many %s turns are there in the provided "
                                     "path (marked by %s) from S to E?" % (kind, mark),
                                     opts, c, {"right": right, "total": total}))
            else:
                question, phrase, truth = MAZE_Q2[qv]
                yes = truth(s, e)
                got.append(make_item(iid, stem, question, ["Yes", "No"], 0 if yes else 1,
                                     {"phrase": phrase}))
        if want(got, right, total):
            for _, m in got:
                m["world"] = grid
            return got
    raise SystemExit("maze %s: constraints not met" % instance)


# ---------------------------------------------------------------- Spatial-Grid ---------------
ANIMALS = ["cat", "dog", "elephant", "giraffe", "rabbit"]
ORD = ["first", "second", "third", "fourth", "fifth"]


def grid_items(rng, instance, mode, qids, want):
    for _ in range(20000):
        cells = [[rng.choice(ANIMALS) for _ in range(5)] for _ in range(5)]
        table = "\n".join("| " + " | ".join(row) + " |" for row in cells)
        if mode == "tqa":
            stem = ("Consider a 5x5 grid of blocks, where each block holds exactly one animal "
                    "from ['cat', 'dog', 'elephant', 'giraffe', 'rabbit']. The grid, row by row "
                    "from top to bottom:\n" + table + "\n\n" + ASK)
        else:
            stem = ("The figure represents a 5x5 grid of blocks, each holding one animal from "
                    "['cat', 'dog', 'elephant', 'giraffe', 'rabbit']." + ASK_IMG)
        got = []
        for q in qids:
            iid = "spatialgrid.%s.%s.%d" % (mode, instance, q)
            if q == 0:
                animal = rng.choice(ANIMALS)
                cnt = sum(row.count(animal) for row in cells)
                opts, c = shuffled_options(rng, str(cnt), [str(v) for v in rng.sample(
                    [v for v in range(9) if v != cnt], 3)])
                got.append(make_item(iid, stem, "How many blocks contain %s?" % animal, opts, c,
                                     {"animal": animal}))
            else:
                if q == 1:
                    r, col = 0, 0
                    where = "the top-left corner (the first row and the first column)"
                    short = "the top-left corner"
                else:
                    r, col = rng.below(5), rng.below(5)
                    where = "the %s row, %s column" % (ORD[r], ORD[col])
                    short = where
                ans = cells[r][col]
                opts, c = shuffled_options(rng, ans, rng.sample(
                    [a for a in ANIMALS if a != ans], 3))
                got.append(make_item(iid, stem, "What is the animal of the block located at %s "
                                     "of the grid?" % where, opts, c, {"where": short}))
        if want(got):
            for _, m in got:
                m["world"] = cells
            return got
    raise SystemExit("grid %s: constraints not met" % instance)


# ---------------------------------------------------------------- Spatial-Real ---------------
def real_items():
    s1 = ("Consider this description of a photograph: a wooden kitchen table stands by a window. "
          "On the table there is a white bowl holding six oranges, with two mugs to the right of "
          "the bowl and a folded newspaper in front of it.\n\n" + ASK)
    s2 = ("Consider this description of a photograph: a grey sofa stands against a brick wall "
          "of a living room. A floor lamp stands immediately to the left of the sofa, a potted "
          "plant to its right, and a red rug lies in front of it.\n\n" + ASK)
    return [
        make_item("spatialreal.tqa.sa_1001.0", s1, "How many oranges are in the bowl?",
                  ["eight", "four", "five", "six"], 3,
                  {"say": "The bowl holds %s oranges."}),
        make_item("spatialreal.tqa.sa_1002.0", s2,
                  "Which object is immediately to the left of the sofa?",
                  ["plant", "lamp", "rug", "bookshelf"], 1,
                  {"say": "The %s is immediately to the left of the sofa."}),
    ]


# ---------------------------------------------------------------- the item set ---------------
def by_q(items, q):
    return [it for it in items if it[1]["qid"] == q][0]


def build_items():
    rng = Rng("tally-demo-items-v1")
    items = []
    # 2000: q0 oracle Southeast at C (letter/text conflict case); q1 oracle at A whose name does
    # not start with A but with B-D (pr3 initial-letter case); q2 oracle 0 at a letter other
    # than A (the "10 objects" case).
    items += map_items(rng, 2000, "tqa", lambda g: (
        g[0][0]["oracle_answer"] == "Southeast" and g[0][0]["oracle_option"] == "C"
        and g[1][0]["oracle_option"] == "A" and g[1][0]["oracle_answer"][0] in "BCD"
        and g[2][0]["oracle_answer"] == "0" and g[2][0]["oracle_option"] != "A"))
    # 2001: q1 oracle at B (tail-capture case answers A); q2 oracle 0 ("90 degrees" case).
    items += map_items(rng, 2001, "tqa", lambda g: (
        g[1][0]["oracle_option"] == "B" and g[2][0]["oracle_answer"] == "0"))
    # 2002: q0 oracle at B ("The answer is B" case); q1 any ("is not X but Y" case); q2 non-zero.
    items += map_items(rng, 2002, "tqa", lambda g: (
        g[0][0]["oracle_option"] == "B" and g[2][0]["oracle_answer"] not in ("0",)))
    # 2003 (VQA): q0 oracle at A (refusal that pr3 reads as "a"); q2 oracle 0.
    items += map_items(rng, 2003, "vqa", lambda g: (
        g[0][0]["oracle_option"] == "A" and g[2][0]["oracle_answer"] == "0"))
    # maze 0: 2 right + 1 left turn; q0 oracle not at A; q2 oracle No.
    items += maze_items(rng, 0, "tqa", (0, 1, 2), lambda g, r, t: (
        r == 2 and t == 3 and g[0][0]["oracle_option"] != "A" and g[2][0]["oracle_answer"] == "No"))
    # maze 1: 0 right turns (>= 2 turns in all), q0 oracle not at A; q2 Yes via "top right".
    items += maze_items(rng, 1, "tqa", (0, 1, 2), lambda g, r, t: (
        r == 0 and t >= 2 and g[0][0]["oracle_option"] != "A" and g[2][0]["oracle_answer"] == "Yes"
        and g[2][1]["phrase"] == "to the top right of"))
    # maze 2: q2 oracle No (refusal case).
    items += maze_items(rng, 2, "tqa", (0, 1, 2), lambda g, r, t: (
        t >= 3 and g[2][0]["oracle_answer"] == "No"))
    # maze 3 (VQA): q0 and q2 only.
    items += maze_items(rng, 3, "vqa", (0, 2), lambda g, r, t: (
        r >= 1 and g[1][0]["oracle_answer"] == "Yes"))
    # grid 0: 5 dogs with option B not 5 (the "25 blocks in the 5x5 grid" case).
    items += grid_items(rng, 0, "tqa", (0, 1, 2), lambda g: (
        g[0][1]["animal"] == "dog" and g[0][0]["oracle_answer"] == "5"
        and g[0][0]["oracle_option"] != "B"
        and opt(g[0][1], "B") != "0"))
    # grid 1: q1 oracle not at A (think block with a tentative "Answer: A").
    items += grid_items(rng, 1, "tqa", (0, 1, 2), lambda g: g[1][0]["oracle_option"] != "A")
    # grid 2: q2 oracle at B ("Answer: (B)" case).
    items += grid_items(rng, 2, "tqa", (0, 1, 2), lambda g: g[2][0]["oracle_option"] == "B")
    items += grid_items(rng, 3, "vqa", (0, 1), lambda g: True)
    items += real_items()
    # File order as in the benchmark: mode, task, qid block, instance.
    task_order = ["spatialmap", "mazenav", "spatialgrid", "spatialreal"]

    def key(it):
        row, m = it
        inst = row["id"].split(".")[2]
        return (m["mode"] != "tqa", task_order.index(m["task"]), m["qid"],
                int(inst) if inst.isdigit() else 10 ** 6, inst)
    items.sort(key=key)
    for row, m in items:  # a VQA item's picture, shared by the questions of its instance
        if m["mode"] == "vqa":
            row["image"] = "images/%s.%s.png" % (m["task"], row["id"].split(".")[2])
    return items


# ---------------------------------------------------------------- pictures -------------------
def png(pixels):
    """An 8-bit RGB PNG of rows of (r, g, b) pixels (standard library only)."""
    h, w = len(pixels), len(pixels[0])
    raw = b"".join(b"\x00" + bytes(c for px in row for c in px) for row in pixels)

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def blocks(cells, colour, size):
    """Pixels of a grid of cells, each cell a size x size block of colour(cell)."""
    return [[colour(c) for c in row for _ in range(size)] for row in cells for _ in range(size)]


PALETTE = [(230, 25, 75), (60, 180, 75), (255, 225, 25), (0, 130, 200), (245, 130, 48),
           (145, 30, 180), (70, 240, 240), (240, 50, 230)]


def picture(task, world):
    if task == "mazenav":  # walls black, open white, path blue, S green, E red
        col = {"#": (0, 0, 0), ".": (255, 255, 255), "X": (0, 0, 255), "S": (0, 160, 0), "E": (220, 0, 0)}
        return png(blocks(world, col.__getitem__, 8))
    if task == "spatialgrid":  # one colour per animal
        return png(blocks(world, lambda a: PALETTE[ANIMALS.index(a)], 8))
    # spatialmap: object i at (x, y) (x east, y north) as a square of colour i on a 6 x 6 field
    n = len(world)
    field = [[None] * n for _ in range(n)]
    for i, (x, y) in enumerate(world):
        field[n - 1 - y][x] = i
    return png(blocks(field, lambda i: (255, 255, 255) if i is None else PALETTE[i], 10))


def write_pictures(outdir, items):
    os.makedirs(os.path.join(outdir, "images"), exist_ok=True)
    for row, m in items:
        if "image" in row:
            with open(os.path.join(outdir, row["image"]), "wb") as f:
                f.write(picture(m["task"], m["world"]))


# ---------------------------------------------------------------- answers --------------------
def art(word):
    return ("an " if word[0] in "aeiou" else "a ") + word


def count_phrase(t):  # "no objects are" / "1 object is" / "3 objects are"
    if t == "0":
        return "no objects are"
    return "1 object is" if t == "1" else "%s objects are" % t


def explain(m, t):
    """One sentence that supports option text `t` (and mentions no other option)."""
    task, q = m["task"], m["qid"]
    if task == "spatialmap":
        if q == 0:
            return "%s is to the %s of %s." % (m["X"], t, m["Y"])
        if q == 1:
            return "%s is in the %s of %s." % (t, m["D"], m["X"])
        p = count_phrase(t)
        return "%s%s in the %s of %s." % (p[0].upper(), p[1:], m["D"], m["X"])
    if task == "mazenav":
        if q == 0:
            return ("There is 1 right turn" if t == "1" else "There are %s right turns" % t) + \
                " in the path from S to E."
        if q == 1:
            return ("There is 1 turn" if t == "1" else "There are %s turns" % t) + \
                " in total along the path from S to E."
        if t == "Yes":
            return "Yes, the exit (E) is %s the starting point (S)." % m["phrase"]
        return "No, the exit (E) is not %s the starting point (S)." % m["phrase"]
    if task == "spatialgrid":
        if q == 0:
            if t == "0":
                return "There are no blocks containing %s." % art(m["animal"])
            return ("There is 1 block" if t == "1" else "There are %s blocks" % t) + \
                " containing %s." % art(m["animal"])
        return "The block at %s holds %s." % (m["where"], art(t))
    return m["say"] % t


def steps(m):
    """A few neutral reasoning bullets: no option text, number, number word, direction word,
    animal, yes/no/not, letter-with-period or the word 'answer'."""
    task = m["task"]
    if task == "spatialmap":
        return ["Place the reference object at the centre of the map.",
                "Chain the stated pairwise relations between the objects.",
                "Read off the quadrant each object ends up in."]
    if task == "mazenav":
        return ["Start at S and follow the marked cells.",
                "At each bend, compare the new heading with the old heading.",
                "Stop when the path reaches E."]
    if task == "spatialgrid":
        return ["Read the grid row by row, from top to bottom.",
                "Check the animal in each block that matters for the question."]
    return ["Look at the objects described in the scene.",
            "Compare them with the question."]


def reason_style(rng, m, idx):
    """toy-vlm-a: the original `--w_reason` style (one concise sentence, then reasoning)."""
    t, L = m["opts"][idx], LETTERS[idx]
    e = explain(m, t)
    style = rng.below(6)  # 3/6 letter first, 2/6 "The correct answer is", 1/6 sentence only
    if style <= 2:
        return "%s. %s. Explanation: %s" % (L, t, e)
    if style <= 4:
        return "The correct answer is %s. %s. %s" % (L, t, e)
    body = "\n".join("%d) %s" % (i + 1, s) for i, s in enumerate(steps(m)))
    return e + "\n\nStep-by-step reasoning:\n" + body


def letter_style(rng, m, idx):
    """toy-llm-b: the published single-letter style ("Answer: B.\\nReason: ...")."""
    t, L = m["opts"][idx], LETTERS[idx]
    e = explain(m, t)
    style = rng.below(6)
    if style <= 2:
        return "Answer: %s.\nReason: %s" % (L, e)
    if style == 3:
        return "**Answer:** %s. %s\n**Reason:** %s" % (L, t, e)
    if style == 4:
        return "<think>\n%s Conclusion: %s\n</think>\n\nAnswer: %s.\nReason: %s" % (
            " ".join(steps(m)), e, L, e)
    if " " not in t:  # single-token option text: a direct answer
        return "Answer: %s.\nReason: %s" % (t, e)
    return "Answer: %s.\nReason: %s" % (L, e)


MODELS = [("toy-vlm-a", "reason", 0.66, reason_style),
          ("toy-llm-b", "letter", 0.56, letter_style)]
SEEDS = [0, 1, 2]

# Deliberate parser-audit cases: (model, seed, id) -> (label, response builder(meta)). Each
# replaces the drawn answer for that key. What legacy / pr3 / strict should do with each one is
# tabulated in demo/README.md ("Deliberate cases").


def opt(m, letter):
    return m["opts"][LETTERS.index(letter)]


def other_name(m):
    return [o for o in m["opts"] if o != m["opts"][m["correct"]]][0]


DELIBERATE = {
    ("toy-vlm-a", 0, "spatialmap.tqa.2000.2"): (
        "count-substring-10",
        lambda m: "There are 10 objects in the %s of %s.\n\nStep-by-step reasoning:\n"
                  "1) Every object on the map lies in that direction." % (m["D"], m["X"])),
    ("toy-vlm-a", 1, "spatialmap.tqa.2001.2"): (
        "count-substring-90",
        lambda m: "Rotating the map by 90 degrees, 2 objects lie in the %s of %s." % (
            m["D"], m["X"])),
    ("toy-vlm-a", 2, "spatialgrid.tqa.0.0"): (
        "grid-25-blocks",
        lambda m: "B.\nThere are 25 blocks in the 5x5 grid. By examining each block, we can "
                  "count that there are %s blocks containing a dog." % opt(m, "B")),
    ("toy-vlm-a", 0, "mazenav.tqa.0.2"): (
        "none-contains-no",
        lambda m: "I cannot determine the exit."),
    ("toy-llm-b", 1, "mazenav.tqa.2.2"): (
        "refusal-none-contains-no",
        lambda m: "I'm sorry, I can't help with that."),
    ("toy-vlm-a", 1, "mazenav.tqa.0.0"): (
        "numword-dict-order",
        lambda m: "There are two right turns and one left turn in the path from S to E."),
    ("toy-vlm-a", 2, "mazenav.tqa.1.0"): (
        "numword-no-zero",
        lambda m: "The path has 3 right turns and no dead ends."),
    ("toy-vlm-a", 0, "spatialmap.tqa.2000.0"): (
        "letter-text-conflict",
        lambda m: "D. Southeast. Explanation: %s is to the Southeast of %s." % (m["X"], m["Y"])),
    ("toy-llm-b", 1, "spatialmap.tqa.2000.0"): (
        "letter-text-conflict-tagged",
        lambda m: "Answer: D. Southeast\nReason: %s is to the Southeast of %s." % (m["X"], m["Y"])),
    ("toy-llm-b", 0, "mazenav.tqa.1.2"): (
        "pr3-first-letter-above",
        lambda m: "The exit is above and to the right of the start."),
    ("toy-llm-b", 2, "spatialmap.tqa.2002.0"): (
        "pr3-the-answer-is",
        lambda m: "The answer is B. %s is to the %s of %s." % (m["X"], opt(m, "B"), m["Y"])),
    ("toy-llm-b", 0, "spatialmap.tqa.2000.1"): (
        "pr3-initial-letter",
        lambda m: "Answer: %s\nReason: %s is in the %s of %s." % (
            opt(m, "A"), opt(m, "A"), m["D"], m["X"])),
    ("toy-vlm-a", 1, "spatialmap.tqa.2002.1"): (
        "map-q1-long-capture",
        lambda m: "The thing to the %s of %s is not %s but %s." % (
            m["D"], m["X"], m["opts"][m["correct"]], other_name(m))),
    ("toy-vlm-a", 2, "spatialmap.tqa.2001.1"): (
        "map-q1-tail-capture",
        lambda m: "A. %s. The reasoning: %s is the object that lies in the %s of %s." % (
            opt(m, "A"), opt(m, "B"), m["D"], m["X"])),
    ("toy-llm-b", 2, "spatialgrid.tqa.1.1"): (
        "think-tentative-answer",
        lambda m: "<think>\nAt first I would say Answer: A, but the top-left block holds %s, "
                  "which is option %s.\n</think>\n\n**Answer:** %s\n**Reason:** The block at the "
                  "top-left corner holds %s." % (art(m["opts"][m["correct"]]),
                                                 LETTERS[m["correct"]], LETTERS[m["correct"]],
                                                 art(m["opts"][m["correct"]]))),
    ("toy-llm-b", 1, "spatialgrid.tqa.2.2"): (
        "answer-parenthesised",
        lambda m: "Answer: (B)\nReason: The block at %s holds %s." % (m["where"], art(opt(m, "B")))),
    ("toy-llm-b", 0, "mazenav.vqa.3.0"): (
        "unterminated-think",
        lambda m: "<think>\nThe blue path leaves S going down, then it bends towards the right, "
                  "then"),
    ("toy-llm-b", 2, "spatialmap.vqa.2003.0"): (
        "refusal-pr3-reads-a",
        lambda m: "I am sorry, but I can't help with identifying directions in this image."),
}


def build_answers(items):
    meta = {row["id"]: m for row, m in items}
    for key in DELIBERATE:
        assert key[2] in meta, key
    lines = []
    for model, variant, p, fn in MODELS:
        for seed in SEEDS:
            for row, m in items:
                rng = Rng("answer|%s|%d|%s" % (model, seed, row["id"]))
                key = (model, seed, row["id"])
                if key in DELIBERATE:
                    resp = DELIBERATE[key][1](m)
                else:
                    idx = m["correct"]
                    if not rng.chance(p):
                        idx = rng.choice([i for i in range(len(m["opts"])) if i != idx])
                    resp = fn(rng, m, idx)
                lines.append({"id": row["id"], "model": model, "seed": seed,
                              "prompt_variant": variant, "response": resp})
    return lines


# Third model, original evaluator format (answer/prompt/image). Chosen option per item.
REFERENCE = [  # (id, response builder)
    ("spatialmap.tqa.2000.0", lambda m: "C. Southeast. Explanation: %s is to the Southeast of %s."
     % (m["X"], m["Y"])),
    ("spatialmap.tqa.2001.1", lambda m: "%s is in the %s of %s.\n\nStep-by-step reasoning:\n"
     "1) Chain the relations.\n2) Read off the quadrant." % (opt(m, "B"), m["D"], m["X"])),
    ("spatialmap.tqa.2000.2", lambda m: "There are 20 objects in the %s of %s." % (m["D"], m["X"])),
    ("spatialmap.tqa.2002.2", lambda m: "%s. %s. Explanation: %s" % (
        LETTERS[m["correct"]], m["opts"][m["correct"]], explain(m, m["opts"][m["correct"]]))),
    ("mazenav.tqa.0.1", lambda m: "There are 5 turns in total along the path from S to E."),
    ("mazenav.tqa.2.2", lambda m: "The exit cannot be located from the picture."),
    ("spatialgrid.tqa.1.0", lambda m: "%s. %s. Explanation: %s" % (
        LETTERS[m["correct"]], m["opts"][m["correct"]], explain(m, m["opts"][m["correct"]]))),
    ("spatialgrid.tqa.2.1", lambda m: "The block at the top-left corner holds %s." % art(
        [o for o in m["opts"] if o != m["opts"][m["correct"]]][0])),
]


def build_reference(items):
    rows = {row["id"]: (row, m) for row, m in items}
    out = []
    for iid, fn in REFERENCE:
        row, m = rows[iid]
        out.append({"id": iid, "answer": fn(m), "oracle_answer": row["oracle_answer"],
                    "oracle_option": row["oracle_option"],
                    "oracle_full_answer": row["oracle_full_answer"],
                    "prompt": row["text"] + REASON_SUFFIX, "image": ""})
    return out


BAD_LINES = [
    '{"id": "spatialmap.tqa.2000.0", "model": "toy-llm-b", "seed": 0, "prompt_variant": '
    '"letter", "response": "Answer: A.\\nReason: truncated',
    json.dumps({"id": "spatialmap.tqa.2000.1", "model": "toy-llm-b", "seed": 0,
                "prompt_variant": "letter"}),
    json.dumps({"id": "spatialmap.tqa.2999.0", "model": "toy-llm-b", "seed": 0,
                "prompt_variant": "letter", "response": "Answer: A.\nReason: unknown item."}),
]


def dump(path, objs):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for o in objs:
            f.write((o if isinstance(o, str) else json.dumps(o, ensure_ascii=False)) + "\n")


def recompute_oracle(text, task, q):
    """Re-derives a TQA oracle from the item text alone (independent of the generator state)."""
    import re
    question = text.split(ASK.strip(), 1)[1].split(" Available options:")[0].strip()
    opts = [o[3:] for o in text.split("Available options:\n", 1)[1][:-1].split("\n")]
    if task == "spatialmap":
        rel = re.findall(r"([A-Z][\w' ]*?) is to the (\w+) of ([A-Z][\w' ]*?)\.", text)
        names = sorted({a for a, _, _ in rel} | {b for _, _, b in rel})
        ix = {nm: i for i, nm in enumerate(names)}
        xp = [(ix[a], ix[b]) if d.endswith("west") else (ix[b], ix[a]) for a, d, b in rel]
        yp = [(ix[a], ix[b]) if d.startswith("South") else (ix[b], ix[a]) for a, d, b in rel]
        xl, yl = closure(len(names), xp), closure(len(names), yp)

        def rel_of(a, b):  # direction of a relative to b, or None when not deducible
            a, b = ix[a], ix[b]
            if not ((xl[a][b] or xl[b][a]) and (yl[a][b] or yl[b][a])):
                return None
            return ("North" if yl[b][a] else "South") + ("east" if xl[b][a] else "west")
        if q == 0:
            m = re.match(r"In which direction is (.+) relative to (.+)\?$", question)
            return rel_of(m.group(1), m.group(2))
        m = re.match(r"(?:Which object is|How many objects are) in the (\w+) of (.+)\?$", question)
        d, x = m.group(1), m.group(2)
        if q == 1:
            rels = [rel_of(o, x) for o in opts]
            assert None not in rels and rels.count(d) == 1
            return opts[rels.index(d)]
        rels = [rel_of(o, x) for o in names if o != x]
        assert None not in rels
        return str(rels.count(d))
    if task == "mazenav":
        rows = [ln for ln in text.split("\n") if len(ln) == 7 and set(ln) <= set("#.SEX")]
        cells = {(r, c): ch for r, ln in enumerate(rows) for c, ch in enumerate(ln)}
        s = [k for k, v in cells.items() if v == "S"][0]
        e = [k for k, v in cells.items() if v == "E"][0]
        path = [s]
        while path[-1] != e:
            nxt = [(path[-1][0] + dr, path[-1][1] + dc) for dr, dc in STEPS]
            nxt = [n for n in nxt if cells.get(n) in ("X", "E") and n not in path]
            assert len(nxt) == 1, "ambiguous path"
            path.append(nxt[0])
        right, total = turns(path)
        if q < 2:
            return str(right if q == 0 else total)
        truth = [t for qq, _, t in MAZE_Q2 if qq == question][0]
        return "Yes" if truth(s, e) else "No"
    if task == "spatialgrid":
        grid = [[c.strip() for c in ln.strip("| ").split(" | ")]
                for ln in text.split("\n") if ln.startswith("| ")]
        assert len(grid) == 5 and all(len(r) == 5 for r in grid)
        m = re.match(r"How many blocks contain (\w+)\?$", question)
        if m:
            return str(sum(r.count(m.group(1)) for r in grid))
        if "top-left corner" in question:
            return grid[0][0]
        m = re.search(r"the (\w+) row, (\w+) column", question)
        return grid[ORD.index(m.group(1))][ORD.index(m.group(2))]
    return opts[3] if "oranges" in question else "lamp"  # the two scenes, read by hand


def check(outdir):
    """Structural validation of the written files."""
    import re
    items = [json.loads(l) for l in open(os.path.join(outdir, "items.jsonl"))]
    ids = {}
    for it in items:
        keys = ["id", "text", "oracle_answer", "oracle_option", "oracle_full_answer"]
        assert list(it) == keys + (["image"] if ".vqa." in it["id"] else []), it["id"]
        assert it["id"] not in ids, it["id"]
        ids[it["id"]] = it
        task, mode, inst, q = it["id"].split(".")
        assert mode in ("tqa", "vqa") and q in "012"
        assert it["oracle_full_answer"] == it["oracle_option"] + ". " + it["oracle_answer"]
        assert not it["text"].endswith("\n") and it["text"].endswith(".")
        m = re.search(r"Available options:\n((?:[A-Z]\. .*\n?)+)$", it["text"])
        assert m, it["id"]
        opts = m.group(1).split("\n")
        opts[-1] = opts[-1][:-1]  # trailing "." on the last option
        n = 2 if (task == "mazenav" and q == "2") else 4
        assert len(opts) == n, (it["id"], opts)
        assert [o[0] for o in opts] == list(LETTERS[:n])
        texts = [o[3:] for o in opts]
        assert len(set(texts)) == n
        assert texts[LETTERS.index(it["oracle_option"])] == it["oracle_answer"]
        if mode == "vqa":
            assert it["text"].startswith("The figure represents ")
            with open(os.path.join(outdir, it["image"]), "rb") as f:
                assert f.read(8) == b"\x89PNG\r\n\x1a\n", it["image"]
        if mode == "tqa":
            assert recompute_oracle(it["text"], task, int(q)) == it["oracle_answer"], it["id"]
    seen = set()
    for line in open(os.path.join(outdir, "answers.jsonl")):
        a = json.loads(line)
        assert list(a) == ["id", "model", "seed", "prompt_variant", "response"]
        assert a["id"] in ids and isinstance(a["seed"], int)
        assert a["prompt_variant"] in ("reason", "letter")
        k = (a["model"], a["seed"], a["id"])
        assert k not in seen
        seen.add(k)
    assert len(seen) == len(MODELS) * len(SEEDS) * len(items)
    for line in open(os.path.join(outdir, "reference_eval_output.jsonl")):
        r = json.loads(line)
        it = ids[r["id"]]
        assert r["prompt"] == it["text"] + REASON_SUFFIX and r["image"] == ""
        assert all(r[k] == it[k] for k in ("oracle_answer", "oracle_option", "oracle_full_answer"))
    print("check ok: %d items, %d answers" % (len(items), len(seen)))


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    outdir = os.path.join(root, "demo", "spatialeval")
    os.makedirs(outdir, exist_ok=True)
    items = build_items()
    dump(os.path.join(outdir, "items.jsonl"), [row for row, _ in items])
    write_pictures(outdir, items)
    dump(os.path.join(outdir, "answers.jsonl"), build_answers(items))
    dump(os.path.join(outdir, "reference_eval_output.jsonl"), build_reference(items))
    dump(os.path.join(outdir, "answers_bad.jsonl"), BAD_LINES)
    if "--check" in sys.argv[1:]:
        check(outdir)


if __name__ == "__main__":
    main()
