# Embedding the decision core: the installable CMake package and the C example's test.
# Included once, at the end of the top-level CMakeLists.txt.
#
# `cmake --install` (and the wheel, through scikit-build-core) installs the headers, the static
# library spare_fast_core and a CMake package, so that another project builds against it with
#   find_package(spare_fast CONFIG REQUIRED)
#   target_link_libraries(my_scheduler PRIVATE spare_fast::core)
# In the wheel everything sits under the package directory (site-packages/spare_fast/...), where
# spare_fast.get_include() and spare_fast.get_cmake_dir() find it.
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

if(SKBUILD)
  set(_spare_fast_include_default spare_fast/include)
  set(_spare_fast_lib_default spare_fast/lib)
  set(_spare_fast_cmake_default spare_fast/share/cmake/spare_fast)
else()
  set(_spare_fast_include_default ${CMAKE_INSTALL_INCLUDEDIR})
  set(_spare_fast_lib_default ${CMAKE_INSTALL_LIBDIR})
  set(_spare_fast_cmake_default ${CMAKE_INSTALL_LIBDIR}/cmake/spare_fast)
endif()
set(SPARE_FAST_INSTALL_INCLUDEDIR ${_spare_fast_include_default} CACHE STRING
    "Install directory of the headers (relative to the prefix)")
set(SPARE_FAST_INSTALL_LIBDIR ${_spare_fast_lib_default} CACHE STRING
    "Install directory of the static library (relative to the prefix)")
set(SPARE_FAST_INSTALL_CMAKEDIR ${_spare_fast_cmake_default} CACHE STRING
    "Install directory of spare_fastConfig.cmake (relative to the prefix)")

# Consumers need C++17 for the headers and the thread library the Monte Carlo kernel uses.
find_package(Threads REQUIRED)
target_compile_features(spare_fast_core PUBLIC cxx_std_17)
target_link_libraries(spare_fast_core PUBLIC Threads::Threads)
target_include_directories(spare_fast_core PUBLIC
  $<INSTALL_INTERFACE:${SPARE_FAST_INSTALL_INCLUDEDIR}>)
set_target_properties(spare_fast_core PROPERTIES EXPORT_NAME core)
# spf_version() reports the project version.
set_property(SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/csrc/src/c_api.cpp APPEND PROPERTY
  COMPILE_DEFINITIONS SPARE_FAST_VERSION="${PROJECT_VERSION}")

install(TARGETS spare_fast_core EXPORT spare_fastTargets
  ARCHIVE DESTINATION ${SPARE_FAST_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${SPARE_FAST_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${SPARE_FAST_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/csrc/include/spare_fast
  DESTINATION ${SPARE_FAST_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(EXPORT spare_fastTargets NAMESPACE spare_fast:: FILE spare_fastTargets.cmake
  DESTINATION ${SPARE_FAST_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/spare_fastConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/spare_fastConfig.cmake
  INSTALL_DESTINATION ${SPARE_FAST_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/spare_fastConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/spare_fastConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/spare_fastConfigVersion.cmake
  DESTINATION ${SPARE_FAST_INSTALL_CMAKEDIR})

# The C ABI example is a C program: built and run as a test (under the sanitizers when
# SPARE_FAST_SANITIZE is on, since those flags apply to every target of this directory).
if(SPARE_FAST_TESTS)
  enable_language(C)
  add_executable(c_api_example ${CMAKE_CURRENT_SOURCE_DIR}/csrc/examples/c_api_example.c)
  set_target_properties(c_api_example PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON)
  target_link_libraries(c_api_example PRIVATE spare_fast_core)
  target_compile_options(c_api_example PRIVATE ${SPARE_FAST_WARNINGS})
  add_test(NAME c_api_example COMMAND c_api_example 2000 8)
endif()
