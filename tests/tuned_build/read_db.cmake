# cmake -DDB=<file> [-DFORCE=ON] -DBATCHCONV_HALIDE_TARGETS=<a;b;c> -P read_db.cmake
# Reads a tuning database as batchconv_add_tuned_kernels does and prints one
# line per record it would build: "build <op> [<shape>] <target> <point>".
cmake_minimum_required(VERSION 3.22)
include(${CMAKE_CURRENT_LIST_DIR}/../../generators/tuned.cmake)
set(force "")
if(FORCE)
  set(force FORCE)
endif()
batchconv_read_tuning_db(rec DB "${DB}" ${force})
message(STATUS "records to build: ${rec_COUNT}")
if(rec_COUNT GREATER 0)
  foreach(k RANGE 1 ${rec_COUNT})
    message(STATUS "build ${rec_${k}_OP} [${rec_${k}_SHAPE}] ${rec_${k}_TARGET} ${rec_${k}_POINT}")
  endforeach()
endif()
