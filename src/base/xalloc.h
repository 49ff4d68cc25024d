/* xalloc: allocation wrappers that never return NULL; out of memory is fatal. */
#ifndef BS_XALLOC_H
#define BS_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

#endif
