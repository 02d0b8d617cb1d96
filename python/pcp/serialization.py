"""safetensors files (Hugging Face's format): read and written here without extra dependencies.

Layout: 8-byte little-endian header length, a JSON header {name: {dtype, shape, data_offsets}},
then the raw little-endian tensor bytes. Reading validates the header as the reference
implementation does (the tensors tile the data exactly: contiguous, no holes, no overlaps, sizes
matching dtype x shape), and every problem is one SafetensorsError naming the file and the tensor.
Writes are atomic (temporary file, then rename) and get the user's normal file mode. Every file
PCP writes carries a CRC32C of each tensor's bytes (metadata key "pcp.crc32c") and a SHA-256 of
the metadata, those CRCs included ("pcp.metadata_sha256"), which reading checks: a flipped bit is
refused, naming the tensor it hit, not loaded. Files without them (other tools') load, and the
first one read says so once.
"""
import concurrent.futures
import hashlib
import io
import json
import math
import os
import struct
import tempfile
import warnings

import numpy as np

import pcp
from pcp import _core

_TO_NP = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "BOOL": "?",
          "BF16": "<u2", "I8": "i1", "U8": "u1", "I16": "<i2"}
_FROM_PCP = {pcp.float64: "F64", pcp.float32: "F32", pcp.float16: "F16", pcp.bfloat16: "BF16",
             pcp.int64: "I64", pcp.int32: "I32", pcp.bool_: "BOOL"}
MAX_HEADER = 100_000_000  # the reference implementation's limit
TMP_PREFIX, TMP_SUFFIX = ".tmp-", ".safetensors"  # an interrupted write's leftover: see remove_stale_temps
TENSOR_CRCS = "pcp.crc32c"  # metadata key: JSON {tensor name: CRC32C of its bytes, 8 hex digits}
CHECKSUM = "pcp.metadata_sha256"  # metadata key: SHA-256 of the rest of the metadata
LEGACY_CHECKSUM = "pcp.sha256"  # the previous release's: one SHA-256 of the data and metadata
_said_unchecked = []  # the first file read without checksums (it is said once)


def _metadata_sha256(metadata):
    """SHA-256 (hex) of the metadata other than the checksum itself."""
    rest = {k: v for k, v in metadata.items() if k != CHECKSUM}
    return hashlib.sha256(json.dumps(rest, sort_keys=True).encode()).hexdigest()


def _legacy_sha256(data, metadata):
    h = hashlib.sha256(data)
    h.update(json.dumps({k: v for k, v in metadata.items() if k != LEGACY_CHECKSUM}, sort_keys=True).encode())
    return h.hexdigest()


def _verify_metadata(path, metadata, names):
    """Checks the metadata's SHA-256 and returns {tensor: CRC32C} of a PCP file (the metadata
    keys of the checksums removed), or None for a file written without them."""
    if TENSOR_CRCS not in metadata and CHECKSUM not in metadata:
        return None
    if CHECKSUM not in metadata:  # a damaged key: the file claims checksums it no longer has
        raise SafetensorsError(path, f"the metadata has {TENSOR_CRCS} but no {CHECKSUM} (a damaged file)")
    if _metadata_sha256(metadata) != metadata.pop(CHECKSUM):
        raise SafetensorsError(path, "its metadata do not match the SHA-256 written with them (a damaged or "
                                     "altered file)")
    try:
        crcs = json.loads(metadata.pop(TENSOR_CRCS))
    except (KeyError, ValueError):
        raise SafetensorsError(path, f"the metadata's {TENSOR_CRCS} is missing or not JSON") from None
    if (not isinstance(crcs, dict) or sorted(crcs) != sorted(names)
            or not all(isinstance(v, str) and len(v) == 8 and all(c in "0123456789abcdef" for c in v)
                       for v in crcs.values())):
        raise SafetensorsError(path, f"{TENSOR_CRCS} does not give each of the file's tensors a CRC32C")
    return crcs


def _unchecked(path):
    if not _said_unchecked:
        _said_unchecked.append(str(path))
        warnings.warn(f"{path}: no PCP checksums (written by another tool): its data is loaded unverified "
                      "(said once for all such files)", stacklevel=4)


