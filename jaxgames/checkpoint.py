"""Orbax checkpoints of training runs: exact resume, atomic saves, JSON metadata.

A checkpoint holds everything a training chunk threads through its scan (parameters and TCL
accumulators, the B games in progress, the player-centred histories, counters and the RNG key),
so a run stopped and resumed is bit-identical to one that never stopped. Each checkpoint also
carries JSON metadata: the resolved config, the package and JAX versions, the game and the
version of its rules, games, moves and wall time. Loading never executes code: arrays are
restored into shapes derived from the config, and the metadata is plain JSON.

Layout of a run folder:

    RUN/config.json                 the resolved config
    RUN/metrics.jsonl               training and evaluation records
    RUN/checkpoints/<games>/        one orbax checkpoint per save (the last `keep` are kept)
    RUN/curve.png                   the learning curve

Orbax writes each checkpoint to a temporary folder and renames it when complete, so a crash
or a full disk mid-save leaves the previous checkpoint intact.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import pathlib
import stat
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.config import Config, from_saved, to_dict
from jaxgames.errors import CheckpointError

CHECKPOINTS = "checkpoints"
AVERAGE = ".average"  # key prefix of the averaged parameters (train.average_from)
PARAMS = ".params"  # key prefix of the parameters in a saved carry
# Array names that changed, old -> new: max/min Q-learning's replay buffer became a ring of
# transitions (`Replay.data`). Checkpoints saved before resume under the new names.
RENAMED = {
    f".replay.{name}": f".replay.data.{name}"
    for name in ("features", "action", "reward", "next_features", "next_legal", "next_max", "done")
}


def _ocp():
    import orbax.checkpoint as ocp

    return ocp


def versions() -> dict[str, str]:
    """Versions of the packages a checkpoint depends on."""
    import importlib.metadata as md

    out = {}
    for name in ("jaxgames", "jax", "jaxlib", "flax", "optax", "orbax-checkpoint", "numpy"):
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = "unknown"
    return out


def _flatten(tree, prefix: str = "") -> dict[str, Any]:
    """A pytree as a flat {prefix + path: array} dict, without empty arrays."""
    return {
        prefix + jax.tree_util.keystr(path): leaf
        for path, leaf in jax.tree_util.tree_leaves_with_path(tree)
        if np.size(leaf)
    }


def _unflatten(flat: dict[str, Any], template, prefix: str = ""):
    """The pytree of `template` with its leaves from `flat` (`_flatten`'s keys), each leaf
    that `flat` lacks taken from `template`."""
    paths, structure = jax.tree_util.tree_flatten_with_path(template)
    leaves = [flat.get(prefix + jax.tree_util.keystr(path), leaf) for path, leaf in paths]
    return jax.tree_util.tree_unflatten(structure, leaves)


def carry_to_tree(carry) -> dict[str, Any]:
    """The savable part of a training carry as a flat {path: array} dict: arrays only (the key
    as raw key data), without the update's scratch space (the n-tuple hit tally, whose
    starting value no update depends on) and empty arrays (an eligibility history of length
    0), which are rebuilt from a template on restore."""
    return _flatten(carry._replace(scratch=None, key=jax.random.key_data(carry.key)))


def tree_to_carry(flat: dict[str, Any], template):
    """Rebuilds a carry from a restored flat dict, taking what was not saved from `template`."""
    tree = template._replace(scratch=None, key=jax.random.key_data(template.key))
    carry = _unflatten(flat, tree)
    return carry._replace(
        scratch=template.scratch, key=jax.random.wrap_key_data(jnp.asarray(carry.key))
    )


def average_to_tree(params) -> dict[str, Any]:
    """Averaged parameters as a flat {path: array} dict, their paths prefixed by AVERAGE."""
    return _flatten(params, AVERAGE)


def _abstract(tree: dict[str, Any]) -> dict[str, Any]:
    return {k: jax.ShapeDtypeStruct(np.shape(v), jnp.asarray(v).dtype) for k, v in tree.items()}


def _manager(directory: pathlib.Path, keep: int = 3, create: bool = True):
    ocp = _ocp()
    options = ocp.CheckpointManagerOptions(
        max_to_keep=keep,
        create=create,
        enable_async_checkpointing=False,
        cleanup_tmp_directories=create,
    )
    return ocp.CheckpointManager(directory, options=options, item_names=("state", "meta"))


def save(
    run_dir: str | pathlib.Path,
    carry,
    config: Config,
    meta: dict,
    keep: int = 3,
    average: Any = None,
) -> int:
    """Saves `carry` (and the averaged parameters `average`, if any: their sample count
    belongs in `meta["average_count"]`) as checkpoint `games` of the run folder; returns
    that step.

    Raises:
        CheckpointError: the checkpoint could not be written (e.g. the disk is full); the
            previous checkpoint, if any, is untouched.
    """
    ocp = _ocp()
    directory = pathlib.Path(run_dir).resolve() / CHECKPOINTS
    step = int(carry.games)
    state = carry_to_tree(carry)
    if average is not None:
        state.update(average_to_tree(average))
    from jaxgames.registry import make

    game = make(config.game.name, **config.game.options)
    info = {
        **meta,
        "config": to_dict(config),
        "versions": versions(),
        "games": step,
        "moves": int(carry.moves),
        "game": {
            "name": config.game.name,
            "options": dict(config.game.options),
            "version": game.version,
        },
    }
    try:
        with _manager(directory, keep) as manager:
            if step in manager.all_steps():
                raise CheckpointError(
                    f"checkpoint {step} already exists in {directory}; not overwriting it"
                )
            manager.save(
                step,
                args=ocp.args.Composite(
                    state=ocp.args.StandardSave(state),
                    meta=ocp.args.JsonSave(info),
                ),
            )
            manager.wait_until_finished()
    except OSError as e:
        last = latest_step(run_dir)
        kept = f"checkpoint {last} is intact" if last is not None else "no earlier checkpoint"
        raise CheckpointError(
            f"could not write checkpoint {step} to {directory}: {e.strerror or e}; {kept}. "
            "Free some space (or choose another --run-dir) and resume with --resume."
        ) from None
    return step


def _is_step(name: str) -> bool:
    """Whether a folder name is a checkpoint's game count (ASCII digits only: str.isdigit
    also accepts superscripts and other scripts' digits, which int() refuses or reads)."""
    return name.isascii() and name.isdigit()


