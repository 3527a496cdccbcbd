"""Read tally's HDF5 output into pandas, one call per table.

    import sys; sys.path.insert(0, "tools"); import tally_h5
    df = tally_h5.read_table("out/demo.h5", "/items/spatialeval")
    tally_h5.tables("out/demo.h5")        # every table path in the file
    tally_h5.attrs("out/demo.h5")         # run metadata (job JSON, versions, ...)

Each table is an HDF5 group whose datasets are equal-length 1-D columns; strings are
variable-length UTF-8 and come back as Python str. Uses Debian's python3-h5py and python3-pandas.
"""
import h5py
import pandas as pd


def _column(ds):
    if ds.dtype.kind == "O":
        return ds.asstr()[()]
    return ds[()]


def read_table(path, table):
    """Returns the table at group path `table` as a DataFrame (columns in file order)."""
    with h5py.File(path, "r") as f:
        g = f[table]
        return pd.DataFrame({name: _column(g[name]) for name in g})


def tables(path):
    """Lists the group paths that hold tables (groups whose members are all datasets)."""
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
