# sp_library(<name> EXPORT_NAME <n> SOURCES ... [DEPENDS <libs>] [PRIVATE_LIBS ...] [DEFINES ...]
#            [INCLUDES ...] [PC_DESCRIPTION <text>])
#
# One of the project's libraries, made the same way for each: its objects compiled once, then
# a shared library <name> (soname from the version) and a static one <name>_static from them,
# both installed and exported as streampipe::<n> and streampipe::<n>_static, an alias
# streampipe::<n> in the build tree, and a pkg-config file (<name> with '_' as '-').
# DEPENDS names other sp_library targets: the shared library links their shared one, the
# static library their static one. PRIVATE_LIBS are what the objects need (CUDA, cJSON).
function(sp_library name)
  cmake_parse_arguments(L "" "EXPORT_NAME;PC_DESCRIPTION"
                        "SOURCES;DEPENDS;PRIVATE_LIBS;DEFINES;INCLUDES" ${ARGN})
  set(has_cuda OFF)
  foreach(source ${L_SOURCES})
    if(source MATCHES "\\.cu$")
      set(has_cuda ON)
    endif()
  endforeach()

  add_library(${name}_obj OBJECT ${L_SOURCES})
  # Hidden by default: the shared library exports what the public headers mark SP_API
  # (include/streampipe_export.h, under SP_BUILDING_LIBRARY) and the few internal functions
  # src/backend/backend.h exports for the fault library, nothing else (tools/exports_check.sh).
  set_target_properties(${name}_obj PROPERTIES POSITION_INDEPENDENT_CODE ON
                        C_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden
                        VISIBILITY_INLINES_HIDDEN ON)
  target_include_directories(${name}_obj PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    PRIVATE ${PROJECT_SOURCE_DIR}/src ${L_INCLUDES})
  target_compile_definitions(${name}_obj PRIVATE SP_BUILDING_LIBRARY _POSIX_C_SOURCE=200809L
    $<$<BOOL:${SP_HAVE_CUDA}>:SP_HAVE_CUDA=1> ${L_DEFINES})
  target_link_libraries(${name}_obj PRIVATE Threads::Threads ${L_PRIVATE_LIBS})
  sp_warnings(${name}_obj)

  add_library(${name} SHARED $<TARGET_OBJECTS:${name}_obj>)
  add_library(${name}_static STATIC $<TARGET_OBJECTS:${name}_obj>)
  foreach(t ${name} ${name}_static)
    target_include_directories(${t} PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_link_libraries(${t} PUBLIC Threads::Threads m)
    target_link_libraries(${t} PRIVATE ${L_PRIVATE_LIBS})
    if(has_cuda)
      # stdc++: the .cu objects need its runtime when a C program links the static library
      target_link_libraries(${t} PRIVATE stdc++)
      set_target_properties(${t} PROPERTIES LINKER_LANGUAGE CUDA CUDA_RESOLVE_DEVICE_SYMBOLS ON)
    endif()
  endforeach()
  foreach(dep ${L_DEPENDS})
    target_link_libraries(${name} PUBLIC ${dep})
    target_link_libraries(${name}_static PUBLIC ${dep}_static)
  endforeach()
  set_target_properties(${name} PROPERTIES VERSION ${PROJECT_VERSION} OUTPUT_NAME ${name}
                        SOVERSION ${SP_SOVERSION} EXPORT_NAME ${L_EXPORT_NAME})
  # Every symbol the shared library uses must be defined at link time: a call into another of
  # our libraries' hidden functions then fails to link here, not to load in a user's program.
  # (Not under the sanitizers, whose runtime in the program provides some of them.)
  if(NOT SP_SANITIZE)
    target_link_options(${name} PRIVATE "LINKER:-z,defs")
  endif()
  # What static archives bring in (cudart_static; libstdc++ where a toolchain has only the
  # archive, as the H200 machine's gcc 13 does) stays hidden too: it exported the C++ runtime.
  target_link_options(${name} PRIVATE "LINKER:--exclude-libs,ALL")
  set_target_properties(${name}_static PROPERTIES OUTPUT_NAME ${name}
                        EXPORT_NAME ${L_EXPORT_NAME}_static)
  add_library(streampipe::${L_EXPORT_NAME} ALIAS ${name})
  install(TARGETS ${name} ${name}_static EXPORT streampipeTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  sp_pkg_config(${name} "${L_PC_DESCRIPTION}" "${L_DEPENDS}" "${L_PRIVATE_LIBS}" ${has_cuda})
endfunction()

# The pkg-config file of an sp_library: Requires its DEPENDS, Libs.private what static
# linking needs besides them.
function(sp_pkg_config name description depends private_libs has_cuda)
  string(REPLACE "_" "-" SP_PC_NAME ${name})
  set(SP_PC_LIB ${name})
  set(SP_PC_DESCRIPTION "${description}")
  set(SP_PC_REQUIRES "")
  foreach(dep ${depends})
    string(REPLACE "_" "-" dep_pc ${dep})
    set(SP_PC_REQUIRES "${SP_PC_REQUIRES} ${dep_pc} = ${PROJECT_VERSION}")
  endforeach()
  set(SP_PC_PRIVATE_LIBS "-lpthread -lm")
  foreach(lib ${private_libs})
    if(lib STREQUAL "CUDA::cudart_static")
      set(SP_PC_PRIVATE_LIBS "-L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt ${SP_PC_PRIVATE_LIBS}")
    else()
      set(SP_PC_PRIVATE_LIBS "${lib} ${SP_PC_PRIVATE_LIBS}")
    endif()
  endforeach()
  if(has_cuda)
    set(SP_PC_PRIVATE_LIBS "${SP_PC_PRIVATE_LIBS} -lstdc++")
  endif()
  file(RELATIVE_PATH SP_PC_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig"
       "${CMAKE_INSTALL_PREFIX}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/streampipe.pc.in
                 ${CMAKE_BINARY_DIR}/${SP_PC_NAME}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/${SP_PC_NAME}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
