// sdk/src/schema/gen_schemas.cc - writes the C table of every ONNX operator
// schema (build/gen/op_schema_table.c) that sdk/src/schema/schema.c serves as
// passhost/schema.h.
//
// Built and run at build time, like protoc-c for onnx.proto: it links
// libonnx (Debian's libonnx-dev), whose OpSchemaRegistry holds every
// operator of every domain ONNX defines (ai.onnx, ai.onnx.ml, the training
// and preview domains) with its whole version history, and prints, for each
// version of each operator: domain, name, since_version, deprecated, the
// input and output counts and formal parameters (name, single / optional /
// variadic, type string and the tensor dtypes it allows) and the attributes (name, AttributeProto type, required);
// then each domain's opset range.  Rows are sorted by domain, name and
// version, attributes by name, so the C side can search them.
//
//   gen_schemas > op_schema_table.c
//
// The output depends only on the installed libonnx: the same package
// writes the same bytes.
#include <onnx/common/version.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

using ONNX_NAMESPACE::OpSchema;
using ONNX_NAMESPACE::OpSchemaRegistry;

// A C string literal for s (operator, domain and parameter names are plain
// identifiers; escape anything else all the same).
static std::string literal(const std::string &s)
{
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            char buf[8];
            snprintf(buf, sizeof buf, "\\%03o", c);
            out += buf;
        } else {
            out += (char)c;
        }
    }
    return out + "\"";
}

static int option_code(OpSchema::FormalParameterOption o)
{
    switch (o) {
    case OpSchema::Single: return 0;
    case OpSchema::Optional: return 1;
    case OpSchema::Variadic: return 2;
    }
    return 0;
}

// Bit d (a TensorProto.DataType, ph_dtype) for each "tensor(NAME)" among a
// formal parameter's allowed types (sequences, optionals and maps are left
// out: they are no tensor dtype).
static unsigned long long dtype_mask(const OpSchema::FormalParameter &p)
{
    static const char *const names[] = {"", "float", "uint8", "int8", "uint16", "int16", "int32", "int64",
                                        "string", "bool", "float16", "double", "uint32", "uint64",
                                        "complex64", "complex128", "bfloat16"};
    unsigned long long mask = 0;
    for (const std::string *t : p.GetTypes())
        for (int d = 1; d < (int)(sizeof names / sizeof *names); d++)
            if (*t == std::string("tensor(") + names[d] + ")")
                mask |= 1ull << d;
    return mask;
}

static int clamp(int v) { return v == INT_MAX ? -1 : v; } // -1: no upper bound

int main()
{
    std::vector<OpSchema> all = OpSchemaRegistry::get_all_schemas_with_history();
    std::sort(all.begin(), all.end(), [](const OpSchema &a, const OpSchema &b) {
        return std::make_tuple(a.domain(), a.Name(), a.SinceVersion()) <
               std::make_tuple(b.domain(), b.Name(), b.SinceVersion());
    });
    std::printf("/* op_schema_table.c - every ONNX operator schema, with its version history.\n"
                " * Generated at build time by sdk/src/schema/gen_schemas.cc from libonnx %s\n"
                " * (Debian libonnx-dev); do not edit.  Served by sdk/src/schema/schema.c. */\n"
                "#include \"schema/table.h\"\n\n",
                ONNX_NAMESPACE::LAST_RELEASE_VERSION);
    std::printf("const char schema_onnx_version[] = %s;\n\n",
                literal(ONNX_NAMESPACE::LAST_RELEASE_VERSION).c_str());

    std::printf("const schema_attr schema_attrs[] = {\n");
    size_t n_attrs = 0;
    std::vector<size_t> attr_first;
    for (const OpSchema &s : all) {
        attr_first.push_back(n_attrs);
        for (const auto &a : s.attributes()) { // std::map: sorted by name
            std::printf("    {%s, %d, %d},\n", literal(a.first).c_str(), (int)a.second.type,
                        a.second.required ? 1 : 0);
            n_attrs++;
        }
    }
    std::printf("    {0, 0, 0},\n};\n\n");

    std::printf("const schema_param schema_params[] = {\n");
    size_t n_params = 0;
    std::vector<size_t> in_first, out_first;
    for (const OpSchema &s : all) {
        in_first.push_back(n_params);
        for (const auto &p : s.inputs()) {
            std::printf("    {%s, %d, %s, 0x%llxull},\n", literal(p.GetName()).c_str(),
                        option_code(p.GetOption()), literal(p.GetTypeStr()).c_str(), dtype_mask(p));
            n_params++;
        }
        out_first.push_back(n_params);
        for (const auto &p : s.outputs()) {
            std::printf("    {%s, %d, %s, 0x%llxull},\n", literal(p.GetName()).c_str(),
                        option_code(p.GetOption()), literal(p.GetTypeStr()).c_str(), dtype_mask(p));
            n_params++;
        }
    }
    std::printf("    {0, 0, 0, 0},\n};\n\n");

    std::printf("const schema_row schema_rows[] = {\n");
    for (size_t i = 0; i < all.size(); i++) {
        const OpSchema &s = all[i];
        std::printf("    {%s, %s, %d, %d, %d, %d, %d, %d, %zu, %zu, %zu, %zu, %zu, %zu},\n",
                    literal(s.domain()).c_str(), literal(s.Name()).c_str(), s.SinceVersion(),
                    s.Deprecated() ? 1 : 0, s.min_input(), clamp(s.max_input()), s.min_output(),
                    clamp(s.max_output()), attr_first[i], s.attributes().size(), in_first[i],
                    s.inputs().size(), out_first[i], s.outputs().size());
    }
    std::printf("};\nconst size_t schema_row_count = %zu;\n\n", all.size());

    std::map<std::string, std::pair<int, int>> domains;
    for (const auto &d : OpSchemaRegistry::DomainToVersionRange::Instance().Map())
        domains[d.first] = d.second;
    std::printf("const schema_domain schema_domains[] = {\n");
    for (const auto &d : domains)
        std::printf("    {%s, %d, %d},\n", literal(d.first).c_str(), d.second.first, d.second.second);
    std::printf("};\nconst size_t schema_domain_count = %zu;\n", domains.size());
    return std::ferror(stdout) ? 1 : 0;
}
