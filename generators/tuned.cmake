# Tuned conv kernels from a tuning database (batchconv-tune's JSON lines,
# format in tuning/tuning_db.h), built at build time and registered with the
# runtime (batchconv/tuning.h) when the program or library loads.
#
#   batchconv_add_tuned_kernels(<target> DB <file.jsonl> [FORCE])
#
# Reads <file> at configure time (and configures again when it changes).
# Every "record" line whose "source" is not "default" becomes one AOT kernel:
# generator "generator" with the generator params of "point", for the one
# Halide target "target", as the C function batchconv_tuned_<hash of op,
# shape and target>. A record made on another machine (its "machine" is not
# this CPU's model name) or for a target that is not one of
# BATCHCONV_HALIDE_TARGETS stops the configure, unless FORCE. A malformed
# line stops it naming FILE:LINE.
#
# Defines <target>, an OBJECT library (so its static initializer is always
# linked) holding one generated source that calls
# batchconv::register_tuned_conv_kernel for every kernel (the runtime keeps
# those built for the target it runs) and the function
#   int <target as a C name>_register();   // registers them again, returns how many were kept
# Link it into whatever links the runtime (or into batchconv_runtime itself).
#
# The reading half works in script mode too (cmake -P):
#   batchconv_read_tuning_db(<prefix> DB <file> [FORCE])
# sets <prefix>_COUNT and, for k in 1..COUNT, <prefix>_<k>_{LINE,OP,SHAPE,
# TARGET,MACHINE,GENERATOR,FAMILY,POINT} for the records to build.
include_guard(GLOBAL)

# This machine's CPU model: the "model name" line of /proc/cpuinfo, as
# batchconv_tune::machine_model() reads it ("unknown" without one).
function(batchconv_machine_model out_var)
  set(model "unknown")
  if(EXISTS /proc/cpuinfo)
    file(STRINGS /proc/cpuinfo lines REGEX "^model name")
    if(lines)
      list(GET lines 0 line)
      string(FIND "${line}" ":" colon)
      if(colon GREATER_EQUAL 0)
        math(EXPR start "${colon} + 1")
        string(SUBSTRING "${line}" ${start} -1 model)
        string(REGEX REPLACE "^[ \t]+" "" model "${model}")
        string(REGEX REPLACE "[ \t]+$" "" model "${model}")
      endif()
    endif()
  endif()
  set(${out_var} "${model}" PARENT_SCOPE)
endfunction()

# Sets <out_var> to the string field <name> of the JSON object <json>, or
# stops naming <where> (FILE:LINE) when it is missing or not a string.
function(_batchconv_json_string out_var json name where)
  string(JSON type ERROR_VARIABLE err TYPE "${json}" "${name}")
  if(err)
    message(FATAL_ERROR "${where}: missing field \"${name}\"")
  endif()
  if(NOT type STREQUAL "STRING")
    message(FATAL_ERROR "${where}: field \"${name}\" is not a string (it is ${type})")
  endif()
  string(JSON value GET "${json}" "${name}")
  set(${out_var} "${value}" PARENT_SCOPE)
endfunction()

function(_batchconv_json_number json name where)
  string(JSON type ERROR_VARIABLE err TYPE "${json}" "${name}")
  if(err)
    message(FATAL_ERROR "${where}: missing field \"${name}\"")
  endif()
  if(NOT type STREQUAL "NUMBER")
    message(FATAL_ERROR "${where}: field \"${name}\" is not a number (it is ${type})")
  endif()
endfunction()

# Checks a record's point against its family: "name=value" items of lower
# case names and integer values (or family=rows|channels|lanes), and the family it
# names (rows when none) equal to the record's "family".
function(_batchconv_check_point point family where)
  if(point STREQUAL "")
    set(items "")
  else()
    string(REPLACE "," ";" items "${point}")
  endif()
  set(point_family rows)
  foreach(item IN LISTS items)
    if(item MATCHES "^family=(.*)$")
      set(point_family "${CMAKE_MATCH_1}")
    elseif(NOT item MATCHES "^[a-z][a-z0-9_]*=-?[0-9]+$")
      message(FATAL_ERROR "${where}: point \"${point}\": item \"${item}\" is not <field>=<integer>")
    endif()
  endforeach()
  if(NOT point_family STREQUAL family)
    message(FATAL_ERROR "${where}: point \"${point}\" is of family ${point_family}, the record says \"family\":\"${family}\"")
  endif()
endfunction()

