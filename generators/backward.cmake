# The backward kernels (gradients of the conv ops), included at the end of
# generators/CMakeLists.txt: their generators join batchconv_generators and
# their libraries share its Halide runtime (batchconv_add_kernel).
#   conv_grad_input         dx of grouped / batched-weight convs (per slice)
#   conv_grad_input_shared  dx of the broadcast-input conv (sums the B banks)
#   conv_grad_weight        dw of every conv form (a shared x has stride 0 along B)
target_sources(batchconv_generators PRIVATE
               ${CMAKE_CURRENT_LIST_DIR}/conv_grad_input_generator.cpp
               ${CMAKE_CURRENT_LIST_DIR}/conv_grad_weight_generator.cpp)
batchconv_add_kernel(conv_grad_input)
batchconv_add_kernel(conv_grad_input_shared GENERATOR conv_grad_input PARAMS sum_over_b=true)
batchconv_add_kernel(conv_grad_weight)
