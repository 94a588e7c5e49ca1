/* sdk/src/pattern/driver.c - the rewrite driver: one worklist for the rule
 * sets of a stage.
 *
 * A worklist's members are rule sets in pipeline order.  It keeps, per
 * member, an agenda: the nodes where one of the member's forms matched (the
 * pattern alone, conditions aside) when the worklist last looked at them.
 * Looking is done once for all members: before a member runs, the
 * worklist takes what changed since it last looked (the model's change
 * log, changelog.c) and visits the nodes within reach downstream of each
 * change, once each, trying there the forms of every member anchored on
 * the node's op.  The first look at a model visits every node of the
 * members' root ops (each graph's node list, bodies included).  A
 * member's run then tries its agenda's nodes, in the order they were
 * found, and rewrites (ruleset.c: benefit order, the larger match wins).
 *
 * So a stage visits each node once per change of its neighbourhood,
 * whatever the number of passes, and a pass still runs at its place in the
 * pipeline, on the graph the passes before it left: its statistics, its
 * numbered rewrites, --verify-each after it, --max-rewrites and --bisect
 * between two of its rewrites work as for a pass that walks the graph
 * itself.  Soundness: a node that no change came near since the worklist
 * looked matches as it did then (a match reads only nodes upstream of its
 * root within the pattern's depth, and every mutation of them, of their
 * uses or types, is logged), so an agenda holds every node where a member
 * can match.  Conditions that read beyond the pattern get no such promise
 * (pattern.h). */
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

/* Room for `need` elements in *p (capacity *cap): ir_grow, called only
 * when the array is full.  0 or PH_ENOMEM. */
static inline int room(void **p, size_t *cap, size_t need, size_t size)
{
    return need <= *cap ? 0 : ir_grow(p, cap, need, size);
}

/* Give back a scratch array, or an agenda left empty, when it is large: the
 * first look and the first runs fill them with most of a large graph, the
 * later ones with what changed; what passes allocate meanwhile reuses the
 * memory. */
enum { KEEP_SCRATCH = 1 << 14 };
static void shed(void **p, size_t *cap)
{
    if (*cap > KEEP_SCRATCH) {
        free(*p);
        *p = NULL;
        *cap = 0;
    }
}

/* What a look reads of a slot k of ph_worklist.members (see order). */
typedef struct wl_slot {
    int reach;       /* kreach[k] */
    uint32_t member; /* members[k] */
    uint32_t same;   /* same[k] */
    uint32_t word;   /* member / 64: its word of a node's pending bits */
    uint64_t bit;    /* 1 << member % 64 */
    uint32_t dest;   /* dest[k] */
    /* the member's twins (ph_worklist.twin_of) anchored on this op: the
     * slots twins .. twins + n_twins, after the op's looked-at slots */
    uint32_t twins, n_twins;
} wl_slot;

typedef struct wl_agenda {
    uint32_t *idx; /* entries of the log's held table */
    size_t n, cap;
} wl_agenda;

struct ph_worklist {
    ph_ruleset **sets;      /* borrowed members, in pipeline order */
    size_t n;
    uint32_t by_op[PH_OP__COUNT + 1]; /* members anchored on each op: members[by_op[op] ..] */
    uint32_t *members;
    /* for each slot k of members[]: the member's reach (kreach[k], set by
     * each look), and each op's slots by decreasing reach (order[by_op[op]
     * ..]), so a look at a node `dist` hops from a change stops at the first
     * member that cannot reach it */
    int *kreach;
    uint32_t *order;
    /* what a look reads of each op's slots: slots[by_op[op] .. look_end[op]]
     * in order[]'s order, the members that are no other's twin; then, for
     * each of those in turn, its twins (see twin_of) */
    wl_slot *slots;
    uint32_t look_end[PH_OP__COUNT];
    /* twin_of[i]: the first member whose rule set has the same forms as
     * member i's, on every op in the same order (a pass given twice: the
     * same pattern texts); i itself when there is none before it.  Twins
     * match at the same nodes and reach as far, so a look asks the first
     * one and puts the node on the agendas of all. */
    uint32_t *twin_of;
    unsigned char anchor[PH_OP__COUNT];
    unsigned char reached_op[PH_OP__COUNT]; /* a member anchored on the op reaches (set by each look) */
    int depth;              /* greatest member depth */
    /* what it has read of a model's change log */
    ph_model *model;
    struct pat_changelog *log;
    uint64_t birth;
    size_t pos;
    wl_agenda *agenda;      /* one per member, then the first look's buckets (see dest) */
    size_t n_agendas;
    /* where the first look at a graph puts what slot k finds: the member's
     * agenda (members[k]) when the member is anchored on one op, else a
     * bucket of its own (n + ...), appended to the agenda op by op once
     * the graph's nodes were looked at */
    uint32_t *dest;
    unsigned char *ran;     /* per member: ran on this model since the first look */
    int *reach;             /* per member: its depth among the forms possible now */
    int reach_all;          /* the greatest of them */
    /* pending[idx * words + member / 64], bit member % 64: held node idx is
     * on the member's agenda (so a look need not try it again for it) */
    uint64_t *pending;
    size_t words, cap_pending; /* cap_pending: held entries covered */
    ph_node **cands;        /* scratch of a run */
    size_t cap_cands;
    ph_node **queue;        /* scratch of a look near changes */
    size_t cap_queue;
    ph_node **reached;
    size_t n_reached, cap_reached;
    /* pattern forms answered once a node for every member (see
     * pat_form_memo): form_ids[i][e] is the key of member i's entry e */
    uint32_t **form_ids;
    pat_form_memo memo;
    /* members anchored on one op whose entries there are the same forms in
     * the same order (a pass given twice) get one answer at a node:
     * same[k], for members[k], is the first such k (UINT32_MAX for a member
     * no other is like); its answer holds while same_stamp[k] == memo.now */
    uint32_t *same;
    uint64_t *same_stamp;
    unsigned char *same_answer;
};

