// CropZoomKit's users see the pure core's public types (configuration, geometry, reports,
// errors) through `import CropZoomKit` alone.
@_exported import CropZoomCore
import CropZoomFFmpeg
// RawPath's system side (C strings, stat, readdir, FilePath) and ChildProcess.
@_exported import CropZoomSystem
