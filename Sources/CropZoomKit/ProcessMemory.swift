import CropZoomFFmpeg
import CropZoomSystem

/// The process's allocator, tuned for many jobs in one process.
///
/// glibc maps a large block (a picture buffer) on its own only while it is larger than its mmap threshold, and it
/// raises that threshold to the size of every mapped block that is freed. After the first job, a process's picture
/// buffers therefore come from the heap, whose freed space glibc keeps: measured over 30 minutes of library jobs
/// (Benchmarks/RELIABILITY.md, "Soak"), RSS crept from 254 to 293 MiB with nothing leaked, and stayed flat at 113
/// MiB with the threshold fixed. The command line fixes it at start; a program that runs many jobs through
/// CropZoomKit should call ``returnLargeBlocksToTheSystem()`` once, early (it is process-wide).
public enum ProcessMemory {
    /// The size from which blocks are mapped and unmapped on their own: 128 KiB, glibc's own starting value.
    public static let largeBlock = 128 << 10

    /// Fixes glibc's mmap and trim thresholds at ``largeBlock`` (`cz_fix_mmap_threshold`: `mallopt`), so freed
    /// picture buffers go back to the system. Returns false when the allocator refused (not glibc's).
    @discardableResult
    public static func returnLargeBlocksToTheSystem() -> Bool {
        ProcessControl.fixMmapThreshold(largeBlock)
    }
}
