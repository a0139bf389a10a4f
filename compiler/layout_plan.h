// The layout plan: how each conv and pool result of a lowered model is stored.
//
// In one Halide pipeline a layout is a storage order, not a different
// program: every reader indexes a tensor the same way whatever its order,
// so a "reorder" is the reader's strided access, and the plan only decides
// which order each conv's compute_root result gets. NCHW (x innermost) is
// what the model's interface and the rows family want; channels innermost
// (c, then g, then x, y: NHWC per image) is what the channels family writes
// from its register tiles without a transpose and reads into its padded
// input with contiguous channel vectors.
//
// Policy Auto (the default) stores a result channels innermost when the
// conv runs the channels family (not the lanes family: measured slower) and
// every reader of the result, through
// elementwise ops, BatchNormalization, Concat and 2-D pools, is a channels-
// or lanes-family conv reading it as its input (or a graph output passed
// channels-last): a reorder is never made where some reader pays
// for it (a reshape, a matmul, a rows-family conv, a graph output). A pool
// (MaxPool, AveragePool over 2-D maps, on a CPU) stores its result channels
// innermost exactly where its input is, and is no graph output (or one
// passed channels-last); a
// GlobalAveragePool reads a channels-innermost input in channel vectors.
// A value read beside a channels-family conv's own value by that conv's
// epilogue (a residual Add) counts as read in channel vectors too.
// Policy Nchw keeps every result NCHW (the A/B baseline); ChannelsLast
// stores every result that is not a graph output channels innermost (the
// tests' way of making every reader read a channels-innermost tensor).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lowering_context.h"

namespace batchconv::compiler {

// "auto", "nchw", "nhwc"; nullopt for anything else.
std::optional<LayoutPolicy> parse_layout_policy(const std::string& s);
const char* layout_policy_name(LayoutPolicy p);

// Decides the storage of every conv in cx.conv_stages (after the graph
// outputs are lowered, so that a result written into the caller's buffer
// stays NCHW), schedules them, and appends one line per conv to
// cx.layout_explanations.
void plan_layouts(LoweringContext& cx);

}  // namespace batchconv::compiler
