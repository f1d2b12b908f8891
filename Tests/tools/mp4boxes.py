"""An MP4's boxes as a tree to change and write again (the tests' tools that rewrite a recording's index): containers
as lists of [kind, children], a video sample entry as its 78 bytes of fields and its children, other boxes as bytes.
Standard library only."""

import struct

VISUAL = ("avc1", "avc3", "hvc1", "hev1")


def boxes(data, start, end):
    pos = start
    while pos + 8 <= end:
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[pos + 8:pos + 16])[0]
            header = 16
        elif size == 0:
            size = end - pos
        yield kind.decode("latin-1"), pos, header, pos + size
        pos += size


CONTAINERS = {"moov", "trak", "mdia", "minf", "stbl", "dinf", "edts"}


def tree(data, start, end):
    """Boxes as [kind, children or bytes]; sample entries' children parsed under stsd."""
    out = []
    for kind, pos, header, stop in boxes(data, start, end):
        if kind in CONTAINERS:
            out.append([kind, tree(data, pos + header, stop)])
        elif kind == "stsd":
            entries = []
            for ekind, epos, eheader, estop in boxes(data, pos + header + 8, stop):
                fields = 78 if ekind in VISUAL else None
                if fields is None:
                    entries.append([ekind, data[epos + eheader:estop]])
                else:
                    entries.append([ekind, (data[epos + eheader:epos + eheader + fields],
                                            tree(data, epos + eheader + fields, estop))])
            out.append([kind, (data[pos + header:pos + header + 8], entries)])
        else:
            out.append([kind, data[pos + header:stop]])
    return out


def serialize(nodes):
    out = bytearray()
    for kind, body in nodes:
        if kind == "stsd":
            head, entries = body
            payload = head + serialize([[k, b] if isinstance(b, (bytes, bytearray)) else [k, b[0] + serialize(b[1])]
                                        for k, b in entries])
        elif isinstance(body, list):
            payload = serialize(body)
        else:
            payload = body
        out += struct.pack(">I4s", 8 + len(payload), kind.encode("latin-1")) + payload
    return bytes(out)


def find(nodes, kind):
    for k, body in nodes:
        if k == kind:
            return body
    return None
