/* Reading the shared views ptl processes keep (lib/ptl/ptl_view.h). */
#ifndef PTLTOOL_VIEW_H
#define PTLTOOL_VIEW_H

#include <stddef.h>
#include <sys/types.h>

#include "ptl/ptl_view.h"

/* Maps /dev/shm/ptl.view.<pid> read-only; NULL (errno set) if absent or not
 * a view of this version. Unmap with ptltool_view_unmap(v, sizeof *v). */
const struct ptl_view_proc *ptltool_view_map(pid_t pid);
/* Maps EQ object i of pid read-only; *len gets the mapped length. */
const struct ptl_view_eq *ptltool_view_map_eq(pid_t pid, unsigned i, size_t *len);
void ptltool_view_unmap(const void *p, size_t len);
/* Calls fn for every live ptl process with a view on this host, in pid
 * order (live: the view's pid still names the process that started at
 * the view's start time, rt_proc_is); returns how many there were. */
int ptltool_view_each(void (*fn)(pid_t pid, const struct ptl_view_proc *v, void *arg), void *arg);

#endif
