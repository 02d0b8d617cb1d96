"""safetensors files (Hugging Face's format): read and written here without extra dependencies.

Layout: 8-byte little-endian header length, a JSON header {name: {dtype, shape, data_offsets}},
then the raw little-endian tensor bytes. Writes are atomic (temporary file, then rename).
"""
import json
import os
import struct
import tempfile

import numpy as np

import pcp

_TO_NP = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32,
          "BOOL": np.bool_, "BF16": np.uint16, "I8": np.int8, "U8": np.uint8, "I16": np.int16}
_FROM_PCP = {pcp.float64: "F64", pcp.float32: "F32", pcp.float16: "F16", pcp.bfloat16: "BF16",
             pcp.int64: "I64", pcp.int32: "I32", pcp.bool_: "BOOL"}


def load_safetensors(path):
    """Returns ({name: pcp.Tensor}, metadata dict)."""
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise ValueError(f"load_safetensors: {path} is too short to be a safetensors file")
        (n,) = struct.unpack("<Q", raw)
        if n > 100_000_000:
            raise ValueError(f"load_safetensors: {path} has an implausible header length {n}")
        header = json.loads(f.read(n))
        data = np.fromfile(f, dtype=np.uint8)
    metadata = header.pop("__metadata__", {}) or {}
    out = {}
    for name, info in header.items():
        dt = info["dtype"]
        if dt not in _TO_NP:
            raise TypeError(f"load_safetensors: tensor '{name}' has unsupported dtype {dt}")
        begin, end = info["data_offsets"]
        if not 0 <= begin <= end <= data.size:
            raise ValueError(f"load_safetensors: tensor '{name}' points outside the file ({begin}, {end})")
        arr = data[begin:end].view(_TO_NP[dt]).reshape(info["shape"])
        if dt == "BF16":  # bfloat16 bits are the top half of a float32
            t = pcp.tensor((arr.astype(np.uint32) << 16).view(np.float32)).astype(pcp.bfloat16)
        elif dt in ("I8", "U8", "I16"):
            t = pcp.tensor(arr.astype(np.int64))
        else:
            t = pcp.tensor(np.ascontiguousarray(arr))
        out[name] = t
    return out, metadata


def save_safetensors(tensors, path, metadata=None):
    """Writes {name: pcp.Tensor} atomically (a crash leaves either the old file or the new one)."""
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name]
        if t.dtype not in _FROM_PCP:
            raise TypeError(f"save_safetensors: tensor '{name}' has unsupported dtype {t.dtype}")
        if t.dtype == pcp.bfloat16:
            buf = (t.astype(pcp.float32).numpy().view(np.uint32) >> 16).astype("<u2").tobytes()
        else:
            buf = np.ascontiguousarray(t.numpy()).tobytes()
        header[name] = {"dtype": _FROM_PCP[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(buf)]}
        chunks.append(buf)
        offset += len(buf)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    hbytes = json.dumps(header, separators=(",", ":")).encode()
    hbytes += b" " * (-len(hbytes) % 8)  # data starts 8-byte aligned
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".safetensors")
    try:
        with os.fdopen(fd, "wb") as f:
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
