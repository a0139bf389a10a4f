// The reference interpreter against ONNX's backend test data (Debian
// libonnx-testdata): every node test whose ops the interpreter claims runs
// through it and must match the stored outputs. Cases that use an op or a
// type the interpreter does not model are listed with the reason.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "interpreter/interpreter.h"
#include "onnx/onnx_io.h"

namespace fs = std::filesystem;
namespace io = batchconv::io;
namespace interp = batchconv::interp;
using batchconv::ir::Tensor;

namespace {

const char* kDataDir = "/usr/share/libonnx-testdata/data";

// Test-name prefixes of the ops this interpreter must cover (the brief's list).
const std::vector<std::string> kPrefixes = {
    "test_conv_",  "test_tile",     "test_concat_", "test_expand_", "test_reshape_", "test_slice",
    "test_split_", "test_transpose", "test_unsqueeze", "test_squeeze", "test_shape",  "test_gather_",
    "test_constantofshape", "test_constant", "test_equal", "test_where", "test_mul", "test_add",
    "test_sub",    "test_div",      "test_cast_",   "test_identity", "test_relu",   "test_matmul_",
    "test_gemm_",  "test_flatten_"};

Tensor load_tensor(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  onnx::TensorProto t;
  if (!t.ParseFromIstream(&in)) throw std::runtime_error(p.string() + ": not a TensorProto");
  return io::tensor_from_proto(t, p.string());
}

// Returns "" when the case ran and matched, else why it was skipped (a
// mismatch or an error is a test failure, reported through gtest).
std::string run_case(const fs::path& dir) {
  std::unique_ptr<batchconv::ir::Model> m;
  try {
    m = io::load_model((dir / "model.onnx").string());
  } catch (const io::Error& e) {
    return std::string("model does not import: ") + e.what();
  }
  for (const auto& n : m->graph.nodes())
    if (!interp::supports(*n)) return "op " + n->op_type + " has no kernel (not one of the ops the passes touch)";
  for (const auto* v : m->graph.inputs)
    if (v->type.dtype == batchconv::ir::DType::Other) return "input type not modelled (string/bfloat16/sequence/optional)";
  for (const auto* v : m->graph.outputs)
    if (v->type.dtype == batchconv::ir::DType::Other) return "output type not modelled (string/bfloat16/sequence/optional)";
  int sets = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_directory()) continue;
    ++sets;
    interp::TensorMap inputs;
    size_t k = 0;
    for (const auto* v : m->graph.inputs) {
      fs::path p = entry.path() / ("input_" + std::to_string(k++) + ".pb");
      if (fs::exists(p)) inputs[v->name] = load_tensor(p);
    }
    interp::TensorMap out;
    try {
      out = interp::run(*m, inputs);
    } catch (const std::exception& e) {
      ADD_FAILURE() << dir.filename() << ": " << e.what();
      continue;
    }
    for (size_t j = 0; j < m->graph.outputs.size(); ++j) {
      Tensor want = load_tensor(entry.path() / ("output_" + std::to_string(j) + ".pb"));
      const Tensor& got = out.at(m->graph.outputs[j]->name);
      EXPECT_EQ(got.shape, want.shape) << dir.filename() << " output " << j;
      if (got.shape != want.shape) continue;
      if (want.is_float()) {
        for (int64_t e = 0; e < want.numel(); ++e) {
          float w = want.f[e], g = got.is_float() ? got.f[e] : static_cast<float>(got.i[e]);
          if (std::isnan(w)) {
            EXPECT_TRUE(std::isnan(g)) << dir.filename();
            continue;
          }
          if (std::fabs(g - w) > 1e-5 + 1e-4 * std::fabs(w)) {
            ADD_FAILURE() << dir.filename() << " output " << j << " element " << e << ": got " << g << ", want " << w;
            break;
          }
        }
      } else {
        EXPECT_EQ(got.i, want.i) << dir.filename() << " output " << j;
      }
    }
  }
  return sets ? "" : "no test data sets";
}

}  // namespace

TEST(InterpreterBackend, MatchesOnnxBackendData) {
  if (!fs::exists(kDataDir)) GTEST_SKIP() << kDataDir << " not found: install libonnx-testdata";
  // node/: the single-op tests; pytorch-converted/: PyTorch's Conv1d/2d/3d
  // (groups, depthwise, dilation, stride, padding) and Linear; pytorch-operator/: all.
  const std::vector<std::pair<std::string, std::vector<std::string>>> sources = {
      {"node", kPrefixes}, {"pytorch-converted", {"test_Conv1d", "test_Conv2d", "test_Conv3d", "test_Linear"}},
      {"pytorch-operator", {"test_"}}};
  std::vector<fs::path> cases;
  for (const auto& [sub, prefixes] : sources) {
    if (!fs::exists(fs::path(kDataDir) / sub)) continue;
    for (const auto& e : fs::directory_iterator(fs::path(kDataDir) / sub)) {
      std::string name = e.path().filename().string();
      for (const auto& p : prefixes)
        if (name.rfind(p, 0) == 0) {
          cases.push_back(e.path());
          break;
        }
    }
  }
  std::sort(cases.begin(), cases.end());
  int ran = 0;
  std::vector<std::string> skipped;
  for (const auto& c : cases) {
    std::string why = run_case(c);
    if (why.empty()) ++ran;
    else skipped.push_back(c.parent_path().filename().string() + "/" + c.filename().string() + ": " + why);
  }
  std::cout << "backend cases run: " << ran << ", skipped: " << skipped.size() << "\n";
  for (const auto& s : skipped) std::cout << "  skipped " << s << "\n";
  EXPECT_GE(ran, 150) << "too few backend cases ran";
}
