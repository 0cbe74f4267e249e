# Writes a manual page from a program's own --help, so the page cannot drift from the program.
# Run at build time as a script:
#   cmake -DPROGRAM=path -DNAME=wavefront-cli -DSUMMARY="one line" -DVERSION=x.y.z -DSEE_ALSO=other
#         [-DSUBCOMMANDS=ON] -DOUTPUT=file.1 -P ManPage.cmake
# With SUBCOMMANDS, every command that the top-level help lists under "Commands:" gets a section with its
# own --help, so a new sub-command is documented without touching this file. The help texts are kept as
# preformatted blocks: Qt's parser has already laid out the option columns.

foreach(var PROGRAM NAME SUMMARY VERSION OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "ManPage.cmake: ${var} is not set")
  endif()
endforeach()

# The programs must not need a display or print a sanitizer's leak report for --help.
set(ENV{QT_QPA_PLATFORM} offscreen)
set(ENV{ASAN_OPTIONS} detect_leaks=0)

function(run_help out_var)
  execute_process(COMMAND ${PROGRAM} ${ARGN} --help
                  OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR text STREQUAL "")
    string(REPLACE ";" " " args "${ARGN}")
    message(FATAL_ERROR "ManPage.cmake: '${PROGRAM} ${args} --help' exited with ${rc}: ${err}")
  endif()
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# roff: a backslash is \e, a minus that must stay a minus (options) is \-, and a line may not start with
# a control character ('.' or "'").
function(roff_block out_var text)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REPLACE "-" "\\-" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  string(REGEX REPLACE "\n+$" "" text "${text}")
  set(${out_var} ".nf\n${text}\n.fi\n" PARENT_SCOPE)
endfunction()

string(TOUPPER "${NAME}" title)
string(REPLACE "-" "\\-" name_roff "${NAME}")
string(REPLACE "-" "\\-" summary_roff "${SUMMARY}")
run_help(main_help)
roff_block(main_block "${main_help}")
set(page ".TH ${title} 1 \"\" \"${NAME} ${VERSION}\" \"User Commands\"\n")
string(APPEND page ".SH NAME\n${name_roff} \\- ${summary_roff}\n")
string(APPEND page ".SH DESCRIPTION\n${main_block}")

if(SUBCOMMANDS)
  # "Commands:" is followed by lines "  NAME   what it does"; a name may be two words ("bench oof").
  string(REGEX MATCH "Commands:\n(  [^\n]*\n)+" listing "${main_help}")
  string(REGEX MATCHALL "\n  [a-z][a-z0-9-]*( [a-z][a-z0-9-]*)?  " names "${listing}")
  if(names STREQUAL "")
    message(FATAL_ERROR "ManPage.cmake: no commands found in the help of ${PROGRAM}")
  endif()
  string(APPEND page ".SH COMMANDS\n")
  foreach(entry IN LISTS names)
    string(STRIP "${entry}" command)
    string(REPLACE " " ";" command_args "${command}")
    run_help(command_help ${command_args})
    roff_block(command_block "${command_help}")
    string(REPLACE "-" "\\-" command_roff "${command}")
    string(APPEND page ".SS ${command_roff}\n${command_block}")
  endforeach()
endif()

if(DEFINED SEE_ALSO)
  string(REPLACE "-" "\\-" see_also_roff "${SEE_ALSO}")
  string(APPEND page ".SH SEE ALSO\n\\fB${see_also_roff}\\fR(1)\n")
endif()
file(WRITE "${OUTPUT}" "${page}")
