"""Read tally's HDF5 output into pandas, one call per table.

    import sys; sys.path.insert(0, "tools"); import tally_h5
    df = tally_h5.read_table("out/demo.h5", "/items/spatialeval")
    tally_h5.tables("out/demo.h5")        # every table path in the file
    tally_h5.attrs("out/demo.h5")         # run metadata (job JSON, versions, ...)

Each table is an HDF5 group whose datasets are equal-length 1-D columns; strings come back as
Python str. `tally run` (the parallel writer) stores a short-string column (ids, models, tasks,
statuses, rules) as a fixed-length UTF-8 string dataset, which h5py and pandas read as they are
(numpy bytes; h5py's `.asstr()` gives str), and a text column `c` (replies, judgments) as
`c.bytes` (uint8, the values' UTF-8 bytes concatenated in row order) plus `c.offsets` (int64,
where each value starts); read_table joins the pair back into one column `c`. The serial
writer stores strings as variable-length UTF-8. Uses Debian's python3-h5py, python3-numpy and
python3-pandas.
"""
import h5py
import numpy as np
import pandas as pd


def _column(ds):
    if ds.dtype.kind == "O":
        return ds.asstr()[()]
    if ds.dtype.kind == "S":  # fixed-length UTF-8 (numpy drops the NUL padding)
        # bytes.decode over tolist(): on the 150,000-unit item table's 16 such columns 0.55 s,
        # against 2.28 s for np.char.decode, which builds a fixed-width str array first
        out = np.empty(ds.shape[0], dtype=object)
        out[:] = list(map(bytes.decode, ds[()].tolist()))
        return out
    return ds[()]


def _blob_column(g, base):
    """Decodes the parallel writer's `base.bytes` + `base.offsets` pair into an array of str.

    An ASCII column (ids, models, statuses, rules: most of them) is decoded once and sliced, two
    to three times faster than a decode per row; a column with other characters is decoded per
    row, which is faster there than slicing a wide str (bench/read_back.sh measures both)."""
    raw = g[base + ".bytes"][()]
    offs = g[base + ".offsets"][()].astype(np.int64)
    n = len(offs)
    if n and (offs[0] != 0 or np.any(np.diff(offs) < 0) or offs[-1] > len(raw)):
        raise ValueError(f"{g.name}/{base}.offsets: offsets are not increasing within the blob")
    out = np.empty(n, dtype=object)
    if n == 0:
        return out
    ends = np.append(offs[1:], len(raw)).tolist()
    starts = offs.tolist()
    if len(raw) == 0 or int(raw.max()) < 0x80:  # ASCII: byte offsets are character offsets
        text = raw.tobytes().decode("ascii")
        out[:] = [text[s:e] for s, e in zip(starts, ends)]
    else:
        blob = raw.tobytes()
        out[:] = [blob[s:e].decode("utf-8") for s, e in zip(starts, ends)]
    return out


def _is_blob_pair(g, base):
    b, o = base + ".bytes", base + ".offsets"
    return (b in g and o in g and isinstance(g[b], h5py.Dataset) and isinstance(g[o], h5py.Dataset)
            and g[b].dtype == np.uint8 and g[o].dtype.kind in "iu")


def read_table(path, table):
    """Returns the table at group path `table` as a DataFrame (columns in file order, i.e. in
    creation order; a `c.bytes`/`c.offsets` pair becomes one str column `c` in its place)."""
    with h5py.File(path, "r") as f:
        g = f[table]
        cols = {}
        for name in g:
            base, dot, part = name.rpartition(".")
            if dot and part in ("bytes", "offsets") and _is_blob_pair(g, base):
                if base not in cols:
                    cols[base] = _blob_column(g, base)
                continue
            cols[name] = _column(g[name])
        return pd.DataFrame(cols)


def tables(path):
    """Lists the group paths that hold tables (groups whose members are all datasets), in
    either string layout."""
    out = []
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Group) and len(obj) and all(
                    isinstance(v, h5py.Dataset) for v in obj.values()):
                out.append("/" + name)
        f.visititems(visit)
    return out


def attrs(path):
    """Root attributes as a dict of str/int."""
    with h5py.File(path, "r") as f:
        return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}


if __name__ == "__main__":
    import sys
    if len(sys.argv) < 2:
        sys.exit("usage: tally_h5.py FILE.h5 [TABLE]")
    if len(sys.argv) == 2:
        print("\n".join(tables(sys.argv[1])))
    else:
        with pd.option_context("display.max_rows", 50, "display.width", 200):
            print(read_table(sys.argv[1], sys.argv[2]))
