"""A user's own loop, written from the README, that leaves by one chosen path.

``python _exit_worker.py PATH GROUP N LIGHTHOUSE STORE [SEED [PAUSE]]`` runs group ``GROUP`` of
a run of ``N`` groups (``Layout.cyclic(N, 1)``: a group's death is a wipe-out; each step
lasts at least ``PAUSE`` seconds) and leaves by ``PATH``:

- ``with``: the documented form, ``with SpareGroup(...) as group:``, to the last step (0);
- ``noclose``: the same loop without ``with`` and without ``close()`` (0);
- ``refuse``: catches what ``start()`` raises (a refusal), prints it and returns 1 without
  ``close()``; ``timeout``: the same with a 4 s quorum timeout (a formation that times out);
- ``start-raise``: lets what ``start()`` raises leave the ``with`` block (1);
- ``reduce-raise``: ``compute`` raises in step 1, out of ``reduce()``, without ``close()`` (1);
- ``step-end-raise``: an observer raises at the first commit, out of ``step_end()``, inside
  ``with`` (1);
- ``wipeout``: catches the :class:`WipeOutError` that its peer's end causes, prints it and
  returns 2 without ``close()``;
- ``sigint``: sends itself SIGINT in step 1: an uncaught ``KeyboardInterrupt`` inside
  ``with`` (the interpreter then ends by SIGINT, -2);
- ``sysexit``: ``sys.exit(7)`` in step 1 without ``close()`` (7).

``python _exit_worker.py --zygote`` imports torch once and then forks one such process for
each line read from stdin (``OUTFILE [env:NAME=VALUE ...] ARGS...``, the ``env:`` words set in
the child's environment, as torchrun sets a rank's); each child runs :func:`main` as a script
would and leaves through the interpreter's own exit (atexit, thread shutdown, finalization),
its output in ``OUTFILE``. The zygote prints ``started PID`` for each line and ``exit PID RC``
(RC as ``subprocess`` gives it: negative for a signal) for each child once stdin is
closed and every child has ended.
"""

from __future__ import annotations

import os
import signal
import sys
import time

SLOW_STEPS = 6


def main(argv: list[str]) -> int:
    import torch

    from spare_fast.layout import Layout
    from spare_fast.torch import Observer, SpareGroup, WipeOutError, mlp

    path, group_id, n = argv[0], int(argv[1]), int(argv[2])
    lighthouse, store = argv[3], argv[4]
    seed = int(argv[5]) if len(argv) > 5 else 0
    pause = float(argv[6]) if len(argv) > 6 else 0.0
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = mlp.build_mlp()
    optimizer = mlp.make_sgd(model.parameters())
    steps = SLOW_STEPS

    def compute(step: int, shard_type: int) -> torch.Tensor:
        if path == "reduce-raise" and step == 1:
            raise ValueError("the user's compute failed")
        x, y = mlp.synthetic_shard(step, shard_type)
        return mlp.mse_loss(model(x), y)

    class RaiseAtCommit(Observer):
        def on_record(self, record: dict[str, object]) -> None:
            if record.get("kind") == "step":
                raise RuntimeError("the user's observer failed at the first commit")

    def make() -> SpareGroup:
        return SpareGroup(
            model,
            optimizer,
            Layout.cyclic(n, 1),
            steps,
            group=group_id,
            seed=seed,
            lighthouse=lighthouse,
            store=store,
            bind="127.0.0.2",
            observers=[RaiseAtCommit()] if path == "step-end-raise" else [],
            collective_timeout=5.0,
            quorum_timeout=4.0 if path in ("timeout", "start-raise") else 30.0,
            quorum_poll=0.5,
        )

    def loop(group: SpareGroup) -> None:
        while group.step < steps:
            if group.step == 1 and path == "sigint":
                os.kill(os.getpid(), signal.SIGINT)
            if group.step == 1 and path == "sysexit":
                sys.exit(7)
            group.reduce(compute)
            optimizer.step()
            time.sleep(pause)
            group.step_end()

    if path in ("with", "start-raise", "step-end-raise", "sigint"):
        with make() as group:
            group.start()
            loop(group)
        return 0
    group = make()
    if path in ("refuse", "timeout"):
        try:
            group.start()
        except Exception as exc:  # noqa: BLE001 - the script's own report
            print(f"{type(exc).__name__}: {exc}", flush=True)
            return 1
        loop(group)
        return 0
    group.start()
    if path == "wipeout":
        try:
            loop(group)
        except WipeOutError as exc:
            print(f"WipeOutError: {exc}", flush=True)
            return 2
        return 0
    loop(group)  # noclose, reduce-raise, sysexit
    return 0


def zygote() -> list[str]:
    """Fork a child per line of stdin; return the child's arguments in the child."""
    import torch  # noqa: F401 - imported once, before the forks
    import torch.distributed  # noqa: F401
    import torchft.coordination  # noqa: F401

    import spare_fast.torch  # noqa: F401

    children: list[int] = []
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        pid = os.fork()
        if pid == 0:
            out = os.open(words[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(out, 1)
            os.dup2(out, 2)
            os.close(out)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            while words[1].startswith("env:"):  # a torchrun's variables for this rank
                name, _, value = words.pop(1)[4:].partition("=")
                os.environ[name] = value
            return words[1:]
        children.append(pid)
        print(f"started {pid}", flush=True)
    for pid in children:
        status = os.waitpid(pid, 0)[1]
        rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        print(f"exit {pid} {rc}", flush=True)
    os._exit(0)


if __name__ == "__main__":
    args = zygote() if sys.argv[1:] == ["--zygote"] else sys.argv[1:]
    sys.exit(main(args))
