#include "tuned_kernels.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "batchconv/batchconv.h"

namespace batchconv {

namespace {

using Key = std::pair<std::string, std::string>;  // (op, shape key)

struct Registry {
  std::mutex mu;
  // Shared so that a call on another thread keeps a replaced entry alive.
  std::map<Key, std::shared_ptr<const TunedConvKernel>> kernels;
  std::atomic<size_t> count{0};
};

Registry& registry() {
  static Registry* r = new Registry;  // outlives static destructors of kernel libraries
  return *r;
}

thread_local batchconv_gen::ConvProblem t_problem;
thread_local bool t_have_problem = false;
thread_local std::shared_ptr<const TunedConvKernel> t_current;
thread_local std::string t_kernel = "none";

bool known_op(const std::string& s) {
  return s == "grouped_conv" || s == "batched_weight_conv" || s == "broadcast_input_conv";
}

}  // namespace

bool register_tuned_conv_kernel(const TunedConvKernel& k) {
  if (!known_op(k.op))
    throw Error("register_tuned_conv_kernel: op '" + k.op +
                "' is not grouped_conv, batched_weight_conv or broadcast_input_conv");
  if (!known_op(k.generator))
    throw Error("register_tuned_conv_kernel: generator '" + k.generator + "' of " + k.name +
                " is not grouped_conv, batched_weight_conv or broadcast_input_conv");
  if (k.family != "rows" && k.family != "channels")
    throw Error("register_tuned_conv_kernel: family '" + k.family + "' of " + k.name +
                " is not rows or channels");
  if (!k.fn) throw Error("register_tuned_conv_kernel: " + k.name + " has a null function");
  if (k.shape_key.empty())
    throw Error("register_tuned_conv_kernel: " + k.name + " has no shape key");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.kernels[{k.op, k.shape_key}] = std::make_shared<const TunedConvKernel>(k);
  r.count = r.kernels.size();
}

void clear_tuned_conv_kernels() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.kernels.clear();
  r.count = 0;
}

size_t tuned_conv_kernel_count() { return registry().count.load(); }

std::string last_conv_shape_key() {
  return t_have_problem ? batchconv_gen::tuning_shape_key(t_problem) : std::string();
}

std::string last_conv_kernel() { return t_kernel; }

namespace detail {

const TunedConvKernel* find_tuned_kernel(const batchconv_gen::ConvProblem& p) {
  t_problem = p;
  t_have_problem = true;
  t_current.reset();
  Registry& r = registry();
  if (r.count.load() == 0) return nullptr;
  const Key key{batchconv_gen::conv_op_name(p.op), batchconv_gen::tuning_shape_key(p)};
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.kernels.find(key);
  if (it == r.kernels.end()) return nullptr;
  t_current = it->second;
  return t_current.get();
}

void settle_tuned_kernel(bool channels) {
  if (t_current && (t_current->family == "channels") != channels) t_current.reset();
}

ConvKernelFn conv_kernel(const char* generator, ConvKernelFn fallback, const char* fallback_name) {
  if (t_current && t_current->generator == generator) {
    t_kernel = t_current->name;
    return t_current->fn;
  }
  t_kernel = fallback_name;
  return fallback;
}

}  // namespace detail

}  // namespace batchconv
