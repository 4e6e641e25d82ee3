/* placeholder until the module that owns 'ptltool info' lands */
#include <stdio.h>
#include "ptltool.h"

int ptltool_info_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ptltool info: not built yet\n");
	return 2;
}
