import ArgumentParser
import CropZoomKit
import Foundation

struct Transcode: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Transcode INPUT to OUTPUT with a crop/zoom (the default command).")

    @Argument(help: "The clip to read (any file FFmpeg can read; - reads standard input).")
    var input: String

    /// Words after INPUT that no option takes: refused, with a hint when one looks like OUTPUT.
    @Argument(help: .hidden)
    var extra: [String] = []

    @OptionGroup(title: "Geometry") var geometry: GeometryOptions
    @OptionGroup(title: "Stabilisation") var stabilization: StabilizeOptions
    @OptionGroup(title: "Trim") var trim: TrimOptions
    @OptionGroup(title: "Encoding") var encoding: EncodingOptions
    @OptionGroup(title: "Streams") var streams: StreamOptions
    @OptionGroup(title: "Output") var out: OutputOptions
    @OptionGroup(title: "Input and live sources") var liveOptions: LiveOptions
    @OptionGroup(title: "Engine") var engine: EngineOptions

    func validate() throws {
        if out.output == nil && !out.null {
            let hint = extra.count == 1 ? " (did you mean: cropzoom \(input) -o \(extra[0])?)" : ""
            throw ValidationError("missing -o OUTPUT\(hint)")
        }
        if let word = extra.first { throw ValidationError("unexpected argument '\(word)' (OUTPUT goes after -o)") }
        if encoding.codec == "none" && !out.null {
            throw ValidationError("--codec none needs --null (there is nothing to write without an encoder)")
        }
    }

    /// Every setting the options give, from all the groups.
    var settings: Settings {
        geometry.settings.merging(stabilization.settings).merging(trim.settings).merging(encoding.settings).merging(
            streams.settings
        )
        .merging(out.settings).merging(liveOptions.settings).merging(engine.settings)
    }

    /// The job: the library validates the settings; the options that are not settings (the
    /// output and how it is written) are set here.
    func configuration() throws(CropZoomError) -> TranscodeConfiguration {
        var c = try settings.configuration(input: input, output: out.output ?? "null.mkv")
        c.null = out.null
        c.frameLimit = engine.benchFrames
        c.overwrite = c.overwrite || out.overwrite
        c.format = out.format
        c.verbose = out.verbose
        return c
    }

    /// Runs the job through the library's one entry point, `TranscodeJob`: its events are
    /// printed as they come, the summary (or the error) once they have all been printed. The
    /// command's thread waits; the job runs on its own threads, the printing on a task.
    func run() throws {
        let config = try reportingErrors { () throws(CropZoomError) in try configuration() }
        let reporter = Reporter(mode: out.quiet ? .none : out.progress, quiet: out.quiet)
        reporter.null = out.null
        ProcessSignals.install()
        let job = TranscodeJob(configuration: config, naming: \.flag)
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task {
            let printing = Task {
                for await event in job.events {
                    switch event {
                    case .progress(let p): reporter.progress(p)
                    case .notice(let text): reporter.notice(text)
                    case .warning(let text): reporter.warning(text)
                    case .done, .failed: break  // the outcome of run(), reported below
                    }
                }
            }
            do throws(CropZoomError) {
                outcome.result = .success(try await job.run())
            } catch {
                outcome.result = .failure(error)
            }
            await printing.value
            done.signal()
        }
        done.wait()
        switch outcome.result! {
        case .success(let summary):
            reporter.finished(summary)
            if out.stats { reporter.statistics(summary) }
        case .failure(let error):
            reporter.failed(error)
            throw ExitCode(error.exitCode)
        }
    }
}

/// The result of a job run on a task, read by the thread that waited for it.
///
/// `@unchecked Sendable`: written once by the task before it signals, read after the wait.
private final class Outcome: @unchecked Sendable {
    var result: Result<TranscodeSummary, CropZoomError>?
}
