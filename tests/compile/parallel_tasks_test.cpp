// Every layer gives every core work at batch 1: the parallel loops of a
// compiled model, counted through Halide's JIT (a do_par_for handler that
// records each loop's task count and runs its tasks in order), for a 7 x 7
// map of many channels, the shape of a ResNet's last stage, where the rows
// of the output are one task. The result is checked against the reference
// interpreter too.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "Halide.h"
#include "compile_test_support.h"
#include "layout_test_support.h"
#include "lower.h"

namespace batchconv::testing {
namespace {

std::vector<int> g_task_counts;

int counting_par_for(Halide::JITUserContext* ctx, int (*f)(Halide::JITUserContext*, int, uint8_t*), int min,
                     int size, uint8_t* closure) {
  g_task_counts.push_back(size);
  for (int i = min; i < min + size; ++i)
    if (int r = f(ctx, i, closure)) return r;
  return 0;
}

// The task counts of every parallel loop the model ran, lowered for `threads`.
// Weights (inputs other than x) are scaled by `scale` where it names them, else by 0.05.
std::vector<int> task_counts(const std::string& text, int threads, const std::map<std::string, float>& scale = {}) {
  std::unique_ptr<ir::Model> m = parse(text);
  compiler::LowerOptions o;
  o.threads = threads;
  compiler::LoweredModel low = compiler::lower_model(*m, "test.onnxtxt", o);
  const uint64_t seed = std::random_device{}();
  interp::TensorMap in = interp::random_inputs(*m, seed);
  for (auto& [name, t] : in) {
    if (name == "x") continue;
    const float a = scale.count(name) ? scale.at(name) : 0.05f;  // fan-in in the hundreds: values near 1
    for (float& v : t.f) v *= a;
  }
  Halide::JITUserContext ctx;
  ctx.handlers.custom_do_par_for = counting_par_for;
  g_task_counts.clear();
  interp::TensorMap got = run_jit(low, *m, in, &ctx);
  interp::TensorMap want = run_reference(*m, in);
  for (const auto& [name, w] : want)
    EXPECT_LE(interp::max_relative_difference(got.at(name), w), 1e-4) << name << " seed " << seed;
  return g_task_counts;
}

const char* kHeader = layout_support::kHeader;

// A 3x3 conv of 256 -> 256 channels on a 7 x 7 map at batch 1: its rows are
// one task, so the chooser splits its output channels into chunks: at least
// 4 tasks per thread (8 on 2 threads, 16 on 4) where the channels allow.
TEST(ParallelTasks, SmallMapConvSplitsChannels) {
  const std::string text = std::string(kHeader) + R"(
g (float[1, 256, 7, 7] x, float[256, 256, 3, 3] w, float[256] b) => (float[1, 256, 7, 7] y) {
  c = Conv<pads = [1, 1, 1, 1]>(x, w, b)
  y = Relu(c)
})";
  for (int threads : {2, 4}) {
    const std::vector<int> counts = task_counts(text, threads);
    ASSERT_FALSE(counts.empty());
    EXPECT_GE(*std::max_element(counts.begin(), counts.end()), std::min(4 * threads, 256 / 32))
        << threads << " threads";
  }
}

// Chunks narrower than the target's default tile: a blocked conv (tiles of
// two channel vectors) of stride 2, whose rows neither its own tile nor a
// fitted one divides, runs the default tile (four vectors) on a group's
// channels, but a chunk of 32 is narrower: the tiles are chosen by the
// chunk's width (a wider one would shift below the chunk's first channel).
TEST(ParallelTasks, ChunksNarrowerThanTheDefaultTile) {
  const std::string text = std::string(kHeader) + R"(
g (float[1, 64, 56, 56] x, float[128, 64, 3, 3] w) => (float[1, 128, 28, 28] y) {
  y = Conv<pads = [1, 1, 1, 1], strides = [2, 2]>(x, w)
})";
  const std::vector<int> counts = task_counts(text, 2);
  ASSERT_FALSE(counts.empty());
  EXPECT_GE(*std::max_element(counts.begin(), counts.end()), 8);
}

