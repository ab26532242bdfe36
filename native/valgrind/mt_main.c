/* memtint-trace: a Valgrind tool that runs an unmodified program, passes its data accesses
 * through a private cache hierarchy per thread (mt_cache.c) inside the instrumented process,
 * and writes each L2 miss as a Ramulator-style CPU-trace record (bubbles, read line, dirty
 * writeback) to one `.mtt` file per thread (mt_mtt.c). Issue 7; docs/tracing.md.
 *
 * Instruction counting is per superblock, not per instruction: the instrumenter keeps a count
 * of the guest instructions (IMarks) seen since the last point that settled the global counter,
 * and settles it inline (one load-add-store) before each side exit and at the superblock's end,
 * or inside the access helper, which receives the pending count as part of its argument. The
 * counter is therefore exact at every access and at every superblock boundary. Valgrind runs one
 * thread at a time, so a thread's count is settled when the scheduler switches threads. */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_options.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"

#include "mt_cache.h"
#include "mt_mtt.h"

#define MT_VERSION "1"
#define OUT_BUFFER_BYTES (256 * 1024)
/* Exit statuses of the tool's own failures (docs/tracing.md); the program's own are passed on. */
#define EXIT_BAD_OPTION 2
#define EXIT_OUTPUT_ERROR 125

/* ---- options ---- */
static const HChar *clo_out = "memtint-trace";
static Long clo_l1_size = 32 * 1024, clo_l1_assoc = 8;
static Long clo_l2_size = 1024 * 1024, clo_l2_assoc = 16;
static Long clo_line = 64;
static Long clo_warmup = 0;     /* instructions (all threads) simulated before anything is emitted */
static Long clo_limit = 0;      /* instructions (all threads) traced after the warm-up; 0 = no limit */
static Bool clo_exit_at_limit = True; /* at the limit: end the program, or keep it running untraced */

/* ---- per-thread state ---- */
typedef struct {
    Int ordinal;            /* 1 = the main thread, then in creation order: names the file */
    ThreadId tid;           /* Valgrind's thread id (reused after a thread exits) */
    Int lwp;                /* the OS thread id */
    mt_hierarchy cache;
    ULong executed;         /* instructions this thread executed, settled at thread switches */
    ULong trace_start;      /* its instruction count when its tracing began */
    ULong last_record;      /* its instruction count at its last record (or trace_start) */
    ULong debt;             /* records that shared an instruction, not yet taken off a gap */
    Bool tracing;
    Bool ever_traced;
    ULong trace_end;        /* its instruction count when the limit stopped tracing */
    Bool finished;
    Int fd;
    HChar *path;
    UChar *buf;
    Int buf_used;
    mt_mtt_encoder enc;
    ULong accesses, l1_misses, l2_misses;
} ThreadTrace;

static ThreadTrace **by_tid;         /* the live thread with each Valgrind tid */
static ThreadTrace **all_threads;    /* every thread ever seen, by ordinal - 1 */
static Int n_threads, cap_threads;

static ULong g_icount;               /* instructions executed by all threads: the inline counter */
static ULong g_mark;                 /* g_icount when the running thread was switched in */
static ThreadTrace *g_cur;           /* the running thread */
static Bool g_tracing_began;
static Bool g_done;                  /* the instruction limit was reached */
static Bool g_in_child;              /* a child forked without exec: untraced, writes nothing */
static Bool g_stopped_at_limit;
static ULong g_traced_at_limit;
static Int g_line_shift;
#define PROGRESS_EVERY 50000000ULL
static ULong g_next_progress = PROGRESS_EVERY;     /* g_icount at which to report progress next */

static void settle_current(void)
{
    if (g_cur)
        g_cur->executed += g_icount - g_mark;
    g_mark = g_icount;
}

static ULong thread_now(ThreadTrace *t)
{
    return t == g_cur ? t->executed + (g_icount - g_mark) : t->executed;
}

/* Valgrind's tool API has no strerror; these are the errors an output file meets. */
static const HChar *error_text(UWord err)
{
    switch (err) {
    case VKI_ENOSPC: return "no space left on device";
    case VKI_EFBIG: return "file too large";
    case VKI_EACCES: return "permission denied";
    case VKI_EROFS: return "read-only file system";
    case VKI_ENOENT: return "no such file or directory";
    case VKI_EISDIR: return "is a directory";
    case VKI_EIO: return "input/output error";
    default: return "write failed";
    }
}

