# SPDX-License-Identifier: MIT
# The test-time half of scenetest_discover_scenes() (docs/ci.md, "CMake and
# CTest"): included by ctest from the file the function generated, it runs
# `scenetest list --format json`, writes one add_test a case to OUTPUT and
# includes it. Runs in ctest's script mode: add_test(NAME COMMAND...) and
# set_tests_properties are ctest's own there.

# Appends to the list named out the options that both `list` and `run`
# take: --platform and --plugin.
macro(_scenetest_common_options out)
  if(DEFINED _st_PLATFORM)
    list(APPEND ${out} --platform "${_st_PLATFORM}")
  endif()
  foreach(_st_plugin IN LISTS _st_PLUGIN)
    list(APPEND ${out} --plugin "${_st_plugin}")
  endforeach()
endmacro()

# v as a bracket argument, whatever it holds.
function(_scenetest_quote out v)
  set(eq "=")
  while(v MATCHES "\\]${eq}\\]")
    string(APPEND eq "=")
  endwhile()
  set(${out} "[${eq}[${v}]${eq}]" PARENT_SCOPE)
endfunction()

# A list of arguments as one string of bracket arguments.
function(_scenetest_quote_all out)
  set(s "")
  foreach(v IN LISTS ARGN)
    _scenetest_quote(q "${v}")
    string(APPEND s " ${q}")
  endforeach()
  set(${out} "${s}" PARENT_SCOPE)
endfunction()

function(scenetest_add_scenes NAME)
  cmake_parse_arguments(PARSE_ARGV 1 _st ""
                        "EXECUTABLE;WORKING_DIRECTORY;OUTPUT;PLATFORM"
                        "PATHS;PLUGIN;ARGS;LABELS")
  set(common "")
  _scenetest_common_options(common)
  set(list_cmd "${_st_EXECUTABLE}" list --format json ${common} -- ${_st_PATHS})
  execute_process(COMMAND ${list_cmd}
                  WORKING_DIRECTORY "${_st_WORKING_DIRECTORY}"
                  OUTPUT_VARIABLE json ERROR_VARIABLE err
                  RESULT_VARIABLE rc)
  set(script "")
  set(count 0)
  if(NOT rc STREQUAL "0")
    string(STRIP "${err}" err)
    message(WARNING "scenetest_discover_scenes(${NAME}): `scenetest list` "
                    "failed (${rc}); the test ${NAME}/list shows why:\n${err}")
    # The same command as a test: it fails, with the load error in its log.
    _scenetest_quote_all(cmd ${list_cmd})
    _scenetest_quote(test "${NAME}/list")
    _scenetest_quote(wd "${_st_WORKING_DIRECTORY}")
    string(APPEND script "add_test(${test}${cmd})\n"
           "set_tests_properties(${test} PROPERTIES WORKING_DIRECTORY ${wd})\n")
  else()
    string(JSON count LENGTH "${json}")
  endif()
  if(count GREATER 0)
    _scenetest_quote_all(run_head "${_st_EXECUTABLE}" run --format tap
                         --require-cases)
    _scenetest_quote_all(run_tail ${common} ${_st_ARGS} -- ${_st_PATHS})
    _scenetest_quote(wd "${_st_WORKING_DIRECTORY}")
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      # One element as its own text first: reading its fields from it is
      # cheap, from the whole array it would be each time a full parse.
      string(JSON obj GET "${json}" ${i})
      string(JSON scene GET "${obj}" scene)
      string(JSON kase GET "${obj}" case)
      set(labels ${_st_LABELS})
      # A case's tags (its scene's and its own), where the list gives them.
      string(JSON ntags ERROR_VARIABLE terr LENGTH "${obj}" tags)
      if(NOT terr AND ntags GREATER 0)
        math(EXPR tlast "${ntags} - 1")
        foreach(t RANGE ${tlast})
          string(JSON tag GET "${obj}" tags ${t})
          list(APPEND labels "${tag}")
        endforeach()
      endif()
      # The case's id is quoted on its own, never an element of a CMake
      # list: a list keeps a ';' between '[' and ']' inside one element,
      # and a matrix case's name has brackets (and may have ';').
      _scenetest_quote(case_id "${scene}::${kase}")
      set(cmd "${run_head} --case ${case_id}${run_tail}")
      _scenetest_quote(test "${NAME}/${scene}::${kase}")
      # TAP marks a skipped case "ok 1 - S::C # SKIP reason" on a line of
      # its own (and a failing one "not ok 1 - ...").
      string(APPEND script "add_test(${test} ${cmd})\n"
             "set_tests_properties(${test} PROPERTIES WORKING_DIRECTORY ${wd} "
             "SKIP_REGULAR_EXPRESSION \"\\nok 1 - [^\\n]*# SKIP\")\n")
      if(labels)
        _scenetest_quote(lab "${labels}")
        string(APPEND script "set_tests_properties(${test} PROPERTIES LABELS ${lab})\n")
      endif()
    endforeach()
  endif()
  file(WRITE "${_st_OUTPUT}" "${script}")
  include("${_st_OUTPUT}")
endfunction()
