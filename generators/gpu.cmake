# GPU kernel libraries: the four ops (grouped_conv, batched_weight_conv,
# broadcast_input_conv, batched_linear) scheduled by the gpu family
# (conv_schedule_gpu.h) for OpenCL and for CUDA, one AOT library per op and
# API: batchconv_<op>_opencl / batchconv_<op>_cuda (C function of the same
# name, first argument the user context the device runtime's context and
# stream hooks receive). Each API has its own Halide runtime with that
# device's feature (batchconv_gpu_runtime_opencl / _cuda): the CPU runtime
# of batchconv_add_kernel has none, and a process that never asks for CUDA
# never loads libcuda (Halide's runtime opens the driver on first use).
#
# Halide 14 knows CUDA capabilities up to 8.6; newer GPUs (sm_90) get the
# PTX JIT-compiled by their driver (tests/gpu assembles it for sm_90 with
# ptxas to check that it can be).
option(BATCHCONV_BUILD_GPU "Build the CUDA and OpenCL kernel libraries and the device runtime" ON)
set(BATCHCONV_OPENCL_TARGET x86-64-linux-opencl-user_context
    CACHE STRING "Halide target of the OpenCL kernels")
set(BATCHCONV_CUDA_TARGET x86-64-linux-cuda-cuda_capability_61-user_context
    CACHE STRING "Halide target of the CUDA kernels (capability at most 8.6 in Halide 14)")

if(BATCHCONV_BUILD_GPU)
  foreach(api IN ITEMS opencl cuda)
    string(TOUPPER ${api} API)
    set(runtime "")
    foreach(op IN ITEMS grouped_conv batched_weight_conv broadcast_input_conv batched_linear)
      set(runtime_args "")
      if(runtime)
        set(runtime_args USE_RUNTIME ${runtime})
      endif()
      add_halide_library(batchconv_${op}_${api} FROM batchconv_generators
                         GENERATOR ${op}
                         TARGETS ${BATCHCONV_${API}_TARGET}
                         ${runtime_args})
      if(NOT runtime)
        set(runtime batchconv_${op}_${api}.runtime)
      endif()
    endforeach()
    # The runtime target the device library links (its name is the first library's).
    set_property(GLOBAL PROPERTY BATCHCONV_GPU_RUNTIME_${API} ${runtime})
  endforeach()
endif()
