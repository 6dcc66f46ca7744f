"""Shared helpers of the wheel's tests: the loazero binary for the engine and CLI
comparisons (``LOAZERO``, as ``make python-test`` sets it), skipped outside CI when
missing and a failure under CI (``CI`` set), as the Rust tests do."""

import os
import random
import shutil

import pytest

import loazero

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def binary():
    """The loazero binary, or a skip (a failure under CI) naming what is missing."""
    path = os.environ.get("LOAZERO") or shutil.which("loazero")
    if path and os.path.exists(path):
        return path
    why = "no loazero binary: set LOAZERO (make python-test does) or put it on the PATH"
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)


def random_states(variant, count, seed, rules="classic", max_plies=200):
    """``count`` states of seeded random games of ``variant`` (every ply)."""
    rng = random.Random(seed)
    game = loazero.Game(variant, rules)
    out = []
    while len(out) < count:
        state = game.new_initial_state()
        for _ in range(max_plies):
            if state.is_terminal() or len(out) >= count:
                break
            out.append(state.clone())
            state.apply_action(rng.choice(state.legal_actions()))
    return out
