// Graphviz pictures of a graph, for --emit=dot.
#pragma once

#include <string>

#include "ir/graph.h"

namespace batchconv::opt {

// Nodes are boxes (op type, name, key attributes); graph inputs and outputs are
// ellipses; initializers are folded into their consumer's label; edges carry
// the value's name and shape.
std::string to_dot(const ir::Graph& g, const std::string& title);

}  // namespace batchconv::opt
