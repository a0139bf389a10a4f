#include "workloads.h"

namespace bcbench {
namespace {

using batchconv::BroadcastLayout;
using batchconv::ConvDesc;

ProblemSpec conv(Op op, std::vector<int64_t> x, std::vector<int64_t> w, int pad, int groups = 1) {
  ProblemSpec s;
  s.op = op;
  s.x_shape = std::move(x);
  s.w_shape = std::move(w);
  s.desc = ConvDesc::with_padding(pad);
  s.desc.groups = groups;
  return s;
}

// Light shapes: more repetitions; heavy ones (a run of ~0.1-1 s): 3 timed runs.
TimingPolicy light() { return TimingPolicy{1, 5, 30, 0.4}; }
TimingPolicy heavy() { return TimingPolicy{1, 3, 3, 0}; }
TimingPolicy smoke() { return TimingPolicy{1, 2, 2, 0}; }

}  // namespace

std::vector<Workload> seed_workloads(bool quick) {
  std::vector<Workload> w;
  auto add = [&](std::string id, std::string title, ProblemSpec s, TimingPolicy t) {
    s.label = id;
    w.push_back({std::move(id), std::move(title), std::move(s), quick ? smoke() : t});
  };
  // W1, seed 1: x (16, N) through 4 linear layers 16->16, i.e. conv1d 1x1 of
  // the shared x with 4 filter banks; y (1, 64, N) is what repeat + grouped gives.
  const int64_t n1 = quick ? 20000 : 1000000;
  {
    ProblemSpec s = conv(Op::BroadcastInputConv, {1, 16, n1}, {4, 16, 16, 1}, 0);
    s.layout = BroadcastLayout::Concatenated;
    add("W1", "seed 1: x (16, " + std::to_string(n1) + ") into 4 layers 16->16 (conv1d 1x1)", s, light());
  }
  // W2, seed 2: N=128 images split into G groups, each with its own 64 7x7 filters.
  const int64_t n2 = quick ? 16 : 128;
  for (int64_t g : {1, 2, 16, 64, 128}) {
    if (g > n2) continue;
    add("W2 G=" + std::to_string(g), "seed 2: N=" + std::to_string(n2) + ", 3->64, 28x28, 7x7, G=" + std::to_string(g),
        conv(Op::BatchedWeightConv, {g, n2 / g, 3, 28, 28}, {g, 64, 3, 7, 7}, 0), light());
  }
  // W3, seed 3: per-task weights.
  if (quick) {
    add("W3 seed3", "seed 3 (small): x (4, 5, 3, 32, 32), w (4, 64, 3, 3, 3)",
        conv(Op::BatchedWeightConv, {4, 5, 3, 32, 32}, {4, 64, 3, 3, 3}, 0), light());
    add("W3 MAML", "MAML-like (small): B=2, N=4, 64->64, 42x42, 3x3 pad 1",
        conv(Op::BatchedWeightConv, {2, 4, 64, 42, 42}, {2, 64, 64, 3, 3}, 1), light());
    add("W3 B=1", "B=1 (small): N=4, 64->64, 56x56, 3x3 pad 1",
        conv(Op::BatchedWeightConv, {1, 4, 64, 56, 56}, {1, 64, 64, 3, 3}, 1), light());
  } else {
    add("W3 seed3", "seed 3: x (100, 50, 3, 32, 32), w (100, 64, 3, 3, 3)",
        conv(Op::BatchedWeightConv, {100, 50, 3, 32, 32}, {100, 64, 3, 3, 3}, 0), heavy());
    add("W3 MAML", "MAML-like: B=32, N=80, 64->64, 42x42, 3x3 pad 1",
        conv(Op::BatchedWeightConv, {32, 80, 64, 42, 42}, {32, 64, 64, 3, 3}, 1), heavy());
    add("W3 B=1", "B=1: N=128, 64->64, 56x56, 3x3 pad 1 (vs oneDNN plain conv)",
        conv(Op::BatchedWeightConv, {1, 128, 64, 56, 56}, {1, 64, 64, 3, 3}, 1), heavy());
  }
  // W4: grouped and depthwise convs (grouped_conv).
  const int64_t n4 = quick ? 1 : 8;
  add("W4 ResNeXt", "ResNeXt: N=" + std::to_string(n4) + ", 128->128, groups=32, 56x56, 3x3 pad 1",
      conv(Op::GroupedConv, {n4, 128, 56, 56}, {128, 4, 3, 3}, 1, 32), light());
  add("W4 depthwise", "depthwise: N=" + std::to_string(n4) + ", C=256, 56x56, 3x3 pad 1",
      conv(Op::GroupedConv, {n4, 256, 56, 56}, {256, 1, 3, 3}, 1, 256), light());
  return w;
}

}  // namespace bcbench
