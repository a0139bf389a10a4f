// Halide's code generation, out of the tool's process: each pipeline is
// compiled in a forked child (LLVM aborts the process on a failed write, and
// Halide recurses deeply over large pipelines), several at a time for the
// parts of a model (model_parts.h), which are then merged into one library.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "Halide.h"
#include "model_parts.h"

namespace batchconv::compiler {

// Runs each job in a child process on a thread with a large stack, at most
// `parallel` at a time. A child's exception message, exit or signal becomes
// an Error (the first one, after every child has ended), prefixed by `what`.
void run_isolated(const std::vector<std::function<void()>>& jobs, const std::string& what, size_t parallel);
void run_isolated(const std::function<void()>& fn, const std::string& what);

// Compiles every part in parallel into <tmp>/<impl>_p<k>.a (only the first
// with the Halide runtime), merges them into <tmp>/<impl>.a and joins their
// headers into <tmp>/<impl>.h.
void compile_parts(const ModelParts& parts, const std::vector<Halide::Target>& targets,
                   const std::string& model_path, const std::filesystem::path& tmp, const std::string& impl);

}  // namespace batchconv::compiler
