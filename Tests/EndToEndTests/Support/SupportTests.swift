// The test support's own checks: what the readiness waits read must be what the kernel says.

import Foundation
import Testing

@Suite("Test support")
struct SupportTests {
    /// A socket of `type` bound to a loopback port the kernel chooses; the descriptor and the port.
    static func bound(_ type: Int32) throws -> (fd: Int32, port: Int) {
        // Close-on-exec: the other suites spawn processes meanwhile, which would otherwise inherit (and keep bound)
        // the socket this test closes.
        let fd = socket(AF_INET, type | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0
            }
        }
        try #require(ok)
        return (fd, Int(UInt16(bigEndian: addr.sin_port)))
    }

    @Test("Listening sees a bound UDP socket and a listening TCP socket, and neither once closed or not listening")
    func listeningReadsTheKernel() throws {
        let udp = try Self.bound(Int32(SOCK_DGRAM.rawValue))
        #expect(Listening.isBound(udp.port, .udp))
        #expect(!Listening.isBound(udp.port, .tcp))
        close(udp.fd)
        #expect(!Listening.isBound(udp.port, .udp))
        let tcp = try Self.bound(Int32(SOCK_STREAM.rawValue))
        #expect(!Listening.isBound(tcp.port, .tcp), "bound but not listening")
        #expect(listen(tcp.fd, 1) == 0)
        #expect(Listening.isBound(tcp.port, .tcp))
        try Listening.wait(for: tcp.port, .tcp, timeout: 1)
        close(tcp.fd)
        #expect(throws: Oracle.Failure.self) { try Listening.wait(for: tcp.port, .tcp, timeout: 0.2) }
    }
}