def complete_steps(run_dir: str | pathlib.Path) -> list[int]:
    """The complete checkpoints of a run folder, oldest first."""
    directory = pathlib.Path(run_dir) / CHECKPOINTS
    if not directory.is_dir():
        return []
    steps = [
        int(p.name)
        for p in directory.iterdir()
        if _is_step(p.name) and (p / "commit_success.txt").exists()
    ]
    if not steps:  # older orbax versions may not write the marker
        steps = [int(p.name) for p in directory.iterdir() if _is_step(p.name)]
    return sorted(steps)


def latest_step(run_dir: str | pathlib.Path) -> int | None:
    """The newest complete checkpoint of a run folder (None if there is none)."""
    steps = complete_steps(run_dir)
    return steps[-1] if steps else None


def locate(path: str | pathlib.Path) -> tuple[pathlib.Path, int]:
    """(run folder, step) for a run folder, its checkpoints folder or one checkpoint folder.

    Raises:
        CheckpointError: nothing that looks like a checkpoint is there.
    """
    try:
        path = pathlib.Path(path).resolve()
        exists = path.exists()
    except (OSError, RuntimeError) as e:  # a symlink loop, a name the OS refuses
        raise CheckpointError(f"cannot follow the path {str(path)!r}: {e}") from None
    if not exists:
        raise CheckpointError(f"no checkpoint at {path}: the path does not exist")
    if _is_step(path.name) and path.parent.name == CHECKPOINTS:
        return path.parent.parent, int(path.name)
    if path.name == CHECKPOINTS:
        path = path.parent
    step = latest_step(path)
    if step is None:
        raise CheckpointError(
            f"no checkpoint found at {path}: expected a run folder with {CHECKPOINTS}/<games>/ "
            f"(written by `jaxgames train --run-dir`), or one such checkpoint folder"
        )
    return path, step


