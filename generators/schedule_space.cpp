#include "schedule_space.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace batchconv_gen {

const char* family_name(ConvFamily f) {
  return f == ConvFamily::Channels ? "channels" : f == ConvFamily::Gpu ? "gpu" : f == ConvFamily::Lanes ? "lanes" : "rows";
}

const std::vector<ConvScheduleField>& conv_schedule_fields() {
  static const std::vector<ConvScheduleField> fields = {
      {"row_vectors", &ConvSchedule::row_vectors, 1, 8, "rows: vectors along x per register tile"},
      {"row_rows", &ConvSchedule::row_rows, 1, 16, "rows: output rows per register tile"},
      {"row_channels", &ConvSchedule::row_channels, 1, 32, "rows: output channels per register tile"},
      {"task_input_kb", &ConvSchedule::task_input_kb, 4, 65536, "rows: padded input per 2-D task (KB)"},
      {"task_max_rows", &ConvSchedule::task_max_rows, 1, 1024, "rows: most output rows per 2-D task"},
      {"wide_vectors", &ConvSchedule::wide_vectors, 1, 8, "rows, 1-D: vectors along x per register tile"},
      {"wide_channels", &ConvSchedule::wide_channels, 1, 32, "rows, 1-D: output channels per register tile"},
      {"wide_task_input_kb", &ConvSchedule::wide_task_input_kb, 4, 65536, "rows, 1-D: padded input per task (KB)"},
      {"dw_vectors", &ConvSchedule::dw_vectors, 1, 8, "rows, depthwise: vectors along x per register tile"},
      {"dw_rows", &ConvSchedule::dw_rows, 1, 16, "rows, depthwise: rows per register tile"},
      {"dw_planes", &ConvSchedule::dw_planes, 1, 256, "rows, depthwise: channel planes per task"},
      {"dw_task_cols", &ConvSchedule::dw_task_cols, 1, 1024, "rows, depthwise: register tiles along x per task"},
      {"dw_task_rows", &ConvSchedule::dw_task_rows, 1, 1024, "rows, depthwise: register tiles along y per task"},
      {"ch_vectors", &ConvSchedule::ch_vectors, 1, 8, "channels: output-channel vectors per register tile"},
      {"ch_columns", &ConvSchedule::ch_columns, 1, 16, "channels: output columns per register tile"},
      {"ch_task_rows", &ConvSchedule::ch_task_rows, 1, 1024, "channels: output rows per parallel task"},
      {"ch_task_channels", &ConvSchedule::ch_task_channels, 0, 65536,
       "channels: output channels per parallel task (0: all of a group's)"},
      {"ch_unroll_kx", &ConvSchedule::ch_unroll_kx, 0, 1, "channels: unroll 3-tap kernel rows (1) or not (0)"},
      {"ch_ci_block", &ConvSchedule::ch_ci_block, 0, 4096,
       "channels: input channels per reduction block over a task's tiles (0: none)"},
      {"ch_blocked", &ConvSchedule::ch_blocked, 0, 1,
       "channels: 1 = x staged in channel blocks, tiles stored straight into y"},
      {"ch_direct", &ConvSchedule::ch_direct, 0, 1,
       "channels: 1 = tiles stored straight into y (no block copied out)"},
      {"ch_fit_rows", &ConvSchedule::ch_fit_rows, 0, 1,
       "channels: 1 = 2-vector tiles of 14, 11 or 7 columns on rows they divide"},
      {"gpu_threads_x", &ConvSchedule::gpu_threads_x, 1, 1024, "gpu: threads along output x per block"},
      {"gpu_threads_y", &ConvSchedule::gpu_threads_y, 1, 1024, "gpu: threads along output y per block"},
      {"gpu_pixels_x", &ConvSchedule::gpu_pixels_x, 1, 8, "gpu: output columns per thread"},
      {"gpu_pixels_y", &ConvSchedule::gpu_pixels_y, 1, 8, "gpu: output rows per thread"},
      {"gpu_channels", &ConvSchedule::gpu_channels, 1, 64, "gpu: output channels per thread"},
      {"gpu_reduction", &ConvSchedule::gpu_reduction, 1, 1024, "gpu: input channels per reduction step"},
      {"gpu_shared", &ConvSchedule::gpu_shared, 0, 1, "gpu: stage the block's weights in shared memory (1) or not (0)"},
      {"gpu_shift", &ConvSchedule::gpu_shift, 0, 1,
       "gpu: 1 = edge tiles shifted inward on outputs of a tile or more, accumulators in registers"},
      {"lane_columns", &ConvSchedule::lane_columns, 1, 8, "lanes: most output columns per register tile"},
      {"lane_task_rows", &ConvSchedule::lane_task_rows, 1, 1024, "lanes: output rows per parallel task"},
      {"lane_task_vectors", &ConvSchedule::lane_task_vectors, 1, 64, "lanes: vectors of lanes per parallel task"},
  };
  return fields;
}

