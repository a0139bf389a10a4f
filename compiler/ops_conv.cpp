// Conv and batchconv.BatchedWeightConv through the shared convolution
// algorithm (generators/conv_algorithm.h) and the schedule the chooser picks
// (generators/conv_schedule_cpu*.h on a CPU, conv_schedule_gpu.h on a CUDA
// or OpenCL target): the same code the AOT kernels use.
//
// Both ops see their tensors in the algorithm's grouped view
//   input (x, y, ci, g, n, b), weight (kx, ky, ci, co, g, b), bias (co, g, b)
// (a 1-D conv is H = KH = 1; a plain Conv is B = 1), and their result is a
// compute_root 6-D Func (x, y, co, g, n, b) which the next nodes read back in
// ONNX order. That Func is also the storage of the output, so a graph output
// that is this conv (through Squeeze/Reshape) is written in place. Its
// schedule, and whether it is stored NCHW or channels innermost, wait for
// the layout plan (layout_plan.h): the conv is recorded as a ConvStage.

#include "conv_algorithm.h"
#include "conv_chooser.h"
#include "conv_schedule_cpu.h"
#include "conv_schedule_cpu_channels.h"
#include "conv_schedule_cpu_depthwise.h"
#include "conv_schedule_cpu_lanes.h"
#include "conv_schedule_gpu.h"
#include "conv_node.h"
#include "conv_tuning.h"
#include "target_facts.h"
#include "epilogue.h"
#include "ops.h"

