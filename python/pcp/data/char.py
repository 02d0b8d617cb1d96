"""Character-level tokenizer (nanoGPT's shakespeare_char): one id per distinct character."""
import json
import os


class CharTokenizer:
    """A character-level tokenizer (nanoGPT's shakespeare_char): one id per distinct character,
    ids in sorted character order.

    Args:
        chars: the characters of the vocabulary, an iterable of str (a text: its distinct
            characters).

    Raises:
        TypeError: chars is not iterable.

    Example:
        >>> from pcp.data import CharTokenizer
        >>> tok = CharTokenizer("hello world")
        >>> tok.vocab_size, tok.encode("hello"), tok.decode([3, 2, 4, 4, 5])
        (8, [3, 2, 4, 4, 5], 'hello')
    """

    def __init__(self, chars):
        self.chars = sorted(set(chars))
        self.stoi = {c: i for i, c in enumerate(self.chars)}

    @classmethod
    def from_text(cls, text):
        """The tokenizer whose vocabulary is the distinct characters of a text. It raises nothing
        for a str.

        Args:
            text: a str.

        Returns:
            A CharTokenizer.

        Example:
            >>> from pcp.data import CharTokenizer
            >>> CharTokenizer.from_text("abracadabra").chars
            ['a', 'b', 'c', 'd', 'r']
        """
        return cls(text)

    @property
    def vocab_size(self):
        """The number of distinct characters, the model's vocab_size.

        Example:
            >>> from pcp.data import CharTokenizer
            >>> CharTokenizer("aab").vocab_size
            2
        """
        return len(self.chars)

    def encode(self, text):
        """The ids of a text's characters.

        Args:
            text: a str.

        Returns:
            A list of ints, one per character.

        Raises:
            ValueError: a character outside the vocabulary (named).

        Example:
            >>> from pcp.data import CharTokenizer
            >>> CharTokenizer("abc").encode("cab")
            [2, 0, 1]
        """
        try:
            return [self.stoi[c] for c in text]
        except KeyError as e:
            raise ValueError(f"CharTokenizer.encode: character {e.args[0]!r} is not in the vocabulary") from None

    def decode(self, ids):
        """The text of a sequence of ids.

        Args:
            ids: ints (or a 1-D integer tensor's tolist()) in [0, vocab_size).

        Returns:
            A str.

        Raises:
            ValueError: an id out of range.

        Example:
            >>> from pcp.data import CharTokenizer
            >>> CharTokenizer("abc").decode([2, 0, 1])
            'cab'
        """
        n = len(self.chars)
        out = []
        for i in ids:
            i = int(i)
            if not 0 <= i < n:
                raise ValueError(f"CharTokenizer.decode: id {i} is out of range for a vocabulary of {n}")
            out.append(self.chars[i])
        return "".join(out)

    def to_json(self):
        """The vocabulary as JSON text, which from_json reads back (runs keep it as
        tokenizer.json). It raises nothing.

        Returns:
            A str.

        Example:
            >>> from pcp.data import CharTokenizer
            >>> CharTokenizer("ba").to_json()
            '{"type": "char", "chars": "ab"}'
        """
        return json.dumps({"type": "char", "chars": "".join(self.chars)})

    @classmethod
    def from_json(cls, s):
        """The tokenizer to_json wrote.

        Args:
            s: the JSON text.

        Returns:
            A CharTokenizer.

        Raises:
            ValueError: not JSON, or not a character tokenizer's.

        Example:
            >>> from pcp.data import CharTokenizer
            >>> CharTokenizer.from_json(CharTokenizer("xyz").to_json()).chars
            ['x', 'y', 'z']
        """
        d = json.loads(s)
        if d.get("type") != "char":
            raise ValueError(f"CharTokenizer.from_json: not a char tokenizer ({d.get('type')!r})")
        return cls(d["chars"])

    def save_pretrained(self, directory):
        """Writes this vocabulary as a Hugging Face tokenizer: `tokenizer.json` (the `tokenizers`
        library's format: a BPE model with no merges, so each character is one token, and a Fuse
        decoder that joins them without spaces) and `tokenizer_config.json`, so that
        `transformers.AutoTokenizer.from_pretrained(directory)` encodes and decodes as this does
        (characters outside the vocabulary are dropped there, where `encode` here raises).

        Args:
            directory: where to write (created when missing).

        Returns:
            None.

        Raises:
            OSError: the directory cannot be created or written.

        Example:
            >>> import os, tempfile
            >>> from pcp.data import CharTokenizer
            >>> out = tempfile.mkdtemp()
            >>> CharTokenizer("abc").save_pretrained(out)
            >>> sorted(os.listdir(out))
            ['tokenizer.json', 'tokenizer_config.json']
        """
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