def _fallback_hint(run_dir: pathlib.Path, step: int) -> str:
    """What to do about a damaged checkpoint: name the older ones that may still be good."""
    directory = run_dir / CHECKPOINTS
    older = [s for s in complete_steps(run_dir) if s < step]
    if not older:
        return "; no older checkpoint in this run (retrain, or restore it from a backup)"
    return (
        f"; use an older one (e.g. PATH {directory / str(older[-1])}), or delete "
        f"{directory / str(step)} so that --resume continues from {older[-1]}"
    )


MAX_META_BYTES = 10_000_000


def _read_json(path: pathlib.Path) -> Any:
    """A JSON file, read only if it is a regular file of at most MAX_META_BYTES (never a
    device, a pipe or a link to one)."""
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path} is not a regular file")
    if info.st_size > MAX_META_BYTES:
        raise ValueError(f"{path} is {info.st_size:,} bytes (at most {MAX_META_BYTES:,})")
    with path.open("rb") as f:
        data = f.read(MAX_META_BYTES + 1)
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError(f"{path} is nested too deeply") from None


def _count(meta: dict, name: str, default: int | None = None) -> int:
    """A non-negative integer field of the metadata (ValueError naming it otherwise)."""
    value = meta.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
        raise ValueError(f"{name} is {value!r}, expected a count in [0, 2^31)")
    return value


def read_meta(path: str | pathlib.Path) -> tuple[Config, dict, pathlib.Path, int]:
    """(config, metadata, run folder, step) of a checkpoint, without loading any array.

    Raises:
        CheckpointError: missing, unreadable or malformed metadata (a file that is not a
            regular one or is too large, JSON that is not the expected mapping, counts that
            are not counts, a game count other than the folder's), naming what is wrong.
    """
    run_dir, step = locate(path)
    where = run_dir / CHECKPOINTS / str(step)
    try:
        meta = _read_json(where / "meta" / "metadata")
        if not isinstance(meta, dict):
            raise ValueError(f"the metadata is a {type(meta).__name__}, expected a mapping")
        if _count(meta, "games") != step:
            raise ValueError(f"it says {meta['games']} games, its folder {step}")
        _count(meta, "moves", 0)
        _count(meta, "average_count", 0)
        seconds = meta.get("train_seconds", 0.0)
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
            raise ValueError(f"train_seconds is {seconds!r}, expected a number of seconds")
        config = from_saved(meta.get("config"), where=f"checkpoint {step} config")
    except FileNotFoundError:
        raise CheckpointError(
            f"checkpoint {where} is incomplete or corrupt: its metadata is missing"
            + _fallback_hint(run_dir, step)
        ) from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError, ValueError) as e:
        raise CheckpointError(
            f"checkpoint {where} has unreadable metadata: {' '.join(str(e).split())[:300]}"
            + _fallback_hint(run_dir, step)
        ) from None
    return config, meta, run_dir, step


def restore(path: str | pathlib.Path, template) -> tuple[Any, dict]:
    """Restores the carry of a checkpoint into the shapes of `template` (a fresh carry of the
    same config). Returns (carry, metadata).

    Raises:
        CheckpointError: missing, corrupt, or saved by a run of another shape (game, tuples,
            batch size), with what differs.
    """
    _, meta, run_dir, step = read_meta(path)
    abstract = _abstract(carry_to_tree(template))
    saved = _saved_arrays(run_dir, step)
    old_names = {old: new for old, new in RENAMED.items() if old in saved and new in abstract}
    request = {({v: k for k, v in old_names.items()}).get(k, k): v for k, v in abstract.items()}
    # a checkpoint with averaged parameters holds more than the carry: read only the carry
    state = _restore_state(run_dir, step, request, bool(meta.get("average_count")), saved)
    state = {old_names.get(k, k): v for k, v in state.items()}
    carry = tree_to_carry(state, template)
    if int(carry.games) != step or not int(carry.moves) >= 0:
        raise CheckpointError(
            f"checkpoint {run_dir / CHECKPOINTS / str(step)}: its counters say {int(carry.games)} "
            f"games and {int(carry.moves)} moves, its folder {step} games"
            + _fallback_hint(run_dir, step)
        )
    return carry, meta