class SafetensorsError(ValueError):
    """A safetensors file (or checkpoint) that is corrupt, truncated or does not fit its model:
    a ValueError whose message starts with the file and, where one is to blame, the tensor.
    Making one raises nothing.

    Args:
        path: the file (kept as .path).
        what: what is wrong.
        tensor: the tensor's name, or None (kept as .tensor).

    Example:
        >>> from pcp.serialization import SafetensorsError
        >>> e = SafetensorsError("model.safetensors", "shape (2,) where the model expects (3,)", "wte.weight")
        >>> str(e)
        "model.safetensors: tensor 'wte.weight': shape (2,) where the model expects (3,)"
    """

    def __init__(self, path, what, tensor=None):
        self.path, self.tensor = str(path), tensor
        super().__init__(f"{path}: " + (f"tensor '{tensor}': " if tensor is not None else "") + what)


def _read_header(f, path, size):
    raw = f.read(8)
    if len(raw) != 8:
        raise SafetensorsError(path, f"{size} bytes is too short to be a safetensors file")
    (n,) = struct.unpack("<Q", raw)
    if n > min(MAX_HEADER, size - 8):
        raise SafetensorsError(path, f"header length {n} exceeds the file ({size} bytes)"
                               if n <= MAX_HEADER else f"implausible header length {n}")

    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise SafetensorsError(path, f"duplicate key '{next(k for k in keys if keys.count(k) > 1)}' in the header")
        return dict(pairs)

    try:
        header = json.loads(f.read(n).decode("utf-8"), object_pairs_hook=no_duplicates)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise SafetensorsError(path, f"the header is not valid JSON ({type(e).__name__}: {str(e)[:200]})") from None
    if not isinstance(header, dict):
        raise SafetensorsError(path, f"the header is a JSON {type(header).__name__}, not an object")
    return header, 8 + n


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _check_entries(path, header, data_size):
    """{name: (dtype, shape, begin, end)} of a parsed header, or SafetensorsError."""
    entries = {}
    for name, info in header.items():
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise SafetensorsError(path, f"entry must be {{dtype, shape, data_offsets}}, got {str(info)[:200]}", name)
        dt, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if dt not in _TO_NP:
            raise SafetensorsError(path, f"unsupported dtype {str(dt)[:20]!r} (supported: {', '.join(_TO_NP)})", name)
        if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
            raise SafetensorsError(path, f"shape must be a list of non-negative integers, got {str(shape)[:200]}", name)
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_int(o) for o in offsets)
                and 0 <= offsets[0] <= offsets[1]):
            raise SafetensorsError(path, f"data_offsets must be [begin, end] with 0 <= begin <= end, got "
                                         f"{str(offsets)[:200]}", name)
        nbytes = math.prod(shape) * np.dtype(_TO_NP[dt]).itemsize  # Python ints: no overflow
        if offsets[1] - offsets[0] != nbytes:
            raise SafetensorsError(path, f"data_offsets {offsets} hold {offsets[1] - offsets[0]} bytes, but {dt} "
                                         f"{tuple(shape)} needs {nbytes}", name)
        entries[name] = (dt, tuple(shape), offsets[0], offsets[1])
    # The tensors must tile the data: each begins where the previous ended, the last ends at the file's end.
    end, prev = 0, None
    for name, (_, _, begin, stop) in sorted(entries.items(), key=lambda e: (e[1][2], e[1][3])):
        if begin != end:
            what = f"overlaps tensor '{prev}'" if begin < end else "leaves a hole after the previous tensor"
            raise SafetensorsError(path, f"data_offsets [{begin}, {stop}] {what} (expected to begin at {end})", name)
        end, prev = stop, name
    if end > data_size:
        raise SafetensorsError(path, f"data_offsets end at byte {end}, past the end of the data ({data_size} bytes): "
                                     f"the file is truncated or the offsets are wrong", prev)
    if end < data_size:
        raise SafetensorsError(path, f"{data_size - end} bytes after the last tensor: the header does not cover "
                                     f"the file")
    return entries


