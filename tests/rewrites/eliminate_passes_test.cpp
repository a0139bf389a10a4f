// eliminate_identity, eliminate_nop_expand, eliminate_nop_reshape,
// eliminate_dead_nodes: numerically equal results, and one DoesNotRewrite
// case per precondition.
#include "pass_test_util.h"

using namespace batchconv;
using namespace batchconv::testing;
using Ops = std::vector<std::string>;

namespace {

std::string model(const std::string& sig, const std::string& inits, const std::string& body) {
  return "<ir_version: 8, opset_import: [\"\" : 14]>\ng " + sig + "\n" + (inits.empty() ? "" : "<" + inits + ">\n") +
         "{\n" + body + "\n}\n";
}

}  // namespace

// ---- eliminate_nop_expand ----

TEST(EliminateNopExpand, RemovesExpandToOnesEvenWithSymbolicDims) {
  auto r = run_passes(model("(float[N,3,5] x) => (float[N,3,5] y)", "int64[3] s = {1, 1, 1}",
                            "e = Expand(x, s)\n y = Relu(e)"),
                      {"eliminate_nop_expand"});
  EXPECT_EQ(ops(*r.after), (Ops{"Relu"}));
  EXPECT_EQ(r.result.fired, 1);
  expect_same_function(*r.before, *r.after, {{"N", 2}});
}

TEST(EliminateNopExpand, RemovesExpandToItsOwnShapeWithFewerEntries) {
  auto r = run_passes(model("(float[2,3,5] x) => (float[2,3,5] y)", "int64[2] s = {3, 5}", "e = Expand(x, s)\n y = Relu(e)"),
                      {"eliminate_nop_expand"});
  EXPECT_EQ(ops(*r.after), (Ops{"Relu"}));
  expect_same_function(*r.before, *r.after);
}

TEST(EliminateNopExpand, DoesNotRewriteARealBroadcast) {
  auto r = run_passes(model("(float[2,1,5] x) => (float[2,4,5] y)", "int64[3] s = {1, 4, 1}", "e = Expand(x, s)\n y = Relu(e)"),
                      {"eliminate_nop_expand"});
  EXPECT_EQ(ops(*r.after), (Ops{"Expand", "Relu"}));
  expect_same_function(*r.before, *r.after);
}

TEST(EliminateNopExpand, DoesNotRewriteWhenItAddsDims) {
  auto r = run_passes(model("(float[3,5] x) => (float[1,3,5] y)", "int64[3] s = {1, 1, 1}", "e = Expand(x, s)\n y = Relu(e)"),
                      {"eliminate_nop_expand"});
  EXPECT_EQ(ops(*r.after), (Ops{"Expand", "Relu"}));
}

TEST(EliminateNopExpand, DoesNotRewriteANonConstantShape) {
  auto r = run_passes(model("(float[2,3,5] x, int64[3] s) => (float[?,?,?] y)", "", "e = Expand(x, s)\n y = Relu(e)"),
                      {"eliminate_nop_expand"});
  EXPECT_EQ(ops(*r.after), (Ops{"Expand", "Relu"}));
  EXPECT_TRUE(has_skip(r.result, "not a constant"));
}

TEST(EliminateNopExpand, DoesNotRewriteASymbolicDimAgainstAFixedSize) {
  // N may be 1 at run time, then Expand to 4 broadcasts: not provably a no-op.
  auto r = run_passes(model("(float[N,3] x) => (float[4,3] y)", "int64[2] s = {4, 3}", "e = Expand(x, s)\n y = Relu(e)"),
                      {"eliminate_nop_expand"});
  EXPECT_EQ(ops(*r.after), (Ops{"Expand", "Relu"}));
  EXPECT_TRUE(has_skip(r.result, "symbolic"));
}

// ---- eliminate_nop_reshape ----

TEST(EliminateNopReshape, RemovesReshapeWithZeroAndMinusOne) {
  auto r = run_passes(model("(float[N,16,5] x) => (float[N,16,5] y)", "int64[3] s = {0, 16, -1}",
                            "t = Reshape(x, s)\n y = Relu(t)"),
                      {"eliminate_nop_reshape"});
  EXPECT_EQ(ops(*r.after), (Ops{"Relu"}));
  expect_same_function(*r.before, *r.after, {{"N", 3}});
}

TEST(EliminateNopReshape, DoesNotRewriteARealReshape) {
  auto r = run_passes(model("(float[2,16,5] x) => (float[2,8,10] y)", "int64[3] s = {2, 8, 10}",
                            "t = Reshape(x, s)\n y = Relu(t)"),
                      {"eliminate_nop_reshape"});
  EXPECT_EQ(ops(*r.after), (Ops{"Reshape", "Relu"}));
  expect_same_function(*r.before, *r.after);
}

TEST(EliminateNopReshape, DoesNotRewriteARankChange) {
  auto r = run_passes(model("(float[2,16,5] x) => (float[2,80] y)", "int64[2] s = {2, 80}", "t = Reshape(x, s)\n y = Relu(t)"),
                      {"eliminate_nop_reshape"});
  EXPECT_EQ(ops(*r.after), (Ops{"Reshape", "Relu"}));
}

TEST(EliminateNopReshape, DoesNotRewriteAFixedSizeForASymbolicDim) {
  auto r = run_passes(model("(float[N,16] x) => (float[2,16] y)", "int64[2] s = {2, 16}", "t = Reshape(x, s)\n y = Relu(t)"),
                      {"eliminate_nop_reshape"});
  EXPECT_EQ(ops(*r.after), (Ops{"Reshape", "Relu"}));
  EXPECT_TRUE(has_skip(r.result, "symbolic"));
}

