// CCropZoomSystem: the process's signal flag, thread priority, files and CPUs (see
// CCropZoomSystem.h).
#define _GNU_SOURCE
#include "CCropZoomSystem.h"

#include <dirent.h>
#include <malloc.h>
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

// MARK: - Signals

// _Atomic, not `volatile sig_atomic_t`: the handler runs on whichever thread the signal reaches, and every other
// thread reads the flag (ThreadSanitizer found the race). A lock-free atomic is async-signal-safe.
static _Atomic int pending_signal = 0;

static void record_signal(int sig) {
    int none = 0;
    atomic_compare_exchange_strong(&pending_signal, &none, sig);
}

void cz_install_signal_handlers(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = record_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    // A parent may have started us with these blocked (threads of test runners often do).
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

int cz_pending_signal(void) { return atomic_load(&pending_signal); }

int cz_take_pending_signal(void) { return atomic_exchange(&pending_signal, 0); }

// MARK: - Waking a blocked read

static void ignore_wake(int sig) { (void)sig; }

static void install_wake(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = ignore_wake;  // no SA_RESTART: a blocked read(2) returns EINTR
    sigemptyset(&sa.sa_mask);
    sigaction(SIGURG, &sa, NULL);
}

void cz_wake_install(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_wake);
}

int cz_reading_thread_id(void) {
    static __thread int tid = 0;
    if (tid == 0) {
        tid = (int)syscall(SYS_gettid);
        // Threads started from dispatch's workers inherit a mask that blocks nearly every signal.
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGURG);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    }
    return tid;
}

int cz_wake_thread(int tid) {
    return syscall(SYS_tgkill, getpid(), tid, SIGURG) == 0 ? 0 : -errno;
}

// MARK: - Files

int cz_rename_noreplace(const char *from, const char *to) {
#ifdef SYS_renameat2
    if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 1 /* RENAME_NOREPLACE */) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -errno;
#endif
    if (link(from, to) != 0) return -errno;
    if (unlink(from) != 0) return -errno;
    return 0;
}

int cz_end_with_parent(int parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) return -errno;
    // The parent may have died before the call: then no signal would ever come.
    if (getppid() != parent) raise(SIGTERM);
    return 0;
}

// MARK: - Thread priority

int cz_thread_id(void) { return (int)syscall(SYS_gettid); }

int cz_thread_ids(int *tids, int capacity) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return -errno;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        if (n < capacity) tids[n] = atoi(e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

int cz_lower_priority_of(int tid, int by) {
    errno = 0;
    int current = getpriority(PRIO_PROCESS, (id_t)tid);
    if (current == -1 && errno != 0) return -errno;
    if (setpriority(PRIO_PROCESS, (id_t)tid, current + by) != 0) return -errno;
    return 0;
}

int cz_lower_thread_priority(int by) {
    // On Linux the nice value is per thread: PRIO_PROCESS with a thread id reads and sets that
    // thread's. Relative to the current value, so `nice -n 5 cropzoom` stays 5 lower still.
    id_t tid = (id_t)syscall(SYS_gettid);
    errno = 0;
    int current = getpriority(PRIO_PROCESS, tid);
    if (current == -1 && errno != 0) return -errno;
    if (setpriority(PRIO_PROCESS, tid, current + by) != 0) return -errno;
    return 0;
}

// MARK: - Memory

int cz_fix_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes) == 1 && mallopt(M_TRIM_THRESHOLD, bytes) == 1;
}
