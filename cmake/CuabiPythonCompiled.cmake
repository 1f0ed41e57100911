# The Python binding's compiled module, cuabi._cuabi_cffi: cffi's API
# (out-of-line) mode over cuabi/cuabi.h, linked to libcuabi.
#
#   cuabi_add_python_compiled_module(<target>
#     LIBRARY <cuabi target or library file>   what the module links to
#     INCLUDE_DIR <dir>                        holds cuabi/cuabi.h
#     API <.../cuabi/_api.py>                  the generated declarations (CDEF)
#     GENERATOR <.../build_cffi_module.py>     writes the C source with cffi
#     OUTPUT_DIRECTORY <dir>                   where _cuabi_cffi.abi3.so goes
#     RESULT <var>)                            ON when the target was added
#
# The C source is generated at build time from the cdef the regenerator
# writes into _api.py (never a second list of declarations). The module is
# built for the stable ABI (cffi defines Py_LIMITED_API), so one file serves
# every CPython 3; its RUNPATH is $ORIGIN, and the package loads the
# libcuabi it found before importing it, so the module binds to that library
# (matched by its soname) wherever it lies.
#
# Where the Python headers, cffi or a C compiler are missing, no target is
# added and a message says why: the build goes on without the module, and
# the package uses its ctypes backend.
function(cuabi_add_python_compiled_module target)
  cmake_parse_arguments(A "" "LIBRARY;INCLUDE_DIR;API;GENERATOR;OUTPUT_DIRECTORY;RESULT" "" ${ARGN})
  set(${A_RESULT} OFF PARENT_SCOPE)
  set(_why "")
  # C is enabled by the caller, at directory scope (enable_language cannot
  # be called from a function): see bindings/python/CMakeLists.txt.
  if(NOT CMAKE_C_COMPILER_LOADED)
    set(_why "no C compiler")
  else()
    find_package(Python 3.8 COMPONENTS Interpreter Development.Module QUIET)
    if(NOT Python_Interpreter_FOUND OR NOT Python_Development.Module_FOUND)
      set(_why "no Python interpreter with its C headers (set Python_EXECUTABLE)")
    else()
      execute_process(COMMAND ${Python_EXECUTABLE} -c "import cffi"
                      RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
      if(NOT _rc EQUAL 0)
        set(_why "cffi is not installed for ${Python_EXECUTABLE} (pip install cffi)")
      endif()
    endif()
  endif()
  if(_why)
    message(STATUS "cuabi: no compiled Python module (${_why}); "
                   "the package falls back to its ctypes backend")
    return()
  endif()

  set(_c ${CMAKE_CURRENT_BINARY_DIR}/${target}/_cuabi_cffi.c)
  add_custom_command(
    OUTPUT ${_c}
    COMMAND ${Python_EXECUTABLE} ${A_GENERATOR} --api ${A_API} --out ${_c}
    DEPENDS ${A_GENERATOR} ${A_API}
    COMMENT "cffi: the C source of cuabi._cuabi_cffi"
    VERBATIM)
  # Beside it, the cffi backend's cdef parsed ahead (cffi's out-of-line ABI
  # mode, plain Python): that backend imports it instead of parsing the
  # cdef at start-up.
  set(_abi ${A_OUTPUT_DIRECTORY}/_cuabi_cffi_abi.py)
  add_custom_command(
    OUTPUT ${_abi}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${A_OUTPUT_DIRECTORY}
    COMMAND ${Python_EXECUTABLE} ${A_GENERATOR} --api ${A_API} --abi-out ${_abi}
    DEPENDS ${A_GENERATOR} ${A_API}
    COMMENT "cffi: the cdef of cuabi's cffi backend, parsed ahead"
    VERBATIM)
  add_library(${target} MODULE ${_c} ${_abi})
  target_include_directories(${target} PRIVATE ${A_INCLUDE_DIR})
  target_include_directories(${target} SYSTEM PRIVATE ${Python_INCLUDE_DIRS})
  target_link_libraries(${target} PRIVATE ${A_LIBRARY})
  # The cdef declares the header's enum types as their int32_t storage (the
  # same size, which cffi checks): pointers to them differ only in name.
  target_compile_options(${target} PRIVATE -Wno-incompatible-pointer-types)
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME _cuabi_cffi
    SUFFIX ".abi3.so"
    C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${A_OUTPUT_DIRECTORY}
    BUILD_RPATH "$ORIGIN"
    INSTALL_RPATH "$ORIGIN")
  message(STATUS "cuabi: compiled Python module ${A_OUTPUT_DIRECTORY}/_cuabi_cffi.abi3.so "
                 "(cffi API mode, ${Python_EXECUTABLE})")
  set(${A_RESULT} ON PARENT_SCOPE)
endfunction()
