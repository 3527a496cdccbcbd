# TallyDeps.cmake - finds the libraries tally links, as a site provides them: a Debian package, an
# environment module (`module load ...`, which sets CPATH/LIBRARY_PATH/PKG_CONFIG_PATH or
# CMAKE_PREFIX_PATH), or a Spack environment. Each dependency becomes one target tally::<name>:
#   1. the library's own CMake package or CMake's find module where there is one (MPI, HDF5,
#      libcurl, OpenSSL, zlib);
#   2. else its pkg-config file;
#   3. else its header and library found by name under CMAKE_PREFIX_PATH and the usual paths.
# A dependency that is missing stops the configuration with one line naming it and what
# provides it (Debian package, Spack spec, module name).

find_package(PkgConfig QUIET)

# tally_dep(NAME HEADER LIB PKGCONFIG PROVIDES)
#   NAME: tally::NAME is made; HEADER: a header to find (path under the include folder);
#   LIB: the library's name (as -lLIB); PKGCONFIG: its pkg-config module; PROVIDES: the message.
function(tally_dep name header lib pc provides)
  if(TARGET tally::${name})
    return()
  endif()
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(TALLY_PC_${name} QUIET IMPORTED_TARGET GLOBAL ${pc})
    if(TALLY_PC_${name}_FOUND)
      add_library(tally::${name} INTERFACE IMPORTED GLOBAL)
      target_link_libraries(tally::${name} INTERFACE PkgConfig::TALLY_PC_${name})
      message(STATUS "tally: ${name}: pkg-config ${pc} ${TALLY_PC_${name}_VERSION}")
      return()
    endif()
  endif()
  find_path(TALLY_${name}_INCLUDE ${header})
  find_library(TALLY_${name}_LIBRARY ${lib})
  if(TALLY_${name}_INCLUDE AND TALLY_${name}_LIBRARY)
    add_library(tally::${name} INTERFACE IMPORTED GLOBAL)
    target_include_directories(tally::${name} INTERFACE ${TALLY_${name}_INCLUDE})
    target_link_libraries(tally::${name} INTERFACE ${TALLY_${name}_LIBRARY})
    message(STATUS "tally: ${name}: ${TALLY_${name}_LIBRARY}")
    return()
  endif()
  message(FATAL_ERROR "tally: ${name} not found (${header}, lib${lib}, pkg-config ${pc}): ${provides}; "
                      "or point CMAKE_PREFIX_PATH / PKG_CONFIG_PATH at its install")
endfunction()

# A header-only library: tally::NAME with its include folder.
function(tally_header_dep name header provides)
  find_path(TALLY_${name}_INCLUDE ${header})
  if(NOT TALLY_${name}_INCLUDE)
    message(FATAL_ERROR "tally: ${name} not found (${header}): ${provides}; or point CMAKE_PREFIX_PATH at it")
  endif()
  add_library(tally::${name} INTERFACE IMPORTED GLOBAL)
  target_include_directories(tally::${name} INTERFACE ${TALLY_${name}_INCLUDE})
endfunction()

# Parallel HDF5: CMake's FindHDF5 preferring the parallel build (h5pcc, `module load
# hdf5/parallel`, Spack hdf5+mpi), else the pkg-config names Debian and others ship.
function(tally_find_parallel_hdf5)
  set(HDF5_PREFER_PARALLEL TRUE)
  find_package(HDF5 QUIET COMPONENTS C)
  if(HDF5_FOUND AND HDF5_IS_PARALLEL)
    add_library(tally::hdf5 INTERFACE IMPORTED GLOBAL)
    if(TARGET hdf5::hdf5)
      target_link_libraries(tally::hdf5 INTERFACE hdf5::hdf5)
    else()
      target_include_directories(tally::hdf5 INTERFACE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
      target_link_libraries(tally::hdf5 INTERFACE ${HDF5_C_LIBRARIES} ${HDF5_LIBRARIES})
      target_compile_definitions(tally::hdf5 INTERFACE ${HDF5_DEFINITIONS})
    endif()
    message(STATUS "tally: parallel HDF5 ${HDF5_VERSION} (FindHDF5)")
    return()
  endif()
  if(PKG_CONFIG_FOUND)
    foreach(pc hdf5-openmpi hdf5-mpich hdf5_parallel)
      pkg_check_modules(TALLY_PC_hdf5 QUIET IMPORTED_TARGET GLOBAL ${pc})
      if(TALLY_PC_hdf5_FOUND)
        add_library(tally::hdf5 INTERFACE IMPORTED GLOBAL)
        target_link_libraries(tally::hdf5 INTERFACE PkgConfig::TALLY_PC_hdf5)
        message(STATUS "tally: parallel HDF5: pkg-config ${pc} ${TALLY_PC_hdf5_VERSION}")
        return()
      endif()
    endforeach()
  endif()
  if(HDF5_FOUND)
    message(FATAL_ERROR "tally: HDF5 ${HDF5_VERSION} was found but it is not built for MPI (parallel HDF5 is "
                        "needed): `module load hdf5/parallel` (names vary: phdf5, hdf5-mpi), Spack `hdf5+mpi`, "
                        "Debian libhdf5-openmpi-dev")
  endif()
  message(FATAL_ERROR "tally: parallel HDF5 not found: `module load hdf5/parallel` (or phdf5), Spack `hdf5+mpi`, "
                      "Debian libhdf5-openmpi-dev; or set HDF5_ROOT")
endfunction()

function(tally_find_module_dep name pkg target provides)
  find_package(${pkg} QUIET)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "tally: ${name} not found: ${provides}; or point CMAKE_PREFIX_PATH at it")
  endif()
  add_library(tally::${name} INTERFACE IMPORTED GLOBAL)
  target_link_libraries(tally::${name} INTERFACE ${target})
endfunction()
