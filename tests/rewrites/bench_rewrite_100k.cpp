// Benchmark (not a test: label perf, never fails on time): a generated model
// of ~100,000 nodes in the shape PyTorch 1.13 exports x.repeat + grouped conv
// (Constant, Constant, ConstantOfShape, Expand, Tile, Conv, Relu, Identity per
// block, chained), timed through import (with ONNX shape inference), the
// default pipeline and export, all in memory. Target: under 2 s in total.
//
//   usage: bench_rewrite_100k [nodes] [--write=<file.onnx>]
#include <google/protobuf/arena.h>
#include <onnx/onnx_pb.h>

#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstring>
#include <string>

#include "onnx/onnx_io.h"
#include "pass.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Resident set size in MiB (peak memory matters: fresh pages are slow to touch here).
double rss_mib() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * 4096.0 / (1 << 20);
}

// Process CPU time in ms: the machine is shared, so wall time includes waiting for a core.
double cpu_ms() { return 1000.0 * static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

onnx::AttributeProto int_tensor_attr(const std::string& name, std::vector<int64_t> v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::TENSOR);
  auto* t = a.mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
  return a;
}

onnx::NodeProto* node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in, const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(out + "_node");
  for (auto& s : in) n->add_input(s);
  n->add_output(out);
  return n;
}

// Blocks of 8 nodes: x (1, C, L) -> repeat G along channels -> Conv<group=G> -> Relu -> Identity.
onnx::ModelProto generate(int64_t nodes) {
  const int64_t C = 4, G = 4, L = 8;
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("bench_rewrite_100k");
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("chain");
  auto set_type = [&](onnx::ValueInfoProto* vi, const std::string& name) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {int64_t(1), C, L}) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  set_type(g->add_input(), "x");
  std::string cur = "x";
  const int64_t blocks = nodes / 8;
  for (int64_t b = 0; b < blocks; ++b) {
    std::string p = "b" + std::to_string(b) + "_";
    *node(g, "Constant", {}, p + "reps")->add_attribute() = int_tensor_attr("value", {1, G, 1});
    *node(g, "Constant", {}, p + "rank")->add_attribute() = int_tensor_attr("value", {3});
    auto* cos = node(g, "ConstantOfShape", {p + "rank"}, p + "ones");
    *cos->add_attribute() = int_tensor_attr("value", {1});
    node(g, "Expand", {cur, p + "ones"}, p + "e");
    node(g, "Tile", {p + "e", p + "reps"}, p + "t");
    auto* conv = node(g, "Conv", {p + "t", p + "w"}, p + "c");
    auto* grp = conv->add_attribute();
    grp->set_name("group");
    grp->set_type(onnx::AttributeProto::INT);
    grp->set_i(G);
    node(g, "Relu", {p + "c"}, p + "r");
    node(g, "Identity", {p + "r"}, p + "i");
    auto* w = g->add_initializer();
    w->set_name(p + "w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {C, C, int64_t(1)}) w->add_dims(d);
    for (int64_t k = 0; k < C * C; ++k) w->add_float_data(0.01f * static_cast<float>((k * 7 + b) % 13) - 0.06f);
    cur = p + "i";
  }
  set_type(g->add_output(), cur);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t nodes = 100000;
  std::string write_path;
  bool tune_malloc = false;
  for (int k = 1; k < argc; ++k) {
    if (std::strncmp(argv[k], "--write=", 8) == 0) write_path = argv[k] + 8;
    else if (std::strcmp(argv[k], "--tune-malloc") == 0) tune_malloc = true;
    else nodes = std::stoll(argv[k]);
  }
  if (tune_malloc) {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
  }
  std::string bytes;
  {
    onnx::ModelProto proto = generate(nodes);
    proto.SerializeToString(&bytes);
  }
  std::printf("RSS before import: %.0f MiB\n", rss_mib());
  if (!write_path.empty()) batchconv::io::write_file_atomic(write_path, bytes);

  const double cpu0 = cpu_ms();
  auto t0 = Clock::now();
  // As batchconv-opt reads a file (io::load_model): parse on a protobuf Arena, import in place.
  std::unique_ptr<batchconv::ir::Model> model;
  {
    google::protobuf::Arena arena;
    auto* parsed = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
    parsed->ParseFromString(bytes);
    model = batchconv::io::import_model(std::move(*parsed), "<generated>");
  }
  double t_import = ms_since(t0), c_import = cpu_ms() - cpu0;
  const size_t nodes_in = model->graph.num_nodes();

  std::printf("model: %zu nodes, %zu bytes\n", nodes_in, bytes.size());
  std::printf("%-38s %10s %8s %10s %10s %8s\n", "step", "wall ms", "fired", "removed", "cpu ms", "RSS MiB");
  std::printf("%-38s %10.1f %8s %10s %10.1f %8.0f\n", "parse + import (+ shape inference)", t_import, "", "", c_import,
              rss_mib());
  double t_passes = 0;
  for (const auto& p : batchconv::rewrites::default_pipeline()) {
    auto t = Clock::now();
    double c = cpu_ms();
    auto r = p.run(*model, {});
    double ms = ms_since(t);
    t_passes += ms;
    std::printf("%-38s %10.1f %8d %10d %10.1f %8.0f\n", p.name.c_str(), ms, r.fired, r.nodes_removed, cpu_ms() - c,
                rss_mib());
  }
  auto t1 = Clock::now();
  double c1 = cpu_ms();
  onnx::ModelProto out = batchconv::io::export_model(*model);
  std::string out_bytes;
  out.SerializeToString(&out_bytes);
  double t_export = ms_since(t1);
  std::printf("%-38s %10.1f %8s %10s %10.1f %8.0f\n", "export + serialize", t_export, "", "", cpu_ms() - c1,
              rss_mib());
  std::printf("%-38s %10.1f   (%zu -> %zu nodes)\n", "total (wall)", t_import + t_passes + t_export, nodes_in,
              model->graph.num_nodes());
  std::printf("%-38s %10.1f\n", "total (process CPU time)", cpu_ms() - cpu0);
  return 0;
}
