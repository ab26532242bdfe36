/* config.c — the MEMTINT_* environment contract with `memtint run` (see memtint.h), read once
 * at library start without allocating. A malformed value names the variable and the text and
 * ends the process with status 2: running uncoloured would silently break the experiment. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

mt_config mt_cfg;

static _Noreturn void bad(const char *var, const char *text, const char *why) {
    mt_text t = {0};
    mt_text_str(&t, "error: ");
    mt_text_str(&t, var);
    mt_text_str(&t, "='");
    mt_text_str(&t, text);
    mt_text_str(&t, "': ");
    mt_text_str(&t, why);
    mt_fatal(&t);
}

static void parse_masks(const char *s) {
    const char *p = s;
    uint64_t basis[64] = {0}; /* the masks so far, reduced: basis[b] has highest bit b */
    if (!*p) bad("MEMTINT_COLOR_MASKS", s, "empty; expected comma-separated hex masks like 0x2000,0x4000");
    for (;;) {
        if (mt_cfg.n_masks == MT_MAX_MASKS)
            bad("MEMTINT_COLOR_MASKS", s, "more than 16 masks (colour bits)");
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) p += 2;
        uint64_t v = 0;
        int digits = 0;
        for (;; p++, digits++) {
            int d;
            if (*p >= '0' && *p <= '9') d = *p - '0';
            else if (*p >= 'a' && *p <= 'f') d = *p - 'a' + 10;
            else if (*p >= 'A' && *p <= 'F') d = *p - 'A' + 10;
            else break;
            if (digits == 16) bad("MEMTINT_COLOR_MASKS", s, "mask wider than 64 bits");
            v = v << 4 | (uint64_t)d;
        }
        if (!digits) bad("MEMTINT_COLOR_MASKS", s, "expected a hex mask such as 0x2000");
        if (v == 0) bad("MEMTINT_COLOR_MASKS", s, "a mask is zero");
        if (v & (MT_PAGE - 1))
            bad("MEMTINT_COLOR_MASKS", s,
                "a mask uses bits below 12 (inside a 4 KB page); the OS cannot colour those bits");
        /* Each mask must add a bit of colour the others cannot make (independent over GF(2)):
         * a repeated or XOR-dependent mask leaves colours no frame has, and a process given
         * one would take frames until its pool limit or the kernel stops it. */
        uint64_t rest = v;
        for (int bit = 63; bit >= 0 && rest; bit--)
            if (rest >> bit & 1 && basis[bit]) rest ^= basis[bit];
        if (!rest)
            bad("MEMTINT_COLOR_MASKS", s,
                "a mask is a repeat or the XOR of earlier ones, so some colours would have no frames; give "
                "independent masks");
        basis[63 - __builtin_clzll(rest)] = rest;
        mt_cfg.masks[mt_cfg.n_masks++] = v;
        if (*p == 0) return;
        if (*p != ',') bad("MEMTINT_COLOR_MASKS", s, "expected ',' between masks");
        p++;
    }
}

/* A decimal number; -1 if there is none, -2 if it exceeds 2^40 (no overflow to a small value). */
static int parse_uint(const char **pp, uint64_t *out) {
    const char *p = *pp;
    uint64_t v = 0;
    if (*p < '0' || *p > '9') return -1;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (uint64_t)(*p++ - '0');
        if (v > (1ULL << 40)) return -2;
    }
    *pp = p;
    *out = v;
    return 0;
}

/* "colour 40 is outside the colour space: 5 masks give 32 colours (0-31)"; startup only. */
static const char *outside(const char *number, size_t len, unsigned n_colours) {
    static mt_text t;
    t.len = 0;
    mt_text_str(&t, "colour ");
    for (size_t i = 0; i < len && i < 40; i++) {
        char c[2] = {number[i], 0};
        mt_text_str(&t, c);
    }
    mt_text_str(&t, " is outside the colour space: ");
    unsigned masks = 0;
    while ((1u << masks) < n_colours) masks++;
    mt_text_u64(&t, masks);
    mt_text_str(&t, masks == 1 ? " mask gives " : " masks give ");
    mt_text_u64(&t, n_colours);
    mt_text_str(&t, " colours (0-");
    mt_text_u64(&t, n_colours - 1);
    mt_text_str(&t, ")");
    return t.buf;
}

