/* A program that resolves symbols the ways interposers and plugin hosts do, many times over: the preload
 * library interposes dlsym, and must hand every one of these back exactly as glibc does.
 * Prints what it found (addresses as "same"/"null", never raw), so two runs can be compared. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef double (*cos_fn)(double);
typedef void *(*malloc_fn)(size_t);

int main(void) {
  void *libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  if (!libm) return 1;
  void *first_cos = dlsym(libm, "cos"), *first_printf = dlsym(RTLD_DEFAULT, "printf");
  void *first_next = dlsym(RTLD_NEXT, "malloc");
  unsigned same = 0, missing = 0;
  for (int i = 0; i < 200000; i++) {
    same += dlsym(libm, "cos") == first_cos;
    same += dlsym(RTLD_DEFAULT, "printf") == first_printf;
    same += dlsym(RTLD_NEXT, "malloc") == first_next; /* the caller's next object: glibc reads our return address */
    missing += dlsym(libm, "no_such_symbol_here") == NULL;
  }
  printf("lookups agreeing %u of 600000, missing %u of 200000\n", same, missing);
  printf("cos(0) = %.1f through dlsym\n", ((cos_fn)first_cos)(0.0));
  void *p = ((malloc_fn)first_next)(16);
  printf("RTLD_NEXT malloc %s, is libc's %s\n", p ? "works" : "fails", first_next == dlsym(RTLD_DEFAULT, "malloc") ? "yes" : "no");
  free(p);
  printf("dlvsym(memcpy, GLIBC_2.14) %s\n", dlvsym(RTLD_DEFAULT, "memcpy", "GLIBC_2.14") ? "found" : "null");
  printf("dlsym(cuInit) with no driver loaded %s\n", dlsym(RTLD_DEFAULT, "cuInit") ? "found" : "null");
  /* names the library hooks (and exports): still absent while no driver is loaded, as a probe for one expects */
  dlerror();
  printf("dlsym(cuMemAlloc_v2) with no driver loaded %s\n", dlsym(RTLD_DEFAULT, "cuMemAlloc_v2") ? "found" : "null");
  const char *miss = dlerror();
  printf("  its dlerror names it: %s\n", miss && strstr(miss, "undefined symbol: cuMemAlloc_v2") ? "yes" : "no");
  printf("dlsym(nvmlDeviceGetMemoryInfo) with no NVML loaded %s\n", dlsym(RTLD_DEFAULT, "nvmlDeviceGetMemoryInfo") ? "found" : "null");
  dlerror();
  dlsym(libm, "no_such_symbol_here");
  const char *err = dlerror();
  printf("dlerror after a miss: %s\n", err && strstr(err, "no_such_symbol_here") ? "names the symbol" : "wrong");
  dlclose(libm);
  return 0;
}
