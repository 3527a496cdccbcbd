# svg_html.cmake - the SVG charts and the self-contained HTML page (issue 33): a library of its
# own, tally_svg_html, pure C11 on core (no MPI, HDF5, curl or CUDA: built in TALLY_CORE_ONLY
# builds too), kept apart from the rest of src/report so that the two lists merge without
# conflict. Included by the top-level CMakeLists.txt right after tally_core. Sources:
# src/report/svg.c (primitives), svg_charts.c (the chart kinds), html.c (the page).
# Unit tests that include tally/svg.h or tally/html.h link it (tests/CMakeLists.txt).
add_library(tally_svg_html STATIC
  ${CMAKE_SOURCE_DIR}/src/report/svg.c
  ${CMAKE_SOURCE_DIR}/src/report/svg_charts.c
  ${CMAKE_SOURCE_DIR}/src/report/html.c)
target_include_directories(tally_svg_html PRIVATE ${CMAKE_SOURCE_DIR}/src/report)
target_link_libraries(tally_svg_html PUBLIC tally_core m)
target_compile_options(tally_svg_html PRIVATE ${TALLY_WARN})

if(TALLY_TESTS)
  # tally-html-demo OUT.html: a page with every chart kind, a sortable table and a details
  # block, for tests/e2e/test_html_chromium.sh (built beside the tally binary)
  add_executable(tally-html-demo ${CMAKE_SOURCE_DIR}/tests/tools/html_demo.c)
  target_link_libraries(tally-html-demo PRIVATE tally_svg_html)
  target_compile_options(tally-html-demo PRIVATE ${TALLY_WARN})
  set_target_properties(tally-html-demo PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
endif()