TEST(EliminateNopReshape, DoesNotRewriteZeroWithAllowzero) {
  auto r = run_passes(model("(float[2,3,0] x) => (float[?,?,?] y)", "int64[3] s = {2, 0, 3}",
                            "t = Reshape<allowzero=1>(x, s)\n y = Relu(t)"),
                      {"eliminate_nop_reshape"});
  EXPECT_EQ(ops(*r.after), (Ops{"Reshape", "Relu"}));
}

TEST(EliminateNopReshape, DoesNotRewriteANonConstantShape) {
  auto r = run_passes(model("(float[2,3] x, int64[2] s) => (float[?,?] y)", "", "t = Reshape(x, s)\n y = Relu(t)"),
                      {"eliminate_nop_reshape"});
  EXPECT_EQ(ops(*r.after), (Ops{"Reshape", "Relu"}));
  EXPECT_TRUE(has_skip(r.result, "not a constant"));
}

// ---- eliminate_identity ----

TEST(EliminateIdentity, RemovesIdentityAndKeepsOutputNames) {
  auto r = run_passes(model("(float[2,3] x) => (float[2,3] y, float[2,3] z)", "",
                            "a = Relu(x)\n b = Identity(a)\n y = Identity(b)\n z = Neg(b)"),
                      {"eliminate_identity"});
  EXPECT_EQ(ops(*r.after), (Ops{"Relu", "Neg"}));
  ASSERT_EQ(r.after->graph.outputs.size(), 2u);
  EXPECT_EQ(r.after->graph.outputs[0]->name, "y");  // the Relu's output took the name
  EXPECT_EQ(r.after->graph.outputs[1]->name, "z");
  EXPECT_EQ(r.after->graph.outputs[0]->producer->op_type, "Relu");
}

TEST(EliminateIdentity, DoesNotRewriteInputToOutputIdentity) {
  auto r = run_passes(model("(float[2,3] x) => (float[2,3] y)", "", "y = Identity(x)"), {"eliminate_identity"});
  EXPECT_EQ(ops(*r.after), (Ops{"Identity"}));
  EXPECT_EQ(r.after->graph.outputs[0]->name, "y");
  EXPECT_TRUE(has_skip(r.result, "graph output"));
}

TEST(EliminateIdentity, DoesNotMergeTwoGraphOutputs) {
  auto r = run_passes(model("(float[2,3] x) => (float[2,3] a, float[2,3] y)", "", "a = Relu(x)\n y = Identity(a)"),
                      {"eliminate_identity"});
  EXPECT_EQ(ops(*r.after), (Ops{"Relu", "Identity"}));
  EXPECT_EQ(r.after->graph.outputs[0]->name, "a");
  EXPECT_EQ(r.after->graph.outputs[1]->name, "y");
}

// ---- eliminate_dead_nodes ----

TEST(EliminateDeadNodes, RemovesWhatReachesNoOutput) {
  auto r = run_passes(model("(float[2,3] x) => (float[2,3] y)", "int64[2] r = {1, 2}, float[4] spare = {1, 2, 3, 4}",
                            "t = Tile(x, r)\n u = Relu(t)\n y = Relu(x)"),
                      {"eliminate_dead_nodes"});
  EXPECT_EQ(ops(*r.after), (Ops{"Relu"}));
  EXPECT_EQ(r.result.nodes_removed, 2);
  EXPECT_EQ(r.result.bytes_saved, 2 * 6 * 4 * 2);  // t and u, float[2,6] each
  onnx::ModelProto p = io::export_model(*r.after);
  std::vector<std::string> inits;
  for (const auto& t : p.graph().initializer()) inits.push_back(t.name());
  // 'r' fed only the dead Tile; 'spare' was unused in the source already and is kept.
  EXPECT_EQ(inits, (std::vector<std::string>{"spare"}));
}

// ---- the pipeline as a whole ----

TEST(DefaultPipeline, CleanUpFirstDeadNodesLast) {
  const auto& p = rewrites::default_pipeline();
  ASSERT_GE(p.size(), 5u);
  EXPECT_EQ(p.front().name, "fold_constants");
  EXPECT_EQ(p.back().name, "eliminate_dead_nodes");
  for (const auto& pass : p) {
    EXPECT_FALSE(pass.description.empty()) << pass.name;
    EXPECT_TRUE(pass.run) << pass.name;
  }
}

TEST(DefaultPipeline, KeepsUnknownOpsAndDynamicShapesUntouched) {
  std::vector<std::string> all;
  for (const auto& p : rewrites::default_pipeline()) all.push_back(p.name);
  // A Tile + grouped conv whose repeat count is computed at run time, around an unknown op.
  auto r = run_passes(R"(<ir_version: 8, opset_import: ["" : 13, "acme" : 1]>
g (float[N,2,5] x, int64[3] reps) => (float[N,?,5] y, float[N,2,5] z)
<float[4,2,1] w = {1,2,3,4,5,6,7,8}>
{
  t = Tile(x, reps)
  y = Conv<group=2>(t, w)
  z = acme.Frobnicate <level = 3> (x)
}
)",
                      all);
  EXPECT_EQ(ops(*r.after), (Ops{"Tile", "Conv", "Frobnicate"}));
  const ir::Node* f = r.after->graph.find_value("z")->producer;
  EXPECT_EQ(f->domain, "acme");
  EXPECT_EQ(f->attr("level")->i, 3);
}
