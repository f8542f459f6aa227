# Run at build time (POST_BUILD): asks a test program for its cases (`--list`) and writes one
# CTest test per case, so that every case passes, fails or skips on its own line.
# Inputs: PROGRAM, OUTPUT, LABEL, PREFIX, TIMEOUT.
execute_process(COMMAND "${PROGRAM}" --list OUTPUT_VARIABLE cases RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} --list failed (${status})")
endif()
string(REPLACE "\n" ";" cases "${cases}")
set(content "")
foreach(case IN LISTS cases)
  if(case STREQUAL "")
    continue()
  endif()
  string(APPEND content "add_test(\"${PREFIX}.${case}\" \"${PROGRAM}\" --case \"${case}\")\n")
  string(APPEND content "set_tests_properties(\"${PREFIX}.${case}\" PROPERTIES LABELS \"${LABEL}\" "
                        "SKIP_RETURN_CODE 77 TIMEOUT ${TIMEOUT})\n")
endforeach()
file(WRITE "${OUTPUT}" "${content}")
