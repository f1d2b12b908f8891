// Streams that are not what they seem (issue 13, items 19–20): cover art is not video; an
// MPEG-TS audio stream whose parameters never showed up is dropped with a note, not fatal.

import Foundation
import Testing

@Suite("Input streams")
struct InputStreamTests {
    @Test("an MP3 with cover art and no video: exit 3, 'no video stream (only a cover picture)', nothing written")
    func coverArtOnly() throws {
        let scratch = try Scratch()
        let input = try Clip.audio(.sine(seconds: 1)).video(.color("red"), seconds: 0.04, size: "64x64")
            .map(["0", "1"]).frames(1).codec("mjpeg").audioCodec("libmp3lame")
            .extra(["-disposition:v", "attached_pic"]).write(in: scratch, name: "song.mp3")
        let run = try CLI.cropzoom([input, "-o", scratch.file("out.mp4").path])
        #expect(run.status == 3, "\(run)")
        #expect(
            run.errorLines == ["cropzoom: error: \(input): no video stream (only a cover picture)"], "\(run.stderr)")
        #expect(Files.names(in: scratch.url) == ["song.mp3"])
    }

    @Test("an MPEG-TS audio stream first seen after the probe is dropped with one note; the video is kept")
    func audioWithoutParameters() throws {
        let scratch = try Scratch()
        let input = scratch.file("late.ts").path
        // The audio's first packet comes at 10 s, after the 7 s FFmpeg probes an MPEG-TS for.
        try Clip.video(.testsrc, seconds: 12, size: "160x120", rate: 25).audio(.sine(seconds: 2), offset: 10)
            .codec("libx264", preset: "ultrafast").audioCodec("aac").write(to: input)
        let audio = try #require(try Oracle.streams(input).first { $0.codecType == "audio" })
        try #require(audio.sampleRate == nil || audio.sampleRate == 0, "the sample's audio should look unknown")
        let output = scratch.file("out.mp4").path
        let run = try CLI.cropzoom([input, "-o", output])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderrLines.filter { $0.contains("audio stream #1 (aac) dropped") }.count == 1, "\(run.stderr)")
        #expect(try Oracle.videoFramePTS(output).count == 300)
    }
}
