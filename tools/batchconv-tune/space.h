// The part of the schedule space (generators/schedule_space.h) that matters
// for one conv problem, and the moves of the search over it: each family's
// fields that the problem's kernel path reads (the rows family has separate
// depthwise, 1-D and 2-D paths), each with a ladder of values to step along.
// A cheap analytical filter rejects points before anything is compiled.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "conv_chooser.h"
#include "schedule_space.h"

namespace batchconv_tune {

using batchconv_gen::ConvFamily;
using batchconv_gen::ConvProblem;
using batchconv_gen::ConvSchedule;
using batchconv_gen::TargetFacts;

struct Axis {
  int ConvSchedule::*member;
  const char* name;
  std::vector<int> values;  // the ladder, ascending
};

class Space {
 public:
  // `problem` as the kernel sees it (the generator the call site runs).
  Space(const ConvProblem& problem, const TargetFacts& facts);

  const std::vector<Axis>& axes(ConvFamily f) const;
  ConvSchedule default_point(ConvFamily f) const;
  // A uniformly drawn point of family f (every axis on its ladder).
  ConvSchedule random_point(ConvFamily f, std::mt19937_64& rng) const;
  // `p` with one or two axes moved one step (or, rarely, anywhere) on their ladders.
  ConvSchedule mutate(const ConvSchedule& p, std::mt19937_64& rng) const;

  // "" when `p` passes the filter, else why not: an invalid point (the
  // schedule space's own validation, naming the field), a tile much larger
  // than the problem (lanes that compute nothing), a working set far beyond
  // the cache.
  std::string reject_reason(const ConvSchedule& p) const;

  // Canonical text: defaults filled in, so equal points compare equal.
  std::string canonical(const ConvSchedule& p) const;

 private:
  ConvProblem p_;
  TargetFacts facts_;
  std::vector<Axis> rows_, channels_;
};

}  // namespace batchconv_tune
