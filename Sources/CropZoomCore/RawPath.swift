import Foundation
import SystemPackage

/// File names are bytes; a Swift `String` holds Unicode only. So that a name that is not valid
/// UTF-8 (`bad\xffname.mp4`) survives from the command line to the system calls, every byte that
/// is not part of a valid UTF-8 sequence is held in the string as the private-use scalar
/// U+10FF00 + byte (U+10FF80…U+10FFFF), and turned back into that byte wherever a path goes to
/// the system (`withCString`). A name that really contains one of those scalars keeps its UTF-8
/// bytes the same way, so the mapping is lossless both ways.
public enum RawPath {
    package static let base: UInt32 = 0x10FF00

    /// `bytes` as a string, invalid UTF-8 kept as U+10FF00 + byte.
    public static func string<C: Collection>(fromBytes bytes: C) -> String where C.Element == UInt8 {
        let all = Array(bytes)
        // Plain ASCII, as most names are, maps to itself (a folder of a thousand names is listed without the
        // scalar-by-scalar walk).
        if all.allSatisfy({ $0 < 0x80 }) { return String(decoding: all, as: UTF8.self) }
        var scalars = String.UnicodeScalarView()
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = all.makeIterator()
        var offset = 0
        func keep(_ count: Int) {
            for b in all[offset..<offset + count] { scalars.append(Unicode.Scalar(base + UInt32(b))!) }
        }
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                if scalar.value >= base + 0x80 { keep(encoded.count) } else { scalars.append(scalar) }
                offset += encoded.count
            case .error(let length):
                keep(length)
                offset += length
            case .emptyInput:
                return String(scalars)
            }
        }
    }

    /// The bytes `path` stands for (without a terminating NUL).
    public static func bytes(_ path: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(path.utf8.count)
        for scalar in path.unicodeScalars {
            if scalar.value >= base + 0x80 {
                out.append(UInt8(scalar.value - base))
            } else {
                out.append(contentsOf: String(scalar).utf8)
            }
        }
        return out
    }

    /// `name` under the folder `folder` (`folder/name`; `name` alone when `folder` is empty).
    public static func joined(_ folder: String, _ name: String) -> String {
        if folder.isEmpty { return name }
        if name.isEmpty { return folder }
        return folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// The extension of the file name `name` (what follows its last "."), "" when it has none or starts with its only
    /// "." (`.hidden`): as `URL.pathExtension`.
    public static func pathExtension(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// The scheme of an address (`srt://…` → "srt"), lowercased; nil for a file's path (no ":" before which "://"
    /// follows the first colon). What network inputs, outputs and their containers are told by.
    public static func scheme(of target: String) -> String? {
        guard let colon = target.firstIndex(of: ":"), target[colon...].hasPrefix("://") else { return nil }
        return target[..<colon].lowercased()
    }

    /// Whether `target` is an address (`scheme://…`) rather than a file's path.
    public static func isAddress(_ target: String) -> Bool { scheme(of: target) != nil }

    /// A URL as a path or address: a file URL is its path (`URL.path`), any other (http, rtmp, srt …) goes to FFmpeg
    /// as it is written (`absoluteString`).
    public static func string(_ url: URL) -> String { url.isFileURL ? url.path : url.absoluteString }

    /// `text` for a terminal or log: each byte kept as U+10FF00 + byte written as that byte again.
    public static func data(_ text: String) -> Data { Data(bytes(text)) }
}
