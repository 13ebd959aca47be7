"""Player-centred TD / SARSA / Q-learning with Final Adaptation (FARL), in lockstep self-play.

After Konen & Bagheri, "Final Adaptation Reinforcement Learning for N-Player Games" (GBG):
Algorithm 2 (TD-FARL-Episode) and Algorithm 5 (Sarsa-FARL-Episode). Every player p learns its
own value function along its own chain of decisions, one round apart; no sign flipping, any N.

TD (values of afterstates). When p moves from state s_t to afterstate s'_t, p's previous
afterstate s_last[p] moves toward  r_p + gamma * V_p(s'_t)  (V = 0 once the game is over,
also when the environment's answer to the move ended it, as 2048's new tile can), where r_p is
what p earned since its last move.
SARSA / Q (values of state-action pairs). When p acts with a_t in s_t, p's previous pair
(s_last[p], a_last[p]) moves toward  r_p + gamma * Q_p(s_t, a_t)  (SARSA) or
r_p + gamma * max_a Q_p(s_t, a)  (Q); when p's move ends the game, (s_t, a_t) moves toward the
reward of that move.
Final adaptation, when a game ends: (1) every other player q's last afterstate / pair moves
toward q's final reward (`farl_others`; without it the loser never learns that it lost);
(2) TD only: the terminal afterstate moves toward 0 (`farl_terminal`).
Eligibility with a horizon (GBG, after Jaskowski): each TD error also moves the player's h - 1
earlier updated boards by delta * lambda^k * sigma'(v_k), sigma' taken when they were updated.
Random moves: a move chosen at random (exploration or opening) still updates the mover's
previous board unless `learn_from_random_moves` is off; then, with `reset_on_random` (GBG's
eligibility mode RESET), the random move also clears every player's eligibility history in
that game, so that later errors do not flow back past it (GBG's `TDNTuple3Agt.adaptAgentV`
clears the lists only on this path: a random move that is learned from leaves them alone).
Histories belong to one game: they start empty with it.
FARL part 2 adapts the terminal afterstate alone (GBG also passes it through the eligibility
list; with lambda = 0 the two agree).

B games advance together: every lockstep step each game makes one move and contributes its
update rows; all rows are applied at once from the same weights (the approximator decides how
several hits on one weight combine; n-tuples combine them like sequential updates, see
`jaxgames.approximators.ntuple`), or, with `sub_batch` S, in B / S updates of S games one
after another, each from the weights the one before left and each with its own games' rows,
final adaptations included.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, NamedTuple

import jax
import jax.numpy as jnp

from jaxgames import core, selfplay
from jaxgames.approximators.base import Hits, ValueModel
from jaxgames.core import Game, State
from jaxgames.learning import lockstep, targets
from jaxgames.learning.api import AlgorithmConfig, LearnerDef
from jaxgames.types import Array, PRNGKey

KINDS = ("td", "sarsa", "q")


@dataclasses.dataclass(frozen=True)
class FarlConfig(AlgorithmConfig):
    """TD-, SARSA- or Q-FARL (`algorithm: {kind: td | sarsa | q, ...}`), GBG's learners.

    kind: "td" (afterstate values), "sarsa" or "q" (state-action values).
    lam, horizon_cut: eligibility lambda and the cut that sets the horizon (`horizon`).
    farl_others: FARL part 1, final rewards for the players who did not end the game.
    farl_terminal: FARL part 2 (TD only), terminal afterstates toward 0.
    learn_from_random_moves: update on moves chosen at random.
    reset_on_random: a random move that is not learned from clears every player's
        eligibility history (GBG's RESET; needs `learn_from_random_moves` off).
    win_first: always play an immediately winning move if there is one.
    reward_scale: rewards are multiplied by this for learning (values live in scaled units;
        reported scores stay raw): 2048's tile sums into the range of the values.
    sub_batch: games per update (0: all B games of a lockstep step in one update). With
        0 < sub_batch < B one step's updates are applied as B / sub_batch groups of game
        slots one after another, each group's update taking its movers' rows and the final
        rows of its games that ended, its errors computed from the weights the groups before
        it left (the moves themselves are still chosen from the weights at the start of the
        step); it must divide B. Large batches then update as batches of sub_batch do.
    final_games: how many ended games' final adaptation one update takes (0: B / 8, or
        sub_batch / 8 with update groups, each group taking its own ended games). When
        more games end in one step, further updates follow in a loop whose length depends on
        the data (on a GPU each pass's test goes to the host); final_games >= B (sub_batch
        with groups) takes every game in the one update, a fixed amount of work with no loop,
        at the price of a larger update.
    fresh_targets: with update groups (`sub_batch`), each group's targets (the value of the
        chosen afterstate for TD, Q(s, a) or the max over legal a for SARSA and Q) are read
        from the weights the groups before it left, as its previous boards' values are; the
        moves are still chosen from the weights at the start of the step. Without it the
        targets are those of the choice, up to B / sub_batch updates older than the values
        they are compared with.
    (gamma, random_opening_moves, alpha, epsilon: see `AlgorithmConfig`.)
    """

    kind: Literal["td", "sarsa", "q"] = "td"
    lam: float = 0.0
    horizon_cut: float = 0.1
    farl_others: bool = True
    farl_terminal: bool = True
    learn_from_random_moves: bool = True
    reset_on_random: bool = False
    win_first: bool = False
    reward_scale: float = 1.0
    sub_batch: int = 0
    final_games: int = 0
    fresh_targets: bool = False

    def __post_init__(self):
        super().__post_init__()
        if self.final_games < 0:
            raise ValueError(
                f"final_games={self.final_games}: expected >= 0 (0: B / 8 with further passes)"
            )
        if self.sub_batch < 0:
            raise ValueError(f"sub_batch={self.sub_batch}: expected >= 0 (0: the whole batch)")
        if self.fresh_targets and self.sub_batch == 0:
            raise ValueError(
                "fresh_targets=true needs update groups: set sub_batch to a divisor of the "
                "batch below it (with one update per step the targets are fresh already)"
            )
        if not 0.0 <= self.lam < 1.0:
            raise ValueError(f"lam={self.lam}: expected in [0, 1)")
        if not 0.0 < self.horizon_cut < 1.0:
            raise ValueError(f"horizon_cut={self.horizon_cut}: expected in (0, 1)")
        if not self.reward_scale > 0:
            raise ValueError(f"reward_scale={self.reward_scale}: expected > 0")
        if self.reset_on_random and self.learn_from_random_moves:
            raise ValueError(
                "reset_on_random=true has no effect while learn_from_random_moves is true (as "
                "in GBG, only a random move that is not learned from clears the eligibility "
                "histories): set learn_from_random_moves: false, or drop reset_on_random"
            )

    @property
    def horizon(self) -> int:
        """h, the boards per player that share each TD error (>= 1)."""
        return targets.horizon(self.lam, self.horizon_cut)

    def describe(self) -> str:
        return (
            f"{super().describe()}, lambda {self.lam} (horizon {self.horizon}), "
            f"FARL part 1 {self.farl_others}, part 2 {self.farl_terminal}"
        )


class Memory(NamedTuple):
    """Player-centred history of every game slot; leading axes [B, N].

    Attributes:
        last: features of each player's last afterstate (TD) or last state (SARSA/Q).
        last_action: int32[B, N], the action taken there (SARSA/Q).
        last_valid: bool[B, N].
        elig: features of the h - 1 boards updated before, [B, N, h - 1, ...], newest first.
        elig_action: int32[B, N, h - 1].
        elig_deriv: float32[B, N, h - 1], sigma'(v) when each was updated.
        elig_valid: bool[B, N, h - 1].
        pending: float32[B, N], rewards earned since each player's last move.
    """

    last: Array
    last_action: Array
    last_valid: Array
    elig: Array
    elig_action: Array
    elig_deriv: Array
    elig_valid: Array
    pending: Array


class Carry(NamedTuple):
    """Everything a training chunk threads through its scan (and a checkpoint saves).

    Invariant: `features[i] == model.features(states[i])` for every game slot i (kept by the
    step's refresh phase, which is cheaper than recomputing it: the chosen afterstate's
    features are known, and a restarted slot takes the start position's).
    """

    states: State
    features: Array
    memory: Memory
    params: Any
    scratch: Any
    games: Array
    moves: Array
    key: jax.Array


def _empty_memory(game: Game, features: Array, config: FarlConfig, batch_size: int) -> Memory:
    b, n, h = batch_size, game.num_players, config.horizon - 1
    feat = features.shape[1:]
    return Memory(
        last=jnp.zeros((b, n, *feat), features.dtype),
        last_action=jnp.zeros((b, n), jnp.int32),
        last_valid=jnp.zeros((b, n), bool),
        elig=jnp.zeros((b, n, h, *feat), features.dtype),
        elig_action=jnp.zeros((b, n, h), jnp.int32),
        elig_deriv=jnp.zeros((b, n, h), jnp.float32),
        elig_valid=jnp.zeros((b, n, h), bool),
        pending=jnp.zeros((b, n), jnp.float32),
    )


def init_carry(
    game: Game, model: ValueModel, config: FarlConfig, batch_size: int, key: PRNGKey
) -> Carry:
    """Fresh parameters, B fresh games and empty histories."""
    params_key, games_key, key = jax.random.split(key, 3)
    params = model.init(params_key)
    states = selfplay.init_batch(game, batch_size, games_key)
    features = jax.vmap(model.features)(states)
    return Carry(
        states=states,
        features=features,
        memory=_empty_memory(game, features, config, batch_size),
        params=params,
        scratch=model.init_scratch(params),
        games=jnp.int32(0),
        moves=jnp.int32(0),
        key=key,
    )


def heads(game: Game, config: FarlConfig) -> tuple[int, int]:
    """One parameter set per player; a value head (TD) or one Q output per action."""
    return game.num_players, 1 if config.kind == "td" else game.num_actions


def _pick(tree: Any, index: Array) -> Any:
    """tree[index] along the leading axis of every leaf (unbatched)."""
    return jax.tree.map(lambda x: x[index], tree)


def all_action_scores(
    game: Game, model: ValueModel, config: FarlConfig, params: Any, state: State, features: Array
) -> tuple[Array, Array, State, Array]:
    """What the greedy policy maximises, for every action of one state (unbatched).

    Returns:
        (scores float32[A], values float32[A], afterstates State[A], afterstate features
        [A, ...] or None): for TD, values = V_p(afterstate) and scores = r_p + gamma * values
        (values count 0 once the game is over); for SARSA/Q, scores = values = Q_p(s, a), and
        the afterstate features are None (only the chosen move's are needed, see `_decide`).
    """
    player = state.current_player
    actions = jnp.arange(game.num_actions)
    after = jax.vmap(_afterstate, in_axes=(None, None, None, 0))(game, config, state, actions)
    if config.kind == "td":
        after_features = model.afterstate_features(state, features)
        values = jax.vmap(lambda f: model.value(params, player, f, 0))(after_features)
        scores = _td_score(config, after, player, values)
    else:
        after_features = None
        values = jax.vmap(lambda a: model.value(params, player, features, a))(actions)
        scores = values
    return scores, values, after, after_features


def action_scores(
    game: Game, model: ValueModel, config: FarlConfig, params: Any, state: State
) -> Array:
    """float32[A]: what the greedy mover maximises in one state (unbatched): r + gamma *
    V(afterstate) for TD, Q(s, a) for SARSA/Q."""
    return all_action_scores(game, model, config, params, state, model.features(state))[0]


def _afterstate(game: Game, config: FarlConfig, state: State, action: Array) -> State:
    """The afterstate of one move, its rewards as learning sees them (scaled: 2048's tile
    sums)."""
    after = game.afterstate(state, action)
    if config.reward_scale == 1.0:
        return after
    return after.replace(rewards=after.rewards * config.reward_scale)


def _td_score(config: FarlConfig, after: State, player: Array, value: Array) -> Array:
    """r_p + gamma * V_p(afterstate), V counting 0 once the game is over (any leading axes)."""
    discount = config.gamma * (1.0 - after.terminated.astype(jnp.float32))
    return after.rewards[..., player] + discount * value


def winning_moves(rewards: Array, terminated: Array, player: Array) -> Array:
    """bool[A]: moves that end the game with `player` alone on the top reward, from every
    move's rewards [A, N] and end flags [A]."""
    mine = rewards[:, player]
    others = jnp.arange(rewards.shape[-1]) != player
    others_best = jnp.max(jnp.where(others, rewards, -jnp.inf), axis=-1)
    return terminated & (mine > others_best)


COMPACT_SLOTS = 16


class Scored(NamedTuple):
    """Every action of a batch of states, valued for the mover: [B, A] (rewards [B, A, N]).
    Only legal actions are filled in; the rest hold zeros."""

    scores: Array
    values: Array
    rewards: Array
    terminated: Array


def compact_slots(game: Game, model: ValueModel, config: FarlConfig) -> int:
    """Afterstates valued per game and pass by `legal_action_scores` (0: value every action
    with `all_action_scores`). TD with a feature map that has to see each afterstate whole
    (Othello's legal-move cells, CNN planes) values the legal moves alone, in passes over
    B x 16 (game, move) pairs; incremental n-tuples and small action sets gain nothing."""
    if config.kind != "td" or model.incremental or game.num_actions <= 2 * COMPACT_SLOTS:
        return 0
    return COMPACT_SLOTS


def legal_action_scores(
    game: Game,
    model: ValueModel,
    config: FarlConfig,
    params: Any,
    states: State,
    slots: int,
) -> Scored:
    """TD's `all_action_scores` of a batch of B states, for the legal actions only (batched).

    The legal (game, action) pairs of the whole batch are valued in passes of B * slots
    pairs, as many passes as the batch needs (one when the games average at most `slots`
    legal moves); each pass builds its afterstates, their features and values.
    """
    b, a = states.legal_action_mask.shape
    n = game.num_players
    legal = states.legal_action_mask.reshape(-1)
    rank = jnp.cumsum(legal, dtype=jnp.int32) - 1  # position of a legal pair in the batch list
    total = jnp.sum(legal, dtype=jnp.int32)
    size = b * slots

    def value_pair(state: State, action: Array):
        player = state.current_player
        after = _afterstate(game, config, state, action)
        v = model.value(params, player, model.features(after), 0)
        return _td_score(config, after, player, v), v, after.rewards, after.terminated

    def one_pass(loop):
        start, out = loop
        pairs = jnp.nonzero(legal & (rank >= start) & (rank < start + size), size=size)[0]
        real = jnp.arange(size) < total - start
        picked = jax.tree.map(lambda x: x[pairs // a], states)
        valued = jax.vmap(value_pair)(picked, pairs % a)
        where = jnp.where(real, pairs, b * a)  # out of range: dropped
        out = jax.tree.map(lambda o, v: o.at[where].set(v, mode="drop"), out, valued)
        return start + size, out

    empty = (
        jnp.zeros(b * a, jnp.float32),
        jnp.zeros(b * a, jnp.float32),
        jnp.zeros((b * a, n), jnp.float32),
        jnp.zeros(b * a, bool),
    )
    _, out = jax.lax.while_loop(lambda loop: loop[0] < total, one_pass, (jnp.int32(0), empty))
    return Scored(*(x.reshape(b, a, *x.shape[1:]) for x in out))


class Decision(NamedTuple):
    """One game's move and what learning needs of it (batched: leading axis B)."""

    action: Array
    random: Array
    after: State
    after_features: Array
    value: Array  # V_p(chosen afterstate) for TD, Q_p(s, a) for SARSA/Q
    values: Array  # float32[A]: every action's V_p(afterstate) (TD) or Q_p(s, a) (SARSA/Q)


def _decide(
    game, model, config, params, state, features, epsilon, key, scored: Scored | None = None
) -> Decision:
    """Epsilon-greedy choice for one game (unbatched); `scored`: this game's row of
    `legal_action_scores`, when the batch was valued that way."""
    explore_key, random_key, tie_key, win_key = jax.random.split(key, 4)
    player = state.current_player
    legal = state.legal_action_mask
    if scored is None:
        scores, values, after, after_features = all_action_scores(
            game, model, config, params, state, features
        )
        rewards, terminated = after.rewards, after.terminated
    else:
        scores, values, rewards, terminated = scored
        after = after_features = None
    action, explore = lockstep.epsilon_greedy(
        (explore_key, random_key, tie_key),
        scores,
        legal,
        epsilon,
        state.step_count < config.random_opening_moves,
    )
    if config.win_first:
        wins = winning_moves(rewards, terminated, player) & legal
        action = jnp.where(wins.any(), core.sample_legal(win_key, wins), action)
        explore = explore & ~wins.any()
    # on the compact path only the chosen move's afterstate is built again
    chosen = _afterstate(game, config, state, action) if after is None else _pick(after, action)
    if after_features is not None:
        chosen_features = after_features[action]
    elif model.incremental:
        chosen_features = model.afterstate_features(state, features)[action]
    else:
        chosen_features = model.features(chosen)
    return Decision(action, explore, chosen, chosen_features, values[action], values)


def _board_rows(player, delta, deriv, valid, memory_row, lam_k) -> Hits:
    """Hits for a player's last board (error `delta`, slope `deriv`) and its eligibility
    history (newest first), which moves with the same delta as one update: board k of the
    history by delta * lambda^k * sigma'_k, its own slope when it was updated (GBG's
    `NTuple2ValueFunc.update`: e = lambda^k * sigDeriv_k), not also the last board's."""
    last, last_action, elig, elig_action, elig_deriv, elig_valid = memory_row
    return Hits(
        player=jnp.full(1 + elig.shape[0], player, jnp.int32),
        action=jnp.concatenate([last_action[None], elig_action]),
        features=jnp.concatenate([last[None], elig]),
        signal=jnp.concatenate([(delta * deriv)[None], delta * lam_k * elig_deriv]),
        valid=jnp.concatenate([valid[None], valid & elig_valid]),
        gain=jnp.concatenate([(deriv * deriv)[None], lam_k * elig_deriv * elig_deriv]),
        lead=-jnp.arange(1 + elig.shape[0], dtype=jnp.int32),
    )


def _rows_of(memory: Memory, player) -> tuple:
    """The (last board, its action, history, actions, slopes, flags) of `player` (or of every
    player, with `player` None) in one game's memory."""
    fields = (
        memory.last,
        memory.last_action,
        memory.elig,
        memory.elig_action,
        memory.elig_deriv,
        memory.elig_valid,
    )
    return fields if player is None else tuple(f[player] for f in fields)


def _lambda_powers(config: FarlConfig) -> Array:
    """float32[h - 1]: lambda^1 .. lambda^(h-1)."""
    return config.lam ** jnp.arange(1, config.horizon, dtype=jnp.float32)


def _mover_rows(model, config, params, memory: Memory, state, features, d: Decision, game_over):
    """The mover's TD/SARSA/Q update rows and the memory after its move (unbatched).

    `game_over`: whether the game is over once the environment has answered the move (2048's
    new tile can end it; for deterministic games it is the afterstate's own flag). As in GBG's
    TDNTuple3Agt, a move after which the game is over bootstraps on V = 0, not on the value of
    its afterstate: in 2048 the afterstate of the last move is not terminal itself.
    """
    n = memory.pending.shape[0]
    mover = state.current_player
    is_mover = jnp.arange(n) == mover
    reward, done = d.after.rewards, game_over
    v_last = model.value(params, mover, memory.last[mover], memory.last_action[mover])
    if config.kind == "td":  # toward r + gamma V(the afterstate just chosen)
        pending = memory.pending + reward
        discount = config.gamma * (1.0 - done.astype(jnp.float32))
        target = targets.td_target(pending[mover], discount, d.value)
    else:  # SARSA/Q: this move's reward belongs to the new pair (s_t, a_t)
        pending = memory.pending + jnp.where(is_mover, 0.0, reward)
        r_t = memory.pending[mover]
        if config.kind == "sarsa":  # toward r + gamma Q(s_t, a_t), the move actually made
            target = targets.td_target(r_t, config.gamma, d.value)
        else:  # Q-learning: toward r + gamma max over legal a of Q(s_t, a)
            target = targets.q_learning_target(r_t, config.gamma, d.values, state.legal_action_mask)
    valid = memory.last_valid[mover] & (~d.random | config.learn_from_random_moves)
    delta = target - v_last
    deriv = model.derivative(v_last)
    hits = _board_rows(mover, delta, deriv, valid, _rows_of(memory, mover), _lambda_powers(config))
    memory = _remember(config, memory, mover, valid, deriv, d, features, pending, reward)
    return hits, memory, jnp.where(valid, jnp.abs(delta), 0.0), valid


def _remember(config, memory: Memory, mover, valid, deriv, d: Decision, features, pending, reward):
    """The memory after the mover's move: its updated board enters its eligibility history
    (newest first, when it was updated), its new board becomes `last`."""

    def put(array, value):
        return array.at[mover].set(value)

    elig, elig_action = memory.elig, memory.elig_action
    elig_deriv, elig_valid = memory.elig_deriv, memory.elig_valid
    if config.horizon > 1:
        shifted = lambda new, old: jnp.concatenate([new[None], old[:-1]])
        pick = lambda new, old: jnp.where(valid, new, old)
        elig = put(elig, pick(shifted(memory.last[mover], elig[mover]), elig[mover]))
        elig_action = put(
            elig_action,
            pick(shifted(memory.last_action[mover], elig_action[mover]), elig_action[mover]),
        )
        elig_deriv = put(elig_deriv, pick(shifted(deriv, elig_deriv[mover]), elig_deriv[mover]))
        new_valid = pick(shifted(memory.last_valid[mover], elig_valid[mover]), elig_valid[mover])
        elig_valid = put(elig_valid, new_valid)
        if config.reset_on_random and not config.learn_from_random_moves:
            # GBG's RESET: a random move that is not learned from clears every player's list
            elig_valid = elig_valid & ~d.random
    return Memory(
        last=put(memory.last, d.after_features if config.kind == "td" else features),
        last_action=put(memory.last_action, d.action),
        last_valid=put(memory.last_valid, True),
        elig=elig,
        elig_action=elig_action,
        elig_deriv=elig_deriv,
        elig_valid=elig_valid,
        pending=put(pending, 0.0 if config.kind == "td" else reward[mover]),
    )


def _final_rows(model, config, params, memory: Memory, state, features, d: Decision) -> Hits:
    """Final adaptation rows of a game that just ended (unbatched; memory before the move).

    Part 1 moves every other player's last board (and history) toward its final reward; then
    TD moves the terminal afterstate toward 0 (part 2), SARSA/Q the ending pair toward the
    reward of the ending move.
    """
    n = memory.pending.shape[0]
    players = jnp.arange(n)
    mover = state.current_player
    reward = d.after.rewards
    lam_k = _lambda_powers(config)
    v_last = jax.vmap(lambda q, f, a: model.value(params, q, f, a))(
        players, memory.last, memory.last_action
    )
    delta = memory.pending + reward - v_last
    valid = memory.last_valid & (players != mover) & config.farl_others
    others = jax.vmap(lambda q, e, s, v, *row: _board_rows(q, e, s, v, row, lam_k))(
        players, delta, model.derivative(v_last), valid, *_rows_of(memory, None)
    )
    others = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), others)
    if config.kind == "td":
        extra = Hits(
            mover[None],
            jnp.zeros(1, jnp.int32),
            d.after_features[None],
            (-d.value * model.derivative(d.value))[None],
            jnp.asarray(config.farl_terminal)[None],
            (model.derivative(d.value) ** 2)[None],
            jnp.zeros(1, jnp.int32),
        )
    else:
        extra = Hits(
            mover[None],
            d.action[None],
            features[None],
            ((reward[mover] - d.value) * model.derivative(d.value))[None],
            jnp.ones(1, bool),
            (model.derivative(d.value) ** 2)[None],
            jnp.zeros(1, jnp.int32),
        )
    return jax.tree.map(lambda a, b: jnp.concatenate([a, b]), others, extra)


def final_chunk(batch_size: int, config: FarlConfig) -> int:
    """How many ended games one update takes at once (more are handled in further chunks):
    `config.final_games` when set (at most B), else B / 8."""
    if config.final_games:
        return min(config.final_games, batch_size)
    return max(1, batch_size // 8)


def update_groups(config: FarlConfig, batch_size: int) -> int:
    """How many updates one lockstep step's movers are split into (`FarlConfig.sub_batch`)."""
    sub = config.sub_batch
    if sub == 0 or sub >= batch_size:
        return 1
    if batch_size % sub:
        raise ValueError(
            f"sub_batch={sub} does not divide batch_size={batch_size}: expected a divisor "
            f"of the batch (or 0 for one update per step)"
        )
    return batch_size // sub


def _update_games(model, config, params, scratch, memory, states, features, d, done, alpha, chunk):
    """One update from the movers' rows of a batch of games (or of a group of it) and the
    final rows of the first `chunk` of its games that ended (the random part of a move can end
    the game: then the mover's previous afterstate bootstraps on 0 and the chosen afterstate
    is the terminal one), all from `params`; if more of its games ended (rare), further
    updates of `chunk` games' final rows follow, each from the weights the one before left.

    Returns:
        (params, scratch, memory after the moves, abs_delta float32[b], updated bool[b]).
    """
    b = done.shape[0]
    mover_hits, new_memory, abs_delta, updated = _movers_rows(
        model, config, params, memory, states, features, d, done
    )
    num_done = jnp.sum(done, dtype=jnp.int32)
    ended = jnp.nonzero(done, size=b + chunk, fill_value=0)[0]

    def final_hits(params_, start):
        """Final-adaptation rows of the ended games start .. start + chunk - 1."""
        games = jax.lax.dynamic_slice(ended, (start,), (chunk,))
        take = lambda x: x[games]
        final = _games_final_rows(
            model,
            config,
            params_,
            jax.tree.map(take, memory),
            jax.tree.map(take, states),
            take(features),
            jax.tree.map(take, d),
        )
        real = (start + jnp.arange(chunk) < num_done)[:, None]
        return _flat(final._replace(valid=final.valid & real))

    first = final_hits(params, 0)
    hits = jax.tree.map(lambda a, c: jnp.concatenate([a, c]), _flat(mover_hits), first)
    params, scratch = model.update(params, scratch, hits, alpha)

    def more(loop):
        params_, scratch_, start = loop
        params_, scratch_ = model.update(params_, scratch_, final_hits(params_, start), alpha)
        return params_, scratch_, start + chunk

    if chunk < b:  # a loop whose length depends on the data: only when games can overflow
        params, scratch, _ = jax.lax.while_loop(
            lambda loop: loop[2] < num_done, more, (params, scratch, jnp.int32(chunk))
        )
    return params, scratch, new_memory, abs_delta, updated


def _grouped_updates(model, config, carry: Carry, d: Decision, done, alpha, groups: int, chunk):
    """One step's updates as `groups` batches of B / groups games (game slots in order), one
    after another, each `_update_games` from the weights the group before left: its movers'
    rows and the final rows of its ended games (`chunk` at a time).

    Returns:
        (params, scratch, memory, abs_delta float32[B], updated bool[B]).
    """
    split = lambda x: x.reshape(groups, x.shape[0] // groups, *x.shape[1:])
    per_game = (carry.memory, carry.states, carry.features, d, done)

    def one_group(loop, group):
        params, scratch = loop
        if config.fresh_targets:
            memory, states, features, d_group, done_group = group
            d_group = _fresh_targets(model, config, params, states, features, d_group)
            group = (memory, states, features, d_group, done_group)
        params, scratch, *out = _update_games(model, config, params, scratch, *group, alpha, chunk)
        return (params, scratch), tuple(out)

    (params, scratch), out = jax.lax.scan(
        one_group, (carry.params, carry.scratch), jax.tree.map(split, per_game)
    )
    join = lambda x: x.reshape(x.shape[0] * x.shape[1], *x.shape[2:])
    memory, abs_delta, updated = jax.tree.map(join, out)
    return params, scratch, memory, abs_delta, updated


def _fresh_targets(model, config, params, states, features, d: Decision) -> Decision:
    """A group's decisions with their targets read from `params` (`FarlConfig.fresh_targets`):
    for TD the value of each chosen afterstate, for SARSA the chosen Q(s, a), for Q every
    action's Q(s, a) (its legal max is the target); only what the target reads is valued."""
    players = states.current_player
    if config.kind == "q":
        actions = jnp.arange(d.values.shape[-1])
        q = lambda p, f: jax.vmap(lambda a: model.value(params, p, f, a))(actions)
        values = jax.vmap(q)(players, features)
        value = jnp.take_along_axis(values, d.action[:, None], 1)[:, 0]
        return d._replace(value=value, values=values)
    if config.kind == "td":
        boards, actions = d.after_features, jnp.zeros_like(d.action)
    else:
        boards, actions = features, d.action
    value = jax.vmap(lambda p, f, a: model.value(params, p, f, a))(players, boards, actions)
    return d._replace(value=value)


# `_mover_rows` and `_final_rows` of every game of a batch (or of a group of it)
_movers_rows = jax.vmap(_mover_rows, in_axes=(None, None, None, 0, 0, 0, 0, 0))
_games_final_rows = jax.vmap(_final_rows, in_axes=(None, None, None, 0, 0, 0, 0))


def _flat(hits: Hits) -> Hits:
    """[B, rows, ...] update requests as [B * rows, ...]."""
    return jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), hits)


def make_step(game: Game, model: ValueModel, config: FarlConfig, batch_size: int):
    """`step(carry, _) -> (carry, Metrics)`: one lockstep move of all B games plus learning,
    from the phases choose, learn and refresh (`jaxgames.learning.lockstep`)."""
    init_state = game.init(jax.random.key(0)) if not game.stochastic else None
    groups = update_groups(config, batch_size)
    chunk = final_chunk(batch_size // groups, config)
    slots = compact_slots(game, model, config)
    b = batch_size

    def choose(carry: Carry, epsilon: Array, key: PRNGKey) -> Decision:
        """Every game's epsilon-greedy move, from the values of its afterstates (TD) or of
        its state's actions (SARSA/Q)."""
        states, params = carry.states, carry.params
        scored = legal_action_scores(game, model, config, params, states, slots) if slots else None
        decide = jax.vmap(_decide, in_axes=(None, None, None, None, 0, 0, None, 0, 0))
        keys = jax.random.split(key, b)
        return decide(game, model, config, params, states, carry.features, epsilon, keys, scored)

    def learn(carry: Carry, d: Decision, nxt: State, alpha: Array, keys) -> tuple[Carry, Any]:
        """The step's update (`_update_games`), or with `sub_batch` its groups' updates one
        after another (`_grouped_updates`); then the ended games' histories are cleared."""
        del keys
        done = nxt.terminated
        if groups > 1:
            params, scratch, memory, abs_delta, updated = _grouped_updates(
                model, config, carry, d, done, alpha, groups, chunk
            )
        else:
            params, scratch, memory, abs_delta, updated = _update_games(
                model,
                config,
                carry.params,
                carry.scratch,
                carry.memory,
                carry.states,
                carry.features,
                d,
                done,
                alpha,
                chunk,
            )
        memory = jax.tree.map(
            lambda m, z: jnp.where(done.reshape((b,) + (1,) * (m.ndim - 1)), z, m),
            memory,
            jax.tree.map(jnp.zeros_like, memory),
        )
        carry = carry._replace(params=params, scratch=scratch, memory=memory)
        learned = lockstep.Learned(jnp.sum(abs_delta), jnp.sum(updated, dtype=jnp.int32))
        return carry, learned

    def refresh(carry: Carry, d: Decision, nxt: State, restarted: State) -> Carry:
        """The features of the next states: the chosen afterstates' (or, after chance, the
        new states'), the start position's in restarted slots."""
        next_features = jax.vmap(model.features)(nxt) if game.stochastic else d.after_features
        if game.stochastic:
            fresh_features = jax.vmap(model.features)(restarted)
        else:
            fresh_features = jnp.broadcast_to(model.features(init_state), next_features.shape)
        mask = nxt.terminated.reshape((b,) + (1,) * (next_features.ndim - 1))
        return carry._replace(features=jnp.where(mask, fresh_features, next_features))

    return lockstep.make_step(
        game,
        ("next", "choose", "chance", "reset"),
        config.epsilon,
        config.alpha,
        choose,
        learn,
        refresh,
        config.reward_scale,
    )


LEARNER = LearnerDef(
    config_type=FarlConfig,
    heads=heads,
    init_carry=init_carry,
    make_step=make_step,
    action_scores=action_scores,
    per_game=("states", "features", "memory"),
)
