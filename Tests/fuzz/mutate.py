#!/usr/bin/env python3
"""Seeded, reproducible mutations of media files, for the mutation harness (harness.py).

Every mutation is a pure function of (the source's bytes, the seed): `mutate(data, seed)` returns the mutated
bytes and a one-line description of what was done, so a failing case is rebuilt from its recipe (source file,
seed) alone. Kinds, picked by the seed:

- flip        1-16 random bits, half of the time within the first 4 KiB (where headers are)
- zero        a run of 1-4096 bytes set to zero
- truncate    the file cut at a random length
- duplicate   a chunk copied to another place
- remove      a chunk cut out
- extreme     a 1/2/4/8-byte big- or little-endian field set to 0, 1, the largest or the smallest value
- mp4         container-aware, ISO BMFF: a box's size set to 0, 1, 2^32-1 or off by a little, a field of its
              payload (version/flags, counts, dimensions, durations) set to an extreme, its type changed, or the
              box removed or duplicated with every enclosing box's size fixed (a structurally valid file that
              lacks or repeats a box)
- mkv         container-aware, Matroska/EBML: an element's size set to "unknown", huge or off by a little, a
              leaf's value set to an extreme (PixelWidth 0, TimecodeScale 0, CodecID garbage …), or an element
              removed or duplicated with every enclosing element's size fixed
- ts          container-aware, MPEG-TS: a packet's PID, continuity counter, adaptation field length or PES
              header fields set to other or extreme values

Run alone: `mutate.py SOURCE SEED OUT` writes the mutation of SOURCE for SEED to OUT and prints its description.
"""

import random
import struct
import sys

KINDS = ["flip", "zero", "truncate", "duplicate", "remove", "extreme", "mp4", "mkv", "ts"]

# ISO BMFF boxes whose payload is a list of boxes (after `skip` bytes of their own fields).
MP4_CONTAINERS = {
    b"moov": 0, b"trak": 0, b"mdia": 0, b"minf": 0, b"stbl": 0, b"edts": 0, b"dinf": 0, b"udta": 0,
    b"mvex": 0, b"moof": 0, b"traf": 0, b"mfra": 0, b"sinf": 0, b"schi": 0, b"ilst": 0, b"tref": 0,
    b"meta": 4, b"stsd": 8, b"dref": 8,
    # Sample entries: their fixed fields, then boxes (avcC, hvcC, esds, colr, pasp …).
    b"avc1": 78, b"avc3": 78, b"hvc1": 78, b"hev1": 78, b"av01": 78, b"vp09": 78, b"mp4v": 78,
    b"dvh1": 78, b"dvhe": 78, b"mp4a": 28, b"Opus": 28, b"ac-3": 28, b"ec-3": 28,
}

# Matroska master elements (their payload is a list of elements).
MKV_MASTERS = {
    0x1A45DFA3, 0x18538067, 0x114D9B74, 0x4DBB, 0x1549A966, 0x1654AE6B, 0xAE, 0xE0, 0xE1, 0x1F43B675,
    0xA0, 0x1C53BB6B, 0xBB, 0xB7, 0x1254C367, 0x7373, 0x63C0, 0x67C8, 0x1043A770, 0x45B9, 0xB6, 0x80,
    0x1941A469, 0x61A7, 0x6D80, 0x6240, 0x5034, 0x55B0, 0x55D0, 0x75A1, 0xA6,
}


def extremes(width):
    bits = width * 8
    return [0, 1, (1 << bits) - 1, (1 << (bits - 1)) - 1, 1 << (bits - 1), (1 << bits) - 2]


def header_biased_offset(rng, n):
    if n == 0:
        return 0
    if rng.random() < 0.5:
        return rng.randrange(min(n, 4096))
    return rng.randrange(n)


