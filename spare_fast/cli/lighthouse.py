"""``spare-fast lighthouse``: the membership service of a multi-host run, standalone.

It serves the torchft lighthouse (heartbeats, failure detection, quorums) and the run's
``torch.distributed`` ``TCPStore`` (the rendezvous of every agreed process group), both bound to
the one address given, until SIGINT or SIGTERM. Every training process points at it with
``TORCHFT_LIGHTHOUSE=http://HOST:PORT`` and ``SPARE_FAST_STORE=HOST:STORE_PORT`` (see the
README section "PyTorch executor").
"""

from __future__ import annotations

import argparse
import ipaddress
import signal
import threading
from typing import Any

from spare_fast.cli._common import UsageError, int_at_least, require

# The largest count or time in milliseconds (about 24.8 days) an option takes: the lighthouse
# adds the times to its clock, where larger values would overflow instead of being refused here.
MAX_OPTION = 2**31 - 1


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "lighthouse",
        help="serve the torchft lighthouse and the run's TCPStore for multi-host SpareGroup runs",
    )
    p.add_argument(
        "--bind",
        required=True,
        type=_bind_arg,
        metavar="HOST:PORT",
        help="IP address and port of the lighthouse (port 0: any free port)",
    )
    p.add_argument(
        "--store-port",
        type=int_at_least(0, 65535),
        default=None,
        metavar="PORT",
        help="port of the TCPStore on the same address (default: lighthouse port + 1; 0: any)",
    )
    p.add_argument(
        "--min-replicas",
        type=int_at_least(1, MAX_OPTION),
        default=1,
        help="smallest quorum (default 1)",
    )
    p.add_argument(
        "--join-timeout-ms",
        type=int_at_least(1, MAX_OPTION),
        default=60_000,
        help="longest wait of a quorum for a heartbeating member (default 60000)",
    )
    p.add_argument(
        "--heartbeat-timeout-ms",
        type=int_at_least(1, MAX_OPTION),
        default=2_000,
        help="a member whose heartbeats stop this long is dead (default 2000)",
    )
    p.add_argument(
        "--quorum-tick-ms",
        type=int_at_least(1, MAX_OPTION),
        default=20,
        help="quorum check period (default 20)",
    )
    p.set_defaults(func=run)


def parse_bind(text: str) -> tuple[str, int]:
    """``HOST:PORT`` with an IP literal (``[::1]:PORT`` for IPv6) -> ``(host, port)``.

    Raises
    ------
    ValueError
        Naming the bad value.

    Examples
    --------
    >>> parse_bind("127.0.0.2:29510")
    ('127.0.0.2', 29510)
    """
    host, sep, port = text.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not (port.isascii() and port.isdigit()) or not 0 <= int(port) <= 65535:
        raise ValueError(f"--bind = {text!r} is not HOST:PORT with PORT in [0, 65535]")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(f"--bind = {text!r}: host {host!r} is not an IP address") from None
    return host, int(port)


def _bind_arg(text: str) -> tuple[str, int]:
    try:
        return parse_bind(text)
    except ValueError as exc:
        # argparse shows the message after the option's name: drop the name from it.
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--bind ")) from None


def run(args: argparse.Namespace) -> int:
    host, port = args.bind
    require("torch", "spare-fast lighthouse")
    require("torchft", "spare-fast lighthouse")
    from spare_fast.torch._serve import ServeError, serve

    try:
        service = serve(
            host,
            port,
            store_port=args.store_port,
            min_replicas=int(args.min_replicas),
            join_timeout_ms=int(args.join_timeout_ms),
            quorum_tick_ms=int(args.quorum_tick_ms),
            heartbeat_timeout_ms=int(args.heartbeat_timeout_ms),
        )
    except ServeError as exc:
        flag = "--bind" if exc.what == "lighthouse" else "--store-port"
        raise UsageError(f"{flag}: {exc}") from None
    from spare_fast.torch._watchdog import publish_heartbeat_timeout

    # The group processes' watchdogs kill a silent process after the same timeout.
    publish_heartbeat_timeout(service.store, args.heartbeat_timeout_ms / 1000)
    done = threading.Event()

    def stop(signum: int, frame: Any) -> None:
        done.set()

    # Installed before the address is printed: whoever reads it may stop us at once.
    old = signal.signal(signal.SIGTERM, stop)
    print(
        f"lighthouse {service.lighthouse_addr}  store {service.store_addr}  (Ctrl-C to stop)",
        flush=True,
    )
    try:
        while not done.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, old)
        service.shutdown()
    return 0
