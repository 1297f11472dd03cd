/*
 * SP_API marks every function of the public API. The shared libraries are built with hidden
 * visibility, so the functions marked here are all they export: internal functions stay out
 * of the ABI and cannot be interposed (tools/exports_check.sh checks both ways). Included by
 * streampipe.h, so by every public header; a program using the library defines nothing, and
 * SP_API is then empty.
 */
#ifndef STREAMPIPE_EXPORT_H
#define STREAMPIPE_EXPORT_H

/* SP_BUILDING_LIBRARY: defined only while compiling the libraries' own sources. */
#if defined(SP_BUILDING_LIBRARY) && defined(__GNUC__)
#define SP_API __attribute__((visibility("default")))
#else
#define SP_API
#endif

#endif /* STREAMPIPE_EXPORT_H */
