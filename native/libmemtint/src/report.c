/* report.c — the statistics behind memtint_get_stats() and the MEMTINT_REPORT JSON written at
 * exit (schema in docs/libmemtint.md; `memtint run` reads it). */
#include "internal.h"
#include "../include/memtint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
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

static void put(int fd, mt_text *t) {
    mt_write_all(fd, t->buf, t->len);
    t->len = 0;
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

void mt_report_write(void) {
    if (!mt_cfg.report_path[0]) return;
    /* Written beside and renamed into place, so processes sharing one path (a shell pipeline)
     * leave the whole report of the last to exit, never a mix. */
    mt_text path = {0}, tmp = {0};
    report_path(&path);
    mt_text_str(&tmp, path.buf);
    mt_text_str(&tmp, ".tmp.");
    mt_text_u64(&tmp, (uint64_t)getpid());
    int fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        warn_unwritable(path.buf);
        return;
    }
    /* the frames of every delivered page are checked once more, so the report says whether the
     * kernel moved any during the run */
    if (mt_mode == MEMTINT_MODE_PAGEMAP) memtint_verify_all_pages();
    struct memtint_stats st;
    memtint_get_stats(&st);
    mt_text t = {0};
    mt_text_str(&t, "{\"mode\": \"");
    mt_text_str(&t, st.mode == MEMTINT_MODE_PAGEMAP ? "pagemap" : st.mode == MEMTINT_MODE_HUGEPAGE ? "hugepage" : "off");
    mt_text_str(&t, "\", \"colours\": \"");
    if (mt_cfg.have_colours) mt_text_colours(&t, mt_cfg.colours, 1u << mt_cfg.n_masks);
    mt_text_str(&t, "\", \"masks\": [");
    for (unsigned i = 0; i < mt_cfg.n_masks; i++) {
        mt_text_str(&t, i ? ", \"" : "\"");
        mt_text_hex(&t, mt_cfg.masks[i]);
        mt_text_str(&t, "\"");
    }
    mt_text_str(&t, "], \"page_size\": 4096");
    put(fd, &t);
    const char *names[] = {"pages_from_kernel", "pages_delivered", "pages_delivered_peak", "pages_held_aside",
                           "pages_pooled", "pages_spilled", "pages_found_moved", "pages_released", "pages_cached"};
    uint64_t vals[] = {st.pages_from_kernel, st.pages_delivered, st.pages_delivered_peak, st.pages_held_aside,
                       st.pages_pooled, st.pages_spilled, st.pages_moved, st.pages_released, st.pages_cached};
    for (unsigned i = 0; i < 9; i++) {
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
    mt_text_str(&t, "}}\n");
    put(fd, &t);
    close(fd);
    if (rename(tmp.buf, path.buf)) {
        int saved = errno;
        unlink(tmp.buf);
        errno = saved;
        warn_unwritable(path.buf);
    }
}
