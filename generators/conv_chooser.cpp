#include "conv_chooser.h"

#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace batchconv_gen {

// The families' costs, per output element:
//   rows      ceil(W' / vec) vectors per row, so a row of W' columns wastes
//             vec * ceil(W' / vec) - W' lanes; reads and writes NCHW only
//             (other layouts are copied in and out by the runtime).
//   channels  ceil(Cout_g / (vec * ch_vectors)) channel tiles, no lane lost
//             on rows; one extra pass over the output (the task's block
//             copied to y, in cache); reads and writes any layout in place.
// Measured on the seed shapes (README table): the channels family wins on
// long reductions with at least one vector of output channels; the rows
// family on short reductions (seed 3: 27 taps, memory bound), depthwise
// (one channel per group) and small Cout_g (ResNeXt's 4 per group).
ConvChoice choose_conv_schedule(const ConvProblem& p, const TargetFacts& t) {
  const int vec = t.vector_floats;
  const int64_t taps = p.cin_g * p.kernel_w * p.kernel_h;
  const bool channels_last = p.x_channels_last || p.y_channels_last;
  ConvChoice c;
  if (t.gpu) {
    c.schedule = default_conv_schedule(t, ConvFamily::Gpu);
    c.reason = "gpu: a CUDA or OpenCL target";
    return c;
  }
  // Channels-last tensors would cost the rows family a copy each way, so
  // the channels family takes every reduction there: with its tiles stored
  // straight into y (ch_direct) it beat the rows family on NCHW data, before
  // any copy, at 8-27 taps (seed 1's 16 -> 64 1x1 over 1e6 columns 21.9
  // against 24.9 ms; a seed 3 slice 1.2 against 2.8; 8 -> 64 1x1 at 56x56
  // 0.31 against 0.89; JIT, AMD EPYC Zen 4, 2 threads). On NCHW tensors
  // below 64 taps the rows family is as fast or faster (seed 1 24.9 against
  // 36.0 ms; 27-45 taps within 10% either way), and was 2.5x faster at 16
  // and 27 taps while the channels family copied a block out per task.
  // In a compiled model (every extent known) the layout plan keeps a
  // channels-family result channels innermost for the convs that read it,
  // so a short reduction (MobileNet's and
  // EfficientNet's expand convs, 16-40 -> 96-240 channels 1x1) takes the
  // channels family there too: on the rows family its NCHW result made the
  // depthwise conv after it gather its inputs (a MobileNetV2 block 2.46 ->
  // 2.05 ms before the heap pool, benchmarks/results-real-models-2026-12-06-late.md).
  // So does every other conv with a vector of output channels there: the
  // stems of 3 input channels (3x3 stride 2 into 32, 27 taps), whose NCHW
  // result on the rows family made the depthwise conv after them gather
  // channel vectors across planes, and the squeeze-excite 1x1 convs of few
  // input channels. Batch 1, same-run A/B (AMD EPYC): mnasnet1_0 5.43 -> 4.79 ms, mobilenet_v2 8.74 -> 5.78,
  // efficientnet_b0 9.71 -> 8.64 (benchmarks/results-real-models-2026-12-08.md).
  const bool compiled_channels = p.extents_known;
  const int64_t min_taps = channels_last || compiled_channels ? 1 : 64;
  if (p.cout_g >= vec && taps >= min_taps) {
    c.schedule = default_conv_schedule(t, ConvFamily::Channels);
    c.reason = "channels: Cout_g " + std::to_string(p.cout_g) + " >= " + std::to_string(vec) + " lanes and " +
               (channels_last       ? std::string("channels-last tensors")
                : compiled_channels ? std::to_string(taps) + " taps in a compiled model"
                                    : std::to_string(taps) + " taps >= " + std::to_string(min_taps));
    return c;
  }
  // Few channels per group but a vector's worth across groups (depthwise,
  // ResNeXt's 4 per group): vectors of (channel, group) lanes, where the
  // caller has that family. ResNeXt's grouped 3x3 (8 images, 32 x 4
  // channels, 14x14) 0.77 -> 0.19-0.24 ms, a 128-channel depthwise 3x3 at
  // 28x28 0.82 -> 0.41 ms (model-layouts). The AOT kernels (any shape)
  // gain only where the rows family would copy channels-last tensors: on
  // NCHW tensors they transpose each task's input and scatter its output,
  // and measured 1.8-2x slower than the rows family (ResNeXt g=32 and a
  // 256-channel depthwise 3x3, 8 images at 56x56, batchconv-bench).
  if (p.lanes_allowed && (p.extents_known || channels_last) && p.op != ConvOp::BroadcastInput &&
      p.cout_g < vec && p.groups * p.cout_g >= vec) {
    c.schedule = default_conv_schedule(t, ConvFamily::Lanes);
    c.reason = "lanes: Cout_g " + std::to_string(p.cout_g) + " < " + std::to_string(vec) + " lanes, " +
               std::to_string(p.groups) + " groups x " + std::to_string(p.cout_g) + " = " +
               std::to_string(p.groups * p.cout_g) + " channels >= " + std::to_string(vec);
    return c;
  }
  c.schedule = default_conv_schedule(t, ConvFamily::Rows);
  if (p.cout_g < vec) {
    c.reason = "rows: Cout_g " + std::to_string(p.cout_g) + " < " + std::to_string(vec) + " lanes";
  } else {
    c.reason = "rows: " + std::to_string(taps) + " taps < " + std::to_string(min_taps) +
               " (short reduction)";
  }
  return c;
}