namespace {

// Output channels per register tile so that px*tc accumulators, px input
// vectors and one broadcast fit the register file.
int channels_per_tile(int registers, int px) { return std::max(1, (registers - 1 - px) / px); }

// The gpu family's limits: threads per block, the accumulators a thread
// keeps in registers, shared memory per block.
std::string validate_gpu_fields(const ConvSchedule& s, const TargetFacts& t) {
  const std::string on = t.name.empty() ? "the target" : t.name;
  const long threads = static_cast<long>(s.gpu_threads_x) * s.gpu_threads_y;
  if (threads > t.gpu_max_threads) {
    return "gpu_threads_x=" + std::to_string(s.gpu_threads_x) + " x gpu_threads_y=" +
           std::to_string(s.gpu_threads_y) + " is " + std::to_string(threads) +
           " threads per block; at most " + std::to_string(t.gpu_max_threads);
  }
  const long accumulators = static_cast<long>(s.gpu_pixels_x) * s.gpu_pixels_y * s.gpu_channels;
  if (accumulators > 128) {
    return "gpu_pixels_x=" + std::to_string(s.gpu_pixels_x) + " x gpu_pixels_y=" +
           std::to_string(s.gpu_pixels_y) + " x gpu_channels=" + std::to_string(s.gpu_channels) +
           " is " + std::to_string(accumulators) + " accumulators per thread; at most 128 (of 255 registers)";
  }
  // gpu_shared=1 stages gpu_channels x Cin_g x KH x KW weights per block:
  // sized at launch, so only its per-input-channel share of a 3x3 kernel is
  // checked here (the driver refuses a launch that needs more).
  if (s.gpu_shared == 1) {
    const long bytes = 4L * s.gpu_channels * 9;
    if (bytes > 1024L * t.gpu_shared_kb) {
      return "gpu_channels=" + std::to_string(s.gpu_channels) + " with gpu_shared=1 stages " +
             std::to_string(bytes) + " bytes of 3x3 weights per input channel; " + on + " has " +
             std::to_string(t.gpu_shared_kb) + " KB of shared memory";
    }
  }
  return "";
}

template <typename T>
void set_default(T& field, T value, T unset) {
  if (field == unset) field = value;
}

}  // namespace

