#include "layout_plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "elementwise.h"

namespace batchconv::compiler {
namespace {

// Ops whose readers see the same element of their input at the same index:
// a channels-innermost input costs them nothing, and their own readers
// decide. (Elementwise ops are inlined into their readers.)
bool layout_transparent(const ir::Node& n) {
  return is_elementwise(n) ||
         ((n.domain.empty() || n.domain == "ai.onnx") && (n.op_type == "Identity" || n.op_type == "Concat"));
}

std::string quoted(const ir::Node* n) { return ir::describe(n); }

struct Readers {
  std::vector<const ir::Node*> convs;  // channels-family convs reading the value as their input
  std::vector<const ir::Node*> epilogues;  // channels-family convs whose epilogue reads it (a residual)
  std::vector<const ir::Node*> globals;    // global pools reading it in channel vectors
  std::vector<std::string> edges;      // graph outputs written channels-last (--edge-layout)
  std::string blocker;                 // why it must stay NCHW; empty if nothing stops it
};

class Planner {
 public:
  explicit Planner(LoweringContext& cx) : cx_(cx) {
    for (size_t k = 0; k < cx.conv_stages.size(); ++k) {
      by_node_[cx.conv_stages[k].node] = k;
      by_result_[cx.conv_stages[k].result] = k;
      for (const ir::Node* e : cx.epilogue(cx.conv_stages[k].node)) fused_into_[e] = k;
    }
    for (size_t k = 0; k < cx.pool_stages.size(); ++k) {
      pool_by_node_[cx.pool_stages[k].node] = k;
      pool_by_result_[cx.pool_stages[k].result] = k;
    }
    for (const OutputInfo& o : cx.outputs) output_funcs_[o.func.name()] = !o.internal_strides.empty();
    const std::vector<ir::Node*> order = cx.model().graph.topological_order();
    for (size_t k = 0; k < order.size(); ++k) position_[order[k]] = k;
  }

