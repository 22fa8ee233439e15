"""Who may count in a quorum: checked quorum data, refusals, and the store values' shapes.

A :class:`~spare_fast.torch._membership.Membership` passes every quorum participant through
its :class:`Gate`: data that is malformed or does not verify with the run key is never
counted, a waiting replacement whose static run identity differs from this process's, or that
was a member before (replayed data), is never admitted. A refused process is told why under
``refused/{replica id}`` in the store, and stops when it reads that
(:meth:`Gate.check_refused`).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from spare_fast.torch._auth import RunKey, read_json
from spare_fast.torch._errors import AuthenticationError, IdentityMismatch
from spare_fast.torch._identity import STATIC_FIELDS, compare
from spare_fast.torch._settings import MemberSettings

__all__ = ["Gate", "valid_ids", "valid_view"]

log = logging.getLogger("spare_fast.torch")


def data_of(member: Any) -> dict[str, Any]:
    """The ``data`` a quorum participant sent, as a dict."""
    data = member.data
    return dict(json.loads(data) if isinstance(data, str) else data)


def valid_ids(v: Any) -> bool:
    """Whether ``v`` has the shape of an epoch's formation (a list of replica ids)."""
    return isinstance(v, list) and all(isinstance(r, str) for r in v)


def valid_view(v: Any) -> bool:
    """Whether ``v`` has the shape of a published view."""
    return (
        isinstance(v, dict)
        and isinstance(v.get("members"), list)
        and all(isinstance(g, int) for g in v["members"])
        and isinstance(v.get("replicas"), dict)
        and all(isinstance(r, str) for r in v["replicas"].values())
        and isinstance(v.get("prefix"), str)
        and isinstance(v.get("needs"), list)
        and all(isinstance(g, int) for g in v["needs"])
    )


class Gate:
    """The checks on one process's quorum participants.

    Parameters
    ----------
    settings : MemberSettings
        This process's membership settings (its group, the run's group count).
    replica_id : str
        This process's identity at the lighthouse.
    auth : RunKey
        The run key (or none).
    """

    def __init__(self, settings: MemberSettings, replica_id: str, auth: RunKey) -> None:
        self.me = settings.group
        self.n_groups = settings.n_groups
        self.replica_id = replica_id
        self.auth = auth
        #: Processes that were members and left: never admitted again (no replayed data).
        self.retired: set[str] = set()
        self._refused: set[str] = set()

    def participant(self, member: Any, store: Any) -> dict[str, Any] | None:
        """A quorum participant's data, checked; None (logged, and the process told it is
        refused) when it is malformed or does not verify with the run key."""
        rid = str(member.replica_id)
        try:
            d = data_of(member)
            ok = all(isinstance(d.get(k), int) for k in ("group", "epoch", "committed"))
            ok = ok and 0 <= d["group"] < self.n_groups
        except Exception:  # noqa: BLE001 - malformed data from a process: ignored
            ok = False
        if not ok:
            self.refuse(store, rid, "identity", "malformed quorum data")
            return None
        if not self.auth.verify_data(d, rid):
            self.refuse(store, rid, "auth", "quorum data does not verify with the run key")
            return None
        d["replica_id"] = rid
        return d

    def admissible(self, d: dict[str, Any], identity: Any, store: Any) -> bool:
        """Whether a waiting replacement may be admitted: not a former member, and its static
        identity equal to ``identity`` (this process's; else it is refused)."""
        rid = d["replica_id"]
        if rid in self.retired:
            return False
        if identity is None:
            return True
        try:
            compare({self.me: identity, d["group"]: d.get("identity")}, STATIC_FIELDS)
        except IdentityMismatch as exc:
            why = str(exc).replace("before step 0", "of a replacement")
            self.refuse(store, rid, "identity", why)
            return False
        return True

    def refuse(self, store: Any, replica_id: str, kind: str, reason: str) -> None:
        """Log (once) that ``replica_id`` is not counted, and tell it why."""
        if replica_id in self._refused:
            return
        self._refused.add(replica_id)
        log.warning("group %d: process %s refused: %s", self.me, replica_id, reason)
        try:
            store.set(f"refused/{replica_id}", json.dumps({"kind": kind, "why": reason}))
        except Exception:  # noqa: BLE001 - the refusal note is a courtesy to the refused
            pass

    def check_refused(self, store: Any) -> None:
        """Raise if the members refused this process (:class:`AuthenticationError` for want of
        the run key, :class:`IdentityMismatch` for a different run)."""
        note = read_json(store, f"refused/{self.replica_id}", lambda v: isinstance(v, dict))
        if note is None:
            return
        why = f"group {self.me} ({self.replica_id}) refused by the run: {note.get('why')}"
        if note.get("kind") == "auth":
            raise AuthenticationError(why)
        raise IdentityMismatch(why, field="replacement")
