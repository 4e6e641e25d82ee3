/* placeholder until the module that owns 'ptltool trace' lands */
#include <stdio.h>
#include "ptltool.h"

int ptltool_trace_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ptltool trace: not built yet\n");
	return 2;
}
