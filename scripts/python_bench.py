#!/usr/bin/env python3
"""Speed of the loazero wheel from Python (a benchmark, not a test; docs/python.md has
the figures). Three measurements:

* ``playouts``: random playouts a second driven from Python (``legal_actions`` and
  ``apply_action`` with ``random.choice``, the same loop) on loazero's ``standard`` game
  and on OpenSpiel's own C++ ``lines_of_action`` (pyspiel), if pyspiel is installed; then
  loazero's ``State.random_playout`` (one Python call a playout, the moves chosen in Rust).
* ``alphabeta``: alpha-beta nodes a second from Python (``Player("alphabeta:ms=MS,
  threads=1")``, a fresh player per position) over the positions of ``loazero bench
  alphabeta`` (``loazero.bench_states()``); compare with ``loazero bench alphabeta --ms MS
  --threads 1`` on the same machine.
* ``threads``: two Python threads searching those positions at once (one player each)
  against one thread: total nodes a second, and the ratio.

usage: python scripts/python_bench.py [playouts|alphabeta|threads ...] [--seconds S] [--ms MS]
"""

import argparse
import random
import threading
import time

import loazero


def playouts(make_state, seconds, seed=1):
    """(playouts, plies, seconds) of random games from ``make_state()`` for about
    ``seconds``."""
    rng = random.Random(seed)
    games = plies = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = make_state()
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
            plies += 1
        games += 1
    return games, plies, time.perf_counter() - start


def search_all(ms, states, out, i):
    """Searches every state with a fresh one-thread alpha-beta player: nodes and the
    seconds of the ``search`` calls (as ``loazero bench alphabeta`` counts the searches'
    time, not the players' construction: a fresh transposition table is allocated for
    each), and the wall time of the whole loop."""
    nodes = 0
    searching = 0.0
    t = time.perf_counter()
    for s in states:
        player = loazero.Player(f"alphabeta:ms={ms},threads=1")
        started = time.perf_counter()
        nodes += player.search(s).nodes
        searching += time.perf_counter() - started
    out[i] = (nodes, searching, time.perf_counter() - t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", nargs="*", default=["playouts", "alphabeta", "threads"])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--ms", type=int, default=1000)
    args = ap.parse_args()
    if "playouts" in args.what:
        game = loazero.Game("standard")
        g, p, s = playouts(game.new_initial_state, args.seconds)
        ours = g / s
        print(f"loazero standard: {g} random playouts in {s:.1f} s: {ours:.1f} playouts/s, "
              f"{p / s:,.0f} plies/s, {p / g:.1f} plies a game")
        try:
            import pyspiel
        except ImportError:
            print("pyspiel not installed: no OpenSpiel baseline")
        else:
            spiel = pyspiel.load_game("lines_of_action")
            g, p, s = playouts(spiel.new_initial_state, args.seconds)
            print(f"OpenSpiel lines_of_action: {g} random playouts in {s:.1f} s: {g / s:.1f} playouts/s, "
                  f"{p / s:,.0f} plies/s, {p / g:.1f} plies a game")
            print(f"loazero / OpenSpiel playouts a second, the same Python loop: {ours / (g / s):.2f}x")
            spiel_rate = g / s
        games = plies = 0
        t = time.perf_counter()
        while time.perf_counter() - t < args.seconds:
            state = game.new_initial_state()
            state.random_playout(seed=games + 1)
            games += 1
            plies += len(state.history())
        s = time.perf_counter() - t
        print(f"loazero State.random_playout: {games} playouts in {s:.1f} s: {games / s:.1f} playouts/s, "
              f"{plies / s:,.0f} plies/s, {plies / games:.1f} plies a game")
        if "spiel_rate" in locals():
            print(f"State.random_playout / OpenSpiel's Python loop: {games / s / spiel_rate:.1f}x")
    states = loazero.bench_states()
    if "alphabeta" in args.what:
        out = [None]
        search_all(args.ms, states, out, 0)
        nodes, secs, wall = out[0]
        print(f"alphabeta from Python, 1 thread: {nodes} nodes in {secs:.2f} s of search calls, "
              f"{nodes / secs / 1e6:.3f} M nodes/s over {len(states)} positions at {args.ms} ms "
              f"({nodes / wall / 1e6:.3f} M nodes/s over the {wall:.2f} s with the players' construction)")
    if "threads" in args.what:
        rates = {}
        for n in (1, 2):
            out = [None] * n
            threads = [threading.Thread(target=search_all, args=(args.ms, states, out, i)) for i in range(n)]
            t = time.perf_counter()
            cpu = time.process_time()
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            wall = time.perf_counter() - t
            cpu = time.process_time() - cpu
            nodes = sum(o[0] for o in out)  # per wall second of the threads together
            rates[n] = nodes / wall
            print(f"{n} Python thread(s) searching at once: {nodes} nodes in {wall:.2f} s, "
                  f"{rates[n] / 1e6:.3f} M nodes/s; {cpu / wall:.2f} CPU seconds a second, "
                  f"{nodes / cpu / 1e6:.3f} M nodes a CPU second")
        print(f"two threads / one: {rates[2] / rates[1]:.2f}x")


if __name__ == "__main__":
    main()
