import ArgumentParser
import CropZoomKit
import Foundation

/// Runs a library call; its error becomes the one-line message and exit code every command uses.
func reportingErrors<T>(_ body: () throws(CropZoomError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        Stderr.write("cropzoom: error: \(error.message)\n")
        throw ExitCode(error.exitCode)
    }
}

/// `value` as JSON with snake_case keys, sorted, one line or pretty, ending in a newline.
func snakeCaseJSON<T: Encodable>(_ value: T, pretty: Bool = true) throws -> String {
    let encoder = JSONEncoder()
    encoder.keyEncodingStrategy = .convertToSnakeCase
    encoder.outputFormatting =
        pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
}
