"""loazero for Python: Lines of Action's rules, the network's input planes and loazero's
torch-free players, from the Rust crates of loazero (one wheel, no torch).

* ``Game(variant="standard", rules="classic")``: a variant under rules; its states,
  action space (``num_actions``: the policy size plus the pass), input layout
  (``planes_shape``, ``plane_names``, ``plane_scales``) and board symmetries
  (``transform_planes``, ``transform_policy``).
* ``State``: ``legal_moves()``, ``legal_actions()``, ``action_mask()``, ``apply(move)``,
  ``apply_action(a)``, ``undo()``, ``is_terminal()``, ``winner()``, ``text()``, ``sgf()``,
  ``clone()``, ``hash()``, ``planes(plane_set, symmetry)`` (the trainer's encoder).
* ``Player(spec)``: ``alphabeta:…``, ``alphabeta:eval=FILE``, ``mcts:evaluator=heuristic,…``,
  ``random``; ``player.search(state)`` returns a ``SearchResult`` (move, score, pv,
  nodes), releasing the GIL.
* ``Engine(player=…)``: the ``loazero engine`` protocol in a subprocess, for the players
  with a network (``model:``, ``ubfm:``), with typed results.
* ``loazero.openspiel.register()`` and ``loazero.pettingzoo.env()``: the interop layers.

Bad input raises ``LoazeroError`` (a ``ValueError``) with the command line's message.
See docs/python.md.
"""

from ._loazero import (
    ENCODING_VERSION,
    Game,
    LoazeroError,
    Player,
    SearchResult,
    State,
    bench_states,
    state_from_sgf,
    variants,
)
from .engine import Engine, EngineError, EngineResult

__all__ = [
    "ENCODING_VERSION",
    "Engine",
    "EngineError",
    "EngineResult",
    "Game",
    "LoazeroError",
    "Player",
    "SearchResult",
    "State",
    "bench_states",
    "state_from_sgf",
    "variants",
]
