"""Checkpoint files: atomic, checksummed, newest valid one wins.

A checkpoint is one file ``ckpt-<step>.pt`` in the run's ``checkpoints`` folder: a one-line
magic header, the SHA-256 of the payload in hex, a newline, then the ``torch.save`` payload.
It is written to a temporary name in the same folder, flushed to disk and renamed over the
final name, so a writer killed at any moment leaves either the old file or the new one, never
a torn file under the final name. The checksum catches what the rename cannot: a file damaged
after it was written (disk, copy, a user's editor).

With a run key the file also carries an HMAC-SHA256 of the payload under that key (a second
header line): a file edited and given a recomputed SHA-256 is refused, and so is a file
written without the key. Without a key both kinds of file load (the SHA-256 is checked).
"""

from __future__ import annotations

import hashlib
import hmac
import io
import os
import re
from dataclasses import dataclass, field
from typing import Any

import torch

from spare_fast.torch._errors import CheckpointError, ProtocolError

__all__ = ["CheckpointError", "Checkpoints", "load_training", "save_training"]

_MAGIC = b"SPARE-FAST-CHECKPOINT-1\n"
_MAGIC_KEYED = b"SPARE-FAST-CHECKPOINT-2\n"
_NAME = re.compile(r"^ckpt-(\d{8})\.pt$")


def _mac(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, b"checkpoint\0" + payload, hashlib.sha256).hexdigest().encode("ascii")


@dataclass(frozen=True)
class Checkpoints:
    """The checkpoint folder of one run.

    Parameters
    ----------
    folder : str
        Where the ``ckpt-<step>.pt`` files live (created on first write).
    keep : int
        How many of the newest checkpoints to keep; older ones are removed after each write.
        At least 2, so that a damaged newest file still leaves one to fall back on.
    key : bytes, optional
        The run key: files are written with its HMAC and only files that verify load.
    """

    folder: str
    keep: int = 3
    key: bytes | None = field(default=None, repr=False)

    def path(self, step: int) -> str:
        """The file name of the checkpoint taken after ``step`` committed steps."""
        return os.path.join(self.folder, f"ckpt-{int(step):08d}.pt")

    def steps(self) -> list[int]:
        """Steps of the checkpoint files present, newest first (valid or not)."""
        if not os.path.isdir(self.folder):
            return []
        found = (_NAME.match(name) for name in os.listdir(self.folder))
        return sorted((int(m.group(1)) for m in found if m), reverse=True)

    def save(self, step: int, state: dict[str, Any]) -> str:
        """Write ``state`` as the checkpoint of ``step`` atomically; return its path."""
        os.makedirs(self.folder, exist_ok=True)
        buf = io.BytesIO()
        torch.save(state, buf)
        payload = buf.getvalue()
        final = self.path(step)
        tmp = os.path.join(self.folder, f".{os.path.basename(final)}.tmp-{os.getpid()}")
        with open(tmp, "wb") as fh:
            fh.write(_MAGIC if self.key is None else _MAGIC_KEYED)
            fh.write(hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n")
            if self.key is not None:
                fh.write(_mac(self.key, payload) + b"\n")
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
        # The rename is durable only once the folder entry is on disk too.
        fd = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        for old in self.steps()[max(int(self.keep), 2) :]:
            try:
                os.remove(self.path(old))
            except FileNotFoundError:  # another writer of the same run removed it first
                pass
        return final

    @staticmethod
    def load(path: str, key: bytes | None = None) -> dict[str, Any]:
        """Read and verify one checkpoint file (with ``key``: its HMAC too).

        Raises:
            CheckpointError: If the header, the checksum, the MAC or the payload is bad, naming
                the file and what is wrong with it.
        """
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except OSError as exc:
            raise CheckpointError(f"checkpoint {path} cannot be read: {exc}") from exc
        keyed = raw.startswith(_MAGIC_KEYED)
        if not (keyed or raw.startswith(_MAGIC)):
            raise CheckpointError(f"checkpoint {path} has no spare_fast header")
        if key is not None and not keyed:
            raise CheckpointError(f"checkpoint {path} carries no MAC but a run key is set")
        digest, _, payload = raw[len(_MAGIC) :].partition(b"\n")
        tag = b""
        if keyed:
            tag, _, payload = payload.partition(b"\n")
        actual = hashlib.sha256(payload).hexdigest().encode("ascii")
        if digest != actual:
            raise CheckpointError(
                f"checkpoint {path} is corrupt: SHA-256 {actual.decode()} does not match the "
                f"recorded {digest.decode(errors='replace')}"
            )
        if key is not None and not hmac.compare_digest(tag, _mac(key, payload)):
            raise CheckpointError(
                f"checkpoint {path} is refused: its MAC does not verify with the run key "
                "(edited, or written under another key)"
            )
        try:
            blob = torch.load(io.BytesIO(payload), weights_only=True)
        except Exception as exc:  # noqa: BLE001 - any unpickling error means a bad file
            raise CheckpointError(f"checkpoint {path} has an unreadable payload: {exc}") from exc
        if not isinstance(blob, dict) or "step" not in blob:
            raise CheckpointError(f"checkpoint {path} does not hold a training state")
        return dict(blob)

    def newest_valid(self) -> tuple[str | None, list[tuple[str, str]]]:
        """The newest checkpoint that verifies, and every newer one rejected with the reason.

        Returns:
            ``(path, rejected)``: ``path`` is None when no checkpoint verifies; ``rejected``
            lists ``(path, reason)`` for the files skipped, newest first.
        """
        rejected: list[tuple[str, str]] = []
        for step in self.steps():
            path = self.path(step)
            try:
                self.load(path, self.key)
            except CheckpointError as exc:
                rejected.append((path, str(exc)))
                continue
            return path, rejected
        return None, rejected

    def remove_partial(self) -> None:
        """Remove temporary files left by writers killed mid-write."""
        if not os.path.isdir(self.folder):
            return
        for name in os.listdir(self.folder):
            if name.startswith(".ckpt-") and ".tmp-" in name:
                try:
                    os.remove(os.path.join(self.folder, name))
                except FileNotFoundError:
                    pass


def save_training(
    ckpts: Checkpoints, step: int, model: Any, optimizer: Any, scheduler: Any, seed: int
) -> str:
    """Write the checkpoint of ``step``: model, optimizer, scheduler, generator state, seed."""
    return ckpts.save(
        step,
        {
            "step": step,
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": None if scheduler is None else scheduler.state_dict(),
            "rng": torch.get_rng_state(),
            "seed": seed,
        },
    )


def load_training(
    path: str, model: Any, optimizer: Any, scheduler: Any, key: bytes | None = None
) -> int:
    """Load the checkpoint ``path`` into ``model``, ``optimizer``, ``scheduler`` and the
    generator; returns its step.

    Raises
    ------
    CheckpointError
        If the file is unreadable.
    ProtocolError
        If it has no scheduler state while ``scheduler`` is given (nothing is loaded then).

    ``key``: the run key; the file must carry its MAC.
    """
    blob = Checkpoints.load(path, key)
    if scheduler is not None and blob.get("scheduler") is None:
        raise ProtocolError(f"checkpoint {path} has no LR scheduler state")
    model.load_state_dict(blob["model"])
    optimizer.load_state_dict(blob["optimizer"])
    if scheduler is not None:
        scheduler.load_state_dict(blob["scheduler"])
    torch.set_rng_state(blob["rng"])
    return int(blob["step"])