def restore_params(
    path: str | pathlib.Path, abstract_params: Any, meta: dict, average: bool = True
) -> tuple[Any, int]:
    """(parameters, their sample count) of a checkpoint in the shapes of `abstract_params`
    (a pytree of `jax.ShapeDtypeStruct`, e.g. `ValueModel.abstract_params()`): the averaged
    parameters when `average` and the run kept them (count > 0), else the latest (count 0).
    Only those arrays are read; `meta` is the checkpoint's metadata (`read_meta`).

    Raises:
        CheckpointError: missing or corrupt.
    """
    run_dir, step = locate(path)
    count = int(meta.get("average_count", 0)) if average else 0
    prefix = AVERAGE if count else PARAMS
    saved = _saved_arrays(run_dir, step)
    if count and saved and not any(name.startswith(AVERAGE) for name in saved):
        raise CheckpointError(
            f"checkpoint {run_dir / CHECKPOINTS / str(step)}: its metadata counts {count} "
            "averaged samples, but it holds no averaged parameters" + _fallback_hint(run_dir, step)
        )
    paths, structure = jax.tree_util.tree_flatten_with_path(abstract_params)
    names = [prefix + jax.tree_util.keystr(p) for p, _ in paths]
    wanted = {n: leaf for n, (_, leaf) in zip(names, paths, strict=True) if math.prod(leaf.shape)}
    state = _restore_state(run_dir, step, wanted, True, saved)
    leaves = [
        state[n] if n in state else jnp.zeros(leaf.shape, leaf.dtype)
        for n, (_, leaf) in zip(names, paths, strict=True)
    ]
    return jax.tree_util.tree_unflatten(structure, leaves), count


def restore_average(path: str | pathlib.Path, params_template) -> tuple[Any, int] | None:
    """(averaged parameters, their sample count) of a checkpoint, in the shapes of
    `params_template`; None when it holds no average (saved without train.average_from,
    or before averaging began).

    Raises:
        CheckpointError: missing or corrupt.
    """
    _, meta, _, _ = read_meta(path)
    if not int(meta.get("average_count", 0)):
        return None
    abstract = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), params_template)
    return restore_params(path, abstract, meta, average=True)


def _saved_arrays(run_dir: pathlib.Path, step: int) -> dict[str, tuple[tuple, str]]:
    """{name: (shape, dtype)} of the arrays a checkpoint holds (orbax's tree metadata; empty
    if unreadable)."""
    ocp = _ocp()
    quiet = logging.getLogger("absl")  # it warns that the item has no step metadata: true
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        with ocp.StandardCheckpointer() as reader:
            tree = reader.metadata(run_dir / CHECKPOINTS / str(step) / "state").item_metadata
        return {k: (tuple(v.shape), str(np.dtype(v.dtype))) for k, v in tree.items()}
    except Exception:
        return {}
    finally:
        quiet.setLevel(level)


def _check_arrays(
    run_dir: pathlib.Path, step: int, abstract: dict[str, Any], saved: dict[str, tuple[tuple, str]]
) -> None:
    """Raises CheckpointError when a saved array (`saved`: `_saved_arrays`) has another shape
    or dtype than `abstract` needs (orbax would restore the saved shape, or cast the values)."""
    for name, want in abstract.items():
        if name not in saved:
            continue  # orbax itself refuses a missing array
        shape, dtype = saved[name]
        need = (tuple(want.shape), str(np.dtype(want.dtype)))
        if (shape, dtype) != need:
            raise CheckpointError(
                f"checkpoint {run_dir / CHECKPOINTS / str(step)}: array {name} is "
                f"{dtype}{list(shape)}, but the config it names needs {need[1]}{list(need[0])}: "
                "the arrays do not belong to that config" + _fallback_hint(run_dir, step)
            )


