"""Executes docs/tutorial.ipynb in place, so that readers see its outputs (tests/test_tutorial.py
runs it again from the top). Edit the notebook itself (Jupyter, or its JSON), then:

    python scripts/make_tutorial.py            # needs nbformat, nbclient and ipykernel
"""

from __future__ import annotations

import pathlib

import nbclient
import nbformat


def main() -> None:
    root = pathlib.Path(__file__).resolve().parents[1]
    path = root / "docs" / "tutorial.ipynb"
    nb = nbformat.read(path, as_version=4)
    resources = {"metadata": {"path": str(root)}}
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources=resources).execute()
    nbformat.write(nb, path)
    print(f"executed {path}")


if __name__ == "__main__":
    main()
