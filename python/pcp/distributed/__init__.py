"""DiLoCo (Douillard et al., 2023) on Ray: a Shepherd (the driver) and Worker actors.

Each round the shepherd sends the global parameters to every worker, each worker runs H inner
AdamW steps on its own data shard and returns its pseudo-gradient (global - local parameters),
and the shepherd averages them and applies an outer Nesterov SGD step. pcp.distributed.diloco
trains a user's own model: the workers get its traced step as a plan, not its code.
"""
from .compression import decode, encode
from .config import DiLoCoConfig
from .shepherd import Shepherd
from .task import Data, diloco
from .worker import Worker

__all__ = ["Data", "DiLoCoConfig", "Shepherd", "Worker", "diloco", "encode", "decode"]