static void output_failed(ThreadTrace *t, Int err)
{
    VG_(message)(Vg_UserMsg, "memtint-trace: error: cannot write %s: %s (errno %d)\n", t->path,
                 error_text(err), err);
    VG_(exit)(EXIT_OUTPUT_ERROR);
}

static void write_all(ThreadTrace *t, const void *data, Int len)
{
    const UChar *p = data;
    while (len > 0) {
        Int n = VG_(write)(t->fd, p, len);
        if (n <= 0)
            output_failed(t, n < 0 ? -n : VKI_ENOSPC);
        p += n;
        len -= n;
    }
}

static void flush_buffer(ThreadTrace *t)
{
    if (t->buf_used > 0)
        write_all(t, t->buf, t->buf_used);
    t->buf_used = 0;
}

static ThreadTrace *new_thread(ThreadId tid)
{
    ThreadTrace *t = VG_(calloc)("mt.thread", 1, sizeof *t);
    SysRes res;
    UChar header[MT_MTT_HEADER_BYTES];
    Int path_len;
    if (n_threads == cap_threads) {
        cap_threads = cap_threads ? 2 * cap_threads : 16;
        all_threads = VG_(realloc)("mt.threads", all_threads, cap_threads * sizeof *all_threads);
    }
    all_threads[n_threads++] = t;
    t->ordinal = n_threads;
    t->tid = tid;
    t->lwp = 0;
    t->cache.line_shift = g_line_shift;
    mt_level_init(&t->cache.l1, clo_l1_size, clo_l1_assoc, clo_line,
                  VG_(malloc)("mt.l1", mt_level_bytes(clo_l1_size, clo_l1_assoc, clo_line)));
    mt_level_init(&t->cache.l2, clo_l2_size, clo_l2_assoc, clo_line,
                  VG_(malloc)("mt.l2", mt_level_bytes(clo_l2_size, clo_l2_assoc, clo_line)));
    mt_mtt_init(&t->enc);
    /* A thread created after the warm-up is traced from its first instruction. */
    t->tracing = t->ever_traced = g_tracing_began && !g_done;
    path_len = VG_(strlen)(clo_out) + 32;
    t->path = VG_(malloc)("mt.path", path_len);
    VG_(snprintf)(t->path, path_len, "%s.t%d.mtt", clo_out, t->ordinal);
    res = VG_(open)(t->path, VKI_O_CREAT | VKI_O_WRONLY | VKI_O_TRUNC, 0644);
    if (sr_isError(res)) {
        VG_(message)(Vg_UserMsg, "memtint-trace: error: cannot create %s: %s (errno %lu)\n", t->path,
                     error_text(sr_Err(res)), sr_Err(res));
        VG_(exit)(EXIT_OUTPUT_ERROR);
    }
    t->fd = sr_Res(res);
    t->buf = VG_(malloc)("mt.buf", OUT_BUFFER_BYTES);
    mt_mtt_header(&t->enc, 0, header); /* "unfinished" until the thread's end */
    write_all(t, header, MT_MTT_HEADER_BYTES);
    return t;
}

static ThreadTrace *thread_for(ThreadId tid)
{
    if (!by_tid[tid])
        by_tid[tid] = new_thread(tid);
    return by_tid[tid];
}

/* Flushes a thread's records and writes its final header. */
static void finish_thread(ThreadTrace *t)
{
    UChar header[MT_MTT_HEADER_BYTES];
    if (t->finished)
        return;
    flush_buffer(t);
    mt_mtt_header(&t->enc, 1, header);
    if (VG_(lseek)(t->fd, 0, VKI_SEEK_SET) != 0)
        output_failed(t, VKI_EIO);
    write_all(t, header, MT_MTT_HEADER_BYTES);
    VG_(close)(t->fd);
    t->finished = True;
    VG_(free)(t->cache.l1.slots);
    VG_(free)(t->cache.l2.slots);
    VG_(free)(t->buf);
    t->buf = NULL;
}

