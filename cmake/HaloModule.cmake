# halo_add_module(): one static library per top-level folder, exported as halo::<name>.
#
#   halo_add_module(graph SOURCES a.cpp b.cpp [CUDA_SOURCES k.cu] [DEPS public targets] [PRIVATE_DEPS ...])
#
# Headers are included from the repository root ("graph/csr.hpp") and installed under
# include/halo/<folder>/, so the same include lines work against an installed halo.
function(halo_add_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;CUDA_SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  set(target halo_${name})
  set(sources ${ARG_SOURCES})
  if(HALO_WITH_CUDA)
    list(APPEND sources ${ARG_CUDA_SOURCES})
  endif()
  add_library(${target} STATIC ${sources})
  add_library(halo::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME halo_${name})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/halo>)
  target_compile_features(${target} PUBLIC cxx_std_17)
  target_link_libraries(${target} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  halo_set_warnings(${target})
  if(HALO_WITH_CUDA)
    target_compile_definitions(${target} PUBLIC HALO_WITH_CUDA=1)
  endif()
  set_property(GLOBAL APPEND PROPERTY HALO_MODULE_TARGETS ${target})
  file(GLOB headers CONFIGURE_DEPENDS
    "${CMAKE_CURRENT_SOURCE_DIR}/*.hpp" "${CMAKE_CURRENT_SOURCE_DIR}/*/*.hpp")
  foreach(header ${headers})
    file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${header}")
    get_filename_component(dir "${rel}" DIRECTORY)
    install(FILES "${header}" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/halo/${dir}")
  endforeach()
endfunction()

# Warnings and the optional -march=native, for C++ sources only (nvcc gets its own flags).
function(halo_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor>)
  if(HALO_NATIVE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-march=native>)
  endif()
endfunction()
