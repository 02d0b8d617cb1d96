"""Pseudo-gradient encodings for the trip from worker to shepherd, and their sizes.

none: float32 as is. float16: rounded to half precision. int8, int4 and fp4 quantise blocks of
BLOCK consecutive values (in the array's C order), each with its own float32 scale, so one large
value costs precision only to its own block:
- int8: q = round(x / s) in [-127, 127], s = max|x| / 127 over the block;
- int4: q = round(x / s) in [-7, 7], s = max|x| / 7, two values a byte;
- fp4: x / s rounded to the nearest E2M1 number (0, 0.5, 1, 1.5, 2, 3, 4, 6, each signed),
  s = max|x| / 6, two values a byte.
Integer codes round ties to even, fp4 ties to the smaller magnitude; an all-zero block gets
scale 1. Decoding multiplies back in float32, and the
shepherd averages in float32.
"""
import numpy as np

COMPRESSIONS = ("none", "float16", "int8", "int4", "fp4")
AUTO_LEVELS = ("none", "int8", "int4")  # compression="auto": a worker behind a slow link goes up these
BLOCK = 64
_FP4 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], np.float32)  # E2M1's magnitudes, by code
_LEVELS = {"int8": 127.0, "int4": 7.0, "fp4": 6.0}  # the largest magnitude q takes


def base_compression(kind):
    """What `kind` (a DiLoCoConfig.compression) encodes with when nothing more is known: 'auto'
    starts every worker, and the shepherd's outer steps, at float32."""
    return "none" if kind == "auto" else kind


def _blocks(v):
    """v as rows of BLOCK values (the last padded with zeros), and its scales."""
    flat = np.ascontiguousarray(v, dtype=np.float32).reshape(-1)
    rows = np.zeros((-(-flat.size // BLOCK), BLOCK), np.float32)
    rows.reshape(-1)[:flat.size] = flat
    return rows


def _quantize(v, kind):
    rows = _blocks(v)
    peak = np.max(np.abs(rows), axis=1, keepdims=True) if rows.size else np.zeros((0, 1), np.float32)
    scales = np.where(peak > 0, peak / _LEVELS[kind], 1.0).astype(np.float32)
    x = rows / scales
    if kind == "int8":
        return np.clip(np.rint(x), -127, 127).astype(np.int8), scales
    if kind == "int4":
        codes = (np.clip(np.rint(x), -7, 7) + 8).astype(np.uint8)  # 1..15
    else:  # fp4: the nearest magnitude (the lower of two at a tie), and a sign bit
        mag = np.abs(x)
        codes = np.searchsorted((_FP4[1:] + _FP4[:-1]) / 2, mag, side="left").astype(np.uint8)
        codes |= np.where(x < 0, 8, 0).astype(np.uint8)
    return codes[:, 0::2] | (codes[:, 1::2] << 4), scales


def _dequantize(kind, shape, data, scales):
    if kind == "int8":
        rows = data.astype(np.float32)
    else:
        codes = np.empty((data.shape[0], BLOCK), np.uint8)
        codes[:, 0::2], codes[:, 1::2] = data & 15, data >> 4
        if kind == "int4":
            rows = codes.astype(np.float32) - 8
        else:
            rows = np.where(codes & 8, -1.0, 1.0).astype(np.float32) * _FP4[codes & 7]
    n = int(np.prod(shape))
    return (rows * scales).reshape(-1)[:n].reshape(shape)


def encode(arrays, kind):
    """Encodes pseudo-gradients for the trip from a worker to the shepherd.

    Args:
        arrays: a dict of name to float32 NumPy array.
        kind: 'none', 'float16', 'int8', 'int4' or 'fp4' (see the module's text).

    Returns:
        A dict of name to encoded value: an array (none, float16), or a tuple (kind, shape,
        packed codes, float32 scales of each block).

    Raises:
        ValueError: an unknown kind.

    Example:
        >>> import numpy as np
        >>> from pcp.distributed import decode, encode
        >>> kind, shape, q, scales = encode({"w": np.array([0.5, -1.0], np.float32)}, "int8")["w"]
        >>> q.ravel()[:2].tolist(), round(float(scales[0, 0]) * 127, 6)
        ([64, -127], 1.0)
    """
    if kind == "none":
        return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in arrays.items()}
    if kind == "float16":
        return {k: np.asarray(v).astype(np.float16) for k, v in arrays.items()}
    if kind in _LEVELS:
        return {k: (kind, tuple(np.shape(v)), *_quantize(v, kind)) for k, v in arrays.items()}
    raise ValueError(f"encode: unknown compression {kind!r} ({', '.join(COMPRESSIONS)})")


def decode(encoded):
    """The float32 arrays back from encode's output, whichever kind it was (quantised values
    multiplied back by their block's scale). It raises nothing for encode's output.

    Args:
        encoded: a dict as encode returns.

    Returns:
        A dict of name to float32 NumPy array.

    Example:
        >>> import numpy as np
        >>> from pcp.distributed import decode, encode
        >>> x = {"w": np.array([0.5, -2.0], np.float32)}
        >>> decode(encode(x, "float16"))["w"].tolist(), decode(encode(x, "fp4"))["w"].tolist()
        ([0.5, -2.0], [0.5, -2.0])
    """
    return {k: _dequantize(*v) if isinstance(v, tuple) else np.asarray(v, dtype=np.float32) for k, v in encoded.items()}


def nbytes(encoded):
    """Bytes on the wire: the arrays' data and the blocks' scales, not Python or Ray framing."""
    return sum(v[2].nbytes + v[3].nbytes if isinstance(v, tuple) else v.nbytes for v in encoded.values())
