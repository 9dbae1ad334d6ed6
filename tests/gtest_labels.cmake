# Run by ctest, not by cmake: labels the tests of one GoogleTest binary as fast or slow,
# and data where the test's body calls FLEETSIM_REQUIRE_SHARED_DATA(). Its inputs come from
# the <target>_labels.cmake that tests/labels.cmake generates (which documents the rules):
#   FLEETSIM_LABEL_TESTS    the discovered test names (gtest_discover_tests' <target>_TESTS)
#   FLEETSIM_LABEL_PREFIX   the TEST_PREFIX those names carry
#   FLEETSIM_LABEL_SOURCES  the binary's test sources, scanned here for data tests
#   FLEETSIM_LABEL_SLOW     one regex of slow test names ("" when none)
if(NOT FLEETSIM_LABEL_TESTS)
  return()  # not built yet: only gtest_discover_tests' NOT_BUILT placeholder exists
endif()

# Data tests: the TEST, TEST_F or TEST_P header above each FLEETSIM_REQUIRE_SHARED_DATA();
# call, as a regex of the names ctest knows it by: a TEST_P runs as
# <instantiation>/<Suite>.<Name>/<parameter>, once per parameter.
set(data_tests "")
foreach(source IN LISTS FLEETSIM_LABEL_SOURCES)
  file(STRINGS "${source}" lines REGEX "^TEST|^ +FLEETSIM_REQUIRE_SHARED_DATA\\(\\);")
  set(current "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^TEST(_F)?\\(([A-Za-z0-9_]+), *([A-Za-z0-9_]+)\\)")
      set(current "${FLEETSIM_LABEL_PREFIX}${CMAKE_MATCH_2}\\.${CMAKE_MATCH_3}")
    elseif(line MATCHES "^TEST_P\\(([A-Za-z0-9_]+), *([A-Za-z0-9_]+)\\)")
      set(current "${FLEETSIM_LABEL_PREFIX}[A-Za-z0-9_]+/${CMAKE_MATCH_1}\\.${CMAKE_MATCH_2}/.+")
    elseif(line MATCHES "^TEST")
      set(current "")
      message(WARNING "${source}: cannot read the test name in '${line}' (keep TEST(Suite, Name) "
                      "on one line): its data label, if any, is missing")
    elseif(line MATCHES "FLEETSIM_REQUIRE_SHARED_DATA" AND NOT current STREQUAL "")
      list(APPEND data_tests "${current}")
    endif()
  endforeach()
endforeach()

foreach(test IN LISTS FLEETSIM_LABEL_TESTS)
  set(labels "")
  if(NOT FLEETSIM_LABEL_SLOW STREQUAL "" AND test MATCHES "^(${FLEETSIM_LABEL_SLOW})$")
    list(APPEND labels slow)
  else()
    list(APPEND labels fast)
  endif()
  foreach(pattern IN LISTS data_tests)
    if(test MATCHES "^${pattern}$")
      list(APPEND labels data)
      break()
    endif()
  endforeach()
  set_tests_properties("${test}" PROPERTIES LABELS "${labels}")
endforeach()