/* One key per distinct (pattern text, form) among the members' entries,
 * through a table of 2^k slots at most half full.  0 or PH_ENOMEM. */
static int number_forms(ph_worklist *wl)
{
    size_t total = 0;
    for (size_t i = 0; i < wl->n; i++)
        total += pat_ruleset_n_entries(wl->sets[i]);
    size_t cap = 16;
    while (cap < 2 * total)
        cap *= 2;
    struct {
        const char *text;
        uint32_t form, key;
    } *slot = calloc(cap, sizeof *slot);
    wl->form_ids = calloc(wl->n ? wl->n : 1, sizeof *wl->form_ids);
    if (!slot || !wl->form_ids) {
        free(slot);
        return PH_ENOMEM;
    }
    uint32_t keys = 0;
    for (size_t i = 0; i < wl->n; i++) {
        size_t n_e = pat_ruleset_n_entries(wl->sets[i]);
        if (!(wl->form_ids[i] = malloc((n_e ? n_e : 1) * sizeof **wl->form_ids))) {
            free(slot);
            return PH_ENOMEM;
        }
        for (size_t e = 0; e < n_e; e++) {
            const char *text;
            uint32_t form;
            pat_ruleset_entry(wl->sets[i], e, &text, &form);
            uint64_t h = 1469598103934665603ull ^ form;
            for (const char *c = text; *c; c++)
                h = (h ^ (unsigned char)*c) * 1099511628211ull;
            size_t k = (size_t)(h ^ (h >> 29)) & (cap - 1);
            while (slot[k].text && (slot[k].form != form || strcmp(slot[k].text, text) != 0))
                k = (k + 1) & (cap - 1);
            if (!slot[k].text) {
                slot[k].text = text;
                slot[k].form = form;
                slot[k].key = keys++;
            }
            wl->form_ids[i][e] = slot[k].key;
        }
    }
    free(slot);
    /* twins (before unshared keys are made alike below) */
    for (size_t i = 0; i < wl->n; i++) {
        wl->twin_of[i] = (uint32_t)i;
        size_t n_e = pat_ruleset_n_entries(wl->sets[i]);
        for (size_t o = 0; o < i && wl->twin_of[i] == i; o++) {
            if (wl->twin_of[o] != o || pat_ruleset_n_entries(wl->sets[o]) != n_e ||
                memcmp(wl->form_ids[o], wl->form_ids[i], n_e * sizeof **wl->form_ids) != 0)
                continue;
            int alike = 1;
            for (int op = 0; op < PH_OP__COUNT && alike; op++) {
                size_t lo, hi, olo, ohi;
                pat_ruleset_op_entries(wl->sets[i], (ph_op)op, &lo, &hi);
                pat_ruleset_op_entries(wl->sets[o], (ph_op)op, &olo, &ohi);
                alike = lo == olo && hi == ohi;
            }
            if (alike)
                wl->twin_of[i] = (uint32_t)o;
        }
    }
    /* members with the same forms on an op, twins aside (a look does not
     * ask those) */
    uint32_t n_k = wl->by_op[PH_OP__COUNT];
    wl->same = malloc((n_k ? n_k : 1) * sizeof *wl->same);
    wl->same_stamp = calloc(n_k ? n_k : 1, sizeof *wl->same_stamp);
    wl->same_answer = calloc(n_k ? n_k : 1, 1);
    if (!wl->same || !wl->same_stamp || !wl->same_answer)
        return PH_ENOMEM;
    for (int op = 0; op < PH_OP__COUNT; op++)
        for (uint32_t k = wl->by_op[op]; k < wl->by_op[op + 1]; k++) {
            uint32_t i = wl->members[k];
            size_t lo, hi;
            pat_ruleset_op_entries(wl->sets[i], (ph_op)op, &lo, &hi);
            wl->same[k] = k;
            if (wl->twin_of[i] != i) {
                wl->same[k] = UINT32_MAX;
                continue;
            }
            for (uint32_t j = wl->by_op[op]; j < k && wl->same[k] == k; j++) {
                uint32_t o = wl->members[j];
                size_t olo, ohi;
                pat_ruleset_op_entries(wl->sets[o], (ph_op)op, &olo, &ohi);
                if (wl->same[j] == j && wl->twin_of[o] == o && ohi - olo == hi - lo &&
                    !memcmp(wl->form_ids[o] + olo, wl->form_ids[i] + lo, (hi - lo) * sizeof **wl->form_ids))
                    wl->same[k] = j;
            }
        }
    unsigned char *followed = calloc(n_k ? n_k : 1, 1);
    if (!followed)
        return PH_ENOMEM;
    for (uint32_t k = 0; k < n_k; k++)
        if (wl->same[k] != k && wl->same[k] != UINT32_MAX)
            followed[wl->same[k]] = 1;
    for (uint32_t k = 0; k < n_k; k++)
        if (wl->same[k] == k && !followed[k])
            wl->same[k] = UINT32_MAX;
    free(followed);
    /* a form only one entry holds is matched directly, without the memo */
    uint32_t *uses = calloc(keys ? keys : 1, sizeof *uses);
    if (!uses)
        return PH_ENOMEM;
    for (size_t i = 0; i < wl->n; i++) /* (twins are not asked) */
        for (size_t e = 0; wl->twin_of[i] == i && e < pat_ruleset_n_entries(wl->sets[i]); e++)
            uses[wl->form_ids[i][e]]++;
    for (size_t i = 0; i < wl->n; i++)
        for (size_t e = 0; e < pat_ruleset_n_entries(wl->sets[i]); e++)
            if (uses[wl->form_ids[i][e]] == 1)
                wl->form_ids[i][e] = PAT_FORM_UNSHARED;
    free(uses);
    wl->memo.stamp = calloc(keys ? keys : 1, sizeof *wl->memo.stamp);
    wl->memo.answer = calloc(keys ? keys : 1, 1);
    return wl->memo.stamp && wl->memo.answer ? 0 : PH_ENOMEM;
}

