/*
 * A rank killed mid-job (driven by kill.sh): every rank prints its job id
 * and pid, rank 1 kills itself with SIGKILL while the others wait for an
 * event that never comes (bounded). ptlrun must say which rank died and
 * why, exit non-zero, and leave no /dev/shm object of the job behind.
 */
#include <portals3.h>
#include <ptl_runtime.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	int maxif;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	if (PtlInit(&maxif) != PTL_OK || PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &ni) != PTL_OK ||
	    PtlEQAlloc(ni, 8, PTL_EQ_HANDLER_NONE, &eq) != PTL_OK)
		return 2;
	const char *job = getenv("PTL_RT_JOBID");
	printf("jobid %s pid %ld\n", job ? job : "?", (long)getpid());
	fflush(stdout);
	if (PtlRtBarrier() != PTL_OK)
		return 3;
	if (PtlRtRank() == 1)
		raise(SIGKILL);
	ptl_event_t ev;
	int which;
	PtlEQPoll(&eq, 1, 30000, &ev, &which); /* ptlrun ends us first */
	return 4;
}
