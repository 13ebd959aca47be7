"""Q-learning with max/min self-play (the capstone report): tabular, and DQN-style with replay.

One Q function, from the first player's point of view, plays both sides: the first player
picks argmax_a Q(s, a), the second argmin_a Q(s, a) (the report's `selfplay=True`). After the
move a in s leads to s' with reward r (the first player's), Q(s, a) moves toward

    y = r + gamma * best(s'),   best(s') = max_a' Q~(s', a') if the first player moves in s',
                                           min_a' Q~(s', a') if the second, 0 if s' is terminal,

the maximum/minimum taken over legal actions. Q~ is the target network (`target_every` > 0:
a copy of the parameters refreshed every `target_every` updates) or Q itself.

Experience replay (`replay_size` > 0): every lockstep step writes the B games' transitions into
an on-device ring buffer and makes one update from `replay_batch` transitions drawn uniformly
from it (once it holds that many). Without replay, each step updates on the B transitions it
just made (the capstone report's tabular Q-learning, B games at a time).

Any approximator with a Q head serves: tabular, n-tuple, linear or CNN (one parameter set).
Two-player zero-sum games only.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, NamedTuple

import jax
import jax.numpy as jnp

from jaxgames import selfplay
from jaxgames.approximators.base import Hits, ValueModel
from jaxgames.core import Game, State
from jaxgames.learning import lockstep, targets
from jaxgames.learning.api import AlgorithmConfig, LearnerDef
from jaxgames.types import Array, PRNGKey


@dataclasses.dataclass(frozen=True)
class MinimaxQConfig(AlgorithmConfig):
    """Max/min Q-learning (`algorithm: {kind: minimax_q, ...}`).

    replay_size: ring buffer capacity in transitions (0 = no replay: update on the B
        transitions just made).
    replay_batch: transitions per update drawn from the buffer.
    target_every: updates between target-network refreshes (0 = no target network).
    (gamma, random_opening_moves, alpha, epsilon: see `AlgorithmConfig`.)
    """

    kind: Literal["minimax_q"] = "minimax_q"
    replay_size: int = 0
    replay_batch: int = 256
    target_every: int = 0

    def __post_init__(self):
        super().__post_init__()
        if self.replay_size < 0 or self.target_every < 0:
            raise ValueError(
                f"replay_size={self.replay_size}, target_every={self.target_every}: expected >= 0"
            )
        if self.replay_size and not 1 <= self.replay_batch <= self.replay_size:
            raise ValueError(
                f"replay_batch={self.replay_batch}: expected 1..replay_size ({self.replay_size})"
            )

    def describe(self) -> str:
        replay = (
            f"replay {self.replay_size:,} (minibatch {self.replay_batch}), target network "
            f"every {self.target_every} updates"
            if self.replay_size
            else "no replay"
        )
        return f"{super().describe()}, {replay}"


class Transitions(NamedTuple):
    """Transitions s -a-> s'; leading axis M.

    Attributes:
        features: features of s.
        action: int32[M].
        reward: float32[M], the first player's reward of the move.
        next_features: features of s'.
        next_legal: bool[M, A], legal actions in s'.
        next_max: bool[M], the first player (the maximiser) moves in s'.
        done: bool[M], s' is terminal.
    """

    features: Array
    action: Array
    reward: Array
    next_features: Array
    next_legal: Array
    next_max: Array
    done: Array


class Replay(NamedTuple):
    """A ring buffer of `Transitions` with capacity R.

    Attributes:
        data: the transitions, leading axis R.
        pos: int32, the next slot to write.
        size: int32, slots filled.
    """

    data: Transitions
    pos: Array
    size: Array

    def push(self, new: Transitions) -> Replay:
        """The buffer with the M transitions `new` written at `pos` onward (wrapping)."""
        capacity, m = self.data.action.shape[0], new.action.shape[0]
        slots = (self.pos + jnp.arange(m)) % capacity
        data = jax.tree.map(lambda buf, x: buf.at[slots].set(x), self.data, new)
        return Replay(data, (self.pos + m) % capacity, jnp.minimum(self.size + m, capacity))

    def sample(self, key: PRNGKey, count: int) -> Transitions:
        """`count` transitions drawn uniformly (with replacement) from the filled slots."""
        picks = jax.random.randint(key, (count,), 0, self.size)
        return jax.tree.map(lambda x: x[picks], self.data)


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


def check(game: Game, config: MinimaxQConfig) -> None:
    """Max/min Q-learning plays deterministic two-player zero-sum games only."""
    del config
    if game.num_players != 2 or game.stochastic:
        raise ValueError(
            f"max/min Q-learning needs a deterministic two-player zero-sum game, not {game.name!r}"
        )


def heads(game: Game, config: MinimaxQConfig) -> tuple[int, int]:
    """One Q function (the first player's point of view) with one output per action."""
    del config
    return 1, game.num_actions


def init_carry(
    game: Game, model: ValueModel, config: MinimaxQConfig, batch_size: int, key: PRNGKey
) -> Carry:
    """Fresh parameters, B fresh games and an empty replay buffer."""
    check(game, config)
    params_key, games_key, key = jax.random.split(key, 3)
    params = model.init(params_key)
    states = selfplay.init_batch(game, batch_size, games_key)
    features = model.features(game.init(games_key))
    r = config.replay_size
    data = Transitions(
        features=jnp.zeros((r, *features.shape), features.dtype),
        action=jnp.zeros(r, jnp.int32),
        reward=jnp.zeros(r, jnp.float32),
        next_features=jnp.zeros((r, *features.shape), features.dtype),
        next_legal=jnp.zeros((r, game.num_actions), bool),
        next_max=jnp.zeros(r, bool),
        done=jnp.zeros(r, bool),
    )
    return Carry(
        states=states,
        params=params,
        target=jax.tree.map(jnp.copy, params) if config.target_every else None,
        scratch=model.init_scratch(params),
        replay=Replay(data, jnp.int32(0), jnp.int32(0)),
        games=jnp.int32(0),
        moves=jnp.int32(0),
        updates=jnp.int32(0),
        key=key,
    )


def _scores(game: Game, model: ValueModel, params: Any, state: State, features: Array) -> Array:
    """float32[A]: the mover maximises +Q (first player) or -Q (second) (unbatched)."""
    q = model.q_values(params, jnp.int32(0), features)
    return jnp.where(state.current_player == 0, q, -q)


def action_scores(
    game: Game, model: ValueModel, config: MinimaxQConfig, params: Any, state: State
) -> Array:
    """float32[A]: +-Q(s, .), what the mover maximises (the second player minimises Q)."""
    del config
    return _scores(game, model, params, state, model.features(state))


def target_values(model: ValueModel, config: MinimaxQConfig, params: Any, batch) -> Array:
    """float32[M]: y = r + gamma * best(s') for a batch of transitions."""
    q_next = jax.vmap(lambda f: model.q_values(params, jnp.int32(0), f))(batch.next_features)
    discount = config.gamma * (1.0 - batch.done.astype(jnp.float32))
    return jax.vmap(targets.minimax_q_target)(
        batch.reward, discount, q_next, batch.next_legal, batch.next_max
    )


class Decision(NamedTuple):
    """The B games' moves, batched."""

    action: Array
    random: Array
    after: State
    features: Array


def make_step(game: Game, model: ValueModel, config: MinimaxQConfig, batch_size: int):
    """`step(carry, _) -> (carry, Metrics)`: one lockstep move of all B games plus one update."""
    check(game, config)
    b = batch_size

    def decide(params, state, epsilon, key):
        explore_key, random_key, tie_key = jax.random.split(key, 3)
        features = model.features(state)
        scores = _scores(game, model, params, state, features)
        action, explore = lockstep.epsilon_greedy(
            (explore_key, random_key, tie_key),
            scores,
            state.legal_action_mask,
            epsilon,
            state.step_count < config.random_opening_moves,
        )
        return action, explore, features

    def choose(carry: Carry, epsilon: Array, key: PRNGKey) -> Decision:
        action, explore, features = jax.vmap(decide, in_axes=(None, 0, None, 0))(
            carry.params, carry.states, epsilon, jax.random.split(key, b)
        )
        return Decision(action, explore, jax.vmap(game.afterstate)(carry.states, action), features)

    def learn(carry: Carry, d: Decision, nxt: State, alpha: Array, keys) -> tuple[Carry, Any]:
        """Writes the B transitions to the buffer and makes one update from a minibatch of it
        (once it holds one), or from the B transitions themselves without replay."""
        after, params = d.after, carry.params
        fresh = Transitions(
            features=d.features,
            action=d.action,
            reward=after.rewards[:, 0],
            next_features=jax.vmap(model.features)(after),
            next_legal=after.legal_action_mask,
            next_max=after.current_player == 0,
            done=after.terminated,
        )
        replay = carry.replay
        if config.replay_size:
            replay = replay.push(fresh)
            batch = replay.sample(keys["learn"], config.replay_batch)
            ready = replay.size >= config.replay_batch
        else:
            batch, ready = fresh, jnp.bool_(True)
        target_params = carry.target if config.target_every else params
        y = target_values(model, config, target_params, batch)
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
        if config.target_every:
            refresh = ready & (updates % config.target_every == 0)
            target = jax.tree.map(lambda p, t: jnp.where(refresh, p, t), params, target)
        carry = carry._replace(
            params=params, target=target, scratch=scratch, replay=replay, updates=updates
        )
        learned = lockstep.Learned(
            jnp.where(ready, jnp.sum(jnp.abs(delta)), 0.0), jnp.where(ready, m, 0)
        )
        return carry, learned

    return lockstep.make_step(
        game, ("next", "choose", "reset", "learn"), config.epsilon, config.alpha, choose, learn
    )


LEARNER = LearnerDef(
    config_type=MinimaxQConfig,
    heads=heads,
    init_carry=init_carry,
    make_step=make_step,
    action_scores=action_scores,
    check=check,
    per_game=("states",),  # the replay buffer is shared by all games: replicated
)