/* The first look's destination of each slot (ph_worklist.dest), and the
 * buckets' room.  0 or PH_ENOMEM. */
static int buckets(ph_worklist *wl)
{
    uint32_t n_k = wl->by_op[PH_OP__COUNT], n_b = 0;
    unsigned char *ops = calloc(wl->n ? wl->n : 1, 1); /* anchor ops of each member, up to 2 */
    if (!ops)
        return PH_ENOMEM;
    for (uint32_t k = 0; k < n_k; k++)
        if (ops[wl->members[k]] < 2)
            ops[wl->members[k]]++;
    for (uint32_t k = 0; k < n_k; k++)
        wl->dest[k] = ops[wl->members[k]] > 1 ? (uint32_t)wl->n + n_b++ : wl->members[k];
    free(ops);
    if (n_b) {
        wl_agenda *a = realloc(wl->agenda, (wl->n + n_b) * sizeof *a);
        if (!a)
            return PH_ENOMEM;
        memset(a + wl->n, 0, n_b * sizeof *a);
        wl->agenda = a;
        wl->n_agendas = wl->n + n_b;
    }
    return 0;
}

/* The slots in order[], as a look reads them: on each op the members that
 * are no other's twin, then the twins of each. */
static void fill_slots(ph_worklist *wl)
{
    for (int op = 0; op < PH_OP__COUNT; op++) {
        uint32_t lo = wl->by_op[op], hi = wl->by_op[op + 1], at = lo;
        for (uint32_t j = lo; j < hi; j++) {
            uint32_t k = wl->order[j], i = wl->members[k];
            if (wl->twin_of[i] == i)
                wl->slots[at++] = (wl_slot){wl->kreach[k], i, wl->same[k], i / 64, (uint64_t)1 << (i % 64),
                                            wl->dest[k], 0, 0};
        }
        wl->look_end[op] = at;
        for (uint32_t s = lo; s < wl->look_end[op]; s++) {
            wl->slots[s].twins = at;
            for (uint32_t j = lo; j < hi; j++) {
                uint32_t k = wl->order[j], i = wl->members[k];
                if (i != wl->slots[s].member && wl->twin_of[i] == wl->slots[s].member) {
                    wl->slots[at++] = (wl_slot){wl->kreach[k], i, wl->same[k], i / 64, (uint64_t)1 << (i % 64),
                                                wl->dest[k], 0, 0};
                    wl->slots[s].n_twins++;
                }
            }
        }
    }
}

PH_API ph_worklist *ph_worklist_new(ph_ruleset *const *sets, size_t n, ph_error *err)
{
    ph_worklist *wl = calloc(1, sizeof *wl);
    if (wl && n) {
        wl->sets = malloc(n * sizeof *wl->sets);
        wl->agenda = calloc(n, sizeof *wl->agenda);
        wl->ran = calloc(n, 1);
        wl->reach = calloc(n, sizeof *wl->reach);
        wl->members = malloc(n * PH_OP__COUNT * sizeof *wl->members);
        wl->kreach = calloc(n * PH_OP__COUNT, sizeof *wl->kreach);
        wl->order = malloc(n * PH_OP__COUNT * sizeof *wl->order);
        wl->slots = malloc(n * PH_OP__COUNT * sizeof *wl->slots);
        wl->dest = malloc(n * PH_OP__COUNT * sizeof *wl->dest);
        wl->twin_of = malloc(n * sizeof *wl->twin_of);
        wl->words = (n + 63) / 64;
    }
    if (!wl || (n && (!wl->sets || !wl->agenda || !wl->ran || !wl->reach || !wl->members || !wl->kreach ||
                      !wl->order || !wl->slots || !wl->dest || !wl->twin_of))) {
        ph_worklist_free(wl);
        ph_error_set(err, PH_ENOMEM, "out of memory");
        return NULL;
    }
    wl->n = wl->n_agendas = n;
    for (size_t i = 0; i < n; i++) {
        if (!sets[i]) {
            ph_worklist_free(wl);
            ph_error_set(err, PH_EINVAL, "worklist member %zu is NULL", i);
            return NULL;
        }
        wl->sets[i] = sets[i];
        if (ph_ruleset_depth(sets[i]) > wl->depth)
            wl->depth = ph_ruleset_depth(sets[i]);
    }
    uint32_t k = 0;
    for (int op = 0; op < PH_OP__COUNT; op++) {
        wl->by_op[op] = k;
        for (size_t i = 0; i < n; i++)
            if (pat_ruleset_anchored(sets[i], (ph_op)op)) {
                wl->members[k++] = (uint32_t)i;
                wl->anchor[op] = 1;
            }
    }
    wl->by_op[PH_OP__COUNT] = k;
    for (uint32_t j = 0; j < k; j++)
        wl->order[j] = j;
    if (buckets(wl)) {
        ph_worklist_free(wl);
        ph_error_set(err, PH_ENOMEM, "out of memory");
        return NULL;
    }
    if (number_forms(wl)) {
        ph_worklist_free(wl);
        ph_error_set(err, PH_ENOMEM, "out of memory");
        return NULL;
    }
    fill_slots(wl);
    return wl;
}