  void run() {
    const LayoutPolicy policy = cx_.options().layouts;
    std::vector<bool>& out_cl = out_cl_;
    out_cl.assign(cx_.conv_stages.size(), false);
    std::vector<std::string> why(cx_.conv_stages.size());
    for (size_t k = 0; k < cx_.conv_stages.size(); ++k) {
      const ConvStage& st = cx_.conv_stages[k];
      if (st.gpu) {
        why[k] = "NCHW: the gpu family reads and writes NCHW";
      } else if (auto o = output_funcs_.find(st.storage.name()); o != output_funcs_.end() && o->second) {
        out_cl[k] = true;
        why[k] = "channels innermost: a channels-last graph output, computed straight into the caller's buffer";
      } else if (o != output_funcs_.end()) {
        why[k] = "NCHW: a graph output, computed straight into the caller's NCHW buffer";
      } else if (policy == LayoutPolicy::Nchw) {
        why[k] = "NCHW: --layouts=nchw";
      } else if (policy == LayoutPolicy::ChannelsLast) {
        out_cl[k] = true;
        why[k] = "channels innermost: --layouts=nhwc";
      } else if (!st.channels_family) {
        why[k] = "NCHW: the rows family writes x vectors";
      } else if (st.lanes && !st.depthwise) {
        // Measured: a depthwise-separable block (model-layouts) ran 8% slower
        // with its depthwise results channels innermost than NCHW (before
        // the depthwise form, which stores channel vectors).
        why[k] = "NCHW: the lanes family's results are stored NCHW (channels innermost measured slower)";
      } else {
        Readers r;
        std::set<const ir::Value*> seen;
        collect(st.result, r, seen);
        if (r.blocker.empty() && r.convs.empty() && r.edges.empty() && r.epilogues.empty() && r.globals.empty())
          r.blocker = "nothing reads it";
        if (r.blocker.empty()) {
          out_cl[k] = true;
          why[k] = "channels innermost: read only by";
          if (!r.convs.empty()) why[k] += " channels-family convs";
          for (size_t j = 0; j < r.convs.size(); ++j) why[k] += (j ? ", " : " ") + quoted(r.convs[j]);
          if (!r.convs.empty() && !r.epilogues.empty()) why[k] += " and";
          if (!r.epilogues.empty()) why[k] += " the epilogues of channels-family convs";
          for (size_t j = 0; j < r.epilogues.size(); ++j) why[k] += (j ? ", " : " ") + quoted(r.epilogues[j]);
          if ((!r.convs.empty() || !r.epilogues.empty()) && !r.globals.empty()) why[k] += " and";
          if (!r.globals.empty()) why[k] += " global pools";
          for (size_t j = 0; j < r.globals.size(); ++j) why[k] += (j ? ", " : " ") + quoted(r.globals[j]);
          if ((!r.convs.empty() || !r.epilogues.empty() || !r.globals.empty()) && !r.edges.empty()) why[k] += " and";
          for (size_t j = 0; j < r.edges.size(); ++j)
            why[k] += (j ? ", '" : " channels-last graph output '") + r.edges[j] + "'";
        } else {
          why[k] = "NCHW: " + r.blocker;
        }
      }
    }
    // A pool stores channels innermost where its input is (its readers
    // were checked with the conv's: collect walks through pools) and it is
    // no graph output; in graph order, so a pool reading a pool knows.
    pool_cl_.clear();
    std::vector<std::pair<size_t, std::string>> lines;  // graph position, line
    for (PoolStage& p : cx_.pool_stages) {
      std::set<const ir::Value*> seen;
      const ir::Node* from = nullptr;
      const bool output_nchw = p.result->is_graph_output && !cx_.options().channels_last_edges.count(p.result->name);
      const bool cl = cx_.options().pool_layouts && (p.global || !output_nchw) &&
                      traced_channels_innermost(p.node->inputs[0], seen, from);
      // A global pool's result is no channels-innermost tensor to its readers
      // (at 1 x 1, NCHW is the same order).
      pool_cl_.push_back(cl && !p.global);
      cx_.stored_layouts[p.result] = cl && !p.global;
      p.schedule(cl);
      std::string line = "node " + quoted(p.node) + " -> '" + p.result->name + "': result ";
      if (p.global) line += std::string("(N, C, 1, 1); input read ") +
                            (cl ? "channels innermost from " + source(p.node->inputs[0], from) : std::string("NCHW"));
      else if (cl) line += "channels innermost: its input is, from " + source(p.node->inputs[0], from);
      else if (!cx_.options().pool_layouts) line += "NCHW: pool layouts are off";
      else if (output_nchw) line += "NCHW: a graph output";
      else line += "NCHW: its input is NCHW";
      lines.emplace_back(position(p.node), line);
    }
    for (size_t k = 0; k < cx_.conv_stages.size(); ++k) {
      ConvStage& st = cx_.conv_stages[k];
      std::set<const ir::Value*> seen;
      const ir::Node* from = nullptr;
      const bool in_cl = !st.gpu && traced_channels_innermost(st.node->inputs[0], seen, from);
      st.schedule(in_cl, out_cl[k]);
      std::string line = "node " + quoted(st.node) + " -> '" + st.node->outputs[0]->name + "': result " + why[k] +
                         "; input ";
      line += in_cl ? "read channels innermost from " + source(st.node->inputs[0], from) : std::string("read NCHW");
      cx_.stored_layouts[st.result] = out_cl[k];
      lines.emplace_back(position(st.node), line);
    }
    // The lines in graph order.
    std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& l : lines) cx_.layout_explanations.push_back(std::move(l.second));
  }

 private:
  // The channels-family conv whose epilogue holds n, when n reads v as its
  // other operand (not the chain's value: v is produced by neither the conv
  // nor an earlier node of its chain); else null.
  const ir::Node* epilogue_operand_reader(const ir::Value* v, const ir::Node* n) const {
    auto it = fused_into_.find(n);
    if (it == fused_into_.end()) return nullptr;
    const ConvStage& p = cx_.conv_stages[it->second];
    if (!p.channels_family || (p.lanes && !p.depthwise) || p.gpu) return nullptr;
    if (v->producer == p.node) return nullptr;
    if (auto f = fused_into_.find(v->producer); f != fused_into_.end() && f->second == it->second) return nullptr;
    return p.node;
  }

  // What a channels-innermost input was traced to: the conv or pool that
  // stored it, or the graph input an earlier model part stored so.
  static std::string source(const ir::Value* input, const ir::Node* from) {
    return from ? quoted(from) : "input '" + input->name + "' (stored channels innermost by an earlier part)";
  }

  bool is_global_pool(const ir::Node* n) const {
    auto it = pool_by_node_.find(n);
    return it != pool_by_node_.end() && cx_.pool_stages[it->second].global;
  }

  size_t position(const ir::Node* n) const {
    auto it = position_.find(n);
    return it == position_.end() ? position_.size() : it->second;
  }

