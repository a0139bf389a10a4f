// What the lowering of one ir::Model to one Halide pipeline keeps while it
// walks the graph: every IR value becomes a LTensor (a Halide Func over the
// ONNX indices, plus its static shape, plus its data when known at compile
// time), and each op lowering reads its inputs' LTensors and defines its
// outputs'.
//
// Index order: a Func of an ONNX tensor of shape (d0, ..., d{r-1}) takes its
// arguments innermost first, f(i{r-1}, ..., i0), as Halide buffers do, so a
// dense row-major tensor is a Halide buffer with no transposition.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "Halide.h"
#include "host_target.h"
#include "conv_chooser.h"
#include "ir/graph.h"

namespace batchconv::compiler {

// A compile-time error; the message names the model, the node and the op.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A lowered value.
struct LTensor {
  Halide::Func f;                         // f(i{r-1}, ..., i0)
  std::vector<int64_t> shape;             // ONNX order
  std::optional<ir::Tensor> constant;     // data known at compile time (then f reads a baked Buffer)
  // When set, the elements of this tensor in row-major order are exactly
  // those of `storage` in its dense order (a conv's output seen through
  // Squeeze/Reshape/...): a graph output can then be computed straight
  // into the caller's buffer instead of being copied.
  std::optional<Halide::Func> storage;
  std::vector<int64_t> storage_extents;   // Halide order, innermost first
  // Reading an element costs about one load (a parameter, a constant, a
  // compute_root Func, or a view of one); false for inlined arithmetic.
  bool cheap = true;
  // Dim 0 is the run-time batch (--dynamic-batch): `shape` holds 1 there,
  // the pipeline's extent is the caller's. Set by LoweringContext::define.
  bool batched = false;
  // Where `storage` holds the batch among storage_extents (-1: nowhere).
  int storage_batch_dim = -1;
  int64_t numel() const;
  int rank() const { return static_cast<int>(shape.size()); }
};

// How the pipeline reads one graph input or runtime weight.
struct ParamInfo {
  std::string onnx_name;
  std::string c_name;            // the argument name in the generated C signature
  std::vector<int64_t> shape;    // the caller's dense row-major shape: ONNX order, or NHWC / NWC (layout)
  Halide::ImageParam param;
  std::string layout;            // "" (the model's own order) or "NHWC" / "NWC" (--edge-layout)
  bool batched = false;          // dim 0 is the run-time batch (shape holds 1 there)
};

// How the pipeline writes one graph output.
struct OutputInfo {
  std::string onnx_name;
  std::string c_name;
  std::vector<int64_t> shape;            // what the caller passes: ONNX order, or NHWC / NWC (layout)
  std::vector<int64_t> internal_extents;  // the Halide output buffer, innermost first
  std::vector<int64_t> internal_strides;  // its strides; empty: dense in that order
  Halide::Func func;
  std::string layout;                     // "" or "NHWC" / "NWC" (--edge-layout)
  int batch_dim = -1;                     // the internal dim that is the run-time batch (-1: none)
};

struct RuntimeWeightPlan;
struct ConvTuning;

// How the pipeline stores the activations between convs (layout_plan.h).
enum class LayoutPolicy {
  Auto,          // channels innermost where only channels-family convs read the tensor, NCHW elsewhere
  Nchw,          // every conv result NCHW (x innermost): the layout of the model's interface
  ChannelsLast,  // every conv result channels innermost unless it is a graph output (tests, A/B runs)
};

// A conv lowered whose schedule waits for the layout plan: lower_conv
// records it, plan_layouts (layout_plan.cpp) decides the storage of its
// result and of its input and then calls `schedule`.
struct ConvStage {
  const ir::Node* node = nullptr;
  const ir::Value* result = nullptr;  // what the graph reads: the conv's output, or its epilogue's last
  bool channels_family = false;       // the chooser's family is "channels" (CPU)
  bool gpu = false;
  bool lanes = false;                 // the lanes family (a channel-vector conv too)
  bool depthwise = false;             // the lanes family's depthwise form (stores channels innermost too)
  Halide::Func storage;               // the compute_root Func (x, y, c, g, n, b) holding the result
  // Schedules the conv for an input read with channels innermost (a stride-1
  // channel) or not, and stores its result with channels innermost or not.
  std::function<void(bool input_channels_innermost, bool output_channels_innermost)> schedule;
};

// A 2-D pool (MaxPool, AveragePool) on a CPU whose storage waits for the
// layout plan too: channels innermost where its input is and its readers
// take it (layout_plan.cpp), else NCHW. compute_root from the start.
// A GlobalAveragePool (`global`) has a (N, C, 1, 1) result, the same in
// either order: the plan decides only whether it reads its input in
// channel vectors.
struct PoolStage {
  const ir::Node* node = nullptr;
  const ir::Value* result = nullptr;
  Halide::Func f;              // f(x, y, c, n)
  std::vector<int64_t> shape;  // ONNX order (N, C, H, W)
  std::function<void(bool channels_innermost)> schedule;
  bool global = false;
};

struct LowerOptions {
  bool runtime_weights = false;  // float initializers become ImageParams instead of baked Buffers
  // With runtime weights: the original model's weights are the arguments and
  // the rewritten ones are rebuilt from them (runtime_weights.h). Without a
  // plan, the float initializers of the lowered model itself are the arguments.
  const RuntimeWeightPlan* weight_plan = nullptr;
  Halide::Target target = batchconv_gen::host_target();
  // A tuning database: convs it has a record of for this target take the
  // record's schedule point (conv_tuning.h). Null: the chooser's.
  const ConvTuning* tuning = nullptr;
  LayoutPolicy layouts = LayoutPolicy::Auto;
  // Graph inputs and outputs the caller passes channels-last (--edge-layout
  // name=nhwc): a 4-D (N, C, H, W) one as NHWC, a 3-D (N, C, W) one as NWC.
  std::set<std::string> channels_last_edges;
  // Channels-last graph inputs (also in channels_last_edges) that hold a
  // conv's or pool's result stored channels innermost by an earlier model
  // part (model_parts.h): read in place, no NCHW copy, and to the layout
  // plan a channels-innermost tensor.
  std::set<std::string> stored_input_edges;
  // The chooser's channels convs take tiles fitted to the row (ch_fit_rows=1;
  // ops_conv.cpp); false keeps the chooser's point as the runtime's kernels
  // have it (model-layouts --fit-rows=0 measures the difference).
  bool fit_rows = true;
  // Epilogues (fusion_plan.h) of one Relu after a conv only, as the plan
  // fused before it took elementwise chains (model-layouts --epilogues=relu
  // measures the difference).
  bool relu_epilogues_only = false;
  // 2-D pools store channels innermost where their input is (layout_plan.h);
  // false keeps them NCHW and makes them block their input's layout, as the
  // plan did before (model-layouts --pool-layouts=0 measures the difference).
  bool pool_layouts = true;
  // Every CPU conv on the rows family (x vectors, NCHW), as the compiler
  // scheduled them before the chooser's families and the layout plan: the
  // baseline model-layouts --nchw=rows measures against.
  bool rows_family_only = false;
  // The cores the pipeline will run on: the chooser splits a conv's tasks
  // by output channels where its rows give them fewer than 4 tasks each.
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // --dynamic-batch: the model is bound at batch 1, and these are the shapes
  // of its values bound at batch 2, by name (dynamic_batch.h). A value that
  // depends on a graph input must have the batch as its leading dim in both;
  // it is then lowered with a run-time batch.
  const std::map<std::string, std::vector<int64_t>>* batch2_shapes = nullptr;
  // Live nodes lower_model takes; more is refused naming the limit (lower.h's
  // kMaxNodes for a pipeline that is compiled; more for a whole model that
  // is only lowered to be cut into parts, model_parts.h).
  size_t max_nodes = 1000;
};

class LoweringContext {
 public:
  LoweringContext(const ir::Model& model, const std::string& origin, const LowerOptions& options);

