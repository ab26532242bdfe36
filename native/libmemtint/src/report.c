/* report.c — the statistics behind memtint_get_stats() and the MEMTINT_REPORT JSON written at
 * exit (schema in docs/libmemtint.md; `memtint run` reads it). */
#include "internal.h"
#include "../include/memtint.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The report could not be written: say where and why (errno from the failed call). */
static void warn_unwritable(const char *path) {
    const char *why = strerror(errno);
    mt_text m = {0};
    mt_text_str(&m, "cannot write MEMTINT_REPORT file ");
    mt_text_str(&m, path);
    mt_text_str(&m, ": ");
    mt_text_str(&m, why);
    mt_warn(m.buf);
}

/* The first write error of the report (0: none); a failed report is never renamed into place. */
static int put_error;

/* Writes that wait at most 5 s for a FIFO's reader: a reader that stops reading must not keep
 * the program from exiting. */
static void put(int fd, mt_text *t) {
    const char *s = t->buf;
    size_t n = t->len;
    t->len = 0;
    while (n && !put_error) {
        ssize_t w = write(fd, s, n);
        if (w > 0) {
            s += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && errno == EAGAIN) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            if (poll(&p, 1, 5000) <= 0) put_error = ETIMEDOUT;
        } else {
            put_error = w < 0 ? errno : EIO;
        }
    }
}

/* The report path with "%p" replaced by the process id (each process of a pipeline its own). */
static void report_path(mt_text *path) {
    for (const char *p = mt_cfg.report_path; *p; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            mt_text_u64(path, (uint64_t)getpid());
            p++;
        } else {
            char c[2] = {*p, 0};
            mt_text_str(path, c);
        }
    }
}

/* Follows symlinks in the last component of `path`, so the report replaces a link's target,
 * never the link. 0, or -1 with errno. */
static int resolve_links(mt_text *path) {
    for (int depth = 0; depth < 40; depth++) {
        char target[sizeof path->buf];
        ssize_t n = readlink(path->buf, target, sizeof target - 1);
        if (n < 0) return errno == EINVAL || errno == ENOENT ? 0 : -1; /* EINVAL: not a link */
        target[n] = 0;
        mt_text next = {0};
        if (target[0] != '/') {
            char *slash = strrchr(path->buf, '/');
            if (slash) {
                slash[1] = 0;
                mt_text_str(&next, path->buf);
            }
        }
        mt_text_str(&next, target);
        if (next.len >= sizeof next.buf - 1) { errno = ENAMETOOLONG; return -1; }
        *path = next;
    }
    errno = ELOOP;
    return -1;
}

static void write_body(int fd);

/* A device, FIFO or socket is written into, never replaced (as root, renaming over /dev/null
 * would replace the system's). A FIFO is opened without blocking: no reader, no report. */
static void write_special(const char *path, bool fifo) {
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (fifo && errno == ENXIO) {
            mt_text m = {0};
            mt_text_str(&m, "MEMTINT_REPORT ");
            mt_text_str(&m, path);
            mt_text_str(&m, " is a FIFO that no process is reading: the report was not written");
            mt_warn(m.buf);
        } else {
            warn_unwritable(path);
        }
        return;
    }
    /* a reader that goes away must not kill the exiting program with SIGPIPE */
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    write_body(fd);
    close(fd);
    sigpending(&pending);
    if (!was_pending && sigismember(&pending, SIGPIPE)) {
        struct timespec none = {0, 0};
        sigtimedwait(&pipe_set, NULL, &none);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (put_error == ETIMEDOUT) {
        mt_text m = {0};
        mt_text_str(&m, "MEMTINT_REPORT ");
        mt_text_str(&m, path);
        mt_text_str(&m, ": its reader stopped reading for 5 s: the report is incomplete");
        mt_warn(m.buf);
    } else if (put_error) {
        errno = put_error;
        warn_unwritable(path);
    }
}

/* A regular file (or a new one) is written beside and renamed into place, so processes sharing
 * one path (a shell pipeline) leave the whole report of the last to exit, never a mix, and a
 * failed write leaves the old file. */
static void write_regular(const char *path, const struct stat *old) {
    mt_text tmp = {0};
    mt_text_str(&tmp, path);
    mt_text_str(&tmp, ".tmp.");
    mt_text_u64(&tmp, (uint64_t)getpid());
    unlink(tmp.buf);
    int fd = open(tmp.buf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        warn_unwritable(path);
        return;
    }
    if (old) { /* the replaced file keeps its owner and permissions */
        if (fchown(fd, old->st_uid, old->st_gid)) { /* only root may; the mode still applies */ }
        fchmod(fd, old->st_mode & 07777);
    }
    write_body(fd);
    if (close(fd) && !put_error) put_error = errno;
    if (put_error || rename(tmp.buf, path)) {
        int saved = put_error ? put_error : errno;
        unlink(tmp.buf);
        errno = saved;
        warn_unwritable(path);
    }
}

