# embed_text(OUT_VAR SYMBOL INPUT): generates a .cpp holding INPUT's text; appends it to OUT_VAR.
function(embed_text out_var symbol input)
  set(output "${CMAKE_CURRENT_BINARY_DIR}/embedded_${symbol}.cpp")
  add_custom_command(OUTPUT "${output}"
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUTPUT=${output} -DSYMBOL=${symbol}
            -P "${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake"
    DEPENDS "${input}" "${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake"
    COMMENT "Embedding ${input}")
  set(${out_var} ${${out_var}} "${output}" PARENT_SCOPE)
endfunction()

# embed_text_folder(OUT_VAR SYMBOL DIR): generates a .cpp whose function SYMBOL() returns the text of every
# DIR/*.json, in file-name order; appends it to OUT_VAR. A new file in DIR is picked up at the next build
# (CONFIGURE_DEPENDS), so a plug-in kept as one file per entry registers by adding the file.
function(embed_text_folder out_var symbol dir)
  file(GLOB inputs CONFIGURE_DEPENDS "${dir}/*.json")
  list(SORT inputs)
  set(output "${CMAKE_CURRENT_BINARY_DIR}/embedded_${symbol}.cpp")
  add_custom_command(OUTPUT "${output}"
    COMMAND ${CMAKE_COMMAND} -DDIR=${dir} -DOUTPUT=${output} -DSYMBOL=${symbol}
            -P "${PROJECT_SOURCE_DIR}/cmake/embed_text_folder.cmake"
    DEPENDS ${inputs} "${PROJECT_SOURCE_DIR}/cmake/embed_text_folder.cmake"
    COMMENT "Embedding ${dir}/*.json")
  set(${out_var} ${${out_var}} "${output}" PARENT_SCOPE)
endfunction()
