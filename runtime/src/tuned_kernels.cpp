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
  std::atomic<uint64_t> version{0};  // bumped by every change (invalidates the per-thread cache)
};

Registry& registry() {
  static Registry* r = new Registry;  // outlives static destructors of kernel libraries
  return *r;
}

thread_local batchconv_gen::ConvProblem t_problem;
thread_local bool t_have_problem = false;
thread_local std::shared_ptr<const TunedConvKernel> t_current;
thread_local std::string t_kernel = "none";
// The last lookup of this thread: repeated calls of one shape skip building the key.
thread_local batchconv_gen::ConvProblem t_cached_problem;
thread_local uint64_t t_cached_version = ~uint64_t{0};
thread_local std::shared_ptr<const TunedConvKernel> t_cached;

bool same_problem(const batchconv_gen::ConvProblem& a, const batchconv_gen::ConvProblem& b) {
  return a.op == b.op && a.batch == b.batch && a.n == b.n && a.groups == b.groups &&
         a.cin_g == b.cin_g && a.cout_g == b.cout_g && a.in_w == b.in_w && a.in_h == b.in_h &&
         a.out_w == b.out_w && a.out_h == b.out_h && a.kernel_w == b.kernel_w &&
         a.kernel_h == b.kernel_h && a.stride_x == b.stride_x && a.stride_y == b.stride_y &&
         a.dilation_x == b.dilation_x && a.dilation_y == b.dilation_y && a.pad_x == b.pad_x &&
         a.pad_y == b.pad_y && a.x_channels_last == b.x_channels_last &&
         a.y_channels_last == b.y_channels_last && a.y_banks_outer == b.y_banks_outer;
}

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
  if (k.family != "rows" && k.family != "channels" && k.family != "lanes")
    throw Error("register_tuned_conv_kernel: family '" + k.family + "' of " + k.name +
                " is not rows, channels or lanes");
  if (!k.fn) throw Error("register_tuned_conv_kernel: " + k.name + " has a null function");
  if (k.shape_key.empty())
    throw Error("register_tuned_conv_kernel: " + k.name + " has no shape key");
  if (!k.target.empty() && k.target != selected_target()) return false;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.kernels[{k.op, k.shape_key}] = std::make_shared<const TunedConvKernel>(k);
  r.count = r.kernels.size();
  ++r.version;
  return true;
}

void clear_tuned_conv_kernels() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.kernels.clear();
  r.count = 0;
  ++r.version;
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
  const uint64_t version = r.version.load();
  if (version != t_cached_version || !same_problem(p, t_cached_problem)) {
    const Key key{batchconv_gen::conv_op_name(p.op), batchconv_gen::tuning_shape_key(p)};
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.kernels.find(key);
    t_cached = it == r.kernels.end() ? nullptr : it->second;
    t_cached_problem = p;
    t_cached_version = r.version.load();
  }
  t_current = t_cached;
  return t_current.get();
}

void settle_tuned_kernel(const std::string& family) {
  if (t_current && t_current->family != family) t_current.reset();
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
