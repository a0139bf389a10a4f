// The rewrites on odd or malformed (but importable) graphs: never a crash or exception, never a
// change of the function; what they leave alone keeps its nodes. Each case names the oddity.
#include <gtest/gtest.h>

#include "interpreter/interpreter.h"
#include "pass_test_support.h"

namespace batchconv::testing {
namespace {

struct Odd {
  const char* what;
  const char* text;
};

const Odd kOdd[] = {
    {"tile count 1 on channels",
     R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,3] x) => (float[1,2,3] y) <float[2,1,1] w = {1,2}, int64[3] reps = {1,1,1}>
{ r = Tile(x, reps)  y = Conv<group=2>(r, w) })"},
    {"tile repeats shorter than the rank",
     R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,3] x) => (float[1,4,3] y) <float[4,2,1] w = {1,2,3,4,5,6,7,8}, int64[2] reps = {1,2}>
{ r = Tile(x, reps)  y = Conv<group=2>(r, w) })"},
    {"bias of the wrong length",
     R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,3] x) => (float[1,4,3] y) <float[4,1,1] w = {1,2,3,4}, float[3] b = {1,2,3}, int64[3] reps = {1,2,1}>
{ r = Tile(x, reps)  y = Conv<group=4>(r, w, b) })"},
    {"group that does not divide the output channels",
     R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,6,3] x) => (float[1,4,3] y) <float[4,2,1] w = {1,2,3,4,5,6,7,8}, int64[3] reps = {1,2,1}>
{ r = Tile(x, reps)  y = Conv<group=3>(r, w) })"},
    {"concat axis out of range",
     R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,3] x) => (float[1,4,3] y) <float[4,2,1] w = {1,2,3,4,5,6,7,8}>
{ r = Concat<axis=-7>(x, x)  y = Conv<group=2>(r, w) })"},
    {"batch slices with step 2",
     R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4,1,2] x) => (float[4,1,2] y)
<float[1,1,1] w0 = {1}, float[1,1,1] w1 = {2}, int64[1] s0 = {0}, int64[1] e0 = {4}, int64[1] s1 = {1},
 int64[1] ax = {0}, int64[1] st = {2}>
{ x0 = Slice(x, s0, e0, ax, st)  x1 = Slice(x, s1, e0, ax, st)
  y0 = Conv(x0, w0)  y1 = Conv(x1, w1)  y = Concat<axis=0>(y0, y1) })"},
    {"split sizes given at run time",
     R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4,1,2] x, int64[2] sizes) => (float[4,1,2] y) <float[1,1,1] w0 = {1}, float[1,1,1] w1 = {2}>
{ x0, x1 = Split<axis=0>(x, sizes)  y0 = Conv(x0, w0)  y1 = Conv(x1, w1)  y = Concat<axis=0>(y0, y1) })"},
    {"overlapping batch slices",
     R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[3,1,2] x) => (float[4,1,2] y)
<float[1,1,1] w0 = {1}, float[1,1,1] w1 = {2}, int64[1] s0 = {0}, int64[1] e0 = {2}, int64[1] s1 = {1},
 int64[1] e1 = {3}, int64[1] ax = {0}>
{ x0 = Slice(x, s0, e0, ax)  x1 = Slice(x, s1, e1, ax)
  y0 = Conv(x0, w0)  y1 = Conv(x1, w1)  y = Concat<axis=0>(y0, y1) })"},
    {"parallel convs with weights from a graph input",
     R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,3] x, float[2,2,1] wa) => (float[1,2,3] a, float[1,2,3] b) <float[2,2,1] wb = {1,2,3,4}>
{ a = Conv(x, wa)  b = Conv(x, wb) })"},
    {"an op of an unknown domain feeding the conv",
     R"(<ir_version: 8, opset_import: ["" : 13, "custom" : 1]>
g (float[1,2,3] x) => (float[1,4,3] y) <float[4,2,1] w = {1,2,3,4,5,6,7,8}>
{ r = custom.Repeat<times=2>(x)  y = Conv<group=2>(r, w) })"},
    {"zero-size batch slices",
     R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,1,2] x) => (float[2,1,2] y)
<float[1,1,1] w0 = {1}, float[1,1,1] w1 = {2}, int64[1] s0 = {0}, int64[1] e0 = {0}, int64[1] e1 = {2}, int64[1] ax = {0}>
{ x0 = Slice(x, s0, e0, ax)  x1 = Slice(x, s0, e1, ax)
  y0 = Conv(x0, w0)  y1 = Conv(x1, w1)  y = Concat<axis=0>(y0, y1) })"},
};

void PrintTo(const Odd& o, std::ostream* os) { *os << o.what; }

class OddGraph : public ::testing::TestWithParam<Odd> {};

TEST_P(OddGraph, RewritesNeverCrashOrChangeTheFunction) {
  std::unique_ptr<ir::Model> before;
  try {
    before = parse(GetParam().text);
  } catch (const std::exception& e) {
    GTEST_SKIP() << "the importer rejects it (its own tests cover that): " << e.what();
  }
  for (bool own_ops : {false, true}) {
    auto after = clone(*before);
    rewrites::PassOptions o;
    o.emit_batchconv_ops = own_ops;
    std::vector<rewrites::PassResult> results;
    ASSERT_NO_THROW(results = run_pipeline(*after, o));
    int fired = 0;
    for (size_t i = 0; i < results.size(); ++i)
      if (rewrites::default_pipeline()[i].name.find("eliminate") == std::string::npos &&
          rewrites::default_pipeline()[i].name != "fold_constants")
        fired += results[i].fired;
    EXPECT_EQ(fired, 0) << GetParam().what << ": a seed rewrite fired on an odd graph";
    // Same outputs wherever the original runs (the interpreter refuses invalid graphs/inputs).
    for (uint64_t seed : {1, 2, 3}) {
      auto inputs = interp::random_inputs(*before, seed);
      interp::TensorMap want;
      try {
        want = interp::run(*before, inputs);
      } catch (const std::exception&) {
        continue;
      }
      interp::TensorMap got;
      ASSERT_NO_THROW(got = interp::run(*after, inputs));
      for (const auto& [name, w] : want) EXPECT_LE(interp::max_relative_difference(got.at(name), w), 1e-6) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, OddGraph, ::testing::ValuesIn(kOdd), [](const auto& info) {
  std::string n = info.param.what;
  for (char& c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

}  // namespace
}  // namespace batchconv::testing
