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
import os
import zlib
from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np
import pandas as pd

# ---- chunks read and inflated in parallel ----
# h5py reads a dataset through HDF5, which inflates its chunks one after another under one
# lock. For tally's own layout (1-D datasets, deflate and shuffle only) the chunks are read
# here instead: their places come from HDF5 (H5Dget_chunk_info), their bytes with os.pread, and
# zlib inflates them on a pool of threads (zlib and pread release the GIL). The values are the
# same; anything else (another filter, a user block, a chunk not written) is read by h5py.

_DEFLATE, _SHUFFLE = 1, 2
_MAX_CHUNKS = 4096
_pool = None


def _workers():
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1)))
    return _pool


class _Chunks:
    """Where the chunks of a 1-D dataset lie, or None from plan() when h5py must read it."""

    @staticmethod
    def plan(ds, fd):
        if fd is None or ds.chunks is None or len(ds.shape) != 1 or ds.dtype.kind not in "iufS":
            return None
        p = ds.id.get_create_plist()
        filters = [p.get_filter(i)[0] for i in range(p.get_nfilters())]
        if any(f not in (_DEFLATE, _SHUFFLE) for f in filters):
            return None
        c = _Chunks()
        c.ds, c.fd, c.filters = ds, fd, filters
        c.n, c.esize, c.clen = ds.shape[0], ds.dtype.itemsize, ds.chunks[0]
        nchunks = -(-c.n // c.clen)
        # HDF5 1.10 finds a chunk's place by walking its index, so asking for every chunk costs
        # their number squared: past _MAX_CHUNKS (tally writes chunks of 1 MiB or 16,384 rows,
        # a few hundred to a dataset) h5py reads the dataset
        if nchunks > _MAX_CHUNKS or ds.id.get_num_chunks() != nchunks:  # or one never written
            return None
        c.info = [ds.id.get_chunk_info_by_coord((i * c.clen,)) for i in range(nchunks)]
        return c

    def _one(self, i, lo, hi, dest, at):
        """Chunk i's elements within [lo, hi), into dest (uint8) from byte `at` on."""
        info = self.info[i]
        first = info.chunk_offset[0]
        a, b = max(lo, first), min(hi, first + self.clen, self.n)
        data = os.pread(self.fd, info.size, info.byte_offset)
        for k in reversed(range(len(self.filters))):
            if info.filter_mask & (1 << k):
                continue  # this filter was skipped for this chunk (an optional one that failed)
            if self.filters[k] == _DEFLATE:
                data = zlib.decompress(data, bufsize=self.clen * self.esize)
            elif self.esize > 1:  # shuffle: byte j of every element, then byte j + 1, ...
                m = self.clen
                v = np.frombuffer(data, np.uint8, count=m * self.esize)
                data = v.reshape(self.esize, m).T.tobytes()
        src = np.frombuffer(data, np.uint8, count=(b - first) * self.esize, offset=0)
        dest[at + (a - lo) * self.esize:at + (b - lo) * self.esize] = src[(a - first) * self.esize:]

    def read(self, lo, hi, dest, at=0):
        """Elements [lo, hi) into dest (a writable uint8 array) from byte `at` on."""
        first = lo // self.clen
        last = -(-hi // self.clen)
        if last - first <= 1:  # one chunk: no thread to hand it to
            for i in range(first, last):
                self._one(i, lo, hi, dest, at)
            return
        jobs = [_workers().submit(self._one, i, lo, hi, dest, at) for i in range(first, last)]
        for j in jobs:
            j.result()


def _read_all(ds, fd):
    """The whole 1-D dataset ds as a numpy array (chunks in parallel when it can)."""
    c = _Chunks.plan(ds, fd)
    if c is None or c.n == 0:
        return ds[()]
    out = np.empty(c.n, dtype=ds.dtype)
    c.read(0, c.n, out.view(np.uint8).reshape(-1))
    return out


def _decode_each(a):
    """Fixed-length UTF-8 values (a numpy 'S' array, NUL padding already dropped) -> str array,
    one bytes.decode per value (bytes.decode over tolist(): 4x np.char.decode, which builds a
    fixed-width str array first)."""
    out = np.empty(a.shape[0], dtype=object)
    out[:] = list(map(bytes.decode, a.tolist()))
    return out


_MIX = np.uint64(0x9E3779B97F4A7C15)


def _decode_fixed(a):
    """Fixed-length UTF-8 column -> str array, each distinct value decoded once.

    The values' bytes, as 8-byte words, are folded into one 64-bit key per row; pandas.factorize
    numbers the keys, one row of each key is decoded, and the rows take their key's str (shared
    objects: equal values are equal str). Every row is then compared, byte for byte, with the
    row its str was decoded from, so a key collision falls back to decoding each value. On the
    300,000-unit item table this takes the 14 low-cardinality short-string columns from 1.5 s
    to 0.3 s (bench/read_back.sh)."""
    n, w = a.shape[0], a.dtype.itemsize
    if n == 0:
        return np.empty(0, dtype=object)
    a = np.ascontiguousarray(a)
    if w <= 8:  # the key is the value's bytes themselves
        m = np.zeros((n, 8), np.uint8)
        m[:, :w] = a.view(np.uint8).reshape(n, w)
        key = m.view(np.uint64).ravel()
    else:  # folded from the (unaligned, strided: no copy) 8-byte words, then the last bytes
        nw = w // 8
        words = np.ndarray((n, nw), np.uint64, buffer=a, strides=(w, 8))
        tail = a.view(np.uint8).reshape(n, w)
        key = words[:, 0].copy()
        for j in range(1, nw):
            key *= _MIX
            key ^= words[:, j]
        for j in range(nw * 8, w):
            key *= _MIX
            key ^= tail[:, j]
    codes, uniq = pd.factorize(key)
    rep = np.empty(len(uniq), np.int64)
    rep[codes] = np.arange(n)  # some row of each key
    if w > 8:  # every row against the row its str comes from, a block at a time
        src = rep[codes]
        for i in range(0, n, 65536):
            if not np.array_equal(a[src[i:i + 65536]], a[i:i + 65536]):
                return _decode_each(a)  # two distinct values share a key
    dec = np.empty(len(uniq), dtype=object)
    dec[:] = [v.decode() for v in a[rep].tolist()]
    return dec[codes]


def _column(ds, fd=None):
    if ds.dtype.kind == "O":
        return ds.asstr()[()]
    if ds.dtype.kind == "S":  # fixed-length UTF-8 (numpy drops the NUL padding)
        return _decode_fixed(_read_all(ds, fd))
    return _read_all(ds, fd)


# Bytes of a text blob read at a time (rounded down to whole chunks): the blob is never held
# whole, so its memory is paged in once, not once more beside the decoded str objects.
_WINDOW = 8 << 20


def _decode_rows(buf, starts, ends):
    """The str of each byte range [starts[i], ends[i]) of buf, decoded from a memoryview of it
    (one copy, where a bytes slice and its decode made two). Decoding the rows' bytes in one
    call and slicing the str was slower: one non-ASCII character makes the whole str two or
    four bytes a character."""
    mv = memoryview(buf)
    try:
        return [str(mv[s:e], "utf-8") for s, e in zip(starts.tolist(), ends.tolist())]
    finally:
        mv.release()  # buf may grow after this


def _blob_column(g, base, fd=None):
    """Decodes the parallel writer's `base.bytes` + `base.offsets` pair into an array of str.

    The blob is read a window of whole chunks at a time into one reused buffer, and each value
    is decoded from its slice there; a value that runs past the window is kept and completed by
    the next one (the buffer grows for a value longer than a window). On the 300,000-unit item
    table's 175 MB of responses this takes 0.9 s, where reading the whole blob into a numpy
    array and decoding from its tobytes() took 1.5-1.9 s (bench/read_back.sh)."""
    bds = g[base + ".bytes"]
    offs = _read_all(g[base + ".offsets"], fd).astype(np.int64)
    size, n = bds.shape[0], len(offs)
    if n and (offs[0] != 0 or np.any(np.diff(offs) < 0) or offs[-1] > size):
        raise ValueError(f"{g.name}/{base}.offsets: offsets are not increasing within the blob")
    out = np.empty(n, dtype=object)
    if n == 0:
        return out
    ends = np.append(offs[1:], size)
    step = _WINDOW
    if bds.chunks:
        step = max(1, _WINDOW // bds.chunks[0]) * bds.chunks[0]
    chunks = _Chunks.plan(bds, fd)
    buf = bytearray(step)
    lo = hi = 0  # buf[:hi - lo] holds the blob's bytes [lo, hi)
    r = 0
    while True:
        k = int(np.searchsorted(ends, hi, side="right"))  # rows r .. k-1 end within [lo, hi)
        if k > r:
            out[r:k] = _decode_rows(buf, offs[r:k] - lo, ends[r:k] - lo)
            r = k
        if r == n:
            return out
        keep = int(offs[r]) - lo  # row r's bytes so far move to the front
        held = hi - lo - keep
        nxt = min(hi + step, size)
        if held + (nxt - hi) > len(buf):
            buf = buf[keep:hi - lo] + bytearray(nxt - hi)
        else:
            buf[:held] = buf[keep:hi - lo]
        dest = np.frombuffer(buf, dtype=np.uint8)
        if chunks is not None:
            chunks.read(hi, nxt, dest, held)
        else:
            bds.read_direct(dest, np.s_[hi:nxt], np.s_[held:held + nxt - hi])
        del dest
        lo, hi = lo + keep, nxt


def _is_blob_pair(g, base):
    b, o = base + ".bytes", base + ".offsets"
    return (b in g and o in g and isinstance(g[b], h5py.Dataset) and isinstance(g[o], h5py.Dataset)
            and g[b].dtype == np.uint8 and g[o].dtype.kind in "iu")


def read_table(path, table):
    """Returns the table at group path `table` as a DataFrame (columns in file order, i.e. in
    creation order; a `c.bytes`/`c.offsets` pair becomes one str column `c` in its place)."""
    with h5py.File(path, "r") as f:
        g = f[table]
        # chunks are read from the file directly only where HDF5's addresses are file offsets
        fd = None
        if f.driver == "sec2" and f.id.get_create_plist().get_userblock() == 0:
            fd = os.open(f.filename, os.O_RDONLY)
        try:
            cols = {}
            for name in g:
                base, dot, part = name.rpartition(".")
                if dot and part in ("bytes", "offsets") and _is_blob_pair(g, base):
                    if base not in cols:
                        cols[base] = _blob_column(g, base, fd)
                    continue
                cols[name] = _column(g[name], fd)
        finally:
            if fd is not None:
                os.close(fd)
        return pd.DataFrame(cols, copy=False)


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


def main(argv=None):
    """The command line: `tally-h5 FILE` lists the tables, `tally-h5 FILE TABLE` prints one,
    `--csv TABLE` writes it as CSV to standard output, `--attrs` prints the run's metadata.
    Errors are one line on stderr (exit 1), never a traceback."""
    import argparse
    import sys
    ap = argparse.ArgumentParser(prog="tally-h5", description="Read a tally output (HDF5) file: list its tables, "
                                 "print one, or write one as CSV.")
    ap.add_argument("file", help="a tally output file (.h5)")
    ap.add_argument("table", nargs="?", help="a table to print, e.g. /items/spatialeval (default: list the tables)")
    ap.add_argument("--csv", metavar="TABLE", help="write TABLE as CSV to standard output")
    ap.add_argument("--attrs", action="store_true", help="print the run's root attributes (job, versions, inputs)")
    a = ap.parse_args(argv)
    try:
        if not h5py.is_hdf5(a.file):
            raise OSError("not an HDF5 file" if os.path.exists(a.file) else "no such file")
        if a.csv:
            read_table(a.file, a.csv).to_csv(sys.stdout, index=False)
        elif a.attrs:
            for k, v in attrs(a.file).items():
                print("%s: %s" % (k, v))
        elif a.table:
            with pd.option_context("display.max_rows", 50, "display.width", 200):
                print(read_table(a.file, a.table))
        else:
            print("\n".join(tables(a.file)))
    except BrokenPipeError:
        return 0
    except KeyError:
        print("tally-h5: %s: no table %s (list them with: tally-h5 %s)" % (a.file, a.csv or a.table, a.file),
              file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print("tally-h5: cannot read %s: %s" % (a.file, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
