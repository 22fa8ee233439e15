"""The run key: HMAC-SHA256 over what the groups of a run tell each other.

A run is given a shared secret (``SPARE_FAST_RUN_KEY``, or a key file). With it,

- every value a process writes to the run's store is written as ``hmac-sha256:<hex>:<text>``,
  the MAC covering the store key's name and the text, so a value cannot be forged nor moved
  from one key to another; a reader refuses (logs and ignores) a value that does not verify;
- every quorum request's data carries a MAC over its fields (the group, its process, the
  epoch, its progress, its identity and a fresh nonce): a process without the key is never
  counted in a quorum, so it is never admitted as a replacement;
- heal payloads and checkpoint files carry a MAC over their bytes.

Without a key the run works unauthenticated, as any process that reaches the store and the
lighthouse could then change it; a warning says so once per process. Counters written with
``TCPStore.add`` (the join count) cannot carry a MAC: a forged count only makes the members
run one more admission quorum, and a malformed one is logged and repaired.

The MAC is :func:`hmac.new` with SHA-256 (RFC 2104); comparisons use
:func:`hmac.compare_digest`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
from collections.abc import Callable
from typing import Any

from spare_fast.torch._errors import AuthenticationError

__all__ = ["AuthenticationError", "RunKey", "read_json"]

log = logging.getLogger("spare_fast.torch")

#: Environment variable holding the run key (its text, UTF-8).
KEY_ENV = "SPARE_FAST_RUN_KEY"
_PREFIX = "hmac-sha256:"
_warned = False
_logged: set[tuple[str, str]] = set()


def _once(key: str, text: str, message: str) -> None:
    """Log ``message`` once per store key and value (a poller reads the same bad value often)."""
    if (key, text[:200]) not in _logged:
        _logged.add((key, text[:200]))
        log.warning(message)


class RunKey:
    """The run's shared secret, or none.

    Parameters
    ----------
    key : bytes or None
        The secret; None runs unauthenticated.
    """

    def __init__(self, key: bytes | None) -> None:
        if key is not None and len(key) == 0:
            raise ValueError("run key is empty")
        self._key = key

    @classmethod
    def resolve(cls, run_key: str | bytes | None = None, key_file: str | None = None) -> RunKey:
        """The key given, else the one in ``key_file``, else ``SPARE_FAST_RUN_KEY``, else none.

        Raises
        ------
        ValueError
            If both ``run_key`` and ``key_file`` are given, or the key is empty.
        OSError
            If ``key_file`` cannot be read.
        """
        if run_key is not None and key_file is not None:
            raise ValueError("give run_key or key_file, not both")
        if key_file is not None:
            with open(key_file, "rb") as fh:
                raw = fh.read().strip()
            if not raw:
                raise ValueError(f"key_file = {key_file!r} is empty")
            return cls(raw)
        if run_key is None:
            text = os.environ.get(KEY_ENV, "")
            run_key = text if text.strip() else None
        if run_key is None:
            return cls(None)
        key = run_key.encode() if isinstance(run_key, str) else bytes(run_key)
        if not key.strip():
            raise ValueError("run_key is empty")
        return cls(key)

    @property
    def enabled(self) -> bool:
        """Whether a key is set."""
        return self._key is not None

    @property
    def secret(self) -> bytes | None:
        """The key's bytes (for :class:`~spare_fast.torch._checkpoint.Checkpoints`)."""
        return self._key

    def warn_if_unauthenticated(self) -> None:
        """Log once per process that membership is unauthenticated (no key)."""
        global _warned
        if self._key is None and not _warned:
            _warned = True
            log.warning(
                "spare_fast: no run key (%s or key_file=): membership, heal payloads and "
                "checkpoints are unauthenticated; any process that reaches the store and the "
                "lighthouse can change the run",
                KEY_ENV,
            )

    # ------------------------------------------------------------------ bytes
    def mac(self, *parts: bytes) -> str:
        """Hex HMAC-SHA256 of ``parts`` (length-prefixed, so the split is bound too)."""
        assert self._key is not None
        h = hmac.new(self._key, digestmod=hashlib.sha256)
        for part in parts:
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
        return h.hexdigest()

    def seal(self, payload: bytes) -> bytes:
        """``payload`` preceded by its 32-byte MAC (unchanged without a key)."""
        if self._key is None:
            return payload
        return bytes.fromhex(self.mac(b"payload", payload)) + payload

    def unseal(self, sealed: bytes, what: str) -> bytes:
        """The inverse of :meth:`seal`; :class:`AuthenticationError` naming ``what`` if the MAC
        does not verify."""
        if self._key is None:
            return sealed
        tag, payload = sealed[:32].hex(), sealed[32:]
        if len(sealed) < 32 or not hmac.compare_digest(tag, self.mac(b"payload", payload)):
            raise AuthenticationError(f"{what}: MAC does not verify with the run key")
        return payload

    # ------------------------------------------------------------------ store values
    def wrap(self, name: str, text: str) -> str:
        """The value to write under store key ``name``."""
        if self._key is None:
            return text
        return f"{_PREFIX}{self.mac(name.encode(), text.encode())}:{text}"

    def unwrap(self, name: str, raw: bytes | str) -> str | None:
        """The text of a value read from ``name``; None (logged) when it does not verify."""
        text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
        if self._key is None:
            return text
        head, sep, rest = text.partition(":")
        tag, sep2, body = rest.partition(":")
        if (
            f"{head}:" != _PREFIX
            or not sep
            or not sep2
            or not hmac.compare_digest(tag, self.mac(name.encode(), body.encode()))
        ):
            _once(name, text, f"store key {name}: value does not verify with the run key; ignored")
            return None
        return body

    @staticmethod
    def keyed(raw: bytes | str) -> bool:
        """Whether a store value was written with a run key."""
        text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
        return text.startswith(_PREFIX)

    # ------------------------------------------------------------------ quorum data
    def sign_data(self, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` with a fresh nonce and a MAC over every field (unchanged without a key)."""
        if self._key is None:
            return data
        out = dict(data, nonce=os.urandom(12).hex())
        out["mac"] = self.mac(b"quorum", _canonical(out))
        return out

    def verify_data(self, data: dict[str, Any], replica_id: str) -> bool:
        """Whether quorum ``data`` from ``replica_id`` carries a valid MAC (True without a key).

        The MAC covers the replica id the data names; the lighthouse's replica id must be
        that one.
        """
        if self._key is None:
            return True
        tag = data.get("mac")
        body = {k: v for k, v in data.items() if k != "mac"}
        if not isinstance(tag, str) or body.get("replica") != replica_id:
            return False
        return hmac.compare_digest(tag, self.mac(b"quorum", _canonical(body)))


def _canonical(data: dict[str, Any]) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def read_json(
    store: Any, key: str, valid: Callable[[Any], bool], run_key: RunKey | None = None
) -> Any:
    """The JSON value of store ``key``, verified and checked by ``valid``; None when absent,
    or (logged) when it does not verify, does not parse or is not valid. Never raises for a
    bad value: a malformed store write is a message, not a crash."""
    try:
        if not store.check([key]):
            return None
        raw = store.get(key)
    except Exception as exc:  # noqa: BLE001 - a store that fails to answer: nothing read
        log.warning("store key %s: cannot be read (%s)", key, exc)
        return None
    text = (run_key or RunKey(None)).unwrap(key, raw)
    if text is None:
        return None
    try:
        value = json.loads(text)
        ok = bool(valid(value))
    except Exception:  # noqa: BLE001 - json errors and a validator tripping on a bad shape
        ok = False
    if not ok:
        _once(key, text, f"store key {key}: malformed value {text[:80]!r} ignored")
        return None
    return value
