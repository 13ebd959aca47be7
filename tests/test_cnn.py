"""CNN approximator: starts at zero, and its update is one optax step on the mean squared error."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxgames.approximators import Hits, cnn


def tiny(optimizer: str = "sgd", output: str = "identity") -> cnn.CNN:
    return cnn.make_cnn(
        (3, 3, 2),
        num_players=2,
        num_outputs=4,
        channels=(4,),
        hidden=8,
        optimizer=optimizer,
        output=output,
    )


def boards(key, n):
    return jax.random.bernoulli(key, 0.3, (n, 3, 3, 2))


def test_values_start_at_zero_and_heads_are_per_player_and_action():
    net = tiny()
    params = cnn.init(net, jax.random.key(0))
    planes = boards(jax.random.key(1), 1)[0]
    assert float(cnn.value(net, params, 1, planes, 3)) == 0.0
    assert net.module.apply(params["net"], planes).shape == (2, 4)


def test_sgd_update_equals_a_gradient_step_on_the_squared_error():
    net = tiny("sgd")
    params = cnn.init(net, jax.random.key(0))
    params["net"] = jax.tree.map(  # non-zero heads, so the values differ
        lambda x: x + 0.1 * jax.random.normal(jax.random.key(2), x.shape), params["net"]
    )
    planes = boards(jax.random.key(1), 5)
    player = jnp.array([0, 1, 1, 0, 0])
    action = jnp.array([0, 3, 2, 2, 1])
    target = jnp.array([1.0, -1.0, 0.5, 0.0, 9.0])
    valid = jnp.array([True, True, True, True, False])
    v = jax.vmap(lambda p, f, a: cnn.value(net, params, p, f, a))(player, planes, action)
    hits = Hits(player, action, planes, target - v, valid)
    new = jax.jit(lambda p, h: cnn.update(net, p, h, 0.05))(params, hits)

    def mse(weights):
        pre = jax.vmap(lambda p, f, a: net.module.apply(weights, f)[p, a])(player, planes, action)
        return jnp.sum(jnp.where(valid, 0.5 * (target - pre) ** 2, 0.0)) / 4

    expected = optax.apply_updates(
        params["net"], jax.tree.map(lambda g: -0.05 * g, jax.grad(mse)(params["net"]))
    )
    jax.tree.map(
        lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7), new["net"], expected
    )


def test_adam_state_is_part_of_the_parameters():
    net = tiny("adam", "tanh")
    params = cnn.init(net, jax.random.key(0))
    planes = boards(jax.random.key(1), 2)
    hits = Hits(
        jnp.zeros(2, jnp.int32), jnp.zeros(2, jnp.int32), planes, jnp.ones(2), jnp.ones(2, bool)
    )
    new = cnn.update(net, params, hits, 0.01)
    assert int(new["opt"][0].count) == 1
    after = cnn.value(net, new, 0, planes[0], 0)
    assert float(after) > 0.0  # moved toward the positive signal


def test_patch_convolution_equals_a_same_padded_convolution():
    import flax.linen as nn

    x = jax.random.normal(jax.random.key(0), (2, 6, 7, 3))
    conv = nn.Conv(5, (3, 3), padding="SAME")
    w = conv.init(jax.random.key(1), x)
    expected = conv.apply(w, x)
    kernel = w["params"]["kernel"].reshape(9 * 3, 5)
    got = cnn.patches3x3(x) @ kernel + w["params"]["bias"]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