int fitted_row_columns(const ConvProblem& p, const ConvSchedule& s, const TargetFacts& t) {
  const int64_t vec = t.vector_floats;
  if (s.family != ConvFamily::Channels || s.ch_fit_rows != 1 || vec <= 1) return 0;
  if (p.cout_g < 2 * vec || p.cin_g * p.kernel_w * p.kernel_h < 128) return 0;
  // The point's own tile divides the row: it runs there.
  if (p.cout_g >= vec * s.ch_vectors && p.out_w % s.ch_columns == 0) return 0;
  // Each task a whole row (the task's columns as schedule_conv_cpu_channels
  // computes them).
  const int64_t cols = s.ch_columns;
  const int64_t min_cols = (std::max<int64_t>(vec, cols) + cols - 1) / cols * cols;
  const int64_t budget_cols = int64_t{s.task_input_kb} * 256 /
                              std::max<int64_t>(1, p.cin_g * (s.ch_task_rows * p.stride_y + p.kernel_h - 1)) /
                              std::max(1, p.stride_x);
  if (std::min(p.out_w, std::max(min_cols, budget_cols / cols * cols)) != p.out_w) return 0;
  for (int columns : {14, 11, 7}) {
    if (t.registers < 2 * columns + 3) continue;
    if (columns > 7 && p.stride_x != 1) continue;
    if (p.out_w % columns == 0) return columns;
  }
  return 0;
}

TaskChannels choose_task_channels(const ConvProblem& p, const ConvSchedule& s, const TargetFacts& t) {
  TaskChannels r;
  if (s.family != ConvFamily::Channels || p.threads <= 1 || t.vector_floats <= 1) return r;
  const int64_t rows = std::max(1, s.ch_task_rows);
  const int64_t tasks = (p.out_h + rows - 1) / rows * p.groups * p.n * p.batch;
  const int64_t want = 4 * int64_t{p.threads};
  if (tasks >= want) return r;
  const int64_t tile = int64_t{t.vector_floats} * std::max(s.ch_vectors, 2);
  const int64_t tiles = p.cout_g / tile;  // whole tiles of a group
  if (tiles < 2) return r;
  const int64_t split = std::min(tiles, (want + tasks - 1) / tasks);
  const int64_t chunk = (tiles + split - 1) / split * tile;
  if (chunk >= p.cout_g) return r;
  r.channels = static_cast<int>(chunk);
  const int64_t chunks = (p.cout_g + chunk - 1) / chunk;
  r.reason = std::to_string(tasks) + " row tasks for " + std::to_string(p.threads) + " threads: " +
             std::to_string(chunks) + " chunks of " + std::to_string(chunk) + " channels (" +
             std::to_string(tasks * chunks) + " tasks)";
  return r;
}

