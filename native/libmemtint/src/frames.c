/* frames.c — frame numbers from /proc/self/pagemap (64-bit entries: bit 63 present, bits 0-54
 * the frame number). Unprivileged readers get frame number 0 for present pages (Linux >= 4.2);
 * that is detected here so no colour is ever computed from a zero frame (issue 5, privilege).
 * Also the node of new frames (issue 30, TintMalloc's per-thread node): mbind(MPOL_BIND) on the
 * pool's own fresh mapping before it is faulted in, and move_pages(2)'s query to confirm where
 * the frames landed. Raw syscalls: no libnuma. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int mt_pagemap_fd = -1;

int mt_pagemap_open(void) {
    if (mt_pagemap_fd >= 0) close(mt_pagemap_fd);
    mt_pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    return mt_pagemap_fd < 0 ? -1 : 0;
}

int mt_pagemap_read(uintptr_t va, size_t n, uint64_t *pfns) {
    if (mt_pagemap_fd < 0) return -1;
    size_t done = 0;
    off_t off = (off_t)(va >> MT_PAGE_SHIFT) * 8;
    while (done < n) {
        ssize_t r = pread(mt_pagemap_fd, pfns + done, (n - done) * 8, off + (off_t)done * 8);
        if (r <= 0) return -1;
        done += (size_t)r / 8;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t e = pfns[i];
        pfns[i] = (e >> 63 & 1) ? (e & ((1ULL << 55) - 1)) : 0;
    }
    return 0;
}

/* A present page can read as frame 0 for a moment while the kernel migrates it (compaction,
 * e.g. when hugepages are being reserved): its entry is then a migration entry. Touching the
 * page waits for the migration to finish; then the entry is read again. */
uint64_t mt_pagemap_settle(uintptr_t va) {
    uint64_t pfn = 0;
    for (int attempt = 0; attempt < 64 && !pfn; attempt++) {
        (void)*(volatile char *)va;
        if (mt_pagemap_read(va, 1, &pfn)) return 0;
        if (!pfn) sched_yield();
    }
    return pfn;
}

bool mt_pagemap_privileged(void) {
    if (mt_pagemap_fd < 0 && mt_pagemap_open()) return false;
    volatile char *p = mmap(0, MT_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    p[0] = 1;
    uint64_t pfn = 0;
    int r = mt_pagemap_read((uintptr_t)p, 1, &pfn);
    munmap((void *)p, MT_PAGE);
    return r == 0 && pfn != 0;
}

/* Parses a sysfs node list ("0-1,3") into a bitmap of MT_MAX_NODES bits; -1 if malformed. */
static int parse_nodes(const char *p, uint64_t *bm) {
    *bm = 0;
    while (*p && *p != '\n') {
        unsigned a = 0, b;
        if (*p < '0' || *p > '9') return -1;
        while (*p >= '0' && *p <= '9' && a < 100000) a = a * 10 + (unsigned)(*p++ - '0');
        b = a;
        if (*p == '-') {
            p++;
            b = 0;
            if (*p < '0' || *p > '9') return -1;
            while (*p >= '0' && *p <= '9' && b < 100000) b = b * 10 + (unsigned)(*p++ - '0');
        }
        for (unsigned n = a; n <= b && n < MT_MAX_NODES; n++) *bm |= 1ULL << n;
        if (*p == ',') p++;
    }
    return 0;
}

int mt_node_check(int node, mt_text *why) {
    if (node == -1) return 0;
    if (node < -1 || node >= MT_MAX_NODES) {
        mt_text_str(why, node < 0 ? "node -" : "node ");
        mt_text_u64(why, node < 0 ? (uint64_t)-(int64_t)node : (uint64_t)node);
        mt_text_str(why, " is outside the nodes libmemtint supports (0-63; -1 means any node)");
        return -1;
    }
    /* N_MEMORY: a node can exist with CPUs only (or be offline); binding to it cannot work */
    uint64_t nodes = 1; /* a kernel without NUMA has no node directory: node 0 only */
    char buf[256];
    int fd = open("/sys/devices/system/node/has_memory", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        buf[n > 0 ? n : 0] = 0;
        if (n <= 0 || parse_nodes(buf, &nodes)) nodes = 0;
    }
    if (nodes >> node & 1) return 0;
    mt_text_str(why, "node ");
    mt_text_u64(why, (uint64_t)node);
    mt_text_str(why, " does not exist or has no memory (nodes with memory: ");
    if (!nodes) mt_text_str(why, "unreadable /sys/devices/system/node/has_memory");
    else mt_text_colours(why, &nodes, MT_MAX_NODES);
    mt_text_str(why, ")");
    return -1;
}

int mt_node_bind(void *va, size_t len, int node) {
    unsigned long mask = 1UL << node;
    /* maxnode counts one more than the bits the kernel reads (mbind(2)) */
    if (syscall(SYS_mbind, va, len, MPOL_BIND, &mask, (unsigned long)MT_MAX_NODES + 1, 0) == 0) return 0;
    /* a kernel without NUMA: every frame is on node 0 */
    return errno == ENOSYS && node == 0 ? 0 : -1;
}

int mt_node_verify(uintptr_t va, size_t n, size_t step, int node) {
    static void *pages[512];
    static int status[512];
    for (size_t done = 0; done < n;) {
        size_t k = n - done < 512 ? n - done : 512;
        for (size_t i = 0; i < k; i++) pages[i] = (void *)(va + (done + i) * step);
        /* nodes == NULL: a query; status[i] is the page's node or -errno */
        if (syscall(SYS_move_pages, 0, k, pages, NULL, status, 0))
            return errno == ENOSYS && node == 0 ? 0 : -1;
        for (size_t i = 0; i < k; i++)
            if (status[i] != node) { errno = EFAULT; return -1; }
        done += k;
    }
    return 0;
}
