# batchconv_add_model: compile an ONNX model into a static library at build
# time with batchconv-compile, in the spirit of add_halide_library.
#
#   batchconv_add_model(<target> MODEL <file.onnx>
#                       [NAME <c_name>]            # default: <target>
#                       [TARGETS <halide target>...]  # default: host; several = multi-target
#                       [NO_REWRITES]
#                       [DYNAMIC_BATCH]            # every input's dim 0 given at run time (--dynamic-batch)
#                       [WEIGHTS baked|runtime]
#                       [LAYOUTS auto|nchw|nhwc]   # how conv results are stored (--layouts)
#                       [EDGE_LAYOUTS <name>=nhwc...]  # inputs/outputs the caller passes channels-last
#                       [SHAPES <input>=<d0xd1..>...]
#                       [PART_NODES <n>]           # nodes a pipeline part holds (--part-nodes; 0: one pipeline)
#                       [TUNING <db.jsonl> [FORCE_TUNING]])  # tuned conv schedules (--tuning)
#
# Defines <target>, an INTERFACE library an app links: it carries
# lib<c_name>.a, the include folder with <c_name>.h (the C entry point
# int <c_name>(halide_buffer_t*...)) and the Halide runtime headers. The
# model is recompiled when the model file, the tuning database or the
# compiler changes.
# Works in-tree (the batchconv-compile target) and from the installed
# package (batchconv::batchconv-compile).
include_guard(GLOBAL)

function(batchconv_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "NO_REWRITES;FORCE_TUNING;DYNAMIC_BATCH" "MODEL;NAME;WEIGHTS;TUNING;LAYOUTS;PART_NODES" "TARGETS;SHAPES;EDGE_LAYOUTS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "batchconv_add_model(${target}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_MODEL)
    message(FATAL_ERROR "batchconv_add_model(${target}): MODEL <file.onnx> is required")
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME ${target})
  endif()
  if(NOT ARG_TARGETS)
    set(ARG_TARGETS host)
  endif()
  get_filename_component(model "${ARG_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")

  if(TARGET batchconv-compile)
    set(tool $<TARGET_FILE:batchconv-compile>)
    set(tool_dep batchconv-compile)
  elseif(TARGET batchconv::batchconv-compile)
    set(tool $<TARGET_FILE:batchconv::batchconv-compile>)
    set(tool_dep batchconv::batchconv-compile)
  else()
    message(FATAL_ERROR "batchconv_add_model(${target}): no batchconv-compile tool (build the project with "
                        "BATCHCONV_BUILD_KERNELS and BATCHCONV_BUILD_REWRITER, or find_package(batchconv))")
  endif()

  list(JOIN ARG_TARGETS "," targets)
  set(args "${model}" -o "${CMAKE_CURRENT_BINARY_DIR}/${target}" --name=${ARG_NAME} --target=${targets})
  if(ARG_NO_REWRITES)
    list(APPEND args --no-rewrites)
  endif()
  if(ARG_DYNAMIC_BATCH)
    list(APPEND args --dynamic-batch)
  endif()
  if(ARG_WEIGHTS)
    list(APPEND args --weights=${ARG_WEIGHTS})
  endif()
  if(ARG_LAYOUTS)
    list(APPEND args --layouts=${ARG_LAYOUTS})
  endif()
  if(DEFINED ARG_PART_NODES)
    list(APPEND args --part-nodes=${ARG_PART_NODES})
  endif()
  foreach(edge IN LISTS ARG_EDGE_LAYOUTS)
    list(APPEND args --edge-layout ${edge})
  endforeach()
  foreach(shape IN LISTS ARG_SHAPES)
    list(APPEND args --shape ${shape})
  endforeach()
  set(tuning "")
  if(ARG_TUNING)
    get_filename_component(tuning "${ARG_TUNING}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND args --tuning=${tuning})
    if(ARG_FORCE_TUNING)
      list(APPEND args --force-tuning)
    endif()
  elseif(ARG_FORCE_TUNING)
    message(FATAL_ERROR "batchconv_add_model(${target}): FORCE_TUNING needs TUNING <db.jsonl>")
  endif()

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/${target}")
  file(MAKE_DIRECTORY "${dir}")
  set(outputs "${dir}/lib${ARG_NAME}.a" "${dir}/${ARG_NAME}.h" "${dir}/${ARG_NAME}_impl.h")
  add_custom_command(OUTPUT ${outputs}
                     COMMAND ${tool} ${args}
                     DEPENDS "${model}" ${tuning} ${tool_dep}
                     COMMENT "batchconv-compile ${ARG_MODEL} -> lib${ARG_NAME}.a"
                     VERBATIM)
  add_custom_target(${target}.compile DEPENDS ${outputs})

  add_library(${target} INTERFACE)
  target_include_directories(${target} INTERFACE "${dir}")
  target_link_libraries(${target} INTERFACE "${dir}/lib${ARG_NAME}.a" Halide::Runtime Threads::Threads ${CMAKE_DL_LIBS})
  add_dependencies(${target} ${target}.compile)
endfunction()
