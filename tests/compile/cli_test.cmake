# batchconv-compile on a model with an unsupported op: exit code 1, a message naming the node and op,
# and no files left in the output folder. Run by ctest (batchconv_compile_cli_test).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${TOOL}" "${DATA}/unsupported_op.onnxtxt" -o "${WORK}" --name=bad
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "expected exit code 1, got '${rc}'\n${out}${err}")
endif()
if(NOT err MATCHES "unsupported_op.onnxtxt: node '[^']*' \\(Hardmax\\): unsupported op")
  message(FATAL_ERROR "the error does not name the node and op:\n${err}")
endif()
file(GLOB left "${WORK}/*" "${WORK}/.*")
if(left)
  message(FATAL_ERROR "files left behind after a failed compile: ${left}")
endif()
# A dynamic input dim that is not bound: exit 1 naming the input and dim.
execute_process(COMMAND "${TOOL}" "${DATA}/dynamic_dim.onnxtxt" -o "${WORK}"
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(NOT rc EQUAL 1 OR NOT err MATCHES "input 'x' dim 0 \\('N'\\)")
  message(FATAL_ERROR "dynamic dim: expected exit 1 naming input 'x' dim 0 ('N'), got ${rc}:\n${err}")
endif()
# Bound with --shape it compiles.
execute_process(COMMAND "${TOOL}" "${DATA}/dynamic_dim.onnxtxt" -o "${WORK}" --shape x=3x4
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT EXISTS "${WORK}/libdynamic_dim.a" OR NOT EXISTS "${WORK}/dynamic_dim.h")
  message(FATAL_ERROR "--shape x=3x4 should compile: ${rc}\n${out}${err}")
endif()
# Bad options are usage errors (exit 2).
execute_process(COMMAND "${TOOL}" "${DATA}/dynamic_dim.onnxtxt" -o "${WORK}" --weights=sometimes
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--weights must be baked or runtime")
  message(FATAL_ERROR "--weights=sometimes: expected exit 2, got ${rc}:\n${err}")
endif()
# GPU targets: CUDA or OpenCL, alone. Others are refused naming the target, and nothing is written.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
foreach(case "host-metal|CUDA or OpenCL" "host-cuda-opencl|CUDA or OpenCL"
             "host-cuda,host|'[^']*cuda[^']*' is a GPU target; a GPU library has that one target"
             "host,host-opencl|'[^']*opencl[^']*' is a GPU target")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 target)
  list(GET parts 1 want)
  execute_process(COMMAND "${TOOL}" "${DATA}/dynamic_dim.onnxtxt" -o "${WORK}" --shape x=3x4 --target=${target}
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
  if(rc EQUAL 0 OR NOT err MATCHES "${want}")
    message(FATAL_ERROR "--target=${target}: expected a failure matching '${want}', got ${rc}:\n${out}${err}")
  endif()
  file(GLOB left "${WORK}/*" "${WORK}/.*")
  if(left)
    message(FATAL_ERROR "--target=${target}: files left behind: ${left}")
  endif()
endforeach()
# host-cuda gets the CUDA capability the project's kernels are built for (Halide's default is 2.0).
execute_process(COMMAND "${TOOL}" "${DATA}/dynamic_dim.onnxtxt" -o "${WORK}" --shape x=3x4 --target=host-cuda
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT EXISTS "${WORK}/libdynamic_dim.a")
  message(FATAL_ERROR "--target=host-cuda should compile: ${rc}\n${out}${err}")
endif()
file(STRINGS "${WORK}/libdynamic_dim.a" ptx_target REGEX "^\\.target sm_61")
if(NOT ptx_target)
  message(FATAL_ERROR "--target=host-cuda: the library's PTX is not for sm_61")
endif()
# Layouts: --explain-layouts prints each variant's schedule (its own target's tile; blocked where a group has a vector of input channels) and layout lines; bad --layouts and
# --edge-layout values are usage errors (exit 2); an edge of the wrong rank fails naming it, writing nothing.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${TOOL}" "${MODELS}/conv_stack_opset17.onnx" -o "${WORK}" --explain-layouts
                        --target=x86-64-linux-avx512_skylake,x86-64-linux-avx2-fma-f16c-sse41 --edge-layout y=nhwc
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
foreach(want "layout x86-64-linux-avx512_skylake: node '/b/Conv' \\(Conv\\) -> '[^']*': result channels innermost"
             "layout x86-64-linux-avx2-fma-f16c-sse41: node '/b/Conv' \\(Conv\\) -> '[^']*': result channels innermost"
             "-> 'y': result channels innermost: a channels-last graph output, computed straight into the caller's buffer"
             "conv node '/b/Conv' \\(Conv\\) for x86-64-linux-avx512_skylake: [^\n]*ch_vectors=2,ch_columns=14[^\n]*ch_blocked=1"
             "conv node '/b/Conv' \\(Conv\\) for x86-64-linux-avx2-fma-f16c-sse41: [^\n]*ch_vectors=2,ch_columns=6[^\n]*ch_blocked=1"
             "conv node '/a/Conv' \\(Conv\\) for x86-64-linux-avx512_skylake: [^\n]*ch_blocked=0")
  if(NOT rc EQUAL 0 OR NOT out MATCHES "${want}")
    message(FATAL_ERROR "--explain-layouts: expected '${want}' (exit ${rc}):\n${out}${err}")
  endif()
endforeach()
file(READ "${WORK}/conv_stack_opset17.h" header)
if(NOT header MATCHES "'y', float32 \\(2, 5, 6, 16\\) \\(NHWC" OR NOT header MATCHES "layouts auto")
  message(FATAL_ERROR "the header does not record the NHWC output and the layout policy:\n${header}")
endif()
# Baked Gemm weights: each variant stores them as its own tiles read them (panels of its vector width).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${TOOL}" "${MODELS}/cnn_features_opset17.onnx" -o "${WORK}" --explain-layouts
                        --target=x86-64-linux-avx512_skylake,x86-64-linux-avx2-fma-f16c-sse41
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
foreach(want "weights x86-64-linux-avx512_skylake: node '/fc1/Gemm' \\(Gemm\\): B \\(128 x 16\\) baked as 1 panel of 128 x 16"
             "weights x86-64-linux-avx2-fma-f16c-sse41: node '/fc1/Gemm' \\(Gemm\\): B \\(128 x 16\\) baked as 1 panel of 128 x 16"
             "weights x86-64-linux-avx2-fma-f16c-sse41: node '/fc2/Gemm' \\(Gemm\\): B \\(16 x 5\\) baked transposed to \\(K, N\\), not packed")
  if(NOT rc EQUAL 0 OR NOT out MATCHES "${want}")
    message(FATAL_ERROR "--explain-layouts: expected '${want}' (exit ${rc}):\n${out}${err}")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
foreach(case "--layouts=blocked|--layouts must be auto, nchw or nhwc" "--edge-layout=x|--edge-layout expects"
             "--part-nodes=-1|--part-nodes expects a number of nodes" "--part-nodes=many|--part-nodes expects"
             "--threads=0|--threads expects a number of cores")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 flag)
  list(GET case 1 want)
  execute_process(COMMAND "${TOOL}" "${MODELS}/conv_stack_opset17.onnx" -o "${WORK}" ${flag}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "${want}")
    message(FATAL_ERROR "${flag}: expected exit 2 with '${want}', got ${rc}:\n${err}")
  endif()
endforeach()
execute_process(COMMAND "${TOOL}" "${MODELS}/seed1_opset17.onnx" -o "${WORK}" --edge-layout x=nhwc
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT err MATCHES "input 'x' has shape \\(20, 16\\); a channels-last edge needs a 4-D")
  message(FATAL_ERROR "--edge-layout x=nhwc on a 2-D input: expected exit 1 naming it, got ${rc}:\n${err}")
endif()
file(GLOB left "${WORK}/*" "${WORK}/.*")
if(left)
  message(FATAL_ERROR "files left behind after a refused edge layout: ${left}")
endif()
# Files from strangers (tests/models/hostile; two crashed the tool inside ONNX's
# shape inference before): exit 1, the node named, nothing written.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
foreach(case "dataprop_mul_unknown_attribute.onnx|node '/layer/Conv' \\(Conv\\): unknown attribute 'groux'"
             "dataprop_mul.onnx|node '/Equal' \\(Equal\\): evaluating constant node: .*do not broadcast"
             "float_to_int64_cast.onnx|node '/Conv' \\(Conv\\): unknown attribute 'rgo")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 file)
  list(GET case 1 want)
  execute_process(COMMAND "${TOOL}" "${MODELS}/hostile/${file}" -o "${WORK}"
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 1 OR NOT err MATCHES "${want}")
    message(FATAL_ERROR "${file}: expected exit 1 matching '${want}', got ${rc}:\n${out}${err}")
  endif()
  file(GLOB left "${WORK}/*" "${WORK}/.*")
  if(left)
    message(FATAL_ERROR "${file}: files left behind: ${left}")
  endif()