  const ir::Model& model() const { return model_; }
  const LowerOptions& options() const { return options_; }
  const Halide::Target& target() const { return options_.target; }
  int64_t opset(const std::string& domain) const { return model_.opset(domain); }

  // The lowered input k of node n; throws naming the node if omitted.
  const LTensor& input(const ir::Node& n, size_t k) const;
  const LTensor* optional_input(const ir::Node& n, size_t k) const;
  // The compile-time integer values of input k (shapes, axes, ...).
  std::vector<int64_t> constant_ints(const ir::Node& n, size_t k) const;
  bool has(const ir::Value* v) const { return values_.count(v) > 0; }
  const LTensor& at(const ir::Value* v) const;
  const std::map<const ir::Value*, LTensor>& values() const { return values_; }
  void define(const ir::Value* v, LTensor t);

  // "model.onnx: node 'conv3' (Conv): <what>"
  [[noreturn]] void fail(const ir::Node& n, const std::string& what) const;
  std::string where(const ir::Node& n) const;
  const std::string& origin() const { return origin_; }
  // --dynamic-batch: the run-time batch (the first graph input's leading
  // extent); undefined without it.
  Halide::Expr batch() const { return batch_; }
  void set_batch(Halide::Expr b) { batch_ = std::move(b); }
  // Values that depend on a graph input (dynamic_batch.cpp).
  std::set<const ir::Value*> batch_dependent;

  // A fresh Func named after the node (unique, valid in C).
  Halide::Func func(const ir::Node& n, const std::string& suffix = "");
  std::string unique_c_name(const std::string& base);

