// All seed rewrites at once on one model: what surrounds the graph (inputs/outputs and their order,
// opset imports, metadata, producer, doc strings, unconsumed initializers) survives the rewrites and
// a write/read round trip, and the written model passes onnx::checker and shape inference.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "onnx/onnx_io.h"
#include "pass_test_support.h"

namespace batchconv::testing {
namespace {

const char* kAllPatterns = R"(<ir_version: 8, opset_import: ["" : 13]>
all_patterns (float[1,2,3] x, float[4,1,2,2] z) => (float[1,4,3] y_repeat, float[4,2,2,2] y_slices, float[1,3,3] y_parallel)
<float[4,2,1] w = {1,2,3,4,5,6,7,8}, int64[3] reps = {1,2,1},
 float[2,1,1,1] w0 = {1,2}, float[2,1,1,1] w1 = {3,4}, int64[2] halves = {2,2},
 float[1,2,1] pa = {1,2}, float[2,2,1] pb = {3,4,5,6}, float[5] spare = {9,9,9,9,9}>
{
  r = Tile(x, reps)
  y_repeat = Conv<group=2>(r, w)
  z0, z1 = Split<axis=0>(z, halves)
  c0 = Conv(z0, w0)
  c1 = Conv(z1, w1)
  y_slices = Concat<axis=0>(c0, c1)
  a = Conv(x, pa)
  b = Conv(x, pb)
  y_parallel = Concat<axis=1>(a, b)
}
)";

TEST(InterfaceKept, AcrossAllSeedRewritesAndAWriteReadRoundTrip) {
  auto before = parse(kAllPatterns);
  before->metadata_props = {{"author", "batchconv tests"}, {"license", "none"}};
  before->producer_name = "hand";
  before->producer_version = "1";
  before->doc_string = "three patterns";
  before->model_version = 7;
  for (bool own_ops : {false, true}) {
    SCOPED_TRACE(own_ops ? "own ops" : "standard ONNX");
    auto after = clone(*before);
    rewrites::PassOptions o;
    o.emit_batchconv_ops = own_ops;
    auto results = run_pipeline(*after, o);
    int fired = 0;
    for (const auto& r : results) fired += r.fired;
    EXPECT_GE(fired, 3);
    // The folded repeat's conv now reads x with the parallel convs' geometry: all three combine.
    EXPECT_EQ(count_ops(*after, "Tile"), 0);
    EXPECT_EQ(count_ops(*after, "Conv"), own_ops ? 1 : 2);
    EXPECT_EQ(count_ops(*after, "BatchedWeightConv", "batchconv"), own_ops ? 1 : 0);
    expect_sound_rewrite(*before, *after);

    const onnx::ModelProto proto = io::export_model(*after);
    EXPECT_EQ(proto.producer_name(), "hand");
    EXPECT_EQ(proto.producer_version(), "1");
    EXPECT_EQ(proto.doc_string(), "three patterns");
    EXPECT_EQ(proto.model_version(), 7);
    ASSERT_EQ(proto.metadata_props_size(), 2);
    EXPECT_EQ(proto.metadata_props(0).key(), "author");
    EXPECT_EQ(proto.metadata_props(1).value(), "none");
    ASSERT_EQ(proto.graph().input_size(), 2);
    EXPECT_EQ(proto.graph().input(0).name(), "x");
    EXPECT_EQ(proto.graph().input(1).name(), "z");
    ASSERT_EQ(proto.graph().output_size(), 3);
    EXPECT_EQ(proto.graph().output(0).name(), "y_repeat");
    EXPECT_EQ(proto.graph().output(1).name(), "y_slices");
    EXPECT_EQ(proto.graph().output(2).name(), "y_parallel");
    bool spare = false, consumed_left = false;
    for (const auto& t : proto.graph().initializer()) {
      spare |= t.name() == "spare";
      consumed_left |= t.name() == "reps" || t.name() == "w0" || t.name() == "pa";
    }
    EXPECT_TRUE(spare) << "an initializer no node used was dropped";
    EXPECT_FALSE(consumed_left) << "initializers the rewrites consumed were left behind";
    EXPECT_NO_THROW(io::check_model(proto, "<rewritten>"));
    // And it reads back as the same function.
    auto again = io::import_model(proto, "<round trip>");
    expect_same_function(*before, *again);
  }
}

}  // namespace
}  // namespace batchconv::testing
