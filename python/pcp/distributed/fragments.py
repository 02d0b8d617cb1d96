"""Streaming DiLoCo's fragments (Douillard et al., 2025): the model's parameters split into F
groups that synchronise in turn, so each exchange carries about 1/F of the model."""
import re

_LAYER = re.compile(r"^h\.(\d+)\.")  # a transformer block's parameters: h.<layer>.<...>


def split_fragments(sizes, count):
    """The parameter names of each fragment, strided by layer as in Streaming DiLoCo: block i
    goes to fragment i % count; the parameters outside the blocks (embeddings, the final norm)
    each go to the fragment that is smallest so far, in their order.

    Args:
        sizes: a dict of parameter name to its number of values, in the model's order.
        count: F, the number of fragments (at least 1).

    Returns:
        A list of F lists of names, each in the model's order.

    Raises:
        ValueError: count below 1, or more fragments than the model has blocks.

    Example:
        >>> from pcp.distributed.fragments import split_fragments
        >>> split_fragments({"wte.weight": 60, "h.0.w": 40, "h.1.w": 40, "ln_f.weight": 4}, 2)
        [['wte.weight', 'h.0.w'], ['h.1.w', 'ln_f.weight']]
    """
    layers = {int(m.group(1)) for m in map(_LAYER.match, sizes) if m}
    if count < 1 or (count > 1 and count > len(layers)):
        raise ValueError(f"diloco: {count} fragments for a model of {len(layers)} blocks (at most one a block)")
    owner, total = {}, [0] * count
    for name, n in sizes.items():
        m = _LAYER.match(name)
        if m:
            owner[name] = int(m.group(1)) % count
            total[owner[name]] += n
    for name, n in sizes.items():
        if name not in owner:
            owner[name] = min(range(count), key=lambda f: (total[f], f))
            total[owner[name]] += n
    return [[name for name in sizes if owner[name] == f] for f in range(count)]
