"""Bad input from Python raises LoazeroError (a ValueError) with the command line's message,
never a crash; the state API survives 10 000 random calls."""

import os
import random
import subprocess

import numpy as np
import pytest

import loazero
from conftest import binary


def engine_errors(commands):
    """The engine's answer to each command (one line each), from a fresh session."""
    out = subprocess.run(
        [binary(), "engine", "--player", "alphabeta:depth=1"],
        input="\n".join(commands) + "\nquit\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def message(fn):
    with pytest.raises(loazero.LoazeroError) as e:
        fn()
    assert isinstance(e.value, ValueError)
    return str(e.value)


def test_bad_input_gives_the_command_lines_message(tmp_path):
    corrupt = tmp_path / "corrupt.safetensors"
    corrupt.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00not json at all")
    game = loazero.Game()
    state = game.new_initial_state()
    cases = {
        # (python call, engine command)
        "position": (lambda: game.state_from_text("1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbbq b"),
                     "position 1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbbq b"),
        "illegal move": (lambda: state.apply("b1-b2"), "play b1-b2"),
        "bad move text": (lambda: state.apply("z9-q0"), "play z9-q0"),
        "unknown key": (lambda: loazero.Player("alphabeta:depht=3"), "player alphabeta:depht=3"),
        "unknown kind": (lambda: loazero.Player("alfabeta"), "player alfabeta"),
        "corrupt eval file": (lambda: loazero.Player(f"alphabeta:eval={corrupt}"), f"player alphabeta:eval={corrupt}"),
        "missing eval file": (lambda: loazero.Player(f"alphabeta:eval={tmp_path}/none.safetensors"),
                              f"player alphabeta:eval={tmp_path}/none.safetensors"),
        "unknown variant": (lambda: loazero.Game("chess"), "variant chess"),
        "bad rules": (lambda: loazero.Game("standard", "classic,no-move=maybe"), "rules classic,no-move=maybe"),
    }
    answers = engine_errors([c for _, c in cases.values()])
    assert len(answers) == len(cases) + 1 and answers[-1] == "ok bye", answers
    for (name, (call, _)), answer in zip(cases.items(), answers):
        got = message(call)
        assert answer.startswith("error "), (name, answer)
        # The engine prints the same message (on one line); a position command may add
        # its own context around the rules' words.
        assert got.replace("\n", "; ") in answer[len("error "):], (name, got, answer)
        if name in ("illegal move", "unknown key", "corrupt eval file", "unknown variant"):
            assert answer == "error " + got.replace("\n", "; "), (name, got, answer)


def test_other_bad_input_raises():
    game = loazero.Game("6x6")
    state = game.new_initial_state()
    for call in [
        lambda: state.apply_action(10**9),
        lambda: state.apply_action(game.pass_action),  # a pass is not legal here
        lambda: state.action_to_move(10**6),
        lambda: state.planes("nope"),
        lambda: state.planes(symmetry=8),
        lambda: game.transform_planes(np.zeros(5, np.uint8), 0),
        lambda: game.transform_planes(state.planes(), 99),
        lambda: game.transform_policy(np.zeros(3, np.float32), 0),
        lambda: loazero.state_from_sgf("(;GM[1])"),
        lambda: loazero.state_from_sgf("not sgf"),
        lambda: loazero.Player("model:path=x.safetensors"),
        lambda: loazero.Player("random").search(_finished()),
    ]:
        with pytest.raises(ValueError):
            call()
    with pytest.raises(OverflowError):
        state.apply_action(-1)


def _finished():
    state = loazero.Game("6x6", "classic,ply-limit=2").new_initial_state()
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    return state


def test_random_calls_never_crash():
    """10 000 random calls on states of every variant: legal and illegal actions and
    moves, undo, text and SGF round trips, planes; every failure is a LoazeroError."""
    rng = random.Random(11)
    games = [loazero.Game(v, rng.choice(["classic", "icga,ply-limit=120"])) for v in loazero.variants()]
    states = [g.new_initial_state() for g in games]
    errors = 0
    for step in range(10_000):
        i = rng.randrange(len(states))
        game, state = games[i], states[i]
        op = rng.randrange(12)
        try:
            if op == 0 and state.legal_actions():
                state.apply_action(rng.choice(state.legal_actions()))
            elif op == 1:
                state.apply_action(rng.randrange(game.num_actions + 3))
            elif op == 2:
                state.apply(rng.choice(state.legal_moves() + ["pass", "a1-a2", "@e5", "~c3", "", "b1xd3", "é"]))
            elif op == 3:
                state.undo()
            elif op == 4:
                text = state.text()
                if rng.random() < 0.5:
                    k = rng.randrange(len(text))
                    text = text[:k] + rng.choice("bwx/12389 @:sne-") + text[k + 1:]
                states[i] = game.state_from_text(text)
            elif op == 5:
                sgf = state.sgf()
                if rng.random() < 0.5:
                    k = rng.randrange(len(sgf))
                    sgf = sgf[:k] + rng.choice("[];()\\ab1") + sgf[k + 1:]
                back = loazero.state_from_sgf(sgf)
                if back.game_info == game:
                    states[i] = back
            elif op == 6:
                state.planes(rng.choice(["board", "loa", "loa-nearest", "x"]), rng.randrange(14))
            elif op == 7:
                state.action_to_move(rng.randrange(game.num_actions + 2))
            elif op == 8:
                state.move_to_action(rng.choice(["a1-a3", "pass", "b1-d3", "zz"]))
            elif op == 9:
                states[i] = state.clone()
            elif op == 10:
                if state.is_terminal() or rng.random() < 0.02:
                    states[i] = game.new_initial_state()
            else:
                assert hash(state) == hash(state.clone())
                state.legal_moves(), state.action_mask(), state.returns(), state.winner()
        except loazero.LoazeroError:
            errors += 1
    assert 100 < errors < 10_000
