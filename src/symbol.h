/*
 * symbol.h - names for code addresses, with no allocation: the function
 * from the ELF symbol tables (.symtab, else .dynsym) of the module file
 * that /proc/self/maps names for the address, mapped read-only.  For the
 * leak report and the guard pool's fault report (which runs in a signal
 * handler: only system calls here).  File and line are left to addr2line
 * (the launcher's report).
 */
#ifndef SMP_SYMBOL_H
#define SMP_SYMBOL_H

#include "base.h"

/* Read the process's maps; then symbol_put, and symbol_end to give back
 * the memory and the files mapped.  One user at a time: false if another
 * thread is between its symbol_begin and symbol_end, or on failure. */
SMP_HIDDEN bool symbol_begin(void);
SMP_HIDDEN void symbol_end(void);
/* Append to buf (cap bytes, *len used; NUL-terminated) the code address
 * pc as "function+0xOFF (module)", or "module+0xOFF" with no symbol, or
 * the bare address. */
SMP_HIDDEN void symbol_put(uintptr_t pc, char *buf, size_t cap, size_t *len);
/* Append s, and a number in decimal or hex, the same way. */
SMP_HIDDEN void symbol_puts(const char *s, char *buf, size_t cap, size_t *len);
SMP_HIDDEN void symbol_putu(uint64_t v, bool hex, char *buf, size_t cap, size_t *len);

#endif /* SMP_SYMBOL_H */
