/*
 * For the ptltool tests: logs events into two EQs and never reads them,
 * then blocks in PtlEQWait on a third EQ that stays empty, so ptltool can
 * look at a process that is blocked. argv[1]: puts to do (default 3), or
 * "fini": start (PtlInit sweeps the views that dead processes left in
 * /dev/shm), print the pid and end cleanly (PtlFini). "fork": start,
 * allocate an EQ, fork a child that frees it, ends Portals (PtlNIFini,
 * PtlFini) and exits through exit() (the atexit handlers it inherited),
 * then say whether our view and our EQ's object are still there ("view
 * kept", "eq kept"), free the EQ ("eq freed gone": its object removed) and
 * end cleanly.
 * "fifo", "busy": see taken_child.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <portals3.h>
#include <ptl_runtime.h>

static void check(int rc, const char *what)
{
	if (rc != PTL_OK) {
		fprintf(stderr, "eq_holder: %s: %s\n", what, PtlErrorStr((unsigned)rc));
		exit(1);
	}
}

/* "fifo", "busy": a child's PtlInit finds its own view's name taken, by a
 * FIFO (fifo) or by a file whose lock a live process holds (busy: we do,
 * as a process of another pid namespace with the child's pid would), and
 * must fail, saying why (on stderr; busy after the ~2 s it waits for a
 * sweeper to let go); prints "<mode> rc <PtlErrorStr>". */
static int taken_child(const char *mode)
{
	int pp[2], nif;
	if (pipe(pp) != 0)
		return 1;
	pid_t c = fork();
	if (c < 0)
		return 1;
	if (c == 0) {
		char b;
		if (read(pp[0], &b, 1) != 1)
			_exit(1);
		printf("%s rc %s\n", mode, PtlErrorStr((unsigned)PtlInit(&nif)));
		fflush(stdout);
		_exit(0);
	}
	char view[64], tmp[64];
	snprintf(view, sizeof view, "/dev/shm/ptl.view.%d", (int)c);
	snprintf(tmp, sizeof tmp, "/dev/shm/eq_holder.busy.%d", (int)c);
	int made = -1, fd = -1;
	if (strcmp(mode, "fifo") == 0) {
		made = mkfifo(view, 0600);
	} else {
		/* Locked before it has the view's name: a sweep by another
		 * test's process would take an unlocked one for a dead
		 * process's view and remove it. */
		fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
			made = rename(tmp, view);
		unlink(tmp);
	}
	if (write(pp[1], "x", 1) != 1 || waitpid(c, NULL, 0) != c)
		made = -1;
	unlink(view);
	if (fd >= 0)
		close(fd); /* the lock goes after the name, as a view's does */
	return made == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "fifo") == 0 || strcmp(argv[1], "busy") == 0))
		return taken_child(argv[1]);
	int puts = argc > 1 ? atoi(argv[1]) : 3, nif;
	check(PtlInit(&nif), "PtlInit");
	ptl_handle_ni_t ni;
	check(PtlNIInit(PTL_IFACE_DEFAULT, PTL_PID_ANY, NULL, NULL, &ni), "PtlNIInit");
	if (argc > 1 && strcmp(argv[1], "fork") == 0) {
		ptl_handle_eq_t eq;
		check(PtlEQAlloc(ni, 4, PTL_EQ_HANDLER_NONE, &eq), "PtlEQAlloc");
		pid_t c = fork();
		if (c == 0) { /* frees its copy of the EQ and ends Portals, then exits */
			PtlEQFree(eq);
			PtlNIFini(ni);
			PtlFini();
			exit(0);
		}
		if (c < 0 || waitpid(c, NULL, 0) != c)
			return 1;
		char view[64], eqname[72];
		snprintf(view, sizeof view, "/dev/shm/ptl.view.%d", (int)getpid());
		snprintf(eqname, sizeof eqname, "%s.eq0", view);
		printf("view %s\n", access(view, F_OK) == 0 ? "kept" : "lost");
		printf("eq %s\n", access(eqname, F_OK) == 0 ? "kept" : "lost");
		check(PtlEQFree(eq), "PtlEQFree");
		printf("eq freed %s\n", access(eqname, F_OK) == 0 ? "kept" : "gone");
		check(PtlNIFini(ni), "PtlNIFini");
		PtlFini();
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "fini") == 0) {
		printf("fini %d\n", (int)getpid());
		check(PtlNIFini(ni), "PtlNIFini");
		PtlFini();
		return 0;
	}
	ptl_handle_eq_t target_eq, send_eq, idle_eq;
	check(PtlEQAlloc(ni, 8, PTL_EQ_HANDLER_NONE, &target_eq), "PtlEQAlloc");
	check(PtlEQAlloc(ni, 64, PTL_EQ_HANDLER_NONE, &send_eq), "PtlEQAlloc");
	check(PtlEQAlloc(ni, 4, PTL_EQ_HANDLER_NONE, &idle_eq), "PtlEQAlloc");
	static char buf[4096], src[16] = "peek";
	ptl_process_id_t any = { PTL_NID_ANY, PTL_PID_ANY }, me;
	check(PtlGetId(ni, &me), "PtlGetId");
	ptl_handle_me_t meh;
	ptl_handle_md_t mdh, src_h;
	check(PtlMEAttach(ni, 7, any, 0xabcdef, 0, PTL_RETAIN, PTL_INS_AFTER, &meh), "PtlMEAttach");
	ptl_md_t md = { .start = buf, .length = sizeof buf, .threshold = PTL_MD_THRESH_INF,
			.options = PTL_MD_OP_PUT | PTL_MD_EVENT_START_DISABLE, .eq_handle = target_eq };
	check(PtlMDAttach(meh, md, PTL_RETAIN, &mdh), "PtlMDAttach");
	ptl_md_t smd = { .start = src, .length = sizeof src, .threshold = PTL_MD_THRESH_INF,
			 .options = PTL_MD_EVENT_START_DISABLE, .eq_handle = send_eq };
	check(PtlMDBind(ni, smd, PTL_RETAIN, &src_h), "PtlMDBind");
	for (int i = 0; i < puts; i++)
		check(PtlPut(src_h, PTL_NO_ACK_REQ, me, 7, 0, 0xabcdef, 0, 0), "PtlPut");
	/* Let the progress thread deliver the self-puts. */
	ptl_event_t ev;
	int which;
	PtlEQPoll(&idle_eq, 1, 200, &ev, &which);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	PtlEQWait(idle_eq, &ev); /* never returns: ptltool looks meanwhile */
	return 0;
}