def _file_path(path, fn):
    """path as given, if it names a file: open() would take an int as a file descriptor (and
    close it: an open socket or pipe of this process), so only str, bytes and os.PathLike pass."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"{fn}: path must be a str or os.PathLike, got {type(path).__name__}")
    return path


def read_metadata(path):
    """The __metadata__ dict of a safetensors file, reading only its header (which is validated
    as load_safetensors does, so a file this accepts loads).

    Args:
        path: the file.

    Returns:
        A dict of str to str ({} when the file has none).

    Raises:
        FileNotFoundError: no such file.
        SafetensorsError: a corrupt or truncated header.

    Example:
        >>> import os, tempfile
        >>> from pcp.serialization import read_metadata, save_safetensors
        >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
        >>> save_safetensors({"w": pcp.ones(2)}, path, metadata={"step": "10"})
        >>> read_metadata(path)
        {'step': '10'}
    """
    size = os.path.getsize(_file_path(path, "read_metadata"))
    with open(path, "rb") as f:
        header, start = _read_header(f, path, size)
    metadata = _metadata(path, header)
    entries = _check_entries(path, header, size - start)
    _verify_metadata(path, metadata, entries)  # the tensors' CRCs are checked when the data is read
    metadata.pop(LEGACY_CHECKSUM, None)
    return metadata


def _metadata(path, header):
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise SafetensorsError(path, "__metadata__ must map strings to strings")
    return metadata


def load_safetensors(path):
    """Reads a safetensors file into CPU tensors. F64, F32, F16, BF16, I64, I32 and BOOL keep
    their dtype; I8, U8 and I16 become int64. The header is validated as the reference
    implementation does (the tensors tile the data exactly).

    Args:
        path: the file.

    Returns:
        (tensors, metadata): a dict of name to Tensor, and the __metadata__ dict of str to str.

    Raises:
        FileNotFoundError: no such file.
        SafetensorsError: a corrupt or truncated file, or an unsupported dtype (the message names
            the file and the tensor).

    Example:
        >>> import os, tempfile
        >>> from pcp.serialization import load_safetensors, save_safetensors
        >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
        >>> save_safetensors({"w": pcp.ones((2, 2)), "ids": pcp.arange(3)}, path)
        >>> tensors, metadata = load_safetensors(path)
        >>> {k: (v.shape, v.dtype) for k, v in sorted(tensors.items())}
        {'ids': ((3,), pcp.int64), 'w': ((2, 2), pcp.float32)}
    """
    size = os.path.getsize(_file_path(path, "load_safetensors"))
    with open(path, "rb") as f:
        return _read(f, path, size, lambda: np.fromfile(f, dtype=np.uint8))


def loads_safetensors(data, name="<bytes>"):
    """load_safetensors of a file's contents (bytes), as dumps_safetensors makes them.

    Args:
        data: bytes, bytearray or memoryview.
        name: what to call it in errors (default "<bytes>").

    Returns:
        (tensors, metadata), as load_safetensors.

    Raises:
        TypeError: data that is not bytes-like.
        SafetensorsError: as load_safetensors.

    Example:
        >>> from pcp.serialization import dumps_safetensors, loads_safetensors
        >>> tensors, meta = loads_safetensors(dumps_safetensors({"w": pcp.ones(2)}, {"note": "hi"}))
        >>> tensors["w"].tolist(), meta["note"]
        ([1.0, 1.0], 'hi')
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"loads_safetensors: expected bytes, got {type(data).__name__}")
    view = memoryview(data).cast("B")
    f = io.BytesIO(view)
    return _read(f, name, len(view), lambda: np.frombuffer(view, dtype=np.uint8, offset=f.tell()))


