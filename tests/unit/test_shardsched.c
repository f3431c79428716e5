/* test_shardsched — FSDP's issue order as closed forms on llama3-8b's 33
 * units: with backward_pre the next unit's all-gather precedes the current
 * reduce-scatter and is issued before the current compute; with
 * backward_post it comes right before that reduce-scatter; without
 * prefetch the reduce-scatter of unit i comes right before the all-gather
 * of unit i-1; the limiter makes each all-gather wait for the compute of
 * the unit two before it (three with forward prefetch); counts of each
 * collective; keep_last (torchtitan's last block) drops exactly the last
 * unit's backward all-gather, every other op in the same order, the
 * prefetch of the unit before it still at that unit's pre-backward. */
#include "train/shardsched.h"

#include "testmain.h"

#include <check.h>

static GArray *units_8b(Model **m)
{
    char *err = NULL;
    *m = model_load("llama3-8b", NULL, &err);
    ck_assert_msg(*m, "%s", err);
    GArray *u = shardwrap_units(*m, 0);
    ck_assert_uint_eq(u->len, 33);
    return u;
}

/* The index in ops of the op (kind, unit, backward); -1 when absent. */
static int find(const GArray *ops, ShardOpKind kind, guint unit, bool backward)
{
    for (guint i = 0; i < ops->len; i++) {
        const ShardOp *o = &g_array_index(ops, ShardOp, i);
        if (o->kind == kind && o->unit == unit && (kind != SHARD_OP_ALL_GATHER || o->backward == backward))
            return (int)i;
    }
    return -1;
}

static const ShardOp *op(const GArray *ops, int i)
{
    ck_assert_int_ge(i, 0);
    return &g_array_index(ops, ShardOp, i);
}

#define AG SHARD_OP_ALL_GATHER
#define RS SHARD_OP_REDUCE_SCATTER

START_TEST(test_counts)
{
    Model *m;
    GArray *u = units_8b(&m);
    ShardSchedConfig c = {.backward_prefetch = SHARD_PREFETCH_PRE};
    GArray *ops = shardsched_ops(u, &c);
    /* 33 forward all-gathers, 32 backward (the root is kept), 33 RS */
    ck_assert_uint_eq(ops->len, 33 + 32 + 33);
    ck_assert_int_eq(find(ops, AG, 0, true), -1);
    ck_assert_int_eq(find(ops, AG, 0, false), 0);
    g_array_free(ops, TRUE);
    c.hybrid = true;
    c.reshard_root = true;
    ops = shardsched_ops(u, &c);
    ck_assert_uint_eq(ops->len, 33 + 33 + 33 + 33);
    /* the resharded root is gathered at the start of backward, before any
     * other backward all-gather */
    ck_assert_int_lt(find(ops, AG, 0, true), find(ops, AG, 32, true));
    /* each all-reduce right after its reduce-scatter */
    for (guint k = 0; k < 33; k++)
        ck_assert_int_eq(find(ops, SHARD_OP_ALL_REDUCE, k, true), find(ops, RS, k, true) + 1);
    g_array_free(ops, TRUE);
    shardwrap_free(u);
    model_free(m);
}
END_TEST

START_TEST(test_backward_prefetch)
{
    Model *m;
    GArray *u = units_8b(&m);
    ShardSchedConfig c = {.backward_prefetch = SHARD_PREFETCH_PRE};
    GArray *ops = shardsched_ops(u, &c);
    for (guint i = 2; i < 33; i++) {
        int ag = find(ops, AG, i - 1, true), rs = find(ops, RS, i, true);
        ck_assert_int_lt(ag, rs);
        ck_assert_int_eq(op(ops, ag)->hook, SHARD_PRE_BACKWARD);
        ck_assert_uint_eq(op(ops, ag)->at, i);
        /* issued as unit i's backward begins: right after unit i+1's
         * reduce-scatter (for the last unit, after its own all-gather) */
        ck_assert_int_eq(ag, i == 32 ? find(ops, AG, 32, true) + 1 : find(ops, RS, i + 1, true) + 1);
    }
    /* the last unit's own all-gather is not prefetched: nobody precedes it */
    ck_assert_uint_eq(op(ops, find(ops, AG, 32, true))->at, 32);
    g_array_free(ops, TRUE);
    c.backward_prefetch = SHARD_PREFETCH_POST;
    ops = shardsched_ops(u, &c);
    for (guint i = 2; i < 33; i++) {
        int ag = find(ops, AG, i - 1, true), rs = find(ops, RS, i, true);
        ck_assert_int_eq(ag, rs - 1);
        ck_assert_int_eq(op(ops, ag)->hook, SHARD_POST_BACKWARD);
        ck_assert_uint_eq(op(ops, ag)->at, i);
    }
    g_array_free(ops, TRUE);
    c.backward_prefetch = SHARD_PREFETCH_NONE;
    ops = shardsched_ops(u, &c);
    for (guint i = 2; i < 33; i++) {
        int ag = find(ops, AG, i - 1, true), rs = find(ops, RS, i, true);
        ck_assert_int_eq(ag, rs + 1);
        ck_assert_int_eq(op(ops, ag)->hook, SHARD_PRE_BACKWARD);
        ck_assert_uint_eq(op(ops, ag)->at, i - 1);
    }
    /* the root's reduce-scatter last */
    ck_assert_int_eq(find(ops, RS, 0, true), (int)ops->len - 1);
    g_array_free(ops, TRUE);
    shardwrap_free(u);
    model_free(m);
}
END_TEST