static void begin_tracing(void)
{
    Int i;
    settle_current();
    g_tracing_began = True;
    for (i = 0; i < n_threads; i++) {
        ThreadTrace *t = all_threads[i];
        if (!t->finished) {
            t->tracing = t->ever_traced = True;
            t->trace_start = t->last_record = thread_now(t);
            /* the running thread has already executed g_icount - warmup traced instructions,
             * the current one included (the counter advances a block's accesses at a time) */
            if (t == g_cur)
                t->trace_start = t->last_record = thread_now(t) - (g_icount - (ULong)clo_warmup);
        }
    }
}

static void write_summary(void);

static void reach_limit(void)
{
    Int i;
    settle_current();
    g_done = True;
    g_stopped_at_limit = True;
    g_traced_at_limit = g_icount - (ULong)clo_warmup;
    for (i = 0; i < n_threads; i++) {
        ThreadTrace *t = all_threads[i];
        t->trace_end = t->executed; /* settled above */
        t->tracing = False;
    }
    if (clo_exit_at_limit) {
        for (i = 0; i < n_threads; i++)
            finish_thread(all_threads[i]);
        write_summary();
        VG_(exit)(0);
    }
}

/* ---- the analysis helper: one call per data access ---- */
/* info = pending instructions << 17 | size << 1 | write */
static VG_REGPARM(2) void mt_access(Addr addr, UWord info)
{
    ThreadTrace *t;
    ULong first, last, line;
    UWord size = (info >> 1) & 0xffff;
    Bool write = info & 1;
    if (g_in_child)
        return;
    g_icount += info >> 17;
    if (g_icount >= g_next_progress) {
        /* read by `memtint trace` from the log to show progress on long runs */
        VG_(message)(Vg_UserMsg, "memtint-trace: progress: %llu instructions\n", g_icount);
        g_next_progress = g_icount + PROGRESS_EVERY;
    }
    if (g_done)
        return;
    if (!g_tracing_began && g_icount > (ULong)clo_warmup)
        begin_tracing();
    if (clo_limit && g_tracing_began && g_icount - (ULong)clo_warmup > (ULong)clo_limit) {
        reach_limit();
        return;
    }
    t = g_cur;
    if (!t) {
        t = g_cur = thread_for(VG_(get_running_tid)());
        g_mark = g_icount;
    }
    if (size == 0)
        size = 1;
    first = addr >> g_line_shift;
    last = (addr + size - 1) >> g_line_shift;
    for (line = first; line <= last; line++) {
        mt_outcome o = mt_access_line(&t->cache, line, write);
        t->accesses++;
        if (!o.l1_miss)
            continue;
        t->l1_misses++;
        if (!o.l2_miss)
            continue;
        t->l2_misses++;
        if (t->tracing) {
            ULong now = thread_now(t), bubbles = 0;
            /* A record stands for its bubbles + 1 instructions. When one instruction misses twice
             * (a line-crossing access, xsave), the second record's 1 is taken off the next gap,
             * so that the records' instruction sum stays the executed count. */
            if (now > t->last_record) {
                ULong pay;
                bubbles = now - t->last_record - 1;
                pay = bubbles < t->debt ? bubbles : t->debt;
                bubbles -= pay;
                t->debt -= pay;
            } else {
                t->debt++;
            }
            if (t->buf_used > OUT_BUFFER_BYTES - MT_MTT_MAX_RECORD_BYTES)
                flush_buffer(t);
            t->buf_used += mt_mtt_encode(&t->enc, t->buf + t->buf_used, bubbles,
                                         line << g_line_shift, o.has_writeback,
                                         o.writeback << g_line_shift);
            t->last_record = now;
        }
    }
}

/* ---- instrumentation ---- */
static void add_icount(IRSB *sb, Int n)
{
    IRTemp old = newIRTemp(sb->tyenv, Ity_I64), sum = newIRTemp(sb->tyenv, Ity_I64);
    IRExpr *where = mkIRExpr_HWord((HWord)&g_icount);
    addStmtToIRSB(sb, IRStmt_WrTmp(old, IRExpr_Load(Iend_LE, Ity_I64, where)));
    addStmtToIRSB(sb, IRStmt_WrTmp(sum, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(old),
                                                     IRExpr_Const(IRConst_U64(n)))));
    addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&g_icount), IRExpr_RdTmp(sum)));
}

static void settle_pending(IRSB *sb, Int *pending)
{
    if (*pending > 0)
        add_icount(sb, *pending);
    *pending = 0;
}

