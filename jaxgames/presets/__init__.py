"""The presets: one YAML file per experiment, shipped inside the package.

    jaxgames train connect4-td-farl          # a preset by name
    jaxgames presets                          # every preset with its one-line description

Each preset maps 1:1 onto `jaxgames.config.Config`; its `description` says what it
reproduces and what it reaches. A variant names the preset it starts from, `base: NAME`,
and gives only its own description and what differs (`jaxgames.config.read_config_mapping`):
connect4-td-farl-gpu is connect4-td-farl with `train: {batch_size: 4096}`, a sub-batch and
evaluations beside training.
"""

from __future__ import annotations

import importlib.resources
import pathlib


def names() -> list[str]:
    """The shipped presets' names, sorted."""
    folder = importlib.resources.files(__name__)
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


def shipped(name: str) -> pathlib.Path | None:
    """The shipped preset `name` (with or without `.yaml`) names, or None when there is none.
    Unlike `path`, never a file of the working directory."""
    stem = name[: -len(".yaml")] if name.endswith(".yaml") else name
    if stem not in names():
        return None
    with importlib.resources.as_file(importlib.resources.files(__name__) / f"{stem}.yaml") as p:
        return pathlib.Path(p)


def path(name: str) -> pathlib.Path:
    """A YAML file's path: `name` itself when it is a file, else the preset of that name.

    Raises:
        ValueError: neither a file nor a preset (the message lists the presets).
    """
    given = pathlib.Path(name)
    if given.is_file():
        return given
    found = shipped(name)
    if found is not None:
        return found
    raise ValueError(
        f"config {name!r} is neither a file nor a preset; presets: {', '.join(names())}"
    )


def summary(name: str) -> str:
    """The first sentence of a preset's description (its one line for listings)."""
    from jaxgames.config import read_config_mapping

    data = read_config_mapping(path(name))
    text = " ".join(str(data.get("description", "")).split())
    return text.split(". ")[0].rstrip(".") if text else ""


def load(name: str):
    """The `Config` of a preset (or of a YAML file)."""
    from jaxgames.config import load_config

    return load_config(path(name))
