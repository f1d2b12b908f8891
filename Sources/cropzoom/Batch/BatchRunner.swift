import ArgumentParser
import CropZoomKit
import Foundation

/// Runs the pending items, `jobs` at a time, each as `cropzoom transcode` with its share of the
/// threads; stops starting new ones on SIGINT/SIGTERM and passes the signal to running ones.
struct BatchRunner {
    var executable: String
    var arguments: [String]
    var threadsPerJob: Int
    var jobs: Int
    var skipExisting: Bool
    var overwrite: Bool
    var style: StatusStyle
    /// Extra `transcode` arguments per item (job files: each clip's own settings), by index.
    var perItemArguments: [[String]] = []
    /// Called after each file with every item as it stands (a shard keeps its report current with it).
    var onFileDone: (@Sendable ([BatchItem]) -> Void)? = nil

    /// Shared between the worker threads (all access under `lock`).
    final class State: @unchecked Sendable {
        // @unchecked Sendable: every field is read and written with `lock` held.
        let lock = NSLock()
        var items: [BatchItem]
        var next = 0
        var running: [Int: pid_t] = [:]
        var done = 0
        init(_ items: [BatchItem]) { self.items = items }
    }

    func run(_ input: [BatchItem]) -> [BatchItem] {
        let state = State(input)
        let total = input.filter { $0.result == .pending }.count
        let group = DispatchGroup()
        let style = self.style
        @Sendable func say(_ text: String) { style.say("batch", text) }
        for _ in 0..<min(jobs, max(1, total)) {
            group.enter()
            let worker = Thread { [self] in
                defer { group.leave() }
                while true {
                    state.lock.lock()
                    while state.next < state.items.count && state.items[state.next].result != .pending {
                        state.next += 1
                    }
                    guard state.next < state.items.count, ProcessSignals.pending == 0 else {
                        state.lock.unlock()
                        return
                    }
                    let k = state.next
                    state.next += 1
                    var item = state.items[k]
                    state.lock.unlock()
                    self.process(&item, slot: k, state: state)
                    state.lock.lock()
                    state.items[k] = item
                    state.done += 1
                    let done = state.done
                    self.onFileDone?(state.items)
                    state.lock.unlock()
                    say(
                        "[\(done)/\(total)] \(item.result.rawValue) \(item.input)"
                            + (item.result == .failed ? ": \(item.error ?? "")" : "")
                            + (item.result == .salvaged ? ": \(item.warning ?? "")" : "")
                    )
                }
            }
            worker.start()
        }
        // Wait, passing a signal on to the running files.
        var forwarded = false
        while group.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
            let signal = ProcessSignals.pending
            if signal != 0 && !forwarded {
                state.lock.lock()
                for pid in state.running.values { kill(pid, signal) }
                state.lock.unlock()
                forwarded = true
            }
        }
        style.clear()
        if ProcessSignals.pending != 0 {
            for k in state.items.indices where state.items[k].result == .pending { state.items[k].result = .notRun }
        }
        return state.items
    }

    private func process(_ item: inout BatchItem, slot: Int, state: State) {
        if skipExisting && RawPath.exists(item.output) {
            item.result = .skipped
            item.outputBytes = RawPath.status(item.output).map { Int($0.st_size) }
            return
        }
        var args =
            ["transcode", item.input, "-o", item.output, "--threads", "\(threadsPerJob)", "--progress", "json"]
            + arguments
        if slot < perItemArguments.count { args += perItemArguments[slot] }
        if overwrite { args.append("-y") }
        var done: JobRecord.Done? = nil
        var failure: JobRecord.Failure? = nil
        let child: MeasuredChild
        do {
            child = try MeasuredChild.run(
                executable, args,
                onStart: { pid in
                    state.lock.lock()
                    state.running[slot] = pid
                    state.lock.unlock()
                    // A signal that came between the check and the start: pass it on now.
                    let s = ProcessSignals.pending
                    if s != 0 { kill(pid, s) }
                },
                onLine: { line in
                    switch JobRecord(jsonLine: line) {
                    case .done(let d): done = d
                    case .error(let f): failure = f
                    default: break
                    }
                })
        } catch {
            item.result = .failed
            item.error = "\(item.input): \(error)"
            return
        }
        state.lock.lock()
        state.running[slot] = nil
        state.lock.unlock()
        item.seconds = (child.wallSeconds * 1000).rounded() / 1000
        if child.succeeded, let done {
            item.warning = BatchItem.damage(done)
            item.result = item.warning == nil ? .ok : .salvaged
            item.frames = done.framesOut
            item.fps = (done.fps * 10).rounded() / 10
            item.outputBytes = RawPath.status(item.output).map { Int($0.st_size) }
            return
        }
        let code = child.signaled ? 128 + child.status : child.status
        item.exitCode = code
        item.result = code == 130 || code == 143 ? .interrupted : .failed
        item.error =
            failure?.message ?? child.lines.last { !$0.hasPrefix("{") }
            ?? (item.result == .interrupted ? "interrupted; nothing written" : "exit \(code)")
    }
}
