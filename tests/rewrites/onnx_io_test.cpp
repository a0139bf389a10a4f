// ONNX import/export: round trips (binary and text), what export keeps, and
// the errors bad models get.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "onnx/onnx_io.h"
#include "pass.h"

namespace io = batchconv::io;
namespace fs = std::filesystem;
using namespace batchconv::ir;

namespace {

const char* kModel = R"(<
  ir_version: 8,
  opset_import: ["" : 13, "custom.dom" : 2],
  producer_name: "unit",
  producer_version: "0.1",
  model_version: 7,
  doc_string: "a model"
>
g (float[N, 16, 5] x, int64[3] reps) => (float[N, 64, 5] y, float[N, 16, 5] z)
<int64[3] r = {1, 4, 1}, float[2] unused = {1.5, -2.25}, double[2] dd = {0.1, 0.2}>
{
  t = Tile(x, r)
  y = Relu(t)
  z = custom.dom.Mystery <alpha = 0.5, tag = "keep me", sizes = [1, 2, 3]> (x, , dd)
}
)";

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("bc_io_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

void expect_same_model(const onnx::ModelProto& a, const onnx::ModelProto& b) {
  EXPECT_EQ(a.ir_version(), b.ir_version());
  ASSERT_EQ(a.opset_import_size(), b.opset_import_size());
  for (int k = 0; k < a.opset_import_size(); ++k) {
    EXPECT_EQ(a.opset_import(k).domain(), b.opset_import(k).domain());
    EXPECT_EQ(a.opset_import(k).version(), b.opset_import(k).version());
  }
  EXPECT_EQ(a.producer_name(), b.producer_name());
  EXPECT_EQ(a.model_version(), b.model_version());
  const auto &ga = a.graph(), &gb = b.graph();
  ASSERT_EQ(ga.input_size(), gb.input_size());
  for (int k = 0; k < ga.input_size(); ++k) EXPECT_EQ(ga.input(k).name(), gb.input(k).name());
  ASSERT_EQ(ga.output_size(), gb.output_size());
  for (int k = 0; k < ga.output_size(); ++k) EXPECT_EQ(ga.output(k).name(), gb.output(k).name());
  ASSERT_EQ(ga.node_size(), gb.node_size());
  for (int k = 0; k < ga.node_size(); ++k) {
    EXPECT_EQ(ga.node(k).op_type(), gb.node(k).op_type());
    EXPECT_EQ(ga.node(k).domain(), gb.node(k).domain());
    ASSERT_EQ(ga.node(k).input_size(), gb.node(k).input_size());
    for (int i = 0; i < ga.node(k).input_size(); ++i) EXPECT_EQ(ga.node(k).input(i), gb.node(k).input(i));
    EXPECT_EQ(ga.node(k).attribute_size(), gb.node(k).attribute_size());
  }
  ASSERT_EQ(ga.initializer_size(), gb.initializer_size());
}

}  // namespace

TEST(OnnxIo, ImportBuildsUseListsAndTypes) {
  auto m = io::parse_model(kModel);
  Graph& g = m->graph;
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.inputs[0]->name, "x");
  ASSERT_EQ(g.outputs.size(), 2u);
  Value* t = g.find_value("t");
  ASSERT_TRUE(t && t->producer);
  EXPECT_EQ(t->producer->op_type, "Tile");
  ASSERT_TRUE(t->type.shape.has_value()) << "shape inference did not type 't'";
  EXPECT_EQ((*t->type.shape)[1].value, 64);
  EXPECT_FALSE((*t->type.shape)[0].known());
  Value* r = g.find_value("r");
  ASSERT_TRUE(r->constant);
  EXPECT_EQ(r->constant->i, (std::vector<int64_t>{1, 4, 1}));
  Node* mystery = g.find_value("z")->producer;
  EXPECT_EQ(mystery->domain, "custom.dom");
  EXPECT_EQ(mystery->inputs.size(), 3u);
  EXPECT_EQ(mystery->inputs[1], nullptr);
  EXPECT_EQ(mystery->attr("tag")->s, "keep me");
  EXPECT_EQ(m->opset(""), 13);
}