ReductionBlocks choose_reduction_blocks(const ConvProblem& p, const ConvSchedule& s, const TargetFacts& t) {
  ReductionBlocks r;
  const int64_t vec = t.vector_floats;
  if (s.family != ConvFamily::Channels || vec <= 1 || !p.extents_known || p.cin_g < 2 * vec) return r;
  const int64_t columns = fitted_row_columns(p, s, t);
  const int64_t tile = vec * (columns > 0 ? 2 : s.ch_vectors);
  const int64_t weights = p.cin_g * p.kernel_w * p.kernel_h * tile * 4;
  const int64_t rows = std::min<int64_t>(p.out_h, std::max(1, s.ch_task_rows));
  const int64_t accumulators = rows * p.out_w * tile * 4;
  if (weights * 4 <= int64_t{t.l2_kb} * 1024 || accumulators * 2 > int64_t{t.l1_kb} * 1024) return r;
  r.channels = static_cast<int>(vec);
  r.reason = "reduction blocks of " + std::to_string(vec) + " input channels: a tile's weights " +
             std::to_string(weights / 1024) + " KB > L2 " + std::to_string(t.l2_kb) + " KB / 4, its task's " +
             std::to_string(rows) + " x " + std::to_string(p.out_w) + " accumulators " +
             std::to_string(accumulators / 1024) + " KB <= L1 " + std::to_string(t.l1_kb) + " KB / 2";
  return r;
}

DepthwiseTiles choose_depthwise_tiles(const ConvProblem& p, const TargetFacts& t) {
  DepthwiseTiles d;
  const int64_t vec = t.vector_floats;
  if (t.gpu || vec <= 1 || !p.extents_known || p.cin_g != 1 || p.cout_g != 1 || p.groups < vec ||
      p.op == ConvOp::BroadcastInput)
    return d;
  // Up to 4 columns, the widest divisor of the row; a row that only 1 or 2
  // divide takes its smallest divisor from 5 to 8 (7 of a 7 or 14 wide map).
  // 8 columns against 4 doubled MobileNetV2's compile time (every tile is
  // unrolled in each of loop partitioning's border cases) at the same speed
  // (benchmarks/results-real-models-2026-12-06-late.md).
  d.columns = 1;
  for (int c = static_cast<int>(std::min<int64_t>(4, p.out_w)); c > 1 && d.columns == 1; --c)
    if (p.out_w % c == 0) d.columns = c;
  for (int c = 5; c <= 8 && d.columns < 3; ++c) {
    if (p.out_w % c == 0) {
      d.columns = c;
      break;
    }
  }
  const int64_t vectors = (p.groups + vec - 1) / vec;
  const int64_t images = std::max<int64_t>(1, p.n * p.batch);
  const int64_t want = 4 * int64_t{std::max(1, p.threads)};
  // Rows per task: up to 8, fewer where the images' rows would give the
  // threads too few tasks.
  const int64_t rows = std::clamp<int64_t>(images * p.out_h / want, 1, 8);
  const int64_t row_tasks = images * ((p.out_h + rows - 1) / rows);
  int64_t split = 1;
  if (row_tasks < want) split = std::min(vectors, (want + row_tasks - 1) / row_tasks);
  d.task_rows = static_cast<int>(rows);
  d.task_vectors = static_cast<int>((vectors + split - 1) / split);
  const int64_t tasks = row_tasks * ((vectors + d.task_vectors - 1) / d.task_vectors);
  d.reason = "depthwise: " + std::to_string(vec) + " channels x " + std::to_string(d.columns) +
             " columns per tile, tasks of " + std::to_string(rows) + " rows x " + std::to_string(d.task_vectors) +
             " vectors (" + std::to_string(tasks) + " tasks for " + std::to_string(std::max(1, p.threads)) +
             " threads)";
  return d;
}

std::vector<int> lanes_specialized_cout_g(const TargetFacts& t) {
  std::vector<int> v;
  for (int c = 1; c < t.vector_floats; c *= 2) v.push_back(c);
  return v;
}

bool lanes_kernel_fits(int64_t cout_g, const TargetFacts& t) {
  for (int c : lanes_specialized_cout_g(t))
    if (c == cout_g) return true;
  return false;
}

