# Installs the library, the headers (include/ as it is: the thesis's dcuda_host.h and
# dcuda_device.cu.h at the top, the API below dcuda/) and a CMake package: find_package(dcuda) gives
# dcuda::dcuda.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS dcuda EXPORT dcudaTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.cuh")
install(EXPORT dcudaTargets NAMESPACE dcuda:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dcuda)

configure_package_config_file(cmake/dcudaConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/dcudaConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dcuda)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/dcudaConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/dcudaConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/dcudaConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dcuda)
