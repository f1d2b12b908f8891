#!/usr/bin/env python3
"""Rewrites an H.264 MP4 so that its pictures carry picture order counts of type 1 (H.264 8.2.1.2) with the same
values: the camera-style stream `cropzoom repair` must time by frame_num, which no encoder on this machine writes.

    python3 Tests/tools/h264_poc_type1.py IN.mp4 OUT.mp4

IN: ffmpeg's MP4 (ftyp, free, mdat, moov) whose video is x264's with CAVLC (`-coder 0`), progressive, picture order
counts of type 0; other tracks are copied as they are. The SPS gets pic_order_cnt_type 1 with a cycle of two reference
frames (steps 2 and 4) and an offset of -1 for non-reference pictures; each slice's pic_order_cnt_lsb becomes
delta_pic_order_cnt[0], the difference between the picture's count and the one type 1 expects from its frame_num, so
every picture keeps its count (a decoder shows them in the same order: the tests compare ffmpeg's frame checksums).
The samples change size: the media data and the index (stsz, stco) are written anew. Standard library only.
"""

import struct
import sys

from mp4boxes import boxes, find, serialize, tree

CYCLE = [2, 4]
NON_REFERENCE = -1


class Bits:
    def __init__(self, data):
        self.data = data
        self.pos = 0
        # The stop bit of rbsp_trailing_bits: the last 1 bit.
        last = len(data) - 1
        while last >= 0 and data[last] == 0:
            last -= 1
        byte = data[last]
        trailing = (byte & -byte).bit_length()
        self.end = last * 8 + 8 - trailing

    def u(self, n):
        value = 0
        for _ in range(n):
            value = value << 1 | (self.data[self.pos >> 3] >> (7 - (self.pos & 7)) & 1)
            self.pos += 1
        return value

    def ue(self):
        zeros = 0
        while self.u(1) == 0:
            zeros += 1
        return (1 << zeros) - 1 + self.u(zeros)

    def se(self):
        k = self.ue()
        return (k + 1) // 2 if k & 1 else -(k // 2)


class Writer:
    def __init__(self):
        self.bits = []

    def u(self, n, value):
        self.bits += [value >> (n - 1 - i) & 1 for i in range(n)]

    def ue(self, value):
        n = (value + 1).bit_length()
        self.u(n - 1, 0)
        self.u(n, value + 1)

    def se(self, value):
        self.ue(2 * value - 1 if value > 0 else -2 * value)

    def rest(self, reader):
        while reader.pos < reader.end:
            self.bits.append(reader.u(1))

    def rbsp(self):
        bits = self.bits + [1]
        bits += [0] * (-len(bits) % 8)
        return bytes(int("".join(map(str, bits[i:i + 8])), 2) for i in range(0, len(bits), 8))


def unescape(payload):
    out = bytearray()
    zeros = 0
    for b in payload:
        if zeros >= 2 and b == 3:
            zeros = 0
            continue
        out.append(b)
        zeros = zeros + 1 if b == 0 else 0
    return bytes(out)


def escape(rbsp):
    out = bytearray()
    zeros = 0
    for b in rbsp:
        if zeros >= 2 and b <= 3:
            out.append(3)
            zeros = 0
        out.append(b)
        zeros = zeros + 1 if b == 0 else 0
    return bytes(out)


HIGH = {100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135}


def rewrite_sps(nal):
    """The SPS with type 1 counts; and the fields the slices need (log2 sizes)."""
    r = Bits(unescape(nal[1:]))
    w = Writer()
    profile = r.u(8)
    w.u(8, profile)
    w.u(16, r.u(16))
    w.ue(r.ue())
    if profile in HIGH:
        chroma = r.ue()
        w.ue(chroma)
        if chroma == 3:
            w.u(1, r.u(1))
        w.ue(r.ue())
        w.ue(r.ue())
        w.u(1, r.u(1))
        scaling = r.u(1)
        assert scaling == 0, "scaling matrices are not handled"
        w.u(1, scaling)
    log2_frame = r.ue() + 4
    w.ue(log2_frame - 4)
    assert r.ue() == 0, "the input's counts must be of type 0"
    log2_lsb = r.ue() + 4
    w.ue(1)
    w.u(1, 0)  # delta_pic_order_always_zero_flag
    w.se(NON_REFERENCE)
    w.se(0)  # offset_for_top_to_bottom_field
    w.ue(len(CYCLE))
    for step in CYCLE:
        w.se(step)
    w.ue(r.ue())  # max_num_ref_frames
    w.u(1, r.u(1))
    w.ue(r.ue())
    w.ue(r.ue())
    frame_mbs_only = r.u(1)
    assert frame_mbs_only == 1, "interlaced streams are not handled"
    w.u(1, frame_mbs_only)
    w.rest(r)
    return nal[:1] + escape(w.rbsp()), log2_frame, log2_lsb


