// Tuned conv schedules for the compiler (--tuning=DB): a conv whose op and
// shape the tuning database has a record of for the variant's target is
// scheduled with that record's point instead of the chooser's. The key is
// the runtime's (conv_op_name, tuning_shape_key), so a database tuned
// through the runtime's kernels applies to the same convs in a model.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "conv_chooser.h"
#include "tuning_db.h"

namespace batchconv::compiler {

struct ConvTuning {
  std::string path;  // for messages
  batchconv_tune::Database db;
  std::string machine;  // this machine's CPU model (batchconv_tune::machine_model)
  bool force = false;   // use records of another machine or target (--force-tuning)
};

// Reads the database; a corrupt one is an Error "FILE:LINE: what is wrong",
// a missing one an Error naming it.
ConvTuning load_conv_tuning(const std::string& path, bool force);

// The name the tuning database gives `t`'s kernels: the first of the AOT
// kernel targets (BATCHCONV_HALIDE_TARGETS, best first) whose features `t`
// has ("host" on an AVX-512 machine is x86-64-linux-avx512_skylake), else
// t.to_string().
std::string tuning_target_name(const Halide::Target& t);

struct ConvScheduleChoice {
  batchconv_gen::ConvSchedule schedule;  // defaults filled in for the target
  std::string explanation;               // one line: what scheduled the conv and why
  bool from_record = false;              // the point is a tuning record's
};

// The chooser's schedule for `q`, or with `tuning` the point of its record
// for `target` (defaults filled, validated). Throws Error starting with
// `where` when the record is refused (another machine or target, unless
// forced) or its point is invalid here.
ConvScheduleChoice choose_conv_schedule_tuned(const batchconv_gen::ConvProblem& q, const Halide::Target& target,
                                              const ConvTuning* tuning, const std::string& where);

// One conv as a batchconv-tune problem line: "label: --op=gconv --x=... --w=...
// --groups=... --stride=HxW --dilation=HxW --pad-begin=HxW --pad-end=HxW"
// (1-D convs with 1-D shapes); the label is `node` without ':'.
std::string tuning_problem_line(const std::string& node, const batchconv_gen::ConvProblem& q);

}  // namespace batchconv::compiler
