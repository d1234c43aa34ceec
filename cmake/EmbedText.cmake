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