/* Forget the model: agendas emptied, the next run looks at everything. */
static void forget(ph_worklist *wl)
{
    for (size_t i = 0; i < wl->n; i++)
        wl->agenda[i].n = wl->ran[i] = 0;
    for (size_t b = wl->n; b < wl->n_agendas; b++)
        wl->agenda[b].n = 0;
    if (wl->pending)
        memset(wl->pending, 0, wl->cap_pending * wl->words * sizeof *wl->pending);
    if (wl->log)
        pat_log_detach(wl->log, wl);
    wl->model = NULL;
    wl->log = NULL;
}

void pat_worklist_detached(ph_worklist *wl)
{
    for (size_t i = 0; i < wl->n; i++)
        wl->agenda[i].n = wl->ran[i] = 0;
    if (wl->pending)
        memset(wl->pending, 0, wl->cap_pending * wl->words * sizeof *wl->pending);
    wl->model = NULL;
    wl->log = NULL;
}

void pat_worklist_reset(ph_worklist *wl) { forget(wl); }

int pat_worklist_pending(const ph_worklist *wl)
{
    for (size_t i = 0; i < wl->n; i++)
        if (wl->agenda[i].n)
            return 1;
    return 0;
}

size_t pat_worklist_pos(const ph_worklist *wl) { return wl->pos; }

PH_API void ph_worklist_free(ph_worklist *wl)
{
    if (!wl)
        return;
    forget(wl);
    for (size_t i = 0; wl->agenda && i < wl->n_agendas; i++)
        free(wl->agenda[i].idx);
    free(wl->agenda);
    for (size_t i = 0; wl->form_ids && i < wl->n; i++)
        free(wl->form_ids[i]);
    free(wl->form_ids);
    free(wl->memo.stamp);
    free(wl->memo.answer);
    free(wl->same);
    free(wl->same_stamp);
    free(wl->same_answer);
    free(wl->ran);
    free(wl->reach);
    free(wl->pending);
    free(wl->sets);
    free(wl->members);
    free(wl->kreach);
    free(wl->order);
    free(wl->slots);
    free(wl->dest);
    free(wl->twin_of);
    free(wl->cands);
    free(wl->queue);
    free(wl->reached);
    free(wl);
}

PH_API size_t ph_worklist_count(const ph_worklist *wl) { return wl->n; }

/* ------------------------------------------------------------- looking */

static uint32_t held_index(const ph_worklist *wl, const ph_node *n)
{
    const struct pat_changelog *log = wl->log;
    return n->held_pos && n->held_pos - 1 < log->n_held && log->held[n->held_pos - 1] == n ? n->held_pos - 1
                                                                                            : UINT32_MAX;
}

/* n goes on the member's agenda, or the bucket `dest` that will be
 * appended to it.  *held: n's entry in the log's held table, UINT32_MAX
 * until it has one (then push gives it one). */
static inline __attribute__((always_inline)) int push(ph_worklist *wl, size_t member, uint32_t dest, ph_node *n,
                                                     uint32_t *held)
{
    if (*held == UINT32_MAX && pat_log_hold(wl->log, n, held))
        return PH_ENOMEM;
    uint32_t idx = *held;
    wl_agenda *a = &wl->agenda[dest];
    if (idx >= wl->cap_pending) {
        size_t cap = wl->cap_pending ? wl->cap_pending : 1024;
        while (cap <= idx)
            cap *= 2;
        uint64_t *p = realloc(wl->pending, cap * wl->words * sizeof *p);
        if (!p)
            return PH_ENOMEM;
        memset(p + wl->cap_pending * wl->words, 0, (cap - wl->cap_pending) * wl->words * sizeof *p);
        wl->pending = p;
        wl->cap_pending = cap;
    }
    uint64_t *bits = &wl->pending[idx * wl->words + member / 64];
    if ((*bits >> (member % 64)) & 1)
        return 0;
    if (a->n == a->cap && ir_grow((void **)&a->idx, &a->cap, a->n + 1, sizeof *a->idx))
        return PH_ENOMEM;
    *bits |= (uint64_t)1 << (member % 64);
    a->idx[a->n++] = idx;
    return 0;
}

/* 1 if n is pending (its row of pending bits: pend) for every twin of slot x. */
static inline int twins_pending(const wl_slot *slots, const wl_slot *x, const uint64_t *pend)
{
    for (uint32_t t = x->twins; t < x->twins + x->n_twins; t++)
        if (!(pend[slots[t].word] & slots[t].bit))
            return 0;
    return 1;
}

/* push for each twin of slot x, once push put held node `idx` on x's
 * member's agenda (so its row of pending bits exists). */
static inline int push_twins(ph_worklist *wl, const wl_slot *x, uint32_t idx, int bucketed)
{
    uint64_t *row = wl->pending + (size_t)idx * wl->words;
    for (uint32_t t = x->twins; t < x->twins + x->n_twins; t++) {
        const wl_slot *y = &wl->slots[t];
        if (row[y->word] & y->bit)
            continue;
        wl_agenda *a = &wl->agenda[bucketed ? y->dest : y->member];
        if (a->n == a->cap && ir_grow((void **)&a->idx, &a->cap, a->n + 1, sizeof *a->idx))
            return PH_ENOMEM;
        row[y->word] |= y->bit;
        a->idx[a->n++] = idx;
    }
    return 0;
}

/* The members anchored on n's op that reach `dist` hops, for which n is
 * not already pending, and whose patterns match at n get n on their
 * agendas (a pending node is tried in full at the member's run anyway);
 * a member's twins get it with it.
 * `fresh`: nothing is pending on this worklist (its first look at a model
 * classifies each node once), so n's held entry is not read until a member
 * takes it.  `bucketed`: a member anchored on several ops gets n in its
 * bucket of n's op (see ph_worklist.dest).  Members are visited by
 * decreasing reach: the pushes to different agendas do not depend on each
 * other's order. */
