# batchconv-compile --tuning on seed 2 (one BatchedWeightConv), for the three
# AOT targets. Run by ctest (batchconv_compile_tuning_test):
#   cmake -DTOOL=<batchconv-compile> -DMODEL=<seed2.onnx> -DDB_HERE=<this machine's db>
#         -DDB_OTHER=<a db of "fixture machine"> -DWORK=<folder> -P tuning_cli_test.cmake
set(targets x86-64-linux-avx512_skylake x86-64-linux-avx2-fma-f16c-sse41 x86-64-linux)
list(JOIN targets "," target_arg)
set(point "family=channels,ch_vectors=1,ch_columns=4,ch_task_rows=2")
set(conv "conv node '/Concat_batched' \\(batchconv.BatchedWeightConv\\)")
file(REMOVE_RECURSE "${WORK}")

# Compiles into WORK/<dir>, expecting exit code <want>; sets log (stdout
# then stderr, one line).
function(compile what want dir)
  file(MAKE_DIRECTORY "${WORK}/${dir}")
  execute_process(COMMAND "${TOOL}" "${MODEL}" -o "${WORK}/${dir}" --name=seed2 --target=${target_arg} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REPLACE "\n" " | " log "${out}${err}")
  if(NOT rc EQUAL want)
    message(FATAL_ERROR "${what}: expected exit ${want}, got ${rc}:\n${log}")
  endif()
  set(log "${log}" PARENT_SCOPE)
endfunction()

function(expect_match what regex)
  if(NOT log MATCHES "${regex}")
    message(FATAL_ERROR "${what}: no match for '${regex}' in:\n${log}")
  endif()
endfunction()

# This machine's records: the tuned point on every target, said per target.
compile("this machine's records" 0 here --tuning=${DB_HERE})
foreach(t IN LISTS targets)
  expect_match("--tuning, ${t}" "${conv} for ${t}: tuned ${point} \\(")
endforeach()
if(log MATCHES "forced")
  message(FATAL_ERROR "--tuning: this machine's records are not forced:\n${log}")
endif()

# Without --tuning nothing changes: no conv lines are printed; with an empty
# database the chooser's reasons are, and (one target: nothing is lowered
# twice) the files are byte for byte those of no database.
compile("without --tuning" 0 plain)
if(log MATCHES "conv node")
  message(FATAL_ERROR "without --tuning no conv lines are printed:\n${log}")
endif()
file(WRITE "${WORK}/empty.jsonl" "")
compile("an empty database" 0 empty --tuning=${WORK}/empty.jsonl)
expect_match("an empty database"
             "${conv} for x86-64-linux: channels \\(chooser: [^|]*\\); no tuning record of batched_weight_conv \\[b=2 n=3 ")
set(avx2 --target=x86-64-linux-avx2-fma-f16c-sse41)
compile("one target without --tuning" 0 plain_avx2 ${avx2})
compile("one target, an empty database" 0 empty_avx2 ${avx2} --tuning=${WORK}/empty.jsonl)
foreach(f libseed2.a seed2.h)  # seed2_impl.h: its include guard names the temporary folder
  file(SHA256 "${WORK}/plain_avx2/${f}" a)
  file(SHA256 "${WORK}/empty_avx2/${f}" b)
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "${f} differs between no --tuning and an empty tuning database")
  endif()
endforeach()
file(SHA256 "${WORK}/plain/libseed2.a" a)
file(SHA256 "${WORK}/here/libseed2.a" b)
if(a STREQUAL b)
  message(FATAL_ERROR "the tuned library is the chooser's: the tuned point was not used")
endif()

# Another machine's record: refused naming the node, the record, both machines
# and the way out; nothing is written.
compile("another machine's record" 1 other --tuning=${DB_OTHER})
expect_match("the refusal"
             "node '/Concat_batched' \\(batchconv.BatchedWeightConv\\): .*tuning_seed2_fixture_machine.jsonl: the tuning record of batched_weight_conv \\[b=2 n=3 [^]]*\\] cannot be used: it was tuned on \"fixture machine\", this machine is \".*--force-tuning")
file(GLOB left "${WORK}/other/*" "${WORK}/other/.*")
if(left)
  message(FATAL_ERROR "files left behind after a refused record: ${left}")
endif()
compile("--force-tuning" 0 forced --tuning=${DB_OTHER} --force-tuning)
foreach(t IN LISTS targets)
  expect_match("--force-tuning, ${t}" "${conv} for ${t}: tuned ${point} \\([^)]*fixture machine[^)]*; forced\\)")
endforeach()

# A corrupt database names FILE:LINE; a point invalid on a target names the field.
file(READ "${DB_HERE}" good)
file(WRITE "${WORK}/corrupt.jsonl" "${good}{\"type\":\"record\",\"op\":\n")
compile("a corrupt database" 1 corrupt --tuning=${WORK}/corrupt.jsonl)
expect_match("a corrupt database" "corrupt.jsonl:4: not a JSON object")
string(REPLACE "ch_vectors=1,ch_columns=4" "ch_vectors=4,ch_columns=6" wide "${good}")
file(WRITE "${WORK}/wide.jsonl" "${wide}")
compile("a point too wide for AVX2" 1 wide --tuning=${WORK}/wide.jsonl)
expect_match("a point too wide for AVX2"
             "is invalid on x86-64-linux-avx2-fma-f16c-sse41: ch_vectors=4 x ch_columns=6 needs 29 vector registers")
compile("a missing database" 1 missing --tuning=${WORK}/missing.jsonl)
expect_match("a missing database" "--tuning .*missing.jsonl: no such file")
