// Graph IR: use lists, replacement, names, topological order, dead nodes.
#include <gtest/gtest.h>

#include "ir/graph.h"

using namespace batchconv::ir;

namespace {

bool has_use(const Value* v, const Node* n, int index) {
  for (const Use& u : v->uses)
    if (u.node == n && u.index == index) return true;
  return false;
}

}  // namespace

TEST(Graph, UseListsFollowSetInput) {
  Graph g;
  Value* a = g.add_value("a");
  Value* b = g.add_value("b");
  Value* c = g.add_value("c");
  Node* n = g.add_node("Add", {a, a}, {c});
  EXPECT_EQ(a->uses.size(), 2u);
  EXPECT_TRUE(has_use(a, n, 0));
  EXPECT_TRUE(has_use(a, n, 1));
  g.set_input(n, 1, b);
  EXPECT_EQ(a->uses.size(), 1u);
  EXPECT_TRUE(has_use(b, n, 1));
  EXPECT_EQ(c->producer, n);
  g.set_input(n, 3, a);  // grows the input list, slot 2 omitted
  EXPECT_EQ(n->inputs.size(), 4u);
  EXPECT_EQ(n->inputs[2], nullptr);
  EXPECT_TRUE(has_use(a, n, 3));
}

TEST(Graph, UniqueNames) {
  Graph g;
  Value* a = g.add_value("x");
  Value* b = g.add_value("x");
  Value* c = g.add_value("x");
  EXPECT_EQ(a->name, "x");
  EXPECT_NE(b->name, "x");
  EXPECT_NE(c->name, b->name);
  EXPECT_EQ(g.find_value(b->name), b);
  Node* n1 = g.add_node("Relu", {a}, {g.add_value("y")}, "r");
  Node* n2 = g.add_node("Relu", {a}, {g.add_value("z")}, "r");
  EXPECT_NE(n1->name, n2->name);
  Node* n3 = g.add_node("Relu", {a}, {g.add_value("w")});
  EXPECT_FALSE(n3->name.empty());
  EXPECT_THROW(g.rename_value(a, b->name), std::invalid_argument);
}

TEST(Graph, ReplaceAllUsesKeepsOutputNames) {
  Graph g;
  Value* x = g.add_value("x");
  x->is_graph_input = true;
  g.inputs.push_back(x);
  Value* t = g.add_value("t");
  Value* y = g.add_value("y");
  g.add_node("Relu", {x}, {t}, "relu");
  Node* id = g.add_node("Identity", {t}, {y}, "id");
  y->is_graph_output = true;
  g.outputs.push_back(y);
  ASSERT_TRUE(g.can_replace_all_uses(y, t));
  EXPECT_FALSE(g.can_replace_all_uses(y, x));  // x is a graph input
  g.replace_all_uses(y, t);
  g.remove_node(id);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.outputs[0], t);
  EXPECT_EQ(t->name, "y");
  EXPECT_TRUE(t->is_graph_output);
  EXPECT_EQ(g.find_value("y"), t);
  EXPECT_EQ(g.num_nodes(), 1u);
}

TEST(Graph, RemoveNodeRefusesUsedOutputs) {
  Graph g;
  Value* x = g.add_value("x");
  Value* t = g.add_value("t");
  Value* y = g.add_value("y");
  Node* a = g.add_node("Relu", {x}, {t});
  g.add_node("Relu", {t}, {y});
  EXPECT_THROW(g.remove_node(a), std::logic_error);
}

TEST(Graph, TopologicalOrderIsValidAndStable) {
  Graph g;
  Value* x = g.add_value("x");
  Value* a = g.add_value("a");
  Value* b = g.add_value("b");
  Value* c = g.add_value("c");
  // Inserted consumer-first: the order must still put producers first.
  Node* n3 = g.add_node("Add", {a, b}, {c}, "n3");
  Node* n1 = g.add_node("Relu", {x}, {a}, "n1");
  Node* n2 = g.add_node("Relu", {x}, {b}, "n2");
  auto order = g.topological_order();
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[0], n1);
  EXPECT_EQ(order[1], n2);
  EXPECT_EQ(order[2], n3);
}