function(batchconv_read_tuning_db prefix)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "FORCE" "DB" "")
  if(ARG_UNPARSED_ARGUMENTS OR NOT ARG_DB)
    message(FATAL_ERROR "batchconv_read_tuning_db(${prefix} DB <file> [FORCE]): got ${ARGN}")
  endif()
  get_filename_component(db "${ARG_DB}" ABSOLUTE)
  if(NOT EXISTS "${db}" OR IS_DIRECTORY "${db}")
    message(FATAL_ERROR "tuning database ${db}: no such file")
  endif()
  batchconv_machine_model(machine_here)
  set(known_ops grouped_conv batched_weight_conv broadcast_input_conv)  # the conv generators
  file(READ "${db}" content)
  # One list element per line. ';', '[', ']' and '\' would change how CMake
  # splits a list: they travel as control characters, which JSON text never
  # holds unescaped, and are put back line by line.
  string(ASCII 1 semi)
  string(ASCII 2 open)
  string(ASCII 3 close)
  string(ASCII 4 backslash)
  string(REPLACE "\\" "${backslash}" content "${content}")
  string(REPLACE ";" "${semi}" content "${content}")
  string(REPLACE "[" "${open}" content "${content}")
  string(REPLACE "]" "${close}" content "${content}")
  string(REPLACE "\n" ";" lines "${content}")

  set(n 0)
  set(keys "")  # key hashes, in file order of their last record
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    set(where "${db}:${n}")
    string(REPLACE "${backslash}" "\\" line "${line}")
    string(REPLACE "${semi}" ";" line "${line}")
    string(REPLACE "${open}" "[" line "${line}")
    string(REPLACE "${close}" "]" line "${line}")
    string(REGEX REPLACE "\r$" "" line "${line}")
    if(line MATCHES "^[ \t]*$")
      continue()
    endif()
    string(JSON json_type ERROR_VARIABLE err TYPE "${line}")
    if(err)
      string(REGEX REPLACE "[ \n]+" " " err "${err}")
      message(FATAL_ERROR "${where}: not a JSON object (${err})")
    endif()
    if(NOT json_type STREQUAL "OBJECT")
      message(FATAL_ERROR "${where}: not a JSON object (a JSON ${json_type})")
    endif()
    _batchconv_json_string(type "${line}" type "${where}")
    if(type STREQUAL "trial")
      continue()  # the tuner's history: builds use records only
    elseif(NOT type STREQUAL "record")
      message(FATAL_ERROR "${where}: unknown type \"${type}\" (expected \"trial\" or \"record\")")
    endif()
    # The fields tuning_db.cpp requires of a record.
    foreach(field op shape target machine halide batchconv generator family point source default_point)
      _batchconv_json_string(${field} "${line}" ${field} "${where}")
    endforeach()
    foreach(field time_ms default_ms trials)
      _batchconv_json_number("${line}" ${field} "${where}")
    endforeach()
    foreach(field op generator)
      if(NOT "${${field}}" IN_LIST known_ops)
        list(JOIN known_ops ", " ops)
        message(FATAL_ERROR "${where}: \"${field}\":\"${${field}}\" is not one of ${ops}")
      endif()
    endforeach()
    if(NOT family MATCHES "^(rows|channels|lanes)$")
      message(FATAL_ERROR "${where}: \"family\":\"${family}\" is not rows, channels or lanes")
    endif()
    if(shape STREQUAL "")
      message(FATAL_ERROR "${where}: \"shape\" is empty")
    endif()
    _batchconv_check_point("${point}" "${family}" "${where}")
    # The last record of a key wins (as the C++ reader keeps it).
    string(SHA1 key "${op}|${shape}|${target}|${machine}|${halide}|${batchconv}")
    list(REMOVE_ITEM keys ${key})
    list(APPEND keys ${key})
    foreach(field op shape target machine generator family point source)
      set(rec_${key}_${field} "${${field}}")
    endforeach()
    set(rec_${key}_line ${n})
  endforeach()

  # The records to build: one per (op, shape, target), this machine's first.
  set(names "")
  foreach(key IN LISTS keys)
    if(rec_${key}_source STREQUAL "default")
      continue()  # the default kernel won: nothing to build
    endif()
    set(where "${db}:${rec_${key}_line}")
    set(problem "")
    if(NOT rec_${key}_machine STREQUAL machine_here)
      set(problem "it was tuned on \"${rec_${key}_machine}\" (target ${rec_${key}_target}), this machine is \"${machine_here}\"")
    elseif(NOT rec_${key}_target IN_LIST BATCHCONV_HALIDE_TARGETS)
      list(JOIN BATCHCONV_HALIDE_TARGETS ", " targets)
      set(problem "it was tuned for target ${rec_${key}_target} on \"${machine_here}\", which builds ${targets}")
    endif()
    if(problem AND NOT ARG_FORCE)
      message(FATAL_ERROR "${where}: the tuning record of ${rec_${key}_op} [${rec_${key}_shape}] cannot be "
                          "built here: ${problem}. Tune again on this machine, or build it anyway with "
                          "FORCE (BATCHCONV_TUNING_FORCE=ON).")
    endif()
    string(SHA1 name "${rec_${key}_op}|${rec_${key}_shape}|${rec_${key}_target}")
    string(SUBSTRING "${name}" 0 12 name)
    if(name IN_LIST names)
      # With FORCE, records of several machines may share op, shape and
      # target: this machine's is kept, else the later one.
      set(kept ${kernel_${name}})
      if(rec_${kept}_machine STREQUAL machine_here AND NOT rec_${key}_machine STREQUAL machine_here)
        continue()
      endif()
    else()
      list(APPEND names ${name})
    endif()
    set(kernel_${name} ${key})
  endforeach()

  set(count 0)
  foreach(name IN LISTS names)
    math(EXPR count "${count} + 1")
    set(key ${kernel_${name}})
    set(${prefix}_${count}_NAME batchconv_tuned_${name} PARENT_SCOPE)
    set(${prefix}_${count}_LINE ${rec_${key}_line} PARENT_SCOPE)
    foreach(field op shape target machine generator family point)
      string(TOUPPER ${field} upper)
      set(${prefix}_${count}_${upper} "${rec_${key}_${field}}" PARENT_SCOPE)
    endforeach()
  endforeach()
  set(${prefix}_COUNT ${count} PARENT_SCOPE)
