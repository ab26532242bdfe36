/* frames.c — frame numbers from /proc/self/pagemap (64-bit entries: bit 63 present, bits 0-54
 * the frame number). Unprivileged readers get frame number 0 for present pages (Linux >= 4.2);
 * that is detected here so no colour is ever computed from a zero frame (issue 5, privilege). */
#include "internal.h"

#include <fcntl.h>
#include <sys/mman.h>
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
