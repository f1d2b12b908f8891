import CropZoomKit
import Foundation

/// Standard output for text that may hold paths: written with write(2), each byte a path kept
/// as U+10FF00 + byte (`RawPath`) written as that byte again, so a name that is not UTF-8 reads
/// as it is on disk.
enum Stdout {
    static func write(_ text: String) { Descriptor.writeAll(1, RawPath.data(text)) }
}
