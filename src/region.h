/*
 * region.h - the address space that chunks and metadata come from.
 *
 * Metadata (chunk descriptors, slots, thread caches, arenas) is zeroed
 * memory from guarded regions, never freed.  Chunks are carved in address
 * order from two kinds of reservation (sparse; dense, advised for huge
 * pages), or mapped alone where the kernel refuses reservations.
 */
#ifndef SMP_REGION_H
#define SMP_REGION_H

#include "base.h"

/* Zeroed metadata memory that is never freed (chunk metadata, thread
 * caches), from guarded regions; align is a power of two up to the page
 * size.  NULL when out of memory.  May map (no lock may be held). */
SMP_HIDDEN void *meta_alloc(size_t size, size_t align);
SMP_HIDDEN void meta_fork_prepare(void);
SMP_HIDDEN void meta_fork_parent(void);
SMP_HIDDEN void meta_fork_child(void);

/* The next chunk (SMP_CHUNK_SIZE bytes, aligned) of the reservations
 * (dense: advised for huge pages; *huge tells whether the advice took);
 * NULL when none can be made (refused, or out of address space).  Chunk.c's
 * grow lock held. */
SMP_HIDDEN void *region_take(bool dense, bool *huge);
/* The same where no reservation is made: a chunk mapped alone. */
SMP_HIDDEN void *region_map_alone(bool dense, bool *huge);
/* Give back what the reservations have left uncarved and make none from
 * then on; the bytes given back.  Chunk.c's grow lock held. */
SMP_HIDDEN size_t region_unreserve(void);

#endif /* SMP_REGION_H */
