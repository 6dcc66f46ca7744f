#!/usr/bin/env python3
"""Runs a loazero run kept in a store on a Ray cluster (docs/distributed.md, "Ray").

One trainer (`loazero run --store`) and N self-play workers (`loazero selfplay --store`),
each a loazero process owned by a Ray actor that reserves its CPUs (and GPUs): Ray places
them and starts them again elsewhere when a node is lost; loazero knows nothing of Ray.

    python3 launch.py --store s3://my-bucket/runs/a --workers 8 --threads 4 --minutes 600

Every node needs the loazero binaries at --loazero (one path on all nodes). The store's
variables (AWS_*, GOOGLE_*, AZURE_*) of this process's environment are passed on to the
processes (through Ray's runtime_env, which Ray's dashboard shows: prefer credentials the
nodes have of their own, such as an instance role, where you can).

When the trainer ends (its --minutes are used up) the workers are stopped. Ctrl-C or
SIGTERM to the launcher stops everything with one SIGTERM each: the workers commit their
finished games, the trainer saves its loop to the store; run the same command again to
resume. (A launcher killed outright leaves Ray to kill the processes with SIGKILL: safe
for the store, but finished games not yet committed are lost.) A worker that ends by
itself is started again after RESTART_DELAY_S.

--print-commands prints the two command lines as JSON and exits, without Ray (each process
adds `--cache DIR`, a temporary directory of its own on its node).
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# Seconds before a worker that ended by itself is started again.
RESTART_DELAY_S = 10
# Seconds a stopped worker or trainer has to commit and save before it is killed: a
# worker waits up to a minute for the store, a trainer finishes its training chunk.
STOP_GRACE_S = 300
# The environment passed on to the loazero processes: the store's configuration.
FORWARDED_PREFIXES = ("AWS_", "GOOGLE_", "AZURE_")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--store", required=True, help="the run's store, e.g. s3://BUCKET/PREFIX")
    p.add_argument(
        "--loazero",
        default="/opt/loazero/target/release/loazero",
        help="the loazero binary on every node (default: %(default)s)",
    )
    p.add_argument("--workers", type=int, default=4, help="self-play workers (default: 4)")
    p.add_argument(
        "--threads",
        type=int,
        default=4,
        help="search threads of each worker, and the CPUs it reserves (default: 4)",
    )
    p.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="the run's training minutes, counted across restarts (loazero run --minutes)",
    )
    p.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a config key of the trainer (loazero run --set; repeatable), e.g. train.device=cuda",
    )
    p.add_argument("--trainer-cpus", type=int, default=4, help="CPUs the trainer reserves (default: 4)")
    p.add_argument("--trainer-gpus", type=float, default=0, help="GPUs the trainer reserves (default: 0)")
    p.add_argument(
        "--address",
        default=None,
        help="the Ray cluster to join ('auto': the one this node belongs to; default: a new local one)",
    )
    p.add_argument("--print-commands", action="store_true", help="print the command lines as JSON and exit")
    args = p.parse_args(argv)
    if args.workers < 0 or args.threads < 1 or args.trainer_cpus < 1:
        p.error("--workers must be at least 0, --threads and --trainer-cpus at least 1")
    return args


def commands(args):
    """The trainer's and a worker's command lines, without their --cache."""
    trainer = [args.loazero, "run", "--store", args.store]
    if args.minutes is not None:
        trainer += ["--minutes", repr(args.minutes)]
    for s in args.sets:
        trainer += ["--set", s]
    worker = [args.loazero, "selfplay", "--store", args.store, "--threads", str(args.threads)]
    return trainer, worker


def forwarded_env(threads):
    env = {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_PREFIXES)}
    # torch's threads: as many as the CPUs reserved.
    env["OMP_NUM_THREADS"] = str(threads)
    return env


class LoazeroProcess:
    """A loazero process on a Ray node, started with the actor (and again when Ray starts
    the actor again after a lost node), with a temporary --cache removed when it ends."""

    def __init__(self, argv, name):
        self.cache = tempfile.mkdtemp(prefix=f"loazero-{name}-")
        self.process = subprocess.Popen(
            argv + ["--cache", self.cache],
            # Out of the terminal's process group: its Ctrl-C reaches the launcher only,
            # which stops every process with one SIGTERM (loazero ends at once at a
            # second signal, without committing).
            start_new_session=True,
            # SIGTERM to loazero if this actor's process dies first (Linux).
            preexec_fn=_terminate_with_parent,
        )

    def wait(self):
        """Waits for the process to end; its exit status."""
        code = self.process.wait()
        shutil.rmtree(self.cache, ignore_errors=True)
        return code

    def stop(self, grace_s):
        """SIGTERM, then SIGKILL after grace_s seconds; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(grace_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        shutil.rmtree(self.cache, ignore_errors=True)
        return code


def _terminate_with_parent():
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv):
    # SIGTERM (a scheduler stopping the launcher) stops everything as Ctrl-C does; SIGINT
    # is restored where the launcher was started with it ignored (in the background of a
    # script). A launcher killed outright leaves Ray to kill the processes (SIGKILL).
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    args = parse_args(argv)
    trainer_argv, worker_argv = commands(args)
    if args.print_commands:
        print(json.dumps({"trainer": trainer_argv, "worker": worker_argv}))
        return 0

    import ray

    ray.init(address=args.address)
    actor = ray.remote(LoazeroProcess)

    def start(role):
        cpus = args.trainer_cpus if role == "trainer" else args.threads
        return actor.options(
            num_cpus=cpus,
            num_gpus=args.trainer_gpus if role == "trainer" else 0,
            # A lost node: Ray starts the actor (and its process) again elsewhere, and
            # `wait` is asked again of the new one.
            max_restarts=-1,
            max_task_retries=-1,
            # `stop` is called while `wait` blocks.
            max_concurrency=2,
            runtime_env={"env_vars": forwarded_env(cpus)},
        ).remote(trainer_argv if role == "trainer" else worker_argv, role)

    trainer = start("trainer")
    pending = {trainer.wait.remote(): ("trainer", trainer)}
    for _ in range(args.workers):
        w = start("worker")
        pending[w.wait.remote()] = ("worker", w)
    print(f"launched the trainer and {args.workers} workers of {args.store}", flush=True)

    def stop(roles):
        actors = [a for (role, a) in pending.values() if role in roles]
        codes = ray.get([a.stop.remote(STOP_GRACE_S) for a in actors])
        for a in actors:
            ray.kill(a)
        return codes

    try:
        while True:
            [done], _ = ray.wait(list(pending), num_returns=1)
            role, ended = pending.pop(done)
            code = ray.get(done)
            ray.kill(ended)
            if role == "trainer":
                print(f"the trainer ended with exit status {code}; stopping the workers", flush=True)
                stop({"worker"})
                return code
            print(
                f"a worker ended with exit status {code}; starting another in {RESTART_DELAY_S} s",
                flush=True,
            )
            time.sleep(RESTART_DELAY_S)
            w = start("worker")
            pending[w.wait.remote()] = ("worker", w)
    except KeyboardInterrupt:
        # Once: the stop below takes as long as the processes need.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print("stopping: the workers commit their finished games, the trainer saves", flush=True)
        stop({"worker"})
        stop({"trainer"})
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
