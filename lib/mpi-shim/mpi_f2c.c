/* mpi_f2c.c: handles between C and Fortran. ptl's handles are ints,
 * which is what Fortran holds, so each conversion is the value itself
 * (an invalid one stays invalid for the call that gets it). */
#include "config.h"

#include "mpi_impl.h"

#define F2C(Kind, CType)                                                                             \
	MPI_Fint PMPI_##Kind##_c2f(CType h) { return (MPI_Fint)h; }                                  \
	CType PMPI_##Kind##_f2c(MPI_Fint h) { return (CType)h; }

F2C(Comm, MPI_Comm)
F2C(Type, MPI_Datatype)
F2C(Group, MPI_Group)
F2C(Request, MPI_Request)
F2C(Op, MPI_Op)
F2C(Info, MPI_Info)
F2C(Errhandler, MPI_Errhandler)
F2C(Message, MPI_Message)
