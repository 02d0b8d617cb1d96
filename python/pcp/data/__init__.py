"""Tokenizers and datasets."""
from .char import CharTokenizer  # noqa: F401
from .dataset import TokenDataset  # noqa: F401
from .bpe import BPETokenizer  # noqa: F401
from .sources import shakespeare  # noqa: F401
