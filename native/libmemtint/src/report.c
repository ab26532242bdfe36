/* report.c — the statistics behind memtint_get_stats() and the MEMTINT_REPORT JSON written at
 * exit (schema in docs/libmemtint.md; `memtint run` reads it). */
#include "internal.h"
#include "../include/memtint.h"

#include <fcntl.h>
#include <unistd.h>

static void put(int fd, mt_text *t) {
    mt_write_all(fd, t->buf, t->len);
    t->len = 0;
}

void mt_report_write(void) {
    if (!mt_cfg.report_path[0]) return;
    int fd = open(mt_cfg.report_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        mt_warn("cannot write MEMTINT_REPORT file");
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
                           "pages_pooled", "pages_spilled", "pages_found_moved", "pages_released"};
    uint64_t vals[] = {st.pages_from_kernel, st.pages_delivered, st.pages_delivered_peak, st.pages_held_aside,
                       st.pages_pooled, st.pages_spilled, st.pages_moved, st.pages_released};
    for (unsigned i = 0; i < 8; i++) {
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
}