namespace batchconv::compiler {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

Expr i32(int64_t v) { return Expr(static_cast<int32_t>(v)); }

// The fields of a schedule point its family reads ("family=channels,ch_vectors=4,...").
std::string family_point(const batchconv_gen::ConvSchedule& s) {
  const std::string all = batchconv_gen::to_string(s);
  std::vector<std::string> prefixes;
  if (s.family == batchconv_gen::ConvFamily::Channels) prefixes = {"family=", "ch_", "task_input_kb="};
  else if (s.family == batchconv_gen::ConvFamily::Gpu) prefixes = {"family=", "gpu_"};
  else if (s.family == batchconv_gen::ConvFamily::Lanes) prefixes = {"family=", "lane_"};
  else prefixes = {"family=", "row_", "task_", "wide_", "dw_"};
  std::string out;
  size_t start = 0;
  while (start <= all.size()) {
    const size_t end = std::min(all.find(',', start), all.size());
    const std::string field = all.substr(start, end - start);
    for (const std::string& p : prefixes) {
      if (field.rfind(p, 0) == 0) {
        out += (out.empty() ? "" : ",") + field;
        break;
      }
    }
    start = end + 1;
  }
  return out;
}

void lower_conv(LoweringContext& cx, const ir::Node& n, bool batched) {
  ConvShape s = conv_shape(cx, n, batched);
  ChannelScale fold = cx.target().has_gpu_feature() ? ChannelScale{} : channel_scale(cx, n, s);
  const LTensor& w = cx.input(n, 1);
  const LTensor* bias = cx.optional_input(n, 2);
  const bool two_d = s.spatial == 2;

  // Back to ONNX order: (B,) N, C, (H,) W.
  std::vector<int64_t> shape;
  if (batched) shape.push_back(s.B);
  shape.push_back(s.N);
  shape.push_back(s.cout);
  if (two_d) shape.push_back(s.out_h);
  shape.push_back(s.out_w);

  // The epilogue the fusion plan (fusion_plan.h) put inside this conv: its
  // last value is the conv's storage, so a Conv -> ... -> Relu graph output
  // is still written in place.
  const Epilogue epilogue = fitted_epilogue(cx, n, shape);
  const ir::Value* result = epilogue.result(n);
  // The project's one chooser picks the family and point for this conv, or
  // a tuning database's record of its shape does. The problem is keyed as
  // the runtime keys a call (conv_path.cpp): NCHW activations.
  batchconv_gen::ConvProblem q;
  q.op = batched ? batchconv_gen::ConvOp::BatchedWeight : batchconv_gen::ConvOp::Grouped;
  q.batch = s.B;
  q.n = s.N;
  q.groups = s.G;
  q.cin_g = s.cin_g;
  q.cout_g = s.cout_g;
  q.in_w = s.in_w;
  q.in_h = s.in_h;
  q.out_w = s.out_w;
  q.out_h = s.out_h;
  q.kernel_w = s.k_w;
  q.kernel_h = s.k_h;
  q.stride_x = static_cast<int>(s.s_w);
  q.stride_y = static_cast<int>(s.s_h);
  q.dilation_x = static_cast<int>(s.d_w);
  q.dilation_y = static_cast<int>(s.d_h);
  q.pad_x = static_cast<int>(s.p_w);
  q.pad_y = static_cast<int>(s.p_h);
  const batchconv_gen::TargetFacts facts = batchconv_gen::target_facts(cx.target());
  // The compiler schedules the lanes family itself, for a Cout_g that divides
  // the vector: with another (6 on AVX2's 8 lanes) a lane vector spans two
  // groups and its packed weights were read past their end (a bounds error).
  q.lanes_allowed = s.cout_g > 0 && facts.vector_floats % s.cout_g == 0;
  q.extents_known = true;
  q.threads = cx.options().threads;
  ConvScheduleChoice choice = choose_conv_schedule_tuned(q, cx.target(), cx.options().tuning, cx.where(n));
  // Folded: one image per task, its own weights (B = N, N = 1), where the
  // chooser takes the channels family for that problem too.
  if (fold.a && choice.schedule.family == batchconv_gen::ConvFamily::Channels) {
    batchconv_gen::ConvProblem qf = q;
    qf.op = s.N > 1 ? batchconv_gen::ConvOp::BatchedWeight : batchconv_gen::ConvOp::Grouped;
    qf.batch = s.N;
    qf.n = 1;
    ConvScheduleChoice cf = choose_conv_schedule_tuned(qf, cx.target(), cx.options().tuning, cx.where(n));
    if (cf.schedule.family == batchconv_gen::ConvFamily::Channels) {
      q = qf;
      choice = cf;
      s.B = s.N;
      s.N = 1;
      choice.explanation += "; squeeze-excite scale folded into per-image weights";
    } else {
      fold = {};
    }
  } else {
    fold = {};
  }
  const LTensor& x = fold.a ? *fold.a : cx.input(n, 0);
  cx.conv_problems.push_back({ir::describe(&n), q});
  if (cx.options().rows_family_only && choice.schedule.family != batchconv_gen::ConvFamily::Gpu) {
    batchconv_gen::ConvSchedule rows;
    rows.family = batchconv_gen::ConvFamily::Rows;
    choice.schedule = batchconv_gen::fill_defaults(rows, facts);
    choice.from_record = false;
    choice.explanation = "rows family only (the baseline)";
  }
  const bool channels = choice.schedule.family == batchconv_gen::ConvFamily::Channels;
  const bool lanes = choice.schedule.family == batchconv_gen::ConvFamily::Lanes;
  // The chooser's channels convs with a vector of input channels per group
  // and more than one tap take the blocked point of the runtime's
  // *_channels_blocked kernels (input staged in channel blocks, tiles stored
  // straight into the result): the MAML-like stack 0.97x -> 1.13-1.19x
  // oneDNN's layer-by-layer time (model-layouts); the depthwise-separable
  // block's 1x1 convs ran about 10% slower blocked, so they are not. A
  // tuning record's point is kept as it is.
  const bool blocked =
      channels && !choice.from_record && s.cin_g >= facts.vector_floats && s.k_w * s.k_h > 1;
  if (blocked) {
    batchconv_gen::ConvSchedule b;
    b.family = batchconv_gen::ConvFamily::Channels;
    b.ch_blocked = 1;
    b.ch_vectors = 2;
    b.ch_task_rows = 16;
    choice.schedule = batchconv_gen::fill_defaults(b, facts);
    choice.explanation += "; blocked";
  }
  // With the shape known, the chooser's channels convs take tiles fitted to
  // the row (ch_fit_rows): their conditions fold away here, so a conv they
  // do not fit pays nothing, while in kernels of run-time shapes (the
  // runtime's) their unit-stride specializations cost the convs that never
  // take them 5-17%.
  // Compiled for one shape (schedule-points-ab --static, AMD EPYC Zen 4):
  // 1x1 256 -> 128 at 14x14 0.75 -> 0.61 ms, 64 -> 64 3x3 at 56x56 20.2 ->
  // 19.3, seed 2 7.17 -> 6.94; the convs they do not take within 2%.
  if (channels && !choice.from_record && cx.options().fit_rows) {
    choice.schedule.ch_fit_rows = 1;
    choice.explanation += "; rows fitted";
  }
  // Channel chunks as tasks where the rows give the cores too few.
  if (channels && !choice.from_record) {
    const batchconv_gen::TaskChannels tc = batchconv_gen::choose_task_channels(q, choice.schedule, facts);
    if (tc.channels > 0) {
      choice.schedule.ch_task_channels = tc.channels;
      choice.explanation += "; " + tc.reason;
    }
  }
  // Reduction blocks where a register tile's weights would be read from
  // memory once per output row.
  if (channels && !choice.from_record) {
    const batchconv_gen::ReductionBlocks rb = batchconv_gen::choose_reduction_blocks(q, choice.schedule, facts);
    if (rb.channels > 0) {
      choice.schedule.ch_ci_block = rb.channels;
      choice.explanation += "; " + rb.reason;
    }
  }
  // Depthwise lanes convs (one channel per group) take the depthwise form:
  // taps unrolled, weights in registers along the row, no padded copy.
  batchconv_gen::DepthwiseTiles dw;
  // Its input is read once per tap, so it must be a stored tensor (not
  // inlined arithmetic, which the lanes family's task copy computes once).
  if (lanes && two_d && x.cheap && !choice.from_record) dw = batchconv_gen::choose_depthwise_tiles(q, facts);
  if (dw.columns > 0) choice.explanation += "; " + dw.reason;
  cx.conv_schedules.push_back("node " + ir::describe(&n) + " for " + tuning_target_name(cx.target()) +
                              ": " + choice.explanation + "; point " + family_point(choice.schedule));
  // The grouped views of conv_algorithm.h, reading the ONNX-order Funcs.
  Var X("x"), Y("y"), ci("ci"), co("co"), g("g"), N("n"), B("b"), kx("kx"), ky("ky");
  Func in6(cx.unique_c_name("f_" + n.name + "_in")), w6(cx.unique_c_name("f_" + n.name + "_w")),
      b3(cx.unique_c_name("f_" + n.name + "_bias"));
  {
    std::vector<Expr> xi, wi;
    if (batched) xi.push_back(B), wi.push_back(B);
    xi.push_back(fold.a ? Expr(B) : Expr(N));
    xi.push_back(g * i32(s.cin_g) + ci);
    wi.push_back(g * i32(s.cout_g) + co);
    wi.push_back(ci);
    if (two_d) xi.push_back(Y), wi.push_back(ky);
    xi.push_back(X);
    wi.push_back(kx);
    in6(X, Y, ci, g, N, B) = read(x, xi);
    // The channels family's weights are packed as its register tiles read
    // them: output channels innermost, in blocks of one vector, each block
    // holding all its taps, (co % vec, ci, kx, ky, co / vec, g), so that a
    // tile's weights for a run of taps are a few dense streams. Packed with
    // the output channel innermost over the whole Cout_g, a 512-channel
    // conv's weights for one step of the reduction sat 2 KB apart and a
    // block of 16 input channels' taps on 144 pages: a 512 -> 512 3x3 at
    // 7 x 7 ran 2.5x slower, 256 -> 256 at 14 x 14 2x
    // (benchmarks/results-weight-blocks-2026-12-07.md). A Cout_g that is not
    // a whole number of vectors keeps the plain order. The lanes family
    // reads (channel, group) lanes: (co, g, ci, kx, ky).
    const int vec = facts.vector_floats;
    const int block = channels && vec > 1 && s.cout_g % vec == 0 ? vec : 0;
    if (fold.a) {
      // Baked and packed here once; scaled per image in each call.
      const int chunk = choice.schedule.ch_task_channels;
      const bool pad_co = chunk > 0 && s.cout_g % chunk != 0;
      ConvShape one = s;
      one.B = 1;
      Halide::Buffer<float> p =
          packed_weights(*w.constant, one, false, pad_co, block, cx.unique_c_name("c_" + n.name + "_wpacked"));
      Var cv("cv"), cb("cb");
      const Expr image = fold.scale->shape[0] == 1 && !fold.scale->batched ? Expr(0) : Expr(B);
      Func wt(cx.unique_c_name("f_" + n.name + "_wscaled"));
      if (block > 0) {
        wt(cv, ci, kx, ky, cb, g, B) = p(cv, ci, kx, ky, cb, g, 0) * read(*fold.scale, {image, ci, Expr(0), Expr(0)});
        wt.compute_root().vectorize(cv, block);
        w6(kx, ky, ci, co, g, B) = wt(co % block, ci, kx, ky, co / block, g, B);
      } else {
        wt(co, ci, kx, ky, g, B) = p(co, ci, kx, ky, g, 0) * read(*fold.scale, {image, ci, Expr(0), Expr(0)});
        wt.compute_root();
        if (vec > 1 && s.cout_g >= vec) wt.vectorize(co, vec, Halide::TailStrategy::GuardWithIf);
        w6(kx, ky, ci, co, g, B) = wt(co, ci, kx, ky, g, B);
      }
    } else if ((channels || lanes) && w.constant && w.constant->is_float() &&
        static_cast<int64_t>(w.constant->f.size()) == w.numel()) {
      // Baked: packed here, once.
      const int chunk = choice.schedule.ch_task_channels;
      const bool pad_co = channels && chunk > 0 && s.cout_g % chunk != 0;
      Halide::Buffer<float> p =
          packed_weights(*w.constant, s, lanes, pad_co, block, cx.unique_c_name("c_" + n.name + "_wpacked"));
      if (lanes) w6(kx, ky, ci, co, g, B) = p(co, g, ci, kx, ky, B);
      else if (block > 0) w6(kx, ky, ci, co, g, B) = p(co % block, ci, kx, ky, co / block, g, B);
      else w6(kx, ky, ci, co, g, B) = p(co, ci, kx, ky, g, B);
    } else if (block > 0) {
      // Runtime weights: packed once per call, in the same blocks.
      Var cv("cv"), cb("cb");
      std::vector<Expr> wb;
      if (batched) wb.push_back(B);
      wb.push_back(g * i32(s.cout_g) + cb * block + cv);
      wb.push_back(ci);
      if (two_d) wb.push_back(ky);
      wb.push_back(kx);
      Func wt(cx.unique_c_name("f_" + n.name + "_wblocks"));
      wt(cv, ci, kx, ky, cb, g, B) = read(w, wb);
      wt.compute_root();
      w6(kx, ky, ci, co, g, B) = wt(co % block, ci, kx, ky, co / block, g, B);
    } else {
      w6(kx, ky, ci, co, g, B) = read(w, wi);
      // Runtime weights: packed once per call.
      if (channels) w6.compute_root().reorder_storage(co, ci, kx, ky, g, B);
      if (lanes) w6.compute_root().reorder_storage(co, g, ci, kx, ky, B);
    }
    if (bias) {
      std::vector<Expr> bi;
      if (batched) bi.push_back(B);
      bi.push_back(g * i32(s.cout_g) + co);
      b3(co, g, B) = read(*bias, bi);
    } else {
      b3(co, g, B) = 0.0f;
    }
  }
  batchconv_gen::ConvGeometry geo;
  geo.stride_x = i32(s.s_w);
  geo.stride_y = i32(s.s_h);
  geo.dilation_x = i32(s.d_w);
  geo.dilation_y = i32(s.d_h);
  geo.pad_x = i32(s.p_w);
  geo.pad_y = i32(s.p_h);
  geo.in_w = i32(s.in_w);
  geo.in_h = i32(s.in_h);
  geo.kernel_w = i32(s.k_w);
  geo.kernel_h = i32(s.k_h);
  geo.cin_g = i32(s.cin_g);
  geo.cout_g = i32(s.cout_g);
  batchconv_gen::ConvFuncs f = batchconv_gen::define_conv(
      in6, w6, b3, geo, Halide::Internal::make_bool(false), /*clamp_channels=*/!channels && !lanes,
      /*input_block=*/blocked ? facts.vector_floats : 0);
  const batchconv_gen::ConvVars& v = f.v;
  Func out6(cx.unique_c_name("f_" + n.name + "_conv"));
  {
    // The epilogue's arithmetic on each value as it is stored.
    std::vector<Expr> at;
    if (batched) at.push_back(v.b);
    at.push_back(fold.a ? Expr(v.b) : Expr(v.n));
    at.push_back(s.G == 1 ? Expr(v.c) : v.g * i32(s.cout_g) + v.c);
    if (two_d) at.push_back(v.y);
    at.push_back(v.x);
    out6(v.x, v.y, v.c, v.g, v.n, v.b) = epilogue.apply(cx, f.output(v.x, v.y, v.c, v.g, v.n, v.b), shape, at);
  }
  out6.compute_root();
  // Scheduled once plan_layouts (layout_plan.cpp) has chosen how this
  // result and the input are stored.
  ConvStage stage;
  stage.node = &n;
  stage.result = result;
  stage.channels_family = channels || lanes;
  stage.lanes = lanes;
  stage.depthwise = dw.columns > 0;
  stage.gpu = choice.schedule.family == batchconv_gen::ConvFamily::Gpu;
  stage.storage = out6;
  const bool input_is_a_load = x.cheap;
  stage.schedule = [out6, f, s, facts, dw, input_is_a_load, point = choice.schedule](
                       bool in_channels_innermost, bool out_channels_innermost) mutable {
    const batchconv_gen::ConvVars& v = f.v;
    if (dw.columns > 0) {
      batchconv_gen::schedule_conv_cpu_depthwise(out6, f, {v.n, v.b}, dw, facts);
      if (out_channels_innermost) out6.reorder_storage(v.c, v.g, v.x, v.y, v.n, v.b);
      return;
    }
    if (point.family == batchconv_gen::ConvFamily::Lanes) {
      batchconv_gen::schedule_conv_cpu_lanes(out6, f, {v.n, v.b}, static_cast<int>(s.out_w), point, facts);
      if (out_channels_innermost) out6.reorder_storage(v.c, v.g, v.x, v.y, v.n, v.b);
      return;
    }
    if (point.family == batchconv_gen::ConvFamily::Gpu) {
      batchconv_gen::schedule_conv_gpu(out6, f, {v.n, v.b}, i32(s.out_w), i32(s.out_h), {i32(s.N), i32(s.B)},
                                       point);
      return;
    }
    if (point.family == batchconv_gen::ConvFamily::Channels) {
      batchconv_gen::ChannelsExtents e{i32(s.out_w), i32(s.cout_g), Halide::Internal::make_bool(in_channels_innermost),
                                       Halide::Internal::make_bool(out_channels_innermost), input_is_a_load};
      batchconv_gen::schedule_conv_cpu_channels(out6, f, {v.n, v.b}, e, point, facts);
    } else {
      batchconv_gen::ConvExtents e;
      e.out_w = i32(s.out_w);
      e.out_h = i32(s.out_h);
      e.cin_g = i32(s.cin_g);
      e.cout_g = i32(s.cout_g);
      e.stride_x = i32(s.s_w);
      batchconv_gen::schedule_conv_cpu(out6, f, {v.n, v.b}, e, point, facts);
    }
    // Channels innermost across groups too: (c, g) is the ONNX channel.
    if (out_channels_innermost) out6.reorder_storage(v.c, v.g, v.x, v.y, v.n, v.b);
  };
  cx.conv_stages.push_back(std::move(stage));

  // Back to ONNX order.
  std::vector<Var> vars = make_vars(static_cast<int>(shape.size()));
  std::vector<Expr> idx = onnx_index(vars);
  const int lead = batched ? 1 : 0;
  Expr c = idx[lead + 1];
  Expr cg = s.G == 1 ? c : c % i32(s.cout_g);
  Expr gg = s.G == 1 ? Expr(0) : c / i32(s.cout_g);
  Func val = cx.func(n);
  if (fold.a) val(vars) = out6(idx.back(), idx[lead + 2], cg, gg, 0, idx[0]);
  else val(vars) = out6(idx.back(), two_d ? idx[lead + 2] : Expr(0), cg, gg, idx[lead], batched ? idx[0] : Expr(0));
  LTensor t = make_tensor(val, shape);
  t.storage = out6;
  t.storage_extents = {s.out_w, s.out_h, s.cout_g, s.G, s.N, s.B};
  t.storage_batch_dim = batched ? -1 : fold.a ? 5 : 4;  // n (b where the images are tasks)
  epilogue.define(cx, n, t);
}

}  // namespace

void register_conv_ops(OpRegistry& r) {
  r["Conv"] = [](LoweringContext& cx, const ir::Node& n) { lower_conv(cx, n, false); };
  r["batchconv.BatchedWeightConv"] = [](LoweringContext& cx, const ir::Node& n) { lower_conv(cx, n, true); };
}

}  // namespace batchconv::compiler
