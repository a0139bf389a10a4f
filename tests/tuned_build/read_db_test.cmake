# What batchconv_add_tuned_kernels refuses, checked through read_db.cmake
# (the same reading code, in script mode). Run by ctest (tuned_build.read_db):
#   cmake -DFIXTURE=<fixture_db.jsonl> -DWORK=<folder> -DTARGETS=<a;b;c> -P read_db_test.cmake
cmake_minimum_required(VERSION 3.22)
include(${CMAKE_CURRENT_LIST_DIR}/../../generators/tuned.cmake)
batchconv_machine_model(machine)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
string(REPLACE ";" "\\;" targets_arg "${TARGETS}")

# Runs read_db.cmake on <db>; sets rc and log (stdout and stderr, one line).
function(read_db db)
  execute_process(COMMAND ${CMAKE_COMMAND} -DDB=${db} -DBATCHCONV_HALIDE_TARGETS=${targets_arg} ${ARGN}
                          -P ${CMAKE_CURRENT_LIST_DIR}/read_db.cmake
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX REPLACE "[ \n]+" " " log "${out}${err}")
  set(rc "${rc}" PARENT_SCOPE)
  set(log "${log}" PARENT_SCOPE)
endfunction()

function(expect_refused what db pattern)
  read_db("${db}" ${ARGN})
  if(rc EQUAL 0)
    message(FATAL_ERROR "${what}: accepted, expected a refusal matching '${pattern}':\n${log}")
  endif()
  if(NOT log MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: the message does not match '${pattern}':\n${log}")
  endif()
  message(STATUS "ok: ${what}")
endfunction()

function(expect_accepted what db pattern)
  read_db("${db}" ${ARGN})
  if(NOT rc EQUAL 0 OR NOT log MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: expected success matching '${pattern}', got exit ${rc}:\n${log}")
  endif()
  message(STATUS "ok: ${what}")
endfunction()

string(REGEX REPLACE "([][()+*.^$?|\\\\])" "\\\\\\1" machine_re "${machine}")

# The fixture was tuned on "fixture machine": refused naming its line, both
# machines and the record's target; with FORCE its 9 records are built (the
# trial line and the "default" record are not).
expect_refused("fixture without FORCE" "${FIXTURE}"
               "fixture_db.jsonl:2: .*grouped_conv .*\"fixture machine\" \\(target x86-64-linux-avx512_skylake\\), this machine is \"${machine_re}\".*FORCE")
expect_accepted("fixture with FORCE" "${FIXTURE}" "records to build: 9 " -DFORCE=ON)

# This machine's records: accepted without FORCE; the last record of a key
# wins; a target that is not built here is refused.
set(key "\"op\":\"grouped_conv\",\"shape\":\"b=1 n=1 groups=1 cin_g=2 cout_g=2 in=4x4 kernel=3x3 out=2x2 stride=1x1 dilation=1x1 pad=0x0 x=nchw y=nchw\",\"machine\":\"${machine}\",\"halide\":\"14.0.0\",\"batchconv\":\"0.1.0\"")
set(rest "\"generator\":\"grouped_conv\",\"source\":\"search\",\"time_ms\":1,\"default_ms\":2,\"default_point\":\"family=rows\",\"trials\":3")
list(GET TARGETS 0 target0)
file(WRITE "${WORK}/here.jsonl"
     "{\"type\":\"record\",${key},\"target\":\"${target0}\",${rest},\"family\":\"rows\",\"point\":\"family=rows,row_rows=1\"}\n"
     "\n"
     "{\"type\":\"record\",${key},\"target\":\"${target0}\",${rest},\"family\":\"channels\",\"point\":\"family=channels,ch_columns=3\"}\n")
expect_accepted("this machine's records" "${WORK}/here.jsonl"
                "records to build: 1 -- build grouped_conv \\[b=1 n=1 .*\\] ${target0} family=channels,ch_columns=3 ")
file(WRITE "${WORK}/arm.jsonl"
     "{\"type\":\"record\",${key},\"target\":\"arm-64-linux\",${rest},\"family\":\"rows\",\"point\":\"family=rows\"}\n")
expect_refused("a target not built here" "${WORK}/arm.jsonl"
               "arm.jsonl:1: .*tuned for target arm-64-linux on \"${machine_re}\", which builds ${target0}")

# Malformed lines: refused naming FILE:LINE and what is wrong, FORCE or not.
set(good "{\"type\":\"record\",${key},\"target\":\"${target0}\",${rest},\"family\":\"rows\",\"point\":\"family=rows\"}")
file(WRITE "${WORK}/not_json.jsonl" "${good}\n\n{\"type\":\"record\", [oops; \n")
expect_refused("a line that is not JSON" "${WORK}/not_json.jsonl" "not_json.jsonl:3: not a JSON object" -DFORCE=ON)
file(WRITE "${WORK}/array.jsonl" "[1, 2]\n")
expect_refused("a JSON array" "${WORK}/array.jsonl" "array.jsonl:1: not a JSON object \\(a JSON ARRAY\\)")
string(REPLACE ",\"point\":\"family=rows\"" "" no_point "${good}")
file(WRITE "${WORK}/no_point.jsonl" "${good}\n${no_point}\n")
expect_refused("a record without a point" "${WORK}/no_point.jsonl" "no_point.jsonl:2: missing field \"point\"" -DFORCE=ON)
string(REPLACE "\"trials\":3" "\"trials\":\"3\"" bad_number "${good}")
file(WRITE "${WORK}/bad_number.jsonl" "${bad_number}\n")
expect_refused("a string for a number" "${WORK}/bad_number.jsonl" "bad_number.jsonl:1: field \"trials\" is not a number")
string(REPLACE "\"type\":\"record\"" "\"type\":\"recrod\"" bad_type "${good}")
file(WRITE "${WORK}/bad_type.jsonl" "${good}\n${bad_type}\n")
expect_refused("an unknown type" "${WORK}/bad_type.jsonl" "bad_type.jsonl:2: unknown type \"recrod\"")
string(REPLACE "\"generator\":\"grouped_conv\"" "\"generator\":\"conv9\"" bad_generator "${good}")
file(WRITE "${WORK}/bad_generator.jsonl" "${bad_generator}\n")
expect_refused("an unknown generator" "${WORK}/bad_generator.jsonl" "bad_generator.jsonl:1: \"generator\":\"conv9\" is not one of")
string(REPLACE "\"point\":\"family=rows\"" "\"point\":\"family=channels\"" mismatch "${good}")
file(WRITE "${WORK}/family.jsonl" "${mismatch}\n")
expect_refused("a point of the other family" "${WORK}/family.jsonl" "family.jsonl:1: point \"family=channels\" is of family channels, the record says \"family\":\"rows\"")
# A lanes record is built (the runtime registers lanes kernels); a family
# the runtime does not know is refused.
string(REPLACE "\"family\":\"rows\",\"point\":\"family=rows\"" "\"family\":\"lanes\",\"point\":\"family=lanes,lane_columns=2\"" lanes "${good}")
file(WRITE "${WORK}/lanes.jsonl" "${lanes}\n")
expect_accepted("a lanes record" "${WORK}/lanes.jsonl" "records to build: 1 .*family=lanes,lane_columns=2")
string(REPLACE "\"family\":\"rows\",\"point\":\"family=rows\"" "\"family\":\"gpu\",\"point\":\"family=gpu\"" gpu "${good}")
file(WRITE "${WORK}/gpu.jsonl" "${gpu}\n")
expect_refused("a gpu record" "${WORK}/gpu.jsonl" "gpu.jsonl:1: \"family\":\"gpu\" is not rows, channels or lanes")
string(REPLACE "\"point\":\"family=rows\"" "\"point\":\"family=rows,row_rows=two\"" bad_item "${good}")
file(WRITE "${WORK}/bad_item.jsonl" "${bad_item}\n")
expect_refused("a point item that is not a number" "${WORK}/bad_item.jsonl" "bad_item.jsonl:1: point .* item \"row_rows=two\" is not <field>=<integer>")
expect_refused("a missing file" "${WORK}/missing.jsonl" "missing.jsonl: no such file")