ConvSchedule fill_defaults(const ConvSchedule& in, const TargetFacts& t) {
  ConvSchedule s = in;
  const bool big = t.registers >= 32;
  // rows: 4 rows of one vector with 32 registers, 2 with 16 (one vector wide
  // wastes least on the 22-56 column rows of the seed shapes).
  set_default(s.row_vectors, 1, 0);
  set_default(s.row_rows, big ? 4 : 2, 0);
  set_default(s.row_channels, channels_per_tile(t.registers, s.row_vectors * s.row_rows), 0);
  // A 2-D task's padded input: a quarter of L2 (256 KB of a 1 MB L2), up to
  // 16 rows (seed 3's 30-row images in two tasks).
  set_default(s.task_input_kb, std::max(16, t.l2_kb / 4), 0);
  set_default(s.task_max_rows, 16, 0);
  set_default(s.wide_vectors, big ? 4 : 2, 0);
  set_default(s.wide_channels, channels_per_tile(t.registers, s.wide_vectors), 0);
  // A 1-D task: half of L2 (seed 1: long store runs per channel tile).
  set_default(s.wide_task_input_kb, std::max(16, t.l2_kb / 2), 0);
  set_default(s.dw_vectors, 2, 0);
  set_default(s.dw_rows, big ? 4 : 2, 0);
  set_default(s.dw_planes, 8, 0);
  set_default(s.dw_task_cols, 8, 0);
  set_default(s.dw_task_rows, 16, 0);
  // channels: the conv_layer tile, ch_vectors x ch_columns accumulators plus
  // ch_vectors weight vectors and one broadcast: 4 x 6 (29 of 32 registers),
  // 2 x 6 (15 of 16); two vectors on AVX-512 take 14 columns (31 of 32).
  set_default(s.ch_vectors, big ? 4 : 2, 0);
  set_default(s.ch_columns, std::min(14, (t.registers - 1 - s.ch_vectors) / s.ch_vectors), 0);
  // Task rows: 8 against 4 took B=1 (128 images 64->64 56x56) 134 -> 128 ms,
  // the MAML layer 1503 -> 1431, seed 2 (G=1) 7.8 -> 6.3; 16 was no faster
  // (seed-workloads, Intel Xeon, 2 threads).
  set_default(s.ch_task_rows, 8, 0);
  // One task spans a group's channels unless the chooser, which knows the
  // shape and the threads, splits them (choose_task_channels).
  set_default(s.ch_task_channels, 0, -1);
  set_default(s.ch_unroll_kx, 0, -1);
  // Reduction blocks (weights of a block kept in L1 across a task's tiles)
  // pay where a tile's weights outgrow L2 (choose_reduction_blocks, the
  // model compiler's small maps of many channels); on 64 -> 64 at 56x56 they
  // measured no faster (125 against 123 GFLOP/s per core, JIT): off by
  // default, a tunable.
  set_default(s.ch_ci_block, 0, -1);
  // Off unless asked: the AOT kernels *_channels_blocked set it.
  set_default(s.ch_blocked, 0, -1);
  // Tiles straight into y, no block copied out after them: seed 2 (3 -> 64
  // channels, 7x7) 10.4 -> 8.0 ms on NCHW tensors, 7.6 -> 6.7 channels-last;
  // a seed 3 slice (3 -> 64, 3x3, 50 images) 4.9 -> 3.1 / 2.2 -> 1.5;
  // 64 -> 64 3x3 at 56x56 and 1x1 convs 1.0-1.1x; a 7x7 map 0.95-1.1x (JIT,
  // AMD EPYC Zen 4, 2 threads, interleaved). The copy-out form is a tunable,
  // and the form a reduction blocked by input channels needs.
  set_default(s.ch_direct, 1, -1);
  // Tiles fitted to the row: a 4 x 6 tile computes 60 columns of a 56-wide
  // row and 24 of seed 2's 22. In kernels of run-time shapes the fitted
  // tiles took 64 -> 64 3x3 at 56x56 from 20.3 to 19.1 ms channels-last,
  // 1x1 256 -> 128 at 14x14 from 0.75 to 0.64 and seed 2 from 11.5 to 11.1,
  // but their unit-stride specializations (stride_x == 1, which makes them
  // fast) made the convs that never take them 5-17% slower (8 -> 64 1x1
  // 0.41 -> 0.48, a seed 3 slice 1.46 -> 1.62; JIT, AMD EPYC Zen 4, 2
  // threads, interleaved), so they are a tunable; the model compiler, whose
  // conditions fold, takes them, and the runtime has kernels of its own
  // with them (*_channels_fitted), called only where they run.
  set_default(s.ch_fit_rows, 0, -1);
  // gpu: one warp of columns x 4 rows of threads (128 per block); each thread
  // 4 rows x 8 output channels = 32 accumulators (of 255 registers), so
  // every input value loaded feeds 8 FMAs and every weight (one broadcast
  // load for the block) 4; 16 input channels per reduction step. Weights
  // read through the cache (gpu_shared=0). On an H200 no other point of the
  // sweep in tests/gpu beat it (benchmarks/results-gpu-h200-2026-12-04.md),
  // but the accumulators are not in registers yet (conv_schedule_gpu.h).
  set_default(s.gpu_threads_x, 32, 0);
  set_default(s.gpu_threads_y, 4, 0);
  set_default(s.gpu_pixels_x, 1, 0);
  set_default(s.gpu_pixels_y, 4, 0);
  set_default(s.gpu_channels, 8, 0);
  set_default(s.gpu_reduction, 16, 0);
  set_default(s.gpu_shared, 0, -1);
  // Shifted edge tiles (conv_schedule_gpu.h): the only form whose
  // accumulators stay in registers. Not measured on a GPU yet; the guarded
  // form (0) was, and is 16-100x slower than cuDNN.
  set_default(s.gpu_shift, 1, -1);
  // lanes: 2 columns x 8 rows. On a ResNeXt grouped conv (8 images, 32
  // groups of 4, 14x14) and a depthwise one (128 channels, 28x28), 1 or 2
  // columns ran 0.19-0.24 / 0.41-0.43 ms, 4 and 7 columns 0.33-0.43 /
  // 0.44-0.63, and a tile that does not divide the row 0.7-0.9 (model-layouts,
  // Intel Xeon, 2 threads); 8 rows against 2 and 4 was 5-20% faster.
  set_default(s.lane_columns, 2, 0);
  set_default(s.lane_task_rows, 8, 0);
  set_default(s.lane_task_vectors, 1, 0);
  return s;
}

ConvSchedule default_conv_schedule(const TargetFacts& facts, ConvFamily family) {
  ConvSchedule s;
  s.family = family;
  return fill_defaults(s, facts);
}

