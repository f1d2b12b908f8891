import CropZoomFFmpeg
import CropZoomSystem
import Foundation

/// `--reference` in a transcode (docs/repair.md, "Repair and transcode in one run"): an input whose writer crashed
/// before its index is repaired first, byte for byte as `cropzoom repair` does, into a temporary file beside the
/// output (`.OUTPUT.cropzoom-tmp-PID-repaired.EXT`: a killed run's leftover is removed by the next run for that
/// output, as every temporary is), which the transcode then reads and removes. An input that is not broken is read as
/// it is, with a notice.
struct SalvagedInput {
    /// The repaired temporary the transcode reads.
    let path: String
    let report: RepairReport

    /// Repairs `cfg.input` with `cfg.reference` when it needs it; nil when there is no reference or nothing to
    /// repair (`notice` says why the reference is not used). `cancelled` stops the repair.
    static func prepare(
        _ cfg: TranscodeConfiguration, notice: (String) -> Void, cancelled: @escaping @Sendable () -> Bool
    ) throws(CropZoomError) -> SalvagedInput? {
        guard let reference = cfg.reference else { return nil }
        let regular = RawPath.status(cfg.input).map { $0.st_mode & S_IFMT == S_IFREG } ?? false
        guard cfg.input != "-", !cfg.isLive, regular else {
            throw CropZoomError(
                .usage, path: cfg.inputName, setting: .reference,
                reason: "\(setting: .reference) repairs a recording file; this input is not one")
        }
        let triage: RepairSetup.Triage
        do {
            triage = try RepairSetup.triage(cfg.input)
        } catch  where error.kind == .usage {
            // Not broken: it plays as it is.
            notice("\(cfg.inputName) has its index (moov): \(setting: .reference) is not needed, it is read as it is")
            return nil
        }
        if case .fragmentedCut = triage {
            notice(
                "\(cfg.inputName) is a fragmented recording cut mid-fragment: its whole fragments are read as they "
                    + "are (\(setting: .reference) is not needed)")
            return nil
        }
        let out = URL(fileURLWithPath: cfg.output)
        let local = cfg.output != "-" && !RawPath.isAddress(cfg.output) && !cfg.null
        let folder = local ? out.deletingLastPathComponent().path : NSTemporaryDirectory()
        let ext = URL(fileURLWithPath: cfg.input).pathExtension.lowercased() == "mov" ? "mov" : "mp4"
        let name =
            AtomicOutput.temporaryPrefix(for: local ? out.lastPathComponent : "repair") + AtomicOutput.uniqueSuffix()
            + "-repaired." + ext
        let path = URL(fileURLWithPath: folder).appendingPathComponent(name).path
        var repair = RepairConfiguration(input: cfg.input, reference: reference, output: path)
        repair.overwrite = true
        let job = RepairJob(configuration: repair, stopWhen: cancelled)
        var report: RepairReport
        do {
            report = try job.repair()
            // What the repair's samples became: the transcode's output (the temporary goes with the job).
            report.output = cfg.output
        } catch {
            _ = RawPath.withCString(path) { unlink($0) }
            throw error
        }
        notice("\(cfg.inputName): repaired with \(reference) (\(setting: .reference)): \(report.found)")
        return SalvagedInput(path: path, report: report)
    }

    /// Removes the temporary.
    func remove() { _ = RawPath.withCString(path) { unlink($0) } }
}