def check_pps(nal):
    r = Bits(unescape(nal[1:]))
    r.ue()
    r.ue()
    assert r.u(1) == 0, "CABAC slices are not handled (encode with -coder 0)"
    assert r.u(1) == 0, "bottom_field_pic_order_in_frame_present_flag is not handled"


class Counts:
    """Type 0's counts of the original (8.2.1.1) and type 1's expectation for the rewritten (8.2.1.2)."""

    def __init__(self, log2_frame, log2_lsb):
        self.max_frame = 1 << log2_frame
        self.max_lsb = 1 << log2_lsb
        self.prev_msb = self.prev_lsb = 0
        self.prev_frame_num = self.prev_offset = 0

    def original(self, idr, reference, lsb):
        if idr:
            self.prev_msb = self.prev_lsb = 0
        msb = self.prev_msb
        if lsb < self.prev_lsb and self.prev_lsb - lsb >= self.max_lsb // 2:
            msb += self.max_lsb
        elif lsb > self.prev_lsb and lsb - self.prev_lsb > self.max_lsb // 2:
            msb -= self.max_lsb
        if reference:
            self.prev_msb, self.prev_lsb = msb, lsb
        return msb + lsb

    def expected(self, idr, reference, frame_num):
        offset = 0 if idr else self.prev_offset + (self.max_frame if self.prev_frame_num > frame_num else 0)
        absolute = offset + frame_num
        if not reference and absolute > 0:
            absolute -= 1
        value = 0
        if absolute > 0:
            cycles, within = divmod(absolute - 1, len(CYCLE))
            value = cycles * sum(CYCLE) + sum(CYCLE[:within + 1])
        if not reference:
            value += NON_REFERENCE
        self.prev_frame_num, self.prev_offset = frame_num, offset
        return value


def rewrite_slice(nal, counts, log2_frame, log2_lsb, state):
    r = Bits(unescape(nal[1:]))
    w = Writer()
    idr = nal[0] & 0x1F == 5
    reference = nal[0] >> 5 & 3 != 0
    first_mb = r.ue()
    w.ue(first_mb)
    w.ue(r.ue())
    w.ue(r.ue())
    frame_num = r.u(log2_frame)
    w.u(log2_frame, frame_num)
    if idr:
        w.ue(r.ue())
    lsb = r.u(log2_lsb)
    if first_mb == 0:
        count = counts.original(idr, reference, lsb)
        state["delta"] = count - counts.expected(idr, reference, frame_num)
    w.se(state["delta"])
    w.rest(r)
    return nal[:1] + escape(w.rbsp())


