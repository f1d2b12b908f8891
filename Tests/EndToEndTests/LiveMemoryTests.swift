// Memory over a long live recording: the peak resident set of a 60 s capture against a 10 s one, the same source
// and settings, both measured by the kernel (wait4's ru_maxrss).

import CropZoomKit
import Foundation
import Testing

extension RealTime {
    @Suite("Live memory")
    struct LiveMemoryTests {
        /// Runs cropzoom to its end and returns its exit status and peak resident set (KiB), from `wait4`.
        static func peakRSS(_ args: [String], in folder: URL) throws -> (status: Int32, kib: Int, stderr: String) {
            let err = folder.appendingPathComponent("stderr-\(args.joined().hashValue)").path
            let pid = try ChildProcess.spawn([try CLI.binary()] + args, stdout: .null, stderr: .file(err))
            var status: Int32 = 0
            var usage = rusage()
            guard wait4(pid, &status, 0, &usage) == pid else { throw Oracle.Failure("wait4: \(errno)") }
            let exit = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
            let text = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: err))) ?? Data(), as: UTF8.self)
            return (exit, usage.ru_maxrss, text)
        }

        @Test("a 60 s live recording peaks within 5 % of the memory of a 10 s one (memory stays flat)")
        func flatOverAMinute() throws {
            let scratch = try Scratch()
            let source =
                "testsrc2=size=640x360:rate=30,realtime[out0];sine=frequency=440:sample_rate=48000,arealtime[out1]"
            func record(_ seconds: Int) throws -> Int {
                let out = scratch.file("rec-\(seconds).mkv").path
                let r = try Self.peakRSS(
                    [
                        source, "--input-format", "lavfi", "-o", out, "--duration", "\(seconds)", "--zoom", "1.5",
                        "--preset", "veryfast", "--audio", "aac",
                    ], in: scratch.url)
                #expect(r.status == 0, "\(r.stderr)")
                #expect(try Oracle.decodedFrameHashes(out).count >= seconds * 30 * 9 / 10, "\(seconds) s recording")
                return r.kib
            }
            let short = try record(10)
            let long = try record(60)
            let ratio = Double(long) / Double(short)
            #expect(ratio < 1.05, "60 s: \(long) KiB, 10 s: \(short) KiB (\(String(format: "%.3f", ratio))×)")
        }
    }
}
