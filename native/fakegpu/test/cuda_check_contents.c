/* cuda_check contents: device memory keeps what is written to it. Copies and
 * memsets round-trip, stay inside their allocation, freed memory loses its
 * bytes, and a checkpoint (here of this very process) moves them off the
 * device and back. The driver keeps a process's device memory in a memfd per
 * process slot ("fakegpu-device-slotN"), its checkpointed copy in another
 * ("fakegpu-host-slotN"): this test looks at both through /proc/self/fd. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_check.h"

void fill(unsigned char *b, size_t n, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    b[i] = (unsigned char)x;
  }
}

static int my_slot(void) {
  for (uint32_t i = 0; i < FG_MAX_PROCS; i++) {
    const fg_proc_t *p = &g_st->procs[i];
    if (FG_LOAD(&p->state) == FG_PROC_USED && p->kind == FG_KIND_LIFELINE && p->pid == getpid() && p->gpu == 0) return (int)i;
  }
  return -1;
}

/* A new descriptor of this process's "device" or "host" memfd for `slot`, or -1. */
static int open_memfd(const char *which, int slot) {
  char want[64], link[256], path[64];
  snprintf(want, sizeof want, "/memfd:fakegpu-%s-slot%d ", which, slot);
  DIR *d = opendir("/proc/self/fd");
  int fd = -1;
  for (struct dirent *e; d && fd < 0 && (e = readdir(d));) {
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n <= 0) continue;
    link[n] = 0;
    if (!strncmp(link, want, strlen(want))) fd = open(path, O_RDONLY | O_CLOEXEC);
  }
  if (d) closedir(d);
  return fd;
}

/* Bytes the file really holds (its data extents); -1 without the file. */
static long long data_bytes(int fd) {
  if (fd < 0) return -1;
  long long n = 0;
  for (off_t at = 0;;) {
    off_t data = lseek(fd, at, SEEK_DATA);
    if (data < 0) break;
    off_t hole = lseek(fd, data, SEEK_HOLE);
    n += hole - data;
    at = hole;
  }
  return n;
}

static long long memfd_bytes(const char *which, int slot) {
  int fd = open_memfd(which, slot);
  long long n = data_bytes(fd);
  if (fd >= 0) close(fd);
  return n;
}

int same(CUdeviceptr p, const unsigned char *want, size_t n) {
  unsigned char *got = malloc(n);
  memset(got, 0xEE, n);
  int ok = p_cuMemcpyDtoH_v2(got, p, n) == CUDA_SUCCESS && memcmp(got, want, n) == 0;
  free(got);
  return ok;
}

