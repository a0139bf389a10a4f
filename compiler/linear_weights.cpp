#include "linear_weights.h"

#include <algorithm>

#include "linear_chooser.h"
#include "linear_schedule_cpu.h"
#include "target_facts.h"

namespace batchconv::compiler {

namespace {

// The columns of one register tile of linear_schedule_cpu.h.
int64_t tile_width(int64_t n, const batchconv_gen::TargetFacts& facts) {
  const int64_t vec = facts.vector_floats;
  return n >= 2 * vec ? 2 * vec : vec;
}

}  // namespace

int linear_panel_width(int64_t n, const batchconv_gen::TargetFacts& facts) {
  const int64_t width = tile_width(n, facts);
  if (facts.gpu || facts.vector_floats < 1 || n < facts.vector_floats || n % width != 0) return 0;
  return static_cast<int>(width);
}

Halide::Expr LinearWeights::at(const Halide::Expr& k, const Halide::Expr& col) const {
  if (width == 0) return read(tensor, {k, col});
  return read(tensor, {col / width, k, col % width});
}

LinearWeights baked_linear_weights(LoweringContext& cx, const ir::Node& n, const ir::Tensor& b, bool transposed,
                                   const batchconv_gen::TargetFacts& facts) {
  const int64_t K = transposed ? b.shape[1] : b.shape[0], N = transposed ? b.shape[0] : b.shape[1];
  LinearWeights w;
  w.width = linear_panel_width(N, facts);
  // Unpacked: width N, one panel.
  const int64_t W = w.width > 0 ? w.width : std::max<int64_t>(N, 1), T = N / W;
  ir::Tensor p;
  p.shape = {T, K, W};
  p.f.resize(b.f.size());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < W; ++j) {
        const int64_t col = t * W + j;
        const int64_t src = transposed ? col * K + k : k * N + col;
        p.f[static_cast<size_t>((t * K + k) * W + j)] = b.f[static_cast<size_t>(src)];
      }
  if (w.width == 0) p.shape = {K, N};
  w.tensor = constant_tensor(p, cx.unique_c_name("c_" + n.name + (w.width > 0 ? "_panels" : "_b")));
  std::string line = "node " + ir::describe(&n) + ": B (" + std::to_string(K) + " x " + std::to_string(N) + ") ";
  if (w.width > 0)
    line += "baked as " + std::to_string(T) + (T == 1 ? " panel of " : " panels of ") + std::to_string(K) + " x " + std::to_string(W) +
            ", one per column tile";
  else
    line += std::string("baked ") + (transposed ? "transposed to (K, N)" : "as it is") + ", not packed: " +
            (N < facts.vector_floats ? std::string("fewer columns than a vector")
                                     : "columns not a multiple of the " + std::to_string(tile_width(N, facts)) +
                                           "-column tile");
  cx.weight_lines.push_back(line);
  return w;
}

std::optional<LinearWeights> runtime_linear_weights(LoweringContext& cx, const ir::Node& n, const LTensor& b,
                                                    bool transposed, int64_t rows,
                                                    const batchconv_gen::TargetFacts& facts) {
  const int64_t K = transposed ? b.shape[1] : b.shape[0], N = transposed ? b.shape[0] : b.shape[1];
  const int width = linear_panel_width(N, facts);
  // One row block (linear_schedule_cpu.h: kLinearRowTiles tiles of
  // linear_row_tile rows) copies each panel once anyway.
  const int64_t block = static_cast<int64_t>(batchconv_gen::kLinearRowTiles) * batchconv_gen::linear_row_tile(facts);
  if (width == 0 || rows <= block ||
      batchconv_gen::choose_linear_panels(rows, K, N, facts) == batchconv_gen::LinearPanels::None)
    return std::nullopt;
  const int64_t W = width, T = N / W;
  LinearWeights w;
  w.width = width;
  Halide::Var j("j"), k("k"), t("t");
  Halide::Func p(cx.unique_c_name("f_" + n.name + "_panels"));
  Halide::Expr col = t * static_cast<int32_t>(W) + j;
  p(j, k, t) = transposed ? read(b, {col, k}) : read(b, {k, col});
  p.compute_root().vectorize(j, std::min(width, facts.vector_floats)).parallel(t);
  w.tensor = make_tensor(p, {T, K, W});
  cx.weight_lines.push_back("node " + ir::describe(&n) + ": B (" + std::to_string(K) + " x " + std::to_string(N) +
                            ") known at run time, packed once per call into " + std::to_string(T) +
                            (T == 1 ? " panel of " : " panels of ") + std::to_string(K) + " x " + std::to_string(W));
  return w;
}

std::optional<LinearWeights> linear_weights(LoweringContext& cx, const ir::Node& n, const LTensor& b, bool transposed,
                                            int64_t rows) {
  if (b.rank() != 2 || cx.target().has_gpu_feature()) return std::nullopt;
  const batchconv_gen::TargetFacts facts = batchconv_gen::target_facts(cx.target());
  if (!b.constant) return runtime_linear_weights(cx, n, b, transposed, rows, facts);
  if (b.constant->is_float() && static_cast<int64_t>(b.constant->f.size()) == b.numel())
    return baked_linear_weights(cx, n, *b.constant, transposed, facts);
  return std::nullopt;
}

}  // namespace batchconv::compiler
