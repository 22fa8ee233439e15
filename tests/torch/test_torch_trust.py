"""Nothing silently wrong, nobody gets in: the run identity, the run key, validated store
reads, keyed checkpoints and heal payloads, the public exceptions and their exit codes.

Multi-process runs use the own-loop harness (real processes, a lighthouse and a store in this
process, all on 127.0.0.2).
"""

from __future__ import annotations

import glob
import hashlib
import io
import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest
import torch
from _torch_harness import LoopRun, max_rel_diff, reference_params

from spare_fast import Layout
from spare_fast.torch import (
    EXIT_CODES,
    AuthenticationError,
    CheckpointError,
    Checkpoints,
    Excluded,
    IdentityMismatch,
    RunFinished,
    TrainSpec,
    WipeOutError,
    exit_code,
    mlp,
)
from spare_fast.torch._auth import RunKey, read_json
from spare_fast.torch._membership import valid_view
from spare_fast.torch._serve import serve

STEPS = 10
LAYOUT = Layout.cyclic(4, 2)
KEY = "test-run-key"


@pytest.fixture(scope="module")
def reference() -> dict[str, torch.Tensor]:
    spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, STEPS)
    return reference_params(spec, LAYOUT.n_types)


def _error(run: LoopRun, slot: int) -> str:
    group, proc = run.procs[slot]
    path = os.path.join(run.out, f"error-g{group}-p{proc.pid}.txt")
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _finished(run: LoopRun, slots: list[int], reference: dict[str, torch.Tensor]) -> None:
    codes = run.join()
    for slot in slots:
        assert codes[slot] == 0, f"slot {slot} ended {codes[slot]}"
        group, proc = run.procs[slot]
        params = torch.load(
            os.path.join(run.out, f"final-g{group}-p{proc.pid}.pt"), weights_only=True
        )
        assert max_rel_diff(params, reference) <= 1e-10, f"slot {slot} differs"


# ---------------------------------------------------------------------- the run identity
@pytest.mark.parametrize(
    ("field", "options"),
    [
        ("seed", {"seed": 5}),
        ("stacks", {"stacks": [[0, 2], [1, 3], [2, 0], [3, 1]]}),
    ],
)
def test_a_group_of_another_run_stops_every_group_before_step_0(tmp_path, field, options) -> None:
    with LoopRun(LAYOUT, STEPS, str(tmp_path)) as run:
        for g in range(3):
            run.start(g)
        run.start(3, **options)
        codes = run.join(timeout=40)
        # Every group stops with the identity's exit code (a stall would end in the quorum
        # timeout's TimeoutError instead).
        assert codes == {s: exit_code(IdentityMismatch("")) for s in range(4)}, codes
        for slot in range(4):
            line = _error(run, slot)
            assert line.count("\n") == 1 and f"{field} differs" in line, line
            assert "groups [0, 1, 2]" in line and "groups [3]" in line, line
            assert run.state(slot)[1] == 0, "no step may be committed"
    assert not glob.glob(os.path.join(str(tmp_path), "final-*.pt"))


# ---------------------------------------------------------------------- the run key
def test_forged_store_writes_are_ignored_with_a_run_key(tmp_path, reference) -> None:
    with LoopRun(LAYOUT, STEPS, str(tmp_path), pause=0.1) as run:
        slots = [run.start(g, run_key=KEY) for g in range(4)]
        run.wait(lambda: min(run.state(s)[1] for s in slots) >= 2)
        # Anyone who reaches the store: a view without the others, a finished epoch, a
        # malformed join count (the lowest member reads it every step).
        forged = {"members": [0], "replicas": {"0": "g0:1"}, "prefix": "x", "needs": []}
        run.store.set("e0/view", json.dumps(forged))
        run.store.set("e0/finished", "3")
        run.store.set("join/count", "x")
        _finished(run, slots, reference)


