// Libraries compiled with --dynamic-batch (modes db, dbrw, dbcl): one
// library runs every batch. At batches 1, 2, 3 and 5 each matches the
// reference interpreter on the model bound at that batch, on fresh random
// inputs, to 1e-4 relative; the header marks the batched arguments; a
// buffer of another batch, or an empty one, is an error naming it.
#include <gtest/gtest.h>

#include <random>

#include "compile.h"
#include "compiled_model_checks.h"
#include "compiled_models_registry.h"
#include "model_data.h"
#include "onnx/onnx_io.h"

namespace batchconv::testing {
namespace {

std::vector<const CompiledModel*> dynamic_models() {
  std::vector<const CompiledModel*> out;
  for (const CompiledModel& m : kCompiledModels)
    if (std::string(m.mode).rfind("db", 0) == 0) out.push_back(&m);
  return out;
}

TEST(DynamicBatch, EveryBatchMatchesTheInterpreter) {
  ASSERT_GE(dynamic_models().size(), 7u);
  std::random_device rd;
  const uint32_t seed = rd();
  for (const CompiledModel* m : dynamic_models()) {
    for (int64_t batch : {1, 2, 3, 5}) {
      std::unique_ptr<ir::Model> model = compiled_view(*m);
      std::map<std::string, std::vector<int64_t>> shapes;
      for (const ir::Value* v : model->graph.inputs) {
        if (v->constant) continue;
        std::vector<int64_t> s;
        for (const ir::Dim& d : *v->type.shape) s.push_back(d.known() ? d.value : batch);
        s[0] = batch;
        shapes[v->name] = s;
      }
      compiler::bind_input_shapes(*model, m->stem, shapes);
      const interp::TensorMap values = interp::random_inputs(*model, seed + static_cast<uint32_t>(batch));
      interp::TensorMap for_call = values;
      for (int k = m->num_inputs; k < m->num_inputs + m->num_weights; ++k)
        for_call[m->arg_names[k]] = *model->graph.find_value(m->arg_names[k])->constant;
      const interp::TensorMap want = interp::run(*model, for_call);
      const interp::TensorMap got = run_compiled(*m, for_call);
      for (const auto& [name, t] : want) {
        ASSERT_EQ(got.at(name).shape, t.shape) << m->stem << "_" << m->mode << " batch " << batch;
        EXPECT_LE(interp::max_relative_difference(got.at(name), t), 1e-4)
            << m->stem << "_" << m->mode << " output " << name << " batch " << batch << " seed " << seed;
      }
    }
  }
}

TEST(DynamicBatch, HeaderMarksTheBatchedArguments) {
  for (const CompiledModel* m : dynamic_models()) {
    const int n = m->num_inputs + m->num_weights + m->num_outputs;
    const int64_t* d = m->arg_dims;
    for (int k = 0; k < n; ++k) {
      const bool weight = k >= m->num_inputs && k < m->num_inputs + m->num_weights;
      EXPECT_EQ(m->arg_batched[k], weight ? 0 : 1) << m->stem << "_" << m->mode << " argument " << m->arg_names[k];
      EXPECT_EQ(d[0] == -1, m->arg_batched[k] == 1) << m->stem << "_" << m->mode << " argument " << m->arg_names[k];
      d += m->arg_ranks[k];
    }
  }
}

TEST(DynamicBatch, AnotherBatchOrNoneIsAnErrorNamingTheArgument) {
  mobile_blocks_dynbatch_opset17_db_set_error_handler(nullptr, nullptr);
  // mobile_blocks: x (N, 3, 14, 12) -> y (N, 5).
  HostBuffer x3({3, 3, 14, 12}), y2({2, 5}), y3({3, 5});
  EXPECT_NE(mobile_blocks_dynbatch_opset17_db(&x3.buf, &y2.buf), 0);
  std::string msg = mobile_blocks_dynbatch_opset17_db_last_error();
  EXPECT_NE(msg.find("output 'y' must be a dense float32 host buffer of shape (3, 5); got"), std::string::npos) << msg;
  EXPECT_EQ(mobile_blocks_dynbatch_opset17_db(&x3.buf, &y3.buf), 0) << mobile_blocks_dynbatch_opset17_db_last_error();
  HostBuffer x0({3, 3, 14, 12});
  x0.buf.dim[3].extent = 0;
  EXPECT_NE(mobile_blocks_dynbatch_opset17_db(&x0.buf, &y3.buf), 0);
  msg = mobile_blocks_dynbatch_opset17_db_last_error();
  EXPECT_NE(msg.find("input 'x' must be a dense float32 host buffer of shape (N, 3, 14, 12) with a batch N >= 1"),
            std::string::npos) << msg;
}

}  // namespace
}  // namespace batchconv::testing
