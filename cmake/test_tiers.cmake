# Test tiers. Every test carries its folder's label (unit, lit, conformance,
# python, gpu, perf, fuzz); a test that takes more than about 15 s on a
# 2-core machine also carries `slow`. batchconv_test_tier(), called at the
# end of each folder that adds tests, gives every other test of the folder
# but the perf ones the label `fast`: `ctest -L fast` is a developer's loop
# of a few minutes after the build, `ctest -LE perf` the whole suite.
function(batchconv_test_tier)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    get_test_property(${t} LABELS labels)
    if(NOT labels)
      set(labels "")
    endif()
    if(NOT "slow" IN_LIST labels AND NOT "perf" IN_LIST labels)
      set_property(TEST ${t} APPEND PROPERTY LABELS fast)
    endif()
  endforeach()
endfunction()