static int classify(ph_worklist *wl, ph_node *n, int dist, int fresh, int bucketed)
{
    uint32_t lo = wl->by_op[n->op], hi = wl->look_end[n->op];
    const wl_slot *slots = wl->slots;
    if (lo == hi || dist >= slots[lo].reach)
        return 0;
    uint32_t idx = fresh ? UINT32_MAX : held_index(wl, n);
    const uint64_t *pend = idx < wl->cap_pending ? wl->pending + (size_t)idx * wl->words : NULL;
    wl->memo.now++; /* answers hold for this node, while nothing changes */
    for (uint32_t j = lo; j < hi; j++) {
        const wl_slot *x = &slots[j];
        if (dist >= x->reach)
            break;
        uint32_t i = x->member;
        if (pend && (pend[x->word] & x->bit) && (!x->n_twins || twins_pending(slots, x, pend)))
            continue;
        uint32_t s = x->same; /* the members with these forms share the answer */
        int hit;
        if (s == UINT32_MAX) {
            hit = pat_ruleset_may_match_memo(wl->sets[i], n, wl->form_ids[i], &wl->memo);
        } else {
            if (wl->same_stamp[s] != wl->memo.now) {
                wl->same_answer[s] = (unsigned char)pat_ruleset_may_match_memo(wl->sets[i], n, wl->form_ids[i],
                                                                               &wl->memo);
                wl->same_stamp[s] = wl->memo.now;
            }
            hit = wl->same_answer[s];
        }
        if (hit) {
            int rc = push(wl, i, bucketed ? x->dest : i, n, &idx);
            if (!rc && x->n_twins)
                rc = push_twins(wl, x, idx, bucketed);
            if (rc)
                return rc;
            pend = wl->pending + (size_t)idx * wl->words; /* push may have moved the table */
        }
    }
    return 0;
}

/* Each slot's reach from the members' (wl->reach), and each op's slots
 * sorted by it, greatest first (stable; only when a reach changed). */
static void order_by_reach(ph_worklist *wl)
{
    int changed = 0;
    for (uint32_t k = 0; k < wl->by_op[PH_OP__COUNT]; k++) {
        int r = wl->reach[wl->members[k]];
        changed |= r != wl->kreach[k];
        wl->kreach[k] = r;
    }
    if (!changed)
        return;
    for (int op = 0; op < PH_OP__COUNT; op++) {
        uint32_t lo = wl->by_op[op], hi = wl->by_op[op + 1];
        for (uint32_t j = lo; j < hi; j++)
            wl->order[j] = j;
        for (uint32_t j = lo + 1; j < hi; j++) {
            uint32_t k = wl->order[j], at = j;
            while (at > lo && wl->kreach[wl->order[at - 1]] < wl->kreach[k]) {
                wl->order[at] = wl->order[at - 1];
                at--;
            }
            wl->order[at] = k;
        }
    }
    fill_slots(wl);
}

/* Ask early for what a look reads of the nodes arr[i + 1 ..], in steps
 * over the nodes to come (on a large graph each is a cache miss, and a
 * node's line must be in before its arrays can be found, their values
 * before the producers): the node sixteen nodes ahead, its input and
 * output arrays eight ahead, the first two inputs and the first output
 * four ahead, those inputs' producers (a form's quick test reads their
 * ops) two ahead.  Many nodes take only a few instructions (a look stops
 * at once where no member reaches), so the steps are far apart. */
static inline void prefetch_ahead(ph_node *const *arr, size_t i, size_t k)
{
    if (i + 16 < k)
        __builtin_prefetch(arr[i + 16]);
    if (i + 8 < k) {
        const ph_node *a = arr[i + 8];
        __builtin_prefetch(a->inputs);
        __builtin_prefetch(a->outputs);
    }
    if (i + 4 < k) {
        const ph_node *a = arr[i + 4];
        for (size_t j = 0; j < a->n_inputs && j < 2; j++)
            if (a->inputs[j])
                __builtin_prefetch(a->inputs[j]);
        if (a->n_outputs && a->outputs[0])
            __builtin_prefetch(a->outputs[0]);
    }
    if (i + 2 < k) {
        const ph_node *a = arr[i + 2];
        for (size_t j = 0; j < a->n_inputs && j < 2; j++)
            if (a->inputs[j] && a->inputs[j]->producer)
                __builtin_prefetch(a->inputs[j]->producer);
    }
}

/* The same for the walk downstream of the log's entries at i + 1 ..: the
 * node, its output array, its first output, that value's readers, the
 * first reader. */
static inline void prefetch_log_ahead(const struct pat_changelog *log, size_t i, size_t end)
{
    const ph_node *a;
    if (i + 16 < end && (a = pat_log_at(log, i + 16)))
        __builtin_prefetch(a);
    if (i + 8 < end && (a = pat_log_at(log, i + 8)))
        __builtin_prefetch(a->outputs);
    if (i + 4 < end && (a = pat_log_at(log, i + 4)) && a->n_outputs && a->outputs[0])
        __builtin_prefetch(a->outputs[0]);
    if (i + 2 < end && (a = pat_log_at(log, i + 2)) && a->n_outputs && a->outputs[0])
        __builtin_prefetch(a->outputs[0]->uses);
    if (i + 1 < end && (a = pat_log_at(log, i + 1)) && a->n_outputs && a->outputs[0] && a->outputs[0]->n_uses)
        __builtin_prefetch(a->outputs[0]->uses[0].node);
}

