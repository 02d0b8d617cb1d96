"""The documentation site (docs/: the README's guides and the API reference generated from the
docstrings) builds with Sphinx, every warning an error."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("sphinx", reason="Sphinx (docs only) is not installed")
pytest.importorskip("myst_parser", reason="myst-parser (docs only) is not installed")

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs")


def test_the_documentation_builds_without_warnings(tmp_path):
    r = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-E", "-W", "--keep-going", "-b", "html", DOCS,
                        str(tmp_path / "html")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    api = (tmp_path / "html" / "api.html").read_text(encoding="utf-8")
    for name in ("pcp.softmax", "pcp.Tensor", "pcp.models.GPT2.save_pretrained", "pcp.optim.AdamW"):
        assert f'id="{name}"' in api, name  # each documented, with an anchor of its own
