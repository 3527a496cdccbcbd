#!/usr/bin/python3
"""Compares groups of two tally outputs dataset by dataset, exactly (same dtype, same shape, same
bytes), and says what differs. Datasets the newer file adds are allowed only when they are listed
as additions (--allow NAME: a dataset's last path component, e.g. n_engine_error) and hold only
zeros: a column added to the schema that changes no earlier value. A string column stored in
two layouts (bytes + offsets in one file, one string dataset in the other: tally's short strings
became fixed-length) is compared by its values, and the layout change is counted once.

usage: h5_same.py REF.h5 OUT.h5 GROUP [GROUP ...] [--allow NAME ...] [--skip NAME ...]
  --skip NAME: leave out the datasets named NAME (a column, e.g. latency_ms) in both files
exit 0 when every compared dataset is identical, 1 otherwise (each difference on stderr).
"""
import sys

import h5py
import numpy as np


def datasets(f, group):
    out = {}
    if group not in f:
        return out
    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            out[group.rstrip("/") + "/" + name] = obj
    g = f[group]
    if isinstance(g, h5py.Dataset):
        return {group: g}
    g.visititems(visit)
    return out


class Values:
    """A string column's values (a list of str), in place of its datasets."""
    def __init__(self, values):
        self.values = values


def blob_values(f, base):
    raw = f[base + ".bytes"][()].tobytes()
    offs = [int(o) for o in f[base + ".offsets"][()]] + [len(raw)]
    return [raw[a:b].decode("utf-8") for a, b in zip(offs, offs[1:])]


def string_values(ds):
    if h5py.check_string_dtype(ds.dtype) is None:
        return None
    return list(ds.asstr()[()])


def unify_layouts(fa, da, fb, db):
    """Where file A holds column c as c.bytes + c.offsets and file B as one string dataset c,
    both become Values(c). Returns how many columns were unified."""
    n = 0
    for p in [p for p in da if p.endswith(".bytes")]:
        base = p[: -len(".bytes")]
        if base + ".offsets" in da and base in db and base not in da:
            vb = string_values(db[base])
            if vb is None:
                continue
            da[base] = Values(blob_values(fa, base))
            db[base] = Values(vb)
            del da[base + ".bytes"], da[base + ".offsets"]
            n += 1
    return n


def column_name(path):
    last = path.rsplit("/", 1)[-1]
    for suffix in (".bytes", ".offsets"):
        if last.endswith(suffix):
            return last[: -len(suffix)]
    return last


def main(argv):
    allow, skip, pos = set(), set(), []
    it = iter(argv)
    for a in it:
        if a == "--allow":
            allow.add(next(it))
        elif a == "--skip":
            skip.add(next(it))
        else:
            pos.append(a)
    if len(pos) < 3:
        sys.stderr.write(__doc__)
        return 2
    ref, out, groups = pos[0], pos[1], pos[2:]
    bad = 0
    n = 0
    relaid = 0
    with h5py.File(ref, "r") as fr, h5py.File(out, "r") as fo:
        for g in groups:
            dr, do = datasets(fr, g), datasets(fo, g)
            relaid += unify_layouts(fr, dr, fo, do) + unify_layouts(fo, do, fr, dr)
            if not dr and not do:
                sys.stderr.write(f"{g}: in neither file\n")
                bad += 1
            for p, d in dr.items():
                if column_name(p) in skip:
                    continue
                n += 1
                if p not in do:
                    sys.stderr.write(f"{p}: only in {ref}\n")
                    bad += 1
                    continue
                if isinstance(d, Values) or isinstance(do[p], Values):
                    if not (isinstance(d, Values) and isinstance(do[p], Values)) or d.values != do[p].values:
                        sys.stderr.write(f"{p}: the values differ (string column in two layouts)\n")
                        bad += 1
                    continue
                a, b = d[()], do[p][()]
                if d.dtype != do[p].dtype or np.shape(a) != np.shape(b) or np.asarray(a).tobytes() != np.asarray(b).tobytes():
                    sys.stderr.write(f"{p}: differs (dtype {d.dtype} / {do[p].dtype}, shape {np.shape(a)} / {np.shape(b)})\n")
                    bad += 1
            for p, d in do.items():
                if p in dr or column_name(p) in skip:
                    continue
                if column_name(p) in allow and not isinstance(d, Values) and not np.any(d[()]):
                    continue
                sys.stderr.write(f"{p}: only in {out}" + (" (an allowed addition, but not all zeros)\n" if column_name(p) in allow else "\n"))
                bad += 1
    if relaid:
        print(f"h5_same: {relaid} string column(s) stored in another layout, compared by value")
    if n == 0:
        sys.stderr.write("nothing was compared\n")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