/* Every node of g and its bodies whose op is an anchor.  Each agenda gets
 * g's nodes op by op, in the order of each op's index, then the bodies'
 * (the order a member's first run tries them in, so its sort finds them
 * in order).  The nodes are looked at in the order of g's list: a node's
 * producers were looked at just before it, so what a match reads of them
 * is still in the cache, where op by op each op's nodes are read apart
 * from their producers.  A member anchored on one op gets them in its
 * agenda directly (the list holds each op's nodes in its index's order
 * unless a pass inserted one); the others in a bucket per op, appended
 * to their agendas in op order at the end. */
static int look_all(ph_worklist *wl, ph_graph *g)
{
    int rc = 0;
    if (!g->op_first) { /* no index (it could not be allocated): the node list */
        for (ph_node *n = g->first; n && !rc; n = n->next) {
            if (wl->anchor[n->op])
                rc = classify(wl, n, 0, 1, 0);
            for (size_t s = 0; s < ir_node_n_subgraphs(n) && !rc; s++)
                rc = look_all(wl, ir_node_subgraphs(n)[s].graph);
        }
        return rc;
    }
    for (ph_node *n = g->first; n && !rc; n = n->next)
        if (wl->anchor[n->op])
            rc = classify(wl, n, 0, 1, 1);
    for (uint32_t k = 0; k < wl->by_op[PH_OP__COUNT] && !rc; k++) {
        wl_agenda *b = &wl->agenda[wl->dest[k]], *a = &wl->agenda[wl->members[k]];
        if (b == a || !b->n)
            continue;
        if (room((void **)&a->idx, &a->cap, a->n + b->n, sizeof *a->idx))
            rc = PH_ENOMEM;
        else
            memcpy(a->idx + a->n, b->idx, b->n * sizeof *b->idx);
        a->n += rc ? 0 : b->n;
        b->n = 0;
        shed((void **)&b->idx, &b->cap);
    }
    size_t n_holders;
    const ph_op *holders = ir_body_ops(&n_holders);
    for (size_t h = 0; h < n_holders && !rc; h++)
        for (ph_node *n = g->op_first[holders[h]]; n && !rc; n = n->op_next)
            for (size_t s = 0; s < ir_node_n_subgraphs(n) && !rc; s++)
                rc = look_all(wl, ir_node_subgraphs(n)[s].graph);
    return rc;
}

/* Reach downstream of start, breadth first, as far as the deepest member
 * reaches.  A node's walk_mark is base + its least distance from the
 * changes of this look; a node met again farther away is not walked again.
 * New nodes of an op some member reaches go to `reached` in the order first
 * met (the others are never classified); a node of another op where the
 * walk stops is not even marked. */
static int reach(ph_worklist *wl, ph_node *start, uint32_t base)
{
    size_t head = 0, tail = 0;
    if (room((void **)&wl->queue, &wl->cap_queue, 1, sizeof *wl->queue))
        return PH_ENOMEM;
    if (start->walk_mark >= base && start->walk_mark == base)
        return 0; /* already walked from distance 0 */
    int seen = start->walk_mark > base && start->walk_mark < base + 256;
    start->walk_mark = base;
    if (!seen && wl->reached_op[start->op]) {
        if (room((void **)&wl->reached, &wl->cap_reached, wl->n_reached + 1, sizeof *wl->reached))
            return PH_ENOMEM;
        wl->reached[wl->n_reached++] = start;
    }
    wl->queue[tail++] = start;
    while (head < tail) {
        ph_node *n = wl->queue[head++];
        uint32_t d = n->walk_mark - base;
        if ((int)d + 1 >= wl->reach_all)
            continue;
        int last = (int)d + 2 >= wl->reach_all; /* no walk from the nodes at d + 1 */
        for (size_t o = 0; o < n->n_outputs; o++) {
            ph_value *v = n->outputs[o];
            for (size_t u = 0; v && u < v->n_uses; u++) {
                ph_node *c = v->uses[u].node;
                int anchor = wl->reached_op[c->op];
                if (last && !anchor)
                    continue;
                int known = c->walk_mark >= base && c->walk_mark < base + 256;
                if (known && c->walk_mark - base <= d + 1)
                    continue;
                c->walk_mark = base + d + 1;
                if (!known && anchor) {
                    if (room((void **)&wl->reached, &wl->cap_reached, wl->n_reached + 1, sizeof *wl->reached))
                        return PH_ENOMEM;
                    wl->reached[wl->n_reached++] = c;
                }
                if (last)
                    continue;
                if (room((void **)&wl->queue, &wl->cap_queue, tail + 1, sizeof *wl->queue))
                    return PH_ENOMEM;
                wl->queue[tail++] = c;
            }
        }
    }
    return 0;
}

/* Bring the agendas up to date with g's model: everything at the first
 * look (or when the log was lost), else what is near the changes since. */
