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
    def __init__(self, vocab, merges):
        """vocab: token string -> id; merges: list of (a, b) pairs in priority order."""
        self.encoder = dict(vocab)
        self.decoder = {i: t for t, i in self.encoder.items()}
        self.ranks = {tuple(m): i for i, m in enumerate(merges)}
        self.byte_encoder = bytes_to_unicode()
        self.byte_decoder = {c: b for b, c in self.byte_encoder.items()}
        self._cache = {}

    @classmethod
    def from_files(cls, vocab_path, merges_path):
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
        with open(path, encoding="utf-8") as f:
            model = json.load(f)["model"]
        merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
        return cls(model["vocab"], merges)

    @classmethod
    def from_pretrained(cls, directory):
        """vocab.json + merges.txt, or tokenizer.json, from a local directory."""
        v, m, t = (os.path.join(directory, n) for n in ("vocab.json", "merges.txt", "tokenizer.json"))
        if os.path.exists(v) and os.path.exists(m):
            return cls.from_files(v, m)
        if os.path.exists(t):
            return cls.from_tokenizer_json(t)
        raise FileNotFoundError(f"BPETokenizer: no vocab.json + merges.txt or tokenizer.json in {directory}")

    def save_pretrained(self, directory):
        """Writes `vocab.json` and `merges.txt` (GPT-2's files, which `from_pretrained` and
        `transformers.GPT2Tokenizer.from_pretrained` read) and a `tokenizer_config.json`."""
        from pcp.serialization import write_json
        os.makedirs(directory, exist_ok=True)
        write_json(os.path.join(directory, "vocab.json"), self.encoder)
        merges = sorted(self.ranks, key=self.ranks.get)
        with open(os.path.join(directory, "merges.txt"), "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
        write_json(os.path.join(directory, "tokenizer_config.json"), {"tokenizer_class": "GPT2Tokenizer"})

    @property
    def vocab_size(self):
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
        ids = []
        for piece in _PATTERN.findall(text):
            mapped = "".join(self.byte_encoder[b] for b in piece.encode("utf-8"))
            for tok in self._bpe(mapped):
                if tok not in self.encoder:
                    raise ValueError(f"BPETokenizer.encode: token {tok!r} is not in the vocabulary")
                ids.append(self.encoder[tok])
        return ids

    def decode(self, ids):
        try:
            text = "".join(self.decoder[int(i)] for i in ids)
        except KeyError as e:
            raise ValueError(f"BPETokenizer.decode: id {e.args[0]} is not in the vocabulary") from None
        return bytes(self.byte_decoder[c] for c in text).decode("utf-8", errors="replace")

    def to_json(self):
        return json.dumps({"type": "bpe", "size": len(self.encoder), "merges": len(self.ranks)})