def chunk(rng, n):
    length = max(1, min(n // 4 or 1, int(rng.expovariate(1 / 2048)) + 1))
    start = rng.randrange(max(1, n - length + 1))
    return start, length


# Plain byte mutations.


def flip(data, rng):
    b = bytearray(data)
    count = rng.randint(1, 16)
    for _ in range(count):
        i = header_biased_offset(rng, len(b))
        b[i] ^= 1 << rng.randrange(8)
    return bytes(b), f"flip {count} bits"


def zero(data, rng):
    start, length = chunk(rng, len(data))
    length = min(length, 4096)
    return data[:start] + bytes(length) + data[start + length:], f"zero {length} bytes at {start}"


def truncate(data, rng):
    cut = rng.randrange(len(data))
    return data[:cut], f"truncate to {cut} of {len(data)} bytes"


def duplicate(data, rng):
    start, length = chunk(rng, len(data))
    at = rng.randrange(len(data) + 1)
    return data[:at] + data[start:start + length] + data[at:], f"duplicate {length} bytes from {start} at {at}"


def remove(data, rng):
    start, length = chunk(rng, len(data))
    return data[:start] + data[start + length:], f"remove {length} bytes at {start}"


def extreme(data, rng):
    width = rng.choice([1, 2, 4, 8])
    if len(data) < width:
        return truncate(data, rng)
    value = rng.choice(extremes(width))
    at = header_biased_offset(rng, len(data) - width + 1)
    order = rng.choice(["big", "little"])
    b = bytearray(data)
    b[at:at + width] = value.to_bytes(width, order)
    return bytes(b), f"extreme {width}-byte {order} {value:#x} at {at}"


# ISO BMFF (MP4/MOV).


def mp4_boxes(data, start=0, end=None, depth=0, parents=()):
    """Every box as (offset, header length, size, type, parents), parents outermost first."""
    end = len(data) if end is None else end
    out = []
    i = start
    while i + 8 <= end and depth < 12:
        size, kind = struct.unpack(">I4s", data[i:i + 8])
        header = 8
        if size == 1 and i + 16 <= end:
            size = struct.unpack(">Q", data[i + 8:i + 16])[0]
            header = 16
        elif size == 0:
            size = end - i
        if size < header or i + size > end:
            break
        out.append((i, header, size, kind, parents))
        if kind in MP4_CONTAINERS:
            inner = i + header + MP4_CONTAINERS[kind]
            out.extend(mp4_boxes(data, inner, i + size, depth + 1, parents + ((i, header),)))
        i += size
    return out


def resize_parents(b, parents, delta):
    """Adds `delta` to the size of each enclosing box (32-bit or 64-bit size fields)."""
    for offset, header in parents:
        if header == 16:
            size = struct.unpack(">Q", b[offset + 8:offset + 16])[0]
            b[offset + 8:offset + 16] = struct.pack(">Q", size + delta)
        else:
            size = struct.unpack(">I", b[offset:offset + 4])[0]
            if size != 0:
                b[offset:offset + 4] = struct.pack(">I", (size + delta) & 0xFFFFFFFF)


def mp4(data, rng):
    boxes = mp4_boxes(data)
    if not boxes:
        return extreme(data, rng)
    offset, header, size, kind, parents = rng.choice(boxes)
    name = kind.decode("latin-1")
    b = bytearray(data)
    action = rng.choice(["size", "field", "field", "field", "type", "remove", "duplicate"])
    if action == "size":
        value = rng.choice([0, 1, 7, 0xFFFFFFFF, max(0, size - rng.randint(1, 16)), size + rng.randint(1, 16)])
        b[offset:offset + 4] = struct.pack(">I", value & 0xFFFFFFFF)
        return bytes(b), f"mp4 {name}@{offset} size {size} -> {value}"
    if action == "field" and size > header + 4:
        width = rng.choice([1, 2, 4, 4, 8])
        room = size - header - width
        if room >= 0:
            # Fields near the start of a payload (version, flags, counts, sizes) matter most.
            at = offset + header + min(room, int(rng.expovariate(1 / 24)))
            value = rng.choice(extremes(width))
            b[at:at + width] = value.to_bytes(width, "big")
            return bytes(b), f"mp4 {name}@{offset} field +{at - offset - header} ({width} bytes) = {value:#x}"
    if action == "type":
        other = rng.choice([b"free", b"moov", b"trak", b"mdat", b"stsz", b"stco", b"co64", b"ctts", b"elst",
                            b"hdlr", b"avcC", b"XXXX"])
        b[offset + 4:offset + 8] = other
        return bytes(b), f"mp4 {name}@{offset} type -> {other.decode()}"
    if action == "duplicate":
        copy = bytes(b[offset:offset + size])
        b[offset + size:offset + size] = copy
        resize_parents(b, parents, size)
        return bytes(b), f"mp4 {name}@{offset} duplicated ({size} bytes)"
    del b[offset:offset + size]
    resize_parents(b, parents, -size)
    return bytes(b), f"mp4 {name}@{offset} removed ({size} bytes)"


# Matroska (EBML).


def vint(data, i, keep_marker):
    """An EBML variable-length integer at `i`: (value, length), value None for an unknown size."""
    if i >= len(data) or data[i] == 0:
        return None, 0
    first = data[i]
    length = 8 - first.bit_length() + 1
    if i + length > len(data):
        return None, 0
    value = first if keep_marker else first & ((1 << (8 - length)) - 1)
    for k in range(1, length):
        value = (value << 8) | data[i + k]
    if not keep_marker and value == (1 << (7 * length)) - 1:
        return -1, length
    return value, length


def mkv_elements(data, start=0, end=None, depth=0, parents=()):
    """Every element as (offset, id, id length, size field length, payload size, parents)."""
    end = len(data) if end is None else end
    out = []
    i = start
    while i < end and depth < 10:
        eid, idlen = vint(data, i, True)
        if eid is None:
            break
        size, sizelen = vint(data, i + idlen, False)
        if size is None:
            break
        payload = i + idlen + sizelen
        if size == -1:
            size = end - payload
        if payload + size > end:
            size = end - payload
        out.append((i, eid, idlen, sizelen, size, parents))
        if eid in MKV_MASTERS:
            out.extend(mkv_elements(data, payload, payload + size, depth + 1, parents + ((i, idlen, sizelen),)))
        i = payload + size
    return out


def write_size(b, at, length, value):
    """Writes `value` as an EBML size of `length` bytes (clamped to what fits)."""
    value = min(value, (1 << (7 * length)) - 2)
    field = (1 << (7 * length)) | value
    b[at:at + length] = field.to_bytes(length, "big")


def mkv_resize_parents(b, parents, delta):
    for offset, idlen, sizelen in parents:
        size, _ = vint(b, offset + idlen, False)
        if size is not None and size >= 0:
            write_size(b, offset + idlen, sizelen, max(0, size + delta))


def mkv(data, rng):
    elements = mkv_elements(data)
    if not elements:
        return extreme(data, rng)
    offset, eid, idlen, sizelen, size, parents = rng.choice(elements)
    name = f"{eid:#x}"
    b = bytearray(data)
    action = rng.choice(["size", "value", "value", "remove", "duplicate"])
    total = idlen + sizelen + size
    if action == "size":
        choice = rng.choice(["unknown", "huge", "less", "more"])
        if choice == "unknown":
            b[offset + idlen:offset + idlen + sizelen] = bytes([0xFF >> (sizelen - 1)] + [0xFF] * (sizelen - 1))
        elif choice == "huge":
            write_size(b, offset + idlen, sizelen, 1 << 56)
        elif choice == "less":
            write_size(b, offset + idlen, sizelen, max(0, size - rng.randint(1, 8)))
        else:
            write_size(b, offset + idlen, sizelen, size + rng.randint(1, 8))
        return bytes(b), f"mkv {name}@{offset} size {size} -> {choice}"
    if action == "value" and size > 0:
        payload = offset + idlen + sizelen
        width = min(size, rng.choice([1, 2, 4, 8]))
        at = payload + (0 if eid not in MKV_MASTERS else min(size - width, int(rng.expovariate(1 / 16))))
        value = rng.choice(extremes(width))
        b[at:at + width] = value.to_bytes(width, "big")
        return bytes(b), f"mkv {name}@{offset} value ({width} bytes at +{at - payload}) = {value:#x}"
    if action == "duplicate":
        copy = bytes(b[offset:offset + total])
        b[offset + total:offset + total] = copy
        mkv_resize_parents(b, parents, total)
        return bytes(b), f"mkv {name}@{offset} duplicated ({total} bytes)"
    del b[offset:offset + total]
    mkv_resize_parents(b, parents, -total)
    return bytes(b), f"mkv {name}@{offset} removed ({total} bytes)"


# MPEG-TS.


def ts(data, rng):
    packets = [i for i in range(0, len(data) - 187, 188) if data[i] == 0x47]
    if not packets:
        return flip(data, rng)
    b = bytearray(data)
    done = []
    for _ in range(rng.randint(1, 8)):
        p = rng.choice(packets)
        field = rng.choice(["pid", "cc", "afl", "pusi", "pes"])
        if field == "pid":
            pid = rng.choice([0, 0x11, 0x100, 0x101, 0x1FFF, rng.randrange(0x2000)])
            b[p + 1] = (b[p + 1] & 0xE0) | (pid >> 8)
            b[p + 2] = pid & 0xFF
        elif field == "cc":
            b[p + 3] = (b[p + 3] & 0xF0) | rng.randrange(16)
        elif field == "afl":
            b[p + 3] |= 0x20
            b[p + 4] = rng.choice([0, 1, 182, 183, 255])
        elif field == "pusi":
            b[p + 1] ^= 0x40
        else:
            # A PES header: its length and the PTS/DTS flags and header length, when the packet starts one.
            at = p + 4 + rng.randrange(12)
            b[at] = rng.choice([0, 0xFF, 0x80, 0xC0])
        done.append(f"{field}@{p}")
    return bytes(b), "ts " + " ".join(done)


MUTATORS = {
    "flip": flip, "zero": zero, "truncate": truncate, "duplicate": duplicate, "remove": remove,
    "extreme": extreme, "mp4": mp4, "mkv": mkv, "ts": ts,
}


def applicable(data):
    """The kinds that make sense for this file (container-aware ones for their container)."""
    kinds = ["flip", "zero", "truncate", "duplicate", "remove", "extreme"]
    if data[4:8] in (b"ftyp", b"moov", b"mdat", b"free", b"wide", b"skip"):
        kinds += ["mp4"] * 4
    if data[:4] == b"\x1a\x45\xdf\xa3":
        kinds += ["mkv"] * 4
    if len(data) >= 376 and data[0] == 0x47 and data[188] == 0x47:
        kinds += ["ts"] * 3
    return kinds


def mutate(data, seed, kind=None):
    """The mutation of `data` for `seed` (and its description): deterministic for the same bytes and seed. One
    seed in eight stacks two or three mutations."""
    rng = random.Random(seed)
    if not data:
        return data, "empty source"
    steps = 1 if rng.random() < 7 / 8 else rng.randint(2, 3)
    notes = []
    for _ in range(steps):
        k = kind or rng.choice(applicable(data))
        data, note = MUTATORS[k](data, rng)
        notes.append(note)
        if not data:
            break
    return data, "; ".join(notes)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: mutate.py SOURCE SEED OUT")
    source, seed, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    mutated, note = mutate(open(source, "rb").read(), seed)
    open(out, "wb").write(mutated)
    print(note)