TEST(OnnxIo, BinaryRoundTripKeepsEverything) {
  onnx::ModelProto src = io::parse_text(kModel, "<kModel>");
  auto* meta = src.add_metadata_props();
  meta->set_key("k");
  meta->set_value("v");
  auto m = io::import_model(src, "<kModel>");
  onnx::ModelProto out = io::export_model(*m);
  expect_same_model(src, out);
  ASSERT_EQ(out.metadata_props_size(), 1);
  EXPECT_EQ(out.metadata_props(0).value(), "v");
  EXPECT_EQ(out.doc_string(), "a model");
  // The unused initializer and the double one survive byte-exactly.
  bool saw_unused = false, saw_double = false;
  for (const auto& t : out.graph().initializer()) {
    if (t.name() == "unused") saw_unused = true;
    if (t.name() == "dd") {
      saw_double = true;
      io::check_model(out, "out");  // also checks the double tensor is well formed
      EXPECT_EQ(io::tensor_from_proto(t, "dd").f.size(), 2u);
    }
  }
  EXPECT_TRUE(saw_unused);
  EXPECT_TRUE(saw_double);
  // Binary file round trip.
  fs::path d = temp_dir();
  io::save_model(*m, (d / "m.onnx").string());
  auto again = io::load_model((d / "m.onnx").string());
  expect_same_model(out, io::export_model(*again));
  fs::remove_all(d);
}

TEST(OnnxIo, TextRoundTrip) {
  auto m = io::parse_model(kModel);
  std::string text = io::print_model(*m);
  auto again = io::parse_model(text, "<printed>");
  expect_same_model(io::export_model(*m), io::export_model(*again));
  EXPECT_EQ(io::print_model(*again), text);
}

TEST(OnnxIo, TextSanitizesNames) {
  onnx::ModelProto p = io::parse_text(kModel, "k");
  p.mutable_graph()->mutable_node(1)->set_output(0, "onnx::Relu.3");
  p.mutable_graph()->mutable_output(0)->set_name("onnx::Relu.3");
  std::string text = io::to_text(p);
  EXPECT_NE(text.find("onnx__Relu_3"), std::string::npos) << text;
  auto m = io::parse_model(text, "<sanitized>");
  EXPECT_EQ(m->graph.outputs[0]->name, "onnx__Relu_3");
}

TEST(OnnxIo, ExportWritesOnlyUsedInitializers) {
  auto m = io::parse_model(kModel);
  Graph& g = m->graph;
  // Drop the Tile: 'r' (used in the source) must disappear from the output.
  Value* t = g.find_value("t");
  Node* tile = t->producer;
  g.set_input(g.find_value("y")->producer, 0, g.find_value("x"));
  g.remove_node(tile);
  onnx::ModelProto out = io::export_model(*m);
  for (const auto& init : out.graph().initializer()) EXPECT_NE(init.name(), "r");
}

TEST(OnnxIo, BadModelsGetClearErrors) {
  auto expect_error = [](const std::string& text, const std::string& needle) {
    try {
      io::parse_model(text, "bad.onnxtxt");
      ADD_FAILURE() << "no error, expected: " << needle;
    } catch (const io::Error& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("bad.onnxtxt"), std::string::npos) << m;
      EXPECT_NE(m.find(needle), std::string::npos) << m;
    }
  };
  expect_error("<ir_version: 8, opset_import: [\"\" : 13]> g (float[2] x) => (float[2] y) { y = Relu(q) }", "'q'");
  expect_error("<ir_version: 8, opset_import: [\"\" : 13]> g (float[2] x) => (float[2] y) "
               "{ a = Add(x, b)\n b = Relu(a)\n y = Relu(b) }",
               "cycle");
  expect_error("<ir_version: 8, opset_import: [\"\" : 13]> g (float[2] x) => (float[2] y) { y = Relu(x)\n y = Relu(x) }",
               "defined twice");
  expect_error("<ir_version: 8, opset_import: [\"\" : 13]> g (float[2] x) => (float[2] w) { y = Relu(x) }", "'w'");
  expect_error("<ir_version: 99, opset_import: [\"\" : 13]> g (float[2] x) => (float[2] y) { y = Relu(x) }",
               "IR version 99");
  expect_error("<ir_version: 8, opset_import: [\"\" : 13]> g (float[2] x) => (float[2] y) "
               "<float[3] w = {1, 2}> { y = Add(x, w) }",
               "initializer 'w'");
  expect_error("<ir_version: 8, opset_import: [\"\" : 13]> g (float[2000000000000000] x) => (float[2] y) { y = Relu(x) }",
               "huge");
  expect_error("this is not onnx", "not valid ONNX text");
  // Found by the fuzz target: ONNX's own shape inference divides by these.
  expect_error("<ir_version: 8, opset_import: [\"\" : 13]> g (float[1,2,5] x) => (float[1,2,5] y) "
               "<float[2,2,1] w = {1,2,3,4}> { y = Conv<strides=[0]>(x, w) }",
               "node 'Conv#0' (Conv): strides must be positive, got 0");
  expect_error("<ir_version: 8, opset_import: [\"\" : 13]> g (float[1,2,5] x) => (float[1,2,5] y) "
               "<float[2,2,1] w = {1,2,3,4}> { y = Conv<group=0>(x, w) }",
               "group must be positive");
  expect_error("<ir_version: 8, opset_import: [\"\" : 13]> g (float[2] x) => (float[?] y) "
               "{ s = Constant<value = int64[1] {1099511626498}>()\n o = ConstantOfShape(s)\n y = Expand(x, o) }",
               "shape entry 1099511626498 is negative or huge");
  expect_error("<ir_version: 8, opset_import: [\"\" : 13]> g (float[1,1] x) => (float[?] y) "
               "<float[1,3,3] w = {1,2,3,4,5,6,7,8,9}> { y = Conv<pads=[1,1,1,1]>(x, w) }",
               "input X has rank 2");
  expect_error("<ir_version: 8, opset_import: [\"\" : 13]> g (float[2] x) => (float[?] y) "
               "{ s = Constant<value = int64[1] {33554435}>()\n o = ConstantOfShape(s)\n y = Expand(x, o) }",
               "a rank over 64");
  expect_error("<ir_version: 8, opset_import: [\"\" : 13]> g (float[1,1,5] x) => (float[?] y) "
               "<float[1,1,3] w = {1,2,3}> { y = Conv<pads=[1,1,1,1]>(x, w) }",
               "pads has 4 entries, expected 2 for rank 3");
}