int mt_parse_colours(const char *s, uint64_t *bm, unsigned n_colours, const char **err) {
    const char *p = s;
    if (!*p) { *err = "empty; expected colours like 0-3,8"; return -1; }
    for (;;) {
        uint64_t a, b;
        const char *start = p;
        int r = parse_uint(&p, &a);
        if (r == -1) { *err = "expected a colour number or range like 0-3"; return -1; }
        b = a;
        const char *end = p;
        if (r == 0 && *p == '-') {
            p++;
            end = p;
            r = parse_uint(&p, &b);
            if (r == -1) { *err = "expected the end of a range like 0-3"; return -1; }
            if (r == 0 && b < a) { *err = "a range ends before it starts"; return -1; }
        }
        /* checked before the range is filled in: the bitmap has only n_colours bits */
        if (r == -2 || b >= n_colours) {
            while (*end >= '0' && *end <= '9') end++;
            const char *number = end;
            while (number > start && number[-1] >= '0' && number[-1] <= '9') number--;
            *err = outside(number, (size_t)(end - number), n_colours);
            return -1;
        }
        for (uint64_t c = a; c <= b; c++) bm[c >> 6] |= 1ULL << (c & 63);
        if (*p == 0) return 0;
        if (*p != ',') { *err = "expected ',' between colours"; return -1; }
        p++;
    }
}

static uint64_t parse_size(const char *var, const char *s) {
    const char *p = s;
    uint64_t v;
    if (parse_uint(&p, &v)) bad(var, s, "expected a size like 512M or 4G");
    uint64_t mul = 1;
    switch (*p) {
    case 'k': case 'K': mul = 1ULL << 10; p++; break;
    case 'm': case 'M': mul = 1ULL << 20; p++; break;
    case 'g': case 'G': mul = 1ULL << 30; p++; break;
    case 0: break;
    default: bad(var, s, "unknown unit; use K, M or G");
    }
    if (*p) bad(var, s, "trailing text after the size");
    if (v > UINT64_MAX / mul) bad(var, s, "too large: more than 2^64 bytes");
    return v * mul;
}

void mt_config_load(void) {
    const char *s;
    mt_keep_stderr();
    mt_cfg.quiet = (s = getenv("MEMTINT_QUIET")) && *s && strcmp(s, "0");
    mt_cfg.verbose = (s = getenv("MEMTINT_VERBOSE")) && *s && strcmp(s, "0");
    mt_cfg.hypervisor_noted = (s = getenv("MEMTINT_HYPERVISOR_NOTED")) && *s && strcmp(s, "0");
    if ((s = getenv("MEMTINT_COLOR_MASKS"))) parse_masks(s);
    if ((s = getenv("MEMTINT_COLORS"))) {
        if (!mt_cfg.n_masks)
            bad("MEMTINT_COLORS", s, "MEMTINT_COLOR_MASKS is not set, so there are no colours");
        const char *err;
        if (mt_parse_colours(s, mt_cfg.colours, 1u << mt_cfg.n_masks, &err))
            bad("MEMTINT_COLORS", s, err);
        mt_cfg.have_colours = true;
    }
    mt_cfg.node = -1;
    if ((s = getenv("MEMTINT_NODE"))) {
        if (!mt_cfg.n_masks)
            bad("MEMTINT_NODE", s, "MEMTINT_COLOR_MASKS is not set, so there are no colours to place on a node");
        const char *p = s;
        uint64_t v;
        bool minus = *p == '-';
        if (minus) p++;
        if (parse_uint(&p, &v) == -1 || *p || (minus && v != 1))
            bad("MEMTINT_NODE", s, "expected a node number such as 0, or -1 for any node");
        if (v > (1u << 20)) bad("MEMTINT_NODE", s, "no such node (libmemtint supports nodes 0-63)");
        mt_cfg.node = minus ? -1 : (int)v;
        mt_text why = {0};
        if (mt_node_check(mt_cfg.node, &why)) bad("MEMTINT_NODE", s, why.buf);
    }
    if ((s = getenv("MEMTINT_MODE"))) {
        if (!strcmp(s, "auto")) mt_cfg.mode_requested = MT_MODE_AUTO;
        else if (!strcmp(s, "pagemap")) mt_cfg.mode_requested = MT_MODE_PAGEMAP;
        else if (!strcmp(s, "hugepage")) mt_cfg.mode_requested = MT_MODE_HUGEPAGE;
        else bad("MEMTINT_MODE", s, "expected auto, pagemap or hugepage");
    }
    if ((s = getenv("MEMTINT_ON_EXHAUSTION"))) {
        if (!strcmp(s, "error")) mt_cfg.on_exhaustion = MT_EXHAUST_ERROR;
        else if (!strcmp(s, "spill")) mt_cfg.on_exhaustion = MT_EXHAUST_SPILL;
        else bad("MEMTINT_ON_EXHAUSTION", s, "expected error or spill");
    }
    if ((s = getenv("MEMTINT_REPORT"))) {
        if (!*s || strlen(s) >= sizeof mt_cfg.report_path)
            bad("MEMTINT_REPORT", s, "expected a file path (shorter than 512 bytes)");
        strcpy(mt_cfg.report_path, s);
    }
    if ((s = getenv("MEMTINT_POOL_LIMIT"))) {
        uint64_t b = parse_size("MEMTINT_POOL_LIMIT", s);
        if (b < MT_HUGE) bad("MEMTINT_POOL_LIMIT", s, "must be at least 2M");
        mt_cfg.pool_limit_pages = b / MT_PAGE;
    }
}
