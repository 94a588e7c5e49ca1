/* sdk/src/schema/schema.c - passhost/schema.h: lookups in the operator schema
 * table generated at build time (table.h, gen_schemas.cc).
 *
 * A ph_schema is a row of the table.  Rows are sorted by (domain, name,
 * since_version), so an operator's versions are adjacent and found by a
 * binary search; attributes are sorted by name within a row. */
#include <string.h>

#include "schema/table.h"
#include "passhost/schema.h"

#define ROW(s) ((const schema_row *)(const void *)(s))
#define SCHEMA(r) ((const ph_schema *)(const void *)(r))

/* "ai.onnx" is the default domain's other name. */
static const char *norm_domain(const char *domain)
{
    return !domain || strcmp(domain, "ai.onnx") == 0 ? "" : domain;
}

static int cmp_key(const schema_row *r, const char *domain, const char *name)
{
    int c = strcmp(r->domain, domain);
    return c ? c : strcmp(r->name, name);
}

/* The first row of (domain, name), or NULL. */
static const schema_row *first_row(const char *domain, const char *name)
{
    if (!name)
        return NULL;
    domain = norm_domain(domain);
    size_t lo = 0, hi = schema_row_count;
    while (lo < hi) { /* the first row not below the key */
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_key(&schema_rows[mid], domain, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < schema_row_count && cmp_key(&schema_rows[lo], domain, name) == 0)
        return &schema_rows[lo];
    return NULL;
}

PH_API const char *ph_schema_onnx_version(void) { return schema_onnx_version; }

PH_API const ph_schema *ph_schema_first(const char *domain, const char *op_type)
{
    return SCHEMA(first_row(domain, op_type));
}

PH_API const ph_schema *ph_schema_next(const ph_schema *s)
{
    const schema_row *r = ROW(s);
    if (!r || r + 1 >= schema_rows + schema_row_count)
        return NULL;
    const schema_row *n = r + 1;
    return strcmp(n->domain, r->domain) == 0 && strcmp(n->name, r->name) == 0 ? SCHEMA(n) : NULL;
}

PH_API const ph_schema *ph_schema_find(const char *domain, const char *op_type, int64_t opset)
{
    const ph_schema *found = NULL;
    for (const ph_schema *s = ph_schema_first(domain, op_type); s && ROW(s)->since <= opset; s = ph_schema_next(s))
        found = s;
    return found;
}

PH_API size_t ph_schema_count(void) { return schema_row_count; }

PH_API const ph_schema *ph_schema_at(size_t i)
{
    return i < schema_row_count ? SCHEMA(&schema_rows[i]) : NULL;
}

PH_API int ph_schema_domain_known(const char *domain, int64_t *min_opset, int64_t *max_opset)
{
    domain = norm_domain(domain);
    for (size_t i = 0; i < schema_domain_count; i++) {
        const schema_domain *d = &schema_domains[i];
        if (strcmp(d->name, domain) != 0)
            continue;
        if (min_opset)
            *min_opset = d->min;
        if (max_opset)
            *max_opset = d->max;
        return 1;
    }
    return 0;
}

PH_API const char *ph_schema_domain(const ph_schema *s) { return ROW(s)->domain; }
PH_API const char *ph_schema_name(const ph_schema *s) { return ROW(s)->name; }
PH_API int64_t ph_schema_since_version(const ph_schema *s) { return ROW(s)->since; }
PH_API int ph_schema_deprecated(const ph_schema *s) { return ROW(s)->deprecated; }

PH_API void ph_schema_input_range(const ph_schema *s, int *min, int *max)
{
    *min = ROW(s)->min_in;
    *max = ROW(s)->max_in;
}

PH_API void ph_schema_output_range(const ph_schema *s, int *min, int *max)
{
    *min = ROW(s)->min_out;
    *max = ROW(s)->max_out;
}

PH_API size_t ph_schema_input_count(const ph_schema *s) { return ROW(s)->n_in; }
PH_API size_t ph_schema_output_count(const ph_schema *s) { return ROW(s)->n_out; }

static const schema_param *param(size_t first, size_t n, size_t i)
{
    return i < n ? &schema_params[first + i] : NULL;
}

PH_API const char *ph_schema_input_name(const ph_schema *s, size_t i)
{
    const schema_param *p = param(ROW(s)->in_first, ROW(s)->n_in, i);
    return p ? p->name : NULL;
}

PH_API ph_param_option ph_schema_input_option(const ph_schema *s, size_t i)
{
    const schema_param *p = param(ROW(s)->in_first, ROW(s)->n_in, i);
    return p ? (ph_param_option)p->option : PH_PARAM_OPTIONAL;
}

PH_API const char *ph_schema_output_name(const ph_schema *s, size_t i)
{
    const schema_param *p = param(ROW(s)->out_first, ROW(s)->n_out, i);
    return p ? p->name : NULL;
}

PH_API ph_param_option ph_schema_output_option(const ph_schema *s, size_t i)
{
    const schema_param *p = param(ROW(s)->out_first, ROW(s)->n_out, i);
    return p ? (ph_param_option)p->option : PH_PARAM_OPTIONAL;
}

PH_API size_t ph_schema_attr_count(const ph_schema *s) { return ROW(s)->n_attrs; }

static const schema_attr *attr(const ph_schema *s, size_t i)
{
    return i < ROW(s)->n_attrs ? &schema_attrs[ROW(s)->attr_first + i] : NULL;
}

PH_API const char *ph_schema_attr_name(const ph_schema *s, size_t i) { return attr(s, i) ? attr(s, i)->name : NULL; }
PH_API int ph_schema_attr_type(const ph_schema *s, size_t i) { return attr(s, i) ? attr(s, i)->type : 0; }
PH_API int ph_schema_attr_required(const ph_schema *s, size_t i) { return attr(s, i) ? attr(s, i)->required : 0; }

PH_API long ph_schema_attr_find(const ph_schema *s, const char *name)
{
    const schema_attr *a = &schema_attrs[ROW(s)->attr_first];
    size_t lo = 0, hi = ROW(s)->n_attrs;
    while (name && lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(a[mid].name, name);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

PH_API const char *ph_attr_type_name(int type)
{
    static const char *const names[] = {"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH",
                                        "FLOATS", "INTS", "STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR",
                                        "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
    return type >= 0 && type < (int)(sizeof names / sizeof names[0]) ? names[type] : "UNKNOWN";
}

/* ------------------------------------------------------------ types */

PH_API const char *ph_schema_input_type(const ph_schema *s, size_t i)
{
    const schema_param *p = param(ROW(s)->in_first, ROW(s)->n_in, i);
    return p ? p->type_str : NULL;
}

PH_API const char *ph_schema_output_type(const ph_schema *s, size_t i)
{
    const schema_param *p = param(ROW(s)->out_first, ROW(s)->n_out, i);
    return p ? p->type_str : NULL;
}

PH_API uint64_t ph_schema_input_dtypes(const ph_schema *s, size_t i)
{
    const schema_param *p = param(ROW(s)->in_first, ROW(s)->n_in, i);
    return p ? (uint64_t)p->dtypes : 0;
}

PH_API uint64_t ph_schema_output_dtypes(const ph_schema *s, size_t i)
{
    const schema_param *p = param(ROW(s)->out_first, ROW(s)->n_out, i);
    return p ? (uint64_t)p->dtypes : 0;
}

/* Actual position k among n formal parameters whose last may be variadic. */
static long formal_of(size_t first, size_t n, size_t k)
{
    if (!n)
        return -1;
    if (k < n)
        return (long)k;
    return schema_params[first + n - 1].option == PH_PARAM_VARIADIC ? (long)(n - 1) : -1;
}

PH_API long ph_schema_input_formal(const ph_schema *s, size_t k)
{
    return formal_of(ROW(s)->in_first, ROW(s)->n_in, k);
}

PH_API long ph_schema_output_formal(const ph_schema *s, size_t k)
{
    return formal_of(ROW(s)->out_first, ROW(s)->n_out, k);
}