TEST(Graph, CycleIsNamed) {
  Graph g;
  Value* x = g.add_value("x");
  Value* a = g.add_value("a");
  Value* b = g.add_value("b");
  Value* c = g.add_value("c");
  g.add_node("Relu", {x}, {c}, "outside");
  g.add_node("Add", {c, b}, {a}, "loop_a");
  g.add_node("Relu", {a}, {b}, "loop_b");
  try {
    g.topological_order();
    FAIL() << "no error for a cycle";
  } catch (const std::runtime_error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("cycle"), std::string::npos) << m;
    EXPECT_TRUE(m.find("loop_a") != std::string::npos || m.find("loop_b") != std::string::npos) << m;
    EXPECT_EQ(m.find("outside"), std::string::npos) << m;
  }
}

TEST(Graph, RemoveDeadNodesKeepsWhatOutputsNeed) {
  Graph g;
  Value* x = g.add_value("x");
  Value* a = g.add_value("a");
  Value* b = g.add_value("b");
  Value* d1 = g.add_value("d1");
  Value* d2 = g.add_value("d2");
  g.add_node("Relu", {x}, {a}, "live1");
  g.add_node("Relu", {a}, {b}, "live2");
  g.add_node("Relu", {a}, {d1}, "dead1");
  g.add_node("Relu", {d1}, {d2}, "dead2");
  b->is_graph_output = true;
  g.outputs.push_back(b);
  EXPECT_EQ(g.remove_dead_nodes(), 2);
  EXPECT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(a->uses.size(), 1u);
  EXPECT_EQ(d1->producer, nullptr);
  EXPECT_EQ(g.remove_dead_nodes(), 0);
}

TEST(Graph, RemoveValueFreesName) {
  Graph g;
  Value* w = g.add_initializer("w", Tensor{DType::Float, {2}, {1, 2}, {}});
  EXPECT_EQ(w->constant->numel(), 2);
  g.remove_value(w);
  EXPECT_EQ(g.find_value("w"), nullptr);
  EXPECT_EQ(g.add_value("w")->name, "w");
}

TEST(Graph, LargeChainIsLinear) {
  // 100k nodes in a chain: order and dead-node removal must not be quadratic.
  Graph g;
  Value* v = g.add_value("x");
  for (int k = 0; k < 100000; ++k) {
    Value* o = g.add_value("");
    g.add_node("Relu", {v}, {o});
    v = o;
  }
  v->is_graph_output = true;
  g.outputs.push_back(v);
  EXPECT_EQ(g.topological_order().size(), 100000u);
  EXPECT_EQ(g.remove_dead_nodes(), 0);
}

TEST(Graph, ReplacingAValueWith50kUsesIsLinear) {
  Graph g;
  Value* a = g.add_value("a");
  Value* b = g.add_value("b");
  for (int k = 0; k < 50000; ++k) g.add_node("Relu", {a}, {g.add_value("")});
  g.replace_all_uses(a, b);
  EXPECT_TRUE(a->uses.empty());
  ASSERT_EQ(b->uses.size(), 50000u);
  for (const Use& u : b->uses) EXPECT_EQ(u.node->inputs[u.index], b);
}

TEST(Graph, OrderStaysValidAcrossRemovalsAndAdditions) {
  Graph g;
  Value* x = g.add_value("x");
  std::vector<Value*> vals{x};
  std::vector<Node*> nodes;
  for (int k = 0; k < 20; ++k) {
    Value* o = g.add_value("");
    nodes.push_back(g.add_node("Relu", {vals.back()}, {o}));
    vals.push_back(o);
  }
  // Remove the tail end (unused outputs first), then add consumers of early values.
  for (int k = 19; k >= 15; --k) g.remove_node(nodes[k]);
  Value* y = g.add_value("y");
  Node* late = g.add_node("Add", {vals[3], vals[10]}, {y});
  Value* z = g.add_value("z");
  Node* later = g.add_node("Relu", {y}, {z});
  auto order = g.topological_order();
  ASSERT_EQ(order.size(), 17u);
  std::map<const Node*, size_t> pos;
  for (size_t k = 0; k < order.size(); ++k) pos[order[k]] = k;
  for (const Node* n : order)
    for (const Value* v : n->inputs)
      if (v && v->producer) EXPECT_LT(pos[v->producer], pos[n]);
  EXPECT_LT(pos[late], pos[later]);
}
