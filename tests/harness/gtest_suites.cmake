# Included by ctest (a TEST_INCLUDE_FILES of tests/CMakeLists.txt's
# perfgate_unit_tests): one ctest test per GoogleTest suite of the unit test
# executable `exe`, named "Suite.*" and running --gtest_filter=Suite.*, with
# the test properties `props`. A test of its own per GoogleTest test paid
# the executable's start (under the sanitizers about 0.15 s) 583 times for
# 162 suites; GoogleTest's output still names every test that ran or failed.
#
# Listed when ctest starts, so a rebuilt executable is listed anew. An
# executable that cannot list its tests (a cross build's, off its target)
# becomes one failing test that shows why.
execute_process(COMMAND "${exe}" --gtest_list_tests
  OUTPUT_VARIABLE listing ERROR_VARIABLE listing_error RESULT_VARIABLE listing_status TIMEOUT 60)
get_filename_component(exe_name "${exe}" NAME)
if(NOT listing_status EQUAL 0)
  add_test("${exe_name}.cannot_list_its_tests" "${exe}" --gtest_list_tests)
  return()
endif()
# A suite's line starts in the first column: "Suite." or, typed or
# parameterized, "Prefix/Suite.  # TypeParam = ..."; its tests are indented.
string(REGEX MATCHALL "\n[^ \n#][^ \n]*\\." suite_lines "\n${listing}")
foreach(line IN LISTS suite_lines)
  string(STRIP "${line}" suite)
  add_test("${suite}*" "${exe}" "--gtest_filter=${suite}*")
  set_tests_properties("${suite}*" PROPERTIES ${props})
endforeach()
