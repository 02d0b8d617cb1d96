"""The docstrings' examples run as doctests, every public callable says what it takes, returns and
raises, the documentation site (docs/: the README, the guides and the API reference generated
from the docstrings) builds with Sphinx, every warning an error, and the README stays a short
guide whose tour runs.

"Public" is pcp's functions and classes, the Tensor class's members, and the functions, classes
and public methods of the submodules in SUBMODULES (their __all__, else what they import from
pcp's own files)."""
import doctest
import importlib
import inspect
import os
import re
import subprocess
import sys

import pytest

import pcp

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs")
SUBMODULES = ["pcp.random", "pcp.nn", "pcp.optim", "pcp.models", "pcp.data", "pcp.train", "pcp.amp",
              "pcp.serialization", "pcp.distributed"]


def _pcp_functions():
    """(name, object) of every public pcp function and class whose docstring has an example."""
    for name in sorted(n for n in dir(pcp) if not n.startswith("_")):
        obj = getattr(pcp, name)
        doc = getattr(obj, "__doc__", None) or ""
        if callable(obj) and ">>>" in doc:  # not the dtypes pcp.float32, ..., which share DType's text
            yield f"pcp.{name}", obj


def _is_bound(obj):
    """Whether obj is a member pybind11 bound: a method or a property."""
    return isinstance(obj, property) or type(obj).__name__ in ("instancemethod", "builtin_function_or_method")


def _tensor_members():
    """(name, object) of every member pybind11 bound on Tensor (and DType's properties)."""
    for name, obj in sorted(vars(pcp.Tensor).items()):
        if _is_bound(obj) and not name.startswith("_pybind11"):
            yield f"pcp.Tensor.{name}", obj
    for name in ("itemsize", "is_floating_point"):
        yield f"pcp.DType.{name}", vars(pcp.DType)[name]


