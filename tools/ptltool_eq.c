/* placeholder until the module that owns 'ptltool eq' lands */
#include <stdio.h>
#include "ptltool.h"

int ptltool_eq_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ptltool eq: not built yet\n");
	return 2;
}
