"""loazero's LOA as a PettingZoo AEC environment with action masks."""

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
from pettingzoo.test import api_test

import loazero.pettingzoo


@pytest.mark.parametrize("variant", ["standard", "parachute", "alveole"])
def test_api_test(variant):
    api_test(loazero.pettingzoo.env(variant=variant, rules="classic,ply-limit=300"), num_cycles=1000)


def test_games_end_with_rewards():
    env = loazero.pettingzoo.env(variant="6x6", rules="classic,ply-limit=200")
    rng = np.random.default_rng(3)
    totals = {"black": 0, "white": 0}
    for _ in range(5):
        env.reset(seed=1)
        for agent in env.agent_iter():
            obs, reward, termination, truncation, info = env.last()
            totals[agent] += reward
            if termination or truncation:
                action = None
            else:
                assert obs["action_mask"].sum() > 0
                action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)
    assert totals["black"] + totals["white"] == 0
