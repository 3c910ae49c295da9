/* prof_guard MODE: a planted bug in a guarded sample (run with
 * SMPALLOC_GUARD_SAMPLE=1); t_prof_guard checks the report it dies with.
 * MODE: uaf, overflow, underflow, double, elsewhere (a fault outside the
 * pool: the program's own handler must see it), ok (no bug). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SITE __attribute__((noinline, optimize("no-optimize-sibling-calls")))
static volatile char sink;

SITE char *guarded_alloc_site(size_t n) { char *p = malloc(n); sink = p[0]; return p; }
SITE void guarded_free_site(char *p) { free(p); sink = 0; }

static sigjmp_buf back;
static void own_handler(int sig) { (void)sig; siglongjmp(back, 1); }

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "ok";
  char *p = guarded_alloc_site(100);
  if (strcmp(mode, "uaf") == 0) {
    guarded_free_site(p);
    sink = p[10]; /* use after free */
  } else if (strcmp(mode, "overflow") == 0) {
    sink = p[112 + 8]; /* past the slot's end: the guard page */
  } else if (strcmp(mode, "underflow") == 0) {
    char *q = guarded_alloc_site(4096); /* a whole page: its start is the slot's */
    sink = q[-1];
  } else if (strcmp(mode, "double") == 0) {
    guarded_free_site(p);
    guarded_free_site(p);
  } else if (strcmp(mode, "elsewhere") == 0) {
    signal(SIGSEGV, own_handler);
    if (sigsetjmp(back, 1) == 0) sink = *(volatile char *)16; /* not the pool's */
    else printf("own handler ran\n");
    char *q = guarded_alloc_site(64); /* a guarded fault still reports? the program's handler now */
    free(q);
    free(p);
    return 0;
  } else {
    memset(p, 1, 100);
    free(p);
  }
  printf("no fault\n");
  return 0;
}
