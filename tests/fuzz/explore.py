"""Random exploration: Hypothesis draws an op, a tensor of random shape (zero-size dims
anywhere), dtype, values and view (permuted, sliced with any step, broadcast), or one of the
literal input classes, and one of the op's parameter variants (axes re-drawn at random)."""
import copy
import time

from hypothesis import HealthCheck, Phase, given, reject, settings
from hypothesis import seed as hseed
from hypothesis import strategies as st

from . import inputs
from .cases import OPS, Case, Ctx, Skip, grid, make_case
from .inputs import Cls, tensor

KINDS = ["normal"] * 6 + ["special", "special", "positive", "distinct"]


@st.composite
def random_tensor(draw, device, dtypes):
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.sampled_from([0, 1, 1, 2, 2, 3, 3, 4, 5])) for _ in range(ndim))
    dtype = draw(st.sampled_from(dtypes))
    kind = draw(st.sampled_from(KINDS))
    how = draw(st.sampled_from(["none"] * 4 + ["transpose", "slice", "slice", "broadcast"]))
    view = None
    if how == "transpose" and ndim >= 2:
        perm = draw(st.permutations(range(ndim)))
        base = [0] * ndim
        for i, p in enumerate(perm):
            base[p] = shape[i]
        t = "{}.transpose(%s)" % ", ".join(map(str, perm))
        view = (tuple(base), t, t)
    elif how == "slice" and ndim >= 1:
        base, parts = [], []
        for d in shape:
            step = draw(st.sampled_from([1, 2, 3, -1, -2]))
            extra = draw(st.integers(0, 2))
            size = d * abs(step) + extra
            start = draw(st.integers(0, extra))
            if step > 0:
                parts.append(f"{start}:{start + d * step}:{step}")
            else:
                top = size - 1 - start
                stop = top + d * step
                parts.append(f"{top}:{stop if stop >= 0 else ''}:{step}")
            base.append(size)
        t = "{}[%s]" % ", ".join(parts)
        view = (tuple(base), t, t)
    elif how == "broadcast" and ndim >= 1:
        base = tuple(1 if draw(st.booleans()) else d for d in shape)
        lead = draw(st.integers(0, ndim))
        base = base[lead:]
        view = (base, "{}.broadcast_to(%r)" % (shape,), "np.broadcast_to({}, %r)" % (shape,))
    return tensor(shape, dtype, kind, device, view)


@st.composite
def random_case(draw, ctx, names):
    op = OPS[draw(st.sampled_from(names))]
    if op.classes == []:  # an op made of fixed cases only: draw one of them
        fixed = list(grid(op, ctx))
        if not fixed:
            reject()
        return copy.deepcopy(draw(st.sampled_from(fixed)))
    params = op.cross + op.extra or [{}]
    p = dict(draw(st.sampled_from(params)))
    if "axis" in p and draw(st.booleans()):
        p["axis"] = str(draw(st.integers(-5, 4)))
    literals = [] if op.name.startswith("Tensor.") else inputs.LITERAL_CLASSES
    if op.classes is not None or (literals and draw(st.integers(0, 9)) == 0):
        cls = draw(st.sampled_from(op.classes or literals))
        dtypes = [None] if cls.literal is not None else [d for d in op.grid_dtypes if d in cls.dtypes] or [None]
        dtype = draw(st.sampled_from(dtypes))
    else:
        x = draw(random_tensor(ctx.device, list(op.grid_dtypes)))
        cls = Cls("random", literal=x)  # a literal slot carries the drawn tensor through make_case
        dtype = x.dtype
    try:
        return make_case(op, cls, dtype, p, ctx)
    except Skip:
        reject()


class _TimeUp(Exception):
    pass


def explore(pool, ctx, seconds, seed, record, names=None, cases=0):
    """Runs random cases until `cases` have run (the same cases for a seed on any machine) or,
    when `seconds` is set, that long has passed; record(case, result) gets each."""
    names = sorted(names or OPS)
    deadline = time.monotonic() + seconds if seconds > 0 else float("inf")
    count = [0]

    @hseed(seed)
    @settings(max_examples=10**9, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), derandomize=False)
    @given(st.data())
    def one(data):
        case = data.draw(random_case(ctx, names))
        if time.monotonic() > deadline or (cases and count[0] >= cases):  # after the draw: replays draw alike
            raise _TimeUp
        count[0] += 1
        case.id = f"{case.op}/random/{seed}/{count[0]}"
        record(case, pool.run(case))

    try:
        one()
    except _TimeUp:
        pass
    return count[0]


__all__ = ["explore", "random_case", "Case", "Ctx"]
