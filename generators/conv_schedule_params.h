// The schedule point of a conv generator as generator params: `family`
// (rows, channels, lanes or gpu) and
// one int param per field of ConvSchedule, named as the field (0 / -1: the
// target's default). An AOT build or a tuner sets any point with
// `-p ch_vectors=2` or CMake's PARAMS, without touching code.
//
// A member of each conv generator (Halide finds GeneratorParams anywhere
// inside the generator object).
#pragma once

#include <map>
#include <string>

#include "Halide.h"
#include "schedule_space.h"
#include "target_facts.h"

namespace batchconv_gen {

struct ConvScheduleParams {
  template <typename T>
  using Param = Halide::GeneratorParam<T>;
  Param<ConvFamily> family{"family", ConvFamily::Rows,
                           std::map<std::string, ConvFamily>{{"rows", ConvFamily::Rows},
                                                             {"channels", ConvFamily::Channels},
                                                             {"gpu", ConvFamily::Gpu},
                                                             {"lanes", ConvFamily::Lanes}}};
  Param<int> row_vectors{"row_vectors", 0};
  Param<int> row_rows{"row_rows", 0};
  Param<int> row_channels{"row_channels", 0};
  Param<int> task_input_kb{"task_input_kb", 0};
  Param<int> task_max_rows{"task_max_rows", 0};
  Param<int> wide_vectors{"wide_vectors", 0};
  Param<int> wide_channels{"wide_channels", 0};
  Param<int> wide_task_input_kb{"wide_task_input_kb", 0};
  Param<int> dw_vectors{"dw_vectors", 0};
  Param<int> dw_rows{"dw_rows", 0};
  Param<int> dw_planes{"dw_planes", 0};
  Param<int> dw_task_cols{"dw_task_cols", 0};
  Param<int> dw_task_rows{"dw_task_rows", 0};
  Param<int> ch_vectors{"ch_vectors", 0};
  Param<int> ch_columns{"ch_columns", 0};
  Param<int> ch_task_rows{"ch_task_rows", 0};
  Param<int> ch_task_channels{"ch_task_channels", -1};
  Param<int> ch_unroll_kx{"ch_unroll_kx", -1};
  Param<int> ch_ci_block{"ch_ci_block", -1};
  Param<int> ch_blocked{"ch_blocked", -1};
  Param<int> ch_direct{"ch_direct", -1};
  Param<int> ch_fit_rows{"ch_fit_rows", -1};
  Param<int> gpu_threads_x{"gpu_threads_x", 0};
  Param<int> gpu_threads_y{"gpu_threads_y", 0};
  Param<int> gpu_pixels_x{"gpu_pixels_x", 0};
  Param<int> gpu_pixels_y{"gpu_pixels_y", 0};
  Param<int> gpu_channels{"gpu_channels", 0};
  Param<int> gpu_reduction{"gpu_reduction", 0};
  Param<int> gpu_shared{"gpu_shared", -1};
  Param<int> gpu_shift{"gpu_shift", -1};
  Param<int> lane_columns{"lane_columns", 0};
  Param<int> lane_task_rows{"lane_task_rows", 0};
  Param<int> lane_task_vectors{"lane_task_vectors", 0};

  // The point these params give on `target`, defaults filled in; an invalid
  // point stops generation with a message naming the field.
  ConvSchedule point(const Halide::Target& target) const {
    ConvSchedule s;
    s.family = family;
    const std::pair<int ConvSchedule::*, const Param<int>*> params[] = {
        {&ConvSchedule::row_vectors, &row_vectors},
        {&ConvSchedule::row_rows, &row_rows},
        {&ConvSchedule::row_channels, &row_channels},
        {&ConvSchedule::task_input_kb, &task_input_kb},
        {&ConvSchedule::task_max_rows, &task_max_rows},
        {&ConvSchedule::wide_vectors, &wide_vectors},
        {&ConvSchedule::wide_channels, &wide_channels},
        {&ConvSchedule::wide_task_input_kb, &wide_task_input_kb},
        {&ConvSchedule::dw_vectors, &dw_vectors},
        {&ConvSchedule::dw_rows, &dw_rows},
        {&ConvSchedule::dw_planes, &dw_planes},
        {&ConvSchedule::dw_task_cols, &dw_task_cols},
        {&ConvSchedule::dw_task_rows, &dw_task_rows},
        {&ConvSchedule::ch_vectors, &ch_vectors},
        {&ConvSchedule::ch_columns, &ch_columns},
        {&ConvSchedule::ch_task_rows, &ch_task_rows},
        {&ConvSchedule::ch_task_channels, &ch_task_channels},
        {&ConvSchedule::ch_unroll_kx, &ch_unroll_kx},
        {&ConvSchedule::ch_ci_block, &ch_ci_block},
        {&ConvSchedule::ch_blocked, &ch_blocked},
        {&ConvSchedule::ch_direct, &ch_direct},
        {&ConvSchedule::ch_fit_rows, &ch_fit_rows},
        {&ConvSchedule::gpu_threads_x, &gpu_threads_x},
        {&ConvSchedule::gpu_threads_y, &gpu_threads_y},
        {&ConvSchedule::gpu_pixels_x, &gpu_pixels_x},
        {&ConvSchedule::gpu_pixels_y, &gpu_pixels_y},
        {&ConvSchedule::gpu_channels, &gpu_channels},
        {&ConvSchedule::gpu_reduction, &gpu_reduction},
        {&ConvSchedule::gpu_shared, &gpu_shared},
        {&ConvSchedule::gpu_shift, &gpu_shift},
        {&ConvSchedule::lane_columns, &lane_columns},
        {&ConvSchedule::lane_task_rows, &lane_task_rows},
        {&ConvSchedule::lane_task_vectors, &lane_task_vectors},
    };
    static_assert(sizeof(params) / sizeof(params[0]) == 33, "one param per ConvSchedule field");
    for (const auto& p : params) s.*(p.first) = *p.second;
    const TargetFacts facts = target_facts(target);
    s = fill_defaults(s, facts);
    const std::string error = validate_conv_schedule(s, facts);
    if (!error.empty()) {
      Halide::Internal::ErrorReport(__FILE__, __LINE__, nullptr, Halide::Internal::ErrorReport::User)
          << "invalid schedule point: " << error << "\n";
    }
    return s;
  }
};

}  // namespace batchconv_gen
