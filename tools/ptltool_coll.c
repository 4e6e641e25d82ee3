/* placeholder until the module that owns 'ptltool coll' lands */
#include <stdio.h>
#include "ptltool.h"

int ptltool_coll_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ptltool coll: not built yet\n");
	return 2;
}