// A group whose channels the chunks do not divide (480 in chunks of 128:
// the last chunk shifts inwards), stored channels innermost for the
// depthwise conv that reads it (EfficientNet's expand conv and SiLU).
TEST(ParallelTasks, ChunksThatDoNotDivideTheChannels) {
  for (bool baked : {true, false}) {
    layout_support::Weights w{baked};
    w.add("w", {480, 80, 1, 1});
    w.add("d", {480, 1, 3, 3});
    const std::string text = std::string(kHeader) +
                             w.signature("float[1, 80, 14, 14] x", "float[1, 480, 14, 14] y") + R"(
  c = Conv(x, w)
  s = Sigmoid(c)
  m = Mul(c, s)
  y = Conv<group = 480, pads = [1, 1, 1, 1]>(m, d)
})";
    const std::vector<int> counts = task_counts(text, 2, w.scale);
    ASSERT_FALSE(counts.empty());
    EXPECT_GE(*std::max_element(counts.begin(), counts.end()), 8) << (baked ? "baked" : "runtime") << " weights";
  }
}

// A depthwise 3x3 conv of 960 channels on a 7 x 7 map at batch 1 (the
// shape of MobileNetV2's last blocks) takes the lanes family's depthwise
// form, whose tasks split the channel vectors where the rows are too few:
// at least 4 tasks per thread.
TEST(ParallelTasks, SmallMapDepthwiseSplitsChannels) {
  for (bool channels_last_input : {false, true}) {
    const std::string text = std::string(kHeader) + R"(
g (float[1, 160, 7, 7] x, float[960, 160, 1, 1] e, float[960, 1, 3, 3] w, float[960] b) => (float[1, 960, 7, 7] y) {
  c = Conv(x, e)
  i = )" + (channels_last_input ? "Relu(c)" : "Identity(c)") + R"(
  y = Conv<group = 960, pads = [1, 1, 1, 1]>(i, w, b)
})";
    for (int threads : {2, 4}) {
      const std::vector<int> counts = task_counts(text, threads, {{"e", 0.08f}, {"w", 0.3f}});
      ASSERT_FALSE(counts.empty());
      EXPECT_GE(*std::max_element(counts.begin(), counts.end()), 4 * threads) << threads << " threads";
    }
  }
}

// The same conv with one thread keeps one task per row block: nothing to split.
TEST(ParallelTasks, OneThreadKeepsRowTasks) {
  const std::string text = std::string(kHeader) + R"(
g (float[1, 128, 7, 7] x, float[128, 128, 3, 3] w) => (float[1, 128, 7, 7] y) {
  y = Conv<pads = [1, 1, 1, 1]>(x, w)
})";
  const std::vector<int> counts = task_counts(text, 1);
  for (int c : counts) EXPECT_LE(c, 4);
}

// The pools of a 7 x 7 map at batch 1: a max pool stored channels innermost
// between two convs runs its rows as tasks (7); the spatial mean at the end
// (torchvision's x.mean([2, 3]) and GlobalAveragePool) runs blocks of
// channels as tasks.
TEST(ParallelTasks, SmallMapPoolsRunSeveralTasks) {
  const std::string text = std::string(kHeader) + R"(
g (float[1, 256, 9, 9] x, float[256, 256, 3, 3] w1, float[256, 256, 1, 1] w2) => (float[1, 256] y, float[1, 256, 1, 1] z) {
  c1 = Conv(x, w1)
  p = MaxPool<kernel_shape = [3, 3], pads = [1, 1, 1, 1]>(c1)
  c2 = Conv(p, w2)
  r = Relu(c2)
  y = ReduceMean<axes = [2, 3], keepdims = 0>(r)
  z = GlobalAveragePool(c2)
})";
  const std::vector<int> counts = task_counts(text, 2);
  // Convs: 8 chunks each; the pool: 7 rows; the means: 8 channel blocks each.
  EXPECT_GE(std::count_if(counts.begin(), counts.end(), [](int c) { return c >= 7; }), 5);
}

}  // namespace
}  // namespace batchconv::testing
