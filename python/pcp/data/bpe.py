"""GPT-2's byte-level BPE, loaded from vocab.json + merges.txt (or a tokenizer.json)."""
import json
import os
import re

try:  # the `regex` module knows Unicode classes; `re` gets an equivalent pattern
    import regex as _re

    _PATTERN = _re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
except ImportError:  # pragma: no cover - depends on the environment
    _PATTERN = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+(?!\S)|\s+|_+""")


def bytes_to_unicode():
    """GPT-2's reversible map from the 256 byte values to printable Unicode characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


class BPETokenizer:
    """GPT-2's byte-level byte-pair encoding: text is split into words by GPT-2's pattern, each
    word's UTF-8 bytes are mapped to printable characters (a space becomes 'Ġ'), and adjacent
    pieces are merged by the merges' priority until none applies; each piece is then a token.
    Load GPT-2's own with from_pretrained or from_files.

    Args:
        vocab: a dict of token string to id.
        merges: a list of (a, b) pairs of token strings, highest priority first.

    Raises:
        TypeError: vocab cannot be made a dict, or a merge is not a sequence.

    Example:
        >>> from pcp.data import BPETokenizer
        >>> tok = BPETokenizer({"h": 0, "i": 1, "hi": 2, "Ġ": 3}, [("h", "i")])
        >>> tok.encode("hi hi"), tok.decode([2, 3, 0])
        ([2, 3, 2], 'hi h')
    """

    def __init__(self, vocab, merges):
        self.encoder = dict(vocab)
        self.decoder = {i: t for t, i in self.encoder.items()}
        self.ranks = {tuple(m): i for i, m in enumerate(merges)}
        self.byte_encoder = bytes_to_unicode()
        self.byte_decoder = {c: b for b, c in self.byte_encoder.items()}
        self._cache = {}

    @classmethod
    def from_files(cls, vocab_path, merges_path):
        """The tokenizer of GPT-2's vocab.json and merges.txt files.

        Args:
            vocab_path: the vocab.json path (token to id).
            merges_path: the merges.txt path (one 'a b' pair a line, after a '#version' line).

        Returns:
            A BPETokenizer.

        Raises:
            OSError: a file cannot be read.
            ValueError: invalid JSON, or a merges line that is not two tokens.

        Example:
            >>> import os, tempfile
            >>> from pcp.data import BPETokenizer
            >>> out = tempfile.mkdtemp()
            >>> BPETokenizer({"a": 0, "b": 1, "ab": 2}, [("a", "b")]).save_pretrained(out)
            >>> tok = BPETokenizer.from_files(os.path.join(out, "vocab.json"), os.path.join(out, "merges.txt"))
            >>> tok.encode("abab")
            [2, 2]
        """
        with open(vocab_path, encoding="utf-8") as f:
            vocab = json.load(f)
        merges = []
        with open(merges_path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line or line.startswith("#version"):
                    continue
                parts = line.split(" ")
                if len(parts) != 2:
                    raise ValueError(f"BPETokenizer: bad merges line {line!r} in {merges_path}")
                merges.append(tuple(parts))
        return cls(vocab, merges)

    @classmethod
    def from_tokenizer_json(cls, path):
        """The tokenizer of a Hugging Face tokenizer.json holding a BPE model (its vocab and
        merges).

        Args:
            path: the tokenizer.json path.

        Returns:
            A BPETokenizer.

        Raises:
            OSError: the file cannot be read.
            ValueError: invalid JSON.
            KeyError: no model with a vocab and merges in it.

        Example:
            >>> import json, os, tempfile
            >>> from pcp.data import BPETokenizer
            >>> path = os.path.join(tempfile.mkdtemp(), "tokenizer.json")
            >>> with open(path, "w") as f:
            ...     json.dump({"model": {"vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}, f)
            >>> BPETokenizer.from_tokenizer_json(path).encode("ab")
            [2]
        """
        with open(path, encoding="utf-8") as f:
            model = json.load(f)["model"]
        merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
        return cls(model["vocab"], merges)

    @classmethod
    def from_pretrained(cls, directory):
        """The tokenizer saved in a local directory: its vocab.json and merges.txt, else its
        tokenizer.json (as Hugging Face's GPT-2 folders hold).

        Args:
            directory: the folder.

        Returns:
            A BPETokenizer.

        Raises:
            FileNotFoundError: the folder holds neither form.
            ValueError: a file that does not parse.

        Example:
            >>> import tempfile
            >>> from pcp.data import BPETokenizer
            >>> out = tempfile.mkdtemp()
            >>> BPETokenizer({"a": 0, "b": 1, "ab": 2}, [("a", "b")]).save_pretrained(out)
            >>> BPETokenizer.from_pretrained(out).vocab_size
            3
        """
        v, m, t = (os.path.join(directory, n) for n in ("vocab.json", "merges.txt", "tokenizer.json"))
        if os.path.exists(v) and os.path.exists(m):
            return cls.from_files(v, m)
        if os.path.exists(t):
            return cls.from_tokenizer_json(t)
        raise FileNotFoundError(f"BPETokenizer: no vocab.json + merges.txt or tokenizer.json in {directory}")

    def save_pretrained(self, directory):
        """Writes `vocab.json` and `merges.txt` (GPT-2's files, which `from_pretrained` and
        `transformers.GPT2Tokenizer.from_pretrained` read) and a `tokenizer_config.json`.

        Args:
            directory: where to write (created when missing).

        Returns:
            None.

        Raises:
            OSError: the directory cannot be created or written.

        Example:
            >>> import os, tempfile
            >>> from pcp.data import BPETokenizer
            >>> out = tempfile.mkdtemp()
            >>> BPETokenizer({"a": 0}, []).save_pretrained(out)
            >>> sorted(os.listdir(out))
            ['merges.txt', 'tokenizer_config.json', 'vocab.json']
        """
        from pcp.serialization import write_json
        os.makedirs(directory, exist_ok=True)
        write_json(os.path.join(directory, "vocab.json"), self.encoder)
        merges = sorted(self.ranks, key=self.ranks.get)
        with open(os.path.join(directory, "merges.txt"), "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
        write_json(os.path.join(directory, "tokenizer_config.json"), {"tokenizer_class": "GPT2Tokenizer"})

    @property
    def vocab_size(self):
        """The number of tokens, the model's vocab_size (50257 for GPT-2's).

        Example:
            >>> from pcp.data import BPETokenizer
            >>> BPETokenizer({"a": 0, "b": 1}, []).vocab_size
            2
        """
        return len(self.encoder)

    def _bpe(self, word):
        if word in self._cache:
            return self._cache[word]
        parts = list(word)
        while len(parts) > 1:
            pairs = [(self.ranks.get((a, b), float("inf")), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
            rank, i = min(pairs)
            if rank == float("inf"):
                break
            a, b = parts[i], parts[i + 1]
            merged, j = [], 0
            while j < len(parts):  # merge every occurrence of (a, b), left to right
                if j + 1 < len(parts) and parts[j] == a and parts[j + 1] == b:
                    merged.append(a + b)
                    j += 2
                else:
                    merged.append(parts[j])
                    j += 1
            parts = merged
        self._cache[word] = parts
        return parts

    def encode(self, text):
        """The token ids of a text.

        Args:
            text: a str.

        Returns:
            A list of ints.

        Raises:
            ValueError: a piece that is not in the vocabulary (a vocabulary without all 256
                byte tokens).

        Example:
            >>> from pcp.data import BPETokenizer
            >>> BPETokenizer({"a": 0, "b": 1, "ab": 2}, [("a", "b")]).encode("aab")
            [0, 2]
        """
        ids = []
        for piece in _PATTERN.findall(text):
            mapped = "".join(self.byte_encoder[b] for b in piece.encode("utf-8"))
            for tok in self._bpe(mapped):
                if tok not in self.encoder:
                    raise ValueError(f"BPETokenizer.encode: token {tok!r} is not in the vocabulary")
                ids.append(self.encoder[tok])
        return ids

    def decode(self, ids):
        """The text of a sequence of token ids (bytes that are not valid UTF-8 become U+FFFD).

        Args:
            ids: ints in the vocabulary.

        Returns:
            A str.

        Raises:
            ValueError: an id that is not in the vocabulary.

        Example:
            >>> from pcp.data import BPETokenizer
            >>> BPETokenizer({"a": 0, "b": 1, "ab": 2}, [("a", "b")]).decode([2, 0])
            'aba'
        """
        try:
            text = "".join(self.decoder[int(i)] for i in ids)
        except KeyError as e:
            raise ValueError(f"BPETokenizer.decode: id {e.args[0]} is not in the vocabulary") from None
        return bytes(self.byte_decoder[c] for c in text).decode("utf-8", errors="replace")

    def to_json(self):
        """A short JSON description of the tokenizer (its kind and sizes), which keys token caches.
        It raises nothing.

        Returns:
            A str.

        Example:
            >>> from pcp.data import BPETokenizer
            >>> BPETokenizer({"a": 0, "b": 1, "ab": 2}, [("a", "b")]).to_json()
            '{"type": "bpe", "size": 3, "merges": 1}'
        """
        return json.dumps({"type": "bpe", "size": len(self.encoder), "merges": len(self.ranks)})
