"""The global counter-based (Philox) generator: same seed, same numbers, on any thread count."""
from ._core import rand, randn, randint, seed, get_rng_state, set_rng_state  # noqa: F401

__all__ = ["seed", "rand", "randn", "randint", "get_rng_state", "set_rng_state"]
