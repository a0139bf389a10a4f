// Small hostile models (several found by fuzzing the importer): each is
// refused with an error naming the node, or handled, and none crashes,
// overflows or spins. Run under the fuzz build's ASan + UBSan as well
// (fuzz/regressions).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/resource.h>

#include <limits>
#include <string>

#include "interpreter/interpreter.h"
#include "onnx/onnx_io.h"
#include "pass.h"

namespace io = batchconv::io;
namespace interp = batchconv::interp;
using namespace batchconv;

namespace {

std::string import_error(const onnx::ModelProto& p) {
  try {
    io::import_model(p, "m.onnx");
  } catch (const io::Error& e) {
    return e.what();
  }
  return "";
}

std::string import_error(const std::string& text) {
  return import_error(io::parse_text(text, "m.onnx"));
}

void run_pipeline(ir::Model& m, bool emit_batchconv_ops) {
  rewrites::PassOptions o;
  o.emit_batchconv_ops = emit_batchconv_ops;
  for (const auto& pass : rewrites::default_pipeline()) pass.run(m, o);
}

// x of rank 3 reaches a Conv with a 4-D W only through a Relu: the file does
// not state the rank, ONNX's Conv inference used to read past its vectors.
TEST(BadModels, ConvRankKnownOnlyAfterInference) {
  const std::string e = import_error(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,8] x) => (float[1,4,6] y) <float[4,3,3,3] w = {0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0}>
{
  r = Relu(x)
  y = Conv (r, w)
})");
  EXPECT_NE(e.find("m.onnx: node 'Conv#1' (Conv)"), std::string::npos) << e;
  EXPECT_NE(e.find("rank 3"), std::string::npos) << e;
}

// Nodes with no inputs or no outputs (the passes index inputs[0]/outputs[0]).
TEST(BadModels, NodeArityIsCheckedAgainstTheSchema) {
  onnx::ModelProto p = io::parse_text(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4,8] x) => (float[1,4,8] y) { c = Concat <axis = 1> (x, x)
 s1, s2 = Split <axis = 1> (c)
 y = Add(s1, s2) })", "m.onnx");
  onnx::ModelProto no_inputs = p;
  no_inputs.mutable_graph()->mutable_node(0)->clear_input();
  std::string e = import_error(no_inputs);
  EXPECT_NE(e.find("node 'Concat#0' (Concat): has 0 inputs, expected at least 1"), std::string::npos) << e;

  onnx::ModelProto no_outputs = p;
  no_outputs.mutable_graph()->mutable_node(1)->clear_output();
  no_outputs.mutable_graph()->mutable_node(2)->set_input(0, "x");
  no_outputs.mutable_graph()->mutable_node(2)->set_input(1, "x");
  e = import_error(no_outputs);
  EXPECT_NE(e.find("node 'Split#1' (Split) has no outputs"), std::string::npos) << e;

  onnx::ModelProto empty_required = p;
  empty_required.mutable_graph()->mutable_node(2)->set_input(0, "");
  e = import_error(empty_required);
  EXPECT_NE(e.find("node 'Add#2' (Add): input 0 ('A') is required but empty"), std::string::npos) << e;

  onnx::ModelProto conv = io::parse_text(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4,8] x, float[4,4,3] w) => (float[1,4,6] y) { y = Conv(x, w) })", "m.onnx");
  conv.mutable_graph()->mutable_node(0)->clear_input();
  e = import_error(conv);
  EXPECT_NE(e.find("(Conv): has 0 inputs, expected 2 to 3"), std::string::npos) << e;
}

// Conv geometry that overflowed 64-bit arithmetic (pads of 2^62).
TEST(BadModels, HugeConvAttributesAreRefused) {
  std::string e = import_error(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,8] x, float[1,1,3] w) => (float[1,1,6] y) { y = Conv <pads = [4611686018427387904, 4611686018427387904]> (x, w) })");
  EXPECT_NE(e.find("(Conv): pads entry 4611686018427387904 is larger than 2147483647"), std::string::npos) << e;
  e = import_error(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,8] x, float[1,1,3] w) => (float[1,1,6] y) { y = Conv <dilations = [4611686018427387904]> (x, w) })");
  EXPECT_NE(e.find("dilations entry 4611686018427387904 is larger"), std::string::npos) << e;
}

