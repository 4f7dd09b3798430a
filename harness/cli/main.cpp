#include "harness/cli/app.h"

int main(int argc, char** argv) { return ib::run_app(argc, argv); }
