"""Reading and writing controller snapshots field by field, for tests that forge them.

Mirrors csrc/src/controller_snapshot.cpp (versions 1 and 2): a forged snapshot gets a valid
checksum, so only restore's own checks stand between it and the controller.
"""

from __future__ import annotations

import struct

MAGIC = b"SPFCTLR1"
_HEAD = [
    ("version", "I"),
    ("n_groups", "i"),
    ("height", "i"),
    ("depth", "i"),
    ("initial_depth", "i"),
    ("wiped", "B"),
    ("events", "Q"),
    ("unit", "B"),
    ("initial_moves", "q"),
    ("initial_swaps", "q"),
]
_ARRAYS = {
    1: [
        ("initial_stacks", "i"),
        ("stacks", "i"),
        ("move_cost", "q"),
        ("alive", "B"),
        ("assignment", "i"),
        ("initial_assignment", "i"),
    ],
    2: [
        ("layout_stacks", "i"),
        ("initial_stacks", "i"),
        ("stacks", "i"),
        ("move_cost", "q"),
        ("alive", "B"),
        ("assignment", "i"),
        ("initial_assignment", "i"),
        ("meta", "c"),
    ],
}


def fnv1a(data: bytes) -> int:
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & (2**64 - 1)
    return h


def parse(blob: bytes) -> dict:
    assert blob[:8] == MAGIC
    off = 8
    out: dict = {}
    for name, fmt in _HEAD:
        (out[name],) = struct.unpack_from("<" + fmt, blob, off)
        off += struct.calcsize(fmt)
    for name, fmt in _ARRAYS[out["version"]]:
        (n,) = struct.unpack_from("<Q", blob, off)
        off += 8
        size = struct.calcsize(fmt)
        raw = blob[off : off + n * size]
        out[name] = raw if fmt == "c" else list(struct.unpack(f"<{n}{fmt}", raw))
        off += n * size
    assert off == len(blob) - 8
    return out


def build(fields: dict) -> bytes:
    body = bytearray(MAGIC)
    for name, fmt in _HEAD:
        body += struct.pack("<" + fmt, fields[name])
    for name, fmt in _ARRAYS[fields["version"]]:
        v = fields[name]
        body += struct.pack("<Q", len(v))
        body += v if fmt == "c" else struct.pack(f"<{len(v)}{fmt}", *v)
    return bytes(body) + struct.pack("<Q", fnv1a(bytes(body)))
