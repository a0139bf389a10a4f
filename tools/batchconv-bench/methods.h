// The methods batchconv-bench times for one problem: batchconv's own op, the
// oneDNN peers, and the naive formulations a user writes without batchconv.
// Every method writes the op's output into problem.y in the op's layout, so
// all are checked the same way.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "problem.h"

namespace bcbench {

enum class Family { Batchconv, Onednn, Naive };

class Method {
 public:
  virtual ~Method() = default;
  // Allocations, primitive creation, weight re-packing: done once, not timed,
  // but counted in the method's peak extra memory.
  virtual void setup(Problem&) {}
  // One timed run.
  virtual void run(Problem&) = 0;
  // After timing, before the check (untimed): e.g. reorder a blocked result
  // back into problem.y.
  virtual void finish(Problem&) {}

  std::string name;   // short id used by --methods, e.g. "onednn:grouped-trick"
  std::string what;   // one line: what it computes and how
  Family family = Family::Batchconv;
  // True when run() computes the whole op from/to the NCHW tensors in problem
  // (false for "conv only" rows whose layout changes happen outside the timing).
  bool full_op = true;
  std::string impl;  // extra detail filled in by setup (oneDNN's kernel name)
};

using MethodList = std::vector<std::unique_ptr<Method>>;

// All methods that apply to problem p (its op, layout, groups).
MethodList make_methods(const Problem& p);

// Factories by family (methods_*.cpp).
void add_batchconv_methods(const Problem& p, MethodList* out);
void add_onednn_methods(const Problem& p, MethodList* out);
void add_linear_methods(const Problem& p, MethodList* out);
// batchconv@opencl / batchconv@cuda when p.spec.device asks (methods_device.cpp; GPU builds only).
void add_device_methods(const Problem& p, MethodList* out);

}  // namespace bcbench
