"""loazero's LOA as an OpenSpiel game: OpenSpiel's random simulation test (with
serialization) and its MCTS bot against loazero's alpha-beta."""

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import loazero
import loazero.openspiel
from open_spiel.python.algorithms import evaluate_bots, mcts


def setup_module():
    loazero.openspiel.register()
    loazero.openspiel.register()  # a second call does nothing


def test_registered_with_parameters():
    assert "loazero" in pyspiel.registered_names()
    game = pyspiel.load_game("loazero(variant=6x6,rules=icga;no-move:loss,ply_limit=300)")
    assert game.loazero_game.variant == "6x6"
    assert game.loazero_game == loazero.Game("6x6", "icga,no-move=loss,ply-limit=300")
    assert game.max_game_length() == 300
    assert game.num_distinct_actions() == game.loazero_game.num_actions
    game = pyspiel.load_game("loazero", {"variant": "alveole", "rules": "classic,ply-limit=150"})
    assert game.max_game_length() == 150
    assert pyspiel.load_game(str(game)).loazero_game == game.loazero_game
    state = game.new_initial_state()
    assert state.current_player() == 0 and state.legal_actions() == state.loazero_state.legal_actions()
    obs = np.asarray(state.observation_tensor(0)).reshape(game.observation_tensor_shape())
    planes = state.loazero_state.planes()
    scales = np.asarray(game.loazero_game.plane_scales(), np.float32)[:, None, None]
    assert np.array_equal(obs, planes * scales)


@pytest.mark.parametrize("variant", ["standard", "6x6", "parachute", "gemma", "ambiloa", "alveole"])
def test_random_simulation_test(variant):
    game = pyspiel.load_game("loazero", {"variant": variant, "ply_limit": 400})
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


def test_serialization_round_trip():
    game = pyspiel.load_game("loazero(variant=parachute)")
    state = game.new_initial_state()
    rng = np.random.RandomState(2)
    for _ in range(30):
        state.apply_action(rng.choice(state.legal_actions()))
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert str(state2) == str(state) and state2.history() == state.history()
    clone = state.clone()
    assert clone.history() == state.history() and str(clone) == str(state)


def test_mcts_bot_plays_alphabeta():
    """10 games of OpenSpiel's MCTS bot (random rollouts) against loazero's alpha-beta,
    colours alternating; every game ends within the rules' ply limit."""
    game = pyspiel.load_game("loazero", {"variant": "6x6", "rules": "classic;ply-limit=120"})
    rng = np.random.RandomState(7)
    results = {"alphabeta": 0.0, "mcts": 0.0}
    for g in range(10):
        bot_mcts = mcts.MCTSBot(game, uct_c=2.0, max_simulations=20,
                                evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng),
                                random_state=rng)
        bot_ab = loazero.openspiel.LoazeroBot("alphabeta:depth=2", seed=g)
        bots = [bot_ab, bot_mcts] if g % 2 == 0 else [bot_mcts, bot_ab]
        returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
        ab = 0 if g % 2 == 0 else 1
        results["alphabeta"] += returns[ab]
        results["mcts"] += returns[1 - ab]
    assert results["alphabeta"] + results["mcts"] == 0.0
    # A 2-ply alpha-beta beats a 20-simulation random-rollout MCTS.
    assert results["alphabeta"] > 0, results
