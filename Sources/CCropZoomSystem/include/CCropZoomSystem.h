// CCropZoomSystem: cropzoom's thin shims over the operating system (Linux), in the manner of
// swift-nio's CNIOLinux: what Swift cannot call or express safely itself (an async-signal-safe
// handler, syscalls without a libc wrapper, CPU_* macros).
//
// Holds: the process-wide signal flag, thread priority, file renames, the parent-death signal,
// the CPU affinity count. Must not hold: anything that includes an FFmpeg or zimg header (those
// are CFFmpeg and CPlaneKernels), nor picture code.
#ifndef CCROPZOOM_SYSTEM_H
#define CCROPZOOM_SYSTEM_H

// MARK: - Signals

/// Installs SIGINT/SIGTERM/SIGHUP handlers that record the signal (async-signal-safe), and
/// ignores SIGPIPE and SIGXFSZ so that write failures come back as errors (EPIPE, EFBIG).
void cz_install_signal_handlers(void);
/// The first signal received since installation, or 0.
int cz_pending_signal(void);
/// Returns the pending signal and clears it (0 when none): a live recording turns its first
/// SIGINT/SIGTERM into a clean stop, and only a second one interrupts.
int cz_take_pending_signal(void);

// MARK: - Threads

/// The calling thread's id (gettid).
int cz_thread_id(void);
/// The ids of the process's threads (/proc/self/task), up to `capacity` of them written to `tids`;
/// returns how many there are (negative errno on failure).
int cz_thread_ids(int *tids, int capacity);
/// Lowers thread `tid`'s priority by `by` nice steps (an unprivileged process may only lower).
/// 0 or a negative errno.
int cz_lower_priority_of(int tid, int by);

/// Raises the calling thread's nice value by `by` (`getpriority`/`setpriority` on its thread
/// id; Linux nice values are per thread), relative to what it is. Returns 0 or -errno.
int cz_lower_thread_priority(int by);

// MARK: - Waking a blocked read

/// Installs (once) a handler for SIGURG that does nothing, without SA_RESTART: a thread blocked in
/// read(2) that gets SIGURG returns EINTR, and FFmpeg's I/O loop asks its interrupt callback again.
void cz_wake_install(void);
/// The calling thread's id (gettid), remembered per thread: asked once per read. The first call on
/// a thread also unblocks SIGURG there (a thread started from a dispatch worker blocks it).
int cz_reading_thread_id(void);
/// Sends SIGURG to thread `tid` of this process (`tgkill`). 0 or -errno.
int cz_wake_thread(int tid);

// MARK: - Files

/// rename(2) that refuses to replace an existing file (renameat2 RENAME_NOREPLACE; falls back to
/// link+unlink on file systems without it). Returns 0 or -errno.
int cz_rename_noreplace(const char *from, const char *to);

// MARK: - Processes

/// Asks for SIGTERM when the parent process `parent` dies (prctl PR_SET_PDEATHSIG), and raises
/// it at once when that parent is already gone. Returns 0 or -errno.
int cz_end_with_parent(int parent);

// MARK: - Memory

/// Fixes glibc's mmap threshold at `bytes` (`mallopt(M_MMAP_THRESHOLD)`, which also turns off its
/// dynamic adjustment) and its trim threshold likewise: blocks that large are mapped and unmapped
/// on their own, so a long-running process's picture buffers go back to the system when freed.
/// 1 on success, 0 when refused.
int cz_fix_mmap_threshold(int bytes);

// MARK: - CPUs

/// CPUs in the calling thread's affinity mask (`sched_getaffinity`, `CPU_COUNT_S`), 0 when unknown.
int cz_affinity_cpu_count(void);

#endif
