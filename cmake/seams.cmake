# Seams (DESIGN.md section 2): one folder, one library, its dependencies declared here and nowhere else.
# ib_seam(NAME DIR SOURCES ... DEPS ... LINK ...) makes the static library ib_<NAME> from the sources of
# DIR and links it to the seams it may use (DEPS, by seam name) and to outside libraries (LINK).
# ib_seam_table() writes every seam's folder and dependencies to seams.json; the target ib_check_seams
# (part of every build) reads it and fails the build when a file includes a header of a seam it does not
# depend on (cmake/check_seams.py).

function(ib_seam_declare name dir)
  set_property(GLOBAL APPEND PROPERTY IB_SEAMS "${name}")
  set_property(GLOBAL PROPERTY IB_SEAM_DIR_${name} "${dir}")
  set_property(GLOBAL PROPERTY IB_SEAM_DEPS_${name} "${ARGN}")
endfunction()

function(ib_seam name)
  cmake_parse_arguments(S "INTERFACE" "DIR" "SOURCES;DEPS;LINK" ${ARGN})
  if(S_INTERFACE)
    add_library(ib_${name} INTERFACE)
    set(scope INTERFACE)
  else()
    add_library(ib_${name} STATIC ${S_SOURCES})
    set(scope PUBLIC)
    target_compile_options(ib_${name} PRIVATE -Wall -Wextra -Wpedantic)
  endif()
  target_include_directories(ib_${name} ${scope} ${PROJECT_SOURCE_DIR})
  foreach(dep IN LISTS S_DEPS)
    target_link_libraries(ib_${name} ${scope} ib_${dep})
  endforeach()
  if(S_LINK)
    target_link_libraries(ib_${name} ${scope} ${S_LINK})
  endif()
  ib_seam_declare(${name} ${S_DIR} ${S_DEPS})
endfunction()

function(ib_seam_table out)
  get_property(seams GLOBAL PROPERTY IB_SEAMS)
  set(entries "")
  foreach(name IN LISTS seams)
    get_property(dir GLOBAL PROPERTY IB_SEAM_DIR_${name})
    get_property(deps GLOBAL PROPERTY IB_SEAM_DEPS_${name})
    set(quoted "")
    foreach(d IN LISTS deps)
      list(APPEND quoted "\"${d}\"")
    endforeach()
    list(JOIN quoted ", " deps_json)
    list(APPEND entries "  \"${name}\": {\"dir\": \"${dir}\", \"deps\": [${deps_json}]}")
  endforeach()
  list(JOIN entries ",\n" body)
  file(WRITE ${out} "{\n${body}\n}\n")
endfunction()
