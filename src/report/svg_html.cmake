# svg_html.cmake - the SVG charts and the self-contained HTML page (issue 33). Their sources
# (src/report/svg.c: primitives, svg_charts.c: the chart kinds, html.c: the page) are compiled
# into core's archive with the rest of src/report (the HTML renderer of a report draws its charts
# with them); tally_svg_html is the name tests and tools link. Included by the top-level
# CMakeLists.txt right after tally_core.
add_library(tally_svg_html INTERFACE)
target_link_libraries(tally_svg_html INTERFACE tally_core m)

if(TALLY_TESTS)
  # tally-html-demo OUT.html: a page with every chart kind, a sortable table and a details
  # block, for tests/e2e/test_html_chromium.sh (built beside the tally binary)
  add_executable(tally-html-demo ${CMAKE_SOURCE_DIR}/tests/tools/html_demo.c)
  target_link_libraries(tally-html-demo PRIVATE tally_svg_html)
  target_compile_options(tally-html-demo PRIVATE ${TALLY_WARN})
  set_target_properties(tally-html-demo PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
endif()