std::string validate_conv_schedule(const ConvSchedule& s, const TargetFacts& t) {
  std::ostringstream m;
  if (s.family != ConvFamily::Rows && s.family != ConvFamily::Channels && s.family != ConvFamily::Gpu &&
      s.family != ConvFamily::Lanes) {
    return "family=" + std::to_string(static_cast<int>(s.family)) + " is not rows, channels, gpu or lanes";
  }
  if (s.family == ConvFamily::Lanes && t.gpu) return "family=lanes is a CPU family; " + t.name + " is a GPU target";
  for (const ConvScheduleField& f : conv_schedule_fields()) {
    const int v = s.*(f.member);
    if (v < f.min || v > f.max) {
      m << f.name << "=" << v << " is out of range: expected " << f.min << ".." << f.max << " ("
        << f.doc << ")";
      return m.str();
    }
  }
  const std::string on = t.name.empty() ? "the target" : t.name;
  auto need = [&](const char* what, int registers) {
    m << what << " needs " << registers << " vector registers; " << on << " has " << t.registers;
    return m.str();
  };
  // Accumulators + input vectors + one broadcast must fit the registers.
  const int px = s.row_vectors * s.row_rows;
  if (px * s.row_channels + px + 1 > t.registers) {
    return need(("row_vectors=" + std::to_string(s.row_vectors) + " x row_rows=" +
                 std::to_string(s.row_rows) + " x row_channels=" + std::to_string(s.row_channels))
                    .c_str(),
                px * s.row_channels + px + 1);
  }
  if (s.wide_vectors * s.wide_channels + s.wide_vectors + 1 > t.registers) {
    return need(("wide_vectors=" + std::to_string(s.wide_vectors) + " x wide_channels=" +
                 std::to_string(s.wide_channels))
                    .c_str(),
                s.wide_vectors * s.wide_channels + s.wide_vectors + 1);
  }
  if (2 * s.dw_vectors * s.dw_rows > t.registers) {
    return need(("dw_vectors=" + std::to_string(s.dw_vectors) + " x dw_rows=" + std::to_string(s.dw_rows) +
                 " (accumulators and inputs)")
                    .c_str(),
                2 * s.dw_vectors * s.dw_rows);
  }
  if (s.ch_vectors * s.ch_columns + s.ch_vectors + 1 > t.registers) {
    return need(("ch_vectors=" + std::to_string(s.ch_vectors) + " x ch_columns=" +
                 std::to_string(s.ch_columns))
                    .c_str(),
                s.ch_vectors * s.ch_columns + s.ch_vectors + 1);
  }
  if (s.ch_task_channels > 0) {
    const int widest = t.vector_floats * std::max(s.ch_vectors, 2);
    if (s.ch_task_channels % t.vector_floats != 0 || s.ch_task_channels < widest) {
      return "ch_task_channels=" + std::to_string(s.ch_task_channels) + " must be 0 or a multiple of " +
             std::to_string(t.vector_floats) + " (the vector) of at least " + std::to_string(widest) +
             " (the widest register tile) on " + t.name;
    }
  }
  if (s.ch_blocked == 1 && s.ch_ci_block > 0 && s.ch_ci_block % t.vector_floats != 0) {
    return "ch_ci_block=" + std::to_string(s.ch_ci_block) + " must be a multiple of " +
           std::to_string(t.vector_floats) + " (a blocked kernel's input block) with ch_blocked=1 on " + t.name;
  }
  if (s.family == ConvFamily::Gpu || t.gpu) return validate_gpu_fields(s, t);
  return "";
}

std::string to_string(const ConvSchedule& s) {
  std::ostringstream o;
  o << "family=" << family_name(s.family);
  const ConvSchedule unset;
  for (const ConvScheduleField& f : conv_schedule_fields()) {
    if (s.*(f.member) != unset.*(f.member)) o << "," << f.name << "=" << s.*(f.member);
  }
  return o.str();
}

ConvSchedule parse_conv_schedule(const std::string& text) {
  ConvSchedule s;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      throw std::invalid_argument("schedule: '" + item + "' is not name=value");
    }
    const std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    if (name == "family") {
      if (value == "rows") {
        s.family = ConvFamily::Rows;
      } else if (value == "channels") {
        s.family = ConvFamily::Channels;
      } else if (value == "gpu") {
        s.family = ConvFamily::Gpu;
      } else if (value == "lanes") {
        s.family = ConvFamily::Lanes;
      } else {
        throw std::invalid_argument("schedule: family=" + value + ": expected rows, channels, gpu or lanes");
      }
      continue;
    }
    const ConvScheduleField* field = nullptr;
    for (const ConvScheduleField& f : conv_schedule_fields()) {
      if (name == f.name) field = &f;
    }
    if (!field) {
      std::string names;
      for (const ConvScheduleField& f : conv_schedule_fields()) names += std::string(" ") + f.name;
      throw std::invalid_argument("schedule: unknown field '" + name + "'; the fields are family" + names);
    }
    size_t used = 0;
    long v = 0;
    try {
      v = std::stol(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size() || value.empty() || v < -1 || v > 1 << 20) {
      throw std::invalid_argument("schedule: " + name + "=" + value + " is not an integer in -1..1048576");
    }
    s.*(field->member) = static_cast<int>(v);
  }
  return s;
}

}  // namespace batchconv_gen
