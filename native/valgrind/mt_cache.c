/* The cache filter's model (see mt_cache.h). The L2 is inclusive: evicting an L2 line evicts it
 * from L1 too, and the line is written back if either copy was dirty, so an L2 miss causes at
 * most one writeback — exactly what a Ramulator CPU-trace record can carry. A dirty L1 victim
 * is written into its (by inclusion, present) L2 copy without changing the L2's LRU order. */
#include "mt_cache.h"

static int is_power_of_two(mt_u64 x) { return x != 0 && (x & (x - 1)) == 0; }

const char *mt_level_check(mt_u64 size_bytes, mt_u64 ways, mt_u64 line_bytes)
{
    if (!is_power_of_two(line_bytes) || line_bytes < 64)
        return "the line size must be a power of two of at least 64 bytes";
    if (ways == 0 || ways > 64)
        return "the associativity must be between 1 and 64";
    if (size_bytes == 0 || size_bytes % (ways * line_bytes) != 0)
        return "the size must be a multiple of associativity x line size";
    if (!is_power_of_two(size_bytes / (ways * line_bytes)))
        return "size / (associativity x line size), the number of sets, must be a power of two";
    return 0;
}

mt_u64 mt_level_bytes(mt_u64 size_bytes, mt_u64 ways, mt_u64 line_bytes)
{
    return size_bytes / line_bytes * sizeof(mt_u64);
}

void mt_level_init(mt_level *level, mt_u64 size_bytes, mt_u64 ways, mt_u64 line_bytes, mt_u64 *slots)
{
    mt_u64 i, n = size_bytes / line_bytes;
    level->ways = (unsigned)ways;
    level->sets = (unsigned)(n / ways);
    level->slots = slots;
    for (i = 0; i < n; i++)
        slots[i] = MT_INVALID;
}

/* Finds `line` in its set; on a hit moves it to the front and returns 1 (its word in *word). */
static int lookup(mt_level *level, mt_u64 line, mt_u64 *word)
{
    mt_u64 *set = level->slots + (line & (level->sets - 1)) * level->ways;
    unsigned i, j;
    for (i = 0; i < level->ways; i++) {
        if (set[i] != MT_INVALID && (set[i] >> 1) == line) {
            mt_u64 w = set[i];
            for (j = i; j > 0; j--)
                set[j] = set[j - 1];
            set[0] = w;
            *word = w;
            return 1;
        }
    }
    return 0;
}

/* Inserts `word` at the front of its set; returns the evicted word (MT_INVALID if none). */
static mt_u64 insert(mt_level *level, mt_u64 word)
{
    mt_u64 *set = level->slots + ((word >> 1) & (level->sets - 1)) * level->ways;
    mt_u64 victim = set[level->ways - 1];
    unsigned j;
    for (j = level->ways - 1; j > 0; j--)
        set[j] = set[j - 1];
    set[0] = word;
    return victim;
}

/* Removes `line` if present (keeping the others' order); returns its word or MT_INVALID. */
static mt_u64 remove_line(mt_level *level, mt_u64 line)
{
    mt_u64 *set = level->slots + (line & (level->sets - 1)) * level->ways;
    unsigned i, j;
    for (i = 0; i < level->ways; i++) {
        if (set[i] != MT_INVALID && (set[i] >> 1) == line) {
            mt_u64 w = set[i];
            for (j = i; j + 1 < level->ways; j++)
                set[j] = set[j + 1];
            set[level->ways - 1] = MT_INVALID;
            return w;
        }
    }
    return MT_INVALID;
}

/* Sets the dirty bit of `line`, which must be present, without touching the LRU order. */
static void mark_dirty(mt_level *level, mt_u64 line)
{
    mt_u64 *set = level->slots + (line & (level->sets - 1)) * level->ways;
    unsigned i;
    for (i = 0; i < level->ways; i++) {
        if (set[i] != MT_INVALID && (set[i] >> 1) == line) {
            set[i] |= 1;
            return;
        }
    }
}

mt_outcome mt_access_line(mt_hierarchy *h, mt_u64 line, int write)
{
    mt_outcome out = {0, 0, 0, 0};
    mt_u64 word, victim;
    mt_u64 *set = h->l1.slots + (line & (h->l1.sets - 1)) * h->l1.ways;
    /* The common case, an L1 hit on the most recently used way, without the general lookup. */
    if (set[0] != MT_INVALID && (set[0] >> 1) == line) {
        set[0] |= (mt_u64)(write != 0);
        return out;
    }
    if (lookup(&h->l1, line, &word)) {
        h->l1.slots[(line & (h->l1.sets - 1)) * h->l1.ways] |= (mt_u64)(write != 0);
        return out;
    }
    out.l1_miss = 1;
    if (!lookup(&h->l2, line, &word)) {
        out.l2_miss = 1;
        victim = insert(&h->l2, line << 1);
        if (victim != MT_INVALID) {
            mt_u64 l1_copy = remove_line(&h->l1, victim >> 1);
            if ((victim & 1) || (l1_copy != MT_INVALID && (l1_copy & 1))) {
                out.has_writeback = 1;
                out.writeback = victim >> 1;
            }
        }
    }
    victim = insert(&h->l1, (line << 1) | (mt_u64)(write != 0));
    if (victim != MT_INVALID && (victim & 1))
        mark_dirty(&h->l2, victim >> 1);
    return out;
}
