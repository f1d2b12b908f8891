#!/usr/bin/env bash
# Regenerates the small sample clips used by cropzoom's demos and tests.
#
# Uses only the Debian ffmpeg/ffprobe CLI (FFmpeg 5.1) plus coreutils and
# python3 (for one binary patch).  Every clip is synthesised from lavfi sources,
# so nothing is downloaded.  Output goes next to this script, whatever the cwd.
#
# Determinism: muxers get -fflags +bitexact, encoders -flags +bitexact, and all
# encoders run single-threaded (x264/x265/libvpx output depends on the thread
# count), so re-running on the same FFmpeg build reproduces the same bytes.
#
# See samples/README.md for what each clip exercises.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

for tool in ffmpeg ffprobe python3; do
    command -v "$tool" >/dev/null || { echo "generate.sh: $tool not found" >&2; exit 1; }
done

FF=(ffmpeg -hide_banner -loglevel error -nostdin -y)
# Muxer + encoder bit-exactness (no version strings, no creation times).
BITEXACT=(-fflags +bitexact -flags:v +bitexact -flags:a +bitexact)
X264=(-c:v libx264 -preset medium -threads 1)
AAC=(-c:a aac -b:a 64k)

# A picture with detail and motion, and a tone.
vsrc() { # size rate duration
    echo "testsrc2=size=$1:rate=$2:duration=$3"
}
asrc() { # frequency duration [sample_rate]
    echo "sine=frequency=$1:sample_rate=${3:-48000}:duration=$2"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. Main demo: 640x360 30 fps 2 s, H.264 High with B-frames, AAC stereo 48 kHz.
"${FF[@]}" -f lavfi -i "$(vsrc 640x360 30 2)" -f lavfi -i "$(asrc 440 2)" \
    "${X264[@]}" -profile:v high -bf 3 -g 30 -crf 26 -pix_fmt yuv420p \
    "${AAC[@]}" -ac 2 -ar 48000 \
    "${BITEXACT[@]}" std-h264-aac.mp4

# 2. Variable frame rate: 45 source frames; frames 0-14 last 1/30 s, 15-29
#    last 2/30 s, 30-44 last 3/30 s (3 s in all).  The durations are multiples
#    of 1/30 so the encoder time base (1/30) represents them exactly.  No
#    B-frames: with them, FFmpeg 5.1's mov demuxer reports every video packet
#    duration as 1/30 s even though stts varies; without them ffprobe's
#    packet=duration shows 512, 1024 and 1536 (time base 1/15360).
"${FF[@]}" -f lavfi -i "$(vsrc 320x240 30 1.5)" -f lavfi -i "$(asrc 440 3)" \
    -vf "setpts='if(lt(N,15),N,if(lt(N,30),15+2*(N-15),45+3*(N-30)))/30/TB'" \
    -fps_mode passthrough \
    "${X264[@]}" -profile:v high -bf 0 -g 30 -crf 28 -pix_fmt yuv420p \
    "${AAC[@]}" -ac 2 -ar 48000 \
    "${BITEXACT[@]}" vfr-h264.mp4

# 3. Display-matrix rotation.  FFmpeg 5.1 has no -display_rotation (added in
#    6.0), and its mov muxer no longer turns a "rotate" metadata tag into a
#    matrix (-metadata:s:v:0 rotate=90 is silently ignored), so encode a plain
#    mp4 and patch the video track's tkhd matrix to the one older FFmpeg wrote
#    for rotate=90: [0 1 0; -1 0 0; height 0 1] (16.16 fixed point, w = 1.0 in
#    2.30).  ffprobe -show_streams then prints, in the stream's side data:
#      side_data_type=Display Matrix  ...  rotation=-90
#    (i.e. 90 degrees clockwise; the upright picture is 240x320 and the ffmpeg
#    CLI auto-rotates it with transpose=clock).
"${FF[@]}" -f lavfi -i "$(vsrc 320x240 30 2)" -f lavfi -i "$(asrc 440 2)" \
    "${X264[@]}" -crf 28 -pix_fmt yuv420p \
    "${AAC[@]}" -ac 2 -ar 48000 \
    "${BITEXACT[@]}" "$tmp/upright.mp4"
python3 - "$tmp/upright.mp4" rotate90.mp4 240 <<'EOF'
import struct, sys
src, dst, height = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = bytearray(open(src, "rb").read())

def boxes(start, end):
    """Yield (type, payload_start, box_end) for the ISO-BMFF boxes in [start, end)."""
    pos = start
    while pos + 8 <= end:
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        header = 8
        if size == 1:
            size, header = struct.unpack(">Q", data[pos + 8:pos + 16])[0], 16
        elif size == 0:
            size = end - pos
        yield kind, pos + header, pos + size
        pos += size

def child(kind, start, end):
    return next((b for b in boxes(start, end) if b[0] == kind), None)

moov = child(b"moov", 0, len(data))
patched = 0
for kind, s, e in boxes(moov[1], moov[2]):
    if kind != b"trak":
        continue
    mdia = child(b"mdia", s, e)
    hdlr = child(b"hdlr", mdia[1], mdia[2])
    if data[hdlr[1] + 8:hdlr[1] + 12] != b"vide":
        continue
    tkhd = child(b"tkhd", s, e)[1]
    version = data[tkhd]
    # version/flags, creation, modification, track_ID, reserved, duration,
    # reserved[2], layer, alternate_group, volume, reserved -> matrix
    matrix = tkhd + 4 + (32 if version == 1 else 20) + 8 + 8
    struct.pack_into(">9i", data, matrix,
                     0, 1 << 16, 0, -(1 << 16), 0, 0, height << 16, 0, 1 << 30)
    patched += 1
assert patched == 1, f"patched {patched} video tracks"
open(dst, "wb").write(data)
EOF

# 4. Odd size 321x241, H.264 High 4:4:4 Predictive (yuv444p).  WITH audio:
#    mono AAC at 44.1 kHz (a second sample rate / channel layout to copy).
#    testsrc2 rounds its size to even for yuv420p, so ask it for yuv444p.
"${FF[@]}" -f lavfi -i "$(vsrc 321x241 30 2),format=yuv444p" \
    -f lavfi -i "$(asrc 660 2 44100)" \
    "${X264[@]}" -crf 28 -pix_fmt yuv444p \
    "${AAC[@]}" -ac 1 -ar 44100 \
    "${BITEXACT[@]}" odd-444.mkv

# 5. MPEG-TS with a clearly non-zero start time: 10 s offset on top of the
#    default TS mux delay (ffprobe format start_time ~= 11.4 s).
"${FF[@]}" -f lavfi -i "$(vsrc 320x240 30 2)" -f lavfi -i "$(asrc 440 2)" \
    "${X264[@]}" -crf 28 -bf 2 -g 30 -pix_fmt yuv420p \
    "${AAC[@]}" -ac 2 -ar 48000 \
    -output_ts_offset 10 \
    "${BITEXACT[@]}" start-offset.ts

# 6. VP9 + Opus in WebM.
"${FF[@]}" -f lavfi -i "$(vsrc 320x240 30 2)" -f lavfi -i "$(asrc 440 2)" \
    -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 300k -threads 1 -row-mt 0 \
    -pix_fmt yuv420p \
    -c:a libopus -b:a 48k -ac 2 -ar 48000 \
    "${BITEXACT[@]}" vp9-opus.webm

# 7. HEVC Main 10 + AAC in Matroska.
"${FF[@]}" -f lavfi -i "$(vsrc 320x240 30 2)" -f lavfi -i "$(asrc 440 2)" \
    -c:v libx265 -preset fast -crf 30 -pix_fmt yuv420p10le \
    -x265-params log-level=error:pools=1:frame-threads=1 \
    "${AAC[@]}" -ac 2 -ar 48000 \
    "${BITEXACT[@]}" hevc10.mkv

# 8. Video only.
"${FF[@]}" -f lavfi -i "$(vsrc 320x240 30 2)" \
    "${X264[@]}" -crf 28 -pix_fmt yuv420p \
    "${BITEXACT[@]}" no-audio.mp4

# 9. Two audio streams with different content: 440 Hz stereo and 880 Hz mono.
"${FF[@]}" -f lavfi -i "$(vsrc 320x240 30 2)" \
    -f lavfi -i "$(asrc 440 2)" -f lavfi -i "$(asrc 880 2)" \
    -map 0:v -map 1:a -map 2:a \
    "${X264[@]}" -crf 28 -pix_fmt yuv420p \
    "${AAC[@]}" -ac:a:0 2 -ac:a:1 1 -ar 48000 \
    "${BITEXACT[@]}" two-audio.mp4

# 10. PCM s16le audio (mono 48 kHz, to stay small) in QuickTime MOV.
"${FF[@]}" -f lavfi -i "$(vsrc 320x240 30 2)" -f lavfi -i "$(asrc 440 2)" \
    "${X264[@]}" -crf 28 -pix_fmt yuv420p \
    -c:a pcm_s16le -ac 1 -ar 48000 \
    "${BITEXACT[@]}" pcm.mov

# 11. Exactly one video frame, plus 0.1 s of audio.  (-frames:v 1 would also
#     give one frame, but in FFmpeg 5.1 reaching that limit finishes every
#     output stream, so the audio stream would be dropped: trim instead.)
"${FF[@]}" -f lavfi -i "$(vsrc 320x240 30 1)" -f lavfi -i "$(asrc 440 0.1)" \
    -vf trim=end_frame=1 \
    "${X264[@]}" -crf 28 -pix_fmt yuv420p \
    "${AAC[@]}" -ac 2 -ar 48000 \
    "${BITEXACT[@]}" one-frame.mp4

# 12. MJPEG, full-range yuvj420p (ffprobe: color_range=pc), AAC audio.
"${FF[@]}" -f lavfi -i "$(vsrc 320x240 30 1)" -f lavfi -i "$(asrc 440 1)" \
    -c:v mjpeg -q:v 8 -pix_fmt yuvj420p -color_range pc \
    "${AAC[@]}" -ac 2 -ar 48000 \
    "${BITEXACT[@]}" mjpeg-full.mov

# 13. Audio only (bad input for cropzoom: no video stream).
"${FF[@]}" -f lavfi -i "$(asrc 440 1)" \
    "${AAC[@]}" -ac 2 -ar 48000 \
    -fflags +bitexact -flags:a +bitexact audio-only.m4a

# 14. Truncated: a faststart (moov first) remux of clip 1, cut to ~40 % of its
#     bytes, so the header parses but the tail of mdat is missing.
"${FF[@]}" -i std-h264-aac.mp4 -map 0 -c copy -movflags +faststart \
    -fflags +bitexact "$tmp/faststart.mp4"
full=$(stat -c %s "$tmp/faststart.mp4")
head -c $((full * 40 / 100)) "$tmp/faststart.mp4" > truncated.mp4

# 15. Not media at all.
printf 'This is not a video file, just text with a .mp4 name.\n' > not-media.mp4

# 16. Matroska whose video CodecID is unknown to libavcodec: make a tiny H.264
#     mkv (no CRC-32 elements, so patching keeps it valid), then replace
#     "V_MPEG4/ISO/AVC" by "V_MPEG4/ISO/XYZ" (same length).
"${FF[@]}" -f lavfi -i "$(vsrc 320x240 30 1)" \
    "${X264[@]}" -crf 30 -pix_fmt yuv420p -write_crc32 0 \
    -fflags +bitexact -flags:v +bitexact "$tmp/avc.mkv"
python3 - "$tmp/avc.mkv" unknown-codec.mkv <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
old, new = b"V_MPEG4/ISO/AVC", b"V_MPEG4/ISO/XYZ"
assert data.count(old) == 1, "expected exactly one H.264 CodecID"
open(sys.argv[2], "wb").write(data.replace(old, new))
EOF

# 17. Zero bytes.
: > empty.mp4

# 18. Damage in the middle of a good file: clip 1 remuxed to MPEG-TS, then the payload bytes
#     (not the 4-byte headers, so the demuxer stays in sync) of a few TS packets around 45 %
#     of the file are scrambled. Decoding reports errors there and goes on.
"${FF[@]}" -i std-h264-aac.mp4 -map 0 -c copy -fflags +bitexact "$tmp/good.ts"
python3 - "$tmp/good.ts" corrupt-middle.ts <<'EOF'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
n = len(data) // 188
for k in range(int(n * 0.45), int(n * 0.45) + 12):
    base = k * 188
    assert data[base] == 0x47
    for i in range(base + 4, base + 188):
        data[i] ^= 0x5A
open(sys.argv[2], "wb").write(bytes(data))
EOF

# 19. `cropzoom bench`'s default input: 1280x720 30 fps 5 s (150 frames), H.264
#     High with B-frames, AAC stereo: long enough that start-up does not dominate
#     a run, small enough to commit (veryfast, crf 30).
"${FF[@]}" -f lavfi -i "$(vsrc 1280x720 30 5)" -f lavfi -i "$(asrc 440 5)" \
    -c:v libx264 -preset veryfast -threads 1 -profile:v high -bf 3 -g 60 -crf 30 -pix_fmt yuv420p \
    "${AAC[@]}" -ac 2 -ar 48000 \
    "${BITEXACT[@]}" bench-720p.mp4

# 20-21. HDR: the testsrc2 picture with its white at 400 cd/m², HEVC Main 10 in BT.2020.
#     PQ (SMPTE ST 2084) with HDR10 metadata in the bitstream's SEI (mastering display 1000 cd/m²,
#     MaxCLL 400): Matroska holds none at stream level, so readers find it in the first frame.
#     HLG (ARIB STD-B67) in MP4, no metadata (HLG needs none). zscale (zimg) converts the colours.
HDR_X265="log-level=error:pools=1:frame-threads=1"
"${FF[@]}" -f lavfi -i "$(vsrc 640x360 30 1)" -f lavfi -i "$(asrc 440 1)" \
    -vf "zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=smpte2084:p=bt2020:m=bt2020nc:r=tv:npl=400,format=yuv420p10le" \
    -c:v libx265 -preset fast -crf 28 -pix_fmt yuv420p10le \
    -color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc \
    -x265-params "$HDR_X265:hdr10=1:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,50):max-cll=400,200" \
    "${AAC[@]}" -ac 2 -ar 48000 \
    "${BITEXACT[@]}" hdr-pq.mkv
"${FF[@]}" -f lavfi -i "$(vsrc 640x360 30 1)" -f lavfi -i "$(asrc 440 1)" \
    -vf "zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=arib-std-b67:p=bt2020:m=bt2020nc:r=tv:npl=400,format=yuv420p10le" \
    -c:v libx265 -preset fast -crf 28 -pix_fmt yuv420p10le -tag:v hvc1 \
    -color_primaries bt2020 -color_trc arib-std-b67 -colorspace bt2020nc \
    -x265-params "$HDR_X265" \
    "${AAC[@]}" -ac 2 -ar 48000 \
    "${BITEXACT[@]}" hdr-hlg.mp4

# --- Summary table -----------------------------------------------------------
clips=(std-h264-aac.mp4 vfr-h264.mp4 rotate90.mp4 odd-444.mkv start-offset.ts
       vp9-opus.webm hevc10.mkv no-audio.mp4 two-audio.mp4 pcm.mov
       one-frame.mp4 mjpeg-full.mov audio-only.m4a truncated.mp4
       not-media.mp4 unknown-codec.mkv empty.mp4 corrupt-middle.ts bench-720p.mp4
       hdr-pq.mkv hdr-hlg.mp4)
summary() {
    local out
    if out=$(ffprobe -v error -show_entries \
            'format=format_name,start_time,duration:stream=index,codec_type,codec_name,width,height,pix_fmt,color_range,sample_rate,channels:stream_side_data=rotation' \
            -of compact=p=0 "$1" 2>&1); then
        # One line per stream (programs repeat them: keep the first), then the
        # format line.  Drop N/A/unknown fields and join lines with " ; ".
        echo "$out" | tr '|' ' ' \
            | sed -E 's/[a-z_:]+=N\/A ?//g; s/color_range=unknown ?//g; s/side_data:(side_data_type=[^=]*=)?//g; s/ +$//' \
            | awk 'NF && !seen[$0]++' | paste -sd';' | sed 's/;/ ; /g'
    else
        echo "ffprobe error: $(echo "$out" | tail -n1)"
    fi
}
total=0
printf '%-18s %8s  %s\n' name bytes ffprobe
for c in "${clips[@]}"; do
    size=$(stat -c %s "$c")
    total=$((total + size))
    printf '%-18s %8d  %s\n' "$c" "$size" "$(summary "$c")"
done
printf '%-18s %8d\n' TOTAL "$total"