endforeach()
# --dynamic-batch: the unbound batch stays a run-time extent and compiles; ops that would mix the
# images of the batch are refused naming the node (exit 1, nothing written).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${TOOL}" "${DATA}/dynamic_dim.onnxtxt" -o "${WORK}" --dynamic-batch
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT EXISTS "${WORK}/libdynamic_dim.a")
  message(FATAL_ERROR "--dynamic-batch should compile dynamic_dim: ${rc}\n${out}${err}")
endif()
file(READ "${WORK}/dynamic_dim.h" header)
if(NOT header MATCHES "int dynamic_dim_f32\\(int batch, " OR NOT header MATCHES "float32 \\(N, 4\\)")
  message(FATAL_ERROR "--dynamic-batch: the header does not take the batch at run time")
endif()
foreach(case "batch_softmax_axis0|node '[^']*' \\(Softmax\\): --dynamic-batch: axis 0 is the run-time batch"
             "batch_concat_constant|--dynamic-batch: the model bound at batch 2 does not lower: .*node .[^']*. \\(Concat\\): input 1 of shape \\(1, 4\\) does not match \\(2, 4\\)"
             "batch_reduce_axis0|node '[^']*' \\(ReduceMean\\): --dynamic-batch: axes include 0, the run-time batch")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 stem)
  list(GET parts 1 want)
  file(REMOVE_RECURSE "${WORK}")
  file(MAKE_DIRECTORY "${WORK}")
  execute_process(COMMAND "${TOOL}" "${DATA}/${stem}.onnxtxt" -o "${WORK}" --dynamic-batch
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 1 OR NOT err MATCHES "${want}")
    message(FATAL_ERROR "--dynamic-batch ${stem}: expected exit 1 matching '${want}', got ${rc}:\n${err}")
  endif()
  file(GLOB left "${WORK}/*" "${WORK}/.*")
  if(left)
    message(FATAL_ERROR "--dynamic-batch ${stem}: files left behind: ${left}")
  endif()
endforeach()
