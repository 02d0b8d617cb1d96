"""A pytest plugin for bench/array_api_suite.py: array-api-tests assumes its namespace has a
complex dtype (dtype_helpers takes the widest one at import). The suite is run here on real
dtypes only, for every library alike, so that line takes the widest real dtype when there is no
complex one: loaded with
`-p real_dtypes_plugin`, this module runs before the suite's conftest imports dtype_helpers."""
import importlib.util
import os
import sys

_LINE = "widest_complex_dtype = max(\n    [(dt, dtype_nbits[dt]) for dt in complex_dtypes], key=lambda x: x[1]\n)[0]"
# Without complex dtypes, the widest real one stands in (test_signatures names it for its examples).
_GUARDED = _LINE.replace("for dt in complex_dtypes]", "for dt in (complex_dtypes or real_float_dtypes)]")


def _guard():
    import array_api_tests  # the package (it imports the namespace), not yet dtype_helpers
    path = os.path.join(os.path.dirname(array_api_tests.__file__), "dtype_helpers.py")
    with open(path) as f:
        source = f.read()
    if _LINE not in source:
        raise RuntimeError(f"{path}: the line to guard has changed; use the suite's commit named in bench/array_api_suite.py")
    spec = importlib.util.spec_from_file_location("array_api_tests.dtype_helpers", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    exec(compile(source.replace(_LINE, _GUARDED), path, "exec"), module.__dict__)


# bench/array_api_suite.py --libs pcp-gpu: every array the suite makes goes to PCP's GPU (set
# first: the suite reads the default dtypes as it imports).
if os.environ.get("PCP_ARRAY_API_SUITE_DEVICE"):
    import pcp
    pcp.set_default_device(os.environ["PCP_ARRAY_API_SUITE_DEVICE"])

_guard()
