#include "ops.h"

namespace batchconv::compiler {
namespace {

const OpRegistry& registry() {
  static const OpRegistry r = [] {
    OpRegistry m;
    register_conv_ops(m);
    register_elementwise_ops(m);
    register_shape_ops(m);
    register_reduction_ops(m);
    register_reduce_axes_ops(m);
    return m;
  }();
  return r;
}

}  // namespace

const OpLowering* find_op_lowering(const std::string& domain, const std::string& op_type) {
  const bool onnx = domain.empty() || domain == "ai.onnx";
  auto it = registry().find(onnx ? op_type : domain + "." + op_type);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> out;
  for (const auto& [name, fn] : registry()) out.push_back(name);
  return out;
}

}  // namespace batchconv::compiler
