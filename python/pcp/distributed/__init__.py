"""DiLoCo (Douillard et al., 2023) on Ray: a Shepherd (the driver) and Worker actors.

Each round the shepherd sends the global parameters to every worker, each worker runs H inner
AdamW steps on its own data shard and returns its pseudo-gradient (global - local parameters),
and the shepherd averages them and applies an outer Nesterov SGD step.
"""
from .compression import decode, encode
from .config import DiLoCoConfig
from .shepherd import Shepherd
from .worker import Worker

__all__ = ["DiLoCoConfig", "Shepherd", "Worker", "encode", "decode"]
