import Testing

/// The suites that record in real time — live sources with real senders and receivers, a desktop, long captures — run
/// one at a time: on a 2-core machine two of them at once starve each other's senders and readers (loopback UDP lost
/// frames before they reached the reader, seen when they overlapped). They still run beside the other suites.
@Suite("Real time", .serialized)
enum RealTime {}
