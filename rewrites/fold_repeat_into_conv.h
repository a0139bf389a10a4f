// fold_repeat_into_conv: a grouped Conv over a channel-repeated tensor becomes a Conv on the
// original tensor, so the repeat is never materialised (seed 1).
//
//   Before: r = Tile(x, [1,R,1]) (or Concat(x,..,x, axis=1), or Reshape(Expand(Unsqueeze(x,1))))
//           y = Conv<group=G>(r, W, B)          W: (M, R*C/G, k...)
//   After, R == G:     y = Conv<group=1>(x, W, B)                   (W is already the dense weight)
//   After, R = p*G:    y = Conv<group=1>(x, W', B)                  W'[o,c] = sum_s W[o, s*C+c]
//   After, G = m*R:    t = Conv<group=m>(x, W", B"); y = channel_shuffle(t, m, R)
//                      W"/B" = W/B with output blocks reordered from (q, h) to (h, q), g = q*m+h
//
// Why: group g of the repeated tensor reads channels [g*Cg, (g+1)*Cg) of r, i.e. channels
// (g*Cg + i) mod C of x. With R == G each group reads all of x once; with R = p*G it reads x p times
// (weights of the copies add up); with G = m*R it reads block (g mod m) of x split into m blocks.
// Other R/G (neither divides the other) would need zero-padded weights: left alone with the reason.
//
//   Interleaved (r channel j = x channel j/R, x.unsqueeze(2).expand(..).reshape(..)), Cg = R*C/G:
//     R | Cg:  y = Conv<group=G>(x, W')    W'[o,c] = sum_s W[o, c*R+s]   (each x channel read R times)
//     Cg | R:  y = Conv<group=C>(x, W')    W'[o,0] = sum_i W[o, i]       (each group reads one x channel)
// The shuffle form is used only when it allocates no more than the repeat did (its output vs r,
// by bytes when both shapes are static, else M <= R*C channels).
//
// Preconditions: the repeat is along the Conv's channel axis (1) and its count R is constant; the
// weight shape is static (and the weight/bias constant when they must be rewritten). Identity and
// Unsqueeze nodes between the repeat and the Conv are re-applied to x. Other users of the repeated
// tensor keep it. Ordering: after clean-up (constant folding, no-op Expand removal), which turns
// what exporters write into the forms above.
#pragma once

#include "pass.h"

namespace batchconv::rewrites {

PassResult fold_repeat_into_conv(ir::Model& model, const PassOptions& options);

}  // namespace batchconv::rewrites
