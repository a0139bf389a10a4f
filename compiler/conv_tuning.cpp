#include "conv_tuning.h"

#include <unistd.h>

#include <sstream>
#include <stdexcept>

#include "lowering_context.h"
#include "target_facts.h"

namespace batchconv::compiler {

ConvTuning load_conv_tuning(const std::string& path, bool force) {
  if (access(path.c_str(), F_OK) != 0) throw Error("--tuning " + path + ": no such file");
  ConvTuning t;
  t.path = path;
  t.force = force;
  t.machine = batchconv_tune::machine_model();
  try {
    t.db = batchconv_tune::read_db(path);
  } catch (const batchconv_tune::DbError& e) {
    throw Error(std::string("--tuning: ") + e.what());
  }
  return t;
}

std::string tuning_target_name(const Halide::Target& t) {
  std::stringstream names(BATCHCONV_KERNEL_TARGETS);
  std::string name;
  while (std::getline(names, name, ',')) {
    if (name.empty() || !Halide::Target::validate_target_string(name)) continue;
    const Halide::Target k(name);
    if (k.os != t.os || k.arch != t.arch || k.bits != t.bits) continue;
    bool has_all = true;
    for (int f = 0; f < Halide::Target::FeatureEnd; ++f) {
      const auto feature = static_cast<Halide::Target::Feature>(f);
      if (k.has_feature(feature) && !t.has_feature(feature)) has_all = false;
    }
    if (has_all) return name;
  }
  return t.to_string();
}

ConvScheduleChoice choose_conv_schedule_tuned(const batchconv_gen::ConvProblem& q, const Halide::Target& target,
                                              const ConvTuning* tuning, const std::string& where) {
  using namespace batchconv_gen;
  const TargetFacts facts = target_facts(target);
  const std::string variant = tuning ? tuning_target_name(target) : target.to_string();
  ConvScheduleChoice out;
  const batchconv_tune::Record* r = nullptr;
  const std::string op = conv_op_name(q.op), shape = tuning_shape_key(q);
  if (tuning) {
    try {
      r = batchconv_tune::lookup(tuning->db, op, shape, variant, tuning->machine, tuning->force);
    } catch (const batchconv_tune::DbError& e) {
      throw Error(where + ": " + tuning->path + ": " + e.what());
    }
  }
  if (!r || r->source == "default") {
    const ConvChoice c = choose_conv_schedule(q, facts);
    out.schedule = c.schedule;
    out.explanation = std::string(family_name(c.schedule.family)) + " (chooser: " + c.reason + ")";
    if (r) out.explanation += "; the tuning record found the default fastest";
    else if (tuning) out.explanation += "; no tuning record of " + op + " [" + shape + "] for " + variant;
    return out;
  }
  const std::string record = tuning->path + ": the record of " + op + " [" + shape + "] for " + r->key.target;
  ConvSchedule s;
  try {
    s = parse_conv_schedule(r->point);
  } catch (const std::invalid_argument& e) {
    throw Error(where + ": " + record + ": point \"" + r->point + "\": " + e.what());
  }
  if ((s.family == ConvFamily::Gpu) != target.has_gpu_feature())
    throw Error(where + ": " + record + ": point \"" + r->point + "\" is of the " + family_name(s.family) +
                " family, for " + (s.family == ConvFamily::Gpu ? "GPU" : "CPU") + " targets; " + variant + " is not one");
  s = fill_defaults(s, facts);
  if (const std::string bad = validate_conv_schedule(s, facts); !bad.empty())
    throw Error(where + ": " + record + ": point \"" + r->point + "\" is invalid on " + variant + ": " + bad);
  out.schedule = s;
  out.from_record = true;
  std::ostringstream e;
  e << "tuned " << r->point << " (" << tuning->path << ", " << r->key.target << " on \"" << r->key.machine << "\": "
    << r->time_ms << " ms against the default's " << r->default_ms << " ms";
  if (!batchconv_tune::incompatibility(r->key, tuning->machine, variant).empty()) e << "; forced";
  e << ")";
  out.explanation = e.str();
  return out;
}

std::string tuning_problem_line(const std::string& node, const batchconv_gen::ConvProblem& q) {
  std::string label = node;
  for (char& c : label)
    if (c == ':' || c == '\n' || c == '#') c = ' ';
  const bool one_d = q.in_h == 1 && q.kernel_h == 1 && q.out_h == 1 && q.stride_y == 1 && q.pad_y == 0;
  auto dims = [&](std::vector<int64_t> d, int64_t h, int64_t w) {
    if (!one_d) d.push_back(h);
    d.push_back(w);
    std::string s;
    for (size_t k = 0; k < d.size(); ++k) s += (k ? "x" : "") + std::to_string(d[k]);
    return s;
  };
  auto pair = [&](int64_t h, int64_t w) { return one_d ? std::to_string(w) : std::to_string(h) + "x" + std::to_string(w); };
  // The padding after the last element, from the output size.
  const int64_t end_x = (q.out_w - 1) * q.stride_x + q.dilation_x * (q.kernel_w - 1) + 1 - q.in_w - q.pad_x;
  const int64_t end_y = (q.out_h - 1) * q.stride_y + q.dilation_y * (q.kernel_h - 1) + 1 - q.in_h - q.pad_y;
  const int64_t cin = q.groups * q.cin_g, cout = q.groups * q.cout_g;
  std::string op, x, w;
  switch (q.op) {
    case batchconv_gen::ConvOp::Grouped:
      op = "gconv";
      x = dims({q.n, cin}, q.in_h, q.in_w);
      w = dims({cout, q.cin_g}, q.kernel_h, q.kernel_w);
      break;
    case batchconv_gen::ConvOp::BatchedWeight:
      op = "bwconv";
      x = dims({q.batch, q.n, cin}, q.in_h, q.in_w);
      w = dims({q.batch, cout, q.cin_g}, q.kernel_h, q.kernel_w);
      break;
    case batchconv_gen::ConvOp::BroadcastInput:
      op = "biconv";
      x = dims({q.n, cin}, q.in_h, q.in_w);
      w = dims({q.batch, cout, q.cin_g}, q.kernel_h, q.kernel_w);
      break;
  }
  std::string line = label + ": --op=" + op + " --x=" + x + " --w=" + w;
  if (q.groups != 1) line += " --groups=" + std::to_string(q.groups);
  if (q.stride_x != 1 || q.stride_y != 1) line += " --stride=" + pair(q.stride_y, q.stride_x);
  if (q.dilation_x != 1 || q.dilation_y != 1) line += " --dilation=" + pair(q.dilation_y, q.dilation_x);
  if (q.pad_x || q.pad_y || end_x || end_y)
    line += " --pad-begin=" + pair(q.pad_y, q.pad_x) + " --pad-end=" + pair(std::max<int64_t>(0, end_y), std::max<int64_t>(0, end_x));
  if (q.op == batchconv_gen::ConvOp::BroadcastInput && q.y_banks_outer) line += " --layout=batched";
  return line;
}

}  // namespace batchconv::compiler
