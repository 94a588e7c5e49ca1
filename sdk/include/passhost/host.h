/* passhost/host.h - the calls of programs that run passes (hosts), not of
 * passes: loading, sniffing and saving models; the parameters and the
 * context a pass runs with; numbering, limiting and following rewrites;
 * running a pattern pass's rules; user-given input shapes and shapes
 * written into the model.
 *
 * Audience: hosts (passhost's own program in host/, the embedding library,
 * test programs and benchmarks, and the pass test harness, testing.h).  A
 * pass never needs these calls, and passhost/passhost.h, what a pass
 * includes, does not include this header.
 *
 * Ownership is stated on each function; the rules of ir.h hold.
 */
#ifndef PASSHOST_HOST_H
#define PASSHOST_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "passhost/error.h"
#include "passhost/ir.h"
#include "passhost/pattern.h"
#include "passhost/plugin.h"
#include "passhost/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------- loading, saving */

/* Load an ONNX model.  The file is opened read-only and never written; large
 * initializer data stays in a read-only mapping of the file (or of its
 * external-data files) until a pass replaces it.  On success *out is a new
 * model the caller frees with ph_model_free. */
PH_API int ph_model_load(const char *path, ph_model **out, ph_error *err);

/* Load an ONNX model from size bytes at data, which are copied (the caller
 * keeps them and may free them on return); the copy is held the way a file
 * is mapped.  name stands for the model in messages (NULL: "<memory>").  A
 * model with external data is refused: it has no folder to find the data
 * in.  Otherwise as ph_model_load. */
PH_API int ph_model_load_memory(const void *data, size_t size, const char *name, ph_model **out,
                                ph_error *err);

/* How many nodes of the loaded file read a value that the file lists after
 * them (in their own graph); 0 when the file was in topological order.  An
 * acyclic graph listed out of order (as ONNX Runtime accepts it) is sorted
 * by the loader, stably, so the model saves in order; a cycle is refused. */
PH_API size_t ph_model_load_reordered(const ph_model *m);

/* Write the model to path with one commit point: the files are written
 * into a staging folder of this save beside path (ph_staging_make), then
 * put in place by ph_model_commit, so path holds either the model it held
 * before, whole with its data file, or this one, whole with its own, never
 * a mix, also when other saves write path at the same time.  A symbolic
 * link at path stays: the file it names is replaced.  Refuses to overwrite
 * the file the model was loaded from (or any of its external-data files).
 * Unmodelled parts of the input survive unchanged.
 * ph_model_save_with(m, path, NULL, err): a model that would pass
 * protobuf's 2 GB limit gets its large tensors written as external data
 * (see ph_save_options). */
PH_API int ph_model_save(ph_model *m, const char *path, ph_error *err);

/* The protobuf limit: no ONNX file may be larger (2^31 - 1 bytes). */
#define PH_PROTOBUF_LIMIT 2147483647ull

/* How ph_model_save_with writes; a zero field takes its default.  The
 * caller owns the struct and sets size = sizeof(ph_save_options), so a
 * later SDK can add fields. */
typedef struct ph_save_options {
    size_t size;
    /* External data (ONNX's own layout): when the model written whole would
     * be larger than external_threshold bytes (default PH_PROTOBUF_LIMIT;
     * at most that), every tensor of at least external_min_bytes (default
     * 1024) that is raw bytes (initializers of every graph) goes to ONE data
     * file beside the model, NAME.XXXXXX.data (NAME: the model file's name;
     * XXXXXX: unique to this save), each at an offset that is a multiple of
     * 4096, and the model names it with location = the data file's name,
     * offset and length.  When the model replaces one that had data files
     * of that naming (NAME.data, NAME.*.data), the commit removes them.  A
     * smaller model is written whole, as before. */
    uint64_t external_threshold;
    uint64_t external_min_bytes;
    /* Told of the staging folder ph_model_save_with makes, right after it
     * is made (created = 1) and when it is gone (created = 0: committed and
     * removed), e.g. so a signal handler can remove it and the files in it.
     * path is borrowed for the call.  NULL: not told. */
    void (*temp_file)(void *user, const char *path, int created);
    void *user;
} ph_save_options;

/* 1 when the file at path exists and is one m was loaded from or reads
 * external data from (compared by device and inode, so any name of it
 * counts: a hard link, a symbolic link), else 0. */
PH_API int ph_model_reads_file(const ph_model *m, const char *path);

/* The files m reads (the model's file and its external-data files) by
 * device and inode, into dev[0..max) and ino[0..max); returns how many
 * there are (more than max: only max are stored).  A model loaded from
 * memory reads none. */