def main():
    source, target = sys.argv[1], sys.argv[2]
    data = open(source, "rb").read()
    top = list(boxes(data, 0, len(data)))
    kinds = [k for k, *_ in top]
    assert kinds[-1] == "moov" and "mdat" in kinds, kinds
    moov_kind, moov_pos, moov_header, moov_end = top[-1]
    moov = tree(data, moov_pos + moov_header, moov_end)
    chunks = []  # (offset, track, sample sizes, rewrite)
    tables = []
    for t, (kind, trak) in enumerate(n for n in moov if n[0] == "trak"):
        stbl = find(find(find(trak, "mdia"), "minf"), "stbl")
        stsz = find(stbl, "stsz")
        fixed, count = struct.unpack(">II", stsz[4:12])
        sizes = [fixed] * count if fixed else list(struct.unpack(">%dI" % count, stsz[12:12 + 4 * count]))
        stsc = find(stbl, "stsc")
        runs = [struct.unpack(">III", stsc[8 + 12 * i:20 + 12 * i]) for i in range(struct.unpack(">I", stsc[4:8])[0])]
        stco = find(stbl, "stco")
        assert stco is not None, "co64 is not handled"
        offsets = list(struct.unpack(">%dI" % struct.unpack(">I", stco[4:8])[0], stco[8:]))
        per_chunk = []
        for i, (first, samples, _) in enumerate(runs):
            last = runs[i + 1][0] if i + 1 < len(runs) else len(offsets) + 1
            per_chunk += [samples] * (last - first)
        entry = find(stbl, "stsd")[1][0]
        rewrite = None
        if entry[0] in ("avc1", "avc3"):
            avcc_node = next(n for n in entry[1][1] if n[0] == "avcC")
            avcc = avcc_node[1]
            length_size = (avcc[4] & 3) + 1
            pos = 5
            sps_count = avcc[pos] & 0x1F
            pos += 1
            new = bytearray(avcc[:6])
            for _ in range(sps_count):
                n = struct.unpack(">H", avcc[pos:pos + 2])[0]
                sps, log2_frame, log2_lsb = rewrite_sps(avcc[pos + 2:pos + 2 + n])
                new += struct.pack(">H", len(sps)) + sps
                pos += 2 + n
            pps_count = avcc[pos]
            new.append(pps_count)
            pos += 1
            for _ in range(pps_count):
                n = struct.unpack(">H", avcc[pos:pos + 2])[0]
                check_pps(avcc[pos + 2:pos + 2 + n])
                new += avcc[pos:pos + 2 + n]
                pos += 2 + n
            new += avcc[pos:]
            avcc_node[1] = bytes(new)
            counts = Counts(log2_frame, log2_lsb)
            state = {"delta": 0}

            def rewrite(sample, length_size=length_size, counts=counts, state=state, log2=(log2_frame, log2_lsb)):
                out = bytearray()
                pos = 0
                while pos < len(sample):
                    n = int.from_bytes(sample[pos:pos + length_size], "big")
                    nal = sample[pos + length_size:pos + length_size + n]
                    if nal[0] & 0x1F in (1, 5):
                        nal = rewrite_slice(nal, counts, log2[0], log2[1], state)
                    out += len(nal).to_bytes(length_size, "big") + nal
                    pos += length_size + n
                return bytes(out)
        index = 0
        for offset, samples in zip(offsets, per_chunk):
            chunks.append((offset, t, list(range(index, index + samples)), rewrite))
            index += samples
        tables.append((stbl, sizes, offsets))
    # The media data anew, chunk after chunk in the original's order.
    mdat_start = sum(stop - pos for kind, pos, _, stop in top if kind not in ("mdat", "moov")) + 8
    media = bytearray()
    new_sizes = [list(t[1]) for t in tables]
    new_offsets = [[] for _ in tables]
    for offset, t, samples, rewrite in sorted(chunks):
        new_offsets[t].append(mdat_start + len(media))
        pos = offset
        for s in samples:
            sample = data[pos:pos + tables[t][1][s]]
            pos += tables[t][1][s]
            if rewrite:
                sample = rewrite(sample)
            new_sizes[t][s] = len(sample)
            media += sample
    for (stbl, _, _), sizes, offsets in zip(tables, new_sizes, new_offsets):
        for node in stbl:
            if node[0] == "stsz":
                node[1] = node[1][:4] + struct.pack(">II", 0, len(sizes)) + struct.pack(">%dI" % len(sizes), *sizes)
            elif node[0] == "stco":
                node[1] = node[1][:4] + struct.pack(">I", len(offsets)) + struct.pack(">%dI" % len(offsets), *offsets)
    with open(target, "wb") as out:
        for kind, pos, _, stop in top:
            if kind not in ("mdat", "moov"):
                out.write(data[pos:stop])
        out.write(struct.pack(">I4s", 8 + len(media), b"mdat") + media)
        out.write(serialize([["moov", moov]]))


if __name__ == "__main__":
    main()
