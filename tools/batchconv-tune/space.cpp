#include "space.h"

#include <algorithm>
#include <cstdlib>

namespace batchconv_tune {

namespace {

using S = ConvSchedule;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

Space::Space(const ConvProblem& problem, const TargetFacts& facts) : p_(problem), facts_(facts) {
  const std::vector<int> kb{16, 32, 64, 128, 256, 512, 1024, 2048};
  if (p_.cin_g == 1 && p_.cout_g == 1) {  // depthwise path
    rows_ = {{&S::dw_vectors, "dw_vectors", {1, 2, 3, 4}},
             {&S::dw_rows, "dw_rows", {1, 2, 3, 4, 6, 8}},
             {&S::dw_planes, "dw_planes", {1, 2, 4, 8, 16, 32}},
             {&S::dw_task_cols, "dw_task_cols", {1, 2, 4, 8, 16, 32}},
             {&S::dw_task_rows, "dw_task_rows", {1, 2, 4, 8, 16, 32, 64}}};
  } else if (p_.out_h == 1) {  // 1-D path
    rows_ = {{&S::wide_vectors, "wide_vectors", {1, 2, 3, 4, 6, 8}},
             {&S::wide_channels, "wide_channels", {1, 2, 3, 4, 6, 8, 12, 16}},
             {&S::wide_task_input_kb, "wide_task_input_kb", kb}};
  } else {  // 2-D paths
    rows_ = {{&S::row_vectors, "row_vectors", {1, 2, 3, 4}},
             {&S::row_rows, "row_rows", {1, 2, 3, 4, 5, 6, 8}},
             {&S::row_channels, "row_channels", {1, 2, 3, 4, 6, 8, 12, 16}},
             {&S::task_input_kb, "task_input_kb", kb},
             {&S::task_max_rows, "task_max_rows", {1, 2, 4, 8, 16, 32, 64}}};
  }
  channels_ = {{&S::ch_vectors, "ch_vectors", {1, 2, 3, 4}},
               {&S::ch_columns, "ch_columns", {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14}},
               {&S::ch_task_rows, "ch_task_rows", {1, 2, 4, 8, 16}},
               {&S::ch_task_channels, "ch_task_channels", {0, 32, 64, 128, 256}},
               {&S::task_input_kb, "task_input_kb", kb},
               {&S::ch_unroll_kx, "ch_unroll_kx", {0, 1}},
               {&S::ch_ci_block, "ch_ci_block", {0, 4, 8, 16, 32, 64}},
               {&S::ch_blocked, "ch_blocked", {0, 1}},
               {&S::ch_direct, "ch_direct", {0, 1}},
               {&S::ch_fit_rows, "ch_fit_rows", {0, 1}}};
}

const std::vector<Axis>& Space::axes(ConvFamily f) const {
  return f == ConvFamily::Channels ? channels_ : rows_;
}

ConvSchedule Space::default_point(ConvFamily f) const {
  return batchconv_gen::default_conv_schedule(facts_, f);
}

ConvSchedule Space::random_point(ConvFamily f, std::mt19937_64& rng) const {
  ConvSchedule s = default_point(f);
  for (const Axis& a : axes(f)) {
    std::uniform_int_distribution<size_t> pick(0, a.values.size() - 1);
    s.*a.member = a.values[pick(rng)];
  }
  return s;
}

ConvSchedule Space::mutate(const ConvSchedule& p, std::mt19937_64& rng) const {
  ConvSchedule s = batchconv_gen::fill_defaults(p, facts_);
  const std::vector<Axis>& ax = axes(s.family);
  std::uniform_int_distribution<size_t> which(0, ax.size() - 1);
  std::uniform_real_distribution<double> u(0, 1);
  const int moves = u(rng) < 0.6 ? 1 : 2;
  for (int m = 0; m < moves; ++m) {
    const Axis& a = ax[which(rng)];
    // The current value's place on the ladder (the nearest rung when off it).
    const int v = s.*a.member;
    size_t i = 0;
    for (size_t k = 0; k < a.values.size(); ++k)
      if (std::abs(a.values[k] - v) < std::abs(a.values[i] - v)) i = k;
    if (u(rng) < 0.15) {
      std::uniform_int_distribution<size_t> any(0, a.values.size() - 1);
      i = any(rng);
    } else if (u(rng) < 0.5) {
      i = i > 0 ? i - 1 : i + 1;
    } else {
      i = i + 1 < a.values.size() ? i + 1 : i - 1;
    }
    s.*a.member = a.values[std::min(i, a.values.size() - 1)];
  }
  return s;
}

std::string Space::reject_reason(const ConvSchedule& in) const {
  const ConvSchedule s = batchconv_gen::fill_defaults(in, facts_);
  const std::string invalid = batchconv_gen::validate_conv_schedule(s, facts_);
  if (!invalid.empty()) return invalid;
  const int vec = facts_.vector_floats;
  const int64_t taps = p_.cin_g * p_.kernel_w * p_.kernel_h;
  if (s.family == ConvFamily::Channels) {
    // Lanes: a tile of more channel vectors than Cout_g has computes nothing
    // in the extra ones; more columns than the output row has, the same.
    if (s.ch_vectors > ceil_div(p_.cout_g, vec))
      return "ch_vectors=" + std::to_string(s.ch_vectors) + " exceeds the " +
             std::to_string(ceil_div(p_.cout_g, vec)) + " vectors of Cout_g=" + std::to_string(p_.cout_g);
    if (s.ch_columns > p_.out_w)
      return "ch_columns=" + std::to_string(s.ch_columns) + " exceeds the output width " + std::to_string(p_.out_w);
    if (s.ch_task_rows > p_.out_h)
      return "ch_task_rows=" + std::to_string(s.ch_task_rows) + " exceeds the output height " +
             std::to_string(p_.out_h);
    if (s.ch_blocked == 1 && p_.cin_g < vec)
      return "ch_blocked=1 with Cin_g=" + std::to_string(p_.cin_g) + " under a block of " + std::to_string(vec) +
             " channels";
    if (s.ch_ci_block > 0 && s.ch_ci_block >= p_.cin_g)
      return "ch_ci_block=" + std::to_string(s.ch_ci_block) + " does not split Cin_g=" + std::to_string(p_.cin_g);
    // Cache: one tile's weights (taps x its channel vectors) should sit in L2.
    const int64_t block_taps = s.ch_ci_block > 0 ? s.ch_ci_block * p_.kernel_w * p_.kernel_h : taps;
    const int64_t weight_bytes = block_taps * s.ch_vectors * vec * 4;
    if (weight_bytes > int64_t(facts_.l2_kb) * 1024)
      return "a tile's weights (" + std::to_string(weight_bytes / 1024) + " KB) exceed L2 (" +
             std::to_string(facts_.l2_kb) + " KB)";
    if (s.task_input_kb > 2 * facts_.l2_kb)
      return "task_input_kb=" + std::to_string(s.task_input_kb) + " is over twice L2";
    return "";
  }
  if (p_.cin_g == 1 && p_.cout_g == 1) {
    if (int64_t(s.dw_vectors) * vec > p_.out_w * 2) return "dw_vectors is much wider than the output";
    if (s.dw_rows > p_.out_h) return "dw_rows exceeds the output height";
    if (s.dw_planes > p_.groups * p_.n) return "dw_planes exceeds the planes there are";
  } else if (p_.out_h == 1) {
    if (int64_t(s.wide_vectors) * vec > p_.out_w) return "wide_vectors is wider than the output";
    if (s.wide_channels > p_.cout_g) return "wide_channels exceeds Cout_g";
  } else {
    if (int64_t(s.row_vectors) * vec > ceil_div(p_.out_w, vec) * vec)
      return "row_vectors is wider than the output row";
    if (s.row_rows > p_.out_h) return "row_rows exceeds the output height";
    if (s.row_channels > p_.cout_g) return "row_channels exceeds Cout_g";
    if (s.task_input_kb > 2 * facts_.l2_kb) return "task_input_kb is over twice L2";
  }
  return "";
}

std::string Space::canonical(const ConvSchedule& p) const {
  // The family's axes explicitly (defaults filled in), every other field unset.
  const ConvSchedule full = batchconv_gen::fill_defaults(p, facts_);
  ConvSchedule out;
  out.family = full.family;
  for (const Axis& a : axes(full.family)) out.*a.member = full.*a.member;
  return batchconv_gen::to_string(out);
}

}  // namespace batchconv_tune
