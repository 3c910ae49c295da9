/* prof_stripped: a program whose allocation sites t_prof_launcher names
 * after it is stripped (only the exported functions' symbols left, as in
 * a distribution's binaries).  exported_site (exported: -rdynamic) holds
 * 10 % of the live bytes; hidden_site, a static function right after it
 * (-fno-toplevel-reorder keeps the order), 90 %: addr2line names
 * hidden_site's code after exported_site, past that symbol's end. */
#include <stdlib.h>

static void *volatile sink;

__attribute__((noinline)) void *exported_site(size_t n) {
  void *p = malloc(n);
  sink = p;
  return p;
}

__attribute__((noinline)) static void *hidden_site(size_t n) {
  void *p = malloc(n);
  sink = p;
  return p;
}

int main(void) {
  static void *keep[4000];
  for (int i = 0; i < 4000; i++) keep[i] = i % 10 == 0 ? exported_site(100000) : hidden_site(100000);
  for (int i = 0; i < 4000; i++) free(keep[i]);
  return 0;
}
