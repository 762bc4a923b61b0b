# What a sanitizer build (-DACCEL_SANITIZE=ON) needs beyond the compiler flags of
# settings.cmake, so the integration tests run the sanitized daemons and hooks too:
#
# 1. spank_accel.so is loaded by Slurm's own, uninstrumented programs (slurmd, slurmstepd,
#    srun, sbatch). A plugin that needs the ASan runtime cannot load there (the runtime must
#    come first in the process), and preloading libasan into every Slurm program would also
#    put it into every job's tasks. So <build>/lib/spank_accel.so is built a second time
#    without sanitizers, from plain copies of the libraries it links; the instrumented plugin
#    goes to <build>/lib/sanitized. The plugin's logic is still tested sanitized (spank_test).
#
# 2. Every sanitized executable reads its options also from <build>/sanitizer/*.options when
#    those files exist. scripts/slurm-sandbox writes them while a sandbox of this build runs:
#    reports then go to files in the sandbox's log directory, whoever starts the program
#    (slurmd gives the Prolog an environment of its own, and the agent starts surrogate steps
#    with a minimal one), and `slurm-sandbox down` fails while any report is there. Options in
#    the environment (ASAN_OPTIONS, ...) still come last and win.
if(NOT ACCEL_SANITIZE OR ACCEL_SANITIZE STREQUAL "thread" OR ACCEL_FUZZ)
  return()
endif()

# --- 2. options files ---------------------------------------------------------------------------
set(ACCEL_SANITIZER_DIR ${PROJECT_BINARY_DIR}/sanitizer)
file(MAKE_DIRECTORY ${ACCEL_SANITIZER_DIR})
configure_file(${CMAKE_CURRENT_LIST_DIR}/sanitizer_defaults.cpp.in
               ${ACCEL_SANITIZER_DIR}/sanitizer_defaults.cpp @ONLY)
target_sources(accel_settings INTERFACE
  $<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:${ACCEL_SANITIZER_DIR}/sanitizer_defaults.cpp>)

# --- 1. the plain plugin ------------------------------------------------------------------------
# accel_plain_copy(TARGET OUT): OUT is TARGET itself when nothing it links is instrumented,
# else TARGET_plain: the same sources, include directories, definitions and options, linking
# accel_settings_plain and the plain copies of the project libraries it links.
function(accel_plain_copy target out)
  if(target STREQUAL "accel_settings")
    set(${out} accel_settings_plain PARENT_SCOPE)
    return()
  endif()
  if(NOT TARGET ${target} OR TARGET ${target}_plain)
    set(${out} ${target} PARENT_SCOPE)
    if(TARGET ${target}_plain)
      set(${out} ${target}_plain PARENT_SCOPE)
    endif()
    return()
  endif()
  get_target_property(imported ${target} IMPORTED)
  get_target_property(aliased ${target} ALIASED_TARGET)
  if(imported OR aliased)
    set(${out} ${target} PARENT_SCOPE)
    return()
  endif()
  get_target_property(type ${target} TYPE)
  # The link lists, with each project library replaced by its plain copy.
  set(changed FALSE)
  foreach(prop LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
    set(mapped_${prop})
    if(type STREQUAL "INTERFACE_LIBRARY" AND prop STREQUAL "LINK_LIBRARIES")
      continue()
    endif()
    get_target_property(items ${target} ${prop})
    if(NOT items)
      continue()
    endif()
    foreach(item IN LISTS items)
      set(wrap "")
      if(item MATCHES "^\\$<LINK_ONLY:(.+)>$")
        set(item ${CMAKE_MATCH_1})
        set(wrap LINK_ONLY)
      endif()
      if(item MATCHES "^::@" OR NOT TARGET ${item})
        set(copy ${item})
      else()
        accel_plain_copy(${item} copy)
      endif()
      if(NOT copy STREQUAL item)
        set(changed TRUE)
      endif()
      if(wrap)
        set(copy "$<LINK_ONLY:${copy}>")
      endif()
      list(APPEND mapped_${prop} ${copy})
    endforeach()
  endforeach()
  if(NOT changed)
    set(${out} ${target} PARENT_SCOPE)
    return()
  endif()

  set(copy ${target}_plain)
  if(type STREQUAL "STATIC_LIBRARY")
    add_library(${copy} STATIC)
  elseif(type STREQUAL "MODULE_LIBRARY")
    add_library(${copy} MODULE)
  elseif(type STREQUAL "INTERFACE_LIBRARY")
    add_library(${copy} INTERFACE)
  else()
    message(FATAL_ERROR "accel_plain_copy: ${target} is a ${type}; only static, module and "
                        "interface libraries can be copied")
  endif()
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(sources ${target} SOURCES)
    get_target_property(source_dir ${target} SOURCE_DIR)
    get_target_property(binary_dir ${target} BINARY_DIR)
    set(absolute)
    foreach(s IN LISTS sources)
      if(IS_ABSOLUTE ${s} OR s MATCHES "^\\$<")
        list(APPEND absolute ${s})
      elseif(EXISTS ${source_dir}/${s})
        list(APPEND absolute ${source_dir}/${s})
      else()
        list(APPEND absolute ${binary_dir}/${s})
      endif()
    endforeach()
    target_sources(${copy} PRIVATE ${absolute})
    foreach(prop INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS COMPILE_FEATURES
                 LINK_OPTIONS CXX_VISIBILITY_PRESET VISIBILITY_INLINES_HIDDEN PREFIX
                 LINK_DEPENDS POSITION_INDEPENDENT_CODE)
      get_target_property(value ${target} ${prop})
      if(NOT value STREQUAL "value-NOTFOUND")
        set_property(TARGET ${copy} PROPERTY ${prop} "${value}")
      endif()
    endforeach()
    set_property(TARGET ${copy} PROPERTY LINK_LIBRARIES "${mapped_LINK_LIBRARIES}")
  endif()
  foreach(prop INTERFACE_INCLUDE_DIRECTORIES INTERFACE_COMPILE_DEFINITIONS
               INTERFACE_COMPILE_OPTIONS INTERFACE_COMPILE_FEATURES INTERFACE_LINK_OPTIONS)
    get_target_property(value ${target} ${prop})
    if(NOT value STREQUAL "value-NOTFOUND")
      set_property(TARGET ${copy} PROPERTY ${prop} "${value}")
    endif()
  endforeach()
  set_property(TARGET ${copy} PROPERTY INTERFACE_LINK_LIBRARIES "${mapped_INTERFACE_LINK_LIBRARIES}")
  get_target_property(deps ${target} MANUALLY_ADDED_DEPENDENCIES)
  if(deps)
    add_dependencies(${copy} ${deps})
  endif()
  set(${out} ${copy} PARENT_SCOPE)
endfunction()

accel_plain_copy(spank_accel accel_plain_plugin)
if(NOT accel_plain_plugin STREQUAL "spank_accel_plain")
  message(FATAL_ERROR "spank_accel links nothing instrumented? (got ${accel_plain_plugin})")
endif()
set_target_properties(spank_accel PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib/sanitized)
set_target_properties(spank_accel_plain PROPERTIES
  OUTPUT_NAME spank_accel
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)