def test_replacements_without_the_run_key_are_refused_and_one_with_it_rejoins(
    tmp_path,
) -> None:
    os.environ.pop("SPARE_FAST_RUN_KEY", None)
    steps = 60
    with LoopRun(LAYOUT, steps, str(tmp_path), pause=0.1) as run:
        slots = [run.start(g, run_key=KEY) for g in range(4)]
        run.wait(lambda: run.state(3)[1] >= 2)
        run.kill(3)
        run.wait(lambda: min(run.state(s)[1] for s in range(3)) >= 4)
        # No key: it sees the run is keyed and stops. Another key: its quorum data does not
        # verify, the members refuse it and tell it so. Another seed: its identity differs.
        # One at a time: a second process for a group while another is alive is refused as a
        # duplicate (docs/guide/executor-operation.md), which is not what this test checks.
        bad = []
        for options, error in (
            ({}, AuthenticationError()),
            ({"run_key": "another key"}, AuthenticationError()),
            ({"run_key": KEY, "seed": 5}, IdentityMismatch("")),  # the key, another run's seed
        ):
            slot = run.start(3, **options)
            bad.append(slot)
            run.wait(lambda slot=slot: run.procs[slot][1].exitcode is not None, timeout=40)
            assert run.procs[slot][1].exitcode == exit_code(error), _error(run, slot)
            assert "refused" in _error(run, slot), _error(run, slot)
        other_run = bad[-1]
        assert "seed differs" in _error(run, other_run)
        assert max(run.state(s)[1] for s in range(3)) < steps - 4, "no steps left to rejoin"
        good = run.start(3, run_key=KEY)
        spec = TrainSpec(mlp.build_mlp, mlp.make_sgd, mlp.mse_loss, mlp.synthetic_shard, steps)
        _finished(run, [*slots[:3], good], reference_params(spec, LAYOUT.n_types))


def test_malformed_store_values_are_logged_and_ignored(caplog) -> None:
    with serve("127.0.0.2") as service:
        store = service.store
        store.set("wipeout/0", "[7]")
        store.set("e0/view", "{not json")
        store.set("e1/view", json.dumps({"members": "all"}))

        def groups(v: object) -> bool:
            return isinstance(v, list) and all(isinstance(g, int) and 0 <= g < 4 for g in v)

        assert read_json(store, "wipeout/0", groups) is None
        assert read_json(store, "e0/view", valid_view) is None
        assert read_json(store, "e1/view", valid_view) is None
        assert read_json(store, "absent", valid_view) is None
        # With a key, a well-formed value without its MAC is refused; a sealed one is read.
        key = RunKey(b"k")
        store.set("wipeout/1", "[1, 2]")
        assert read_json(store, "wipeout/1", groups, key) is None
        store.set("wipeout/2", key.wrap("wipeout/2", "[1, 2]"))
        assert read_json(store, "wipeout/2", groups, key) == [1, 2]
        # A MAC binds the key's name: the same value moved to another key does not verify.
        store.set("wipeout/3", key.wrap("wipeout/2", "[1, 2]"))
        assert read_json(store, "wipeout/3", groups, key) is None
    assert any("wipeout/0" in r.getMessage() for r in caplog.records)


def test_keyed_checkpoint_edited_with_its_sha256_recomputed_is_refused(tmp_path) -> None:
    key = b"secret"
    ckpts = Checkpoints(str(tmp_path), key=key)
    path = ckpts.save(4, {"step": 4, "w": torch.ones(3)})
    assert Checkpoints.load(path, key)["step"] == 4
    with open(path, "rb") as fh:
        raw = fh.read()
    magic, digest, tag, payload = raw.split(b"\n", 3)
    blob = torch.load(io.BytesIO(payload), weights_only=True)
    blob["w"] = blob["w"] * 50
    buf = io.BytesIO()
    torch.save(blob, buf)
    forged = buf.getvalue()
    new_digest = hashlib.sha256(forged).hexdigest().encode()
    with open(path, "wb") as fh:
        fh.write(b"\n".join([magic, new_digest, tag, forged]))
    assert Checkpoints.load(path)["w"][0] == 50  # the SHA-256 alone does not see it
    with pytest.raises(CheckpointError, match="MAC does not verify"):
        Checkpoints.load(path, key)
    assert ckpts.newest_valid()[0] is None
    # A file written without the key is refused too when a key is set.
    plain = Checkpoints(str(tmp_path / "plain")).save(1, {"step": 1})
    with pytest.raises(CheckpointError, match="carries no MAC"):
        Checkpoints.load(plain, key)
    assert Checkpoints.load(plain)["step"] == 1


