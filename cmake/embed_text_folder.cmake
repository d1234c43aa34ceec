# Writes a C++ source whose function SYMBOL() returns the text of every DIR/*.json (file-name order) as raw
# string literals. Used for plug-ins kept one file per entry (presets/frameworks/).
file(GLOB inputs "${DIR}/*.json")
list(SORT inputs)
set(body "")
foreach(input ${inputs})
  file(READ "${input}" content)
  string(APPEND body "      R\"trainsim_embed(${content})trainsim_embed\",\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "// Generated from ${DIR}/*.json; edit those files instead.\n#include <string_view>\n#include <vector>\nnamespace trainsim::embedded {\nstd::vector<std::string_view> ${SYMBOL}();\nstd::vector<std::string_view> ${SYMBOL}() {\n  return {\n${body}  };\n}\n}\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")
file(REMOVE "${OUTPUT}.tmp")
