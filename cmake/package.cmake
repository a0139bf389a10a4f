# Exported CMake package: an app does find_package(batchconv) and links
# batchconv::batchconv (the runtime plus the AOT kernel libraries).
include(CMakePackageConfigHelpers)
set(BATCHCONV_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/batchconv)
if(TARGET batchconv_runtime)
  install(EXPORT batchconvTargets NAMESPACE batchconv:: DESTINATION ${BATCHCONV_CMAKE_DIR})
endif()
configure_package_config_file(cmake/batchconvConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/batchconvConfig.cmake INSTALL_DESTINATION ${BATCHCONV_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/batchconvConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/batchconvConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/batchconvConfigVersion.cmake DESTINATION ${BATCHCONV_CMAKE_DIR})
if(TARGET batchconv-compile)
  # batchconv_add_model(): compile an ONNX model into a static library at build time.
  install(FILES cmake/batchconv_add_model.cmake DESTINATION ${BATCHCONV_CMAKE_DIR})
endif()
