"""Config files that start from another (`base:`): what merges, what replaces, what is refused."""

import dataclasses

import pytest
import yaml

from jaxgames import presets
from jaxgames.config import MAX_BASE_DEPTH, load_config, merge, read_config_mapping
from jaxgames.learning.schedules import Schedule


def write(folder, name, text):
    path = folder / name
    path.write_text(text)
    return path


def test_a_file_on_a_preset_is_the_preset_with_its_changes(tmp_path):
    path = write(
        tmp_path,
        "mine.yaml",
        "base: connect4-td-farl\n"
        "description: shorter\n"
        "train: {games: 1000, batch_size: 32}\n"
        "approximator: {tuple_sets: [c4-walks-70]}\n",
    )
    gbg, mine = presets.load("connect4-td-farl"), load_config(path)
    train = dataclasses.replace(gbg.train, games=1000, batch_size=32)
    approximator = dataclasses.replace(gbg.approximator, tuple_sets=("c4-walks-70",))
    assert mine == dataclasses.replace(
        gbg, description="shorter", train=train, approximator=approximator
    )
    # a mapping merges key by key: the rest of train (seed, checkpoints, averaging) is the base's
    assert (mine.train.seed, mine.train.average_from) == (0, 4_000_000)


def test_a_mapping_of_another_kind_replaces_the_base_mapping_whole(tmp_path):
    # the base's alpha {kind: constant, start: 3.7}: a linear alpha gets none of its keys, so
    # its start is the default 0, which a step size may not start at
    text = "base: connect4-td-farl\nalgorithm: {alpha: {kind: linear, end: 1}}\n"
    with pytest.raises(ValueError, match=r"alpha 0 -> 1 \(linear\): the step size must start"):
        load_config(write(tmp_path, "mine.yaml", text))
    text = "base: connect4-td-farl\nalgorithm: {alpha: {kind: linear, start: 2, end: 1}}\n"
    alpha = load_config(write(tmp_path, "mine.yaml", text)).algorithm.alpha
    assert alpha == Schedule(kind="linear", start=2.0, end=1.0)
    # the same kind merges: start kept, end given
    path = write(tmp_path, "same.yaml", "base: connect4-td-farl\nalgorithm: {alpha: {end: 1}}\n")
    assert load_config(path).algorithm.alpha == Schedule(kind="constant", start=3.7, end=1.0)
    # an approximator of another kind: none of the n-tuple settings carried over
    data = merge(
        {"approximator": {"kind": "ntuple", "tcl": "exponential"}},
        {"approximator": {"kind": "linear"}},
    )
    assert data == {"approximator": {"kind": "linear"}}


def test_lists_and_values_replace_and_nested_mappings_merge():
    base = {"a": [1, 2], "b": {"c": 1, "d": {"e": 1, "f": 2}}, "g": 1}
    child = {"a": [3], "b": {"d": {"f": 5}}, "g": None}
    assert merge(base, child) == {"a": [3], "b": {"c": 1, "d": {"e": 1, "f": 5}}, "g": None}
    assert base == {"a": [1, 2], "b": {"c": 1, "d": {"e": 1, "f": 2}}, "g": 1}, "base untouched"


def test_a_base_file_is_found_beside_the_file_and_chains(tmp_path):
    (tmp_path / "sub").mkdir()
    write(tmp_path, "grand.yaml", "base: tictactoe-td-farl\ntrain: {games: 500}\n")
    write(tmp_path / "sub", "parent.yaml", "base: ../grand.yaml\ntrain: {batch_size: 4}\n")
    path = write(tmp_path / "sub", "child.yaml", "base: parent.yaml\ntrain: {seed: 7}\n")
    train = load_config(path).train
    assert (train.games, train.batch_size, train.seed) == (500, 4, 7)
    assert "base" not in read_config_mapping(path)


def test_a_preset_name_as_base_is_the_shipped_preset_not_a_file_of_the_working_directory(
    tmp_path, monkeypatch
):
    # a file named like the preset in the working directory (not beside the config) is ignored
    work, configs = tmp_path / "work", tmp_path / "configs"
    work.mkdir(), configs.mkdir()
    write(work, "connect4-td-farl", "base: tictactoe-td-farl\n")
    write(work, "connect4-td-farl.yaml", "base: tictactoe-td-farl\n")
    monkeypatch.chdir(work)
    for base in ("connect4-td-farl", "connect4-td-farl.yaml"):
        path = write(configs, "mine.yaml", f"base: {base}\ntrain: {{seed: 3}}\n")
        assert load_config(path).game.name == "connect_four"
    assert presets.shipped("connect4-td-farl") == presets.shipped("connect4-td-farl.yaml")
    assert presets.shipped("no-such-preset") is None


def test_a_shipped_variant_gives_its_own_description_and_differs_from_its_base():
    with_base = []
    for name in presets.names():
        data = yaml.safe_load(presets.path(name).read_text())
        if "base" in data:
            with_base.append(name)
            base = presets.load(data["base"])
            assert data["description"] != base.description, name
            assert presets.load(name) != dataclasses.replace(base, description=data["description"])
    assert "connect4-td-farl-gpu" in with_base and "connect4-td-nofarl" in with_base


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("base: no-such-preset\n", r"base='no-such-preset' is neither a file beside it nor a "
         r"preset; presets: 2048-td, "),
        ("base: 3\n", r"base=3: expected a preset's name or a YAML file's path"),
        ("base: ''\n", r"base='': expected a preset's name"),
        ("base: mine.yaml\n", r"mine.yaml: its base chain loops: mine.yaml -> mine.yaml"),
        ("base: broken.yaml\n", r"config file '.*broken.yaml' is not valid YAML"),
        ("base: list.yaml\n", r"config file '.*list.yaml' must hold a mapping, got list"),
        ("base: tictactoe-td-farl\ntrain: {gmaes: 5}\n", r"unknown key\(s\) 'gmaes' in "
         r"mine.yaml.train"),
    ],
)  # fmt: skip
def test_a_bad_base_is_one_clear_error(tmp_path, text, message):
    write(tmp_path, "broken.yaml", "game: {name: [\n")
    write(tmp_path, "list.yaml", "- 1\n")
    path = write(tmp_path, "mine.yaml", text)
    with pytest.raises(ValueError, match=message):
        load_config(path)


def test_a_loop_through_several_files_and_a_chain_too_long_are_refused(tmp_path):
    write(tmp_path, "a.yaml", "base: b.yaml\n")
    write(tmp_path, "b.yaml", "base: c.yaml\n")
    write(tmp_path, "c.yaml", "base: a.yaml\n")
    with pytest.raises(ValueError, match=r"a.yaml: its base chain loops: a.yaml -> b.yaml -> "
                       r"c.yaml -> a.yaml"):  # fmt: skip
        load_config(tmp_path / "a.yaml")
    # MAX_BASE_DEPTH bases load: d0 -> d1 -> ... -> d(MAX - 1) -> tictactoe-td-farl
    for i in range(MAX_BASE_DEPTH - 1):
        write(tmp_path, f"d{i}.yaml", f"base: d{i + 1}.yaml\n")
    write(tmp_path, f"d{MAX_BASE_DEPTH - 1}.yaml", "base: tictactoe-td-farl\n")
    assert load_config(tmp_path / "d0.yaml") == presets.load("tictactoe-td-farl")
    write(tmp_path, "e.yaml", "base: d0.yaml\n")
    with pytest.raises(ValueError, match=f"e.yaml: its base chain has more than {MAX_BASE_DEPTH} "):
        load_config(tmp_path / "e.yaml")