PH_API size_t ph_model_files(const ph_model *m, uint64_t *dev, uint64_t *ino, size_t max);

/* ph_model_save with options (NULL: the defaults).  Errors: PH_EINVAL (bad
 * path, or the output is a file the model reads from), PH_EIO (cannot
 * write: the message says why; nothing is left behind), PH_ENOMEM, and
 * PH_EUNSUPPORTED when even with external data the model exceeds the
 * protobuf limit. */
PH_API int ph_model_save_with(ph_model *m, const char *path, const ph_save_options *opts, ph_error *err);

/* The steps of ph_model_save_with, for a host that commits elsewhere (the
 * passhost supervisor commits what its worker process saved):
 *
 * ph_staging_make: make the staging folder of a save to path, beside the
 * file path names (a symbolic link followed), .NAME.tmp.PID.XXXXXX, into
 * folder (size bytes).  PID is pid, or this process's when pid <= 0: the
 * process that will commit or remove it.  Staging folders of processes
 * that are gone (killed while they saved) are removed from that folder
 * first.  0, or PH_EIO (the folder cannot be written) / PH_EINVAL.
 *
 * ph_model_save_staged: write m as folder/name, and its data file (as
 * ph_save_options says) beside it.  Commits nothing; on failure nothing of
 * it is left in folder.
 *
 * ph_model_commit: put the model at `staged` (written by
 * ph_model_save_staged) in place at path, with its data files, by one
 * rename (see commit.c): the data files are moved beside path under their
 * new names, then the model replaces path (RENAME_EXCHANGE), then the data
 * files of the model it replaced are removed (those of path's naming,
 * unless keep(user, file) says 1; keep may be NULL).  On failure the old
 * model and its data stay as they were.  PH_EIO with a message naming
 * path.
 *
 * ph_staging_remove: remove the staging folder and what is left in it
 * (system calls only, no allocation: a signal handler may call it). */
PH_API int ph_staging_make(const char *path, long pid, char *folder, size_t size, ph_error *err);
PH_API int ph_model_save_staged(ph_model *m, const char *folder, const char *name, const ph_save_options *opts,
                                ph_error *err);
PH_API int ph_model_commit(const char *staged, const char *path, int (*keep)(void *user, const char *file),
                           void *user, ph_error *err);
PH_API void ph_staging_remove(const char *folder);

/* 1 if data (the first n bytes of a file of file_size bytes) starts like an
 * ONNX ModelProto: every field a ModelProto field with its wire type
 * (ir_version, producer, graph, opset_import, ...), every length inside
 * the file, a field cut by the end of the n bytes counted as whole; 0
 * otherwise (text, another protobuf, a damaged file).  For telling a model
 * from a text file by its content, as the passhost command line does.  data
 * is borrowed.  (sdk/src/onnx/load.c, with the loader's wire reader.) */
PH_API int ph_model_sniff(const void *data, size_t n, uint64_t file_size);

/* For hosts: free the nodes and values that passes removed.  Call between
 * passes, never while one runs.  ph_graph_toposort and ph_model_save free
 * them too once they outnumber twice the live nodes, so freeing is batched
 * and dead nodes never hold more than twice the live graph's memory. */
PH_API void ph_model_collect(ph_model *m);

/* How many allocations failed in the SDK's work on this model without the
 * failure being returned to a caller: a type, a shape or a symbolic
 * dimension left unknown, a cache or index dropped, a rewrite's scratch
 * memory refused.  Each leaves a correct graph, but one that depends on
 * memory; the loader, shape inference and the pattern driver turn an
 * increase during their work into PH_ENOMEM, and a host compares the
 * count before and after each pass to fail the run the same way. */
PH_API uint64_t ph_model_alloc_failures(const ph_model *m);

/* ph_graph_verify without checking the model's name table (that every name
 * resolves to its value), which only the SDK maintains and no pass can
 * break through this API: about a quarter of the time on large graphs.
 * What passhost runs before every save. */
PH_API int ph_graph_verify_fast(const ph_graph *g, ph_error *err);

/* ------------------------------------------------- parameters, context */

/* For hosts: a parameter set holding the defaults of a pass's table (which
 * is borrowed and must outlive the set).  Caller frees with ph_params_free.
 * NULL when out of memory or a default does not parse (err says which). */
PH_API ph_params *ph_params_new(const ph_param_def *table, ph_error *err);
PH_API void ph_params_free(ph_params *p);
/* For hosts: set a declared parameter from INI text ("12", "0.5", "true",
 * "no", ...).  PH_ENOTFOUND for an undeclared name, PH_EINVAL for a value
 * that does not parse as the declared type; err says which. */
