// The geometry of the benchmark workloads (W1-W4), scaled down in
// batch or spatial size only, so the code paths tuned for them (channel
// counts, kernel sizes, groups, layouts) are checked against the reference.
#include <gtest/gtest.h>

#include "conv_check.h"

namespace batchconv::test {
namespace {

struct Workload {
  ConvOp op;
  ConvCase c;
};

void PrintTo(const Workload& w, std::ostream* os) { *os << w.c.describe(); }

Workload make(const std::string& name, ConvOp op, int dims, int64_t B, int64_t N, int groups,
              int64_t cin_g, int64_t cout_g, int64_t H, int64_t W, int64_t K, int pad, bool bias) {
  ConvCase c;
  c.name = name;
  c.dims = dims, c.B = B, c.N = N, c.cin_g = cin_g, c.cout_g = cout_g;
  c.H = dims == 2 ? H : 1, c.W = W, c.KH = dims == 2 ? K : 1, c.KW = K;
  c.d.groups = groups;
  c.d.pad_begin = c.d.pad_end = dims == 2 ? std::array<int, 2>{pad, pad} : std::array<int, 2>{pad, 0};
  c.bias = bias;
  return {op, c};
}

std::vector<Workload> workloads() {
  std::vector<Workload> v;
  // W1, seed 1: x (16, N) shared by 4 linear layers 16->16 (N = 1e6 -> 20000).
  Workload w1 = make("W1_broadcast_concat", ConvOp::BroadcastInput, 1, 4, 1, 1, 16, 16, 1, 20000, 1, 0, true);
  v.push_back(w1);
  w1.c.name = "W1_broadcast_batched", w1.c.layout = BroadcastLayout::Batched;
  v.push_back(w1);
  v.push_back(make("W1_dense", ConvOp::Grouped, 1, 1, 1, 1, 16, 64, 1, 20000, 1, 0, true));
  // W2, seed 2: C=3, 28x28, 64 filters 7x7, G groups of the batch (N = 128 -> 2 per group).
  for (int G : {1, 2, 16}) {
    Workload w = make("W2_G" + std::to_string(G), ConvOp::BatchedWeight, 2, G, 2, 1, 3, 64, 28, 28, 7, 0, false);
    w.c.permuted = G == 2;  // also as the (n, G) -> (G, n) view
    v.push_back(w);
  }
  // W3, seed 3: x (100, 50, 3, 32, 32), w (100, 64, 3, 3, 3) -> B = 6, N = 5.
  v.push_back(make("W3_seed3", ConvOp::BatchedWeight, 2, 6, 5, 1, 3, 64, 32, 32, 3, 0, true));
  // MAML-like layer B=32, N=80, 64->64, 42x42, 3x3 pad 1 -> B = 3, N = 2, 20x20.
  v.push_back(make("W3_maml", ConvOp::BatchedWeight, 2, 3, 2, 1, 64, 64, 20, 20, 3, 1, true));
  // B = 1, N=128, 64->64, 56x56 -> N = 2, 24x24.
  v.push_back(make("W3_B1", ConvOp::BatchedWeight, 2, 1, 2, 1, 64, 64, 24, 24, 3, 1, true));
  // W4: ResNeXt grouped conv 128->128, groups=32 at 56x56 -> 28x28; depthwise C=256 at 28x28.
  v.push_back(make("W4_resnext", ConvOp::Grouped, 2, 1, 2, 32, 4, 4, 28, 28, 3, 1, true));
  v.push_back(make("W4_depthwise", ConvOp::Grouped, 2, 1, 2, 256, 1, 1, 28, 28, 3, 1, true));
  return v;
}

class WorkloadShapes : public ::testing::TestWithParam<Workload> {};

TEST_P(WorkloadShapes, MatchReference) { check_conv_case(GetParam().op, GetParam().c); }

INSTANTIATE_TEST_SUITE_P(SeedWorkloads, WorkloadShapes, ::testing::ValuesIn(workloads()),
                         [](const ::testing::TestParamInfo<Workload>& i) { return i.param.c.name; });

}  // namespace
}  // namespace batchconv::test
