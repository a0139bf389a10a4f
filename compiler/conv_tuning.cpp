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
  if (s.family == ConvFamily::Gpu)
    throw Error(where + ": " + record + ": point \"" + r->point + "\" is of the gpu family; the compiler builds CPU code");
  s = fill_defaults(s, facts);
  if (const std::string bad = validate_conv_schedule(s, facts); !bad.empty())
    throw Error(where + ": " + record + ": point \"" + r->point + "\" is invalid on " + variant + ": " + bad);
  out.schedule = s;
  std::ostringstream e;
  e << "tuned " << r->point << " (" << tuning->path << ", " << r->key.target << " on \"" << r->key.machine << "\": "
    << r->time_ms << " ms against the default's " << r->default_ms << " ms";
  if (!batchconv_tune::incompatibility(r->key, tuning->machine, variant).empty()) e << "; forced";
  e << ")";
  out.explanation = e.str();
  return out;
}

}  // namespace batchconv::compiler
