"""The run's membership service: the torchft lighthouse and the ``TCPStore``, on one address.

:func:`serve` is the one place that starts them; ``spare-fast lighthouse`` (the command line),
:class:`~spare_fast.torch.SpareTrainer` (its launcher) and the test harnesses all call it.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any

__all__ = ["Service", "serve"]


@dataclass
class Service:
    """A served lighthouse and store; :meth:`shutdown` (or ``with``) stops them.

    Attributes
    ----------
    host : str
        The address both listen on.
    lighthouse_addr : str
        ``http://HOST:PORT`` of the lighthouse (``TORCHFT_LIGHTHOUSE``).
    store_addr : str
        ``HOST:PORT`` of the store (``SPARE_FAST_STORE``).
    store : torch.distributed.TCPStore
        The store's master handle (the launcher reads and writes keys through it).
    lighthouse : torchft.coordination.LighthouseServer
        The lighthouse server.
    """

    host: str
    lighthouse_addr: str
    store_addr: str
    store: Any
    lighthouse: Any

    @property
    def store_port(self) -> int:
        """The store's port."""
        return int(self.store.port)

    def shutdown(self) -> None:
        """Stop the lighthouse and drop this handle's store."""
        self.lighthouse.shutdown()
        self.store = None

    def __enter__(self) -> Service:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


class ServeError(OSError):
    """The lighthouse or the store cannot listen where asked (``what`` names which)."""

    def __init__(self, what: str, message: str) -> None:
        super().__init__(message)
        self.what = what


def serve(
    host: str,
    port: int = 0,
    *,
    store_port: int | None = 0,
    min_replicas: int = 1,
    join_timeout_ms: int = 60_000,
    heartbeat_timeout_ms: int = 2_000,
    quorum_tick_ms: int = 20,
) -> Service:
    """Serve the lighthouse on ``host:port`` and the ``TCPStore`` on ``host:store_port``.

    Parameters
    ----------
    host : str
        IP address both bind to (an IPv6 literal without brackets); the store listens on this
        address only.
    port : int, optional
        Lighthouse port; 0 picks a free one.
    store_port : int or None, optional
        Store port; 0 picks a free one, None takes the lighthouse's port + 1.
    min_replicas, join_timeout_ms, heartbeat_timeout_ms, quorum_tick_ms : int, optional
        The lighthouse's settings (a quorum never forms without a member that still
        heartbeats within ``join_timeout_ms``).

    Returns
    -------
    Service

    Raises
    ------
    ServeError
        If the lighthouse (``what == "lighthouse"``) or the store (``what == "store"``) cannot
        listen there; nothing is left running.
    """
    # torchft's Rust side logs every quorum round at INFO level to stderr; keep warnings only
    # unless the caller asked for more (read once, when torchft is first imported).
    os.environ.setdefault("RUST_LOG", "warn")
    import torch.distributed as dist
    from torchft.coordination import LighthouseServer

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    try:
        lighthouse = LighthouseServer(
            bind=f"{shown}:{int(port)}",
            min_replicas=int(min_replicas),
            join_timeout_ms=int(join_timeout_ms),
            quorum_tick_ms=int(quorum_tick_ms),
            heartbeat_timeout_ms=int(heartbeat_timeout_ms),
        )
    except Exception as exc:  # noqa: BLE001 - the Rust side raises plain RuntimeErrors
        raise ServeError(
            "lighthouse", f"cannot serve the lighthouse on {shown}:{port} ({exc})"
        ) from None
    lh_port = int(lighthouse.address().rsplit(":", 1)[1])
    wanted = lh_port + 1 if store_port is None else int(store_port)
    # The store listens on this address only (TCPStore's own listener binds every interface).
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, wanted))
        sock.listen(1024)
    except OSError as exc:
        sock.close()
        lighthouse.shutdown()
        raise ServeError("store", f"cannot listen on {host} port {wanted} ({exc})") from None
    store = dist.TCPStore(
        host,
        sock.getsockname()[1],
        is_master=True,
        wait_for_workers=False,
        master_listen_fd=sock.fileno(),
    )
    sock.detach()  # the store owns the listening socket now
    return Service(
        host=host,
        lighthouse_addr=f"http://{shown}:{lh_port}",
        store_addr=f"{shown}:{store.port}",
        store=store,
        lighthouse=lighthouse,
    )
