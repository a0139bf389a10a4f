// fold_constants, and what PyTorch 1.13 exports reducing to the repeat it is.
#include "pass_test_util.h"

using namespace batchconv;
using namespace batchconv::testing;
using Ops = std::vector<std::string>;

namespace {

// x.repeat(1, 4, 1) + grouped conv as PyTorch 1.13 writes it (opset 13).
const char* kRepeatExport = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[N,3,5] x) => (float[N,8,5] y)
<float[8,3,1] w = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24}>
{
  reps = Constant <value = int64[3] {1, 4, 1}> ()
  rank = Constant <value = int64[1] {3}> ()
  ones = ConstantOfShape <value = int64[1] {1}> (rank)
  e = Expand (x, ones)
  t = Tile (e, reps)
  y = Conv <group = 4> (t, w)
}
)";

// x.unsqueeze(1).expand(-1, 4, -1, -1).reshape(N, 12, 5) with a dynamic batch,
// as PyTorch writes the shape arithmetic around the Expand.
const char* kExpandExport = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[N,3,5] x) => (float[N,12,5] y)
{
  ax = Constant <value = int64[1] {1}> ()
  u = Unsqueeze (x, ax)
  target = Constant <value = int64[4] {-1, 4, -1, -1}> ()
  four = Constant <value = int64[1] {4}> ()
  ones = ConstantOfShape <value = int64[1] {1}> (four)
  minus1 = Constant <value = int64 {-1}> ()
  neg = Mul (ones, minus1)
  target2 = Constant <value = int64[4] {-1, 4, -1, -1}> ()
  eq = Equal (target2, neg)
  shape = Where (eq, ones, target)
  e = Expand (u, shape)
  s = Shape (x)
  i0 = Constant <value = int64 {0}> ()
  n = Gather <axis = 0> (s, i0)
  i0c = Constant <value = int64[1] {0}> ()
  nu = Unsqueeze (n, i0c)
  rest = Constant <value = int64[2] {12, 5}> ()
  rshape = Concat <axis = 0> (nu, rest)
  y = Reshape (e, rshape)
}
)";

}  // namespace

TEST(FoldConstants, RepeatExportReducesToTile) {
  auto r = run_passes(kRepeatExport, {"fold_constants", "eliminate_nop_expand", "eliminate_dead_nodes"});
  EXPECT_EQ(ops(*r.after), (Ops{"Tile", "Conv"}));
  const ir::Node* tile = r.after->graph.topological_order()[0];
  ASSERT_TRUE(tile->inputs[1]->constant);
  EXPECT_EQ(tile->inputs[1]->constant->i, (std::vector<int64_t>{1, 4, 1}));
  EXPECT_EQ(tile->inputs[0]->name, "x");
  expect_same_function(*r.before, *r.after, {{"N", 2}});
}

TEST(FoldConstants, ExpandExportReducesToUnsqueezeExpandReshape) {
  auto r = run_passes(kExpandExport, {"fold_constants", "eliminate_nop_expand", "eliminate_nop_reshape", "eliminate_dead_nodes"});
  // The batch is symbolic: the Reshape's shape stays computed from Shape(x),
  // but the Expand's shape folds to a constant.
  Ops got = ops(*r.after);
  EXPECT_EQ(std::count(got.begin(), got.end(), "Expand"), 1);
  EXPECT_EQ(std::count(got.begin(), got.end(), "ConstantOfShape"), 0);
  EXPECT_EQ(std::count(got.begin(), got.end(), "Where"), 0);
  for (const ir::Node* n : r.after->graph.topological_order())
    if (n->op_type == "Expand") {
      ASSERT_TRUE(n->inputs[1]->constant) << "Expand shape not folded";
      EXPECT_EQ(n->inputs[1]->constant->i, (std::vector<int64_t>{1, 4, 1, 1}));
    }
  expect_same_function(*r.before, *r.after, {{"N", 2}});
}

TEST(FoldConstants, StaticBatchFoldsEveryShapeNode) {
  std::string text = kExpandExport;
  for (size_t p; (p = text.find("N,")) != std::string::npos;) text.replace(p, 1, "2");
  auto r = run_passes(text, {"fold_constants", "eliminate_nop_expand", "eliminate_nop_reshape", "eliminate_dead_nodes"});
  EXPECT_EQ(ops(*r.after), (Ops{"Unsqueeze", "Expand", "Reshape"}));
  for (const ir::Node* n : r.after->graph.topological_order()) EXPECT_TRUE(n->inputs[1]->constant) << n->op_type;
  expect_same_function(*r.before, *r.after);
}

TEST(FoldConstants, GatherOfShapeFoldsOnlyKnownDims) {
  auto r = run_passes(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[N,3,5] x) => (int64 c, int64 n)
{
  s = Shape (x)
  one = Constant <value = int64 {1}> ()
  zero = Constant <value = int64 {0}> ()
  c1 = Gather (s, one)
  n1 = Gather (s, zero)
  c = Identity (c1)
  n = Identity (n1)
}
)",
                      {"fold_constants"});
  const ir::Value* c1 = r.after->graph.find_value("c")->producer->inputs[0];
  ASSERT_TRUE(c1->constant && !c1->producer) << "Gather(Shape(x), 1) not folded";
  EXPECT_EQ(c1->constant->i, (std::vector<int64_t>{3}));
  const ir::Value* n1 = r.after->graph.find_value("n")->producer->inputs[0];
  EXPECT_TRUE(n1->producer && n1->producer->op_type == "Gather") << "a symbolic dim must not fold";
  expect_same_function(*r.before, *r.after, {{"N", 4}});
}

