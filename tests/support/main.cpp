#include "test_main.h"

int main(int argc, char** argv) {
  return dcuda_test::run_tests(argc, argv);
}