endfunction()

# <out_var>: <text> as the inside of a C string literal (also safe in a // comment).
function(_batchconv_c_string out_var text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "\n" "\\n" text "${text}")
  string(REPLACE "\r" "\\r" text "${text}")
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

function(batchconv_add_tuned_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "FORCE" "DB" "")
  if(ARG_UNPARSED_ARGUMENTS OR NOT ARG_DB)
    message(FATAL_ERROR "batchconv_add_tuned_kernels(${target} DB <file> [FORCE]): got ${ARGN}")
  endif()
  get_filename_component(db "${ARG_DB}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(force "")
  if(ARG_FORCE)
    set(force FORCE)
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${db}")
  batchconv_read_tuning_db(rec DB "${db}" ${force})

  get_property(runtime GLOBAL PROPERTY BATCHCONV_HALIDE_RUNTIME)
  if(NOT runtime)
    message(FATAL_ERROR "batchconv_add_tuned_kernels(${target}): no shared Halide runtime yet "
                        "(call it after the kernels of generators/CMakeLists.txt)")
  endif()
  string(MAKE_C_IDENTIFIER "${target}" c_name)
  set(includes "")
  set(entries "")
  set(libs "")
  set(indexes "")
  if(rec_COUNT GREATER 0)
    foreach(k RANGE 1 ${rec_COUNT})
      list(APPEND indexes ${k})
    endforeach()
  endif()
  foreach(k IN LISTS indexes)
    set(fn ${rec_${k}_NAME})
    set(lib ${target}_${fn})
    if(rec_${k}_POINT STREQUAL "")
      set(params "")
    else()
      string(REPLACE "," ";" params "${rec_${k}_POINT}")
      set(params PARAMS ${params})
    endif()
    add_halide_library(${lib} FROM batchconv_generators
                       GENERATOR ${rec_${k}_GENERATOR}
                       FUNCTION_NAME ${fn}
                       TARGETS ${rec_${k}_TARGET}
                       ${params}
                       USE_RUNTIME ${runtime})
    list(APPEND libs ${lib})
    string(APPEND includes "#include \"${lib}.h\"\n")
    foreach(field SHAPE TARGET)
      _batchconv_c_string(${field} "${rec_${k}_${field}}")
    endforeach()
    string(APPEND entries "      // line ${rec_${k}_LINE}: ${rec_${k}_POINT}\n"
                          "      {\"${rec_${k}_OP}\", \"${SHAPE}\", \"${rec_${k}_GENERATOR}\", "
                          "\"${rec_${k}_FAMILY}\", ${fn}, \"${fn}\", \"${TARGET}\"},\n")
  endforeach()
  message(STATUS "${target}: ${rec_COUNT} tuned kernels from ${db}")

  set(source "${CMAKE_CURRENT_BINARY_DIR}/${target}.cpp")
  file(CONFIGURE OUTPUT "${source}" @ONLY CONTENT [=[
// Generated by batchconv_add_tuned_kernels (generators/tuned.cmake) from
// @db@: the tuned kernels built from it, registered with the
// runtime when this object file is loaded.
#include <cstddef>

#include "batchconv/tuning.h"
@includes@
int @c_name@_register() {
  const batchconv::TunedConvKernel kernels[] = {
@entries@      {},  // end (an array may not be empty)
  };
  int kept = 0;
  for (size_t k = 0; k + 1 < sizeof(kernels) / sizeof(kernels[0]); ++k)
    kept += batchconv::register_tuned_conv_kernel(kernels[k]) ? 1 : 0;
  return kept;
}

namespace {
[[maybe_unused]] const int registered_at_load = @c_name@_register();
}  // namespace
]=])
  add_library(${target} OBJECT "${source}")
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/runtime/include)
  target_link_libraries(${target} PUBLIC ${libs})
endfunction()
