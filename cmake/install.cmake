# `cmake --install`: headers, libgrove (with VERSION and SOVERSION), the
# `grove` tool, a CMake package (find_package(grove) -> grove::grove) and a
# pkg-config file (grove.pc). Both package files are relocatable: the tree
# can be installed under any --prefix. README "Using grove from another
# project" shows both ways in.
include(CMakePackageConfigHelpers)

set(GROVE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/grove)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/grove DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS grove_lib EXPORT groveTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS grove RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT groveTargets NAMESPACE grove:: DESTINATION ${GROVE_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/groveConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/groveConfig.cmake
                              INSTALL_DESTINATION ${GROVE_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/groveConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/groveConfig.cmake ${PROJECT_BINARY_DIR}/groveConfigVersion.cmake
        DESTINATION ${GROVE_CMAKE_DIR})

configure_file(${PROJECT_SOURCE_DIR}/cmake/grove.pc.in ${PROJECT_BINARY_DIR}/grove.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/grove.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
