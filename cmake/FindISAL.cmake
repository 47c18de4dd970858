# Finds Intel ISA-L (Debian's libisal-dev; halo uses its igzip inflate) and defines the imported
# target ISAL::isal. Sets ISAL_VERSION from <isa-l.h> when that header is present.
find_path(ISAL_INCLUDE_DIR isa-l/igzip_lib.h)
find_library(ISAL_LIBRARY isal)
if(ISAL_INCLUDE_DIR AND EXISTS "${ISAL_INCLUDE_DIR}/isa-l.h")
  file(STRINGS "${ISAL_INCLUDE_DIR}/isa-l.h" isal_version_lines REGEX "^#define ISAL_(MAJOR|MINOR|PATCH)_VERSION ")
  foreach(part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*#define ISAL_${part}_VERSION ([0-9]+).*" "\\1" isal_${part} "${isal_version_lines}")
  endforeach()
  set(ISAL_VERSION "${isal_MAJOR}.${isal_MINOR}.${isal_PATCH}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ISAL REQUIRED_VARS ISAL_LIBRARY ISAL_INCLUDE_DIR VERSION_VAR ISAL_VERSION)
if(ISAL_FOUND AND NOT TARGET ISAL::isal)
  add_library(ISAL::isal UNKNOWN IMPORTED)
  set_target_properties(ISAL::isal PROPERTIES
    IMPORTED_LOCATION "${ISAL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ISAL_INCLUDE_DIR}")
endif()
mark_as_advanced(ISAL_INCLUDE_DIR ISAL_LIBRARY)