  // Nodes lowered as part of another: a conv's epilogue, the elementwise
  // nodes after it that run inside its stage, in order, as the fusion plan
  // (fusion_plan.h) decided. They are skipped by the graph walk.
  void fuse_epilogue(const ir::Node* conv, std::vector<const ir::Node*> chain) {
    for (const ir::Node* n : chain) fused_.insert(n);
    epilogues_[conv] = std::move(chain);
  }
  // A conv evaluated at compile time keeps its epilogue nodes of their own.
  void unfuse_epilogue(const ir::Node* conv) {
    if (auto it = epilogues_.find(conv); it != epilogues_.end()) {
      for (const ir::Node* n : it->second) fused_.erase(n);
      epilogues_.erase(it);
    }
  }
  // Keeps the first `keep` nodes of the epilogue of `conv`; the rest are
  // lowered on their own.
  void truncate_epilogue(const ir::Node* conv, size_t keep) {
    auto it = epilogues_.find(conv);
    if (it == epilogues_.end() || keep >= it->second.size()) return;
    for (size_t k = keep; k < it->second.size(); ++k) fused_.erase(it->second[k]);
    it->second.resize(keep);
    if (keep == 0) epilogues_.erase(it);
  }
  bool is_fused(const ir::Node* n) const { return fused_.count(n) > 0; }
  // The epilogue of `conv` (empty if none).
  const std::vector<const ir::Node*>& epilogue(const ir::Node* conv) const {
    static const std::vector<const ir::Node*> none;
    auto it = epilogues_.find(conv);
    return it == epilogues_.end() ? none : it->second;
  }

  std::vector<ParamInfo> inputs, weights;
  std::vector<OutputInfo> outputs;
  // One line per conv lowered: its node, the target and what scheduled it.
  std::vector<std::string> conv_schedules;
  // Each conv lowered, as the runtime and the tuning database key it: its node and problem.
  std::vector<std::pair<std::string, batchconv_gen::ConvProblem>> conv_problems;
  // Every conv lowered, in graph order, until plan_layouts schedules them.
  std::vector<ConvStage> conv_stages;
  // Every 2-D pool lowered on a CPU, in graph order, until plan_layouts schedules them.
  std::vector<PoolStage> pool_stages;
  // One line per conv: the layout its result is stored in and why.
  std::vector<std::string> layout_explanations;
  // One line per conv, Gemm or MatMul with an epilogue: the nodes it computes as it stores its result.
  std::vector<std::string> epilogue_lines;
  // One line per Gemm or MatMul whose B is baked in or packed at run time: how it is stored.
  std::vector<std::string> weight_lines;
  // The result of every conv and pool stage after plan_layouts: true where it is stored channels innermost.
  std::map<const ir::Value*, bool> stored_layouts;

 private:
  const ir::Model& model_;
  std::string origin_;
  LowerOptions options_;
  std::map<const ir::Value*, LTensor> values_;
  Halide::Expr batch_;
  std::set<std::string> names_;
  std::set<const ir::Node*> fused_;
  std::map<const ir::Node*, std::vector<const ir::Node*>> epilogues_;
};

// ---- helpers shared by the op lowerings (lowering_util.cpp) ----

// Pure variables for a Func of the given rank (Halide order: vars[0] innermost).
std::vector<Halide::Var> make_vars(int rank);
// Arguments for f at ONNX-order indices idx (reverses them).
std::vector<Halide::Expr> halide_args(const std::vector<Halide::Expr>& onnx_idx);
// t at ONNX-order indices.
Halide::Expr read(const LTensor& t, const std::vector<Halide::Expr>& onnx_idx);
// ONNX-order index Exprs for a Func defined over `vars` (reverses them).
std::vector<Halide::Expr> onnx_index(const std::vector<Halide::Var>& vars);
// Defines out.f(vars) = value with vars for out.shape; returns the vars.
LTensor make_tensor(Halide::Func f, std::vector<int64_t> shape);
// A baked constant (float data) as a LTensor.
LTensor constant_tensor(const ir::Tensor& t, const std::string& name);
// Numpy broadcast of shapes; throws std::invalid_argument on a mismatch.
std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// Reads t broadcast to out_shape at out indices (ONNX order).
Halide::Expr read_broadcast(const LTensor& t, const std::vector<int64_t>& out_shape,
                            const std::vector<Halide::Expr>& out_idx);
std::string shape_str(const std::vector<int64_t>& s);
int64_t normalize_axis(const LoweringContext& cx, const ir::Node& n, int64_t axis, int64_t rank);
// Row-major element count.
int64_t numel(const std::vector<int64_t>& s);
// An ONNX-order shape as Halide's extents (innermost first), and back.
std::vector<int64_t> reversed(std::vector<int64_t> s);
// Dense row-major constraints on a buffer whose dims are `halide_extents`
// (innermost first): static shapes make Halide check every call and fold
// all index arithmetic.
// batch_dim >= 0: that dim's extent is the run-time batch (left free).
void constrain_dense(Halide::OutputImageParam p, const std::vector<int64_t>& halide_extents, int batch_dim = -1);
// The highest index of ONNX dim `d` of t, for clamps: its extent - 1, the
// run-time batch - 1 for a batched tensor's dim 0.
Halide::Expr last_index(const LoweringContext& cx, const LTensor& t, size_t d);

// Schedules a Func that reduces (pool, softmax, matmul...): compute_root,
// vectorised along its innermost dimension when wide enough, parallel over
// its outermost ones. Every update stage gets the same treatment. On a GPU
// target each stage is one kernel, a thread per element.
void schedule_reduction(Halide::Func f, const std::vector<int64_t>& halide_extents,
                        const Halide::Target& target);

}  // namespace batchconv::compiler
