"""DiLoCo's own settings; the model, inner optimizer and data come from a TrainConfig."""
from dataclasses import dataclass

from pcp._config import DictConfig

COMPRESSIONS = ("none", "float16", "int8")
SPLITS = ("iid", "contiguous")


@dataclass
class DiLoCoConfig(DictConfig):
    """DiLoCo's own settings (``pcp diloco``); the model, inner optimizer and data come from a
    TrainConfig.

    Args:
        workers: worker actors, each a model replica (default 4).
        inner_steps: H, the inner AdamW steps per worker per round (default 50).
        rounds: outer rounds in all (default 10).
        outer_lr: the outer Nesterov SGD's learning rate (default 0.7, the paper's).
        outer_momentum: its momentum, in [0, 1) (default 0.9).
        compression: of the pseudo-gradients on their way back: 'none', 'float16' or 'int8'.
        split: 'iid' (every worker samples the whole train split) or 'contiguous' (a slice
            each).
        round_timeout: seconds a round waits for its workers before going on without them.
        threads_per_worker: CPU threads each worker's kernels use (default 1).
        address: a Ray cluster's HOST:PORT to join ('' starts a local one).

    Raises:
        TypeError: an unknown field.

    Example:
        >>> from pcp.distributed import DiLoCoConfig
        >>> DiLoCoConfig(workers=8, compression="int8").validate().workers
        8
    """

    workers: int = 4
    inner_steps: int = 50       # H: inner AdamW steps per worker per round
    rounds: int = 10
    outer_lr: float = 0.7       # the paper's outer Nesterov SGD
    outer_momentum: float = 0.9
    compression: str = "none"   # of pseudo-gradients: none, float16 or int8
    split: str = "iid"          # iid: every worker samples the whole train split; contiguous: a slice each
    round_timeout: float = 600.0  # seconds a round waits for its workers before leaving them out
    threads_per_worker: int = 1
    address: str = ""           # a Ray cluster HOST:PORT to join; empty: start a local one

    def validate(self):
        """Checks the settings together, as a run does before it starts.

        Returns:
            This config.

        Raises:
            ValueError: a count below its minimum, an outer_lr that is not positive, a momentum
                outside [0, 1), an unknown compression or split, or an address not HOST:PORT.

        Example:
            >>> from pcp.distributed import DiLoCoConfig
            >>> DiLoCoConfig(address="10.0.0.1:6379").validate().address
            '10.0.0.1:6379'
        """
        if self.workers < 1:
            raise ValueError(f"diloco: workers must be at least 1, got {self.workers}")
        if self.inner_steps < 1:
            raise ValueError(f"diloco: inner_steps (H) must be at least 1, got {self.inner_steps}")
        if self.rounds < 0:
            raise ValueError(f"diloco: rounds must be >= 0, got {self.rounds}")
        if self.outer_lr <= 0 or not 0 <= self.outer_momentum < 1:
            raise ValueError(f"diloco: outer_lr must be > 0 and outer_momentum in [0, 1), got {self.outer_lr}, "
                             f"{self.outer_momentum}")
        if self.compression not in COMPRESSIONS:
            raise ValueError(f"diloco: compression must be one of {', '.join(COMPRESSIONS)}, got {self.compression!r}")
        if self.split not in SPLITS:
            raise ValueError(f"diloco: split must be one of {', '.join(SPLITS)}, got {self.split!r}")
        if self.round_timeout <= 0 or self.threads_per_worker < 1:
            raise ValueError("diloco: round_timeout must be > 0 and threads_per_worker >= 1")
        if self.address:
            host, _, port = self.address.rpartition(":")
            if not host or not port.isdigit():
                raise ValueError(f"diloco: address must be HOST:PORT, got {self.address!r}")
        return self
