import Foundation
import Testing

@testable import CropZoomCore

/// The engine's queues carry both directions of "stop" (end of stream forward, no more wanted
/// backward) the way the stages expect them.
@Suite("Scheduling: queues and outlets")
struct SchedulingTests {
    @Test("a queue with two producers ends only when both have closed it, after its last element")
    func closesAfterEveryProducer() throws {
        let control = RunControl()
        let queue = BoundedQueue<Int>(capacity: 4, producers: 2, control: control)
        #expect(try queue.push(1) == .more)
        queue.close()
        #expect(try queue.push(2) == .more)  // the second producer still sends
        #expect(try queue.pop() == 1)
        #expect(try queue.pop() == 2)
        let ended = DispatchSemaphore(value: 0)
        let result = Box<Int?>(-1)
        Thread {
            result.value = try? queue.pop()  // waits: one producer is still open
            ended.signal()
        }.start()
        #expect(ended.wait(timeout: .now() + .milliseconds(200)) == .timedOut)
        queue.close()
        #expect(ended.wait(timeout: .now() + .seconds(5)) == .success)
        #expect(result.value == nil)
    }

    @Test("pop(until:) waits for an element until the deadline: the element, timed out, or the end")
    func popUntilADeadline() throws {
        let control = RunControl()
        let queue = BoundedQueue<Int>(capacity: 2, control: control)
        let start = monotonicSeconds()
        guard case .timedOut = try queue.pop(until: start + 0.1) else { throw Failure("not timed out") }
        let waited = monotonicSeconds() - start
        #expect(waited >= 0.099 && waited < 2, "waited \(waited) s for a 0.1 s deadline")
        #expect(try queue.push(7) == .more)
        guard case .element(7) = try queue.pop(until: monotonicSeconds() + 5) else { throw Failure("no element") }
        // An element pushed while it waits ends the wait early.
        Thread {
            usleep(50_000)
            _ = try? queue.push(8)
        }.start()
        guard case .element(8) = try queue.pop(until: monotonicSeconds() + 5) else { throw Failure("no element") }
        queue.close()
        guard case .ended = try queue.pop(until: monotonicSeconds() + 5) else { throw Failure("not ended") }
        guard case .ended = try queue.pop(until: nil) else { throw Failure("not ended without a deadline") }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    @Test("a refused queue answers .enough and takes nothing; what it held is still drained")
    func refusalIsTheAnswerToSend() throws {
        let control = RunControl()
        let queue = BoundedQueue<Int>(capacity: 2, control: control)
        #expect(try queue.push(1) == .more)
        #expect(try queue.push(2) == .more)
        // A producer blocked on the full queue is released by the refusal.
        let answered = DispatchSemaphore(value: 0)
        let answer = Box<Demand?>(nil)
        Thread {
            answer.value = try? queue.push(3)
            answered.signal()
        }.start()
        #expect(answered.wait(timeout: .now() + .milliseconds(200)) == .timedOut)
        queue.refuse()
        #expect(answered.wait(timeout: .now() + .seconds(5)) == .success)
        #expect(answer.value == .enough)
        #expect(try queue.push(4) == .enough)
        queue.close()
        #expect(try queue.pop() == 1)
        #expect(try queue.pop() == 2)
        #expect(try queue.pop() == nil)
    }

    @Test("live edges never wait: offer says full or refused and takes nothing; an evicting push hands back the oldest")
    func liveEdges() throws {
        let control = RunControl()
        let q = BoundedQueue<Int>(capacity: 2, control: control)
        #expect(q.offer(1) == .taken && q.offer(2) == .taken && q.offer(3) == .full)
        #expect(q.pushEvictingOldest(4) == 1 && q.pushEvictingOldest(5) == 2)
        #expect(try q.pop() == 4 && q.pushEvictingOldest(6) == nil)
        q.refuse()
        #expect(q.offer(7) == .refused)
        q.close()
        #expect(try q.pop() == 5 && q.pop() == 6 && q.pop() == nil)
    }

    @Test("a failed run wakes a blocked consumer with the stop, and the first error is kept")
    func stopWakesWaiters() throws {
        let control = RunControl()
        let queue = BoundedQueue<Int>(capacity: 1, control: control)
        let woke = DispatchSemaphore(value: 0)
        let thrown = Box<CropZoomError?>(nil)
        Thread {
            do throws(CropZoomError) { _ = try queue.pop() } catch { thrown.value = error }
            woke.signal()
        }.start()
        control.fail(CropZoomError(.processing, reason: "first"))
        control.fail(CropZoomError(.processing, reason: "second"))
        #expect(woke.wait(timeout: .now() + .seconds(5)) == .success)
        #expect(thrown.value == .stopped)
        #expect(control.firstError?.reason == "first")
    }

    @Test("the stage clock charges nested stages to themselves and gives the time back")
    func clockChargesNestedStages() throws {
        let clock = StageClock()
        clock.switchTo(.demux)
        try clock.charge(.decode) { () throws(CropZoomError) in
            usleep(20_000)
            try clock.charge(.transform) { () throws(CropZoomError) in usleep(20_000) }
        }
        usleep(20_000)
        clock.switchTo(nil)
        let t = clock.totals
        #expect(t[.decode, default: 0] >= 0.015 && t[.decode, default: 0] < 0.035)
        #expect(t[.transform, default: 0] >= 0.015)
        #expect(t[.demux, default: 0] >= 0.015 && t[.demux, default: 0] < 0.035)
    }
}

/// A value written by one thread and read by the test after a semaphore (which orders them).
private final class Box<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}
