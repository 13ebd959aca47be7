"""The lockstep driver: every learner's training step, assembled from the learner's phases.

One lockstep step moves all B games of the batch once:

1. **choose** (the learner's): every game's move, epsilon-greedy over the learner's scores;
   a record with at least `after` (State[B], the chosen afterstates, rewards as learning sees
   them) and `random` (bool[B], the move was random);
2. **chance** (the driver's): the random part of the move for stochastic games (2048's tile);
3. **learn** (the learner's): the update from what the move showed, returning the carry with
   new parameters (and whatever else the learner keeps) and a `Learned` record;
4. **advance** (the driver's): finished games restart in place, statistics and counters move
   on; a learner that caches something derived from the states (FARL's features) refreshes it
   in its optional **refresh** phase.

The random key of the carry is split once per step into named parts (`roles`); the order of
the names is the learner's, and is part of its results (a learner keeps its order so that a
seed keeps giving the same run). Multi-device training wraps exactly this step.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxgames import core, selfplay
from jaxgames.core import Game, State
from jaxgames.learning.api import LearnerDef
from jaxgames.learning.schedules import Schedule
from jaxgames.policies import ParamPolicy
from jaxgames.types import Array, Carry, Params, PRNGKey


class Metrics(NamedTuple):
    """Totals over one lockstep step (and, summed, over a training chunk).

    Attributes:
        stats: the games' statistics (moves, finished games, wins, draws, rewards).
        random_moves: int32, moves chosen at random (exploration or openings).
        abs_delta_sum: float32, summed |TD error| of the updates made.
        updates: int32, update requests that changed the parameters.
    """

    stats: selfplay.Stats
    random_moves: Array
    abs_delta_sum: Array
    updates: Array


class Learned(NamedTuple):
    """What a learn phase reports: summed |TD error| and the number of updates made."""

    abs_delta_sum: Array
    updates: Array


def epsilon_greedy(
    keys: tuple[PRNGKey, PRNGKey, PRNGKey],
    scores: Array,
    legal: Array,
    epsilon: Array,
    forced: Array,
) -> tuple[Array, Array]:
    """One game's epsilon-greedy move (unbatched): (action int32, explored bool).

    Args:
        keys: (explore, random move, tie break) keys.
        scores: float32[A], what the greedy move maximises; ties broken at random.
        legal: bool[A].
        epsilon: the chance of a random legal move.
        forced: bool, a random move regardless of epsilon (random openings).
    """
    explore_key, random_key, tie_key = keys
    greedy = core.argmax_random(tie_key, scores, legal)
    explore = (jax.random.uniform(explore_key) < epsilon) | forced
    return jnp.where(explore, core.sample_legal(random_key, legal), greedy), explore


def make_step(
    game: Game,
    roles: tuple[str, ...],
    epsilon: Schedule,
    alpha: Schedule,
    choose: Callable[[Carry, Array, PRNGKey], Any],
    learn: Callable[[Carry, Any, State, Array, dict[str, PRNGKey]], tuple[Carry, Learned]],
    refresh: Callable[[Carry, Any, State, State], Carry] | None = None,
    reward_scale: float = 1.0,
) -> Callable[[Carry, Any], tuple[Carry, Metrics]]:
    """`step(carry, _) -> (carry, Metrics)`: one lockstep move of every game, with learning.

    Args:
        game: the game.
        roles: names of the parts the carry's key is split into each step, in order; must
            include "next" (the carry's next key), "choose" and "reset" (restarts), and
            "chance" for stochastic games; the learner may add its own (given to `learn`).
        epsilon, alpha: the resolved schedules, read at the carry's finished-game count.
        choose: `choose(carry, epsilon, key) -> decision` (batched over the B games).
        learn: `learn(carry, decision, next_states, alpha, keys) -> (carry, Learned)`;
            `next_states` are the states after chance, whose `terminated` says which games
            just ended.
        refresh: `refresh(carry, decision, next_states, restarted) -> carry`, for what the
            learner derives from the states (called before the carry takes `restarted`).
        reward_scale: the factor learning applies to rewards (statistics report raw ones).
    """
    missing = {"next", "choose", "reset"} - set(roles)
    if game.stochastic:
        missing |= {"chance"} - set(roles)
    if missing:
        raise ValueError(f"key roles {roles} lack {sorted(missing)}")

    def step(carry: Carry, _: Any) -> tuple[Carry, Metrics]:
        keys = dict(zip(roles, jax.random.split(carry.key, len(roles)), strict=True))
        decision = choose(carry, epsilon(carry.games), keys["choose"])
        after = decision.after
        b = after.terminated.shape[0]
        if game.stochastic:
            nxt = jax.vmap(game.chance)(after, jax.random.split(keys["chance"], b))
        else:
            nxt = after
        learned_carry, learned = learn(carry, decision, nxt, alpha(carry.games), keys)
        restarted = selfplay.restart_finished(game, nxt, keys["reset"])
        if refresh is not None:
            learned_carry = refresh(learned_carry, decision, nxt, restarted)
        rewards = after.rewards if reward_scale == 1.0 else after.rewards / reward_scale
        stats = selfplay.update_stats(
            selfplay.empty_stats(game.num_players),
            ~carry.states.terminated,
            rewards,
            nxt.terminated,
        )
        metrics = Metrics(
            stats,
            jnp.sum(decision.random, dtype=jnp.int32),
            learned.abs_delta_sum,
            jnp.asarray(learned.updates, jnp.int32),
        )
        new = learned_carry._replace(
            states=restarted,
            games=carry.games + stats.finished,
            moves=carry.moves + stats.moves,
            key=keys["next"],
        )
        return new, metrics

    return step


def interleave(
    step: Callable[[Carry, Any], tuple[Carry, Metrics]], groups: int, per_game: tuple[str, ...]
) -> Callable[[Carry, Any], tuple[Carry, Metrics]]:
    """`step(carry, _)` over B games from a `step` made for B / groups: the B game slots as
    `groups` lockstep batches (slots in order), each moving and learning in turn from the
    parameters the batch before it left, so that no game's move is chosen from parameters
    older than its own batch's last update (with a learner's update groups of the same size,
    the moves of all B games come from the parameters at the start of the step). It costs what
    `groups` steps of B / groups games cost and makes the same number of moves as one of B.

    Args:
        step: a lockstep step (`make_step`) for B / groups games.
        groups: how many batches the carry's B games form; must divide B.
        per_game: the carry's fields with the games on their leading axis
            (`LearnerDef.per_game`); the others (parameters, counters, key) pass from one
            batch to the next.
    """
    if groups < 1:
        raise ValueError(f"groups={groups}: expected >= 1")

    def run(carry: Carry, _: Any) -> tuple[Carry, Metrics]:
        b = jax.tree.leaves(getattr(carry, per_game[0]))[0].shape[0]
        if b % groups:
            raise ValueError(f"groups={groups} does not divide the carry's {b} games")
        split = lambda x: x.reshape(groups, b // groups, *x.shape[1:])
        parts = {name: jax.tree.map(split, getattr(carry, name)) for name in per_game}
        hollow = {name: None for name in per_game}

        def one(shared: Carry, part: dict) -> tuple[Carry, tuple[dict, Metrics]]:
            new, metrics = step(shared._replace(**part), None)
            return new._replace(**hollow), (
                {name: getattr(new, name) for name in per_game},
                metrics,
            )

        shared, (parts, metrics) = jax.lax.scan(one, carry._replace(**hollow), parts)
        join = lambda x: x.reshape(b, *x.shape[2:])
        merged = {name: jax.tree.map(join, value) for name, value in parts.items()}
        return shared._replace(**merged), jax.tree.map(lambda x: jnp.sum(x, axis=0), metrics)

    return run


def jit_chunk(step: Callable[[Carry, Any], tuple[Carry, Metrics]], num_steps: int):
    """`chunk(carry) -> (carry, Metrics)`: `num_steps` calls of `step` in one jitted scan, the
    per-step metrics summed, the carry donated."""

    def chunk(carry: Carry) -> tuple[Carry, Metrics]:
        carry, per_step = jax.lax.scan(step, carry, None, length=num_steps)
        return carry, jax.tree.map(lambda x: jnp.sum(x, axis=0), per_step)

    return jax.jit(chunk, donate_argnums=0)


def batched_policy(one: Callable[[Params, State, PRNGKey], Array]):
    """`fn(params, states, key) -> int32[B]` from an unbatched `one(params, state, key)`."""

    def fn(params: Params, states: State, key: PRNGKey) -> Array:
        keys = jax.random.split(key, states.terminated.shape[0])
        return jax.vmap(one, in_axes=(None, 0, 0))(params, states, keys)

    return fn


def greedy_action(
    definition: LearnerDef, game: Game, model, config, params: Params, state: State, key: PRNGKey
) -> Array:
    """The trained agent's move in one state (unbatched, jittable): the best of the learner's
    `action_scores` among legal moves, ties broken at random."""
    scores = definition.action_scores(game, model, config, params, state)
    return core.argmax_random(key, scores, state.legal_action_mask)


@functools.cache
def greedy_fn(definition: LearnerDef, game: Game, model, config):
    """The trained agent as a batched `fn(params, states, key) -> int32[B]` (cached, so that
    the arena compiles it once per agent kind). Wrap as `ParamPolicy(fn, params)`."""
    return batched_policy(functools.partial(greedy_action, definition, game, model, config))


def greedy_policy(definition: LearnerDef, game: Game, model, config, params: Params):
    """The greedy agent with these parameters, as a batched ParamPolicy."""
    return ParamPolicy(greedy_fn(definition, game, model, config), params)
