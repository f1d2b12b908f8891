import Foundation

/// Runs a job's body on a thread of its own — not the Swift concurrency pool: a long job must not hold a cooperative
/// thread — for ``TranscodeJob`` and ``RepairJob``: `await` returns what the body returns or throws what it throws;
/// cancelling the awaiting task calls `cancel`; `ended` is told the outcome on the job's thread, before the awaiting
/// task resumes (the jobs end their events there).
enum JobThread {
    static func run<T: Sendable>(
        named name: String, path: String, cancel: @escaping @Sendable () -> Void,
        ended: @escaping @Sendable (Result<T, CropZoomError>) -> Void,
        _ body: @escaping @Sendable () throws(CropZoomError) -> T
    ) async throws(CropZoomError) -> T {
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (done: CheckedContinuation<T, Error>) in
                    let thread = Thread {
                        do throws(CropZoomError) {
                            let value = try body()
                            ended(.success(value))
                            done.resume(returning: value)
                        } catch {
                            ended(.failure(error))
                            done.resume(throwing: error)
                        }
                    }
                    thread.name = name
                    thread.start()
                }
            } onCancel: {
                cancel()
            }
        } catch let e as CropZoomError {
            throw e
        } catch {
            throw CropZoomError(.processing, path: path, reason: "\(error)")
        }
    }
}