static void add_access(IRSB *sb, IRExpr *addr, Int size, Bool write, Int *pending, IRExpr *guard)
{
    IRDirty *di;
    UWord info;
    if (guard)
        settle_pending(sb, pending); /* a skipped call must not lose the count */
    if (size > 0xffff)
        size = 0xffff;
    info = ((UWord)*pending << 17) | ((UWord)size << 1) | (write ? 1 : 0);
    *pending = 0;
    di = unsafeIRDirty_0_N(2, "mt_access", VG_(fnptr_to_fnentry)(mt_access),
                           mkIRExprVec_2(addr, mkIRExpr_HWord(info)));
    if (guard)
        di->guard = guard;
    addStmtToIRSB(sb, IRStmt_Dirty(di));
}

static IRSB *mt_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
                           const VexGuestExtents *vge, const VexArchInfo *archinfo_host,
                           IRType gWordTy, IRType hWordTy)
{
    IRSB *out = deepCopyIRSBExceptStmts(in);
    Int i = 0, pending = 0;
    IRTypeEnv *tyenv = in->tyenv;
    while (i < in->stmts_used && in->stmts[i]->tag != Ist_IMark)
        addStmtToIRSB(out, in->stmts[i++]);
    for (; i < in->stmts_used; i++) {
        IRStmt *st = in->stmts[i];
        if (!st || st->tag == Ist_NoOp)
            continue;
        switch (st->tag) {
        case Ist_IMark:
            pending++;
            break;
        case Ist_WrTmp:
            if (st->Ist.WrTmp.data->tag == Iex_Load) {
                IRExpr *load = st->Ist.WrTmp.data;
                add_access(out, load->Iex.Load.addr, sizeofIRType(load->Iex.Load.ty), False, &pending, NULL);
            }
            break;
        case Ist_Store:
            add_access(out, st->Ist.Store.addr,
                       sizeofIRType(typeOfIRExpr(tyenv, st->Ist.Store.data)), True, &pending, NULL);
            break;
        case Ist_StoreG: {
            IRStoreG *sg = st->Ist.StoreG.details;
            add_access(out, sg->addr, sizeofIRType(typeOfIRExpr(tyenv, sg->data)), True, &pending, sg->guard);
            break;
        }
        case Ist_LoadG: {
            IRLoadG *lg = st->Ist.LoadG.details;
            IRType loaded = Ity_INVALID, widened = Ity_INVALID;
            typeOfIRLoadGOp(lg->cvt, &widened, &loaded);
            add_access(out, lg->addr, sizeofIRType(loaded), False, &pending, lg->guard);
            break;
        }
        case Ist_Dirty: {
            IRDirty *d = st->Ist.Dirty.details;
            if (d->mFx != Ifx_None) {
                /* a modify is one access that dirties the line, as a load then a store would */
                add_access(out, d->mAddr, d->mSize, d->mFx != Ifx_Read, &pending, NULL);
            }
            break;
        }
        case Ist_CAS: {
            IRCAS *cas = st->Ist.CAS.details;
            Int size = sizeofIRType(typeOfIRExpr(tyenv, cas->dataLo));
            if (cas->dataHi)
                size *= 2;
            add_access(out, cas->addr, size, True, &pending, NULL);
            break;
        }
        case Ist_LLSC:
            if (st->Ist.LLSC.storedata == NULL)
                add_access(out, st->Ist.LLSC.addr,
                           sizeofIRType(typeOfIRTemp(tyenv, st->Ist.LLSC.result)), False, &pending, NULL);
            else
                add_access(out, st->Ist.LLSC.addr,
                           sizeofIRType(typeOfIRExpr(tyenv, st->Ist.LLSC.storedata)), True, &pending, NULL);
            break;
        case Ist_Exit:
            settle_pending(out, &pending);
            break;
        default:
            break;
        }
        addStmtToIRSB(out, st);
    }
    settle_pending(out, &pending);
    return out;
}

/* ---- threads ---- */
static void mt_start_client_code(ThreadId tid, ULong blocks_done)
{
    ThreadTrace *t;
    if (g_in_child || (g_cur && g_cur->tid == tid && by_tid[tid] == g_cur))
        return;
    settle_current();
    t = thread_for(tid);
    if (t->lwp == 0)
        t->lwp = VG_(gettid)();
    g_cur = t;
}

/* Threads are numbered when created (not when first scheduled), so ordinals follow the
 * program's creation order. */
