"""loazero's Lines of Action as an OpenSpiel game.

``loazero.openspiel.register()`` registers the game ``loazero`` with pyspiel; then
``pyspiel.load_game("loazero", {"variant": "6x6", "rules": "icga"})`` or
``pyspiel.load_game("loazero(variant=6x6,rules=icga)")`` makes it, and OpenSpiel's
algorithms (MCTS, its random simulation test, serialization) accept it.

Parameters:

* ``variant``: a loazero variant (``loazero.variants()``), default ``standard``.
* ``rules``: loazero's rules spec (``classic``, ``icga``, ``classic,no-move=loss``). In an
  OpenSpiel game string, which splits parameters at ``,`` and ``=``, write ``;`` and ``:``
  instead: ``loazero(variant=6x6,rules=icga;no-move:loss)``. The game keeps its rules in
  that form among its parameters, so that every game serializes.
* ``ply_limit``: OpenSpiel needs a longest game: a game whose rules set no ply limit
  ends drawn at this ply (default 1000); one whose rules set one keeps it.

Actions are loazero's action indices (the network's policy index; the pass last), players
0 (black) and 1 (white; in ambiloa the teams). The observation tensor is the network's
input planes of the ``board`` plane set, scaled as the network sees them
(``Game.plane_scales``), from the side to move's view whatever the observing player (the
game has perfect information).
"""

import numpy as np
import pyspiel

from ._loazero import Game, Player

__all__ = ["register", "LoazeroGame", "LoazeroState", "LoazeroBot", "GAME_NAME"]

GAME_NAME = "loazero"
_DEFAULT_PLY_LIMIT = 1000
_PLANE_SET = "board"

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Lines of Action (loazero)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={
        "variant": "standard",
        "rules": "classic",
        "ply_limit": _DEFAULT_PLY_LIMIT,
    },
)


def _loazero_game(params):
    """The ``loazero.Game`` of OpenSpiel parameters (see the module docs)."""
    variant = params.get("variant", "standard")
    rules = str(params.get("rules", "classic")).replace(";", ",").replace(":", "=")
    ply_limit = int(params.get("ply_limit", _DEFAULT_PLY_LIMIT))
    game = Game(variant, rules)
    if game.ply_limit is None:
        if ply_limit <= 0:
            raise ValueError(
                f"ply_limit {ply_limit}: OpenSpiel needs a longest game, a positive ply limit"
            )
        game = Game(variant, f"{game.rules},ply-limit={ply_limit}")
    return game


class LoazeroGame(pyspiel.Game):
    """Lines of Action from loazero (see the module docs)."""

    def __init__(self, params=None):
        params = dict(params or {})
        self._game = _loazero_game(params)
        if "rules" in params:
            params["rules"] = str(params["rules"]).replace(",", ";").replace("=", ":")
        info = pyspiel.GameInfo(
            num_distinct_actions=self._game.num_actions,
            max_chance_outcomes=0,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=self._game.ply_limit,
        )
        super().__init__(_GAME_TYPE, info, params)

    @property
    def loazero_game(self):
        """The ``loazero.Game`` behind this game."""
        return self._game

    def new_initial_state(self):
        """The start state."""
        return LoazeroState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        """The planes observer (or OpenSpiel's public-information one for the other
        observation types)."""
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return _PlanesObserver(self._game, params)
        from open_spiel.python.observation import IIGObserverForPublicInfoGame

        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class LoazeroState(pyspiel.State):
    """A state: a ``loazero.State`` (``loazero_state``) under OpenSpiel's interface."""

    def __init__(self, game):
        super().__init__(game)
        self._state = game.loazero_game.new_initial_state()

    @property
    def loazero_state(self):
        """The ``loazero.State`` behind this state (shared, not a copy)."""
        return self._state

    def current_player(self):
        """0 (black) or 1 (white) to move, or ``TERMINAL``."""
        if self._state.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return self._state.current_player()

    def _legal_actions(self, player):
        return self._state.legal_actions()

    def _apply_action(self, action):
        self._state.apply_action(action)

    def _action_to_string(self, player, action):
        try:
            return self._state.action_to_move(action)
        except ValueError:
            return f"action {action}"

    def is_terminal(self):
        """Whether the game is over."""
        return self._state.is_terminal()

    def returns(self):
        """``[black, white]``: +1 win, −1 loss, 0 draw (zeros while it goes on)."""
        return list(self._state.returns())

    def __str__(self):
        return self._state.text()


class _PlanesObserver:
    """The network's scaled input planes as the observation tensor; the position text as
    the observation string."""

    def __init__(self, game, params):
        if params:
            raise ValueError(f"observation parameters are not supported; passed {params}")
        shape = game.planes_shape(_PLANE_SET)
        self._scales = np.asarray(game.plane_scales(_PLANE_SET), np.float32)[:, None, None]
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": np.reshape(self.tensor, shape)}

    def set_from(self, state, player):
        del player
        self.dict["observation"][...] = state.loazero_state.planes(_PLANE_SET) * self._scales

    def string_from(self, state, player):
        del player
        return state.loazero_state.text()


class LoazeroBot(pyspiel.Bot):
    """A loazero player (any torch-free spec, e.g. ``alphabeta:depth=3``) as an OpenSpiel
    bot for states of the registered game."""

    def __init__(self, spec, seed=0):
        pyspiel.Bot.__init__(self)
        self._player = Player(spec, seed)

    def step(self, state):
        """The player's action in ``state``."""
        return self._player.search(state.loazero_state).action

    def restart_at(self, state):
        pass

    def inform_action(self, state, player_id, action):
        pass

    def provides_policy(self):
        return False


def register():
    """Registers the game ``loazero`` with pyspiel (once; later calls do nothing)."""
    if GAME_NAME not in pyspiel.registered_names():
        pyspiel.register_game(_GAME_TYPE, LoazeroGame)
