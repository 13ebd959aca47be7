"""Q-learning with max/min self-play (seed 003): tabular, and DQN-style with replay and a target.

One Q function, from the first player's point of view, plays both sides: the first player
picks argmax_a Q(s, a), the second argmin_a Q(s, a) (seed 003's `selfplay=True`). After the
move a in s leads to s' with reward r (the first player's), Q(s, a) moves toward

    y = r + gamma * best(s'),   best(s') = max_a' Q~(s', a') if the first player moves in s',
                                           min_a' Q~(s', a') if the second, 0 if s' is terminal,

the maximum/minimum taken over legal actions. Q~ is the target network (`target_every` > 0:
a copy of the parameters refreshed every `target_every` updates) or Q itself.

Experience replay (`replay_size` > 0): every lockstep step writes the B games' transitions into
an on-device ring buffer and makes one update from `replay_batch` transitions drawn uniformly
from it (once it holds that many). Without replay, each step updates on the B transitions it
just made (seed 003's tabular Q-learning, B games at a time).

Any approximator with a Q head serves: tabular, n-tuple, linear or CNN (one parameter set).
Two-player zero-sum games only.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxgames import core, selfplay
from jaxgames.approximators import Hits, ValueModel
from jaxgames.core import Game, State
from jaxgames.learning.farl import Metrics, batched_policy, jit_chunk, step_metrics
from jaxgames.learning.schedules import Schedule
from jaxgames.selfplay import ParamPolicy

Array = jax.Array


@dataclasses.dataclass(frozen=True)
class MinimaxQSpec:
    """Static settings (hashable; derived from the config).

    Attributes:
        gamma: discount.
        replay_size: ring buffer capacity in transitions (0 = no replay).
        replay_batch: transitions per update drawn from the buffer.
        target_every: updates between target-network refreshes (0 = no target network).
        random_opening_moves: the first k moves of every game are random.
        alpha, epsilon: schedules over finished games.
        batch_size: B games in lockstep.
    """

    gamma: float = 1.0
    replay_size: int = 0
    replay_batch: int = 256
    target_every: int = 0
    random_opening_moves: int = 0
    alpha: Schedule = dataclasses.field(default_factory=lambda: Schedule("constant", 0.1))
    epsilon: Schedule = dataclasses.field(default_factory=lambda: Schedule("constant", 0.1))
    batch_size: int = 64

    kind = "minimax_q"

    def __post_init__(self):
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if self.replay_size < 0 or self.target_every < 0:
            raise ValueError(
                f"replay_size ({self.replay_size}) and target_every ({self.target_every}) "
                "must be >= 0"
            )
        if self.replay_size and not 1 <= self.replay_batch <= self.replay_size:
            raise ValueError(
                f"replay_batch={self.replay_batch}: expected 1..replay_size ({self.replay_size})"
            )


class Replay(NamedTuple):
    """Ring buffer of transitions; leading axis R (capacity).

    Attributes:
        features: features of s.
        action: int32[R].
        reward: float32[R], the first player's reward of the move.
        next_features: features of s'.
        next_legal: bool[R, A], legal actions in s'.
        next_max: bool[R], the first player (the maximiser) moves in s'.
        done: bool[R], s' is terminal.
        pos: int32, the next slot to write.
        size: int32, slots filled.
    """

    features: Array
    action: Array
    reward: Array
    next_features: Array
    next_legal: Array
    next_max: Array
    done: Array
    pos: Array
    size: Array


class Carry(NamedTuple):
    """What a training chunk threads through its scan (and a checkpoint saves)."""

    states: State
    params: Any
    target: Any
    scratch: Any
    replay: Replay
    games: Array
    moves: Array
    updates: Array
    key: jax.Array


def _check(game: Game) -> None:
    if game.num_players != 2 or game.stochastic:
        raise ValueError(
            f"max/min Q-learning needs a deterministic two-player zero-sum game, not {game.name!r}"
        )


def init_carry(game: Game, model: ValueModel, spec: MinimaxQSpec, key: jax.Array) -> Carry:
    """Fresh parameters, B fresh games and an empty replay buffer."""
    _check(game)
    params_key, games_key, key = jax.random.split(key, 3)
    params = model.init(params_key)
    states = selfplay.init_batch(game, spec.batch_size, games_key)
    features = model.features(game.init(games_key))
    r = spec.replay_size
    replay = Replay(
        features=jnp.zeros((r, *features.shape), features.dtype),
        action=jnp.zeros(r, jnp.int32),
        reward=jnp.zeros(r, jnp.float32),
        next_features=jnp.zeros((r, *features.shape), features.dtype),
        next_legal=jnp.zeros((r, game.num_actions), bool),
        next_max=jnp.zeros(r, bool),
        done=jnp.zeros(r, bool),
        pos=jnp.int32(0),
        size=jnp.int32(0),
    )
    return Carry(
        states=states,
        params=params,
        target=jax.tree.map(jnp.copy, params) if spec.target_every else None,
        scratch=model.init_scratch(params),
        replay=replay,
        games=jnp.int32(0),
        moves=jnp.int32(0),
        updates=jnp.int32(0),
        key=key,
    )


def q_values(model: ValueModel, params: Any, features: Array, num_actions: int) -> Array:
    """float32[A]: Q(s, .) from the first player's point of view (unbatched)."""
    return jax.vmap(lambda a: model.value(params, 0, features, a))(jnp.arange(num_actions))


def action_scores(
    game: Game, model: ValueModel, spec: MinimaxQSpec, params: Any, state: State, features: Array
) -> tuple[Array, Array]:
    """(scores, q) float32[A] for one state: the mover maximises scores = +-Q (unbatched)."""
    del spec
    q = q_values(model, params, features, game.num_actions)
    return jnp.where(state.current_player == 0, q, -q), q


def greedy_action(
    game: Game, model: ValueModel, spec: MinimaxQSpec, params: Any, state: State, key: jax.Array
) -> Array:
    """The trained agent's move (unbatched, jittable): max Q for the first player, min Q for the
    second, ties broken at random."""
    scores = action_scores(game, model, spec, params, state, model.features(state))[0]
    return core.argmax_random(key, scores, state.legal_action_mask)


@functools.cache
def greedy_fn(game: Game, model: ValueModel, spec: MinimaxQSpec):
    """The trained agent as a batched `fn(params, states, key) -> int32[B]`."""

    return batched_policy(functools.partial(greedy_action, game, model, spec))


def greedy_policy(game: Game, model: ValueModel, spec: MinimaxQSpec, params: Any) -> ParamPolicy:
    return ParamPolicy(greedy_fn(game, model, spec), params)


def targets(model: ValueModel, spec: MinimaxQSpec, params: Any, batch: Replay) -> Array:
    """float32[M]: y = r + gamma * best(s') for a batch of transitions."""
    num_actions = batch.next_legal.shape[-1]
    q_next = jax.vmap(lambda f: q_values(model, params, f, num_actions))(batch.next_features)
    sign = jnp.where(batch.next_max, 1.0, -1.0)[:, None]
    best = jnp.max(jnp.where(batch.next_legal, sign * q_next, -jnp.inf), axis=-1)
    best = jnp.where(batch.done | ~batch.next_legal.any(-1), 0.0, sign[:, 0] * best)
    return jax.lax.stop_gradient(batch.reward + spec.gamma * best)


def make_step(game: Game, model: ValueModel, spec: MinimaxQSpec):
    """`step(carry, _) -> (carry, Metrics)`: one lockstep move of all B games plus one update."""
    _check(game)
    b = spec.batch_size

    def decide(params, state, epsilon, key):
        explore_key, random_key, tie_key = jax.random.split(key, 3)
        features = model.features(state)
        scores = action_scores(game, model, spec, params, state, features)[0]
        greedy = core.argmax_random(tie_key, scores, state.legal_action_mask)
        explore = (jax.random.uniform(explore_key) < epsilon) | (
            state.step_count < spec.random_opening_moves
        )
        action = jnp.where(explore, core.sample_legal(random_key, state.legal_action_mask), greedy)
        return action, explore, features

    def step(carry: Carry, _: Any) -> tuple[Carry, Metrics]:
        key, decide_key, reset_key, sample_key = jax.random.split(carry.key, 4)
        epsilon, alpha = spec.epsilon(carry.games), spec.alpha(carry.games)
        states, params = carry.states, carry.params
        action, explore, features = jax.vmap(decide, in_axes=(None, 0, None, 0))(
            params, states, epsilon, jax.random.split(decide_key, b)
        )
        after = jax.vmap(game.afterstate)(states, action)
        fresh = Replay(
            features=features,
            action=action,
            reward=after.rewards[:, 0],
            next_features=jax.vmap(model.features)(after),
            next_legal=after.legal_action_mask,
            next_max=after.current_player == 0,
            done=after.terminated,
            pos=jnp.int32(0),
            size=jnp.int32(b),
        )
        replay = carry.replay
        if spec.replay_size:
            slots = (replay.pos + jnp.arange(b)) % spec.replay_size
            replay = jax.tree.map(lambda buf, new: buf.at[slots].set(new), replay[:7], fresh[:7])
            replay = Replay(
                *replay,
                pos=(carry.replay.pos + b) % spec.replay_size,
                size=jnp.minimum(carry.replay.size + b, spec.replay_size),
            )
            picks = jax.random.randint(sample_key, (spec.replay_batch,), 0, replay.size)
            batch = jax.tree.map(lambda x: x[picks], replay[:7])
            batch = Replay(*batch, pos=replay.pos, size=replay.size)
            ready = replay.size >= spec.replay_batch
        else:
            batch, ready = fresh, jnp.bool_(True)
        target_params = carry.target if spec.target_every else params
        y = targets(model, spec, target_params, batch)
        q_sa = jax.vmap(lambda f, act: model.value(params, 0, f, act))(batch.features, batch.action)
        delta = y - q_sa
        m = batch.action.shape[0]
        hits = Hits(
            player=jnp.zeros(m, jnp.int32),
            action=batch.action,
            features=batch.features,
            signal=delta * model.derivative(q_sa),
            valid=jnp.broadcast_to(ready, (m,)),
            gain=model.derivative(q_sa) ** 2,
        )
        params, scratch = model.update(params, carry.scratch, hits, alpha)
        updates = carry.updates + ready.astype(jnp.int32)
        target = carry.target
        if spec.target_every:
            refresh = ready & (updates % spec.target_every == 0)
            target = jax.tree.map(lambda p, t: jnp.where(refresh, p, t), params, target)

        done = after.terminated
        stats = selfplay.update_stats(
            selfplay.empty_stats(2), ~states.terminated, after.rewards, done
        )
        metrics = step_metrics(
            stats, explore, jnp.where(ready, jnp.sum(jnp.abs(delta)), 0.0), jnp.where(ready, m, 0)
        )
        carry = Carry(
            states=selfplay.restart_finished(game, after, reset_key),
            params=params,
            target=target,
            scratch=scratch,
            replay=replay,
            games=carry.games + stats.finished,
            moves=carry.moves + stats.moves,
            updates=updates,
            key=key,
        )
        return carry, metrics

    return step


def make_chunk(game: Game, model: ValueModel, spec: MinimaxQSpec, num_steps: int):
    """`chunk(carry) -> (carry, Metrics)`: `num_steps` lockstep moves, jitted, carry donated."""
    return jit_chunk(make_step(game, model, spec), num_steps)
