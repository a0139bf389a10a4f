// Halide's parallel loops on PyTorch's OpenMP threads.
//
// Debian's PyTorch runs its CPU ops on libgomp's thread pool, whose threads
// spin for a while after each op; batchconv's kernels ran on Halide's own
// pool beside them, so on a machine with as many cores as threads the two
// pools took turns (libgomp's spin loop was 15% of the samples of a MAML
// step of many small calls). Installed when the module loads, this runs
// every Halide parallel loop as an OpenMP loop on the same pool, with
// PyTorch's thread count (omp_get_max_threads, which torch.set_num_threads
// sets). Nested loops run serially inside their OpenMP task (OpenMP's
// default), as their tasks already fill the threads.
#pragma once

namespace batchconv_python {

void install_omp_pool();
// Threads of the last outermost parallel loop (a test hook).
int last_parallel_team();

}  // namespace batchconv_python
