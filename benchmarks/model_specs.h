// The models model-layouts compiles and times (ONNX text with their
// weights as inputs named w<k>, b<k>), and each one's layers for the peers
// that run it layer by layer (oneDNN, PyTorch).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "problem.h"

namespace model_layouts {

// One conv of the oneDNN peer: reads tensor `in` (0: the model input, k: layer
// k-1's result), weights w<k>/b<k>; optionally adds tensor `add` (NCHW input
// if 0) before its ReLU; then optionally max-pools (window = stride = pool).
// A layer's result, what later layers read, is the pooled tensor.
struct PeerLayer {
  bcbench::ConvGeom g;
  int in = 0;
  int add = -1;
  bool relu = true;
  int pool = 0;
};

// One Gemm of an MLP's oneDNN peer: y (rows, n) = relu?(x (rows, k) @ w<k> (k, n) + b<k>).
struct GemmLayer {
  int64_t rows, k, n;
  bool relu;
  bool trans_b = false;  // weights (n, k), as PyTorch's Linear exports them (Gemm transB = 1)
};

struct ModelSpec {
  std::string name, what;
  std::string text;              // ONNX text; weights are inputs named w<k>, b<k>
  int64_t tasks = 1;             // batched-weight models: oneDNN runs each task's slice in turn
  std::vector<PeerLayer> peer;   // the same model layer by layer for oneDNN
  std::vector<GemmLayer> gemms;  // or, for an MLP, its Gemms (oneDNN's sgemm)
};

// Every model of the benchmark, in table order.
std::vector<ModelSpec> benchmark_models();

}  // namespace model_layouts
