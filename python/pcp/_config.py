"""A base for dataclass configs: to_dict / from_dict for JSON files and checkpoints."""
from dataclasses import asdict, fields


class DictConfig:
    """Mixin of the dataclass configs (GPT2Config, TrainConfig, DiLoCoConfig): to and from plain
    dicts, for JSON files and checkpoints."""

    def to_dict(self):
        """The fields as a plain dict (what JSON files and checkpoints store). It raises nothing.

        Returns:
            A dict of field name to value.

        Example:
            >>> from pcp.models import GPT2Config
            >>> GPT2Config(n_layer=2).to_dict()["n_layer"]
            2
        """
        return asdict(self)

    @classmethod
    def from_dict(cls, d):
        """A config from a dict such as to_dict gives; unknown keys are ignored, so files written
        by other versions (or Hugging Face's config.json) still load, and missing ones take
        their defaults.

        Args:
            d: a dict of field name to value.

        Returns:
            A new config of this class.

        Raises:
            ValueError: a value the config's own checks refuse.
            TypeError: d is not a mapping.

        Example:
            >>> from pcp.models import GPT2Config
            >>> GPT2Config.from_dict({"n_layer": 2, "unknown": 1}).n_layer
            2
        """
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})