def test_heal_payload_and_quorum_data_are_sealed() -> None:
    key, other = RunKey(b"a"), RunKey(b"b")
    sealed = key.seal(b"state bytes")
    assert key.unseal(sealed, "heal payload") == b"state bytes"
    tampered = sealed[:-1] + bytes([sealed[-1] ^ 1])
    with pytest.raises(AuthenticationError, match="heal payload"):
        key.unseal(tampered, "heal payload")
    with pytest.raises(AuthenticationError):
        other.unseal(sealed, "heal payload")
    data = key.sign_data({"group": 3, "epoch": 0, "replica": "g3:1"})
    assert key.verify_data(data, "g3:1")
    assert not key.verify_data(data, "g3:2")  # another process's identity
    assert not other.verify_data(data, "g3:1")
    assert not key.verify_data(dict(data, group=2), "g3:1")
    assert data["nonce"] != key.sign_data({"group": 3, "epoch": 0, "replica": "g3:1"})["nonce"]
    assert RunKey(None).seal(b"x") == b"x" and RunKey(None).verify_data({}, "any")


def test_run_key_from_argument_file_or_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SPARE_FAST_RUN_KEY", "from-env")
    assert RunKey.resolve().secret == b"from-env"
    key_file = tmp_path / "key"
    key_file.write_bytes(b"from-file\n")
    assert RunKey.resolve(key_file=str(key_file)).secret == b"from-file"
    assert RunKey.resolve("arg").secret == b"arg"
    with pytest.raises(ValueError, match="not both"):
        RunKey.resolve("arg", str(key_file))
    monkeypatch.delenv("SPARE_FAST_RUN_KEY")
    assert not RunKey.resolve().enabled


def test_the_lighthouse_listens_on_the_given_address_only() -> None:
    with serve("127.0.0.3") as service:
        port = int(service.lighthouse_addr.rsplit(":", 1)[1])
        socket.create_connection(("127.0.0.3", port), timeout=5).close()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.4", port), timeout=5).close()


# ---------------------------------------------------------------------- public exceptions
def test_every_exception_a_loop_can_meet_is_public_with_its_exit_code() -> None:
    import spare_fast.torch as public

    for name in ("Excluded", "RunFinished", "WipeOutError", "IdentityMismatch",
                 "AuthenticationError", "CheckpointError", "ProtocolError"):  # fmt: skip
        cls = getattr(public, name)
        assert name in public.__all__ and "What to do" in (cls.__doc__ or ""), name
    codes = [code for _, code in EXIT_CODES]
    assert exit_code(Excluded()) == 3 and exit_code(RunFinished()) == 4
    assert exit_code(TimeoutError()) == 9 and exit_code(ValueError()) == 1
    assert exit_code(WipeOutError.__new__(WipeOutError)) == 5
    assert 0 not in codes and 1 not in codes


def test_leaving_a_with_block_never_aborts_the_interpreter(tmp_path) -> None:
    # Two plain processes (no os._exit) run a short own loop inside ``with SpareGroup`` and
    # leave the interpreter normally, one of them through an exception.
    script = tmp_path / "worker.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys, torch
            from spare_fast import Layout
            from spare_fast.torch import SpareGroup, mlp
            group, lighthouse, store, fail = sys.argv[1:5]
            torch.set_num_threads(1)
            model = mlp.build_mlp()
            optim = mlp.make_sgd(model.parameters())
            def compute(step, t):
                x, y = mlp.synthetic_shard(step, t)
                return mlp.mse_loss(model(x), y)
            with SpareGroup(model, optim, Layout.cyclic(2, 1), 2, group=int(group),
                            lighthouse=lighthouse, store=store, bind="127.0.0.2") as g:
                g.start()
                while g.step < 2:
                    g.reduce(compute)
                    optim.step()
                    g.step_end()
                if fail == "1":
                    raise SystemExit(3)
            """
        )
    )
    with serve("127.0.0.2", join_timeout_ms=30_000) as service:
        env = dict(os.environ, RUST_LOG="warn")
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    str(script),
                    str(g),
                    service.lighthouse_addr,
                    service.store_addr,
                    str(g),
                ],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )  # fmt: skip
            for g in range(2)
        ]
        outs = [p.communicate(timeout=90)[0].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 3], outs