START_TEST(test_forward_prefetch)
{
    Model *m;
    GArray *u = units_8b(&m);
    ShardSchedConfig c = {.forward_prefetch = true};
    GArray *ops = shardsched_ops(u, &c);
    /* forward: AG(0), AG(1) at the root's pre-forward, then AG(k+1) at k's */
    for (guint k = 0; k + 1 < 33; k++) {
        const ShardOp *o = op(ops, (int)k + 1);
        ck_assert(o->kind == AG && !o->backward && o->unit == k + 1 && o->at == k);
    }
    g_array_free(ops, TRUE);
    shardwrap_free(u);
    model_free(m);
}
END_TEST

START_TEST(test_limiter)
{
    Model *m;
    GArray *u = units_8b(&m);
    ShardSchedConfig c = {.backward_prefetch = SHARD_PREFETCH_NONE, .limit_all_gathers = true};
    GArray *ops = shardsched_ops(u, &c);
    /* forward: unit k's all-gather waits for the forward of unit k-2 */
    for (guint k = 0; k < 33; k++) {
        const ShardOp *o = op(ops, find(ops, AG, k, false));
        ck_assert_int_eq(o->wait_unit, k >= 3 ? (int)k - 2 : -1);
        ck_assert(!o->wait_backward);
    }
    /* backward: unit 32 waits for forward 31, 31 for forward 32, then unit
     * i for the backward of unit i+2 */
    ck_assert_int_eq(op(ops, find(ops, AG, 32, true))->wait_unit, 31);
    ck_assert_int_eq(op(ops, find(ops, AG, 31, true))->wait_unit, 32);
    for (guint i = 1; i <= 30; i++) {
        const ShardOp *o = op(ops, find(ops, AG, i, true));
        ck_assert_int_eq(o->wait_unit, (int)i + 2);
        ck_assert(o->wait_backward);
    }
    g_array_free(ops, TRUE);
    /* without the limiter nothing waits */
    c.limit_all_gathers = false;
    c.backward_prefetch = SHARD_PREFETCH_PRE;
    ops = shardsched_ops(u, &c);
    for (guint i = 0; i < ops->len; i++)
        ck_assert_int_eq(op(ops, (int)i)->wait_unit, -1);
    g_array_free(ops, TRUE);
    shardwrap_free(u);
    model_free(m);
}
END_TEST

/* The limiter with forward prefetch, as torch runs it: a prefetched
 * all-gather goes through _unshard like any other, so it too waits for
 * the oldest free when two are pending (_FreeEventQueue.dequeue_if_needed);
 * the prefetch of unit k is issued at unit k-1's pre-forward, before k-1's
 * own free, so it waits for the forward of unit k-3, one unit later than
 * without prefetch: three units gathered at once (k-2 computing, k-1
 * waiting, k gathering). The last unit prefetches nothing, so three frees
 * are pending when backward begins: AG(32) waits for forward 30, its
 * prefetch AG(31) for forward 31, AG(30) for forward 32, then AG(j) for
 * the backward of unit j+3. */