def _restore_state(
    run_dir: pathlib.Path,
    step: int,
    abstract: dict[str, Any],
    partial: bool,
    saved: dict[str, tuple[tuple, str]],
) -> dict[str, Any]:
    """The arrays named in `abstract` of checkpoint `step` (all of them unless `partial`),
    each of the shape and dtype that `abstract` gives (CheckpointError otherwise; `saved` is
    the checkpoint's `_saved_arrays`)."""
    ocp = _ocp()
    _check_arrays(run_dir, step, abstract, saved)
    # onto the first device, however the saving run split its arrays over devices (orbax
    # otherwise restores a saved sharding, which names devices this process may not have)
    one = jax.sharding.SingleDeviceSharding(jax.local_devices()[0])
    abstract = {
        k: jax.ShapeDtypeStruct(v.shape, v.dtype, sharding=getattr(v, "sharding", None) or one)
        for k, v in abstract.items()
    }
    if partial:
        state_args = ocp.args.PyTreeRestore(
            item=abstract,
            restore_args=ocp.checkpoint_utils.construct_restore_args(abstract),
            partial_restore=True,
        )
    else:
        state_args = ocp.args.StandardRestore(abstract)
    try:
        with _manager(run_dir / CHECKPOINTS, keep=None, create=False) as manager:
            restored = manager.restore(
                step, args=ocp.args.Composite(state=state_args, meta=ocp.args.JsonRestore())
            )
    except Exception as e:
        raise CheckpointError(
            f"checkpoint {run_dir / CHECKPOINTS / str(step)} could not be restored: "
            f"{type(e).__name__}: {str(e).splitlines()[0][:300]}" + _fallback_hint(run_dir, step)
        ) from None
    return {k: jnp.asarray(v) for k, v in restored.state.items()}  # partial restores give NumPy


def check_compatible(config: Config, saved: Config, meta: dict | None = None) -> None:
    """Raises CheckpointError when `config` cannot continue a run saved with `saved` (and the
    checkpoint's metadata `meta`): the game and the version of its rules, the approximator,
    the algorithm kind and the batch size must match; schedules, game budget, evaluation and
    the other algorithm settings may change."""
    from jaxgames.registry import make

    problems = []
    saved_version = int(((meta or {}).get("game") or {}).get("version", 1))
    version = make(config.game.name, **config.game.options).version
    if saved_version != version:
        problems.append(
            f"it was written under version {saved_version} of the {saved.game.name} rules, "
            f"this jaxgames implements version {version}"
        )
    if (config.game.name, dict(config.game.options)) != (saved.game.name, dict(saved.game.options)):
        problems.append(
            f"game {saved.game.name} {dict(saved.game.options)} in the checkpoint, "
            f"{config.game.name} {dict(config.game.options)} in the config"
        )
    if dataclasses.asdict(config.approximator) != dataclasses.asdict(saved.approximator):
        problems.append("a different approximator (tuples, symmetries, output or TCL)")
    if config.algorithm.kind != saved.algorithm.kind:
        problems.append(
            f"algorithm {saved.algorithm.kind} in the checkpoint, "
            f"{config.algorithm.kind} in the config"
        )
    if config.train.batch_size != saved.train.batch_size:
        problems.append(
            f"batch size {saved.train.batch_size} in the checkpoint, "
            f"{config.train.batch_size} in the config"
        )
    if problems:
        raise CheckpointError(
            "this checkpoint cannot continue with this config: " + "; ".join(problems)
        )


def check_finite(params: Any, where: str) -> None:
    """Raises CheckpointError if any parameter is NaN or infinite."""
    bad = [
        jax.tree_util.keystr(k)
        for k, v in jax.tree_util.tree_leaves_with_path(params)
        if not bool(jnp.all(jnp.isfinite(v)))
    ]
    if bad:
        raise CheckpointError(
            f"{where}: parameters {', '.join(bad)} contain NaN or infinite values; "
            "the run diverged (try a smaller alpha) or the file is damaged"
        )
