"""The type stubs of pcp._core (python/pcp/_core.pyi) are what tools/gen_core_stub.py writes from
the built module: every function, class, method and property with its typed signature and its
docstring, so editors complete the API and show the same text as help(). They cannot drift: the
file must equal a fresh generation."""
import ast
import importlib.util
import inspect
import pathlib
import subprocess
import sys
import types

import pytest

from pcp import _core

ROOT = pathlib.Path(__file__).resolve().parent.parent
STUB = ROOT / "python" / "pcp" / "_core.pyi"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_core_stub", ROOT / "tools" / "gen_core_stub.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tree():
    return ast.parse(STUB.read_text(encoding="utf-8"))


def _bound_members(cls):
    """The members pybind11 bound on a class: methods and properties (not its own internals)."""
    return {n: v for n, v in vars(cls).items()
            if (isinstance(v, property) or type(v).__name__ == "instancemethod") and not n.startswith("_pybind11")
            and type(v).__name__ != "pybind11_static_property"}


def test_the_stub_is_what_the_generator_writes_from_the_built_module():
    text = _generator().generate(_core)
    if STUB.read_text(encoding="utf-8") != text:
        pytest.fail(f"{STUB} is out of date with the built pcp._core: run python tools/gen_core_stub.py")


def test_the_drift_check_sees_a_changed_docstring_or_signature():
    def fake(doc):
        module = types.ModuleType("fake", "A fake native module.")
        module.double = lambda x: 2 * x
        module.double.__doc__ = doc
        return _generator().generate(module)

    base = fake("double(x: int) -> int\n\nTwice x.\n")
    assert "def double(x: int) -> int:" in base and "Twice x." in base
    assert fake("double(x: int) -> int\n\nx times 2.\n") != base
    assert fake("double(x: float) -> float\n\nTwice x.\n") != base


def _runtime_doc(obj):
    """The docstring help() shows for a bound object without pybind11's signature line, or None
    where there is none (or it belongs to overloads, which the stub splits)."""
    doc = obj.__doc__ or ""
    if "Overloaded function." in doc:
        return None
    if not isinstance(obj, property) or doc.split("\n")[0].rstrip().endswith(("-> str", ")")):
        doc = doc.split("\n", 1)[1] if "\n" in doc else ""  # drop "name(params) -> type"
    return inspect.cleandoc(doc) or None


def test_every_function_class_method_and_property_is_in_the_stub_with_its_docstring():
    tree = _tree()
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    names = {n for n in vars(_core) if not (n.startswith("__") and n.endswith("__"))}
    assert names - set(defs) == set(), f"missing from _core.pyi: {sorted(names - set(defs))}"
    checked = 0
    for name in sorted(names):
        obj = getattr(_core, name)
        if isinstance(obj, type):
            members = {}
            for m in defs[name].body:  # a property's getter (with the text) comes before its setter
                if isinstance(m, ast.FunctionDef):
                    members.setdefault(m.name, m)
            bound = _bound_members(obj)
            assert set(bound) - set(members) == set(), f"{name} members missing: {sorted(set(bound) - set(members))}"
            pairs = [(f"{name}.{m}", members[m], v) for m, v in bound.items()]
            assert ast.get_docstring(defs[name]) == inspect.cleandoc(obj.__doc__), name
        else:
            pairs = [(name, defs[name], obj)]
        for label, node, value in pairs:
            runtime = _runtime_doc(value)
            if runtime is not None:
                assert ast.get_docstring(node) == runtime, f"{label}: its docstring differs from the module's"
                checked += 1
    assert checked > 200  # the op functions and the Tensor members, at least
    # The Tensor methods carry their text too (what an editor shows for x.item()).
    item = next(m for m in defs["Tensor"].body if isinstance(m, ast.FunctionDef) and m.name == "item")
    assert "Example:" in ast.get_docstring(item)


def test_every_signature_is_typed():
    untyped = []
    for node in ast.walk(_tree()):
        if isinstance(node, ast.FunctionDef):
            args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            args += [a for a in (node.args.vararg, node.args.kwarg) if a]
            if node.returns is None or any(a.annotation is None for a in args if a.arg != "self"):
                untyped.append(node.name)
    assert not untyped, f"untyped signatures in _core.pyi: {untyped}"


def test_mypy_stubtest_agrees_with_the_runtime_module():
    pytest.importorskip("mypy", reason="mypy (dev only) is not installed")
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "pcp._core", "--allowlist",
                        str(ROOT / "tests" / "stubtest_allowlist.txt")], capture_output=True, text=True, timeout=300,
                       cwd=ROOT / "tests")  # not the source tree: stubtest checks the installed package's stub
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
