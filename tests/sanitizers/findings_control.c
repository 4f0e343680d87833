// What the sanitizers session must catch, to show that a finding in an
// instrumented library does reach a report and fail the run.
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  volatile int index = argc > 2 ? atoi(argv[2]) : 8;
  if (argc > 1 && strcmp(argv[1], "heap-overflow") == 0) {
    char* data = malloc(8);
    int value = data[index];  // one past the end
    free(data);
    return value;
  }
  if (argc > 1 && strcmp(argv[1], "signed-overflow") == 0) {
    volatile int big = INT_MAX;
    return big + index;
  }
  fprintf(stderr, "usage: findings_control heap-overflow|signed-overflow\n");
  return 2;
}
