"""Tokenizers and datasets."""
from .char import CharTokenizer  # noqa: F401
from .dataset import TokenDataset  # noqa: F401
from .bpe import BPETokenizer  # noqa: F401
from .sources import read_text, shakespeare, training_text  # noqa: F401
