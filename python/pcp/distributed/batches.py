"""How a DiLoCo worker draws its batches: which train rows are its shard, and the samplers of a
language model's token windows and of a task's rows."""
import numpy as np


def shard_bounds(n_train, split, rank, parts):
    """[lo, hi) of the train tokens a worker samples: all of them (iid), or slice rank % parts."""
    if split == "iid":
        return 0, n_train
    k = rank % parts
    return n_train * k // parts, n_train * (k + 1) // parts


class TokenWindows:
    """Batches of a language model: (x, y) windows of block_size + 1 tokens at random offsets of
    a 1-D token array, on the CPU whatever the device (token ids are host metadata to the
    embedding and the loss)."""

    def __init__(self, block_size):
        self.block_size = block_size
        self.tokens_per_row = block_size

    def split(self, data, lo, hi, n_train):
        return data[lo:hi], data[n_train:]

    def fits(self, part):
        return len(part) > self.block_size

    def sample(self, rng, part, batch_size, device):
        import pcp
        ix = rng.integers(0, len(part) - self.block_size, batch_size)
        block = part[ix[:, None] + np.arange(self.block_size + 1)[None, :]].astype(np.int64)
        return pcp.tensor(block[:, :-1], device="cpu"), pcp.tensor(block[:, 1:], device="cpu")


class Rows:
    """Batches of rows drawn at random from named arrays of one length (features and targets),
    in the order `names` lists them: floating arrays on the worker's device, integer ones (class
    indices) on the CPU."""

    def __init__(self, names):
        self.names = list(names)
        self.tokens_per_row = 1

    def split(self, data, lo, hi, n_train):
        return {k: data[k][lo:hi] for k in self.names}, {k: data[k][n_train:] for k in self.names}

    def fits(self, part):
        return len(part[self.names[0]]) > 0

    def sample(self, rng, part, batch_size, device):
        import pcp
        ix = rng.integers(0, len(part[self.names[0]]), batch_size)
        out = []
        for k in self.names:
            a = np.ascontiguousarray(part[k][ix])
            out.append(pcp.tensor(a, device=str(device) if np.issubdtype(a.dtype, np.floating) else "cpu"))
        return tuple(out)


def batches_of(spec):
    """The batch sampler a worker's data spec describes: {"kind": "tokens", "block_size": T} or
    {"kind": "rows", "names": [...]}."""
    if spec["kind"] == "tokens":
        return TokenWindows(int(spec["block_size"]))
    if spec["kind"] == "rows":
        return Rows(spec["names"])
    raise ValueError(f"diloco worker: unknown data kind {spec['kind']!r} (expected 'tokens' or 'rows')")
