/*
 * The version of streampipe: the one place it is declared. CMake reads these three lines
 * (project version, shared library soname, CMake package and pkg-config versions all come
 * from them) and sp_version() returns them as text.
 *
 * Before 1.0, every MINOR is a new ABI: the soname is libstreampipe.so.MAJOR.MINOR, so a
 * release that changes a public struct or function must raise MINOR (tools/abi_check.sh,
 * run by CI, fails when the ABI changed and the soname did not).
 */
#ifndef STREAMPIPE_VERSION_H
#define STREAMPIPE_VERSION_H

#define SP_VERSION_MAJOR 0
#define SP_VERSION_MINOR 8
#define SP_VERSION_PATCH 0

#endif /* STREAMPIPE_VERSION_H */
