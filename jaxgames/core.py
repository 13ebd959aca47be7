"""The Game record, the State every game returns, and the step semantics all games share.

A game is a frozen record of pure, unbatched functions plus static integers. Callers batch with
`jax.vmap`. Every game builds its `step` from a small rule function through
`with_shared_semantics` (deterministic games through `deterministic_game`, which fills in the
rest of the record), so the behaviour on terminal states and illegal actions is the same
everywhere:

* a step on a terminated state is a no-op that reports zero rewards;
* an illegal action (not in `legal_action_mask`, or out of range) ends the game at once with the
  mover losing (`forfeit_rewards`); the board is left as it was.

`checked_step` is the eager, human-facing variant that raises a `ValueError` instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxgames.types import Array, PRNGKey


@struct.dataclass
class State:
    """One unbatched game state (batch it with `jax.vmap`; then every field gains a leading B).

    Attributes:
        board: the board, int8 (int32 where values need it); shape is `Game.board_shape`.
            0 is empty and `p + 1` is player p's stone (Nim: heap sizes).
        current_player: int32 scalar, the player to move (after the game ends: the player who
            would have moved next).
        legal_action_mask: bool[num_actions]; all False once the game has ended.
        rewards: float32[num_players], the rewards earned by the last step (zero until the end
            in every game here).
        terminated: bool scalar.
        step_count: int32 scalar, moves played so far.
        extras: game-specific arrays (a dict pytree; empty for most games).
    """

    board: Array
    current_player: Array
    legal_action_mask: Array
    rewards: Array
    terminated: Array
    step_count: Array
    extras: dict[str, Array] = struct.field(default_factory=dict)

    if TYPE_CHECKING:  # flax.struct adds it; declared for type checkers

        def replace(self, **changes: Any) -> State: ...


@dataclasses.dataclass(frozen=True, eq=False)
class BoardSpec:
    """What value-function approximators need to know about a game's board (static).

    Hashes by identity (it holds NumPy tables); each game factory builds one per option set.

    Attributes:
        num_cells: number of board cells an n-tuple can read.
        num_cell_states: P, the number of states a cell can be in.
        encode: `encode(state) -> int32[num_cells]`, each cell's state in 0..P-1 (unbatched).
        symmetries: int32[S, num_cells]; symmetric board s holds at cell i what the board
            holds at cell `symmetries[s, i]`. Row 0 is the identity.
        action_symmetries: int32[S, num_actions]; action a on the board is action
            `action_symmetries[s, a]` on symmetric board s.
        neighbours: int32[num_cells, K], adjacent cells for random-walk tuples (-1 = none).
        changes: optional `changes(state, encoded) -> (cells int32[A, C], new int32[A, C])`:
            the at most C cells that each action changes and their new states (unchanged
            padding: cell `num_cells`). Lets learners value all afterstates incrementally;
            games where a move changes many cells leave it None.
    """

    num_cells: int
    num_cell_states: int
    encode: Callable[[State], Array]
    symmetries: np.ndarray
    action_symmetries: np.ndarray
    neighbours: np.ndarray
    changes: Callable[[State, Array], tuple[Array, Array]] | None = None


@dataclasses.dataclass(frozen=True)
class Game:
    """A game: static sizes plus pure, unbatched, jittable functions.

    Frozen and hashable (functions hash by identity; `jaxgames.make` caches one record per
    option set), so it can be passed to `jax.jit` as a static argument.

    Attributes:
        name: registry name, e.g. "connect_four".
        num_players: number of players; player 0 moves first.
        num_actions: size of the action space.
        board_shape: shape of `State.board`.
        options: the resolved options as sorted `(name, value)` pairs.
        init: `init(key) -> State`.
        step: `step(state, action, key) -> State`; `key` is unused by deterministic games.
        observe: `observe(state, player) -> Array`, planes from `player`'s point of view.
        afterstate: `afterstate(state, action) -> State`, the deterministic part of a move.
        chance: `chance(afterstate, key) -> State`, the random part (identity if deterministic).
        render: host-side `render(state) -> str`, an ASCII picture of an unbatched state.
        action_names: a readable name for every action (e.g. column numbers), for humans.
        stochastic: whether `chance` is random.
        board_spec: the cell encoding, symmetries and neighbourhoods approximators use.
        max_moves: an upper bound on the moves of one game (any play).
        version: the version of the rules' implementation; it changes whenever a game's
            states, encoding or outcomes change, and checkpoints record it.
    """

    name: str
    num_players: int
    num_actions: int
    board_shape: tuple[int, ...]
    options: tuple[tuple[str, Any], ...]
    init: Callable[[PRNGKey], State]
    step: Callable[[State, Array, PRNGKey], State]
    observe: Callable[[State, Array], Array]
    afterstate: Callable[[State, Array], State]
    chance: Callable[[State, PRNGKey], State]
    render: Callable[[State], str]
    action_names: tuple[str, ...]
    stochastic: bool = False
    board_spec: BoardSpec | None = None
    max_moves: int = 0
    version: int = 1

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v}" for k, v in self.options)
        return f"Game({self.name}{', ' if opts else ''}{opts})"


def new_state(board: Array, legal_action_mask: Array, num_players: int) -> State:
    """The state at the start of a game: player 0 to move, no rewards, no moves yet."""
    return State(
        board=board,
        current_player=jnp.int32(0),
        legal_action_mask=legal_action_mask,
        rewards=jnp.zeros(num_players, jnp.float32),
        terminated=jnp.bool_(False),
        step_count=jnp.int32(0),
    )


def where_tree(pred: Array, on_true: Any, on_false: Any) -> Any:
    """`jnp.where` over two pytrees of the same structure with a scalar (unbatched) predicate."""
    return jax.tree.map(lambda a, b: jnp.where(pred, a, b), on_true, on_false)


def with_shared_semantics(
    apply: Callable[[State, Array], State],
    forfeit_rewards: Callable[[Array], Array],
) -> Callable[[State, Array], State]:
    """Wraps a game's move rule with the shared terminal and illegal-action semantics.

    Args:
        apply: `apply(state, action) -> State`, the rule for a legal action on a live state.
            It is also evaluated (and its result discarded) for illegal actions, so it must not
            fail on them; JAX clamps gathers and drops out-of-range scatters, which suffices.
        forfeit_rewards: `forfeit_rewards(mover) -> float32[num_players]`, the rewards when
            `mover` plays an illegal action and thereby loses.

    Returns:
        `afterstate(state, action) -> State`, unbatched and jittable.
    """

    def afterstate(state: State, action: Array) -> State:
        action = jnp.asarray(action, jnp.int32)
        num_actions = state.legal_action_mask.shape[-1]
        in_range = (action >= 0) & (action < num_actions)
        legal = in_range & state.legal_action_mask[jnp.clip(action, 0, num_actions - 1)]
        moved = apply(state, action)
        num_players = state.rewards.shape[-1]
        # Three outcomes: a live legal move (`moved`), a forfeit (board and extras kept, the
        # mover loses), an absorbed move on a finished game (nothing changes, no rewards).
        # One select over the big fields; the small ones are set per outcome.
        live = legal & ~state.terminated
        forfeit = ~legal & ~state.terminated
        out = where_tree(live, moved, state)
        no_rewards = jnp.zeros_like(state.rewards)
        return out.replace(
            current_player=jnp.where(
                forfeit, (state.current_player + 1) % num_players, out.current_player
            ),
            legal_action_mask=out.legal_action_mask & live,
            rewards=jnp.where(
                live,
                moved.rewards,
                jnp.where(forfeit, forfeit_rewards(state.current_player), no_rewards),
            ),
            terminated=out.terminated | ~live,
            step_count=out.step_count + forfeit.astype(jnp.int32),
        )

    return afterstate


def two_player_forfeit(mover: Array) -> Array:
    """Rewards of a two-player zero-sum game lost by `mover`: -1 for it, +1 for the other."""
    return jnp.where(jnp.arange(2) == mover, -1.0, 1.0).astype(jnp.float32)


def win_rewards(winner: Array) -> Array:
    """Rewards of a two-player zero-sum game won by `winner`: +1 for it, -1 for the other."""
    return jnp.where(jnp.arange(2) == winner, 1.0, -1.0).astype(jnp.float32)


def deterministic_game(
    *,
    name: str,
    num_players: int,
    num_actions: int,
    board_shape: tuple[int, ...],
    init: Callable[[PRNGKey], State],
    apply: Callable[[State, Array], State],
    observe: Callable[[State, Array], Array],
    render: Callable[[State], str],
    action_names: tuple[str, ...],
    max_moves: int,
    board_spec: BoardSpec | None = None,
    forfeit: Callable[[Array], Array] = two_player_forfeit,
    version: int = 1,
) -> Game:
    """The Game record of a game without chance, from its move rule `apply` (wrapped with
    the shared semantics, `forfeit(mover)` giving an illegal move's rewards). The registry
    fills in `options`."""
    afterstate = with_shared_semantics(apply, forfeit)
    return Game(
        name=name,
        num_players=num_players,
        num_actions=num_actions,
        board_shape=board_shape,
        options=(),
        init=init,
        step=deterministic_step(afterstate),
        observe=observe,
        afterstate=afterstate,
        chance=no_chance,
        render=render,
        action_names=action_names,
        board_spec=board_spec,
        max_moves=max_moves,
        version=version,
    )


def deterministic_step(afterstate: Callable[[State, Array], State]) -> Callable:
    """`step(state, action, key)` for a game without chance: the key is ignored."""

    def step(state: State, action: Array, key: PRNGKey | None = None) -> State:
        del key
        return afterstate(state, action)

    return step


def no_chance(state: State, key: PRNGKey | None = None) -> State:
    """The chance function of a deterministic game: the identity."""
    del key
    return state


def legal_actions(state: State) -> list[int]:
    """The legal actions of an unbatched, concrete state, as Python ints (host-side)."""
    return [int(a) for a in np.flatnonzero(np.asarray(state.legal_action_mask))]


def checked_step(game: Game, state: State, action: int, key: PRNGKey | None = None) -> State:
    """`game.step` for humans and scripts: raises instead of forfeiting.

    Args:
        game: the game.
        state: an unbatched, concrete state.
        action: the action to play.
        key: needed only by stochastic games.

    Raises:
        ValueError: the state is batched or terminated, the action is not an integer, or it is
            not legal here (the message names the action and the legal ones).
    """
    if np.ndim(state.terminated) != 0:
        raise ValueError(
            f"checked_step takes one unbatched state, got a batch of shape "
            f"{np.shape(state.terminated)}; index one state first"
        )
    if bool(state.terminated):
        raise ValueError(f"the {game.name} game is over; no action is legal (got {action!r})")
    if isinstance(action, bool) or not isinstance(action, int | np.integer):
        raise ValueError(f"action must be an integer, got {action!r} of type {type(action)}")
    legal = legal_actions(state)
    if int(action) not in legal:
        names = ", ".join(f"{a} ({game.action_names[a]})" for a in legal)
        raise ValueError(
            f"action {action} is not legal in this {game.name} position; legal actions: [{names}]"
        )
    if game.stochastic and key is None:
        raise ValueError(f"{game.name} is stochastic: checked_step needs a key")
    return game.step(state, jnp.int32(action), key)


def sample_legal(key: PRNGKey, mask: Array) -> Array:
    """A uniformly random True index of `mask` along its last axis (any batch shape).

    Draws one 32-bit word per row and picks the k-th True entry, k = word mod count, which is
    much cheaper on CPU than a float draw per action. Rows without a True entry give 0.

    Args:
        key: a PRNG key.
        mask: bool[..., A].

    Returns:
        int32[...].
    """
    return nth_true(mask, jax.random.bits(key, mask.shape[:-1], jnp.uint32))


def nth_true(mask: Array, word: Array) -> Array:
    """The index of the k-th True entry of `mask` along its last axis, k = word mod count
    (`word`: uint32[...], one random word per row; rows without a True entry give 0).

    Up to 32 entries, by a prefix count (an associative scan on int16: the same ranks as
    `jnp.cumsum`, which XLA:CPU runs as a slow reduce-window). Beyond, the prefix count is
    most of a random move's cost (65 actions in Othello, 121 in Hex 11x11), so the mask is
    packed into 32-bit words and the entry found by population counts: its word by a running
    count over the few words, then its bit by a binary search over halves. The result is
    `materialised`, or XLA recomputes that chain wherever the action is read. In the random
    move driver (`benchmarks/games.py`, B = 4096) the packed form is slower for the small games
    (TicTacToe 10.2M against 12.2M steps/s) and much faster for the large (Hex 11x11: 2.2M
    with the scan, 5.9M packed and materialised).
    """
    num_actions = mask.shape[-1]

    def kth(count: Array) -> Array:
        return (word % jnp.maximum(count, 1).astype(jnp.uint32)).astype(jnp.int32)

    if num_actions <= 32:
        k = kth(jnp.sum(mask, axis=-1, dtype=jnp.int32))
        rank = jax.lax.associative_scan(jnp.add, mask.astype(jnp.int16), axis=-1)
        return jnp.argmax(mask & (rank.astype(jnp.int32) - 1 == k[..., None]), axis=-1).astype(
            jnp.int32
        )
    num_words = -(-num_actions // 32)
    padded = jnp.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, 32 * num_words - num_actions)])
    bits = padded.reshape((*mask.shape[:-1], num_words, 32)).astype(jnp.uint32)
    words = jnp.sum(bits << jnp.arange(32, dtype=jnp.uint32), axis=-1, dtype=jnp.uint32)
    counts = jax.lax.population_count(words).astype(jnp.int32)
    count = jnp.sum(counts, axis=-1)
    k = kth(count)
    # the word holding the entry, and the entry's rank within it
    found = jnp.zeros(k.shape, jnp.bool_)
    x, base = words[..., 0], jnp.zeros_like(k)
    for i in range(num_words):
        here = ~found & (k < counts[..., i])
        x = jnp.where(here, words[..., i], x)
        base = jnp.where(here, 32 * i, base)
        k = jnp.where(found | here, k, k - counts[..., i])
        found = found | here
    # its bit: keep the low half if the entry is there, else drop it and count on
    for shift in (16, 8, 4, 2, 1):
        low = x & jnp.uint32((1 << shift) - 1)
        low_count = jax.lax.population_count(low).astype(jnp.int32)
        high = k >= low_count
        k = jnp.where(high, k - low_count, k)
        x = jnp.where(high, x >> shift, low)
        base = jnp.where(high, base + shift, base)
    return materialised(jnp.where(count > 0, base, 0).astype(jnp.int32))


def materialised(x: Array) -> Array:
    """`x` (non-negative integers below 2**31 - 1) unchanged, but computed once into memory.

    XLA:CPU fuses cheap element-wise producers into their consumers, even into a consumer that
    reads each value many times, and then recomputes the producer for every read: an action
    drawn by `nth_true` (a chain of a few dozen operations) was recomputed for each of the 121
    cells of a Hex board that the step writes, and Othello's whole flip-and-move rule for each
    cell of its board and mask (40 us a step instead of 0.3). XLA does not fuse an expensive
    producer into a consumer that reuses its elements, and it counts an integer remainder by
    a value it cannot see as expensive, so `x % (x + 1)`, which is `x`, ends the fusion here.
    (An optimization barrier does not: XLA:CPU removes those before fusion.)
    """
    wide = x.astype(jnp.int32)
    return (wide % (wide + 1)).astype(x.dtype)


def argmax_random(key: PRNGKey, values: Array, mask: Array) -> Array:
    """Argmax of `values` over the True entries of `mask`, ties broken uniformly at random.

    Args:
        key: a PRNG key.
        values: float[..., A].
        mask: bool[..., A]; rows must have at least one True entry.

    Returns:
        int32[...].
    """
    masked = jnp.where(mask, values, -jnp.inf)
    best = masked >= jnp.max(masked, axis=-1, keepdims=True)
    return sample_legal(key, mask & best)
