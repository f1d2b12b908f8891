import Foundation

/// A small lock (`NSLock`) with a scoped `withLock`.
///
/// `@unchecked Sendable`: NSLock is thread-safe.
final class Mutex: @unchecked Sendable {
    private let lock = NSLock()
    @inline(__always)
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
