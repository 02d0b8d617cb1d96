"""A base for dataclass configs: to_dict / from_dict for JSON files and checkpoints."""
from dataclasses import asdict, fields


class DictConfig:
    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, d):
        """Unknown keys are ignored, so files written by other versions still load."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})