  // The readers of v, through layout-transparent ops.
  void collect(const ir::Value* v, Readers& r, std::set<const ir::Value*>& seen) {
    if (!r.blocker.empty() || !seen.insert(v).second) return;
    if (v->is_graph_output && !cx_.options().channels_last_edges.count(v->name)) {
      r.blocker = "'" + v->name + "' is a graph output (NCHW)";
      return;
    }
    if (v->is_graph_output) r.edges.push_back(v->name);
    for (const ir::Use& u : v->uses) {
      const ir::Node* n = u.node;
      if (n->dead) continue;
      if (auto it = by_node_.find(n); it != by_node_.end()) {
        const ConvStage& reader = cx_.conv_stages[it->second];
        if (u.index != 0) {
          r.blocker = "read as a weight by " + quoted(n);
        } else if (!reader.channels_family) {
          r.blocker = "read by " + quoted(n) + ", a rows-family conv (it reads x vectors)";
        } else {
          r.convs.push_back(n);
        }
      } else if (const ir::Node* p = epilogue_operand_reader(v, n)) {
        // Read beside a channels-family conv's own value as that conv
        // stores its register tiles: a vector of channels at a time,
        // whatever the conv's own result's layout.
        if (std::find(r.epilogues.begin(), r.epilogues.end(), p) == r.epilogues.end()) r.epilogues.push_back(p);
      } else if (is_global_pool(n) && u.index == 0 && cx_.options().pool_layouts) {
        r.globals.push_back(n);  // its (N, C, 1, 1) result is the same in either order
      } else if (cx_.is_fused(n) || layout_transparent(*n) ||
                 (cx_.options().pool_layouts && pool_by_node_.count(n) && u.index == 0)) {
        // (A pool reads a channels-innermost input in channel vectors and
        // then stores its own result so: its readers decide.)
        for (const ir::Value* o : n->outputs)
          if (o) collect(o, r, seen);
      } else {
        r.blocker = "read by " + quoted(n) + ", which reads NCHW";
      }
      if (!r.blocker.empty()) return;
    }
  }

  // Whether a conv or pool result stored channels innermost reaches v
  // through layout-transparent ops (then the conv reading v copies its
  // padded input in channel vectors); `from` names that conv or pool.
  bool traced_channels_innermost(const ir::Value* v, std::set<const ir::Value*>& seen, const ir::Node*& from) {
    if (!v || !seen.insert(v).second) return false;
    if (v->is_graph_input && cx_.options().stored_input_edges.count(v->name)) return true;
    if (auto it = by_result_.find(v); it != by_result_.end()) {
      if (out_cl_[it->second]) from = cx_.conv_stages[it->second].node;
      return out_cl_[it->second];
    }
    if (auto it = pool_by_result_.find(v); it != pool_by_result_.end()) {
      const bool cl = it->second < pool_cl_.size() && pool_cl_[it->second];
      if (cl) from = cx_.pool_stages[it->second].node;
      return cl;
    }
    const ir::Node* p = v->producer;
    if (!p || !(cx_.is_fused(p) || layout_transparent(*p))) return false;
    for (const ir::Value* in : p->inputs)
      if (in && !in->constant && traced_channels_innermost(in, seen, from)) return true;
    return false;
  }

  LoweringContext& cx_;
  std::map<const ir::Node*, size_t> by_node_;
  std::map<const ir::Value*, size_t> by_result_;
  std::map<const ir::Node*, size_t> pool_by_node_;
  std::map<const ir::Value*, size_t> pool_by_result_;
  std::map<const ir::Node*, size_t> fused_into_;  // a node of a conv's epilogue -> that conv's stage
  std::map<const ir::Node*, size_t> position_;  // in the graph's topological order
  std::vector<bool> out_cl_, pool_cl_;  // each conv's and each pool's result channels innermost
  std::map<std::string, bool> output_funcs_;  // output Funcs: true where written channels-last in place
};

}  // namespace

std::optional<LayoutPolicy> parse_layout_policy(const std::string& s) {
  if (s == "auto") return LayoutPolicy::Auto;
  if (s == "nchw") return LayoutPolicy::Nchw;
  if (s == "nhwc") return LayoutPolicy::ChannelsLast;
  return std::nullopt;
}

const char* layout_policy_name(LayoutPolicy p) {
  switch (p) {
    case LayoutPolicy::Auto: return "auto";
    case LayoutPolicy::Nchw: return "nchw";
    case LayoutPolicy::ChannelsLast: return "nhwc";
  }
  return "auto";
}

void plan_layouts(LoweringContext& cx) { Planner(cx).run(); }

}  // namespace batchconv::compiler
