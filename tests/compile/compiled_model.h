// One model compiled by batchconv_add_model for the tests: its generic entry
// point and argument table (from the generated <name>.h).
#pragma once

#include <cstdint>

struct halide_buffer_t;

struct CompiledModel {
  const char* stem;  // tests/models/<stem>.onnx
  const char* mode;  // "r" rewrites, "nr" no rewrites, "rw" rewrites + runtime weights, "db*" --dynamic-batch,
                     // "p<n>" --part-nodes=<n>
  int (*argv)(struct halide_buffer_t** args);
  int num_inputs, num_weights, num_outputs;
  const char* const* arg_names;
  const int* arg_ranks;
  const int64_t* arg_dims;   // -1 for a run-time batch
  const int* arg_batched;    // 1 where dim 0 is the run-time batch (--dynamic-batch)
  int num_pipelines;         // the Halide pipelines it runs as (model parts; 0: not recorded)
};
