"""loazero's Lines of Action as a PettingZoo AEC environment with action masks.

``loazero.pettingzoo.env(variant="standard", rules="classic", plane_set="board")`` (wrapped
as PettingZoo's classic games are) or ``raw_env(...)``. Agents ``black`` and ``white`` (in
ambiloa the teams); the agent to move is ``agent_selection`` (in parachute a side moves
twice in a row: its move, then its drop). Observation: ``{"observation": planes,
"action_mask": mask}``, the network's ``uint8`` input planes (the trainer's encoder, from
the side to move's view) and an ``int8`` mask over ``Game.num_actions`` actions that is
all zeros for an agent not to move. Rewards at the end: +1 win, −1 loss, 0 draw. A game
under rules without a ply limit ends by loazero's rules alone (three-fold repetition, a
connection); set ``rules="classic,ply-limit=300"`` to bound its length.
"""

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from ._loazero import Game

__all__ = ["env", "raw_env"]


def env(**kwargs):
    """The environment with PettingZoo's checks of classic games (an action out of the
    space is an error, steps in order)."""
    e = raw_env(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class raw_env(AECEnv):
    """The unwrapped environment (see the module docs)."""

    metadata = {
        "render_modes": ["human", "ansi"],
        "name": "loazero_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, variant="standard", rules="classic", plane_set="board", render_mode=None):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r}: expected one of {self.metadata['render_modes']}")
        self.game = Game(variant, rules)
        self.plane_set = plane_set
        self.render_mode = render_mode
        shape = self.game.planes_shape(plane_set)
        n = self.game.num_actions
        self.possible_agents = ["black", "white"]
        self.agents = self.possible_agents[:]
        self.action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(low=0, high=255, shape=shape, dtype=np.uint8),
                    "action_mask": spaces.Box(low=0, high=1, shape=(n,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.state = None

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def observe(self, agent):
        planes = self.state.planes(self.plane_set)
        if agent == self.agent_selection and not self.state.is_terminal():
            mask = self.state.action_mask().astype(np.int8)
        else:
            mask = np.zeros(self.game.num_actions, np.int8)
        return {"observation": planes, "action_mask": mask}

    def _select(self):
        self.agent_selection = self.possible_agents[self.state.current_player()]

    def reset(self, seed=None, options=None):
        self.state = self.game.new_initial_state()
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._select()

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        self._cumulative_rewards[agent] = 0
        self.state.apply_action(int(action))
        self.rewards = dict.fromkeys(self.agents, 0)
        if self.state.is_terminal():
            for a, r in zip(self.possible_agents, self.state.returns()):
                self.rewards[a] = r
            self.terminations = dict.fromkeys(self.agents, True)
            # Every agent gets its last observation and reward: the other one moves next.
            self.agent_selection = self.possible_agents[1 - self.possible_agents.index(agent)]
        else:
            self._select()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self):
        if self.render_mode is None:
            return None
        text = self.state.diagram()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass
