"""Character-level tokenizer (nanoGPT's shakespeare_char): one id per distinct character."""
import json
import os


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

    def save_pretrained(self, directory):
        """Writes this vocabulary as a Hugging Face tokenizer: `tokenizer.json` (the `tokenizers`
        library's format: a BPE model with no merges, so each character is one token, and a Fuse
        decoder that joins them without spaces) and `tokenizer_config.json`, so that
        `transformers.AutoTokenizer.from_pretrained(directory)` encodes and decodes as this does
        (characters outside the vocabulary are dropped there, where `encode` here raises)."""
        from pcp.serialization import write_json
        os.makedirs(directory, exist_ok=True)
        write_json(os.path.join(directory, "tokenizer.json"), {
            "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": None, "post_processor": None, "decoder": {"type": "Fuse"},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                      "ignore_merges": False, "vocab": dict(self.stoi), "merges": []}})
        write_json(os.path.join(directory, "tokenizer_config.json"), {
            "tokenizer_class": "PreTrainedTokenizerFast", "clean_up_tokenization_spaces": False})
