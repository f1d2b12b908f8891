// KernelQuality: every scaling kernel on every crop+scale case, for quality (PSNR of Y, U, V
// against the exact float reference described at `SyntheticPicture` in KernelSupport) and speed
// (per-frame wall time: median and spread of --runs timed frames after --warmup frames).
//
//   swift run -c release KernelQuality [--runs 200] [--warmup 20] [--kernel ID] [--case ID] [--csv FILE]
import Foundation
import KernelSupport

var runs = 200, warmup = 20
var kernelFilter: String? = nil, caseFilter: String? = nil, csvPath: String? = nil
var args = CommandLine.arguments.dropFirst()
while let a = args.popFirst() {
    switch a {
    case "--runs": runs = Int(args.popFirst() ?? "") ?? runs
    case "--warmup": warmup = Int(args.popFirst() ?? "") ?? warmup
    case "--kernel": kernelFilter = args.popFirst()
    case "--case": caseFilter = args.popFirst()
    case "--csv": csvPath = args.popFirst()
    default:
        print("usage: KernelQuality [--runs N] [--warmup N] [--kernel ID] [--case ID] [--csv FILE]")
        print("kernels: " + KernelSpec.all.map(\.id).joined(separator: " "))
        print("cases: " + ScaleCase.quality.map(\.id).joined(separator: " "))
        exit(a == "--help" ? 0 : 2)
    }
}

print(kernelLibraryVersions())
print("runs \(runs) after \(warmup) warm-up frames; times in ms per frame; PSNR in dB against the float reference\n")

let synthetic = SyntheticPicture()
var sources: [String: (picture: Picture, scales: [Double])] = [:]
var csv = "case,kernel,detail,window,min_ms,p25_ms,median_ms,p75_ms,max_ms,psnr_y,psnr_u,psnr_v\n"

func percentile(_ sorted: [Double], _ q: Double) -> Double {
    sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))]
}

for c in ScaleCase.quality where caseFilter == nil || c.id == caseFilter {
    let key = "\(c.sourceWidth)x\(c.sourceHeight)"
    if sources[key] == nil { sources[key] = synthetic.render(width: c.sourceWidth, height: c.sourceHeight) }
    let (source, scales) = sources[key]!
    let references = (0..<3).map { synthetic.reference(plane: $0, for: c, scale: scales[$0]) }
    print("## \(c.id): \(c.windowDescription)\n")
    print("| kernel | window read | min | p25 | median | p75 | max | PSNR Y | PSNR U | PSNR V |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    let output = Picture(width: c.outputWidth, height: c.outputHeight)
    for spec in KernelSpec.all where kernelFilter == nil || spec.id == kernelFilter {
        let kernel: Kernel
        do { kernel = try Kernel(spec, c) } catch { print("| \(spec.id) | failed: \(error) |"); continue }
        kernel.run(source, into: output)
        let q = (0..<3).map { psnr(output, plane: $0, reference: references[$0]) }
        for _ in 0..<warmup { kernel.run(source, into: output) }
        var times: [Double] = []
        times.reserveCapacity(runs)
        let clock = ContinuousClock()
        for _ in 0..<runs {
            let t0 = clock.now
            kernel.run(source, into: output)
            let d = clock.now - t0
            times.append(Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) * 1e-15)
        }
        times.sort()
        let w = kernel.window
        let window = c.isFractional && !spec.isZimg
            ? String(format: "%.0fx%.0f at (%.0f, %.0f), rounded", w.width, w.height, w.left, w.top) : "exact"
        let stats = [times.first!, percentile(times, 0.25), percentile(times, 0.5), percentile(times, 0.75), times.last!]
        print("| \(spec.id) | \(window) | " + stats.map { String(format: "%.2f", $0) }.joined(separator: " | ")
              + " | " + q.map { String(format: "%.2f", $0) }.joined(separator: " | ") + " |")
        csv += "\(c.id),\(spec.id),\"\(spec.detail)\",\"\(window)\"," + stats.map { String(format: "%.3f", $0) }.joined(separator: ",")
            + "," + q.map { String(format: "%.3f", $0) }.joined(separator: ",") + "\n"
        fflush(nil)
    }
    print("")
}
if let csvPath { try csv.write(toFile: csvPath, atomically: true, encoding: .utf8) }
