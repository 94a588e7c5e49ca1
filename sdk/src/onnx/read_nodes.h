/* sdk/src/onnx/read_nodes.h - the main graph's nodes, read in place from the
 * mapped file (read_nodes.c). */
#ifndef PASSHOST_SDK_ONNX_READ_NODES_H
#define PASSHOST_SDK_ONNX_READ_NODES_H

#include "internal.h"

/* One NodeProto of the main graph, as the file holds it. */
typedef struct onnx_node_src {
    const uint8_t *data; /* the message's bytes, in the mapping */
    size_t len;
    ph_node *node;       /* after onnx_nodes_build: its node (in the graph) */
    int in_place;        /* read in place: its fields in the model's arena, inputs and outputs read
                            from data; else the node keeps the message protobuf-c unpacked */
    uint32_t n_in, n_out; /* when in place: its input and output fields */
    int op;               /* when in place: its ph_op, or -1 (not looked up) */
} onnx_node_src;

/* Where the file holds a main-graph initializer's raw_data, which the
 * skeleton protobuf-c unpacks leaves out (load.c). */
typedef struct onnx_raw_ref {
    const uint8_t *data;
    size_t len;
    int present;
} onnx_raw_ref;

/* What the loader hands the build of the main graph besides its proto. */
typedef struct onnx_main_graph {
    onnx_node_src *nodes;     /* its nodes, read in place (onnx_nodes_build) */
    size_t n_nodes;
    const ir_mapping *behind; /* see onnx_nodes_build */
    const onnx_raw_ref *raw;  /* by initializer, when the skeleton left their raw_data out, else NULL */
    size_t n_raw;
} onnx_main_graph;

/* What the build of a main graph found out. */
typedef struct onnx_build_facts {
    int in_order;          /* every node reads only values defined before it in the list */
    const ph_node *failed; /* when in order: the first node read in place whose file-decided
                              checks (ir_file_check_node) fail, or NULL */
    int in_place;          /* every node was read in place */
    size_t inits_ready;    /* the first this many initializers passed their checks and have
                              their data attached (taken while their messages are in the
                              cache); the loader checks and attaches the rest */
} onnx_build_facts;

/* Read the messages of src[0, n) into nodes appended to g (m's main
 * graph) and build them, as onnx_graph_build does a graph's nodes: in
 * place into the model's arena where the reader can, else unpacked by
 * protobuf-c.  While every input a node names is defined already, each
 * node is built as it is read (its inputs, then its outputs); from the
 * first node that reads a value not defined yet (a list out of order, or
 * an undefined name), the rest are read, then every one of their outputs
 * is made, then every input resolved.  Then the bodies of If/Loop/Scan.
 * facts->in_order: 1 when no node came to that, i.e. every node reads
 * only values defined before it in the list; each node read in place is
 * then checked as it is built (facts->failed).  behind, when not NULL, is
 * the mapping the messages lie in, in file order, with nothing between the
 * first and the last that is read after the build (no initializer's data):
 * the pages of the messages built are then dropped as the build goes (a
 * page touched again is read from the file again).  0, or PH_EPARSE (a
 * message protobuf-c refuses, a name defined twice or not at all) or
 * PH_ENOMEM, with the message in err; the nodes made go with the graph
 * either way. */
int onnx_nodes_build(ph_graph *g, onnx_node_src *src, size_t n, const ir_mapping *behind, onnx_build_facts *facts,
                     ph_error *err);

/* 1 if a message of the tree holds an unknown field numbered 0, which no
 * valid protobuf encoding has (see read_nodes.c). */
int onnx_has_field_zero(const ProtobufCMessage *m);

/* Resolve the inputs of a node made from a NodeProto's names (build.c). */
int onnx_node_resolve_inputs(ph_node *n, ph_error *err);
/* Build the IR of every GRAPH/GRAPHS attribute of n (build.c). */
int onnx_node_build_subgraphs(ph_node *n, ph_error *err);
/* onnx_graph_build of the main graph: the nodes of main (onnx_nodes_build)
 * before those of g's proto (build.c).  facts->in_order: 1 when every node
 * of g (not of its bodies) reads only values defined before it in the
 * list. */
int onnx_graph_build_main(ph_graph *g, const onnx_main_graph *main, onnx_build_facts *facts, ph_error *err);
/* A node for np (taken over, even on failure), outputs made, inputs not yet
 * resolved; appended to g (ir/graph.c). */
ph_node *ir_node_from_proto(ph_graph *g, Onnx__NodeProto *np, ph_error *err);

#endif
