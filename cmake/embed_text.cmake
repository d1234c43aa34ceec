# Writes a C++ source that holds the text of INPUT as a raw string literal named SYMBOL.
# Used to build the preset tables and the default scenario into the binary (no files needed at run time).
file(READ "${INPUT}" content)
file(WRITE "${OUTPUT}.tmp" "// Generated from ${INPUT}; edit that file instead.\n#include <string_view>\nnamespace trainsim::embedded {\nextern const std::string_view ${SYMBOL};\nconst std::string_view ${SYMBOL} = R\"trainsim_embed(${content})trainsim_embed\";\n}\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")
file(REMOVE "${OUTPUT}.tmp")
