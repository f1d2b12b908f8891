#!/usr/bin/env python3
"""Empties the parameter sets of an MP4's `avcC` or `hvcC`, as a writer of `avc3` or `hev1` may leave them: the
SPS and PPS (and HEVC's VPS) are then only in the stream (x265's `repeat-headers=1`, or ffmpeg's `dump_extra`
bitstream filter, put them before every keyframe).

    python3 Tests/tools/inband_parameter_sets.py IN.mp4 OUT.mp4

IN: ffmpeg's MP4 (ftyp, free, mdat, moov: the index after the media, so the samples keep their offsets) whose video
is `avc3` or `hev1`. Only the index changes. Standard library only.
"""

import sys

from mp4boxes import boxes, find, serialize, tree


def main():
    source, target = sys.argv[1], sys.argv[2]
    data = open(source, "rb").read()
    top = list(boxes(data, 0, len(data)))
    assert [k for k, *_ in top][-1] == "moov", "the index must come after the media"
    _, pos, header, end = top[-1]
    moov = tree(data, pos + header, end)
    emptied = 0
    for kind, trak in moov:
        if kind != "trak":
            continue
        stbl = find(find(find(trak, "mdia"), "minf"), "stbl")
        for entry in find(stbl, "stsd")[1]:
            if entry[0] not in ("avc3", "hev1"):
                continue
            for node in entry[1][1]:
                if node[0] == "hvcC":
                    # HEVCDecoderConfigurationRecord: 22 bytes of fields, then numOfArrays and the arrays.
                    node[1] = node[1][:22] + bytes([0])
                    emptied += 1
                elif node[0] == "avcC":
                    # AVCDecoderConfigurationRecord: 5 bytes of fields, then the SPS count (3 reserved bits set) and
                    # the PPS count.
                    node[1] = node[1][:5] + bytes([0xE0, 0])
                    emptied += 1
    assert emptied, "no avc3 or hev1 sample entry with its configuration"
    with open(target, "wb") as out:
        for kind, pos, _, stop in top[:-1]:
            out.write(data[pos:stop])
        out.write(serialize([["moov", moov]]))


if __name__ == "__main__":
    main()
