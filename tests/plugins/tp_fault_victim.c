/* tests/plugins/tp_fault_victim.c - a pass that trusts the graph it is
 * given, as every pass does: it walks each node's inputs and their use
 * lists, and when a use list does not match (the graph tp_fault's
 * "corrupt" left behind the SDK's back) it fails the way such code does,
 * reading through a bad pointer (SIGSEGV).  On a sound graph it changes
 * nothing.  Named after tp_fault in a plan so that it runs later in the
 * same round (tests/test_plugin_contract.c). */
#include <passhost/passhost.h>

__attribute__((no_sanitize("address", "undefined"))) static void store_through_null(void)
{
    volatile int *volatile p = 0;
    *p = 42;
}

static int run(ph_graph *g, const ph_params *p, ph_ctx *ctx)
{
    (void)p, (void)ctx;
    for (ph_node *n = ph_graph_first_node(g); n; n = ph_node_next(n))
        for (size_t i = 0; i < ph_node_input_count(n); i++) {
            ph_value *v = ph_node_input(n, i);
            int found = !v;
            for (size_t u = 0; v && u < ph_value_use_count(v) && !found; u++)
                found = ph_value_use(v, u, NULL) == n;
            if (!found)
                store_through_null();
        }
    return 0;
}

PH_PASS_DEFINE(.name = "tp_fault_victim", .summary = "crashes on a graph whose use lists do not match",
               .stages = PH_STAGE_OPTIMIZE, .exactness = PH_EXACT, .run = run)
