/* tensor_file.h - read a tensor from a raw file, for fold_constant_inputs
 * (.npy files: ph_tensor_load_npy).  Private to the plugin. */
#ifndef FOLD_CONSTANT_INPUTS_TENSOR_FILE_H
#define FOLD_CONSTANT_INPUTS_TENSOR_FILE_H

#include <stddef.h>
#include <stdint.h>

#include <passhost/passhost.h>

#if defined(__GNUC__)
#define TF_HIDDEN __attribute__((visibility("hidden")))
#else
#define TF_HIDDEN
#endif

/* The raw little-endian bytes of the file at path as a tensor of dtype and
 * shape (rank, dims); the file size must be exactly numel * dtype size.
 * NULL with a reason in msg.  The caller owns the result. */
TF_HIDDEN ph_tensor *tf_load_raw(const char *path, int dtype, size_t rank, const int64_t *dims,
                                 char *msg, size_t size);

#endif