/* Pages found on new frames at exit: a moved page lands on a frame of any colour. */
static void warn_moved(const struct memtint_stats *st) {
    if (!st->pages_moved) return;
    mt_text m = {0};
    mt_text_str(&m, "the kernel moved ");
    mt_text_u64(&m, st->pages_moved);
    mt_text_str(&m, " heap pages to new frames during the run, ");
    mt_text_u64(&m, mt_stats.moved_out);
    mt_text_str(&m, " of them out of the colours in use (compaction, NUMA balancing, DAMON and KSM migrate "
                    "pages; mlock does not stop them): prevent it with sysctl vm.compact_unevictable_allowed=0 "
                    "and kernel.numa_balancing=0, or use hugepage mode (MEMTINT_MODE=hugepage; memtint run "
                    "--mode hugepage), whose pages compaction does not move");
    mt_warn(m.buf);
}

uint64_t mt_spilled_at_fork;

/* Pages delivered outside the colours (spill mode): the heap is then not isolated, which the
 * exit status does not tell. A fork child counts its own spills only. The reason is the colours
 * running out (or the pool limit), or, in hugepage mode, blocks no hugepage can give in the
 * colours (range.c: longer than any run of them inside a hugepage). */
static void warn_spilled(void) {
    uint64_t spilled = mt_stats.spilled - mt_spilled_at_fork;
    if (!spilled) return;
    uint64_t shape = mt_stats.spilled_shape < spilled ? mt_stats.spilled_shape : spilled;
    mt_text m = {0};
    mt_text_u64(&m, spilled);
    mt_text_str(&m, " heap pages came from other colours than the ones asked for (MEMTINT_ON_EXHAUSTION=spill; "
                    "memtint run --spill): ");
    if (shape < spilled) {
        mt_text_str(&m, "the colours ran out");
        if (mt_cfg.pool_limit_pages) mt_text_str(&m, " or MEMTINT_POOL_LIMIT was reached");
    }
    if (shape) {
        if (shape < spilled) {
            mt_text_str(&m, ", and ");
            mt_text_u64(&m, shape);
            mt_text_str(&m, " of them ");
        } else {
            mt_text_str(&m, "they ");
        }
        mt_text_str(&m, "were in blocks that hugepage mode cannot make of these colours (the mask bits below 21 "
                        "interleave colours inside every hugepage, and no hugepage holds a run of them that long)");
    }
    mt_text_str(&m, ", so the heap is not confined to them (pages_spilled in the report); give more colours");
    if (mt_cfg.pool_limit_pages) mt_text_str(&m, " or a higher MEMTINT_POOL_LIMIT");
    if (shape) mt_text_str(&m, ", colours that cover a hugepage's whole group, or use pagemap mode");
    mt_warn(m.buf);
}

void mt_report_write(bool forked) {
    warn_spilled();
    /* Every delivered page's frame is checked once more at exit, so the report and the warning
     * say whether the kernel moved any during the run. */
    bool coloured = mt_mode == MEMTINT_MODE_PAGEMAP && mt_n_sets > 0;
    if (coloured && (mt_cfg.report_path[0] || !mt_cfg.quiet)) {
        memtint_verify_all_pages();
        struct memtint_stats st;
        memtint_get_stats(&st);
        /* after fork() the moves are mostly copy-on-write (docs/libmemtint.md, fork): a warning in
         * every shell of a pipeline would bury the kernel's */
        if (!forked) warn_moved(&st);
    }
    if (!mt_cfg.report_path[0]) return;
    mt_text path = {0};
    report_path(&path);
    struct stat through;
    /* A pipe, socket or device behind a link (/dev/stdout is /proc/self/fd/1, whose target
     * "pipe:[N]" is no path) is opened through the link. */
    if (stat(path.buf, &through) == 0 && !S_ISREG(through.st_mode) && !S_ISDIR(through.st_mode)) {
        put_error = 0;
        write_special(path.buf, S_ISFIFO(through.st_mode));
        return;
    }
    if (resolve_links(&path)) {
        warn_unwritable(path.buf);
        return;
    }
    put_error = 0;
    struct stat st;
    if (stat(path.buf, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            errno = EISDIR;
            warn_unwritable(path.buf);
        } else {
            write_special(path.buf, S_ISFIFO(st.st_mode));
        }
        return;
    }
    write_regular(path.buf, stat(path.buf, &st) == 0 ? &st : NULL);
}

