/* ptltool: one binary, one subcommand per file. Each subcommand gets argv
 * starting at its own name and returns the process exit status. */
#ifndef PTLTOOL_H
#define PTLTOOL_H

int ptltool_info_main(int argc, char **argv);
int ptltool_ps_main(int argc, char **argv);
int ptltool_eq_main(int argc, char **argv);
int ptltool_coll_main(int argc, char **argv);
int ptltool_trace_main(int argc, char **argv);

#endif
