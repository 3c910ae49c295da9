/*
 * symbol.c - function names from ELF symbol tables (symbol.h).
 */
#include <elf.h>
#include <string.h>

#include "os.h"
#include "symbol.h"

#define MAPS_BYTES (2u << 20)
#define MODULES 16

typedef struct {
  char path[256];
  const unsigned char *file; /* mapped, or NULL: none could be */
  size_t size;
} symbol_module_t;

static _Atomic bool symbol_busy;
static char *maps;
static symbol_module_t *modules;
static unsigned nmodules;

void symbol_puts(const char *s, char *buf, size_t cap, size_t *len) {
  while (*s && *len + 1 < cap) buf[(*len)++] = *s++;
  buf[*len] = '\0';
}

void symbol_putu(uint64_t v, bool hex, char *buf, size_t cap, size_t *len) {
  char d[24];
  unsigned k = 0, base = hex ? 16 : 10;
  do d[k++] = "0123456789abcdef"[v % base]; while ((v /= base) != 0);
  if (hex) symbol_puts("0x", buf, cap, len);
  while (k > 0 && *len + 1 < cap) buf[(*len)++] = d[--k];
  buf[*len] = '\0';
}

bool symbol_begin(void) {
  if (atomic_exchange(&symbol_busy, true)) return false;
  maps = os_map(MAPS_BYTES + MODULES * sizeof *modules, 0, false);
  if (maps == NULL || os_read_file("/proc/self/maps", maps, MAPS_BYTES) == 0) {
    symbol_end();
    return false;
  }
  modules = (symbol_module_t *)(maps + MAPS_BYTES);
  nmodules = 0;
  return true;
}

void symbol_end(void) {
  if (maps != NULL) {
    for (unsigned i = 0; i < nmodules; i++)
      if (modules[i].file != NULL) os_unmap_file((void *)modules[i].file, modules[i].size);
    os_unmap(maps, MAPS_BYTES + MODULES * sizeof *modules);
    maps = NULL;
  }
  nmodules = 0;
  atomic_store(&symbol_busy, false);
}

static uint64_t symbol_hex(const char **s) {
  uint64_t v = 0;
  for (;; (*s)++) {
    char c = **s;
    unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 16;
    if (d == 16) return v;
    v = v * 16 + d;
  }
}

/* The maps line of pc: its module's path (copied into path) and pc's
 * offset in the file; false when pc is in no file's mapping. */
static bool symbol_where(uintptr_t pc, char *path, size_t cap, uint64_t *off) {
  for (const char *l = maps; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
    const char *s = l;
    uint64_t lo = symbol_hex(&s);
    s++;
    uint64_t hi = symbol_hex(&s);
    if (pc < lo || pc >= hi) continue;
    s += 6; /* " r-xp " */
    uint64_t fo = symbol_hex(&s);
    for (int field = 0; field < 2; field++) { /* device, inode */
      while (*s == ' ') s++;
      while (*s && *s != ' ' && *s != '\n') s++;
    }
    while (*s == ' ') s++;
    if (*s != '/') return false;
    size_t n = 0;
    while (s[n] && s[n] != '\n' && n + 1 < cap) n++;
    memcpy(path, s, n);
    path[n] = '\0';
    *off = pc - lo + fo;
    return true;
  }
  return false;
}

static const symbol_module_t *symbol_module(const char *path) {
  for (unsigned i = 0; i < nmodules; i++)
    if (strcmp(modules[i].path, path) == 0) return &modules[i];
  symbol_module_t *m = &modules[nmodules < MODULES ? nmodules++ : MODULES - 1];
  if (m->file != NULL) os_unmap_file((void *)m->file, m->size);
  memcpy(m->path, path, strlen(path) + 1);
  m->file = os_map_file(path, &m->size);
  if (m->file != NULL && (m->size < sizeof(Elf64_Ehdr) || memcmp(m->file, ELFMAG, SELFMAG) != 0 ||
                          m->file[EI_CLASS] != ELFCLASS64)) {
    os_unmap_file((void *)m->file, m->size);
    m->file = NULL;
  }
  return m;
}

/* The function of module m around file offset off: its name, and pc's
 * offset into it; NULL if none. */
static const char *symbol_lookup(const symbol_module_t *m, uint64_t off, uint64_t *into) {
  const unsigned char *f = m->file;
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
  if (eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > m->size ||
      eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > m->size)
    return NULL;
  uint64_t va = 0;
  bool found = false;
  const Elf64_Phdr *ph = (const Elf64_Phdr *)(f + eh->e_phoff);
  for (unsigned i = 0; i < eh->e_phnum && !found; i++)
    if (ph[i].p_type == PT_LOAD && off >= ph[i].p_offset && off < ph[i].p_offset + ph[i].p_filesz) {
      va = off - ph[i].p_offset + ph[i].p_vaddr;
      found = true;
    }
  if (!found) return NULL;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
  for (unsigned want = SHT_SYMTAB; want != 0; want = want == SHT_SYMTAB ? SHT_DYNSYM : 0) {
    const char *best = NULL;
    uint64_t best_at = 0;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
      if (sh[i].sh_type != want || sh[i].sh_link >= eh->e_shnum) continue;
      const Elf64_Shdr *str = &sh[sh[i].sh_link];
      if (sh[i].sh_offset + sh[i].sh_size > m->size || str->sh_offset + str->sh_size > m->size) continue;
      const Elf64_Sym *sym = (const Elf64_Sym *)(f + sh[i].sh_offset);
      for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++) {
        if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || sym[k].st_value > va || sym[k].st_name >= str->sh_size)
          continue;
        if (va < sym[k].st_value + (sym[k].st_size ? sym[k].st_size : 1) && (best == NULL || sym[k].st_value > best_at)) {
          best = (const char *)f + str->sh_offset + sym[k].st_name;
          best_at = sym[k].st_value;
        }
      }
    }
    if (best != NULL) {
      *into = va - best_at;
      return best;
    }
  }
  return NULL;
}

void symbol_put(uintptr_t pc, char *buf, size_t cap, size_t *len) {
  char path[256];
  uint64_t off = 0, into = 0;
  if (maps == NULL || !symbol_where(pc, path, sizeof path, &off)) return symbol_putu(pc, true, buf, cap, len);
  const symbol_module_t *m = symbol_module(path);
  const char *name = m->file != NULL ? symbol_lookup(m, off, &into) : NULL;
  const char *base = strrchr(path, '/') + 1;
  if (name == NULL) {
    symbol_puts(base, buf, cap, len);
    symbol_puts("+", buf, cap, len);
    return symbol_putu(off, true, buf, cap, len);
  }
  symbol_puts(name, buf, cap, len);
  symbol_puts("+", buf, cap, len);
  symbol_putu(into, true, buf, cap, len);
  symbol_puts(" (", buf, cap, len);
  symbol_puts(base, buf, cap, len);
  symbol_puts(")", buf, cap, len);
}
