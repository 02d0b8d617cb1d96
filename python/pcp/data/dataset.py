"""A token stream split 90/10 into train and val, sampled in random (x, y) blocks like nanoGPT."""
import hashlib
import os

import numpy as np

import pcp


class TokenDataset:
    """Tokens of a text, cached as a memory-mapped uint16/uint32 .bin next to a cache key.

    get_batch draws its offsets from pcp's seeded generator, so a run (and a resumed run)
    sees the same batches for the same seed.
    """

    def __init__(self, tokens, block_size, val_fraction=0.1):
        tokens = np.asarray(tokens)
        if tokens.ndim != 1:
            raise ValueError(f"TokenDataset: tokens must be 1-D, got shape {tokens.shape}")
        if not 0.0 < val_fraction < 1.0:
            raise ValueError(f"TokenDataset: val_fraction must be in (0, 1), got {val_fraction}")
        n = int(len(tokens) * (1.0 - val_fraction))
        self.block_size = block_size
        self.splits = {"train": tokens[:n], "val": tokens[n:]}
        for name, data in self.splits.items():
            if len(data) <= block_size:
                raise ValueError(f"TokenDataset: the {name} split has {len(data)} tokens, fewer than "
                                 f"block_size + 1 = {block_size + 1}")

    @classmethod
    def from_text_file(cls, path, tokenizer, block_size, cache_dir=None, val_fraction=0.1):
        """Tokenizes a UTF-8 text file once; later runs memory-map the cached .bin."""
        with open(path, "rb") as f:
            raw = f.read()
        cache_dir = cache_dir or os.path.join(os.path.dirname(os.path.abspath(path)), ".pcp-cache")
        return cls.from_text(raw.decode("utf-8"), tokenizer, block_size, cache_dir, val_fraction,
                             name=os.path.basename(path))

    @classmethod
    def from_text(cls, text, tokenizer, block_size, cache_dir=None, val_fraction=0.1, name="text"):
        """Tokenizes `text`; with a cache_dir, once: the tokens are kept there as a .bin named by
        `name` and a hash of the text and the tokenizer, which later runs memory-map."""
        if cache_dir is None:
            return cls(cls._tokens(text, tokenizer), block_size, val_fraction)
        key = hashlib.sha256(text.encode("utf-8") + tokenizer.to_json().encode()).hexdigest()[:16]
        bin_path = os.path.join(cache_dir, f"{name}.{key}.bin")
        if not os.path.exists(bin_path):
            tokens = cls._tokens(text, tokenizer)
            try:
                os.makedirs(cache_dir, exist_ok=True)
                tmp = bin_path + f".tmp{os.getpid()}"
                tokens.tofile(tmp)
                os.replace(tmp, bin_path)
            except OSError:  # read-only location: keep the tokens in memory
                return cls(tokens, block_size, val_fraction)
        return cls(np.memmap(bin_path, dtype=cls._token_dtype(tokenizer), mode="r"), block_size, val_fraction)

    @staticmethod
    def _token_dtype(tokenizer):
        return np.uint16 if tokenizer.vocab_size <= 65535 else np.uint32

    @classmethod
    def _tokens(cls, text, tokenizer):
        return np.array(tokenizer.encode(text), dtype=cls._token_dtype(tokenizer))

    def get_batch(self, split, batch_size):
        """(x, y) int64 tensors of shape (batch_size, block_size); y is x shifted by one token.

        They stay on the CPU whatever the default device: token ids index embeddings and targets
        as host metadata, so a model on a GPU takes them without a transfer to wait for."""
        if split not in self.splits:
            raise ValueError(f"get_batch: split must be 'train' or 'val', got {split!r}")
        data = self.splits[split]
        high = len(data) - self.block_size
        ix = pcp.randint(0, high, (batch_size,), device="cpu").numpy()
        offsets = ix[:, None] + np.arange(self.block_size + 1)[None, :]
        block = data[offsets].astype(np.int64)
        return pcp.tensor(block[:, :-1], device="cpu"), pcp.tensor(block[:, 1:], device="cpu")