static void check_round_trips(void) {
  const size_t size = 4 * MiB, part = MiB + 123;
  CUdeviceptr a = 0, b = 0;
  EXPECT_RC("allocate 4 MiB", p_cuMemAlloc_v2(&a, size), CUDA_SUCCESS);
  EXPECT_RC("allocate another 4 MiB", p_cuMemAlloc_v2(&b, size), CUDA_SUCCESS);
  unsigned char *src = malloc(part), *got = malloc(size);
  fill(src, part, 1);
  EXPECT_RC("cuMemcpyHtoD_v2 at an unaligned offset inside the allocation", p_cuMemcpyHtoD_v2(a + 4097, src, part), CUDA_SUCCESS);
  EXPECT("cuMemcpyDtoH_v2 reads the same bytes back", same(a + 4097, src, part), "different bytes");
  EXPECT_RC("cuMemcpyDtoD_v2 to the other allocation", p_cuMemcpyDtoD_v2(b + 10, a + 4097, part), CUDA_SUCCESS);
  EXPECT("the copy holds the same bytes", same(b + 10, src, part), "different bytes");
  memset(got, 0x5A, 64);
  EXPECT("memory never written reads as zeros", p_cuMemcpyDtoH_v2(got, a + size - 64, 64) == CUDA_SUCCESS && !memcmp(got, (unsigned char[64]){0}, 64),
         "first byte %#x", got[0]);
  EXPECT_RC("cuMemsetD8_v2", p_cuMemsetD8_v2(a, 0xAB, 100), CUDA_SUCCESS);
  unsigned char d8[101];
  memset(d8, 0xAB, 100);
  d8[100] = 0; /* the byte after the memset: zero, as never written */
  EXPECT("cuMemsetD8_v2 sets exactly N bytes", same(a, d8, 101), "different bytes");
  EXPECT_RC("cuMemsetD32_v2", p_cuMemsetD32_v2(a + 4096, 0x11223344u, 3), CUDA_SUCCESS);
  uint32_t d32[3] = {0x11223344u, 0x11223344u, 0x11223344u};
  EXPECT("cuMemsetD32_v2 sets N 32-bit words", same(a + 4096, (unsigned char *)d32, sizeof d32), "different bytes");
  EXPECT_RC("cuMemsetD32_v2 on an address not 4-byte aligned: INVALID_VALUE", p_cuMemsetD32_v2(a + 2, 1, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("a zero-byte copy is a no-op", p_cuMemcpyHtoD_v2(a, src, 0), CUDA_SUCCESS);

  /* out of bounds: refused, nothing written */
  fill(src, 64, 2);
  EXPECT_RC("HtoD into the allocation's last 32 bytes and past its end: INVALID_VALUE", p_cuMemcpyHtoD_v2(a + size - 32, src, 64), CUDA_ERROR_INVALID_VALUE);
  EXPECT("the refused copy wrote nothing", same(a + size - 64, (unsigned char[64]){0}, 64), "its bytes were written");
  EXPECT_RC("DtoH past the end: INVALID_VALUE", p_cuMemcpyDtoH_v2(got, a + size - 1, 2), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("DtoD from past the end: INVALID_VALUE", p_cuMemcpyDtoD_v2(b, a + size - 8, 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("memset past the end: INVALID_VALUE", p_cuMemsetD8_v2(a + size - 8, 1, 16), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("an address no allocation holds: INVALID_VALUE", p_cuMemcpyHtoD_v2(b + size + 4096, src, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("a NULL host pointer: INVALID_VALUE", p_cuMemcpyDtoH_v2(NULL, a, 1), CUDA_ERROR_INVALID_VALUE);

  /* freed memory loses its contents, as on a GPU */
  int slot = my_slot();
  long long before = memfd_bytes("device", slot);
  EXPECT("the device memfd holds the bytes written", before >= (long long)part, "%lld bytes of data", before);
  EXPECT_RC("free both", p_cuMemFree_v2(a) | p_cuMemFree_v2(b), CUDA_SUCCESS);
  EXPECT("freeing punches the allocations out of the device memfd", memfd_bytes("device", slot) == 0, "%lld bytes left",
         memfd_bytes("device", slot));
  EXPECT_RC("a freed pointer: INVALID_VALUE", p_cuMemcpyDtoH_v2(got, a, 1), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr c = 0;
  p_cuMemAlloc_v2(&c, size);
  EXPECT("a new allocation reads as zeros", same(c, (unsigned char[256]){0}, 256), "old bytes");
  p_cuMemFree_v2(c);
  free(src);
  free(got);
}

/* A sleeping process charged with `bytes` on GPU 0 through the fakegpu CLI (it takes the free memory). */
static pid_t hog(unsigned long long bytes) {
  pid_t pid = fork();
  if (pid == 0) {
    execlp("sleep", "sleep", "60", (char *)NULL);
    _exit(127);
  }
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "'%s/fakegpu' attach --device 0 --pid %d --mem %llu", g_build_dir, (int)pid, bytes);
  if (system(cmd) != 0) printf("FAIL hog: %s\n", cmd), g_fails++;
  return pid;
}

static void check_checkpoint(void) {
  const size_t size = 64 * MiB, part = 3 * MiB + 5;
  CUdeviceptr p = 0;
  int slot = my_slot();
  EXPECT_RC("allocate 64 MiB", p_cuMemAlloc_v2(&p, size), CUDA_SUCCESS);
  unsigned char *src = malloc(part);
  fill(src, part, 3);
  p_cuMemcpyHtoD_v2(p + 7, src, part);
  p_cuMemsetD8_v2(p + size - 4096, 0xC3, 4096); /* the last bytes too */
  long long on_device = memfd_bytes("device", slot);
  EXPECT("the device memfd holds what was written", on_device >= (long long)(part + 4096), "%lld bytes", on_device);
  EXPECT_RC("lock", p_cuCheckpointProcessLock(getpid(), NULL), CUDA_SUCCESS);
  EXPECT_RC("checkpoint", p_cuCheckpointProcessCheckpoint(getpid(), NULL), CUDA_SUCCESS);
  EXPECT("checkpointed: the device memfd holds no bytes", memfd_bytes("device", slot) == 0, "%lld bytes", memfd_bytes("device", slot));
  EXPECT("checkpointed: the host memfd holds them all", memfd_bytes("host", slot) == on_device, "%lld of %lld bytes",
         memfd_bytes("host", slot), on_device);

  /* OOM on restore: nothing moves */
  pid_t h = hog(fg_engine_capacity_free(g_st, 0, -1));
  EXPECT_RC("restore with the memory taken: OUT_OF_MEMORY", p_cuCheckpointProcessRestore(getpid(), NULL), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT("after the failed restore the device memfd is still empty", memfd_bytes("device", slot) == 0, "%lld bytes",
         memfd_bytes("device", slot));
  EXPECT("and the host memfd still holds every byte", memfd_bytes("host", slot) == on_device, "%lld of %lld bytes",
         memfd_bytes("host", slot), on_device);
  kill(h, SIGKILL);
  waitpid(h, NULL, 0);

  EXPECT_RC("restore once the memory is free (the hog reaped)", p_cuCheckpointProcessRestore(getpid(), NULL), CUDA_SUCCESS);
  EXPECT("restored: the bytes are back on the device memfd", memfd_bytes("device", slot) == on_device, "%lld of %lld bytes",
         memfd_bytes("device", slot), on_device);
  EXPECT("and gone from the host memfd", memfd_bytes("host", slot) == 0, "%lld bytes", memfd_bytes("host", slot));
  EXPECT_RC("unlock", p_cuCheckpointProcessUnlock(getpid(), NULL), CUDA_SUCCESS);
  EXPECT("the contents are intact, byte for byte", same(p + 7, src, part), "different bytes");
  unsigned char tail[4096];
  memset(tail, 0xC3, sizeof tail);
  EXPECT("the allocation's last bytes too", same(p + size - 4096, tail, sizeof tail), "different bytes");
  p_cuMemFree_v2(p);
  free(src);
}

/* ---- a copy of a locked process waits for the unlock ---- */

typedef struct {
  CUdeviceptr p;
  volatile int done, saw_unlock;
  volatile int *unlocking;
  CUresult rc;
  CUresult (*copy)(void *dst, CUdeviceptr src, size_t n);
} locked_copy_t;

static void *locked_copy(void *arg) {
  locked_copy_t *c = arg;
  p_cuCtxSetCurrent(g_ctx);
  unsigned char b[16];
  c->rc = c->copy(b, c->p, sizeof b);
  c->saw_unlock = *c->unlocking;
  c->done = 1;
  return NULL;
}

/* `name` (made by `copy`) blocks while this process is locked and returns after the unlock. */
void check_locked_copy(const char *name, CUresult (*copy)(void *dst, CUdeviceptr src, size_t n)) {
  check_locked_call(name, copy, CUDA_SUCCESS);
}

void check_locked_call(const char *name, CUresult (*copy)(void *dst, CUdeviceptr src, size_t n), CUresult want) {
  volatile int unlocking = 0;
  locked_copy_t c = {0, 0, 0, &unlocking, -1, copy};
  char what[160];
  p_cuMemAlloc_v2(&c.p, MiB);
  snprintf(what, sizeof what, "lock (before %s)", name);
  EXPECT_RC(what, p_cuCheckpointProcessLock(getpid(), NULL), CUDA_SUCCESS);
  pthread_t t;
  pthread_create(&t, NULL, locked_copy, &c);
  struct timespec ts = {0, 200 * 1000000L};
  nanosleep(&ts, NULL);
  snprintf(what, sizeof what, "%s blocks while the process is locked", name);
  EXPECT(what, !c.done, "it returned %d while locked", c.rc);
  unlocking = 1;
  p_cuCheckpointProcessUnlock(getpid(), NULL);
  pthread_join(t, NULL);
  snprintf(what, sizeof what, "%s returns after the unlock", name);
  EXPECT(what, c.saw_unlock && c.rc == want, "rc %d (want %d), after unlock: %d", c.rc, want, c.saw_unlock);
  p_cuMemFree_v2(c.p);
}

static CUresult dtoh_sync(void *dst, CUdeviceptr src, size_t n) { return p_cuMemcpyDtoH_v2(dst, src, n); }

/* ---- the asynchronous copies, the per-thread-stream variants and cuMemcpy (unified addressing) ---- */

/* Kernel records of this process on GPU 0 in the simulated driver's execution record. */
unsigned long kernels_recorded(void) {
  const fg_ring_t *r = &g_st->rings[0];
  uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE), from = head > FG_RING_SIZE ? head - FG_RING_SIZE : 0;
  unsigned long n = 0;
  for (uint64_t i = from; i < head; i++) n += r->recs[i % FG_RING_SIZE].pid == getpid();
  return n;
}

CUfunction kernel(void) {
  CUmodule mod;
  CUfunction f = NULL;
  if (p_cuModuleLoadData(&mod, "image") || p_cuModuleGetFunction(&f, mod, "k")) printf("FAIL no kernel to launch\n"), g_fails++;
  return f;
}

CUresult launch_ms(CUfunction f, CUstream s, unsigned long long ms) {
  unsigned long long us = ms * 1000;
  void *params[] = {&us};
  return p_cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, NULL);
}

static void check_async_round_trips(void) {
  const size_t size = 4 * MiB, part = MiB + 77;
  CUdeviceptr a = 0, b = 0;
  CUstream s = NULL;
  p_cuMemAlloc_v2(&a, size);
  p_cuMemAlloc_v2(&b, size);
  p_cuStreamCreate(&s, 0);
  unsigned char *src = malloc(part), *got = malloc(part);
  fill(src, part, 11);
  EXPECT_RC("cuMemcpyHtoDAsync_v2 on a stream", p_cuMemcpyHtoDAsync_v2(a + 3, src, part, s), CUDA_SUCCESS);
  memset(got, 0xEE, part);
  EXPECT_RC("cuMemcpyDtoHAsync_v2 on the stream", p_cuMemcpyDtoHAsync_v2(got, a + 3, part, s), CUDA_SUCCESS);
  EXPECT_RC("cuStreamSynchronize", p_cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT("cuMemcpyDtoHAsync_v2 reads the bytes cuMemcpyHtoDAsync_v2 wrote", !memcmp(got, src, part), "different bytes");
  EXPECT_RC("cuMemcpyDtoDAsync_v2_ptsz on the per-thread stream (NULL)", p_cuMemcpyDtoDAsync_v2_ptsz(b + 1, a + 3, part, NULL), CUDA_SUCCESS);
  memset(got, 0xEE, part);
  EXPECT_RC("cuMemcpyDtoHAsync_v2_ptsz", p_cuMemcpyDtoHAsync_v2_ptsz(got, b + 1, part, NULL), CUDA_SUCCESS);
  p_cuStreamSynchronize_ptsz(NULL);
  EXPECT("the _ptsz copies carry the same bytes", !memcmp(got, src, part), "different bytes");
  EXPECT_RC("cuMemcpyDtoDAsync_v2 on the legacy stream", p_cuMemcpyDtoDAsync_v2(a, b + 1, part, CU_STREAM_LEGACY), CUDA_SUCCESS);
  EXPECT("and its copy holds them too", same(a, src, part), "different bytes");

  fill(src, part, 12);
  EXPECT_RC("cuMemcpyHtoDAsync_v2_ptsz", p_cuMemcpyHtoDAsync_v2_ptsz(b, src, part, CU_STREAM_PER_THREAD), CUDA_SUCCESS);
  EXPECT("reads back", same(b, src, part), "different bytes");
  fill(src, part, 13);
  EXPECT_RC("cuMemcpyHtoD_v2_ptds", p_cuMemcpyHtoD_v2_ptds(a + 9, src, part), CUDA_SUCCESS);
  memset(got, 0xEE, part);
  EXPECT("cuMemcpyDtoH_v2_ptds reads it back", p_cuMemcpyDtoH_v2_ptds(got, a + 9, part) == CUDA_SUCCESS && !memcmp(got, src, part),
         "different bytes");
  EXPECT_RC("cuMemcpyDtoD_v2_ptds", p_cuMemcpyDtoD_v2_ptds(b + 5, a + 9, part), CUDA_SUCCESS);
  EXPECT("its copy holds the same bytes", same(b + 5, src, part), "different bytes");

  /* cuMemcpy / cuMemcpyAsync: the kind of each pointer is told by where it points */
  fill(src, part, 14);
  EXPECT_RC("cuMemcpy host to device", p_cuMemcpy(a, (CUdeviceptr)(uintptr_t)src, part), CUDA_SUCCESS);
  EXPECT("lands on the device", same(a, src, part), "different bytes");
  EXPECT_RC("cuMemcpy_ptds device to device", p_cuMemcpy_ptds(b + 100, a, part), CUDA_SUCCESS);
  memset(got, 0xEE, part);
  EXPECT_RC("cuMemcpyAsync device to host", p_cuMemcpyAsync((CUdeviceptr)(uintptr_t)got, b + 100, part, s), CUDA_SUCCESS);
  p_cuStreamSynchronize(s);
  EXPECT("reads the bytes back", !memcmp(got, src, part), "different bytes");
  unsigned char h2[64] = {0};
  EXPECT_RC("cuMemcpyAsync_ptsz host to host", p_cuMemcpyAsync_ptsz((CUdeviceptr)(uintptr_t)h2, (CUdeviceptr)(uintptr_t)src, 64, NULL), CUDA_SUCCESS);
  EXPECT("copies the host bytes", !memcmp(h2, src, 64), "different bytes");

  /* memsets */
  unsigned char d8[65];
  memset(d8, 0x5C, 64);
  d8[64] = 0;
  p_cuMemsetD8_v2(a, 0, 4096);
  EXPECT_RC("cuMemsetD8Async", p_cuMemsetD8Async(a, 0x5C, 64, s), CUDA_SUCCESS);
  p_cuStreamSynchronize(s);
  EXPECT("sets exactly N bytes", same(a, d8, 65), "different bytes");
  EXPECT_RC("cuMemsetD8Async_ptsz", p_cuMemsetD8Async_ptsz(a + 1000, 0x5C, 64, NULL), CUDA_SUCCESS);
  EXPECT_RC("cuMemsetD8_v2_ptds", p_cuMemsetD8_v2_ptds(a + 2000, 0x5C, 64), CUDA_SUCCESS);
  EXPECT("both set their bytes", same(a + 1000, d8, 65) && same(a + 2000, d8, 65), "different bytes");
  uint32_t d32[4] = {0xA1B2C3D4u, 0xA1B2C3D4u, 0xA1B2C3D4u, 0};
  EXPECT_RC("cuMemsetD32Async", p_cuMemsetD32Async(b, 0xA1B2C3D4u, 3, s), CUDA_SUCCESS);
  EXPECT_RC("cuMemsetD32Async_ptsz", p_cuMemsetD32Async_ptsz(b + 64, 0xA1B2C3D4u, 3, NULL), CUDA_SUCCESS);
  EXPECT_RC("cuMemsetD32_v2_ptds", p_cuMemsetD32_v2_ptds(b + 128, 0xA1B2C3D4u, 3), CUDA_SUCCESS);
  p_cuMemsetD32_v2(b + 12, 0, 1), p_cuMemsetD32_v2(b + 76, 0, 1), p_cuMemsetD32_v2(b + 140, 0, 1);
  p_cuStreamSynchronize(s);
  EXPECT("the three D32 memsets set N words each", same(b, (unsigned char *)d32, 16) && same(b + 64, (unsigned char *)d32, 16) &&
         same(b + 128, (unsigned char *)d32, 16), "different bytes");

  /* refused: out of bounds, misaligned, bad stream; nothing written */
  unsigned char zeros[64] = {0};
  p_cuMemsetD8_v2(a + size - 64, 0, 64);
  EXPECT_RC("cuMemcpyHtoDAsync_v2 past the allocation's end: INVALID_VALUE", p_cuMemcpyHtoDAsync_v2(a + size - 32, src, 64, s),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT("the refused copy wrote nothing", same(a + size - 64, zeros, 64), "its bytes were written");
  EXPECT_RC("cuMemcpyDtoHAsync_v2_ptsz past the end: INVALID_VALUE", p_cuMemcpyDtoHAsync_v2_ptsz(got, a + size - 1, 2, NULL),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("cuMemcpyDtoDAsync_v2 from past the end: INVALID_VALUE", p_cuMemcpyDtoDAsync_v2(b, a + size - 8, 16, s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("cuMemsetD8Async past the end: INVALID_VALUE", p_cuMemsetD8Async(a + size - 8, 1, 16, s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("cuMemsetD32Async not 4-byte aligned: INVALID_VALUE", p_cuMemsetD32Async(a + 2, 1, 1, s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_RC("cuMemcpy into the device past the end: INVALID_VALUE", p_cuMemcpy(a + size - 32, (CUdeviceptr)(uintptr_t)src, 64),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT("nothing written by them", same(a + size - 64, zeros, 64), "bytes were written");
  EXPECT_RC("cuMemcpyAsync from a freed device pointer: INVALID_VALUE",
            (p_cuMemFree_v2(b), p_cuMemcpyAsync((CUdeviceptr)(uintptr_t)got, b, 16, s)), CUDA_ERROR_INVALID_VALUE);
  struct { uint32_t magic; } not_a_stream = {0};
  EXPECT_RC("an async copy on something that is not a stream: INVALID_HANDLE",
            p_cuMemcpyDtoHAsync_v2(got, a, 16, (CUstream)(void *)&not_a_stream), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_RC("an async copy to a NULL host pointer: INVALID_VALUE", p_cuMemcpyDtoHAsync_v2(NULL, a, 16, s), CUDA_ERROR_INVALID_VALUE);
  p_cuMemFree_v2(a);
  p_cuStreamDestroy_v2(s);
  free(src);
  free(got);
}

/* A copy on a stream runs after the kernels queued before it there: when it returns, they ran. */
static void check_async_stream_order(void) {
  CUfunction f = kernel();
  CUdeviceptr a = 0;
  CUstream s = NULL, other = NULL;
  p_cuMemAlloc_v2(&a, MiB);
  p_cuStreamCreate(&s, 0);
  p_cuStreamCreate(&other, 0);
  unsigned char got[64], src[64];
  fill(src, sizeof src, 21);
  unsigned long before = kernels_recorded();
  EXPECT_RC("a 300 ms kernel on a stream", launch_ms(f, s, 300), CUDA_SUCCESS);
  EXPECT_RC("then cuMemcpyHtoDAsync_v2 on that stream", p_cuMemcpyHtoDAsync_v2(a, src, sizeof src, s), CUDA_SUCCESS);
  EXPECT("it ran after the kernel: the kernel is in the execution record", kernels_recorded() == before + 1, "%lu kernels recorded",
         kernels_recorded() - before);
  before = kernels_recorded();
  launch_ms(f, other, 300);
  EXPECT_RC("a 300 ms kernel on another stream, then cuMemcpyDtoHAsync_v2 on the legacy stream",
            p_cuMemcpyDtoHAsync_v2(got, a, sizeof got, NULL), CUDA_SUCCESS);
  EXPECT("the legacy stream's copy waited for the other stream's kernel", kernels_recorded() == before + 1, "%lu kernels recorded",
         kernels_recorded() - before);
  EXPECT("and read what the first copy wrote", !memcmp(got, src, sizeof got), "different bytes");
  before = kernels_recorded();
  launch_ms(f, CU_STREAM_PER_THREAD, 300);
  EXPECT_RC("a 300 ms kernel on the per-thread stream, then cuMemsetD8Async_ptsz (NULL)", p_cuMemsetD8Async_ptsz(a, 1, 64, NULL),
            CUDA_SUCCESS);
  EXPECT("the memset ran after the kernel", kernels_recorded() == before + 1, "%lu kernels recorded", kernels_recorded() - before);
  before = kernels_recorded();
  launch_ms(f, s, 300);
  EXPECT_RC("a 300 ms kernel on a stream, then the synchronous cuMemcpyDtoH_v2", p_cuMemcpyDtoH_v2(got, a, sizeof got), CUDA_SUCCESS);
  EXPECT("the synchronous copy (legacy stream) waited for it", kernels_recorded() == before + 1, "%lu kernels recorded",
         kernels_recorded() - before);
  before = kernels_recorded();
  launch_ms(f, CU_STREAM_PER_THREAD, 300);
  EXPECT_RC("a 300 ms kernel on the per-thread stream, then cuMemcpyHtoD_v2_ptds", p_cuMemcpyHtoD_v2_ptds(a, src, sizeof src), CUDA_SUCCESS);
  EXPECT("the _ptds copy waited for it", kernels_recorded() == before + 1, "%lu kernels recorded", kernels_recorded() - before);
  p_cuMemFree_v2(a);
  p_cuStreamDestroy_v2(s);
  p_cuStreamDestroy_v2(other);
}

/* Copy nodes are not simulated: an asynchronous copy on a capturing stream fails and invalidates the capture;
 * one on another stream is no unsafe call and runs. */
static void check_async_capture(void) {
  CUdeviceptr a = 0;
  CUstream c = NULL, s = NULL;
  CUgraph g = NULL;
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  unsigned char src[64], got[64];
  fill(src, sizeof src, 31);
  p_cuMemAlloc_v2(&a, MiB);
  p_cuStreamCreate(&c, 0);
  p_cuStreamCreate(&s, 0);
  p_cuStreamBeginCapture_v2(c, CU_STREAM_CAPTURE_MODE_RELAXED);
  EXPECT_RC("cuMemcpyHtoDAsync_v2 on a capturing stream: STREAM_CAPTURE_UNSUPPORTED", p_cuMemcpyHtoDAsync_v2(a, src, sizeof src, c),
            CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT("and the capture is invalidated", p_cuStreamIsCapturing(c, &st) == CUDA_SUCCESS && st == CU_STREAM_CAPTURE_STATUS_INVALIDATED,
         "status %d", st);
  p_cuStreamEndCapture(c, &g);
  if (g) p_cuGraphDestroy(g), g = NULL;
  p_cuStreamBeginCapture_v2(c, CU_STREAM_CAPTURE_MODE_GLOBAL);
  EXPECT_RC("while another stream captures (global mode), cuMemcpyHtoDAsync_v2 on a stream that does not",
            p_cuMemcpyHtoDAsync_v2(a, src, sizeof src, s), CUDA_SUCCESS);
  EXPECT_RC("and cuMemcpyDtoHAsync_v2", p_cuMemcpyDtoHAsync_v2(got, a, sizeof got, s), CUDA_SUCCESS);
  EXPECT("run, and leave the capture as it was", !memcmp(got, src, sizeof got) && p_cuStreamIsCapturing(c, &st) == CUDA_SUCCESS &&
         st == CU_STREAM_CAPTURE_STATUS_ACTIVE, "status %d", st);
  EXPECT_RC("the capture ends", p_cuStreamEndCapture(c, &g), CUDA_SUCCESS);
  if (g) p_cuGraphDestroy(g);
  p_cuMemFree_v2(a);
  p_cuStreamDestroy_v2(c);
  p_cuStreamDestroy_v2(s);
}

static CUresult dtoh_async_ptsz(void *dst, CUdeviceptr src, size_t n) { return p_cuMemcpyDtoHAsync_v2_ptsz(dst, src, n, NULL); }

void check_contents(void) {
  check_round_trips();
  check_checkpoint();
  check_locked_copy("cuMemcpyDtoH_v2", dtoh_sync);
  check_async_round_trips();
  check_async_stream_order();
  check_async_capture();
  check_locked_copy("cuMemcpyDtoHAsync_v2_ptsz", dtoh_async_ptsz);
}