def _read(f, path, size, rest):
    """(tensors, metadata) from a file object positioned at its start; rest() reads the data."""
    header, _ = _read_header(f, path, size)
    data = rest()
    metadata = _metadata(path, header)
    entries = _check_entries(path, header, data.size)  # a truncated file is named as such
    crcs = _verify_metadata(path, metadata, entries)  # the caller gets the metadata it wrote
    legacy = metadata.pop(LEGACY_CHECKSUM, None)
    if crcs is None and legacy is None:
        _unchecked(path)
    if legacy is not None and _legacy_sha256(data, metadata) != legacy:
        raise SafetensorsError(path, "its contents do not match the SHA-256 written with them (a damaged or "
                                     "altered file)")
    out = {}
    for name, (dt, shape, begin, end) in entries.items():
        if crcs is not None and int(crcs[name], 16) != _core._crc32c(data[begin:end]):
            raise SafetensorsError(path, "its bytes do not match the CRC32C written with them (a damaged file)", name)
        arr = data[begin:end].copy().view(_TO_NP[dt]).reshape(shape)  # copy: aligned, and owns its bytes
        arr = arr.astype(arr.dtype.newbyteorder("="), copy=False)
        if dt == "BF16":  # bfloat16 bits are the top half of a float32
            t = pcp.tensor((arr.astype(np.uint32) << 16).view(np.float32)).astype(pcp.bfloat16)
        elif dt in ("I8", "U8", "I16"):
            t = pcp.tensor(arr.astype(np.int64))
        else:
            t = pcp.tensor(arr)
        out[name] = t
    return out, metadata


def check_tensor(path, name, t, shape, dtypes=(pcp.float32,)):
    """Refuses a loaded tensor whose shape or dtype does not fit, or that holds NaN or inf: such a
    file would otherwise load and train to NaN without a word.

    Args:
        path: the file it came from (for the message).
        name: the tensor's name (for the message).
        t: the tensor.
        shape: the shape expected.
        dtypes: the dtypes accepted (default (pcp.float32,)).

    Returns:
        None.

    Raises:
        SafetensorsError: another dtype or shape, or non-finite values (the first one's index
            named).

    Example:
        >>> from pcp.serialization import SafetensorsError, check_tensor
        >>> check_tensor("w.safetensors", "w", pcp.ones(3), (3,))
        >>> try:
        ...     check_tensor("w.safetensors", "w", pcp.tensor([1.0, float("nan")]), (2,))
        ... except SafetensorsError as e:
        ...     print(e)
        w.safetensors: tensor 'w': 1 non-finite values (NaN or inf), first at index (1,)
    """
    if t.dtype not in dtypes:
        raise SafetensorsError(path, f"dtype {t.dtype} where the model expects {' or '.join(map(str, dtypes))}", name)
    if tuple(t.shape) != tuple(shape):
        raise SafetensorsError(path, f"shape {tuple(t.shape)} where the model expects {tuple(shape)}", name)
    if t.dtype in (pcp.float16, pcp.bfloat16, pcp.float32, pcp.float64):
        bad = ~np.isfinite(t.astype(pcp.float32).numpy())
        if bad.any():
            raise SafetensorsError(path, f"{int(bad.sum())} non-finite values (NaN or inf), first at index "
                                         f"{tuple(int(i) for i in np.argwhere(bad)[0])}", name)


def _file_mode():
    """0666 less the umask: what open() would give (mkstemp makes 0600 files)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _encode(tensors, metadata, fn):
    """(header bytes, data chunks) of a safetensors file holding tensors and metadata, with the
    metadata's checksum added."""
    header, chunks = {}, []
    with concurrent.futures.ThreadPoolExecutor(2) as pool:  # each CRC32C runs while the next tensor is copied
        crcs = [pool.submit(_core._crc32c, c) for c in _chunks(tensors, header, chunks, fn)]
        crcs = {name: f"{c.result():08x}" for name, c in zip(sorted(tensors), crcs)}
    meta = {str(k): str(v) for k, v in (metadata or {}).items()}
    meta[TENSOR_CRCS] = json.dumps(crcs)
    meta[CHECKSUM] = _metadata_sha256(meta)
    header["__metadata__"] = meta
    hbytes = json.dumps(header, separators=(",", ":")).encode()
    hbytes += b" " * (-len(hbytes) % 8)  # data starts 8-byte aligned
    return hbytes, chunks


