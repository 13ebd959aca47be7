"""The wheel works without the checkout: built, checked by twine, installed into a fresh venv
and run from a folder outside the repository."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys
import sysconfig

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.slow  # about 2 minutes: a build, a venv and three trainings
@pytest.mark.skipif(importlib.util.find_spec("build") is None, reason="needs `build` (dev extra)")
def test_the_wheel_installs_and_runs_outside_the_checkout(tmp_path):
    # without PYTHONPATH: a checkout on it would be imported instead of the installed wheel
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def run(*cmd, cwd=tmp_path):
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, (cmd, done.stdout[-1500:], done.stderr[-3000:])
        return done.stdout

    run(sys.executable, "-m", "build", "--outdir", str(tmp_path / "dist"), str(REPO))
    wheel = next((tmp_path / "dist").glob("jaxgames-*.whl"))
    if importlib.util.find_spec("twine") is not None:
        assert "PASSED" in run(
            sys.executable, "-m", "twine", "check", *map(str, (tmp_path / "dist").iterdir())
        )
    # a fresh venv that borrows the dependencies installed here (no download): a .pth line adds
    # this environment's site-packages after its own (its .pth files, an editable jaxgames
    # among them, are not read from there)
    run(sys.executable, "-m", "venv", str(tmp_path / "venv"))
    bin_ = tmp_path / "venv" / "bin"
    own = run(
        str(bin_ / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    )
    (pathlib.Path(own.strip()) / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run(str(bin_ / "pip"), "install", "-q", "--no-deps", "--force-reinstall", str(wheel))
    where = tmp_path / "elsewhere"
    where.mkdir()
    imported = run(
        str(bin_ / "python"), "-c", "import jaxgames, sys; print(jaxgames.__file__)", cwd=where
    )
    assert str(REPO) not in imported and "site-packages" in imported
    jaxgames = str(bin_ / "jaxgames")
    assert "connect4-td-farl" in run(jaxgames, "presets", cwd=where)
    run(jaxgames, "train", "--train.games", "600", "--no-progress", cwd=where)
    run(
        jaxgames,
        "eval",
        "runs/tictactoe-td-farl",
        "--opponent",
        "perfect",
        "--games",
        "20",
        cwd=where,
    )
    run(
        jaxgames,
        "train",
        "connect4-td-farl",
        "--train.games",
        "2000",
        "--eval.games",
        "4",
        "--no-progress",
        cwd=where,
    )
