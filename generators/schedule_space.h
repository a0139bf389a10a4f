// The schedule space of the conv kernels: one point is a ConvSchedule, a
// plain struct of named fields. A field left at 0 takes its default, which
// default_conv_schedule() computes from the target's facts (vector width,
// register count, cache sizes), never from constants for one CPU.
//
// Every field is settable without editing code: as a generator param of the
// same name (conv_schedule_params.h), as "name=value" text (parse_conv_schedule,
// what batchconv-bench --schedule and a tuner write), or directly by the
// model compiler. Every valid point computes the same function; an invalid
// point is rejected at generation time by validate_conv_schedule(), whose
// message names the field.
//
// Families:
//   rows      NCHW rows in vectors: the register tile is row_vectors vectors
//             along x, row_rows rows, row_channels output channels; memory-
//             bound paths (depthwise, 1-D) have their own task sizes.
//   channels  output channels in vectors (Halide's apps/conv_layer form):
//             the register tile is ch_vectors vectors of output channels x
//             ch_columns output columns of one row; weights arrive packed with
//             the output channel innermost; any x and y strides (NCHW, NHWC).
//   lanes     output channels of several groups in one vector, for few
//             channels per group (depthwise, ResNeXt): the register tile is
//             one vector of (channel, group) lanes x lane_columns columns;
//             weights packed with (channel, group) innermost, as the
//             channels family's; any x and y strides. Built as the AOT
//             kernels *_lanes and scheduled by the model compiler
//             (generators/conv_schedule_cpu_lanes.h).
//
// This header has no Halide dependency: the runtime's chooser uses it too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace batchconv_gen {

enum class ConvFamily { Rows = 0, Channels = 1, Gpu = 2, Lanes = 3 };

const char* family_name(ConvFamily f);

// What the defaults and the validation need to know about a target.
struct TargetFacts {
  int vector_floats = 16;  // floats per vector register
  int registers = 32;      // vector registers
  int l1_kb = 32;          // per core data cache
  int l2_kb = 1024;        // per core
  std::string name;        // for messages ("x86-64-linux-avx512_skylake")
  bool gpu = false;            // a CUDA or OpenCL target (the gpu family runs)
  int gpu_max_threads = 1024;  // threads per block (CUDA and most OpenCL devices)
  int gpu_shared_kb = 48;      // shared (local) memory per block without opt-in
};

struct ConvSchedule {
  ConvFamily family = ConvFamily::Rows;

  // rows family, dense 2-D path (Cout_g >= row_channels)
  int row_vectors = 0;   // vectors along x per register tile
  int row_rows = 0;      // output rows per register tile
  int row_channels = 0;  // output channels per register tile
  int task_input_kb = 0;  // padded input a 2-D task aims for (KB)
  int task_max_rows = 0;  // most output rows per 2-D task
  // rows family, 1-D path (H' == 1)
  int wide_vectors = 0;        // vectors along x per register tile
  int wide_channels = 0;       // output channels per register tile
  int wide_task_input_kb = 0;  // padded input of one 1-D task (KB)
  // rows family, depthwise path (Cin_g == Cout_g == 1)
  int dw_vectors = 0;  // vectors along x per register tile
  int dw_rows = 0;     // rows per register tile
  int dw_planes = 0;      // channel planes per task
  int dw_task_cols = 0;   // register tiles along x per task
  int dw_task_rows = 0;   // register tiles along y per task

  // channels family
  int ch_vectors = 0;    // output-channel vectors per register tile
  int ch_columns = 0;    // output columns per register tile
  int ch_task_rows = 0;  // output rows per parallel task
  int ch_task_channels = -1;  // output channels per parallel task: 0 = all of a group's; else a
                              // multiple of the vector, at least the widest tile (max(ch_vectors, 2)
                              // vectors); a group narrower than it is one task
  int ch_unroll_kx = -1;  // 1: unroll 3-tap rows; 0: never; -1: default
  int ch_ci_block = -1;   // input channels per reduction block, every tile of a
                          // task's channel tile (all its rows) inside each block
                          // (the block's weights stay in L1); 0: none
  int ch_blocked = -1;  // 1: x staged in blocks of a vector of channels (nChw16c),
                        // tiles stored straight into y (any strides; dense
                        // copies and stores for channels-last x and y); 0: no
  int ch_direct = -1;   // 1: tiles stored straight into y, no block copied out
                        // (ch_blocked=1 implies it); 0: each task's tiles go to
                        // a channel-innermost block, copied to y after them
  int ch_fit_rows = -1;  // 1: on rows that 14, 11 or 7 columns divide (and 6
                         // does not), tiles of two channel vectors that wide,
                         // no column computed twice; 0: the point's tile

  // gpu family
  int gpu_threads_x = 0;  // threads along output x per block (coalesced NCHW rows)
  int gpu_threads_y = 0;  // threads along output y per block (1-D convs: along x too)
  int gpu_pixels_x = 0;   // adjacent output columns per thread
  int gpu_pixels_y = 0;   // output rows per thread
  int gpu_channels = 0;   // output channels per thread (and per block)
  int gpu_reduction = 0;  // input channels per reduction step
  int gpu_shared = -1;    // 1: the block's weights staged in shared memory; 0: read through the cache
  int gpu_shift = -1;     // 1: edge tiles shifted inward where the output is a tile or more (registers); 0: guarded

  // lanes family
  int lane_columns = 0;    // most output columns per register tile (a divisor of the row is taken)
  int lane_task_rows = 0;  // output rows per parallel task
  int lane_task_vectors = 0;  // vectors of lanes per parallel task (looped inside each column tile)
};

// One field of the space, for generic code (generator params, text, tuner).
struct ConvScheduleField {
  const char* name;
  int ConvSchedule::*member;
  int min, max;      // valid range once defaults are filled in
  const char* doc;
};
const std::vector<ConvScheduleField>& conv_schedule_fields();

// The point with every 0 / -1 field replaced by its default for `facts`.
ConvSchedule default_conv_schedule(const TargetFacts& facts, ConvFamily family);
ConvSchedule fill_defaults(const ConvSchedule& s, const TargetFacts& facts);

// "" when `s` (defaults filled) is valid on `facts`, else a message naming
// the field and what was expected, e.g. "ch_vectors=5 x ch_columns=6 needs
// 36 vector registers; x86-64-linux-avx2 has 16".
std::string validate_conv_schedule(const ConvSchedule& s, const TargetFacts& facts);

// "family=channels,ch_vectors=4,ch_columns=6" and back. Unset fields are
// omitted; parse throws std::invalid_argument naming an unknown field or a
// bad value.
std::string to_string(const ConvSchedule& s);
ConvSchedule parse_conv_schedule(const std::string& text);

}  // namespace batchconv_gen
