# Debian package (cpack -G DEB) for a camera box: bin/edgefuse, the systemd unit, an example config,
# the docs and a models folder. amd64 takes its dependencies from dpkg-shlibdeps; a cross build
# (arm64) cannot run shlibdeps against the host's dpkg database, so it names the runtime packages.
set(EDGEFUSE_PACKAGE_MODELS_DIR "" CACHE PATH
    "Folder holding yolox_nano.onnx (and coco.names) to ship in share/edgefuse/models; empty: an empty folder")

include(GNUInstallDirs)
set(edgefuse_pkg_prefix /usr)
set(edgefuse_pkg_stage "${PROJECT_BINARY_DIR}/packaging")

# The samples name /usr/local (a make-install layout); the package installs under /usr.
foreach(sample edgefuse.service edgefuse.yaml)
  file(READ "${PROJECT_SOURCE_DIR}/samples/systemd/${sample}" edgefuse_sample_text)
  string(REPLACE "/usr/local/" "${edgefuse_pkg_prefix}/" edgefuse_sample_text "${edgefuse_sample_text}")
  file(CONFIGURE OUTPUT "${edgefuse_pkg_stage}/${sample}" CONTENT "${edgefuse_sample_text}" @ONLY)
endforeach()

install(FILES "${edgefuse_pkg_stage}/edgefuse.service" DESTINATION lib/systemd/system)
install(FILES "${edgefuse_pkg_stage}/edgefuse.yaml" DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(FILES README.md docs/OPERATIONS.md docs/EVENTS.md docs/SUPPORTED_OPS.md DESTINATION ${CMAKE_INSTALL_DOCDIR}
        OPTIONAL)
install(FILES cross-compile/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME CROSS-COMPILE.md OPTIONAL)
install(DIRECTORY DESTINATION ${CMAKE_INSTALL_DATADIR}/edgefuse/models)
if(EDGEFUSE_PACKAGE_MODELS_DIR)
  install(FILES "${EDGEFUSE_PACKAGE_MODELS_DIR}/yolox_nano.onnx" "${EDGEFUSE_PACKAGE_MODELS_DIR}/coco.names"
          DESTINATION ${CMAKE_INSTALL_DATADIR}/edgefuse/models)
endif()

# postinst: the unit runs as the unprivileged system user 'edgefuse'; create it once.
file(CONFIGURE OUTPUT "${edgefuse_pkg_stage}/postinst" CONTENT [=[#!/bin/sh
set -e
if [ "$1" = configure ] && ! getent passwd edgefuse >/dev/null; then
  useradd --system --user-group --home-dir /var/lib/edgefuse --no-create-home --shell /usr/sbin/nologin edgefuse
fi
exit 0
]=])
file(CHMOD "${edgefuse_pkg_stage}/postinst" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
     GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME edgefuse)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "edgefuse maintainers <edgefuse@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Edge video analytics runtime: fused ONNX inference, detection, events")
set(CPACK_PACKAGING_INSTALL_PREFIX ${edgefuse_pkg_prefix})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SECTION video)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${edgefuse_pkg_stage}/postinst")
if(CMAKE_CROSSCOMPILING)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
  endif()
  # Debian 12 (bookworm) names of the packages holding what `readelf -d edgefuse` NEEDs.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libc6, libgcc-s1, libstdc++6, libprotobuf32, libonnx1, libyaml-cpp0.7, libopencv-core406, libopencv-imgproc406, libopencv-imgcodecs406")
  if(EDGEFUSE_GSTREAMER)  # the daemon: `edgefuse run`
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS
           ", libglib2.0-0, libgstreamer1.0-0, libgstreamer-plugins-base1.0-0, libmosquitto1, libsystemd0, libcpp-httplib0.11")
  endif()
  # A sysroot from another distribution (JetPack's Ubuntu) has other package names: list them here.
  set(EDGEFUSE_PACKAGE_DEPENDS "" CACHE STRING "Depends: of a cross-built .deb (empty: the Debian 12 names above)")
  if(EDGEFUSE_PACKAGE_DEPENDS)
    set(CPACK_DEBIAN_PACKAGE_DEPENDS "${EDGEFUSE_PACKAGE_DEPENDS}")
  endif()
else()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
include(CPack)
