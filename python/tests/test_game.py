"""The rules from Python: every variant and rule option, moves as text and actions,
apply and undo, results, text, SGF, clone, hash, planes and symmetries."""

import random

import numpy as np
import pytest

import loazero
from conftest import random_states

VARIANTS = loazero.variants()


def test_every_variant_and_rule_option_starts():
    assert VARIANTS == ["standard", "scrambled-eggs", "6x6", "parachute", "gemma", "ambiloa", "alveole"]
    for variant in VARIANTS:
        for rules in ["classic", "icga", "classic,ply-limit=300,no-move=loss", "repetition=off,first=white", "simultaneous=draw"]:
            game = loazero.Game(variant, rules)
            state = game.new_initial_state()
            assert not state.is_terminal()
            assert state.legal_moves()
            assert loazero.Game(variant, game.rules) == game
    assert loazero.Game("6x6", "first=white").new_initial_state().to_move() == "white"


def test_moves_and_actions_agree():
    for variant in VARIANTS:
        game = loazero.Game(variant)
        for state in random_states(variant, 60, seed=1):
            moves = state.legal_moves()
            actions = state.legal_actions()
            assert actions == sorted(actions)
            assert len(moves) == len(actions) == len(set(actions))
            assert sorted(state.move_to_action(m) for m in moves) == actions
            assert sorted(state.action_to_move(a) for a in actions) == sorted(moves)
            mask = state.action_mask()
            assert mask.dtype == np.bool_ and mask.shape == (game.num_actions,)
            assert list(np.flatnonzero(mask)) == actions


def test_apply_undo_and_results():
    rng = random.Random(5)
    finished = {}
    for variant in VARIANTS:
        game = loazero.Game(variant, "classic,ply-limit=400")
        for _ in range(4):
            state = game.new_initial_state()
            seen = [(state.text(), state.hash())]
            while not state.is_terminal():
                if rng.random() < 0.5:
                    state.apply(rng.choice(state.legal_moves()))
                else:
                    state.apply_action(rng.choice(state.legal_actions()))
                seen.append((state.text(), state.hash()))
            finished[state.outcome()] = finished.get(state.outcome(), 0) + 1
            assert state.legal_moves() == [] and state.legal_actions() == []
            r = state.returns()
            if state.winner() is None:
                assert state.outcome() == "draw" and r == [0.0, 0.0]
            else:
                assert state.outcome() == state.winner()
                assert r == ([1.0, -1.0] if state.winner() == "black" else [-1.0, 1.0])
            # Undo walks back through every position.
            history = state.history()
            for i in range(len(history), 0, -1):
                assert state.undo() == history[i - 1]
                assert (state.text(), state.hash()) == seen[i - 1]
            with pytest.raises(loazero.LoazeroError, match="no move to undo"):
                state.undo()
    assert finished.get("black", 0) + finished.get("white", 0) > 0


def test_text_sgf_clone_and_hash_round_trip():
    for variant in VARIANTS:
        game = loazero.Game(variant, "icga")
        for state in random_states(variant, 40, seed=3, rules="icga")[::7]:
            back = game.state_from_text(state.text())
            assert back == state and back.hash() == state.hash() and hash(back) == hash(state)
            assert back.text() == state.text()
            sgf = loazero.state_from_sgf(state.sgf())
            assert sgf.text() == state.text() and sgf.history() == state.history()
            assert sgf.game_info == game
            copy = state.clone()
            if copy.legal_actions():
                copy.apply_action(copy.legal_actions()[0])
                assert copy != state and copy.text() != state.text()


def test_planes_are_the_encoders_and_symmetries_move_them():
    for variant in VARIANTS:
        game = loazero.Game(variant)
        for plane_set in ["board", "loa", "loa-nearest"]:
            shape = game.planes_shape(plane_set)
            assert len(game.plane_names(plane_set)) == len(game.plane_scales(plane_set)) == shape[0]
            for state in random_states(variant, 12, seed=9)[::4]:
                planes = state.planes(plane_set)
                assert planes.dtype == np.uint8 and planes.shape == shape
                assert game.plane_names(plane_set)[:2] == ["own", "opponent"]
                for s in range(game.num_symmetries):
                    moved = game.transform_planes(planes, s, plane_set)
                    assert np.array_equal(moved, state.planes(plane_set, symmetry=s)), (variant, plane_set, s)
        # Policies: a permutation that keeps the pass last; the identity at symmetry 0.
        policy = np.arange(game.num_actions, dtype=np.float32)
        assert np.array_equal(game.transform_policy(policy, 0), policy)
        for s in range(game.num_symmetries):
            moved = game.transform_policy(policy, s)
            assert sorted(moved) == sorted(policy) and moved[-1] == policy[-1]
            assert len(game.transform_policy(policy[:-1], s)) == game.policy_size


def test_symmetric_policy_follows_the_moves_pieces():
    # On the square board, symmetry images of the start's moves are again the start's
    # moves (the standard start is symmetric under the 180-degree turn and both mirrors
    # that keep the colours' edges).
    game = loazero.Game("standard")
    state = game.new_initial_state()
    mask = state.action_mask().astype(np.float32)
    symmetric = [s for s in range(game.num_symmetries)
                 if np.array_equal(state.planes(symmetry=s), state.planes())]
    assert len(symmetric) >= 2
    for s in symmetric:
        assert np.array_equal(game.transform_policy(mask, s), mask), s


def test_pickle_and_random_playouts():
    import pickle

    for variant in VARIANTS:
        game = loazero.Game(variant, "icga,ply-limit=300")
        assert pickle.loads(pickle.dumps(game)) == game
        state = random_states(variant, 30, seed=4, rules="icga,ply-limit=300")[-1]
        back = pickle.loads(pickle.dumps(state))
        assert back == state and back.history() == state.history() and back.game_info == game
        a, b = state.clone(), state.clone()
        outcome = a.random_playout(seed=7)
        assert a.is_terminal() and outcome == a.outcome() and outcome in ("black", "white", "draw")
        assert b.random_playout(seed=7) == outcome and b.history() == a.history()
        # The playout is a line of legal moves from the state.
        replay = state.clone()
        for m in a.history()[len(state.history()):]:
            replay.apply(m)
        assert replay.text() == a.text()
