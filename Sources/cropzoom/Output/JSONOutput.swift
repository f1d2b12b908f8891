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

/// The `T` written by `snakeCaseJSON` in the file at `path`. A file that cannot be read, or is not one, is refused
/// with its path and the reason (exit 2): "PATH: cannot read it: no such file", "PATH: not WHAT (no schema)".
func readSnakeCaseJSON<T: Decodable>(_ type: T.Type, from path: String, what: String) throws -> T {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw CommandError.usage("\(path): cannot read it: \(RawPath.exists(path) ? "not readable" : "no such file")")
    }
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    do {
        return try decoder.decode(type, from: data)
    } catch {
        throw CommandError.usage("\(path): not \(what) (\(decodingFailure(error)))")
    }
}

/// A decoding error in a few words: the key that is missing or wrong.
func decodingFailure(_ error: Error) -> String {
    switch error {
    case DecodingError.keyNotFound(let key, _): return "no \(key.stringValue)"
    case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c):
        return "bad \(c.codingPath.map(\.stringValue).joined(separator: "."))"
    case DecodingError.dataCorrupted(let c) where c.codingPath.isEmpty: return "not JSON"
    case DecodingError.dataCorrupted(let c): return "bad \(c.codingPath.map(\.stringValue).joined(separator: "."))"
    default: return "\(error)"
    }
}