static void mt_thread_create(ThreadId parent, ThreadId child)
{
    if (by_tid && !g_in_child) /* a forked child's threads would open (and truncate) trace files */
        thread_for(child);
}

static void mt_thread_exit(ThreadId tid)
{
    ThreadTrace *t = by_tid[tid];
    if (!t || g_in_child)
        return;
    if (t == g_cur) {
        settle_current();
        g_cur = NULL;
    }
    finish_thread(t);
    by_tid[tid] = NULL;
}

/* ---- summary: <out>.summary.json, read by `memtint trace` ---- */
static void write_summary(void)
{
    HChar path[4096], line[1024];
    SysRes res;
    Int fd, i;
    ULong traced_total = 0;
    VG_(snprintf)(path, sizeof path, "%s.summary.json", clo_out);
    res = VG_(open)(path, VKI_O_CREAT | VKI_O_WRONLY | VKI_O_TRUNC, 0644);
    if (sr_isError(res)) {
        VG_(message)(Vg_UserMsg, "memtint-trace: error: cannot create %s: %s\n", path, error_text(sr_Err(res)));
        VG_(exit)(EXIT_OUTPUT_ERROR);
    }
    fd = sr_Res(res);
#define EMIT(...) do { Int n_ = VG_(snprintf)(line, sizeof line, __VA_ARGS__); \
        if (VG_(write)(fd, line, n_) != n_) { \
            VG_(message)(Vg_UserMsg, "memtint-trace: error: cannot write %s\n", path); \
            VG_(exit)(EXIT_OUTPUT_ERROR); } } while (0)
    EMIT("{\n  \"tool\": \"memtint-trace\", \"version\": %s,\n", MT_VERSION);
    EMIT("  \"cache\": {\"l1_bytes\": %lld, \"l1_ways\": %lld, \"l2_bytes\": %lld, \"l2_ways\": %lld, \"line_bytes\": %lld},\n",
         clo_l1_size, clo_l1_assoc, clo_l2_size, clo_l2_assoc, clo_line);
    EMIT("  \"warmup_instructions\": %lld, \"instruction_limit\": %lld,\n", clo_warmup, clo_limit);
    EMIT("  \"stopped_at_limit\": %s, \"exit_at_limit\": %s,\n", g_stopped_at_limit ? "true" : "false",
         clo_exit_at_limit ? "true" : "false");
    EMIT("  \"executed_instructions\": %llu,\n  \"threads\": [\n", g_icount);
    for (i = 0; i < n_threads; i++) {
        ThreadTrace *t = all_threads[i];
        ULong end = g_stopped_at_limit ? t->trace_end : t->executed;
        ULong traced = t->ever_traced && end > t->trace_start ? end - t->trace_start : 0;
        traced_total += traced;
        EMIT("    {\"ordinal\": %d, \"valgrind_tid\": %u, \"lwp\": %d, \"file\": \"%s\", "
             "\"traced_instructions\": %llu, \"records\": %llu, \"writebacks\": %llu, "
             "\"record_instructions\": %llu, \"accesses\": %llu, \"l1_misses\": %llu, \"l2_misses\": %llu}%s\n",
             t->ordinal, t->tid, t->lwp, t->path, traced, t->enc.records, t->enc.writebacks_count,
             t->enc.instructions, t->accesses, t->l1_misses, t->l2_misses, i + 1 < n_threads ? "," : "");
    }
    EMIT("  ],\n  \"traced_instructions\": %llu\n}\n", traced_total);
#undef EMIT
    VG_(close)(fd);
}

/* A child forked without exec runs on under the tool with copies of its parent's open traces
 * and buffers: it records nothing and writes nothing (not its buffers, headers or summary, which
 * would land in its parent's files), and says so in the log, which `memtint trace` reads. */
static void mt_fork_child(ThreadId tid)
{
    Int i;
    (void)tid;
    g_in_child = True;
    for (i = 0; i < n_threads; i++) {
        ThreadTrace *t = all_threads[i];
        if (!t->finished) {
            VG_(close)(t->fd);
            t->finished = True;
            t->tracing = False;
        }
    }
    VG_(message)(Vg_UserMsg, "memtint-trace: untraced child: %d\n", VG_(getpid)());
}

