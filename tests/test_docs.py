"""The docstrings' examples run as doctests, and the documentation site (docs/: the README's
guides and the API reference generated from the docstrings) builds with Sphinx, every warning an
error."""
import doctest
import inspect
import os
import subprocess
import sys

import pytest

import pcp

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs")


def _documented():
    """(name, docstring) of every public pcp function whose docstring has an example."""
    for name in sorted(n for n in dir(pcp) if not n.startswith("_")):
        obj = getattr(pcp, name)
        doc = getattr(obj, "__doc__", None) or ""
        if callable(obj) and ">>>" in doc:  # not the dtypes pcp.float32, ..., which share DType's text
            yield name, doc


def test_docstring_examples_run():
    documented = dict(_documented())
    assert {"softmax", "matmul", "add", "exp", "cross_entropy", "scaled_dot_product_attention"} <= set(documented)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for name, doc in documented.items():
        test = doctest.DocTestParser().get_doctest(doc, {"pcp": pcp}, f"pcp.{name}", None, 0)
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def _takes_arguments(fn):
    try:
        return bool(inspect.signature(fn).parameters)
    except ValueError:  # a pybind11 function: its signature is its docstring's first line
        return "()" not in fn.__doc__.lstrip().split("\n")[0]


def test_documented_functions_say_what_they_take_return_and_raise():
    for name, doc in _documented():
        if inspect.isclass(getattr(pcp, name)) and name != "DType":  # Tensor: made by functions, not called
            assert "Example:" in doc, f"pcp.{name}: no Example section"
            continue
        sections = ["Returns:", "Example:"]
        sections += ["Args:"] if _takes_arguments(getattr(pcp, name)) else []
        sections += [] if "raises nothing" in " ".join(doc.split()).lower() else ["Raises:"]
        for section in sections:
            assert section in doc, f"pcp.{name}: no {section} section"
    # The Tensor method bound with a function carries the same text.
    assert "Example:" in pcp.Tensor.exp.__doc__


def test_the_documentation_builds_without_warnings(tmp_path):
    pytest.importorskip("sphinx", reason="Sphinx (docs only) is not installed")
    pytest.importorskip("myst_parser", reason="myst-parser (docs only) is not installed")
    r = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-E", "-W", "--keep-going", "-b", "html", DOCS,
                        str(tmp_path / "html")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    api = (tmp_path / "html" / "api.html").read_text(encoding="utf-8")
    for name in ("pcp.softmax", "pcp.Tensor", "pcp.models.GPT2.save_pretrained", "pcp.optim.AdamW"):
        assert f'id="{name}"' in api, name  # each documented, with an anchor of its own