/* The process's name (/proc/self/comm), as a JSON string's contents: a quote, backslash or
 * control character becomes '?' (a name is for reading, not for parsing). */
static void text_comm(mt_text *t) {
    char name[32] = {0};
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? 0 : read(fd, name, sizeof name - 1);
    if (fd >= 0) close(fd);
    for (ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c == '\n' && i == n - 1) break;
        if (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f) name[i] = '?';
    }
    if (n > 0 && name[n - 1] == '\n') name[n - 1] = 0;
    mt_text_str(t, n > 0 ? name : "");
}

static void write_body(int fd) {
    struct memtint_stats st;
    memtint_get_stats(&st);
    mt_text t = {0};
    /* Which process wrote it: processes sharing one path replace one another's report, and
     * `memtint run` tells the program's own from a child's. */
    mt_text_str(&t, "{\"pid\": ");
    mt_text_u64(&t, (uint64_t)getpid());
    mt_text_str(&t, ", \"comm\": \"");
    text_comm(&t);
    mt_text_str(&t, "\", \"mode\": \"");
    mt_text_str(&t, st.mode == MEMTINT_MODE_PAGEMAP ? "pagemap" : st.mode == MEMTINT_MODE_HUGEPAGE ? "hugepage" : "off");
    mt_text_str(&t, "\", \"colours\": \"");
    if (mt_cfg.have_colours) mt_text_colours(&t, mt_cfg.colours, 1u << mt_cfg.n_masks);
    mt_text_str(&t, "\", \"masks\": [");
    for (unsigned i = 0; i < mt_cfg.n_masks; i++) {
        mt_text_str(&t, i ? ", \"" : "\"");
        mt_text_hex(&t, mt_cfg.masks[i]);
        mt_text_str(&t, "\"");
    }
    mt_text_str(&t, "], \"node\": ");
    if (mt_cfg.node < 0) mt_text_str(&t, "-1");
    else mt_text_u64(&t, (uint64_t)mt_cfg.node);
    mt_text_str(&t, ", \"page_size\": 4096");
    put(fd, &t);
    const char *names[] = {"pages_from_kernel", "pages_delivered", "pages_delivered_peak", "pages_held_aside",
                           "pages_pooled", "pages_spilled", "pages_found_moved", "pages_moved_out_of_colours",
                           "pages_released", "pages_cached"};
    uint64_t vals[] = {st.pages_from_kernel, st.pages_delivered, st.pages_delivered_peak, st.pages_held_aside,
                       st.pages_pooled, st.pages_spilled, st.pages_moved, mt_stats.moved_out, st.pages_released,
                       st.pages_cached};
    for (unsigned i = 0; i < 10; i++) {
        mt_text_str(&t, ", \"");
        mt_text_str(&t, names[i]);
        mt_text_str(&t, "\": ");
        mt_text_u64(&t, vals[i]);
    }
    mt_text_str(&t, ", \"pages_delivered_per_colour\": {");
    put(fd, &t);
    bool first = true;
    for (unsigned c = 0; mt_stats.delivered_of && c < mt_n_colours; c++) {
        if (!mt_stats.delivered_of[c]) continue;
        mt_text_str(&t, first ? "\"" : ", \"");
        first = false;
        mt_text_u64(&t, c);
        mt_text_str(&t, "\": ");
        mt_text_u64(&t, mt_stats.delivered_of[c]);
        if (t.len > 900) put(fd, &t);
    }
    /* "any": frames of colour sets without a node (not bound; on whatever node the kernel chose) */
    mt_text_str(&t, "}, \"pages_delivered_per_node\": {");
    first = true;
    for (unsigned slot = 0; slot < MT_SLOTS; slot++) {
        if (!mt_stats.delivered_slot[slot]) continue;
        mt_text_str(&t, first ? "\"" : ", \"");
        first = false;
        if (slot) mt_text_u64(&t, (uint64_t)mt_slot_node(slot));
        else mt_text_str(&t, "any");
        mt_text_str(&t, "\": ");
        mt_text_u64(&t, mt_stats.delivered_slot[slot]);
        if (t.len > 900) put(fd, &t);
    }
    mt_text_str(&t, "}}\n");
    put(fd, &t);
}
