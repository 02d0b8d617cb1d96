"""A token stream split 90/10 into train and val, sampled in random (x, y) blocks like nanoGPT."""
import hashlib
import os

import numpy as np

import pcp


class TokenDataset:
    """A stream of token ids split into a train part (the first 1 - val_fraction) and a val part
    (the rest), sampled in random (x, y) blocks as nanoGPT does. Made from a text with
    from_text or from_text_file, the tokens are cached as a memory-mapped uint16/uint32 .bin
    file named by a hash of the text and the tokenizer.

    get_batch draws its offsets from pcp's seeded generator, so a run (and a resumed run)
    sees the same batches for the same seed.

    Args:
        tokens: a 1-D sequence of token ids (a list, or a NumPy array or memmap).
        block_size: the length T of each sample.
        val_fraction: the share of tokens held out for validation, in (0, 1) (default 0.1).

    Raises:
        ValueError: tokens not 1-D, val_fraction outside (0, 1), or a split of no more than
            block_size tokens.

    Example:
        >>> from pcp.data import TokenDataset
        >>> data = TokenDataset(list(range(100)), block_size=8)
        >>> len(data.splits["train"]), len(data.splits["val"])
        (90, 10)
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
        """The dataset of a UTF-8 text file, tokenized once: the tokens are cached in cache_dir and
        later runs memory-map them.

        Args:
            path: the text file.
            tokenizer: a CharTokenizer or BPETokenizer (anything with encode, to_json, vocab_size).
            block_size: the sample length T.
            cache_dir: where the token cache goes (default: .pcp-cache beside the file).
            val_fraction: the validation share (default 0.1).

        Returns:
            A TokenDataset.

        Raises:
            OSError: the file cannot be read.
            UnicodeDecodeError: the file is not UTF-8.
            ValueError: as TokenDataset, or a character the tokenizer does not know.

        Example:
            >>> import os, tempfile
            >>> from pcp.data import CharTokenizer, TokenDataset
            >>> path = os.path.join(tempfile.mkdtemp(), "text.txt")
            >>> with open(path, "w") as f:
            ...     _ = f.write("to be or not to be " * 20)
            >>> tok = CharTokenizer(open(path).read())
            >>> TokenDataset.from_text_file(path, tok, block_size=16).block_size
            16
        """
        with open(path, "rb") as f:
            raw = f.read()
        cache_dir = cache_dir or os.path.join(os.path.dirname(os.path.abspath(path)), ".pcp-cache")
        return cls.from_text(raw.decode("utf-8"), tokenizer, block_size, cache_dir, val_fraction,
                             name=os.path.basename(path))

    @classmethod
    def from_text(cls, text, tokenizer, block_size, cache_dir=None, val_fraction=0.1, name="text"):
        """The dataset of a text; with a cache_dir, tokenized once: the tokens are kept there as a
        .bin named by `name` and a hash of the text and the tokenizer, which later runs
        memory-map (an unwritable cache_dir keeps them in memory).

        Args:
            text: a str.
            tokenizer: a CharTokenizer or BPETokenizer.
            block_size: the sample length T.
            cache_dir: a folder for the token cache, or None (default) for none.
            val_fraction: the validation share (default 0.1).
            name: the cache file's name stem (default 'text').

        Returns:
            A TokenDataset.

        Raises:
            ValueError: as TokenDataset, or a character the tokenizer does not know.

        Example:
            >>> from pcp.data import CharTokenizer, TokenDataset
            >>> text = "hello world " * 10
            >>> data = TokenDataset.from_text(text, CharTokenizer(text), block_size=4)
            >>> len(data.splits["train"]) + len(data.splits["val"]) == len(text)
            True
        """
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
        """A random batch of blocks: x holds batch_size runs of block_size tokens at offsets drawn
        from the seeded generator, and y the same runs shifted one token on (each position's next
        token, the targets).

        They stay on the CPU whatever the default device: token ids index embeddings and targets
        as host metadata, so a model on a GPU takes them without a transfer to wait for.

        Args:
            split: 'train' or 'val'.
            batch_size: B, the number of blocks.

        Returns:
            (x, y): two (B, block_size) int64 tensors on the CPU.

        Raises:
            ValueError: another split.

        Example:
            >>> from pcp.data import TokenDataset
            >>> x, y = TokenDataset(list(range(100)), block_size=8).get_batch("train", 4)
            >>> x.shape, x.dtype, bool((x[:, 1:] == y[:, :-1]).all())
            ((4, 8), pcp.int64, True)
        """
        if split not in self.splits:
            raise ValueError(f"get_batch: split must be 'train' or 'val', got {split!r}")
        data = self.splits[split]
        high = len(data) - self.block_size
        ix = pcp.randint(0, high, (batch_size,), device="cpu").numpy()
        offsets = ix[:, None] + np.arange(self.block_size + 1)[None, :]
        block = data[offsets].astype(np.int64)
        return pcp.tensor(block[:, :-1], device="cpu"), pcp.tensor(block[:, 1:], device="cpu")
