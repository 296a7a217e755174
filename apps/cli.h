// Entry point of the `foresight` CLI: parses argv, runs one subcommand and
// returns the exit status (0 ok, 1 failure, 2 usage error). Every error is
// printed as "foresight <subcommand>: <message>" on stderr; nothing throws.
#pragma once

namespace foresight::apps {

int RunCli(int argc, char** argv);

}  // namespace foresight::apps