const char* conv_op_name(ConvOp op) {
  switch (op) {
    case ConvOp::Grouped: return "grouped_conv";
    case ConvOp::BatchedWeight: return "batched_weight_conv";
    case ConvOp::BroadcastInput: return "broadcast_input_conv";
  }
  return "?";
}

std::string tuning_shape_key(const ConvProblem& p) {
  auto pair = [](int64_t h, int64_t w) { return std::to_string(h) + "x" + std::to_string(w); };
  std::string k = "b=" + std::to_string(p.batch) + " n=" + std::to_string(p.n) +
                  " groups=" + std::to_string(p.groups) + " cin_g=" + std::to_string(p.cin_g) +
                  " cout_g=" + std::to_string(p.cout_g) + " in=" + pair(p.in_h, p.in_w) +
                  " kernel=" + pair(p.kernel_h, p.kernel_w) + " out=" + pair(p.out_h, p.out_w) +
                  " stride=" + pair(p.stride_y, p.stride_x) +
                  " dilation=" + pair(p.dilation_y, p.dilation_x) + " pad=" + pair(p.pad_y, p.pad_x) +
                  " x=" + (p.x_channels_last ? "nhwc" : "nchw") +
                  " y=" + (p.y_channels_last ? "nhwc" : "nchw");
  if (p.op == ConvOp::BroadcastInput) k += p.y_banks_outer ? " y_banks=outer" : " y_banks=concat";
  return k;
}

ConvProblem parse_tuning_shape_key(const std::string& key, ConvProblem p) {
  std::string text = key;
  for (char& c : text) {
    if (c == ',') c = ' ';
    else if (c == ':') c = '=';
  }
  std::istringstream in(text);
  std::string item;
  auto number = [&](const std::string& v) -> int64_t {
    size_t used = 0;
    long long n = -1;
    try {
      n = std::stoll(v, &used);
    } catch (const std::logic_error&) {
      used = 0;
    }
    if (used == 0 || used != v.size() || n < 0 || n > (int64_t{1} << 40))
      throw std::invalid_argument("shape key: '" + item + "' is not a size or HxW");
    return n;
  };
  while (in >> item) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("shape key: '" + item + "' is not name=value");
    const std::string n = item.substr(0, eq), v = item.substr(eq + 1);
    if (n == "x" || n == "y") {
      (n == "x" ? p.x_channels_last : p.y_channels_last) = v == "nhwc";
    } else if (n == "y_banks") {
      p.y_banks_outer = v == "outer";
    } else if (n == "in" || n == "kernel" || n == "out" || n == "stride" || n == "dilation" || n == "pad") {
      const size_t x = v.find('x');
      if (x == std::string::npos) throw std::invalid_argument("shape key: '" + item + "' is not HxW");
      const int64_t h = number(v.substr(0, x)), w = number(v.substr(x + 1));
      if (n == "in") p.in_h = h, p.in_w = w;
      else if (n == "kernel") p.kernel_h = h, p.kernel_w = w;
      else if (n == "out") p.out_h = h, p.out_w = w;
      else if (n == "stride") p.stride_y = int(h), p.stride_x = int(w);
      else if (n == "dilation") p.dilation_y = int(h), p.dilation_x = int(w);
      else p.pad_y = int(h), p.pad_x = int(w);
    } else if (n == "b") p.batch = number(v);
    else if (n == "n") p.n = number(v);
    else if (n == "groups") p.groups = number(v);
    else if (n == "cin_g") p.cin_g = number(v);
    else if (n == "cout_g") p.cout_g = number(v);
  }
  return p;
}

TargetFacts facts_of_variant(const std::string& name) {
  TargetFacts f;
  const bool avx512 = name.find("avx512") != std::string::npos;
  const bool avx2 = name.find("avx2") != std::string::npos;
  f.vector_floats = avx512 ? 16 : avx2 ? 8 : 4;
  f.registers = avx512 ? 32 : 16;
  long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  f.l1_kb = l1 > 0 ? static_cast<int>(l1 / 1024) : 32;
  f.l2_kb = l2 > 0 ? static_cast<int>(l2 / 1024) : 1024;
  f.name = name;
  return f;
}

}  // namespace batchconv_gen
