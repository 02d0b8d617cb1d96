"""Pseudo-gradient encodings for the trip from worker to shepherd, and their sizes.

none: float32 as is; float16: rounded to half precision; int8: per-tensor symmetric
quantisation, q = round(x / s) with s = max|x| / 127, sent with its float32 scale.
"""
import numpy as np


def encode(arrays, kind):
    """Encodes pseudo-gradients for the trip from a worker to the shepherd.

    Args:
        arrays: a dict of name to float32 NumPy array.
        kind: 'none' (float32 as is), 'float16' (rounded to half precision) or 'int8' (per-array
            symmetric quantisation: q = round(x / s), s = max|x| / 127).

    Returns:
        A dict of name to encoded value: an array, or for int8 a tuple (int8 array, float32 scale).

    Raises:
        ValueError: an unknown kind.

    Example:
        >>> import numpy as np
        >>> from pcp.distributed import encode
        >>> q, scale = encode({"w": np.array([0.5, -1.0], np.float32)}, "int8")["w"]
        >>> q.tolist(), round(float(scale) * 127, 6)
        ([64, -127], 1.0)
    """
    if kind == "none":
        return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in arrays.items()}
    if kind == "float16":
        return {k: v.astype(np.float16) for k, v in arrays.items()}
    if kind == "int8":
        out = {}
        for k, v in arrays.items():
            peak = float(np.max(np.abs(v))) if v.size else 0.0
            scale = peak / 127.0 if peak > 0 else 1.0
            out[k] = (np.clip(np.rint(v / scale), -127, 127).astype(np.int8), np.float32(scale))
        return out
    raise ValueError(f"encode: unknown compression {kind!r} (none, float16 or int8)")


def decode(encoded):
    """The float32 arrays back from encode's output, whichever kind it was (int8 values are
    multiplied back by their scale). It raises nothing for encode's output.

    Args:
        encoded: a dict as encode returns.

    Returns:
        A dict of name to float32 NumPy array.

    Example:
        >>> import numpy as np
        >>> from pcp.distributed import decode, encode
        >>> x = {"w": np.array([0.25, -2.0], np.float32)}
        >>> decode(encode(x, "float16"))["w"].tolist()
        [0.25, -2.0]
    """
    out = {}
    for k, v in encoded.items():
        if isinstance(v, tuple):
            q, scale = v
            out[k] = q.astype(np.float32) * np.float32(scale)
        else:
            out[k] = np.asarray(v, dtype=np.float32)
    return out


def nbytes(encoded):
    """Bytes on the wire: the arrays' data (and int8 scales), not Python or Ray framing."""
    return sum(v[0].nbytes + 4 if isinstance(v, tuple) else v.nbytes for v in encoded.values())
