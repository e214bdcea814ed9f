#include "cli/commands.h"

int main(int argc, char** argv) { return perfgate::PerfgateMain(argc, argv); }
