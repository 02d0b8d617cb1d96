"""Character-level tokenizer (nanoGPT's shakespeare_char): one id per distinct character."""
import json


class CharTokenizer:
    def __init__(self, chars):
        self.chars = sorted(set(chars))
        self.stoi = {c: i for i, c in enumerate(self.chars)}

    @classmethod
    def from_text(cls, text):
        return cls(text)

    @property
    def vocab_size(self):
        return len(self.chars)

    def encode(self, text):
        try:
            return [self.stoi[c] for c in text]
        except KeyError as e:
            raise ValueError(f"CharTokenizer.encode: character {e.args[0]!r} is not in the vocabulary") from None

    def decode(self, ids):
        n = len(self.chars)
        out = []
        for i in ids:
            i = int(i)
            if not 0 <= i < n:
                raise ValueError(f"CharTokenizer.decode: id {i} is out of range for a vocabulary of {n}")
            out.append(self.chars[i])
        return "".join(out)

    def to_json(self):
        return json.dumps({"type": "char", "chars": "".join(self.chars)})

    @classmethod
    def from_json(cls, s):
        d = json.loads(s)
        if d.get("type") != "char":
            raise ValueError(f"CharTokenizer.from_json: not a char tokenizer ({d.get('type')!r})")
        return cls(d["chars"])