def _chunks(tensors, header, chunks, fn):
    """Yields each tensor's bytes, in name order, as it adds them to chunks and their entry to header."""
    offset = 0
    for name in sorted(tensors):
        t = tensors[name]
        if t.dtype not in _FROM_PCP:
            raise TypeError(f"{fn}: tensor '{name}' has unsupported dtype {t.dtype}")
        if t.dtype == pcp.bfloat16:
            buf = (t.astype(pcp.float32).numpy().view(np.uint32) >> 16).astype("<u2").tobytes()
        else:
            buf = np.ascontiguousarray(t.numpy()).tobytes()
        header[name] = {"dtype": _FROM_PCP[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(buf)]}
        chunks.append(buf)
        offset += len(buf)
        yield buf


def dumps_safetensors(tensors, metadata=None):
    """save_safetensors into bytes: the contents of the file it would write.

    Args:
        tensors: a dict of name to Tensor.
        metadata: a dict stored as the __metadata__ (default None).

    Returns:
        bytes.

    Raises:
        TypeError: a tensor of a dtype safetensors does not have.

    Example:
        >>> from pcp.serialization import dumps_safetensors
        >>> len(dumps_safetensors({"w": pcp.zeros(4)})) > 16
        True
    """
    hbytes, chunks = _encode(tensors, metadata, "dumps_safetensors")
    return b"".join([struct.pack("<Q", len(hbytes)), hbytes] + chunks)


def save_safetensors(tensors, path, metadata=None):
    """Writes tensors to a safetensors file atomically (a temporary file, then a rename: a crash
    leaves either the old file or the new one). Tensors on a GPU are copied to the host; names are
    written in sorted order and the data is 8-byte aligned.

    Args:
        tensors: a dict of name to Tensor (bool, int32, int64, float16, bfloat16, float32 or
            float64).
        path: the file (its folder must exist).
        metadata: a dict stored as the file's __metadata__, keys and values turned into str
            (default None).

    Returns:
        None.

    Raises:
        TypeError: a tensor of another dtype, or a path that is not a str or os.PathLike.
        OSError: the file cannot be written (its folder missing, no space).

    Example:
        >>> import os, tempfile
        >>> from pcp.serialization import save_safetensors
        >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
        >>> save_safetensors({"w": pcp.zeros((4, 4), dtype=pcp.bfloat16)}, path)
        >>> os.path.getsize(path) > 32
        True
    """
    _file_path(path, "save_safetensors")
    hbytes, chunks = _encode(tensors, metadata, "save_safetensors")
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=TMP_PREFIX, suffix=TMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            if hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), _file_mode())
            f.write(struct.pack("<Q", len(hbytes)))
            f.write(hbytes)
            for c in chunks:
                f.write(c)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json(path, obj):
    """Writes obj as indented UTF-8 JSON, atomically (a crash leaves the old file or the new one).

    Args:
        path: the file (its folder must exist).
        obj: anything json.dump takes.

    Returns:
        None.

    Raises:
        TypeError: obj holds something JSON cannot.
        OSError: the file cannot be written.

    Example:
        >>> import json, os, tempfile
        >>> from pcp.serialization import write_json
        >>> path = os.path.join(tempfile.mkdtemp(), "config.json")
        >>> write_json(path, {"n_layer": 2})
        >>> json.load(open(path))
        {'n_layer': 2}
    """
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=TMP_PREFIX, suffix=TMP_SUFFIX)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            if hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), _file_mode())
            json.dump(obj, f, indent=2, ensure_ascii=False)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def remove_stale_temps(directory):
    """Deletes the temporary files of writes (save_safetensors, write_json) that were killed
    midway. Call it only where no other process writes (a run holds its folder's lock).

    Args:
        directory: the folder to clean.

    Returns:
        The names of the files deleted, a sorted list.

    Raises:
        OSError: the folder cannot be listed, or a file cannot be deleted.

    Example:
        >>> import os, tempfile
        >>> from pcp.serialization import remove_stale_temps
        >>> folder = tempfile.mkdtemp()
        >>> open(os.path.join(folder, ".tmp-abc.safetensors"), "w").close()
        >>> remove_stale_temps(folder)
        ['.tmp-abc.safetensors']
    """
    removed = []
    for name in sorted(os.listdir(directory)):
        if name.startswith(TMP_PREFIX) and name.endswith(TMP_SUFFIX):
            os.unlink(os.path.join(directory, name))
            removed.append(name)
    return removed