static void mt_fini(Int exitcode)
{
    Int i;
    if (g_in_child)
        return;
    settle_current();
    g_cur = NULL;
    for (i = 0; i < n_threads; i++)
        finish_thread(all_threads[i]);
    write_summary();
}

/* ---- options and set-up ---- */
static Bool mt_process_cmd_line_option(const HChar *arg)
{
    if VG_STR_CLO(arg, "--out", clo_out) {}
    else if VG_INT_CLO(arg, "--l1-size", clo_l1_size) {}
    else if VG_INT_CLO(arg, "--l1-assoc", clo_l1_assoc) {}
    else if VG_INT_CLO(arg, "--l2-size", clo_l2_size) {}
    else if VG_INT_CLO(arg, "--l2-assoc", clo_l2_assoc) {}
    else if VG_INT_CLO(arg, "--line-size", clo_line) {}
    else if VG_INT_CLO(arg, "--warmup", clo_warmup) {}
    else if VG_INT_CLO(arg, "--limit", clo_limit) {}
    else if VG_XACT_CLO(arg, "--at-limit=exit", clo_exit_at_limit, True) {}
    else if VG_XACT_CLO(arg, "--at-limit=continue", clo_exit_at_limit, False) {}
    else
        return False;
    return True;
}

static void mt_print_usage(void)
{
    VG_(printf)(
        "    --out=PREFIX              write PREFIX.tN.mtt per thread and PREFIX.summary.json [memtint-trace]\n"
        "    --l1-size=BYTES --l1-assoc=WAYS   private L1 data cache [32768, 8]\n"
        "    --l2-size=BYTES --l2-assoc=WAYS   private inclusive L2 [1048576, 16]\n"
        "    --line-size=BYTES         line size of both levels [64]\n"
        "    --warmup=N                simulate the first N instructions (all threads) without emitting [0]\n"
        "    --limit=N                 trace N instructions (all threads) after the warm-up; 0 = all [0]\n"
        "    --at-limit=exit|continue  at the limit, end the program (status 0) or run it on untraced [exit]\n");
}

static void mt_print_debug_usage(void) { VG_(printf)("    (none)\n"); }

static void bad_geometry(const HChar *level, const HChar *why)
{
    VG_(message)(Vg_UserMsg, "memtint-trace: error: bad option %s: %s\n", level, why);
    VG_(exit)(EXIT_BAD_OPTION);
}

static void mt_post_clo_init(void)
{
    const char *why;
    Long line;
    if ((why = mt_level_check(clo_l1_size, clo_l1_assoc, clo_line)))
        bad_geometry("--l1-size/--l1-assoc/--line-size", why);
    if ((why = mt_level_check(clo_l2_size, clo_l2_assoc, clo_line)))
        bad_geometry("--l2-size/--l2-assoc/--line-size", why);
    if (clo_l2_size < clo_l1_size)
        bad_geometry("--l2-size", "the inclusive L2 must be at least as large as the L1");
    if (clo_warmup < 0 || clo_limit < 0)
        bad_geometry("--warmup/--limit", "instruction counts cannot be negative");
    g_line_shift = 0;
    for (line = clo_line; line > 1; line >>= 1)
        g_line_shift++;
    by_tid = VG_(calloc)("mt.by_tid", VG_N_THREADS + 1, sizeof *by_tid);
    VG_(atfork)(NULL, NULL, mt_fork_child);
    if (clo_warmup == 0)
        g_tracing_began = True;
}

static void mt_pre_clo_init(void)
{
    VG_(details_name)("memtint-trace");
    VG_(details_version)(MT_VERSION);
    VG_(details_description)("memtint's cache-filtered CPU-trace capture");
    VG_(details_copyright_author)("the memtint authors");
    VG_(details_bug_reports_to)("the memtint issue tracker");
    VG_(details_avg_translation_sizeB)(275);
    VG_(basic_tool_funcs)(mt_post_clo_init, mt_instrument, mt_fini);
    VG_(needs_command_line_options)(mt_process_cmd_line_option, mt_print_usage, mt_print_debug_usage);
    VG_(track_start_client_code)(mt_start_client_code);
    VG_(track_pre_thread_ll_create)(mt_thread_create);
    VG_(track_pre_thread_ll_exit)(mt_thread_exit);
}

VG_DETERMINE_INTERFACE_VERSION(mt_pre_clo_init)
