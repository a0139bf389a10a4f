#include "omp_pool.h"

#include <omp.h>

#include <atomic>

#include "HalideRuntime.h"

namespace batchconv_python {
namespace {

std::atomic<int> g_last_team{0};

int omp_do_par_for(void* user_context, halide_task_t task, int min, int size, uint8_t* closure) {
  if (size <= 0) return 0;
  if (size == 1 || omp_in_parallel()) {
    if (!omp_in_parallel()) g_last_team = 1;
    for (int i = min; i < min + size; ++i)
      if (int r = task(user_context, i, closure)) return r;
    return 0;
  }
  int result = 0;
#pragma omp parallel for schedule(dynamic, 1)
  for (int i = min; i < min + size; ++i) {
    int seen;
#pragma omp atomic read
    seen = result;
    if (seen != 0) continue;  // an earlier task failed: skip the rest
    if (i == min) g_last_team = omp_get_num_threads();
    const int r = task(user_context, i, closure);
    if (r != 0) {
#pragma omp atomic write
      result = r;
    }
  }
  return result;
}

}  // namespace

void install_omp_pool() { halide_set_custom_do_par_for(omp_do_par_for); }

int last_parallel_team() { return g_last_team; }

}  // namespace batchconv_python
