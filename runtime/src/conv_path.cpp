#include "conv_path.h"

#include <atomic>

#include "batchconv/batchconv.h"
#include "tuned_kernels.h"

namespace batchconv {

namespace {

std::atomic<int> g_family{static_cast<int>(ScheduleFamily::Auto)};
thread_local std::string t_last_family = "none";

}  // namespace

void set_schedule_family(ScheduleFamily f) { g_family = static_cast<int>(f); }
ScheduleFamily schedule_family() { return static_cast<ScheduleFamily>(g_family.load()); }
std::string last_conv_family() { return t_last_family; }

namespace detail {

const batchconv_gen::TargetFacts& variant_facts() {
  static const batchconv_gen::TargetFacts facts = batchconv_gen::facts_of_variant(selected_target());
  return facts;
}

batchconv_gen::ConvProblem conv_problem(const ConvPlan& p, batchconv_gen::ConvOp op,
                                        bool x_channels_last, bool y_channels_last) {
  batchconv_gen::ConvProblem q;
  q.op = op;
  q.batch = p.batch;
  q.n = p.n;
  q.groups = p.groups;
  q.cin_g = p.cin_g;
  q.cout_g = p.cout_g;
  q.in_w = p.in.back();
  q.in_h = p.spatial == 2 ? p.in.front() : 1;
  q.out_w = p.out.back();
  q.out_h = p.spatial == 2 ? p.out.front() : 1;
  q.kernel_w = p.kernel.back();
  q.kernel_h = p.spatial == 2 ? p.kernel.front() : 1;
  q.stride_x = p.stride_x;
  q.stride_y = p.stride_y;
  q.dilation_x = p.dilation_x;
  q.dilation_y = p.dilation_y;
  q.pad_x = p.pad_x;
  q.pad_y = p.pad_y;
  q.x_channels_last = x_channels_last;
  q.y_channels_last = y_channels_last;
  return q;
}

bool lanes_fits(const ConvPlan& p, batchconv_gen::ConvOp op) {
  const int vec = variant_facts().vector_floats;
  return op != batchconv_gen::ConvOp::BroadcastInput && batchconv_gen::lanes_kernel_fits(p.cout_g, variant_facts()) &&
         p.groups * p.cout_g >= vec;
}

bool blocked_kernel_fits(const ConvPlan& p) { return p.cin_g >= variant_facts().vector_floats; }

bool fitted_kernel_fits(const ConvPlan& p, batchconv_gen::ConvOp op) {
  if (blocked_kernel_fits(p)) return false;
  // The point the *_channels_fitted kernels are built with, once per process.
  static const batchconv_gen::ConvSchedule fitted = [] {
    batchconv_gen::ConvSchedule s =
        batchconv_gen::default_conv_schedule(variant_facts(), batchconv_gen::ConvFamily::Channels);
    s.ch_fit_rows = 1;
    return s;
  }();
  return batchconv_gen::fitted_row_columns(conv_problem(p, op, false, false), fitted, variant_facts()) > 0;
}

bool small_planes_run_channels_last(const ConvPlan& p, int64_t x_channel_stride, int64_t y_channel_stride) {
  // Planes up to 32 x 32; the copies live in per-thread scratch, so each is
  // kept to 2^24 floats (64 MiB). Measured on the batched-weight conv of
  // B = 32, N = 5, 32 -> 32 channels, 3x3 (NCHW against channels-last
  // scratch, ms): 3x3 maps 0.90 -> 0.54, 7x7 2.16 -> 1.66, 14x14 3.73 ->
  // 2.87, 28x28 18.3 -> 11.3; at 42x42 the two tie.
  constexpr int64_t kMaxPlane = 1024, kMaxFloats = int64_t{1} << 24;
  const int64_t in_plane = p.spatial == 2 ? p.in.front() * p.in.back() : p.in.back();
  const int64_t out_plane = p.spatial == 2 ? p.out.front() * p.out.back() : p.out.back();
  const int64_t images = p.batch * p.n;
  return blocked_kernel_fits(p) && x_channel_stride != 1 && y_channel_stride != 1 && p.cout > 1 &&
         in_plane <= kMaxPlane && images * p.cin * in_plane <= kMaxFloats &&
         images * p.cout * out_plane <= kMaxFloats;
}

batchconv_gen::ConvFamily conv_family(const ConvPlan& p, batchconv_gen::ConvOp op, int64_t x_channel_stride,
                                      int64_t y_channel_stride, bool y_banks_outer) {
  using batchconv_gen::ConvFamily;
  batchconv_gen::ConvProblem q =
      conv_problem(p, op, x_channel_stride == 1 && p.cin > 1, y_channel_stride == 1 && p.cout > 1);
  q.y_banks_outer = y_banks_outer;
  q.lanes_allowed = batchconv_gen::lanes_kernel_fits(p.cout_g, variant_facts());
  const TunedConvKernel* tuned = find_tuned_kernel(q);
  ConvFamily family = ConvFamily::Rows;
  switch (schedule_family()) {
    case ScheduleFamily::Rows: family = ConvFamily::Rows; break;
    case ScheduleFamily::Channels: family = ConvFamily::Channels; break;
    case ScheduleFamily::Lanes: family = lanes_fits(p, op) ? ConvFamily::Lanes : ConvFamily::Rows; break;
    case ScheduleFamily::Auto: {
      if (tuned) {
        family = tuned->family == "channels" ? ConvFamily::Channels
                 : tuned->family == "lanes" && lanes_fits(p, op) ? ConvFamily::Lanes
                                                                  : ConvFamily::Rows;
        break;
      }
      family = batchconv_gen::choose_conv_schedule(q, variant_facts()).schedule.family;
      if (family == ConvFamily::Lanes && !lanes_fits(p, op)) family = ConvFamily::Rows;
      break;
    }
  }
  settle_tuned_kernel(batchconv_gen::family_name(family));
  t_last_family = batchconv_gen::family_name(family);
  return family;
}

}  // namespace detail

}  // namespace batchconv
