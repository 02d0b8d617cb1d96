"""Training: configs and presets, the loop, checkpoints, progress and plots."""
from .config import TrainConfig, PRESETS, preset  # noqa: F401
from .checkpoint import save_checkpoint, load_checkpoint  # noqa: F401
from .loop import train, build_data  # noqa: F401
