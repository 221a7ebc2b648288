// Open MPI, opened on first use (backend/shared_library.h): loading libmpi
// and its runtime cost every run some 2 ms and 70 page faults, runs that
// were not launched by mpiexec included. Include this in place of
// <mpi.h>: each MPI function mpi_communicator.cpp calls, and each of Open
// MPI's predefined objects its handles (MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM,
// ...) point at, reads the table below.
#pragma once
#include <mpi.h>

#include "backend/shared_library.h"

#define NN_MPI_SYMBOLS(S)                                                                                      \
  S(MPI_Abort)                                                                                                 \
  S(MPI_Allgather)                                                                                             \
  S(MPI_Allreduce)                                                                                             \
  S(MPI_Barrier)                                                                                               \
  S(MPI_Bcast)                                                                                                 \
  S(MPI_Comm_free)                                                                                             \
  S(MPI_Comm_rank)                                                                                             \
  S(MPI_Comm_set_errhandler)                                                                                   \
  S(MPI_Comm_size)                                                                                             \
  S(MPI_Comm_split_type)                                                                                       \
  S(MPI_Error_string)                                                                                          \
  S(MPI_Finalize)                                                                                              \
  S(MPI_Finalized)                                                                                             \
  S(MPI_Iallreduce)                                                                                            \
  S(MPI_Init_thread)                                                                                           \
  S(MPI_Op_create)                                                                                             \
  S(MPI_Initialized)                                                                                           \
  S(MPI_Test)                                                                                                  \
  S(MPI_Wait)                                                                                                  \
  S(MPI_Win_allocate_shared)                                                                                   \
  S(MPI_Win_shared_query)                                                                                      \
  S(ompi_mpi_byte)                                                                                             \
  S(ompi_mpi_comm_world)                                                                                       \
  S(ompi_mpi_double)                                                                                           \
  S(ompi_mpi_errors_return)                                                                                    \
  S(ompi_mpi_float)                                                                                            \
  S(ompi_mpi_info_null)                                                                                        \
  S(ompi_mpi_int32_t)                                                                                          \
  S(ompi_mpi_int64_t)                                                                                          \
  S(ompi_mpi_op_max)                                                                                           \
  S(ompi_mpi_op_min)                                                                                           \
  S(ompi_mpi_op_sum)                                                                                           \
  S(ompi_mpi_uint8_t)                                                                                          \
  S(ompi_request_null)

namespace nn::backend::comm {

struct MpiLibrary {
  NN_MPI_SYMBOLS(NN_LIBRARY_FIELD)
};

// The library, opened once (thread-safe); throws Error where it cannot be.
const MpiLibrary& mpi_library();

}  // namespace nn::backend::comm

// mpi_library.cpp, which fills the table, names the symbols themselves.
#ifndef NN_MPI_TABLE_ONLY
#define NN_MPI_CALL(f) (::nn::backend::comm::mpi_library().f)
// Open MPI's handles are addresses of its predefined objects.
#define NN_MPI_OBJECT(o) (*::nn::backend::comm::mpi_library().o)
#define MPI_Abort NN_MPI_CALL(MPI_Abort)
#define MPI_Allgather NN_MPI_CALL(MPI_Allgather)
#define MPI_Allreduce NN_MPI_CALL(MPI_Allreduce)
#define MPI_Barrier NN_MPI_CALL(MPI_Barrier)
#define MPI_Bcast NN_MPI_CALL(MPI_Bcast)
#define MPI_Comm_free NN_MPI_CALL(MPI_Comm_free)
#define MPI_Comm_rank NN_MPI_CALL(MPI_Comm_rank)
#define MPI_Comm_set_errhandler NN_MPI_CALL(MPI_Comm_set_errhandler)
#define MPI_Comm_size NN_MPI_CALL(MPI_Comm_size)
#define MPI_Comm_split_type NN_MPI_CALL(MPI_Comm_split_type)
#define MPI_Error_string NN_MPI_CALL(MPI_Error_string)
#define MPI_Finalize NN_MPI_CALL(MPI_Finalize)
#define MPI_Finalized NN_MPI_CALL(MPI_Finalized)
#define MPI_Iallreduce NN_MPI_CALL(MPI_Iallreduce)
#define MPI_Init_thread NN_MPI_CALL(MPI_Init_thread)
#define MPI_Op_create NN_MPI_CALL(MPI_Op_create)
#define MPI_Initialized NN_MPI_CALL(MPI_Initialized)
#define MPI_Test NN_MPI_CALL(MPI_Test)
#define MPI_Wait NN_MPI_CALL(MPI_Wait)
#define MPI_Win_allocate_shared NN_MPI_CALL(MPI_Win_allocate_shared)
#define MPI_Win_shared_query NN_MPI_CALL(MPI_Win_shared_query)
#define ompi_mpi_byte NN_MPI_OBJECT(ompi_mpi_byte)
#define ompi_mpi_comm_world NN_MPI_OBJECT(ompi_mpi_comm_world)
#define ompi_mpi_double NN_MPI_OBJECT(ompi_mpi_double)
#define ompi_mpi_errors_return NN_MPI_OBJECT(ompi_mpi_errors_return)
#define ompi_mpi_float NN_MPI_OBJECT(ompi_mpi_float)
#define ompi_mpi_info_null NN_MPI_OBJECT(ompi_mpi_info_null)
#define ompi_mpi_int32_t NN_MPI_OBJECT(ompi_mpi_int32_t)
#define ompi_mpi_int64_t NN_MPI_OBJECT(ompi_mpi_int64_t)
#define ompi_mpi_op_max NN_MPI_OBJECT(ompi_mpi_op_max)
#define ompi_mpi_op_min NN_MPI_OBJECT(ompi_mpi_op_min)
#define ompi_mpi_op_sum NN_MPI_OBJECT(ompi_mpi_op_sum)
#define ompi_mpi_uint8_t NN_MPI_OBJECT(ompi_mpi_uint8_t)
#define ompi_request_null NN_MPI_OBJECT(ompi_request_null)
#endif
