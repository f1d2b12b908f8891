// KernelQuality: every scaling kernel on every crop+scale case, for quality (PSNR of Y, U, V
// against the exact float reference described at `SyntheticPicture` in KernelSupport) and speed
// (per-frame wall time: median and spread of --runs timed frames after --warmup frames, the
// kernels of a case interleaved round by round so that noise from other work hits all alike).
//
//   swift run -c release KernelQuality [--runs 200] [--warmup 20] [--kernel ID] [--case ID] [--csv FILE]
//                                      [--sequential]
// --sequential times each kernel in a tight loop of its own (warm caches, like the ordo-one
// benchmarks) instead of round by round (each kernel finds the caches full of the others' data,
// closer to a pipeline where decode and encode run between two transforms).
import Foundation
import KernelSupport

var runs = 200
var warmup = 20
var sequential = false
var kernelFilter: String? = nil
var caseFilter: String? = nil
var csvPath: String? = nil
var args = CommandLine.arguments.dropFirst()
while let a = args.popFirst() {
    switch a {
    case "--runs": runs = Int(args.popFirst() ?? "") ?? runs
    case "--warmup": warmup = Int(args.popFirst() ?? "") ?? warmup
    case "--kernel": kernelFilter = args.popFirst()
    case "--case": caseFilter = args.popFirst()
    case "--csv": csvPath = args.popFirst()
    case "--sequential": sequential = true
    default:
        print("usage: KernelQuality [--runs N] [--warmup N] [--kernel ID] [--case ID] [--csv FILE] [--sequential]")
        print("kernels: " + KernelSpec.all.map(\.id).joined(separator: " "))
        print("cases: " + ScaleCase.quality.map(\.id).joined(separator: " "))
        exit(a == "--help" ? 0 : 2)
    }
}

print(kernelLibraryVersions())
print(
    "runs \(runs) after \(warmup) warm-up frames, "
        + "\(sequential ? "each kernel in its own loop" : "kernels interleaved round by round"); times in ms per "
        + "frame; PSNR in dB against the float reference\n"
)

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
    // Build every kernel, check its quality, then time them interleaved: each round runs every
    // kernel once, so a disturbance from other work on the machine hits all kernels alike.
    var kernels: [(kernel: Kernel, output: Picture, psnr: [Double])] = []
    for spec in KernelSpec.all where kernelFilter == nil || spec.id == kernelFilter {
        do {
            let kernel = try Kernel(spec, c)
            let output = Picture(width: c.outputWidth, height: c.outputHeight)
            kernel.run(source, into: output)
            kernels.append((kernel, output, (0..<3).map { psnr(output, plane: $0, reference: references[$0]) }))
        } catch {
            print("| \(spec.id) | failed: \(error) |")
        }
    }
    var times = [[Double]](repeating: [], count: kernels.count)
    let clock = ContinuousClock()
    func timeOne(_ i: Int) {
        let t0 = clock.now
        kernels[i].kernel.run(source, into: kernels[i].output)
        let d = clock.now - t0
        times[i].append(Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) * 1e-15)
    }
    if sequential {
        for i in kernels.indices {
            for _ in 0..<warmup { kernels[i].kernel.run(source, into: kernels[i].output) }
            for _ in 0..<runs { timeOne(i) }
        }
    } else {
        for _ in 0..<warmup { for k in kernels { k.kernel.run(source, into: k.output) } }
        for _ in 0..<runs { for i in kernels.indices { timeOne(i) } }
    }
    for (i, k) in kernels.enumerated() {
        let t = times[i].sorted()
        let w = k.kernel.window
        let window =
            c.isFractional && !k.kernel.spec.isZimg
            ? String(format: "%.0fx%.0f at (%.0f, %.0f), rounded", w.width, w.height, w.left, w.top) : "exact"
        let stats = [t.first!, percentile(t, 0.25), percentile(t, 0.5), percentile(t, 0.75), t.last!]
        print(
            "| \(k.kernel.spec.id) | \(window) | " + stats.map { String(format: "%.2f", $0) }.joined(separator: " | ")
                + " | " + k.psnr.map { String(format: "%.2f", $0) }.joined(separator: " | ") + " |")
        csv +=
            "\(c.id),\(k.kernel.spec.id),\"\(k.kernel.spec.detail)\",\"\(window)\","
            + stats.map { String(format: "%.3f", $0) }.joined(separator: ",")
            + "," + k.psnr.map { String(format: "%.3f", $0) }.joined(separator: ",") + "\n"
    }
    fflush(nil)
    print("")
}
if let csvPath { try csv.write(toFile: csvPath, atomically: true, encoding: .utf8) }
