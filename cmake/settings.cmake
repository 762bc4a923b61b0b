# One settings target that every project target links: warnings, hardening,
# and the optional sanitizer instrumentation. Nothing here is target-specific.
# accel_settings_plain is the same without the sanitizers (cmake/sanitize.cmake).
add_library(accel_settings_plain INTERFACE)
add_library(accel_settings INTERFACE)
target_link_libraries(accel_settings INTERFACE accel_settings_plain)
target_compile_features(accel_settings_plain INTERFACE cxx_std_20)
target_compile_options(accel_settings_plain INTERFACE
  -Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wcast-align -Wunused
  -Woverloaded-virtual -Wformat=2 -Wimplicit-fallthrough
  -fstack-protector-strong -fno-strict-aliasing
  $<$<BOOL:${ACCEL_WERROR}>:-Werror>)
target_compile_definitions(accel_settings_plain INTERFACE
  $<$<NOT:$<CONFIG:Debug>>:_FORTIFY_SOURCE=2>
  _GLIBCXX_ASSERTIONS)
target_link_options(accel_settings_plain INTERFACE -Wl,-z,relro -Wl,-z,now -Wl,--as-needed)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)

if(ACCEL_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ACCEL_FUZZ needs clang: configure with CC=clang CXX=clang++")
  endif()
  # Every library is instrumented for coverage; the fuzz targets add the driver.
  target_compile_options(accel_settings INTERFACE -fsanitize=fuzzer-no-link)
  set(ACCEL_SANITIZE ON)
endif()

if(ACCEL_SANITIZE STREQUAL "thread")
  target_compile_options(accel_settings INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(accel_settings INTERFACE -fsanitize=thread)
  target_compile_options(accel_settings INTERFACE -U_FORTIFY_SOURCE)
elseif(ACCEL_SANITIZE)
  target_compile_options(accel_settings INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(accel_settings INTERFACE -fsanitize=address,undefined)
  # FORTIFY and ASan disagree about some interceptors.
  target_compile_options(accel_settings INTERFACE -U_FORTIFY_SOURCE)
endif()