def _public_names(module):
    """A module's __all__, else the functions and classes defined in it or in its own files."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return names
    own = (module.__name__, module.__name__ + ".")
    return [n for n, v in vars(module).items() if not n.startswith("_") and callable(v)
            and (getattr(v, "__module__", None) or "").startswith(own)]


def _class_members(cls):
    """(name, object) of the public methods and properties a class defines, and those it inherits
    from a private base of pcp's (such as the configs' DictConfig); what it inherits from a public
    class is checked under that class. A method that overrides one without a docstring of its own
    inherits its text (as help() and the API reference show it)."""
    seen = set()
    for klass in cls.__mro__:
        private = any(part.startswith("_") for part in klass.__module__.split("."))
        if klass is not cls and not (klass.__module__.startswith("pcp") and private):
            continue
        for name, obj in vars(klass).items():
            if name.startswith("_") and name != "__call__" or name in seen:
                continue
            if isinstance(obj, (staticmethod, classmethod)):
                obj = obj.__func__
            if inspect.isfunction(obj) or isinstance(obj, property):
                seen.add(name)
                yield name, getattr(cls, name) if not isinstance(obj, property) else obj


def _submodule_api(module_name):
    """(name, object) of a submodule's public functions and classes and of those classes' members."""
    module = importlib.import_module(module_name)
    for name in sorted(_public_names(module)):
        obj = getattr(module, name)
        if not callable(obj):
            continue  # data such as pcp.train.PRESETS
        yield f"{module_name}.{name}", obj
        if inspect.isclass(obj) and obj.__module__.startswith("pcp") and not issubclass(obj, BaseException):
            for member, value in _class_members(obj):
                yield f"{module_name}.{name}.{member}", value


GROUPS = {"pcp": _pcp_functions, "pcp.Tensor": _tensor_members,
          **{m: (lambda m=m: _submodule_api(m)) for m in SUBMODULES}}


def _doc(obj):
    return inspect.getdoc(obj) or ""


@pytest.mark.parametrize("group", list(GROUPS))
def test_docstring_examples_run(group):
    documented = dict(GROUPS[group]())
    assert documented, f"nothing public found in {group}"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    ran = 0
    for name, obj in documented.items():
        test = doctest.DocTestParser().get_doctest(_doc(obj), {"pcp": pcp}, name, None, 0)
        ran += bool(test.examples)
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    assert ran, f"{group}: no example ran"


def test_core_examples_cover_the_main_functions():
    names = {n for n, _ in _pcp_functions()}
    assert {"pcp.softmax", "pcp.matmul", "pcp.add", "pcp.cross_entropy", "pcp.scaled_dot_product_attention"} <= names
    members = {n for n, _ in _tensor_members()}
    assert {"pcp.Tensor.__getitem__", "pcp.Tensor.backward", "pcp.Tensor.item", "pcp.Tensor.shape"} <= members


def _signature_params(obj):
    """The parameters a caller passes (not self or cls), or None where they cannot be read."""
    if isinstance(obj, property):
        return []
    try:
        params = list(inspect.signature(obj).parameters)
    except (TypeError, ValueError):  # a pybind11 function: its signature is its docstring's first line
        line = (obj.__doc__ or "").lstrip().split("\n")[0]
        inner = line[line.find("(") + 1:line.rfind(")")]
        params = [p.split(":")[0].strip() for p in inner.split(",") if p.strip()]
        return [p for p in params if p != "self"]
    params = [p for p in params if not p.startswith("_")]  # private, or injected (Ray adds _ray_trace_ctx)
    if inspect.isclass(obj) or inspect.ismethod(obj):
        return params
    return params[1:] if params[:1] in (["self"], ["cls"]) else params


def _missing_sections(obj):
    doc = _doc(obj)
    if "Example:" not in doc:
        return ["Example:"]
    if ">>>" not in doc and "not run" not in doc.lower():
        return ["Example: with >>> lines (or a note why it is not run)"]
    if isinstance(obj, property):
        raises = obj.fset is not None and "raises nothing" not in " ".join(doc.split()).lower()
        return ["Raises:"] if raises and "Raises:" not in doc else []
    wanted = [] if inspect.isclass(obj) else ["Returns:"]
    wanted += ["Args:"] if _signature_params(obj) else []
    wanted += [] if "raises nothing" in " ".join(doc.split()).lower() else ["Raises:"]
    return [s for s in wanted if s not in doc]


@pytest.mark.parametrize("group", list(GROUPS))
def test_documented_callables_say_what_they_take_return_and_raise(group):
    problems = {}
    for name, obj in GROUPS[group]():
        if name in ("pcp.Tensor",):  # made by functions, not called: its text says so
            continue
        missing = _missing_sections(obj)
        if missing:
            problems[name] = missing
    assert not problems, f"docstrings without these sections: {problems}"


def test_the_section_check_can_fail():
    def undocumented(x):
        pass

    def documented(x):
        """Doubles x. It raises nothing.

        Args:
            x: a number.

        Returns:
            2 * x.

        Example:
            >>> documented(1)
            2
        """

    assert _missing_sections(undocumented) == ["Example:"]
    assert _missing_sections(documented) == []
    assert _missing_sections(pcp.Tensor.shape) == []
    # The Tensor method bound with a function carries the same text.
    assert pcp.Tensor.exp.__doc__.endswith(pcp.exp.__doc__.split("\n", 1)[1])


def test_the_documentation_builds_without_warnings(tmp_path):
    pytest.importorskip("sphinx", reason="Sphinx (docs only) is not installed")
    pytest.importorskip("myst_parser", reason="myst-parser (docs only) is not installed")
    r = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-E", "-W", "--keep-going", "-b", "html", DOCS,
                        str(tmp_path / "html")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    api = (tmp_path / "html" / "api.html").read_text(encoding="utf-8")
    anchors = set(re.findall(r'id="(pcp\.[^"]+)"', api))
    for name in ("pcp.softmax", "pcp.Tensor", "pcp.Tensor.__getitem__", "pcp.models.GPT2.save_pretrained"):
        assert name in anchors, name
    # Every public callable the checks above cover is rendered, with an anchor of its own.
    missing = [name for group in GROUPS.values() for name, _ in group() if name not in anchors]
    assert not missing, f"not in the API reference: {missing}"


README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")


def test_the_readme_is_a_short_guide_to_this_repository():
    # A newcomer's ten minutes: under 250 lines, no dated measurement (those go to
    # bench/RESULTS.md), and nothing named outside the repository.
    with open(README, encoding="utf-8") as f:
        text = f.read()
    assert len(text.splitlines()) < 250, len(text.splitlines())
    assert not re.findall(r"\b20\d\d-\d\d-\d\d\b", text)
    for outside in ("../shared", "DESIGN.md", "/work/"):
        assert outside not in text, outside
    for doc in re.findall(r"`(docs/[\w-]+\.md)`", text):  # the guides it points to exist
        assert os.path.isfile(os.path.join(os.path.dirname(README), doc)), doc


def test_the_readme_tour_runs():
    with open(README, encoding="utf-8") as f:
        tour = re.findall(r"```python\n(.*?)```", f.read(), re.S)[0]
    ns = {}
    exec(compile(tour, "README.md", "exec"), ns)  # noqa: S102 (the README's own code)
    assert ns["x"].grad is not None and ns["x"].grad.shape == (2, 2)
    assert 0.0 < ns["loss"].item() < 100.0
