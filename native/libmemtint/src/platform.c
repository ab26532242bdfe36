/* platform.c — what libmemtint needs from the system besides memory: messages written with
 * write(2) (no stdio, which may allocate, inside malloc) and the hypervisor check behind the
 * "guest frame numbers are not real banks" warning (issue 5, honesty about the machine). */
#include "internal.h"

#include <cpuid.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

void mt_text_str(mt_text *t, const char *s) {
    while (*s && t->len < sizeof t->buf - 1) t->buf[t->len++] = *s++;
    t->buf[t->len] = 0;
}

void mt_text_u64(mt_text *t, uint64_t v) {
    char tmp[24];
    int n = 0;
    do tmp[n++] = (char)('0' + v % 10); while ((v /= 10) && n < 23);
    char out[24];
    for (int i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    out[n] = 0;
    mt_text_str(t, out);
}

void mt_text_hex(mt_text *t, uint64_t v) {
    char out[20] = "0x";
    int n = 0;
    char tmp[17];
    do tmp[n++] = "0123456789abcdef"[v & 15]; while ((v >>= 4) && n < 16);
    for (int i = 0; i < n; i++) out[2 + i] = tmp[n - 1 - i];
    out[2 + n] = 0;
    mt_text_str(t, out);
}

/* "0-3,8,10-11" */
void mt_text_colours(mt_text *t, const uint64_t *bm, unsigned n_colours) {
    bool first = true;
    for (unsigned c = 0; c < n_colours; c++) {
        if (!mt_bit(bm, c)) continue;
        unsigned e = c;
        while (e + 1 < n_colours && mt_bit(bm, e + 1)) e++;
        if (!first) mt_text_str(t, ",");
        first = false;
        mt_text_u64(t, c);
        if (e > c) { mt_text_str(t, "-"); mt_text_u64(t, e); }
        c = e;
    }
    if (first) mt_text_str(t, "(none)");
}

void mt_write_all(int fd, const char *s, size_t n) {
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

/* Where messages go: stderr, kept as a copy of fd 2 taken at load, since a program may close its
 * stderr before the library's exit report (coreutils' close_stdout does) and its warnings would
 * be lost. High and close-on-exec, so no program's own fds or children see it. */
static int err_fd = 2;

void mt_keep_stderr(void) {
    int fd = fcntl(2, F_DUPFD_CLOEXEC, 100);
    if (fd >= 0) err_fd = fd;
}

/* One write per message: on a pipe shared with other processes (run-mix's programs and memtint
 * itself) a write of up to PIPE_BUF bytes is not interleaved with theirs; three writes were. */
void mt_say(mt_text *t) {
    static const char prefix[] = "libmemtint: ";
    char line[sizeof prefix - 1 + sizeof t->buf + 1];
    size_t n = t->len < sizeof t->buf ? t->len : sizeof t->buf;
    memcpy(line, prefix, sizeof prefix - 1);
    memcpy(line + sizeof prefix - 1, t->buf, n);
    line[sizeof prefix - 1 + n] = '\n';
    mt_write_all(err_fd, line, sizeof prefix - 1 + n + 1);
}

void mt_warn(const char *what) {
    if (mt_cfg.quiet) return;
    mt_text t = {0};
    mt_text_str(&t, "warning: ");
    mt_text_str(&t, what);
    mt_say(&t);
}

_Noreturn void mt_fatal(mt_text *t) {
    mt_say(t);
    _exit(2);
}

/* cpuid leaf 1, ECX bit 31 is set by every mainstream hypervisor; /sys/hypervisor covers Xen PV. */
bool mt_hypervisor_present(void) {
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d) && (c >> 31 & 1)) return true;
    int fd = open("/sys/hypervisor/type", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[16];
        ssize_t n = read(fd, buf, sizeof buf);
        close(fd);
        if (n > 0) return true;
    }
    return false;
}

uint64_t mt_meminfo_kb(const char *key) {
    static char buf[8192];
    int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    size_t kl = strlen(key);
    for (char *p = buf; (p = strstr(p, key)); p++) {
        if ((p != buf && p[-1] != '\n') || p[kl] != ':') continue;
        p += kl + 1;
        while (*p == ' ') p++;
        uint64_t v = 0;
        while (*p >= '0' && *p <= '9') v = v * 10 + (uint64_t)(*p++ - '0');
        return v;
    }
    return 0;
}