PH_API int ph_params_set(ph_params *p, const char *name, const char *text, ph_error *err);

/* For hosts: a context that logs through fn (stderr when NULL).  Caller frees
 * with ph_ctx_free.  NULL when out of memory. */
PH_API ph_ctx *ph_ctx_new(ph_log_fn fn, void *user);
PH_API void ph_ctx_free(ph_ctx *ctx);
/* For hosts: the pass now running (copied), its target ("" when none). */
PH_API void ph_ctx_begin_pass(ph_ctx *ctx, const char *pass_name, const char *target);
/* For hosts: free the scratch memory of the pass that just ran. */
PH_API void ph_ctx_end_pass(ph_ctx *ctx);
/* For hosts: the last message given to ph_ctx_error, "" if none. */
PH_API const char *ph_ctx_last_error(const ph_ctx *ctx);

/* For hosts: how many of the context's allocations (ph_ctx_alloc,
 * ph_ctx_pass_memo) failed.  A pass may take a NULL memo for "no memo" and
 * still be right, but the run would then depend on memory: the host fails
 * it when the count grows during a pass (see ph_model_alloc_failures). */
PH_API uint64_t ph_ctx_alloc_failures(const ph_ctx *ctx);

/* For hosts: from now on record in ctx the first failure of a setter on
 * g's model (attributes, names, domains, inputs, types, opset imports:
 * passhost/pattern.h lists them); NULL stops.  ph_ctx_begin_pass clears
 * what was recorded. */
PH_API void ph_ctx_watch(ph_ctx *ctx, ph_graph *g);
/* For hosts: the adapt stage's target profile the passes see
 * (ph_ctx_profile; borrowed, must outlive its use; NULL: none). */
PH_API void ph_ctx_set_profile(ph_ctx *ctx, const ph_target *t);
/* For hosts: fn receives every violation a pass reports (ph_ctx_violation)
 * during the calls that follow; NULL stops. */
PH_API void ph_ctx_set_violation_hook(ph_ctx *ctx, ph_violation_fn fn, void *user);
/* For hosts: run(g, params, ctx) with ph_ctx_watch on g: a pass that
 * returns success after a setter failed fails with that failure (a
 * message says so), so a pass may make its calls and check once at the
 * end, or not at all.  run's result otherwise. */
PH_API int ph_ctx_run(ph_ctx *ctx, ph_graph *g, ph_pass_run_fn run, const ph_params *params);

/* ---------------------------------------------------- numbered rewrites */

/* What the host learns of one rewrite (strings borrowed for the call). */
typedef struct ph_rewrite_info {
    const char *pass;     /* the pass that made it */
    uint64_t index;       /* global index in the run, from 1 */
    uint64_t pass_index;  /* index within this call of the pass, from 1 */
    const char *matched;  /* nodes it matched, ", "-separated; "" if not told */
    const char *removed;  /* nodes it removed; NULL if not told */
    const char *added;    /* nodes it added; NULL if not told */
} ph_rewrite_info;

typedef void (*ph_rewrite_hook)(void *user, const ph_rewrite_info *info);

/* For hosts: allow only `limit` rewrites in the run (< 0: no limit). */
PH_API void ph_ctx_set_rewrite_limit(ph_ctx *ctx, int64_t limit);
/* For hosts: rewrites numbered so far in the run. */
PH_API uint64_t ph_ctx_rewrite_count(const ph_ctx *ctx);
/* For hosts: rewrites numbered since ph_ctx_begin_pass. */
PH_API uint64_t ph_ctx_pass_rewrites(const ph_ctx *ctx);
/* For hosts: number n rewrites a pass reported without asking (a pass that
 * does not call ph_ctx_rewrite_begin), so the numbering stays whole. */
PH_API void ph_ctx_count_rewrites(ph_ctx *ctx, uint64_t n);
/* For hosts: fn is called once per rewrite, when it is complete (at
 * ph_ctx_rewrite_end, the next begin, or the end of the pass). */
PH_API void ph_ctx_set_rewrite_hook(ph_ctx *ctx, ph_rewrite_hook fn, void *user);
/* For hosts: fn(user, index, pass_index) is called once per rewrite when it
 * is complete, as the rewrite hook is (before it), but learns only the
 * rewrite's global index and its index within the pass call: setting it
 * does not make ph_ctx_wants_names() true, so passes format no names for
 * it.  For a host that only follows progress (passhost's supervisor).
 * NULL removes it. */
typedef void (*ph_count_hook)(void *user, uint64_t index, uint64_t pass_index);
PH_API void ph_ctx_set_count_hook(ph_ctx *ctx, ph_count_hook fn, void *user);

