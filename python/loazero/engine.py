"""``loazero.Engine``: the ``loazero engine`` line protocol (eval/PROTOCOL.md) driven as a
subprocess with typed results, the way python-chess drives UCI engines. It runs every
player, those with a network (``model:``, ``ubfm:``) included: the ``loazero`` binary
hands those to ``loazero-torch``, so the torch the engine links never meets the user's
PyTorch in one process.
"""

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import List, Optional

__all__ = ["Engine", "EngineError", "EngineResult", "parse_info"]


class EngineError(RuntimeError):
    """The engine answered ``error …`` (the message is the engine's) or died."""


@dataclass
class EngineResult:
    """One ``genmove``: the move (played in the engine's game) and its ``info`` line."""

    move: str
    score: Optional[str] = None
    cp: Optional[int] = None
    value: Optional[float] = None
    mate: Optional[int] = None
    pv: List[str] = field(default_factory=list)
    nodes: int = 0
    depth: Optional[int] = None
    time_ms: int = 0
    nps: int = 0
    info: Optional[str] = None


def parse_info(line: str, result: EngineResult) -> None:
    """Fills ``result`` from an ``info`` line (``info depth D nodes N … pv M M``)."""
    words = line.split()[1:]
    i = 0
    while i < len(words):
        w = words[i]
        if w == "pv":
            result.pv = words[i + 1 :]
            break
        if w in ("depth", "seldepth", "nodes", "nps", "time", "eval") and i + 1 < len(words):
            v = words[i + 1]
            if w == "depth":
                result.depth = int(v)
            elif w == "nodes":
                result.nodes = int(v)
            elif w == "nps":
                result.nps = int(v)
            elif w == "time":
                result.time_ms = int(v)
            i += 2
            continue
        if w == "score" and i + 1 < len(words):
            kind = words[i + 1]
            if kind in ("cp", "value", "mate") and i + 2 < len(words):
                v = words[i + 2]
                result.score = f"{kind} {v}"
                if kind == "cp":
                    result.cp = int(v)
                elif kind == "value":
                    result.value = float(v)
                else:
                    result.mate = int(v)
                i += 3
            else:
                result.score = kind
                i += 2
            continue
        i += 1


def _binary() -> str:
    """The ``loazero`` binary: ``$LOAZERO``, else ``loazero`` on the PATH."""
    path = os.environ.get("LOAZERO") or shutil.which("loazero")
    if not path:
        raise EngineError(
            "no loazero binary: set LOAZERO to its path (target/release/loazero after "
            "`make build`) or put it on the PATH"
        )
    return path


class Engine:
    """A ``loazero engine`` subprocess. ``Engine(player="model:path=M,ms=500")``;
    ``command`` replaces ``[$LOAZERO, "engine"]``. Use as a context manager or call
    ``quit()``."""

    def __init__(self, player=None, variant=None, rules=None, command=None, timeout=None):
        cmd = list(command) if command else [_binary(), "engine"]
        if player:
            cmd += ["--player", player]
        self.timeout = timeout
        self._proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        answer = self.command("protocol")
        if answer != ["protocol loazero-engine 1"]:
            self.quit()
            raise EngineError(f"not a loazero engine: it answered {answer!r} to 'protocol'")
        if variant:
            self.command(f"variant {variant}")
        if rules:
            self.command(f"rules {rules}")

    def _line(self) -> str:
        line = self._proc.stdout.readline()
        if not line:
            code = self._proc.poll()
            raise EngineError(f"the engine closed its output (exit status {code})")
        return line.rstrip("\n")

    def command(self, line: str) -> List[str]:
        """Sends one command and returns its answer lines (``board``: the diagram lines;
        ``genmove``: the ``info`` line(s) and the ``move`` line). ``error …`` raises
        ``EngineError`` with the engine's message."""
        if "\n" in line:
            raise EngineError("one command per call: the line holds a newline")
        if self._proc.poll() is not None:
            raise EngineError(f"the engine has exited (status {self._proc.returncode})")
        self._proc.stdin.write(line + "\n")
        self._proc.stdin.flush()
        verb = line.split()[0].lower() if line.split() else ""
        out = []
        while True:
            answer = self._line()
            if answer.startswith("error "):
                raise EngineError(answer[len("error ") :])
            out.append(answer)
            if verb == "board":
                if answer == "end":
                    return out
            elif verb in ("genmove", "go"):
                if answer.startswith("move "):
                    return out
            else:
                return out

    def set_player(self, spec: str) -> None:
        """The engine's player (any spec, e.g. ``model:path=M,sims=200``)."""
        self.command(f"player {spec}")

    def set_position(self, state) -> None:
        """The engine's game becomes ``state``'s: its variant, rules, start and moves."""
        game = state.game_info
        self.command(f"variant {game.variant}")
        self.command(f"rules {game.rules}")
        moves = state.history()
        self.command(f"position {state.start_text()}" + (" moves " + " ".join(moves) if moves else ""))

    def play(self, state=None, ms=None) -> EngineResult:
        """Searches (``state``'s position if given, else the engine's game), plays the move
        in the engine's game and returns it with its ``info`` line; ``ms``: thinking time."""
        if state is not None:
            self.set_position(state)
        answer = self.command("genmove" + (f" movetime {int(ms)}" if ms else ""))
        result = EngineResult(move=answer[-1].split(None, 1)[1])
        for line in answer[:-1]:
            if line.startswith("info "):
                result.info = line
                parse_info(line, result)
        return result

    def quit(self) -> None:
        """Ends the session and waits for the process."""
        if self._proc.poll() is None:
            try:
                self._proc.stdin.write("quit\n")
                self._proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for f in (self._proc.stdin, self._proc.stdout):
            if f:
                f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.quit()
