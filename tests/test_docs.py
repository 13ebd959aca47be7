"""The documentation site builds with warnings as errors (mkdocs.yml; the `docs` extra)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]


def test_the_docs_site_builds_strictly(tmp_path):
    """Every page, every link and anchor between pages, and every API block (mkdocstrings
    reads the docstrings of the config and learner types) without a warning."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    learners = (tmp_path / "learners" / "index.html").read_text()
    assert "sub_batch" in learners and "FarlConfig" in learners
    assert (tmp_path / "config" / "index.html").exists()
    assert (tmp_path / "tutorial.ipynb").exists()