static int look(ph_worklist *wl, ph_graph *g)
{
    ph_model *m = g->model;
    struct pat_changelog *log = pat_log_get(m);
    if (!log) {
        forget(wl);
        return PH_ENOMEM;
    }
    int full = wl->model != m || wl->log != log || wl->birth != log->birth || wl->pos < log->base ||
               (log->lost && log->lost - 1 >= wl->pos);
    if (full) {
        forget(wl);
        if (pat_log_attach(log, wl))
            return PH_ENOMEM;
        wl->model = m;
        wl->log = log;
        wl->birth = log->birth;
    }
    size_t end = log->n;
    size_t present = 0; /* nodes of the root op types anywhere in the model */
    /* (nothing to look at when nothing changed since the last look: the
     * reaches below are read only while looking) */
    for (int op = 0; op < PH_OP__COUNT && !present && (full || wl->pos < end); op++)
        present += wl->anchor[op] ? m->op_count[op] : 0;
    wl->reach_all = 0; /* how far each member's patterns that can match now reach */
    for (size_t i = 0; present && i < wl->n; i++)
        if ((wl->reach[i] = pat_ruleset_reach(wl->sets[i], m)) > wl->reach_all)
            wl->reach_all = wl->reach[i];
    if (present) {
        order_by_reach(wl);
        for (int op = 0; op < PH_OP__COUNT; op++)
            wl->reached_op[op] = wl->by_op[op] < wl->by_op[op + 1] && wl->slots[wl->by_op[op]].reach > 0;
    }
    int rc = 0;
    if (!present) {
        /* nothing to match: only mark the log read */
    } else if (full) {
        rc = look_all(wl, g);
    } else if (wl->pos < end) {
        uint32_t base = ir_walk_epoch(m, 256) - 255;
        wl->n_reached = 0;
        for (size_t i = wl->pos; i < end && !rc; i++) {
            prefetch_log_ahead(log, i, end); /* the log's nodes are spread over the heap */
            ph_node *n = pat_log_at(log, i);
            if (n && !n->removed)
                rc = reach(wl, n, base);
        }
        for (size_t i = 0; i < wl->n_reached && !rc; i++) {
            prefetch_ahead(wl->reached, i, wl->n_reached);
            ph_node *n = wl->reached[i];
            if (!n->removed)
                rc = classify(wl, n, (int)(n->walk_mark - base), 0, 0);
        }
    }
    shed((void **)&wl->queue, &wl->cap_queue);
    shed((void **)&wl->reached, &wl->cap_reached);
    wl->n_reached = 0;
    if (rc) {
        forget(wl); /* what was found is incomplete: look at everything next time */
        return rc;
    }
    if (log->lost && log->lost - 1 < end)
        log->lost = 0; /* the full looks it forces start from here */
    if (end > log->sealed)
        log->sealed = end;
    wl->pos = end;
    return 0;
}

/* ------------------------------------------------------------------ run */

/* A member's first run on a model tries its nodes in the order a pass
 * that scans the graph itself would meet them: graph by graph (the main
 * one, then the bodies as look_all visits them), op by op, and in each
 * op's index in the order nodes joined it (ph_node.op_seq).  So the
 * rewrites of the first round are made in the order they always were,
 * however the nodes came on the agenda. */
static void rank_graphs(ph_graph *g, uint32_t *next)
{
    g->wl_rank = (*next)++;
    if (!g->op_first) {
        for (ph_node *n = g->first; n; n = n->next)
            for (size_t s = 0; s < ir_node_n_subgraphs(n); s++)
                rank_graphs(ir_node_subgraphs(n)[s].graph, next);
        return;
    }
    size_t n_holders;
    const ph_op *holders = ir_body_ops(&n_holders);
    for (size_t h = 0; h < n_holders; h++)
        for (ph_node *n = g->op_first[holders[h]]; n; n = n->op_next)
            for (size_t s = 0; s < ir_node_n_subgraphs(n); s++)
                rank_graphs(ir_node_subgraphs(n)[s].graph, next);
}

static int scan_before(const ph_node *a, const ph_node *b)
{
    if (a->graph->wl_rank != b->graph->wl_rank)
        return a->graph->wl_rank < b->graph->wl_rank;
    if (a->op != b->op)
        return a->op < b->op;
    return a->op_seq < b->op_seq;
}

typedef struct scan_key {
    uint64_t k1, k2; /* graph rank and op; op_seq */
    ph_node *n;
} scan_key;

static int key_cmp(const void *pa, const void *pb)
{
    const scan_key *a = pa, *b = pb;
    if (a->k1 != b->k1)
        return a->k1 < b->k1 ? -1 : 1;
    return a->k2 < b->k2 ? -1 : a->k2 > b->k2;
}

/* Sort cands[0..n) in scan order, the first `sorted` of which are in
 * order.  What the first look found is in that order already; what later
 * looks added is sorted and merged in.  0 or PH_ENOMEM. */
static int scan_sort(ph_node **cands, size_t n, size_t sorted)
{
    if (sorted < 1)
        sorted = 1; /* (the usual case, in order already, needs no keys) */
    while (sorted < n && !scan_before(cands[sorted], cands[sorted - 1]))
        sorted++;
    if (sorted >= n)
        return 0;
    scan_key *k = malloc(n * sizeof *k), *out = k ? malloc(n * sizeof *out) : NULL;
    if (!out) {
        free(k);
        return PH_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        ph_node *c = cands[i];
        k[i] = (scan_key){(uint64_t)c->graph->wl_rank << 32 | (uint32_t)c->op, c->op_seq, c};
    }
    qsort(k + sorted, n - sorted, sizeof *k, key_cmp);
    size_t a = 0, b = sorted, o = 0;
    while (a < sorted || b < n)
        out[o++] = b == n || (a < sorted && key_cmp(&k[a], &k[b]) <= 0) ? k[a++] : k[b++];
    for (size_t i = 0; i < n; i++)
        cands[i] = out[i].n;
    free(k);
    free(out);
    return 0;
}

/* Nodes a member's first run meets later in scan order, that existed when
 * it began (op_seq <= seq0) and that its own rewrites brought near a
 * change: a pass scanning the graph would try them at their turn, so they
 * join the run (in `extra`, kept in scan order).  From log entry *from on. */
typedef struct later {
    ph_node **v;
    size_t n, cap, head;
} later;