TEST(FoldConstants, ShapeOfStaticValueFolds) {
  auto r = run_passes(R"(<ir_version: 8, opset_import: ["" : 15]>
g (float[2,3,5] x) => (float[2,15] y)
{
  s = Shape <start = 0, end = 1> (x)
  rest = Constant <value = int64[1] {15}> ()
  shape = Concat <axis = 0> (s, rest)
  y = Reshape (x, shape)
}
)",
                      {"fold_constants", "eliminate_dead_nodes"});
  EXPECT_EQ(ops(*r.after), (Ops{"Reshape"}));
  expect_same_function(*r.before, *r.after);
}

TEST(FoldConstants, DoesNotFoldGraphOutputsOrOverridableInputs) {
  auto r = run_passes(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x, int64[1] k) => (int64[1] y, float[2] z)
<int64[1] k = {3}>
{
  a = Constant <value = int64[1] {2}> ()
  y = Add (a, k)
  z = Relu (x)
}
)",
                      {"fold_constants"});
  // k is a graph input with a default (an initializer): a caller may override it.
  EXPECT_EQ(ops(*r.after), (Ops{"Add", "Relu"}));
  EXPECT_EQ(r.after->graph.outputs[0]->name, "y");
}

TEST(FoldConstants, DoesNotFoldOutputsLargerThanTheLimit) {
  auto r = run_passes(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1000,1000] x) => (float[1000,1000] y)
{
  s = Constant <value = int64[2] {1000, 1000}> ()
  big = ConstantOfShape <value = float[1] {1.5}> (s)
  y = Add (x, big)
}
)",
                      {"fold_constants"});
  EXPECT_EQ(ops(*r.after), (Ops{"ConstantOfShape", "Add"}));
  EXPECT_TRUE(has_skip(r.result, "larger than the fold limit"));
}

TEST(FoldConstants, DoesNotEvenComputeHugeOutputs) {
  // 10^12 elements: refused before the kernel would allocate them.
  auto r = run_passes(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1] x) => (float[?,?] y)
{
  s = Constant <value = int64[2] {1000000, 1000000}> ()
  big = ConstantOfShape <value = float[1] {1.5}> (s)
  r = Constant <value = int64[2] {1000000, 1}> ()
  t = Tile (big, r)
  y = Add (x, t)
}
)",
                      {"fold_constants"});
  EXPECT_EQ(ops(*r.after), (Ops{"ConstantOfShape", "Tile", "Add"}));
  EXPECT_TRUE(has_skip(r.result, "1000000000000 elements is larger than the fold limit"));
}

TEST(FoldConstants, LeavesUnknownOpsAlone) {
  auto r = run_passes(R"(<ir_version: 8, opset_import: ["" : 13, "acme" : 1]>
g (float[2] x) => (float[2] y)
{
  c = Constant <value = float[2] {1, 2}> ()
  u = acme.Mystery <mode = "fast"> (c)
  y = Add (x, u)
}
)",
                      {"fold_constants"});
  auto got = ops(*r.after);
  EXPECT_EQ(got, (Ops{"Mystery", "Add"}));
  const ir::Node* m = r.after->graph.topological_order()[0];
  EXPECT_EQ(m->domain, "acme");
  EXPECT_EQ(m->attr("mode")->s, "fast");
}

TEST(FoldConstants, PyTorchExportsReduceToTheRepeat) {
  const std::string dir = std::string(BATCHCONV_SOURCE_DIR) + "/tests/models/";
  for (const char* name : {"repeat_tile_opset13", "repeat_tile_opset17", "repeat_expand_opset13", "repeat_expand_opset17"}) {
    auto before = io::load_model(dir + name + ".onnx");
    auto after = io::clone_model(*before);
    for (const char* p : {"fold_constants", "eliminate_identity", "eliminate_nop_expand", "eliminate_nop_reshape",
                          "eliminate_dead_nodes"})
      pass_named(p).run(*after, {});
    Ops got = ops(*after);
    if (std::string(name).find("tile") != std::string::npos)
      EXPECT_EQ(got, (Ops{"Tile", "Conv"})) << name;
    else
      EXPECT_EQ(got, (Ops{"Unsqueeze", "Expand", "Reshape", "Conv"})) << name;
    for (const ir::Node* n : after->graph.topological_order())
      if (n->op_type != "Conv") EXPECT_TRUE(n->inputs[1]->constant) << name << ": " << n->op_type;
    expect_same_function(*before, *after);
  }
}

TEST(FoldConstants, ExplainsTensorsItCannotRead) {
  // Found by the fuzz target: a ConstantOfShape whose value has an unknown
  // data type. The pass must say so, not read memory that is not there.
  onnx::ModelProto p = io::parse_text(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3] x) => (float[2,3] y)
{
  s = Constant <value = int64[1] {2}> ()
  c = ConstantOfShape <value = float[1] {1.0}> (s)
  y = Add (x, c)
}
)",
                                     "<test>");
  auto* t = p.mutable_graph()->mutable_node(1)->mutable_attribute(0)->mutable_t();
  t->set_data_type(71);
  auto m = io::import_model(p, "<test>");
  auto r = pass_named("fold_constants").run(*m, {});
  EXPECT_TRUE(has_skip(r, "data type the interpreter does not model"));
  EXPECT_EQ(ops(*m), (Ops{"ConstantOfShape", "Add"}));
}