/* ------------------------------------------------- pattern passes' rules */

typedef struct ph_ruleset ph_ruleset;

/* Compile a rule table (borrowed: must outlive the set).  NULL with err
 * naming the rule, the pattern text and the position of the first error. */
PH_API ph_ruleset *ph_ruleset_new(const ph_rule *rules, ph_error *err);
PH_API void ph_ruleset_free(ph_ruleset *rs);
/* Number of rules; greatest pattern depth. */
PH_API size_t ph_ruleset_count(const ph_ruleset *rs);
PH_API int ph_ruleset_depth(const ph_ruleset *rs);

/* Apply the rules to g and every If/Loop/Scan body in it, one pass over the
 * candidates: each node of a root's op type, tried form by form, greatest
 * benefit first, then in table order (a match giving way to a larger one,
 * see pattern.h); the first that commits wins for that node.  The first
 * call on a model visits every node of the root op types (via the op-type
 * index); later calls visit only nodes within the patterns' depth
 * downstream of what changed since this rule set last ran on the model (any
 * mutation through ir.h, by any pass, is recorded).  Every rewrite is
 * counted through ph_ctx_rewrite_begin, so --max-rewrites stops it between
 * two rewrites.  Returns the number of rewrites, or a negative PH_E* code. */
PH_API int ph_ruleset_run(ph_ruleset *rs, ph_graph *g, const ph_params *params, ph_ctx *ctx);
/* Forget what this rule set has seen: the next run visits every candidate. */
PH_API void ph_ruleset_reset(ph_ruleset *rs);

/* One worklist for the rule sets (passes) of a stage.  Its members are the
 * sets in pipeline order (borrowed; they must outlive it).  Before a member
 * runs, the worklist looks once, for every member, at what changed in the
 * model since it last looked (any mutation through ir.h, by any pass): it
 * visits each node within reach downstream of a change once, tries there
 * the forms of every member anchored on the node's op, and puts the node on
 * the agenda of each member whose pattern matches.  The first look at a
 * model visits every node of the members' root ops.  Running member i
 * (ph_worklist_run) tries the nodes of its agenda, in the order they were
 * found, as ph_ruleset_run would, and numbers every rewrite through
 * ph_ctx_rewrite_begin.  So a stage costs about the same with 50 rule
 * passes as with 5, and each pass still runs at its place on the graph the
 * passes before it left.  A worklist may outlive the models it ran on (a
 * freed model is forgotten).  ph_ruleset_run is a worklist of one member. */
typedef struct ph_worklist ph_worklist;
PH_API ph_worklist *ph_worklist_new(ph_ruleset *const *sets, size_t n, ph_error *err);
PH_API void ph_worklist_free(ph_worklist *wl);
PH_API size_t ph_worklist_count(const ph_worklist *wl);
/* Run member `member` on g (the main graph; bodies included): the number
 * of rewrites, or a negative PH_E* code. */
PH_API int ph_worklist_run(ph_worklist *wl, size_t member, ph_graph *g, const ph_params *params, ph_ctx *ctx);

/* ---------------------------------------------------------------- shapes */

/* Fix the shape of graph input `input_name` (user-given shapes, like
 * onnx-simplifier's --overwrite-input-shape): dims[i] >= 0 sets dim i,
 * dims[i] < 0 keeps the model's dim i (static or symbolic).  PH_ENOTFOUND
 * if g has no such input; PH_EINVAL if rank differs from a rank the model
 * declares or a dim contradicts a static dim it declares.  The input's
 * consumers are queued for ph_graph_update_shapes. */
PH_API int ph_graph_set_input_shape(ph_graph *g, const char *input_name, int rank, const int64_t *dims,
                                    ph_error *err);

/* Write the known type of every node output of g and its subgraphs into
 * the graph's value_info (refreshing entries that exist), so a saved model
 * carries the inferred shapes.  Returns how many entries were written. */
PH_API int ph_graph_write_value_info(ph_graph *g, ph_error *err);

/* Counters of the last ph_graph_infer_shapes / ph_graph_update_shapes on a
 * model (for tests and benchmarks). */
typedef struct ph_infer_stats {
    size_t nodes_inferred; /* nodes whose inference ran (bodies included) */
    size_t values_changed; /* values whose type or shape constant changed */
    size_t nodes_unknown;  /* nodes whose op inference does not know */
} ph_infer_stats;
PH_API void ph_model_infer_stats(const ph_model *m, ph_infer_stats *out);

#ifdef __cplusplus
}
#endif
#endif
