/*
 * init.h - the process's and each thread's life: start-up, fork, thread
 * exit.  The one place that sees every module for these.
 */
#ifndef SMP_INIT_H
#define SMP_INIT_H

#include "base.h"

/* Process set-up that the first allocation needs (the free key, the slot
 * count, the options when the environment is ready).  Safe to call any
 * time, from any thread; cheap once done. */
SMP_HIDDEN void init_once(void);
/* The calling thread's first call (or first since its cache was lost):
 * init_once, then a thread cache and its exit hook. */
SMP_HIDDEN void init_thread(void);

#endif /* SMP_INIT_H */