TEST(OnnxIo, TruncatedAndGarbageFilesAreRejected) {
  fs::path d = temp_dir();
  auto m = io::parse_model(kModel);
  std::string good = (d / "good.onnx").string();
  io::save_model(*m, good);
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 40u);
  int rejected = 0, tried = 0;
  for (size_t cut : {bytes.size() / 4, bytes.size() / 2, bytes.size() - 3}) {
    std::string p = (d / "cut.onnx").string();
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(cut));
    ++tried;
    try {
      io::load_model(p);
    } catch (const io::Error& e) {
      ++rejected;
      EXPECT_NE(std::string(e.what()).find("cut.onnx"), std::string::npos);
    }
  }
  EXPECT_EQ(rejected, tried);
  std::string garbage = (d / "garbage.onnx").string();
  std::ofstream(garbage, std::ios::binary) << "\x01\x02\xff\xfe garbage garbage \x7f";
  EXPECT_THROW(io::load_model(garbage), io::Error);
  std::string empty = (d / "empty.onnx").string();
  std::ofstream(empty, std::ios::binary).flush();
  EXPECT_THROW(io::load_model(empty), io::Error);
  EXPECT_THROW(io::load_model((d / "missing.onnx").string()), io::Error);
  fs::remove_all(d);
}

TEST(OnnxIo, FailedWriteLeavesNoFile) {
  fs::path d = temp_dir();
  auto m = io::parse_model(kModel);
  // A directory in the way: rename fails, and neither the target nor a temp file remains.
  fs::create_directories(d / "out.onnx" / "sub");
  EXPECT_THROW(io::save_model(*m, (d / "out.onnx").string()), io::Error);
  int files = 0;
  for (const auto& e : fs::directory_iterator(d)) files += e.is_regular_file();
  EXPECT_EQ(files, 0);
  EXPECT_THROW(io::save_model(*m, (d / "no_such_dir" / "x.onnx").string()), io::Error);
  fs::remove_all(d);
}

TEST(OnnxIo, MutatedFilesNeverCrash) {
  // Deterministic stand-in for the fuzz target: flip, drop or insert bytes of
  // a valid model; the importer must either accept the result or throw
  // io::Error, and what it accepts must survive the default pipeline and export.
  onnx::ModelProto src = io::parse_text(kModel, "<kModel>");
  std::string good;
  ASSERT_TRUE(src.SerializeToString(&good));
  std::mt19937 rng(4242);
  int accepted = 0, rejected = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string bytes = good;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      size_t pos = rng() % bytes.size();
      switch (rng() % 3) {
        case 0: bytes[pos] = static_cast<char>(rng()); break;
        case 1: bytes.erase(pos, 1 + rng() % 8); break;
        default: bytes.insert(pos, 1, static_cast<char>(rng())); break;
      }
    }
    onnx::ModelProto p;
    if (!p.ParseFromString(bytes)) {
      ++rejected;
      continue;
    }
    try {
      auto m = io::import_model(p, "mutant");
      for (const auto& pass : batchconv::rewrites::default_pipeline()) pass.run(*m, {});
      io::export_model(*m);
      ++accepted;
    } catch (const io::Error&) {
      ++rejected;
    } catch (const std::exception&) {
      // Passes may refuse odd graphs, but only with a message, never a crash.
      ++rejected;
    }
  }
  EXPECT_EQ(accepted + rejected, 400);
  EXPECT_GT(accepted, 0) << "no mutant was accepted: the test exercises nothing past the parser";
  EXPECT_GT(rejected, 0);
}
