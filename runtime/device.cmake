# The device libraries (include/batchconv/device.h): libbatchconv_opencl.so
# and libbatchconv_cuda.so, each with its kernels (generators/gpu.cmake) and
# its own Halide runtime kept private (--exclude-libs, -Bsymbolic), so both
# and the CPU library can share one process. Neither links a GPU driver: it
# is opened on first use.
if(BATCHCONV_BUILD_GPU)
  foreach(api IN ITEMS opencl cuda)
    string(TOUPPER ${api} API)
    get_property(gpu_runtime GLOBAL PROPERTY BATCHCONV_GPU_RUNTIME_${API})
    add_library(batchconv_${api} SHARED src/device_common.cpp src/device_${api}.cpp)
    add_library(batchconv::${api} ALIAS batchconv_${api})
    target_include_directories(batchconv_${api}
                               PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
                                      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
                               PRIVATE src)
    target_link_libraries(batchconv_${api}
                          PRIVATE batchconv_grouped_conv_${api} batchconv_batched_weight_conv_${api}
                                  batchconv_broadcast_input_conv_${api} batchconv_batched_linear_${api}
                                  ${gpu_runtime} ${CMAKE_DL_LIBS}
                          PUBLIC batchconv_runtime)
    target_link_options(batchconv_${api} PRIVATE -Wl,--exclude-libs,ALL -Wl,-Bsymbolic)
    target_compile_options(batchconv_${api} PRIVATE -Wall -Wextra)
    install(TARGETS batchconv_${api} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endforeach()
endif()
