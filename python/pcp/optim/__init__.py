"""Optimizers with fused C++ update kernels, gradient clipping and learning-rate schedules."""
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .clip import clip_grad_norm  # noqa: F401
from .schedule import warmup_cosine  # noqa: F401