static int join_later(ph_worklist *wl, size_t member, size_t *from, const ph_node *cur, uint64_t seq0,
                      uint64_t epoch, later *extra)
{
    struct pat_changelog *log = wl->log;
    ph_ruleset *rs = wl->sets[member];
    int depth = ph_ruleset_depth(rs);
    for (; *from < log->n; (*from)++) {
        ph_node *e = pat_log_at(log, *from);
        if (!e || e->removed)
            continue;
        uint32_t walk = ir_walk_epoch(e->graph->model, 1);
        size_t head = 0, tail = 0, level_end = 1;
        int hops = 0;
        if (room((void **)&wl->queue, &wl->cap_queue, 1, sizeof *wl->queue))
            return PH_ENOMEM;
        wl->queue[tail++] = e;
        e->walk_mark = walk;
        while (head < tail) {
            ph_node *n = wl->queue[head++];
            if (!n->removed && n->visit_mark != epoch && n->op_seq <= seq0 && pat_ruleset_anchored(rs, n->op) &&
                scan_before(cur, n)) {
                n->visit_mark = epoch;
                if (room((void **)&extra->v, &extra->cap, extra->n + 1, sizeof *extra->v))
                    return PH_ENOMEM;
                size_t at = extra->n++;
                while (at > extra->head && scan_before(n, extra->v[at - 1])) {
                    extra->v[at] = extra->v[at - 1];
                    at--;
                }
                extra->v[at] = n;
            }
            if (hops + 1 < depth)
                for (size_t o = 0; o < n->n_outputs; o++) {
                    ph_value *v = n->outputs[o];
                    for (size_t u = 0; v && u < v->n_uses; u++) {
                        ph_node *c = v->uses[u].node;
                        if (c->walk_mark == walk)
                            continue;
                        c->walk_mark = walk;
                        if (room((void **)&wl->queue, &wl->cap_queue, tail + 1, sizeof *wl->queue))
                            return PH_ENOMEM;
                        wl->queue[tail++] = c;
                    }
                }
            if (head == level_end) {
                hops++;
                level_end = tail;
            }
        }
    }
    return 0;
}

PH_API int ph_worklist_run(ph_worklist *wl, size_t member, ph_graph *g, const ph_params *params, ph_ctx *ctx)
{
    if (!wl || !g || member >= wl->n)
        return PH_EINVAL;
    ph_model *m = g->model;
    uint64_t failures = m->alloc_failures;
    int rc = look(wl, g);
    if (rc)
        return ctx ? ph_ctx_error(ctx, rc, "collecting candidates: %s", ph_strerror(rc)) : rc;
    /* the agenda's nodes, each once, in the order found */
    wl_agenda *a = &wl->agenda[member];
    uint32_t epoch = ir_visit_epoch(m);
    size_t n_cands = 0;
    if (a->n && ir_grow((void **)&wl->cands, &wl->cap_cands, a->n, sizeof *wl->cands)) {
        forget(wl);
        return ctx ? ph_ctx_error(ctx, PH_ENOMEM, "out of memory") : PH_ENOMEM;
    }
    int first = !wl->ran[member];
    wl->ran[member] = 1;
    if (first) {
        uint32_t next = 0;
        rank_graphs(g, &next);
    }
    size_t sorted = 0; /* (first run) the candidates in scan order so far, told while each is in the cache */
    for (size_t i = 0; i < a->n; i++) {
        if (i + 8 < a->n) /* held nodes are spread over the heap */
            __builtin_prefetch(wl->log->held[a->idx[i + 8]]);
        wl->pending[a->idx[i] * wl->words + member / 64] &= ~((uint64_t)1 << (member % 64));
        ph_node *n = wl->log->held[a->idx[i]];
        if (n && !n->removed && n->visit_mark != epoch) {
            n->visit_mark = epoch;
            if (first && sorted == n_cands && (!n_cands || !scan_before(n, wl->cands[n_cands - 1])))
                sorted++;
            wl->cands[n_cands++] = n;
        }
    }
    a->n = 0;
    if (first) {
        if (scan_sort(wl->cands, n_cands, sorted)) {
            forget(wl);
            return ctx ? ph_ctx_error(ctx, PH_ENOMEM, "out of memory") : PH_ENOMEM;
        }
    }
    later extra = {0};
    size_t from = wl->log->n;
    uint64_t seq0 = ir_op_seq_start(m);
    int total = 0, stop = 0;
    for (size_t i = 0; !stop;) {
        ph_node *n;
        if (extra.head < extra.n && (i == n_cands || scan_before(extra.v[extra.head], wl->cands[i])))
            n = extra.v[extra.head++];
        else if (i < n_cands)
            n = wl->cands[i++];
        else
            break;
        if (i + 8 < n_cands) /* a candidate of a large graph is a cache miss: ask early */
            __builtin_prefetch(wl->cands[i + 8]);
        if (i + 4 < n_cands) { /* (removed nodes are freed only between runs) */
            __builtin_prefetch(wl->cands[i + 4]->inputs);
            __builtin_prefetch(wl->cands[i + 4]->outputs);
        }
        if (n->removed)
            continue;
        int r = pat_ruleset_try(wl->sets[member], n, params, ctx, &stop);
        if (r < 0) {
            total = r;
            break;
        }
        total += r;
        if (r > 0 && first && (rc = join_later(wl, member, &from, n, seq0, epoch, &extra)) < 0) {
            total = ctx ? ph_ctx_error(ctx, rc, "out of memory") : rc;
            break;
        }
    }
    free(extra.v);
    shed((void **)&wl->cands, &wl->cap_cands);
    shed((void **)&wl->queue, &wl->cap_queue);
    if (!a->n)
        shed((void **)&a->idx, &a->cap);
    if (wl->log)
        pat_log_release(wl->log);
    if (total >= 0 && m->alloc_failures != failures) /* absorbed below: the result would depend on memory */
        return ctx ? ph_ctx_error(ctx, PH_ENOMEM, "out of memory") : PH_ENOMEM;
    return total;
}
