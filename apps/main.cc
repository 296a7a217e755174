// The `foresight` command-line tool; cli.cc has the subcommand table.
#include "cli.h"

int main(int argc, char** argv) { return foresight::apps::RunCli(argc, argv); }
