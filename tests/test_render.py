"""SVG pictures of every game: well-formed, one mark per stone, the last move ringed, the
values written, whole games as strips of frames."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import jax
import numpy as np
import pytest

import jaxgames
from jaxgames.core import legal_actions
from jaxgames.render import render_game_svg, render_svg, replay
from tests.helpers import GAME_VARIANTS, variant_id

NS = "{http://www.w3.org/2000/svg}"


def random_moves(game, count: int, seed: int = 0) -> list[int]:
    rng, state, moves = np.random.default_rng(seed), game.init(jax.random.key(seed)), []
    for _ in range(count):
        legal = legal_actions(state)
        if not legal or bool(state.terminated):
            break
        moves.append(int(rng.choice(legal)))
        state = jaxgames.checked_step(game, state, moves[-1], jax.random.key(len(moves)))
    return moves


# every game at its defaults, and the other board shapes that change the drawing
VARIANTS = (
    [(n, {}) for n in jaxgames.available_games()]
    + [v for v in GAME_VARIANTS if v[0] == "connect_four" and v[1].get("rows") == 4]
    + [("hex", {"size": 2})]
)


@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
def test_every_game_draws_a_well_formed_picture_with_its_values(variant):
    name, options = variant
    game = jaxgames.make(name, **options)
    state = game.init(jax.random.key(0))
    moves = random_moves(game, 5)
    for k, m in enumerate(moves):
        state = jaxgames.checked_step(game, state, m, jax.random.key(k + 1))
    legal = np.asarray(state.legal_action_mask)
    values = np.where(legal, np.arange(game.num_actions) / 100, np.nan)
    svg = render_svg(game, state, last_action=moves[-1] if moves else None, values=values)
    root = ET.fromstring(svg)  # well-formed XML
    assert root.tag == NS + "svg" and float(root.get("width")) > 0
    texts = [t.text for t in root.iter(NS + "text")]
    shown = [f"{v:+.2f}" for v in values[np.isfinite(values)]]
    if name not in ("nim", "nim3p"):  # heaps list only their best moves; 2048 in one line
        assert all(any(v in t for t in texts) for v in shown), (shown, texts)
    board = np.asarray(state.board)
    circles = len(list(root.iter(NS + "circle")))
    if name == "connect_four":  # every cell a hole or a disc, and the ring on the last one
        assert circles == board.size + (1 if moves else 0)
    if name == "othello":
        assert circles == int((board != 0).sum()) + (1 if moves else 0)
    if name == "tictactoe":
        assert len(list(root.iter(NS + "path"))) == int((board == 1).sum())
        assert circles == int((board == 2).sum())


def test_a_batched_state_and_wrong_values_are_refused():
    game = jaxgames.make("connect_four")
    batch = jax.vmap(game.init)(jax.random.split(jax.random.key(0), 3))
    with pytest.raises(ValueError, match="one unbatched connect_four state"):
        render_svg(game, batch)
    with pytest.raises(ValueError, match=r"one per action \(7\)"):
        render_svg(game, game.init(None), values=[0.1, 0.2])


def test_a_game_is_a_strip_of_numbered_frames():
    game = jaxgames.make("connect_four")
    moves = [3, 3, 4, 2, 5]
    root = ET.fromstring(render_game_svg(game, replay(game, moves), moves, columns=4))
    labels = [t.text for t in root.iter(NS + "text")]
    assert labels[0] == "start" and labels[-1] == "5: column 5" and len(labels) == 6
    with pytest.raises(ValueError, match="chance moves"):
        replay(jaxgames.make("2048"), [0])


def test_inspect_draws_and_eval_records(tmp_path):
    from jaxgames import cli

    run = tmp_path / "run"
    assert (
        cli.main(
            [
                "train",
                "tictactoe-td-farl",
                "--run-dir",
                str(run),
                "--train.games",
                "300",
                "--eval.games",
                "4",
                "--no-progress",
            ]
        )
        == 0
    )
    picture = tmp_path / "p.svg"
    assert cli.main(["inspect", str(run), "--moves", "4", "--svg", str(picture)]) == 0
    assert ET.parse(picture).getroot().tag == NS + "svg"
    record = tmp_path / "games"
    assert (
        cli.main(
            ["eval", str(run), "--opponent", "random", "--games", "3", "--record", str(record)]
        )
        == 0
    )
    import json

    saved = json.loads((record / "run" / "games.json").read_text())
    assert saved["game"] == "tictactoe" and len(saved["games"]) == 6
    assert sorted(p.name for p in (record / "run").glob("*.svg"))[0] == "game000.svg"
    game = jaxgames.make("tictactoe")
    for g in saved["games"]:  # the moves replay to a finished game
        assert bool(replay(game, g["moves"])[-1].terminated)
