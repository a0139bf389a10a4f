// batchconv-bench's output: a text table, or JSON (--json).
#pragma once

#include <string>
#include <vector>

#include "runner.h"

namespace bcbench {

struct ReportContext {
  const Problem* problem = nullptr;
  const CheckPlan* plan = nullptr;
  MachineLimits limits;
  std::string target;  // batchconv::selected_target()
  int threads = 0;
  double tol = 1e-5;
};

void print_text(const ReportContext& c, const std::vector<MethodResult>& r);
void print_json(const ReportContext& c, const std::vector<MethodResult>& r);

std::string json_escape(const std::string& s);
// "62% bw" / "83% fma" share of the binding limit, or "-" when unknown.
std::string share_of_limit(const Problem& p, const MachineLimits& m, double ms);
std::string desc_string(const Problem& p);  // "stride=1x1 pad=1,1,1,1 dil=1x1 groups=1 bias relu"

}  // namespace bcbench
