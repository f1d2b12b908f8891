// The executable's load order (Package.swift's `loadOrder`; docs/design/repair.md, "Session 14"): cropzoom names the
// shared libraries most symbol bindings resolve to first, so the dynamic loader finds them early. Naming a library
// earlier must not change which library any symbol binds to (libm and libc both define `frexp`; C++ libraries carry
// the same template instances, and the Swift runtime's ICU carries `std::bad_variant_access`): checked here against
// Examples/ZoomFromCSV, built from the same libraries without the order.

import Foundation
import Testing

@Suite("Load order")
struct LoadOrderTests {
    /// `LD_DEBUG=bindings` of `exe args` with every symbol bound at start: (file, symbol, version) → library, by the
    /// libraries' names; the executable's own bindings, and those into it, are left out.
    static func bindings(_ exe: String, _ args: [String]) throws -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["LD_BIND_NOW"] = "1"
        env["LD_DEBUG"] = "bindings"
        let run = try CLI.run(exe, args, environment: env.map { "\($0.key)=\($0.value)" })
        let pattern = /binding file (\S+) \[\d+\] to (\S+) \[\d+\]: \S+ symbol `([^']+)'(?: \[([^\]]+)\])?/
        var out: [String: String] = [:]
        for line in run.stderr.split(separator: "\n") {
            guard let m = line.firstMatch(of: pattern) else { continue }
            let (file, library) = (String(m.1), String(m.2))
            if file == exe || library == exe { continue }
            let name = { (path: String) in String(path.split(separator: "/").last ?? "") }
            out["\(name(file)) \(m.3) \(m.4 ?? "")"] = name(library)
        }
        return out
    }

    /// The main program's global scope (`LD_DEBUG=scopes`), by the libraries' names.
    static func scope(_ exe: String, _ args: [String]) throws -> [String] {
        var env = ProcessInfo.processInfo.environment
        env["LD_DEBUG"] = "scopes"
        let run = try CLI.run(exe, args, environment: env.map { "\($0.key)=\($0.value)" })
        let line = try #require(run.stderr.split(separator: "\n").first { $0.contains("scope 0:") }, "\(run)")
        return line.split(separator: " ").dropFirst().map { String($0.split(separator: "/").last ?? "") }
    }

    @Test(
        """
        cropzoom names the most-bound libraries first (libcrypto among the first 30 of the scope, not past the \
        hundredth), and every symbol of every library binds where it binds in a program without that order
        """)
    func sameBindingsSoonerFound() throws {
        let build = try #require(Oracle.packageRoot).appendingPathComponent(".build/debug").path
        let cropzoom = build + "/cropzoom"
        let plain = build + "/ZoomFromCSV"
        let ordered = try Self.scope(cropzoom, ["--version"])
        let natural = try Self.scope(plain, [])
        let at = { (scope: [String]) in scope.firstIndex { $0.hasPrefix("libcrypto.so") } ?? scope.count }
        #expect(at(ordered) < 30 && at(natural) > 60, "libcrypto at \(at(ordered)) in cropzoom, \(at(natural)) plain")
        let mine = try Self.bindings(cropzoom, ["--version"])
        let theirs = try Self.bindings(plain, [])
        let shared = theirs.keys.filter { mine[$0] != nil }
        #expect(shared.count > 20_000, "only \(shared.count) bindings in both")
        let moved = shared.filter { mine[$0] != theirs[$0] }.sorted()
        let examples = moved.prefix(5).map { "\($0): \(theirs[$0]!) → \(mine[$0]!)" }.joined(separator: "; ")
        #expect(moved.isEmpty, "\(moved.count) bindings resolve elsewhere, e.g. \(examples)")
    }
}