TEST(BadModels, ElementCountsSaturateInsteadOfWrapping) {
  ir::Tensor t;
  t.shape = {int64_t(1) << 31, int64_t(1) << 31, int64_t(1) << 31};
  EXPECT_EQ(t.numel(), std::numeric_limits<int64_t>::max());
  t.shape = {4, -1};
  EXPECT_EQ(t.numel(), -1);
  // A shape whose element count wraps to a small number must still hit the interpreter's limit.
  auto m = io::parse_model(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1] x) => (float[2147483647,2147483647,4] y) <int64[3] s = {2147483647, 2147483647, 4}> { y = Expand(x, s) })");
  interp::TensorMap in;
  in["x"].shape = {1};
  in["x"].f = {1.0f};
  try {
    interp::run(*m, in);
    ADD_FAILURE() << "no error";
  } catch (const interp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("too large"), std::string::npos) << e.what();
  }
}

// --verify's random inputs: limits are checked before anything is allocated.
TEST(BadModels, RandomInputsCheckTheLimitFirst) {
  auto m = io::parse_model(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[20000,20000] x) => (float[20000,20000] y) { y = Relu(x) })");
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  try {
    interp::random_inputs(*m, 1);
    ADD_FAILURE() << "no error";
  } catch (const interp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("graph input 'x' of shape [20000,20000]"), std::string::npos) << e.what();
  }
  getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 256 * 1024) << "KiB of resident memory taken";
}

// Integer arithmetic in constant folding wraps (two's complement) instead of
// overflowing (undefined behaviour, reported by UBSan).
TEST(BadModels, IntegerFoldingWraps) {
  auto m = io::parse_model(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y)
<int64[2] a = {4611686018427387904, -9223372036854775807}, int64[2] b = {4, -1}, int64[2] c = {-1, 9223372036854775807}>
{
  p = Mul(a, b)
  q = Add(p, c)
  r = Sub(q, c)
  d = Div(a, b)
  s = Shape(x)
  t = Concat <axis = 0> (p, q, r, d, s)
  y = Identity(x)
})");
  run_pipeline(*m, false);  // folds what it can; must not overflow
  interp::TensorMap in;
  in["x"].shape = {2};
  in["x"].f = {1, 2};
  EXPECT_NO_THROW(interp::run(*m, in));
  ir::Tensor a, b;
  a.dtype = b.dtype = ir::DType::Int64;
  a.shape = b.shape = {1};
  a.i = {std::numeric_limits<int64_t>::min()};
  b.i = {-1};
  ir::Node n;
  n.op_type = "Div";
  auto out = interp::run_node(n, {&a, &b}, 13);
  EXPECT_EQ(out[0].i[0], std::numeric_limits<int64_t>::min());
}

// Split with num_outputs far beyond its outputs used to loop for that many parts.
TEST(BadModels, SplitWithHugeNumOutputsIsRefusedAtOnce) {
  auto m = io::parse_model(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) <float[4] c = {1, 2, 3, 4}>
{
  s1, s2 = Split <axis = 0> (c)
  t = Concat <axis = 0> (s1, s2)
  y = Identity(x)
})");
  ir::Node* split = nullptr;
  for (const auto& n : m->graph.nodes())
    if (n->op_type == "Split") split = n.get();
  ASSERT_TRUE(split);
  // Opset 18's attribute, which the importer refuses at opset 13 (ONNX 1.12
  // knows no opset 18): set on the IR, as a pass or a later opset would.
  ir::Attribute num_outputs;
  num_outputs.kind = ir::Attribute::Kind::Int;
  num_outputs.i = 1099511627776;
  split->attrs["num_outputs"] = num_outputs;
  try {
    interp::run_node(*split, {m->graph.find_value("c")->constant.get()}, 13);
    ADD_FAILURE() << "no error";
  } catch (const interp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("num_outputs = 1099511627776 but the node has 2 outputs"), std::string::npos)
        << e.what();
  }
  run_pipeline(*m, true);
}

// Batch slices whose Split sizes overflow when added up.
TEST(BadModels, SplitSizesThatOverflowDoNotMatchBatchSlices) {
  auto m = io::parse_model(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[4,2,5] x) => (float[4,2,3] y)
<int64[2] sz = {9223372036854775807, 9223372036854775807}, float[2,2,3] w1 = {1,2,3,4,5,6,7,8,9,10,11,12}, float[2,2,3] w2 = {1,2,3,4,5,6,7,8,9,10,11,12}>
{
  a, b = Split <axis = 0> (x, sz)
  ya = Conv(a, w1)
  yb = Conv(b, w2)
  y = Concat <axis = 0> (ya, yb)
})");
  run_pipeline(*m, false);
  run_pipeline(*m, true);
  bool has_split = false;
  for (const auto& n : m->graph.nodes()) has_split |= n->op_type == "Split";
  EXPECT_TRUE(has_split) << "the slices must be left alone";
}

}  // namespace
