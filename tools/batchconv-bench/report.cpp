#include "report.h"

#include <cmath>
#include <cstdio>

namespace bcbench {

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else o += c;
  }
  return o;
}

std::string share_of_limit(const Problem& p, const MachineLimits& m, double ms) {
  std::string bound;
  const double f = floor_ms(p, m, &bound);
  if (f <= 0 || ms <= 0) return "-";
  char s[32];
  std::snprintf(s, sizeof s, "%.0f%% %s", 100.0 * f / ms, bound.c_str());
  return s;
}

std::string desc_string(const Problem& p) {
  const auto& d = p.spec.desc;
  std::string s;
  if (p.spec.op != Op::BatchedLinear) {
    const ConvGeom& g = p.slice;
    auto pair = [&](int64_t a, int64_t b) {
      return g.one_d ? std::to_string(b) : std::to_string(a) + "x" + std::to_string(b);
    };
    s += "stride=" + pair(g.sh, g.sw) + " dilation=" + pair(g.dh, g.dw) + " pad-begin=" + pair(g.pt, g.pl) +
         " pad-end=" + pair(g.pb, g.pr) + " groups=" + std::to_string(d.groups);
    if (p.spec.op == Op::BroadcastInputConv)
      s += p.spec.layout == batchconv::BroadcastLayout::Concatenated ? " layout=concat" : " layout=batched";
  }
  if (p.spec.bias) s += " bias";
  if (d.activation == batchconv::Activation::ReLU) s += " relu";
  return s.empty() ? "-" : s;
}

namespace {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

}  // namespace

void print_text(const ReportContext& c, const std::vector<MethodResult>& r) {
  const Problem& p = *c.problem;
  std::printf("op %s  x=%s w=%s -> y=%s  %s\n", op_name(p.spec.op), shape_str(p.spec.x_shape).c_str(),
              shape_str(p.spec.w_shape).c_str(), shape_str(p.y_shape).c_str(), desc_string(p).c_str());
  std::printf("%.4g GFLOP, inputs+output %s; threads %d; batchconv target %s\n", p.flops / 1e9,
              human_bytes(p.io_bytes).c_str(), c.threads, c.target.c_str());
  if (c.limits.fma_gflops > 0) {
    std::string bound;
    const double f = floor_ms(p, c.limits, &bound);
    std::printf("limits: peak FMA %.0f GFLOP/s (%s), copy %.1f GB/s -> floor %.3f ms (%s-bound)\n",
                c.limits.fma_gflops, c.limits.fma_isa.c_str(), c.limits.copy_gbs, f, bound.c_str());
  }
  std::printf("check: %s (reference %.2f s), tolerance %.0e\n\n", c.plan->how.c_str(), c.plan->ref_seconds,
              c.tol);
  const MethodResult* peer = best_onednn(r);
  std::printf("%-34s %10s %10s %9s %9s %11s %10s %9s\n", "method", "median ms", "min ms", "GFLOP/s",
              "of limit", "extra mem", "max relerr", "vs oneDNN");
  for (const auto& m : r) {
    if (!m.error.empty()) {
      std::printf("%-34s ERROR: %s\n", m.name.c_str(), m.error.c_str());
      continue;
    }
    std::string err = m.checked ? fmt("%.1e", m.max_rel_err) + (m.pass ? "" : "!") : "-";
    std::string vs = peer ? fmt("%.2fx", peer->timing.median_ms / m.timing.median_ms) : "-";
    std::printf("%-34s %10.3f %10.3f %9.1f %9s %11s %10s %9s\n", m.name.c_str(), m.timing.median_ms,
                m.timing.min_ms, m.gflops, share_of_limit(p, c.limits, m.timing.median_ms).c_str(),
                human_bytes(static_cast<double>(m.extra_bytes)).c_str(), err.c_str(), vs.c_str());
  }
  std::printf("\n");
  for (const auto& m : r) {
    const char* impl_label = m.family == Family::Onednn ? "  [oneDNN impl: " : "  [runs on: ";
    std::printf("  %-32s %s%s%s%s\n", m.name.c_str(), m.what.c_str(), m.impl.empty() ? "" : impl_label,
                m.impl.c_str(), m.impl.empty() ? "" : "]");
  }
  if (peer) std::printf("vs oneDNN = (fastest oneDNN full-op method: %s) median / this median; >1 is faster\n",
                        peer->name.c_str());
  std::printf("extra mem = peak heap bytes above the state before the method's setup (see --help)\n");
}

void print_json(const ReportContext& c, const std::vector<MethodResult>& r) {
  const Problem& p = *c.problem;
  const MethodResult* peer = best_onednn(r);
  std::printf("{\n  \"op\": \"%s\", \"x\": \"%s\", \"w\": \"%s\", \"y\": \"%s\", \"desc\": \"%s\",\n",
              op_name(p.spec.op), shape_str(p.spec.x_shape).c_str(), shape_str(p.spec.w_shape).c_str(),
              shape_str(p.y_shape).c_str(), json_escape(desc_string(p)).c_str());
  std::printf("  \"gflop\": %.6g, \"io_bytes\": %.0f, \"threads\": %d, \"target\": \"%s\",\n", p.flops / 1e9,
              p.io_bytes, c.threads, json_escape(c.target).c_str());
  std::printf("  \"limits\": {\"fma_gflops\": %.1f, \"copy_gbs\": %.2f, \"floor_ms\": %.4f},\n",
              c.limits.fma_gflops, c.limits.copy_gbs, floor_ms(p, c.limits, nullptr));
  std::printf("  \"check\": \"%s\", \"tolerance\": %g,\n  \"methods\": [\n", json_escape(c.plan->how).c_str(),
              c.tol);
  for (size_t i = 0; i < r.size(); ++i) {
    const auto& m = r[i];
    std::printf("    {\"name\": \"%s\", \"what\": \"%s\", \"impl\": \"%s\", \"full_op\": %s", m.name.c_str(),
                json_escape(m.what).c_str(), json_escape(m.impl).c_str(), m.full_op ? "true" : "false");
    if (!m.error.empty()) {
      std::printf(", \"error\": \"%s\"}", json_escape(m.error).c_str());
    } else {
      std::printf(", \"median_ms\": %.6g, \"min_ms\": %.6g, \"reps\": %zu, \"gflops\": %.4g", m.timing.median_ms,
                  m.timing.min_ms, m.timing.ms.size(), m.gflops);
      std::printf(", \"extra_bytes\": %lld, \"rss_extra_bytes\": %lld", static_cast<long long>(m.extra_bytes),
                  static_cast<long long>(m.rss_extra_bytes));
      if (m.checked) std::printf(", \"max_rel_err\": %.3g, \"pass\": %s", m.max_rel_err, m.pass ? "true" : "false");
      if (peer) std::printf(", \"speedup_vs_onednn\": %.4g", peer->timing.median_ms / m.timing.median_ms);
      std::printf("}");
    }
    std::printf("%s\n", i + 1 < r.size() ? "," : "");
  }
  std::printf("  ],\n  \"onednn_peer\": \"%s\"\n}\n", peer ? peer->name.c_str() : "");
}

}  // namespace bcbench
