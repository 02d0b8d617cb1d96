"""The type stubs for pcp._core must list what the extension exports, so editors complete the API."""
import ast
import pathlib

import pcp
from pcp import _core

STUB = pathlib.Path(pcp.__file__).with_name("_core.pyi")


def stub_names():
    tree = ast.parse(STUB.read_text())
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    methods = set()
    for n in tree.body:
        if isinstance(n, ast.ClassDef) and n.name == "Tensor":
            methods = {m.name for m in n.body if isinstance(m, ast.FunctionDef)}
            methods |= {m.target.id for m in n.body if isinstance(m, ast.AnnAssign)}
    return names, methods


def test_stub_covers_every_function_and_class():
    names, _ = stub_names()
    exported = {n for n in dir(_core) if not n.startswith("_")}
    assert exported - names == set(), f"missing from _core.pyi: {sorted(exported - names)}"


def test_stub_covers_tensor_methods_and_properties():
    _, methods = stub_names()
    native = {n for n, v in vars(_core.Tensor).items() if not n.startswith("__") or n in ("__add__", "__matmul__", "__getitem__")}
    missing = {n for n in native if n not in methods and not n.startswith("_pybind11")}
    assert missing == set(), f"Tensor members missing from _core.pyi: {sorted(missing)}"
