# Open MPI (SPEC §14). NN_MPI=AUTO builds the MPI communicator when MPI is
# found, ON insists on it, OFF leaves it out: every call of §14 then works
# with a world of one rank. Sets NN_HAVE_MPI and, when on, NN_MPIEXEC (the
# launcher `nn --nproc` runs).
set(NN_HAVE_MPI OFF)
string(TOUPPER "${NN_MPI}" nn_mpi_mode)
if(NOT nn_mpi_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "NN_MPI must be AUTO, ON or OFF, not `${NN_MPI}`")
endif()
if(nn_mpi_mode STREQUAL "OFF")
  message(STATUS "MPI: off (NN_MPI=OFF)")
  return()
endif()
# The C API only: the C++ bindings are deprecated and not needed.
set(MPI_CXX_SKIP_MPICXX ON)
find_package(MPI COMPONENTS CXX QUIET)
if(NOT MPI_CXX_FOUND OR NOT MPIEXEC_EXECUTABLE)
  if(nn_mpi_mode STREQUAL "ON")
    message(FATAL_ERROR "NN_MPI=ON but MPI was not found (install libopenmpi-dev and openmpi-bin)")
  endif()
  message(STATUS "MPI: not found (one rank only; install libopenmpi-dev and openmpi-bin for several)")
  return()
endif()
set(NN_HAVE_MPI ON)
set(NN_MPIEXEC ${MPIEXEC_EXECUTABLE})
message(STATUS "MPI: ${MPI_CXX_LIBRARIES} (launcher ${NN_MPIEXEC})")
