// In-process fuzzing with libFuzzer (issue 17; Benchmarks/RELIABILITY.md, "In-process fuzzing (libFuzzer)"): every
// input goes through `FuzzTarget.run` — the input read from memory, planned, and its first frames transcoded on
// the serial engine to the null output, the real job path.
//
// Built for libFuzzer (`scripts/fuzz.sh`: `-sanitize=fuzzer,address` and `-D CZ_LIBFUZZER`) this file is
// `LLVMFuzzerTestOneInput`, and libFuzzer's runtime brings the `main`. Built plainly (`swift build`) it is the replay
// driver: `CropZoomFuzz FILE|FOLDER…` runs each file (each file of a folder, in name order) through the same entry,
// prints one line per file, and exits 0 when every file was run — whether the job succeeded or refused the file —
// and 2 when a file cannot be read. A crash ends it by its signal.

@_spi(Fuzzing) import CropZoomKit
import Foundation

#if CZ_LIBFUZZER
    /// libFuzzer's entry: one input; whatever the job says about it, the answer is 0 (a crash is a signal).
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        _ = try? FuzzTarget.run(bytes)
        return 0
    }

    /// libFuzzer's driver (`int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*cb)(const uint8_t *, size_t))`,
    /// in its runtime), declared here as the target has no C header; its arguments are plain pointers, passed alike
    /// by Swift's and C's conventions.
    @_silgen_name("LLVMFuzzerRunDriver")
    func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// The program's entry. SwiftPM compiles an executable target's entry point as `<module>_main` (so tests can
    /// link the module) and links `main` to that name (`--defsym main=CropZoomFuzz_main`): libFuzzer's own `main`
    /// cannot be it, so this one starts libFuzzer's driver as that `main` would.
    @_cdecl("CropZoomFuzz_main")
    public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        var argc = argc
        var argv = argv
        return runFuzzerDriver(&argc, &argv, fuzzOneInput)
    }
#else
    @main
    enum Replay {
        static func main() {
            let arguments = Array(CommandLine.arguments.dropFirst())
            guard !arguments.isEmpty, !arguments.contains(where: { $0 == "-h" || $0 == "--help" }) else {
                print("usage: CropZoomFuzz FILE|FOLDER…  (runs each file as libFuzzer would; a crash is a signal)")
                exit(arguments.isEmpty ? 2 : 0)
            }
            var status: Int32 = 0
            for file in files(arguments) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("CropZoomFuzz: cannot read \(file)\n".utf8))
                    status = 2
                    continue
                }
                do throws(CropZoomError) {
                    let summary = try FuzzTarget.run([UInt8](data))
                    say("\(file): transcoded \(summary.framesOut) frame(s)")
                } catch {
                    say("\(file): refused: \(error.description(naming: \.key))")
                }
            }
            exit(status)
        }

        /// A line on standard output, written at once (not buffered): after a crash, the file after the last line is
        /// the one that crashed.
        static func say(_ line: String) {
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }

        /// The files named, a folder's files (not hidden, not in sub-folders) in name order.
        static func files(_ arguments: [String]) -> [String] {
            arguments.flatMap { path -> [String] in
                var folder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &folder), folder.boolValue else {
                    return [path]
                }
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                return names.filter { !$0.hasPrefix(".") }.sorted().map {
                    (path.hasSuffix("/") ? path : path + "/") + $0
                }.filter {
                    var sub: ObjCBool = false
                    return FileManager.default.fileExists(atPath: $0, isDirectory: &sub) && !sub.boolValue
                }
            }
        }
    }
#endif
