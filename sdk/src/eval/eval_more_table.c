/* sdk/src/eval/eval_more_table.c - registry of the kernels beyond the light
 * and heavy tables: control flow, sequences and optionals, recurrent nets,
 * quantized ops, signal processing, detection, scatter/gather, losses,
 * random ops, and the com.microsoft ops passhost emits. */
#include "eval_more.h"

#define SEQ (PHI_KF_NATIVE_HALF | PHI_KF_CONTAINERS)

const phi_kernel_entry phi_kernels_more[] = {
    /* control flow (eval_ops_control.c) */
    {PH_OP_If, phi_k_if, SEQ},
    {PH_OP_Loop, phi_k_loop, SEQ},
    {PH_OP_Scan, phi_k_scan, SEQ},
    {PH_OP_SequenceMap, phi_k_sequence_map, SEQ},
    /* sequences and optionals (eval_ops_sequence.c) */
    {PH_OP_SequenceEmpty, phi_k_sequence_empty, SEQ},
    {PH_OP_SequenceConstruct, phi_k_sequence_construct, SEQ},
    {PH_OP_SequenceAt, phi_k_sequence_at, SEQ},
    {PH_OP_SequenceInsert, phi_k_sequence_insert, SEQ},
    {PH_OP_SequenceErase, phi_k_sequence_erase, SEQ},
    {PH_OP_SequenceLength, phi_k_sequence_length, SEQ},
    {PH_OP_SplitToSequence, phi_k_split_to_sequence, SEQ},
    {PH_OP_ConcatFromSequence, phi_k_concat_from_sequence, SEQ},
    {PH_OP_Optional, phi_k_optional, SEQ},
    {PH_OP_OptionalHasElement, phi_k_optional_has_element, SEQ},
    {PH_OP_OptionalGetElement, phi_k_optional_get_element, SEQ},
    {PH_OP_UNKNOWN, NULL, 0},
};

const phi_named_kernel phi_kernels_named[] = {
    {NULL, NULL, {PH_OP_UNKNOWN, NULL, 0}},
};
