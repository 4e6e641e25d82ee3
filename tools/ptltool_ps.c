/* placeholder until the module that owns 'ptltool ps' lands */
#include <stdio.h>
#include "ptltool.h"

int ptltool_ps_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ptltool ps: not built yet\n");
	return 2;
}