START_TEST(test_limiter_forward_prefetch)
{
    Model *m;
    GArray *u = units_8b(&m);
    ShardSchedConfig c = {.backward_prefetch = SHARD_PREFETCH_PRE, .forward_prefetch = true,
                          .limit_all_gathers = true};
    GArray *ops = shardsched_ops(u, &c);
    for (guint k = 0; k < 33; k++) {
        const ShardOp *o = op(ops, find(ops, AG, k, false));
        ck_assert_int_eq(o->wait_unit, k >= 4 ? (int)k - 3 : -1);
        ck_assert(!o->wait_backward);
        ck_assert_uint_eq(o->at, k == 0 ? 0 : k - 1);
    }
    static const int fwd_wait[][2] = {{32, 30}, {31, 31}, {30, 32}};
    for (size_t i = 0; i < G_N_ELEMENTS(fwd_wait); i++) {
        const ShardOp *o = op(ops, find(ops, AG, (guint)fwd_wait[i][0], true));
        ck_assert_int_eq(o->wait_unit, fwd_wait[i][1]);
        ck_assert(!o->wait_backward);
    }
    for (guint j = 1; j <= 29; j++) {
        const ShardOp *o = op(ops, find(ops, AG, j, true));
        ck_assert_int_eq(o->wait_unit, (int)j + 3);
        ck_assert(o->wait_backward);
    }
    g_array_free(ops, TRUE);
    shardwrap_free(u);
    model_free(m);
}
END_TEST

START_TEST(test_keep_last)
{
    Model *m;
    GArray *u = units_8b(&m);
    ShardPrefetch modes[] = {SHARD_PREFETCH_PRE, SHARD_PREFETCH_POST, SHARD_PREFETCH_NONE};
    for (size_t k = 0; k < G_N_ELEMENTS(modes); k++) {
        ShardSchedConfig c = {.backward_prefetch = modes[k]};
        GArray *all = shardsched_ops(u, &c);
        c.keep_last = true;
        GArray *kept = shardsched_ops(u, &c);
        /* 33 forward all-gathers, 31 backward (the root and unit 32 kept), 33 RS */
        ck_assert_uint_eq(kept->len, 33 + 31 + 33);
        ck_assert_uint_eq(all->len, kept->len + 1);
        ck_assert_int_eq(find(kept, AG, 32, true), -1);
        ck_assert_int_eq(find(kept, AG, 0, true), -1);
        ck_assert_int_ge(find(kept, AG, 32, false), 0);
        /* the rest in the same order, with the same hooks */
        int drop = find(all, AG, 32, true);
        for (guint i = 0, j = 0; i < all->len; i++) {
            if ((int)i == drop)
                continue;
            const ShardOp *a = op(all, (int)i), *b = op(kept, (int)j++);
            ck_assert(a->kind == b->kind && a->unit == b->unit && a->backward == b->backward);
            ck_assert(a->hook == b->hook && a->at == b->at && a->wait_unit == b->wait_unit);
        }
        g_array_free(all, TRUE);
        g_array_free(kept, TRUE);
    }
    /* backward_pre: unit 31's all-gather, the first op of backward, at unit 32's pre-backward */
    ShardSchedConfig c = {.backward_prefetch = SHARD_PREFETCH_PRE, .keep_last = true};
    GArray *ops = shardsched_ops(u, &c);
    int ag = find(ops, AG, 31, true);
    ck_assert_int_eq(ag, 33);
    ck_assert_int_eq(op(ops, ag)->hook, SHARD_PRE_BACKWARD);
    ck_assert_uint_eq(op(ops, ag)->at, 32);
    ck_assert_int_eq(find(ops, RS, 32, true), 34);
    g_array_free(ops, TRUE);
    shardwrap_free(u);
    model_free(m);
}
END_TEST

START_TEST(test_names)
{
    ShardPrefetch p;
    for (int i = 0; i < 3; i++) {
        ck_assert(shard_prefetch_parse(shard_prefetch_name((ShardPrefetch)i), &p));
        ck_assert_int_eq(p, i);
    }
    ck_assert(shard_prefetch_parse("backward_pre", &p) && p == SHARD_PREFETCH_PRE);
    ck_assert(!shard_prefetch_parse("pre", &p));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shardsched");
    TCase *tc = testmain_case(s, "closed-forms");
    tcase_add_test(tc, test_counts);
    tcase_add_test(tc, test_keep_last);
    tcase_add_test(tc, test_backward_prefetch);
    tcase_add_test(tc, test_forward_prefetch);
    tcase_add_test(tc, test_limiter);
    tcase_add_test(tc, test_limiter_forward_prefetch);
    tc = testmain_case(s, "bad-input");
    tcase_add_test(tc, test_names);
    return testmain_run(s);
}
